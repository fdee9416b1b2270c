//! Soak of the snapshot layer: random worlds (bodies appearing, vanishing, moving,
//! resting) sent 60 times a second through the simulator at 25% loss, 25% duplicates,
//! reordering and 1 s of latency with jitter, then at 99% loss, then calm; once as
//! whole snapshots and once as entity sets.
//!
//! Checked:
//! - every snapshot the client decodes (each one that becomes its newest, and every one
//!   it holds at the checkpoints) equals, bit for bit, the server's world of that tick;
//!   every entity state the client applies equals the server's state of that entity in
//!   the packet's tick;
//! - refusals: none from an honest sender (every baseline named is held); stale and
//!   duplicate sections counted; at the end the client holds the server's world;
//! - memory: the receivers hold at most their documented bounds: at most `history`
//!   snapshots, and a `memory_bound` that does not depend on the traffic.
//!
//! By default a few thousand ticks from one seed (CI, a few seconds). Long runs:
//! `NETSER_SNAPSHOT_SOAK_TICKS=<ticks per phase>`, `NETSER_SNAPSHOT_SOAK_SEED=<seed>`,
//! `NETSER_SNAPSHOT_SOAK_SECONDS=<wall-clock budget>` to loop with new seeds, e.g.
//! `NETSER_SNAPSHOT_SOAK_SECONDS=3600 cargo test --release -p netser-transport --test snapshot_soak -- --nocapture`.

mod snapshot_support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};
use netser_transport::snapshot::{
    EntityConfig, EntityReceiver, EntitySender, SnapshotConfig, SnapshotReceiver, SnapshotSender,
};
use snapshot_support::{Body, World, WorldGen, SLOTS};

const TICK: f64 = 1.0 / 60.0;

fn phases(seed: u64) -> [(&'static str, SimulatorConfig); 4] {
    [
        (
            "bad",
            SimulatorConfig {
                latency: 1.0,
                jitter: 0.1,
                loss: 0.25,
                duplicate: 0.25,
                reorder: 0.1,
                seed,
                ..SimulatorConfig::default()
            },
        ),
        (
            "99% loss",
            SimulatorConfig {
                latency: 0.2,
                loss: 0.99,
                seed: seed ^ 1,
                ..SimulatorConfig::default()
            },
        ),
        (
            "calm",
            SimulatorConfig {
                latency: 0.05,
                seed: seed ^ 2,
                ..SimulatorConfig::default()
            },
        ),
        // The world stops changing.
        (
            "rest",
            SimulatorConfig {
                latency: 0.05,
                loss: 0.1,
                seed: seed ^ 3,
                ..SimulatorConfig::default()
            },
        ),
    ]
}

fn connection_config() -> ConnectionConfig {
    ConnectionConfig::default()
}

/// Whole snapshots: returns (decoded, refused, stale, duplicates).
fn soak_snapshots(seed: u64, ticks: u32) -> [u64; 4] {
    let config = SnapshotConfig {
        history: 256,
        first_sequence: 65_000, // wraps early
        ..SnapshotConfig::default()
    };
    let mut server: Connection<u8> = Connection::new(0.0, connection_config()).unwrap();
    let mut client = Connection::<u8>::new(0.0, connection_config()).unwrap();
    let mut receiver = SnapshotReceiver::<World>::new(config.clone()).unwrap();
    let bound = receiver.memory_bound();
    let mut sender = SnapshotSender::<World>::new(config.clone()).unwrap();
    let mut gen = WorldGen::new(seed);
    let mut worlds: HashMap<u32, World> = HashMap::new();
    let mut tick_of: HashMap<u16, u32> = HashMap::new();
    let mut now = 0.0;
    let mut checked = 0u64;
    for (name, net) in phases(seed) {
        let mut sim = Simulator::new(net);
        let phase_ticks = match name {
            "calm" => ticks / 4 + 200,
            "rest" => 200,
            _ => ticks,
        };
        for _ in 0..phase_ticks {
            let world = if name == "rest" {
                gen.world.clone()
            } else {
                gen.step().clone()
            };
            worlds.insert(world.tick, world.clone());
            sender.send(now, &mut server, world).unwrap();
            let (sequence, world) = sender.history().newest().unwrap();
            tick_of.insert(sequence, world.tick);
            server.handle_timeout(now);
            while let Some(d) = server.poll_transmit(now) {
                sim.send(now, 1, 2, d);
            }
            client.handle_timeout(now);
            while let Some(d) = client.poll_transmit(now) {
                sim.send(now, 2, 1, d);
            }
            while let Some(delivery) = sim.receive(now) {
                if delivery.to == 2 {
                    let _ = receiver.handle_datagram(now, &mut client, &delivery.data);
                    if let Some((sequence, decoded)) = receiver.poll_snapshot() {
                        assert_eq!(decoded, &worlds[&decoded.tick], "seed {seed}, {name}");
                        assert_eq!(tick_of[&sequence], decoded.tick);
                        checked += 1;
                    }
                } else {
                    let _ = server.handle_datagram(now, &delivery.data);
                }
            }
            now += TICK;
        }
        // Everything held is exact.
        let newest = receiver.newest().map(|(s, _)| s).unwrap();
        for back in 0..256u16 {
            let sequence = newest.wrapping_sub(back);
            if let Some(held) = receiver.get(sequence) {
                assert_eq!(held, &worlds[&held.tick], "seed {seed}, {name}");
                assert_eq!(tick_of[&sequence], held.tick);
            }
        }
        let held = (0..=u16::MAX)
            .filter(|&s| receiver.get(s).is_some())
            .count();
        assert!(held <= 256, "{name}: {held} snapshots held");
        assert_eq!(receiver.memory_bound(), bound, "fixed by the configuration");
        eprintln!(
            "snapshots, {name}: sender {:?}\n  receiver {:?}\n  {held} held, bound {bound} bytes",
            sender.stats(),
            receiver.counters()
        );
    }
    assert!(checked > 100);
    assert_eq!(
        receiver.newest().unwrap().1,
        &gen.world,
        "seed {seed}: converged"
    );
    assert!(
        sender.stats().unchanged_skipped > 100,
        "at rest, keep-alives only"
    );
    let c = *receiver.counters();
    assert_eq!(
        c.unknown_baseline + c.malformed + c.wrong_kind,
        0,
        "seed {seed}"
    );
    assert_eq!(
        c.received,
        c.decoded + c.duplicates + c.stale + c.baseline_evicted
    );
    assert!(c.duplicates > 0, "{c:?}");
    drop((client, receiver));
    [c.decoded, c.baseline_evicted, c.stale, c.duplicates]
}

/// Entity sets: the bodies of the same worlds as entities.
fn soak_entities(seed: u64, ticks: u32) {
    let config = EntityConfig {
        max_entities: SLOTS,
        packet_budget: 300,
        ..EntityConfig::default()
    };
    let mut server: Connection<u8> = Connection::new(0.0, connection_config()).unwrap();
    let mut client = Connection::<u8>::new(0.0, connection_config()).unwrap();
    let mut receiver = EntityReceiver::<Body>::new(config.clone()).unwrap();
    let bound = receiver.memory_bound();
    let mut sender = EntitySender::<Body>::new(config.clone()).unwrap();
    let mut gen = WorldGen::new(seed ^ 0xe17);
    // By packet sequence: the world it was built from.
    let mut sent: HashMap<u16, World> = HashMap::new();
    let mut now = 0.0;
    let mut checked = 0u64;
    for (name, net) in phases(seed ^ 0xe17) {
        let mut sim = Simulator::new(net);
        let phase_ticks = match name {
            "calm" => ticks / 4 + 200,
            "rest" => 300,
            _ => ticks,
        };
        for _ in 0..phase_ticks {
            let world = if name == "rest" {
                gen.world.clone()
            } else {
                gen.step().clone()
            };
            if let Some(packet) = sender
                .send(now, &mut server, &world.bodies, |id, _| 1.0 + id as f32)
                .unwrap()
            {
                sent.insert(packet, world);
            }
            server.handle_timeout(now);
            while let Some(d) = server.poll_transmit(now) {
                sim.send(now, 1, 2, d);
            }
            client.handle_timeout(now);
            while let Some(d) = client.poll_transmit(now) {
                sim.send(now, 2, 1, d);
            }
            while let Some(delivery) = sim.receive(now) {
                if delivery.to == 2 {
                    let applied = receiver.counters().updates_applied;
                    let taken = receiver
                        .handle_datagram(now, &mut client, &delivery.data)
                        .is_ok();
                    if taken && receiver.counters().updates_applied > applied {
                        // Every entity the client holds (or knows gone) is exactly as in
                        // the world of the packet that carried it.
                        for id in 0..SLOTS {
                            if let Some(packet) = receiver.entity_packet(id) {
                                assert_eq!(
                                    receiver.entity(id),
                                    sent[&packet].bodies[id].as_ref(),
                                    "seed {seed}, {name}: entity {id} from packet {packet}"
                                );
                                checked += 1;
                            }
                        }
                    }
                } else {
                    let _ = server.handle_datagram(now, &delivery.data);
                }
            }
            now += TICK;
        }
        assert_eq!(receiver.memory_bound(), bound, "fixed by the configuration");
        eprintln!(
            "entities, {name}: sender {:?}\n  receiver {:?}\n  bound {bound} bytes",
            sender.stats(),
            receiver.counters()
        );
    }
    // Converged: the client holds the server's last world exactly.
    for (id, expected) in gen.world.bodies.iter().enumerate() {
        assert_eq!(
            receiver.entity(id),
            expected.as_ref(),
            "seed {seed}: entity {id}"
        );
    }
    let c = *receiver.counters();
    assert_eq!(
        c.unknown_baseline + c.malformed + c.wrong_kind,
        0,
        "seed {seed}"
    );
    assert_eq!(
        c.received,
        c.taken + c.duplicates + c.stale + c.baseline_evicted
    );
    assert!(sender.stats().max_age_ever < 600, "{:?}", sender.stats());
    assert!(checked > 1_000);
}

#[test]
fn snapshot_soak() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let ticks = env("NETSER_SNAPSHOT_SOAK_TICKS").unwrap_or(1_500) as u32;
    let budget = env("NETSER_SNAPSHOT_SOAK_SECONDS").map(Duration::from_secs);
    let mut seed = env("NETSER_SNAPSHOT_SOAK_SEED").unwrap_or(0x5eed_0027);
    let start = Instant::now();
    loop {
        eprintln!("snapshot soak: seed {seed}, {ticks} ticks per phase");
        soak_snapshots(seed, ticks);
        soak_entities(seed, ticks);
        match budget {
            Some(budget) if start.elapsed() < budget => {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1)
            }
            _ => break,
        }
    }
}
