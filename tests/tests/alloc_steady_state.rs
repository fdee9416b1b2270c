//! A counting global allocator over a connection pair in the steady state: after a
//! warm-up, many ticks of traffic both ways (reliable and unreliable messages, acks,
//! resends under loss) allocate nothing per packet. Each phase of the run loop is
//! counted apart, so a failure names where the allocations are. The messages here
//! encode to at most 22 bytes, which a queue stores in place; a larger message costs
//! one allocation when it is sent (shared by every connection it is broadcast to).

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use tracking_allocator::Allocator;

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

#[path = "support/alloc_count.rs"]
mod alloc_count;
use alloc_count::counted;

#[derive(NetSerialize, Debug, Clone, Copy, PartialEq)]
enum Message {
    Event {
        #[net(range = 0..=1_000_000)]
        id: u32,
        #[net(range = 0..=4095)]
        entity: u16,
    },
    Input {
        tick: u32,
        buttons: u8,
    },
}

/// The run loop's phases, in order.
const PHASES: [&str; 5] = [
    "send_message",
    "update",
    "poll_transmit",
    "handle_datagram",
    "receive_message",
];

/// One datagram on its way: a fixed buffer, so the test's own link allocates nothing.
#[derive(Clone, Copy)]
struct InFlight {
    arrives: u32,
    to: usize,
    len: usize,
    bytes: [u8; 1500],
}

/// Both sides send 3 events on the reliable-ordered channel and an input on the
/// unreliable-sequenced one every tick at 60 Hz, over a link of 3 ticks each way that
/// drops every 13th datagram (so messages are resent); each side takes every message
/// every tick. Returns the allocations per phase over the measured ticks, and the
/// datagrams sent then.
fn run(warm_up: u32, measured: u32) -> ([u64; 5], u64, u64) {
    let config = ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
    ]);
    let mut sides: [Connection<Message>; 2] = [
        Connection::new(0.0, config.clone()).unwrap(),
        Connection::new(0.0, config).unwrap(),
    ];
    let mut link: Vec<InFlight> = Vec::with_capacity(256);
    let mut per_phase = [0u64; 5];
    let (mut datagrams, mut delivered) = (0u64, 0u64);
    let mut next_id = [0u32; 2];
    let mut expected = [0u32; 2];
    let mut sent_datagrams = 0u64;
    for tick in 0..warm_up + measured {
        let now = f64::from(tick) / 60.0;
        let measuring = tick >= warm_up;
        let mut phase = |index: usize, f: &mut dyn FnMut()| {
            let ((), n) = counted(f);
            if measuring {
                per_phase[index] += n;
            }
        };
        for (i, side) in sides.iter_mut().enumerate() {
            phase(0, &mut || {
                for _ in 0..3 {
                    let id = next_id[i];
                    next_id[i] += 1;
                    let event = Message::Event {
                        id,
                        entity: (id % 4096) as u16,
                    };
                    side.send_message(0, &event).unwrap();
                }
                let input = Message::Input {
                    tick,
                    buttons: tick as u8,
                };
                side.send_message(1, &input).unwrap();
            });
            phase(1, &mut || side.handle_timeout(now));
            phase(2, &mut || {
                while let Some(datagram) = side.poll_transmit(now) {
                    sent_datagrams += 1;
                    if sent_datagrams.is_multiple_of(13) {
                        continue; // lost
                    }
                    let mut bytes = [0; 1500];
                    bytes[..datagram.len()].copy_from_slice(datagram);
                    assert!(link.len() < link.capacity(), "the link is bounded");
                    link.push(InFlight {
                        arrives: tick + 3,
                        to: 1 - i,
                        len: datagram.len(),
                        bytes,
                    });
                }
            });
        }
        phase(3, &mut || {
            let mut k = 0;
            while k < link.len() {
                if link[k].arrives <= tick {
                    let InFlight { to, len, bytes, .. } = link.swap_remove(k);
                    sides[to].handle_datagram(now, &bytes[..len]).unwrap();
                    if measuring {
                        datagrams += 1;
                    }
                } else {
                    k += 1;
                }
            }
        });
        for (i, side) in sides.iter_mut().enumerate() {
            phase(4, &mut || {
                while let Some(message) = side.receive_message(0) {
                    let Message::Event { id, .. } = message else {
                        panic!("events only on channel 0");
                    };
                    assert_eq!(id, expected[i], "in order");
                    expected[i] += 1;
                    delivered += 1;
                }
                while side.receive_message(1).is_some() {}
            });
        }
    }
    assert!(
        delivered > u64::from(warm_up + measured),
        "traffic flowed: {delivered}"
    );
    (per_phase, datagrams, sent_datagrams)
}

#[test]
fn the_steady_state_allocates_nothing_per_packet() {
    let (per_phase, datagrams, _) = run(1500, 3000);
    assert!(datagrams > 5000, "{datagrams} datagrams received");
    let report: Vec<String> = PHASES
        .iter()
        .zip(per_phase)
        .map(|(phase, n)| format!("{phase}: {n}"))
        .collect();
    assert_eq!(
        per_phase,
        [0; 5],
        "allocations over 3000 ticks and {datagrams} datagrams received, by phase: {}",
        report.join(", ")
    );
}
