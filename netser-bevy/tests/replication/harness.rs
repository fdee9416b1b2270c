//! A server `App` replicating to client `App`s in one process, stepped frame by frame.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use bevy_app::App;
use bevy_ecs::prelude::*;
use netser::{NetSerialize, ReadStream, WriteStream};
use netser_bevy::ReplicationConfig;
use netser_bevy::prelude::*;
use netser_transport::netcode::{ConnectToken, Key, TokenParams, generate_key};
use netser_transport::snapshot::EntityConfig;
use netser_transport::udp::{UdpClientConfig, UdpConfig, UdpServerConfig};

/// Most frames a test waits for something.
const MAX_FRAMES: usize = 20_000;

/// Metres, at 1/100 m.
#[derive(Component, NetSerialize, Debug, Clone, Copy, PartialEq)]
#[net(delta)]
pub struct Position(#[net(quantize(min = -1000.0, max = 1000.0, res = 0.01))] pub [f32; 2]);

/// Hit points.
#[derive(Component, NetSerialize, Debug, Clone, Copy, PartialEq)]
#[net(delta)]
pub struct Health(#[net(range = 0..=100)] pub u8);

/// Server-side only: not in the replicated set, so never sent.
#[derive(Component, NetSerialize, Debug, Clone, Copy, PartialEq)]
#[net(delta)]
pub struct Secret(pub u32);

/// What is replicated.
pub type Components = (Position, Health);
pub type Server = NetServer<u8, u8, Components>;
pub type Client = NetClient<u8, u8, Components>;
/// The protocol of the server and its clients, with the replicated components.
pub type Protocol = NetProtocol<u8, u8, Components>;

impl Position {
    /// The position as the wire carries it (what a client decodes), so that the server's
    /// and the clients' compare equal.
    pub fn quantized(xy: [f32; 2]) -> Self {
        let mut buf = [0u8; 16];
        let mut w = WriteStream::new(&mut buf);
        Self(xy).encode(&mut w).unwrap();
        let len = w.finish();
        Self::decode(&mut ReadStream::new(&buf[..len])).unwrap()
    }
}

/// A server and its clients. Their apps have no `TimePlugin`: the plugins run the transport
/// on its own clock (the plugins' tests run it on Bevy's).
pub struct Game {
    pub server: App,
    pub clients: Vec<App>,
    /// The server's, the tokens' and the clients'.
    pub protocol: Protocol,
    key: Key,
    addr: SocketAddr,
    udp: UdpConfig,
    config: ReplicationConfig,
}

impl Game {
    /// A server and `clients` clients (ids 1, 2, ...), with `max_entities` ids and every
    /// socket with `udp`'s settings (each simulator seeded on its own).
    pub fn new(clients: u64, max_entities: usize, udp: UdpConfig) -> Self {
        let entities = EntityConfig {
            max_entities,
            ..EntityConfig::default()
        };
        Self::with_config(clients, entities, udp)
    }

    /// As [`Game::new`], with entity sets set by `entities`.
    pub fn with_config(clients: u64, entities: EntityConfig, udp: UdpConfig) -> Self {
        let key = generate_key().unwrap();
        let config = ReplicationConfig::new(entities).unwrap();
        let protocol = Protocol::new();
        let server = Server::bind(
            "127.0.0.1:0",
            &protocol,
            UdpServerConfig {
                udp: seeded(&udp, 1000),
                ..UdpServerConfig::new(key)
            },
        )
        .unwrap();
        let addr = server.local_addr();
        let mut app = App::new();
        app.add_plugins(
            NetServerPlugin::<u8, u8, Components>::with_shutdown_timeout(Duration::ZERO)
                .with_replication(config.clone()),
        )
        .insert_resource(server);
        let mut game = Self {
            server: app,
            clients: Vec::new(),
            protocol,
            key,
            addr,
            udp,
            config,
        };
        for client_id in 1..=clients {
            let mut app = App::new();
            app.add_plugins(
                NetClientPlugin::<u8, u8, Components>::with_shutdown_timeout(Duration::ZERO)
                    .with_replication(game.config.clone()),
            )
            .insert_resource(game.client(client_id));
            game.clients.push(app);
        }
        game
    }

    /// A fresh connect token for `client_id`, as the game's backend issues it: for the
    /// server's protocol.
    pub fn token(&self, client_id: u64) -> ConnectToken {
        let params = TokenParams {
            client_id,
            ..self
                .protocol
                .token_params(vec![self.addr], SystemTime::now())
        };
        ConnectToken::generate(&params, &self.key).unwrap()
    }

    /// A new client resource with a fresh token for `client_id`.
    pub fn client(&self, client_id: u64) -> Client {
        let config = UdpClientConfig {
            udp: seeded(&self.udp, client_id),
        };
        Client::connect(self.token(client_id), &self.protocol, config).unwrap()
    }

    /// One frame of every app.
    pub fn frame(&mut self) {
        self.server.update();
        for client in &mut self.clients {
            client.update();
        }
        std::thread::sleep(Duration::from_micros(500));
    }

    /// Runs frames until `done` holds; panics naming `what` if it never does.
    pub fn run_until(&mut self, what: &str, mut done: impl FnMut(&mut Self) -> bool) {
        for _ in 0..MAX_FRAMES {
            if done(self) {
                return;
            }
            self.frame();
        }
        panic!("gave up waiting for {what}");
    }

    /// Runs until every client is connected.
    pub fn connect_all(&mut self) {
        let n = self.clients.len();
        self.run_until("every client connected", |g| {
            g.server.world().resource::<ServerStats>().clients.len() == n
                && g.clients.iter().all(|c| {
                    c.world().resource::<ClientStats>().state == Some(ClientState::Connected)
                })
        });
    }

    /// Spawns a replicated entity on the server.
    pub fn spawn(&mut self, bundle: impl Bundle) -> Entity {
        self.server.world_mut().spawn((Replicated, bundle)).id()
    }

    /// Runs until client `i` holds exactly `expected`; panics with the difference if it
    /// never does.
    pub fn run_until_client_holds(&mut self, i: usize, expected: &World3) {
        for _ in 0..MAX_FRAMES {
            if &client_world(&mut self.clients[i]) == expected {
                return;
            }
            self.frame();
        }
        let held = client_world(&mut self.clients[i]);
        let missing = expected.keys().filter(|e| !held.contains_key(e)).count();
        let extra = held.keys().filter(|e| !expected.contains_key(e)).count();
        panic!(
            "client {i} never converged: {} held, {} expected, {missing} missing, {extra} extra",
            held.len(),
            expected.len()
        );
    }
}

/// Replicated components by server entity.
pub type World3 = BTreeMap<Entity, (Option<Position>, Option<Health>)>;

/// The server's replicated entities and their components.
pub fn server_world(app: &mut App) -> World3 {
    let mut q = app
        .world_mut()
        .query_filtered::<(Entity, Option<&Position>, Option<&Health>), With<Replicated>>();
    q.iter(app.world())
        .map(|(e, p, h)| (e, (p.copied(), h.copied())))
        .collect()
}

/// The server's replicated entities client `client_id` sees.
pub fn visible_world(app: &mut App, client_id: u64) -> World3 {
    let visibility = app.world().resource::<ClientVisibility>().clone();
    server_world(app)
        .into_iter()
        .filter(|(e, _)| visibility.is_visible(client_id, *e))
        .collect()
}

/// A client's remote entities by the server entity they stand for; checks that the map
/// agrees both ways with every `Remote`.
pub fn client_world(app: &mut App) -> World3 {
    let mut q = app
        .world_mut()
        .query::<(Entity, &Remote, Option<&Position>, Option<&Health>)>();
    let map = app.world().resource::<ServerEntityMap>();
    let mut world = World3::new();
    for (client, remote, p, h) in q.iter(app.world()) {
        assert_eq!(map.client_entity(remote.server_entity), Some(client));
        assert_eq!(map.server_entity(client), Some(remote.server_entity));
        world.insert(remote.server_entity, (p.copied(), h.copied()));
    }
    assert_eq!(
        map.len(),
        world.len(),
        "the map holds exactly the remote entities"
    );
    world
}

/// `udp` with its simulators' seeds offset by `salt`.
fn seeded(udp: &UdpConfig, salt: u64) -> UdpConfig {
    let mut udp = udp.clone();
    for sim in [&mut udp.send_simulator, &mut udp.receive_simulator]
        .into_iter()
        .flatten()
    {
        sim.seed = sim.seed.wrapping_add(salt);
    }
    udp
}
