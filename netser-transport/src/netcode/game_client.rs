//! The user-facing client: netcode's handshake and state machine, carrying a
//! [`Connection`] of typed messages in its payload packets.

use std::net::SocketAddr;

use netser::{NetDelta, NetSerialize};

use crate::channel::ChannelId;
use crate::connection::Connection;
use crate::endpoint::Stats;
use crate::snapshot::{
    ClientReceivers, EntityConfig, EntityCounters, EntityReceiver, ReceiverCounters,
    SnapshotConfig, SnapshotConfigError, SnapshotReceiver,
};

use super::client::{ClientState, NetcodeClient};
use super::protocol::Protocol;
use super::token::ConnectToken;
use super::{ClientId, DisconnectReason, MessageError, NetworkInfo, SetupError};

/// A game client: connects with a [`ConnectToken`] (netcode 1.02) and exchanges typed
/// messages with the server over a [`Connection`] carried in netcode's encrypted payload
/// packets.
///
/// `Out` is the type of the messages the client sends, `In` of those it receives. The
/// token's protocol id must be its [`Protocol`]'s [`id`](Protocol::id), so a client built
/// from another protocol than the server's (message types, channels, settings) is
/// refused before it sends a byte. Sans-IO: datagrams
/// in with [`Client::handle_datagram`], out with [`Client::poll_transmit`] after
/// [`Client::handle_timeout`]; `now` in seconds from any clock that does not go back.
///
/// `S` is the type of the snapshots (or the entities of entity sets) the server sends,
/// if any: the client decodes each against the baseline it names and keeps the newest
/// ([`Client::newest_snapshot`], [`Client::entity`]).
///
/// See [`Server`](super::Server) for a complete exchange.
#[derive(Debug)]
pub struct Client<Out, In = Out, S = ()> {
    netcode: NetcodeClient,
    connection: Connection<Out, In>,
    receivers: ClientReceivers<S>,
    scratch: Vec<u8>,
    dropped_datagrams: u64,
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> Client<Out, In, S> {
    /// A client that starts connecting at the next [`Client::handle_timeout`]. Messages sent before
    /// it is connected are queued (reliable ones) and go out once it is. `protocol` gives
    /// the channels and connection settings: the server's [`Protocol`].
    ///
    /// # Errors
    /// [`SetupError::ProtocolMismatch`] if the token is for another protocol id than
    /// [`Protocol::id`] (the server was built from another protocol: other message types,
    /// channels or settings); [`SetupError::Connection`] or
    /// [`SetupError::MtuTooLarge`] for an invalid connection configuration (the MTU's
    /// limit is the token's layout's
    /// [`max_payload_bytes`](super::Layout::max_payload_bytes)).
    pub fn new(
        now: f64,
        token: ConnectToken,
        protocol: &Protocol<Out, In, S>,
    ) -> Result<Self, SetupError> {
        let protocol_id = protocol.id();
        let connection = protocol.connection().clone();
        if token.protocol_id() != protocol_id {
            return Err(SetupError::ProtocolMismatch {
                token: token.protocol_id(),
                expected: protocol_id,
            });
        }
        if connection.mtu > token.layout().max_payload_bytes() {
            return Err(SetupError::MtuTooLarge {
                mtu: connection.mtu,
            });
        }
        let connection = Connection::new(now, connection).map_err(SetupError::Connection)?;
        Ok(Self {
            netcode: NetcodeClient::new(now, token),
            connection,
            receivers: ClientReceivers::new(SnapshotConfig::default(), EntityConfig::default())
                .expect("the defaults are valid"),
            scratch: Vec::with_capacity(super::MAX_PACKET_BYTES),
            dropped_datagrams: 0,
        })
    }

    /// Takes in a datagram received from `from` at `now`.
    pub fn handle_datagram(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        if let Some(payload) = self.netcode.handle_datagram(now, from, &mut self.scratch) {
            // Drops inside the connection are counted there; refused snapshots in the
            // receivers' counters.
            let receivers = &mut self.receivers;
            let _ = self
                .connection
                .handle_datagram_with(now, payload, |section| receivers.take_section(section));
        }
    }

    /// Advances time and sends: the handshake or keep-alives, then (once connected) the
    /// connection's datagrams encrypted into payload packets.
    pub fn handle_timeout(&mut self, now: f64) {
        self.netcode.handle_timeout(now);
        if self.netcode.is_connected() {
            self.connection.handle_timeout(now);
            while let Some(datagram) = self.connection.poll_transmit(now) {
                if self.netcode.send_payload(datagram).is_err() {
                    self.dropped_datagrams += 1;
                }
            }
        }
    }

    /// The next datagram to send to the server, oldest first (`None` when all are out);
    /// call it until `None` after [`Client::handle_timeout`].
    pub fn poll_transmit(&mut self) -> Option<super::Transmit<'_>> {
        self.netcode.poll_transmit()
    }

    /// Queues a message on `channel`.
    ///
    /// # Errors
    /// [`MessageError::NotConnected`] once disconnected, or the connection's
    /// [`SendError`](crate::connection::SendError).
    pub fn send_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), MessageError> {
        if self.is_disconnected() {
            return Err(MessageError::NotConnected);
        }
        self.connection
            .send_message(channel, message)
            .map_err(MessageError::Connection)
    }

    /// The next message from the server on `channel`, if one arrived.
    pub fn receive_message(&mut self, channel: impl Into<ChannelId>) -> Option<In> {
        self.connection.receive_message(channel)
    }

    /// Closes the connection (redundant disconnect packets, sent by the next
    /// [`Client::poll_transmit`]).
    pub fn disconnect(&mut self) {
        self.netcode.disconnect();
    }

    /// The netcode state.
    pub fn state(&self) -> ClientState {
        self.netcode.state()
    }

    /// Whether messages flow.
    pub fn is_connected(&self) -> bool {
        self.netcode.is_connected()
    }

    /// Whether the handshake is in progress.
    pub fn is_connecting(&self) -> bool {
        self.netcode.is_connecting()
    }

    /// Whether the client is disconnected (see [`Client::disconnect_reason`]).
    pub fn is_disconnected(&self) -> bool {
        matches!(self.netcode.state(), ClientState::Disconnected(_))
    }

    /// Why the client is disconnected, if it is.
    pub fn disconnect_reason(&self) -> Option<DisconnectReason> {
        self.netcode.disconnect_reason()
    }

    /// The id from the connect token.
    pub fn client_id(&self) -> ClientId {
        self.netcode.client_id()
    }

    /// The server being tried or connected to.
    pub fn server_addr(&self) -> SocketAddr {
        self.netcode.server_addr()
    }

    /// Round-trip time, loss and bandwidth.
    pub fn network_info(&self) -> NetworkInfo {
        NetworkInfo::from_stats(self.connection.stats())
    }

    /// The endpoint's full statistics.
    pub fn stats(&self) -> &Stats {
        self.connection.stats()
    }

    /// The connection (channels, counters, endpoint).
    pub fn connection(&self) -> &Connection<Out, In> {
        &self.connection
    }

    /// The netcode layer (state, refusal counters).
    pub fn netcode(&self) -> &NetcodeClient {
        &self.netcode
    }

    /// Connection datagrams not sent because the netcode outbox was full.
    pub fn dropped_datagrams(&self) -> u64 {
        self.dropped_datagrams + self.netcode.dropped_datagrams()
    }

    /// When [`Client::handle_timeout`] next has work, if anything.
    pub fn poll_timeout(&self) -> Option<f64> {
        let netcode = self.netcode.poll_timeout();
        let connection = if self.is_connected() {
            self.connection.poll_timeout()
        } else {
            None
        };
        netcode.into_iter().chain(connection).min_by(f64::total_cmp)
    }

    /// Sets how whole snapshots are kept (as the server's), dropping those received.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_snapshot_config(
        &mut self,
        config: SnapshotConfig,
    ) -> Result<(), SnapshotConfigError> {
        self.receivers.snapshots = SnapshotReceiver::new(config)?;
        Ok(())
    }

    /// Sets how entity sets are read (as the server's), dropping the entities received.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_entity_config(&mut self, config: EntityConfig) -> Result<(), SnapshotConfigError> {
        config.validate()?;
        self.receivers.entity_config = config;
        self.receivers.entities = None;
        Ok(())
    }

    /// The newest snapshot decoded and its sequence.
    pub fn newest_snapshot(&self) -> Option<(u16, &S)> {
        self.receivers.snapshots.newest()
    }

    /// The newest snapshot, if a newer one was decoded since the last call.
    pub fn poll_snapshot(&mut self) -> Option<(u16, &S)> {
        self.receivers.snapshots.poll_snapshot()
    }

    /// What became of the snapshots received: decoded, duplicates, refusals by reason.
    pub fn snapshot_counters(&self) -> &ReceiverCounters {
        self.receivers.snapshots.counters()
    }

    /// The snapshot receiver (its ring and memory bound).
    pub fn snapshot_receiver(&self) -> &SnapshotReceiver<S> {
        &self.receivers.snapshots
    }

    /// The newest state of entity `id` from the server's entity sets, if it exists.
    pub fn entity(&self, id: usize) -> Option<&S> {
        self.receivers.entities.as_ref()?.entity(id)
    }

    /// The entity receiver, once an entity set arrived (its entities, counters, memory
    /// bound).
    pub fn entity_receiver(&self) -> Option<&EntityReceiver<S>> {
        self.receivers.entities.as_deref()
    }

    /// What became of the entity sets received, once one arrived.
    pub fn entity_counters(&self) -> Option<&EntityCounters> {
        self.receivers.entities.as_ref().map(|r| r.counters())
    }
}
