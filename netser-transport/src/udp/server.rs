//! `UdpServer`: the sans-IO [`Server`] on a real UDP socket, called once per frame.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant, SystemTime};

use netser::{NetDelta, NetSerialize};
use tracing::{debug, info};

use super::common::{event_queue, push_event, time_left, wait_for_acks, BlockProgress};
use super::driver::{UdpConfig, UdpConfigError, UdpDriver};
use crate::channel::ChannelId;
use crate::netcode::events::EventQueue;
use crate::netcode::USER_DATA_BYTES;
use crate::netcode::{
    self, BroadcastError, BudgetConfig, ClientId, DisconnectReason, Key, MessageError, Protocol,
    Server, ServerConfig, SetupError,
};
use crate::snapshot::{
    EntityConfig, SendOutcome, SnapshotConfig, SnapshotConfigError, SnapshotError,
};

/// Settings of a [`UdpServer`]: every setting of the netcode [`ServerConfig`], the
/// socket's. The protocol (message types, channels, connection settings) is the
/// [`Protocol`] given to [`UdpServer::bind`]. Each setting is checked when the server
/// starts; one out of its bounds is refused with a [`StartError`] that names it.
///
/// `Debug` leaves the private key out.
///
/// ```
/// use netser_transport::udp::UdpServerConfig;
/// let config = UdpServerConfig { max_clients: 32, ..UdpServerConfig::new([7; 32]) };
/// assert!(config.public_addresses.is_empty()); // the bound address
/// assert_eq!(config.max_pending, 256);
/// assert!(!format!("{config:?}").contains("7, 7"));
/// ```
#[derive(Clone)]
pub struct UdpServerConfig {
    /// The key shared with the backend that issues connect tokens (32 bytes).
    pub private_key: Key,
    /// Addresses clients reach the server at, as their connect tokens list them. Empty
    /// (the default): the address the socket is bound to, which suits a server bound to
    /// a specific address, not `0.0.0.0`.
    pub public_addresses: Vec<SocketAddr>,
    /// Client slots, 1 to [`netcode::MAX_CLIENTS`] (default 64); otherwise
    /// [`ServerConfigError::MaxClients`](netcode::ServerConfigError::MaxClients).
    pub max_clients: usize,
    /// Most handshakes in progress at once, 1 to [`netcode::MAX_PENDING`] (default
    /// 256); beyond it requests are refused and counted
    /// ([`Refusal::PendingFull`](netcode::Refusal::PendingFull)), which bounds the
    /// memory a flood of valid tokens can take. Out of bounds:
    /// [`ServerConfigError::MaxPending`](netcode::ServerConfigError::MaxPending).
    pub max_pending: usize,
    /// Most bytes of netcode datagrams queued between two
    /// [`transmit`](UdpServer::transmit) (default 4 MiB, at least one packet,
    /// [`netcode::MAX_PACKET_BYTES`]); beyond it packets are not queued and are counted
    /// ([`NetcodeServer::dropped_datagrams`](crate::netcode::NetcodeServer::dropped_datagrams)). Below one packet:
    /// [`ServerConfigError::MaxOutboxBytes`](netcode::ServerConfigError::MaxOutboxBytes).
    pub max_outbox_bytes: usize,
    /// The byte layout of tokens and packets: [`Layout::Standard`](netcode::Layout::Standard)
    /// (the default: netcode's standard, as its C reference writes it, with payloads of
    /// at most 1200 bytes), or [`Layout::Renetcode`](netcode::Layout::Renetcode) to serve
    /// clients built on the `renetcode` crate. Clients read theirs from their token.
    pub layout: netcode::Layout,
    /// The socket settings (buffers, optional simulators, linger), in the bounds
    /// [`UdpConfig::validate`] gives; otherwise [`StartError::Config`].
    pub udp: UdpConfig,
    /// What one connected client may make the server do a second (datagrams, bytes,
    /// messages) and whether an abusive one is disconnected (default
    /// [`BudgetConfig::default`]: several times what a default connection sends, never
    /// disconnecting). Datagrams past it are refused before decryption and counted in
    /// [`Server::budgets`](crate::netcode::Server::budgets). Each setting's bounds are on [`BudgetConfig`]; one out of
    /// them: [`StartError::Setup`] with [`SetupError::Budget`]. On Linux a client the
    /// budget refused is also isolated on a socket of its own until it leaves
    /// ([`UdpDriver::isolate`]), so that its flood cannot fill the kernel buffer the
    /// other clients' datagrams wait in.
    pub budget: BudgetConfig,
}

impl UdpServerConfig {
    /// The defaults: those of [`ServerConfig::new`] (64 clients, 256 pending
    /// handshakes, a 4 MiB outbox), the default socket settings.
    pub fn new(private_key: Key) -> Self {
        let netcode = ServerConfig::new(0, private_key, Vec::new());
        Self {
            private_key,
            public_addresses: Vec::new(),
            max_clients: netcode.max_clients,
            max_pending: netcode.max_pending,
            max_outbox_bytes: netcode.max_outbox_bytes,
            layout: netcode.layout,
            udp: UdpConfig::default(),
            budget: BudgetConfig::default(),
        }
    }

    /// The netcode server's settings for `protocol_id`, with `public_addresses` if none
    /// are set.
    fn netcode(&self, protocol_id: u64, public_addresses: Vec<SocketAddr>) -> ServerConfig {
        ServerConfig {
            max_clients: self.max_clients,
            max_pending: self.max_pending,
            max_outbox_bytes: self.max_outbox_bytes,
            layout: self.layout,
            ..ServerConfig::new(protocol_id, self.private_key, public_addresses)
        }
    }
}

impl fmt::Debug for UdpServerConfig {
    // The private key stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpServerConfig")
            .field("public_addresses", &self.public_addresses)
            .field("max_clients", &self.max_clients)
            .field("max_pending", &self.max_pending)
            .field("max_outbox_bytes", &self.max_outbox_bytes)
            .field("layout", &self.layout)
            .field("udp", &self.udp)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// Why a [`UdpServer`] or [`UdpClient`](super::UdpClient) could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartError {
    /// The socket could not be bound or set up.
    Io(io::Error),
    /// A netcode or connection setting, or the connect token, was refused.
    Setup(SetupError),
    /// A socket setting is out of its bounds.
    Config(UdpConfigError),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(_) => write!(f, "the socket could not be bound or set up"),
            Self::Setup(_) => write!(f, "the netcode or connection setup was refused"),
            Self::Config(_) => write!(f, "a socket setting is out of its bounds"),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Setup(e) => Some(e),
            Self::Config(e) => Some(e),
        }
    }
}

impl From<io::Error> for StartError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<UdpConfigError> for StartError {
    fn from(e: UdpConfigError) -> Self {
        Self::Config(e)
    }
}

impl From<SetupError> for StartError {
    fn from(e: SetupError) -> Self {
        Self::Setup(e)
    }
}

/// What happened since the last frame, from [`UdpServer::poll_event`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UdpServerEvent<In> {
    /// A client completed the handshake.
    ClientConnected {
        /// The id from its connect token.
        client_id: ClientId,
        /// Its address.
        addr: SocketAddr,
        /// The user data of its connect token.
        user_data: Box<[u8; USER_DATA_BYTES]>,
    },
    /// A client left, timed out or was disconnected; its slot and memory are freed.
    /// Always after the client's [`ClientConnected`](UdpServerEvent::ClientConnected) and
    /// the messages it sent before leaving.
    ClientDisconnected {
        /// The id from its connect token.
        client_id: ClientId,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        reason: DisconnectReason,
    },
    /// A message arrived (in its channel's order).
    Message {
        /// From whom.
        client_id: ClientId,
        /// On which channel.
        channel: ChannelId,
        /// The message.
        message: In,
    },
    /// A block being sent to a client advanced (slices acked by the client).
    BlockProgress {
        /// To whom.
        client_id: ClientId,
        /// How far.
        progress: BlockProgress,
    },
}

/// A game server over UDP: the sans-IO [`Server`] (netcode sessions, one
/// [`Connection`](crate::connection::Connection) per client) on a [`UdpDriver`] and its clock. Call
/// [`receive`](Self::receive) at the start of each frame, read
/// [`poll_event`](Self::poll_event), send, then [`transmit`](Self::transmit).
///
/// ```
/// use netser_transport::netcode::Protocol;
/// use netser_transport::udp::{UdpServerEvent, UdpServer, UdpServerConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Clients send u16, the server sends u32; the default channels.
/// let protocol = Protocol::<u16, u32>::new();
/// let config = UdpServerConfig::new([7; 32]);
/// let mut server = UdpServer::bind("127.0.0.1:0", &protocol, config)?;
/// for _frame in 0..3 {
///     server.receive();
///     while let Some(event) = server.poll_event() {
///         match event {
///             UdpServerEvent::ClientConnected { client_id, .. } => println!("{client_id} joined"),
///             UdpServerEvent::Message { client_id, message, .. } => println!("{client_id}: {message}"),
///             _ => {}
///         }
///     }
///     // To everyone connected (nobody here); an error names the first client that refused.
///     server.broadcast_message(1, &42)?;
///     server.transmit();
/// }
/// server.shutdown(std::time::Duration::from_millis(10));
/// # Ok(())
/// # }
/// ```
///
/// Memory is bounded: the [`Server`]'s slots and connections (each bounded by its
/// configuration), the driver's bounded send queue, and at most [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS)
/// events.
///
/// `Debug` shows a summary (address, clients, queues), never a key.
///
/// Leaving: [`shutdown`](Self::shutdown) delivers what is queued, then the disconnects.
/// Dropping a server disconnects the clients still connected (as
/// [`disconnect_all`](Self::disconnect_all)), and its driver sends what it holds, the
/// disconnect packets included, for at most [`UdpConfig::linger`] (default 1 s; only a
/// send simulator or a full kernel buffer makes it wait), so the clients learn at once
/// instead of timing the server out.
pub struct UdpServer<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone = ()> {
    server: Server<Out, In, S>,
    driver: UdpDriver,
    channels: usize,
    /// At most [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS).
    events: EventQueue<UdpServerEvent<In>>,
    /// The connected clients whose connect event was queued: only their messages and
    /// disconnect reach the game (at most `max_clients`).
    announced: HashSet<ClientId>,
    /// Last block progress reported per client, to report changes only.
    blocks: HashMap<ClientId, BlockProgress>,
    /// Clients (id and slot) and channel walked by `poll_event` for messages, refreshed
    /// by `receive`; the slot spares a look-up by id per client and channel.
    message_order: Vec<(ClientId, usize)>,
    message_cursor: (usize, u8),
    /// The game's clock less the driver's, as the last `receive_at` / `transmit_at` gave
    /// it (zero on the driver's clock).
    offset: f64,
    /// Datagrams the budgets had refused when clients were last isolated.
    refused_seen: u64,
    /// Whether the platform can isolate a peer ([`UdpDriver::isolate`]).
    can_isolate: bool,
}

/// What only reads the sans-IO server ([`Server`](crate::netcode::Server)) is read through it: its state,
/// stats, network info, snapshots and connections (`udp_server.network_info(client_id)`).
/// What changes it goes through this type's methods, which keep the socket in step.
impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> std::ops::Deref
    for UdpServer<Out, In, S>
{
    type Target = Server<Out, In, S>;

    fn deref(&self) -> &Self::Target {
        &self.server
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> UdpServer<Out, In, S> {
    /// Binds a UDP socket to `addr` and starts a server of `protocol` on it (its clients
    /// use the same [`Protocol`]).
    ///
    /// # Errors
    /// [`StartError`] if the socket cannot be bound or a setting is refused.
    pub fn bind(
        addr: impl ToSocketAddrs,
        protocol: &Protocol<In, Out, S>,
        config: UdpServerConfig,
    ) -> Result<Self, StartError> {
        config.udp.validate()?;
        let driver = UdpDriver::bind(addr, config.udp.clone())?;
        Self::with_driver(driver, protocol, config)
    }

    /// A server on a driver the caller set up (its own socket, options, simulators);
    /// `config.udp` is not used.
    ///
    /// # Errors
    /// [`StartError::Setup`] if a setting is refused, [`StartError::Config`] if the
    /// driver's settings are out of the bounds [`UdpConfig::validate`] gives.
    pub fn with_driver(
        driver: UdpDriver,
        protocol: &Protocol<In, Out, S>,
        config: UdpServerConfig,
    ) -> Result<Self, StartError> {
        driver.config().validate()?;
        let public_addresses = if config.public_addresses.is_empty() {
            vec![driver.local_addr()]
        } else {
            config.public_addresses.clone()
        };
        let netcode = config.netcode(protocol.id(), public_addresses);
        let channels = protocol.connection().channels.len();
        // Constructed at zero: the clock (the driver's or the game's) starts at the first frame.
        let mut server = Server::new(0.0, SystemTime::now(), netcode, protocol)?;
        server
            .set_budget_config(config.budget.clone())
            .map_err(SetupError::Budget)?;
        info!(addr = %driver.local_addr(), max_clients = config.max_clients, "udp server: listening");
        Ok(Self {
            server,
            driver,
            channels,
            events: event_queue(),
            announced: HashSet::new(),
            blocks: HashMap::new(),
            message_order: Vec::new(),
            message_cursor: (0, 0),
            offset: 0.0,
            refused_seen: 0,
            can_isolate: true,
        })
    }

    /// The start of a frame: reads the clock ([`now`](Self::now)) and takes every datagram
    /// waiting on the socket (handshakes, payloads; anything else refused and counted),
    /// then queues the events: connects, block progress, and the messages that arrived.
    pub fn receive(&mut self) {
        self.receive_at(self.now());
    }

    /// [`receive`](Self::receive) on the game's clock: `now` is the game's monotonic time
    /// in seconds (an engine's real time since start, say), and the whole UDP layer runs on
    /// it from here on: [`now`](Self::now) is the driver's clock moved to agree with it,
    /// and [`poll_timeout`](Self::poll_timeout) is on it.
    ///
    /// ```
    /// use netser_transport::udp::{UdpServer, UdpServerConfig};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let protocol = netser_transport::netcode::Protocol::<u16, u32>::new();
    /// let config = UdpServerConfig::new([7; 32]);
    /// let mut server = UdpServer::bind("127.0.0.1:0", &protocol, config)?;
    /// let engine_time = 1000.0;
    /// server.receive_at(engine_time);
    /// server.transmit_at(engine_time + 0.001);
    /// assert!(server.now() >= engine_time);
    /// # Ok(())
    /// # }
    /// ```
    pub fn receive_at(&mut self, now: f64) {
        self.offset = now - self.driver.now();
        // Token expiry follows the wall clock, as netcode's reference server reads it.
        self.server.set_unix_time(now, SystemTime::now());
        self.driver.flush();
        let server = &mut self.server;
        self.driver
            .receive(|from, bytes| server.handle_datagram(now, from, bytes));
        self.isolate_refused();
        self.pump_events();
        // The last frame's order gives its room back: no allocation per frame.
        let mut clients = std::mem::take(&mut self.message_order);
        clients.clear();
        let announced = &self.announced;
        clients.extend(
            self.server
                .netcode()
                .client_slots()
                .filter(|(_, id)| announced.contains(id))
                .map(|(slot, id)| (id, slot)),
        );
        for &(client_id, slot) in &clients {
            let progress = self
                .server
                .connection_at(slot, client_id)
                .and_then(BlockProgress::sending);
            // Most clients have no block in flight, nor had one: no look-up for them.
            let last = if self.blocks.is_empty() {
                None
            } else {
                self.blocks.get(&client_id).copied()
            };
            if let Some(progress) = BlockProgress::change(last, progress) {
                push_event(
                    &mut self.events,
                    UdpServerEvent::BlockProgress {
                        client_id,
                        progress,
                    },
                );
            }
            match (progress, last) {
                (Some(p), _) => {
                    self.blocks.insert(client_id, p);
                }
                (None, Some(_)) => {
                    self.blocks.remove(&client_id);
                }
                (None, None) => {}
            }
        }
        clients.sort_unstable();
        self.message_order = clients;
        self.message_cursor = (0, 0);
    }

    /// Isolates every connected client whose budget refused its datagrams
    /// ([`UdpDriver::isolate`]): a flood from it then fills only its own kernel buffer,
    /// and the others' datagrams are never dropped behind it. Walks the clients only
    /// when the budgets refused something new.
    fn isolate_refused(&mut self) {
        let refused = self.server.budgets().counters().refused();
        if refused == self.refused_seen || !self.can_isolate {
            return;
        }
        self.refused_seen = refused;
        let netcode = self.server.netcode();
        let budgets = self.server.budgets();
        for client_id in netcode.client_ids() {
            let over = netcode
                .client_slot(client_id)
                .and_then(|slot| budgets.client_counters(slot))
                .is_some_and(|c| c.refused() > 0);
            let Some(addr) = netcode.client_addr(client_id).filter(|_| over) else {
                continue;
            };
            match self.driver.isolate(addr) {
                Ok(true) => info!(client_id, %addr, "udp server: client over budget isolated"),
                Ok(false) => {}
                Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                    self.can_isolate = false;
                    return;
                }
                Err(e) => debug!(client_id, %addr, %e, "udp server: cannot isolate a client"),
            }
        }
    }

    /// Moves the layer below's connects and disconnects into this server's events, with
    /// the messages a leaving client sent before its disconnect.
    fn pump_events(&mut self) {
        while let Some(event) = self.server.poll_event() {
            match event {
                netcode::ServerEvent::ClientConnected {
                    client_id,
                    addr,
                    user_data,
                } => {
                    info!(client_id, %addr, "udp server: client connected");
                    let event = UdpServerEvent::ClientConnected {
                        client_id,
                        addr,
                        user_data,
                    };
                    if push_event(&mut self.events, event) {
                        self.announced.insert(client_id);
                    }
                }
                netcode::ServerEvent::ClientDisconnected {
                    client_id,
                    addr,
                    reason,
                } => {
                    info!(client_id, %reason, "udp server: client disconnected");
                    self.blocks.remove(&client_id);
                    self.driver.release(addr);
                    if !self.announced.remove(&client_id) {
                        // Its connect was dropped: the game never heard of it. Its unread
                        // messages are counted by the server when freed.
                        self.events.count_dropped(1);
                        continue;
                    }
                    // The messages that arrived before the disconnect come before it.
                    for channel in 0..self.channels {
                        let channel = ChannelId(channel as u8);
                        while let Some(message) =
                            self.server.receive_closing_message(client_id, channel)
                        {
                            push_event(
                                &mut self.events,
                                UdpServerEvent::Message {
                                    client_id,
                                    channel,
                                    message,
                                },
                            );
                        }
                    }
                    push_event(
                        &mut self.events,
                        UdpServerEvent::ClientDisconnected {
                            client_id,
                            addr,
                            reason,
                        },
                    );
                }
            }
        }
    }

    /// The next event: connects, disconnects and block progress first, then every
    /// message received, client by client and channel by channel (each in its channel's
    /// order). A message taken here is not returned by
    /// [`receive_message`](Self::receive_message), and the reverse.
    pub fn poll_event(&mut self) -> Option<UdpServerEvent<In>> {
        if let Some(event) = self.events.pop() {
            return Some(event);
        }
        while let Some(&(client_id, slot)) = self.message_order.get(self.message_cursor.0) {
            while usize::from(self.message_cursor.1) < self.channels {
                let channel = ChannelId(self.message_cursor.1);
                if let Some(message) = self.server.receive_message_at(slot, client_id, channel) {
                    return Some(UdpServerEvent::Message {
                        client_id,
                        channel,
                        message,
                    });
                }
                self.message_cursor.1 += 1;
            }
            self.message_cursor = (self.message_cursor.0 + 1, 0);
        }
        None
    }

    /// The end of a frame: advances timers (keep-alives, timeouts, resends), builds each
    /// client's packets (messages, acks, block slices), encrypts and sends them.
    pub fn transmit(&mut self) {
        self.transmit_at(self.now());
    }

    /// [`transmit`](Self::transmit) on the game's clock (see
    /// [`receive_at`](Self::receive_at)).
    pub fn transmit_at(&mut self, now: f64) {
        self.offset = now - self.driver.now();
        self.server.handle_timeout(now);
        self.pump_events(); // timeouts
                            // Straight from the outbox the datagrams were sealed in: no copy on the way.
        let driver = &mut self.driver;
        self.server
            .drain_transmits(|bytes, datagrams| driver.send_laid_out(bytes, datagrams));
        self.driver.flush();
    }

    /// Sets how whole snapshots are kept and sent (the clients' must match); see
    /// [`Server::set_snapshot_config`].
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_snapshot_config(
        &mut self,
        config: SnapshotConfig,
    ) -> Result<(), SnapshotConfigError> {
        self.server.set_snapshot_config(config)
    }

    /// Sets how entity sets are sent (the clients' must match); see
    /// [`Server::set_entity_config`].
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_entity_config(&mut self, config: EntityConfig) -> Result<(), SnapshotConfigError> {
        self.server.set_entity_config(config)
    }

    /// Makes `snapshot` the newest world state (once a tick); returns its sequence. See
    /// [`Server::push_snapshot`].
    pub fn push_snapshot(&mut self, snapshot: S) -> u16 {
        self.server.push_snapshot(snapshot)
    }

    /// Sends the newest snapshot to one client, against the newest one it acked; it goes
    /// out at the next [`transmit`](Self::transmit). See [`Server::send_snapshot`].
    ///
    /// # Errors
    /// [`SnapshotError::NotConnected`], or why it could not be sent.
    pub fn send_snapshot(&mut self, client_id: ClientId) -> Result<SendOutcome, SnapshotError> {
        let now = self.now();
        self.server.send_snapshot(now, client_id)
    }

    /// [`send_snapshot`](Self::send_snapshot) to every connected client (clients that
    /// hold the same baseline share one encoding).
    ///
    /// # Errors
    /// The first client it failed for and why; the others were sent theirs.
    pub fn send_snapshot_to_all(&mut self) -> Result<(), BroadcastError<SnapshotError>> {
        let now = self.now();
        self.server.send_snapshot_to_all(now)
    }

    /// Sends one client the next packet of `world` from its priority accumulator; see
    /// [`Server::send_entities`].
    ///
    /// # Errors
    /// [`SnapshotError::NotConnected`], or why it could not be sent.
    pub fn send_entities(
        &mut self,
        client_id: ClientId,
        world: &[Option<S>],
        priority: impl FnMut(usize, &S) -> f32,
    ) -> Result<Option<u16>, SnapshotError> {
        let now = self.now();
        self.server.send_entities(now, client_id, world, priority)
    }

    /// [`send_entities`](Self::send_entities) to every connected client, with
    /// `priority(client, id, entity)`.
    ///
    /// # Errors
    /// The first client it failed for and why; the others were sent theirs.
    pub fn send_entities_to_all(
        &mut self,
        world: &[Option<S>],
        priority: impl FnMut(ClientId, usize, &S) -> f32,
    ) -> Result<(), BroadcastError<SnapshotError>> {
        let now = self.now();
        self.server.send_entities_to_all(now, world, priority)
    }

    /// Queues `message` for one client on `channel`; it goes out at the next
    /// [`transmit`](Self::transmit).
    ///
    /// # Errors
    /// [`MessageError::NotConnected`] for an unknown client; the connection's refusal
    /// otherwise (unknown channel, queue full, value out of bounds, too large).
    pub fn send_message(
        &mut self,
        client_id: ClientId,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), MessageError> {
        self.server.send_message(client_id, channel, message)
    }

    /// Queues `message` for every connected client (encoded once).
    ///
    /// # Errors
    /// The first client that refused it and why; the others still got it.
    pub fn broadcast_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), BroadcastError> {
        self.server.broadcast_message(channel, message)
    }

    /// Queues `message` for every connected client but `except` (a chat line's author).
    ///
    /// # Errors
    /// As [`broadcast_message`](Self::broadcast_message).
    pub fn broadcast_message_except(
        &mut self,
        except: ClientId,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), BroadcastError> {
        self.server
            .broadcast_message_except(except, channel, message)
    }

    /// Takes the next message from `client_id` on `channel`, if any (see
    /// [`poll_event`](Self::poll_event)).
    pub fn receive_message(
        &mut self,
        client_id: ClientId,
        channel: impl Into<ChannelId>,
    ) -> Option<In> {
        self.server.receive_message(client_id, channel)
    }

    /// Progress of the block being sent to `client_id`, if any.
    pub fn block_progress(&self, client_id: ClientId) -> Option<BlockProgress> {
        self.server
            .connection(client_id)
            .and_then(BlockProgress::sending)
    }

    /// Client slots.
    pub fn max_clients(&self) -> usize {
        self.server.netcode().max_clients()
    }

    /// Disconnects a client (it is told, redundantly, at the next
    /// [`transmit`](Self::transmit)); its slot is freed at once and a
    /// [`UdpServerEvent::ClientDisconnected`] follows. Returns whether it was connected.
    pub fn disconnect(&mut self, client_id: ClientId) -> bool {
        let was = self.server.disconnect(client_id);
        self.pump_events();
        was
    }

    /// Disconnects every client.
    pub fn disconnect_all(&mut self) {
        self.server.disconnect_all();
        self.pump_events();
    }

    /// Graceful shutdown: keeps running frames (every millisecond) until every reliable
    /// message queued to every client is acked, or `timeout` passes; then disconnects
    /// everyone, sends the disconnect packets and waits, within what is left of
    /// `timeout`, until the driver has handed them all to the kernel (a send simulator
    /// delays them; [`UdpDriver::flush_all`]). Events are left for `poll_event`. A
    /// `timeout` too large for an [`Instant`] (such as `Duration::MAX`) means no deadline:
    /// it waits for every ack.
    ///
    /// Returns whether every message was acked and every disconnect packet left in time.
    pub fn shutdown(&mut self, timeout: Duration) -> bool {
        // `Instant + Duration::MAX` panics; `None` is a deadline never reached.
        let deadline = Instant::now().checked_add(timeout);
        let acked = wait_for_acks(deadline, || {
            self.receive();
            self.transmit();
            let pending: usize = self
                .server
                .client_ids()
                .into_iter()
                .filter_map(|id| self.server.connection(id))
                .map(|c| {
                    (0..self.channels)
                        .map(|ch| c.queued_messages(ch as u8))
                        .sum::<usize>()
                })
                .sum();
            Some(pending)
        });
        self.disconnect_all();
        self.transmit();
        let flushed = self.driver.flush_all(time_left(deadline));
        info!(addr = %self.driver.local_addr(), acked, flushed, "udp server: shut down");
        acked && flushed
    }

    /// When the next timer is due (on [`now`](Self::now)'s clock), for a loop that sleeps
    /// between frames: keep-alives, timeouts, resends, simulated deliveries.
    pub fn poll_timeout(&self) -> Option<f64> {
        self.server
            .poll_timeout()
            .into_iter()
            .chain(self.driver.poll_timeout().map(|t| t + self.offset))
            .min_by(f64::total_cmp)
    }

    /// The clock every layer runs on: monotonic seconds, the driver's
    /// ([`UdpDriver::now`]) or, once [`receive_at`](Self::receive_at) or
    /// [`transmit_at`](Self::transmit_at) gave the game's, the game's.
    pub fn now(&self) -> f64 {
        self.driver.now() + self.offset
    }

    /// The address the server is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.driver.local_addr()
    }

    /// The socket driver (its counters, buffer sizes, simulator stats).
    pub fn driver(&self) -> &UdpDriver {
        &self.driver
    }

    /// The sans-IO server underneath.
    pub fn server(&self) -> &Server<Out, In, S> {
        &self.server
    }

    /// Events dropped because [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS) were waiting.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> Drop
    for UdpServer<Out, In, S>
{
    /// Disconnects the clients still connected, so they hear of it; the driver's own
    /// drop then sends what it holds within [`UdpConfig::linger`].
    fn drop(&mut self) {
        if self.server.connected_clients() > 0 {
            self.disconnect_all();
            self.transmit();
        }
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> fmt::Debug
    for UdpServer<Out, In, S>
{
    // A summary of its own, so that no key of the layers below (the private key, the
    // challenge key, the clients' session keys) can reach a log through it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let netcode = self.server.netcode();
        f.debug_struct("UdpServer")
            .field("local_addr", &self.driver.local_addr())
            .field("protocol_id", &netcode.protocol_id())
            .field("max_clients", &netcode.max_clients())
            .field("connected_clients", &netcode.connected_clients())
            .field("pending_clients", &netcode.pending_clients())
            .field("channels", &self.channels)
            .field("queued_events", &self.events.len())
            .field("dropped_events", &self.events.dropped())
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// `StartError` returns the error it wraps from `source()` and does not repeat it in
    /// Display.
    #[test]
    fn start_error_sources() {
        let setup = SetupError::MtuTooLarge { mtu: 9000 };
        crate::assert_source(&StartError::Setup(setup.clone()), &setup);
        let config = UdpConfigError::MaxReceivePerPoll;
        crate::assert_source(&StartError::Config(config), &config);

        let io = StartError::Io(io::Error::new(io::ErrorKind::AddrInUse, "port taken"));
        let source = io.source().unwrap().downcast_ref::<io::Error>().unwrap();
        assert_eq!(source.kind(), io::ErrorKind::AddrInUse);
        assert!(!io.to_string().contains("port taken"));
    }

    /// A budget setting out of its bounds stops the server from starting, named; the
    /// error's source is the budget's.
    #[test]
    fn a_bad_budget_is_refused_at_start() {
        use crate::netcode::{BudgetConfig, BudgetConfigError};
        let protocol = Protocol::<u8, u8>::new();
        let config = UdpServerConfig {
            budget: BudgetConfig {
                message_burst: 0,
                ..BudgetConfig::default()
            },
            ..UdpServerConfig::new([7; 32])
        };
        let result: Result<UdpServer<u8, u8>, _> =
            UdpServer::bind("127.0.0.1:0", &protocol, config);
        let Err(StartError::Setup(setup)) = result else {
            panic!("a zero message burst must be refused");
        };
        assert_eq!(setup, SetupError::Budget(BudgetConfigError::MessageBurst));
        crate::assert_source(&setup, &BudgetConfigError::MessageBurst);
    }

    /// A client whose connect event the full queue dropped stays unknown to the game:
    /// its messages and its disconnect are not reported either (the disconnect counted).
    #[test]
    fn a_client_whose_connect_was_dropped_stays_unknown() {
        use crate::netcode::{ConnectToken, TokenParams};
        use crate::udp::{UdpClient, UdpClientConfig};
        let key = [9; 32];
        let protocol = Protocol::<u8, u8>::new();
        let mut server =
            UdpServer::bind("127.0.0.1:0", &protocol, UdpServerConfig::new(key)).unwrap();
        server.events = EventQueue::new(0);
        let params = TokenParams {
            client_id: 3,
            ..protocol.token_params(vec![server.local_addr()], SystemTime::now())
        };
        let token = ConnectToken::generate(&params, &key).unwrap();
        let mut client = UdpClient::connect(token, &protocol, UdpClientConfig::default()).unwrap();
        let start = Instant::now();
        let frame = |server: &mut UdpServer<u8, u8>, client: &mut UdpClient<u8, u8>| {
            assert!(start.elapsed() < Duration::from_secs(5));
            client.receive();
            client.transmit();
            std::thread::sleep(Duration::from_millis(2));
            server.receive();
            server.transmit();
        };
        while server.connected_clients() == 0 || !client.is_connected() {
            frame(&mut server, &mut client);
        }
        assert_eq!(server.dropped_events(), 1);
        server.events = EventQueue::new(16);
        client.send_message(0, &1).unwrap();
        while server
            .connection(3)
            .is_some_and(|c| c.received_messages(0) == 0)
        {
            frame(&mut server, &mut client);
        }
        assert_eq!(server.poll_event(), None);
        assert!(server.disconnect(3));
        assert_eq!(server.poll_event(), None);
        assert_eq!(server.dropped_events(), 1);
    }
}
