//! `Endpoint::send_packet_with` (the payload written in place in the outgoing queue)
//! against `send_packet` and against datagrams built by hand from the headers: the same
//! bytes for payloads of every size around the fragment threshold, empty and the
//! largest, queued several at a time or polled one by one, with acks to carry.

use netser_transport::endpoint::header::{FragmentHeader, PacketHeader};
use netser_transport::endpoint::{Config, Endpoint, SendError};
use proptest::prelude::*;

fn config() -> Config {
    // Small fragments and packets keep the largest payload quick to test.
    Config {
        fragment_above: 100,
        fragment_size: 100,
        max_fragments: 8,
        max_packet_size: 800,
        ..Config::default()
    }
}

fn payload(seed: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + seed * 7) as u8).collect()
}

fn datagrams(endpoint: &mut Endpoint) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.to_vec())).collect()
}

/// The datagrams of packet `sequence` built from the wire format: the header and the
/// payload, or fragments of `fragment_size` with the header in fragment 0.
fn by_hand(config: &Config, sequence: u16, ack: (u16, u32), payload: &[u8]) -> Vec<Vec<u8>> {
    let (header, header_len) = PacketHeader {
        sequence,
        ack: ack.0,
        ack_bits: ack.1,
    }
    .encode();
    let header = &header[..header_len];
    if payload.len() <= config.fragment_above {
        return vec![[header, payload].concat()];
    }
    let chunks: Vec<&[u8]> = payload.chunks(config.fragment_size).collect();
    chunks
        .iter()
        .enumerate()
        .map(|(id, chunk)| {
            let fragment = FragmentHeader {
                sequence,
                fragment_id: id as u8,
                num_fragments: chunks.len() as u16,
            }
            .encode();
            let header: &[u8] = if id == 0 { header } else { &[] };
            [&fragment[..], header, chunk].concat()
        })
        .collect()
}

/// Sends `payload` in place, in a buffer of `capacity`.
fn send_with(endpoint: &mut Endpoint, now: f64, capacity: usize, payload: &[u8]) -> u16 {
    endpoint
        .send_packet_with(now, capacity, |buf| {
            buf[..payload.len()].copy_from_slice(payload);
            payload.len()
        })
        .unwrap()
}

#[test]
fn sizes_around_the_fragment_threshold_empty_and_the_largest_match_send_packet() {
    let config = config();
    let sizes = [0, 1, 99, 100, 101, 199, 200, 201, 799, 800];
    let mut copied = Endpoint::new(0.0, config.clone()).unwrap();
    let mut in_place = Endpoint::new(0.0, config.clone()).unwrap();
    for (i, &len) in sizes.iter().enumerate() {
        let payload = payload(i, len);
        let sequence = copied.next_sequence();
        let ack = copied.ack_state();
        copied.send_packet(0.0, &payload).unwrap();
        // A buffer just large enough, and the largest allowed.
        let capacity = if i % 2 == 0 {
            len
        } else {
            config.max_packet_size
        };
        assert_eq!(send_with(&mut in_place, 0.0, capacity, &payload), sequence);
        let expected = by_hand(&config, sequence, ack, &payload);
        assert_eq!(datagrams(&mut copied), expected, "{len} bytes");
        assert_eq!(datagrams(&mut in_place), expected, "{len} bytes");
    }
    assert_eq!(copied.counters(), in_place.counters());
    assert_eq!(in_place.counters().fragments_sent, 2 + 2 + 2 + 3 + 8 + 8);
}

#[test]
fn refusals_send_nothing_and_are_counted() {
    let mut endpoint = Endpoint::new(0.0, config()).unwrap();
    let mut called = false;
    assert_eq!(
        endpoint.send_packet_with(0.0, 801, |_| {
            called = true;
            0
        }),
        Err(SendError::TooLarge {
            size: 801,
            max: 800
        })
    );
    assert!(
        !called,
        "the writer is not called for a capacity over the limit"
    );
    assert_eq!(
        endpoint.send_packet_with(0.0, 10, |_| 11),
        Err(SendError::WrittenPastCapacity {
            written: 11,
            capacity: 10
        })
    );
    assert_eq!(endpoint.next_sequence(), 0);
    assert_eq!(endpoint.pending_transmits(), 0);
    assert_eq!(endpoint.counters().packets_too_large_to_send, 2);
    assert_eq!(endpoint.counters().packets_sent, 0);
}

proptest! {
    /// Random payloads, some queued several at a time before a poll, with acks of a
    /// peer's packets to carry: `send_packet_with` and `send_packet` give the datagrams
    /// built by hand, and the two endpoints' counters and estimates stay equal.
    #[test]
    fn queued_and_polled_packets_match_by_hand_and_send_packet(
        steps in proptest::collection::vec((0usize..=800, 0usize..=50, 0u8..4), 1..60),
    ) {
        let config = config();
        let mut peer = Endpoint::new(0.0, config.clone()).unwrap();
        let mut copied = Endpoint::new(0.0, config.clone()).unwrap();
        let mut in_place = Endpoint::new(0.0, config.clone()).unwrap();
        let mut expected = Vec::new();
        for (i, (len, extra, action)) in steps.into_iter().enumerate() {
            let now = i as f64 * 0.01;
            if action == 0 {
                // The peer's packet reaches both: the next headers carry its ack.
                peer.send_packet(now, &payload(i, len % 50)).unwrap();
                for datagram in datagrams(&mut peer) {
                    copied.handle_datagram(now, &datagram).unwrap();
                    in_place.handle_datagram(now, &datagram).unwrap();
                }
            }
            let payload = payload(i, len);
            let sequence = copied.next_sequence();
            let ack = copied.ack_state();
            copied.send_packet(now, &payload).unwrap();
            let capacity = (len + extra).min(config.max_packet_size);
            prop_assert_eq!(send_with(&mut in_place, now, capacity, &payload), sequence);
            expected.extend(by_hand(&config, sequence, ack, &payload));
            if action != 1 {
                prop_assert_eq!(copied.pending_transmits(), expected.len());
                prop_assert_eq!(datagrams(&mut copied), expected.clone());
                prop_assert_eq!(datagrams(&mut in_place), std::mem::take(&mut expected));
            }
            copied.handle_timeout(now);
            in_place.handle_timeout(now);
            prop_assert_eq!(copied.counters(), in_place.counters());
            prop_assert_eq!(copied.stats(), in_place.stats());
        }
        prop_assert_eq!(datagrams(&mut copied), expected.clone());
        prop_assert_eq!(datagrams(&mut in_place), expected);
    }
}
