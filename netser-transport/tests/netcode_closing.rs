//! Nothing from a leaving client is lost: messages that arrive in the same server frame
//! as the client's disconnect are read before the disconnect, and a client that connects
//! and leaves in one frame is reported connected, then disconnected.

mod netcode_support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netcode_support::protocol;
use netser_transport::netcode::packet::Packet;
use netser_transport::netcode::{
    generate_key, Client, ClientState, ConnectToken, DisconnectReason, Key, Server, ServerConfig,
    TokenParams, USER_DATA_BYTES,
};
use netser_transport::simulator::{SimulatorConfig, Star};
use netser_transport::udp::{UdpServer, UdpServerConfig, UdpServerEvent};

const CLIENT_ID: u64 = 9;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn token(key: &Key, server: SocketAddr) -> ConnectToken {
    let params = TokenParams {
        client_id: CLIENT_ID,
        ..TokenParams::new(protocol::<u32, u32>().id(), vec![server], unix_now() as u64)
    };
    ConnectToken::generate(&params, key).unwrap()
}

/// A UDP server, and a sans-IO client on its own socket: the test decides which of the
/// client's datagrams go out together.
struct Harness {
    server: UdpServer<u32, u32>,
    client: Client<u32, u32>,
    token: ConnectToken,
    socket: UdpSocket,
    start: Instant,
}

impl Harness {
    fn new() -> Self {
        let key = generate_key().unwrap();
        let config = UdpServerConfig::new(key);
        let server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
        let token = token(&key, server.local_addr());
        let client = Client::new(0.0, token.clone(), &protocol()).unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        Self {
            server,
            client,
            token,
            socket,
            start: Instant::now(),
        }
    }

    fn t(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The client's datagrams since the last call, not sent.
    fn client_datagrams(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(transmit) = self.client.poll_transmit() {
            out.push(transmit.data.to_vec());
        }
        out
    }

    /// Sends `datagrams` together, then runs one server frame and returns its events.
    fn server_frame(&mut self, datagrams: &[Vec<u8>]) -> Vec<UdpServerEvent<u32>> {
        for datagram in datagrams {
            self.socket
                .send_to(datagram, self.server.local_addr())
                .unwrap();
        }
        // Loopback delivers at once; a margin so that all are waiting on the socket.
        std::thread::sleep(Duration::from_millis(20));
        self.server.receive();
        let events = std::iter::from_fn(|| self.server.poll_event()).collect();
        self.server.transmit();
        events
    }

    /// Hands the server's datagrams to the client.
    fn client_receives(&mut self) {
        std::thread::sleep(Duration::from_millis(5));
        let mut buf = [0u8; 2048];
        let from = self.server.local_addr();
        while let Ok((len, _)) = self.socket.recv_from(&mut buf) {
            let t = self.t();
            self.client.handle_datagram(t, from, &buf[..len]);
        }
    }

    /// Runs both sides until the client is in `state`; returns the server's events.
    fn until(&mut self, state: ClientState) -> Vec<UdpServerEvent<u32>> {
        let mut events = Vec::new();
        while self.client.state() != state {
            assert!(
                self.start.elapsed() < Duration::from_secs(5),
                "never {state:?}"
            );
            let t = self.t();
            self.client.handle_timeout(t);
            let datagrams = self.client_datagrams();
            events.extend(self.server_frame(&datagrams));
            self.client_receives();
        }
        events
    }
}

#[test]
fn messages_sent_with_a_disconnect_are_delivered_before_it() {
    let mut h = Harness::new();
    h.until(ClientState::Connected);
    // The server's view catches up (it saw the response already; flush its events).
    let mut events = h.server_frame(&[]);
    events.retain(|e| !matches!(e, UdpServerEvent::Message { .. }));
    assert!(events
        .iter()
        .all(|e| !matches!(e, UdpServerEvent::ClientDisconnected { .. })));

    for n in 0..5 {
        h.client.send_message(0, &n).unwrap();
    }
    let t = h.t();
    h.client.handle_timeout(t);
    let mut batch = h.client_datagrams();
    h.client.disconnect();
    batch.extend(h.client_datagrams());

    let events = h.server_frame(&batch);
    let addr = h.socket.local_addr().unwrap();
    let expected: Vec<UdpServerEvent<u32>> = (0..5)
        .map(|n| UdpServerEvent::Message {
            client_id: CLIENT_ID,
            channel: 0.into(),
            message: n,
        })
        .chain([UdpServerEvent::ClientDisconnected {
            client_id: CLIENT_ID,
            addr,
            reason: DisconnectReason::DisconnectedByClient,
        }])
        .collect();
    assert_eq!(events, expected);
}

#[test]
fn a_client_that_connects_and_leaves_in_one_batch_is_connected_first() {
    let mut h = Harness::new();
    let before = h.until(ClientState::SendingConnectionResponse);
    assert!(before.is_empty(), "{before:?}");

    // The response, and a disconnect under the session's key, in one batch.
    let t = h.t();
    h.client.handle_timeout(t);
    let mut batch = h.client_datagrams();
    assert!(!batch.is_empty());
    let mut disconnect = Vec::new();
    Packet::Disconnect.encode(
        1_000,
        protocol::<u32, u32>().id(),
        h.token.client_to_server_key(),
        &mut disconnect,
    );
    batch.push(disconnect);

    let events = h.server_frame(&batch);
    let client_addr = h.socket.local_addr().unwrap();
    assert_eq!(
        events,
        [
            UdpServerEvent::ClientConnected {
                client_id: CLIENT_ID,
                addr: client_addr,
                user_data: Box::new([0; USER_DATA_BYTES]),
            },
            UdpServerEvent::ClientDisconnected {
                client_id: CLIENT_ID,
                addr: client_addr,
                reason: DisconnectReason::DisconnectedByClient,
            },
        ]
    );
}

/// A sans-IO server and one client connecting to it over a perfect link.
type Sessions = Star<Server<u32, u32>, Client<u32, u32>>;

/// The star, and the client's token.
fn connecting(key: &Key) -> (Sessions, ConnectToken) {
    let config = ServerConfig::new(
        protocol::<u32, u32>().id(),
        *key,
        vec![Sessions::SERVER_ADDR],
    );
    let server = Server::new(0.0, SystemTime::now(), config, &protocol()).unwrap();
    let mut star = Sessions::new(server, SimulatorConfig::default());
    let token = token(key, Sessions::SERVER_ADDR);
    star.add_client(Client::new(0.0, token.clone(), &protocol()).unwrap());
    (star, token)
}

/// The sans-IO server: a closed client's messages are readable until the next update,
/// then the ones left are counted.
#[test]
fn a_closed_clients_unread_messages_are_counted_at_the_next_update() {
    let key = generate_key().unwrap();
    let (mut star, _) = connecting(&key);
    assert!(
        star.run_until(5.0, |star| star.clients[0].is_connected()),
        "never connected"
    );
    let client = &mut star.clients[0];
    for n in 0..3 {
        client.send_message(0, &n).unwrap();
    }
    client.handle_timeout(star.now);
    client.disconnect();
    // The messages and the disconnects reach the server in one round, after its timers.
    star.round();
    let (server, t) = (&mut star.server, star.now);
    assert!(!server.is_connected(CLIENT_ID));
    assert_eq!(server.receive_message(CLIENT_ID, 0), Some(0));
    assert_eq!(server.dropped_closing_messages(), 0);
    server.handle_timeout(t + 0.02);
    // The two left unread are freed with the connection, and counted.
    assert_eq!(server.receive_message(CLIENT_ID, 0), None);
    assert_eq!(server.dropped_closing_messages(), 2);
}

/// The sans-IO server: a client whose response and disconnect arrive in one batch is
/// reported connected (with its address and user data), then disconnected.
#[test]
fn the_sans_io_server_reports_a_one_batch_client_connected_then_disconnected() {
    use netser_transport::netcode::ServerEvent as GameEvent;
    let key = generate_key().unwrap();
    let (mut star, token) = connecting(&key);
    let challenged =
        |star: &mut Sessions| star.clients[0].state() == ClientState::SendingConnectionResponse;
    assert!(star.run_until(5.0, challenged), "never challenged");
    let client_addr = Sessions::client_addr(0);
    let (server, client, t) = (&mut star.server, &mut star.clients[0], star.now);
    assert_eq!(server.poll_event(), None);
    // The response, then a disconnect under the session's key, handled back to back.
    client.handle_timeout(t + 0.1);
    let mut batch = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        batch.push(transmit.data.to_vec());
    }
    let mut disconnect = Vec::new();
    Packet::Disconnect.encode(
        1_000,
        protocol::<u32, u32>().id(),
        token.client_to_server_key(),
        &mut disconnect,
    );
    batch.push(disconnect);
    for datagram in &batch {
        server.handle_datagram(t + 0.1, client_addr, datagram);
    }
    assert_eq!(
        std::iter::from_fn(|| server.poll_event()).collect::<Vec<_>>(),
        [
            GameEvent::ClientConnected {
                client_id: CLIENT_ID,
                addr: client_addr,
                user_data: Box::new([0; USER_DATA_BYTES]),
            },
            GameEvent::ClientDisconnected {
                client_id: CLIENT_ID,
                addr: client_addr,
                reason: DisconnectReason::DisconnectedByClient,
            },
        ]
    );
}
