//! The client side: [`NetClientPlugin`], the [`NetClient`] resource, its messages, its
//! stats and its run conditions.

use std::fmt;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use bevy_app::{App, AppExit, Last, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::prelude::*;
use bevy_time::{Real, Time};
use netser::NetDelta;
use netser_transport::channel::ChannelId;
use netser_transport::netcode::{
    ClientId, ClientState, ConnectToken, DisconnectReason, NetworkInfo, RefusalCounters,
};
use netser_transport::udp::{
    BlockProgress, StartError, UdpClient, UdpClientConfig, UdpClientEvent, UdpStats,
};

use crate::replication::{ComponentSet, ReplicationConfig, add_client_systems};
use crate::{ExitSet, NetMessage, NetProtocol, NetReceive, NetSend, Types, configure_exit};

/// The game client as a Bevy resource: a [`UdpClient`] sending `Out` and receiving `In`,
/// run by [`NetClientPlugin<Out, In>`](NetClientPlugin). Every method of `UdpClient` is
/// reachable through it (`send_message`, `disconnect`, `is_connected`, `network_info`,
/// ...).
///
/// The plugin reads the client's events each frame and writes them as Bevy messages, so
/// `poll_event` and `receive_message` return nothing to the game's systems: read
/// [`FromServer`] instead. Insert the resource to connect; remove it to leave (the
/// transport tells the server when the client is dropped), and insert a new one, with a
/// new connect token, to connect again.
///
/// `C` is the set of replicated components (`()`, none, by default; see
/// [`replication`](crate::replication)): the transport underneath carries
/// [`C::State`](crate::ComponentSet::State) for each replicated entity.
///
/// ```no_run
/// use bevy_ecs::prelude::*;
/// use netser_bevy::{NetClient, NetProtocol};
/// use netser_transport::netcode::ConnectToken;
/// use netser_transport::udp::UdpClientConfig;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // The token's bytes come from the game's backend.
/// let token = ConnectToken::from_bytes(&std::fs::read("token.bin")?)?;
/// // Sends u16, receives u32: the server's protocol.
/// let protocol = NetProtocol::<u16, u32>::new();
/// let client = NetClient::<u16, u32>::connect(token, &protocol, UdpClientConfig::default())?;
/// let mut world = World::new();
/// world.insert_resource(client);
///
/// // In a system:
/// fn jump(mut client: ResMut<NetClient<u16, u32>>) {
///     let _ = client.send_message(0, &1);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Resource)]
pub struct NetClient<Out: NetMessage, In: NetMessage, C: ComponentSet = ()> {
    client: UdpClient<Out, In, C::State>,
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> NetClient<Out, In, C> {
    /// Binds a socket and starts connecting with `token` (see [`UdpClient::connect`]).
    /// `protocol` is the server's: the same message types, channels and component set.
    ///
    /// ```
    /// use netser_bevy::{NetClient, NetProtocol};
    /// use netser_transport::netcode::ConnectToken;
    /// use netser_transport::udp::UdpClientConfig;
    ///
    /// let protocol = NetProtocol::<u16, u32>::new();
    /// // What the backend does, with the server's key.
    /// let params = protocol.token_params(vec!["127.0.0.1:40000".parse().unwrap()], std::time::SystemTime::now());
    /// let token = ConnectToken::generate(&params, &[7; 32]).unwrap();
    /// let client = NetClient::<u16, u32>::connect(token, &protocol, UdpClientConfig::default()).unwrap();
    /// assert!(client.is_connecting());
    /// ```
    ///
    /// # Errors
    /// [`StartError::Io`] if no socket can be bound; [`StartError::Setup`] with
    /// [`SetupError::ProtocolMismatch`](netser_transport::netcode::SetupError::ProtocolMismatch)
    /// if the token is for another protocol than `protocol` (the server was built with
    /// other message types, channels or replicated components), or if the connection
    /// settings are refused.
    pub fn connect(
        token: ConnectToken,
        protocol: &NetProtocol<Out, In, C>,
        config: UdpClientConfig,
    ) -> Result<Self, StartError> {
        UdpClient::connect(token, protocol, config).map(Self::new)
    }

    /// A resource around a client the caller built (its own driver, socket options or
    /// simulators: [`UdpClient::with_driver`]).
    /// Name the resource's type (`NetClient::<Out, In, C>::new`): the component set
    /// `C` cannot be told from the client's entity type.
    ///
    /// ```
    /// use netser_bevy::{NetClient, NetProtocol};
    /// use netser_transport::netcode::ConnectToken;
    /// use netser_transport::udp::{UdpClient, UdpConfig, UdpDriver};
    ///
    /// let protocol = NetProtocol::<u8, u8>::new();
    /// let params = protocol.token_params(vec!["127.0.0.1:40000".parse().unwrap()], std::time::SystemTime::now());
    /// let token = ConnectToken::generate(&params, &[7; 32]).unwrap();
    /// let driver = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// let client: UdpClient<u8, u8> = UdpClient::with_driver(driver, token, &protocol).unwrap();
    /// let client = NetClient::<u8, u8>::new(client);
    /// assert!(!client.is_connected());
    /// ```
    pub fn new(client: UdpClient<Out, In, C::State>) -> Self {
        Self { client }
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> Deref for NetClient<Out, In, C> {
    type Target = UdpClient<Out, In, C::State>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> DerefMut for NetClient<Out, In, C> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.client
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> fmt::Debug for NetClient<Out, In, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetClient")
            .field("client_id", &self.client.client_id())
            .field("state", &self.client.state())
            .finish_non_exhaustive()
    }
}

/// The client completed the handshake: messages flow.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ConnectedToServer;
///
/// fn joined(mut connected: MessageReader<ConnectedToServer>) {
///     for c in connected.read() {
///         println!("connected as {}", c.client_id);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectedToServer {
    /// The id from the connect token.
    pub client_id: ClientId,
}

/// The connection ended, or never started (the server refused, timed out, the token
/// expired), with the reason.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::DisconnectedFromServer;
///
/// fn left(mut disconnected: MessageReader<DisconnectedFromServer>) {
///     for d in disconnected.read() {
///         println!("disconnected: {}", d.reason);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisconnectedFromServer {
    /// Why.
    pub reason: DisconnectReason,
}

/// A message from the server, in its channel's order.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::FromServer;
///
/// fn read(mut messages: MessageReader<FromServer<u32>>) {
///     for m in messages.read() {
///         println!("{}: {}", m.channel, m.message);
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FromServer<In> {
    /// On which channel.
    pub channel: ChannelId,
    /// The message.
    pub message: In,
}

impl<In: Send + Sync + 'static> Message for FromServer<In> {}

/// A block from the server (a message too large for one packet, such as the world on
/// join) advanced: slices received. The last one of a block has
/// [`progress.is_complete()`](BlockProgress::is_complete); the message itself then
/// arrives as a [`FromServer`].
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::BlockFromServer;
///
/// fn loading_bar(mut blocks: MessageReader<BlockFromServer>) {
///     for b in blocks.read() {
///         println!("loading: {} of {} bytes", b.progress.done, b.progress.total);
///     }
/// }
/// ```
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFromServer {
    /// How far.
    pub progress: BlockProgress,
}

/// What the client shows, refreshed by [`NetClientPlugin`] after it receives and after it
/// sends each frame: its state, round-trip time and loss, the block being received and the
/// counters of its socket. After the disconnect on `AppExit` they hold the final counters
/// for a summary; in the first frame without a [`NetClient`] resource they return to all
/// zero, with `state` `None`.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ClientStats;
///
/// fn show(stats: Res<ClientStats>) {
///     println!("{:?}: rtt {:.1} ms, {} datagrams in", stats.state, stats.network.rtt * 1000.0, stats.udp.datagrams_received);
/// }
/// ```
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct ClientStats {
    /// The netcode state (connecting, connected, or disconnected and why); `None` without
    /// a client.
    pub state: Option<ClientState>,
    /// The id from the connect token.
    pub client_id: Option<ClientId>,
    /// The address the client's socket is bound to.
    pub local_addr: Option<SocketAddr>,
    /// Round-trip time, loss and bandwidth.
    pub network: NetworkInfo,
    /// The block being received, if any.
    pub block: Option<BlockProgress>,
    /// The socket's counters (datagrams and bytes each way, drops by reason).
    pub udp: UdpStats,
    /// Datagrams the netcode layer refused, by reason.
    pub refusals: RefusalCounters,
    /// Events dropped because the transport's event queue was full (a client whose
    /// plugin runs every frame never drops one).
    pub dropped_events: u64,
    /// Messages received from the server since this client started.
    pub messages_received: u64,
    /// After the leave on `AppExit`: whether the server acked every reliable message and
    /// the disconnect packets left within the plugin's `shutdown_timeout`
    /// ([`UdpClient::shutdown`]'s answer). `None` before.
    pub clean_shutdown: Option<bool>,
}

impl ClientStats {
    fn refresh<Out: NetMessage, In: NetMessage, S: NetDelta + Clone>(
        &mut self,
        client: &UdpClient<Out, In, S>,
    ) {
        self.state = Some(client.state());
        self.client_id = Some(client.client_id());
        self.local_addr = Some(client.local_addr());
        self.network = client.network_info();
        self.block = client.block_progress();
        self.udp.clone_from(client.driver().stats());
        self.refusals = client.netcode().refusals().clone();
        self.dropped_events = client.dropped_events();
    }
}

/// Run condition: the [`NetClient`] is connected (as of the plugin's last system).
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn send_input() {}
/// let mut app = App::new();
/// app.add_plugins(NetClientPlugin::<u8, u8>::default())
///     .add_systems(Update, send_input.run_if(client_connected));
/// app.update(); // no client resource: send_input does not run
/// ```
pub fn client_connected(stats: Option<Res<ClientStats>>) -> bool {
    stats.is_some_and(|s| s.state == Some(ClientState::Connected))
}

/// Run condition: the [`NetClient`] is in the handshake.
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn show_spinner() {}
/// App::new()
///     .add_plugins(NetClientPlugin::<u8, u8>::default())
///     .add_systems(Update, show_spinner.run_if(client_connecting));
/// ```
pub fn client_connecting(stats: Option<Res<ClientStats>>) -> bool {
    stats.is_some_and(|s| {
        matches!(
            s.state,
            Some(ClientState::SendingConnectionRequest | ClientState::SendingConnectionResponse)
        )
    })
}

/// Run condition: there is no [`NetClient`], or it is disconnected (see
/// [`ClientStats::state`] for why).
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn show_menu() {}
/// App::new()
///     .add_plugins(NetClientPlugin::<u8, u8>::default())
///     .add_systems(Update, show_menu.run_if(client_disconnected));
/// ```
pub fn client_disconnected(stats: Option<Res<ClientStats>>) -> bool {
    stats.is_none_or(|s| matches!(s.state, None | Some(ClientState::Disconnected(_))))
}

/// Run condition: the client connected in this frame (a [`ConnectedToServer`] was written
/// since this condition last ran).
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn hide_spinner() {}
/// App::new()
///     .add_plugins(NetClientPlugin::<u8, u8>::default())
///     .add_systems(Update, hide_spinner.run_if(client_just_connected));
/// ```
pub fn client_just_connected(mut connected: MessageReader<ConnectedToServer>) -> bool {
    connected.read().count() > 0
}

/// Run condition: the client was disconnected in this frame (a [`DisconnectedFromServer`]
/// was written since this condition last ran).
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::prelude::*;
///
/// fn back_to_menu() {}
/// App::new()
///     .add_plugins(NetClientPlugin::<u8, u8>::default())
///     .add_systems(Update, back_to_menu.run_if(client_just_disconnected));
/// ```
pub fn client_just_disconnected(mut disconnected: MessageReader<DisconnectedFromServer>) -> bool {
    disconnected.read().count() > 0
}

/// The client plugin: reads the [`NetClient<Out, In>`](NetClient) resource's socket in
/// `PreUpdate` ([`NetReceive`]) and writes [`ConnectedToServer`],
/// [`DisconnectedFromServer`], [`FromServer<In>`](FromServer) and [`BlockFromServer`];
/// sends in `PostUpdate` ([`NetSend`]); keeps [`ClientStats`]; and on [`AppExit`] leaves
/// gracefully ([`UdpClient::shutdown`]: waiting at most
/// [`shutdown_timeout`](Self::shutdown_timeout) for the server to ack what was sent, then
/// telling it) and removes the resource.
///
/// The plugin does nothing while there is no `NetClient` resource: insert one to connect.
///
/// The messages it writes follow Bevy's rule for messages: a reader that does not run
/// within two frames misses them. Their number per frame is bounded by the transport:
/// each channel holds at most its `receive_queue_size` messages.
///
/// ```
/// use bevy_app::App;
/// use netser_bevy::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins(NetClientPlugin::<u16, u32>::default());
/// app.update();
/// assert_eq!(app.world().resource::<ClientStats>().state, None);
/// ```
///
/// `C` is the set of replicated components, `()` (none) by default, the same as the
/// server's: see the [`replication`](crate#replication) section of the crate's docs. The
/// client then also spawns, updates and despawns the server's entities each frame in
/// `PreUpdate` ([`ReplicationSystems::Apply`](crate::ReplicationSystems)), and keeps
/// [`ServerEntityMap`](crate::ServerEntityMap) and
/// [`ClientReplicationStats`](crate::ClientReplicationStats).
pub struct NetClientPlugin<Out, In, C = ()> {
    /// How long the leave on `AppExit` keeps sending, at most, until the server acked
    /// every reliable message; then the client disconnects. Default 1 s.
    pub shutdown_timeout: Duration,
    replication: ReplicationConfig,
    messages: PhantomData<Types<Out, In, C>>,
}

impl<Out, In, C> NetClientPlugin<Out, In, C> {
    /// The plugin with entity sets configured other than by default: the same
    /// `max_entities`, `max_per_packet` and `window` as the server's.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use netser::NetSerialize;
    /// use netser_bevy::{NetClientPlugin, ReplicationConfig};
    /// use netser_transport::snapshot::EntityConfig;
    ///
    /// #[derive(Component, NetSerialize, Clone, PartialEq)]
    /// #[net(delta)]
    /// struct Health(#[net(range = 0..=100)] u8);
    ///
    /// let config = ReplicationConfig::new(EntityConfig { max_entities: 1024, ..EntityConfig::default() }).unwrap();
    /// let plugin = NetClientPlugin::<u8, u8, (Health,)>::default().with_replication(config.clone());
    /// assert_eq!(plugin.replication(), &config);
    /// ```
    pub fn with_replication(mut self, replication: ReplicationConfig) -> Self {
        self.replication = replication;
        self
    }

    /// How entities are replicated.
    ///
    /// ```
    /// use netser_bevy::NetClientPlugin;
    /// assert_eq!(NetClientPlugin::<u8, u8>::default().replication().entities().window, 256);
    /// ```
    pub fn replication(&self) -> &ReplicationConfig {
        &self.replication
    }

    /// The plugin with a shutdown timeout other than the default 1 s.
    ///
    /// ```
    /// use netser_bevy::NetClientPlugin;
    /// let plugin = NetClientPlugin::<u8, u8>::with_shutdown_timeout(std::time::Duration::ZERO);
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

impl<Out, In, C> Default for NetClientPlugin<Out, In, C> {
    fn default() -> Self {
        Self::with_shutdown_timeout(Duration::from_secs(1))
    }
}

impl<Out, In, C> fmt::Debug for NetClientPlugin<Out, In, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetClientPlugin")
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("replication", &self.replication)
            .finish()
    }
}

impl<Out: NetMessage, In: NetMessage, C: ComponentSet> Plugin for NetClientPlugin<Out, In, C> {
    fn build(&self, app: &mut App) {
        let timeout = self.shutdown_timeout;
        app.add_message::<ConnectedToServer>()
            .add_message::<DisconnectedFromServer>()
            .add_message::<FromServer<In>>()
            .add_message::<BlockFromServer>()
            .init_resource::<ClientStats>()
            .add_systems(PreUpdate, receive::<Out, In, C>.in_set(NetReceive))
            .add_systems(PostUpdate, send::<Out, In, C>.in_set(NetSend))
            .add_systems(
                Last,
                (move |exit: MessageReader<AppExit>,
                       client: Option<ResMut<NetClient<Out, In, C>>>,
                       writers: ClientWriters<In>,
                       stats: ResMut<ClientStats>,
                       commands: Commands| {
                    shutdown_on_exit(timeout, exit, client, writers, stats, commands)
                })
                .in_set(ExitSet::Client),
            );
        configure_exit(app);
        add_client_systems::<Out, In, C>(app, self.replication.clone());
    }
}

/// The message writers of the client's events.
#[derive(bevy_ecs::system::SystemParam)]
struct ClientWriters<'w, In: NetMessage> {
    connected: MessageWriter<'w, ConnectedToServer>,
    disconnected: MessageWriter<'w, DisconnectedFromServer>,
    messages: MessageWriter<'w, FromServer<In>>,
    blocks: MessageWriter<'w, BlockFromServer>,
}

impl<In: NetMessage> ClientWriters<'_, In> {
    /// Writes every event the client holds; returns how many were messages.
    fn drain<Out: NetMessage, S: NetDelta + Clone>(
        &mut self,
        client: &mut UdpClient<Out, In, S>,
    ) -> u64 {
        let mut messages = 0;
        while let Some(event) = client.poll_event() {
            match event {
                UdpClientEvent::Connected { client_id } => {
                    self.connected.write(ConnectedToServer { client_id });
                }
                UdpClientEvent::Disconnected { reason } => {
                    self.disconnected.write(DisconnectedFromServer { reason });
                }
                UdpClientEvent::Message { channel, message } => {
                    messages += 1;
                    self.messages.write(FromServer { channel, message });
                }
                UdpClientEvent::BlockProgress { progress } => {
                    self.blocks.write(BlockFromServer { progress });
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
    client: Option<ResMut<NetClient<Out, In, C>>>,
    mut writers: ClientWriters<In>,
    mut stats: ResMut<ClientStats>,
    time: Option<Res<Time<Real>>>,
) {
    let Some(mut client) = client else {
        if stats.state.is_some() {
            *stats = ClientStats::default();
        }
        return;
    };
    if client.is_added() {
        // A new client (perhaps reconnecting): its counters start again.
        *stats = ClientStats::default();
    }
    match time {
        Some(time) => client.receive_at(time.elapsed_secs_f64()),
        None => client.receive(),
    }
    stats.messages_received += writers.drain(&mut client);
    stats.refresh(&client);
}

/// `PostUpdate`: advances the handshake and timers, sends what the frame queued.
fn send<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    client: Option<ResMut<NetClient<Out, In, C>>>,
    mut writers: ClientWriters<In>,
    mut stats: ResMut<ClientStats>,
    time: Option<Res<Time<Real>>>,
) {
    let Some(mut client) = client else {
        return;
    };
    match time {
        Some(time) => client.transmit_at(time.elapsed_secs_f64()),
        None => client.transmit(),
    }
    // A timeout or refusal found while sending; read by the game next frame.
    stats.messages_received += writers.drain(&mut client);
    stats.refresh(&client);
}

/// `Last`: on `AppExit`, the graceful leave, then the resource goes.
fn shutdown_on_exit<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    timeout: Duration,
    mut exit: MessageReader<AppExit>,
    client: Option<ResMut<NetClient<Out, In, C>>>,
    mut writers: ClientWriters<In>,
    mut stats: ResMut<ClientStats>,
    mut commands: Commands,
) {
    if exit.read().count() == 0 {
        return;
    }
    let Some(mut client) = client else {
        return;
    };
    let clean = client.shutdown(timeout);
    stats.messages_received += writers.drain(&mut client);
    stats.refresh(&client);
    stats.clean_shutdown = Some(clean);
    commands.remove_resource::<NetClient<Out, In, C>>();
}
