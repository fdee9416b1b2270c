//! Several chunks in flight (`ChunkConfig::max_chunks_in_flight` above 1): the sender's
//! window, the receiver's window and its refusals, in-order delivery, the memory bound,
//! and transfers over a lossy link that never leave the window.

use netser_transport::chunk::{
    ChunkConfig, ChunkPacketError, ChunkReceiver, ChunkSender, SlicePacket,
};
use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError};
use netser_transport::simulator::{Simulator, SimulatorConfig};

fn config(k: usize) -> ChunkConfig {
    ChunkConfig {
        slice_size: 4,
        max_slices: 8,
        max_chunks_in_flight: k,
        ..ChunkConfig::default()
    }
}

/// A slice packet of chunk `chunk`: slice `slice` of `count`, 4 bytes (1 in the last).
fn slice(chunk: u16, slice: u16, count: u16) -> Vec<u8> {
    let data = [chunk as u8; 4];
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

fn chunk_of(packet: &[u8]) -> u16 {
    u16::from_le_bytes([packet[1], packet[2]])
}

/// A peer sending slices of more chunks than the window allows is refused and counted,
/// and nothing of them is stored.
#[test]
fn slices_beyond_the_window_are_refused_and_never_stored() {
    let mut receiver = ChunkReceiver::new(config(4)).unwrap();
    // Chunks 1..=3 start (slice 0 of 2 each); chunk 0 has nothing yet.
    for chunk in 1..4 {
        receiver.receive_slice(0.0, &slice(chunk, 0, 2)).unwrap();
    }
    assert_eq!(receiver.chunks_held(), 3);
    let before = receiver.stats().slices_received;
    for chunk in [4u16, 5, 100, 32767] {
        assert_eq!(
            receiver.receive_slice(0.0, &slice(chunk, 0, 2)),
            Err(ChunkPacketError::ChunkBeyondWindow {
                oldest_incomplete: 0,
                found: chunk
            })
        );
    }
    assert_eq!(receiver.stats().rejected.chunk_beyond_window, 4);
    assert_eq!(receiver.stats().rejected.total(), 4);
    assert_eq!(receiver.stats().slices_received, before);
    assert_eq!(receiver.chunks_held(), 3);
    // Chunk ids behind the window (never taken) are refused as before.
    assert!(matches!(
        receiver.receive_slice(0.0, &slice(65535, 0, 2)),
        Err(ChunkPacketError::UnexpectedChunk {
            expected: 0,
            found: 65535
        })
    ));
    assert_eq!(receiver.stats().rejected.unexpected_chunk, 1);
}

/// Completed chunks wait for the user in order; the sender may then send chunks past
/// the window (its window starts at the oldest chunk not acked): those are dropped and
/// counted, not stored, and not refused as hostile. Taking chunks opens the window.
#[test]
fn completed_chunks_wait_in_order_and_hold_the_window() {
    let mut receiver = ChunkReceiver::new(config(2)).unwrap();
    // Chunk 1 completes before chunk 0: nothing to take until chunk 0 is whole.
    receiver.receive_slice(0.0, &slice(1, 0, 1)).unwrap();
    assert!(!receiver.is_ready());
    assert_eq!(receiver.take_chunk(), None);
    receiver.receive_slice(0.0, &slice(0, 0, 1)).unwrap();
    assert!(receiver.is_ready());
    // Both complete and waiting: the sender (window from its oldest unacked, at most
    // chunk 0) may send chunks 2 and 3, not 4.
    for chunk in [2u16, 3] {
        receiver.receive_slice(0.0, &slice(chunk, 0, 1)).unwrap();
    }
    assert_eq!(receiver.stats().discarded_while_ready, 2);
    assert!(receiver.receive_slice(0.0, &slice(4, 0, 1)).is_err());
    assert_eq!(receiver.stats().rejected.chunk_beyond_window, 1);
    assert_eq!(receiver.chunks_held(), 2);
    let taken: Vec<u16> = std::iter::from_fn(|| receiver.take_chunk())
        .map(|c| c.id)
        .collect();
    assert_eq!(taken, [0, 1]);
    assert_eq!(receiver.chunks_held(), 0);
    receiver.receive_slice(0.0, &slice(2, 0, 1)).unwrap();
    receiver.receive_slice(0.0, &slice(3, 0, 1)).unwrap();
    assert_eq!(receiver.chunks_held(), 2);
    // A late slice of a chunk taken: a full ack, so the sender can finish it.
    while receiver.poll_ack(0.0).is_some() {}
    receiver.receive_slice(0.0, &slice(0, 0, 1)).unwrap();
    assert_eq!(receiver.stats().stale_slices, 1);
    assert_eq!(receiver.poll_ack(0.0), Some(&[0xc2, 0, 0, 1, 0, 1][..]));
}

/// The sender keeps at most `K` chunks in flight, all within `K` of the oldest not yet
/// acked: a chunk acked out of order frees no room until the oldest completes.
#[test]
fn the_sender_window_starts_at_the_oldest_chunk_not_acked() {
    let mut sender = ChunkSender::new(config(3)).unwrap();
    for i in 0..5u8 {
        sender.send(vec![i; 4]).unwrap();
    }
    assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (3, 2));
    let mut chunks = Vec::new();
    while let Some(p) = sender.poll_packet(0.0) {
        chunks.push(chunk_of(p));
    }
    assert_eq!(chunks, [0, 1, 2]);
    // Chunk 1 completes: chunk 3 would be 3 past chunk 0.
    sender.receive_ack(0.1, &[0xc2, 1, 0, 1, 0, 1]).unwrap();
    assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (2, 2));
    assert_eq!(sender.last_completed(), None);
    // Chunk 0 completes: the window moves to chunk 2, and chunks 3 and 4 start.
    sender.receive_ack(0.2, &[0xc2, 0, 0, 1, 0, 1]).unwrap();
    assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (3, 0));
    assert_eq!(sender.last_completed(), Some((1, 0.2)));
    assert_eq!(sender.stats().max_chunks_in_flight_seen, 3);
    // Late acks of finished chunks are harmless; others are refused and counted.
    sender.receive_ack(0.3, &[0xc2, 1, 0, 1, 0, 1]).unwrap();
    assert_eq!(sender.stats().stale_acks, 1);
    assert!(sender.receive_ack(0.3, &[0xc2, 9, 0, 1, 0, 1]).is_err());
    assert_eq!(sender.stats().rejected.ack_chunk_mismatch, 1);
    // Cancelling needs one chunk in flight: with more, the receiver would wait forever.
    assert_eq!(sender.cancel(), None);
    assert_eq!(sender.chunks_in_flight(), 3);
}

/// The queue bound still holds with the window full.
#[test]
fn the_queue_bound_holds_behind_a_full_window() {
    let mut sender = ChunkSender::new(ChunkConfig {
        max_queued_chunks: 2,
        ..config(2)
    })
    .unwrap();
    for i in 0..4u8 {
        sender.send(vec![i; 4]).unwrap();
    }
    assert!(matches!(
        sender.send(vec![9; 4]),
        Err(netser_transport::chunk::ChunkError::QueueFull { capacity: 2 })
    ));
    assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (2, 2));
}

/// Chunks over a lossy, duplicating, reordering link: every chunk arrives once, intact,
/// in order; the sender never sends a slice past its window; neither side ever holds
/// more than `K` chunks; no honest slice is refused.
#[test]
fn lossy_transfers_stay_in_the_window() {
    for (seed, k) in [(1u64, 2usize), (2, 5), (3, 16), (4, 64)] {
        let config = ChunkConfig {
            slice_size: 100,
            max_slices: 16,
            max_chunks_in_flight: k,
            max_queued_chunks: 1000,
            ..ChunkConfig::default()
        };
        let mut net: Simulator = Simulator::new(SimulatorConfig {
            latency: 0.1,
            jitter: 0.05,
            loss: 0.3,
            duplicate: 0.2,
            seed,
            ..SimulatorConfig::default()
        });
        let mut sender = ChunkSender::new(config.clone()).unwrap();
        let mut receiver = ChunkReceiver::new(config).unwrap();
        let chunks: Vec<Vec<u8>> = (0..200u32)
            .map(|i| (0..1 + (i * 37) % 1600).map(|b| (b ^ i) as u8).collect())
            .collect();
        for chunk in &chunks {
            sender.send(chunk.clone()).unwrap();
        }
        sender.set_rtt(Some(0.2));
        let mut got = Vec::new();
        let mut now = 0.0;
        while got.len() < chunks.len() {
            assert!(now < 600.0, "K = {k}: stuck at {} chunks", got.len());
            let oldest = sender.progress().map(|p| p.chunk_id);
            while let Some(p) = sender.poll_packet(now) {
                let ahead = chunk_of(p).wrapping_sub(oldest.unwrap());
                assert!(
                    usize::from(ahead) < k,
                    "K = {k}: slice {ahead} chunks ahead"
                );
                net.send(now, 0, 1, p);
            }
            while let Some(d) = net.receive(now) {
                if d.to == 1 {
                    receiver.receive_slice(now, &d.data).unwrap();
                } else {
                    sender.receive_ack(now, &d.data).unwrap();
                }
            }
            assert!(receiver.chunks_held() <= k);
            assert!(sender.chunks_in_flight() <= k);
            // The user takes chunks now and then, so completed chunks wait.
            if ((now * 10.0) as u64).is_multiple_of(3) {
                while let Some(chunk) = receiver.take_chunk() {
                    assert_eq!(usize::from(chunk.id), got.len());
                    assert_eq!(chunk.data, chunks[got.len()]);
                    got.push(chunk.id);
                }
            }
            while let Some(a) = receiver.poll_ack(now) {
                net.send(now, 1, 0, a);
            }
            now += 1.0 / 60.0;
        }
        assert_eq!(receiver.stats().rejected.total(), 0);
        assert_eq!(sender.stats().rejected.total(), 0);
        assert!(sender.stats().max_chunks_in_flight_seen as usize <= k);
        if k > 2 {
            assert!(sender.stats().max_chunks_in_flight_seen > 2, "K = {k}");
        }
    }
}

/// `Connection::memory_bound` follows the bytes in flight, not the blocks in flight
/// times the largest block: more blocks in flight add only their own state; more bytes
/// in flight add as much sent and as much received; the server preset stays small.
#[test]
fn memory_bound_follows_the_bytes_in_flight() {
    let bound = |k: usize, bytes: usize| {
        let mut config = ConnectionConfig::default();
        config.chunk.max_chunks_in_flight = k;
        config.chunk.max_bytes_in_flight = bytes;
        let connection: Connection<u32> = Connection::new(0.0, config).unwrap();
        connection.memory_bound()
    };
    let block = 256 * 1024;
    let default: Connection<u32> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    assert_eq!(default.memory_bound(), bound(32, block));
    // 32 blocks in flight cost about what one did: their state, not 31 more blocks.
    let one = bound(1, block);
    assert!(
        default.memory_bound() - one < 16 * 1024,
        "{}",
        default.memory_bound() - one
    );
    // 30 more blocks in flight within the same bytes: each block's state, its
    // bitfield and one more partial slice's state, no block.
    let per_block = (bound(32, block) - bound(2, block)) / 30;
    assert!(per_block > 32, "{per_block}");
    assert!(per_block < 1024, "{per_block}");
    // K = 1: the receiver counts two blocks (a forged slice may set a partial one
    // aside), as many as the oldest plus the bytes in flight with more.
    assert!(bound(2, block) - bound(1, block) < 1024);
    // 512 KiB more in flight: 512 KiB more on each side, and the slices' state.
    let more = bound(32, 3 * block) - bound(32, block);
    assert!(more > 4 * block, "{more}");
    assert!(more < 4 * block + 512 * 64, "{more}");
    // Never more than K blocks each way, however many bytes are allowed.
    assert_eq!(bound(2, usize::MAX), bound(2, 2 * block));
    assert_eq!(bound(4, usize::MAX), bound(4, 4 * block));

    let preset = ConnectionConfig::default().for_many_clients();
    assert_eq!(preset.chunk.max_chunks_in_flight, 2);
    assert_eq!(preset.chunk.max_bytes_in_flight, preset.max_block_size);
    let connection: Connection<u32> = Connection::new(0.0, preset).unwrap();
    assert!(connection.memory_bound() < 400 * 1024);
}

/// Over the connection: a peer's slices of blocks past the window are refused as
/// `ChunkBeyondWindow`, counted, and start no block.
#[test]
fn a_connection_refuses_slices_of_too_many_blocks() {
    let mut config = ConnectionConfig::default();
    config.chunk.max_chunks_in_flight = 4;
    let mut connection: Connection<u32> = Connection::new(0.0, config).unwrap();
    for chunk in 4..40u16 {
        assert!(matches!(
            connection.handle_datagram(0.0, &slice(chunk, 0, 1)),
            Err(ReceiveError::Block(
                ChunkPacketError::ChunkBeyondWindow { .. }
            ))
        ));
    }
    assert_eq!(
        connection
            .block_receiver_stats()
            .rejected
            .chunk_beyond_window,
        36
    );
    assert_eq!(connection.counters().block_datagram_drops, 36);
    assert_eq!(connection.block_receiver_stats().slices_received, 0);
    assert!(connection.block_receive_progress().is_none());
    // Within the window: received.
    connection.handle_datagram(0.0, &slice(3, 0, 1)).unwrap();
    assert_eq!(connection.block_receive_progress().unwrap().chunk_id, 3);
}

/// A forged slice count that started a chunk in the window does not wedge it: past 16
/// refused slices with the genuine count and no progress, the genuine count wins.
#[test]
fn a_forged_slice_count_in_the_window_is_outlived() {
    let mut receiver = ChunkReceiver::new(config(4)).unwrap();
    receiver.receive_slice(0.0, &slice(2, 0, 3)).unwrap(); // forged: 3 slices
    for _ in 0..16 {
        assert!(matches!(
            receiver.receive_slice(0.0, &slice(2, 1, 2)),
            Err(ChunkPacketError::SliceCountChanged { .. })
        ));
    }
    receiver.receive_slice(0.0, &slice(2, 1, 2)).unwrap();
    receiver.receive_slice(0.0, &slice(2, 0, 2)).unwrap();
    for chunk in [0u16, 1] {
        receiver.receive_slice(0.0, &slice(chunk, 0, 1)).unwrap();
    }
    let taken: Vec<(u16, usize)> = std::iter::from_fn(|| receiver.take_chunk())
        .map(|c| (c.id, c.data.len()))
        .collect();
    assert_eq!(taken, [(0, 1), (1, 1), (2, 5)]);
    assert_eq!(receiver.stats().returned_to_older_chunk, 1);
}

/// The receiver answers the last `K` chunks taken with full acks and no more: a slice of
/// an older chunk is refused. A forged chunk that took an id is outlived too: past 16
/// refused slices with another count, the genuine chunk gets a full ack (a chunk id
/// completes at most once), so its sender is never stuck.
#[test]
fn chunks_taken_are_remembered_k_deep() {
    let mut receiver = ChunkReceiver::new(config(2)).unwrap();
    for chunk in 0..3u16 {
        receiver.receive_slice(0.0, &slice(chunk, 0, 1)).unwrap();
        assert_eq!(receiver.take_chunk().unwrap().id, chunk);
    }
    while receiver.poll_ack(0.0).is_some() {}
    // Chunks 1 and 2 are remembered; chunk 0 is not.
    receiver.receive_slice(0.0, &slice(1, 0, 1)).unwrap();
    receiver.receive_slice(0.0, &slice(2, 0, 1)).unwrap();
    assert_eq!(receiver.stats().stale_slices, 2);
    assert!(matches!(
        receiver.receive_slice(0.0, &slice(0, 0, 1)),
        Err(ChunkPacketError::UnexpectedChunk {
            expected: 3,
            found: 0
        })
    ));
    while receiver.poll_ack(0.0).is_some() {}
    // Chunk 2 completed with one slice; slices saying it has two keep coming.
    for _ in 0..16 {
        assert!(matches!(
            receiver.receive_slice(0.0, &slice(2, 1, 2)),
            Err(ChunkPacketError::SliceCountChanged {
                expected: 1,
                found: 2
            })
        ));
    }
    assert_eq!(receiver.poll_ack(0.0), None);
    receiver.receive_slice(0.0, &slice(2, 1, 2)).unwrap();
    assert_eq!(receiver.stats().displaced_slices, 1);
    assert_eq!(receiver.poll_ack(0.0), Some(&[0xc2, 2, 0, 2, 0, 0b11][..]));
    assert_eq!(receiver.stats().rejected.total(), 17);
}

/// With one chunk in flight a cancel still works as the article's transfer has it, and
/// a cancelled chunk is not reported completed.
#[test]
fn one_chunk_in_flight_still_cancels() {
    let mut sender = ChunkSender::new(config(1)).unwrap();
    let first = sender.send(vec![1; 4]).unwrap();
    let second = sender.send(vec![2; 4]).unwrap();
    assert_eq!(sender.chunks_in_flight(), 1);
    assert_eq!(sender.cancel(), Some(first));
    assert_eq!(sender.last_completed(), None);
    assert_eq!(sender.progress().unwrap().chunk_id, second);
    sender.receive_ack(0.1, &[0xc2, 1, 0, 1, 0, 1]).unwrap();
    assert_eq!(sender.last_completed(), Some((second, 0.1)));
    // A late ack of the cancelled chunk: not the last one finished any more.
    assert!(sender.receive_ack(0.2, &[0xc2, 0, 0, 1, 0, 1]).is_err());
}
