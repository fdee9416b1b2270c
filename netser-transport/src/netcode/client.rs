//! The client side of netcode: the standard's state machine, trying each server of the
//! connect token in turn.

use std::net::SocketAddr;

use super::outbox::Outbox;
use super::packet::{self, Packet, PacketType, Refusal, RefusalCounters};
use super::payload::check_payload;
use super::replay::ReplayProtection;
use super::token::ConnectToken;
#[cfg(doc)]
use super::PACKET_SEND_INTERVAL;
use super::{
    DisconnectReason, PayloadError, CHALLENGE_TOKEN_BYTES, DISCONNECT_PACKETS, SEND_INTERVAL_DUE,
};

/// Where a [`NetcodeClient`] is in the standard's state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientState {
    /// Sending connection requests to the current server (standard state 1).
    SendingConnectionRequest,
    /// Echoing the server's challenge token (standard state 2).
    SendingConnectionResponse,
    /// Connected: payloads flow (standard state 3).
    Connected,
    /// Not connected, and why (an error state, or an orderly close).
    Disconnected(DisconnectReason),
}

impl ClientState {
    /// The state number of the netcode standard (-6 to 3).
    ///
    /// ```
    /// use netser_transport::netcode::{ClientState, DisconnectReason};
    /// assert_eq!(ClientState::Connected.code(), 3);
    /// assert_eq!(ClientState::Disconnected(DisconnectReason::ConnectTokenExpired).code(), -6);
    /// ```
    pub fn code(self) -> i32 {
        match self {
            ClientState::SendingConnectionRequest => 1,
            ClientState::SendingConnectionResponse => 2,
            ClientState::Connected => 3,
            ClientState::Disconnected(reason) => reason.state_code(),
        }
    }
}

/// Where a [`NetcodeClient`] is, with the data of that step only: the challenge it
/// echoes, the slot it was given, the reason it stopped.
#[derive(Debug)]
enum Phase {
    /// Sending connection requests to the current server.
    SendingRequest,
    /// Echoing the challenge token the current server sent.
    SendingResponse {
        token_sequence: u64,
        token_data: Box<[u8; CHALLENGE_TOKEN_BYTES]>,
    },
    /// Connected, in the server's slot `client_index` of `max_clients`.
    Connected { client_index: u32, max_clients: u32 },
    /// Not connected, and why.
    Disconnected(DisconnectReason),
}

/// The netcode client: connects with a [`ConnectToken`] to the first of its servers that
/// accepts, then carries payloads.
///
/// Sans-IO: call [`NetcodeClient::handle_timeout`] regularly (by [`NetcodeClient::poll_timeout`]),
/// hand it every datagram with [`NetcodeClient::handle_datagram`], and send what
/// [`NetcodeClient::poll_transmit`] gives. `now` is the game's monotonic clock in
/// seconds (engine time, any epoch): the client measures the token's lifetime, from its
/// `create` to its `expire` timestamp, from the moment it starts connecting, as the
/// standard does; it never reads or compares the Unix time.
///
/// Datagrams wait for `poll_transmit` in an outbox of 64 full packets
/// (64 x [`MAX_PACKET_BYTES`](super::MAX_PACKET_BYTES) = 84 800 bytes); when it has no
/// room for one more, [`send_payload`](Self::send_payload) returns
/// [`PayloadError::OutboxFull`](super::PayloadError::OutboxFull).
///
/// See the [module docs](super) for a complete handshake.
#[derive(Debug)]
pub struct NetcodeClient {
    token: ConnectToken,
    /// Where the client is, with what that step needs.
    phase: Phase,
    server_index: usize,
    sequence: u64,
    /// When connecting started: the first `handle_timeout`'s `now` (`None` before it).
    connect_start: Option<f64>,
    last_received: f64,
    last_sent: Option<f64>,
    replay: ReplayProtection,
    outbox: Outbox,
    refusals: RefusalCounters,
    now: f64,
}

impl NetcodeClient {
    /// A client that starts connecting to the token's first server at the next
    /// [`NetcodeClient::handle_timeout`], in the token's [`Layout`](super::Layout).
    ///
    /// A token connects once per client: the server refuses packets whose sequence an
    /// earlier session of the same token already used (they could be a recording of it),
    /// so a second `NetcodeClient` with the same token would be refused until its
    /// sequence passed the first one's. To connect again with the same token, call
    /// [`NetcodeClient::reconnect`] on this client.
    pub fn new(now: f64, token: ConnectToken) -> Self {
        let phase = if token.create_timestamp() > token.expire_timestamp() {
            Phase::Disconnected(DisconnectReason::InvalidConnectToken)
        } else {
            Phase::SendingRequest
        };
        Self {
            token,
            phase,
            server_index: 0,
            sequence: 0,
            connect_start: None,
            last_received: now,
            last_sent: None,
            replay: ReplayProtection::new(),
            // Handshake packets and payloads between drains; 64 full packets.
            outbox: Outbox::new(64 * super::MAX_PACKET_BYTES),
            refusals: RefusalCounters::default(),
            now,
        }
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        match self.phase {
            Phase::SendingRequest => ClientState::SendingConnectionRequest,
            Phase::SendingResponse { .. } => ClientState::SendingConnectionResponse,
            Phase::Connected { .. } => ClientState::Connected,
            Phase::Disconnected(reason) => ClientState::Disconnected(reason),
        }
    }

    /// Whether payloads can flow.
    pub fn is_connected(&self) -> bool {
        self.state() == ClientState::Connected
    }

    /// Whether the handshake is in progress.
    pub fn is_connecting(&self) -> bool {
        matches!(
            self.state(),
            ClientState::SendingConnectionRequest | ClientState::SendingConnectionResponse
        )
    }

    /// Why the client is disconnected, if it is.
    pub fn disconnect_reason(&self) -> Option<DisconnectReason> {
        match self.state() {
            ClientState::Disconnected(reason) => Some(reason),
            _ => None,
        }
    }

    /// The id from the connect token: [`ConnectToken::client_id`], which is 0 for a token
    /// read from the standard's bytes (its public part does not carry the id; the server
    /// reads it from the private part).
    pub fn client_id(&self) -> u64 {
        self.token.client_id()
    }

    /// The server being tried or connected to.
    pub fn server_addr(&self) -> SocketAddr {
        let addresses = self.token.server_addresses();
        addresses[self.server_index.min(addresses.len() - 1)]
    }

    /// The slot the server gave this client and the server's number of slots (both 0
    /// when not connected).
    pub fn client_index(&self) -> (u32, u32) {
        match self.phase {
            Phase::Connected {
                client_index,
                max_clients,
            } => (client_index, max_clients),
            _ => (0, 0),
        }
    }

    /// Seconds since the last packet from the server, at the last `now` seen.
    pub fn time_since_last_received(&self) -> f64 {
        (self.now - self.last_received).max(0.0)
    }

    /// Datagrams refused, by reason.
    pub fn refusals(&self) -> &RefusalCounters {
        &self.refusals
    }

    /// Datagrams not queued because the outbox was full (empty it with
    /// [`poll_transmit`](Self::poll_transmit) every update).
    pub fn dropped_datagrams(&self) -> u64 {
        self.outbox.dropped
    }

    /// The next datagram to send to the server, oldest first (`None` when all are out).
    /// Call it until `None` after [`handle_timeout`](Self::handle_timeout),
    /// [`handle_datagram`](Self::handle_datagram) and sends.
    pub fn poll_transmit(&mut self) -> Option<super::Transmit<'_>> {
        self.outbox.poll()
    }

    fn send(&mut self, packet: &Packet<'_>) -> bool {
        let to = self.server_addr();
        let queued = self.outbox.push(
            to,
            packet,
            self.sequence,
            self.token.protocol_id(),
            self.token.client_to_server_key(),
        );
        self.sequence += 1;
        self.last_sent = Some(self.now);
        queued
    }

    fn send_handshake(&mut self) {
        match &self.phase {
            Phase::SendingRequest => {
                let to = self.server_addr();
                let token = &self.token;
                let request = Packet::ConnectionRequest {
                    protocol_id: token.protocol_id(),
                    expire_timestamp: token.expire_timestamp(),
                    nonce: token.nonce(),
                    private_data: token.private_data(),
                };
                // Requests are not encrypted and take no sequence.
                self.outbox.push(
                    to,
                    &request,
                    0,
                    token.protocol_id(),
                    token.client_to_server_key(),
                );
                self.last_sent = Some(self.now);
            }
            Phase::SendingResponse {
                token_sequence,
                token_data,
            } => {
                let (token_sequence, token_data) = (*token_sequence, token_data.clone());
                self.send(&Packet::Response {
                    token_sequence,
                    token_data: &token_data,
                });
            }
            Phase::Connected { .. } => {
                self.send(&Packet::KeepAlive {
                    client_index: 0,
                    max_clients: 0,
                });
            }
            Phase::Disconnected(_) => {}
        }
    }

    /// Seconds the connect token is valid for, counted from the start of connecting.
    fn token_lifetime(&self) -> f64 {
        (self.token.expire_timestamp() - self.token.create_timestamp()) as f64
    }

    /// Moves on to the token's next server, or ends in `reason` after the last.
    fn next_server_or(&mut self, reason: DisconnectReason) {
        if self.server_index + 1 < self.token.server_addresses().len() {
            self.server_index += 1;
            self.phase = Phase::SendingRequest;
            self.last_received = self.now;
            self.last_sent = None;
            self.replay = ReplayProtection::new();
        } else {
            self.phase = Phase::Disconnected(reason);
        }
    }

    /// Advances time: the token's expiry and the timeout end the handshake (after the
    /// last server) or the connection; handshake packets and keep-alives go out every
    /// [`PACKET_SEND_INTERVAL`].
    pub fn handle_timeout(&mut self, now: f64) {
        self.now = self.now.max(now);
        if self.connect_start.is_none() {
            // The token's lifetime and the first server's timeout count from here, so a
            // client made long before it is first run is not expired by then.
            self.connect_start = Some(self.now);
            self.last_received = self.now;
        }
        let timeout = self.token.timeout_seconds();
        let timed_out = timeout > 0 && self.now - self.last_received > f64::from(timeout);
        match self.state() {
            ClientState::SendingConnectionRequest | ClientState::SendingConnectionResponse => {
                if self.now - self.connect_start.unwrap_or(self.now) >= self.token_lifetime() {
                    self.phase = Phase::Disconnected(DisconnectReason::ConnectTokenExpired);
                    return;
                }
                if timed_out {
                    let reason = if self.state() == ClientState::SendingConnectionRequest {
                        DisconnectReason::ConnectionRequestTimedOut
                    } else {
                        DisconnectReason::ConnectionResponseTimedOut
                    };
                    self.next_server_or(reason);
                    if !self.is_connecting() {
                        return;
                    }
                }
            }
            ClientState::Connected => {
                if timed_out {
                    self.phase = Phase::Disconnected(DisconnectReason::ConnectionTimedOut);
                    return;
                }
            }
            ClientState::Disconnected(_) => return,
        }
        if self
            .last_sent
            .is_none_or(|sent| self.now - sent >= SEND_INTERVAL_DUE)
        {
            self.send_handshake();
        }
    }

    /// When [`NetcodeClient::handle_timeout`] next has work (`None` once disconnected).
    pub fn poll_timeout(&self) -> Option<f64> {
        if !self.is_connecting() && !self.is_connected() {
            return None;
        }
        let send = self
            .last_sent
            .map_or(self.now, |sent| sent + SEND_INTERVAL_DUE);
        let timeout = self.token.timeout_seconds();
        let mut wakeup = send;
        if timeout > 0 {
            wakeup = wakeup.min(self.last_received + f64::from(timeout));
        }
        if self.is_connecting() {
            if let Some(start) = self.connect_start {
                wakeup = wakeup.min(start + self.token_lifetime());
            }
        }
        Some(wakeup)
    }

    /// Reads one datagram from `from`. Returns a payload from the server; handshake steps
    /// change the state (answering at once). Anything else is refused and counted
    /// ([`NetcodeClient::refusals`]).
    pub fn handle_datagram<'a>(
        &mut self,
        now: f64,
        from: SocketAddr,
        bytes: &'a mut [u8],
    ) -> Option<&'a [u8]> {
        self.now = self.now.max(now);
        match self.process(from, bytes) {
            Ok(payload) => payload,
            Err(reason) => {
                self.refusals.add(reason);
                None
            }
        }
    }

    fn process<'a>(
        &mut self,
        from: SocketAddr,
        bytes: &'a mut [u8],
    ) -> Result<Option<&'a [u8]>, Refusal> {
        if from != self.server_addr() {
            return Err(Refusal::WrongSource);
        }
        let peeked = packet::peek_in(bytes, self.token.layout())?;
        let (kind, sequence) = (peeked.kind, peeked.sequence);
        let expected = match kind {
            PacketType::ConnectionRequest | PacketType::Response => {
                return Err(Refusal::UnexpectedPacketType)
            }
            PacketType::ConnectionDenied => self.is_connecting(),
            PacketType::Challenge => self.state() == ClientState::SendingConnectionRequest,
            PacketType::KeepAlive => {
                matches!(
                    self.state(),
                    ClientState::SendingConnectionResponse | ClientState::Connected
                )
            }
            PacketType::Payload | PacketType::Disconnect => self.state() == ClientState::Connected,
        };
        if !expected {
            return Err(Refusal::UnexpectedInState);
        }
        if let Some(refusal) = peeked.foreign {
            // Only the server can sign it: the server writes the other layout.
            let key = self.token.server_to_client_key();
            if packet::open(bytes, kind, sequence, self.token.protocol_id(), key, None).is_err() {
                return Err(refusal);
            }
            self.phase = Phase::Disconnected(DisconnectReason::LayoutMismatch);
            return Err(Refusal::LayoutMismatch);
        }
        let packet = packet::open(
            bytes,
            kind,
            sequence,
            self.token.protocol_id(),
            self.token.server_to_client_key(),
            Some(&mut self.replay),
        )?;
        self.last_received = self.now;
        match packet {
            Packet::ConnectionDenied => self.next_server_or(DisconnectReason::ConnectionDenied),
            Packet::Challenge {
                token_sequence,
                token_data,
            } => {
                self.phase = Phase::SendingResponse {
                    token_sequence,
                    token_data: Box::new(*token_data),
                };
                self.send_handshake();
            }
            Packet::KeepAlive {
                client_index,
                max_clients,
            } => {
                if matches!(self.phase, Phase::SendingResponse { .. }) {
                    self.phase = Phase::Connected {
                        client_index,
                        max_clients,
                    };
                }
            }
            Packet::Payload(payload) => return Ok(Some(payload)),
            Packet::Disconnect => {
                self.phase = Phase::Disconnected(DisconnectReason::DisconnectedByServer)
            }
            Packet::ConnectionRequest { .. } | Packet::Response { .. } => {
                return Err(Refusal::UnexpectedPacketType)
            }
        }
        Ok(None)
    }

    /// Sends a payload to the server.
    ///
    /// A payload carries 1 to [`Layout::max_payload_bytes`](super::Layout::max_payload_bytes)
    /// bytes of the token's layout: 1200 in the standard's (a standard server drops larger
    /// ones), 1300 in `renetcode`'s.
    ///
    /// # Errors
    /// [`PayloadError::NotConnected`], [`PayloadError::EmptyPayload`],
    /// [`PayloadError::PayloadTooLarge`] over the layout's limit, or [`PayloadError::OutboxFull`]
    /// until [`poll_transmit`](Self::poll_transmit) empties the queue.
    pub fn send_payload(&mut self, payload: &[u8]) -> Result<(), PayloadError> {
        check_payload(payload, self.token.layout())?;
        if !self.is_connected() {
            return Err(PayloadError::NotConnected);
        }
        if !self.outbox.has_room() {
            return Err(PayloadError::OutboxFull);
        }
        if self.send(&Packet::Payload(payload)) {
            Ok(())
        } else {
            Err(PayloadError::OutboxFull)
        }
    }

    /// Connects again with the same token, from its first server, after the client
    /// disconnected (or at any time: a connection in progress is dropped without
    /// disconnect packets). The sequence continues where this session's ended, so the
    /// server tells the new session from a replay of the old one, and no nonce repeats
    /// under the token's key.
    ///
    /// ```
    /// use netser_transport::netcode::{ClientState, ConnectToken, NetcodeClient, TokenParams};
    /// let params = TokenParams::new(1, vec!["127.0.0.1:40000".parse().unwrap()], 1_000);
    /// let token = ConnectToken::generate(&params, &[7; 32]).unwrap();
    /// let mut client = NetcodeClient::new(0.0, token);
    /// client.disconnect();
    /// client.reconnect(5.0);
    /// assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    /// ```
    pub fn reconnect(&mut self, now: f64) {
        let sequence = self.sequence;
        let refusals = self.refusals.clone();
        let dropped = self.outbox.dropped;
        let mut outbox = core::mem::replace(&mut self.outbox, Outbox::new(0));
        let token = self.token.clone();
        // The first server continues its sequence for this token: keeping its window
        // refuses a recording of the last session's server packets too.
        let replay = (self.server_index == 0).then(|| self.replay.clone());
        *self = Self::new(self.now.max(now), token);
        self.sequence = sequence;
        if let Some(replay) = replay {
            self.replay = replay;
        }
        self.refusals = refusals;
        // Datagrams already queued (the last session's disconnects) still go out.
        outbox.dropped = dropped;
        self.outbox = outbox;
    }

    /// Closes the connection: when connected, queues [`DISCONNECT_PACKETS`] disconnect
    /// packets; the state becomes [`DisconnectReason::DisconnectedByClient`]. Does nothing
    /// if already disconnected.
    pub fn disconnect(&mut self) {
        if self.is_connected() {
            for _ in 0..DISCONNECT_PACKETS {
                self.send(&Packet::Disconnect);
            }
        }
        if !matches!(self.phase, Phase::Disconnected(_)) {
            self.phase = Phase::Disconnected(DisconnectReason::DisconnectedByClient);
        }
    }
}
