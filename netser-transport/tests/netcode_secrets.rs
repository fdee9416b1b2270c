//! No netcode type that holds a key prints it in `Debug`: the server (its private key, its
//! challenge key, each client's keys), the client, connect tokens, the private token, the
//! configurations and the message-level server and client. Each is formatted, plain and
//! pretty, at every stage of a connection, and searched for the key bytes.

mod netcode_support;

use std::net::SocketAddr;

use netcode_support::protocol;
use netser_transport::netcode::{
    Client, ConnectToken, Key, NetcodeClient, NetcodeServer, PrivateConnectToken, Server,
    ServerConfig, TokenParams,
};

const T0: f64 = 1_700_000_000.0;
const PRIVATE_KEY: Key = [
    0xa7, 0x13, 0xc9, 0x58, 0x3e, 0xf1, 0x62, 0x0d, 0x94, 0xbb, 0x27, 0x7c, 0xe0, 0x45, 0x19, 0x8a,
    0xd3, 0x6f, 0x31, 0xac, 0x02, 0x5e, 0xf7, 0x88, 0x4b, 0x16, 0xcd, 0x73, 0x9f, 0x21, 0xe4, 0x50,
];

fn server_addr() -> SocketAddr {
    "192.0.2.1:40000".parse().unwrap()
}
fn client_addr() -> SocketAddr {
    "198.51.100.1:50000".parse().unwrap()
}

/// The ways a key's bytes could appear in a `Debug` string: as decimal or hex numbers in a
/// list (any spacing), or as a hex string. Eight bytes of a key are enough to tell it from
/// chance.
fn leaks(text: &str, key: &Key) -> bool {
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = &key[..8];
    let joined = |f: &dyn Fn(u8) -> String| bytes.iter().map(|&b| f(b)).collect::<Vec<_>>();
    let decimal = joined(&|b| b.to_string()).join(",");
    let hex_list = joined(&|b| format!("{b:#x}")).join(",");
    let bare_hex_list = joined(&|b| format!("{b:x}")).join(",");
    let hex_string = joined(&|b| format!("{b:02x}")).concat();
    let lower = squeezed.to_lowercase();
    squeezed.contains(&decimal)
        || lower.contains(&hex_list)
        || lower.contains(&bare_hex_list)
        || lower.contains(&hex_string)
}

/// Checks both formats of `value` against every key, and that no field named like a key
/// shows a byte array.
fn assert_hidden(what: &str, value: &dyn std::fmt::Debug, keys: &[Key]) {
    for text in [format!("{value:?}"), format!("{value:#?}")] {
        for key in keys {
            assert!(!leaks(&text, key), "{what} prints a key: {text}");
        }
        let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        assert!(
            !squeezed.contains("key:["),
            "{what} prints a key field: {text}"
        );
    }
}

#[test]
fn the_detector_finds_a_printed_key() {
    // The search itself works: a plain array of the key is found in both formats.
    assert!(leaks(&format!("{PRIVATE_KEY:?}"), &PRIVATE_KEY));
    assert!(leaks(&format!("{PRIVATE_KEY:#?}"), &PRIVATE_KEY));
    assert!(leaks(&format!("{PRIVATE_KEY:x?}"), &PRIVATE_KEY));
    assert!(!leaks(&format!("{:?}", [0u8; 32]), &PRIVATE_KEY));
}

#[test]
fn no_netcode_type_prints_a_key() {
    let id = protocol::<u8, u8>().id();
    let config = ServerConfig::new(id, PRIVATE_KEY, vec![server_addr()]);
    let params = TokenParams {
        client_id: 3,
        ..TokenParams::new(id, vec![server_addr()], T0 as u64)
    };
    let token = ConnectToken::generate(&params, &PRIVATE_KEY).unwrap();
    let keys = [
        PRIVATE_KEY,
        *token.client_to_server_key(),
        *token.server_to_client_key(),
    ];
    let private = PrivateConnectToken::decrypt(
        token.private_data(),
        id,
        token.expire_timestamp(),
        token.nonce(),
        &PRIVATE_KEY,
    )
    .unwrap();
    assert_hidden("ServerConfig", &config, &keys);
    assert_hidden("TokenParams", &params, &keys);
    assert_hidden("ConnectToken", &token, &keys);
    assert_hidden("PrivateConnectToken", &private, &keys);

    // The protocol core at every stage: new, handshake in progress, connected, closed.
    let mut server = NetcodeServer::new(0.0, std::time::UNIX_EPOCH, config.clone()).unwrap();
    let mut client = NetcodeClient::new(0.0, token.clone());
    assert_hidden("NetcodeServer (new)", &server, &keys);
    assert_hidden("NetcodeClient (new)", &client, &keys);
    let mut t = 0.0;
    while !client.is_connected() {
        client.handle_timeout(t);
        let mut out = Vec::new();
        while let Some(transmit) = client.poll_transmit() {
            out.push(transmit.data.to_vec());
        }
        for mut b in out {
            server.handle_datagram(T0 + t, client_addr(), &mut b);
        }
        assert_hidden("NetcodeServer (handshake)", &server, &keys);
        server.handle_timeout(T0 + t);
        let mut back = Vec::new();
        while let Some(transmit) = server.poll_transmit() {
            back.push(transmit.data.to_vec());
        }
        for mut b in back {
            client.handle_datagram(t, server_addr(), &mut b);
        }
        assert_hidden("NetcodeClient (handshake)", &client, &keys);
        t += 0.1;
        assert!(t < 5.0);
    }
    assert_eq!(server.connected_clients(), 1);
    assert_hidden("NetcodeServer (connected)", &server, &keys);
    assert_hidden("NetcodeClient (connected)", &client, &keys);
    server.disconnect(3);
    client.disconnect();
    assert_hidden("NetcodeServer (closed)", &server, &keys);
    assert_hidden("NetcodeClient (closed)", &client, &keys);

    // The message-level server and client hold the same.
    let game_server: Server<u8, u8> =
        Server::new(0.0, std::time::UNIX_EPOCH, config, &protocol()).unwrap();
    let game_client: Client<u8, u8> = Client::new(T0, token, &protocol()).unwrap();
    assert_hidden("Server", &game_server, &keys);
    assert_hidden("Client", &game_client, &keys);
}

/// The UDP server and client hold the netcode ones: formatted once connected over
/// loopback. (`UdpServerConfig` holds the private key as a public field and is not covered
/// here.)
#[test]
fn the_udp_server_and_client_print_no_key() {
    use netser_transport::udp::{UdpClient, UdpClientConfig, UdpServer, UdpServerConfig};
    let protocol = protocol::<u8, u8>();
    let mut server =
        UdpServer::bind("127.0.0.1:0", &protocol, UdpServerConfig::new(PRIVATE_KEY)).unwrap();
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let params = TokenParams {
        client_id: 4,
        ..TokenParams::new(protocol.id(), vec![server.local_addr()], unix_now)
    };
    let token = ConnectToken::generate(&params, &PRIVATE_KEY).unwrap();
    let keys = [
        PRIVATE_KEY,
        *token.client_to_server_key(),
        *token.server_to_client_key(),
    ];
    let config = UdpClientConfig::default();
    let mut client = UdpClient::connect(token, &protocol, config).unwrap();
    let start = std::time::Instant::now();
    while !(client.is_connected() && server.connected_clients() == 1) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "no connection"
        );
        client.receive();
        client.transmit();
        server.receive();
        server.transmit();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_hidden("UdpServer", &server, &keys);
    assert_hidden("UdpClient", &client, &keys);
}
