//! The bytes in flight (`ChunkConfig::max_bytes_in_flight`): the sender starts a chunk
//! only while the chunks from its oldest in flight fit (a larger chunk goes alone), the
//! receiver refuses a slice that would start a chunk past the limit unless it is the
//! oldest one not taken, and honest transfers over loss stay within both.

use netser_transport::channel::ChannelConfig;
use netser_transport::chunk::{
    ChunkConfig, ChunkPacketError, ChunkReceiver, ChunkSender, SlicePacket,
};
use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError};
use netser_transport::simulator::{Simulator, SimulatorConfig};

/// 16-byte slices, chunks of up to 8 slices (128 bytes), 8 in flight within `bytes`.
fn config(bytes: usize) -> ChunkConfig {
    ChunkConfig {
        slice_size: 16,
        max_slices: 8,
        max_chunks_in_flight: 8,
        max_bytes_in_flight: bytes,
        ..ChunkConfig::default()
    }
}

/// A slice packet of chunk `chunk`: slice `slice` of `count` (16 bytes, 1 in the last).
fn slice(chunk: u16, slice: u16, count: u16) -> Vec<u8> {
    let data = [chunk as u8; 16];
    let packet = SlicePacket {
        chunk_id: chunk,
        slice_id: slice,
        slice_count: count,
        data: if slice + 1 == count {
            &data[..1]
        } else {
            &data
        },
    };
    let mut out = vec![0; 64];
    let len = packet.encode(&mut out).unwrap();
    out.truncate(len);
    out
}

/// The full ack of chunk `chunk` of `count` slices.
fn full_ack(chunk: u16, count: u16) -> Vec<u8> {
    let mut ack = vec![0xc2];
    ack.extend_from_slice(&chunk.to_le_bytes());
    ack.extend_from_slice(&count.to_le_bytes());
    let bytes = usize::from(count).div_ceil(8);
    ack.extend(std::iter::repeat_n(0xffu8, bytes));
    if !count.is_multiple_of(8) {
        ack[5 + bytes - 1] = (1u8 << (count % 8)) - 1;
    }
    ack
}

/// Chunks start while their slices (times the slice size) fit; the next waits, queued,
/// even with room in the count of chunks.
#[test]
fn the_sender_starts_chunks_while_their_bytes_fit() {
    let mut sender = ChunkSender::new(config(100)).unwrap();
    // 2 slices (32 bytes), 3 slices (48 bytes): 80.
    sender.send(vec![1u8; 20]).unwrap();
    sender.send(vec![2u8; 40]).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (2, 80)
    );
    // 2 more slices would be 112 > 100: queued. So is a 1-slice chunk behind it (in
    // order, never overtaking).
    sender.send(vec![3u8; 17]).unwrap();
    sender.send(vec![4u8; 1]).unwrap();
    assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (2, 2));
    // Chunk 0 acked: 48 in flight, chunk 2 fits (80), chunk 3 too (96).
    sender.receive_ack(0.0, &full_ack(0, 2)).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (3, 96)
    );
    assert_eq!(sender.queued_chunks(), 0);
}

/// A chunk larger than the limit goes alone, once the chunks before it are done, so any
/// chunk up to the largest can be sent; nothing starts beside it.
#[test]
fn a_chunk_larger_than_the_limit_goes_alone() {
    let mut sender = ChunkSender::new(config(40)).unwrap();
    sender.send(vec![1u8; 16]).unwrap(); // 16 bytes
    sender.send(vec![2u8; 128]).unwrap(); // 128 > 40: waits for chunk 0
    sender.send(vec![3u8; 1]).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (1, 16)
    );
    sender.receive_ack(0.0, &full_ack(0, 1)).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (1, 128)
    );
    assert_eq!(sender.progress().unwrap().chunk_id, 1);
    sender.receive_ack(0.0, &full_ack(1, 8)).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (1, 16)
    );
    sender.receive_ack(0.0, &full_ack(2, 1)).unwrap();
    assert_eq!(sender.bytes_in_flight(), 0);
    assert!(sender.is_idle());
}

/// A chunk completed behind the oldest one in flight still counts: the receiver holds
/// it until the oldest completes (it delivers in order).
#[test]
fn chunks_completed_behind_the_oldest_still_count() {
    let mut sender = ChunkSender::new(config(48)).unwrap();
    for byte in 0..4u8 {
        sender.send(vec![byte; 16]).unwrap(); // one slice each
    }
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (3, 48)
    );
    sender.receive_ack(0.0, &full_ack(1, 1)).unwrap();
    sender.receive_ack(0.0, &full_ack(2, 1)).unwrap();
    // Chunk 0 alone in flight, but 48 bytes from it to chunk 2: chunk 3 waits.
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (1, 48)
    );
    assert_eq!(sender.queued_chunks(), 1);
    sender.receive_ack(0.0, &full_ack(0, 1)).unwrap();
    assert_eq!(
        (sender.chunks_in_flight(), sender.bytes_in_flight()),
        (1, 16)
    );
    assert_eq!(sender.last_completed().map(|(id, _)| id), Some(2));
}

/// A hostile peer declaring large chunks is refused past the limit, counted, and
/// nothing of the refused chunk is stored; the oldest chunk is still accepted, so the
/// receiver holds at most the limit plus one largest chunk.
#[test]
fn the_receiver_refuses_chunks_past_the_bytes_and_accepts_the_oldest() {
    let mut receiver = ChunkReceiver::new(config(200)).unwrap();
    // Chunks 1 and 2 declare 6 slices (96 bytes) each: 192 <= 200.
    receiver.receive_slice(0.0, &slice(1, 0, 6)).unwrap();
    receiver.receive_slice(0.0, &slice(2, 0, 6)).unwrap();
    assert_eq!(receiver.bytes_held(), 192);
    for chunk in 3..8 {
        assert_eq!(
            receiver.receive_slice(0.0, &slice(chunk, 0, 1)),
            Err(ChunkPacketError::BytesBeyondWindow {
                found: chunk,
                held: 192,
                size: 16,
                max: 200
            })
        );
    }
    assert_eq!(receiver.stats().rejected.bytes_beyond_window, 5);
    assert_eq!(receiver.stats().rejected.total(), 5);
    assert_eq!((receiver.chunks_held(), receiver.bytes_held()), (2, 192));
    // More slices of chunks already held still go in.
    receiver.receive_slice(0.0, &slice(1, 1, 6)).unwrap();
    assert_eq!(receiver.stats().slices_received, 3);
    // The oldest chunk, at the largest size: accepted.
    receiver.receive_slice(0.0, &slice(0, 0, 8)).unwrap();
    assert_eq!(receiver.bytes_held(), 192 + 128);
    // A held chunk may not restart larger past the limit, however many slices insist;
    // nothing moves.
    for _ in 0..40 {
        assert!(matches!(
            receiver.receive_slice(0.0, &slice(2, 0, 8)),
            Err(ChunkPacketError::SliceCountChanged { .. }
                | ChunkPacketError::BytesBeyondWindow { .. })
        ));
    }
    assert!(receiver.stats().rejected.bytes_beyond_window > 5);
    assert_eq!(receiver.bytes_held(), 320);
    assert_eq!(receiver.stats().returned_to_older_chunk, 0);
}

/// Completed chunks waiting to be taken hold bytes an agreeing sender no longer counts:
/// its next chunk's slices are dropped and counted as waiting, not refused as hostile,
/// and go in once the user takes the chunks.
#[test]
fn completed_chunks_waiting_drop_the_next_chunk_without_refusing_it() {
    let mut receiver = ChunkReceiver::new(config(64)).unwrap();
    receiver.receive_slice(0.0, &slice(0, 0, 1)).unwrap(); // 16 bytes, complete
    receiver.receive_slice(0.0, &slice(1, 0, 2)).unwrap();
    receiver.receive_slice(0.0, &slice(1, 1, 2)).unwrap(); // 32 bytes, complete
    assert_eq!(receiver.bytes_held(), 48);
    // The sender saw both acked: chunk 2 (48 bytes) is within its 64.
    receiver.receive_slice(0.0, &slice(2, 0, 3)).unwrap();
    assert_eq!(receiver.stats().discarded_while_ready, 1);
    assert_eq!(receiver.stats().rejected.total(), 0);
    assert_eq!(receiver.bytes_held(), 48);
    // Past 64 even from the oldest chunk not completed: refused.
    assert!(matches!(
        receiver.receive_slice(0.0, &slice(3, 0, 5)),
        Err(ChunkPacketError::BytesBeyondWindow {
            found: 3,
            held: 48,
            size: 80,
            max: 64
        })
    ));
    assert_eq!(receiver.take_chunk().unwrap().id, 0);
    assert_eq!(receiver.take_chunk().unwrap().id, 1);
    receiver.receive_slice(0.0, &slice(2, 0, 3)).unwrap();
    assert_eq!(receiver.bytes_held(), 48);
    assert_eq!(receiver.stats().slices_received, 4);
}

/// The oldest chunk restarts with the slice count its slices insist on (a forged count
/// must not wedge it) whatever the bytes held; once taken, the next oldest may too.
#[test]
fn the_oldest_chunk_restarts_whatever_the_bytes() {
    let mut receiver = ChunkReceiver::new(config(100)).unwrap();
    receiver.receive_slice(0.0, &slice(1, 0, 6)).unwrap(); // 96
    receiver.receive_slice(0.0, &slice(0, 0, 1)).unwrap(); // one slice: complete
                                                           // Chunk 0 completed at 1 slice; taking it makes chunk 1 the oldest.
    assert_eq!(receiver.take_chunk().unwrap().id, 0);
    // Chunk 1's genuine slices say 8: after 16 refusals it restarts, though 128 > 100.
    for _ in 0..16 {
        assert!(receiver.receive_slice(0.0, &slice(1, 1, 8)).is_err());
    }
    receiver.receive_slice(0.0, &slice(1, 1, 8)).unwrap();
    assert_eq!(receiver.stats().returned_to_older_chunk, 1);
    assert_eq!(receiver.bytes_held(), 128);
}

/// Over a lossy, duplicating, reordering link, chunks of every size (one past the
/// limit) arrive in order, intact; the sender never holds more than the limit (or one
/// chunk alone), the receiver never more than the limit when chunks are taken as they
/// complete, and nothing is refused, even when the user takes them only twice a
/// second.
#[test]
fn honest_transfers_stay_within_the_bytes() {
    for (limit, seed, take_every) in [
        (64usize, 1u64, 1u32),
        (100, 2, 1),
        (200, 3, 1),
        (1000, 4, 1),
        (200, 5, 30),
        (1000, 6, 30),
    ] {
        let config = ChunkConfig {
            bandwidth: 20_000.0,
            ..config(limit)
        };
        let mut sender = ChunkSender::new(config.clone()).unwrap();
        let mut receiver = ChunkReceiver::new(config.clone()).unwrap();
        let mut net: Simulator = Simulator::new(SimulatorConfig {
            latency: 0.1,
            jitter: 0.05,
            loss: 0.2,
            duplicate: 0.1,
            seed,
            ..SimulatorConfig::default()
        });
        let sizes: Vec<usize> = (0..60).map(|i| [1, 16, 17, 40, 100, 128][i % 6]).collect();
        let chunks: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &len)| vec![i as u8; len])
            .collect();
        let mut next = 0;
        let mut got = 0;
        let mut now = 0.0;
        let mut frame = 0u32;
        while got < chunks.len() {
            frame += 1;
            assert!(now < 600.0, "limit {limit}: stuck at chunk {got}");
            while next < chunks.len() && sender.send(chunks[next].clone()).is_ok() {
                next += 1;
            }
            while let Some(p) = sender.poll_packet(now) {
                net.send(now, 0, 1, p);
            }
            while let Some(d) = net.receive(now) {
                if d.to == 1 {
                    let _ = receiver.receive_slice(now, &d.data);
                } else {
                    let _ = sender.receive_ack(now, &d.data);
                }
                assert!(
                    sender.bytes_in_flight() <= limit.max(config.max_chunk_size()),
                    "limit {limit}"
                );
                if sender.chunks_in_flight() > 1 {
                    assert!(sender.bytes_in_flight() <= limit, "limit {limit}");
                }
                if take_every == 1 {
                    assert!(
                        receiver.bytes_held() <= limit.max(config.max_chunk_size()),
                        "limit {limit}"
                    );
                }
            }
            while let Some(a) = receiver.poll_ack(now) {
                net.send(now, 1, 0, a);
            }
            if frame.is_multiple_of(take_every) {
                while let Some(chunk) = receiver.take_chunk() {
                    assert_eq!(chunk.data, chunks[got], "limit {limit}");
                    got += 1;
                }
            }
            now += 1.0 / 60.0;
        }
        assert_eq!(receiver.stats().rejected.total(), 0, "limit {limit}");
        if take_every > 1 {
            // The user's pace held chunks back: the sender's slices waited, unrefused.
            assert!(receiver.stats().discarded_while_ready > 0, "limit {limit}");
        }
        assert_eq!(sender.stats().rejected.total(), 0, "limit {limit}");
        if limit >= 200 {
            assert!(
                sender.stats().max_chunks_in_flight_seen > 2,
                "limit {limit}"
            );
        }
    }
}

/// A slice 0 of `count` full 1024-byte slices of chunk `chunk` (the connection's size).
fn full_slice(chunk: u16, count: u16) -> Vec<u8> {
    let data = [7u8; 1024];
    let packet = SlicePacket {
        chunk_id: chunk,
        slice_id: 0,
        slice_count: count,
        data: if count == 1 { &data[..1] } else { &data },
    };
    let mut out = vec![0; 1100];
    let len = packet.encode(&mut out).unwrap();
    out.truncate(len);
    out
}

/// Over the default connection (256 KiB in flight): a peer declaring blocks past the
/// bytes is refused, counted as a dropped block datagram, and starts nothing; the
/// oldest block is still accepted at the largest size.
#[test]
fn a_connection_refuses_blocks_past_the_bytes_in_flight() {
    let mut connection: Connection<u32> =
        Connection::new(0.0, ConnectionConfig::default()).unwrap();
    connection
        .handle_datagram(0.0, &full_slice(1, 200))
        .unwrap(); // 200 KiB
    for chunk in 2..20u16 {
        assert!(matches!(
            connection.handle_datagram(0.0, &full_slice(chunk, 57)),
            Err(ReceiveError::Block(ChunkPacketError::BytesBeyondWindow {
                held: 204_800,
                size: 58_368,
                max: 262_144,
                ..
            }))
        ));
    }
    let stats = connection.block_receiver_stats();
    assert_eq!(stats.rejected.bytes_beyond_window, 18);
    assert_eq!(stats.slices_received, 1);
    assert_eq!(connection.counters().block_datagram_drops, 18);
    // 56 slices still fit; the oldest block fits whatever its size.
    connection.handle_datagram(0.0, &full_slice(2, 56)).unwrap();
    connection
        .handle_datagram(0.0, &full_slice(0, 256))
        .unwrap();
    assert_eq!(connection.block_receiver_stats().slices_received, 3);
}

/// Blocks of 200 KiB over the default connection go one at a time (each is most of
/// the bytes in flight) and all arrive; 4 KiB blocks still travel many at once.
#[test]
fn large_blocks_go_one_at_a_time_and_small_ones_together() {
    #[derive(Debug, Clone, PartialEq, netser::NetSerialize)]
    struct Blob {
        #[net(max_len = 204_800)]
        bytes: Vec<u8>,
    }
    for (len, blocks) in [(200 * 1024usize, 4u32), (4096, 40)] {
        let config = ConnectionConfig::with_channels(vec![ChannelConfig::reliable_ordered()]);
        let mut sides: [Connection<Blob>; 2] = [
            Connection::new(0.0, config.clone()).unwrap(),
            Connection::new(0.0, config).unwrap(),
        ];
        let mut net: Simulator = Simulator::new(SimulatorConfig {
            latency: 0.1,
            loss: 0.05,
            seed: 7,
            ..SimulatorConfig::default()
        });
        let blob = |i: u32| Blob {
            bytes: vec![i as u8; len],
        };
        let (mut sent, mut got) = (0u32, 0u32);
        let mut now = 0.0;
        while got < blocks {
            assert!(now < 120.0, "{len}: {got} of {blocks}");
            while sent < blocks && sides[0].send_message(0, &blob(sent)).is_ok() {
                sent += 1;
            }
            while let Some(d) = net.receive(now) {
                let _ = sides[d.to as usize].handle_datagram(now, &d.data);
            }
            while let Some(message) = sides[1].receive_message(0) {
                assert_eq!(message, blob(got));
                got += 1;
            }
            for (side, connection) in sides.iter_mut().enumerate() {
                connection.handle_timeout(now);
                while let Some(datagram) = connection.poll_transmit(now) {
                    net.send(now, side as u32, 1 - side as u32, datagram);
                }
            }
            now += 1.0 / 60.0;
        }
        let seen = sides[0].block_sender_stats().max_chunks_in_flight_seen;
        if len > 128 * 1024 {
            assert_eq!(seen, 1, "{len}");
        } else {
            assert!(seen > 8, "{len}: {seen}");
        }
        assert_eq!(sides[1].block_receiver_stats().rejected.total(), 0);
    }
}
