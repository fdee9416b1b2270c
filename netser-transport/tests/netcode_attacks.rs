//! Attacks on the netcode layer: spoofed addresses, replays, stolen tokens, expired and
//! foreign tokens, every malformed length, floods, amplification, a full server.

use std::net::SocketAddr;

use netser_transport::netcode::packet::{self, Packet};
use netser_transport::netcode::{
    ClientState, ConnectToken, DisconnectReason, NetcodeClient, NetcodeEvent, NetcodeServer,
    Refusal, ServerConfig, TokenParams, CONNECTION_REQUEST_BYTES, MAX_PACKET_BYTES,
};

const PROTOCOL_ID: u64 = 0xACE;
const KEY: [u8; 32] = [0x5a; 32];
const T0: f64 = 1_700_000_000.0;

fn server_addr() -> SocketAddr {
    "192.0.2.1:40000".parse().unwrap()
}

fn addr(i: u32) -> SocketAddr {
    SocketAddr::new(
        std::net::Ipv4Addr::from(0x0a00_0000 + i).into(),
        1000 + (i % 50_000) as u16,
    )
}

fn token(client_id: u64) -> ConnectToken {
    token_with(client_id, |_| {})
}

fn token_with(client_id: u64, edit: impl FnOnce(&mut TokenParams)) -> ConnectToken {
    let mut params = TokenParams {
        client_id,
        timeout_seconds: 5,
        ..TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64)
    };
    edit(&mut params);
    ConnectToken::generate(&params, &KEY).unwrap()
}

fn server(max_clients: usize) -> NetcodeServer {
    NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            max_clients,
            max_pending: 64,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()])
        },
    )
    .unwrap()
}

/// A tiny deterministic generator for the fuzz loops.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn fill(&mut self, bytes: &mut [u8]) {
        bytes.iter_mut().for_each(|b| *b = self.next() as u8);
    }
}

fn drain(server: &mut NetcodeServer) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(transmit) = server.poll_transmit() {
        out.push((transmit.to, transmit.data.to_vec()));
    }
    out
}

fn drain_client(client: &mut NetcodeClient) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(transmit) = client.poll_transmit() {
        out.push((transmit.to, transmit.data.to_vec()));
    }
    out
}

/// Connects `client` from `from` over a perfect, instant link; returns the time reached.
fn connect(
    server: &mut NetcodeServer,
    client: &mut NetcodeClient,
    from: SocketAddr,
    mut t: f64,
) -> f64 {
    while !client.is_connected() {
        assert!(t < 10.0, "no connection: {:?}", client.state());
        client.handle_timeout(t);
        for (_, mut bytes) in drain_client(client) {
            server.handle_datagram(T0 + t, from, &mut bytes);
        }
        server.handle_timeout(T0 + t);
        for (to, mut bytes) in drain(server) {
            if to == from {
                client.handle_datagram(t, server_addr(), &mut bytes);
            }
        }
        t += 0.01;
    }
    t
}

/// One connection request datagram for `token`.
fn request(token: &ConnectToken) -> Vec<u8> {
    let mut out = Vec::new();
    Packet::ConnectionRequest {
        protocol_id: token.protocol_id(),
        expire_timestamp: token.expire_timestamp(),
        nonce: token.nonce(),
        private_data: token.private_data(),
    }
    .encode(0, token.protocol_id(), &[0; 32], &mut out);
    out
}

#[test]
fn spoofed_source_never_connects() {
    // The attacker holds a valid token (so it knows the client-to-server key) but sends
    // from a spoofed address: the challenge goes to that address, and without it no
    // response decrypts the server's challenge check.
    let mut server = server(4);
    let spoofed = addr(1);
    let stolen = token(100);
    let mut bytes = request(&stolen);
    server.handle_datagram(T0, spoofed, &mut bytes);
    let replies = drain(&mut server);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].0, spoofed); // the attacker never sees it
    assert_eq!(server.pending_clients(), 1);

    let mut rng = Rng(1);
    for sequence in 1..200u64 {
        let mut guess = [0u8; 300];
        rng.fill(&mut guess);
        let mut out = Vec::new();
        Packet::Response {
            token_sequence: rng.next() % 4,
            token_data: &guess,
        }
        .encode(
            sequence,
            PROTOCOL_ID,
            stolen.client_to_server_key(),
            &mut out,
        );
        server.handle_datagram(T0, spoofed, &mut out);
    }
    assert_eq!(server.refusals().get(Refusal::ChallengeInvalid), 199);

    // A genuine challenge fetched at the attacker's real address with a second token does
    // not open the spoofed handshake either (it names the other client id).
    let own = token(101);
    let real = addr(2);
    server.handle_datagram(T0, real, &mut request(&own));
    let (_, mut challenge) = drain(&mut server).pop().unwrap();
    let Ok((
        _,
        Packet::Challenge {
            token_sequence,
            token_data,
        },
    )) = packet::decode(
        &mut challenge,
        PROTOCOL_ID,
        own.server_to_client_key(),
        None,
    )
    else {
        panic!("expected a challenge");
    };
    let mut out = Vec::new();
    Packet::Response {
        token_sequence,
        token_data,
    }
    .encode(500, PROTOCOL_ID, stolen.client_to_server_key(), &mut out);
    server.handle_datagram(T0, spoofed, &mut out);
    assert_eq!(server.refusals().get(Refusal::ChallengeInvalid), 200);
    assert_eq!(server.connected_clients(), 0);
    assert_eq!(server.poll_event(), None);
}

#[test]
fn replayed_packets_are_dropped() {
    let mut server = server(4);
    let from = addr(3);
    let mut client = NetcodeClient::new(0.0, token(7));
    let t = connect(&mut server, &mut client, from, 0.0);
    client.send_payload(b"fire!").unwrap();
    let (_, captured) = drain_client(&mut client).pop().unwrap();
    let mut first = captured.clone();
    assert_eq!(
        server
            .handle_datagram(T0 + t, from, &mut first)
            .unwrap()
            .payload,
        b"fire!"
    );
    for _ in 0..5 {
        let mut again = captured.clone();
        assert!(server.handle_datagram(T0 + t, from, &mut again).is_none());
    }
    assert_eq!(server.refusals().get(Refusal::Replayed), 5);

    // And toward the client: a replayed server payload is delivered once.
    server.send_payload(7, b"boom").unwrap();
    let (_, captured) = drain(&mut server).pop().unwrap();
    let mut first = captured.clone();
    assert_eq!(
        client.handle_datagram(t, server_addr(), &mut first),
        Some(&b"boom"[..])
    );
    let mut again = captured.clone();
    assert_eq!(client.handle_datagram(t, server_addr(), &mut again), None);
    assert_eq!(client.refusals().get(Refusal::Replayed), 1);
    // A replayed disconnect packet from an old session does not close this one.
    assert!(client.is_connected());
}

#[test]
fn token_used_from_another_address_is_refused() {
    let mut server = server(4);
    let token = token(8);
    let mut client = NetcodeClient::new(0.0, token.clone());
    // The attacker captures the client's connection request...
    client.handle_timeout(0.0);
    let captured = drain_client(&mut client).pop().unwrap().1;
    let mut first = captured.clone();
    server.handle_datagram(T0, addr(4), &mut first);
    assert_eq!(drain(&mut server).len(), 1); // the challenge, to the client's address
                                             // ... and replays it from 20 other addresses, while the handshake is pending.
    for i in 5..25 {
        server.handle_datagram(T0, addr(i), &mut captured.clone());
    }
    assert_eq!(server.refusals().get(Refusal::TokenUsedElsewhere), 20);
    assert!(drain(&mut server).is_empty());
    assert_eq!(server.pending_clients(), 1);
    // The client's own address may repeat its request (a lost challenge) and connect.
    let t = connect(&mut server, &mut client, addr(4), 0.0);
    // Once connected, refused from elsewhere (its client id is connected).
    server.handle_datagram(T0 + t, addr(30), &mut captured.clone());
    assert_eq!(server.refusals().get(Refusal::AlreadyConnected), 1);
    assert!(drain(&mut server).iter().all(|(to, _)| *to == addr(4)));
}

#[test]
fn expired_foreign_and_misdirected_tokens_are_refused() {
    let mut server = server(4);
    let from = addr(30);
    let cases: Vec<(ConnectToken, Refusal)> = vec![
        (
            token_with(1, |p| p.create_timestamp = T0 as u64 - 400),
            Refusal::TokenExpired,
        ),
        (
            token_with(2, |p| p.protocol_id = PROTOCOL_ID + 1),
            Refusal::WrongProtocolId,
        ),
        (
            token_with(3, |p| {
                p.server_addresses = vec!["192.0.2.99:40000".parse().unwrap()]
            }),
            Refusal::NotInHostList,
        ),
        (
            ConnectToken::generate(
                &TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64),
                &[1; 32],
            )
            .unwrap(),
            Refusal::TokenInvalid,
        ),
    ];
    for (token, reason) in cases {
        let before = server.refusals().get(reason);
        server.handle_datagram(T0, from, &mut request(&token));
        assert_eq!(server.refusals().get(reason), before + 1, "{reason:?}");
    }
    // Wrong version: the request is refused before anything else is read.
    let mut wrong_version = request(&token(5));
    wrong_version[1 + 10] = b'3'; // "NETCODE 1.03"
    server.handle_datagram(T0, from, &mut wrong_version);
    assert_eq!(server.refusals().get(Refusal::WrongVersion), 1);
    // A tampered expiry no longer decrypts (it is associated data).
    let mut tampered = request(&token(6));
    tampered[22..30].copy_from_slice(&(T0 as u64 + 10_000).to_le_bytes());
    server.handle_datagram(T0, from, &mut tampered);
    assert_eq!(server.refusals().get(Refusal::TokenInvalid), 2);
    assert!(drain(&mut server).is_empty());
    assert_eq!(server.pending_clients(), 0);

    // A client whose token expires before any server answers ends in ConnectTokenExpired.
    let mut client = NetcodeClient::new(
        0.0,
        token_with(10, |p| {
            p.expire_seconds = 2;
            p.timeout_seconds = -1;
        }),
    );
    let mut t = 0.0;
    while client.is_connecting() {
        client.handle_timeout(t);
        drain_client(&mut client);
        t += 0.1;
    }
    assert_eq!(
        client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectTokenExpired)
    );
    assert!((1.9..2.2).contains(&t), "{t}");
    assert_eq!(client.state().code(), -6);
}

#[test]
fn every_length_of_random_and_truncated_packets_is_refused() {
    let mut server = server(4);
    let connected = addr(40);
    let mut client = NetcodeClient::new(0.0, token(40));
    let t = connect(&mut server, &mut client, connected, 0.0);
    while server.poll_event().is_some() {}

    // Valid packets of every type, to truncate.
    let mut valid: Vec<Vec<u8>> = vec![request(&token(41))];
    client.send_payload(&[9; 1200]).unwrap();
    client.handle_timeout(t + 0.5); // keep-alive
    valid.extend(drain_client(&mut client).into_iter().map(|(_, b)| b));
    let mut out = Vec::new();
    Packet::Response {
        token_sequence: 0,
        token_data: &[0; 300],
    }
    .encode(900, PROTOCOL_ID, &[1; 32], &mut out);
    valid.push(out);

    let mut rng = Rng(2);
    let mut sent = 0u64;
    let mut bytes_in_unconnected = 0usize;
    let mut bytes_out_unconnected = 0usize;
    for len in 0..=1300usize {
        for from in [connected, addr(41), addr(42)] {
            let mut random = vec![0u8; len];
            rng.fill(&mut random);
            // Half of them with a plausible prefix (type and sequence length).
            if len > 0 && len % 2 == 0 {
                random[0] = (random[0] & 0x70) | (random[0] % 7);
            }
            let mut datagrams = vec![random];
            for packet in &valid {
                if len < packet.len() {
                    datagrams.push(packet[..len].to_vec());
                }
            }
            for mut datagram in datagrams {
                let n = datagram.len();
                let mut copy = datagram.clone();
                let before = server.refusals().total();
                assert!(server
                    .handle_datagram(T0 + t, from, &mut datagram)
                    .is_none());
                assert_eq!(
                    server.refusals().total(),
                    before + 1,
                    "len {len} not counted"
                );
                sent += 1;
                if from != connected {
                    bytes_in_unconnected += n;
                    bytes_out_unconnected += drain(&mut server)
                        .iter()
                        .map(|(_, b)| b.len())
                        .sum::<usize>();
                }
                // And the client refuses the same bytes from the server's address.
                let before = client.refusals().total();
                assert!(client
                    .handle_datagram(t, server_addr(), &mut copy)
                    .is_none());
                assert_eq!(client.refusals().total(), before + 1);
            }
        }
    }
    assert!(sent > 3 * 1301);
    assert_eq!(bytes_out_unconnected, 0, "random bytes never earn a reply");
    assert!(bytes_in_unconnected > 0);
    assert!(client.is_connected() && server.is_connected(40));
    assert_eq!(server.poll_event(), None);
    // Every check fired somewhere.
    for reason in [
        Refusal::TooSmall,
        Refusal::InvalidPacketType,
        Refusal::WrongSize,
        Refusal::DoesNotDecrypt,
        Refusal::UnknownAddress,
    ] {
        assert!(
            server.refusals().get(reason) > 0,
            "{reason:?} never seen: {:?}",
            server.refusals()
        );
    }
}

#[test]
fn request_flood_from_thousands_of_addresses_has_bounded_memory() {
    let mut server = NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig {
            max_clients: 64,
            max_pending: 256,
            ..ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()])
        },
    )
    .unwrap();
    let idle = server.memory_bytes();
    let mut rng = Rng(3);
    let mut bytes_in = 0usize;
    let mut bytes_out = 0usize;
    let mut flood = |server: &mut NetcodeServer, datagram: &mut Vec<u8>, from: SocketAddr| {
        bytes_in += datagram.len();
        server.handle_datagram(T0, from, datagram);
        for (to, bytes) in drain(server) {
            assert_eq!(to, from);
            assert!(
                bytes.len() < datagram.len(),
                "reply of {} to a {}-byte request",
                bytes.len(),
                datagram.len()
            );
            bytes_out += bytes.len();
        }
    };
    // 1. 3000 junk requests with the right size, version and protocol id: refused at decryption.
    let template = request(&token(0));
    for i in 0..3000 {
        let mut junk = template.clone();
        rng.fill(&mut junk[54..]);
        flood(&mut server, &mut junk, addr(i));
    }
    assert_eq!(server.refusals().get(Refusal::TokenInvalid), 3000);
    let after_junk = server.memory_bytes();
    // 2. One stolen valid token from 3000 addresses: one handshake, the rest refused.
    let stolen = request(&token(1));
    for i in 3000..6000 {
        flood(&mut server, &mut stolen.clone(), addr(i));
    }
    assert_eq!(server.refusals().get(Refusal::TokenUsedElsewhere), 2999);
    // 3. 3000 distinct valid tokens from 3000 addresses that never answer: pending capped.
    for i in 6000..9000u32 {
        flood(
            &mut server,
            &mut request(&token(10_000 + u64::from(i))),
            addr(i),
        );
    }
    // 255 of them, plus the stolen token's handshake.
    assert_eq!(server.pending_clients(), 256);
    assert_eq!(server.refusals().get(Refusal::PendingFull), 3000 - 255);
    let full = server.memory_bytes();
    // A second wave changes nothing.
    for i in 9000..12_000u32 {
        flood(
            &mut server,
            &mut request(&token(20_000 + u64::from(i))),
            addr(i),
        );
    }
    assert_eq!(server.memory_bytes(), full);
    println!("server memory: idle {idle} B, after 3000 junk requests {after_junk} B, under a 9000-address flood {full} B");
    assert_eq!(after_junk, idle, "refused junk takes no memory");
    assert!(full < 256 * 1024, "{full} bytes");
    assert!(bytes_out < bytes_in / 3, "out {bytes_out} in {bytes_in}");
    // Handshakes that never finish are dropped at their timeout.
    server.handle_timeout(T0 + 6.0);
    assert_eq!(server.pending_clients(), 0);
}

#[test]
fn handshake_replies_are_smaller_than_requests() {
    let mut server = server(1);
    let from = addr(50);
    let mut client = NetcodeClient::new(0.0, token(50));
    client.handle_timeout(0.0);
    let (_, mut req) = drain_client(&mut client).pop().unwrap();
    assert_eq!(req.len(), CONNECTION_REQUEST_BYTES);
    server.handle_datagram(T0, from, &mut req);
    let (_, mut challenge) = drain(&mut server).pop().unwrap();
    assert!(challenge.len() <= 1 + 8 + 308 + 16 && challenge.len() < req.len());
    client.handle_datagram(0.0, server_addr(), &mut challenge);
    let (_, mut response) = drain_client(&mut client).pop().unwrap();
    server.handle_datagram(T0, from, &mut response);
    let (_, keep_alive) = drain(&mut server).pop().unwrap();
    assert!(keep_alive.len() < response.len());
    assert!(keep_alive.len() <= MAX_PACKET_BYTES);
}

#[test]
fn full_server_denies() {
    let mut server = server(2);
    let mut t = 0.0;
    for i in 0..2 {
        let mut client = NetcodeClient::new(t, token(60 + i));
        t = connect(&mut server, &mut client, addr(60 + i as u32), t);
    }
    assert_eq!(server.connected_clients(), 2);
    let mut third = NetcodeClient::new(t, token(62));
    let from = addr(62);
    while third.is_connecting() {
        third.handle_timeout(t);
        for (_, mut bytes) in drain_client(&mut third) {
            let n = bytes.len();
            server.handle_datagram(T0 + t, from, &mut bytes);
            for (to, mut reply) in drain(&mut server) {
                if to == from {
                    assert!(reply.len() < n);
                    third.handle_datagram(t, server_addr(), &mut reply);
                }
            }
        }
        t += 0.01;
    }
    assert_eq!(
        third.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionDenied)
    );
    assert_eq!(third.state().code(), -1);
    assert_eq!(server.connected_clients(), 2);
    assert!(matches!(
        server.poll_event(),
        Some(NetcodeEvent::ClientConnected { client_id: 60, .. })
    ));
}

#[test]
fn client_refuses_other_sources_and_forgeries() {
    let mut server = server(2);
    let mut client = NetcodeClient::new(0.0, token(70));
    let t = connect(&mut server, &mut client, addr(70), 0.0);
    server.send_payload(70, b"real").unwrap();
    let (_, real) = drain(&mut server).pop().unwrap();
    // The same bytes from another address: refused before decryption.
    assert_eq!(
        client.handle_datagram(t, addr(999), &mut real.clone()),
        None
    );
    assert_eq!(client.refusals().get(Refusal::WrongSource), 1);
    // A forged disconnect (right prefix, wrong key) does not disconnect.
    let mut forged = Vec::new();
    Packet::Disconnect.encode(1 << 40, PROTOCOL_ID, &[3; 32], &mut forged);
    assert_eq!(client.handle_datagram(t, server_addr(), &mut forged), None);
    assert_eq!(client.refusals().get(Refusal::DoesNotDecrypt), 1);
    assert!(client.is_connected());
    assert_eq!(
        client.handle_datagram(t, server_addr(), &mut real.clone()),
        Some(&b"real"[..])
    );
}
