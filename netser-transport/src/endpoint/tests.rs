use super::header::{FragmentHeader, PacketHeader};
use super::*;

fn pair() -> (Endpoint, Endpoint) {
    (
        Endpoint::new(0.0, Config::default()).unwrap(),
        Endpoint::new(0.0, Config::default()).unwrap(),
    )
}

fn transmits(endpoint: &mut Endpoint) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.to_vec())).collect()
}

/// `a` sends a packet every `interval` seconds over a 0.1 s round trip; `b` answers
/// each one 0.02 s after it arrives, reporting that delay when `reports`. Returns
/// `a`'s stats.
fn rto_against_a_peer_that_answers(interval: f64, reports: bool) -> Stats {
    let (mut a, mut b) = pair();
    for i in 0..100 {
        let sent = f64::from(i) * interval;
        a.send_packet(sent, b"ping").unwrap();
        for datagram in transmits(&mut a) {
            b.handle_datagram(sent + 0.05, &datagram).unwrap();
        }
        b.send_packet(sent + 0.07, b"pong").unwrap();
        for datagram in transmits(&mut b) {
            if reports {
                a.handle_datagram_with_ack_delay(sent + 0.12, &datagram, 0.02)
                    .unwrap();
            } else {
                a.handle_datagram(sent + 0.12, &datagram).unwrap();
            }
        }
    }
    *a.stats()
}

/// A peer that reports its ack delay bounds what the RTO allows for it, however
/// seldom it sends; one that does not may hold an ack as long as it goes between
/// packets.
#[test]
fn the_rto_allows_a_reporting_peer_its_largest_ack_delay_not_its_interval() {
    for interval in [0.5, 3.0] {
        let reported = rto_against_a_peer_that_answers(interval, true);
        assert!((reported.smoothed_rtt - 0.1).abs() < 1e-9);
        let expected = 0.1 + (4.0 * reported.rtt_variance).max(0.001) + 0.02;
        assert!(
            (reported.rto - expected).abs() < 1e-9,
            "interval {interval}: {}",
            reported.rto
        );
        let bare = rto_against_a_peer_that_answers(interval, false);
        assert!(
            bare.rto > interval,
            "interval {interval}: {} without reports",
            bare.rto
        );
    }
}

#[test]
fn incremental_ack_bits_equal_the_buffer_scan() {
    let (_, mut receiver) = pair();
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut sequence = 0u16;
    for _ in 0..5000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Mostly forward, sometimes back, sometimes a burst of loss.
        sequence = match state % 10 {
            0 => sequence.wrapping_sub((state >> 8) as u16 % 40),
            1 => sequence.wrapping_add((state >> 8) as u16 % 100),
            _ => sequence.wrapping_add(1),
        };
        let (bytes, len) = PacketHeader {
            sequence,
            ack: 0,
            ack_bits: 0,
        }
        .encode();
        if (state >> 32).is_multiple_of(3) {
            // The first fragment of a packet moves the window without receiving it.
            let mut datagram = FragmentHeader {
                sequence,
                fragment_id: 0,
                num_fragments: 2,
            }
            .encode()
            .to_vec();
            datagram.extend_from_slice(&bytes[..len]);
            datagram.extend_from_slice(&[0; 1024]);
            let _ = receiver.handle_datagram(0.0, &datagram);
        } else {
            let _ = receiver.handle_datagram(0.0, &bytes[..len]);
        }
        assert_eq!(
            receiver.ack_state(),
            receiver.received.packets().generate_ack_bits()
        );
    }
}

#[test]
fn each_ack_is_reported_once_even_when_repeated_in_later_headers() {
    let (mut a, mut b) = pair();
    for i in 0..10 {
        a.send_packet(f64::from(i), b"x").unwrap();
        for datagram in transmits(&mut a) {
            b.handle_datagram(f64::from(i), &datagram).unwrap();
        }
    }
    // Three packets from b all ack 0..10.
    for i in 0..3 {
        b.send_packet(10.0, &[i]).unwrap();
        for datagram in transmits(&mut b) {
            a.handle_datagram(10.0, &datagram).unwrap();
        }
    }
    let acks: Vec<u16> = a.drain_acks().collect();
    let mut sorted = acks.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..10).collect::<Vec<_>>());
    assert_eq!(a.counters().packets_acked, 10);
}

/// Acks are looked up only for header bits no earlier header set; what is reported
/// is still every sent packet any header acked, once: headers newer, older, far
/// apart, and forged ones that ack packets not yet sent (whose real acks come later).
#[test]
fn skipping_seen_ack_bits_reports_the_same_acks() {
    let (mut a, _) = pair();
    let mut state = 0x0123_4567_89ab_cdefu64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut expected = std::collections::BTreeSet::new();
    let mut reported = Vec::new();
    let mut peer_sequence = 0u16;
    for round in 0..3000u32 {
        if next() % 3 != 0 && a.next_sequence() < 200 {
            a.send_packet(f64::from(round), b"x").unwrap();
            transmits(&mut a);
        }
        let sent = a.next_sequence();
        let r = next();
        let ack = match r % 5 {
            0 => sent.wrapping_add((r >> 8) as u16 % 8), // forged: not sent yet
            1 => sent.wrapping_sub((r >> 8) as u16 % 100),
            _ => sent.wrapping_sub(1 + (r >> 8) as u16 % 4),
        };
        let ack_bits = (r >> 16) as u32 | (r >> 48) as u32;
        for n in 0..32u16 {
            let acked = ack.wrapping_sub(n);
            if ack_bits & (1 << n) != 0 && acked < sent && sent - acked <= 256 {
                expected.insert(acked);
            }
        }
        let (header, len) = PacketHeader {
            sequence: peer_sequence,
            ack,
            ack_bits,
        }
        .encode();
        peer_sequence = peer_sequence.wrapping_add(1);
        a.handle_datagram(f64::from(round), &header[..len]).unwrap();
        reported.extend(a.drain_acks());
    }
    let mut sorted = reported.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), reported.len(), "each reported once");
    assert_eq!(sorted, expected.into_iter().collect::<Vec<_>>());
}

#[test]
fn a_regular_packet_for_a_sequence_in_reassembly_ends_the_reassembly() {
    let (mut a, mut b) = pair();
    a.send_packet(0.0, &[1; 3000]).unwrap();
    let fragments = transmits(&mut a);
    b.handle_datagram(0.0, &fragments[0]).unwrap();
    assert_eq!(b.pending_reassemblies(), 1);
    // The same sequence arriving whole (a forged or confused peer).
    let (header, len) = PacketHeader {
        sequence: 0,
        ack: 65535,
        ack_bits: 0,
    }
    .encode();
    b.handle_datagram(0.0, &header[..len]).unwrap();
    assert_eq!(b.pending_reassemblies(), 0);
    assert_eq!(
        b.handle_datagram(0.0, &fragments[1]),
        Err(ReceiveError::Duplicate { sequence: 0 })
    );
}

#[test]
fn interleaved_packets_of_every_size_reassemble_exactly_from_a_small_pool() {
    // 48 blocks of 16 bytes for packets of up to 16 fragments: runs of every length
    // come and go, the pool fragments, and full pools evict.
    let config = Config {
        max_packet_size: 256,
        fragment_above: 16,
        fragment_size: 16,
        max_fragments: 16,
        max_reassembly_bytes: 48 * 16,
        fragment_reassembly_buffer_size: 8,
        ..Config::default()
    };
    let mut sender = Endpoint::new(0.0, config.clone()).unwrap();
    let mut receiver = Endpoint::new(0.0, config.clone()).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut sent = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut delivered = 0;
    for _ in 0..300 {
        // Five packets at a time, their fragments shuffled together.
        let mut datagrams = Vec::new();
        for _ in 0..5 {
            let len = 17 + (next() % 240) as usize;
            let sequence = sender.next_sequence();
            let payload: Vec<u8> = (0..len).map(|i| (i as u8) ^ (sequence as u8)).collect();
            sender.send_packet(0.0, &payload).unwrap();
            datagrams.extend(transmits(&mut sender));
            sent.push(payload);
        }
        for i in (1..datagrams.len()).rev() {
            datagrams.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        for datagram in &datagrams {
            if let Ok(Some(packet)) = receiver.handle_datagram(0.0, datagram) {
                assert_eq!(packet.payload, sent[usize::from(packet.sequence)]);
                assert!(seen.insert(packet.sequence), "delivered once");
                delivered += 1;
            }
            assert!(receiver.memory_bytes() <= config.memory_bound());
            assert!(receiver.reassembly_block_bytes() <= config.max_reassembly_bytes);
        }
    }
    let counters = receiver.counters();
    assert_eq!(counters.packets_reassembled, delivered);
    assert!(
        delivered > 1000,
        "most packets get through: {delivered} of 1500"
    );
    assert!(counters.drops.reassembly_evicted > 0, "the pool ran full");
}

/// One datagram reserves a whole run of blocks, so the cheapest flood is the 1-byte
/// last fragment of a 256-fragment packet: 6 bytes that claim 256 KiB of pool. The
/// pool fills at once and then recycles, memory never passes the bound, and real
/// packets sent after the flood push the forged runs out and arrive.
#[test]
fn tiny_fragments_reserving_whole_runs_stay_within_the_memory_bound() {
    let (mut sender, mut receiver) = pair();
    let config = receiver.config().clone();
    let mut state = 0x5eed_f00du64;
    let mut reserved = 0;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut datagram = FragmentHeader {
            sequence: 40 + (state % 16) as u16,
            fragment_id: 255,
            num_fragments: 256,
        }
        .encode()
        .to_vec();
        datagram.push(0xEE);
        if receiver.handle_datagram(0.0, &datagram) == Ok(None) {
            reserved += 1;
        }
        assert!(receiver.reassembly_bytes() <= config.reassembly_memory_bound());
        assert!(receiver.memory_bytes() <= config.memory_bound());
    }
    assert!(reserved > 16, "forged runs were reserved: {reserved}");
    assert_eq!(
        receiver.reassembly_block_bytes(),
        config.max_reassembly_bytes
    );
    assert!(receiver.counters().drops.reassembly_evicted > 0);
    for round in 0..20u8 {
        let real: Vec<u8> = (0..16 * 1024).map(|i| (i % 251) as u8 ^ round).collect();
        sender.send_packet(1.0, &real).unwrap();
        let mut delivered = None;
        for datagram in transmits(&mut sender) {
            if let Some(packet) = receiver.handle_datagram(1.0, &datagram).unwrap() {
                delivered = Some(packet.payload.to_vec());
            }
            assert!(receiver.memory_bytes() <= config.memory_bound());
        }
        assert!(
            delivered.as_deref() == Some(&real[..]),
            "round {round}: the real packet was not delivered intact"
        );
    }
}

#[test]
fn reset_forgets_everything() {
    let (mut a, mut b) = pair();
    a.send_packet(0.0, &[1; 3000]).unwrap();
    let fragments = transmits(&mut a);
    b.handle_datagram(0.0, &fragments[0]).unwrap();
    b.reset();
    assert_eq!(b.pending_reassemblies(), 0);
    assert_eq!(b.ack_state(), (65535, 0));
    assert_eq!(*b.counters(), Counters::default());
    // Fragment 1 starts a fresh reassembly; fragment 0 again completes nothing yet.
    assert_eq!(b.handle_datagram(0.0, &fragments[1]), Ok(None));
}
