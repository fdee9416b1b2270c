//! The protocol id covers the snapshot type: two snapshot schemas, even with the same
//! messages, give two ids, so a client built from the other schema is refused.

use netser::NetSerialize;
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{
    protocol_id, protocol_id_with_snapshot, Client, ConnectToken, SetupError, TokenParams,
};

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
    let server = "127.0.0.1:40000".parse().unwrap();
    let params = TokenParams {
        client_id: 1,
        ..TokenParams::new(v1, vec![server], 1_700_000_000)
    };
    let token = ConnectToken::generate(&params, &[3; 32]).unwrap();
    let refused = Client::<u16, u32, WorldV2>::with_protocol_id(
        0.0,
        token.clone(),
        ConnectionConfig::default(),
        v2,
    );
    assert!(matches!(
        refused,
        Err(SetupError::ProtocolMismatch { token, expected }) if token == v1 && expected == v2
    ));
    Client::<u16, u32, WorldV1>::with_protocol_id(0.0, token, ConnectionConfig::default(), v1)
        .unwrap();
}
