//! Soak test in the articles' style: two endpoints exchange packets of random sizes up to
//! the maximum through the simulator at 99% loss, 10 s latency, seconds of jitter,
//! duplicates and reordering (with milder stretches between, so acks and fragmented
//! packets get through too). Each payload is derived from its sequence, so the receiver
//! checks it byte for byte; nothing may be delivered twice, and no packet may be reported
//! acked before the other side delivered it. Memory stays under the documented bound.
//!
//! By default it runs 4800 frames (80 simulated seconds, two terrible/mild cycles). For long runs:
//! `NETSER_SOAK_ITERATIONS=<frames>` or `NETSER_SOAK_SECONDS=<wall-clock seconds>`,
//! e.g. `NETSER_SOAK_SECONDS=3600 cargo test --release -p netser-transport --test soak_endpoint -- --nocapture`.
//! `NETSER_SOAK_SEED` picks the seed.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use netser_transport::endpoint::{Config, Endpoint};
use netser_transport::sequence::sequence_difference;
use netser_transport::simulator::{Simulator, SimulatorConfig};

const PACKETS_PER_FRAME: u32 = 4;
const DEFAULT_FRAMES: u64 = 4800;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// The payload size for a sequence: mostly under a fragment, some fragmented, a few up
/// to the maximum packet size.
fn payload_size(sequence: u16, max: usize) -> usize {
    let hash = u32::from(sequence).wrapping_mul(2_654_435_761);
    match hash % 100 {
        0 => 1 + (hash >> 8) as usize % max,
        1..=20 => 1025 + (hash >> 8) as usize % (16 * 1024 - 1024),
        _ => 1 + (hash >> 8) as usize % 1024,
    }
}

fn payload(sequence: u16, max: usize) -> Vec<u8> {
    let size = payload_size(sequence, max);
    let mut data = vec![0u8; size];
    for (i, byte) in data.iter_mut().enumerate() {
        *byte = (i as u32)
            .wrapping_mul(31)
            .wrapping_add(u32::from(sequence)) as u8;
    }
    data
}

fn unwrap(reference: u64, sequence: u16) -> u64 {
    (reference as i64 + i64::from(sequence_difference(sequence, reference as u16))).max(0) as u64
}

/// One side: its endpoint and what it has delivered, in absolute packet numbers.
struct Side {
    endpoint: Endpoint,
    address: u32,
    sent: u64,
    delivered: HashSet<u64>,
    newest_delivered: u64,
    acked: HashSet<u64>,
}

impl Side {
    fn new(address: u32) -> Self {
        Self {
            endpoint: Endpoint::new(0.0, Config::default()).unwrap(),
            address,
            sent: 0,
            delivered: HashSet::new(),
            newest_delivered: 0,
            acked: HashSet::new(),
        }
    }
}

fn terrible(seed: u64) -> SimulatorConfig {
    SimulatorConfig {
        latency: 10.0,
        jitter: 2.0,
        loss: 0.99,
        duplicate: 0.1,
        reorder: 0.1,
        max_in_flight: 1 << 20,
        seed,
        ..SimulatorConfig::default()
    }
}

fn mild(seed: u64) -> SimulatorConfig {
    SimulatorConfig {
        latency: 0.1,
        jitter: 0.05,
        loss: 0.05,
        duplicate: 0.05,
        reorder: 0.05,
        max_in_flight: 1 << 20,
        seed,
        ..SimulatorConfig::default()
    }
}

#[test]
fn soak_terrible_network() {
    let seed = env_u64("NETSER_SOAK_SEED").unwrap_or(0x50A4);
    let deadline = env_u64("NETSER_SOAK_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let frames = if deadline.is_some() {
        u64::MAX
    } else {
        env_u64("NETSER_SOAK_ITERATIONS").unwrap_or(DEFAULT_FRAMES)
    };
    let max = Config::default().max_packet_size;
    let mut sim: Simulator<u32> = Simulator::new(terrible(seed));
    let mut sides = [Side::new(0), Side::new(1)];
    let dt = 1.0 / 60.0;
    let mut delivered_fragmented = 0u64;
    let mut delivered_through_terrible = 0u64;
    let mut frame = 0u64;
    while frame < frames && deadline.is_none_or(|d| Instant::now() < d) {
        let now = frame as f64 * dt;
        // 30 s terrible, 10 s mild, repeating; the simulator keeps its queue.
        let phase = frame % 2400;
        if phase == 0 {
            sim.set_config(terrible(seed ^ frame));
        } else if phase == 1800 {
            sim.set_config(mild(seed ^ frame));
        }
        for side in &mut sides {
            for _ in 0..PACKETS_PER_FRAME {
                let sequence = side.endpoint.next_sequence();
                side.endpoint
                    .send_packet(now, &payload(sequence, max))
                    .unwrap();
                side.sent += 1;
            }
            let to = 1 - side.address;
            while let Some(transmit) = side.endpoint.poll_transmit() {
                sim.send(now, side.address, to, transmit.data);
            }
        }
        while let Some(delivery) = sim.receive(now) {
            let [a, b] = &mut sides;
            let (receiver, sender) = if delivery.to == 0 { (a, b) } else { (b, a) };
            if let Ok(Some(packet)) = receiver.endpoint.handle_datagram(now, &delivery.data) {
                assert_eq!(
                    packet.payload,
                    payload(packet.sequence, max),
                    "payload of {}",
                    packet.sequence
                );
                if packet.payload.len() > 1024 {
                    delivered_fragmented += 1;
                }
                if (delivery.sent_at / dt).round() as u64 % 2400 < 1800 {
                    delivered_through_terrible += 1;
                }
                let number = unwrap(receiver.newest_delivered, packet.sequence);
                assert!(
                    receiver.delivered.insert(number),
                    "packet {number} delivered twice"
                );
                receiver.newest_delivered = receiver.newest_delivered.max(number);
            }
            let reference = receiver.sent.saturating_sub(1);
            for ack in receiver.endpoint.drain_acks() {
                let number = unwrap(reference, ack);
                assert!(
                    sender.delivered.contains(&number),
                    "packet {number} acked but never delivered"
                );
                assert!(receiver.acked.insert(number), "packet {number} acked twice");
            }
        }
        for side in &mut sides {
            side.endpoint.handle_timeout(now);
            let config = side.endpoint.config();
            assert!(side.endpoint.memory_bytes() <= config.memory_bound());
        }
        frame += 1;
    }
    let stats = sim.stats();
    println!(
        "soak: {frame} frames, {delivered_fragmented} fragmented packets delivered, \
         {delivered_through_terrible} packets completed by a datagram sent over the 99% loss link, simulator {stats:?}"
    );
    for side in &sides {
        let counters = side.endpoint.counters();
        println!(
            "side {}: sent {} delivered {} acked {} stats {:?} counters {:?}",
            side.address,
            side.sent,
            side.delivered.len(),
            side.acked.len(),
            side.endpoint.stats(),
            counters
        );
        assert!(!side.delivered.is_empty());
        assert!(!side.acked.is_empty());
        assert!(counters.drops.duplicate + counters.drops.duplicate_fragment > 0);
    }
    assert!(delivered_fragmented > 0);
    assert!(delivered_through_terrible > 0);
}
