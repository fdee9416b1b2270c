//! Messages through a connected pair, netser's `Connection` and renet 2.x's
//! `RenetClient`/`RenetServer` core side by side in one run, driven without sockets on
//! a lossless in-memory link: the client sends a frame of small game messages on a
//! reliable-ordered channel, the server takes them and answers with its acks.
//! renet carries bytes, so its messages are serialized with bitcode (as its users do).
//!
//! Prints wire bytes per message (client -> server datagrams, lossless, one frame at a
//! time) and measures messages per second. `cargo bench -p netser-transport --bench channels`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use renet::{DefaultChannel, RenetClient, RenetServer};

/// A game event: who, what, where.
#[derive(NetSerialize, bitcode::Encode, bitcode::Decode, Debug, Clone, PartialEq)]
struct GameEvent {
    #[net(range = 0..=4095)]
    entity: u16,
    #[net(range = 0..=15)]
    kind: u8,
    #[net(quantize(min = -1024.0, max = 1024.0, res = 0.01))]
    x: f32,
    #[net(quantize(min = -1024.0, max = 1024.0, res = 0.01))]
    y: f32,
    #[net(range = 0..=100)]
    amount: u8,
}

const MESSAGES_PER_FRAME: usize = 256;
const FRAME: f64 = 1.0 / 60.0;
const RELIABLE_ORDERED: u8 = 1;

fn event(i: usize) -> GameEvent {
    GameEvent {
        entity: (i * 37 % 4096) as u16,
        kind: (i % 16) as u8,
        x: (i % 2000) as f32 * 0.5 - 500.0,
        y: 100.25,
        amount: (i % 101) as u8,
    }
}

/// The same channel list as renet's default: unreliable, reliable-ordered, reliable-unordered.
fn netser_pair() -> (Connection<GameEvent>, Connection<GameEvent>) {
    let config = ConnectionConfig {
        // renet's default budget is 60 000 bytes per tick: no budget limit either way.
        bandwidth: 1e9,
        ..ConnectionConfig::with_channels(vec![
            ChannelConfig::new(ChannelKind::Unreliable),
            ChannelConfig::reliable_ordered(),
            ChannelConfig::reliable_unordered(),
        ])
    };
    (
        Connection::new(0.0, config.clone()).unwrap(),
        Connection::new(0.0, config).unwrap(),
    )
}

/// One frame through netser; returns (messages received, client -> server bytes).
fn netser_frame(
    client: &mut Connection<GameEvent>,
    server: &mut Connection<GameEvent>,
    messages: &[GameEvent],
    now: f64,
) -> (usize, usize) {
    for message in messages {
        client.send_message(RELIABLE_ORDERED, message).unwrap();
    }
    let mut bytes = 0;
    client.handle_timeout(now);
    while let Some(datagram) = client.poll_transmit(now) {
        bytes += datagram.len();
        // Direct delivery: the datagram is copied as a socket would.
        let datagram = datagram.to_vec();
        server.handle_datagram(now, &datagram).unwrap();
    }
    let mut received = 0;
    while let Some(message) = server.receive_message(RELIABLE_ORDERED) {
        black_box(&message);
        received += 1;
    }
    server.handle_timeout(now);
    while let Some(datagram) = server.poll_transmit(now) {
        let datagram = datagram.to_vec();
        client.handle_datagram(now, &datagram).unwrap();
    }
    (received, bytes)
}

fn renet_pair() -> (RenetClient, RenetServer) {
    let config = renet::ConnectionConfig::default();
    let mut server = RenetServer::new(config.clone());
    let mut client = RenetClient::new(config);
    server.add_connection(1);
    client.set_connected();
    (client, server)
}

/// One frame through renet with bitcode; returns (messages received, client -> server bytes).
fn renet_frame(
    client: &mut RenetClient,
    server: &mut RenetServer,
    messages: &[GameEvent],
) -> (usize, usize) {
    let dt = Duration::from_secs_f64(FRAME);
    for message in messages {
        client.send_message(DefaultChannel::ReliableOrdered, bitcode::encode(message));
    }
    client.update(dt);
    let mut bytes = 0;
    for packet in client.get_packets_to_send() {
        bytes += packet.len();
        server.process_packet_from(&packet, 1).unwrap();
    }
    server.update(dt);
    let mut received = 0;
    while let Some(message) = server.receive_message(1, DefaultChannel::ReliableOrdered) {
        let event: GameEvent = bitcode::decode(&message).unwrap();
        black_box(&event);
        received += 1;
    }
    for packet in server.get_packets_to_send(1).unwrap() {
        client.process_packet(&packet);
    }
    (received, bytes)
}

fn report_wire_bytes() {
    let messages: Vec<GameEvent> = (0..MESSAGES_PER_FRAME).map(event).collect();
    let (mut c, mut s) = netser_pair();
    let (mut rc, mut rs) = renet_pair();
    let (mut netser_bytes, mut renet_bytes, mut netser_got, mut renet_got) = (0, 0, 0, 0);
    for frame in 0..120 {
        let (got, bytes) = netser_frame(&mut c, &mut s, &messages, f64::from(frame) * FRAME);
        netser_got += got;
        netser_bytes += bytes;
        let (got, bytes) = renet_frame(&mut rc, &mut rs, &messages);
        renet_got += got;
        renet_bytes += bytes;
    }
    let netser_per = netser_bytes as f64 / netser_got as f64;
    let renet_per = renet_bytes as f64 / renet_got as f64;
    println!(
        "wire bytes per message ({MESSAGES_PER_FRAME} per frame, lossless): netser {netser_per:.2} ({netser_got} messages), renet+bitcode {renet_per:.2} ({renet_got} messages), ratio renet/netser {:.2}",
        renet_per / netser_per
    );
    let one = event(7);
    println!(
        "one message alone: netser {} bits, bitcode {} bytes",
        one.measure_bits().unwrap(),
        bitcode::encode(&one).len()
    );
}

fn channels(c: &mut Criterion) {
    report_wire_bytes();
    let messages: Vec<GameEvent> = (0..MESSAGES_PER_FRAME).map(event).collect();
    let mut group = c.benchmark_group("reliable_ordered_pair");
    group.throughput(Throughput::Elements(MESSAGES_PER_FRAME as u64));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));

    let (mut client, mut server) = netser_pair();
    let mut now = 0.0;
    group.bench_function("netser", |b| {
        b.iter(|| {
            now += FRAME;
            let (got, _) = netser_frame(&mut client, &mut server, &messages, now);
            assert_eq!(got, MESSAGES_PER_FRAME);
        })
    });

    let (mut client, mut server) = renet_pair();
    group.bench_function("renet_bitcode", |b| {
        b.iter(|| {
            let (got, _) = renet_frame(&mut client, &mut server, &messages);
            assert_eq!(got, MESSAGES_PER_FRAME);
        })
    });
    group.finish();
}

criterion_group!(benches, channels);
criterion_main!(benches);
