//! The server side: [`NetServerPlugin`], the [`NetServer`] resource, its messages, its
//! stats and its run condition.

use std::fmt;
use std::marker::PhantomData;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use bevy_app::{App, AppExit, Last, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::prelude::*;
use bevy_time::{Real, Time};
use netser::NetDelta;
use netser_transport::channel::ChannelId;
use netser_transport::netcode::{
    ClientId, DisconnectReason, NetworkInfo, RefusalCounters, USER_DATA_BYTES,
};
use netser_transport::udp::{
    BlockProgress, StartError, UdpServer, UdpServerConfig, UdpServerEvent, UdpStats,
};

use crate::replication::{ComponentSet, ReplicationConfig, add_server_systems};
use crate::{ExitSet, NetMessage, NetProtocol, NetReceive, NetSend, Types, configure_exit};

/// The game server as a Bevy resource: a [`UdpServer`] sending `Out` and receiving `In`,
/// run by [`NetServerPlugin<Out, In>`](NetServerPlugin). Every method of `UdpServer` is
/// reachable through it (`send_message`, `broadcast_message`, `disconnect`,
/// `network_info`, ...).
///
/// The plugin reads the server's events each frame and writes them as Bevy messages, so
/// `poll_event` and `receive_message` return nothing to the game's systems: read
/// [`FromClient`] instead. Insert the resource to start serving, remove it to stop:
/// dropping it disconnects every client at once (the transport tells them), without the
/// wait of [`UdpServer::shutdown`].
///
/// `C` is the set of replicated components (`()`, none, by default; see
/// [`replication`](crate::replication)): the transport underneath carries
/// [`C::State`](crate::ComponentSet::State) for each replicated entity.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::{NetProtocol, NetServer};
/// use netser_transport::udp::UdpServerConfig;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Sends u32, receives u16: clients send u16.
/// let protocol = NetProtocol::<u16, u32>::new();
/// let server = NetServer::<u32, u16>::bind("127.0.0.1:0", &protocol, UdpServerConfig::new([7; 32]))?;
/// assert_eq!(server.connected_clients(), 0);
///
/// // In a system:
/// fn broadcast(mut server: ResMut<NetServer<u32, u16>>) {
///     let _ = server.broadcast_message(0, &42);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Resource)]
pub struct NetServer<Out: NetMessage, In: NetMessage, C: ComponentSet = ()> {
    server: UdpServer<Out, In, C::State>,
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> NetServer<Out, In, C> {
    /// Binds a UDP socket to `addr` and starts a server of `protocol` on it (see
    /// [`UdpServer::bind`]); its clients connect with the same protocol.
    ///
    /// ```
    /// use netser_bevy::{NetProtocol, NetServer};
    /// use netser_transport::udp::UdpServerConfig;
    ///
    /// // Clients send u16, the server sends u32.
    /// let protocol = NetProtocol::<u16, u32>::new();
    /// let server = NetServer::<u32, u16>::bind("127.0.0.1:0", &protocol, UdpServerConfig::new([0; 32])).unwrap();
    /// assert!(server.local_addr().port() != 0);
    /// ```
    ///
    /// # Errors
    /// [`StartError`] if the socket cannot be bound or a setting is refused.
    pub fn bind(
        addr: impl ToSocketAddrs,
        protocol: &NetProtocol<In, Out, C>,
        config: UdpServerConfig,
    ) -> Result<Self, StartError> {
        UdpServer::bind(addr, protocol, config).map(Self::new)
    }

    /// A resource around a server the caller built (its own driver, socket options or
    /// simulators: [`UdpServer::with_driver`]).
    /// Name the resource's type (`NetServer::<Out, In, C>::new`): the component set
    /// `C` cannot be told from the server's entity type.
    ///
    /// ```
    /// use netser_bevy::{NetProtocol, NetServer};
    /// use netser_transport::udp::{UdpConfig, UdpDriver, UdpServer, UdpServerConfig};
    ///
    /// let protocol = NetProtocol::<u8, u8>::new();
    /// let driver = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// let server: UdpServer<u8, u8> = UdpServer::with_driver(driver, &protocol, UdpServerConfig::new([0; 32])).unwrap();
    /// let server = NetServer::<u8, u8>::new(server);
    /// assert_eq!(server.max_clients(), 64);
    /// ```
    pub fn new(server: UdpServer<Out, In, C::State>) -> Self {
        Self { server }
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> Deref for NetServer<Out, In, C> {
    type Target = UdpServer<Out, In, C::State>;

    fn deref(&self) -> &Self::Target {
        &self.server
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> DerefMut for NetServer<Out, In, C> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.server
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> fmt::Debug for NetServer<Out, In, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetServer")
            .field("local_addr", &self.server.local_addr())
            .field("connected_clients", &self.server.connected_clients())
            .finish_non_exhaustive()
    }
}

/// A client completed the handshake (server side).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ClientConnected;
///
/// fn welcome(mut connected: MessageReader<ClientConnected>) {
///     for c in connected.read() {
///         println!("client {} joined from {}", c.client_id, c.addr);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ClientConnected {
    /// The id from its connect token.
    pub client_id: ClientId,
    /// Its address.
    pub addr: SocketAddr,
    /// The user data of its connect token (what the backend put there: an account, a
    /// team), boxed as the transport gives it.
    pub user_data: Box<[u8; USER_DATA_BYTES]>,
}

/// A client left, timed out or was disconnected (server side); its slot is free.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ClientDisconnected;
///
/// fn farewell(mut disconnected: MessageReader<ClientDisconnected>) {
///     for d in disconnected.read() {
///         println!("client {} left: {}", d.client_id, d.reason);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ClientDisconnected {
    /// The id from its connect token.
    pub client_id: ClientId,
    /// Its address.
    pub addr: SocketAddr,
    /// Why.
    pub reason: DisconnectReason,
}

/// A message from a client, in its channel's order (server side).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::FromClient;
///
/// fn chat(mut messages: MessageReader<FromClient<u32>>) {
///     for m in messages.read() {
///         println!("{} on {}: {}", m.client_id, m.channel, m.message);
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FromClient<In> {
    /// From whom.
    pub client_id: ClientId,
    /// On which channel.
    pub channel: ChannelId,
    /// The message.
    pub message: In,
}

impl<In: Send + Sync + 'static> Message for FromClient<In> {}

/// A block (a message too large for one packet) being sent to a client advanced: slices
/// acked by the client. The last one of a block has
/// [`progress.is_complete()`](BlockProgress::is_complete).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::BlockToClient;
///
/// fn show(mut blocks: MessageReader<BlockToClient>) {
///     for b in blocks.read() {
///         println!("world to {}: {:.0}%", b.client_id, b.progress.fraction() * 100.0);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockToClient {
    /// To whom.
    pub client_id: ClientId,
    /// How far.
    pub progress: BlockProgress,
}

/// One connected client as [`ServerStats`] shows it.
///
/// ```
/// use netser_bevy::ServerStats;
///
/// let stats = ServerStats::default();
/// for client in &stats.clients {
///     println!("{} at {}: rtt {:.1} ms", client.client_id, client.addr, client.network.rtt * 1000.0);
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClientNetwork {
    /// The id from its connect token.
    pub client_id: ClientId,
    /// Its address.
    pub addr: SocketAddr,
    /// Round-trip time, loss and bandwidth of its connection.
    pub network: NetworkInfo,
    /// The block being sent to it, if any.
    pub block: Option<BlockProgress>,
}

/// What the server shows, refreshed by [`NetServerPlugin`] after it receives and after it
/// sends each frame: whether it runs, its clients with their round-trip time and loss, and
/// the counters of its socket and of the datagrams refused. After the shutdown on
/// `AppExit` they hold the final counters (with `running` false) for a summary; in the
/// first frame without a [`NetServer`] resource they return to all zero and empty.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ServerStats;
///
/// fn show(stats: Res<ServerStats>) {
///     println!(
///         "{} of {} clients; {} datagrams in, {} refused",
///         stats.clients.len(),
///         stats.max_clients,
///         stats.udp.datagrams_received,
///         stats.refusals.total(),
///     );
/// }
/// ```
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct ServerStats {
    /// Whether a [`NetServer`] resource exists.
    pub running: bool,
    /// The address the server is bound to.
    pub local_addr: Option<SocketAddr>,
    /// Client slots.
    pub max_clients: usize,
    /// The connected clients, by id.
    pub clients: Vec<ClientNetwork>,
    /// The socket's counters (datagrams and bytes each way, drops by reason).
    pub udp: UdpStats,
    /// Datagrams the netcode layer refused, by reason.
    pub refusals: RefusalCounters,
    /// Events dropped because the transport's event queue was full (a server whose
    /// plugin runs every frame never drops one).
    pub dropped_events: u64,
    /// Messages received from clients since the server started.
    pub messages_received: u64,
    /// After the shutdown on `AppExit`: whether every client acked every reliable message
    /// and every disconnect packet left within the plugin's `shutdown_timeout`
    /// ([`UdpServer::shutdown`]'s answer). `None` before.
    pub clean_shutdown: Option<bool>,
}

impl ServerStats {
    /// One client's entry.
    ///
    /// ```
    /// use netser_bevy::ServerStats;
    /// assert!(ServerStats::default().client(7).is_none());
    /// ```
    pub fn client(&self, client_id: ClientId) -> Option<&ClientNetwork> {
        self.clients.iter().find(|c| c.client_id == client_id)
    }

    fn refresh<Out: NetMessage, In: NetMessage, S: NetDelta + PartialEq + Clone>(
        &mut self,
        server: &UdpServer<Out, In, S>,
    ) {
        self.running = true;
        self.local_addr = Some(server.local_addr());
        self.max_clients = server.max_clients();
        self.clients.clear();
        let mut ids = server.client_ids();
        ids.sort_unstable();
        for client_id in ids {
            if let (Some(addr), Some(network)) = (
                server.client_addr(client_id),
                server.network_info(client_id),
            ) {
                self.clients.push(ClientNetwork {
                    client_id,
                    addr,
                    network,
                    block: server.block_progress(client_id),
                });
            }
        }
        self.udp.clone_from(server.driver().stats());
        self.refusals = server.netcode().refusals().clone();
        self.dropped_events = server.dropped_events();
    }
}

/// Run condition: a [`NetServer`] resource exists (as of the plugin's last system).
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn send_snapshot() {}
/// let mut app = App::new();
/// app.add_plugins(NetServerPlugin::<u8, u8>::default())
///     .add_systems(Update, send_snapshot.run_if(server_running));
/// app.update(); // no server resource: send_snapshot does not run
/// ```
pub fn server_running(stats: Option<Res<ServerStats>>) -> bool {
    stats.is_some_and(|s| s.running)
}

/// The server plugin: reads the [`NetServer<Out, In>`](NetServer) resource's socket in
/// `PreUpdate` ([`NetReceive`]) and writes [`ClientConnected`], [`ClientDisconnected`],
/// [`FromClient<In>`](FromClient) and [`BlockToClient`]; sends in `PostUpdate`
/// ([`NetSend`]); keeps [`ServerStats`]; and on [`AppExit`] shuts the server down
/// gracefully ([`UdpServer::shutdown`], waiting at most
/// [`shutdown_timeout`](Self::shutdown_timeout) for clients to ack what was sent) and
/// removes the resource.
///
/// The plugin does nothing while there is no `NetServer` resource: insert one to start.
///
/// The messages it writes follow Bevy's rule for messages: a reader that does not run
/// within two frames misses them. Their number per frame is bounded by the transport:
/// each client's channels hold at most their `receive_queue_size` messages.
///
/// ```
/// use bevy_app::App;
/// use netser_bevy::prelude::*;
/// use netser_transport::udp::UdpServerConfig;
///
/// let protocol = NetProtocol::<u16, u32>::new();
/// let server = NetServer::<u32, u16>::bind("127.0.0.1:0", &protocol, UdpServerConfig::new([7; 32])).unwrap();
/// let mut app = App::new();
/// app.add_plugins(NetServerPlugin::<u32, u16>::default()).insert_resource(server);
/// app.update();
/// assert!(app.world().resource::<ServerStats>().running);
/// ```
///
/// `C` is the set of replicated components, `()` (none) by default: see the
/// [`replication`](crate#replication) section of the crate's docs. The server then also
/// sends, each frame in `PostUpdate` ([`ReplicationSystems::Send`](crate::ReplicationSystems)),
/// each client its packet of the [`Replicated`](crate::Replicated) entities, and keeps
/// [`ReplicationStats`](crate::ReplicationStats) and [`ClientVisibility`](crate::ClientVisibility).
pub struct NetServerPlugin<Out, In, C = ()> {
    /// How long the shutdown on `AppExit` keeps sending, at most, until every client acked
    /// every reliable message; then the clients are disconnected. Default 1 s.
    pub shutdown_timeout: Duration,
    replication: ReplicationConfig,
    messages: PhantomData<Types<Out, In, C>>,
}

impl<Out, In, C> NetServerPlugin<Out, In, C> {
    /// The plugin with entity sets configured other than by default (the clients' plugin
    /// must have the same `max_entities`, `max_per_packet` and `window`).
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use netser::NetSerialize;
    /// use netser_bevy::{NetServerPlugin, ReplicationConfig};
    /// use netser_transport::snapshot::EntityConfig;
    ///
    /// #[derive(Component, NetSerialize, Clone, PartialEq)]
    /// #[net(delta)]
    /// struct Health(#[net(range = 0..=100)] u8);
    ///
    /// let config = ReplicationConfig::new(EntityConfig { max_entities: 1024, ..EntityConfig::default() }).unwrap();
    /// let plugin = NetServerPlugin::<u8, u8, (Health,)>::default().with_replication(config.clone());
    /// assert_eq!(plugin.replication(), &config);
    /// ```
    pub fn with_replication(mut self, replication: ReplicationConfig) -> Self {
        self.replication = replication;
        self
    }

    /// How entities are replicated.
    ///
    /// ```
    /// use netser_bevy::NetServerPlugin;
    /// assert_eq!(NetServerPlugin::<u8, u8>::default().replication().entities().max_entities, 4096);
    /// ```
    pub fn replication(&self) -> &ReplicationConfig {
        &self.replication
    }

    /// The plugin with a shutdown timeout other than the default 1 s.
    ///
    /// ```
    /// use netser_bevy::NetServerPlugin;
    /// let plugin = NetServerPlugin::<u8, u8>::with_shutdown_timeout(std::time::Duration::ZERO);
    /// assert!(plugin.shutdown_timeout.is_zero());
    /// ```
    pub fn with_shutdown_timeout(shutdown_timeout: Duration) -> Self {
        Self {
            shutdown_timeout,
            replication: ReplicationConfig::default(),
            messages: PhantomData,
        }
    }
}

impl<Out, In, C> Default for NetServerPlugin<Out, In, C> {
    fn default() -> Self {
        Self::with_shutdown_timeout(Duration::from_secs(1))
    }
}

impl<Out, In, C> fmt::Debug for NetServerPlugin<Out, In, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetServerPlugin")
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("replication", &self.replication)
            .finish()
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> Plugin for NetServerPlugin<Out, In, C> {
    fn build(&self, app: &mut App) {
        let timeout = self.shutdown_timeout;
        app.add_message::<ClientConnected>()
            .add_message::<ClientDisconnected>()
            .add_message::<FromClient<In>>()
            .add_message::<BlockToClient>()
            .init_resource::<ServerStats>()
            .add_systems(PreUpdate, receive::<Out, In, C>.in_set(NetReceive))
            .add_systems(PostUpdate, send::<Out, In, C>.in_set(NetSend))
            .add_systems(
                Last,
                (move |exit: MessageReader<AppExit>,
                       server: Option<ResMut<NetServer<Out, In, C>>>,
                       writers: ServerWriters<In>,
                       stats: ResMut<ServerStats>,
                       commands: Commands| {
                    shutdown_on_exit(timeout, exit, server, writers, stats, commands)
                })
                .in_set(ExitSet::Server),
            );
        configure_exit(app);
        add_server_systems::<Out, In, C>(app, self.replication.clone());
    }
}

/// The message writers of the server's events.
#[derive(bevy_ecs::system::SystemParam)]
struct ServerWriters<'w, In: NetMessage> {
    connected: MessageWriter<'w, ClientConnected>,
    disconnected: MessageWriter<'w, ClientDisconnected>,
    messages: MessageWriter<'w, FromClient<In>>,
    blocks: MessageWriter<'w, BlockToClient>,
}

impl<In: NetMessage> ServerWriters<'_, In> {
    /// Writes every event the server holds; returns how many were messages.
    fn drain<Out: NetMessage, S: NetDelta + PartialEq + Clone>(
        &mut self,
        server: &mut UdpServer<Out, In, S>,
    ) -> u64 {
        let mut messages = 0;
        while let Some(event) = server.poll_event() {
            match event {
                UdpServerEvent::ClientConnected {
                    client_id,
                    addr,
                    user_data,
                } => {
                    self.connected.write(ClientConnected {
                        client_id,
                        addr,
                        user_data,
                    });
                }
                UdpServerEvent::ClientDisconnected {
                    client_id,
                    addr,
                    reason,
                } => {
                    self.disconnected.write(ClientDisconnected {
                        client_id,
                        addr,
                        reason,
                    });
                }
                UdpServerEvent::Message {
                    client_id,
                    channel,
                    message,
                } => {
                    messages += 1;
                    self.messages.write(FromClient {
                        client_id,
                        channel,
                        message,
                    });
                }
                UdpServerEvent::BlockProgress {
                    client_id,
                    progress,
                } => {
                    self.blocks.write(BlockToClient {
                        client_id,
                        progress,
                    });
                }
                // A kind of event added to the transport later: nothing to forward yet.
                _ => {}
            }
        }
        messages
    }
}

/// `PreUpdate`: takes what arrived and writes the events.
fn receive<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    server: Option<ResMut<NetServer<Out, In, C>>>,
    mut writers: ServerWriters<In>,
    mut stats: ResMut<ServerStats>,
    time: Option<Res<Time<Real>>>,
) {
    let Some(mut server) = server else {
        if stats.local_addr.is_some() {
            *stats = ServerStats::default();
        }
        return;
    };
    if server.is_added() {
        // A new server: its counters start again.
        *stats = ServerStats::default();
    }
    match time {
        Some(time) => server.receive_at(time.elapsed_secs_f64()),
        None => server.receive(),
    }
    stats.messages_received += writers.drain(&mut server);
    stats.refresh(&server);
}

/// `PostUpdate`: advances timers and sends what the frame queued.
fn send<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    server: Option<ResMut<NetServer<Out, In, C>>>,
    mut writers: ServerWriters<In>,
    mut stats: ResMut<ServerStats>,
    time: Option<Res<Time<Real>>>,
) {
    let Some(mut server) = server else {
        return;
    };
    match time {
        Some(time) => server.transmit_at(time.elapsed_secs_f64()),
        None => server.transmit(),
    }
    // Timeouts found while sending; read by the game next frame.
    stats.messages_received += writers.drain(&mut server);
    stats.refresh(&server);
}

/// `Last`: on `AppExit`, the graceful shutdown, then the resource goes.
fn shutdown_on_exit<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    timeout: Duration,
    mut exit: MessageReader<AppExit>,
    server: Option<ResMut<NetServer<Out, In, C>>>,
    mut writers: ServerWriters<In>,
    mut stats: ResMut<ServerStats>,
    mut commands: Commands,
) {
    if exit.read().count() == 0 {
        return;
    }
    let Some(mut server) = server else {
        return;
    };
    let clean = server.shutdown(timeout);
    stats.messages_received += writers.drain(&mut server);
    stats.refresh(&server);
    stats.running = false;
    stats.clean_shutdown = Some(clean);
    commands.remove_resource::<NetServer<Out, In, C>>();
}
