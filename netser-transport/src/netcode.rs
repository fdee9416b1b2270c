//! Secure connections: the netcode 1.02 protocol as its standard writes it, wire-compatible
//! with the C reference and, as a [`Layout`] setting, with `renetcode` 2.x.
//!
//! A game server on the internet must let in only the players its backend admitted, must
//! not be usable to amplify a flood, and must not let anyone read, forge or replay its
//! packets. netcode does this with *connect tokens*: the backend (matchmaker, web service)
//! issues each client a [`ConnectToken`] whose private part is encrypted with a key shared
//! only by the backend and the dedicated servers. The client presents the private part in a
//! connection request, proves it owns its source address by echoing a *challenge token*,
//! and from then on every packet is encrypted and signed (ChaCha20-Poly1305) with per-client
//! keys from the token, and checked against replays.
//!
//! Most games use the two types on top: [`Server`] and [`Client`], which carry one
//! [`Connection`](crate::connection::Connection) of typed messages per client in netcode's
//! payload packets (events, `send_message`, `receive_message`, `broadcast_message`,
//! `network_info`, `disconnect`; the names renet users know). Under them is the protocol
//! core with payloads as bytes: [`NetcodeServer`] holds the client slots,
//! [`NetcodeClient`] walks the standard's state machine, [`packet`] reads and writes the
//! seven packets. Everything is sans-IO like the rest of the crate: time and addresses are
//! arguments, datagrams go in as bytes and come out one by one from `poll_transmit`. The wire
//! format (packet and token layouts, and how `renetcode`'s layout differs from the
//! standard's) is in the repository's WIRE.md.
//!
//! # Standard and `renetcode` layouts
//!
//! Both sides speak the layout of the netcode standard by default ([`Layout::Standard`]):
//! 2048-byte connect tokens, IPv6 addresses as eight little-endian 16-bit groups, payloads
//! of at most 1200 bytes. A server or client that must talk to `renetcode` 2.x sets
//! [`Layout::Renetcode`] on both sides: in [`ServerConfig::layout`] and in
//! [`TokenParams::layout`] (or [`ConnectToken::from_bytes_with`] for a token read from
//! bytes), since the client takes its layout from its token.
//!
//! The protocol core on its own:
//!
//! ```
//! use netser_transport::netcode::{
//!     generate_key, ClientState, ConnectToken, NetcodeClient, NetcodeServer, ServerConfig,
//!     NetcodeEvent, TokenParams,
//! };
//! use std::net::SocketAddr;
//! use std::time::{SystemTime, UNIX_EPOCH};
//!
//! let key = generate_key().unwrap();
//! let server_addr: SocketAddr = "127.0.0.1:40000".parse().unwrap();
//! let client_addr: SocketAddr = "127.0.0.1:50000".parse().unwrap();
//! // The backend stamps tokens with the Unix time; the game runs on its own clock.
//! let unix_now = SystemTime::now();
//! let unix_seconds = unix_now.duration_since(UNIX_EPOCH).unwrap().as_secs();
//!
//! // The backend issues a token for client 7.
//! let token = ConnectToken::generate(
//!     &TokenParams { client_id: 7, ..TokenParams::new(0x1234, vec![server_addr], unix_seconds) },
//!     &key,
//! )
//! .unwrap();
//!
//! // Game time 0.0 is `unix_now`: the server checks token expiry from there.
//! let config = ServerConfig::new(0x1234, key, vec![server_addr]);
//! let mut server = NetcodeServer::new(0.0, unix_now, config).unwrap();
//! let mut client = NetcodeClient::new(0.0, token);
//!
//! // Exchange datagrams until connected (a perfect network here).
//! let mut t = 0.0;
//! while client.state() != ClientState::Connected {
//!     client.handle_timeout(t);
//!     while let Some(transmit) = client.poll_transmit() {
//!         // A socket would send `transmit.data` to `transmit.to`; netcode decrypts in place.
//!         server.handle_datagram(t, client_addr, &mut transmit.data.to_vec());
//!     }
//!     server.handle_timeout(t);
//!     while let Some(transmit) = server.poll_transmit() {
//!         client.handle_datagram(t, server_addr, &mut transmit.data.to_vec());
//!     }
//!     t += 0.1;
//! }
//! assert!(matches!(server.poll_event(), Some(NetcodeEvent::ClientConnected { client_id: 7, .. })));
//!
//! client.send_payload(b"hello").unwrap();
//! let mut datagram = client.poll_transmit().unwrap().data.to_vec();
//! let received = server.handle_datagram(t, client_addr, &mut datagram);
//! assert_eq!(received.unwrap().payload, b"hello");
//! ```

mod client;
mod crypto;
pub(crate) mod events;
mod game_client;
mod game_server;
mod layout;
mod outbox;
pub mod packet;
mod payload;
mod protocol;
mod replay;
mod server;
mod token;

pub use client::{ClientState, NetcodeClient};
pub use crypto::{generate_key, random_bytes, Key, RandomError};
pub use game_client::Client;
pub use game_server::{Server, ServerEvent, MAX_SERVER_EVENTS};
pub use layout::Layout;
pub use packet::{Refusal, RefusalCounters};
pub use protocol::{DefaultChannel, Protocol};
pub use replay::{ReplayProtection, REPLAY_WINDOW};
pub use server::{
    NetcodeEvent, NetcodeServer, ReceivedPayload, ServerConfig, ServerConfigError, MAX_CLIENTS,
    MAX_PENDING,
};
pub use token::{ConnectToken, PrivateConnectToken, ServerAddresses, TokenError, TokenParams};

/// The version string every netcode 1.02 token and packet carries: `"NETCODE 1.02"` and a
/// null terminator.
pub const VERSION_INFO: [u8; 13] = *b"NETCODE 1.02\0";
/// Bytes in a key (the backend's private key and the per-client keys).
pub const KEY_BYTES: usize = 32;
/// Bytes of the Poly1305 tag that signs every encrypted part.
pub const MAC_BYTES: usize = 16;
/// Bytes of user data a connect token carries to the server (for example a player's
/// account id or matchmaking result); the server reads it when the client connects.
pub const USER_DATA_BYTES: usize = 256;
/// Bytes of the encrypted private part of a connect token.
pub const CONNECT_TOKEN_PRIVATE_BYTES: usize = 1024;
/// Bytes of the random nonce that encrypts a private connect token (XChaCha20-Poly1305).
pub const CONNECT_TOKEN_NONCE_BYTES: usize = 24;
/// Bytes of an encrypted challenge token.
pub const CHALLENGE_TOKEN_BYTES: usize = 300;
/// Most server addresses one connect token lists.
pub const MAX_SERVER_ADDRESSES: usize = 32;
/// The exact size of a connection request packet; any other size is refused unread.
pub const CONNECTION_REQUEST_BYTES: usize =
    1 + 13 + 8 + 8 + CONNECT_TOKEN_NONCE_BYTES + CONNECT_TOKEN_PRIVATE_BYTES;
/// Most payload bytes in one payload packet: the standard's limit, in [`Layout::Standard`]
/// (see [`Layout::max_payload_bytes`]).
pub const MAX_PAYLOAD_BYTES: usize = 1200;
/// Most payload bytes in one payload packet in [`Layout::Renetcode`].
pub const RENETCODE_MAX_PAYLOAD_BYTES: usize = 1300;
/// Bytes of a connect token in [`Layout::Standard`] (the fields, zero-padded).
pub const CONNECT_TOKEN_BYTES: usize = 2048;
/// Largest netcode packet in either layout: a payload packet with an 8-byte sequence and
/// [`RENETCODE_MAX_PAYLOAD_BYTES`]; a receive buffer of this size holds any packet.
pub const MAX_PACKET_BYTES: usize = 1 + 8 + RENETCODE_MAX_PAYLOAD_BYTES + MAC_BYTES;
/// Seconds between handshake packets and between keep-alives when nothing else was sent
/// (10 Hz, the standard's suggested rate).
pub const PACKET_SEND_INTERVAL: f64 = 0.1;
/// [`PACKET_SEND_INTERVAL`] less a microsecond, so a caller ticking at exactly 10 or 20 Hz
/// is not one tick late through floating-point rounding.
const SEND_INTERVAL_DUE: f64 = PACKET_SEND_INTERVAL - 1e-6;
/// How many disconnect packets a side sends when it closes, so one survives loss.
pub const DISCONNECT_PACKETS: usize = 10;

/// The Unix time at one instant of the game's clock: connect tokens expire at Unix
/// timestamps, every layer's `now` is the game's monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct UnixAnchor {
    now: f64,
    unix: f64,
}

impl UnixAnchor {
    /// At game time `now` the Unix time is `unix_now` (a time before 1970 counts as 1970).
    pub(crate) fn new(now: f64, unix_now: std::time::SystemTime) -> Self {
        let unix = unix_now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self { now, unix }
    }

    /// Unix seconds at game time `now`.
    pub(crate) fn unix_at(&self, now: f64) -> f64 {
        self.unix + (now - self.now)
    }

    /// Game time at Unix seconds `unix`.
    pub(crate) fn now_at(&self, unix: f64) -> f64 {
        self.now + (unix - self.unix)
    }
}

/// A client's id: the one the backend put in its connect token.
pub type ClientId = u64;

/// The part of a protocol id that comes from the message types: a hash of the netcode
/// version and both message types' schema hashes (clients' first). A game uses
/// [`Protocol::id`], which starts from it and covers the snapshot type and the channels
/// too; this is the building block, for a game with a netcode stack of its own.
///
/// ```
/// use netser_transport::netcode::protocol_id;
/// assert_eq!(protocol_id::<u16, u32>(), protocol_id::<u16, u32>());
/// assert_ne!(protocol_id::<u16, u32>(), protocol_id::<u32, u16>());
/// ```
pub const fn protocol_id<
    ClientMessage: netser::NetSerialize,
    ServerMessage: netser::NetSerialize,
>() -> u64 {
    use netser::schema::{combine, fnv1a};
    combine(
        combine(fnv1a(b"netser netcode 1.02"), ClientMessage::SCHEMA_HASH),
        ServerMessage::SCHEMA_HASH,
    )
}

/// [`protocol_id`] with the schema hash of a world state `Snapshot` (the `S` of
/// [`Server<Out, In, S>`](Server) and [`Client<Out, In, S>`](Client)) mixed in, so a
/// client built from another snapshot schema is refused at connect instead of
/// misreading snapshots; a game without snapshots (`Snapshot = ()`) gets
/// [`protocol_id`]'s id. [`Protocol::id`] starts from it.
///
/// ```
/// use netser_transport::netcode::{protocol_id, protocol_id_with_snapshot};
/// assert_eq!(protocol_id_with_snapshot::<u16, u32, ()>(), protocol_id::<u16, u32>());
/// assert_ne!(protocol_id_with_snapshot::<u16, u32, u8>(), protocol_id::<u16, u32>());
/// assert_ne!(
///     protocol_id_with_snapshot::<u16, u32, u8>(),
///     protocol_id_with_snapshot::<u16, u32, u16>(),
/// );
/// ```
pub const fn protocol_id_with_snapshot<
    ClientMessage: netser::NetSerialize,
    ServerMessage: netser::NetSerialize,
    Snapshot: netser::NetDelta,
>() -> u64 {
    let messages = protocol_id::<ClientMessage, ServerMessage>();
    if Snapshot::SCHEMA_HASH == <() as netser::NetSerialize>::SCHEMA_HASH {
        messages
    } else {
        netser::schema::combine(combine_snapshot_tag(messages), Snapshot::SCHEMA_HASH)
    }
}

/// Marks the snapshot's hash as a third part, distinct from a message type's.
const fn combine_snapshot_tag(messages: u64) -> u64 {
    netser::schema::combine(messages, netser::schema::fnv1a(b"snapshot"))
}

/// A datagram to send and where to, from `poll_transmit` of [`NetcodeServer`],
/// [`NetcodeClient`], [`Server`] and [`Client`]: put `data` on the socket to `to`.
///
/// ```
/// use netser_transport::netcode::{ConnectToken, NetcodeClient, TokenParams};
/// let server = "127.0.0.1:40000".parse().unwrap();
/// let token = ConnectToken::generate(&TokenParams::new(1, vec![server], 1_000), &[7; 32]).unwrap();
/// let mut client = NetcodeClient::new(0.0, token);
/// client.handle_timeout(0.0);
/// let transmit = client.poll_transmit().unwrap(); // the connection request
/// assert_eq!((transmit.to, transmit.data.len()), (server, 1078));
/// assert!(client.poll_transmit().is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<'a> {
    /// The address to send it to.
    pub to: std::net::SocketAddr,
    /// The datagram.
    pub data: &'a [u8],
}

/// A connection's round-trip time, loss and bandwidth (the names renet uses).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NetworkInfo {
    /// Round-trip time of the network path, seconds: smoothed (RFC 6298), less the time
    /// the peer held each ack before a packet of its own carried it (the peer reports
    /// it with the ack). It still includes up to a frame at each end before a datagram
    /// is read. 0 until the first ack.
    pub rtt: f64,
    /// The smallest round trip of the path since the connection began, seconds; 0 until
    /// the first ack.
    pub min_rtt: f64,
    /// Fraction of packets lost, 0 to 1; `None` until enough packets have had time to
    /// be acked.
    pub packet_loss: Option<f64>,
    /// Bytes per second sent; `None` until two packets have gone out.
    pub bytes_sent_per_second: Option<f64>,
    /// Bytes per second received; `None` until two packets have come in.
    pub bytes_received_per_second: Option<f64>,
}

impl NetworkInfo {
    fn from_stats(stats: &crate::endpoint::Stats) -> Self {
        Self {
            rtt: stats.rtt,
            min_rtt: stats.min_rtt,
            packet_loss: stats.packet_loss,
            bytes_sent_per_second: stats.sent_kbps.map(|kbps| kbps * 1000.0 / 8.0),
            bytes_received_per_second: stats.received_kbps.map(|kbps| kbps * 1000.0 / 8.0),
        }
    }
}

/// Why a [`Server`] or [`Client`] could not be set up.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SetupError {
    /// The netcode server configuration is invalid.
    Netcode(ServerConfigError),
    /// The connection configuration is invalid.
    Connection(crate::connection::ConfigError),
    /// The connection's MTU is larger than a payload packet carries
    /// ([`Layout::max_payload_bytes`]).
    MtuTooLarge {
        /// The configured MTU.
        mtu: usize,
    },
    /// The connect token is for another protocol id than this client's [`Protocol`]
    /// gives: another game, or a client built from other message or snapshot types,
    /// channels or connection settings than the server's. Build both sides from one
    /// [`Protocol`].
    ProtocolMismatch {
        /// The token's protocol id (the server's, as the backend issued it).
        token: u64,
        /// This client's ([`Protocol::id`]).
        expected: u64,
    },
    /// The server's netcode settings name another protocol id than its [`Protocol`]:
    /// build them with [`Protocol::server_config`].
    ConfigProtocolMismatch {
        /// [`ServerConfig::protocol_id`].
        config: u64,
        /// [`Protocol::id`].
        protocol: u64,
    },
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetupError::Netcode(_) => write!(f, "the netcode server configuration is invalid"),
            SetupError::Connection(_) => write!(f, "the connection configuration is invalid"),
            SetupError::MtuTooLarge { mtu } => {
                write!(f, "the connection's MTU of {mtu} bytes is larger than a netcode payload in this layout ({MAX_PAYLOAD_BYTES} bytes in the standard layout, {RENETCODE_MAX_PAYLOAD_BYTES} in renetcode's)")
            }
            SetupError::ProtocolMismatch { token, expected } => write!(
                f,
                "the connect token is for protocol id {token:#x}, this client's protocol (message \
                 and snapshot types, channels, connection settings) gives {expected:#x}: the \
                 client and the server were built from different protocols"
            ),
            SetupError::ConfigProtocolMismatch { config, protocol } => write!(
                f,
                "the server configuration's protocol id {config:#x} is not its protocol's \
                 {protocol:#x}; build it with Protocol::server_config"
            ),
        }
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SetupError::Netcode(e) => Some(e),
            SetupError::Connection(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a message could not be queued.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MessageError {
    /// No such client is connected (server: wait for its `ClientConnected` event), or the
    /// client is disconnected (connect again with a new token).
    NotConnected,
    /// The connection refused it.
    Connection(crate::connection::SendError),
}

impl core::fmt::Display for MessageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MessageError::NotConnected => write!(
                f,
                "not connected: the server has no such client (wait for its ClientConnected \
                 event), or the client has disconnected (connect again with a new token)"
            ),
            MessageError::Connection(_) => write!(f, "the connection refused the message"),
        }
    }
}

impl std::error::Error for MessageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MessageError::Connection(e) => Some(e),
            _ => None,
        }
    }
}

/// A send to every connected client that failed for one of them: the first client it
/// failed for and why; every other client was sent it. From
/// [`Server::broadcast_message`] (`E` = [`MessageError`]) and the snapshot sends to all
/// (`E` = [`SnapshotError`](crate::snapshot::SnapshotError)).
///
/// ```
/// use netser_transport::netcode::{BroadcastError, MessageError};
/// let error = BroadcastError { client_id: 7, error: MessageError::NotConnected };
/// assert_eq!(error.to_string(), "the send failed for client 7 (every other client was sent it)");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcastError<E = MessageError> {
    /// The first client it failed for.
    pub client_id: ClientId,
    /// Why.
    pub error: E,
}

impl<E> core::fmt::Display for BroadcastError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the send failed for client {} (every other client was sent it)",
            self.client_id
        )
    }
}

impl<E: std::error::Error + 'static> std::error::Error for BroadcastError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why a connection ended (client and server side).
///
/// The client's error states of the netcode standard are here, each with
/// [`DisconnectReason::state_code`] giving the standard's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DisconnectReason {
    /// The connect token expired before a server accepted it (client; standard state -6).
    ConnectTokenExpired,
    /// The connect token is malformed or inconsistent (client; standard state -5).
    InvalidConnectToken,
    /// No packet from the peer within the token's timeout while connected (both sides;
    /// standard state -4).
    ConnectionTimedOut,
    /// The last server did not answer the challenge response in time (client; -3).
    ConnectionResponseTimedOut,
    /// The last server did not answer the connection request in time (client; -2).
    ConnectionRequestTimedOut,
    /// The last server denied the connection, usually because it is full (client; -1).
    ConnectionDenied,
    /// The peer speaks the other [`Layout`] (`renetcode`'s where this side is set to the
    /// standard's): one of its authenticated packets has a form only that layout writes (a
    /// sequence in zero bytes, a payload over this side's limit). Set the same
    /// [`ServerConfig::layout`] and token layout on both sides. The standard has no state for
    /// it; [`DisconnectReason::state_code`] gives -5, *invalid connect token*.
    LayoutMismatch,
    /// The client closed the connection (seen by both sides).
    DisconnectedByClient,
    /// The server closed the connection (seen by both sides).
    DisconnectedByServer,
}

impl DisconnectReason {
    /// The client state number the netcode standard gives this ending (`0`, *disconnected*,
    /// for an orderly close).
    ///
    /// ```
    /// use netser_transport::netcode::DisconnectReason;
    /// assert_eq!(DisconnectReason::ConnectionDenied.state_code(), -1);
    /// assert_eq!(DisconnectReason::DisconnectedByServer.state_code(), 0);
    /// ```
    pub fn state_code(self) -> i32 {
        match self {
            DisconnectReason::ConnectTokenExpired => -6,
            DisconnectReason::InvalidConnectToken | DisconnectReason::LayoutMismatch => -5,
            DisconnectReason::ConnectionTimedOut => -4,
            DisconnectReason::ConnectionResponseTimedOut => -3,
            DisconnectReason::ConnectionRequestTimedOut => -2,
            DisconnectReason::ConnectionDenied => -1,
            DisconnectReason::DisconnectedByClient | DisconnectReason::DisconnectedByServer => 0,
        }
    }
}

impl core::fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            DisconnectReason::ConnectTokenExpired => {
                "the connect token expired before a server accepted it"
            }
            DisconnectReason::InvalidConnectToken => "the connect token is invalid",
            DisconnectReason::ConnectionTimedOut => "the connection timed out",
            DisconnectReason::ConnectionResponseTimedOut => {
                "the server did not answer the challenge response in time"
            }
            DisconnectReason::ConnectionRequestTimedOut => {
                "the server did not answer the connection request in time"
            }
            DisconnectReason::ConnectionDenied => "the server denied the connection",
            DisconnectReason::LayoutMismatch => {
                "the peer uses the other netcode layout (set Layout::Standard or \
                 Layout::Renetcode the same on both sides)"
            }
            DisconnectReason::DisconnectedByClient => "the client closed the connection",
            DisconnectReason::DisconnectedByServer => "the server closed the connection",
        })
    }
}

/// Why a payload of bytes could not be sent by [`NetcodeServer::send_payload`] or
/// [`NetcodeClient::send_payload`], the protocol core. The typed messages of [`Server`]
/// and [`Client`] fail with [`MessageError`] instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PayloadError {
    /// The payload is empty; netcode payload packets carry at least one byte.
    EmptyPayload,
    /// The payload is larger than the [`Layout`]'s limit
    /// ([`Layout::max_payload_bytes`]: 1200 bytes in the standard's, 1300 in
    /// `renetcode`'s). A peer would drop it, so it is refused here.
    PayloadTooLarge {
        /// The payload's size.
        len: usize,
        /// The limit of this side's layout.
        max: usize,
        /// This side's layout.
        layout: Layout,
    },
    /// The client is not connected (yet, or any more): wait for
    /// [`ClientState::Connected`] before sending payloads.
    NotConnected,
    /// No connected client has this id.
    UnknownClient {
        /// The id asked for.
        client_id: u64,
    },
    /// The queue of datagrams waiting for `poll_transmit` is full; send them first. The
    /// client's holds 64 full packets (84 800 bytes), the server's
    /// [`ServerConfig::max_outbox_bytes`].
    OutboxFull,
}

impl core::fmt::Display for PayloadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PayloadError::EmptyPayload => write!(f, "netcode payloads carry at least one byte"),
            PayloadError::PayloadTooLarge { len, max, layout } => {
                write!(
                    f,
                    "payload of {len} bytes is larger than the {max}-byte limit of Layout::{layout:?}"
                )
            }
            PayloadError::NotConnected => write!(
                f,
                "the client is not connected; wait for ClientState::Connected before sending \
                 payloads"
            ),
            PayloadError::UnknownClient { client_id } => {
                write!(f, "no connected client has id {client_id}")
            }
            PayloadError::OutboxFull => {
                write!(
                    f,
                    "the outgoing datagram queue is full; send what poll_transmit gives first"
                )
            }
        }
    }
}

impl std::error::Error for PayloadError {}


#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// `SetupError` and `MessageError` return the error they wrap from `source()` and do
    /// not repeat it in Display.
    #[test]
    fn setup_and_message_errors_have_sources() {
        let netcode = ServerConfigError::MaxPending;
        crate::assert_source(&SetupError::Netcode(netcode), &netcode);
        let connection =
            crate::connection::ConfigError::Chunk(crate::chunk::ChunkError::EmptyChunk);
        crate::assert_source(&SetupError::Connection(connection.clone()), &connection);
        assert!(SetupError::MtuTooLarge { mtu: 9000 }.source().is_none());

        let send = crate::connection::SendError::BlockQueueFull { capacity: 4 };
        crate::assert_source(&MessageError::Connection(send.clone()), &send);
        assert!(MessageError::NotConnected.source().is_none());
    }
}
