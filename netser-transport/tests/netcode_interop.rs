//! netcode interop with the real `renetcode` 2.x crate, both ways, through the simulator
//! with loss: handshakes, payloads, disconnects, and tokens issued by either side. Both
//! netser sides run in `Layout::Renetcode`; each scenario runs over IPv4 and over IPv6.
//! A standard-layout netser side facing renetcode fails with a layout error.

use std::cell::Cell;
use std::net::SocketAddr;
use std::time::Duration;

use netser_transport::netcode::{
    ClientState, ConnectToken, DisconnectReason, Layout, NetcodeClient, NetcodeEvent,
    NetcodeServer, PayloadError, Refusal, ServerConfig, TokenParams, USER_DATA_BYTES,
};
use netser_transport::simulator::{Simulator, SimulatorConfig};
use renetcode::{ClientAuthentication, ServerAuthentication, ServerResult};

const PROTOCOL_ID: u64 = 0x6e65_7473_6572_0001;
const KEY: [u8; 32] = *b"a key shared by backend + server";
/// Simulation time 0 is this Unix time (tokens expire at Unix timestamps).
const T0: f64 = 1_700_000_000.0;
const STEP: f64 = 0.01;

thread_local! {
    /// Whether this test thread's peers talk over IPv6.
    static IPV6: Cell<bool> = const { Cell::new(false) };
}

/// Runs `scenario` over IPv4, then again over IPv6 addresses.
fn over_ipv4_and_ipv6(scenario: fn()) {
    IPV6.with(|v6| v6.set(false));
    scenario();
    IPV6.with(|v6| v6.set(true));
    scenario();
}

fn server_addr() -> SocketAddr {
    if IPV6.with(Cell::get) {
        "[2001:db8::1:40]:40000".parse().unwrap()
    } else {
        "192.0.2.1:40000".parse().unwrap()
    }
}
fn client_addr() -> SocketAddr {
    if IPV6.with(Cell::get) {
        "[2001:db8:5::7]:50000".parse().unwrap()
    } else {
        "198.51.100.7:50000".parse().unwrap()
    }
}

fn lossy(seed: u64) -> Simulator<SocketAddr> {
    Simulator::new(SimulatorConfig {
        latency: 0.03,
        jitter: 0.01,
        loss: 0.2,
        duplicate: 0.05,
        reorder: 0.05,
        seed,
        ..SimulatorConfig::default()
    })
}

fn perfect(sim: &mut Simulator<SocketAddr>) {
    sim.set_config(SimulatorConfig {
        latency: 0.03,
        ..SimulatorConfig::default()
    });
}

fn user_data(byte: u8) -> [u8; USER_DATA_BYTES] {
    let mut data = [0u8; USER_DATA_BYTES];
    data.iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = byte ^ i as u8);
    data
}

fn netser_token(client_id: u64, servers: Vec<SocketAddr>) -> ConnectToken {
    let params = TokenParams {
        client_id,
        timeout_seconds: 5,
        user_data: user_data(client_id as u8),
        layout: Layout::Renetcode,
        ..TokenParams::new(PROTOCOL_ID, servers, T0 as u64)
    };
    ConnectToken::generate(&params, &KEY).unwrap()
}

fn renet_token(client_id: u64, servers: Vec<SocketAddr>) -> renetcode::ConnectToken {
    renetcode::ConnectToken::generate(
        Duration::from_secs(T0 as u64),
        PROTOCOL_ID,
        300,
        client_id,
        5,
        servers,
        Some(&user_data(client_id as u8)),
        &KEY,
    )
    .unwrap()
}

fn to_renet(token: &ConnectToken) -> renetcode::ConnectToken {
    renetcode::ConnectToken::read(&mut token.to_bytes().as_slice()).unwrap()
}

fn from_renet(token: &renetcode::ConnectToken) -> ConnectToken {
    let mut bytes = Vec::new();
    token.write(&mut bytes).unwrap();
    ConnectToken::from_bytes_with(&bytes, Layout::Renetcode).unwrap()
}

fn netser_server() -> NetcodeServer {
    netser_server_in(Layout::Renetcode)
}

fn netser_server_in(layout: Layout) -> NetcodeServer {
    NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            max_clients: 8,
            layout,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()])
        },
    )
    .unwrap()
}

fn renet_server() -> renetcode::NetcodeServer {
    renetcode::NetcodeServer::new(renetcode::ServerConfig {
        current_time: Duration::from_secs_f64(T0),
        max_clients: 8,
        protocol_id: PROTOCOL_ID,
        public_addresses: vec![server_addr()],
        authentication: ServerAuthentication::Secure { private_key: KEY },
    })
}

/// A renetcode client driven in simulation time.
struct RenetClient {
    inner: renetcode::NetcodeClient,
    t: f64,
    received: Vec<Vec<u8>>,
}

impl RenetClient {
    fn new(token: renetcode::ConnectToken) -> Self {
        let inner = renetcode::NetcodeClient::new(
            Duration::from_secs_f64(T0),
            ClientAuthentication::Secure {
                connect_token: token,
            },
        )
        .unwrap();
        Self {
            inner,
            t: 0.0,
            received: Vec::new(),
        }
    }

    fn step(&mut self, t: f64, sim: &mut Simulator<SocketAddr>) {
        let delta = Duration::from_secs_f64(t - self.t);
        self.t = t;
        if let Some((bytes, to)) = self.inner.update(delta) {
            sim.send(t, client_addr(), to, bytes);
        }
    }

    fn receive(&mut self, bytes: &mut [u8]) {
        if let Some(payload) = self.inner.process_packet(bytes) {
            self.received.push(payload.to_vec());
        }
    }

    fn send(&mut self, t: f64, sim: &mut Simulator<SocketAddr>, payload: &[u8]) {
        let (to, bytes) = self.inner.generate_payload_packet(payload).unwrap();
        sim.send(t, client_addr(), to, bytes);
    }
}

/// A renetcode server driven in simulation time.
struct RenetServer {
    inner: renetcode::NetcodeServer,
    t: f64,
    connected: Vec<(u64, [u8; USER_DATA_BYTES])>,
    disconnected: Vec<u64>,
    received: Vec<(u64, Vec<u8>)>,
}

impl RenetServer {
    fn new() -> Self {
        Self {
            inner: renet_server(),
            t: 0.0,
            connected: vec![],
            disconnected: vec![],
            received: vec![],
        }
    }

    fn step(&mut self, t: f64, sim: &mut Simulator<SocketAddr>) {
        self.inner.update(Duration::from_secs_f64(t - self.t));
        self.t = t;
        for client_id in self.inner.clients_id() {
            // The result borrows `self.inner`: copy it out before handling.
            let owned = own(self.inner.update_client(client_id));
            self.handle_owned(owned, t, sim);
        }
    }

    fn receive(
        &mut self,
        t: f64,
        from: SocketAddr,
        bytes: &mut [u8],
        sim: &mut Simulator<SocketAddr>,
    ) {
        let owned = own(self.inner.process_packet(from, bytes));
        self.handle_owned(owned, t, sim);
    }

    fn handle_owned(&mut self, owned: Owned, t: f64, sim: &mut Simulator<SocketAddr>) {
        match owned {
            Owned::None => {}
            Owned::Send(addr, bytes) => sim.send(t, server_addr(), addr, &bytes),
            Owned::Payload(client_id, bytes) => self.received.push((client_id, bytes)),
            Owned::Connected(client_id, addr, data, bytes) => {
                self.connected.push((client_id, *data));
                sim.send(t, server_addr(), addr, &bytes);
            }
            Owned::Disconnected(client_id, addr, bytes) => {
                self.disconnected.push(client_id);
                if let Some(bytes) = bytes {
                    sim.send(t, server_addr(), addr, &bytes);
                }
            }
        }
    }
}

enum Owned {
    None,
    Send(SocketAddr, Vec<u8>),
    Payload(u64, Vec<u8>),
    Connected(u64, SocketAddr, Box<[u8; USER_DATA_BYTES]>, Vec<u8>),
    Disconnected(u64, SocketAddr, Option<Vec<u8>>),
}

fn own(result: ServerResult<'_, '_>) -> Owned {
    match result {
        ServerResult::None => Owned::None,
        ServerResult::PacketToSend { addr, payload } => Owned::Send(addr, payload.to_vec()),
        ServerResult::Payload { client_id, payload } => Owned::Payload(client_id, payload.to_vec()),
        ServerResult::ClientConnected {
            client_id,
            addr,
            user_data,
            payload,
        } => Owned::Connected(client_id, addr, user_data, payload.to_vec()),
        ServerResult::ClientDisconnected {
            client_id,
            addr,
            payload,
        } => Owned::Disconnected(client_id, addr, payload.map(|p| p.to_vec())),
    }
}

/// Our server's side of a step: deliveries in, update, datagrams out.
fn step_netser_server(
    server: &mut NetcodeServer,
    t: f64,
    sim: &mut Simulator<SocketAddr>,
    inbox: &mut Vec<(SocketAddr, Vec<u8>)>,
    received: &mut Vec<(u64, Vec<u8>)>,
) {
    for (from, mut bytes) in inbox.drain(..) {
        if let Some(p) = server.handle_datagram(T0 + t, from, &mut bytes) {
            received.push((p.client_id, p.payload.to_vec()));
        }
    }
    server.handle_timeout(T0 + t);
    while let Some(transmit) = server.poll_transmit() {
        sim.send(t, server_addr(), transmit.to, transmit.data);
    }
}

fn step_netser_client(
    client: &mut NetcodeClient,
    t: f64,
    sim: &mut Simulator<SocketAddr>,
    inbox: &mut Vec<(SocketAddr, Vec<u8>)>,
    received: &mut Vec<Vec<u8>>,
) {
    for (from, mut bytes) in inbox.drain(..) {
        if let Some(p) = client.handle_datagram(t, from, &mut bytes) {
            received.push(p.to_vec());
        }
    }
    client.handle_timeout(t);
    while let Some(transmit) = client.poll_transmit() {
        sim.send(t, client_addr(), transmit.to, transmit.data);
    }
}

type Datagrams = Vec<(SocketAddr, Vec<u8>)>;

/// Deliveries due at `t`, split by receiver.
fn deliver(sim: &mut Simulator<SocketAddr>, t: f64) -> (Datagrams, Datagrams) {
    let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
    while let Some(d) = sim.receive(t) {
        if d.to == client_addr() {
            to_client.push((d.from, d.data));
        } else {
            to_server.push((d.from, d.data));
        }
    }
    (to_server, to_client)
}

#[test]
fn renetcode_client_connects_to_netser_server_with_our_token() {
    over_ipv4_and_ipv6(renetcode_client_connects_to_netser_server_with_our_token_scenario);
}

fn renetcode_client_connects_to_netser_server_with_our_token_scenario() {
    let mut sim = lossy(1);
    let mut server = netser_server();
    let mut client = RenetClient::new(to_renet(&netser_token(11, vec![server_addr()])));
    let mut server_received = Vec::new();
    let mut connected_at = None;
    let mut t = 0.0;
    let mut sent = 0;
    while t < 20.0 {
        let (mut to_server, to_client) = deliver(&mut sim, t);
        for (_, mut bytes) in to_client {
            client.receive(&mut bytes);
        }
        client.step(t, &mut sim);
        step_netser_server(
            &mut server,
            t,
            &mut sim,
            &mut to_server,
            &mut server_received,
        );
        if client.inner.is_connected() {
            connected_at.get_or_insert(t);
            // Payloads both ways, one per 50 ms.
            if sent < 100 && ((t * 100.0).round() as u64).is_multiple_of(5) {
                client.send(t, &mut sim, &[sent as u8 + 1; 100]);
                server.send_payload(11, &[sent as u8 + 101; 200]).unwrap();
                while let Some(transmit) = server.poll_transmit() {
                    sim.send(t, server_addr(), transmit.to, transmit.data);
                }
                sent += 1;
            }
        }
        t += STEP;
    }
    assert!(connected_at.is_some(), "renetcode client never connected");
    match server.poll_event() {
        Some(NetcodeEvent::ClientConnected {
            client_id: 11,
            addr,
            user_data,
            slot: 0,
        }) => {
            assert_eq!(addr, client_addr());
            assert_eq!(*user_data, user_data_of(11));
        }
        other => panic!("expected a connect event, got {other:?}"),
    }
    assert_eq!(sent, 100);
    // 20% loss: most payloads arrive, every one that arrives is intact.
    assert!(
        server_received.len() > 60 && server_received.len() <= 100,
        "{}",
        server_received.len()
    );
    assert!(server_received
        .iter()
        .all(|(id, p)| *id == 11 && p.len() == 100 && p.iter().all(|&b| b == p[0])));
    assert!(client.received.len() > 60, "{}", client.received.len());
    assert!(client.received.iter().all(|p| p.len() == 200 && p[0] > 100));

    // The renetcode client disconnects (one packet: on a clean link it arrives).
    perfect(&mut sim);
    let (to, bytes) = client.inner.disconnect().unwrap();
    sim.send(t, client_addr(), to, bytes);
    let end = t + 1.0;
    while t < end {
        let (mut to_server, _) = deliver(&mut sim, t);
        step_netser_server(
            &mut server,
            t,
            &mut sim,
            &mut to_server,
            &mut server_received,
        );
        t += STEP;
    }
    assert_eq!(
        server.poll_event(),
        Some(NetcodeEvent::ClientDisconnected {
            client_id: 11,
            addr: client_addr(),
            slot: 0,
            reason: DisconnectReason::DisconnectedByClient
        })
    );
    assert_eq!(server.connected_clients(), 0);
}

fn user_data_of(client_id: u64) -> [u8; USER_DATA_BYTES] {
    user_data(client_id as u8)
}

#[test]
fn netser_server_disconnect_reaches_renetcode_client() {
    over_ipv4_and_ipv6(netser_server_disconnect_reaches_renetcode_client_scenario);
}

fn netser_server_disconnect_reaches_renetcode_client_scenario() {
    let mut sim = lossy(2);
    let mut server = netser_server();
    let mut client = RenetClient::new(to_renet(&netser_token(12, vec![server_addr()])));
    let mut t = 0.0;
    let mut sink = Vec::new();
    while !(client.inner.is_connected() && server.is_connected(12)) {
        assert!(t < 10.0, "no connection");
        let (mut to_server, to_client) = deliver(&mut sim, t);
        to_client
            .into_iter()
            .for_each(|(_, mut b)| client.receive(&mut b));
        client.step(t, &mut sim);
        step_netser_server(&mut server, t, &mut sim, &mut to_server, &mut sink);
        t += STEP;
    }
    // 20% loss each way; our ten redundant disconnect packets get through.
    assert!(server.disconnect(12));
    while let Some(transmit) = server.poll_transmit() {
        sim.send(t, server_addr(), transmit.to, transmit.data);
    }
    let end = t + 1.0;
    while t < end {
        let (_, to_client) = deliver(&mut sim, t);
        to_client
            .into_iter()
            .for_each(|(_, mut b)| client.receive(&mut b));
        t += STEP;
    }
    assert_eq!(
        client.inner.disconnect_reason(),
        Some(renetcode::DisconnectReason::DisconnectedByServer)
    );
}

#[test]
fn netser_client_connects_to_renetcode_server_with_its_token() {
    over_ipv4_and_ipv6(netser_client_connects_to_renetcode_server_with_its_token_scenario);
}

fn netser_client_connects_to_renetcode_server_with_its_token_scenario() {
    let mut sim = lossy(3);
    let mut server = RenetServer::new();
    let token = from_renet(&renet_token(21, vec![server_addr()]));
    assert_eq!(token.client_id(), 21);
    let mut client = NetcodeClient::new(0.0, token);
    let mut client_received = Vec::new();
    let mut inbox = Vec::new();
    let mut t = 0.0;
    let mut sent = 0;
    while t < 20.0 {
        let (to_server, to_client) = deliver(&mut sim, t);
        for (from, mut bytes) in to_server {
            server.receive(t, from, &mut bytes, &mut sim);
        }
        server.step(t, &mut sim);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut client_received);
        if client.is_connected() && sent < 100 && ((t * 100.0).round() as u64).is_multiple_of(5) {
            client.send_payload(&[sent as u8 + 1; 300]).unwrap();
            while let Some(transmit) = client.poll_transmit() {
                sim.send(t, client_addr(), transmit.to, transmit.data);
            }
            let (to, bytes) = server
                .inner
                .generate_payload_packet(21, &[sent as u8 + 101; 50])
                .unwrap();
            sim.send(t, server_addr(), to, bytes);
            sent += 1;
        }
        t += STEP;
    }
    assert_eq!(client.state(), ClientState::Connected);
    assert_eq!(client.client_index(), (0, 8));
    assert_eq!(server.connected, vec![(21, user_data_of(21))]);
    assert_eq!(sent, 100);
    assert!(server.received.len() > 60, "{}", server.received.len());
    assert!(server
        .received
        .iter()
        .all(|(id, p)| *id == 21 && p.len() == 300));
    assert!(client_received.len() > 60, "{}", client_received.len());
    assert!(client_received.iter().all(|p| p.len() == 50 && p[0] > 100));

    // Our client disconnects through 20% loss: one of ten disconnect packets arrives.
    client.disconnect();
    assert_eq!(
        client.disconnect_reason(),
        Some(DisconnectReason::DisconnectedByClient)
    );
    while let Some(transmit) = client.poll_transmit() {
        sim.send(t, client_addr(), transmit.to, transmit.data);
    }
    let end = t + 1.0;
    while t < end {
        let (to_server, _) = deliver(&mut sim, t);
        for (from, mut bytes) in to_server {
            server.receive(t, from, &mut bytes, &mut sim);
        }
        t += STEP;
    }
    assert_eq!(server.disconnected, vec![21]);
    assert!(!server.inner.is_client_connected(21));
}

#[test]
fn renetcode_server_disconnect_reaches_netser_client() {
    over_ipv4_and_ipv6(renetcode_server_disconnect_reaches_netser_client_scenario);
}

fn renetcode_server_disconnect_reaches_netser_client_scenario() {
    let mut sim = lossy(4);
    let mut server = RenetServer::new();
    let mut client = NetcodeClient::new(0.0, from_renet(&renet_token(22, vec![server_addr()])));
    let (mut inbox, mut sink) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    while !client.is_connected() {
        assert!(t < 10.0, "no connection");
        let (to_server, to_client) = deliver(&mut sim, t);
        to_server
            .into_iter()
            .for_each(|(from, mut b)| server.receive(t, from, &mut b, &mut sim));
        server.step(t, &mut sim);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut sink);
        t += STEP;
    }
    // renetcode sends a single disconnect packet: a clean link so it arrives.
    perfect(&mut sim);
    let owned = own(server.inner.disconnect(22));
    server.handle_owned(owned, t, &mut sim);
    let end = t + 1.0;
    while t < end {
        let (_, to_client) = deliver(&mut sim, t);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut sink);
        t += STEP;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::DisconnectedByServer)
    );
}

/// Runs a netcode client against a server until connected or `limit` seconds.
fn connect_netser_pair(
    client: &mut NetcodeClient,
    server: &mut NetcodeServer,
    sim: &mut Simulator<SocketAddr>,
) -> f64 {
    let (mut inbox, mut sink, mut received) = (Vec::new(), Vec::new(), Vec::new());
    let mut t = 0.0;
    while !client.is_connected() {
        assert!(t < 10.0, "no connection: {:?}", client.state());
        let (mut to_server, to_client) = deliver(sim, t);
        step_netser_server(server, t, sim, &mut to_server, &mut received);
        inbox.extend(to_client);
        step_netser_client(client, t, sim, &mut inbox, &mut sink);
        t += STEP;
    }
    t
}

#[test]
fn renetcode_tokens_work_on_netser_and_netser_tokens_on_renetcode() {
    over_ipv4_and_ipv6(renetcode_tokens_work_on_netser_and_netser_tokens_on_renetcode_scenario);
}

fn renetcode_tokens_work_on_netser_and_netser_tokens_on_renetcode_scenario() {
    // A renetcode-issued token, IPv6 and IPv4 servers, through our client and server.
    let v6: SocketAddr = "[2001:db8::1]:40000".parse().unwrap();
    let token = from_renet(&renet_token(31, vec![v6, server_addr()]));
    assert_eq!(token.server_addresses(), &[v6, server_addr()]);
    let mut server = netser_server();
    let mut client = NetcodeClient::new(0.0, token);
    let mut sim = lossy(5);
    // The IPv6 server does not exist: the client times out there and moves on.
    connect_netser_pair(&mut client, &mut server, &mut sim);
    assert_eq!(client.server_addr(), server_addr());
    assert!(matches!(
        server.poll_event(),
        Some(NetcodeEvent::ClientConnected { client_id: 31, .. })
    ));
    assert_eq!(server.user_data(31), Some(&user_data_of(31)));

    // A netser-issued token read by renetcode, bytes identical both ways.
    let ours = netser_token(32, vec![v6, server_addr()]);
    let theirs = to_renet(&ours);
    assert_eq!(theirs.client_id, 32);
    assert_eq!(
        theirs.server_addresses[..2],
        [Some(v6), Some(server_addr())]
    );
    assert_eq!(from_renet(&theirs), ours);
    // ... and accepted by a renetcode server (its private part decrypts there).
    let mut server = RenetServer::new();
    let mut client = RenetClient::new(to_renet(&netser_token(33, vec![server_addr()])));
    let mut sim = lossy(6);
    let mut t = 0.0;
    while !client.inner.is_connected() {
        assert!(t < 10.0, "no connection");
        let (to_server, to_client) = deliver(&mut sim, t);
        to_server
            .into_iter()
            .for_each(|(from, mut b)| server.receive(t, from, &mut b, &mut sim));
        server.step(t, &mut sim);
        to_client
            .into_iter()
            .for_each(|(_, mut b)| client.receive(&mut b));
        client.step(t, &mut sim);
        t += STEP;
    }
    assert_eq!(server.connected, vec![(33, user_data_of(33))]);
}

#[test]
fn full_renetcode_server_denies_netser_client() {
    over_ipv4_and_ipv6(full_renetcode_server_denies_netser_client_scenario);
}

fn full_renetcode_server_denies_netser_client_scenario() {
    // A renetcode server with one slot taken denies the next client; ours ends in
    // ConnectionDenied (its token has one server).
    let mut server = RenetServer::new();
    server.inner.set_max_clients(1);
    let mut sim = Simulator::new(SimulatorConfig {
        latency: 0.02,
        seed: 7,
        ..SimulatorConfig::default()
    });
    let mut first = NetcodeClient::new(0.0, from_renet(&renet_token(41, vec![server_addr()])));
    let mut second = NetcodeClient::new(0.0, from_renet(&renet_token(42, vec![server_addr()])));
    let second_addr: SocketAddr = "198.51.100.8:50000".parse().unwrap();
    let (mut inbox1, mut inbox2, mut sink) = (Vec::new(), Vec::new(), Vec::new());
    let mut t = 0.0;
    while t < 3.0 {
        while let Some(d) = sim.receive(t) {
            if d.to == server_addr() {
                let mut bytes = d.data;
                server.receive(t, d.from, &mut bytes, &mut sim);
            } else if d.to == client_addr() {
                inbox1.push((d.from, d.data));
            } else {
                inbox2.push((d.from, d.data));
            }
        }
        server.step(t, &mut sim);
        step_netser_client(&mut first, t, &mut sim, &mut inbox1, &mut sink);
        if t > 1.0 {
            for (from, mut bytes) in inbox2.drain(..) {
                second.handle_datagram(t, from, &mut bytes);
            }
            second.handle_timeout(t);
            while let Some(transmit) = second.poll_transmit() {
                sim.send(t, second_addr, transmit.to, transmit.data);
            }
        }
        t += STEP;
    }
    assert!(first.is_connected());
    assert_eq!(
        second.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionDenied)
    );
}

/// In renetcode's layout the payload limit is renetcode's, 1300 bytes, both ways; 1301 is
/// an error at send.
#[test]
fn renetcode_layout_carries_1300_byte_payloads() {
    over_ipv4_and_ipv6(renetcode_layout_carries_1300_byte_payloads_scenario);
}

fn renetcode_layout_carries_1300_byte_payloads_scenario() {
    let mut sim = Simulator::new(SimulatorConfig {
        latency: 0.02,
        seed: 8,
        ..SimulatorConfig::default()
    });
    let mut server = RenetServer::new();
    let mut client = NetcodeClient::new(0.0, from_renet(&renet_token(51, vec![server_addr()])));
    assert_eq!(
        client.send_payload(&[1; 10]),
        Err(PayloadError::NotConnected)
    );
    let (mut inbox, mut received) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    let mut sent = false;
    while t < 3.0 {
        let (to_server, to_client) = deliver(&mut sim, t);
        for (from, mut bytes) in to_server {
            server.receive(t, from, &mut bytes, &mut sim);
        }
        server.step(t, &mut sim);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut received);
        if client.is_connected() && !sent {
            assert_eq!(
                client.send_payload(&[7; 1301]),
                Err(PayloadError::PayloadTooLarge {
                    len: 1301,
                    max: 1300,
                    layout: Layout::Renetcode
                })
            );
            client.send_payload(&[7; 1300]).unwrap();
            while let Some(transmit) = client.poll_transmit() {
                sim.send(t, client_addr(), transmit.to, transmit.data);
            }
            let (to, bytes) = server
                .inner
                .generate_payload_packet(51, &[8; 1300])
                .unwrap();
            sim.send(t, server_addr(), to, bytes);
            sent = true;
        }
        t += STEP;
    }
    assert_eq!(server.received, vec![(51, vec![7; 1300])]);
    assert_eq!(received, vec![vec![8; 1300]]);
}

/// A renetcode token read in the standard's layout is refused with an error that names
/// the layouts, and the reverse.
#[test]
fn token_in_the_other_layout_is_a_layout_mismatch() {
    let mut renet_bytes = Vec::new();
    renet_token(61, vec![server_addr()])
        .write(&mut renet_bytes)
        .unwrap();
    let error = ConnectToken::from_bytes(&renet_bytes).unwrap_err();
    assert_eq!(
        error,
        netser_transport::netcode::TokenError::LayoutMismatch {
            expected: Layout::Standard,
            found: Layout::Renetcode
        }
    );
    assert!(error.to_string().contains("Layout::Renetcode"), "{error}");
    let standard = ConnectToken::generate(
        &TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64),
        &KEY,
    )
    .unwrap()
    .to_bytes();
    assert!(renetcode::ConnectToken::read(&mut standard.as_slice()).is_err());
    assert!(matches!(
        ConnectToken::from_bytes_with(&standard, Layout::Renetcode),
        Err(netser_transport::netcode::TokenError::LayoutMismatch {
            expected: Layout::Renetcode,
            found: Layout::Standard
        })
    ));
}

/// A standard-layout netser client facing a renetcode server stops with
/// `DisconnectReason::LayoutMismatch` at the server's first packet (renetcode writes
/// sequence 0 in no bytes, which the standard forbids), instead of timing out.
#[test]
fn standard_client_facing_renetcode_server_stops_with_layout_mismatch() {
    let mut sim = lossy(9);
    let mut server = RenetServer::new();
    // An IPv4 standard token: its private part reads the same in both layouts, so the
    // renetcode server accepts it and answers.
    let params = TokenParams {
        client_id: 62,
        timeout_seconds: 5,
        ..TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64)
    };
    let token = ConnectToken::generate(&params, &KEY).unwrap();
    let mut client = NetcodeClient::new(0.0, token);
    let (mut inbox, mut sink) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    while client.is_connecting() {
        assert!(t < 4.0, "still {:?}", client.state());
        let (to_server, to_client) = deliver(&mut sim, t);
        for (from, mut bytes) in to_server {
            server.receive(t, from, &mut bytes, &mut sim);
        }
        server.step(t, &mut sim);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut sink);
        t += STEP;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::LayoutMismatch)
    );
    assert_eq!(client.refusals().get(Refusal::LayoutMismatch), 1);
    assert!(DisconnectReason::LayoutMismatch
        .to_string()
        .contains("Layout::Renetcode"));
}

/// A standard-layout netser server facing a renetcode client over IPv4: the handshake
/// reads the same in both layouts (renetcode's client never sends sequence 0 encrypted), so
/// it connects; the first payload over the standard's 1200 bytes authenticates, which only
/// renetcode's layout allows, so the server disconnects the client with
/// `DisconnectReason::LayoutMismatch` rather than drop its payloads one by one.
#[test]
fn standard_server_disconnects_renetcode_client_at_a_layout_mismatch() {
    let mut sim = Simulator::new(SimulatorConfig {
        latency: 0.02,
        seed: 10,
        ..SimulatorConfig::default()
    });
    let mut server = netser_server_in(Layout::Standard);
    let mut client = RenetClient::new(renet_token(63, vec![server_addr()]));
    let (mut received, mut t) = (Vec::new(), 0.0);
    let mut sent = false;
    while t < 3.0 {
        let (mut to_server, to_client) = deliver(&mut sim, t);
        for (_, mut bytes) in to_client {
            client.receive(&mut bytes);
        }
        client.step(t, &mut sim);
        step_netser_server(&mut server, t, &mut sim, &mut to_server, &mut received);
        if client.inner.is_connected() && !sent {
            client.send(t, &mut sim, &[5; 1000]);
            client.send(t + 0.1, &mut sim, &[6; 1250]);
            sent = true;
        }
        t += STEP;
    }
    assert!(sent, "the renetcode client never connected");
    assert_eq!(received, vec![(63, vec![5; 1000])]);
    assert!(matches!(
        server.poll_event(),
        Some(NetcodeEvent::ClientConnected { client_id: 63, .. })
    ));
    assert_eq!(
        server.poll_event(),
        Some(NetcodeEvent::ClientDisconnected {
            client_id: 63,
            addr: client_addr(),
            slot: 0,
            reason: DisconnectReason::LayoutMismatch
        })
    );
    assert_eq!(server.refusals().get(Refusal::LayoutMismatch), 1);
    assert_eq!(
        client.inner.disconnect_reason(),
        Some(renetcode::DisconnectReason::DisconnectedByServer)
    );
}

/// A renetcode backend's token with the server's IPv6 address, presented to a
/// standard-layout server: the address matches only when read in renetcode's layout, so the
/// server counts a layout mismatch and denies; the client ends denied at once.
#[test]
fn ipv6_token_in_the_other_layout_is_denied_as_a_layout_mismatch() {
    IPV6.with(|v6| v6.set(true));
    let mut server = netser_server_in(Layout::Standard);
    let mut client = NetcodeClient::new(0.0, from_renet(&renet_token(64, vec![server_addr()])));
    let mut sim = lossy(11);
    let (mut inbox, mut sink, mut received) = (Vec::new(), Vec::new(), Vec::new());
    let mut t = 0.0;
    while client.is_connecting() {
        assert!(t < 4.0, "still connecting");
        let (mut to_server, to_client) = deliver(&mut sim, t);
        step_netser_server(&mut server, t, &mut sim, &mut to_server, &mut received);
        inbox.extend(to_client);
        step_netser_client(&mut client, t, &mut sim, &mut inbox, &mut sink);
        t += STEP;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionDenied)
    );
    assert!(server.refusals().get(Refusal::LayoutMismatch) >= 1);
    assert_eq!(server.refusals().get(Refusal::NotInHostList), 0);
}
