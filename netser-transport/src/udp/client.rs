//! `UdpClient`: the sans-IO [`Client`] on a real UDP socket, called once per frame.

use std::fmt;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use netser::{NetDelta, NetSerialize};
use tracing::info;

use super::common::{event_queue, push_event, time_left, wait_for_acks, BlockProgress};
use super::driver::{UdpConfig, UdpDriver};
use super::server::StartError;
use crate::channel::ChannelId;
use crate::netcode::events::EventQueue;
use crate::netcode::{Client, ClientId, ConnectToken, DisconnectReason, MessageError, Protocol};
use crate::snapshot::{EntityConfig, SnapshotConfig, SnapshotConfigError};

/// Settings of a [`UdpClient`]'s socket. The channels and connection settings are not
/// here: they come from the [`Protocol`] the client is given, the server's.
///
/// ```
/// use netser_transport::udp::UdpClientConfig;
/// let config = UdpClientConfig::default();
/// assert!(config.udp.send_simulator.is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct UdpClientConfig {
    /// Socket buffers and optional simulators.
    pub udp: UdpConfig,
}

/// What happened since the last frame, from [`UdpClient::poll_event`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UdpClientEvent<In> {
    /// The handshake completed: messages flow.
    Connected {
        /// The id from the connect token.
        client_id: ClientId,
    },
    /// The connection ended (or never started), with the reason.
    Disconnected {
        /// Why.
        reason: DisconnectReason,
    },
    /// A message arrived (in its channel's order).
    Message {
        /// On which channel.
        channel: ChannelId,
        /// The message.
        message: In,
    },
    /// A block from the server advanced (slices received).
    BlockProgress {
        /// How far.
        progress: BlockProgress,
    },
}

/// A game client over UDP: the sans-IO [`Client`] (a netcode session with a connect
/// token, a [`Connection`](crate::connection::Connection)) on a [`UdpDriver`] and its clock. Call
/// [`receive`](Self::receive) at the start of each frame, read
/// [`poll_event`](Self::poll_event), send, then [`transmit`](Self::transmit).
///
/// ```no_run
/// use netser_transport::netcode::{generate_key, ConnectToken, DefaultChannel, Protocol, TokenParams};
/// use netser_transport::udp::{UdpClientEvent, UdpClient, UdpClientConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // One protocol for the server, the client and the backend: clients send u16, the
/// // server u32, on the default channels.
/// let protocol = Protocol::<u16, u32>::new();
/// // In a real game the backend issues the token and sends it to the client over HTTPS.
/// let key = generate_key()?;
/// let server = "127.0.0.1:40000".parse()?;
/// let params = TokenParams {
///     client_id: 42,
///     ..protocol.token_params(vec![server], std::time::SystemTime::now())
/// };
/// let token = ConnectToken::generate(&params, &key)?;
///
/// let mut client = UdpClient::connect(token, &protocol, UdpClientConfig::default())?;
/// loop {
///     client.receive();
///     while let Some(event) = client.poll_event() {
///         match event {
///             UdpClientEvent::Connected { .. } => {
///                 client.send_message(DefaultChannel::ReliableOrdered, &7)?
///             }
///             UdpClientEvent::Message { message, .. } => println!("{message}"),
///             UdpClientEvent::Disconnected { reason } => return Ok(println!("{reason}")),
///             _ => {}
///         }
///     }
///     client.transmit();
///     std::thread::sleep(std::time::Duration::from_millis(16));
/// }
/// # }
/// ```
///
/// Leaving: [`shutdown`](Self::shutdown) delivers what is queued, then the disconnect.
/// Dropping a client that is still connected or connecting disconnects it (as
/// [`disconnect`](Self::disconnect)), and its driver sends what it holds, the disconnect
/// packets included, for at most [`UdpConfig::linger`] (default 1 s; only a send
/// simulator or a full kernel buffer makes it wait), so the server learns at once
/// instead of timing the client out.
///
/// `Debug` shows a summary (id, state, addresses, queues), never a key.
pub struct UdpClient<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone = ()> {
    client: Client<Out, In, S>,
    driver: UdpDriver,
    channels: usize,
    /// Whether the Connected / Disconnected events were queued.
    announced_connected: bool,
    announced_disconnected: bool,
    /// At most [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS).
    events: EventQueue<UdpClientEvent<In>>,
    block: Option<BlockProgress>,
    message_channel: u8,
    /// The game's clock less the driver's, as the last `receive_at` / `transmit_at` gave
    /// it (zero on the driver's clock).
    offset: f64,
}

/// What only reads the sans-IO client ([`Client`](crate::netcode::Client)) is read through it: its state,
/// stats, network info, snapshots and connections (`udp_client.network_info()`).
/// What changes it goes through this type's methods, which keep the socket in step.
impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> std::ops::Deref
    for UdpClient<Out, In, S>
{
    type Target = Client<Out, In, S>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> UdpClient<Out, In, S> {
    /// Binds a socket on any port (IPv4 or IPv6, as the token's first server address)
    /// and starts connecting with `token` at the next [`transmit`](Self::transmit).
    ///
    /// # Errors
    /// [`StartError::Io`] if no socket can be bound; [`StartError::Setup`] with
    /// [`SetupError::ProtocolMismatch`](crate::netcode::SetupError::ProtocolMismatch) if the
    /// token is for another protocol than `protocol` (the server's differs: message
    /// types, channels or settings), or if the connection settings are refused;
    /// [`StartError::Config`] if a socket setting is out of the bounds
    /// [`UdpConfig::validate`] gives.
    pub fn connect(
        token: ConnectToken,
        protocol: &Protocol<Out, In, S>,
        config: UdpClientConfig,
    ) -> Result<Self, StartError> {
        config.udp.validate()?;
        let any: SocketAddr = match token.server_addresses().first() {
            Some(SocketAddr::V6(_)) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
            _ => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
        };
        let driver = UdpDriver::from_socket(UdpSocket::bind(any)?, config.udp)?;
        Self::with_driver(driver, token, protocol)
    }

    /// A client on a driver the caller set up (its own socket, simulators).
    ///
    /// # Errors
    /// [`StartError::Setup`] and [`StartError::Config`] (for the driver's settings), as
    /// [`connect`](Self::connect).
    pub fn with_driver(
        driver: UdpDriver,
        token: ConnectToken,
        protocol: &Protocol<Out, In, S>,
    ) -> Result<Self, StartError> {
        driver.config().validate()?;
        let channels = protocol.connection().channels.len();
        let server = token.server_addresses().first().copied();
        let client_id = token.client_id();
        // Constructed at zero: the clock (the driver's or the game's) starts at the first frame.
        let client = Client::new(0.0, token, protocol)?;
        info!(client_id, ?server, "udp client: connecting");
        Ok(Self {
            client,
            driver,
            channels,
            announced_connected: false,
            announced_disconnected: false,
            events: event_queue(),
            block: None,
            message_channel: 0,
            offset: 0.0,
        })
    }

    /// The start of a frame: reads the clock ([`now`](Self::now)), takes the datagrams
    /// waiting on the socket, and queues events (connected, disconnected, block progress,
    /// messages).
    pub fn receive(&mut self) {
        self.receive_at(self.now());
    }

    /// [`receive`](Self::receive) on the game's clock: `now` is the game's monotonic time
    /// in seconds, and the whole UDP layer runs on it from here on (as
    /// [`UdpServer::receive_at`](super::UdpServer::receive_at)).
    pub fn receive_at(&mut self, now: f64) {
        self.offset = now - self.driver.now();
        self.driver.flush();
        let client = &mut self.client;
        self.driver
            .receive(|from, bytes| client.handle_datagram(now, from, bytes));
        self.track_state();
        let progress = BlockProgress::receiving(self.client.connection());
        if let Some(progress) = BlockProgress::change(self.block, progress) {
            push_event(&mut self.events, UdpClientEvent::BlockProgress { progress });
        }
        self.block = progress;
        self.message_channel = 0;
    }

    fn track_state(&mut self) {
        // Each is queued once; one the full queue refused is tried again next frame, so
        // neither is lost and Connected stays before Disconnected.
        if self.client.is_connected() && !self.announced_connected {
            let client_id = self.client.client_id();
            self.announced_connected =
                push_event(&mut self.events, UdpClientEvent::Connected { client_id });
            if self.announced_connected {
                info!(client_id, server = %self.client.server_addr(), "udp client: connected");
            }
        }
        if let Some(reason) = self.client.disconnect_reason() {
            if !self.announced_disconnected {
                self.announced_disconnected =
                    push_event(&mut self.events, UdpClientEvent::Disconnected { reason });
                if self.announced_disconnected {
                    info!(client_id = self.client.client_id(), %reason, "udp client: disconnected");
                }
            }
        }
    }

    /// The next event: connected, disconnected, block progress, then the messages
    /// received, channel by channel. A message taken here is not returned by
    /// [`receive_message`](Self::receive_message), and the reverse.
    pub fn poll_event(&mut self) -> Option<UdpClientEvent<In>> {
        if let Some(event) = self.events.pop() {
            return Some(event);
        }
        while usize::from(self.message_channel) < self.channels {
            let channel = ChannelId(self.message_channel);
            if let Some(message) = self.client.receive_message(channel) {
                return Some(UdpClientEvent::Message { channel, message });
            }
            self.message_channel += 1;
        }
        None
    }

    /// The end of a frame: advances the handshake, keep-alives, timeouts and resends,
    /// builds the packets, encrypts and sends them.
    pub fn transmit(&mut self) {
        self.transmit_at(self.now());
    }

    /// [`transmit`](Self::transmit) on the game's clock (see
    /// [`receive_at`](Self::receive_at)).
    pub fn transmit_at(&mut self, now: f64) {
        self.offset = now - self.driver.now();
        self.client.handle_timeout(now);
        self.track_state();
        while let Some(transmit) = self.client.poll_transmit() {
            let _ = self.driver.send(transmit.to, transmit.data); // drops are counted there
        }
        self.driver.flush();
    }

    /// Queues a message on `channel`; it goes out at the next
    /// [`transmit`](Self::transmit) once connected (reliable messages queued while
    /// connecting wait for the handshake).
    ///
    /// # Errors
    /// [`MessageError::NotConnected`] after a disconnect; the connection's refusal
    /// otherwise.
    pub fn send_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), MessageError> {
        self.client.send_message(channel, message)
    }

    /// Takes the next message on `channel`, if any.
    pub fn receive_message(&mut self, channel: impl Into<ChannelId>) -> Option<In> {
        self.client.receive_message(channel)
    }

    /// Disconnects: tells the server (redundantly, so one packet survives loss) and queues
    /// [`UdpClientEvent::Disconnected`]. The disconnect packets go to the driver at once; a
    /// send simulator may hold them for a while, and they still leave when the client is
    /// dropped (within [`UdpConfig::linger`]). To wait for them and for the reliable
    /// messages queued before, use [`shutdown`](Self::shutdown).
    pub fn disconnect(&mut self) {
        self.client.disconnect();
        self.transmit();
    }

    /// Graceful leave: keeps running frames (every millisecond) while connected, until
    /// every reliable message queued is acked by the server or `timeout` passes; then
    /// disconnects and waits, within what is left of `timeout`, until the driver has
    /// handed the disconnect packets to the kernel ([`UdpDriver::flush_all`]). Events are
    /// left for [`poll_event`](Self::poll_event). A `timeout` too large for an
    /// [`Instant`] (such as `Duration::MAX`) means no deadline.
    ///
    /// Returns whether every queued message was acked and the disconnect left in time
    /// (`false` too if the connection ended, or never started, with messages unacked).
    ///
    /// ```
    /// use netser_transport::netcode::{ConnectToken, Protocol};
    /// use netser_transport::udp::{UdpClient, UdpClientConfig};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let protocol = Protocol::<u16, u32>::new();
    /// let server = "127.0.0.1:9".parse()?; // nobody answers here
    /// let params = protocol.token_params(vec![server], std::time::SystemTime::now());
    /// let token = ConnectToken::generate(&params, &[1; 32])?;
    /// let mut client = UdpClient::connect(token, &protocol, UdpClientConfig::default())?;
    /// assert!(client.shutdown(std::time::Duration::from_millis(100))); // nothing queued
    /// assert!(client.disconnect_reason().is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn shutdown(&mut self, timeout: Duration) -> bool {
        // `Instant + Duration::MAX` panics; `None` is a deadline never reached.
        let deadline = Instant::now().checked_add(timeout);
        let acked = wait_for_acks(deadline, || {
            self.receive();
            self.transmit();
            let connection = self.client.connection();
            let pending: usize = (0..self.channels)
                .map(|ch| connection.queued_messages(ch as u8))
                .sum();
            match pending {
                0 => Some(0),
                _ if !self.client.is_connected() => None,
                _ => Some(pending),
            }
        });
        self.disconnect();
        let flushed = self.driver.flush_all(time_left(deadline));
        info!(
            client_id = self.client.client_id(),
            acked, flushed, "udp client: shut down"
        );
        acked && flushed
    }

    /// Sets how whole snapshots are kept (as the server's), dropping those received.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_snapshot_config(
        &mut self,
        config: SnapshotConfig,
    ) -> Result<(), SnapshotConfigError> {
        self.client.set_snapshot_config(config)
    }

    /// Sets how entity sets are read (as the server's), dropping the entities received.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_entity_config(&mut self, config: EntityConfig) -> Result<(), SnapshotConfigError> {
        self.client.set_entity_config(config)
    }

    /// The newest snapshot, if a newer one was decoded since the last call.
    pub fn poll_snapshot(&mut self) -> Option<(u16, &S)> {
        self.client.poll_snapshot()
    }

    /// Progress of the block being received, if any.
    pub fn block_progress(&self) -> Option<BlockProgress> {
        BlockProgress::receiving(self.client.connection())
    }

    /// When the next timer is due, for a loop that sleeps between frames.
    pub fn poll_timeout(&self) -> Option<f64> {
        self.client
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

    /// The address the client's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.driver.local_addr()
    }

    /// The socket driver (its counters, simulator stats).
    pub fn driver(&self) -> &UdpDriver {
        &self.driver
    }

    /// The sans-IO client underneath.
    pub fn client(&self) -> &Client<Out, In, S> {
        &self.client
    }

    /// Events dropped because [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS) were waiting.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> Drop for UdpClient<Out, In, S> {
    /// Disconnects a client still connected or connecting, so the server hears of it;
    /// the driver's own drop then sends what it holds within [`UdpConfig::linger`].
    fn drop(&mut self) {
        if self.client.disconnect_reason().is_none() {
            self.disconnect();
        }
    }
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> fmt::Debug
    for UdpClient<Out, In, S>
{
    // A summary of its own, so that the connect token's session keys, held by the
    // layers below, can never reach a log through it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpClient")
            .field("client_id", &self.client.client_id())
            .field("state", &self.client.state())
            .field("server_addr", &self.client.server_addr())
            .field("channels", &self.channels)
            .field("queued_events", &self.events.len())
            .field("dropped_events", &self.events.dropped())
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}
