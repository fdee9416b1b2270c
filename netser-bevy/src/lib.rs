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
//! Nothing here renders: the crate depends on `bevy_app`, `bevy_ecs` and `bevy_time`
//! without their default features, so a dedicated server builds no renderer.
//!
//! A server and a client in one app, over loopback (a listen server; a dedicated server
//! adds only the server plugin, a client only the client plugin):
//!
//! ```
//! use bevy_app::{App, Update};
//! use bevy_ecs::prelude::*;
//! use netser::NetSerialize;
//! use netser_bevy::prelude::*;
//! use netser_transport::netcode::{ConnectToken, DefaultChannel, TokenParams};
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
//!         server.send_message(hello.client_id, DefaultChannel::ReliableOrdered, &ToClient::Welcome(n + 1)).unwrap();
//!     }
//! }
//! // The client says hello once connected.
//! fn greet(mut connected: MessageReader<ConnectedToServer>, mut client: ResMut<NetClient<ToServer, ToClient>>) {
//!     for _ in connected.read() {
//!         client.send_message(DefaultChannel::ReliableOrdered, &ToServer::Hello(41)).unwrap();
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
//! // One protocol for the server, the client and the backend: what clients send first.
//! let protocol = NetProtocol::<ToServer, ToClient>::new();
//! // The server's key; in a real game the backend holds it too and issues the tokens.
//! let key = netser_transport::netcode::generate_key()?;
//! let server = NetServer::<ToClient, ToServer>::bind("127.0.0.1:0", &protocol, UdpServerConfig::new(key))?;
//! let params = TokenParams {
//!     client_id: 7,
//!     ..protocol.token_params(vec![server.local_addr()], std::time::SystemTime::now())
//! };
//! let token = ConnectToken::generate(&params, &key)?;
//! let client = NetClient::<ToServer, ToClient>::connect(token, &protocol, UdpClientConfig::default())?;
//!
//! let mut app = App::new();
//! app.add_plugins(bevy_time::TimePlugin)
//!     .add_plugins((NetServerPlugin::<ToClient, ToServer>::default(), NetClientPlugin::<ToServer, ToClient>::default()))
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
//! # Protocol
//!
//! The server, its clients and the backend that issues connect tokens build their
//! settings from one [`NetProtocol<ToServer, ToClient, C>`](NetProtocol): the transport's
//! [`Protocol`] of the game's message types (what clients send first), channels and
//! connection settings, and the state of the replicated component set `C`. Its id, carried in every connect token, hashes all of them, so a
//! client built with other message types, channels or components than the server's is
//! refused when it connects, with
//! [`SetupError::ProtocolMismatch`](netser_transport::netcode::SetupError::ProtocolMismatch)
//! and a reason that says so, instead of misreading what the server sends.
//!
//! # Time
//!
//! The plugins run the transport on Bevy's clock: with `bevy_time`'s `TimePlugin` in the
//! app (in `MinimalPlugins` and `DefaultPlugins`), each frame's
//! [`Time<Real>`](bevy_time::Real) elapsed seconds go to `receive_at` and `transmit_at`,
//! so keep-alives, resends, timeouts and the connect token's lifetime follow the frame's
//! time, and entity sets are sent at it. Real time, not virtual: a paused game
//! (`Time<Virtual>` paused) still keeps its connections and times out its dead peers.
//! Without a `Time<Real>` resource the transport reads its own monotonic clock. Frame rate
//! is the game's: a headless server runs its `App` in a loop of its choosing (the
//! examples use `ScheduleRunnerPlugin`'s or a fixed sleep between frames).
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
//! use netser_transport::netcode::ConnectToken;
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
//! // The component set is part of the protocol.
//! let protocol = NetProtocol::<u8, u8, Replicated>::new();
//! let key = netser_transport::netcode::generate_key()?;
//! let server = Server::bind("127.0.0.1:0", &protocol, UdpServerConfig::new(key))?;
//! let params = protocol.token_params(vec![server.local_addr()], std::time::SystemTime::now());
//! let client = Client::connect(ConnectToken::generate(&params, &key)?, &protocol, UdpClientConfig::default())?;
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
use netser_transport::netcode::Protocol;

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

/// The protocol of a game on the plugins: the transport's
/// [`Protocol<ToServer, ToClient, Snapshot>`](Protocol) with the state of the replicated
/// component set `C` (`()`, none, by default) as its snapshot type. Build it once and give
/// it to [`NetServer::bind`], [`NetClient::connect`] and the backend's
/// [`token_params`](Protocol::token_params): its id covers the message types, the channels,
/// the connection settings and the component set, so a client built from another one is
/// refused at connect. Without replicated components it is the transport's
/// `Protocol<ToServer, ToClient>` itself. Name its types where you build it
/// (`NetProtocol::<ToServer, ToClient, C>::new()`): `C` cannot be inferred from the state.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser::NetSerialize;
/// use netser_bevy::NetProtocol;
///
/// #[derive(Component, NetSerialize, Clone, PartialEq)]
/// #[net(delta)]
/// struct Health(#[net(range = 0..=100)] u8);
///
/// // Clients send u16, the server u32; Health is replicated.
/// let protocol = NetProtocol::<u16, u32, (Health,)>::new();
/// assert_ne!(protocol.id(), NetProtocol::<u16, u32>::new().id());
/// // No components: the transport's protocol.
/// let plain: netser_transport::netcode::Protocol<u16, u32> = NetProtocol::<u16, u32>::new();
/// assert_eq!(plain.id(), netser_transport::netcode::Protocol::<u16, u32>::new().id());
/// ```
pub type NetProtocol<ToServer, ToClient, C = ()> =
    Protocol<ToServer, ToClient, <C as ComponentSet>::State>;

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
        NetClientPlugin, NetMessage, NetProtocol, NetReceive, NetSend, NetServer, NetServerPlugin,
        ServerStats, client_connected, client_connecting, client_disconnected,
        client_just_connected, client_just_disconnected, server_running,
    };
    pub use crate::{
        ClientReplicationStats, ClientVisibility, Remote, Replicated, ReplicationPriority,
        ReplicationStats, ReplicationSystems, ServerEntityMap, VisibilityPolicy,
    };
    pub use netser_transport::channel::ChannelId;
    pub use netser_transport::netcode::{ClientId, ClientState, DisconnectReason, NetworkInfo};
    pub use netser_transport::udp::BlockProgress;
}
