//! Structured scripts: `#[derive(Arbitrary)]` sequences of send / deliver / drop /
//! duplicate / corrupt / truncate / forge / tick operations played against two real
//! endpoints (with fragmentation) and a real chunk sender and receiver. Every datagram
//! starts as the real writers' output; the script decides what the network does to it.
//!
//! Checked after every step: no panic, memory within the documented bound, every
//! datagram accounted for; and while the script has not tampered with any datagram,
//! every delivery is byte-exact and at most once, every ack is of a packet the peer
//! delivered, and every chunk completes byte-exact exactly once.

use std::collections::{HashMap, HashSet, VecDeque};

use arbitrary::Arbitrary;
use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use netser_transport::endpoint::{Config, Endpoint};

/// Most datagrams in flight per direction; the oldest is dropped beyond it.
const MAX_IN_FLIGHT: usize = 256;

/// What the network or an attacker does next.
#[derive(Arbitrary, Debug, Clone)]
pub enum EndpointOp {
    /// `side` sends a payload of `size` bytes (scaled up by 16 when `big`: fragments).
    Send {
        /// Which endpoint sends.
        side: bool,
        /// Payload size.
        size: u16,
        /// Times 16.
        big: bool,
    },
    /// Deliver the in-flight datagram at `index` (modulo the queue; any order).
    Deliver {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Deliver every datagram in flight, in order.
    Flush,
    /// Lose it.
    Drop {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Queue a copy.
    Duplicate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Flip one bit.
    Corrupt {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// Bit (modulo the length).
        bit: u32,
    },
    /// Cut it short.
    Truncate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// New length (modulo the length).
        len: u16,
    },
    /// Overwrite one byte of a real datagram (forging headers and fragment fields).
    Mutate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// Byte (modulo the length).
        offset: u16,
        /// New value.
        byte: u8,
    },
    /// Inject bytes of the attacker's choosing.
    Forge {
        /// Towards which side.
        side: bool,
        /// The datagram.
        bytes: Vec<u8>,
    },
    /// Time passes; both endpoints update.
    Tick {
        /// Milliseconds.
        ms: u16,
    },
    /// One side forgets everything (a reconnect).
    Reset {
        /// Which side.
        side: bool,
    },
}

/// A script against two endpoints.
#[derive(Arbitrary, Debug, Clone)]
pub struct EndpointScript {
    /// Small windows and reassembly limits, so they are reached quickly.
    pub small: bool,
    /// The operations.
    pub ops: Vec<EndpointOp>,
}

fn endpoint_config(small: bool) -> Config {
    if small {
        Config {
            max_packet_size: 8 * 256,
            fragment_above: 256,
            fragment_size: 256,
            max_fragments: 8,
            sent_packets_buffer_size: 32,
            received_packets_buffer_size: 32,
            fragment_reassembly_buffer_size: 4,
            max_reassembly_bytes: 4 * 256 * 2,
            rtt_history_size: 8,
            ..Config::default()
        }
    } else {
        Config::default()
    }
}

/// A payload its receiver can check: the sender, its number and its size, then a
/// pattern of all three.
pub fn pattern(sender: u8, id: u32, size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| {
            let x = (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(id.wrapping_mul(40_503))
                .wrapping_add(u32::from(sender) << 7);
            (x >> 13) as u8
        })
        .collect()
}

fn pick(queue: &VecDeque<Vec<u8>>, index: u8) -> Option<usize> {
    (!queue.is_empty()).then(|| usize::from(index) % queue.len())
}

/// Plays an endpoint script; panics when an invariant breaks.
pub fn run_endpoint_script(script: &EndpointScript) {
    let config = endpoint_config(script.small);
    let bound = config.memory_bound();
    let mut sides = [
        Endpoint::new(0.0, config.clone()).unwrap(),
        Endpoint::new(0.0, config.clone()).unwrap(),
    ];
    // Datagrams from side i, in flight to the other.
    let mut wire: [VecDeque<Vec<u8>>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut sent: [HashMap<u16, Vec<u8>>; 2] = [HashMap::new(), HashMap::new()];
    let mut delivered: [HashSet<u16>; 2] = [HashSet::new(), HashSet::new()];
    let mut clean = true;
    let mut now = 0.0;
    let mut next_id = 0u32;
    let max = config.max_packet_size;

    let deliver = |to: usize,
                   datagram: &[u8],
                   now: f64,
                   sides: &mut [Endpoint; 2],
                   sent: &[HashMap<u16, Vec<u8>>; 2],
                   delivered: &mut [HashSet<u16>; 2],
                   clean: bool| {
        if let Ok(Some(packet)) = sides[to].handle_datagram(now, datagram) {
            let from = 1 - to;
            if clean {
                let expected = sent[from].get(&packet.sequence);
                assert_eq!(
                    Some(packet.payload),
                    expected.map(Vec::as_slice),
                    "side {to} delivered sequence {} with other bytes",
                    packet.sequence
                );
                assert!(
                    delivered[to].insert(packet.sequence),
                    "side {to} delivered sequence {} twice",
                    packet.sequence
                );
            }
        }
    };

    for op in &script.ops {
        match op {
            EndpointOp::Send { side, size, big } => {
                let s = usize::from(*side);
                let size = usize::from(*size) * if *big { 16 } else { 1 } % (max + 1);
                let payload = pattern(s as u8, next_id, size);
                next_id += 1;
                if let Ok(sequence) = sides[s].send_packet(now, &payload) {
                    if sent[s].insert(sequence, payload).is_some() {
                        // A sequence reused (wrapped or after a reset): no longer exact.
                        clean = false;
                    }
                }
                while let Some(t) = sides[s].poll_transmit() {
                    if wire[s].len() == MAX_IN_FLIGHT {
                        wire[s].pop_front();
                    }
                    wire[s].push_back(t.data.to_vec());
                }
            }
            EndpointOp::Deliver { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    let d = wire[s].remove(i).unwrap();
                    deliver(1 - s, &d, now, &mut sides, &sent, &mut delivered, clean);
                }
            }
            EndpointOp::Flush => {
                for (s, queue) in wire.iter_mut().enumerate() {
                    while let Some(d) = queue.pop_front() {
                        deliver(1 - s, &d, now, &mut sides, &sent, &mut delivered, clean);
                    }
                }
            }
            EndpointOp::Drop { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    wire[s].remove(i);
                }
            }
            EndpointOp::Duplicate { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    if wire[s].len() < MAX_IN_FLIGHT {
                        let copy = wire[s][i].clone();
                        wire[s].push_back(copy);
                    }
                }
            }
            EndpointOp::Corrupt { side, index, bit } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    let d = &mut wire[s][i];
                    if !d.is_empty() {
                        let bit = *bit as usize % (d.len() * 8);
                        d[bit / 8] ^= 1 << (bit % 8);
                        clean = false;
                    }
                }
            }
            EndpointOp::Truncate { side, index, len } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    let d = &mut wire[s][i];
                    if !d.is_empty() {
                        d.truncate(usize::from(*len) % d.len());
                        clean = false;
                    }
                }
            }
            EndpointOp::Mutate {
                side,
                index,
                offset,
                byte,
            } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&wire[s], *index) {
                    let d = &mut wire[s][i];
                    if !d.is_empty() {
                        let at = usize::from(*offset) % d.len();
                        d[at] = *byte;
                        clean = false;
                    }
                }
            }
            EndpointOp::Forge { side, bytes } => {
                let to = usize::from(*side);
                clean = false;
                deliver(to, bytes, now, &mut sides, &sent, &mut delivered, clean);
            }
            EndpointOp::Tick { ms } => {
                now += f64::from(*ms) / 1000.0;
                for side in &mut sides {
                    side.handle_timeout(now);
                }
            }
            EndpointOp::Reset { side } => {
                let s = usize::from(*side);
                sides[s].reset();
                sent[s].clear();
                delivered[s].clear();
                clean = false;
            }
        }
        for (s, side) in sides.iter_mut().enumerate() {
            assert!(
                side.memory_bytes() <= bound,
                "side {s}: {} bytes, over the bound {bound}",
                side.memory_bytes()
            );
            let c = side.counters();
            assert_eq!(
                c.datagrams_received,
                c.packets_received - c.packets_reassembled + c.fragments_received + c.drops.total(),
                "side {s}: a datagram not accounted for: {c:?}"
            );
            if clean {
                for &acked in side.acks() {
                    assert!(
                        delivered[1 - s].contains(&acked),
                        "side {s}: sequence {acked} acked but never delivered"
                    );
                }
            }
            side.clear_acks();
        }
    }
}

/// What happens next to a chunk transfer.
#[derive(Arbitrary, Debug, Clone)]
pub enum ChunkOp {
    /// Queue a chunk of `size` bytes (modulo the largest).
    Send {
        /// Bytes.
        size: u16,
    },
    /// Time passes: the sender sends what its budget allows, the receiver acks.
    Tick {
        /// Milliseconds.
        ms: u16,
    },
    /// Deliver a slice (`to_receiver`) or an ack.
    Deliver {
        /// Slice or ack.
        to_receiver: bool,
        /// Queue position.
        index: u8,
    },
    /// Deliver everything in flight both ways, in order.
    Flush,
    /// Lose one.
    Drop {
        /// Slice or ack.
        to_receiver: bool,
        /// Queue position.
        index: u8,
    },
    /// Queue a copy.
    Duplicate {
        /// Slice or ack.
        to_receiver: bool,
        /// Queue position.
        index: u8,
    },
    /// Overwrite one byte of a real packet.
    Mutate {
        /// Slice or ack.
        to_receiver: bool,
        /// Queue position.
        index: u8,
        /// Byte (modulo the length).
        offset: u16,
        /// New value.
        byte: u8,
    },
    /// Cut one short.
    Truncate {
        /// Slice or ack.
        to_receiver: bool,
        /// Queue position.
        index: u8,
        /// New length (modulo the length).
        len: u16,
    },
    /// Inject bytes.
    Forge {
        /// Slice or ack.
        to_receiver: bool,
        /// The packet.
        bytes: Vec<u8>,
    },
    /// The user takes a completed chunk.
    Take,
    /// The sender cancels the chunk in flight.
    Cancel,
}

/// A script against a chunk sender and receiver.
#[derive(Arbitrary, Debug, Clone)]
pub struct ChunkScript {
    /// Slice size 1..=64 (`slice % 64 + 1`).
    pub slice: u8,
    /// Most slices 1..=32.
    pub max_slices: u8,
    /// Send every slice once when a chunk starts.
    pub initial_burst: bool,
    /// Chunks in flight 1..=8 (`max_chunks_in_flight % 8 + 1`).
    pub max_chunks_in_flight: u8,
    /// Bytes in flight 1..=4 largest chunks (`max_bytes_in_flight % (4 * largest) + 1`):
    /// below one chunk, up to several.
    pub max_bytes_in_flight: u16,
    /// The operations.
    pub ops: Vec<ChunkOp>,
}

/// Plays a chunk script; panics when an invariant breaks.
pub fn run_chunk_script(script: &ChunkScript) {
    let config = ChunkConfig {
        slice_size: usize::from(script.slice % 64) + 1,
        max_slices: usize::from(script.max_slices % 32) + 1,
        initial_burst: script.initial_burst,
        bandwidth: 50_000.0,
        max_chunks_in_flight: usize::from(script.max_chunks_in_flight % 8) + 1,
        ..ChunkConfig::default()
    };
    let max = config.slice_size * config.max_slices;
    let config = ChunkConfig {
        max_bytes_in_flight: usize::from(script.max_bytes_in_flight) % (4 * max) + 1,
        ..config
    };
    let (k, bytes) = (config.max_chunks_in_flight, config.max_bytes_in_flight);
    // The receiver holds the bytes in flight and the oldest chunk (always accepted);
    // with one chunk in flight, the chunk and the one a forged slice moved it from.
    let max_held = if k == 1 { 2 * max } else { bytes + max };
    let mut sender = ChunkSender::new(config.clone()).unwrap();
    let mut receiver = ChunkReceiver::new(config).unwrap();
    // [0]: slices towards the receiver, [1]: acks towards the sender.
    let mut wire: [VecDeque<Vec<u8>>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut sent: HashMap<u16, Vec<u8>> = HashMap::new();
    let mut completed: HashSet<u16> = HashSet::new();
    let mut clean = true;
    let mut now = 0.0;
    let mut next = 0u32;

    for op in &script.ops {
        let w = |to_receiver: &bool| usize::from(!*to_receiver);
        match op {
            ChunkOp::Send { size } => {
                let size = usize::from(*size) % max + 1;
                let data = pattern(9, next, size);
                next += 1;
                if let Ok(id) = sender.send(data.clone()) {
                    if sent.insert(id, data).is_some() {
                        clean = false;
                    }
                }
            }
            ChunkOp::Tick { ms } => {
                now += f64::from(*ms) / 1000.0;
                while let Some(p) = sender.poll_packet(now) {
                    if wire[0].len() == MAX_IN_FLIGHT {
                        wire[0].pop_front();
                    }
                    wire[0].push_back(p.to_vec());
                }
                if let Some(a) = receiver.poll_ack(now) {
                    if wire[1].len() == MAX_IN_FLIGHT {
                        wire[1].pop_front();
                    }
                    wire[1].push_back(a.to_vec());
                }
            }
            ChunkOp::Deliver { to_receiver, index } => {
                let q = w(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = wire[q].remove(i).unwrap();
                    if q == 0 {
                        let _ = receiver.receive_slice(now, &p);
                    } else {
                        let _ = sender.receive_ack(now, &p);
                    }
                }
            }
            ChunkOp::Flush => {
                while let Some(p) = wire[0].pop_front() {
                    let _ = receiver.receive_slice(now, &p);
                }
                while let Some(p) = wire[1].pop_front() {
                    let _ = sender.receive_ack(now, &p);
                }
            }
            ChunkOp::Drop { to_receiver, index } => {
                let q = w(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    wire[q].remove(i);
                }
            }
            ChunkOp::Duplicate { to_receiver, index } => {
                let q = w(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    if wire[q].len() < MAX_IN_FLIGHT {
                        let copy = wire[q][i].clone();
                        wire[q].push_back(copy);
                    }
                }
            }
            ChunkOp::Mutate {
                to_receiver,
                index,
                offset,
                byte,
            } => {
                let q = w(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = &mut wire[q][i];
                    if !p.is_empty() {
                        let at = usize::from(*offset) % p.len();
                        if p[at] != *byte {
                            p[at] = *byte;
                            clean = false;
                        }
                    }
                }
            }
            ChunkOp::Truncate {
                to_receiver,
                index,
                len,
            } => {
                let q = w(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = &mut wire[q][i];
                    if !p.is_empty() {
                        p.truncate(usize::from(*len) % p.len());
                        clean = false;
                    }
                }
            }
            ChunkOp::Forge { to_receiver, bytes } => {
                clean = false;
                if *to_receiver {
                    let _ = receiver.receive_slice(now, bytes);
                } else {
                    let _ = sender.receive_ack(now, bytes);
                }
            }
            ChunkOp::Take => {
                if let Some(chunk) = receiver.take_chunk() {
                    if clean {
                        assert_eq!(
                            Some(&chunk.data),
                            sent.get(&chunk.id),
                            "chunk {} rebuilt with other bytes",
                            chunk.id
                        );
                        assert!(completed.insert(chunk.id), "chunk {} twice", chunk.id);
                    }
                }
            }
            ChunkOp::Cancel => {
                let _ = sender.cancel();
            }
        }
        let s = receiver.stats();
        assert!(s.chunks_completed <= s.slices_received);
        assert!(sender.queued_chunks() <= ChunkConfig::default().max_queued_chunks);
        assert!(receiver.chunks_held() <= k.max(2));
        assert!(sender.chunks_in_flight() <= k);
        assert!(sender.bytes_in_flight() <= bytes.max(max));
        if sender.chunks_in_flight() > 1 {
            assert!(sender.bytes_in_flight() <= bytes);
        }
        assert!(receiver.bytes_held() <= max_held);
    }
}
