//! Every knob of the netcode server is reachable from `UdpServerConfig` and reaches the
//! server, and every setting out of its bounds is refused at start with a typed error.

mod netcode_support;

use std::net::UdpSocket;
use std::time::Duration;

use netcode_support::{protocol, token};
use netser_transport::netcode::{
    generate_key, Key, Layout, Refusal, ServerConfigError, SetupError, MAX_CLIENTS,
    MAX_PACKET_BYTES, MAX_PENDING,
};
use netser_transport::udp::{
    StartError, UdpClient, UdpClientConfig, UdpConfig, UdpConfigError, UdpDriver, UdpServer,
    UdpServerConfig, MAX_LINGER, MAX_UDP_PAYLOAD,
};

type Server = UdpServer<u32, u32>;
type Client = UdpClient<u32, u32>;

fn config(key: Key) -> UdpServerConfig {
    UdpServerConfig::new(key)
}

/// Two clients send their connection requests in the same frame; returns the server
/// after it read both.
fn two_requests(config: UdpServerConfig, key: &Key) -> Server {
    let mut server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    let mut clients: Vec<Client> = (1..=2)
        .map(|id| {
            let token = token(key, server.local_addr(), id);
            UdpClient::connect(token, &protocol(), UdpClientConfig::default()).unwrap()
        })
        .collect();
    for client in &mut clients {
        client.transmit();
    }
    std::thread::sleep(Duration::from_millis(50));
    server.receive();
    server
}

#[test]
fn defaults_are_the_netcode_defaults() {
    let config = config([1; 32]);
    assert_eq!(config.max_clients, 64);
    assert_eq!(config.max_pending, 256);
    assert_eq!(config.max_outbox_bytes, 4 << 20);
    assert_eq!(config.udp.linger, Duration::from_secs(1));
    assert_eq!(config.udp.validate(), Ok(()));
    assert_eq!(config.layout, Layout::Standard);
}

#[test]
fn the_layout_reaches_the_netcode_server() {
    for layout in [Layout::Standard, Layout::Renetcode] {
        let server = UdpServer::<u8, u8>::bind(
            "127.0.0.1:0",
            &protocol(),
            UdpServerConfig {
                layout,
                ..config([2; 32])
            },
        )
        .unwrap();
        assert_eq!(server.netcode().layout(), layout);
    }
}

#[test]
fn max_pending_reaches_the_netcode_server() {
    let key = generate_key().unwrap();
    let server = two_requests(
        UdpServerConfig {
            max_pending: 1,
            ..config(key)
        },
        &key,
    );
    assert_eq!(server.netcode().pending_clients(), 1);
    assert_eq!(server.netcode().refusals().get(Refusal::PendingFull), 1);

    // The default takes both.
    let server = two_requests(config(key), &key);
    assert_eq!(server.netcode().pending_clients(), 2);
    assert_eq!(server.netcode().refusals().get(Refusal::PendingFull), 0);
}

#[test]
fn max_outbox_bytes_reaches_the_netcode_server() {
    let key = generate_key().unwrap();
    // Room for one challenge packet: the second client's is not queued, and counted.
    let server = two_requests(
        UdpServerConfig {
            max_outbox_bytes: MAX_PACKET_BYTES,
            ..config(key)
        },
        &key,
    );
    assert_eq!(server.netcode().pending_clients(), 2);
    assert_eq!(server.netcode().queued_datagrams(), 1);
    assert_eq!(server.netcode().dropped_datagrams(), 1);

    let server = two_requests(config(key), &key);
    assert_eq!(server.netcode().queued_datagrams(), 2);
    assert_eq!(server.netcode().dropped_datagrams(), 0);
}

fn refused(config: UdpServerConfig) -> StartError {
    match Server::bind("127.0.0.1:0", &protocol(), config) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn netcode_settings_out_of_bounds_are_refused() {
    let key = [2; 32];
    let cases = [
        (
            UdpServerConfig {
                max_clients: 0,
                ..config(key)
            },
            ServerConfigError::MaxClients(0),
        ),
        (
            UdpServerConfig {
                max_clients: MAX_CLIENTS + 1,
                ..config(key)
            },
            ServerConfigError::MaxClients(MAX_CLIENTS + 1),
        ),
        (
            UdpServerConfig {
                max_pending: 0,
                ..config(key)
            },
            ServerConfigError::MaxPending,
        ),
        (
            UdpServerConfig {
                max_pending: MAX_PENDING + 1,
                ..config(key)
            },
            ServerConfigError::MaxPending,
        ),
        (
            UdpServerConfig {
                max_outbox_bytes: MAX_PACKET_BYTES - 1,
                ..config(key)
            },
            ServerConfigError::MaxOutboxBytes(MAX_PACKET_BYTES - 1),
        ),
    ];
    for (config, want) in cases {
        match refused(config) {
            StartError::Setup(SetupError::Netcode(got)) => assert_eq!(got, want),
            other => panic!("{other:?} for {want:?}"),
        }
    }
    // The bounds themselves are accepted.
    for config in [
        UdpServerConfig {
            max_clients: MAX_CLIENTS,
            max_pending: MAX_PENDING,
            max_outbox_bytes: MAX_PACKET_BYTES,
            ..config(key)
        },
        UdpServerConfig {
            max_clients: 1,
            max_pending: 1,
            ..config(key)
        },
    ] {
        Server::bind("127.0.0.1:0", &protocol(), config).unwrap();
    }
}

#[test]
fn socket_settings_out_of_bounds_are_refused() {
    let key = [3; 32];
    let udp = |udp: UdpConfig| UdpServerConfig { udp, ..config(key) };
    let cases = [
        (
            UdpConfig {
                max_datagram_size: MAX_PACKET_BYTES - 1,
                ..UdpConfig::default()
            },
            UdpConfigError::MaxDatagramSize(MAX_PACKET_BYTES - 1),
        ),
        (
            UdpConfig {
                max_datagram_size: MAX_UDP_PAYLOAD + 1,
                ..UdpConfig::default()
            },
            UdpConfigError::MaxDatagramSize(MAX_UDP_PAYLOAD + 1),
        ),
        (
            UdpConfig {
                max_receive_per_poll: 0,
                ..UdpConfig::default()
            },
            UdpConfigError::MaxReceivePerPoll,
        ),
        (
            UdpConfig {
                linger: MAX_LINGER + Duration::from_nanos(1),
                ..UdpConfig::default()
            },
            UdpConfigError::Linger(MAX_LINGER + Duration::from_nanos(1)),
        ),
    ];
    for (config, want) in cases {
        assert_eq!(config.validate(), Err(want));
        match refused(udp(config.clone())) {
            StartError::Config(got) => assert_eq!(got, want),
            other => panic!("{other:?} for {want:?}"),
        }
        // The client refuses the same settings.
        let token = token(&key, "127.0.0.1:40000".parse().unwrap(), 1);
        let client = Client::connect(token, &protocol(), UdpClientConfig { udp: config });
        assert!(matches!(client, Err(StartError::Config(got)) if got == want));
    }
    // A server on a driver of the caller's is checked against the driver's settings.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let driver = UdpDriver::from_socket(
        socket,
        UdpConfig {
            max_receive_per_poll: 0,
            ..UdpConfig::default()
        },
    )
    .unwrap();
    assert!(matches!(
        Server::with_driver(driver, &protocol(), config(key)),
        Err(StartError::Config(UdpConfigError::MaxReceivePerPoll))
    ));
}

#[test]
fn config_errors_say_the_bound() {
    assert_eq!(
        UdpConfigError::MaxDatagramSize(100).to_string(),
        format!("max_datagram_size is 100; it must be {MAX_PACKET_BYTES} to {MAX_UDP_PAYLOAD}")
    );
    assert_eq!(
        UdpConfigError::MaxReceivePerPoll.to_string(),
        "max_receive_per_poll must be at least 1"
    );
    assert!(UdpConfigError::Linger(Duration::from_secs(11))
        .to_string()
        .contains("at most 10s"));
}
