//! The user-facing server: netcode's client slots, each carrying a [`Connection`] of typed
//! messages in its payload packets.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::SystemTime;

use netser::{NetDelta, NetSerialize};

use crate::channel::wire::EncodedMessage;
use crate::channel::ChannelId;
use crate::connection::{Connection, ConnectionConfig};
use crate::endpoint::Stats;
use crate::snapshot::{
    ClientSync, EntityConfig, EntityStats, SendOutcome, SnapshotConfig, SnapshotConfigError,
    SnapshotError, SnapshotHistory, SnapshotStats,
};

use super::budget::{Admission, BudgetConfig, BudgetConfigError, ClientBudgets};
use super::events::EventQueue;
use super::protocol::Protocol;
use super::server::{NetcodeEvent, NetcodeServer, ServerConfig};
use super::{
    BroadcastError, ClientId, DisconnectReason, MessageError, NetworkInfo, SetupError,
    USER_DATA_BYTES,
};

/// Most events held for [`Server::poll_event`]: a game that polls every frame never comes
/// near it; beyond it new events are dropped and counted ([`Server::dropped_events`]), so
/// a server that is never polled keeps a bounded memory (the same bound and rule as
/// [`UdpServer`](crate::udp::UdpServer)).
///
/// ```
/// assert_eq!(netser_transport::netcode::MAX_SERVER_EVENTS, 65_536);
/// ```
pub const MAX_SERVER_EVENTS: usize = 65_536;

/// A connected client: its id, connection and state synchronization.
#[derive(Debug)]
struct ClientSlot<Out, In, S> {
    client_id: ClientId,
    connection: Connection<Out, In>,
    sync: ClientSync<S>,
    /// Whether its [`ServerEvent::ClientConnected`] was queued: a client whose connect
    /// the full queue dropped gets no disconnect event either, so the game never sees a
    /// disconnect without the connect before it.
    announced: bool,
}

/// A client that disconnected since the last [`Server::handle_timeout`]: its connection stays
/// readable until then, so messages that arrived with its disconnect are not lost.
#[derive(Debug)]
struct ClosingClient<Out, In> {
    client_id: ClientId,
    connection: Connection<Out, In>,
}

/// Messages waiting in a connection, all channels.
fn unread_messages<Out: NetSerialize, In: NetSerialize>(connection: &Connection<Out, In>) -> u64 {
    (0..connection.config().channels.len())
        .map(|channel| connection.received_messages(channel as u8) as u64)
        .sum()
}

/// What happened to a client, from [`Server::poll_event`]. Each event carries what the
/// game needs to know of it, still there when the client has already left: a client
/// that connects and leaves between two polls gives its connect, then its disconnect.
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A client completed the netcode handshake; messages can flow.
    ClientConnected {
        /// Its id (from its connect token).
        client_id: ClientId,
        /// Its address.
        addr: SocketAddr,
        /// The user data of its connect token.
        user_data: Box<[u8; USER_DATA_BYTES]>,
    },
    /// A client's slot was freed. Its connection stays readable with
    /// [`Server::receive_message`] until the next [`Server::handle_timeout`] (the messages that
    /// arrived with the disconnect), then its memory goes too. Always after the client's
    /// [`ClientConnected`](ServerEvent::ClientConnected).
    ClientDisconnected {
        /// Its id.
        client_id: ClientId,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        reason: DisconnectReason,
    },
}

/// A game server: admits clients with connect tokens (netcode 1.02) and exchanges typed
/// messages with each over a [`Connection`] carried in netcode's encrypted payload packets.
///
/// `Out` is the type of the messages the server sends, `In` of those it receives (usually
/// two derived enums; `Server<M>` when both sides speak the same one). Sans-IO: datagrams
/// in with [`Server::handle_datagram`], out with [`Server::poll_transmit`] after
/// [`Server::handle_timeout`]. `now` is the game's monotonic clock in seconds (engine
/// time, any epoch); the Unix time given to [`Server::new`] ties it to the Unix
/// timestamps connect tokens expire at (see [`NetcodeServer`]).
///
/// At most [`MAX_SERVER_EVENTS`] events wait for [`Server::poll_event`]; past that they
/// are dropped and counted in [`Server::dropped_events`].
///
/// What one connected client may make the server do is bounded by its budget
/// ([`BudgetConfig`], set with [`Server::set_budget_config`]): past it, the client's
/// datagrams are refused before they are decrypted, never acked, and counted in
/// [`Server::budgets`]; with a [`DisconnectPolicy`](super::DisconnectPolicy) a client
/// that keeps at it is disconnected with [`DisconnectReason::OverBudget`] and its connect
/// token denied from then on.
///
/// `S` is the world state the server synchronizes, if any (see the
/// [`snapshot`](crate::snapshot) module): push it once a tick with
/// [`Server::push_snapshot`] and send it with [`Server::send_snapshot_to_all`] (each
/// client gets it against the newest one it acked; one history for all clients, and a
/// record of `history` entries per client, [`Server::snapshot_memory_bound`]), or send
/// a world larger than a packet with [`Server::send_entities_to_all`] (a priority
/// accumulator per client).
///
/// ```
/// use netser_transport::netcode::{
///     generate_key, Client, ConnectToken, DefaultChannel, Protocol, Server, ServerEvent,
///     TokenParams,
/// };
/// use std::net::SocketAddr;
/// use std::time::SystemTime;
///
/// // Clients send u16, the server sends u32, on the default channels: one description
/// // for both sides and the backend.
/// let protocol = Protocol::<u16, u32>::new();
/// let key = generate_key().unwrap();
/// let server_addr: SocketAddr = "127.0.0.1:40000".parse().unwrap();
/// let client_addr: SocketAddr = "127.0.0.1:50000".parse().unwrap();
/// let unix_now = SystemTime::now();
/// let config = protocol.server_config(key, vec![server_addr]);
/// let mut server = Server::new(0.0, unix_now, config, &protocol).unwrap();
///
/// // The backend issues a token; the client connects with it.
/// let params = TokenParams { client_id: 9, ..protocol.token_params(vec![server_addr], unix_now) };
/// let token = ConnectToken::generate(&params, &key).unwrap();
/// let mut client = Client::new(0.0, token, &protocol).unwrap();
/// let reliable = DefaultChannel::ReliableOrdered;
/// client.send_message(reliable, &7).unwrap(); // queued until connected
///
/// let mut t = 0.0;
/// let mut got = None;
/// while got.is_none() {
///     client.handle_timeout(t);
///     while let Some(transmit) = client.poll_transmit() {
///         server.handle_datagram(t, client_addr, transmit.data);
///     }
///     server.handle_timeout(t);
///     while let Some(transmit) = server.poll_transmit() {
///         client.handle_datagram(t, server_addr, transmit.data);
///     }
///     got = server.receive_message(9, reliable);
///     t += 0.02;
/// }
/// assert_eq!(got, Some(7));
/// assert!(matches!(
///     server.poll_event(),
///     Some(ServerEvent::ClientConnected { client_id: 9, addr, .. }) if addr == client_addr
/// ));
/// ```
#[derive(Debug)]
pub struct Server<Out, In = Out, S = ()> {
    netcode: NetcodeServer,
    connection_config: ConnectionConfig,
    /// By netcode slot: the client's id, connection and state synchronization.
    connections: Vec<Option<ClientSlot<Out, In, S>>>,
    /// The snapshots pushed, shared by every client's snapshot peer.
    history: SnapshotHistory<S>,
    entity_config: EntityConfig,
    /// At most [`MAX_SERVER_EVENTS`] (fewer in tests).
    events: EventQueue<ServerEvent>,
    /// The clients that disconnected since the last update, oldest first; at most
    /// `max_clients` (the oldest goes first when full).
    closing: VecDeque<ClosingClient<Out, In>>,
    /// Messages of closed connections never read (see
    /// [`Server::dropped_closing_messages`]).
    dropped_closing_messages: u64,
    /// What each connected client may still send, by netcode slot.
    budgets: ClientBudgets,
    scratch: Vec<u8>,
    dropped_datagrams: u64,
    now: f64,
}

impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> Server<Out, In, S> {
    /// A server with no clients, at `now` on the game's clock when the Unix time is
    /// `unix_now` (usually [`SystemTime::now`]; connect tokens are checked against it).
    /// `protocol` gives the channels and connection settings (the clients use the same
    /// [`Protocol`]); `config` comes from [`Protocol::server_config`].
    ///
    /// # Errors
    /// [`SetupError::ConfigProtocolMismatch`] if `config` names another protocol id than
    /// `protocol`; [`SetupError`] if the netcode or connection configuration is invalid, or the
    /// connection's MTU exceeds what a payload packet carries in the configured layout
    /// ([`Layout::max_payload_bytes`](super::Layout::max_payload_bytes)).
    pub fn new(
        now: f64,
        unix_now: SystemTime,
        config: ServerConfig,
        protocol: &Protocol<In, Out, S>,
    ) -> Result<Self, SetupError> {
        if config.protocol_id != protocol.id() {
            return Err(SetupError::ConfigProtocolMismatch {
                config: config.protocol_id,
                protocol: protocol.id(),
            });
        }
        let connection = protocol.connection().clone();
        connection.validate().map_err(SetupError::Connection)?;
        if connection.mtu > config.layout.max_payload_bytes() {
            return Err(SetupError::MtuTooLarge {
                mtu: connection.mtu,
            });
        }
        let netcode = NetcodeServer::new(now, unix_now, config).map_err(SetupError::Netcode)?;
        let connections = (0..netcode.max_clients()).map(|_| None).collect();
        let budgets = ClientBudgets::new(BudgetConfig::default(), netcode.max_clients())
            .expect("the default is valid");
        Ok(Self {
            netcode,
            connection_config: connection,
            connections,
            history: SnapshotHistory::new(SnapshotConfig::default()).expect("the default is valid"),
            entity_config: EntityConfig::default(),
            events: EventQueue::new(MAX_SERVER_EVENTS),
            closing: VecDeque::new(),
            dropped_closing_messages: 0,
            budgets,
            scratch: Vec::with_capacity(super::MAX_PACKET_BYTES),
            dropped_datagrams: 0,
            now,
        })
    }

    /// Takes in a datagram received from `from` at `now`. Handshake packets are answered
    /// (through [`Server::poll_transmit`]), payloads go to the client's connection;
    /// anything that does not decrypt is refused and counted
    /// ([`NetcodeServer::refusals`] through [`Server::netcode`]). A datagram from a
    /// connected client past its budget is refused before anything else, and counted in
    /// [`Server::budgets`].
    pub fn handle_datagram(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) {
        self.now = self.now.max(now);
        // Before the copy and the decryption: that is the work a flood would cost.
        if let Some((client_id, slot)) = self.netcode.connected_at(from) {
            match self.budgets.admit(slot, now, bytes.len()) {
                Admission::Admitted => {}
                Admission::Refused(_) => return,
                Admission::Disconnect(_) => {
                    self.netcode
                        .disconnect_for(client_id, DisconnectReason::OverBudget);
                    self.pump_events(now);
                    return;
                }
            }
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        if let Some(received) = self.netcode.handle_datagram(now, from, &mut self.scratch) {
            if let Some(Some(ClientSlot { connection, .. })) =
                self.connections.get_mut(received.slot)
            {
                // Messages decoded, all channels: those queued, duplicates, stale ones
                // and those a full queue dropped (what a client's budget is charged).
                let before = connection.counters().messages_decoded;
                // Drops inside the connection are counted there.
                let _ = connection.handle_datagram(now, received.payload);
                let decoded = connection.counters().messages_decoded - before;
                self.budgets.charge_messages(received.slot, decoded);
            }
        }
        self.pump_events(now);
    }

    /// Sets what each connected client may make the server do (see [`BudgetConfig`]);
    /// every connected client starts again with full buckets, the counters stay.
    ///
    /// ```
    /// use netser_transport::netcode::{BudgetConfig, DisconnectPolicy, Protocol, Server};
    /// let protocol = Protocol::<u8, u8>::new();
    /// let config = protocol.server_config([7; 32], vec!["127.0.0.1:40000".parse().unwrap()]);
    /// let mut server = Server::new(0.0, std::time::SystemTime::now(), config, &protocol).unwrap();
    /// let budget = BudgetConfig {
    ///     disconnect: Some(DisconnectPolicy::default()),
    ///     ..BudgetConfig::default()
    /// };
    /// server.set_budget_config(budget.clone()).unwrap();
    /// assert_eq!(server.budgets().config(), &budget);
    /// ```
    ///
    /// # Errors
    /// [`BudgetConfigError`] for a setting out of its bounds; nothing changes.
    pub fn set_budget_config(&mut self, config: BudgetConfig) -> Result<(), BudgetConfigError> {
        self.budgets.set_config(config)
    }

    /// The clients' budgets: the settings, and what was admitted and refused, in total
    /// ([`ClientBudgets::counters`]) and per slot ([`ClientBudgets::client_counters`],
    /// the slot from [`NetcodeServer::client_slot`] through [`Server::netcode`]).
    pub fn budgets(&self) -> &ClientBudgets {
        &self.budgets
    }

    /// Advances time and sends: netcode keep-alives and timeouts, then each connection's
    /// datagrams (messages, resends, acks, block slices), encrypted into payload packets.
    ///
    /// The connections of clients that disconnected before this call are freed here:
    /// their messages not yet read are dropped and counted in
    /// [`dropped_closing_messages`](Self::dropped_closing_messages).
    pub fn handle_timeout(&mut self, now: f64) {
        self.now = self.now.max(now);
        for closed in self.closing.drain(..) {
            self.dropped_closing_messages += unread_messages(&closed.connection);
        }
        self.netcode.handle_timeout(now);
        self.pump_events(now);
        for (slot, entry) in self.connections.iter_mut().enumerate() {
            let Some(ClientSlot {
                client_id,
                connection,
                ..
            }) = entry
            else {
                continue;
            };
            connection.handle_timeout(now);
            self.dropped_datagrams += flush(&mut self.netcode, slot, *client_id, connection, now);
        }
    }

    fn pump_events(&mut self, now: f64) {
        while let Some(event) = self.netcode.poll_event() {
            match event {
                NetcodeEvent::ClientConnected {
                    client_id,
                    addr,
                    slot,
                    user_data,
                } => match Connection::new(now, self.connection_config.clone()) {
                    Ok(connection) => {
                        self.budgets.start(slot, now);
                        let announced = self.events.push(ServerEvent::ClientConnected {
                            client_id,
                            addr,
                            user_data,
                        });
                        self.connections[slot] = Some(ClientSlot {
                            client_id,
                            connection,
                            sync: ClientSync::Idle,
                            announced,
                        });
                    }
                    // Validated in `new`, so this cannot happen; refuse the client anyway.
                    Err(_) => {
                        self.netcode.disconnect(client_id);
                    }
                },
                NetcodeEvent::ClientDisconnected {
                    client_id,
                    addr,
                    slot,
                    reason,
                } => {
                    let Some(entry) = self.connections.get_mut(slot) else {
                        continue;
                    };
                    if entry.as_ref().is_none_or(|e| e.client_id != client_id) {
                        continue;
                    }
                    let Some(closed) = entry.take() else {
                        continue;
                    };
                    self.budgets.stop(slot);
                    if closed.announced {
                        self.events.push(ServerEvent::ClientDisconnected {
                            client_id,
                            addr,
                            reason,
                        });
                    } else {
                        self.events.count_dropped(1);
                    }
                    self.close(client_id, closed.connection);
                }
            }
        }
    }

    /// Keeps a disconnected client's connection readable until the next update; the
    /// oldest kept goes first (its unread messages counted) past `max_clients`.
    fn close(&mut self, client_id: ClientId, connection: Connection<Out, In>) {
        if self.closing.len() >= self.netcode.max_clients().max(1) {
            if let Some(oldest) = self.closing.pop_front() {
                self.dropped_closing_messages += unread_messages(&oldest.connection);
            }
        }
        self.closing.push_back(ClosingClient {
            client_id,
            connection,
        });
    }

    /// Ties the game's clock to Unix time again (see [`NetcodeServer::set_unix_time`]).
    pub fn set_unix_time(&mut self, now: f64, unix_now: SystemTime) {
        self.netcode.set_unix_time(now, unix_now);
    }

    /// Messages that arrived from clients that then disconnected, and were not read
    /// with [`receive_message`](Self::receive_message) before the next
    /// [`handle_timeout`](Self::handle_timeout) freed their connections.
    ///
    /// ```
    /// use netser_transport::netcode::{Protocol, Server};
    /// let protocol = Protocol::<u8, u8>::new();
    /// let config = protocol.server_config([7; 32], vec!["127.0.0.1:40000".parse().unwrap()]);
    /// let server = Server::new(0.0, std::time::SystemTime::now(), config, &protocol).unwrap();
    /// assert_eq!(server.dropped_closing_messages(), 0);
    /// ```
    pub fn dropped_closing_messages(&self) -> u64 {
        self.dropped_closing_messages
    }

    /// The next message on `channel` of a client that disconnected since the last
    /// update (oldest session first), if any is left.
    pub(crate) fn receive_closing_message(
        &mut self,
        client_id: ClientId,
        channel: ChannelId,
    ) -> Option<In> {
        self.closing
            .iter_mut()
            .filter(|closed| closed.client_id == client_id)
            .find_map(|closed| closed.connection.receive_message(channel))
    }

    /// Events dropped because [`MAX_SERVER_EVENTS`] were waiting for
    /// [`poll_event`](Self::poll_event), with the disconnects of clients whose connect
    /// was dropped.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }

    /// The next datagram to send, oldest first (`None` when all are out); call it until
    /// `None` after [`Server::handle_timeout`], [`Server::handle_datagram`] and sends.
    pub fn poll_transmit(&mut self) -> Option<super::Transmit<'_>> {
        self.netcode.poll_transmit()
    }

    /// Every datagram [`poll_transmit`](Self::poll_transmit) would hand out, at once:
    /// see [`NetcodeServer::drain_transmits`](super::NetcodeServer::drain_transmits).
    pub(crate) fn drain_transmits(
        &mut self,
        send: impl FnOnce(&[u8], &[(SocketAddr, usize, usize)]),
    ) {
        self.netcode.drain_transmits(send);
    }

    /// The next event, oldest first. Call it every frame: at most [`MAX_SERVER_EVENTS`]
    /// wait, and events past that are dropped and counted in
    /// [`dropped_events`](Self::dropped_events).
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop()
    }

    fn connection_mut(&mut self, client_id: ClientId) -> Option<&mut Connection<Out, In>> {
        let slot = self.netcode.client_slot(client_id)?;
        self.connections[slot]
            .as_mut()
            .map(|slot| &mut slot.connection)
    }

    /// The connection in `slot` if it is `client_id`'s: [`connection`](Self::connection)
    /// for a caller that knows the slot ([`NetcodeServer::client_slots`]), without the
    /// look-up by id.
    pub(crate) fn connection_at(
        &self,
        slot: usize,
        client_id: ClientId,
    ) -> Option<&Connection<Out, In>> {
        self.connections
            .get(slot)?
            .as_ref()
            .filter(|c| c.client_id == client_id)
            .map(|c| &c.connection)
    }

    /// [`receive_message`](Self::receive_message) for a caller that knows the client's
    /// slot ([`NetcodeServer::client_slots`]): the same message, without the look-up by
    /// id.
    pub(crate) fn receive_message_at(
        &mut self,
        slot: usize,
        client_id: ClientId,
        channel: ChannelId,
    ) -> Option<In> {
        if !self.closing.is_empty() {
            if let Some(message) = self.receive_closing_message(client_id, channel) {
                return Some(message);
            }
        }
        self.connections
            .get_mut(slot)?
            .as_mut()
            .filter(|c| c.client_id == client_id)?
            .connection
            .receive_message(channel)
    }

    /// The connection of a connected client (its channels, counters, endpoint).
    pub fn connection(&self, client_id: ClientId) -> Option<&Connection<Out, In>> {
        let slot = self.netcode.client_slot(client_id)?;
        self.connections[slot].as_ref().map(|slot| &slot.connection)
    }

    /// Queues a message to a client on `channel`.
    ///
    /// # Errors
    /// [`MessageError::NotConnected`] for an unknown client, or the connection's
    /// [`SendError`](crate::connection::SendError) (unknown channel, full queue, value out of
    /// bounds, too large).
    pub fn send_message(
        &mut self,
        client_id: ClientId,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), MessageError> {
        let connection = self
            .connection_mut(client_id)
            .ok_or(MessageError::NotConnected)?;
        connection
            .send_message(channel, message)
            .map_err(MessageError::Connection)
    }

    /// Queues a message to every connected client.
    ///
    /// # Errors
    /// The first client that refused it and why; the others still got it.
    pub fn broadcast_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), BroadcastError> {
        self.broadcast(None, channel.into(), message)
    }

    /// Queues a message to every connected client but `except` (the sender of a chat
    /// line, say).
    ///
    /// # Errors
    /// As [`Server::broadcast_message`].
    pub fn broadcast_message_except(
        &mut self,
        except: ClientId,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), BroadcastError> {
        self.broadcast(Some(except), channel.into(), message)
    }

    fn broadcast(
        &mut self,
        except: Option<ClientId>,
        channel: ChannelId,
        message: &Out,
    ) -> Result<(), BroadcastError> {
        // Encoded once for everyone (a snapshot to a thousand clients), not per client.
        let encoded = EncodedMessage::encode(message)
            .map_err(|e| MessageError::Connection(crate::connection::SendError::Encode(e)));
        let mut first_error = None;
        for ClientSlot {
            client_id,
            connection,
            ..
        } in self.connections.iter_mut().flatten()
        {
            if Some(*client_id) == except {
                continue;
            }
            let sent = match &encoded {
                Ok(encoded) => connection
                    .send_encoded(channel, encoded.clone())
                    .map_err(MessageError::Connection),
                Err(error) => Err(error.clone()),
            };
            if let Err(error) = sent {
                first_error.get_or_insert(BroadcastError {
                    client_id: *client_id,
                    error,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The next message from a client on `channel`, if one arrived. A client that
    /// disconnected stays readable until the next [`handle_timeout`](Self::handle_timeout): the
    /// messages that arrived before its disconnect come first (then those of a new
    /// session with the same id, if it connected again).
    pub fn receive_message(
        &mut self,
        client_id: ClientId,
        channel: impl Into<ChannelId>,
    ) -> Option<In> {
        let channel = channel.into();
        if let Some(message) = self.receive_closing_message(client_id, channel) {
            return Some(message);
        }
        self.connection_mut(client_id)?.receive_message(channel)
    }

    /// Disconnects a client: redundant disconnect packets, then its slot and connection are
    /// freed and [`ServerEvent::ClientDisconnected`] is queued. Returns whether it was
    /// connected.
    pub fn disconnect(&mut self, client_id: ClientId) -> bool {
        let was = self.netcode.disconnect(client_id);
        self.pump_events(self.now);
        was
    }

    /// Disconnects every client (see [`Server::disconnect`]).
    pub fn disconnect_all(&mut self) {
        self.netcode.disconnect_all();
        self.pump_events(self.now);
    }

    /// The ids of the connected clients.
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.netcode.client_ids().collect()
    }

    /// Number of connected clients.
    pub fn connected_clients(&self) -> usize {
        self.netcode.connected_clients()
    }

    /// Whether a client is connected.
    pub fn is_connected(&self, client_id: ClientId) -> bool {
        self.netcode.is_connected(client_id)
    }

    /// A client's address.
    pub fn client_addr(&self, client_id: ClientId) -> Option<SocketAddr> {
        self.netcode.client_addr(client_id)
    }

    /// The user data of a client's connect token.
    pub fn user_data(&self, client_id: ClientId) -> Option<&[u8; USER_DATA_BYTES]> {
        self.netcode.user_data(client_id)
    }

    /// A client's round-trip time, loss and bandwidth.
    pub fn network_info(&self, client_id: ClientId) -> Option<NetworkInfo> {
        self.connection(client_id)
            .map(|c| NetworkInfo::from_stats(c.stats()))
    }

    /// A client's full endpoint statistics.
    pub fn stats(&self, client_id: ClientId) -> Option<&Stats> {
        self.connection(client_id).map(|c| c.stats())
    }

    /// When [`Server::handle_timeout`] next has work (a keep-alive, a timeout, a message or resend
    /// due), if anything.
    pub fn poll_timeout(&self) -> Option<f64> {
        let connections = self
            .connections
            .iter()
            .flatten()
            .filter_map(|slot| slot.connection.poll_timeout());
        connections
            .chain(self.netcode.poll_timeout())
            .min_by(f64::total_cmp)
    }

    /// Sets how whole snapshots are kept and sent (the clients' must match), and starts
    /// the history and every client's snapshot state from nothing.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_snapshot_config(
        &mut self,
        config: SnapshotConfig,
    ) -> Result<(), SnapshotConfigError> {
        self.history = SnapshotHistory::new(config)?;
        for ClientSlot { sync, .. } in self.connections.iter_mut().flatten() {
            if matches!(sync, ClientSync::Snapshots(_)) {
                *sync = ClientSync::Idle;
            }
        }
        Ok(())
    }

    /// Sets how entity sets are sent (the clients' must match), and starts every
    /// client's entity state from nothing.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if `config` does not validate; nothing changes.
    pub fn set_entity_config(&mut self, config: EntityConfig) -> Result<(), SnapshotConfigError> {
        config.validate()?;
        self.entity_config = config;
        for ClientSlot { sync, .. } in self.connections.iter_mut().flatten() {
            if matches!(sync, ClientSync::Entities(_)) {
                *sync = ClientSync::Idle;
            }
        }
        Ok(())
    }

    /// Makes `snapshot` the newest world state, once per tick, before sending it with
    /// [`send_snapshot`](Self::send_snapshot) or
    /// [`send_snapshot_to_all`](Self::send_snapshot_to_all). Returns its sequence. The
    /// last `history` are kept, once for all clients.
    pub fn push_snapshot(&mut self, snapshot: S) -> u16 {
        self.history.push(snapshot)
    }

    /// The snapshots pushed (and the encodings shared between clients).
    pub fn snapshot_history(&self) -> &SnapshotHistory<S> {
        &self.history
    }

    /// Sends the newest snapshot to a client, delta-encoded against the newest one it
    /// acked (clients holding the same baseline share one encoding), in a packet of its
    /// own with the messages due; a snapshot equal to what it acked goes only every
    /// `keep_alive`. The datagrams go to netcode at once.
    ///
    /// # Errors
    /// [`SnapshotError::NotConnected`], or why the snapshot could not be sent.
    pub fn send_snapshot(
        &mut self,
        now: f64,
        client_id: ClientId,
    ) -> Result<SendOutcome, SnapshotError> {
        let slot = self
            .netcode
            .client_slot(client_id)
            .ok_or(SnapshotError::NotConnected)?;
        let Some(ClientSlot {
            connection, sync, ..
        }) = self.connections[slot].as_mut()
        else {
            return Err(SnapshotError::NotConnected);
        };
        let config = self.history.config().clone();
        let outcome = sync
            .peer(&config)
            .send(now, &mut self.history, connection)
            .map_err(SnapshotError::Snapshot)?;
        self.dropped_datagrams += flush(&mut self.netcode, slot, client_id, connection, now);
        Ok(outcome)
    }

    /// [`send_snapshot`](Self::send_snapshot) to every connected client.
    ///
    /// # Errors
    /// The first client it failed for and why; the others were sent theirs.
    pub fn send_snapshot_to_all(&mut self, now: f64) -> Result<(), BroadcastError<SnapshotError>> {
        let mut first_error = None;
        for client_id in self.client_ids() {
            if let Err(error) = self.send_snapshot(now, client_id) {
                first_error.get_or_insert(BroadcastError { client_id, error });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Sends a client the next packet of `world` (slot `id` holds entity `id`) from its
    /// priority accumulator: the entities that most need sending, filled to the entity
    /// config's `packet_budget`, each against the last state of it the client acked.
    /// `priority(id, entity)` is what an entity with news adds to its accumulated
    /// priority. Returns the packet's sequence, `None` when nothing had to go.
    ///
    /// # Errors
    /// [`SnapshotError::NotConnected`], or why the set could not be sent.
    pub fn send_entities(
        &mut self,
        now: f64,
        client_id: ClientId,
        world: &[Option<S>],
        priority: impl FnMut(usize, &S) -> f32,
    ) -> Result<Option<u16>, SnapshotError> {
        let slot = self
            .netcode
            .client_slot(client_id)
            .ok_or(SnapshotError::NotConnected)?;
        let Some(ClientSlot {
            connection, sync, ..
        }) = self.connections[slot].as_mut()
        else {
            return Err(SnapshotError::NotConnected);
        };
        let packet = sync
            .entities(&self.entity_config)
            .send(now, connection, world, priority)
            .map_err(SnapshotError::Entities)?;
        self.dropped_datagrams += flush(&mut self.netcode, slot, client_id, connection, now);
        Ok(packet)
    }

    /// [`send_entities`](Self::send_entities) to every connected client, with
    /// `priority(client, id, entity)`.
    ///
    /// # Errors
    /// The first client it failed for and why; the others were sent theirs.
    pub fn send_entities_to_all(
        &mut self,
        now: f64,
        world: &[Option<S>],
        mut priority: impl FnMut(ClientId, usize, &S) -> f32,
    ) -> Result<(), BroadcastError<SnapshotError>> {
        let mut first_error = None;
        for client_id in self.client_ids() {
            let result = self.send_entities(now, client_id, world, |id, entity| {
                priority(client_id, id, entity)
            });
            if let Err(error) = result {
                first_error.get_or_insert(BroadcastError { client_id, error });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// What whole snapshots sent to a client cost: bits per snapshot, baseline age,
    /// skips at rest. `None` for an unknown client or one sent none.
    pub fn snapshot_stats(&self, client_id: ClientId) -> Option<&SnapshotStats> {
        let slot = self.netcode.client_slot(client_id)?;
        match self.connections[slot].as_ref()? {
            ClientSlot {
                sync: ClientSync::Snapshots(peer),
                ..
            } => Some(peer.stats()),
            _ => None,
        }
    }

    /// What entity sets sent to a client cost: entities pending, their age, bits.
    /// `None` for an unknown client or one sent none.
    pub fn entity_stats(&self, client_id: ClientId) -> Option<&EntityStats> {
        let slot = self.netcode.client_slot(client_id)?;
        match self.connections[slot].as_ref()? {
            ClientSlot {
                sync: ClientSync::Entities(sender),
                ..
            } => Some(sender.stats()),
            _ => None,
        }
    }

    /// The most heap bytes state synchronization holds for one client: its snapshot
    /// record ([`SnapshotPeer::memory_bound`](crate::snapshot::SnapshotPeer::memory_bound)),
    /// or its entity sender ([`EntitySender::memory_bound`](crate::snapshot::EntitySender::memory_bound)),
    /// whichever it uses; the history is shared
    /// ([`SnapshotHistory::memory_bound`]).
    pub fn snapshot_memory_bound(&self, client_id: ClientId) -> Option<usize> {
        let slot = self.netcode.client_slot(client_id)?;
        Some(match &self.connections[slot].as_ref()?.sync {
            ClientSync::Idle => 0,
            ClientSync::Snapshots(peer) => peer.memory_bound(),
            ClientSync::Entities(sender) => sender.memory_bound(),
        })
    }

    /// Connection datagrams not sent because the netcode outbox was full.
    pub fn dropped_datagrams(&self) -> u64 {
        self.dropped_datagrams + self.netcode.dropped_datagrams()
    }

    /// The netcode layer (refusal counters, pending handshakes, memory).
    pub fn netcode(&self) -> &NetcodeServer {
        &self.netcode
    }
}

/// Hands a connection's datagrams to netcode; returns how many the full outbox dropped
/// (send what `poll_transmit` gives more often; reliable messages are resent, a lost snapshot is not acked).
fn flush<Out: NetSerialize, In: NetSerialize>(
    netcode: &mut NetcodeServer,
    slot: usize,
    client_id: ClientId,
    connection: &mut Connection<Out, In>,
    now: f64,
) -> u64 {
    let mut dropped = 0;
    while let Some(datagram) = connection.poll_transmit(now) {
        if netcode.send_payload_at(slot, client_id, datagram).is_err() {
            dropped += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests;
