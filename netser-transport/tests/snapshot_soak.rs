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
use netser_transport::simulator::{Pair, Simulator, SimulatorConfig};
use netser_transport::snapshot::{
    EntityConfig, EntityReceiver, EntitySender, SnapshotConfig, SnapshotReceiver, SnapshotSender,
};
use snapshot_support::{Body, Receiving, Watched, World, WorldGen, SLOTS};

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
    let client = Watched {
        peer: Receiving {
            connection: Connection::new(0.0, connection_config()).unwrap(),
            receiver: SnapshotReceiver::<World>::new(config.clone()).unwrap(),
        },
        // Each snapshot decoded, as it is decoded.
        look: |client: &mut Receiving<SnapshotReceiver<World>>, _| {
            let (sequence, decoded) = client.receiver.poll_snapshot()?;
            Some((sequence, decoded.clone()))
        },
        seen: Vec::new(),
    };
    let server: Connection<u8> = Connection::new(0.0, connection_config()).unwrap();
    let mut pair = Pair::lossless(server, client);
    let bound = pair.b.peer.receiver.memory_bound();
    let mut sender = SnapshotSender::<World>::new(config.clone()).unwrap();
    let mut gen = WorldGen::new(seed);
    let mut worlds: HashMap<u32, World> = HashMap::new();
    let mut tick_of: HashMap<u16, u32> = HashMap::new();
    let mut checked = 0u64;
    for (name, net) in phases(seed) {
        pair.net = Simulator::new(net);
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
            sender.send(pair.now, &mut pair.a, world).unwrap();
            let (sequence, world) = sender.history().newest().unwrap();
            tick_of.insert(sequence, world.tick);
            pair.step(TICK);
            for (sequence, decoded) in pair.b.seen.drain(..) {
                assert_eq!(decoded, worlds[&decoded.tick], "seed {seed}, {name}");
                assert_eq!(tick_of[&sequence], decoded.tick);
                checked += 1;
            }
        }
        let receiver = &pair.b.peer.receiver;
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
    let receiver = &pair.b.peer.receiver;
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
    [c.decoded, c.baseline_evicted, c.stale, c.duplicates]
}

/// Entity sets: the bodies of the same worlds as entities.
fn soak_entities(seed: u64, ticks: u32) {
    let config = EntityConfig {
        max_entities: SLOTS,
        packet_budget: 300,
        ..EntityConfig::default()
    };
    let client = Watched {
        peer: Receiving {
            connection: Connection::new(0.0, connection_config()).unwrap(),
            receiver: EntityReceiver::<Body>::new(config.clone()).unwrap(),
        },
        // After each datagram taken: the updates applied so far, and every entity the
        // client holds (or knows gone) with the packet that carried it.
        look: |client: &mut Receiving<EntityReceiver<Body>>, taken| {
            let receiver = &client.receiver;
            let held = (0..SLOTS)
                .filter_map(|id| {
                    Some((
                        id,
                        receiver.entity_packet(id)?,
                        receiver.entity(id).copied(),
                    ))
                })
                .collect::<Vec<_>>();
            taken.then(|| (receiver.counters().updates_applied, held))
        },
        seen: Vec::new(),
    };
    let server: Connection<u8> = Connection::new(0.0, connection_config()).unwrap();
    let mut pair = Pair::lossless(server, client);
    let bound = pair.b.peer.receiver.memory_bound();
    let mut sender = EntitySender::<Body>::new(config.clone()).unwrap();
    let mut applied = 0;
    let mut gen = WorldGen::new(seed ^ 0xe17);
    // By packet sequence: the world it was built from.
    let mut sent: HashMap<u16, World> = HashMap::new();
    let mut checked = 0u64;
    for (name, net) in phases(seed ^ 0xe17) {
        pair.net = Simulator::new(net);
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
                .send(pair.now, &mut pair.a, &world.bodies, |id, _| {
                    1.0 + id as f32
                })
                .unwrap()
            {
                sent.insert(packet, world);
            }
            pair.step(TICK);
            for (applied_now, held) in pair.b.seen.drain(..) {
                if applied_now > applied {
                    // Every entity the client holds (or knows gone) is exactly as in the
                    // world of the packet that carried it.
                    for (id, packet, entity) in held {
                        assert_eq!(
                            entity.as_ref(),
                            sent[&packet].bodies[id].as_ref(),
                            "seed {seed}, {name}: entity {id} from packet {packet}"
                        );
                        checked += 1;
                    }
                }
                applied = applied_now;
            }
        }
        let receiver = &pair.b.peer.receiver;
        assert_eq!(receiver.memory_bound(), bound, "fixed by the configuration");
        eprintln!(
            "entities, {name}: sender {:?}\n  receiver {:?}\n  bound {bound} bytes",
            sender.stats(),
            receiver.counters()
        );
    }
    // Converged: the client holds the server's last world exactly.
    let receiver = &pair.b.peer.receiver;
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
