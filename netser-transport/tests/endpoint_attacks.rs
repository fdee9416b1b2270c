//! Every attack on fragment reassembly that "Packet Fragmentation and Reassembly" lists,
//! plus truncated headers and random bytes, each against an endpoint with the default
//! config; and the memory bound held while an attacker floods it.

use netser_transport::endpoint::header::{FragmentHeader, PacketHeader};
use netser_transport::endpoint::{Config, Endpoint, ReceiveError};

const FRAGMENT_SIZE: usize = 1024;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn endpoint() -> Endpoint {
    Endpoint::new(0.0, Config::default()).unwrap()
}

/// A fragment datagram built by hand, as an attacker would.
fn fragment(sequence: u16, fragment_id: u8, num_fragments: u16, data: &[u8]) -> Vec<u8> {
    let mut datagram = FragmentHeader {
        sequence,
        fragment_id,
        num_fragments,
    }
    .encode()
    .to_vec();
    if fragment_id == 0 {
        let (header, len) = PacketHeader {
            sequence,
            ack: 0,
            ack_bits: 0,
        }
        .encode();
        datagram.extend_from_slice(&header[..len]);
    }
    datagram.extend_from_slice(data);
    datagram
}

fn sent_datagrams(sender: &mut Endpoint, payload: &[u8]) -> Vec<Vec<u8>> {
    sender.send_packet(0.0, payload).unwrap();
    std::iter::from_fn(|| sender.poll_transmit().map(|t| t.data.to_vec())).collect()
}

fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

fn assert_within_bounds(receiver: &Endpoint) {
    let config = receiver.config();
    assert!(receiver.reassembly_block_bytes() <= config.max_reassembly_bytes);
    assert_eq!(receiver.reassembly_block_bytes() % FRAGMENT_SIZE, 0);
    assert!(receiver.reassembly_bytes() <= config.reassembly_memory_bound());
    assert!(receiver.memory_bytes() <= config.memory_bound());
}

#[test]
fn fragment_ids_out_of_range_are_refused_and_the_real_packet_still_arrives() {
    let mut sender = endpoint();
    let mut receiver = endpoint();
    let real = payload(2000, 1);
    let datagrams = sent_datagrams(&mut sender, &real);
    assert_eq!(datagrams.len(), 2);
    receiver.handle_datagram(0.0, &datagrams[0]).unwrap();
    // Fragments [2, 255] of a packet that has two.
    for fragment_id in 2..=255u8 {
        assert_eq!(
            receiver.handle_datagram(0.0, &fragment(0, fragment_id, 2, &[0xAA; FRAGMENT_SIZE])),
            Err(ReceiveError::FragmentIdOutOfRange {
                fragment_id,
                num_fragments: 2
            })
        );
    }
    assert_eq!(receiver.counters().drops.fragment_id_out_of_range, 254);
    let packet = receiver
        .handle_datagram(0.0, &datagrams[1])
        .unwrap()
        .unwrap();
    assert_eq!(packet.payload, real);
}

#[test]
fn a_fragment_count_that_changes_within_a_packet_is_refused() {
    let mut sender = endpoint();
    let mut receiver = endpoint();
    let real = payload(2000, 2);
    let datagrams = sent_datagrams(&mut sender, &real);
    receiver.handle_datagram(0.0, &datagrams[0]).unwrap();
    // The attacker widens the packet to 256 fragments after the first was received.
    for fragment_id in 1..=255u8 {
        assert_eq!(
            receiver.handle_datagram(0.0, &fragment(0, fragment_id, 256, &[0xBB; FRAGMENT_SIZE])),
            Err(ReceiveError::FragmentCountMismatch {
                sequence: 0,
                expected: 2,
                found: 256
            })
        );
    }
    assert_eq!(receiver.counters().drops.fragment_count_mismatch, 255);
    // The first fragment reserved room for its packet's two; the refused ones took none.
    assert_eq!(receiver.reassembly_block_bytes(), 2 * FRAGMENT_SIZE);
    let packet = receiver
        .handle_datagram(0.0, &datagrams[1])
        .unwrap()
        .unwrap();
    assert_eq!(packet.payload, real);
}

#[test]
fn a_fragment_count_over_the_maximum_is_refused() {
    let mut receiver = Endpoint::new(
        0.0,
        Config {
            max_fragments: 16,
            max_packet_size: 16 * 1024,
            ..Config::default()
        },
    )
    .unwrap();
    assert_eq!(
        receiver.handle_datagram(0.0, &fragment(0, 3, 17, &[0; FRAGMENT_SIZE])),
        Err(ReceiveError::FragmentCountTooLarge {
            num_fragments: 17,
            max: 16
        })
    );
}

#[test]
fn oversized_and_funny_sized_fragment_data_is_refused() {
    let mut receiver = endpoint();
    // More than fragment_size in a middle fragment and in the last.
    assert_eq!(
        receiver.handle_datagram(0.0, &fragment(0, 1, 4, &[0; FRAGMENT_SIZE + 1])),
        Err(ReceiveError::FragmentTooBig {
            size: FRAGMENT_SIZE + 1,
            max: FRAGMENT_SIZE
        })
    );
    assert_eq!(
        receiver.handle_datagram(0.0, &fragment(0, 3, 4, &[0; 5000])),
        Err(ReceiveError::FragmentTooBig {
            size: 5000,
            max: FRAGMENT_SIZE
        })
    );
    // A middle fragment that is short, and an empty last fragment.
    assert_eq!(
        receiver.handle_datagram(0.0, &fragment(0, 1, 4, &[0; 1000])),
        Err(ReceiveError::FragmentSizeMismatch {
            fragment_id: 1,
            size: 1000,
            expected: FRAGMENT_SIZE
        })
    );
    assert_eq!(
        receiver.handle_datagram(0.0, &fragment(0, 3, 4, &[])),
        Err(ReceiveError::FragmentSizeMismatch {
            fragment_id: 3,
            size: 0,
            expected: FRAGMENT_SIZE
        })
    );
    // A datagram far over any packet is refused before it is parsed.
    let huge = vec![1u8; 300 * 1024];
    assert!(matches!(
        receiver.handle_datagram(0.0, &huge),
        Err(ReceiveError::TooLarge { .. })
    ));
    // A regular packet whose payload is over max_packet_size.
    let mut small = Endpoint::new(
        0.0,
        Config {
            max_packet_size: 100,
            ..Config::default()
        },
    )
    .unwrap();
    let mut datagram = vec![0x20, 0, 0, 0];
    datagram.extend_from_slice(&[0; 101]);
    assert_eq!(
        small.handle_datagram(0.0, &datagram),
        Err(ReceiveError::TooLarge {
            size: 101,
            max: 100
        })
    );
    assert_eq!(receiver.reassembly_block_bytes(), 0);
    let drops = receiver.counters().drops;
    assert_eq!(
        (
            drops.fragment_too_big,
            drops.fragment_size_mismatch,
            drops.too_large
        ),
        (2, 2, 1)
    );
}

#[test]
fn fragment_zero_with_a_forged_or_non_canonical_header_is_refused() {
    let mut receiver = endpoint();
    // The packet header inside fragment 0 names another sequence.
    let mut datagram = FragmentHeader {
        sequence: 7,
        fragment_id: 0,
        num_fragments: 2,
    }
    .encode()
    .to_vec();
    let (header, len) = PacketHeader {
        sequence: 8,
        ack: 0,
        ack_bits: 0,
    }
    .encode();
    datagram.extend_from_slice(&header[..len]);
    datagram.extend_from_slice(&[0; FRAGMENT_SIZE]);
    assert_eq!(
        receiver.handle_datagram(0.0, &datagram),
        Err(ReceiveError::FragmentSequenceMismatch {
            fragment: 7,
            packet: 8
        })
    );
    // A two-byte ack that fits in one: a header the writer never makes.
    let mut datagram = vec![1, 7, 0, 0, 1, 0x1e, 7, 0, 6, 0, 0, 0, 0, 0];
    datagram.extend_from_slice(&[0; FRAGMENT_SIZE]);
    assert_eq!(
        receiver.handle_datagram(0.0, &datagram),
        Err(ReceiveError::NonCanonicalHeader)
    );
    assert_eq!(receiver.pending_reassemblies(), 0);
}

#[test]
fn duplicate_fragments_and_fragments_of_delivered_packets_are_dropped() {
    let mut sender = endpoint();
    let mut receiver = endpoint();
    let real = payload(3000, 3);
    let datagrams = sent_datagrams(&mut sender, &real);
    receiver.handle_datagram(0.0, &datagrams[0]).unwrap();
    assert_eq!(
        receiver.handle_datagram(0.0, &datagrams[0]),
        Err(ReceiveError::DuplicateFragment {
            sequence: 0,
            fragment_id: 0
        })
    );
    receiver.handle_datagram(0.0, &datagrams[1]).unwrap();
    assert_eq!(
        receiver
            .handle_datagram(0.0, &datagrams[2])
            .unwrap()
            .unwrap()
            .payload,
        real
    );
    for datagram in &datagrams {
        assert_eq!(
            receiver.handle_datagram(0.0, datagram),
            Err(ReceiveError::Duplicate { sequence: 0 })
        );
    }
    assert_eq!(receiver.counters().packets_received, 1);
    assert_eq!(receiver.reassembly_block_bytes(), 3 * FRAGMENT_SIZE);
}

/// The article's memory attack: sets of 255 of 256 maximum-size fragments that never
/// complete, sent continually at sequences just ahead of a real peer's, whose fragmented
/// packets are interleaved. Memory stays under the documented bound after every datagram,
/// whatever the real packets manage; once the flood stops, they get through again.
#[test]
fn a_flood_of_maximum_size_fragment_sets_stays_within_the_memory_bound() {
    let mut rng = Rng(0xF100D);
    let mut sender = endpoint();
    let mut receiver = endpoint();
    let config = receiver.config().clone();
    let mut peak = 0;
    for round in 0..40u16 {
        let real = payload(16 * 1024, round as u8);
        let mut real_datagrams = sent_datagrams(&mut sender, &real);
        real_datagrams.reverse();
        let attacker_sequence = round.wrapping_add(1 + rng.below(32) as u16);
        let mut ids: Vec<u8> = (0..=254).collect();
        for i in (1..ids.len()).rev() {
            ids.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (n, &fragment_id) in ids.iter().enumerate() {
            let datagram = fragment(attacker_sequence, fragment_id, 256, &[0xEE; FRAGMENT_SIZE]);
            let _ = receiver.handle_datagram(0.0, &datagram);
            assert_within_bounds(&receiver);
            peak = peak.max(receiver.reassembly_bytes());
            if n % 16 == 0 {
                if let Some(datagram) = real_datagrams.pop() {
                    if let Ok(Some(packet)) = receiver.handle_datagram(0.0, &datagram) {
                        assert_eq!(packet.payload, real);
                    }
                    assert_within_bounds(&receiver);
                }
            }
        }
    }
    assert!(peak <= config.reassembly_memory_bound());
    assert_eq!(
        receiver.reassembly_block_bytes(),
        config.max_reassembly_bytes
    );
    let drops = receiver.counters().drops;
    assert!(
        drops.reassembly_evicted > 0,
        "the pool ran out and was recycled"
    );
    // The flood is over: real packets are delivered intact, from the same full pool.
    for round in 0..3u8 {
        let real = payload(16 * 1024, 100 + round);
        let mut delivered = None;
        for datagram in sent_datagrams(&mut sender, &real) {
            if let Some(packet) = receiver.handle_datagram(1.0, &datagram).unwrap() {
                delivered = Some(packet.payload.to_vec());
            }
        }
        assert_eq!(delivered.as_deref(), Some(&real[..]));
        assert_within_bounds(&receiver);
    }
}

/// The article's heap attack: fragments of every size at random sequences and counts.
/// Every block the pool allocates is exactly `fragment_size`, and once the pool is full
/// the flood allocates nothing more: the memory figures stop moving.
#[test]
fn funny_sized_fragments_cannot_grow_or_fragment_the_pool() {
    let mut rng = Rng(0xF0221);
    let mut receiver = endpoint();
    let config = receiver.config().clone();
    let mut settled = None;
    for i in 0..60_000u32 {
        // Sequences inside a slowly moving window, so packets pile up in reassembly, each
        // with its own fragment count and a last fragment of any size.
        let sequence = (i / 500) as u16 + rng.below(64) as u16;
        let num_fragments = 1 + sequence.wrapping_mul(97) % 256;
        let fragment_id = rng.below(u64::from(num_fragments)) as u8;
        let last = u16::from(fragment_id) + 1 == num_fragments;
        let size = if last {
            rng.below(FRAGMENT_SIZE as u64) as usize + 1
        } else {
            FRAGMENT_SIZE
        };
        let _ = receiver.handle_datagram(
            0.0,
            &fragment(sequence, fragment_id, num_fragments, &vec![7; size]),
        );
        assert_within_bounds(&receiver);
        if receiver.reassembly_block_bytes() == config.max_reassembly_bytes && settled.is_none() {
            settled = Some(i);
        }
        // Once full, the pool recycles its blocks and allocates no more.
        if settled.is_some() {
            assert_eq!(
                receiver.reassembly_block_bytes(),
                config.max_reassembly_bytes
            );
        }
    }
    assert!(settled.is_some(), "the flood fills the pool");
}

#[test]
fn every_truncation_of_a_header_is_refused() {
    let mut sender = endpoint();
    let mut receiver = endpoint();
    // A packet whose header is 9 bytes (ack far from sequence, holes everywhere).
    for _ in 0..300 {
        sender.send_packet(0.0, b"x").unwrap();
        while sender.poll_transmit().is_some() {}
    }
    let (header, len) = PacketHeader {
        sequence: 300,
        ack: 5,
        ack_bits: 0x0102_0304,
    }
    .encode();
    assert_eq!(len, 9);
    for short in 0..len {
        assert!(
            matches!(
                receiver.handle_datagram(0.0, &header[..short]),
                Err(ReceiveError::Truncated { .. })
            ),
            "{short} bytes"
        );
    }
    // Fragment headers, and fragment 0 cut inside its packet header.
    let datagrams = sent_datagrams(&mut sender, &payload(3000, 4));
    for short in 0..5 + 9 {
        assert!(
            matches!(
                receiver.handle_datagram(0.0, &datagrams[0][..short]),
                Err(ReceiveError::Truncated { .. })
            ),
            "{short} bytes"
        );
    }
    // A middle fragment cut anywhere in its data is refused as the wrong size.
    for short in 5..datagrams[1].len() {
        assert!(matches!(
            receiver.handle_datagram(0.0, &datagrams[1][..short]),
            Err(ReceiveError::FragmentSizeMismatch { .. })
        ));
    }
    assert_eq!(receiver.counters().packets_received, 0);
    assert_eq!(receiver.pending_reassemblies(), 0);
}

#[test]
fn random_bytes_never_panic_and_every_datagram_is_accounted_for() {
    let mut rng = Rng(0xBAD_5EED);
    let mut receiver = endpoint();
    let mut delivered = 0u64;
    let mut incomplete = 0u64;
    for _ in 0..100_000 {
        let len = match rng.below(4) {
            0 => rng.below(16) as usize,
            1 => rng.below(1100) as usize,
            2 => 5 + FRAGMENT_SIZE + rng.below(12) as usize,
            _ => rng.below(4000) as usize,
        };
        let mut datagram: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Bias towards plausible prefixes so the deeper checks are reached.
        if let Some(first) = datagram.first_mut() {
            match rng.below(3) {
                0 => *first = 1,
                1 => *first &= 0x3e,
                _ => {}
            }
        }
        if len > 4 && datagram[0] == 1 && rng.below(2) == 0 {
            datagram[4] = rng.below(4) as u8; // small fragment counts
            datagram[3] %= datagram[4] + 1;
        }
        match receiver.handle_datagram(0.0, &datagram) {
            Ok(Some(_)) => delivered += 1,
            Ok(None) => incomplete += 1,
            Err(_) => {}
        }
        assert_within_bounds(&receiver);
    }
    let counters = receiver.counters();
    assert_eq!(counters.datagrams_received, 100_000);
    assert_eq!(
        counters.datagrams_received,
        counters.drops.total() + delivered + incomplete,
        "every datagram is delivered, stored or counted as dropped"
    );
    assert!(counters.drops.total() > 0 && delivered > 0);
}
