//! The server side of netcode: client slots keyed by address, the handshake, keep-alives,
//! timeouts, and refusals counted by reason.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::time::SystemTime;

use super::crypto::{random_bytes, SecretKey};
use super::events::EventQueue;
use super::outbox::Outbox;
use super::packet::{
    self, decrypt_challenge, encrypt_challenge, Packet, PacketType, Refusal, RefusalCounters,
};
use super::payload::check_payload;
use super::replay::ReplayProtection;
use super::token::PrivateConnectToken;
#[cfg(doc)]
use super::PACKET_SEND_INTERVAL;
use super::{
    DisconnectReason, Layout, PayloadError, UnixAnchor, DISCONNECT_PACKETS, MAC_BYTES,
    SEND_INTERVAL_DUE, USER_DATA_BYTES,
};

mod config;
mod handshake;

pub use config::{ServerConfig, ServerConfigError, MAX_CLIENTS, MAX_PENDING};

/// Something the application should know about, from [`NetcodeServer::poll_event`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetcodeEvent {
    /// A client completed the handshake and holds slot `slot`.
    ClientConnected {
        /// The id from its connect token.
        client_id: u64,
        /// Its address.
        addr: SocketAddr,
        /// Its slot, `0..max_clients` (the standard's client index).
        slot: usize,
        /// The user data of its connect token.
        user_data: Box<[u8; USER_DATA_BYTES]>,
    },
    /// A client's slot was freed.
    ClientDisconnected {
        /// The id from its connect token.
        client_id: u64,
        /// Its address.
        addr: SocketAddr,
        /// The slot it held (free now).
        slot: usize,
        /// Why: [`DisconnectReason::DisconnectedByClient`],
        /// [`DisconnectReason::DisconnectedByServer`],
        /// [`DisconnectReason::ConnectionTimedOut`] or (from the game
        /// [`Server`](super::Server)'s budgets) [`DisconnectReason::OverBudget`].
        reason: DisconnectReason,
    },
}

/// A payload from a connected client, borrowed from the datagram it arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceivedPayload<'a> {
    /// The sender's id.
    pub client_id: u64,
    /// The sender's slot.
    pub slot: usize,
    /// The decrypted payload (1 to [`Layout::max_payload_bytes`] bytes).
    pub payload: &'a [u8],
}

/// A socket address as a table key, hashed in one write: the keyed SipHash of the tables
/// (which keeps an attacker choosing source addresses from forcing collisions) pays per
/// write, and a `SocketAddr`'s own `Hash` makes several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AddrKey(SocketAddr);

impl Hash for AddrKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut bytes = [0u8; 23];
        let len = match self.0 {
            SocketAddr::V4(a) => {
                bytes[..4].copy_from_slice(&a.ip().octets());
                bytes[4..6].copy_from_slice(&a.port().to_le_bytes());
                6
            }
            SocketAddr::V6(a) => {
                bytes[..16].copy_from_slice(&a.ip().octets());
                bytes[16..18].copy_from_slice(&a.port().to_le_bytes());
                bytes[18..22].copy_from_slice(&a.scope_id().to_le_bytes());
                bytes[22] = 6;
                23
            }
        };
        // Equal addresses write equal bytes (leaving the IPv6 flow info out keeps that
        // true); the lengths keep IPv4 and IPv6 apart.
        state.write(&bytes[..len]);
    }
}

/// The keys and sequences of one address the server talks to.
#[derive(Debug, Clone)]
struct Keys {
    send_key: SecretKey,
    receive_key: SecretKey,
    /// Next sequence of packets sent with `send_key`.
    sequence: u64,
    token_mac: [u8; MAC_BYTES],
    /// Sequences up to this one were received under `receive_key` by an earlier session of
    /// the same token: refused, so a recorded session cannot be played again.
    receive_floor: Option<u64>,
    /// The highest sequence that authenticated under `receive_key` in this session.
    received_max: Option<u64>,
}

impl Keys {
    /// Whether `sequence` belongs to an earlier session of the token.
    fn below_floor(&self, sequence: u64) -> bool {
        self.receive_floor.is_some_and(|floor| sequence <= floor)
    }

    fn received(&mut self, sequence: u64) {
        self.received_max = Some(self.received_max.map_or(sequence, |m| m.max(sequence)));
    }
}

#[derive(Debug)]
struct Pending {
    client_id: u64,
    keys: Keys,
    expire_timestamp: u64,
    timeout_seconds: i32,
    last_received: f64,
}

#[derive(Debug)]
struct Slot {
    client_id: u64,
    addr: SocketAddr,
    keys: Keys,
    replay: ReplayProtection,
    timeout_seconds: i32,
    last_received: f64,
    last_sent: f64,
    confirmed: bool,
    user_data: Box<[u8; USER_DATA_BYTES]>,
}

/// A connect token already used, tied to the address that used it first.
#[derive(Debug, Clone, Copy)]
struct TokenUse {
    mac: [u8; MAC_BYTES],
    addr: SocketAddr,
    last_used: f64,
    /// Next sequence for this token's server-to-client key, so a reconnect with the same
    /// token never reuses a nonce.
    next_sequence: u64,
    /// The highest client-to-server sequence any session of this token authenticated: a
    /// later session refuses it and everything below (replay protection that outlives the
    /// slot).
    receive_floor: Option<u64>,
    /// A session of this token was disconnected for [`DisconnectReason::OverBudget`]: the
    /// token is denied from then on, so an abusive client cannot come back with fresh
    /// budgets. Banned entries are the last the full table evicts.
    banned: bool,
}

/// The netcode server: client slots up to a maximum, one per address, with the
/// handshake, keep-alives, timeouts and redundant disconnects of the standard.
///
/// Sans-IO: hand it every datagram with [`NetcodeServer::handle_datagram`], call
/// [`NetcodeServer::handle_timeout`] regularly (by [`NetcodeServer::poll_timeout`]), send what
/// [`NetcodeServer::poll_transmit`] gives, and read [`NetcodeServer::poll_event`].
///
/// `now` is the game's monotonic clock in seconds, from any epoch (engine time), the
/// same as every layer's. Connect tokens expire at Unix timestamps: the Unix time given to
/// [`NetcodeServer::new`] as a [`SystemTime`] ties the two clocks, and the server checks a
/// token's expiry against that Unix time plus the seconds `now` advanced since (so `now`
/// must advance at the rate of real time; a paused game clock delays expiry).
///
/// Memory is bounded by the configuration: the slots, at most `max_pending` handshakes,
/// a history of `max_clients + max_pending` used tokens, at most `max_outbox_bytes` of
/// queued datagrams and a bounded event queue. Refused datagrams take no memory at all;
/// see [`NetcodeServer::memory_bytes`].
///
/// See the [module docs](super) for a complete handshake.
#[derive(Debug)]
pub struct NetcodeServer {
    protocol_id: u64,
    private_key: SecretKey,
    public_addresses: Vec<SocketAddr>,
    layout: Layout,
    max_pending: usize,
    challenge_key: SecretKey,
    challenge_sequence: u64,
    slots: Vec<Option<Slot>>,
    by_addr: HashMap<AddrKey, usize>,
    by_id: HashMap<u64, usize>,
    pending: HashMap<AddrKey, Pending>,
    token_uses: Vec<TokenUse>,
    token_uses_max: usize,
    /// At most `2 * max_connect_events + max_clients`: connects beyond
    /// `max_connect_events` are refused, and each disconnect follows a connect.
    events: EventQueue<NetcodeEvent>,
    max_connect_events: usize,
    outbox: Outbox,
    refusals: RefusalCounters,
    /// Connection requests denied because their token is banned.
    denied_banned: u64,
    now: f64,
    /// Unix time at a `now`, for token expiry.
    unix: UnixAnchor,
    /// The address and slot [`NetcodeServer::connected_slot`] found last; cleared when
    /// any slot is freed.
    last_found: Option<(SocketAddr, usize)>,
}

impl NetcodeServer {
    /// A server with no clients and a fresh random challenge key, at `now` on the game's
    /// clock, when the Unix time is `unix_now` (usually [`SystemTime::now`]; tokens are
    /// checked against it).
    ///
    /// ```
    /// use netser_transport::netcode::{NetcodeServer, ServerConfig};
    /// use std::time::SystemTime;
    /// let config = ServerConfig::new(0x1234, [7; 32], vec!["127.0.0.1:40000".parse().unwrap()]);
    /// let server = NetcodeServer::new(0.0, SystemTime::now(), config).unwrap();
    /// assert_eq!(server.connected_clients(), 0);
    /// ```
    ///
    /// # Errors
    /// [`ServerConfigError`] for a configuration outside its bounds or no randomness.
    pub fn new(
        now: f64,
        unix_now: SystemTime,
        config: ServerConfig,
    ) -> Result<Self, ServerConfigError> {
        if config.public_addresses.is_empty() {
            return Err(ServerConfigError::NoPublicAddress);
        }
        if config.max_clients == 0 || config.max_clients > MAX_CLIENTS {
            return Err(ServerConfigError::MaxClients(config.max_clients));
        }
        if config.max_pending == 0 || config.max_pending > MAX_PENDING {
            return Err(ServerConfigError::MaxPending);
        }
        if config.max_outbox_bytes < super::MAX_PACKET_BYTES {
            return Err(ServerConfigError::MaxOutboxBytes(config.max_outbox_bytes));
        }
        Ok(Self {
            protocol_id: config.protocol_id,
            private_key: SecretKey(config.private_key),
            public_addresses: config.public_addresses,
            layout: config.layout,
            max_pending: config.max_pending,
            challenge_key: SecretKey(random_bytes().map_err(ServerConfigError::Random)?),
            challenge_sequence: 0,
            slots: (0..config.max_clients).map(|_| None).collect(),
            by_addr: HashMap::with_capacity(config.max_clients),
            by_id: HashMap::with_capacity(config.max_clients),
            pending: HashMap::new(),
            token_uses: Vec::new(),
            token_uses_max: config.max_clients + config.max_pending,
            events: EventQueue::new(2 * (2 * config.max_clients + 16) + config.max_clients),
            max_connect_events: 2 * config.max_clients + 16,
            outbox: Outbox::new(config.max_outbox_bytes),
            refusals: RefusalCounters::default(),
            denied_banned: 0,
            now,
            unix: UnixAnchor::new(now, unix_now),
            last_found: None,
        })
    }

    /// Ties the game's clock to Unix time again: at `now` the Unix time is `unix_now`.
    /// For a game clock that pauses or drifts from real time; token expiry is checked
    /// against this from here on.
    ///
    /// ```
    /// use netser_transport::netcode::{NetcodeServer, ServerConfig};
    /// use std::time::SystemTime;
    /// let config = ServerConfig::new(0x1234, [7; 32], vec!["127.0.0.1:40000".parse().unwrap()]);
    /// let mut server = NetcodeServer::new(0.0, SystemTime::now(), config).unwrap();
    /// server.set_unix_time(60.0, SystemTime::now()); // the game was paused for a minute
    /// ```
    pub fn set_unix_time(&mut self, now: f64, unix_now: SystemTime) {
        self.unix = UnixAnchor::new(now, unix_now);
    }

    /// The protocol id.
    pub fn protocol_id(&self) -> u64 {
        self.protocol_id
    }

    /// The byte layout of tokens and packets ([`ServerConfig::layout`]).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Number of client slots.
    pub fn max_clients(&self) -> usize {
        self.slots.len()
    }

    /// Clients connected now.
    pub fn connected_clients(&self) -> usize {
        self.by_id.len()
    }

    /// Handshakes in progress.
    pub fn pending_clients(&self) -> usize {
        self.pending.len()
    }

    /// Ids of the connected clients, by slot.
    pub fn client_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().flatten().map(|slot| slot.client_id)
    }

    /// Slots and ids of the connected clients, by slot: what [`client_ids`](Self::client_ids)
    /// walks, with the slot [`client_slot`](Self::client_slot) would look up.
    pub(crate) fn client_slots(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| slot.as_ref().map(|slot| (i, slot.client_id)))
    }

    /// Whether a client with this id is connected.
    pub fn is_connected(&self, client_id: u64) -> bool {
        self.by_id.contains_key(&client_id)
    }

    /// The slot of a connected client.
    pub fn client_slot(&self, client_id: u64) -> Option<usize> {
        self.by_id.get(&client_id).copied()
    }

    /// The address of a connected client.
    pub fn client_addr(&self, client_id: u64) -> Option<SocketAddr> {
        self.slot(client_id).map(|slot| slot.addr)
    }

    /// The connect token's user data of a connected client.
    pub fn user_data(&self, client_id: u64) -> Option<&[u8; USER_DATA_BYTES]> {
        self.slot(client_id).map(|slot| &*slot.user_data)
    }

    /// The client connected from `addr`, if any.
    pub fn client_at(&self, addr: SocketAddr) -> Option<u64> {
        self.by_addr
            .get(&AddrKey(addr))
            .and_then(|&i| self.slots[i].as_ref())
            .map(|slot| slot.client_id)
    }

    /// Seconds since the last packet from a connected client, at the last `now` seen.
    pub fn time_since_last_received(&self, client_id: u64) -> Option<f64> {
        self.slot(client_id)
            .map(|slot| (self.now - slot.last_received).max(0.0))
    }

    fn slot(&self, client_id: u64) -> Option<&Slot> {
        self.by_id
            .get(&client_id)
            .and_then(|&i| self.slots[i].as_ref())
    }

    /// Datagrams refused, by reason.
    pub fn refusals(&self) -> &RefusalCounters {
        &self.refusals
    }

    /// Datagrams not queued because the outbox was full.
    pub fn dropped_datagrams(&self) -> u64 {
        self.outbox.dropped
    }

    /// Datagrams waiting for [`NetcodeServer::poll_transmit`].
    pub fn queued_datagrams(&self) -> usize {
        self.outbox.len()
    }

    /// The next event, oldest first. Call it every frame: the queue is bounded by refusing
    /// new clients, not by dropping events. Once `2 * max_clients + 16` connect events
    /// wait here, a client finishing its handshake is refused
    /// ([`Refusal::EventQueueFull`], counted in [`refusals`](Self::refusals)); it keeps
    /// retrying until its handshake times out. Disconnect events follow connects, so the
    /// queue holds at most `2 * (2 * max_clients + 16) + max_clients` events; one past
    /// that (which the refusal rule keeps from happening) would be counted in
    /// [`dropped_events`](Self::dropped_events).
    pub fn poll_event(&mut self) -> Option<NetcodeEvent> {
        self.events.pop()
    }

    /// Events dropped because the event queue was full (see
    /// [`poll_event`](Self::poll_event)).
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }

    /// The next datagram to send, oldest first (`None` when all are out): handshake
    /// replies, keep-alives, payloads and disconnects. Call it until `None` after
    /// [`handle_datagram`](Self::handle_datagram), [`handle_timeout`](Self::handle_timeout)
    /// and sends; the queue holds at most [`ServerConfig::max_outbox_bytes`].
    pub fn poll_transmit(&mut self) -> Option<super::Transmit<'_>> {
        self.outbox.poll()
    }

    /// Every datagram [`poll_transmit`](Self::poll_transmit) would hand out, at once and
    /// in its order: `send` gets the buffer they lie in and each one's address and byte
    /// range in it (for a batched send straight from the outbox).
    pub(crate) fn drain_transmits(
        &mut self,
        send: impl FnOnce(&[u8], &[(SocketAddr, usize, usize)]),
    ) {
        self.outbox.drain(send);
    }

    /// Heap bytes the server holds now, from the allocated capacity of every table and
    /// queue (hash tables counted at one control word per entry; queued events as if each
    /// held user data): the measure of its memory bound.
    pub fn memory_bytes(&self) -> usize {
        use core::mem::size_of;
        let hash_entry = |key: usize, value: usize| key + value + 8;
        self.slots.capacity() * size_of::<Option<Slot>>()
            // Each connected slot's boxed user data (the replay window is inline).
            + self.by_id.len() * USER_DATA_BYTES
            + self.by_addr.capacity() * hash_entry(size_of::<AddrKey>(), size_of::<usize>())
            + self.by_id.capacity() * hash_entry(8, size_of::<usize>())
            + self.pending.capacity() * hash_entry(size_of::<AddrKey>(), size_of::<Pending>())
            + self.token_uses.capacity() * size_of::<TokenUse>()
            + self.events.allocated() * (size_of::<NetcodeEvent>() + USER_DATA_BYTES)
            + self.outbox.memory_bytes()
            + self.public_addresses.capacity() * size_of::<SocketAddr>()
    }

    /// Reads one datagram from `from`: a handshake step (answered through the outbox),
    /// a keep-alive, a disconnect, or a payload from a connected client, returned here.
    /// Anything else is refused and counted ([`NetcodeServer::refusals`]); a reply to an
    /// address that is not connected is always smaller than the datagram that caused it.
    pub fn handle_datagram<'a>(
        &mut self,
        now: f64,
        from: SocketAddr,
        bytes: &'a mut [u8],
    ) -> Option<ReceivedPayload<'a>> {
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
    ) -> Result<Option<ReceivedPayload<'a>>, Refusal> {
        let peeked = packet::peek_in(bytes, self.layout)?;
        let (kind, sequence) = (peeked.kind, peeked.sequence);
        match kind {
            PacketType::ConnectionRequest => {
                self.handle_request(from, bytes)?;
                return Ok(None);
            }
            PacketType::Challenge | PacketType::ConnectionDenied => {
                return Err(Refusal::UnexpectedPacketType)
            }
            _ => {}
        }
        if let Some(refusal) = peeked.foreign {
            return Err(self.foreign(from, bytes, kind, sequence, refusal));
        }
        if let Some(index) = self.connected_slot(from) {
            let Some(slot) = self.slots[index].as_mut() else {
                return Err(Refusal::UnknownAddress);
            };
            if kind == PacketType::Response {
                // A late copy of the handshake; the keep-alives already answer it.
                return Err(Refusal::UnexpectedInState);
            }
            if slot.keys.below_floor(sequence) {
                return Err(Refusal::Replayed);
            }
            let packet = packet::open(
                bytes,
                kind,
                sequence,
                self.protocol_id,
                &slot.keys.receive_key.0,
                Some(&mut slot.replay),
            )?;
            slot.keys.received(sequence);
            slot.last_received = self.now;
            return Ok(match packet {
                Packet::Payload(payload) => {
                    slot.confirmed = true;
                    Some(ReceivedPayload {
                        client_id: slot.client_id,
                        slot: index,
                        payload,
                    })
                }
                Packet::Disconnect => {
                    self.free_slot(index, DisconnectReason::DisconnectedByClient, false);
                    None
                }
                _ => {
                    slot.confirmed = true;
                    None
                }
            });
        }
        let Some(pending) = self.pending.get_mut(&AddrKey(from)) else {
            return Err(Refusal::UnknownAddress);
        };
        if kind != PacketType::Response {
            return Err(Refusal::UnexpectedInState);
        }
        if pending.keys.below_floor(sequence) {
            // A response recorded from an earlier session of this token.
            return Err(Refusal::Replayed);
        }
        let Packet::Response {
            token_sequence,
            token_data,
        } = packet::open(
            bytes,
            kind,
            sequence,
            self.protocol_id,
            &pending.keys.receive_key.0,
            None,
        )?
        else {
            return Err(Refusal::UnexpectedPacketType);
        };
        pending.keys.received(sequence);
        pending.last_received = self.now;
        let (client_id, user_data) =
            decrypt_challenge(token_data, token_sequence, &self.challenge_key.0)
                .ok_or(Refusal::ChallengeInvalid)?;
        if client_id != pending.client_id {
            // A challenge issued to another token's handshake.
            return Err(Refusal::ChallengeInvalid);
        }
        if self.by_id.contains_key(&client_id) {
            return Err(Refusal::AlreadyConnected);
        }
        let Some(index) = self.slots.iter().position(Option::is_none) else {
            let mut pending = self
                .pending
                .remove(&AddrKey(from))
                .ok_or(Refusal::UnknownAddress)?;
            self.send(from, &Packet::ConnectionDenied, &mut pending.keys);
            self.forget_keys(&pending.keys);
            return Ok(None);
        };
        let connects = self
            .events
            .iter()
            .filter(|e| matches!(e, NetcodeEvent::ClientConnected { .. }))
            .count();
        if connects >= self.max_connect_events {
            return Err(Refusal::EventQueueFull);
        }
        let pending = self
            .pending
            .remove(&AddrKey(from))
            .ok_or(Refusal::UnknownAddress)?;
        let mut slot = Slot {
            client_id,
            addr: from,
            keys: pending.keys,
            // The window starts past the response; the floor refuses older sessions.
            replay: ReplayProtection::new(),
            timeout_seconds: pending.timeout_seconds,
            last_received: self.now,
            last_sent: self.now,
            confirmed: false,
            user_data: Box::new(user_data),
        };
        let keep_alive = Packet::KeepAlive {
            client_index: index as u32,
            max_clients: self.slots.len() as u32,
        };
        self.send(from, &keep_alive, &mut slot.keys);
        self.events.push(NetcodeEvent::ClientConnected {
            client_id,
            addr: from,
            slot: index,
            user_data: slot.user_data.clone(),
        });
        self.slots[index] = Some(slot);
        self.by_addr.insert(AddrKey(from), index);
        self.by_id.insert(client_id, index);
        Ok(None)
    }

    /// Records where a token's key sequences got to when its keys are dropped.
    fn forget_keys(&mut self, keys: &Keys) {
        if let Some(entry) = self.token_uses.iter_mut().find(|e| e.mac == keys.token_mac) {
            entry.next_sequence = entry.next_sequence.max(keys.sequence);
            entry.receive_floor = entry.receive_floor.max(keys.received_max);
        }
    }

    /// A packet in a form only the other layout writes: if it authenticates under the
    /// keys of its address, the peer uses the other layout. A connected client is
    /// disconnected with [`DisconnectReason::LayoutMismatch`]; a handshake is denied.
    /// Otherwise it is refused as the standard refuses it.
    fn foreign(
        &mut self,
        from: SocketAddr,
        bytes: &mut [u8],
        kind: PacketType,
        sequence: u64,
        refusal: Refusal,
    ) -> Refusal {
        let protocol_id = self.protocol_id;
        let authentic = |keys: &Keys, bytes: &mut [u8]| {
            packet::open(
                bytes,
                kind,
                sequence,
                protocol_id,
                &keys.receive_key.0,
                None,
            )
            .is_ok()
        };
        if let Some(index) = self.connected_slot(from) {
            if self.slots[index]
                .as_ref()
                .is_some_and(|slot| authentic(&slot.keys, bytes))
            {
                self.free_slot(index, DisconnectReason::LayoutMismatch, true);
                return Refusal::LayoutMismatch;
            }
        } else if self
            .pending
            .get(&AddrKey(from))
            .is_some_and(|pending| authentic(&pending.keys, bytes))
        {
            if let Some(mut pending) = self.pending.remove(&AddrKey(from)) {
                self.send(from, &Packet::ConnectionDenied, &mut pending.keys);
                self.forget_keys(&pending.keys);
            }
            return Refusal::LayoutMismatch;
        }
        refusal
    }

    fn send(&mut self, to: SocketAddr, packet: &Packet<'_>, keys: &mut Keys) -> bool {
        let queued = self.outbox.push(
            to,
            packet,
            keys.sequence,
            self.protocol_id,
            &keys.send_key.0,
        );
        keys.sequence += 1;
        queued
    }

    fn send_to_slot(&mut self, index: usize, packet: &Packet<'_>) -> bool {
        let Some(slot) = self.slots[index].as_mut() else {
            return false;
        };
        slot.last_sent = self.now;
        let queued = self.outbox.push(
            slot.addr,
            packet,
            slot.keys.sequence,
            self.protocol_id,
            &slot.keys.send_key.0,
        );
        slot.keys.sequence += 1;
        queued
    }

    /// The id and slot of the client connected from `from`, if any (the game server's
    /// budgets look it up before the datagram is decrypted).
    pub(crate) fn connected_at(&mut self, from: SocketAddr) -> Option<(u64, usize)> {
        let index = self.connected_slot(from)?;
        Some((self.slots[index].as_ref()?.client_id, index))
    }

    /// The slot of a connected address: the last one found (a client's datagrams often
    /// come in bursts) or the table's.
    fn connected_slot(&mut self, from: SocketAddr) -> Option<usize> {
        if let Some((addr, index)) = self.last_found {
            if addr == from {
                return Some(index);
            }
        }
        let index = *self.by_addr.get(&AddrKey(from))?;
        self.last_found = Some((from, index));
        Some(index)
    }

    fn free_slot(&mut self, index: usize, reason: DisconnectReason, send_disconnects: bool) {
        self.last_found = None;
        if send_disconnects {
            for _ in 0..DISCONNECT_PACKETS {
                self.send_to_slot(index, &Packet::Disconnect);
            }
        }
        let Some(slot) = self.slots[index].take() else {
            return;
        };
        self.by_addr.remove(&AddrKey(slot.addr));
        self.by_id.remove(&slot.client_id);
        self.forget_keys(&slot.keys);
        if reason == DisconnectReason::OverBudget {
            if let Some(entry) = self
                .token_uses
                .iter_mut()
                .find(|e| e.mac == slot.keys.token_mac)
            {
                entry.banned = true;
            }
        }
        self.events.push(NetcodeEvent::ClientDisconnected {
            client_id: slot.client_id,
            addr: slot.addr,
            slot: index,
            reason,
        });
    }

    /// Advances time: drops clients that timed out (sending them disconnect packets),
    /// sends keep-alives to clients nothing was sent to for [`PACKET_SEND_INTERVAL`], and
    /// drops handshakes whose token expired or that went quiet for the token's timeout.
    pub fn handle_timeout(&mut self, now: f64) {
        self.now = self.now.max(now);
        let now = self.now;
        for index in 0..self.slots.len() {
            let Some(slot) = &self.slots[index] else {
                continue;
            };
            if slot.timeout_seconds > 0
                && now - slot.last_received > f64::from(slot.timeout_seconds)
            {
                self.free_slot(index, DisconnectReason::ConnectionTimedOut, true);
            } else if now - slot.last_sent >= SEND_INTERVAL_DUE {
                let keep_alive = Packet::KeepAlive {
                    client_index: index as u32,
                    max_clients: self.slots.len() as u32,
                };
                self.send_to_slot(index, &keep_alive);
            }
        }
        let mut expired = Vec::new();
        let unix_now = self.unix.unix_at(now);
        self.pending.retain(|_, p| {
            let alive = (p.expire_timestamp as f64) > unix_now
                && !(p.timeout_seconds > 0 && now - p.last_received > f64::from(p.timeout_seconds));
            if !alive {
                expired.push(p.keys.clone());
            }
            alive
        });
        for keys in expired {
            self.forget_keys(&keys);
        }
    }

    /// When [`NetcodeServer::handle_timeout`] next has work: a keep-alive or a timeout due.
    pub fn poll_timeout(&self) -> Option<f64> {
        let mut wakeup: Option<f64> = None;
        let mut at = |t: f64| wakeup = Some(wakeup.map_or(t, |w| w.min(t)));
        for slot in self.slots.iter().flatten() {
            at(slot.last_sent + SEND_INTERVAL_DUE);
            if slot.timeout_seconds > 0 {
                at(slot.last_received + f64::from(slot.timeout_seconds));
            }
        }
        for pending in self.pending.values() {
            at(self.unix.now_at(pending.expire_timestamp as f64));
            if pending.timeout_seconds > 0 {
                at(pending.last_received + f64::from(pending.timeout_seconds));
            }
        }
        wakeup
    }

    /// Sends a payload to a connected client (preceded by a keep-alive until the client
    /// has confirmed its slot, as the standard asks).
    ///
    /// A payload carries 1 to [`Layout::max_payload_bytes`] bytes of the server's
    /// [`ServerConfig::layout`]: 1200 in the standard's (the limit every standard client
    /// enforces; larger payloads would be dropped there), 1300 in `renetcode`'s.
    ///
    /// # Errors
    /// [`PayloadError::EmptyPayload`], [`PayloadError::PayloadTooLarge`] over the layout's
    /// limit, [`PayloadError::UnknownClient`], or [`PayloadError::OutboxFull`] until
    /// [`poll_transmit`](Self::poll_transmit) empties the queue.
    pub fn send_payload(&mut self, client_id: u64, payload: &[u8]) -> Result<(), PayloadError> {
        check_payload(payload, self.layout)?;
        let index = *self
            .by_id
            .get(&client_id)
            .ok_or(PayloadError::UnknownClient { client_id })?;
        self.send_checked_payload(index, payload)
    }

    /// [`send_payload`](Self::send_payload) to the client in slot `index`, for the game
    /// server, which walks its connections by slot: no lookup by id per packet.
    /// [`PayloadError::UnknownClient`] unless the slot holds `client_id`.
    pub(crate) fn send_payload_at(
        &mut self,
        index: usize,
        client_id: u64,
        payload: &[u8],
    ) -> Result<(), PayloadError> {
        check_payload(payload, self.layout)?;
        if self
            .slots
            .get(index)
            .and_then(Option::as_ref)
            .is_none_or(|slot| slot.client_id != client_id)
        {
            return Err(PayloadError::UnknownClient { client_id });
        }
        self.send_checked_payload(index, payload)
    }

    /// Sends a checked payload to the connected client in slot `index`.
    fn send_checked_payload(&mut self, index: usize, payload: &[u8]) -> Result<(), PayloadError> {
        if !self.outbox.has_room() {
            return Err(PayloadError::OutboxFull);
        }
        if self.slots[index]
            .as_ref()
            .is_some_and(|slot| !slot.confirmed)
        {
            let keep_alive = Packet::KeepAlive {
                client_index: index as u32,
                max_clients: self.slots.len() as u32,
            };
            self.send_to_slot(index, &keep_alive);
        }
        if self.send_to_slot(index, &Packet::Payload(payload)) {
            Ok(())
        } else {
            Err(PayloadError::OutboxFull)
        }
    }

    /// Disconnects a client: sends it [`DISCONNECT_PACKETS`] disconnect packets, frees its
    /// slot, and queues [`NetcodeEvent::ClientDisconnected`] with
    /// [`DisconnectReason::DisconnectedByServer`]. Returns whether it was connected.
    pub fn disconnect(&mut self, client_id: u64) -> bool {
        self.disconnect_for(client_id, DisconnectReason::DisconnectedByServer)
    }

    /// [`NetcodeServer::disconnect`] for another reason than the game's asking (the
    /// client's packets are the same). [`DisconnectReason::OverBudget`] also bans the
    /// client's token.
    pub(crate) fn disconnect_for(&mut self, client_id: u64, reason: DisconnectReason) -> bool {
        match self.by_id.get(&client_id) {
            Some(&index) => {
                self.free_slot(index, reason, true);
                true
            }
            None => false,
        }
    }

    /// Connection requests denied because a session of their connect token was
    /// disconnected for [`DisconnectReason::OverBudget`] (such a token is denied for as
    /// long as the server remembers it: the last `max_clients + max_pending` tokens used,
    /// banned ones kept first).
    ///
    /// ```
    /// use netser_transport::netcode::{NetcodeServer, ServerConfig};
    /// use std::time::SystemTime;
    /// let config = ServerConfig::new(0x1234, [7; 32], vec!["127.0.0.1:40000".parse().unwrap()]);
    /// let server = NetcodeServer::new(0.0, SystemTime::now(), config).unwrap();
    /// assert_eq!(server.denied_banned_tokens(), 0);
    /// ```
    pub fn denied_banned_tokens(&self) -> u64 {
        self.denied_banned
    }

    /// Disconnects every client (see [`NetcodeServer::disconnect`]).
    pub fn disconnect_all(&mut self) {
        for index in 0..self.slots.len() {
            if self.slots[index].is_some() {
                self.free_slot(index, DisconnectReason::DisconnectedByServer, true);
            }
        }
    }
}
