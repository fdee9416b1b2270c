//! Structured scripts against the netcode handshake: a [`NetcodeServer`] and two real
//! [`NetcodeClient`]s (one whose token lists an unreachable server first), driven by
//! frames of a perfect network, single deliveries, losses, time steps, replays of any
//! datagram seen on the wire from any address, mutations, garbage, packets sealed with
//! real and wrong keys, requests with every kind of token (valid, held by nobody,
//! expired, of another protocol, for another server, signed with another key, a second
//! token for a connected id), handshakes completed by an attacker holding a valid token,
//! payloads both ways, disconnects and reconnects.
//!
//! Checked after every step: no panic; the server's tables and queues within their
//! configured bounds and its memory within a bound of its configuration; every connect
//! event for an issued, valid token, at an address that sent that token's request and a
//! response; every disconnect for a client connected there; the connected set the events
//! describe is the server's; a client is connected only after the server connected its
//! id at its address (unless the script sealed packets with that client's server key),
//! and once connected or disconnected it never goes back to connecting; every payload
//! delivered was sent by the peer, at most once per session.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use netser_transport::netcode::packet::{peek, Packet, PacketType};
use netser_transport::netcode::{
    ClientState, ConnectToken, Key, NetcodeClient, NetcodeEvent, NetcodeServer, ServerConfig,
    TokenParams, MAX_PACKET_BYTES,
};

use super::netcode::{deterministic_token, open_packet, request_for, seal_packet, server_addr};
use super::netcode::{NOW, PROTOCOL_ID, SERVER_KEY};
use super::script::pattern;
use super::script_bytes::{noise, ScriptBytes};

/// Datagrams kept on each wire and in each history; the oldest go beyond it.
const MAX_QUEUED: usize = 128;

/// The outbox bound of the scripts' server: small, so it is reached.
const OUTBOX_BYTES: usize = 16 * MAX_PACKET_BYTES;

/// The addresses of the two real clients.
pub fn client_addrs() -> [SocketAddr; 2] {
    [
        SocketAddr::from(([10, 0, 0, 1], 5000)),
        SocketAddr::from(([10, 0, 0, 2], 5000)),
    ]
}

/// The tokens: 0 and 1 the real clients' (ids 1 and 2; 1 lists an unreachable server
/// first), 2 valid and held by nobody (id 3), 3 expired, 4 of another protocol, 5 for
/// another server, 6 signed with another key, 7 a second valid token for id 1.
pub fn tokens() -> &'static [ConnectToken; 8] {
    static TOKENS: OnceLock<[ConnectToken; 8]> = OnceLock::new();
    TOKENS.get_or_init(|| {
        let unreachable = SocketAddr::from(([192, 0, 2, 99], 40_000));
        let params = |client_id: u64, servers: Vec<SocketAddr>, timeout: i32| TokenParams {
            client_id,
            timeout_seconds: timeout,
            user_data: [client_id as u8; 256],
            ..TokenParams::new(PROTOCOL_ID, servers, NOW)
        };
        let token = |p: &TokenParams, key: &Key, seed: u8| deterministic_token(p, key, seed);
        let server = vec![server_addr()];
        [
            token(&params(1, server.clone(), 5), &SERVER_KEY, 1),
            token(
                &params(2, vec![unreachable, server_addr()], 2),
                &SERVER_KEY,
                2,
            ),
            token(&params(3, server.clone(), 5), &SERVER_KEY, 3),
            token(
                &TokenParams {
                    create_timestamp: NOW - 1000,
                    expire_seconds: 10,
                    ..params(4, server.clone(), 5)
                },
                &SERVER_KEY,
                4,
            ),
            token(
                &TokenParams {
                    protocol_id: PROTOCOL_ID ^ 1,
                    ..params(5, server.clone(), 5)
                },
                &SERVER_KEY,
                5,
            ),
            token(&params(6, vec![unreachable], 5), &SERVER_KEY, 6),
            token(&params(7, server.clone(), 5), &[0x66; 32], 7),
            token(&params(1, server, 5), &SERVER_KEY, 8),
        ]
    })
}

/// The client id each of [`tokens`] was issued for. A token in netcode's standard layout
/// does not carry it in its public part (`ConnectToken::client_id` is 0 there), so the
/// harness keeps it beside the tokens.
const TOKEN_CLIENT_IDS: [u64; 8] = [1, 2, 3, 4, 5, 6, 7, 1];

/// The client id token `t` of [`tokens`] was issued for.
pub fn token_client_id(t: usize) -> u64 {
    TOKEN_CLIENT_IDS[t]
}

/// Tokens a server must accept: their index in [`tokens`].
const VALID_TOKENS: [usize; 4] = [0, 1, 2, 7];

fn addr(choice: u8) -> SocketAddr {
    match choice % 8 {
        0 | 1 => client_addrs()[usize::from(choice % 2)],
        2 => server_addr(),
        3 => "[2001:db8::1]:5000".parse().expect("valid"),
        n => SocketAddr::from(([10, 0, 0, 9], 6000 + u16::from(n))),
    }
}

/// What the peers, the network or an attacker do next.
#[derive(Arbitrary, Debug, Clone)]
pub enum HandshakeOp {
    /// A frame of a perfect network: everyone updates, every datagram is delivered.
    Step,
    /// Time passes; everyone updates; datagrams stay where they are.
    Tick {
        /// Milliseconds.
        ms: u16,
    },
    /// One client updates.
    ClientUpdate {
        /// Which client.
        client: bool,
    },
    /// The server updates.
    ServerUpdate,
    /// Everything queued to send goes on the wire.
    Drain,
    /// Deliver the datagram at `index` (modulo the queue) of one direction.
    Deliver {
        /// Towards the server, or towards the clients.
        to_server: bool,
        /// Queue position.
        index: u8,
    },
    /// Lose one.
    Drop {
        /// Direction.
        to_server: bool,
        /// Queue position.
        index: u8,
    },
    /// Deliver again a datagram seen on the wire in that direction, from `from`.
    Replay {
        /// Direction.
        to_server: bool,
        /// History position.
        index: u8,
        /// Sender (to the server) or source address (to a client).
        from: u8,
    },
    /// Overwrite one byte of a datagram in flight.
    Mutate {
        /// Direction.
        to_server: bool,
        /// Queue position.
        index: u8,
        /// Byte (modulo the length).
        offset: u16,
        /// New value.
        byte: u8,
    },
    /// Cut one short.
    Truncate {
        /// Direction.
        to_server: bool,
        /// Queue position.
        index: u8,
        /// New length (modulo the length).
        len: u16,
    },
    /// Raw bytes to the server from `from`, or to client `from % 2` from the address
    /// `from / 2` chooses.
    Forge {
        /// Direction.
        to_server: bool,
        /// Address choice.
        from: u8,
        /// The datagram.
        bytes: Vec<u8>,
    },
    /// A packet whose sequence and body are sealed with a real or a wrong key.
    Seal {
        /// Direction.
        to_server: bool,
        /// Address choice, as for `Forge`.
        from: u8,
        /// 0-5: the keys of tokens 0-2, client to server or server to client; else zero.
        key: u8,
        /// The prefix byte (type and sequence length).
        prefix: u8,
        /// The sequence.
        sequence: u64,
        /// The body.
        body: Vec<u8>,
    },
    /// A connection request with token `token` (modulo 8) from `from`.
    Request {
        /// Token choice.
        token: u8,
        /// Address choice.
        from: u8,
    },
    /// An attacker holding tokens 0-2 answers the last challenge sent to `from` with it.
    Respond {
        /// Address choice.
        from: u8,
    },
    /// A client sends a payload of `len` bytes.
    ClientSend {
        /// Which client.
        client: bool,
        /// Length (modulo 1300, plus one).
        len: u16,
    },
    /// The server sends a payload of `len` bytes to a client's id.
    ServerSend {
        /// Which client's id.
        client: bool,
        /// Length (modulo 1300, plus one).
        len: u16,
    },
    /// A client disconnects.
    ClientDisconnect {
        /// Which client.
        client: bool,
    },
    /// The server disconnects a client's id.
    ServerDisconnect {
        /// Which client's id.
        client: bool,
    },
    /// The server disconnects everyone.
    ServerDisconnectAll,
    /// A client starts again with its token.
    Reconnect {
        /// Which client.
        client: bool,
    },
}

/// A script against a server and two clients.
#[derive(Arbitrary, Debug, Clone)]
pub struct HandshakeScript {
    /// Slots: `max_clients % 3 + 1`.
    pub max_clients: u8,
    /// Handshakes at once: `max_pending % 4 + 1`.
    pub max_pending: u8,
    /// The operations.
    pub ops: Vec<HandshakeOp>,
}

struct Harness {
    server: NetcodeServer,
    max_clients: usize,
    max_pending: usize,
    memory_bound: usize,
    clients: [NetcodeClient; 2],
    /// Datagrams in flight: to the server `(from, bytes)`, to the clients `(to, bytes)`.
    wire: [VecDeque<(SocketAddr, Vec<u8>)>; 2],
    /// Every datagram seen on each wire (also the server's answers to attackers).
    history: [VecDeque<Vec<u8>>; 2],
    /// Challenges the server sent to addresses other than the clients'.
    challenges: HashMap<SocketAddr, Vec<u8>>,
    /// Sequence of the attacker's packets.
    attacker_sequence: u64,
    requested: HashSet<(u64, SocketAddr)>,
    responded: HashSet<SocketAddr>,
    /// Connected now, by id, and every (id, address) connected so far.
    connected: HashMap<u64, SocketAddr>,
    ever_connected: HashSet<(u64, SocketAddr)>,
    /// Token ids whose client-to-server (0) or server-to-client (1) key the script used.
    sealed_with: [HashSet<u64>; 2],
    /// Payloads sent to (0) and by (1) each id, and those delivered this session.
    sent: [HashMap<u64, HashSet<Vec<u8>>>; 2],
    delivered: [HashMap<u64, HashSet<Vec<u8>>>; 2],
    states: [ClientState; 2],
    next_payload: u32,
    now: f64,
}

fn pick<T>(queue: &VecDeque<T>, index: u8) -> Option<usize> {
    (!queue.is_empty()).then(|| usize::from(index) % queue.len())
}

fn push_bounded<T>(queue: &mut VecDeque<T>, item: T) {
    if queue.len() == MAX_QUEUED {
        queue.pop_front();
    }
    queue.push_back(item);
}

impl Harness {
    fn new(script: &HandshakeScript) -> Self {
        let max_clients = usize::from(script.max_clients % 3) + 1;
        let max_pending = usize::from(script.max_pending % 4) + 1;
        let config = ServerConfig {
            max_clients,
            max_pending,
            max_outbox_bytes: OUTBOX_BYTES,
            ..ServerConfig::new(PROTOCOL_ID, SERVER_KEY, vec![server_addr()])
        };
        let server =
            NetcodeServer::new(0.0, std::time::UNIX_EPOCH, config).expect("a valid configuration");
        // The idle tables, then per slot or handshake its keys, replay window, user data
        // and table entries (generously), the outbox twice over (a growing buffer) and
        // the event queue.
        let entries = max_clients + max_pending;
        let memory_bound = server.memory_bytes() + entries * 8192 + 2 * OUTBOX_BYTES + 65_536;
        let now = NOW as f64;
        let clients = [
            NetcodeClient::new(now, tokens()[0].clone()),
            NetcodeClient::new(now, tokens()[1].clone()),
        ];
        Self {
            server,
            max_clients,
            max_pending,
            memory_bound,
            states: [clients[0].state(), clients[1].state()],
            clients,
            wire: Default::default(),
            history: Default::default(),
            challenges: HashMap::new(),
            attacker_sequence: 0,
            requested: HashSet::new(),
            responded: HashSet::new(),
            connected: HashMap::new(),
            ever_connected: HashSet::new(),
            sealed_with: Default::default(),
            sent: Default::default(),
            delivered: Default::default(),
            next_payload: 0,
            now,
        }
    }

    fn client_id(c: usize) -> u64 {
        token_client_id(c)
    }

    fn drain(&mut self) {
        let addrs = client_addrs();
        for (c, client) in self.clients.iter_mut().enumerate() {
            let wire = &mut self.wire[0];
            while let Some(transmit) = client.poll_transmit() {
                let to = transmit.to;
                let bytes = transmit.data;
                if to == server_addr() {
                    push_bounded(wire, (addrs[c], bytes.to_vec()));
                }
            }
        }
        let mut out = Vec::new();
        while let Some(transmit) = self.server.poll_transmit() {
            out.push((transmit.to, transmit.data.to_vec()));
        }
        for (to, bytes) in out {
            push_bounded(&mut self.history[1], bytes.clone());
            if addrs.contains(&to) {
                push_bounded(&mut self.wire[1], (to, bytes));
            } else if peek(&bytes).is_ok_and(|(kind, _)| kind == PacketType::Challenge) {
                self.challenges.insert(to, bytes);
            }
        }
    }

    fn server_receives(&mut self, from: SocketAddr, mut bytes: Vec<u8>) {
        push_bounded(&mut self.history[0], bytes.clone());
        match peek(&bytes) {
            Ok((PacketType::ConnectionRequest, _)) => {
                for (t, token) in tokens().iter().enumerate() {
                    if request_for(token) == bytes {
                        self.requested.insert((token_client_id(t), from));
                    }
                }
            }
            Ok((PacketType::Response, _)) => {
                self.responded.insert(from);
            }
            _ => {}
        }
        if let Some(received) = self.server.handle_datagram(self.now, from, &mut bytes) {
            let id = received.client_id;
            assert_eq!(
                self.server.client_at(from),
                Some(id),
                "payload from elsewhere"
            );
            if !self.sealed_with[0].contains(&id) {
                let payload = received.payload.to_vec();
                assert!(
                    self.sent[1].get(&id).is_some_and(|s| s.contains(&payload)),
                    "server delivered a payload client {id} never sent"
                );
                assert!(
                    self.delivered[1].entry(id).or_default().insert(payload),
                    "server delivered a payload of client {id} twice in one session"
                );
            }
        }
    }

    fn client_receives(&mut self, to: SocketAddr, from: SocketAddr, mut bytes: Vec<u8>) {
        let Some(c) = client_addrs().iter().position(|&a| a == to) else {
            return;
        };
        let id = Self::client_id(c);
        if let Some(payload) = self.clients[c].handle_datagram(self.now, from, &mut bytes) {
            if !self.sealed_with[1].contains(&id) {
                let payload = payload.to_vec();
                assert!(
                    self.sent[0].get(&id).is_some_and(|s| s.contains(&payload)),
                    "client {id} delivered a payload the server never sent"
                );
                assert!(
                    self.delivered[0].entry(id).or_default().insert(payload),
                    "client {id} delivered a payload twice in one session"
                );
            }
        }
    }

    fn deliver(&mut self, to_server: bool, i: usize) {
        let w = usize::from(!to_server);
        let Some((addr, bytes)) = self.wire[w].remove(i) else {
            return;
        };
        if to_server {
            self.server_receives(addr, bytes);
        } else {
            self.client_receives(addr, server_addr(), bytes);
        }
    }

    fn update_all(&mut self) {
        for client in &mut self.clients {
            client.handle_timeout(self.now);
        }
        self.server.handle_timeout(self.now);
    }

    fn payload(&mut self, len: u16) -> Vec<u8> {
        self.next_payload += 1;
        pattern(5, self.next_payload, usize::from(len) % 1300 + 1)
    }

    fn op(&mut self, op: &HandshakeOp) {
        match op {
            HandshakeOp::Step => {
                self.now += 0.1;
                for client in &mut self.clients {
                    client.handle_timeout(self.now);
                }
                self.drain();
                while !self.wire[0].is_empty() {
                    self.deliver(true, 0);
                }
                self.server.handle_timeout(self.now);
                self.drain();
                while !self.wire[1].is_empty() {
                    self.deliver(false, 0);
                }
            }
            HandshakeOp::Tick { ms } => {
                self.now += f64::from(*ms) / 1000.0;
                self.update_all();
            }
            HandshakeOp::ClientUpdate { client } => {
                self.clients[usize::from(*client)].handle_timeout(self.now);
            }
            HandshakeOp::ServerUpdate => self.server.handle_timeout(self.now),
            HandshakeOp::Drain => self.drain(),
            HandshakeOp::Deliver { to_server, index } => {
                if let Some(i) = pick(&self.wire[usize::from(!*to_server)], *index) {
                    self.deliver(*to_server, i);
                }
            }
            HandshakeOp::Drop { to_server, index } => {
                let w = usize::from(!*to_server);
                if let Some(i) = pick(&self.wire[w], *index) {
                    self.wire[w].remove(i);
                }
            }
            HandshakeOp::Replay {
                to_server,
                index,
                from,
            } => {
                let w = usize::from(!*to_server);
                if let Some(i) = pick(&self.history[w], *index) {
                    let bytes = self.history[w][i].clone();
                    self.forge(*to_server, *from, bytes);
                }
            }
            HandshakeOp::Mutate {
                to_server,
                index,
                offset,
                byte,
            } => {
                let w = usize::from(!*to_server);
                if let Some(i) = pick(&self.wire[w], *index) {
                    let d = &mut self.wire[w][i].1;
                    if !d.is_empty() {
                        let at = usize::from(*offset) % d.len();
                        d[at] = *byte;
                    }
                }
            }
            HandshakeOp::Truncate {
                to_server,
                index,
                len,
            } => {
                let w = usize::from(!*to_server);
                if let Some(i) = pick(&self.wire[w], *index) {
                    let d = &mut self.wire[w][i].1;
                    if !d.is_empty() {
                        d.truncate(usize::from(*len) % d.len());
                    }
                }
            }
            HandshakeOp::Forge {
                to_server,
                from,
                bytes,
            } => self.forge(*to_server, *from, bytes.clone()),
            HandshakeOp::Seal {
                to_server,
                from,
                key,
                prefix,
                sequence,
                body,
            } => {
                let key = match key % 8 {
                    k @ 0..=5 => {
                        let token = &tokens()[usize::from(k / 2)];
                        let direction = usize::from(k % 2);
                        self.sealed_with[direction].insert(token_client_id(usize::from(k / 2)));
                        if direction == 0 {
                            *token.client_to_server_key()
                        } else {
                            *token.server_to_client_key()
                        }
                    }
                    _ => [0; 32],
                };
                let bytes = seal_packet(*prefix, *sequence, body, &key, PROTOCOL_ID);
                self.forge(*to_server, *from, bytes);
            }
            HandshakeOp::Request { token, from } => {
                let bytes = request_for(&tokens()[usize::from(token % 8)]);
                self.server_receives(addr(*from), bytes);
            }
            HandshakeOp::Respond { from } => self.respond(addr(*from)),
            HandshakeOp::ClientSend { client, len } => {
                let c = usize::from(*client);
                let payload = self.payload(*len);
                if self.clients[c].send_payload(&payload).is_ok() {
                    let id = Self::client_id(c);
                    self.sent[1].entry(id).or_default().insert(payload);
                }
            }
            HandshakeOp::ServerSend { client, len } => {
                let id = Self::client_id(usize::from(*client));
                let payload = self.payload(*len);
                if self.server.send_payload(id, &payload).is_ok() {
                    self.sent[0].entry(id).or_default().insert(payload);
                }
            }
            HandshakeOp::ClientDisconnect { client } => {
                self.clients[usize::from(*client)].disconnect();
            }
            HandshakeOp::ServerDisconnect { client } => {
                let id = Self::client_id(usize::from(*client));
                let was = self.server.is_connected(id);
                assert_eq!(self.server.disconnect(id), was);
            }
            HandshakeOp::ServerDisconnectAll => self.server.disconnect_all(),
            HandshakeOp::Reconnect { client } => {
                let c = usize::from(*client);
                self.clients[c] = NetcodeClient::new(self.now, tokens()[c].clone());
                self.states[c] = self.clients[c].state();
                self.delivered[0].remove(&Self::client_id(c));
            }
        }
    }

    fn forge(&mut self, to_server: bool, from: u8, bytes: Vec<u8>) {
        if to_server {
            self.server_receives(addr(from), bytes);
        } else {
            let to = client_addrs()[usize::from(from % 2)];
            self.client_receives(to, addr(from / 2), bytes);
        }
    }

    /// An attacker holding the tokens 0-2 answers the challenge sent to `from`.
    fn respond(&mut self, from: SocketAddr) {
        let Some(challenge) = self.challenges.get(&from) else {
            return;
        };
        for token in &tokens()[..3] {
            let Some(plain) = open_packet(challenge, token.server_to_client_key(), PROTOCOL_ID)
            else {
                continue;
            };
            // Prefix, 8 sequence bytes, token sequence, token data.
            let token_sequence = u64::from_le_bytes(plain[9..17].try_into().expect("8 bytes"));
            let Ok(token_data) = plain[17..].try_into() else {
                return;
            };
            let mut bytes = Vec::new();
            self.attacker_sequence += 1;
            Packet::Response {
                token_sequence,
                token_data,
            }
            .encode(
                self.attacker_sequence,
                PROTOCOL_ID,
                token.client_to_server_key(),
                &mut bytes,
            );
            self.server_receives(from, bytes);
            return;
        }
    }

    fn check(&mut self) {
        while let Some(event) = self.server.poll_event() {
            match event {
                NetcodeEvent::ClientConnected {
                    client_id, addr, ..
                } => {
                    assert!(
                        VALID_TOKENS
                            .iter()
                            .any(|&t| token_client_id(t) == client_id),
                        "client {client_id} connected without a valid token"
                    );
                    assert!(
                        self.requested.contains(&(client_id, addr)),
                        "client {client_id} connected at {addr}, whence its token never came"
                    );
                    assert!(
                        self.responded.contains(&addr),
                        "client {client_id} connected at {addr}, which sent no response"
                    );
                    assert_eq!(self.connected.insert(client_id, addr), None);
                    self.ever_connected.insert((client_id, addr));
                    self.delivered[1].remove(&client_id);
                }
                NetcodeEvent::ClientDisconnected {
                    client_id, addr, ..
                } => {
                    assert_eq!(
                        self.connected.remove(&client_id),
                        Some(addr),
                        "client {client_id} disconnected from {addr}, where it was not"
                    );
                }
                _ => {}
            }
        }
        let ids: HashSet<u64> = self.server.client_ids().collect();
        let expected: HashSet<u64> = self.connected.keys().copied().collect();
        assert_eq!(
            ids, expected,
            "the events do not describe the connected set"
        );
        for (&id, &at) in &self.connected {
            assert_eq!(self.server.client_addr(id), Some(at));
        }
        assert!(self.server.connected_clients() <= self.max_clients);
        assert!(self.server.pending_clients() <= self.max_pending);
        assert!(
            self.server.queued_datagrams() * 18 <= OUTBOX_BYTES,
            "{} datagrams queued",
            self.server.queued_datagrams()
        );
        assert!(
            self.server.memory_bytes() <= self.memory_bound,
            "server holds {} bytes, over {}",
            self.server.memory_bytes(),
            self.memory_bound
        );
        for c in 0..2 {
            let state = self.clients[c].state();
            let before = self.states[c];
            match before {
                ClientState::Connected => assert!(
                    matches!(state, ClientState::Connected | ClientState::Disconnected(_)),
                    "client {c}: {before:?} to {state:?}"
                ),
                ClientState::Disconnected(_) => {
                    assert_eq!(state, before, "client {c} left its disconnected state")
                }
                _ => {}
            }
            let id = Self::client_id(c);
            if state == ClientState::Connected
                && before != ClientState::Connected
                && !self.sealed_with[1].contains(&id)
            {
                let at = client_addrs()[c];
                assert!(
                    self.ever_connected.contains(&(id, at)),
                    "client {c} connected, but the server never connected it"
                );
            }
            self.states[c] = state;
        }
    }
}

/// What a script did, for the tests that check the seeds reach deep states.
#[derive(Debug, Clone, PartialEq)]
pub struct HandshakeOutcome {
    /// Every (client id, address) the server connected.
    pub connected: HashSet<(u64, SocketAddr)>,
    /// The real clients' states at the end.
    pub states: [ClientState; 2],
    /// Payloads delivered to the server (0) and to the clients (1).
    pub payloads: [usize; 2],
    /// Datagrams the server refused.
    pub refused: u64,
}

/// Plays a handshake script; panics when an invariant breaks.
pub fn run_handshake_script(script: &HandshakeScript) -> HandshakeOutcome {
    let mut h = Harness::new(script);
    for op in &script.ops {
        h.op(op);
        h.check();
    }
    let count = |d: &HashMap<u64, HashSet<Vec<u8>>>| d.values().map(HashSet::len).sum();
    HandshakeOutcome {
        states: [h.clients[0].state(), h.clients[1].state()],
        payloads: [count(&h.delivered[1]), count(&h.delivered[0])],
        refused: h.server.refusals().total(),
        connected: h.ever_connected,
    }
}

fn write_op(b: ScriptBytes, op: &HandshakeOp) -> ScriptBytes {
    const N: u32 = 20;
    match *op {
        HandshakeOp::Step => b.variant(0, N),
        HandshakeOp::Tick { ms } => b.variant(1, N).u16(ms),
        HandshakeOp::ClientUpdate { client } => b.variant(2, N).bool(client),
        HandshakeOp::ServerUpdate => b.variant(3, N),
        HandshakeOp::Drain => b.variant(4, N),
        HandshakeOp::Deliver { to_server, index } => b.variant(5, N).bool(to_server).u8(index),
        HandshakeOp::Drop { to_server, index } => b.variant(6, N).bool(to_server).u8(index),
        HandshakeOp::Replay {
            to_server,
            index,
            from,
        } => b.variant(7, N).bool(to_server).u8(index).u8(from),
        HandshakeOp::Mutate {
            to_server,
            index,
            offset,
            byte,
        } => b
            .variant(8, N)
            .bool(to_server)
            .u8(index)
            .u16(offset)
            .u8(byte),
        HandshakeOp::Truncate {
            to_server,
            index,
            len,
        } => b.variant(9, N).bool(to_server).u8(index).u16(len),
        HandshakeOp::Forge { .. } | HandshakeOp::Seal { .. } => {
            unreachable!("seeds carry no byte strings (the fuzzer adds them)")
        }
        HandshakeOp::Request { token, from } => b.variant(12, N).u8(token).u8(from),
        HandshakeOp::Respond { from } => b.variant(13, N).u8(from),
        HandshakeOp::ClientSend { client, len } => b.variant(14, N).bool(client).u16(len),
        HandshakeOp::ServerSend { client, len } => b.variant(15, N).bool(client).u16(len),
        HandshakeOp::ClientDisconnect { client } => b.variant(16, N).bool(client),
        HandshakeOp::ServerDisconnect { client } => b.variant(17, N).bool(client),
        HandshakeOp::ServerDisconnectAll => b.variant(18, N),
        HandshakeOp::Reconnect { client } => b.variant(19, N).bool(client),
    }
}

/// The bytes `arbitrary` reads back as `script` (which holds no byte strings).
pub fn write_script(script: &HandshakeScript) -> Vec<u8> {
    let mut b = ScriptBytes::new()
        .u8(script.max_clients)
        .u8(script.max_pending);
    for op in &script.ops {
        b = write_op(b.item(), op);
    }
    b.finish()
}

/// The structured seeds: both clients connecting over a perfect network and exchanging
/// payloads, a handshake one datagram at a time followed by replays, an attacker with
/// every kind of token, and a full server.
pub fn seed_scripts() -> Vec<(String, HandshakeScript)> {
    use HandshakeOp::*;
    let steps = |n: usize| vec![Step; n];
    let mut connect = steps(40);
    connect.extend([
        ClientSend {
            client: false,
            len: 99,
        },
        ClientSend {
            client: true,
            len: 49,
        },
        ServerSend {
            client: false,
            len: 1199,
        },
        ServerSend {
            client: true,
            len: 6,
        },
        Step,
        Step,
        ClientDisconnect { client: false },
        Step,
        Step,
        ServerDisconnect { client: true },
        Step,
        Reconnect { client: false },
    ]);
    connect.extend(steps(10));

    let mut stepwise = Vec::new();
    for _ in 0..3 {
        stepwise.extend([
            ClientUpdate { client: false },
            Drain,
            Deliver {
                to_server: true,
                index: 0,
            },
            ServerUpdate,
            Drain,
            Deliver {
                to_server: false,
                index: 0,
            },
            Tick { ms: 100 },
        ]);
    }
    for index in 0..4 {
        for to_server in [true, false] {
            stepwise.push(Replay {
                to_server,
                index,
                from: index * 3,
            });
        }
    }
    stepwise.extend([
        ClientSend {
            client: false,
            len: 10,
        },
        Drain,
        Mutate {
            to_server: true,
            index: 0,
            offset: 5,
            byte: 0,
        },
        Deliver {
            to_server: true,
            index: 0,
        },
        Truncate {
            to_server: false,
            index: 0,
            len: 20,
        },
        Drop {
            to_server: false,
            index: 0,
        },
    ]);
    stepwise.extend(vec![Tick { ms: 1000 }; 7]);

    // Every token but the real clients' from an attacker's addresses; the attacker holds
    // token 2 (a valid one) and answers its challenge.
    let mut attacker = Vec::new();
    for token in 2..8u8 {
        attacker.push(Request {
            token,
            from: 4 + token % 4,
        });
    }
    attacker.push(Drain);
    attacker.push(Respond { from: 6 });
    attacker.extend(steps(5));
    attacker.push(Request { token: 0, from: 0 });
    attacker.push(Request { token: 7, from: 1 });
    attacker.extend(steps(30));
    attacker.push(ServerDisconnectAll);
    attacker.extend(steps(3));

    let mut full = Vec::new();
    for from in 3..8 {
        full.push(Request { token: 2, from });
        full.push(Drain);
        full.push(Respond { from });
    }
    full.extend(steps(30));

    vec![
        (
            "connect".into(),
            HandshakeScript {
                max_clients: 2,
                max_pending: 3,
                ops: connect,
            },
        ),
        (
            "stepwise".into(),
            HandshakeScript {
                max_clients: 2,
                max_pending: 0,
                ops: stepwise,
            },
        ),
        (
            "attacker".into(),
            HandshakeScript {
                max_clients: 1,
                max_pending: 1,
                ops: attacker,
            },
        ),
        (
            "full".into(),
            HandshakeScript {
                max_clients: 0,
                max_pending: 3,
                ops: full,
            },
        ),
    ]
}

/// The seed inputs: the structured seeds and two of noise.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = seed_scripts()
        .iter()
        .map(|(name, script)| (name.clone(), write_script(script)))
        .collect();
    for (i, len) in [(0u64, 512), (1, 4096)] {
        out.push((format!("noise_{i}"), noise(0x4a4d + i, len)));
    }
    out
}

/// The target on raw bytes: read as a script and played.
pub fn run(data: &[u8]) {
    use arbitrary::Unstructured;
    if let Ok(script) = HandshakeScript::arbitrary_take_rest(Unstructured::new(data)) {
        let _ = run_handshake_script(&script);
    }
}
