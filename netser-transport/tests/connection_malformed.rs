//! Whatever arrives, `handle_datagram` returns a typed result: no panic, no message
//! half-read, counters that account for every datagram.

mod support;

use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use proptest::prelude::*;
use support::Msg;

fn config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::reliable_unordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

/// Real packets from a connection: messages of every kind, a block.
fn real_datagrams() -> Vec<Vec<u8>> {
    let mut a: Connection<Msg> = Connection::new(0.0, config()).unwrap();
    for i in 0..20u32 {
        a.send_message((i % 4) as u8, &Msg::Small(i)).unwrap();
    }
    a.send_message(0, &Msg::Bytes(vec![7; 3000])).unwrap();
    a.send_message(3, &Msg::Bytes(vec![1; 500])).unwrap();
    let mut out = Vec::new();
    while let Some(datagram) = a.poll_transmit(0.0) {
        out.push(datagram.to_vec());
    }
    out
}

fn drain_all(b: &mut Connection<Msg>) {
    for channel in 0..4u8 {
        while b.receive_message(channel).is_some() {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_are_refused_or_taken_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1300)) {
        let mut b: Connection<Msg> = Connection::new(0.0, config()).unwrap();
        let _ = b.handle_datagram(0.0, &bytes);
        drain_all(&mut b);
        prop_assert_eq!(b.counters().datagrams_received, 1);
    }

    #[test]
    fn flipped_bits_and_cuts_in_real_datagrams(
        which in 0usize..16,
        flips in proptest::collection::vec((any::<usize>(), 0u8..8), 0..4),
        cut in any::<Option<usize>>(),
    ) {
        let datagrams = real_datagrams();
        let mut datagram = datagrams[which % datagrams.len()].clone();
        for (at, bit) in flips {
            let at = at % datagram.len();
            datagram[at] ^= 1 << bit;
        }
        if let Some(cut) = cut {
            datagram.truncate(cut % (datagram.len() + 1));
        }
        let mut b: Connection<Msg> = Connection::new(0.0, config()).unwrap();
        let result = b.handle_datagram(0.0, &datagram);
        let counters = *b.counters();
        let refused = counters.malformed_packets
            + counters.packets_refused
            + counters.endpoint_drops
            + counters.block_datagram_drops
            // A flipped bit can mark a section that is not there.
            + counters.sections_refused;
        prop_assert_eq!(result.is_err(), refused == 1);
        if result.is_err() {
            // A refused packet delivers nothing.
            for channel in 0..4u8 {
                prop_assert_eq!(b.received_messages(channel), 0);
            }
        }
        drain_all(&mut b);
    }
}

#[test]
fn real_datagrams_are_all_taken() {
    let mut b: Connection<Msg> = Connection::new(0.0, config()).unwrap();
    for datagram in real_datagrams() {
        b.handle_datagram(0.0, &datagram).unwrap();
    }
    // 20 small messages, the block (its three slices came first) and the unreliable
    // 500-byte message.
    let total: usize = (0..4u8).map(|c| b.received_messages(c)).sum();
    assert_eq!(total, 22);
    let mut delivered = 0;
    for channel in 0..4u8 {
        while let Some(message) = b.receive_message(channel) {
            if let Msg::Bytes(bytes) = &message {
                assert!(bytes == &vec![7; 3000] || bytes == &vec![1; 500]);
            }
            delivered += 1;
        }
    }
    assert_eq!(delivered, 22);
    assert_eq!(b.channel_counters(0).unwrap().blocks_delivered, 1);
}

/// The case proptest found: one flipped bit in a real datagram marks a section after
/// the channels; the packet is refused and counted once, as a refused section.
#[test]
fn a_flipped_bit_that_marks_a_section_is_refused_and_counted() {
    let mut datagram = real_datagrams()[3].clone();
    let at = 17_269_338_058_107_743_671_usize % datagram.len();
    datagram[at] ^= 1 << 4;
    let mut b: Connection<Msg> = Connection::new(0.0, config()).unwrap();
    assert!(b.handle_datagram(0.0, &datagram).is_err());
    let counters = *b.counters();
    assert_eq!(counters.sections_refused, 1, "{counters:?}");
    assert_eq!(
        counters.malformed_packets
            + counters.packets_refused
            + counters.endpoint_drops
            + counters.block_datagram_drops,
        0
    );
    for channel in 0..4u8 {
        assert_eq!(b.received_messages(channel), 0);
    }
}
