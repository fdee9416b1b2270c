//! A recorded session replayed after it ended: over real loopback UDP through a relay, and
//! at the sans-IO level. A client connects, sends 20 reliable messages and disconnects; an
//! attacker who saw its datagrams sends them again from the client's address and port (the
//! relay's, as the server sees it) while the token is still valid. The server must not
//! report the client connected again nor deliver the 20 messages a second time: a new
//! session under the same token refuses every sequence the old one used.

mod netcode_support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netcode_support::{protocol, token_params, Relay};
use netser::NetSerialize;
use netser_transport::netcode::{
    generate_key, ClientState, ConnectToken, NetcodeClient, NetcodeEvent, NetcodeServer, Refusal,
    ServerConfig, TokenParams,
};
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpServer, UdpServerConfig, UdpServerEvent,
};

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Msg {
    Line(#[net(range = 0..=1000)] u32),
}

type Server = UdpServer<Msg, Msg>;
type Client = UdpClient<Msg, Msg>;

const RELIABLE: u8 = 0;

fn frame(server: &mut Server, events: &mut Vec<UdpServerEvent<Msg>>, relay: &mut Relay) {
    relay.pump();
    server.receive();
    while let Some(e) = server.poll_event() {
        events.push(e);
    }
    server.transmit();
    std::thread::sleep(Duration::from_micros(500));
}

fn connects(events: &[UdpServerEvent<Msg>]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, UdpServerEvent::ClientConnected { .. }))
        .count()
}

fn messages(events: &[UdpServerEvent<Msg>]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, UdpServerEvent::Message { .. }))
        .count()
}

#[test]
fn a_recorded_session_replayed_over_udp_opens_no_ghost_session() {
    let key = generate_key().unwrap();
    let mut server: Server =
        UdpServer::bind("127.0.0.1:0", &protocol(), UdpServerConfig::new(key)).unwrap();
    let mut relay = Relay::new(server.local_addr());
    // The client is given the relay's address; the server knows itself by its own.
    let params = TokenParams {
        timeout_seconds: 5,
        internal_server_addresses: vec![server.local_addr()],
        ..token_params(
            &protocol::<Msg, Msg>(),
            relay.front.local_addr().unwrap(),
            77,
        )
    };
    let token = ConnectToken::generate(&params, &key).unwrap();
    let mut client: Client =
        UdpClient::connect(token, &protocol(), UdpClientConfig::default()).unwrap();
    let mut events = Vec::new();

    // The session: connect, 20 reliable messages, disconnect.
    let start = Instant::now();
    let mut sent = 0;
    while messages(&events) < 20 {
        assert!(start.elapsed() < Duration::from_secs(10), "session stalled");
        client.receive();
        while client.poll_event().is_some() {}
        if client.is_connected() && sent < 20 {
            client.send_message(RELIABLE, &Msg::Line(sent)).unwrap();
            sent += 1;
        }
        client.transmit();
        frame(&mut server, &mut events, &mut relay);
    }
    client.disconnect();
    let start = Instant::now();
    while server.connected_clients() > 0 {
        assert!(start.elapsed() < Duration::from_secs(5), "no disconnect");
        frame(&mut server, &mut events, &mut relay);
    }
    drop(client);
    assert_eq!(connects(&events), 1);
    assert_eq!(messages(&events), 20);
    let recorded = std::mem::take(&mut relay.recorded);
    assert!(recorded.len() > 20, "{} datagrams recorded", recorded.len());

    // The replay, from the client's address as the server saw it, at 5 ms intervals.
    events.clear();
    for datagram in &recorded {
        relay.back.send_to(datagram, relay.server).unwrap();
        for _ in 0..10 {
            frame(&mut server, &mut events, &mut relay);
        }
    }
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(300) {
        frame(&mut server, &mut events, &mut relay);
    }
    assert_eq!(connects(&events), 0, "a ghost session: {events:?}");
    assert_eq!(messages(&events), 0, "old messages delivered again");
    assert_eq!(server.connected_clients(), 0);
    assert!(server.netcode().refusals().get(Refusal::Replayed) > 0);
}

/// The same at the sans-IO level, and the client's own way back in with the same token
/// ([`NetcodeClient::reconnect`]) still works after the replay was refused.
#[test]
fn a_recorded_session_replayed_sans_io_opens_no_ghost_session() {
    const T0: f64 = 1_700_000_000.0;
    let key = [5u8; 32];
    let server_addr: SocketAddr = "192.0.2.1:40000".parse().unwrap();
    let client_addr: SocketAddr = "198.51.100.1:50000".parse().unwrap();
    let mut server = NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig::new(1, key, vec![server_addr]),
    )
    .unwrap();
    let params = TokenParams {
        client_id: 9,
        ..TokenParams::new(1, vec![server_addr], T0 as u64)
    };
    let mut client = NetcodeClient::new(0.0, ConnectToken::generate(&params, &key).unwrap());
    let mut recorded: Vec<Vec<u8>> = Vec::new();
    let mut t = 0.0;
    let mut delivered = 0;
    let step = |client: &mut NetcodeClient,
                server: &mut NetcodeServer,
                t: f64,
                recorded: &mut Vec<Vec<u8>>|
     -> usize {
        let mut out = Vec::new();
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            out.push(transmit.data.to_vec());
        }
        let mut payloads = 0;
        for bytes in out {
            recorded.push(bytes.clone());
            let mut bytes = bytes;
            payloads += usize::from(
                server
                    .handle_datagram(T0 + t, client_addr, &mut bytes)
                    .is_some(),
            );
        }
        server.handle_timeout(T0 + t);
        let mut back = Vec::new();
        while let Some(transmit) = server.poll_transmit() {
            back.push(transmit.data.to_vec());
        }
        for mut bytes in back {
            client.handle_datagram(t, server_addr, &mut bytes);
        }
        payloads
    };
    while !client.is_connected() {
        delivered += step(&mut client, &mut server, t, &mut recorded);
        t += 0.05;
    }
    for i in 0..20u8 {
        client.send_payload(&[i; 40]).unwrap();
        delivered += step(&mut client, &mut server, t, &mut recorded);
        t += 0.05;
    }
    client.disconnect();
    delivered += step(&mut client, &mut server, t, &mut recorded);
    assert_eq!(delivered, 20);
    assert_eq!(server.connected_clients(), 0);
    while server.poll_event().is_some() {}

    // Replayed twice over, from the client's address.
    let mut replayed = 0;
    for _ in 0..2 {
        for datagram in &recorded {
            t += 0.01;
            let mut bytes = datagram.clone();
            replayed += usize::from(
                server
                    .handle_datagram(T0 + t, client_addr, &mut bytes)
                    .is_some(),
            );
            server.handle_timeout(T0 + t);
        }
    }
    assert_eq!(replayed, 0, "old payloads delivered again");
    assert_eq!(server.connected_clients(), 0);
    assert!(
        !std::iter::from_fn(|| server.poll_event())
            .any(|e| matches!(e, NetcodeEvent::ClientConnected { .. })),
        "a ghost session"
    );
    assert!(server.refusals().get(Refusal::Replayed) > 0);

    // The real client comes back with the same token: its sequence continues, so it is
    // told apart from the recording and connects.
    client.reconnect(t);
    let mut sink = Vec::new();
    let start = t;
    while client.state() != ClientState::Connected {
        assert!(t - start < 2.0, "{:?}", client.state());
        step(&mut client, &mut server, t, &mut sink);
        t += 0.05;
    }
    client.send_payload(b"new").unwrap();
    assert_eq!(step(&mut client, &mut server, t, &mut sink), 1);
}
