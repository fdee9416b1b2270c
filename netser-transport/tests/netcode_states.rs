//! The netcode client's state machine (every state and error state of the standard), the
//! server's timeouts, keep-alives and redundant disconnects.

use std::net::SocketAddr;

use netser_transport::netcode::packet::{self, Packet, PacketType};
use netser_transport::netcode::{
    ClientState, ConnectToken, DisconnectReason, Layout, NetcodeClient, NetcodeEvent,
    NetcodeServer, ServerConfig, TokenParams, DISCONNECT_PACKETS,
};

const PROTOCOL_ID: u64 = 0xBEEF;
const KEY: [u8; 32] = [0x11; 32];
const T0: f64 = 1_700_000_000.0;
const STEP: f64 = 0.01;

fn server_a() -> SocketAddr {
    "192.0.2.1:40000".parse().unwrap()
}
fn server_b() -> SocketAddr {
    "192.0.2.2:40000".parse().unwrap()
}
fn client_addr(i: u16) -> SocketAddr {
    SocketAddr::new([198, 51, 100, 1].into(), 50_000 + i)
}

fn token(client_id: u64, servers: Vec<SocketAddr>) -> ConnectToken {
    let params = TokenParams {
        client_id,
        timeout_seconds: 2,
        ..TokenParams::new(PROTOCOL_ID, servers, T0 as u64)
    };
    ConnectToken::generate(&params, &KEY).unwrap()
}

fn server_at(addr: SocketAddr, max_clients: usize) -> NetcodeServer {
    NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            max_clients,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![addr])
        },
    )
    .unwrap()
}

/// One instant, lossless exchange step between one client and the servers present.
fn step(
    client: &mut NetcodeClient,
    from: SocketAddr,
    servers: &mut [(SocketAddr, &mut NetcodeServer)],
    t: f64,
) {
    step_recording(client, from, servers, t, &mut Vec::new());
}

/// [`step`], keeping a copy of every datagram the servers sent to the client.
fn step_recording(
    client: &mut NetcodeClient,
    from: SocketAddr,
    servers: &mut [(SocketAddr, &mut NetcodeServer)],
    t: f64,
    record: &mut Vec<Vec<u8>>,
) {
    client.handle_timeout(t);
    let mut outgoing = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        outgoing.push((transmit.to, transmit.data.to_vec()));
    }
    for (to, mut bytes) in outgoing {
        if let Some((_, server)) = servers.iter_mut().find(|(a, _)| *a == to) {
            server.handle_datagram(T0 + t, from, &mut bytes);
        }
    }
    for (addr, server) in servers.iter_mut() {
        server.handle_timeout(T0 + t);
        let mut replies = Vec::new();
        while let Some(transmit) = server.poll_transmit() {
            replies.push((transmit.to, transmit.data.to_vec()));
        }
        for (to, mut bytes) in replies {
            if to == from {
                record.push(bytes.clone());
                client.handle_datagram(t, *addr, &mut bytes);
            }
        }
    }
}

#[test]
fn request_timed_out_after_every_server() {
    let mut client = NetcodeClient::new(0.0, token(1, vec![server_a(), server_b()]));
    assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    assert_eq!(client.state().code(), 1);
    let mut t = 0.0;
    let mut requests = Vec::new();
    while client.is_connecting() {
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            requests.push((transmit.to, transmit.data.len()));
        }
        t += STEP;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionRequestTimedOut)
    );
    assert_eq!(client.state().code(), -2);
    // 2 s on each server, requests at 10 Hz to the first, then the second.
    assert!((4.0..4.1).contains(&t), "{t}");
    let to_a = requests.iter().filter(|(to, _)| *to == server_a()).count();
    let to_b = requests.iter().filter(|(to, _)| *to == server_b()).count();
    assert!(
        (19..=22).contains(&to_a) && (19..=22).contains(&to_b),
        "{to_a} {to_b}"
    );
    assert!(requests.iter().all(|&(_, len)| len == 1078));
}

#[test]
fn response_timed_out_when_the_server_stops_answering() {
    let mut server = server_at(server_a(), 4);
    let mut client = NetcodeClient::new(0.0, token(2, vec![server_a()]));
    // The request reaches the server, the challenge reaches the client; then silence.
    client.handle_timeout(0.0);
    let mut request = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        request = transmit.data.to_vec();
    }
    server.handle_datagram(T0, client_addr(2), &mut request);
    let mut challenge = Vec::new();
    while let Some(transmit) = server.poll_transmit() {
        challenge = transmit.data.to_vec();
    }
    client.handle_datagram(0.0, server_a(), &mut challenge);
    assert_eq!(client.state(), ClientState::SendingConnectionResponse);
    assert_eq!(client.state().code(), 2);
    let mut responses = 0;
    let mut t = 0.0;
    while client.is_connecting() {
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            let bytes = transmit.data;
            assert_eq!(packet::peek(bytes).unwrap().0, PacketType::Response);
            responses += 1;
        }
        t += STEP;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionResponseTimedOut)
    );
    assert_eq!(client.state().code(), -3);
    assert!(responses >= 20, "{responses}");
}

#[test]
fn denied_by_a_full_server_then_accepted_by_the_next() {
    let mut a = server_at(server_a(), 1);
    let mut b = server_at(server_b(), 1);
    let mut first = NetcodeClient::new(0.0, token(3, vec![server_a()]));
    let mut t = 0.0;
    while !first.is_connected() {
        step(&mut first, client_addr(3), &mut [(server_a(), &mut a)], t);
        t += STEP;
    }
    let mut second = NetcodeClient::new(t, token(4, vec![server_a(), server_b()]));
    let start = t;
    while !second.is_connected() {
        assert!(t - start < 1.0, "{:?}", second.state());
        step(
            &mut second,
            client_addr(4),
            &mut [(server_a(), &mut a), (server_b(), &mut b)],
            t,
        );
        t += STEP;
    }
    assert_eq!(second.server_addr(), server_b());
    assert_eq!(second.client_index(), (0, 1));
    assert_eq!(a.connected_clients(), 1);
    assert_eq!(b.connected_clients(), 1);
    // The slot belongs to the connected state: gone with it.
    second.disconnect();
    assert_eq!(second.client_index(), (0, 0));
}

#[test]
fn keep_alives_hold_an_idle_connection_and_silence_times_it_out() {
    let mut server = server_at(server_a(), 4);
    let mut client = NetcodeClient::new(0.0, token(5, vec![server_a()]));
    let mut t = 0.0;
    while !client.is_connected() {
        step(
            &mut client,
            client_addr(5),
            &mut [(server_a(), &mut server)],
            t,
        );
        t += STEP;
    }
    assert_eq!(client.state().code(), 3);
    assert!(matches!(
        server.poll_event(),
        Some(NetcodeEvent::ClientConnected {
            client_id: 5,
            slot: 0,
            ..
        })
    ));
    // Ten idle seconds (timeout 2 s): keep-alives both ways hold it.
    let end = t + 10.0;
    while t < end {
        step(
            &mut client,
            client_addr(5),
            &mut [(server_a(), &mut server)],
            t,
        );
        t += STEP;
    }
    assert!(client.is_connected() && server.is_connected(5));
    assert!(client.time_since_last_received() <= 0.11);
    // The link goes dead: both sides time out after 2 s.
    let dead = t;
    while client.is_connected() || server.is_connected(5) {
        client.handle_timeout(t);
        while client.poll_transmit().is_some() {}
        server.handle_timeout(T0 + t);
        while server.poll_transmit().is_some() {}
        t += STEP;
        assert!(t - dead < 2.2);
    }
    // The last packets were received one step before `dead`.
    assert!(t - dead > 1.9);
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionTimedOut)
    );
    assert_eq!(client.state().code(), -4);
    assert_eq!(
        server.poll_event(),
        Some(NetcodeEvent::ClientDisconnected {
            client_id: 5,
            addr: client_addr(5),
            slot: 0,
            reason: DisconnectReason::ConnectionTimedOut
        })
    );
    assert_eq!(server.connected_clients(), 0);
    assert_eq!(server.poll_timeout(), None);
    assert_eq!(client.poll_timeout(), None);
    // The slot and its memory are free again: the next client to connect and time out
    // leaves the server holding what it held after the first (its queues keep the
    // capacity they grew to; nothing per client is left behind).
    let freed_memory = server.memory_bytes();
    let mut next = NetcodeClient::new(t, token(6, vec![server_a()]));
    while !next.is_connected() {
        step(
            &mut next,
            client_addr(6),
            &mut [(server_a(), &mut server)],
            t,
        );
        t += STEP;
    }
    assert!(server.memory_bytes() > freed_memory, "its user data");
    let dead = t;
    while next.is_connected() || server.is_connected(6) {
        next.handle_timeout(t);
        while next.poll_transmit().is_some() {}
        server.handle_timeout(T0 + t);
        while server.poll_transmit().is_some() {}
        t += STEP;
        assert!(t - dead < 2.2);
    }
    while server.poll_event().is_some() {}
    assert_eq!(server.memory_bytes(), freed_memory);
}

#[test]
fn redundant_disconnects_both_ways_and_reconnect_with_the_same_token() {
    let mut server = server_at(server_a(), 4);
    let token = token(6, vec![server_a()]);
    let mut client = NetcodeClient::new(0.0, token.clone());
    let mut t = 0.0;
    let mut from_server = Vec::new();
    while !client.is_connected() {
        step_recording(
            &mut client,
            client_addr(6),
            &mut [(server_a(), &mut server)],
            t,
            &mut from_server,
        );
        t += STEP;
    }
    client.disconnect();
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::DisconnectedByClient)
    );
    let mut packets = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        packets.push(transmit.data.to_vec());
    }
    assert_eq!(packets.len(), DISCONNECT_PACKETS);
    // Only the last one arrives: enough.
    server.handle_datagram(T0 + t, client_addr(6), packets.last_mut().unwrap());
    server.poll_event();
    assert_eq!(
        server.poll_event(),
        Some(NetcodeEvent::ClientDisconnected {
            client_id: 6,
            addr: client_addr(6),
            slot: 0,
            reason: DisconnectReason::DisconnectedByClient
        })
    );

    // The same token connects again from the same address; both sides' packets continue
    // the old sequences, so no nonce repeats under either key (and the server tells the new
    // session from a replay of the old one).
    client.reconnect(t);
    while client.poll_transmit().is_some() {}
    let start = t;
    while !client.is_connected() {
        step_recording(
            &mut client,
            client_addr(6),
            &mut [(server_a(), &mut server)],
            t,
            &mut from_server,
        );
        t += STEP;
        assert!(t - start < 1.0);
    }
    assert!(server.disconnect(6));
    let mut packets = Vec::new();
    while let Some(transmit) = server.poll_transmit() {
        packets.push(transmit.data.to_vec());
    }
    assert_eq!(packets.len(), DISCONNECT_PACKETS);
    for bytes in &packets {
        let mut copy = bytes.clone();
        let (_, packet) =
            packet::decode(&mut copy, PROTOCOL_ID, token.server_to_client_key(), None).unwrap();
        assert_eq!(packet, Packet::Disconnect);
    }
    from_server.extend(packets.iter().cloned());
    let mut sequences: Vec<u64> = from_server
        .iter()
        .map(|bytes| packet::peek(bytes).unwrap().1)
        .collect();
    let sent = sequences.len();
    sequences.sort_unstable();
    sequences.dedup();
    assert_eq!(
        sequences.len(),
        sent,
        "a sequence (nonce) repeated under one key"
    );
    // Challenge and keep-alive in each session, then the disconnects.
    assert!(sent >= DISCONNECT_PACKETS + 4);
    client.handle_datagram(t, server_a(), &mut packets[DISCONNECT_PACKETS - 1].clone());
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::DisconnectedByServer)
    );
    assert_eq!(client.state().code(), 0);
    assert!(!server.disconnect(6));
}

#[test]
fn invalid_token_state() {
    // A token can only be inconsistent if built by hand; `from_bytes` refuses it, and the
    // standard's "invalid connect token" is the error a client reports for those bytes.
    let token = token(7, vec![server_a()]);
    let mut bytes = token.to_bytes();
    bytes[13 + 8..13 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        ConnectToken::from_bytes(&bytes),
        Err(netser_transport::netcode::TokenError::BadTimestamps)
    );
    assert_eq!(
        ClientState::Disconnected(DisconnectReason::InvalidConnectToken).code(),
        -5
    );
}

#[test]
fn handshake_takes_two_round_trips() {
    // 50 ms each way, 1 ms ticks: the request, the challenge, the response and the
    // keep-alive each cross once, and every step is answered as it arrives.
    use netser_transport::simulator::{Simulator, SimulatorConfig};
    let mut sim: Simulator<SocketAddr> = Simulator::new(SimulatorConfig {
        latency: 0.05,
        ..SimulatorConfig::default()
    });
    let mut server = server_at(server_a(), 4);
    let mut client = NetcodeClient::new(0.0, token(8, vec![server_a()]));
    let (mut t, mut server_connected_at) = (0.0, None);
    while !client.is_connected() {
        assert!(t < 1.0);
        while let Some(d) = sim.receive(t) {
            let mut bytes = d.data;
            if d.to == server_a() {
                server.handle_datagram(T0 + t, d.from, &mut bytes);
            } else {
                client.handle_datagram(t, d.from, &mut bytes);
            }
        }
        if server.is_connected(8) {
            server_connected_at.get_or_insert(t);
        }
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            sim.send(t, client_addr(8), transmit.to, transmit.data);
        }
        server.handle_timeout(T0 + t);
        while let Some(transmit) = server.poll_transmit() {
            sim.send(t, server_a(), transmit.to, transmit.data);
        }
        t += 0.001;
    }
    let rtt = 0.1;
    println!(
        "client connected after {:.2} RTT, server after {:.2} RTT",
        t / rtt,
        server_connected_at.unwrap() / rtt
    );
    assert!((2.0..2.05).contains(&(t / rtt)), "{t}");
    assert!((1.5..1.55).contains(&(server_connected_at.unwrap() / rtt)));
}

#[test]
fn event_queue_and_outbox_are_bounded() {
    use netser_transport::netcode::{PayloadError, Refusal, MAX_PACKET_BYTES};
    // Connects and disconnects with nobody polling events: after 2 * max_clients + 16
    // connect events, new connections wait (refused, the client retries) until polled.
    let mut server = NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            max_clients: 2,
            max_outbox_bytes: 4 * MAX_PACKET_BYTES,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![server_a()])
        },
    )
    .unwrap();
    let mut t = 0.0;
    for i in 0..20u16 {
        let mut client = NetcodeClient::new(t, token(100 + u64::from(i), vec![server_a()]));
        while !client.is_connected() {
            step(
                &mut client,
                client_addr(i),
                &mut [(server_a(), &mut server)],
                t,
            );
            t += STEP;
        }
        assert!(server.disconnect(100 + u64::from(i)));
        while server.poll_transmit().is_some() {}
    }
    let mut waiting = NetcodeClient::new(t, token(200, vec![server_a()]));
    for _ in 0..20 {
        step(
            &mut waiting,
            client_addr(200),
            &mut [(server_a(), &mut server)],
            t,
        );
        t += STEP;
    }
    assert!(waiting.is_connecting());
    assert!(server.refusals().get(Refusal::EventQueueFull) > 0);
    let mut events = 0;
    while server.poll_event().is_some() {
        events += 1;
    }
    assert_eq!(events, 40);
    while !waiting.is_connected() {
        step(
            &mut waiting,
            client_addr(200),
            &mut [(server_a(), &mut server)],
            t,
        );
        t += STEP;
    }

    // The outbox holds 4 full packets; the fifth payload waits for a drain.
    while server.poll_transmit().is_some() {}
    server.poll_event();
    let payload = [1u8; 1000];
    let mut sent = 0;
    while server.send_payload(200, &payload).is_ok() {
        sent += 1;
    }
    assert!((2..=4).contains(&sent), "{sent}");
    assert_eq!(
        server.send_payload(200, &payload),
        Err(PayloadError::OutboxFull)
    );
    assert_eq!(
        server.send_payload(200, &[]),
        Err(PayloadError::EmptyPayload)
    );
    assert_eq!(
        server.send_payload(200, &[0; 1201]),
        Err(PayloadError::PayloadTooLarge {
            len: 1201,
            max: 1200,
            layout: Layout::Standard
        })
    );
    assert_eq!(
        server.send_payload(999, &payload),
        Err(PayloadError::UnknownClient { client_id: 999 })
    );
    while server.poll_transmit().is_some() {}
    assert!(server.send_payload(200, &payload).is_ok());
}
