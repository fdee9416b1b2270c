//! One description of a game's protocol, shared by the server, the client and the backend
//! that issues connect tokens: the message types each way, the snapshot type, the channels
//! and the connection settings both sides must agree on, and the protocol id that covers
//! all of them.

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use netser::schema::{combine, fnv1a};
use netser::{NetDelta, NetSerialize};

use crate::channel::{ChannelConfig, ChannelId, ChannelKind};
use crate::connection::ConnectionConfig;

use super::crypto::Key;
use super::server::ServerConfig;
use super::token::TokenParams;

/// The channels of [`Protocol::new`], by the names renet users know: pass one wherever a
/// channel is asked for (`send_message(DefaultChannel::ReliableOrdered, &message)`).
///
/// ```
/// use netser_transport::channel::ChannelId;
/// use netser_transport::netcode::DefaultChannel;
/// assert_eq!(ChannelId::from(DefaultChannel::Unreliable), ChannelId(2));
/// assert_eq!(DefaultChannel::configs().len(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefaultChannel {
    /// Channel 0: every message arrives, in the order sent (chat, commands, blocks).
    ReliableOrdered = 0,
    /// Channel 1: every message arrives, in any order.
    ReliableUnordered = 1,
    /// Channel 2: messages may be lost; none is delivered twice (inputs, state).
    Unreliable = 2,
}

impl DefaultChannel {
    /// The three channels' settings, in channel order (the default queues and resend
    /// delay).
    pub fn configs() -> Vec<ChannelConfig> {
        vec![
            ChannelConfig::reliable_ordered(),
            ChannelConfig::reliable_unordered(),
            ChannelConfig::new(ChannelKind::Unreliable),
        ]
    }
}

impl From<DefaultChannel> for ChannelId {
    fn from(channel: DefaultChannel) -> Self {
        ChannelId(channel as u8)
    }
}

/// A game's protocol: clients send `ClientMessage`, the server sends `ServerMessage` and
/// synchronizes `Snapshot` (`()` for none), over the channels and connection settings of
/// [`connection`](Self::connection). The server, the client and the backend build their
/// settings from one value of it, so they cannot disagree:
///
/// - the backend issues tokens for [`id`](Self::id) ([`token_params`](Self::token_params));
/// - the server takes it in [`Server::new`](super::Server::new) (and its netcode settings
///   from [`server_config`](Self::server_config));
/// - the client takes it in [`Client::new`](super::Client::new), which refuses a token for
///   another id with [`SetupError::ProtocolMismatch`](super::SetupError::ProtocolMismatch):
///   a client built with other channels than the server's is refused at connect, with a
///   reason it can read, instead of losing every message on the channel that differs.
///
/// The id covers both message schemas (in their fixed order, client's first), the
/// snapshot schema, each channel's kind, receive window and messages per packet, and the
/// connection's MTU, largest block, slice size and blocks and bytes in flight (the
/// receiver refuses slices of blocks past either); settings that only pace one side (bandwidth, send
/// queues, resend delays, priorities) may differ.
///
/// ```
/// use netser_transport::connection::ConnectionConfig;
/// use netser_transport::netcode::Protocol;
///
/// let protocol = Protocol::<u16, u32>::new();
/// assert_eq!(protocol.connection().channels.len(), 3);
/// // Other channels make another protocol.
/// let two_channels = Protocol::<u16, u32>::with_connection(ConnectionConfig::default());
/// assert_ne!(protocol.id(), two_channels.id());
/// // The message types' order matters: the server's Protocol is the client's.
/// assert_ne!(protocol.id(), Protocol::<u32, u16>::new().id());
/// ```
pub struct Protocol<ClientMessage, ServerMessage, Snapshot = ()> {
    connection: ConnectionConfig,
    game_version: u64,
    types: PhantomData<Types<ClientMessage, ServerMessage, Snapshot>>,
}

/// The three types a [`Protocol`] names, held by none of its values (Send, Sync, and
/// free of the types' own bounds).
type Types<C, S, Snap> = fn() -> (C, S, Snap);

impl<C, S, Snap> Clone for Protocol<C, S, Snap> {
    fn clone(&self) -> Self {
        Self {
            connection: self.connection.clone(),
            game_version: self.game_version,
            types: PhantomData,
        }
    }
}

impl<C, S, Snap> core::fmt::Debug for Protocol<C, S, Snap> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Protocol")
            .field("client_message", &core::any::type_name::<C>())
            .field("server_message", &core::any::type_name::<S>())
            .field("snapshot", &core::any::type_name::<Snap>())
            .field("game_version", &self.game_version)
            .field("connection", &self.connection)
            .finish()
    }
}

impl<C: NetSerialize, S: NetSerialize, Snap: NetDelta> Default for Protocol<C, S, Snap> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: NetSerialize, S: NetSerialize, Snap: NetDelta> Protocol<C, S, Snap> {
    /// The protocol on the [`DefaultChannel`]s, with the default connection settings
    /// otherwise.
    pub fn new() -> Self {
        Self::with_connection(ConnectionConfig {
            channels: DefaultChannel::configs(),
            ..ConnectionConfig::default()
        })
    }

    /// The protocol on channels and connection settings of the game's own.
    pub fn with_connection(connection: ConnectionConfig) -> Self {
        Self {
            connection,
            game_version: 0,
            types: PhantomData,
        }
    }

    /// The same protocol with a version number of the game's own mixed into the id, for
    /// a change the types and channels do not show (what a message means).
    ///
    /// ```
    /// use netser_transport::netcode::Protocol;
    /// let v1 = Protocol::<u8, u8>::new();
    /// assert_ne!(v1.id(), v1.clone().with_game_version(2).id());
    /// ```
    pub fn with_game_version(mut self, version: u64) -> Self {
        self.game_version = version;
        self
    }

    /// The channels and connection settings both sides use.
    pub fn connection(&self) -> &ConnectionConfig {
        &self.connection
    }

    /// The protocol id: the hash of everything both sides must agree on (see the type's
    /// docs), carried in every connect token and netcode packet.
    ///
    /// ```
    /// use netser_transport::connection::ConnectionConfig;
    /// use netser_transport::netcode::Protocol;
    /// let mut one_block = ConnectionConfig::default();
    /// one_block.chunk.max_chunks_in_flight = 1;
    /// assert_ne!(
    ///     Protocol::<u8, u8>::with_connection(one_block).id(),
    ///     Protocol::<u8, u8>::with_connection(ConnectionConfig::default()).id()
    /// );
    /// let mut fewer_bytes = ConnectionConfig::default();
    /// fewer_bytes.chunk.max_bytes_in_flight = 64 * 1024;
    /// assert_ne!(
    ///     Protocol::<u8, u8>::with_connection(fewer_bytes).id(),
    ///     Protocol::<u8, u8>::with_connection(ConnectionConfig::default()).id()
    /// );
    /// ```
    pub fn id(&self) -> u64 {
        let mut id = super::protocol_id_with_snapshot::<C, S, Snap>();
        id = combine(id, fnv1a(b"channels"));
        for channel in &self.connection.channels {
            let kind = match channel.kind {
                ChannelKind::ReliableOrdered { .. } => 0,
                ChannelKind::ReliableUnordered { .. } => 1,
                ChannelKind::UnreliableSequenced => 2,
                ChannelKind::Unreliable => 3,
            };
            id = combine(id, kind);
            id = combine(id, channel.receive_queue_size as u64);
            id = combine(id, channel.max_messages_per_packet as u64);
        }
        id = combine(id, self.connection.mtu as u64);
        id = combine(id, self.connection.max_block_size as u64);
        id = combine(id, self.connection.chunk.slice_size as u64);
        id = combine(id, self.connection.chunk.max_chunks_in_flight as u64);
        id = combine(id, self.connection.chunk.max_bytes_in_flight as u64);
        if self.game_version != 0 {
            id = combine(combine(id, fnv1a(b"game version")), self.game_version);
        }
        id
    }

    /// The netcode server's settings for this protocol, with the defaults otherwise
    /// ([`ServerConfig::new`]).
    pub fn server_config(
        &self,
        private_key: Key,
        public_addresses: Vec<SocketAddr>,
    ) -> ServerConfig {
        ServerConfig::new(self.id(), private_key, public_addresses)
    }

    /// What the backend starts a connect token from: this protocol's id, the servers, and
    /// `unix_now` as the creation time (a time before 1970 counts as 1970), with
    /// [`TokenParams::new`]'s defaults otherwise.
    ///
    /// ```
    /// use netser_transport::netcode::{ConnectToken, Protocol, TokenParams};
    /// let protocol = Protocol::<u16, u32>::new();
    /// let server = "127.0.0.1:40000".parse().unwrap();
    /// let params = TokenParams {
    ///     client_id: 42,
    ///     ..protocol.token_params(vec![server], std::time::SystemTime::now())
    /// };
    /// let token = ConnectToken::generate(&params, &[7; 32]).unwrap();
    /// assert_eq!(token.protocol_id(), protocol.id());
    /// ```
    pub fn token_params(
        &self,
        server_addresses: Vec<SocketAddr>,
        unix_now: SystemTime,
    ) -> TokenParams {
        let unix_seconds = unix_now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        TokenParams::new(self.id(), server_addresses, unix_seconds)
    }
}
