//! Bytes per second per client for 1,000 replicated moving entities: netser-bevy against
//! the same scene through bevy_replicon with bevy_replicon_renet (renet's netcode
//! transport), each a server `App` and a client `App` in one process over loopback UDP,
//! stepped at 60 frames a second of real time.
//!
//! ```sh
//! cargo run --release --manifest-path netser-bevy/compare/Cargo.toml
//! ```
//!
//! The bytes are counted the same way for both: a relay between the client and the server
//! counts every UDP payload byte the server sends to the client (the table adds 28 bytes of
//! IP and UDP headers per datagram). The client counts the entity updates it applies
//! (`Changed<Position>` on its remote entities), so the table shows what the bytes bought.
//!
//! The scene: 1,000 entities, each circling at about 2 m/s, all moving every frame; one
//! component, a position `[f32; 3]`. In netser-bevy it derives `NetSerialize` with
//! `#[net(delta)]` and a quantization of 1/128 m over ±256 m (what the examples use);
//! in bevy_replicon it derives serde's traits and goes through replicon's default
//! (postcard), as its quick start writes it. Both send every frame (replicon's tick in
//! `PostUpdate`).

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bevy::prelude::*;
use bevy::state::app::StatesPlugin;

/// Entities in the scene.
const ENTITIES: usize = 1000;
/// Frames a second.
const HZ: f64 = 60.0;
/// Seconds before measuring: connect, and the first copy of the world.
const WARM_UP: f64 = 2.0;
/// Seconds measured.
const MEASURE: f64 = 4.0;

/// Where entity `i` is at frame `frame`: a circle of its own.
fn position(i: usize, frame: u64) -> [f32; 3] {
    let t = frame as f32 / HZ as f32;
    let (cx, cz) = ((i % 32) as f32 * 8.0 - 128.0, (i / 32) as f32 * 8.0 - 128.0);
    let phase = t * 0.5 + i as f32;
    [cx + 4.0 * phase.cos(), 1.0, cz + 4.0 * phase.sin()]
}

/// Counts the UDP bytes between one client and the server.
struct Relay {
    front: UdpSocket,
    back: UdpSocket,
    client: Option<SocketAddr>,
    down_bytes: u64,
    down_datagrams: u64,
    buf: Vec<u8>,
}

impl Relay {
    fn new(server: SocketAddr) -> Self {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        front.set_nonblocking(true).unwrap();
        back.set_nonblocking(true).unwrap();
        Self {
            front,
            back,
            client: None,
            down_bytes: 0,
            down_datagrams: 0,
            buf: vec![0; 65_536],
        }
    }

    fn addr(&self) -> SocketAddr {
        self.front.local_addr().unwrap()
    }

    /// Forwards what waits each way.
    fn pump(&mut self) {
        while let Ok((n, from)) = self.front.recv_from(&mut self.buf) {
            self.client = Some(from);
            let _ = self.back.send(&self.buf[..n]);
        }
        while let Ok(n) = self.back.recv(&mut self.buf) {
            self.down_bytes += n as u64;
            self.down_datagrams += 1;
            if let Some(client) = self.client {
                let _ = self.front.send_to(&self.buf[..n], client);
            }
        }
    }
}

/// Entity updates the client applied.
#[derive(Resource, Default)]
struct Updates(u64);

/// One row of the table.
struct Row {
    name: String,
    bytes_per_second: f64,
    with_headers: f64,
    datagrams_per_second: f64,
    updates_per_second: f64,
    remote: usize,
}

/// Runs `server` and `client` at 60 frames a second through `relay`; `moving` is called
/// each frame with the frame number to move the server's entities; returns the row.
fn run(
    name: &str,
    server: &mut App,
    client: &mut App,
    relay: &mut Relay,
    remote: impl Fn(&mut App) -> usize,
) -> Row {
    let frame_time = Duration::from_secs_f64(1.0 / HZ);
    let mut next = Instant::now();
    let mut frame = 0u64;
    let mut step = |server: &mut App, client: &mut App, relay: &mut Relay| {
        server.world_mut().resource_mut::<Frame>().0 = frame;
        server.update();
        relay.pump();
        client.update();
        relay.pump();
        frame += 1;
        next += frame_time;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    };
    for _ in 0..(WARM_UP * HZ) as usize {
        step(server, client, relay);
    }
    let (bytes, datagrams) = (relay.down_bytes, relay.down_datagrams);
    let updates = client.world().resource::<Updates>().0;
    let start = Instant::now();
    for _ in 0..(MEASURE * HZ) as usize {
        step(server, client, relay);
    }
    let seconds = start.elapsed().as_secs_f64();
    let bytes = (relay.down_bytes - bytes) as f64;
    let datagrams = (relay.down_datagrams - datagrams) as f64;
    let updates = (client.world().resource::<Updates>().0 - updates) as f64;
    Row {
        name: name.to_owned(),
        bytes_per_second: bytes / seconds,
        with_headers: (bytes + 28.0 * datagrams) / seconds,
        datagrams_per_second: datagrams / seconds,
        updates_per_second: updates / seconds,
        remote: remote(client),
    }
}

/// The frame number, set before each server frame.
#[derive(Resource, Default)]
struct Frame(u64);

mod netser_side {
    use super::*;
    use netser::NetSerialize;
    use netser_bevy::ReplicationConfig;
    use netser_bevy::prelude::*;
    use netser_transport::netcode::{ConnectToken, generate_key};
    use netser_transport::snapshot::EntityConfig;
    use netser_transport::udp::{UdpClientConfig, UdpServerConfig};

    #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    pub struct Position(#[net(quantize(min = -256.0, max = 256.0, res = 0.0078125))] pub [f32; 3]);

    type Components = (Position,);

    fn moving(frame: Res<Frame>, mut q: Query<(&mut Position, &Index)>) {
        for (mut p, i) in &mut q {
            p.0 = position(i.0, frame.0);
        }
    }

    #[derive(Component)]
    struct Index(usize);

    fn count(q: Query<(), (With<Remote>, Changed<Position>)>, mut n: ResMut<Updates>) {
        n.0 += q.iter().count() as u64;
    }

    pub fn row(name: &str, entities: EntityConfig) -> Row {
        let key = generate_key().unwrap();
        let protocol = NetProtocol::<u8, u8, Components>::new();
        let config = ReplicationConfig::new(entities).unwrap();
        // The server's public address is the relay's, which clients reach it at.
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let server_addr = socket.local_addr().unwrap();
        drop(socket);
        let mut relay = Relay::new(server_addr);
        let server = NetServer::<u8, u8, Components>::bind(
            server_addr,
            &protocol,
            UdpServerConfig {
                public_addresses: vec![relay.addr()],
                ..UdpServerConfig::new(key)
            },
        )
        .unwrap();
        let mut server_app = App::new();
        server_app
            // The plugins run the transport on the frame's real time.
            .add_plugins(bevy::time::TimePlugin)
            .add_plugins(
                NetServerPlugin::<u8, u8, Components>::default().with_replication(config.clone()),
            )
            .init_resource::<Frame>()
            .insert_resource(server)
            .add_systems(Update, moving);
        for i in 0..ENTITIES {
            server_app
                .world_mut()
                .spawn((Replicated, Position(position(i, 0)), Index(i)));
        }
        let params = protocol.token_params(vec![relay.addr()], SystemTime::now());
        let token = ConnectToken::generate(&params, &key).unwrap();
        let client =
            NetClient::<u8, u8, Components>::connect(token, &protocol, UdpClientConfig::default())
                .unwrap();
        let mut client_app = App::new();
        client_app
            .add_plugins(bevy::time::TimePlugin)
            .add_plugins(NetClientPlugin::<u8, u8, Components>::default().with_replication(config))
            .init_resource::<Updates>()
            .insert_resource(client)
            .add_systems(Update, count);
        run(name, &mut server_app, &mut client_app, &mut relay, |app| {
            app.world().resource::<ServerEntityMap>().len()
        })
    }
}

mod replicon_side {
    use super::*;
    use bevy_replicon::prelude::*;
    use bevy_replicon_renet::netcode::{
        ClientAuthentication, NetcodeClientTransport, NetcodeServerTransport, ServerAuthentication,
        ServerConfig,
    };
    use bevy_replicon_renet::renet::ConnectionConfig;
    use bevy_replicon_renet::{RenetChannelsExt, RepliconRenetPlugins};
    use bevy_replicon_renet::{RenetClient, RenetServer};
    use serde::{Deserialize, Serialize};

    #[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Position(pub [f32; 3]);

    #[derive(Component)]
    struct Index(usize);

    fn moving(frame: Res<Frame>, mut q: Query<(&mut Position, &Index)>) {
        for (mut p, i) in &mut q {
            p.0 = position(i.0, frame.0);
        }
    }

    fn count(q: Query<(), (With<Remote>, Changed<Position>)>, mut n: ResMut<Updates>) {
        n.0 += q.iter().count() as u64;
    }

    fn app() -> App {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            StatesPlugin,
            RepliconPlugins.set(ServerPlugin::new(PostUpdate)),
            RepliconRenetPlugins,
        ))
        .replicate::<Position>()
        .finish();
        app
    }

    pub fn row(name: &str) -> Row {
        let mut server_app = app();
        let mut client_app = app();
        let channels = server_app.world().resource::<RepliconChannels>();
        let connection = ConnectionConfig {
            server_channels_config: channels.server_configs(),
            client_channels_config: channels.client_configs(),
            ..Default::default()
        };
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let server_addr = socket.local_addr().unwrap();
        let mut relay = Relay::new(server_addr);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let transport = NetcodeServerTransport::new(
            ServerConfig {
                current_time: now,
                max_clients: 1,
                protocol_id: 7,
                public_addresses: vec![relay.addr()],
                authentication: ServerAuthentication::Unsecure,
            },
            socket,
        )
        .unwrap();
        server_app
            .insert_resource(RenetServer::new(connection.clone()))
            .insert_resource(transport)
            .init_resource::<Frame>()
            .add_systems(Update, moving);
        for i in 0..ENTITIES {
            server_app
                .world_mut()
                .spawn((Replicated, Position(position(i, 0)), Index(i)));
        }
        let client_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let authentication = ClientAuthentication::Unsecure {
            client_id: 1,
            protocol_id: 7,
            server_addr: relay.addr(),
            user_data: None,
        };
        let client_transport =
            NetcodeClientTransport::new(now, authentication, client_socket).unwrap();
        client_app
            .insert_resource(RenetClient::new(connection))
            .insert_resource(client_transport)
            .init_resource::<Updates>()
            .add_systems(Update, count);
        run(name, &mut server_app, &mut client_app, &mut relay, |app| {
            let mut q = app.world_mut().query_filtered::<(), With<Remote>>();
            q.iter(app.world()).count()
        })
    }
}

fn main() {
    use netser_transport::snapshot::EntityConfig;
    let rows = [
        netser_side::row(
            "netser-bevy, default budget (1,200 B a packet)",
            EntityConfig::default(),
        ),
        netser_side::row(
            "netser-bevy, 256 kbit/s budget",
            EntityConfig::default().with_bandwidth(256_000.0, HZ),
        ),
        replicon_side::row("bevy_replicon 0.44 + bevy_replicon_renet 0.20 (postcard)"),
    ];
    println!(
        "{ENTITIES} entities moving, one client, {HZ} frames a second, {MEASURE} s measured after {WARM_UP} s\n"
    );
    println!(
        "| stack | bytes/s to the client (UDP payload) | with IP+UDP headers | kbit/s with headers | datagrams/s | entity updates/s applied | bytes per update | entities on the client |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.1} | {:.0} | {:.2} | {} |",
            r.name,
            r.bytes_per_second,
            r.with_headers,
            r.with_headers * 8.0 / 1000.0,
            r.datagrams_per_second,
            r.updates_per_second,
            r.bytes_per_second / r.updates_per_second.max(1.0),
            r.remote,
        );
    }
}
