//! Messages through a connected pair, netser's `Connection` and renet 2.x's
//! `RenetClient`/`RenetServer` core side by side in one run, driven without sockets on
//! a lossless in-memory link: the client sends a frame of small game messages on a
//! reliable-ordered channel, the server takes them and answers with its acks.
//! renet carries bytes, so its messages are serialized with bitcode (as its users do).
//!
//! Prints wire bytes per message (client -> server datagrams, lossless, one frame at a
//! time) and measures messages per second. `cargo bench -p netser-transport --bench channels`.
//!
//! First it prints the two libraries' figures on the same lossy link (see
//! [`figures`]): reliable-ordered delay in round trips and wire bytes per payload byte
//! at 0%, 5% and 25% loss, and messages delivered in 300 s under yojimbo's soak profile
//! at the same byte budget. `cargo bench -p netser-transport --bench channels -- figures`
//! prints them alone (no timed case has that name).

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
        // renet's server answers each frame's messages in the same frame; so does this
        // one (with the default 50 ms ack delay the client's queue of 1,024 fills: 256
        // messages a frame wait three frames for their acks).
        ack_delay: 0.0,
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

/// netser and renet on the same lossy link (the seeded simulator), both sans-IO at 60 Hz.
///
/// - Delay: one reliable-ordered message of 32 payload bytes a tick each way (or, one
///   way, from the client only: the server only acks), 50 ms each way (a 100 ms round
///   trip), 0%, 5% and 25% loss, 300 simulated seconds; the delay from `send_message`
///   to `receive_message`, in round trips, and every datagram's bytes both ways per
///   payload byte sent. The simulator delivers a datagram at its send time plus 50 ms,
///   compared in floating point with frame times: a fifth to two fifths of them
///   (varying along the run) fall a hair after the third frame and are taken in at
///   the fourth, a frame of jitter each way, as a game polling once a frame sees.
/// - Goodput: yojimbo's soak profile (1 s latency and 100 ms jitter each way, 25% loss,
///   25% duplicates); the client sends as many reliable-ordered messages as its library
///   takes (32 payload bytes, every 64th one 4 KiB), the server takes them every tick;
///   messages delivered in 300 s, both at a budget of 256,000 bytes a second (netser's
///   default `bandwidth`; renet's `available_bytes_per_tick` of 4,266 at 60 Hz).
///
/// renet's channel resends after 100 ms (its default is 300 ms); its messages are
/// bitcode, netser's its own encoding of the same struct.
mod figures {
    use std::time::Duration;

    use netser::NetSerialize;
    use netser_transport::channel::ChannelConfig;
    use netser_transport::connection::{Connection, ConnectionConfig};
    use netser_transport::simulator::{Simulator, SimulatorConfig};
    use renet::{RenetClient, RenetServer};

    const TICK: f64 = 1.0 / 60.0;
    const BUDGET: f64 = 256_000.0;
    const CLIENT: u64 = 1;

    /// A message: its id and its bytes.
    #[derive(NetSerialize, bitcode::Encode, bitcode::Decode, Debug, Clone, PartialEq)]
    pub struct Payload {
        id: u32,
        #[net(max_len = 8192)]
        bytes: Vec<u8>,
    }

    impl Payload {
        fn new(id: u32, len: usize) -> Self {
            Self {
                id,
                bytes: (0..len).map(|i| (i as u32 ^ id) as u8).collect(),
            }
        }

        /// Payload bytes: the id and the bytes.
        fn size(&self) -> usize {
            4 + self.bytes.len()
        }
    }

    /// One library's connected pair: side 0 the client, side 1 the server.
    trait Pair {
        /// Queues a reliable-ordered message; `false` if the library takes no more now.
        fn send(&mut self, side: usize, message: &Payload) -> bool;
        /// Runs the side's timers and returns what it sends at `now`.
        fn transmit(&mut self, side: usize, now: f64, out: &mut Vec<Vec<u8>>);
        fn handle(&mut self, side: usize, now: f64, datagram: &[u8]);
        fn take(&mut self, side: usize) -> Option<Payload>;
    }

    struct Netser([Connection<Payload>; 2]);

    impl Netser {
        fn new() -> Self {
            let config = ConnectionConfig {
                bandwidth: BUDGET,
                ..ConnectionConfig::with_channels(vec![ChannelConfig::reliable_ordered()])
            };
            Self([
                Connection::new(0.0, config.clone()).unwrap(),
                Connection::new(0.0, config).unwrap(),
            ])
        }
    }

    impl Pair for Netser {
        fn send(&mut self, side: usize, message: &Payload) -> bool {
            self.0[side].send_message(0, message).is_ok()
        }
        fn transmit(&mut self, side: usize, now: f64, out: &mut Vec<Vec<u8>>) {
            self.0[side].handle_timeout(now);
            while let Some(datagram) = self.0[side].poll_transmit(now) {
                out.push(datagram.to_vec());
            }
        }
        fn handle(&mut self, side: usize, now: f64, datagram: &[u8]) {
            let _ = self.0[side].handle_datagram(now, datagram);
        }
        fn take(&mut self, side: usize) -> Option<Payload> {
            self.0[side].receive_message(0)
        }
    }

    struct Renet {
        client: RenetClient,
        server: RenetServer,
    }

    impl Renet {
        fn new() -> Self {
            let channels = vec![renet::ChannelConfig {
                channel_id: 0,
                max_memory_usage_bytes: 5 * 1024 * 1024,
                send_type: renet::SendType::ReliableOrdered {
                    resend_time: Duration::from_millis(100),
                },
            }];
            let config = renet::ConnectionConfig {
                available_bytes_per_tick: (BUDGET * TICK) as u64,
                server_channels_config: channels.clone(),
                client_channels_config: channels,
            };
            let mut server = RenetServer::new(config.clone());
            let mut client = RenetClient::new(config);
            server.add_connection(CLIENT);
            client.set_connected();
            Self { client, server }
        }
    }

    impl Pair for Renet {
        fn send(&mut self, side: usize, message: &Payload) -> bool {
            let bytes = bitcode::encode(message);
            if side == 0 {
                if !self.client.can_send_message(0, bytes.len()) {
                    return false;
                }
                self.client.send_message(0, bytes);
            } else {
                if !self.server.can_send_message(CLIENT, 0, bytes.len()) {
                    return false;
                }
                self.server.send_message(CLIENT, 0, bytes);
            }
            true
        }
        fn transmit(&mut self, side: usize, _now: f64, out: &mut Vec<Vec<u8>>) {
            let tick = Duration::from_secs_f64(TICK);
            if side == 0 {
                self.client.update(tick);
                out.extend(self.client.get_packets_to_send());
            } else {
                self.server.update(tick);
                out.extend(self.server.get_packets_to_send(CLIENT).unwrap());
            }
        }
        fn handle(&mut self, side: usize, _now: f64, datagram: &[u8]) {
            if side == 0 {
                self.client.process_packet(datagram);
            } else {
                self.server.process_packet_from(datagram, CLIENT).unwrap();
            }
        }
        fn take(&mut self, side: usize) -> Option<Payload> {
            let bytes = if side == 0 {
                self.client.receive_message(0)
            } else {
                self.server.receive_message(CLIENT, 0)
            }?;
            Some(bitcode::decode(&bytes).unwrap())
        }
    }

    pub struct Run {
        pub p50: f64,
        pub p99: f64,
        pub wire_per_payload: f64,
        pub delivered: usize,
    }

    /// `seconds` of traffic, ticking both sides at 60 Hz: one 32-byte message a tick
    /// (from the client only unless `both_ways`), then 60 s for everything to arrive;
    /// or, `saturate`d, as many as the library takes (every 64th of 4 KiB) and no more
    /// time after.
    fn run(
        pair: &mut dyn Pair,
        link: SimulatorConfig,
        seconds: f64,
        both_ways: bool,
        saturate: bool,
    ) -> Run {
        let mut net: Simulator = Simulator::new(link);
        let rtt = 2.0 * net.config().latency;
        let mut sent_at: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut next = [0u32; 2];
        let mut delays = Vec::new();
        let (mut wire, mut payload) = (0usize, 0usize);
        let mut out = Vec::new();
        let frames = (seconds / TICK).round() as u32;
        let sides = if both_ways { 2 } else { 1 };
        for frame in 0..frames + if saturate { 0 } else { 3600 } {
            let now = f64::from(frame) * TICK;
            while let Some(delivery) = net.receive(now) {
                pair.handle(delivery.to as usize, now, &delivery.data);
            }
            for side in 0..2 {
                while let Some(message) = pair.take(side) {
                    let from = 1 - side;
                    assert_eq!(message.id, next[from], "in order, exactly once");
                    next[from] += 1;
                    delays.push(now - sent_at[from][message.id as usize]);
                }
            }
            for (side, sent_at) in sent_at.iter_mut().enumerate() {
                if frame < frames && side < sides {
                    loop {
                        let id = sent_at.len() as u32;
                        let len = if saturate && id % 64 == 63 { 4096 } else { 28 };
                        let message = Payload::new(id, len);
                        if !pair.send(side, &message) {
                            break;
                        }
                        sent_at.push(now);
                        payload += message.size();
                        if !saturate {
                            break;
                        }
                    }
                }
                out.clear();
                pair.transmit(side, now, &mut out);
                for datagram in &out {
                    wire += datagram.len();
                    net.send(now, side as u32, 1 - side as u32, datagram);
                }
            }
        }
        if !saturate {
            assert_eq!(delays.len(), sent_at[0].len() + sent_at[1].len());
        }
        delays.sort_by(f64::total_cmp);
        let at = |p: f64| {
            delays
                .get(((delays.len().max(1) - 1) as f64 * p).round() as usize)
                .map_or(f64::NAN, |d| d / rtt)
        };
        Run {
            p50: at(0.5),
            p99: at(0.99),
            wire_per_payload: wire as f64 / payload as f64,
            delivered: delays.len(),
        }
    }

    /// The delay link: 50 ms each way.
    pub fn delay_link(loss: f64) -> SimulatorConfig {
        SimulatorConfig {
            latency: 0.05,
            loss,
            seed: 1234,
            ..SimulatorConfig::default()
        }
    }

    /// yojimbo's soak profile, each way.
    pub fn yojimbo_link() -> SimulatorConfig {
        SimulatorConfig {
            latency: 1.0,
            jitter: 0.1,
            loss: 0.25,
            duplicate: 0.25,
            max_in_flight: 1 << 20,
            seed: 4321,
            ..SimulatorConfig::default()
        }
    }

    pub fn netser_delay(loss: f64, both_ways: bool) -> Run {
        run(
            &mut Netser::new(),
            delay_link(loss),
            300.0,
            both_ways,
            false,
        )
    }

    pub fn renet_delay(loss: f64, both_ways: bool) -> Run {
        run(&mut Renet::new(), delay_link(loss), 300.0, both_ways, false)
    }

    pub fn netser_goodput() -> Run {
        run(&mut Netser::new(), yojimbo_link(), 300.0, false, true)
    }

    pub fn renet_goodput() -> Run {
        run(&mut Renet::new(), yojimbo_link(), 300.0, false, true)
    }

    pub fn report() {
        println!("reliable-ordered, same link, 60 Hz, 100 ms RTT, 32-byte messages a tick each way (one way: from the client, the server only acks), 300 s:");
        println!("| loss | netser p50 / p99 (RTT) | renet p50 / p99 (RTT) | netser / renet wire bytes per payload byte |");
        println!("|---:|---:|---:|---:|");
        for (loss, both_ways) in [
            (0.0, true),
            (0.05, true),
            (0.25, true),
            (0.05, false),
            (0.25, false),
        ] {
            let n = netser_delay(loss, both_ways);
            let r = renet_delay(loss, both_ways);
            println!(
                "| {:.0}%{} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} |",
                loss * 100.0,
                if both_ways { "" } else { ", one way" },
                n.p50,
                n.p99,
                r.p50,
                r.p99,
                n.wire_per_payload,
                r.wire_per_payload
            );
        }
        let n = netser_goodput();
        let r = renet_goodput();
        println!("yojimbo's soak profile, 300 s, 256,000 bytes/s budget, one way, saturated:");
        println!(
            "  messages delivered: netser {} ({:.2} wire bytes per payload byte), renet {} ({:.2})",
            n.delivered, n.wire_per_payload, r.delivered, r.wire_per_payload
        );
    }
}

fn channels(c: &mut Criterion) {
    figures::report();
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
