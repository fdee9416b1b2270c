//! One soak harness for every layer (the articles' "soak under terrible conditions, loop
//! the tests"): the endpoint, the chunk sender and receiver, and the connection (its
//! channels and blocks), each pair driven both ways through the seeded simulator.
//!
//! The network cycles through phases: calm, bad (25% loss, duplicates, reordering,
//! 1 s latency with jitter), terrible (50% loss, 10 s latency with 2 s of jitter) and
//! bursts of 99% loss. On top of the simulator the harness duplicates some datagrams a
//! second late, flips single bits, truncates, injects random datagrams, and reconnects
//! every layer once mid-run (new endpoints / senders / connections, datagrams in flight
//! discarded). Chunk ids start near 65535 and endpoint sequences run past it, so both
//! wrap. A final calm phase lets everything reliable arrive.
//!
//! Ends with exact counters, checked:
//! - endpoint: every delivered payload whose self-check passes is byte-exact and
//!   delivered at most once (unless a forged header was accepted before: the endpoint
//!   authenticates nothing, so a forged sequence moves its window; counted apart);
//!   self-check failures come only from tampered datagrams;
//! - chunks: every chunk rebuilt byte-exact (or, if a tampered slice got in, failing its
//!   self-check), exactly one completion each; every chunk sent completes, unless a
//!   tampered ack the sender accepted marked it received (acks are not authenticated;
//!   counted, and never more than such acks);
//! - connection (under an integrity tag, as netcode's AEAD gives it): reliable messages
//!   delivered are exactly ids 0..N per channel, in order, each equal to the message
//!   derived from its id; unreliable ones byte-exact and at most once;
//! - datagrams, per layer and direction: sent + injected + late copies + simulator
//!   duplicates = delivered + lost + dropped in flight at a reconnect; and delivered =
//!   accepted + refused by the receiver.
//!
//! It prints its seed; `NETSER_SOAK_SEED=<seed>` replays one. By default (CI) a few
//! thousand frames per layer from one fixed seed, so CI is deterministic; loop mode
//! starts from a seed taken from the clock. Long runs: `NETSER_SOAK_FRAMES=<frames per run>`,
//! `NETSER_SOAK_SECONDS=<wall-clock budget>`, `NETSER_SOAK_LOOP=1` to repeat with new
//! seeds until the budget is spent, e.g.
//! `NETSER_SOAK_LOOP=1 NETSER_SOAK_SECONDS=3600 cargo test --release -p netser-transport --test soak -- --nocapture`.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use netser_transport::connection::{Connection, ConnectionConfig, SendError};
use netser_transport::endpoint::{Config, Endpoint};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const FRAME: f64 = 1.0 / 60.0;

/// A small seeded generator (xorshift64*), for the harness's own choices.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }
}

/// 64-bit FNV-1a: the self-check of payloads and the connection's integrity tag.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// `[id: 4][pattern][fnv of both: 8]`, `size` bytes in all (at least 12).
fn payload(stream: u64, id: u32, size: usize) -> Vec<u8> {
    let size = size.max(12);
    let mut out = Vec::from(id.to_le_bytes());
    let mut x = (u64::from(id) << 20) ^ stream ^ 0x9e37_79b9_7f4a_7c15;
    while out.len() < size - 8 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push((x >> 56) as u8);
    }
    let tag = fnv(&out);
    out.extend_from_slice(&tag.to_le_bytes());
    out
}

/// The id of a payload whose self-check passes.
fn check(bytes: &[u8]) -> Option<u32> {
    if bytes.len() < 12 {
        return None;
    }
    let (body, tag) = bytes.split_at(bytes.len() - 8);
    (fnv(body).to_le_bytes() == tag).then(|| u32::from_le_bytes(body[..4].try_into().unwrap()))
}

/// The network phase at simulated time `t` (a 60-second cycle), and its name.
fn phase(t: f64, seed: u64, final_calm: bool) -> (&'static str, SimulatorConfig) {
    let calm = SimulatorConfig {
        latency: 0.05,
        jitter: 0.01,
        loss: 0.01,
        seed,
        ..Default::default()
    };
    if final_calm {
        return ("calm", calm);
    }
    match (t % 60.0) as u32 {
        0..=14 => ("calm", calm),
        15..=34 => (
            "bad",
            SimulatorConfig {
                latency: 1.0,
                jitter: 0.3,
                loss: 0.25,
                duplicate: 0.2,
                reorder: 0.2,
                seed,
                ..Default::default()
            },
        ),
        35..=49 => (
            "terrible",
            SimulatorConfig {
                latency: 10.0,
                jitter: 2.0,
                loss: 0.5,
                duplicate: 0.1,
                reorder: 0.1,
                seed,
                ..Default::default()
            },
        ),
        _ => (
            "burst 99%",
            SimulatorConfig {
                latency: 0.1,
                loss: 0.99,
                seed,
                ..Default::default()
            },
        ),
    }
}

/// What every layer's pair does; side 0 and side 1 talk both ways.
trait Layer {
    fn name(&self) -> &'static str;
    /// Sends this frame's traffic and returns the datagrams side `side` puts on the wire.
    fn frame(&mut self, now: f64, side: usize, rng: &mut Rng, out: &mut Vec<Vec<u8>>);
    /// A datagram arrives at `side`; `tampered` when the harness changed it. Returns
    /// whether the receiver accepted it.
    fn receive(&mut self, now: f64, side: usize, datagram: &[u8], tampered: bool) -> bool;
    /// Both sides start over (a reconnect).
    fn reconnect(&mut self, now: f64);
    /// Stops producing new traffic (the final phase drains what is owed).
    fn stop_sending(&mut self);
    /// Everything owed has arrived.
    fn settled(&self) -> bool;
    /// Checks the end counters (panics on a violation) and returns them, printable.
    fn finish(&mut self) -> String;
    /// What is still owed, for a failure message.
    fn owed(&self) -> String {
        String::new()
    }
}

/// Datagram accounting of one direction.
#[derive(Debug, Default, Clone, Copy)]
struct Wire {
    sent: u64,
    injected: u64,
    late_copies: u64,
    tampered: u64,
    delivered: u64,
    accepted: u64,
    refused: u64,
    discarded_at_reconnect: u64,
}

/// Runs one layer for `frames` frames plus the final calm phase.
// Sides and channels index several parallel arrays: a range reads best.
#[allow(clippy::needless_range_loop)]
fn run(layer: &mut dyn Layer, seed: u64, frames: u64) -> String {
    let mut rng = Rng(seed | 1);
    let mut now = 0.0;
    let mut net: Simulator<usize> = Simulator::new(phase(0.0, seed, false).1);
    let mut late: Vec<(f64, usize, Vec<u8>)> = Vec::new();
    // The injected datagrams, so that the layer is told which arrivals are forgeries.
    let mut injected: HashSet<Vec<u8>> = HashSet::new();
    let mut wire = [Wire::default(); 2];
    let mut out = Vec::new();
    let mut current = "";
    // Late enough that the endpoint's sequences wrap in the first session.
    let reconnect_at = frames * 7 / 8;
    let mut frame = 0u64;
    let mut final_calm = false;
    let max_frames = frames + 60 * 600;
    loop {
        if frame == frames {
            final_calm = true;
            layer.stop_sending();
        }
        if final_calm && layer.settled() && net.in_flight() == 0 && late.is_empty() {
            break;
        }
        assert!(
            frame < max_frames,
            "{} seed {seed}: not settled 10 minutes of calm after the run: {}",
            layer.name(),
            layer.owed()
        );
        let (name, config) = phase(now, seed.wrapping_add(frame), final_calm);
        if name != current {
            current = name;
            net.set_config(config);
        }
        if frame == reconnect_at && frame > 0 {
            // A new session: what was in flight belongs to the old one.
            while net.in_flight() > 0 {
                let t = net.next_delivery_time().unwrap();
                let d = net.receive(t).unwrap();
                wire[1 - d.to].discarded_at_reconnect += 1;
            }
            for (_, to, _) in late.drain(..) {
                wire[1 - to].discarded_at_reconnect += 1;
            }
            layer.reconnect(now);
        }
        for side in 0..2 {
            out.clear();
            layer.frame(now, side, &mut rng, &mut out);
            for d in &out {
                wire[side].sent += 1;
                net.send(now, side, 1 - side, d);
                if !final_calm && rng.chance(0.01) {
                    // A copy a second late.
                    wire[side].late_copies += 1;
                    late.push((
                        now + 1.0 + rng.below(1000) as f64 / 1000.0,
                        1 - side,
                        d.clone(),
                    ));
                }
            }
            if !final_calm && rng.chance(0.05) {
                let len = rng.below(1300) as usize;
                let mut junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                if let (Some(first), Some(real)) = (junk.first_mut(), out.first()) {
                    // Half look like the real thing: its first byte (the packet type).
                    if rng.chance(0.5) {
                        *first = real[0];
                    }
                }
                wire[side].injected += 1;
                wire[side].tampered += 1;
                net.send(now, side, 1 - side, &junk);
                injected.insert(junk);
            }
        }
        let mut due: Vec<(usize, Vec<u8>)> = Vec::new();
        while let Some(d) = net.receive(now) {
            due.push((d.to, d.data));
        }
        late.retain(|(t, to, d)| {
            if *t <= now {
                due.push((*to, d.clone()));
                false
            } else {
                true
            }
        });
        for (to, mut d) in due {
            let from = 1 - to;
            wire[from].delivered += 1;
            let mut tampered = false;
            if !final_calm && !d.is_empty() && rng.chance(0.01) {
                let bit = rng.below(d.len() as u64 * 8) as usize;
                d[bit / 8] ^= 1 << (bit % 8);
                tampered = true;
            } else if !final_calm && !d.is_empty() && rng.chance(0.005) {
                d.truncate(rng.below(d.len() as u64) as usize);
                tampered = true;
            }
            if tampered {
                wire[from].tampered += 1;
            }
            // An injected datagram (or the simulator's copy of one) is a forgery too.
            tampered |= injected.contains(&d);
            if layer.receive(now, to, &d, tampered) {
                wire[from].accepted += 1;
            } else {
                wire[from].refused += 1;
            }
        }
        now += FRAME;
        frame += 1;
    }
    let s = net.stats().clone();
    let mut report = format!(
        "{} seed {seed}: {frame} frames ({now:.0} s simulated)\n",
        layer.name()
    );
    for (side, w) in wire.iter().enumerate() {
        report += &format!("  side {side} -> {}: {w:?}\n", 1 - side);
        assert_eq!(
            w.delivered,
            w.accepted + w.refused,
            "{}: delivered = accepted + refused",
            layer.name()
        );
    }
    let into_net: u64 = wire.iter().map(|w| w.sent + w.injected).sum();
    let late_copies: u64 = wire.iter().map(|w| w.late_copies).sum();
    let delivered: u64 = wire.iter().map(|w| w.delivered).sum();
    let discarded: u64 = wire.iter().map(|w| w.discarded_at_reconnect).sum();
    assert_eq!(s.sent, into_net);
    // Every datagram is accounted for: sent (+ copies) = delivered + lost + dropped.
    assert_eq!(
        into_net + late_copies + s.duplicated,
        delivered + s.lost + s.over_bandwidth + s.over_capacity + discarded,
        "{}: datagrams unaccounted for: {s:?}",
        layer.name()
    );
    report += &format!("  network: {s:?}\n");
    report += &layer.finish();
    report
}

// ---------------------------------------------------------------- endpoint

struct EndpointLayer {
    sides: [Endpoint; 2],
    session: u64,
    next_id: [u32; 2],
    delivered: [HashSet<u32>; 2],
    forged_accepted: [bool; 2],
    totals: EndpointTotals,
    sending: bool,
}

#[derive(Debug, Default)]
struct EndpointTotals {
    packets_sent: u64,
    delivered_exact: u64,
    self_check_failed: u64,
    duplicates_after_forgery: u64,
    tampered_seen: u64,
    acked: u64,
    sequences_wrapped: u64,
}

impl EndpointLayer {
    fn new() -> Self {
        Self {
            sides: [
                Endpoint::new(0.0, Config::default()).unwrap(),
                Endpoint::new(0.0, Config::default()).unwrap(),
            ],
            session: 0,
            next_id: [0; 2],
            delivered: [HashSet::new(), HashSet::new()],
            forged_accepted: [false; 2],
            totals: EndpointTotals::default(),
            sending: true,
        }
    }
    fn stream(&self, from: usize) -> u64 {
        (self.session << 1) | from as u64
    }
}

impl Layer for EndpointLayer {
    fn name(&self) -> &'static str {
        "endpoint"
    }
    fn frame(&mut self, now: f64, side: usize, rng: &mut Rng, out: &mut Vec<Vec<u8>>) {
        self.sides[side].handle_timeout(now);
        self.totals.acked += self.sides[side].drain_acks().count() as u64;
        if !self.sending {
            return;
        }
        for _ in 0..10 {
            let size = match rng.below(100) {
                0..=9 => 1025 + rng.below(6 * 1024) as usize,
                _ => 12 + rng.below(300) as usize,
            };
            let id = self.next_id[side];
            let before = self.sides[side].next_sequence();
            self.sides[side]
                .send_packet(now, &payload(self.stream(side), id, size))
                .unwrap();
            if before == u16::MAX {
                self.totals.sequences_wrapped += 1;
            }
            self.next_id[side] += 1;
            self.totals.packets_sent += 1;
        }
        while let Some(t) = self.sides[side].poll_transmit() {
            out.push(t.data.to_vec());
        }
    }
    fn receive(&mut self, now: f64, side: usize, datagram: &[u8], tampered: bool) -> bool {
        let stream = self.stream(1 - side);
        self.totals.tampered_seen += u64::from(tampered);
        let result = self.sides[side].handle_datagram(now, datagram);
        if tampered && result.is_ok() {
            // The endpoint authenticates nothing (the netcode layer's AEAD does): a
            // forged header it accepted may have moved its received window, after which
            // a genuine late copy is no longer recognized as a duplicate.
            self.forged_accepted[side] = true;
        }
        match result {
            Ok(Some(packet)) => {
                match check(packet.payload) {
                    Some(id)
                        if packet.payload
                            == payload(stream, id, packet.payload.len()).as_slice() =>
                    {
                        if self.delivered[side].insert(id) {
                            self.totals.delivered_exact += 1;
                        } else {
                            assert!(
                                self.forged_accepted[side],
                                "endpoint: payload {id} delivered twice (sequence {}) with no forgery accepted",
                                packet.sequence
                            );
                            self.totals.duplicates_after_forgery += 1;
                        }
                    }
                    _ => self.totals.self_check_failed += 1,
                }
                true
            }
            Ok(None) => true,
            Err(_) => false,
        }
    }
    fn reconnect(&mut self, now: f64) {
        for side in &mut self.sides {
            *side = Endpoint::new(now, Config::default()).unwrap();
        }
        self.session += 1;
        self.next_id = [0; 2];
        self.delivered = [HashSet::new(), HashSet::new()];
        self.forged_accepted = [false; 2];
    }
    fn stop_sending(&mut self) {
        self.sending = false;
    }
    fn settled(&self) -> bool {
        true
    }
    fn finish(&mut self) -> String {
        let t = &self.totals;
        assert!(t.self_check_failed <= t.tampered_seen, "endpoint: {t:?}");
        assert!(t.delivered_exact > 0);
        if t.packets_sent >= 160_000 {
            assert!(
                t.sequences_wrapped >= 2,
                "both sides' sequences wrapped: {t:?}"
            );
        }
        for side in &self.sides {
            let c = side.counters();
            assert_eq!(
                c.datagrams_received,
                c.packets_received - c.packets_reassembled + c.fragments_received + c.drops.total()
            );
        }
        format!(
            "  endpoint totals: {t:?}\n  drops side 0: {:?}\n",
            self.sides[0].counters().drops
        )
    }
}

// ---------------------------------------------------------------- chunks

struct ChunkLayer {
    config: ChunkConfig,
    senders: [ChunkSender; 2],
    receivers: [ChunkReceiver; 2],
    session: u64,
    sent: [BTreeMap<u16, usize>; 2],
    completed: [HashSet<u16>; 2],
    totals: ChunkTotals,
    sending: bool,
}

#[derive(Debug, Default)]
struct ChunkTotals {
    chunks_sent: u64,
    chunks_exact: u64,
    chunks_self_check_failed: u64,
    bytes_through: u64,
    slices_tampered: u64,
    /// Tampered acks the sender accepted: slice acks are not authenticated (the netcode
    /// layer's AEAD is), so one can mark slices received that never were, and the
    /// chunk is lost. Counted, and the only way a chunk may go missing.
    tampered_acks_accepted: u64,
    /// Chunks completed under ids never sent (forged or corrupted slices).
    bogus_chunks_completed: u64,
    chunks_lost_to_tampered_acks: u64,
    ids_wrapped: u64,
}

impl ChunkLayer {
    fn new() -> Self {
        let config = ChunkConfig {
            first_chunk_id: 65_530,
            bandwidth: 400_000.0,
            ..ChunkConfig::default()
        };
        Self {
            senders: [
                ChunkSender::new(config.clone()).unwrap(),
                ChunkSender::new(config.clone()).unwrap(),
            ],
            receivers: [
                ChunkReceiver::new(config.clone()).unwrap(),
                ChunkReceiver::new(config.clone()).unwrap(),
            ],
            config,
            session: 0,
            sent: [BTreeMap::new(), BTreeMap::new()],
            completed: [HashSet::new(), HashSet::new()],
            totals: ChunkTotals::default(),
            sending: true,
        }
    }
}

impl Layer for ChunkLayer {
    fn name(&self) -> &'static str {
        "chunks"
    }
    fn frame(&mut self, now: f64, side: usize, rng: &mut Rng, out: &mut Vec<Vec<u8>>) {
        if self.sending && self.senders[side].queued_chunks() < 2 && rng.chance(0.05) {
            let size = 12 + rng.below(48 * 1024) as usize;
            let stream = (self.session << 1) | side as u64;
            // Chunk ids are the sender's; the payload id is the chunk id too.
            let id = self
                .config
                .first_chunk_id
                .wrapping_add(self.sent[side].len() as u16);
            let id = self.senders[side]
                .send(payload(stream, u32::from(id), size))
                .unwrap();
            if id == 0 {
                self.totals.ids_wrapped += 1;
            }
            self.sent[side].insert(id, size);
            self.totals.chunks_sent += 1;
        }
        self.senders[side].set_rtt(Some(0.1));
        while let Some(p) = self.senders[side].poll_packet(now) {
            out.push(p.to_vec());
        }
        if let Some(a) = self.receivers[side].poll_ack(now) {
            out.push(a.to_vec());
        }
        while let Some(chunk) = self.receivers[side].take_chunk() {
            let from = 1 - side;
            let stream = (self.session << 1) | from as u64;
            let Some(&size) = self.sent[from].get(&chunk.id) else {
                // A chunk id the sender never used: forged or corrupted slices (slices
                // are not authenticated). Counted; the genuine chunk may be lost.
                self.totals.bogus_chunks_completed += 1;
                continue;
            };
            assert!(
                self.completed[side].insert(chunk.id),
                "chunk {} completed twice",
                chunk.id
            );
            if chunk.data == payload(stream, u32::from(chunk.id), size) {
                self.totals.chunks_exact += 1;
                self.totals.bytes_through += size as u64;
            } else {
                assert!(
                    check(&chunk.data) != Some(u32::from(chunk.id)) || chunk.data.len() != size
                );
                self.totals.chunks_self_check_failed += 1;
            }
        }
    }
    fn receive(&mut self, now: f64, side: usize, datagram: &[u8], tampered: bool) -> bool {
        self.totals.slices_tampered += u64::from(tampered);
        match datagram.first() {
            Some(0xc2) => {
                let ok = self.senders[side].receive_ack(now, datagram).is_ok();
                self.totals.tampered_acks_accepted += u64::from(ok && tampered);
                ok
            }
            _ => self.receivers[side].receive_slice(now, datagram).is_ok(),
        }
    }
    fn reconnect(&mut self, _now: f64) {
        // Chunks still owed in the old session must complete first.
        let owed_before = self.totals.chunks_sent
            - self.totals.chunks_exact
            - self.totals.chunks_self_check_failed;
        assert!(owed_before < 64);
        let fresh = Self::new();
        let totals = std::mem::take(&mut self.totals);
        *self = fresh;
        self.totals = ChunkTotals {
            chunks_sent: totals.chunks_sent - owed_before,
            ..totals
        };
        self.session += 1;
    }
    fn stop_sending(&mut self) {
        self.sending = false;
    }
    fn settled(&self) -> bool {
        (0..2).all(|s| {
            self.senders[s].is_idle()
                && (self.completed[1 - s].len() == self.sent[s].len()
                    || (self.totals.tampered_acks_accepted + self.totals.bogus_chunks_completed
                        > 0
                        && self.receivers[1 - s].progress().is_none()))
        })
    }
    fn owed(&self) -> String {
        (0..2)
            .map(|s| {
                format!(
                    "side {s}: sent {} completed by peer {}, sender {:?} idle {} queued {} stats {:?}; peer receiver {:?} ready {} stats {:?}\n",
                    self.sent[s].len(),
                    self.completed[1 - s].len(),
                    self.senders[s].progress(),
                    self.senders[s].is_idle(),
                    self.senders[s].queued_chunks(),
                    self.senders[s].stats(),
                    self.receivers[1 - s].progress(),
                    self.receivers[1 - s].is_ready(),
                    self.receivers[1 - s].stats(),
                )
            })
            .collect()
    }
    fn finish(&mut self) -> String {
        let lost: u64 = (0..2)
            .map(|s| (self.sent[s].len() - self.completed[1 - s].len()) as u64)
            .sum();
        self.totals.chunks_lost_to_tampered_acks += lost;
        self.totals.chunks_sent -= lost;
        let t = &self.totals;
        assert!(
            t.chunks_lost_to_tampered_acks <= t.tampered_acks_accepted + t.bogus_chunks_completed,
            "{t:?}"
        );
        assert!(t.bogus_chunks_completed <= t.slices_tampered, "{t:?}");
        assert_eq!(
            t.chunks_sent,
            t.chunks_exact + t.chunks_self_check_failed,
            "every chunk completes once: {t:?}"
        );
        assert!(t.chunks_self_check_failed <= t.slices_tampered);
        format!(
            "  chunk totals: {t:?}\n  receiver 1: {:?}\n",
            self.receivers[1].stats()
        )
    }
}

// ---------------------------------------------------------------- connection

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Message {
    Small(u32, #[net(max_len = 64)] Vec<u8>),
    Large(u32, #[net(max_len = 20_000)] Vec<u8>),
}

/// Channels: 0 reliable-ordered, 1 reliable-unordered, 2 unreliable-sequenced, 3 unreliable.
const CHANNELS: usize = 4;
const RELIABLE: [bool; CHANNELS] = [true, true, false, false];

fn message(channel: usize, id: u32) -> Message {
    let h = u64::from(id).wrapping_mul(0x9e37_79b9) ^ channel as u64;
    let bytes = |n: usize| payload(h, id, n);
    if RELIABLE[channel] && h.is_multiple_of(97) {
        Message::Large(id, bytes(2000 + (h % 15_000) as usize))
    } else {
        Message::Small(id, bytes(12 + (h % 50) as usize))
    }
}

fn id_of(m: &Message) -> u32 {
    match m {
        Message::Small(id, _) | Message::Large(id, _) => *id,
    }
}

/// An integrity tag over each datagram, as the netcode layer's AEAD gives the connection.
fn seal(datagram: &[u8]) -> Vec<u8> {
    let mut out = datagram.to_vec();
    out.extend_from_slice(&fnv(datagram).to_le_bytes()[..4]);
    out
}

fn open(datagram: &[u8]) -> Option<&[u8]> {
    let (body, tag) = datagram.split_at(datagram.len().checked_sub(4)?);
    (fnv(body).to_le_bytes()[..4] == *tag).then_some(body)
}

struct ConnectionLayer {
    sides: [Connection<Message>; 2],
    next_id: [[u32; CHANNELS]; 2],
    next_expected: [[u32; CHANNELS]; 2],
    arrived: [[HashSet<u32>; CHANNELS]; 2],
    totals: ConnectionTotals,
    sending: bool,
}

#[derive(Debug, Default)]
struct ConnectionTotals {
    reliable_sent: u64,
    reliable_delivered: u64,
    unreliable_sent: u64,
    unreliable_delivered: u64,
    blocks_delivered: u64,
    refused_full: u64,
    integrity_refused: u64,
}

fn connection_config() -> ConnectionConfig {
    ConnectionConfig {
        mtu: 1200 - 4,
        ..ConnectionConfig::with_channels(vec![
            ChannelConfig::reliable_ordered(),
            ChannelConfig::reliable_unordered(),
            ChannelConfig::new(ChannelKind::UnreliableSequenced),
            ChannelConfig::new(ChannelKind::Unreliable),
        ])
    }
}

#[allow(clippy::needless_range_loop)]
impl ConnectionLayer {
    fn new(now: f64) -> Self {
        Self {
            sides: [
                Connection::new(now, connection_config()).unwrap(),
                Connection::new(now, connection_config()).unwrap(),
            ],
            next_id: [[0; CHANNELS]; 2],
            next_expected: [[0; CHANNELS]; 2],
            arrived: Default::default(),
            totals: ConnectionTotals::default(),
            sending: true,
        }
    }

    fn drain(&mut self, side: usize) {
        for channel in 0..CHANNELS {
            while let Some(m) = self.sides[side].receive_message(channel as u8) {
                let id = id_of(&m);
                assert_eq!(
                    m,
                    message(channel, id),
                    "channel {channel}: message {id} differs"
                );
                assert!(
                    self.arrived[side][channel].insert(id),
                    "channel {channel}: {id} twice"
                );
                if channel == 0 {
                    assert_eq!(id, self.next_expected[side][channel], "out of order");
                    self.next_expected[side][channel] += 1;
                }
                if matches!(m, Message::Large(..)) {
                    self.totals.blocks_delivered += 1;
                }
                if RELIABLE[channel] {
                    self.totals.reliable_delivered += 1;
                } else {
                    self.totals.unreliable_delivered += 1;
                }
            }
        }
    }
}

#[allow(clippy::needless_range_loop)]
impl Layer for ConnectionLayer {
    fn name(&self) -> &'static str {
        "connection"
    }
    fn frame(&mut self, now: f64, side: usize, rng: &mut Rng, out: &mut Vec<Vec<u8>>) {
        if self.sending {
            for channel in 0..CHANNELS {
                for _ in 0..rng.below(4) {
                    let id = self.next_id[side][channel];
                    match self.sides[side].send_message(channel as u8, &message(channel, id)) {
                        Ok(()) => {
                            self.next_id[side][channel] += 1;
                            if RELIABLE[channel] {
                                self.totals.reliable_sent += 1;
                            } else {
                                self.totals.unreliable_sent += 1;
                            }
                        }
                        Err(SendError::SendQueueFull { .. } | SendError::BlockQueueFull { .. }) => {
                            self.totals.refused_full += 1;
                            break;
                        }
                        Err(e) => panic!("send: {e}"),
                    }
                }
            }
        }
        self.sides[side].handle_timeout(now);
        while let Some(d) = self.sides[side].poll_transmit(now) {
            out.push(seal(d));
        }
        self.drain(side);
    }
    fn receive(&mut self, now: f64, side: usize, datagram: &[u8], _tampered: bool) -> bool {
        let Some(body) = open(datagram) else {
            self.totals.integrity_refused += 1;
            return false;
        };
        let ok = self.sides[side].handle_datagram(now, body).is_ok();
        self.drain(side);
        ok
    }
    fn reconnect(&mut self, now: f64) {
        // The old session's reliable messages must all have arrived by now? No: a new
        // session starts from id 0; count what the old one delivered and owed.
        let totals = std::mem::take(&mut self.totals);
        let owed: u64 = (0..2)
            .map(|s| {
                (0..CHANNELS)
                    .filter(|&c| RELIABLE[c])
                    .map(|c| u64::from(self.next_id[s][c]) - self.arrived[1 - s][c].len() as u64)
                    .sum::<u64>()
            })
            .sum();
        *self = Self::new(now);
        self.totals = ConnectionTotals {
            reliable_sent: totals.reliable_sent - owed,
            ..totals
        };
    }
    fn stop_sending(&mut self) {
        self.sending = false;
    }
    fn settled(&self) -> bool {
        (0..2).all(|s| {
            (0..CHANNELS)
                .filter(|&c| RELIABLE[c])
                .all(|c| self.arrived[1 - s][c].len() as u32 == self.next_id[s][c])
        })
    }
    fn finish(&mut self) -> String {
        for s in 0..2 {
            for c in (0..CHANNELS).filter(|&c| RELIABLE[c]) {
                let expected: HashSet<u32> = (0..self.next_id[s][c]).collect();
                assert_eq!(
                    self.arrived[1 - s][c],
                    expected,
                    "channel {c}: reliable ids are exactly 0..N"
                );
            }
        }
        let t = &self.totals;
        assert_eq!(t.reliable_sent, t.reliable_delivered, "{t:?}");
        assert!(t.unreliable_delivered <= t.unreliable_sent);
        format!(
            "  connection totals: {t:?}\n  counters side 0: {:?}\n",
            self.sides[0].counters()
        )
    }
}

// ---------------------------------------------------------------- driver

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The seed of a run without `NETSER_SOAK_SEED` or `NETSER_SOAK_LOOP` (CI's).
const DEFAULT_SEED: u64 = 0x5eed_2026_1123;

fn soak(make: fn() -> Box<dyn Layer>, default_frames: u64) {
    let frames = env_u64("NETSER_SOAK_FRAMES").unwrap_or(default_frames);
    let budget = env_u64("NETSER_SOAK_SECONDS").map(Duration::from_secs);
    let looping = std::env::var_os("NETSER_SOAK_LOOP").is_some();
    let start = Instant::now();
    // One fixed seed by default, so CI is deterministic; loop mode starts from the clock
    // so that every long run explores new seeds (each printed, to replay it).
    let mut seed = env_u64("NETSER_SOAK_SEED").unwrap_or_else(|| {
        if looping {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        } else {
            DEFAULT_SEED
        }
    });
    let mut runs = 0;
    loop {
        let mut layer = make();
        println!("soak {}: seed {seed}", layer.name());
        let report = run(layer.as_mut(), seed, frames);
        println!("{report}");
        runs += 1;
        let more = budget.is_some_and(|b| start.elapsed() < b) && (looping || runs == 0);
        if !looping || !more {
            break;
        }
        seed = Rng(seed).next();
    }
    println!("{runs} run(s) in {:.0?}", start.elapsed());
}

#[test]
fn soak_endpoint() {
    // 7175 frames x 10 packets a side before the reconnect: sequences wrap past 65535.
    soak(|| Box::new(EndpointLayer::new()), 8200);
}

#[test]
fn soak_chunks() {
    soak(|| Box::new(ChunkLayer::new()), 3000);
}

#[test]
fn soak_connection() {
    soak(|| Box::new(ConnectionLayer::new(0.0)), 1500);
}
