//! `UdpClient`: a game client over real UDP, called once per frame.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use netser::NetSerialize;
use tracing::{debug, info};

use super::common::{BlockProgress, NetworkInfo, SendError};
use super::driver::{UdpConfig, UdpDriver};
use super::server::{push_event, Events};
use crate::channel::ChannelId;
use crate::connection::{Connection, ConnectionConfig};
use crate::netcode::{ClientState, ConnectToken, DisconnectReason, NetcodeClient, MAX_PACKET_BYTES};

/// Settings of a [`UdpClient`]: the connection (the same as the server's) and the socket.
///
/// ```
/// use netser_transport::udp::UdpClientConfig;
/// let config = UdpClientConfig::default();
/// assert_eq!(config.connection.mtu, 1200);
/// ```
#[derive(Debug, Clone, Default)]
pub struct UdpClientConfig {
    /// Channels, MTU and blocks: must match the server's.
    pub connection: ConnectionConfig,
    /// Socket buffers and optional simulators.
    pub udp: UdpConfig,
}

/// What happened since the last frame, from [`UdpClient::poll_event`].
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent<In> {
    /// The handshake completed: messages can flow.
    Connected {
        /// The id from the connect token.
        client_id: u64,
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
    /// A block from the server advanced (bytes received).
    BlockProgress {
        /// How far.
        progress: BlockProgress,
    },
}

/// A game client over UDP: a netcode session with a connect token, a [`Connection`],
/// the socket driver and the clock. Call [`update`](Self::update) at the start of each
/// frame, read [`poll_event`](Self::poll_event), send, then
/// [`send_packets`](Self::send_packets).
///
/// ```no_run
/// use netser_transport::netcode::{generate_key, ConnectToken, TokenParams};
/// use netser_transport::udp::{ClientEvent, UdpClient, UdpClientConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // In a real game the backend issues the token and sends it to the client over HTTPS.
/// let key = generate_key()?;
/// let server = "127.0.0.1:40000".parse()?;
/// let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
/// let params = TokenParams { client_id: 42, ..TokenParams::new(0x1234, vec![server], now) };
/// let token = ConnectToken::generate(&params, &key)?;
///
/// let mut client: UdpClient<String, String> = UdpClient::connect(token, UdpClientConfig::default())?;
/// loop {
///     client.update();
///     while let Some(event) = client.poll_event() {
///         match event {
///             ClientEvent::Connected { .. } => client.send_message(0, &"hello".to_string())?,
///             ClientEvent::Message { message, .. } => println!("{message}"),
///             ClientEvent::Disconnected { reason } => return Ok(println!("{reason}")),
///             _ => {}
///         }
///     }
///     client.send_packets();
///     std::thread::sleep(std::time::Duration::from_millis(16));
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct UdpClient<Out, In> {
    netcode: NetcodeClient,
    driver: UdpDriver,
    connection_config: ConnectionConfig,
    connection: Option<Connection<Out, In>>,
    /// Whether the Connected / Disconnected events were queued.
    announced_connected: bool,
    announced_disconnected: bool,
    events: Events<ClientEvent<In>>,
    block: Option<BlockProgress>,
    message_channel: u8,
    scratch: Vec<u8>,
}

impl<Out: NetSerialize, In: NetSerialize> UdpClient<Out, In> {
    /// Binds a socket on any port (IPv4 or IPv6, as the token's first server address)
    /// and starts connecting with `token` at the first [`update`](Self::update).
    ///
    /// # Errors
    /// The socket's error.
    pub fn connect(token: ConnectToken, config: UdpClientConfig) -> io::Result<Self> {
        let any: SocketAddr = match token.server_addresses().first() {
            Some(SocketAddr::V6(_)) => "[::]:0".parse().expect("valid address"),
            _ => "0.0.0.0:0".parse().expect("valid address"),
        };
        let driver = UdpDriver::from_socket(UdpSocket::bind(any)?, config.udp)?;
        Ok(Self::with_driver(driver, token, config.connection))
    }

    /// A client on a driver the caller set up (its own socket, simulators).
    pub fn with_driver(driver: UdpDriver, token: ConnectToken, connection: ConnectionConfig) -> Self {
        let now = driver.now();
        info!(client_id = token.client_id(), server = ?token.server_addresses().first(), "udp client: connecting");
        Self {
            netcode: NetcodeClient::new(now, token),
            driver,
            connection_config: connection,
            connection: None,
            announced_connected: false,
            announced_disconnected: false,
            events: Events::default(),
            block: None,
            message_channel: 0,
            scratch: vec![0; MAX_PACKET_BYTES.max(1500)],
        }
    }

    /// The start of a frame: reads the clock, takes the datagrams waiting on the socket,
    /// advances the handshake, keep-alives, timeouts and resends, and queues events.
    pub fn update(&mut self) {
        let now = self.driver.now();
        self.driver.flush();
        let Self {
            netcode,
            driver,
            connection,
            connection_config,
            scratch,
            ..
        } = self;
        driver.receive(|from, bytes| {
            let Some(buf) = scratch.get_mut(..bytes.len()) else {
                return;
            };
            buf.copy_from_slice(bytes);
            let payload = netcode.process_packet(now, from, buf);
            if connection.is_none() && netcode.is_connected() {
                *connection = Connection::new(connection_config.clone(), now).ok();
            }
            if let (Some(payload), Some(connection)) = (payload, connection.as_mut()) {
                if let Err(e) = connection.receive_datagram(now, payload) {
                    debug!(reason = %e, "udp client: datagram dropped by the connection");
                }
            }
        });
        self.netcode.update(now);
        self.track_state(now);
        if let Some(connection) = &mut self.connection {
            connection.update(now);
            let progress = BlockProgress::receiving(connection);
            if let Some(progress) = BlockProgress::change(self.block, progress) {
                push_event(&mut self.events, ClientEvent::BlockProgress { progress });
            }
            self.block = progress;
        }
        self.message_channel = 0;
    }

    fn track_state(&mut self, now: f64) {
        if self.netcode.is_connected() {
            if self.connection.is_none() {
                self.connection = Connection::new(self.connection_config.clone(), now).ok();
            }
            if !self.announced_connected {
                self.announced_connected = true;
                let client_id = self.netcode.client_id();
                info!(client_id, server = %self.netcode.server_addr(), "udp client: connected");
                push_event(&mut self.events, ClientEvent::Connected { client_id });
            }
        }
        if let Some(reason) = self.netcode.disconnect_reason() {
            if !self.announced_disconnected {
                self.announced_disconnected = true;
                self.connection = None;
                info!(client_id = self.netcode.client_id(), %reason, "udp client: disconnected");
                push_event(&mut self.events, ClientEvent::Disconnected { reason });
            }
        }
    }

    /// The next event: connected, disconnected, block progress, then the messages
    /// received, channel by channel. A message taken here is not returned by
    /// [`receive_message`](Self::receive_message), and the reverse.
    pub fn poll_event(&mut self) -> Option<ClientEvent<In>> {
        if let Some(event) = self.events.queue.pop_front() {
            return Some(event);
        }
        let connection = self.connection.as_mut()?;
        let channels = self.connection_config.channels.len();
        while usize::from(self.message_channel) < channels {
            let channel = ChannelId(self.message_channel);
            if let Some(message) = connection.receive_message(channel) {
                return Some(ClientEvent::Message { channel, message });
            }
            self.message_channel += 1;
        }
        None
    }

    /// The end of a frame: builds the packets, encrypts and sends them.
    pub fn send_packets(&mut self) {
        let now = self.driver.now();
        if let Some(connection) = &mut self.connection {
            while let Some(datagram) = connection.poll_datagram(now) {
                if self.netcode.send_payload(datagram).is_err() {
                    let driver = &mut self.driver;
                    self.netcode.drain_datagrams(|to, bytes| {
                        let _ = driver.send(to, bytes);
                    });
                    if let Err(e) = self.netcode.send_payload(datagram) {
                        debug!(reason = %e, "udp client: packet dropped");
                    }
                }
            }
        }
        let driver = &mut self.driver;
        self.netcode.drain_datagrams(|to, bytes| {
            let _ = driver.send(to, bytes); // drops are counted by the driver
        });
        self.driver.flush();
    }

    /// Queues a message on `channel`; it goes out at the next
    /// [`send_packets`](Self::send_packets).
    ///
    /// # Errors
    /// [`SendError::NotConnected`] before the handshake completes or after a disconnect;
    /// the connection's refusal otherwise.
    pub fn send_message(&mut self, channel: impl Into<ChannelId>, message: &Out) -> Result<(), SendError> {
        let connection = self.connection.as_mut().ok_or(SendError::NotConnected)?;
        connection.send_message(channel, message)?;
        Ok(())
    }

    /// Takes the next message on `channel`, if any.
    pub fn receive_message(&mut self, channel: impl Into<ChannelId>) -> Option<In> {
        self.connection.as_mut()?.receive_message(channel)
    }

    /// Disconnects: tells the server (redundantly, so one packet survives loss), frees the
    /// connection, and queues [`ClientEvent::Disconnected`].
    pub fn disconnect(&mut self) {
        self.netcode.disconnect();
        let now = self.driver.now();
        self.track_state(now);
        self.send_packets();
    }

    /// Whether messages can flow.
    pub fn is_connected(&self) -> bool {
        self.netcode.is_connected() && self.connection.is_some()
    }

    /// Whether the handshake is in progress.
    pub fn is_connecting(&self) -> bool {
        self.netcode.is_connecting()
    }

    /// The netcode state (every error state of the standard is named).
    pub fn state(&self) -> ClientState {
        self.netcode.state()
    }

    /// Why the client is disconnected, if it is.
    pub fn disconnect_reason(&self) -> Option<DisconnectReason> {
        self.netcode.disconnect_reason()
    }

    /// The id from the connect token.
    pub fn client_id(&self) -> u64 {
        self.netcode.client_id()
    }

    /// RTT, loss and bandwidth, once connected.
    pub fn network_info(&self) -> Option<NetworkInfo> {
        self.connection.as_ref().map(NetworkInfo::of)
    }

    /// Progress of the block being received, if any.
    pub fn block_progress(&self) -> Option<BlockProgress> {
        self.connection.as_ref().and_then(BlockProgress::receiving)
    }

    /// The connection (counters, channel state, endpoint), once connected.
    pub fn connection(&self) -> Option<&Connection<Out, In>> {
        self.connection.as_ref()
    }

    /// When the next timer is due, for a loop that sleeps between frames.
    pub fn next_wakeup(&self) -> Option<f64> {
        let times = [
            self.netcode.next_wakeup(),
            self.driver.next_wakeup(),
            self.connection.as_ref().and_then(Connection::next_wakeup),
        ];
        times.into_iter().flatten().reduce(f64::min)
    }

    /// The clock every layer runs on (Unix seconds, monotonic).
    pub fn now(&self) -> f64 {
        self.driver.now()
    }

    /// The address the client's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.driver.local_addr()
    }

    /// The socket driver (its counters, simulator stats).
    pub fn driver(&self) -> &UdpDriver {
        &self.driver
    }

    /// The netcode client (refusal counters by reason).
    pub fn netcode(&self) -> &NetcodeClient {
        &self.netcode
    }

    /// Events dropped because [`MAX_QUEUED_EVENTS`](super::MAX_QUEUED_EVENTS) were waiting.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped
    }
}
