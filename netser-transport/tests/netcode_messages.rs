//! The user-facing `Server` / `Client`: typed messages over netcode through the lossy
//! simulator, events, blocks, schema mismatch, and the forged datagrams that disturb a
//! bare connection but never get past netcode.

mod netcode_support;

use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

use netcode_support::protocol;
use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::netcode::packet::Packet;
use netser_transport::netcode::{
    Client, ClientState, ConnectToken, DisconnectReason, MessageError, Refusal, Server,
    ServerConfig, ServerEvent, SetupError, TokenParams, USER_DATA_BYTES,
};
use netser_transport::simulator::{SimulatorConfig, Star};

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum ClientMsg {
    Input(#[net(range = 0..=10_000)] u16),
    Blob(#[net(max_len = 262_000)] Vec<u8>),
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum ServerMsg {
    State(#[net(range = 0..=1_000_000)] u32),
    Blob(#[net(max_len = 262_000)] Vec<u8>),
}

/// A client built from another schema.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum OtherClientMsg {
    Input(#[net(range = 0..=20_000)] u16),
}

const KEY: [u8; 32] = [0x42; 32];
const T0: f64 = 1_700_000_000.0;
const FRAME: f64 = 1.0 / 60.0;

fn server_addr() -> SocketAddr {
    World::SERVER_ADDR
}
fn client_addr(i: usize) -> SocketAddr {
    World::client_addr(i)
}

fn token(client_id: u64, protocol: u64) -> ConnectToken {
    let params = TokenParams {
        client_id,
        timeout_seconds: 5,
        ..TokenParams::new(protocol, vec![server_addr()], T0 as u64)
    };
    ConnectToken::generate(&params, &KEY).unwrap()
}

/// The server and its clients over the lossy simulator, stepped by the shared harness.
type World = Star<Server<ServerMsg, ClientMsg>, Client<ClientMsg, ServerMsg>>;

fn new_world(clients: usize, loss: f64, seed: u64) -> World {
    let net = SimulatorConfig {
        latency: 0.03,
        jitter: 0.005,
        loss,
        seed,
        ..SimulatorConfig::default()
    };
    let config = ServerConfig::new(
        protocol::<ClientMsg, ServerMsg>().id(),
        KEY,
        vec![server_addr()],
    );
    // The Unix time is T0 when the world starts, as the tokens say.
    let unix_now = UNIX_EPOCH + Duration::from_secs_f64(T0);
    let server = Server::new(0.0, unix_now, config, &protocol()).unwrap();
    let mut world = World::new(server, net);
    for i in 0..clients {
        let token = token(100 + i as u64, protocol::<ClientMsg, ServerMsg>().id());
        world.add_client(Client::new(0.0, token, &protocol()).unwrap());
    }
    world
}

/// Runs `world` from one wakeup to the next until `done`; fails after `limit` seconds.
fn run_until(world: &mut World, limit: f64, done: impl FnMut(&mut World) -> bool) {
    let deadline = world.now + limit;
    assert!(world.run_until(deadline, done), "not done after {limit} s");
}

fn connect_all(world: &mut World) {
    run_until(world, 10.0, |w| w.clients.iter().all(Client::is_connected));
}

#[test]
fn messages_flow_both_ways_over_loss_with_events() {
    let mut world = new_world(3, 0.2, 1);
    // Queued before connecting: sent once connected.
    for client in &mut world.clients {
        client.send_message(0, &ClientMsg::Input(1)).unwrap();
    }
    connect_all(&mut world);
    let mut connected = Vec::new();
    while let Some(event) = world.server.poll_event() {
        connected.push(event);
    }
    connected.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(
        connected,
        (100..103)
            .map(|client_id| ServerEvent::ClientConnected {
                client_id,
                addr: client_addr(client_id as usize - 100),
                user_data: Box::new([0; USER_DATA_BYTES]),
            })
            .collect::<Vec<_>>()
    );
    let mut from_clients = vec![Vec::new(); 3];
    let mut to_clients = vec![Vec::new(); 3];
    for n in 0..100u16 {
        for client in &mut world.clients {
            client.send_message(0, &ClientMsg::Input(n + 2)).unwrap();
        }
        if n % 2 == 0 {
            world
                .server
                .broadcast_message(0, &ServerMsg::State(u32::from(n)))
                .unwrap();
        }
        world.step(FRAME);
    }
    run_until(&mut world, 10.0, |w| {
        for (i, received) in from_clients.iter_mut().enumerate() {
            while let Some(m) = w.server.receive_message(100 + i as u64, 0) {
                received.push(m);
            }
        }
        for (client, received) in w.clients.iter_mut().zip(&mut to_clients) {
            while let Some(m) = client.receive_message(0) {
                received.push(m);
            }
        }
        from_clients.iter().all(|r| r.len() == 101) && to_clients.iter().all(|r| r.len() == 50)
    });
    for received in &from_clients {
        assert_eq!(
            *received,
            (1..=101).map(ClientMsg::Input).collect::<Vec<_>>()
        );
    }
    for received in &to_clients {
        assert_eq!(
            *received,
            (0..50).map(|n| ServerMsg::State(n * 2)).collect::<Vec<_>>()
        );
    }
    let info = world.server.network_info(100).unwrap();
    assert!(info.rtt > 0.05 && info.rtt < 0.2, "{info:?}");
    assert!(world.clients[0].network_info().rtt > 0.05);

    // Disconnects: by a client, by the server, everyone.
    world.clients[0].disconnect();
    assert!(world.server.disconnect(101));
    assert_eq!(
        world.server.poll_event(),
        Some(ServerEvent::ClientDisconnected {
            client_id: 101,
            addr: client_addr(1),
            reason: DisconnectReason::DisconnectedByServer
        })
    );
    assert_eq!(
        world.server.send_message(101, 0, &ServerMsg::State(1)),
        Err(MessageError::NotConnected)
    );
    run_until(&mut world, 2.0, |w| {
        w.server.connected_clients() == 1 && w.clients[1].is_disconnected()
    });
    assert_eq!(
        world.server.poll_event(),
        Some(ServerEvent::ClientDisconnected {
            client_id: 100,
            addr: client_addr(0),
            reason: DisconnectReason::DisconnectedByClient
        })
    );
    assert_eq!(
        world.clients[1].disconnect_reason(),
        Some(DisconnectReason::DisconnectedByServer)
    );
    world.server.disconnect_all();
    assert_eq!(
        world.server.poll_event(),
        Some(ServerEvent::ClientDisconnected {
            client_id: 102,
            addr: client_addr(2),
            reason: DisconnectReason::DisconnectedByServer
        })
    );
    assert_eq!(world.server.client_ids(), Vec::<u64>::new());
    run_until(&mut world, 2.0, |w| w.clients[2].is_disconnected());
    assert_eq!(
        world.clients[2].send_message(0, &ClientMsg::Input(1)),
        Err(MessageError::NotConnected)
    );
}

#[test]
fn a_block_crosses_netcode_over_loss() {
    let mut world = new_world(1, 0.1, 2);
    connect_all(&mut world);
    let blob: Vec<u8> = (0..250_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    world.clients[0]
        .send_message(0, &ClientMsg::Blob(blob.clone()))
        .unwrap();
    world
        .server
        .send_message(100, 0, &ServerMsg::Blob(blob.clone()))
        .unwrap();
    let (mut at_server, mut at_client) = (None, None);
    run_until(&mut world, 30.0, |w| {
        at_server = at_server
            .take()
            .or_else(|| w.server.receive_message(100, 0));
        at_client = at_client.take().or_else(|| w.clients[0].receive_message(0));
        at_server.is_some() && at_client.is_some()
    });
    assert_eq!(at_server, Some(ClientMsg::Blob(blob.clone())));
    assert_eq!(at_client, Some(ServerMsg::Blob(blob)));
}

#[test]
fn a_client_built_from_another_schema_is_refused() {
    let ours = protocol::<ClientMsg, ServerMsg>().id();
    let theirs = protocol::<OtherClientMsg, ServerMsg>().id();
    assert_ne!(ours, theirs);
    // A token for the server's game, given to a client of another schema: refused locally.
    let refused = Client::<OtherClientMsg, ServerMsg>::new(0.0, token(1, ours), &protocol());
    assert!(
        matches!(refused, Err(SetupError::ProtocolMismatch { token, expected }) if token == ours && expected == theirs)
    );
    // A token for the other schema's game: the client starts, the server refuses it.
    let config = ServerConfig::new(ours, KEY, vec![server_addr()]);
    let mut server: Server<ServerMsg, ClientMsg> =
        Server::new(0.0, std::time::UNIX_EPOCH, config, &protocol()).unwrap();
    let mut client: Client<OtherClientMsg, ServerMsg> =
        Client::new(0.0, token(2, theirs), &protocol()).unwrap();
    let mut t = 0.0;
    while client.is_connecting() {
        client.handle_timeout(t);
        let mut out = Vec::new();
        while let Some(transmit) = client.poll_transmit() {
            out.push(transmit.data.to_vec());
        }
        for bytes in out {
            server.handle_datagram(T0 + t, client_addr(0), &bytes);
        }
        server.handle_timeout(T0 + t);
        assert!(
            server.poll_transmit().is_none(),
            "the server answered a foreign protocol id"
        );
        t += 0.05;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionRequestTimedOut)
    );
    assert!(server.netcode().refusals().get(Refusal::WrongProtocolId) > 40);
    assert_eq!(server.poll_event(), None);
}

// The forged datagrams below disturb a bare connection (no netcode): they are accepted as
// connection traffic. Through netcode they are refused, raw (too small, or not a netcode
// packet) or wrapped in a payload packet (the attacker does not have the key, so it does not
// decrypt), before the connection sees a byte; the transfers they target complete.

/// Sends `forged` from `from` to `to` both raw and wrapped in netcode payload packets
/// with guessed keys and plausible sequences.
fn inject(world: &mut World, from: SocketAddr, forged: &[u8]) {
    let t = world.now;
    let to = if from == server_addr() {
        client_addr(0)
    } else {
        server_addr()
    };
    world.net.send(t, from, to, forged);
    for (i, guess) in [[0u8; 32], [0xff; 32], [0x42; 32]].iter().enumerate() {
        let mut wrapped = Vec::new();
        Packet::Payload(forged).encode(
            1000 + i as u64,
            protocol::<ClientMsg, ServerMsg>().id(),
            guess,
            &mut wrapped,
        );
        world.net.send(t, from, to, &wrapped);
    }
}

fn bare_connection_accepts(forged: &[u8]) -> bool {
    let mut bare: Connection<ServerMsg, ClientMsg> =
        Connection::new(0.0, ConnectionConfig::default()).unwrap();
    bare.handle_datagram(0.0, forged).is_ok()
}

/// Bytes of the block under attack: with its encoding, a chunk of 256 slices of 1024 bytes
/// (a 256 KiB chunk).
const BLOCK_BYTES: usize = 261_200;

/// Runs a 256 KiB block from the client to the server, calling `attack` once a third of the
/// way through; checks that it arrives intact and that the attack never reached the
/// server's connection.
fn block_under_attack(seed: u64, attack: impl FnOnce(&mut World)) -> World {
    let mut world = new_world(1, 0.05, seed);
    connect_all(&mut world);
    for n in 0..50u16 {
        world.clients[0]
            .send_message(0, &ClientMsg::Input(n))
            .unwrap();
    }
    let blob: Vec<u8> = (0..BLOCK_BYTES as u32)
        .map(|i| (i ^ (i >> 9)) as u8)
        .collect();
    world.clients[0]
        .send_message(0, &ClientMsg::Blob(blob.clone()))
        .unwrap();
    for _ in 0..30 {
        world.step(FRAME);
    }
    let refused_before =
        world.server.netcode().refusals().total() + world.clients[0].netcode().refusals().total();
    attack(&mut world);
    let mut got = Vec::new();
    run_until(&mut world, 30.0, |w| {
        while let Some(m) = w.server.receive_message(100, 0) {
            got.push(m);
        }
        got.len() == 51
    });
    assert_eq!(got[50], ClientMsg::Blob(blob));
    assert_eq!(got[..50], (0..50).map(ClientMsg::Input).collect::<Vec<_>>());
    let refused_after =
        world.server.netcode().refusals().total() + world.clients[0].netcode().refusals().total();
    assert!(
        refused_after > refused_before,
        "the forgeries were not refused"
    );
    // The connections never saw a malformed or refused datagram.
    for counters in [
        world.server.connection(100).unwrap().counters(),
        world.clients[0].connection().counters(),
    ] {
        assert_eq!(
            (counters.malformed_packets, counters.packets_refused),
            (0, 0),
            "{counters:?}"
        );
    }
    world
}

#[test]
fn forged_endpoint_packet_300_ahead_is_refused() {
    // `20 ss ss dd`: a 4-byte regular packet whose sequence is 300 past the client's.
    let forged = [0x20, 0x2c + 20, 0x01, 0x01];
    assert!(bare_connection_accepts(&forged));
    let world = block_under_attack(3, |w| inject(w, client_addr(0), &forged));
    let refusals = world.server.netcode().refusals();
    assert!(refusals.get(Refusal::TooSmall) >= 1 || refusals.get(Refusal::WrongSize) >= 1);
    assert!(refusals.get(Refusal::DoesNotDecrypt) >= 1, "{refusals:?}");
}

#[test]
fn forged_last_fragments_are_refused() {
    // Four 6-byte last fragments (one data byte) for the next sequences; with the
    // connection's default packet size a packet has at most 2 fragments (an endpoint
    // configured for 100-fragment packets is evicted the same way).
    let world = block_under_attack(4, |w| {
        for s in 0..4u16 {
            let forged = [0x01, 40 + s as u8, 0, 1, 1, 0xAA];
            assert!(bare_connection_accepts(&forged));
            inject(w, client_addr(0), &forged);
        }
    });
    assert!(
        world
            .server
            .netcode()
            .refusals()
            .get(Refusal::DoesNotDecrypt)
            >= 4
    );
}

#[test]
fn forged_slice_of_the_next_chunk_is_refused() {
    // A 10-byte last slice (1 of 1, one byte) of the next chunk id: a bare receiver mid-
    // transfer abandons the chunk in progress.
    let forged = [0xc1, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x55];
    assert!(bare_connection_accepts(&forged));
    let world = block_under_attack(5, |w| inject(w, client_addr(0), &forged));
    let refusals = world.server.netcode().refusals();
    assert!(refusals.get(Refusal::DoesNotDecrypt) >= 1, "{refusals:?}");
}

#[test]
fn forged_slice_ack_is_refused() {
    // A 37-byte ack of chunk 0 marking all 256 slices received, sent to the block's
    // sender (the client) from the server's address: a bare sender would call the block
    // delivered.
    let mut forged = vec![0xc2, 0x00, 0x00, 0x00, 0x01];
    forged.extend_from_slice(&[0xff; 32]);
    assert_eq!(forged.len(), 37);
    // A bare connection sending a block takes the forged ack as genuine.
    let mut bare: Connection<ClientMsg, ServerMsg> =
        Connection::new(0.0, ConnectionConfig::default()).unwrap();
    bare.send_message(0, &ClientMsg::Blob(vec![7; BLOCK_BYTES]))
        .unwrap();
    while bare.poll_transmit(0.0).is_some() {}
    assert!(bare.handle_datagram(0.0, &forged).is_ok());
    let world = block_under_attack(6, |w| inject(w, server_addr(), &forged));
    let refusals = world.clients[0].netcode().refusals();
    assert!(
        refusals.get(Refusal::InvalidSequenceBytes) >= 1,
        "{refusals:?}"
    );
    assert!(refusals.get(Refusal::DoesNotDecrypt) >= 1, "{refusals:?}");
}
