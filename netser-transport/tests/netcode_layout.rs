//! The payload limit of each layout is an error at send, and a netser side set to one
//! layout facing a netser side set to the other closes with a layout error instead of
//! dropping payloads one by one.

use std::net::SocketAddr;

use netser_transport::netcode::{
    ClientState, ConnectToken, DisconnectReason, Layout, NetcodeClient, NetcodeEvent,
    NetcodeServer, PayloadError, Refusal, ServerConfig, TokenParams, MAX_PAYLOAD_BYTES,
};

const T0: f64 = 1_700_000_000.0;
const KEY: [u8; 32] = [0x42; 32];
const PROTOCOL_ID: u64 = 0x5151;

fn server_addr() -> SocketAddr {
    "192.0.2.1:40000".parse().unwrap()
}
fn client_addr() -> SocketAddr {
    "198.51.100.1:50000".parse().unwrap()
}

fn pair(server_layout: Layout, token_layout: Layout) -> (NetcodeServer, NetcodeClient) {
    let server = NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            layout: server_layout,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()])
        },
    )
    .unwrap();
    let params = TokenParams {
        client_id: 5,
        layout: token_layout,
        ..TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64)
    };
    let client = NetcodeClient::new(0.0, ConnectToken::generate(&params, &KEY).unwrap());
    (server, client)
}

/// One exchange both ways; returns the payloads each side received.
fn exchange(
    server: &mut NetcodeServer,
    client: &mut NetcodeClient,
    t: f64,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut at_server, mut at_client) = (Vec::new(), Vec::new());
    client.handle_timeout(t);
    let mut out = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        out.push(transmit.data.to_vec());
    }
    for mut b in out {
        if let Some(p) = server.handle_datagram(T0 + t, client_addr(), &mut b) {
            at_server.push(p.payload.to_vec());
        }
    }
    server.handle_timeout(T0 + t);
    let mut back = Vec::new();
    while let Some(transmit) = server.poll_transmit() {
        back.push(transmit.data.to_vec());
    }
    for mut b in back {
        if let Some(p) = client.handle_datagram(t, server_addr(), &mut b) {
            at_client.push(p.to_vec());
        }
    }
    (at_server, at_client)
}

fn connect(server: &mut NetcodeServer, client: &mut NetcodeClient) -> f64 {
    let mut t = 0.0;
    while !client.is_connected() {
        exchange(server, client, t);
        t += 0.05;
        assert!(t < 2.0, "{:?}", client.state());
    }
    exchange(server, client, t);
    t
}

#[test]
fn a_1201_byte_payload_is_an_error_at_send_in_the_standard_layout() {
    let (mut server, mut client) = pair(Layout::Standard, Layout::Standard);
    let t = connect(&mut server, &mut client);
    let too_large = PayloadError::PayloadTooLarge {
        len: 1201,
        max: 1200,
        layout: Layout::Standard,
    };
    assert_eq!(client.send_payload(&[1; 1201]), Err(too_large));
    assert_eq!(server.send_payload(5, &[1; 1201]), Err(too_large));
    assert_eq!(
        too_large.to_string(),
        "payload of 1201 bytes is larger than the 1200-byte limit of Layout::Standard"
    );
    // Nothing was queued by the refused sends; 1200 bytes go through both ways.
    assert_eq!(server.queued_datagrams(), 0);
    client.send_payload(&[2; MAX_PAYLOAD_BYTES]).unwrap();
    server.send_payload(5, &[3; MAX_PAYLOAD_BYTES]).unwrap();
    let (at_server, at_client) = exchange(&mut server, &mut client, t);
    assert_eq!(at_server, vec![vec![2; 1200]]);
    assert_eq!(at_client, vec![vec![3; 1200]]);
}

#[test]
fn a_1301_byte_payload_is_an_error_at_send_in_renetcode_layout() {
    let (mut server, mut client) = pair(Layout::Renetcode, Layout::Renetcode);
    let t = connect(&mut server, &mut client);
    let too_large = PayloadError::PayloadTooLarge {
        len: 1301,
        max: 1300,
        layout: Layout::Renetcode,
    };
    assert_eq!(client.send_payload(&[1; 1301]), Err(too_large));
    assert_eq!(server.send_payload(5, &[1; 1301]), Err(too_large));
    client.send_payload(&[2; 1300]).unwrap();
    server.send_payload(5, &[3; 1300]).unwrap();
    let (at_server, at_client) = exchange(&mut server, &mut client, t);
    assert_eq!(at_server, vec![vec![2; 1300]]);
    assert_eq!(at_client, vec![vec![3; 1300]]);
}

/// A standard client of a server set to renetcode's layout (an IPv4 token connects in
/// either): the server's first payload over 1200 bytes closes the client with
/// `LayoutMismatch`.
#[test]
fn a_standard_client_closes_at_a_renetcode_sized_payload() {
    let (mut server, mut client) = pair(Layout::Renetcode, Layout::Standard);
    let t = connect(&mut server, &mut client);
    server.send_payload(5, &[1; 1000]).unwrap();
    server.send_payload(5, &[2; 1250]).unwrap();
    let (_, at_client) = exchange(&mut server, &mut client, t);
    assert_eq!(at_client, vec![vec![1; 1000]]);
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::LayoutMismatch)
    );
    assert_eq!(client.refusals().get(Refusal::LayoutMismatch), 1);
}

/// A client with a renetcode-layout token at a standard server: the client's first payload
/// over 1200 bytes makes the server close it with `LayoutMismatch` (and tell it).
#[test]
fn a_standard_server_closes_a_client_at_a_renetcode_sized_payload() {
    let (mut server, mut client) = pair(Layout::Standard, Layout::Renetcode);
    let t = connect(&mut server, &mut client);
    while server.poll_event().is_some() {}
    client.send_payload(&[2; 1250]).unwrap();
    exchange(&mut server, &mut client, t);
    assert_eq!(
        server.poll_event(),
        Some(NetcodeEvent::ClientDisconnected {
            client_id: 5,
            addr: client_addr(),
            slot: 0,
            reason: DisconnectReason::LayoutMismatch
        })
    );
    assert_eq!(server.refusals().get(Refusal::LayoutMismatch), 1);
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::DisconnectedByServer)
    );
}

/// A forged oversize payload (it does not authenticate) is refused as the standard refuses
/// it and changes nothing.
#[test]
fn an_unauthenticated_oversize_payload_changes_nothing() {
    let (mut server, mut client) = pair(Layout::Standard, Layout::Standard);
    let t = connect(&mut server, &mut client);
    let mut forged = vec![0x15u8; 1 + 1 + 1250 + 16];
    forged[1] = 200;
    assert!(server
        .handle_datagram(T0 + t, client_addr(), &mut forged)
        .is_none());
    assert_eq!(server.refusals().get(Refusal::WrongSize), 1);
    assert_eq!(server.refusals().get(Refusal::LayoutMismatch), 0);
    assert!(server.is_connected(5));
    let mut forged = vec![0x15u8; 1 + 1 + 1250 + 16];
    forged[1] = 200;
    assert!(client
        .handle_datagram(t, server_addr(), &mut forged)
        .is_none());
    assert!(client.is_connected());
}

/// The game server and client take the MTU's limit from their layout: 1300 bytes fits
/// `renetcode`'s payload, not the standard's.
#[test]
fn a_1300_byte_mtu_is_accepted_in_renetcode_layout_only() {
    use netser_transport::connection::ConnectionConfig;
    use netser_transport::netcode::{Client, Protocol, Server, SetupError};

    let protocol = Protocol::<u8, u8>::with_connection(ConnectionConfig::default().with_mtu(1300));
    for layout in [Layout::Standard, Layout::Renetcode] {
        let config = ServerConfig {
            layout,
            ..protocol.server_config(KEY, vec![server_addr()])
        };
        let server = Server::new(0.0, std::time::UNIX_EPOCH, config, &protocol);
        let params = TokenParams {
            client_id: 5,
            layout,
            ..TokenParams::new(protocol.id(), vec![server_addr()], T0 as u64)
        };
        let token = ConnectToken::generate(&params, &KEY).unwrap();
        let client = Client::new(0.0, token, &protocol);
        match layout {
            Layout::Standard => {
                let server = server.unwrap_err();
                assert!(matches!(server, SetupError::MtuTooLarge { mtu: 1300 }));
                assert!(server
                    .to_string()
                    .contains("1200 bytes in the standard layout"));
                let client = client.unwrap_err();
                assert!(matches!(client, SetupError::MtuTooLarge { mtu: 1300 }));
            }
            Layout::Renetcode => {
                server.unwrap();
                client.unwrap();
            }
        }
    }
    // One byte over renetcode's payload is refused in its layout too.
    let over = Protocol::<u8, u8>::with_connection(ConnectionConfig::default().with_mtu(1301));
    let config = ServerConfig {
        layout: Layout::Renetcode,
        ..over.server_config(KEY, vec![server_addr()])
    };
    let over = Server::new(0.0, std::time::UNIX_EPOCH, config, &over);
    assert!(matches!(over, Err(SetupError::MtuTooLarge { mtu: 1301 })));
}
