//! The protocol id covers what both sides must agree on: the snapshot type (two snapshot
//! schemas, even with the same messages, give two ids) and the channels, so a client
//! built from another protocol than the server's is refused at connect, with its reason.

use netser::NetSerialize;
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{
    protocol_id, protocol_id_with_snapshot, Client, ConnectToken, Protocol, Server, ServerConfig,
    SetupError, TokenParams,
};
use netser_transport::udp::{StartError, UdpClient, UdpClientConfig};

#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct WorldV1 {
    #[net(range = 0..=1000)]
    x: u16,
}

/// The same field widened: another wire layout.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct WorldV2 {
    #[net(range = 0..=100_000)]
    x: u32,
}

#[test]
fn two_snapshot_schemas_give_two_protocol_ids() {
    let v1 = protocol_id_with_snapshot::<u16, u32, WorldV1>();
    let v2 = protocol_id_with_snapshot::<u16, u32, WorldV2>();
    assert_ne!(v1, v2);
    assert_ne!(v1, protocol_id::<u16, u32>());
    // The same schemas give the same id (it is a hash of the schemas, nothing else).
    assert_eq!(v1, protocol_id_with_snapshot::<u16, u32, WorldV1>());
    // Without snapshots, the messages' id.
    assert_eq!(
        protocol_id_with_snapshot::<u16, u32, ()>(),
        protocol_id::<u16, u32>()
    );

    // A client built from the other snapshot schema refuses the token.
    let v1 = Protocol::<u16, u32, WorldV1>::new();
    let v2 = Protocol::<u16, u32, WorldV2>::new();
    let server = "127.0.0.1:40000".parse().unwrap();
    let params = TokenParams {
        client_id: 1,
        ..TokenParams::new(v1.id(), vec![server], 1_700_000_000)
    };
    let token = ConnectToken::generate(&params, &[3; 32]).unwrap();
    let refused = Client::new(0.0, token.clone(), &v2);
    assert!(matches!(
        refused,
        Err(SetupError::ProtocolMismatch { token, expected }) if token == v1.id() && expected == v2.id()
    ));
    Client::new(0.0, token, &v1).unwrap();
}

/// The server's channels, and a client that kept the connection defaults (two channels
/// where the server has three): the client is refused when it starts connecting, with a
/// reason it can read, over the sans-IO client and over UDP.
#[test]
fn a_channel_mismatch_is_refused_at_connect_with_its_reason() {
    let server_protocol = Protocol::<u16, u32>::new();
    let client_protocol = Protocol::<u16, u32>::with_connection(ConnectionConfig::default());
    assert_ne!(server_protocol.id(), client_protocol.id());
    let server = "127.0.0.1:40000".parse().unwrap();
    // The backend issues tokens for the server's protocol.
    let params = server_protocol.token_params(vec![server], std::time::SystemTime::now());
    let token = ConnectToken::generate(&params, &[3; 32]).unwrap();

    let refused = Client::new(0.0, token.clone(), &client_protocol).unwrap_err();
    assert_eq!(
        refused,
        SetupError::ProtocolMismatch {
            token: server_protocol.id(),
            expected: client_protocol.id(),
        }
    );
    let reason = refused.to_string();
    assert!(reason.contains("channels"), "{reason}");
    assert!(reason.contains("different protocols"), "{reason}");

    let udp = UdpClient::connect(token.clone(), &client_protocol, UdpClientConfig::default());
    assert!(matches!(
        udp,
        Err(StartError::Setup(SetupError::ProtocolMismatch { token, expected }))
            if token == server_protocol.id() && expected == client_protocol.id()
    ));

    // The same channels with another receive window are another protocol too; a send
    // queue (which paces this side only) is not.
    let mut window = server_protocol.connection().clone();
    window.channels[0].receive_queue_size = 512;
    assert_ne!(
        Protocol::<u16, u32>::with_connection(window).id(),
        server_protocol.id()
    );
    let mut queue = server_protocol.connection().clone();
    queue.channels[0].send_queue_size = 512;
    assert_eq!(
        Protocol::<u16, u32>::with_connection(queue).id(),
        server_protocol.id()
    );

    // The server's own protocol connects.
    assert!(Client::new(0.0, token, &server_protocol).is_ok());
}

/// The server refuses netcode settings that name another protocol id than its protocol.
#[test]
fn a_server_config_for_another_protocol_is_refused() {
    let protocol = Protocol::<u16, u32>::new();
    let addr = "127.0.0.1:40000".parse().unwrap();
    let config = ServerConfig::new(protocol_id::<u16, u32>(), [3; 32], vec![addr]);
    let refused = Server::new(0.0, std::time::SystemTime::now(), config, &protocol);
    assert!(matches!(
        refused,
        Err(SetupError::ConfigProtocolMismatch { protocol: id, .. }) if id == protocol.id()
    ));
    let config = protocol.server_config([3; 32], vec![addr]);
    assert!(Server::new(0.0, std::time::SystemTime::now(), config, &protocol).is_ok());
}
