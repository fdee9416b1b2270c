//! Chunk transfers end to end over the seeded simulator: sizes at the edges, loss from 0%
//! to 50% with duplicates and reordering, chunk ids across the 16-bit wrap, the queue,
//! cancel, and the initial burst. Every chunk must arrive byte for byte.

use netser_transport::chunk::{ChunkConfig, ChunkError, ChunkReceiver, ChunkSender, ReceivedChunk};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const SERVER: u32 = 1;
const CLIENT: u32 = 2;

/// A server sending chunks to a client through the simulator, time jumping from event to
/// event (a delivery, a send the budget allows, an ack owed).
struct Transfer {
    net: Simulator,
    sender: ChunkSender,
    receiver: ChunkReceiver,
    now: f64,
    received: Vec<ReceivedChunk>,
    /// Last receive progress seen (chunk id, bytes), to check it never goes back.
    progress: (u16, usize),
}

impl Transfer {
    fn new(net: SimulatorConfig, chunk: ChunkConfig) -> Self {
        Self {
            net: Simulator::new(net),
            sender: ChunkSender::new(chunk.clone()).unwrap(),
            receiver: ChunkReceiver::new(chunk).unwrap(),
            now: 0.0,
            received: Vec::new(),
            progress: (u16::MAX, 0),
        }
    }

    /// One instant: deliveries, then slices, then acks, then the user drains.
    fn step(&mut self) {
        let now = self.now;
        while let Some(d) = self.net.receive(now) {
            if d.to == CLIENT {
                let _ = self.receiver.receive_slice(now, &d.data);
            } else {
                let _ = self.sender.receive_ack(now, &d.data);
            }
        }
        while let Some(p) = self.sender.poll_packet(now) {
            self.net.send(now, SERVER, CLIENT, p);
        }
        while let Some(a) = self.receiver.poll_ack(now) {
            self.net.send(now, CLIENT, SERVER, a);
        }
        if let Some(p) = self.receiver.progress() {
            let (id, bytes) = self.progress;
            assert!(
                p.chunk_id != id || p.bytes_received >= bytes,
                "progress went back"
            );
            self.progress = (p.chunk_id, p.bytes_received);
        }
        if let Some(chunk) = self.receiver.take_chunk() {
            self.received.push(chunk);
        }
    }

    /// Runs until `done` or until `limit` simulated seconds; true if done.
    fn run_until(&mut self, limit: f64, mut done: impl FnMut(&Self) -> bool) -> bool {
        for _ in 0..10_000_000 {
            self.step();
            if done(self) {
                return true;
            }
            let next = [
                self.net.next_delivery_time(),
                self.sender.next_send_time(),
                self.receiver.next_ack_time(),
            ]
            .into_iter()
            .flatten()
            .min_by(f64::total_cmp);
            match next {
                Some(t) if t <= limit => self.now = t.max(self.now),
                _ => return false,
            }
        }
        false
    }

    /// Sends every chunk (queued at once) and runs until all arrived and were acked.
    fn deliver_all(&mut self, chunks: &[Vec<u8>], limit: f64) {
        let mut ids = Vec::new();
        for chunk in chunks {
            ids.push(self.sender.send(chunk.clone()).unwrap());
        }
        let wanted = self.received.len() + chunks.len();
        let finished = self.run_until(limit, |t| t.received.len() >= wanted && t.sender.is_idle());
        assert!(
            finished,
            "not finished at {:.2}s: {} of {} chunks, sender {:?}, receiver {:?}, net {:?}",
            self.now,
            self.received.len(),
            wanted,
            self.sender.stats(),
            self.receiver.stats(),
            self.net.stats()
        );
        let got = &self.received[self.received.len() - chunks.len()..];
        for ((chunk, id), received) in chunks.iter().zip(&ids).zip(got) {
            assert_eq!(received.id, *id);
            assert!(received.data == *chunk, "chunk {id} differs");
        }
    }
}

/// Bytes that differ from slice to slice and chunk to chunk, so a misplaced slice shows.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn lossy(loss: f64, seed: u64) -> SimulatorConfig {
    SimulatorConfig {
        latency: 0.05,
        jitter: 0.01,
        loss,
        duplicate: 0.05,
        reorder: 0.05,
        seed,
        ..SimulatorConfig::default()
    }
}

#[test]
fn sizes_at_the_edges() {
    let config = ChunkConfig::default();
    let max = config.max_chunk_size();
    for (i, size) in [1, 1023, 1024, 1025, 2048, max - 1, max]
        .into_iter()
        .enumerate()
    {
        let mut t = Transfer::new(lossy(0.1, i as u64), config.clone());
        t.deliver_all(&[pattern(size, i as u32)], 60.0);
        let slices = size.div_ceil(1024) as u64;
        assert_eq!(t.receiver.stats().slices_received, slices, "size {size}");
        assert_eq!(t.sender.stats().chunks_completed, 1);
    }
}

#[test]
fn one_byte_over_the_maximum_is_an_error_at_send() {
    let config = ChunkConfig::default();
    let mut sender = ChunkSender::new(config.clone()).unwrap();
    assert_eq!(
        sender.send(vec![0u8; config.max_chunk_size() + 1]),
        Err(ChunkError::ChunkTooLarge {
            size: 256 * 1024 + 1,
            max: 256 * 1024
        })
    );
    assert!(sender.is_idle());
    // Configurable: 100-byte slices, at most 3.
    let small = ChunkConfig {
        slice_size: 100,
        max_slices: 3,
        ..ChunkConfig::default()
    };
    let mut sender = ChunkSender::new(small.clone()).unwrap();
    assert!(sender.send(vec![0u8; 301]).is_err());
    let mut t = Transfer::new(lossy(0.2, 5), small);
    t.deliver_all(&[pattern(300, 1), pattern(201, 2), pattern(1, 3)], 60.0);
}

fn transfer_at(loss: f64, seed: u64) -> Transfer {
    let mut t = Transfer::new(lossy(loss, seed), ChunkConfig::default());
    t.deliver_all(&[pattern(256 * 1024, seed as u32)], 600.0);
    let s = t.sender.stats();
    assert_eq!(s.chunks_completed, 1);
    assert_eq!(s.rejected.total(), 0, "{s:?}");
    assert_eq!(t.receiver.stats().rejected.total(), 0);
    t
}

#[test]
fn byte_exact_without_loss() {
    let t = transfer_at(0.0, 1);
    // With no loss and a 100 ms resend delay over 100 ms RTT, few slices go twice.
    assert!(
        t.sender.stats().slices_resent < 64,
        "{:?}",
        t.sender.stats()
    );
}

#[test]
fn byte_exact_at_1_percent_loss() {
    transfer_at(0.01, 2);
}

#[test]
fn byte_exact_at_10_percent_loss() {
    let t = transfer_at(0.10, 3);
    assert!(t.net.stats().lost > 20);
}

#[test]
fn byte_exact_at_50_percent_loss() {
    let t = transfer_at(0.50, 4);
    assert!(t.net.stats().lost > 200);
    assert!(t.receiver.stats().duplicate_slices > 0);
}

#[test]
fn many_seeds_at_high_loss() {
    // Short by default; NETSER_SOAK_SEEDS=1000 for a long run.
    let seeds: u64 = std::env::var("NETSER_SOAK_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    for seed in 0..seeds {
        let mut t = Transfer::new(
            SimulatorConfig {
                latency: 0.2,
                jitter: 0.15,
                loss: 0.3 + 0.05 * (seed % 8) as f64,
                duplicate: 0.2,
                reorder: 0.2,
                seed: 1000 + seed,
                ..SimulatorConfig::default()
            },
            ChunkConfig {
                slice_size: 200,
                max_slices: 64,
                ..ChunkConfig::default()
            },
        );
        let sizes = [1 + (seed as usize * 977) % 12_800, 200, 12_800];
        let chunks: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| pattern(n, (seed * 3) as u32 + i as u32))
            .collect();
        t.deliver_all(&chunks, 3600.0);
    }
}

#[test]
fn chunk_ids_across_the_wrap() {
    let config = ChunkConfig {
        first_chunk_id: 65533,
        slice_size: 256,
        max_slices: 16,
        ..ChunkConfig::default()
    };
    let mut t = Transfer::new(lossy(0.2, 9), config);
    let chunks: Vec<Vec<u8>> = (0..6).map(|i| pattern(1000 + 500 * i, i as u32)).collect();
    // One at a time, then the rest queued together.
    t.deliver_all(&chunks[..1], 60.0);
    t.deliver_all(&chunks[1..], 120.0);
    let ids: Vec<u16> = t.received.iter().map(|c| c.id).collect();
    assert_eq!(ids, [65533, 65534, 65535, 0, 1, 2]);
    // Stale acks for finished chunks came back across the wrap and were not refused.
    assert_eq!(t.sender.stats().rejected.total(), 0);
}

#[test]
fn cancel_mid_transfer_then_the_next_chunk_arrives() {
    let mut t = Transfer::new(lossy(0.05, 11), ChunkConfig::default());
    let first = t.sender.send(pattern(200_000, 1)).unwrap();
    let reached = t.run_until(60.0, |t| {
        t.receiver
            .progress()
            .is_some_and(|p| p.slices_received >= 50)
    });
    assert!(reached);
    assert_eq!(t.sender.cancel(), Some(first));
    t.deliver_all(&[pattern(30_000, 2)], 60.0);
    assert_eq!(t.received.len(), 1);
    assert_eq!(t.received[0].id, first.wrapping_add(1));
    assert_eq!(t.receiver.stats().abandoned_chunks, 1);
    assert_eq!(t.sender.stats().chunks_cancelled, 1);
}

#[test]
fn initial_burst_over_a_fast_link() {
    let config = ChunkConfig {
        initial_burst: true,
        ..ChunkConfig::default()
    };
    let mut t = Transfer::new(lossy(0.01, 12), config);
    t.deliver_all(&[pattern(256 * 1024, 12)], 60.0);
    assert_eq!(t.sender.stats().burst_packets, 256);
    // The burst got nearly everything across in one trip: the chunk completes well
    // before the 2.1 s the budget alone would take.
    let (_, at) = t.sender.last_completed().unwrap();
    assert!(at < 1.0, "completed at {at}");
}

#[test]
fn truncated_packets_are_refused_and_the_transfer_still_completes() {
    let net = SimulatorConfig {
        truncate: 0.1,
        ..lossy(0.05, 13)
    };
    let mut t = Transfer::new(net, ChunkConfig::default());
    t.deliver_all(&[pattern(100_000, 13)], 60.0);
    let rejected = t.receiver.stats().rejected.total() + t.sender.stats().rejected.total();
    assert!(rejected > 0);
    // Every truncated copy that reached an end was refused (none slipped in as data).
    assert!(rejected <= t.net.stats().truncated);
}

#[test]
fn rtt_shortens_the_resend_delay() {
    let run = |rtt: Option<f64>| {
        let mut t = Transfer::new(
            SimulatorConfig {
                latency: 0.01,
                loss: 0.2,
                seed: 21,
                ..SimulatorConfig::default()
            },
            ChunkConfig {
                bandwidth: 10_000_000.0,
                ..ChunkConfig::default()
            },
        );
        t.sender.set_rtt(rtt);
        t.deliver_all(&[pattern(64 * 1024, 21)], 60.0);
        t.sender.last_completed().unwrap().1
    };
    // At 20 ms RTT, waiting 25 ms instead of 100 ms before each resend finishes sooner.
    let with_rtt = run(Some(0.02));
    let without = run(None);
    assert!(with_rtt < without, "{with_rtt} vs {without}");
}

#[test]
fn same_seed_same_transfer() {
    let run = |seed: u64| {
        let mut t = Transfer::new(lossy(0.2, seed), ChunkConfig::default());
        t.deliver_all(&[pattern(100_000, 7)], 60.0);
        (
            t.sender.last_completed(),
            format!("{:?}", t.sender.stats()),
            format!("{:?}", t.receiver.stats()),
            format!("{:?}", t.net.stats()),
        )
    };
    assert_eq!(run(31), run(31));
    assert_ne!(run(31), run(32));
}
