//! Snapshots and entity sets through `UdpServer` and `UdpClient` over loopback sockets,
//! with the driver's simulator adding loss and latency: every snapshot a client decodes
//! is the server's of that tick, deltas flow once acked, entity sets converge.

mod snapshot_support;

use std::time::{Duration, Instant, SystemTime};

use netser_transport::netcode::{generate_key, ConnectToken, Key, TokenParams};
use netser_transport::simulator::SimulatorConfig;
use netser_transport::snapshot::EntityConfig;
use netser_transport::udp::{UdpClient, UdpClientConfig, UdpConfig, UdpServer, UdpServerConfig};
use snapshot_support::{Body, World, WorldGen, SLOTS};

/// The protocol these tests speak: `u8` messages each way, snapshots of `S`, the default
/// connection settings.
fn protocol<S: netser::NetDelta>() -> netser_transport::netcode::Protocol<u8, u8, S> {
    netser_transport::netcode::Protocol::with_connection(
        netser_transport::connection::ConnectionConfig::default(),
    )
}

fn lossy(seed: u64) -> UdpConfig {
    UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency: 0.02,
            loss: 0.05,
            seed,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    }
}

fn pair<S: netser::NetDelta + PartialEq + Clone>(
    key: Key,
) -> (UdpServer<u8, u8, S>, UdpClient<u8, u8, S>) {
    let config = UdpServerConfig {
        udp: lossy(1),
        ..UdpServerConfig::new(key)
    };
    let protocol = protocol::<S>();
    let server = UdpServer::bind("127.0.0.1:0", &protocol, config).unwrap();
    let params = TokenParams {
        client_id: 1,
        ..protocol.token_params(vec![server.local_addr()], SystemTime::now())
    };
    let token = ConnectToken::generate(&params, &key).unwrap();
    let config = UdpClientConfig { udp: lossy(2) };
    (
        server,
        UdpClient::connect(token, &protocol, config).unwrap(),
    )
}

/// One frame: the client receives and sends, the server receives, `send` runs, the
/// server sends; then a little sleep.
fn frame<S: netser::NetDelta + PartialEq + Clone>(
    server: &mut UdpServer<u8, u8, S>,
    client: &mut UdpClient<u8, u8, S>,
    send: impl FnOnce(&mut UdpServer<u8, u8, S>),
) {
    client.receive();
    while client.poll_event().is_some() {}
    client.transmit();
    server.receive();
    while server.poll_event().is_some() {}
    send(server);
    server.transmit();
    std::thread::sleep(Duration::from_millis(2));
}

#[test]
fn snapshots_over_udp() {
    let (mut server, mut client) = pair::<World>(generate_key().unwrap());
    let start = Instant::now();
    while server.connected_clients() == 0 {
        frame(&mut server, &mut client, |_| {});
        assert!(start.elapsed() < Duration::from_secs(10), "connects");
    }
    let mut gen = WorldGen::new(4);
    let mut worlds = std::collections::HashMap::new();
    let mut checked = 0;
    for _ in 0..300 {
        let world = gen.step().clone();
        worlds.insert(world.tick, world.clone());
        frame(&mut server, &mut client, |s| {
            s.push_snapshot(world);
            s.send_snapshot_to_all().unwrap();
        });
        if let Some((_, decoded)) = client.poll_snapshot() {
            assert_eq!(decoded, &worlds[&decoded.tick]);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} checked");
    let stats = server.snapshot_stats(1).unwrap();
    assert!(stats.delta_sent > stats.absolute_sent, "{stats:?}");
    let counters = client.snapshot_counters();
    assert_eq!(counters.unknown_baseline + counters.malformed, 0);
}

#[test]
fn entities_over_udp() {
    let (mut server, mut client) = pair::<Body>(generate_key().unwrap());
    let config = EntityConfig {
        max_entities: SLOTS,
        packet_budget: 200,
        ..EntityConfig::default()
    };
    server.set_entity_config(config.clone()).unwrap();
    client.set_entity_config(config).unwrap();
    let start = Instant::now();
    while server.connected_clients() == 0 {
        frame(&mut server, &mut client, |_| {});
        assert!(start.elapsed() < Duration::from_secs(10), "connects");
    }
    let mut gen = WorldGen::new(6);
    for _ in 0..200 {
        let world = gen.step().clone();
        frame(&mut server, &mut client, |s| {
            s.send_entities_to_all(&world.bodies, |_, _, _| 1.0)
                .unwrap();
        });
    }
    let still = gen.world.clone();
    let start = Instant::now();
    loop {
        frame(&mut server, &mut client, |s| {
            s.send_entities_to_all(&still.bodies, |_, _, _| 1.0)
                .unwrap();
        });
        let done = (0..SLOTS).all(|id| client.entity(id) == still.bodies[id].as_ref());
        if done && server.entity_stats(1).unwrap().pending == 0 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "converges");
    }
    assert_eq!(client.entity_counters().unwrap().unknown_baseline, 0);
}
