//! A disconnect leaves even when a send simulator holds it: over real loopback sockets,
//! a client that disconnects and is dropped, a client dropped while connected, a client
//! that shuts down with reliable messages still unacked, and a server that shuts down,
//! each with a latency simulator on its socket. The peer must see the disconnect with
//! its reason, never a timeout.

mod netcode_support;

use std::time::{Duration, Instant};

use netcode_support::{protocol, token_params, udp_connect};
use netser_transport::netcode::{generate_key, ConnectToken, DisconnectReason, TokenParams};
use netser_transport::simulator::SimulatorConfig;
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpClientEvent, UdpConfig, UdpServer, UdpServerConfig,
    UdpServerEvent,
};

type Server = UdpServer<u32, u32>;
type Client = UdpClient<u32, u32>;

/// The token's timeout: a lost disconnect shows up as a timeout after this long.
const TIMEOUT_SECONDS: i32 = 2;

/// 50 ms one way: the disconnect packets are still in the simulator when the sender
/// returns from `disconnect`.
fn slow_link() -> UdpConfig {
    UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency: 0.05,
            seed: 3,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    }
}

fn connected_pair(server_udp: UdpConfig, client_udp: UdpConfig) -> (Server, Client) {
    let key = generate_key().unwrap();
    let config = UdpServerConfig {
        udp: server_udp,
        ..UdpServerConfig::new(key)
    };
    let mut server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    let config = UdpClientConfig { udp: client_udp };
    let params = TokenParams {
        timeout_seconds: TIMEOUT_SECONDS,
        ..token_params(&protocol::<u32, u32>(), server.local_addr(), 9)
    };
    let token = ConnectToken::generate(&params, &key).unwrap();
    let mut client: Client = UdpClient::connect(token, &protocol(), config).unwrap();
    udp_connect(&mut server, &mut client);
    (server, client)
}

/// Runs the server alone until a client leaves; returns the reason and the messages
/// received before it.
fn server_sees_leave(server: &mut Server) -> (DisconnectReason, Vec<u32>) {
    let mut messages = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(TIMEOUT_SECONDS as u64 + 3) {
        server.receive();
        while let Some(event) = server.poll_event() {
            match event {
                UdpServerEvent::ClientDisconnected { reason, .. } => return (reason, messages),
                UdpServerEvent::Message { message, .. } => messages.push(message),
                _ => {}
            }
        }
        server.transmit();
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the client never left, not even by timing out");
}

#[test]
fn a_client_that_disconnects_and_is_dropped_is_seen_leaving() {
    let (mut server, mut client) = connected_pair(UdpConfig::default(), slow_link());
    client.disconnect();
    drop(client);
    let (reason, _) = server_sees_leave(&mut server);
    assert_eq!(reason, DisconnectReason::DisconnectedByClient);
}

#[test]
fn a_client_dropped_while_connected_tells_the_server() {
    let (mut server, client) = connected_pair(UdpConfig::default(), slow_link());
    drop(client);
    let (reason, _) = server_sees_leave(&mut server);
    assert_eq!(reason, DisconnectReason::DisconnectedByClient);
}

#[test]
fn client_shutdown_delivers_its_reliable_messages_then_its_disconnect() {
    let (mut server, mut client) = connected_pair(UdpConfig::default(), slow_link());
    // The server answers (acks) in a thread of its own while the client shuts down.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let server_thread = std::thread::spawn(move || {
        let seen = server_sees_leave(&mut server);
        done_tx.send(()).unwrap();
        seen
    });
    for i in 0..20 {
        client.send_message(0, &i).unwrap();
    }
    assert!(client.shutdown(Duration::from_secs(3)), "not all acked");
    assert!(!client.is_connected());
    assert_eq!(
        client.disconnect_reason(),
        Some(DisconnectReason::DisconnectedByClient)
    );
    // Everything it promised has left its simulator and its send queue.
    assert_eq!(client.driver().held(), 0);
    drop(client);
    done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let (reason, messages) = server_thread.join().unwrap();
    assert_eq!(reason, DisconnectReason::DisconnectedByClient);
    assert_eq!(messages, (0..20).collect::<Vec<u32>>());
}

/// Runs the client alone until the server leaves; returns the reason.
fn client_sees_leave(client: &mut Client) -> DisconnectReason {
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(TIMEOUT_SECONDS as u64 + 3),
            "the server never left, not even by timing out"
        );
        client.receive();
        while let Some(event) = client.poll_event() {
            if let UdpClientEvent::Disconnected { reason } = event {
                return reason;
            }
        }
        client.transmit();
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_server_that_shuts_down_and_is_dropped_is_seen_leaving() {
    let (mut server, mut client) = connected_pair(slow_link(), UdpConfig::default());
    assert!(server.shutdown(Duration::from_secs(1)));
    assert_eq!(server.driver().held(), 0);
    drop(server);
    assert_eq!(
        client_sees_leave(&mut client),
        DisconnectReason::DisconnectedByServer
    );
}

#[test]
fn a_server_dropped_with_clients_tells_them() {
    let (server, mut client) = connected_pair(slow_link(), UdpConfig::default());
    drop(server);
    assert_eq!(
        client_sees_leave(&mut client),
        DisconnectReason::DisconnectedByServer
    );
}

#[test]
fn a_dropped_driver_sends_what_its_simulator_holds_within_its_linger() {
    use netser_transport::udp::UdpDriver;
    let mut receiver = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let mut sender = UdpDriver::bind("127.0.0.1:0", slow_link()).unwrap();
    for i in 0..5u8 {
        sender.send(receiver.local_addr(), &[i]).unwrap();
    }
    let from = sender.local_addr();
    let start = Instant::now();
    drop(sender);
    // Bounded by the latency, far below the default linger.
    assert!(start.elapsed() < Duration::from_secs(1));
    let mut got = Vec::new();
    while got.len() < 5 && start.elapsed() < Duration::from_secs(2) {
        receiver.receive(|addr, bytes| got.push((addr, bytes.to_vec())));
        std::thread::sleep(Duration::from_millis(1));
    }
    let want: Vec<_> = (0..5u8).map(|i| (from, vec![i])).collect();
    assert_eq!(got, want);

    // A zero linger drops what is held.
    let mut sender = UdpDriver::bind(
        "127.0.0.1:0",
        UdpConfig {
            linger: Duration::ZERO,
            ..slow_link()
        },
    )
    .unwrap();
    sender.send(receiver.local_addr(), b"late").unwrap();
    drop(sender);
    std::thread::sleep(Duration::from_millis(150));
    let mut late = 0;
    receiver.receive(|_, _| late += 1);
    assert_eq!(late, 0);
}
