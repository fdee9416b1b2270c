use super::*;

fn config(slice_size: usize, max_slices: usize) -> ChunkConfig {
    ChunkConfig {
        slice_size,
        max_slices,
        ..ChunkConfig::default()
    }
}

fn drain(sender: &mut ChunkSender, now: f64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(p) = sender.poll_packet(now) {
        out.push(p.to_vec());
    }
    out
}

fn slice_ids(packets: &[Vec<u8>]) -> Vec<u16> {
    packets
        .iter()
        .map(|p| u16::from_le_bytes([p[3], p[4]]))
        .collect()
}

fn ack(chunk_id: u16, count: u16, received: &[u16]) -> Vec<u8> {
    let mut bits = vec![0u8; usize::from(count).div_ceil(8)];
    for &i in received {
        bits[usize::from(i / 8)] |= 1 << (i % 8);
    }
    let mut out = vec![0xc2];
    out.extend(chunk_id.to_le_bytes());
    out.extend(count.to_le_bytes());
    out.extend(bits);
    out
}

#[test]
fn slices_cut_exactly() {
    let mut sender = ChunkSender::new(config(4, 10)).unwrap();
    sender.send((0..10u8).collect::<Vec<_>>()).unwrap();
    let packets = drain(&mut sender, 0.0);
    assert_eq!(
        packets,
        [
            vec![0xc1, 0, 0, 0, 0, 3, 0, 0, 1, 2, 3],
            vec![0xc1, 0, 0, 1, 0, 3, 0, 4, 5, 6, 7],
            vec![0xc1, 0, 0, 2, 0, 3, 0, 2, 0, 8, 9],
        ]
    );
}

#[test]
fn resends_wait_the_resend_delay_and_skip_acked_slices() {
    let mut sender = ChunkSender::new(config(4, 10)).unwrap();
    sender.send(vec![0u8; 16]).unwrap();
    assert_eq!(slice_ids(&drain(&mut sender, 0.0)), [0, 1, 2, 3]);
    assert!(drain(&mut sender, 0.099).is_empty());
    sender.receive_ack(0.05, &ack(0, 4, &[1, 3])).unwrap();
    // No RTT fed: the configured delay, whatever the acks measured.
    assert_eq!(sender.resend_delay(), 0.1);
    assert_eq!(slice_ids(&drain(&mut sender, 0.1)), [0, 2]);
    assert_eq!(sender.stats().slices_resent, 2);
    // With an RTT of 40 ms the delay becomes 50 ms (the slices' own RTO, 0.05 s
    // plus 4 x 0.025 s, is longer).
    sender.set_rtt(Some(0.04));
    assert!(drain(&mut sender, 0.149).is_empty());
    assert_eq!(slice_ids(&drain(&mut sender, 0.16)), [0, 2]);
    let p = sender.progress().unwrap();
    assert_eq!((p.slices_acked, p.bytes_acked), (2, 8));
}

/// The connection's RTT can grow to many round trips when the peer sends packets only
/// now and then (its send interval counts as ack delay there); the slices' own
/// samples, acked as soon as they arrive, keep the resends at the real round trip.
#[test]
fn the_slices_own_round_trip_caps_an_inflated_one() {
    let mut sender = ChunkSender::new(config(4, 10)).unwrap();
    sender.set_rtt(Some(13.0));
    sender.send(vec![0u8; 8]).unwrap();
    assert_eq!(slice_ids(&drain(&mut sender, 0.0)), [0, 1]);
    assert!((sender.resend_delay() - 16.25).abs() < 1e-9);
    // Slice 0 acked 2 s after it left: RTO 2 + 4 x 1 = 6 s, slice 1's resend at 7.5 s
    // (sent after the acked one, it is not known lost).
    sender.receive_ack(2.0, &ack(0, 2, &[0])).unwrap();
    assert!((sender.resend_delay() - 7.5).abs() < 1e-9);
    assert!(drain(&mut sender, 7.49).is_empty());
    assert_eq!(slice_ids(&drain(&mut sender, 7.5)), [1]);
}

/// A slice sent before one that is acked is lost once 9/8 of the slices' smoothed RTT
/// has passed since it was sent, long before the timer.
#[test]
fn a_slice_is_lost_once_a_later_one_is_acked() {
    let one_packet_per_half_second = ChunkConfig {
        bandwidth: 2.0 * (config(4, 10).max_slice_packet_size() + 28) as f64,
        budget_window: 0.0,
        ..config(4, 10)
    };
    // Slices 0 and 1 leave 0.5 s apart (the budget of one packet at a time).
    let mut sender = ChunkSender::new(one_packet_per_half_second).unwrap();
    sender.set_rtt(Some(100.0));
    sender.send(vec![0u8; 8]).unwrap();
    assert_eq!(slice_ids(&drain(&mut sender, 0.0)), [0]);
    assert_eq!(slice_ids(&drain(&mut sender, 0.5)), [1]);
    // Slice 1's ack after 1 s: slice 0, sent 0.5 s before it, is lost at 9/8 s,
    // long before its timer (1 s + 4 x 0.5 s, x 1.25).
    sender.receive_ack(1.5, &ack(0, 2, &[1])).unwrap();
    assert!((sender.resend_delay() - 3.75).abs() < 1e-9);
    assert_eq!(sender.next_send_time(), Some(1.5));
    assert_eq!(slice_ids(&drain(&mut sender, 1.5)), [0]);
    assert_eq!(sender.stats().slices_resent, 1);
}

/// Slices of one burst leave at the same time: the order of sends says which went
/// before the acked one.
#[test]
fn slices_of_one_burst_are_lost_by_their_order() {
    let mut sender = ChunkSender::new(config(4, 10)).unwrap();
    sender.set_rtt(Some(100.0));
    sender.send(vec![0u8; 12]).unwrap();
    assert_eq!(slice_ids(&drain(&mut sender, 0.0)), [0, 1, 2]);
    // Slice 1 acked after 1 s: slice 0 went before it, slice 2 after.
    sender.receive_ack(1.0, &ack(0, 3, &[1])).unwrap();
    assert!(drain(&mut sender, 1.12).is_empty());
    assert_eq!(sender.next_send_time(), Some(1.125));
    assert_eq!(slice_ids(&drain(&mut sender, 1.125)), [0]);
    // Slice 2 waits for its timer (1 s + 4 x 0.5 s, x 1.25) or a later ack.
    assert!(drain(&mut sender, 3.7).is_empty());
    assert_eq!(slice_ids(&drain(&mut sender, 3.75)), [2]);
}

#[test]
fn round_robin_resumes_where_the_budget_ran_out() {
    // 9 slices of 100 bytes (107-byte packets + 28 overhead = 135 budget bytes) and a
    // last one of 50 (87 budget bytes).
    let config = ChunkConfig {
        slice_size: 100,
        bandwidth: 1350.0,
        budget_window: 0.0,
        ..ChunkConfig::default()
    };
    let mut sender = ChunkSender::new(config).unwrap();
    sender.send(vec![0u8; 950]).unwrap();
    // The window holds one full packet (137 bytes) and 0.1 s earns one: one slice per
    // step.
    let mut order = Vec::new();
    for step in 0..25 {
        order.extend(slice_ids(&drain(&mut sender, f64::from(step) * 0.1)));
    }
    assert_eq!(
        order,
        (0..10).chain(0..10).chain(0..5).collect::<Vec<u16>>()
    );
}

#[test]
fn bandwidth_budget_is_respected_over_time() {
    let config = ChunkConfig {
        bandwidth: 50_000.0,
        ..ChunkConfig::default()
    };
    let mut sender = ChunkSender::new(config.clone()).unwrap();
    sender.send(vec![0u8; 256 * 1024]).unwrap();
    let mut budget_bytes = 0.0;
    for frame in 0..=300 {
        for p in drain(&mut sender, f64::from(frame) / 60.0) {
            budget_bytes += (p.len() + config.packet_overhead) as f64;
        }
    }
    // 5 s at 50 kB/s plus the initial window (0.1 s).
    let allowed = 50_000.0 * 5.1;
    assert!(budget_bytes <= allowed + 1.0, "{budget_bytes} > {allowed}");
    assert!(budget_bytes > allowed - 2000.0, "{budget_bytes} too low");
}

#[test]
fn initial_burst_sends_everything_once_then_the_budget_applies() {
    let config = ChunkConfig {
        initial_burst: true,
        bandwidth: 1000.0,
        ..ChunkConfig::default()
    };
    let mut sender = ChunkSender::new(config).unwrap();
    sender.send(vec![0u8; 100 * 1024]).unwrap();
    let burst = drain(&mut sender, 0.0);
    assert_eq!(slice_ids(&burst), (0..100).collect::<Vec<u16>>());
    assert_eq!(sender.stats().burst_packets, 100);
    // The budget restarts from zero: 1000 B/s needs ~1.06 s for a 1059-byte packet.
    assert!(drain(&mut sender, 1.0).is_empty());
    assert_eq!(slice_ids(&drain(&mut sender, 1.1)), [0]);
}

#[test]
fn completion_starts_the_next_chunk_and_ids_wrap() {
    let mut sender = ChunkSender::new(ChunkConfig {
        first_chunk_id: 65535,
        ..config(4, 10)
    })
    .unwrap();
    assert_eq!(sender.send(vec![1u8; 3]), Ok(65535));
    assert_eq!(sender.send(vec![2u8; 3]), Ok(0));
    assert_eq!(sender.queued_chunks(), 1);
    drain(&mut sender, 0.0);
    sender.receive_ack(0.01, &ack(65535, 1, &[0])).unwrap();
    assert_eq!(sender.last_completed(), Some((65535, 0.01)));
    assert_eq!(sender.progress().unwrap().chunk_id, 0);
    // A late duplicate of the completing ack is harmless.
    sender.receive_ack(0.02, &ack(65535, 1, &[0])).unwrap();
    assert_eq!(sender.stats().stale_acks, 1);
    let packets = drain(&mut sender, 0.02);
    assert_eq!(packets, [vec![0xc1, 0, 0, 0, 0, 1, 0, 3, 0, 2, 2, 2]]);
}

#[test]
fn acks_out_of_order_only_ever_add() {
    let mut sender = ChunkSender::new(config(4, 16)).unwrap();
    sender.send(vec![0u8; 64]).unwrap();
    sender.receive_ack(0.0, &ack(0, 16, &[0, 1, 2, 5])).unwrap();
    // An older ack that knows less does not un-ack anything.
    sender.receive_ack(0.0, &ack(0, 16, &[0])).unwrap();
    assert_eq!(sender.progress().unwrap().slices_acked, 4);
    sender.receive_ack(0.0, &ack(0, 16, &[5, 9])).unwrap();
    assert_eq!(sender.progress().unwrap().slices_acked, 5);
    assert_eq!(sender.stats().acks_received, 3);
}

#[test]
fn ack_rejections_are_counted() {
    let mut sender = ChunkSender::new(config(4, 16)).unwrap();
    assert_eq!(
        sender.receive_ack(0.0, &ack(0, 1, &[0])),
        Err(ChunkPacketError::AckChunkMismatch {
            expected: None,
            found: 0
        })
    );
    sender.send(vec![0u8; 64]).unwrap();
    assert_eq!(
        sender.receive_ack(0.0, &ack(0, 15, &[0])),
        Err(ChunkPacketError::SliceCountChanged {
            expected: 16,
            found: 15
        })
    );
    assert_eq!(
        sender.receive_ack(0.0, &ack(1, 16, &[0])),
        Err(ChunkPacketError::AckChunkMismatch {
            expected: Some(0),
            found: 1
        })
    );
    assert!(sender.receive_ack(0.0, &[0xc2, 0, 0, 16, 0, 0]).is_err());
    assert!(sender.receive_ack(0.0, &[]).is_err());
    let r = &sender.stats().rejected;
    assert_eq!(
        (
            r.ack_chunk_mismatch,
            r.slice_count_changed,
            r.ack_length,
            r.truncated
        ),
        (2, 1, 1, 1)
    );
    assert_eq!(sender.progress().unwrap().slices_acked, 0);
}

#[test]
fn queue_is_bounded() {
    let mut sender = ChunkSender::new(ChunkConfig {
        max_queued_chunks: 2,
        ..ChunkConfig::default()
    })
    .unwrap();
    for _ in 0..3 {
        sender.send(vec![0u8; 10]).unwrap();
    }
    assert_eq!(
        sender.send(vec![0u8; 10]),
        Err(ChunkError::QueueFull { capacity: 2 })
    );
}

#[test]
fn next_send_time_promises_a_packet() {
    let config = ChunkConfig {
        bandwidth: 20_000.0,
        ..ChunkConfig::default()
    };
    let mut sender = ChunkSender::new(config).unwrap();
    sender.send(vec![0u8; 50 * 1024]).unwrap();
    let mut now = 0.0;
    let mut sent = 0;
    for _ in 0..200 {
        let packets = drain(&mut sender, now).len();
        assert!(packets > 0, "nothing sent at promised time {now}");
        sent += packets;
        let next = sender.next_send_time().unwrap();
        assert!(next >= now);
        now = next;
    }
    assert!(sent >= 200);
    // 200 promises at 20 kB/s of ~1060-byte packets take about 10 s, not less.
    assert!(now > 9.0, "{now}");
}

#[test]
fn time_going_backwards_is_harmless() {
    let mut sender = ChunkSender::new(config(4, 10)).unwrap();
    sender.send(vec![0u8; 8]).unwrap();
    assert_eq!(drain(&mut sender, 5.0).len(), 2);
    assert!(drain(&mut sender, 1.0).is_empty());
    assert!(drain(&mut sender, f64::NAN).is_empty());
    assert_eq!(drain(&mut sender, 5.2).len(), 2);
}

/// Each chunk sends its slices never sent first, then resends in the order of their
/// last send (the order they fall due), oldest chunk first; acked slices leave that
/// order, and a poll only looks at each chunk's next slice (the order tells which).
#[test]
fn resends_follow_the_order_of_the_last_sends() {
    let config = ChunkConfig {
        max_chunks_in_flight: 2,
        bandwidth: 1e9,
        budget_window: 1.0,
        resend_delay: 1.0,
        ..config(10, 8)
    };
    let mut sender = ChunkSender::new(config).unwrap();
    sender.send(vec![1u8; 40]).unwrap(); // chunk 0, 4 slices
    sender.send(vec![2u8; 40]).unwrap(); // chunk 1, 4 slices
    let chunk_slice = |packets: &[Vec<u8>]| -> Vec<(u16, u16)> {
        packets
            .iter()
            .map(|p| {
                (
                    u16::from_le_bytes([p[1], p[2]]),
                    u16::from_le_bytes([p[3], p[4]]),
                )
            })
            .collect()
    };
    let first = drain(&mut sender, 0.0);
    assert_eq!(
        chunk_slice(&first),
        [
            (0, 0),
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 0),
            (1, 1),
            (1, 2),
            (1, 3)
        ]
    );
    assert!(drain(&mut sender, 0.5).is_empty());
    assert_eq!(sender.next_send_time(), Some(1.0));
    // Slices 1 and 3 of chunk 0, slice 2 of chunk 1 arrive.
    sender.receive_ack(0.6, &ack(0, 4, &[1, 3])).unwrap();
    sender.receive_ack(0.6, &ack(1, 4, &[2])).unwrap();
    assert_eq!(
        chunk_slice(&drain(&mut sender, 1.0)),
        [(0, 0), (0, 2), (1, 0), (1, 1), (1, 3)]
    );
    // Slice 0 of chunk 0 arrives; the rest go again a resend delay later, in the order
    // of their last send.
    sender.receive_ack(1.2, &ack(0, 4, &[0, 1, 3])).unwrap();
    assert_eq!(sender.next_send_time(), Some(2.0));
    assert_eq!(
        chunk_slice(&drain(&mut sender, 2.0)),
        [(0, 2), (1, 0), (1, 1), (1, 3)]
    );
    // Chunk 0 complete: chunk 1 alone, its front the slice sent first last time.
    sender.receive_ack(2.1, &ack(0, 4, &[0, 1, 2, 3])).unwrap();
    sender.receive_ack(2.1, &ack(1, 4, &[0, 2])).unwrap();
    assert_eq!(sender.chunks_in_flight(), 1);
    assert_eq!(chunk_slice(&drain(&mut sender, 3.0)), [(1, 1), (1, 3)]);
}

/// With chunks completing out of order, a chunk finished more than `K` completions ago
/// is still one the receiver acks (it took it among its last `K`, and a late copy of a
/// slice came): a stale ack, not a refusal. Far older or never started ids still are.
#[test]
fn acks_of_chunks_finished_out_of_order_are_stale_not_refused() {
    let config = ChunkConfig {
        max_chunks_in_flight: 3,
        ..config(4, 8)
    };
    let mut sender = ChunkSender::new(config).unwrap();
    for byte in 0..6u8 {
        sender.send(vec![byte; 4]).unwrap(); // one slice each
    }
    for id in [1, 2, 0, 4, 5] {
        sender.receive_ack(0.0, &ack(id, 1, &[0])).unwrap();
    }
    // Five chunks finished since chunk 2; chunk 3 is the oldest in flight.
    assert_eq!(sender.progress().unwrap().chunk_id, 3);
    sender.receive_ack(0.1, &ack(2, 1, &[0])).unwrap();
    assert_eq!(sender.stats().stale_acks, 1);
    for id in [6, 100, 65_000] {
        assert!(matches!(
            sender.receive_ack(0.1, &ack(id, 1, &[0])),
            Err(ChunkPacketError::AckChunkMismatch { .. })
        ));
    }
    assert_eq!(sender.stats().rejected.ack_chunk_mismatch, 3);
}
