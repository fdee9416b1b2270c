//! Messages whose encoding has an alignment (a `String`, a `#[net(align)]` field) packed
//! at any bit offset of a packet, between odd-sized messages, on every channel kind,
//! over a lossy network; and messages without alignment still take exactly their
//! measured bits.

use netser::{Encoder, NetSerialize, WriteStream};
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::endpoint::header::PacketHeader;
use netser_transport::simulator::{Pair, SimulatorConfig};
use proptest::prelude::*;

/// Every variant carries its index in the sender's list, so a delivery can be checked
/// against what was sent. Sizes: `Chat` 2 + 12 + 7 bits, padding, then the text's bytes;
/// `Marked` 2 + 12 + 1 bits, padding, 32 bits; `Odd` 17 bits; `Small` 14 bits.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Event {
    Chat {
        #[net(range = 0..=4095)]
        seq: u16,
        #[net(max_len = 64)]
        text: String,
    },
    Marked {
        #[net(range = 0..=4095)]
        seq: u16,
        flag: bool,
        #[net(align)]
        value: u32,
    },
    Odd {
        #[net(range = 0..=4095)]
        seq: u16,
        #[net(range = 0..=4)]
        bits: u8,
    },
    Small {
        #[net(range = 0..=4095)]
        seq: u16,
    },
}

impl Event {
    fn seq(&self) -> u16 {
        match self {
            Self::Chat { seq, .. }
            | Self::Marked { seq, .. }
            | Self::Odd { seq, .. }
            | Self::Small { seq } => *seq,
        }
    }

    /// The `seq`th message of a mix: `kind` picks the variant, `n` its contents.
    fn make(seq: u16, kind: u8, n: u32) -> Self {
        match kind % 4 {
            0 => Self::Chat {
                seq,
                text: "héllo wörld, 0123456789 abcdefghijklmnopqrstuvwxyz"
                    .chars()
                    .take(n as usize % 50)
                    .collect(),
            },
            1 => Self::Marked {
                seq,
                flag: n % 2 == 1,
                value: n.wrapping_mul(2_654_435_761),
            },
            2 => Self::Odd {
                seq,
                bits: (n % 5) as u8,
            },
            _ => Self::Small { seq },
        }
    }
}

const RELIABLE_ORDERED: u8 = 0;
const RELIABLE_UNORDERED: u8 = 1;
const SEQUENCED: u8 = 2;
const UNRELIABLE: u8 = 3;

fn four_channels() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::reliable_unordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

/// What one side received, per channel.
#[derive(Default)]
struct Received {
    channels: [Vec<Event>; 4],
}

/// Sends `mix` (channel, message) from `a` to `b` over `net`, `per_frame` messages a
/// frame, and runs until both reliable channels delivered everything (at most 3000
/// frames). Returns what `b` received and each side's refused or malformed packets.
fn run(mix: &[(u8, Event)], net: SimulatorConfig, per_frame: usize) -> (Received, [u64; 2]) {
    let config = four_channels();
    let a: Connection<Event> = Connection::new(0.0, config.clone()).unwrap();
    let b: Connection<Event> = Connection::new(0.0, config).unwrap();
    let mut pair = Pair::new(a, b, net);
    let reliable = |channel: u8| mix.iter().filter(|(c, _)| *c == channel).count();
    let expected = [reliable(RELIABLE_ORDERED), reliable(RELIABLE_UNORDERED)];
    let mut received = Received::default();
    let mut next = 0;
    for _frame in 0..3000 {
        for (channel, message) in mix[next..].iter().take(per_frame) {
            pair.a.send_message(*channel, message).unwrap();
        }
        next = (next + per_frame).min(mix.len());
        pair.step(1.0 / 60.0);
        for (channel, out) in received.channels.iter_mut().enumerate() {
            while let Some(message) = pair.b.receive_message(channel as u8) {
                out.push(message);
            }
        }
        if next == mix.len()
            && received.channels[0].len() == expected[0]
            && received.channels[1].len() == expected[1]
        {
            break;
        }
    }
    let refused = [
        pair.a.counters().malformed_packets + pair.a.counters().packets_refused,
        pair.b.counters().malformed_packets + pair.b.counters().packets_refused,
    ];
    (received, refused)
}

/// Every delivery is what was sent under its `seq`, on its channel, with the channel's
/// guarantee; the reliable channels delivered everything.
fn check(mix: &[(u8, Event)], received: &Received, refused: [u64; 2]) {
    assert_eq!(refused, [0, 0], "no packet refused or malformed");
    let sent = |channel: u8| -> Vec<Event> {
        mix.iter()
            .filter(|(c, _)| *c == channel)
            .map(|(_, m)| m.clone())
            .collect()
    };
    assert_eq!(
        received.channels[0],
        sent(RELIABLE_ORDERED),
        "reliable-ordered"
    );
    let mut unordered = received.channels[1].clone();
    unordered.sort_by_key(Event::seq);
    assert_eq!(unordered, sent(RELIABLE_UNORDERED), "reliable-unordered");
    for channel in [SEQUENCED, UNRELIABLE] {
        let sent = sent(channel);
        for message in &received.channels[usize::from(channel)] {
            assert!(sent.contains(message), "channel {channel}: {message:?}");
        }
    }
    let sequenced: Vec<u16> = received.channels[2].iter().map(Event::seq).collect();
    assert!(
        sequenced.windows(2).all(|w| w[0] < w[1]),
        "sequenced goes forward: {sequenced:?}"
    );
    let mut unreliable: Vec<u16> = received.channels[3].iter().map(Event::seq).collect();
    unreliable.sort_unstable();
    unreliable.dedup();
    assert_eq!(
        unreliable.len(),
        received.channels[3].len(),
        "unreliable at most once"
    );
}

/// 400 messages, every variant on every channel, each kind after the others so that
/// strings and aligned fields land at every bit offset.
fn interleaved() -> Vec<(u8, Event)> {
    (0..400u16)
        .map(|seq| {
            let channel = (seq % 4) as u8;
            let kind = (seq / 4 % 4) as u8;
            (channel, Event::make(seq, kind, u32::from(seq) * 7 + 3))
        })
        .collect()
}

#[test]
fn strings_and_aligned_fields_at_any_offset_arrive_intact_on_every_channel() {
    let mix = interleaved();
    // Lossless first: everything arrives, unreliable channels included.
    let (received, refused) = run(&mix, SimulatorConfig::default(), 7);
    check(&mix, &received, refused);
    for channel in [SEQUENCED, UNRELIABLE] {
        assert_eq!(
            received.channels[usize::from(channel)].len(),
            100,
            "channel {channel}"
        );
    }
}

#[test]
fn strings_and_aligned_fields_survive_a_lossy_network_and_resends() {
    let mix = interleaved();
    let net = SimulatorConfig {
        latency: 0.05,
        jitter: 0.02,
        loss: 0.3,
        duplicate: 0.05,
        reorder: 0.1,
        seed: 11,
        ..SimulatorConfig::default()
    };
    let (received, refused) = run(&mix, net, 5);
    check(&mix, &received, refused);
    // Some unreliable messages got through (and were checked above).
    assert!(received.channels[2].len() > 10 && received.channels[3].len() > 10);
}

/// The payload bits of the first packet of `messages` on a one-channel connection.
fn first_payload(kind: ChannelKind, messages: &[Event]) -> Vec<u8> {
    let config = ConnectionConfig::with_channels(vec![ChannelConfig::new(kind)]);
    let mut a: Connection<Event> = Connection::new(0.0, config).unwrap();
    for message in messages {
        a.send_message(0, message).unwrap();
    }
    let datagram = a.poll_transmit(0.0).unwrap();
    let (_, header_len) = PacketHeader::read(datagram).unwrap();
    datagram[header_len..].to_vec()
}

#[test]
fn messages_without_alignment_take_exactly_their_measured_bits() {
    for smalls in 0..8u16 {
        for odds in 0..8u16 {
            if smalls + odds == 0 {
                continue;
            }
            let messages: Vec<Event> = (0..smalls + odds)
                .map(|seq| Event::make(seq, if seq < smalls { 3 } else { 2 }, 3))
                .collect();
            let bits: u64 = messages.iter().map(|m| m.measure_bits().unwrap()).sum();
            assert_eq!(bits, u64::from(smalls) * 14 + u64::from(odds) * 17);
            let count = u64::from(smalls + odds);
            // more, count - 1 (8 bits), the messages, the final `no more channels`.
            let unreliable = 1 + 8 + bits + 1;
            let payload = first_payload(ChannelKind::Unreliable, &messages);
            assert_eq!(
                payload.len() as u64,
                unreliable.div_ceil(8),
                "{smalls} {odds}"
            );
            // Reliable: the first id 16 bits, each later one 1 bit (+1), a block flag each.
            let reliable = unreliable + 16 + (count - 1) + count;
            let payload = first_payload(
                ChannelKind::ReliableOrdered { resend_delay: 0.1 },
                &messages,
            );
            assert_eq!(
                payload.len() as u64,
                reliable.div_ceil(8),
                "{smalls} {odds}"
            );
        }
    }
}

/// The payload an encoder writing each message in place produces: one unreliable
/// channel entry (`more`, 8 bits of count - 1, the messages), then `no more channels`.
fn in_place_payload(messages: &[Event]) -> Vec<u8> {
    let mut buf = [0u8; 1200];
    let mut w = WriteStream::new(&mut buf);
    w.write_bool(true).unwrap();
    w.write_bits(messages.len() as u64 - 1, 8).unwrap();
    for message in messages {
        message.encode(&mut w).unwrap();
    }
    w.write_bool(false).unwrap();
    let len = w.finish();
    buf[..len].to_vec()
}

#[test]
fn a_message_with_alignment_is_written_as_in_place_and_sized_where_it_lands() {
    let chat = Event::make(1, 0, 5);
    let Event::Chat { text, .. } = &chat else {
        unreachable!()
    };
    assert_eq!(text, "héllo");
    let text_bits = text.len() as u64 * 8;
    // From bit 0: 2 + 12 + 7 bits, 3 bits of padding, the text.
    assert_eq!(chat.measure_bits().unwrap(), 21 + 3 + text_bits);
    // Alone, it starts at bit 9: its alignment comes at 30, padded by 2 bits.
    let payload = first_payload(ChannelKind::Unreliable, std::slice::from_ref(&chat));
    assert_eq!(payload, in_place_payload(std::slice::from_ref(&chat)));
    assert_eq!(payload.len() as u64, (32 + text_bits + 1).div_ceil(8));
    // After an `Odd` (17 bits) and at every other offset an `Odd`, `Small` or
    // `Marked` prefix gives: bit for bit what an in-place encoder writes.
    for prefix in 0..12u16 {
        let mut messages: Vec<Event> = (0..prefix)
            .map(|seq| Event::make(seq, [2, 3, 1][usize::from(seq) % 3], u32::from(seq)))
            .collect();
        messages.push(Event::make(prefix, 0, 5));
        messages.push(Event::make(prefix + 1, 2, 4));
        messages.push(Event::make(prefix + 2, 1, 9));
        let payload = first_payload(ChannelKind::Unreliable, &messages);
        assert_eq!(payload, in_place_payload(&messages), "prefix {prefix}");
    }
}

fn event() -> impl Strategy<Value = (u8, u8, u32)> {
    (0u8..4, 0u8..4, any::<u32>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_mixes_arrive_intact(
        events in prop::collection::vec(event(), 1..120),
        per_frame in 1usize..12,
        loss in 0.0f64..0.4,
        seed in any::<u64>(),
    ) {
        let mix: Vec<(u8, Event)> = events
            .iter()
            .enumerate()
            .map(|(seq, &(channel, kind, n))| (channel, Event::make(seq as u16, kind, n)))
            .collect();
        let net = SimulatorConfig {
            latency: 0.03,
            jitter: 0.01,
            loss,
            reorder: 0.1,
            seed,
            ..SimulatorConfig::default()
        };
        let (received, refused) = run(&mix, net, per_frame);
        check(&mix, &received, refused);
    }
}
