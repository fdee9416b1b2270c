//! The priority accumulator's rules: priority order, a high-priority entity in every
//! packet, no entity starves (its age is bounded), the byte budget is never exceeded,
//! entities appear and vanish, each is sent against the last state of it acked, and a
//! state against an unknown baseline is refused.

mod snapshot_support;

use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError};
use netser_transport::simulator::{Pair, SimulatorConfig};
use netser_transport::snapshot::{EntityConfig, EntityReceiver, EntitySender};
use snapshot_support::{Body, Receiving, Rng, Sizes};

/// A server connection (`pair.a`, keeping its datagram sizes) sending entity sets to a
/// client (`pair.b`).
struct Run {
    pair: Pair<Sizes<Connection<u8>>, Receiving<EntityReceiver<Body>>>,
    sender: EntitySender<Body>,
}

impl Run {
    fn new(config: EntityConfig, net: SimulatorConfig) -> Self {
        Self::with_connection(config, net, immediate_acks())
    }

    fn with_connection(
        config: EntityConfig,
        net: SimulatorConfig,
        connection: ConnectionConfig,
    ) -> Self {
        let server = Sizes {
            peer: Connection::new(0.0, connection.clone()).unwrap(),
            sizes: Vec::new(),
        };
        let client = Receiving {
            connection: Connection::new(0.0, connection).unwrap(),
            receiver: EntityReceiver::new(config.clone()).unwrap(),
        };
        Self {
            pair: Pair::new(server, client, net),
            sender: EntitySender::new(config).unwrap(),
        }
    }

    /// One tick: send `world`, deliver, ack.
    fn tick(&mut self, world: &[Option<Body>], priority: impl FnMut(usize, &Body) -> f32) {
        let server = &mut self.pair.a.peer;
        self.sender
            .send(self.pair.now, server, world, priority)
            .unwrap();
        self.pair.step(1.0 / 60.0);
    }
}

fn body(i: usize, t: i32) -> Body {
    Body {
        x: (i as i32 * 37 + t) % 100_000,
        y: i as i32,
        z: (i % 4096) as u16,
        resting: false,
    }
}

/// Every packet stays within the budget, and entities go in priority order: with equal
/// news, the higher priority first.
#[test]
fn budget_and_priority_order() {
    let config = EntityConfig {
        max_entities: 500,
        packet_budget: 200,
        ..EntityConfig::default()
    };
    let mut run = Run::new(config, SimulatorConfig::default());
    let world: Vec<Option<Body>> = (0..500).map(|i| Some(body(i, 0))).collect();
    // Priority rises with the id: the first packet carries the top ids.
    run.tick(&world, |id, _| id as f32);
    let first: Vec<usize> = (0..500)
        .filter(|&id| run.sender.age(id).is_none())
        .collect();
    assert!(!first.is_empty());
    let lowest_sent = *first.iter().min().unwrap();
    assert!(first.iter().all(|&id| id >= lowest_sent));
    assert_eq!(
        first.len(),
        500 - lowest_sent,
        "the top {} ids",
        first.len()
    );
    for t in 1..400 {
        let world: Vec<Option<Body>> = (0..500).map(|i| Some(body(i, t))).collect();
        run.tick(&world, |id, _| id as f32);
    }
    assert!(
        run.pair.a.sizes.iter().all(|&size| size + 28 <= 200),
        "{:?}",
        run.pair.a.sizes.iter().max()
    );
    assert!(
        run.pair.a.sizes.iter().filter(|&&s| s + 28 >= 180).count() > 300,
        "packets are filled"
    );
}

/// With the default connection settings the server's packets also report how long it
/// held the client's acks (18 bits after the channels): the entity set leaves room for
/// them, so no packet passes the budget.
#[test]
fn budget_holds_with_the_ack_delay_reported() {
    for budget in [150, 200, 333, 1200] {
        let config = EntityConfig {
            max_entities: 500,
            packet_budget: budget,
            ..EntityConfig::default()
        };
        let net = SimulatorConfig {
            latency: 0.02,
            ..SimulatorConfig::default()
        };
        let mut run = Run::with_connection(config, net, ConnectionConfig::default());
        for t in 0..300 {
            let world: Vec<Option<Body>> = (0..500).map(|i| Some(body(i, t))).collect();
            run.tick(&world, |id, _| id as f32);
        }
        let largest = run.pair.a.sizes.iter().max().unwrap() + 28;
        assert!(
            largest <= budget,
            "{largest} bytes over a budget of {budget}"
        );
        assert!(
            largest + 8 >= budget,
            "packets are filled: {largest} of {budget}"
        );
    }
}

/// An entity with a priority far above the others goes in every packet while it moves.
#[test]
fn high_priority_goes_every_packet() {
    let config = EntityConfig {
        max_entities: 300,
        packet_budget: 150,
        ..EntityConfig::default()
    };
    let mut run = Run::new(config, SimulatorConfig::default());
    for t in 0..200 {
        let world: Vec<Option<Body>> = (0..300).map(|i| Some(body(i, t))).collect();
        run.tick(&world, |id, _| if id == 123 { 1e6 } else { 1.0 });
        assert_eq!(run.sender.age(123), None, "tick {t}: 123 went");
        assert_eq!(run.pair.b.receiver.entity(123), Some(&body(123, t)));
    }
}

/// With far more news than fits, no entity waits more than about `max_age` ticks plus
/// the time to send all those that reached it; the receiver converges once the world
/// rests.
#[test]
fn no_entity_starves() {
    let config = EntityConfig {
        max_entities: 2000,
        packet_budget: 300,
        max_age: 60,
        ..EntityConfig::default()
    };
    let mut run = Run::new(
        config,
        SimulatorConfig {
            latency: 0.05,
            loss: 0.05,
            seed: 3,
            ..SimulatorConfig::default()
        },
    );
    let mut max_age = 0;
    for t in 0..600 {
        let world: Vec<Option<Body>> = (0..2000).map(|i| Some(body(i, t))).collect();
        // Entities 0..10 dominate; the rest would starve on priority alone.
        run.tick(&world, |id, _| if id < 10 { 1e4 } else { 0.0 });
        max_age = max_age.max(run.sender.stats().max_age);
    }
    assert_eq!(run.sender.stats().max_age_ever, max_age);
    // About 20 entities fit a packet: 2000 take ~100 packets; none waits much longer.
    assert!(max_age <= 200, "max age {max_age}");
    // At rest, everything arrives.
    let world: Vec<Option<Body>> = (0..2000).map(|i| Some(body(i, 600))).collect();
    for _ in 0..400 {
        run.tick(&world, |_, _| 1.0);
    }
    assert_eq!(run.sender.stats().pending, 0);
    for (id, expected) in world.iter().enumerate() {
        assert_eq!(
            run.pair.b.receiver.entity(id),
            expected.as_ref(),
            "entity {id}"
        );
    }
    // Once acked, entities went as deltas.
    assert!(run.sender.stats().delta_sent > run.sender.stats().absolute_sent);
}

/// Entities appear and vanish through loss and reordering; at rest the client holds
/// exactly the server's world, and then nothing more is sent.
#[test]
fn appearing_and_vanishing() {
    let config = EntityConfig {
        max_entities: 256,
        packet_budget: 400,
        ..EntityConfig::default()
    };
    let net = SimulatorConfig {
        latency: 0.1,
        jitter: 0.05,
        loss: 0.2,
        duplicate: 0.1,
        seed: 9,
        ..SimulatorConfig::default()
    };
    let mut run = Run::new(config, net);
    let mut rng = Rng(77);
    let mut world: Vec<Option<Body>> = vec![None; 256];
    for t in 0..900 {
        for (i, slot) in world.iter_mut().enumerate() {
            match slot {
                None if rng.chance(0.01) => *slot = Some(body(i, t)),
                Some(_) if rng.chance(0.01) => *slot = None,
                Some(b) if rng.chance(0.1) => b.x = (b.x + 1) % 100_000,
                _ => {}
            }
        }
        run.tick(&world, |_, _| 1.0);
    }
    for _ in 0..300 {
        run.tick(&world, |_, _| 1.0);
    }
    for (id, expected) in world.iter().enumerate() {
        assert_eq!(
            run.pair.b.receiver.entity(id),
            expected.as_ref(),
            "entity {id}"
        );
    }
    let counters = *run.pair.b.receiver.counters();
    assert_eq!(counters.unknown_baseline + counters.malformed, 0);
    assert!(counters.duplicates > 0);
    assert!(run.sender.stats().removals_sent > 0);
    let sent = run.pair.a.sizes.len();
    for _ in 0..60 {
        run.tick(&world, |_, _| 1.0);
    }
    assert_eq!(run.pair.a.sizes.len(), sent, "at rest nothing goes");
}

/// A state against a packet the receiver never got is refused (and its packet unacked).
#[test]
fn unknown_baseline_refused() {
    let config = EntityConfig {
        max_entities: 16,
        ..EntityConfig::default()
    };
    let mut server: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut client: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut sender = EntitySender::<Body>::new(config.clone()).unwrap();
    let mut receiver = EntityReceiver::<Body>::new(config.clone()).unwrap();
    let world: Vec<Option<Body>> = (0..16).map(|i| Some(body(i, 0))).collect();
    sender.send(0.0, &mut server, &world, |_, _| 1.0).unwrap();
    let d0 = server.poll_transmit(0.0).unwrap().to_vec();
    receiver.handle_datagram(0.0, &mut client, &d0).unwrap();
    let ack = client.poll_transmit(0.0).unwrap().to_vec();
    server.handle_datagram(0.0, &ack).unwrap();
    let moved: Vec<Option<Body>> = (0..16).map(|i| Some(body(i, 1))).collect();
    sender.send(0.1, &mut server, &moved, |_, _| 1.0).unwrap();
    assert_eq!(sender.stats().delta_sent, 16);
    let d1 = server.poll_transmit(0.1).unwrap().to_vec();
    let mut other: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut fresh = EntityReceiver::<Body>::new(config).unwrap();
    assert_eq!(
        fresh.handle_datagram(0.1, &mut other, &d1),
        Err(ReceiveError::SectionRefused)
    );
    assert_eq!(fresh.counters().unknown_baseline, 1);
    assert_eq!(fresh.entities().count(), 0);
    assert!(other.poll_transmit(0.1).is_none());
    receiver.handle_datagram(0.1, &mut client, &d1).unwrap();
    assert_eq!(receiver.entity(5), moved[5].as_ref());
}

/// The default connection settings, acking at once: these tests hand each packet over
/// and expect its ack in the same step (the default holds an ack up to 50 ms for a
/// packet of the receiver's own to carry it).
fn immediate_acks() -> ConnectionConfig {
    ConnectionConfig {
        ack_delay: 0.0,
        ..ConnectionConfig::default()
    }
}
