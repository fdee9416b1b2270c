//! Endpoint behaviour between two netser endpoints: acks through holes and bursts of
//! loss, duplicates and stale packets, the sequence wrap, fragmented packets, and the
//! RTT, loss and bandwidth estimates on links whose answers are known.

use std::collections::BTreeSet;

use netser_transport::endpoint::{Config, Endpoint, ReceiveError};

fn endpoint() -> Endpoint {
    Endpoint::new(0.0, Config::default()).unwrap()
}

fn datagrams(endpoint: &mut Endpoint) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.to_vec())).collect()
}

/// Payload derived from its sequence, the articles' soak trick.
fn payload(sequence: u16, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u16).wrapping_add(sequence.wrapping_mul(7)) as u8)
        .collect()
}

/// `a` sends `count` packets; the ones `lost(i)` picks never arrive. After each packet
/// that does arrive, `b` replies when `reply(i)` says so. Returns the sequences `b`
/// received and the acks `a` reported.
fn exchange(
    count: u32,
    lost: impl Fn(u32) -> bool,
    reply: impl Fn(u32) -> bool,
) -> (BTreeSet<u16>, Vec<u16>) {
    let mut a = endpoint();
    let mut b = endpoint();
    let mut received = BTreeSet::new();
    let mut acks = Vec::new();
    for i in 0..count {
        let now = f64::from(i) * 0.01;
        let sequence = a.send_packet(now, &payload(i as u16, 10)).unwrap();
        for datagram in datagrams(&mut a) {
            if !lost(i) {
                let packet = b.handle_datagram(now, &datagram).unwrap().unwrap();
                assert_eq!(packet.sequence, sequence);
                assert_eq!(packet.payload, payload(sequence, 10));
                received.insert(sequence);
            }
        }
        if !lost(i) && reply(i) {
            b.send_packet(now, b"").unwrap();
            for datagram in datagrams(&mut b) {
                a.handle_datagram(now, &datagram).unwrap();
            }
        }
        acks.extend(a.drain_acks());
    }
    (received, acks)
}

#[test]
fn every_other_packet_lost_acks_exactly_the_others() {
    let (received, acks) = exchange(256, |i| i % 2 == 1, |_| true);
    let acked: BTreeSet<u16> = acks.iter().copied().collect();
    assert_eq!(acks.len(), acked.len(), "no sequence acked twice");
    assert_eq!(acked, received);
    assert_eq!(acked.len(), 128);
}

#[test]
fn acks_through_holes_and_bursts_with_sparse_replies() {
    // Holes, a burst of 10 and a burst of 40 (longer than ack_bits) lost; the receiver
    // replies only after every fifth packet it gets. A received packet is acked exactly
    // when some reply's ack window (its newest received and the 31 before) covers it.
    let lost = |i: u32| i % 7 == 3 || (50..60).contains(&i) || (100..140).contains(&i);
    let reply = |i: u32| i.is_multiple_of(5);
    let (received, acks) = exchange(300, lost, reply);
    let mut expected = BTreeSet::new();
    for i in 0..300u32 {
        // A reply goes out right after packet i arrives, so i is its newest received.
        if !lost(i) && reply(i) {
            let newest = i;
            for back in 0..32 {
                if let Some(s) = newest.checked_sub(back) {
                    if received.contains(&(s as u16)) {
                        expected.insert(s as u16);
                    }
                }
            }
        }
    }
    let acked: BTreeSet<u16> = acks.iter().copied().collect();
    assert_eq!(acks.len(), acked.len(), "no sequence acked twice");
    assert_eq!(acked, expected);
    assert!(acked.is_subset(&received));
    // 96..=99 arrived, but the next reply after them is at 140 (the burst of 40 took
    // 100..140), whose window starts at 109: their acks are lost with the burst.
    assert!(received.contains(&99) && !acked.contains(&99));
    // 95 was covered by its own reply.
    assert!(acked.contains(&95));
}

#[test]
fn duplicates_and_stale_packets_are_dropped_and_counted() {
    let mut a = endpoint();
    let mut b = endpoint();
    let mut first = Vec::new();
    for i in 0..300u16 {
        a.send_packet(0.0, &payload(i, 8)).unwrap();
        for datagram in datagrams(&mut a) {
            if i == 0 {
                first = datagram.clone();
            }
            assert!(b.handle_datagram(0.0, &datagram).unwrap().is_some());
            assert_eq!(
                b.handle_datagram(0.0, &datagram),
                Err(ReceiveError::Duplicate { sequence: i })
            );
        }
    }
    // Sequence 0 is now 300 behind the newest, outside the 256-packet window.
    assert_eq!(
        b.handle_datagram(0.0, &first),
        Err(ReceiveError::Stale { sequence: 0 })
    );
    let counters = b.counters();
    assert_eq!(counters.packets_received, 300);
    assert_eq!(counters.drops.duplicate, 300);
    assert_eq!(counters.drops.stale, 1);
    assert_eq!(counters.datagrams_received, 601);
}

#[test]
fn acks_and_payloads_stay_right_across_the_sequence_wrap() {
    let mut a = endpoint();
    let mut b = endpoint();
    let mut acked = 0u64;
    for i in 0..70_000u32 {
        let now = f64::from(i) / 60.0;
        let sequence = a.send_packet(now, &payload(i as u16, 4)).unwrap();
        assert_eq!(sequence, i as u16);
        let lose = i % 10 == 9;
        for datagram in datagrams(&mut a) {
            if !lose {
                let packet = b.handle_datagram(now, &datagram).unwrap().unwrap();
                assert_eq!(packet.payload, payload(sequence, 4));
            }
        }
        b.send_packet(now, &[]).unwrap();
        for datagram in datagrams(&mut b) {
            a.handle_datagram(now, &datagram).unwrap();
        }
        for ack in a.drain_acks() {
            assert_eq!(ack, sequence, "acked the packet just received, once");
            assert!(!lose);
            acked += 1;
        }
    }
    assert_eq!(acked, 63_000);
    assert_eq!(b.counters().drops.total(), 0);
}

#[test]
fn fragmented_packets_of_every_size_arrive_intact_out_of_order() {
    let mut a = endpoint();
    let mut b = endpoint();
    let sizes = [1025, 2048, 2049, 16 * 1024, 100_000, 256 * 1024];
    for (n, &size) in sizes.iter().enumerate() {
        let sequence = a.send_packet(0.0, &payload(n as u16, size)).unwrap();
        let mut fragments = datagrams(&mut a);
        assert_eq!(fragments.len(), size.div_ceil(1024));
        // Deliver in a scrambled order, each twice.
        fragments.reverse();
        let half = fragments.len() / 2;
        fragments.rotate_left(half);
        let mut delivered = Vec::new();
        for fragment in fragments.iter().chain(fragments.iter()) {
            if let Ok(Some(packet)) = b.handle_datagram(0.0, fragment) {
                delivered.push((packet.sequence, packet.payload.to_vec()));
            }
        }
        assert_eq!(delivered, [(sequence, payload(n as u16, size))]);
    }
    assert_eq!(b.counters().packets_reassembled, sizes.len() as u64);
    assert_eq!(b.pending_reassemblies(), 0);
}

#[test]
fn rtt_loss_and_bandwidth_estimates_on_a_known_link() {
    // 60 packets a second each way, 50 ms one way, every fourth packet from `a` lost.
    let latency = 0.05;
    let mut a = endpoint();
    let mut b = endpoint();
    let mut in_flight: Vec<(f64, bool, Vec<u8>)> = Vec::new();
    let frames = 1200;
    for frame in 0..frames {
        let now = f64::from(frame) / 60.0;
        a.send_packet(now, &[0; 100]).unwrap();
        let lose = frame % 4 == 3;
        for datagram in datagrams(&mut a) {
            if !lose {
                in_flight.push((now + latency, true, datagram));
            }
        }
        b.send_packet(now, &[0; 100]).unwrap();
        for datagram in datagrams(&mut b) {
            in_flight.push((now + latency, false, datagram));
        }
        // Deliver what is due by the next frame.
        let next = f64::from(frame + 1) / 60.0;
        in_flight.sort_by(|x, y| x.0.total_cmp(&y.0));
        while in_flight.first().is_some_and(|p| p.0 <= next) {
            let (at, to_b, datagram) = in_flight.remove(0);
            let target = if to_b { &mut b } else { &mut a };
            target.handle_datagram(at, &datagram).unwrap();
        }
        a.handle_timeout(next);
        b.handle_timeout(next);
    }
    let stats = *a.stats();
    // An ack comes back on b's first packet sent after arrival: RTT is 2 x latency plus
    // up to one frame of waiting.
    assert!(stats.rtt_min >= 2.0 * latency - 1e-9, "{stats:?}");
    assert!(
        stats.rtt_max <= 2.0 * latency + 1.0 / 60.0 + 1e-9,
        "{stats:?}"
    );
    assert!(stats.rtt >= stats.rtt_min && stats.rtt <= stats.rtt_max);
    assert!(stats.jitter_max_vs_min_rtt <= 1.0 / 60.0 + 1e-9);
    let loss = stats.packet_loss.unwrap();
    assert!((loss - 0.25).abs() < 0.02, "{stats:?}");
    assert!(b.stats().packet_loss.unwrap() < 0.01);
    // Each datagram: 28 (IP + UDP) + 4-byte header + 100: 132 bytes x 60/s = 63.36 kbps.
    let expected_kbps = (28.0 + 4.0 + 100.0) * 8.0 * 60.0 / 1000.0;
    let sent_kbps = b.stats().sent_kbps.unwrap();
    assert!(
        (sent_kbps - expected_kbps).abs() < expected_kbps * 0.05,
        "{:?}",
        b.stats()
    );
    let received_kbps = a.stats().received_kbps.unwrap();
    assert!((received_kbps - expected_kbps).abs() < expected_kbps * 0.05);
    // Three quarters of a's packets are acked.
    let acked = a.stats().acked_kbps.unwrap() / a.stats().sent_kbps.unwrap();
    assert!((acked - 0.75).abs() < 0.05, "{acked}");
}

#[test]
fn the_outgoing_queue_reuses_its_buffer() {
    let mut a = endpoint();
    for i in 0..1000u16 {
        a.send_packet(0.0, &payload(i, 3000)).unwrap();
        assert_eq!(datagrams(&mut a).len(), 3);
        assert_eq!(a.pending_transmits(), 0);
    }
    assert_eq!(a.counters().fragments_sent, 3000);
}
