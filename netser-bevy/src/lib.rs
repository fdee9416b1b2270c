//! netser-bevy: the netser transport in a Bevy app.
//!
//! Two plugins, generic over the game's message types (any types deriving
//! `NetSerialize`):
//!
//! * [`NetServerPlugin<Out, In>`](NetServerPlugin) runs a [`NetServer`] resource, a
//!   [`UdpServer`](netser_transport::udp::UdpServer) on a socket;
//! * [`NetClientPlugin<Out, In>`](NetClientPlugin) runs a [`NetClient`] resource, a
//!   [`UdpClient`](netser_transport::udp::UdpClient) that connects with a connect token.
//!
//! `Out` is what this side sends and `In` what it receives, as in the transport: a server
//! of `NetServerPlugin<ServerMessage, ClientMessage>` talks to clients of
//! `NetClientPlugin<ClientMessage, ServerMessage>`.
//!
//! Each frame, in [`PreUpdate`](bevy_app::PreUpdate) (set [`NetReceive`]), the plugin
//! reads the datagrams that arrived and writes what happened as Bevy messages:
//! [`ClientConnected`], [`ClientDisconnected`], [`FromClient`] and [`BlockToClient`] on the
//! server; [`ConnectedToServer`], [`DisconnectedFromServer`], [`FromServer`] and
//! [`BlockFromServer`] on the client. The game's systems in `Update` read them with a
//! `MessageReader` and send with the resource's `send_message` / `broadcast_message`. In
//! [`PostUpdate`](bevy_app::PostUpdate) (set [`NetSend`]) the plugin advances the
//! transport's timers and sends the packets. [`ServerStats`] and [`ClientStats`] hold what
//! a game shows (each client's round-trip time and loss, socket counters), and the run
//! conditions [`server_running`], [`client_connected`], [`client_connecting`],
//! [`client_disconnected`], [`client_just_connected`] and [`client_just_disconnected`]
//! follow the connection. On [`AppExit`](bevy_app::AppExit) each side waits (at most a
//! second, by default) for its peers to ack what it sent, then tells them it leaves.
//!
//! Nothing here renders: the crate depends on `bevy_app` and `bevy_ecs` without their
//! default features, so a dedicated server builds no renderer.
//!
//! A server and a client in one app, over loopback (a listen server; a dedicated server
//! adds only the server plugin, a client only the client plugin):
//!
//! ```
//! use bevy_app::{App, Update};
//! use bevy_ecs::prelude::*;
//! use netser::NetSerialize;
//! use netser_bevy::prelude::*;
//! use netser_transport::netcode::{protocol_id, ConnectToken, TokenParams};
//! use netser_transport::udp::{UdpClientConfig, UdpServerConfig};
//!
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! enum ToServer {
//!     Hello(#[net(range = 0..=1000)] u16),
//! }
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! enum ToClient {
//!     Welcome(#[net(range = 0..=1000)] u16),
//! }
//!
//! // The server answers every hello.
//! fn answer(mut hellos: MessageReader<FromClient<ToServer>>, mut server: ResMut<NetServer<ToClient, ToServer>>) {
//!     for hello in hellos.read() {
//!         let ToServer::Hello(n) = hello.message;
//!         server.send_message(hello.client_id, 0, &ToClient::Welcome(n + 1)).unwrap();
//!     }
//! }
//! // The client says hello once connected.
//! fn greet(mut connected: MessageReader<ConnectedToServer>, mut client: ResMut<NetClient<ToServer, ToClient>>) {
//!     for _ in connected.read() {
//!         client.send_message(0, &ToServer::Hello(41)).unwrap();
//!     }
//! }
//! #[derive(Resource, Default)]
//! struct Answer(Option<u16>);
//! fn read(mut welcomes: MessageReader<FromServer<ToClient>>, mut answer: ResMut<Answer>) {
//!     for welcome in welcomes.read() {
//!         let ToClient::Welcome(n) = welcome.message;
//!         answer.0 = Some(n);
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The server's key; in a real game the backend holds it too and issues the tokens.
//! let key = netser_transport::netcode::generate_key()?;
//! let protocol = protocol_id::<ToServer, ToClient>();
//! let server = NetServer::<ToClient, ToServer>::bind("127.0.0.1:0", UdpServerConfig::new(protocol, key))?;
//! let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
//! let params = TokenParams { client_id: 7, ..TokenParams::new(protocol, vec![server.local_addr()], now) };
//! let client = NetClient::<ToServer, ToClient>::connect(ConnectToken::generate(&params, &key)?, UdpClientConfig::default())?;
//!
//! let mut app = App::new();
//! app.add_plugins((NetServerPlugin::<ToClient, ToServer>::default(), NetClientPlugin::<ToServer, ToClient>::default()))
//!     .insert_resource(server)
//!     .insert_resource(client)
//!     .init_resource::<Answer>()
//!     .add_systems(Update, (answer.run_if(server_running), greet, read));
//! for _ in 0..2000 {
//!     app.update();
//!     if app.world().resource::<Answer>().0.is_some() {
//!         break;
//!     }
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! assert_eq!(app.world().resource::<Answer>().0, Some(42));
//! assert_eq!(app.world().resource::<ServerStats>().clients.len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! # Time
//!
//! The transport keeps its own monotonic clock on the Unix scale (connect tokens expire in
//! Unix seconds), read when the plugin's systems call it; the plugin needs no
//! `bevy_time`. Frame rate is the game's: a headless server runs its `App` in a loop of
//! its choosing (the examples use a fixed sleep between frames).
//!
//! # Replication
//!
//! Components registered with both plugins are replicated from the server to its clients:
//! give the set of them, a tuple, as the plugins' third type parameter (both sides the
//! same), mark the server's entities to send with [`Replicated`], and the clients spawn,
//! update and despawn them. Each component derives `NetSerialize` with `#[net(delta)]`,
//! `PartialEq` and `Clone`; a component not in the set is never sent. Under the hood each
//! client has an entity sender of the transport ([`EntitySender`](netser_transport::snapshot::EntitySender)):
//! every entity that changed accumulates priority, each frame one packet is filled to the
//! byte budget in that order, and each entity goes against the last state of it the client
//! acked. [`ClientVisibility`] hides entities per client; [`ServerEntityMap`] maps the
//! server's entities to the client's and back. See [`replication`] for the details and
//! the bounds.
//!
//! ```
//! use bevy_app::{App, Startup, Update};
//! use bevy_ecs::prelude::*;
//! use netser::NetSerialize;
//! use netser_bevy::prelude::*;
//! use netser_transport::netcode::{ConnectToken, TokenParams};
//! use netser_transport::udp::{UdpClientConfig, UdpServerConfig};
//!
//! #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
//! #[net(delta)]
//! struct Position(#[net(quantize(min = -512.0, max = 512.0, res = 0.01))] [f32; 2]);
//!
//! /// Server-side only: never sent, as it is not in the set.
//! #[derive(Component)]
//! struct Brain;
//!
//! // What is replicated, one type for both sides.
//! type Replicated = (Position,);
//! type Server = NetServer<u8, u8, Replicated>;
//! type Client = NetClient<u8, u8, Replicated>;
//!
//! fn spawn(mut commands: Commands) {
//!     commands.spawn((netser_bevy::Replicated, Position([1.0, 2.0]), Brain));
//! }
//! fn walk(mut positions: Query<&mut Position, With<netser_bevy::Replicated>>) {
//!     for mut p in &mut positions {
//!         p.0[0] = (p.0[0] + 0.25).min(10.0);
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let key = netser_transport::netcode::generate_key()?;
//! let protocol = netser_transport::netcode::protocol_id::<u8, u8>();
//! let server = Server::bind("127.0.0.1:0", UdpServerConfig::new(protocol, key))?;
//! let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
//! let token = ConnectToken::generate(&TokenParams::new(protocol, vec![server.local_addr()], now), &key)?;
//! let client = Client::connect(token, UdpClientConfig::default())?;
//!
//! let mut server_app = App::new();
//! server_app
//!     .add_plugins(NetServerPlugin::<u8, u8, Replicated>::default())
//!     .insert_resource(server)
//!     .add_systems(Startup, spawn)
//!     .add_systems(Update, walk);
//! let mut client_app = App::new();
//! client_app.add_plugins(NetClientPlugin::<u8, u8, Replicated>::default()).insert_resource(client);
//!
//! let arrived = |app: &mut App| {
//!     let mut query = app.world_mut().query_filtered::<&Position, With<Remote>>();
//!     query.iter(app.world()).next().cloned()
//! };
//! for _ in 0..5000 {
//!     server_app.update();
//!     client_app.update();
//!     if arrived(&mut client_app) == Some(Position([10.0, 2.0])) {
//!         break;
//!     }
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! assert_eq!(arrived(&mut client_app), Some(Position([10.0, 2.0])));
//! // The client's entity knows the server's; `Brain` stayed on the server.
//! let mut remote = client_app.world_mut().query_filtered::<Entity, With<Brain>>();
//! assert_eq!(remote.iter(client_app.world()).count(), 0);
//! assert_eq!(client_app.world().resource::<ServerEntityMap>().len(), 1);
//! # Ok(())
//! # }
//! ```

mod client;
pub mod replication;
mod server;

pub use client::{
    BlockFromServer, ClientStats, ConnectedToServer, DisconnectedFromServer, FromServer, NetClient,
    NetClientPlugin, client_connected, client_connecting, client_disconnected,
    client_just_connected, client_just_disconnected,
};
pub use replication::{
    ClientReplicationStats, ClientVisibility, ComponentSet, EntityState, Remote, Replicated,
    ReplicatedComponent, ReplicationConfig, ReplicationPriority, ReplicationStats,
    ReplicationSystems, ServerEntityMap, VisibilityPolicy,
};
pub use server::{
    BlockToClient, ClientConnected, ClientDisconnected, ClientNetwork, FromClient, NetServer,
    NetServerPlugin, ServerStats, server_running,
};

use bevy_ecs::schedule::{IntoScheduleConfigs, SystemSet};
use netser::NetSerialize;

/// What a message type needs to go through the plugins: `NetSerialize`, and what Bevy asks
/// of a message (`Send + Sync + 'static`). Implemented for every such type.
///
/// ```
/// use netser::NetSerialize;
/// use netser_bevy::NetMessage;
///
/// #[derive(NetSerialize)]
/// struct Chat {
///     #[net(max_len = 64)]
///     text: String,
/// }
/// fn takes<M: NetMessage>() {}
/// takes::<Chat>();
/// ```
pub trait NetMessage: NetSerialize + Send + Sync + 'static {}

impl<T: NetSerialize + Send + Sync + 'static> NetMessage for T {}

/// The system set in `PreUpdate` where the plugins read the socket and write the
/// connection and message events. Order a system `.after(NetReceive)` in `PreUpdate` to
/// see this frame's events there.
///
/// ```
/// use bevy_app::{App, PreUpdate};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::NetReceive;
///
/// fn apply_snapshots() {}
/// App::new().add_systems(PreUpdate, apply_snapshots.after(NetReceive));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetReceive;

/// The system set in `PostUpdate` where the plugins advance the transport's timers and
/// send the frame's packets. Order a system `.before(NetSend)` in `PostUpdate` for what it
/// queues to leave this frame.
///
/// ```
/// use bevy_app::{App, PostUpdate};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::NetSend;
///
/// fn send_snapshot() {}
/// App::new().add_systems(PostUpdate, send_snapshot.before(NetSend));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetSend;

/// The plugins' systems in `Last` that act on `AppExit`: a client in the same app (a
/// listen server) leaves before the server shuts down.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ExitSet {
    Client,
    Server,
}

/// The types a plugin is generic over, held without owning a value of any.
type Types<Out, In, C> = fn() -> (Out, In, C);

/// Orders the exit sets; both plugins call it (configuring twice is harmless).
fn configure_exit(app: &mut bevy_app::App) {
    app.configure_sets(
        bevy_app::Last,
        (ExitSet::Client, ExitSet::Server).chain().in_set(NetSend),
    );
}

/// The crate's README, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// Everything a game's systems use: `use netser_bevy::prelude::*;`.
///
/// ```
/// use netser_bevy::prelude::*;
/// let _plugin: NetServerPlugin<u8, u16> = NetServerPlugin::default();
/// ```
pub mod prelude {
    pub use crate::{
        BlockFromServer, BlockToClient, ClientConnected, ClientDisconnected, ClientNetwork,
        ClientStats, ConnectedToServer, DisconnectedFromServer, FromClient, FromServer, NetClient,
        NetClientPlugin, NetMessage, NetReceive, NetSend, NetServer, NetServerPlugin, ServerStats,
        client_connected, client_connecting, client_disconnected, client_just_connected,
        client_just_disconnected, server_running,
    };
    pub use crate::{
        ClientReplicationStats, ClientVisibility, Remote, Replicated, ReplicationPriority,
        ReplicationStats, ReplicationSystems, ServerEntityMap, VisibilityPolicy,
    };
    pub use netser_transport::channel::ChannelId;
    pub use netser_transport::netcode::{ClientId, ClientState, DisconnectReason, NetworkInfo};
    pub use netser_transport::udp::BlockProgress;
}
