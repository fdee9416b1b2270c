//! A server `App` and client `App`s in one process, stepped frame by frame.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_time::TimePlugin;
use netser::NetSerialize;
use netser_bevy::prelude::*;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{ConnectToken, Key, TokenParams, generate_key};
use netser_transport::udp::{UdpClientConfig, UdpConfig, UdpServerConfig};

/// Channel 0: reliable-ordered.
pub const RELIABLE_ORDERED: u8 = 0;
/// Channel 1: reliable-unordered.
pub const RELIABLE_UNORDERED: u8 = 1;
/// Channel 2: unreliable-sequenced.
pub const SEQUENCED: u8 = 2;
/// Channel 3: unreliable.
pub const UNRELIABLE: u8 = 3;

/// Most frames a test waits for something (about 10 s at 1 ms a frame and more).
const MAX_FRAMES: usize = 10_000;

/// What clients send.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum Up {
    /// A numbered message.
    Number(u32),
    /// A line of text.
    Text(#[net(max_len = 64)] String),
}

/// What the server sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum Down {
    /// A numbered message.
    Number(u32),
    /// A line of text.
    Text(#[net(max_len = 64)] String),
    /// Too large for a packet: goes as a block.
    Block(#[net(max_len = 65536)] Vec<u8>),
}

pub type Server = NetServer<Down, Up>;
pub type Client = NetClient<Up, Down>;

/// The tests' protocol: the four channel kinds of [`connection_config`].
pub fn protocol() -> NetProtocol<Up, Down> {
    NetProtocol::<Up, Down>::with_connection(connection_config())
}

/// The four channel kinds, in the order of the constants above.
pub fn connection_config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::reliable_unordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

/// Every Bevy message of type `M` the app has seen, kept by a system in `Update`.
#[derive(Resource)]
pub struct Log<M>(pub Vec<M>);

impl<M> Default for Log<M> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

fn collect<M: Message + Clone>(mut reader: MessageReader<M>, mut log: ResMut<Log<M>>) {
    log.0.extend(reader.read().cloned());
}

/// Who left the server and why, in order.
pub fn left(server: &App) -> Vec<(ClientId, DisconnectReason)> {
    logged::<ClientDisconnected>(server)
        .iter()
        .map(|d| (d.client_id, d.reason))
        .collect()
}

fn log<M: Message + Clone>(app: &mut App) {
    app.init_resource::<Log<M>>()
        .add_systems(Update, collect::<M>);
}

/// The messages of type `M` an app has seen so far.
pub fn logged<M: Message + Clone>(app: &App) -> &[M] {
    &app.world().resource::<Log<M>>().0
}

/// A server app and its client apps.
pub struct Game {
    pub server: App,
    pub clients: Vec<App>,
    /// Built once, as a game does: the server's, the tokens' and every client's.
    protocol: NetProtocol<Up, Down>,
    key: Key,
    addr: SocketAddr,
    udp: UdpConfig,
}

impl Game {
    /// A server and `clients` clients (ids 1, 2, ...), every socket with `udp`'s settings
    /// (a simulator, for instance); each simulator gets its own seed.
    pub fn new(clients: u64, udp: UdpConfig) -> Self {
        let key = generate_key().unwrap();
        let protocol = protocol();
        let config = UdpServerConfig {
            udp: seeded(&udp, 1000),
            ..UdpServerConfig::new(key)
        };
        let server = Server::bind("127.0.0.1:0", &protocol, config).unwrap();
        let addr = server.local_addr();
        let mut app = App::new();
        // The plugins run the transport on the frame's real time.
        app.add_plugins(TimePlugin);
        app.add_plugins(NetServerPlugin::<Down, Up>::with_shutdown_timeout(
            Duration::from_millis(100),
        ))
        .insert_resource(server);
        log::<ClientConnected>(&mut app);
        log::<ClientDisconnected>(&mut app);
        log::<FromClient<Up>>(&mut app);
        log::<BlockToClient>(&mut app);
        let mut game = Self {
            server: app,
            clients: Vec::new(),
            protocol,
            key,
            addr,
            udp,
        };
        for client_id in 1..=clients {
            let app = game.client_app(client_id);
            game.clients.push(app);
        }
        game
    }

    /// A new client resource with a fresh token for `client_id`.
    pub fn client(&self, client_id: u64) -> Client {
        let params = TokenParams {
            client_id,
            ..self
                .protocol
                .token_params(vec![self.addr], SystemTime::now())
        };
        let token = ConnectToken::generate(&params, &self.key).unwrap();
        let config = UdpClientConfig {
            udp: seeded(&self.udp, client_id),
        };
        Client::connect(token, &self.protocol, config).unwrap()
    }

    /// A client app connecting as `client_id`.
    pub fn client_app(&self, client_id: u64) -> App {
        let mut app = App::new();
        app.add_plugins(TimePlugin)
            .add_plugins(NetClientPlugin::<Up, Down>::default())
            .insert_resource(self.client(client_id));
        log::<ConnectedToServer>(&mut app);
        log::<DisconnectedFromServer>(&mut app);
        log::<FromServer<Down>>(&mut app);
        log::<BlockFromServer>(&mut app);
        app
    }

    /// One frame of every app.
    pub fn frame(&mut self) {
        self.server.update();
        for client in &mut self.clients {
            client.update();
        }
        std::thread::sleep(Duration::from_millis(1));
    }

    /// Runs frames until `done` holds; panics naming `what` if it never does.
    pub fn run_until(&mut self, what: &str, mut done: impl FnMut(&Self) -> bool) {
        for _ in 0..MAX_FRAMES {
            if done(self) {
                return;
            }
            self.frame();
        }
        panic!("gave up waiting for {what}");
    }

    /// Runs until every client is connected and the server saw them all.
    pub fn connect_all(&mut self) {
        let n = self.clients.len();
        self.run_until("every client connected", |g| {
            g.server.world().resource::<ServerStats>().clients.len() == n
                && g.clients
                    .iter()
                    .all(|c| !logged::<ConnectedToServer>(c).is_empty())
        });
    }

    /// The server resource.
    pub fn server_mut(&mut self) -> Mut<'_, Server> {
        self.server.world_mut().resource_mut::<Server>()
    }

    /// Client `i`'s resource (index into `clients`).
    pub fn client_mut(&mut self, i: usize) -> Mut<'_, Client> {
        self.clients[i].world_mut().resource_mut::<Client>()
    }
}

/// `udp` with its simulators' seeds offset by `salt`, so that each socket loses other
/// packets.
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
