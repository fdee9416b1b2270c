//! `UdpServer`: a game server over real UDP, called once per frame.

use std::collections::{HashMap, VecDeque};

use std::io;
use std::marker::PhantomData;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use netser::NetSerialize;
use tracing::{debug, info};

use super::common::{BlockProgress, NetworkInfo, SendError};
use super::driver::{UdpConfig, UdpDriver};
use crate::channel::wire::EncodedMessage;
use crate::channel::ChannelId;
use crate::connection;
use crate::connection::{Connection, ConnectionConfig};
use crate::netcode::{
    DisconnectReason, Key, NetcodeServer, ServerConfig, ServerConfigError,
    ServerEvent as NetcodeEvent, MAX_PACKET_BYTES,
};

/// Most events held for [`UdpServer::poll_event`] (and [`UdpClient::poll_event`](super::UdpClient::poll_event)):
/// a game that polls every frame never comes near it; beyond it new events are dropped
/// and counted ([`UdpServer::dropped_events`]), so a server that is never polled keeps
/// a bounded memory.
pub const MAX_QUEUED_EVENTS: usize = 65_536;

/// Settings of a [`UdpServer`].
///
/// ```
/// use netser_transport::udp::UdpServerConfig;
/// let config = UdpServerConfig { max_clients: 32, ..UdpServerConfig::new(0x1234, [7; 32]) };
/// assert!(config.public_addresses.is_empty()); // the bound address
/// ```
#[derive(Debug, Clone)]
pub struct UdpServerConfig {
    /// The game's protocol id: tokens and requests for another are refused. Use
    /// [`protocol_id`](super::protocol_id) for one derived from the message schemas.
    pub protocol_id: u64,
    /// The key shared with the backend that issues connect tokens (32 bytes).
    pub private_key: Key,
    /// Addresses clients reach the server at, as their connect tokens list them. Empty
    /// (the default): the address the socket is bound to, which suits a server bound to
    /// a specific address, not `0.0.0.0`.
    pub public_addresses: Vec<SocketAddr>,
    /// Client slots (default 64, at most [`crate::netcode::MAX_CLIENTS`]).
    pub max_clients: usize,
    /// The connection settings (channels, MTU, blocks); clients must use the same.
    pub connection: ConnectionConfig,
    /// The socket settings (buffers, optional simulators).
    pub udp: UdpConfig,
    /// Seconds between recomputations of each connection's estimates (RTT summary,
    /// packet loss, bandwidth) and of the resend delays that follow the RTT (default
    /// 0.1). Every frame would cost a few microseconds per client for figures that are
    /// smoothed anyway; 0 recomputes every frame.
    pub stats_interval: f64,
}

impl UdpServerConfig {
    /// The defaults: 64 clients, the default connection and socket settings.
    pub fn new(protocol_id: u64, private_key: Key) -> Self {
        Self {
            protocol_id,
            private_key,
            public_addresses: Vec::new(),
            max_clients: 64,
            connection: ConnectionConfig::default(),
            udp: UdpConfig::default(),
            stats_interval: 0.1,
        }
    }
}

/// Why a [`UdpServer`] could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The socket could not be bound or set up.
    Io(io::Error),
    /// The netcode settings were refused.
    Netcode(ServerConfigError),
    /// The connection settings were refused.
    Connection(crate::connection::ConfigError),
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "socket: {e}"),
            Self::Netcode(e) => write!(f, "netcode settings: {e}"),
            Self::Connection(e) => write!(f, "connection settings: {e}"),
        }
    }
}

impl std::error::Error for ServerError {}

impl From<io::Error> for ServerError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// What happened since the last frame, from [`UdpServer::poll_event`].
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent<In> {
    /// A client completed the handshake.
    ClientConnected {
        /// The id from its connect token.
        client_id: u64,
        /// Its address.
        addr: SocketAddr,
    },
    /// A client left, timed out or was disconnected; its slot and memory are freed.
    ClientDisconnected {
        /// The id from its connect token.
        client_id: u64,
        /// Why.
        reason: DisconnectReason,
    },
    /// A message arrived (in its channel's order).
    Message {
        /// From whom.
        client_id: u64,
        /// On which channel.
        channel: ChannelId,
        /// The message.
        message: In,
    },
    /// A block being sent to a client advanced (bytes acked by the client).
    BlockProgress {
        /// To whom.
        client_id: u64,
        /// How far.
        progress: BlockProgress,
    },
}

/// One connected client.
#[derive(Debug)]
struct Client<Out, In> {
    addr: SocketAddr,
    connection: Connection<Out, In>,
    /// Last block progress reported, to report changes only.
    block: Option<BlockProgress>,
    /// When `connection.update` last ran.
    updated_at: f64,
}

/// A game server over UDP: netcode secure sessions, one [`Connection`] per client, the
/// socket driver and the clock. Call [`update`](Self::update) at the start of each frame,
/// read [`poll_event`](Self::poll_event), send, then [`send_packets`](Self::send_packets).
///
/// ```
/// use netser_transport::udp::{ServerEvent, UdpServer, UdpServerConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let config = UdpServerConfig::new(0x1234, [7; 32]);
/// let mut server: UdpServer<String, String> = UdpServer::bind("127.0.0.1:0", config)?;
/// for _frame in 0..3 {
///     server.update();
///     while let Some(event) = server.poll_event() {
///         match event {
///             ServerEvent::ClientConnected { client_id, .. } => println!("{client_id} joined"),
///             ServerEvent::Message { client_id, message, .. } => println!("{client_id}: {message}"),
///             _ => {}
///         }
///     }
///     server.send_packets();
/// }
/// server.shutdown(std::time::Duration::from_millis(10));
/// # Ok(())
/// # }
/// ```
///
/// Memory is bounded: at most `max_clients` connections (each bounded by its
/// configuration), netcode's bounded handshake and outbox state, the driver's bounded
/// send queue, and at most [`MAX_QUEUED_EVENTS`] events.
#[derive(Debug)]
pub struct UdpServer<Out, In> {
    netcode: NetcodeServer,
    driver: UdpDriver,
    connection_config: ConnectionConfig,
    stats_interval: f64,
    clients: HashMap<u64, Client<Out, In>>,
    events: Events<ServerEvent<In>>,
    /// Clients and channel walked by `poll_event` for messages, refreshed by `update`.
    message_order: Vec<u64>,
    message_cursor: (usize, u8),
    scratch: Vec<u8>,
    _types: PhantomData<fn(&Out) -> In>,
}

impl<Out: NetSerialize, In: NetSerialize> UdpServer<Out, In> {
    /// Binds a UDP socket to `addr` and starts a server on it.
    ///
    /// # Errors
    /// [`ServerError`] if the socket cannot be bound or a setting is refused.
    pub fn bind(addr: impl ToSocketAddrs, config: UdpServerConfig) -> Result<Self, ServerError> {
        let driver = UdpDriver::bind(addr, config.udp.clone())?;
        Self::with_driver(driver, config)
    }

    /// A server on a driver the caller set up (its own socket, options, simulators);
    /// `config.udp` is not used.
    ///
    /// # Errors
    /// [`ServerError`] if a setting is refused.
    pub fn with_driver(driver: UdpDriver, config: UdpServerConfig) -> Result<Self, ServerError> {
        config.connection.validate().map_err(ServerError::Connection)?;
        let public_addresses = if config.public_addresses.is_empty() {
            vec![driver.local_addr()]
        } else {
            config.public_addresses.clone()
        };
        let netcode = NetcodeServer::new(ServerConfig {
            max_clients: config.max_clients,
            ..ServerConfig::new(config.protocol_id, config.private_key, public_addresses)
        })
        .map_err(ServerError::Netcode)?;
        info!(addr = %driver.local_addr(), max_clients = config.max_clients, "udp server: listening");
        Ok(Self {
            netcode,
            driver,
            connection_config: config.connection,
            stats_interval: config.stats_interval,
            clients: HashMap::new(),
            events: Events::default(),
            message_order: Vec::new(),
            message_cursor: (0, 0),
            scratch: vec![0; MAX_PACKET_BYTES.max(1500)],
            _types: PhantomData,
        })
    }

    /// The start of a frame: reads the clock, takes every datagram waiting on the socket
    /// (handshakes, payloads; anything else refused and counted), advances timers
    /// (timeouts free slots, keep-alives, resends) and queues the events.
    pub fn update(&mut self) {
        let now = self.driver.now();
        self.driver.flush();
        let Self {
            netcode,
            driver,
            clients,
            events,
            scratch,
            connection_config,
            stats_interval,
            ..
        } = self;
        driver.receive(|from, bytes| {
            let Some(buf) = scratch.get_mut(..bytes.len()) else {
                return; // longer than any netcode packet: the driver's limit is higher
            };
            buf.copy_from_slice(bytes);
            let received = netcode
                .process_packet(now, from, buf)
                .map(|p| (p.client_id, p.payload));
            // A handshake completed by this datagram: create the connection before the
            // next datagram, which may carry its first payload.
            handle_netcode_events(netcode, clients, events, connection_config, now);
            if let Some((client_id, payload)) = received {
                if let Some(client) = clients.get_mut(&client_id) {
                    if let Err(e) = client.connection.receive_datagram(now, payload) {
                        debug!(client_id, reason = %e, "udp server: datagram dropped by the connection");
                    }
                }
            }
        });
        netcode.update(now);
        handle_netcode_events(netcode, clients, events, connection_config, now);
        for (&client_id, client) in clients.iter_mut() {
            // Not NaN-safe comparisons on purpose: a NaN interval updates every frame.
            if !(now - client.updated_at < *stats_interval) {
                client.connection.update(now);
                client.updated_at = now;
            }
            let progress = BlockProgress::sending(&client.connection);
            let reported = BlockProgress::change(client.block, progress);
            client.block = progress;
            if let Some(progress) = reported {
                push_event(
                    events,
                    ServerEvent::BlockProgress {
                        client_id,
                        progress,
                    },
                );
            }
        }
        self.message_order.clear();
        self.message_order.extend(self.clients.keys().copied());
        self.message_order.sort_unstable();
        self.message_cursor = (0, 0);
    }

    /// The next event: connects, disconnects and block progress first, then every
    /// message received, client by client and channel by channel (each in its channel's
    /// order). A message taken here is not returned by
    /// [`receive_message`](Self::receive_message), and the reverse.
    pub fn poll_event(&mut self) -> Option<ServerEvent<In>> {
        if let Some(event) = self.events.queue.pop_front() {
            return Some(event);
        }
        let channels = self.connection_config.channels.len();
        while let Some(&client_id) = self.message_order.get(self.message_cursor.0) {
            if let Some(client) = self.clients.get_mut(&client_id) {
                while usize::from(self.message_cursor.1) < channels {
                    let channel = ChannelId(self.message_cursor.1);
                    if let Some(message) = client.connection.receive_message(channel) {
                        return Some(ServerEvent::Message {
                            client_id,
                            channel,
                            message,
                        });
                    }
                    self.message_cursor.1 += 1;
                }
            }
            self.message_cursor = (self.message_cursor.0 + 1, 0);
        }
        None
    }

    /// The end of a frame: builds each client's packets (messages, acks, block slices),
    /// encrypts them and sends them.
    pub fn send_packets(&mut self) {
        let now = self.driver.now();
        let Self {
            netcode,
            driver,
            clients,
            ..
        } = self;
        for (&client_id, client) in clients.iter_mut() {
            while let Some(datagram) = client.connection.poll_datagram(now) {
                if netcode.send_payload(client_id, datagram).is_err() {
                    // The outbox is full: hand it to the socket and try once more.
                    netcode.drain_datagrams(|to, bytes| {
                        let _ = driver.send(to, bytes);
                    });
                    if let Err(e) = netcode.send_payload(client_id, datagram) {
                        debug!(client_id, reason = %e, "udp server: packet dropped");
                    }
                }
            }
        }
        netcode.drain_datagrams(|to, bytes| {
            let _ = driver.send(to, bytes); // drops are counted by the driver
        });
        driver.flush();
    }

    /// Queues `message` for one client on `channel`; it goes out at the next
    /// [`send_packets`](Self::send_packets).
    ///
    /// # Errors
    /// [`SendError::NotConnected`] for an unknown client; the connection's refusal
    /// otherwise (unknown channel, queue full, value out of bounds, too large).
    pub fn send_message(
        &mut self,
        client_id: u64,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), SendError> {
        let client = self
            .clients
            .get_mut(&client_id)
            .ok_or(SendError::NotConnected)?;
        client.connection.send_message(channel, message)?;
        Ok(())
    }

    /// Queues `message` for every connected client. Returns how many accepted it.
    ///
    /// # Errors
    /// The first refusal (a value out of bounds is refused by every client alike); the
    /// clients before it have the message queued.
    pub fn broadcast_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<usize, SendError> {
        let channel = channel.into();
        // Encoded once for everyone, not once per client.
        let encoded = EncodedMessage::encode(message)
            .map_err(|e| SendError::Connection(connection::SendError::Encode(e)))?;
        let mut sent = 0;
        for client in self.clients.values_mut() {
            client.connection.send_encoded(channel, encoded.clone())?;
            sent += 1;
        }
        Ok(sent)
    }

    /// Takes the next message from `client_id` on `channel`, if any (see
    /// [`poll_event`](Self::poll_event)).
    pub fn receive_message(
        &mut self,
        client_id: u64,
        channel: impl Into<ChannelId>,
    ) -> Option<In> {
        self.clients
            .get_mut(&client_id)?
            .connection
            .receive_message(channel)
    }

    /// RTT, loss and bandwidth of one client's connection.
    pub fn network_info(&self, client_id: u64) -> Option<NetworkInfo> {
        self.clients
            .get(&client_id)
            .map(|c| NetworkInfo::of(&c.connection))
    }

    /// Progress of the block being sent to `client_id`, if any.
    pub fn block_progress(&self, client_id: u64) -> Option<BlockProgress> {
        self.clients
            .get(&client_id)
            .and_then(|c| BlockProgress::sending(&c.connection))
    }

    /// One client's connection (counters, channel state, endpoint).
    pub fn connection(&self, client_id: u64) -> Option<&Connection<Out, In>> {
        self.clients.get(&client_id).map(|c| &c.connection)
    }

    /// The connected clients' ids, in no particular order.
    pub fn client_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.clients.keys().copied()
    }

    /// The address a client connected from.
    pub fn client_addr(&self, client_id: u64) -> Option<SocketAddr> {
        self.clients.get(&client_id).map(|c| c.addr)
    }

    /// Connected clients.
    pub fn connected_clients(&self) -> usize {
        self.clients.len()
    }

    /// Client slots.
    pub fn max_clients(&self) -> usize {
        self.netcode.max_clients()
    }

    /// Disconnects a client (it is told, redundantly); its slot is freed at once and a
    /// [`ServerEvent::ClientDisconnected`] follows. Returns whether it was connected.
    pub fn disconnect(&mut self, client_id: u64) -> bool {
        let was = self.netcode.disconnect(client_id);
        let now = self.driver.now();
        handle_netcode_events(
            &mut self.netcode,
            &mut self.clients,
            &mut self.events,
            &self.connection_config,
            now,
        );
        was
    }

    /// Disconnects every client.
    pub fn disconnect_all(&mut self) {
        self.netcode.disconnect_all();
        let now = self.driver.now();
        handle_netcode_events(
            &mut self.netcode,
            &mut self.clients,
            &mut self.events,
            &self.connection_config,
            now,
        );
    }

    /// Graceful shutdown: keeps running frames (every millisecond) until every reliable
    /// message queued to every client is acked, or `timeout` passes; then disconnects
    /// everyone and sends the disconnect packets. Events are left for `poll_event`.
    pub fn shutdown(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let channels = self.connection_config.channels.len();
        loop {
            self.update();
            self.send_packets();
            let pending: usize = self
                .clients
                .values()
                .flat_map(|c| (0..channels).map(|ch| c.connection.queued_messages(ch as u8)))
                .sum();
            if pending == 0 || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        self.disconnect_all();
        self.send_packets();
        info!(addr = %self.driver.local_addr(), "udp server: shut down");
    }

    /// When the next timer is due (on [`now`](Self::now)'s clock), for a loop that sleeps
    /// between frames: keep-alives, timeouts, resends, simulated deliveries.
    pub fn next_wakeup(&self) -> Option<f64> {
        let mut wakeup = self.netcode.next_wakeup();
        let mut at = |t: Option<f64>| {
            if let Some(t) = t {
                wakeup = Some(wakeup.map_or(t, |w: f64| w.min(t)));
            }
        };
        at(self.driver.next_wakeup());
        for client in self.clients.values() {
            at(client.connection.next_wakeup());
        }
        wakeup
    }

    /// The clock every layer runs on (Unix seconds, monotonic).
    pub fn now(&self) -> f64 {
        self.driver.now()
    }

    /// The address the server is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.driver.local_addr()
    }

    /// The socket driver (its counters, buffer sizes, simulator stats).
    pub fn driver(&self) -> &UdpDriver {
        &self.driver
    }

    /// The netcode server (refusal counters by reason, memory, pending handshakes).
    pub fn netcode(&self) -> &NetcodeServer {
        &self.netcode
    }

    /// Events dropped because [`MAX_QUEUED_EVENTS`] were waiting.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped
    }
}

/// Applies netcode's connects and disconnects: creates or frees the connection, logs,
/// queues the event.
fn handle_netcode_events<Out: NetSerialize, In: NetSerialize>(
    netcode: &mut NetcodeServer,
    clients: &mut HashMap<u64, Client<Out, In>>,
    events: &mut Events<ServerEvent<In>>,
    config: &ConnectionConfig,
    now: f64,
) {
    while let Some(event) = netcode.poll_event() {
        match event {
            NetcodeEvent::ClientConnected {
                client_id, addr, ..
            } => {
                // The configuration was validated when the server was created.
                let Ok(connection) = Connection::new(config.clone(), now) else {
                    netcode.disconnect(client_id);
                    continue;
                };
                info!(client_id, %addr, "udp server: client connected");
                clients.insert(
                    client_id,
                    Client {
                        addr,
                        connection,
                        block: None,
                        updated_at: now,
                    },
                );
                push_event(events, ServerEvent::ClientConnected { client_id, addr });
            }
            NetcodeEvent::ClientDisconnected {
                client_id,
                addr,
                reason,
            } => {
                if clients.remove(&client_id).is_some() {
                    info!(client_id, %addr, %reason, "udp server: client disconnected");
                    push_event(events, ServerEvent::ClientDisconnected { client_id, reason });
                }
            }
        }
    }
}

/// The bounded event queue.
#[derive(Debug)]
pub(crate) struct Events<E> {
    pub(crate) queue: VecDeque<E>,
    pub(crate) dropped: u64,
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Self {
            queue: VecDeque::new(),
            dropped: 0,
        }
    }
}

/// Queues an event unless [`MAX_QUEUED_EVENTS`] are waiting (then counts it dropped).
pub(crate) fn push_event<E>(events: &mut Events<E>, event: E) {
    if events.queue.len() < MAX_QUEUED_EVENTS {
        events.queue.push_back(event);
    } else {
        events.dropped += 1;
        debug!(dropped = events.dropped, "udp: event queue full, event dropped");
    }
}
