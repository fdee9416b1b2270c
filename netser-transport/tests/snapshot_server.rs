//! Snapshots and entity sets through the sans-IO game `Server` and `Client` (netcode,
//! encryption and all): per client and to all, the newest snapshot on the client,
//! statistics, encodings shared between clients, and entity sets.

mod snapshot_support;

use netser_transport::netcode::{generate_key, Client, ConnectToken, Server, TokenParams};
use netser_transport::simulator::{SimulatorConfig, Star};
use netser_transport::snapshot::{EntityConfig, SendOutcome};
use snapshot_support::{Body, World, WorldGen, SLOTS};

/// The protocol these tests speak: `u8` messages each way, snapshots of `S`, the default
/// connection settings.
fn protocol<S: netser::NetDelta>() -> netser_transport::netcode::Protocol<u8, u8, S> {
    netser_transport::netcode::Protocol::with_connection(immediate_acks())
}

const NOW: f64 = 1_700_000_000.0;

type GameStar<S> = Star<Server<u8, u8, S>, Client<u8, u8, S>>;

/// The game server and its clients, datagrams arriving at once.
struct Game<S> {
    star: GameStar<S>,
}

impl<S: netser::NetDelta + PartialEq + Clone> Game<S> {
    fn new(clients: u64) -> Self {
        let key = generate_key().unwrap();
        let server_addr = GameStar::<S>::SERVER_ADDR;
        let protocol = protocol::<S>();
        let config = protocol.server_config(key, vec![server_addr]);
        let server = Server::new(0.0, std::time::UNIX_EPOCH, config, &protocol).unwrap();
        let mut star = Star::new(server, SimulatorConfig::default());
        star.now = NOW;
        for i in 0..clients {
            let params = TokenParams {
                client_id: i + 1,
                ..TokenParams::new(protocol.id(), vec![server_addr], NOW as u64)
            };
            let token = ConnectToken::generate(&params, &key).unwrap();
            star.add_client(Client::new(NOW, token, &protocol).unwrap());
        }
        let mut game = Self { star };
        while game.star.server.connected_clients() < game.star.clients.len() {
            game.step(|_| {});
            assert!(game.star.now < NOW + 5.0, "connected");
        }
        game
    }

    /// One frame: clients send, the server receives, `send` runs, the server sends, the
    /// clients receive. Datagrams arrive at once.
    fn step(&mut self, send: impl FnOnce(&mut Self)) {
        self.star.transmit_clients();
        self.star.deliver();
        send(self);
        self.star.transmit_server();
        self.star.deliver();
        self.star.now += 1.0 / 60.0;
    }
}

/// Every client gets every snapshot (the server's world of that tick), delta-encoded once
/// acked; clients holding the same baseline share one encoding; statistics are there.
#[test]
fn snapshots_to_all() {
    let mut game: Game<World> = Game::new(3);
    let mut gen = WorldGen::new(5);
    for _ in 0..120 {
        let world = gen.step().clone();
        game.step(|g| {
            g.star.server.push_snapshot(world);
            g.star.server.send_snapshot_to_all(g.star.now).unwrap();
        });
        for client in &mut game.star.clients {
            let (_, decoded) = client.poll_snapshot().expect("a new snapshot every frame");
            assert_eq!(decoded, &gen.world);
        }
    }
    let history = game.star.server.snapshot_history().counters();
    // Three clients acking at the same pace share nearly every encoding.
    assert!(history.encodings_shared >= 2 * 115, "{history:?}");
    for id in 1..=3 {
        let stats = game.star.server.snapshot_stats(id).unwrap();
        assert_eq!(stats.sent, 120);
        assert_eq!(stats.absolute_sent, 1, "{stats:?}");
        assert_eq!(stats.last_baseline_age, Some(1));
        assert!(stats.bits_per_snapshot() < 1_000.0);
        assert!(game.star.server.snapshot_memory_bound(id).unwrap() > 0);
    }
    let counters = game.star.clients[0].snapshot_counters();
    assert_eq!(counters.decoded, 120);
    assert_eq!(counters.unknown_baseline, 0);
}

/// A snapshot to one client only; an unknown client is refused.
#[test]
fn snapshot_per_client() {
    let mut game: Game<World> = Game::new(2);
    let world = WorldGen::new(1).step().clone();
    let mut outcome = None;
    game.step(|g| {
        g.star.server.push_snapshot(world.clone());
        outcome = Some(g.star.server.send_snapshot(g.star.now, 2).unwrap());
        assert!(g.star.server.send_snapshot(g.star.now, 9).is_err());
    });
    assert!(matches!(
        outcome,
        Some(SendOutcome::Sent { baseline: None, .. })
    ));
    assert_eq!(game.star.clients[1].newest_snapshot().unwrap().1, &world);
    assert_eq!(game.star.clients[0].newest_snapshot(), None);
}

/// Entity sets: each client's accumulator fills its packets to the budget; the clients
/// converge on the world.
#[test]
fn entities_to_all() {
    let mut game: Game<Body> = Game::new(2);
    let config = EntityConfig {
        max_entities: SLOTS,
        packet_budget: 120,
        ..EntityConfig::default()
    };
    game.star.server.set_entity_config(config.clone()).unwrap();
    for client in &mut game.star.clients {
        client.set_entity_config(config.clone()).unwrap();
    }
    let mut gen = WorldGen::new(8);
    for _ in 0..300 {
        let world = gen.step().clone();
        game.step(|g| {
            g.star
                .server
                .send_entities_to_all(g.star.now, &world.bodies, |client, id, _| {
                    // Client 1 cares about low ids, client 2 about high ones.
                    if (client == 1) == (id < SLOTS / 2) {
                        10.0
                    } else {
                        1.0
                    }
                })
                .unwrap();
        });
    }
    let still = gen.world.clone();
    for _ in 0..120 {
        game.step(|g| {
            g.star
                .server
                .send_entities_to_all(g.star.now, &still.bodies, |_, _, _| 1.0)
                .unwrap();
        });
    }
    for client in &game.star.clients {
        for (id, expected) in still.bodies.iter().enumerate() {
            assert_eq!(client.entity(id), expected.as_ref(), "entity {id}");
        }
        assert_eq!(client.entity_counters().unwrap().unknown_baseline, 0);
    }
    let stats = game.star.server.entity_stats(1).unwrap();
    assert_eq!(stats.pending, 0);
    assert!(
        stats.delta_sent > 0 && stats.packets_sent > 100,
        "{stats:?}"
    );
}

/// The default connection settings, acking at once: these tests hand each packet over
/// and expect its ack in the same step (the default holds an ack up to 50 ms for a
/// packet of the receiver's own to carry it).
fn immediate_acks() -> netser_transport::connection::ConnectionConfig {
    netser_transport::connection::ConnectionConfig {
        ack_delay: 0.0,
        ..netser_transport::connection::ConnectionConfig::default()
    }
}
