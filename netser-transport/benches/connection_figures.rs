//! Figures for the connection, printed (not timed): wire bytes per payload byte at 0%,
//! 5% and 25% loss; median and 99th percentile delivery delay of reliable-ordered
//! messages in round trips; the memory bound per connection with every queue full.
//!
//! Workload: a 60 Hz game loop on both sides; each frame each side sends 10 small game
//! events (about 6 bytes each) on a reliable-ordered channel and one 40-byte input on an
//! unreliable-sequenced channel, through the seeded simulator with 50 ms one-way latency
//! and 5 ms jitter (a 100 ms round trip), for 60 simulated seconds.
//! `cargo bench -p netser-transport --bench connection_figures`.

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Message {
    Event {
        #[net(range = 0..=1_000_000)]
        id: u32,
        #[net(range = 0..=4095)]
        entity: u16,
        #[net(quantize(min = -1024.0, max = 1024.0, res = 0.01))]
        x: f32,
    },
    Input(#[net(max_len = 64)] Vec<u8>),
}

const FRAME: f64 = 1.0 / 60.0;
const LATENCY: f64 = 0.05;

fn config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
    ])
}

struct Run {
    wire_bytes: usize,
    payload_bits: u64,
    delays: Vec<f64>,
    sent: u32,
    delivered: u32,
}

fn run(loss: f64, seconds: f64) -> Run {
    let mut net: Simulator = Simulator::new(SimulatorConfig {
        latency: LATENCY,
        jitter: 0.005,
        loss,
        seed: 99,
        ..SimulatorConfig::default()
    });
    let mut sides: [Connection<Message>; 2] = [
        Connection::new(0.0, config()).unwrap(),
        Connection::new(0.0, config()).unwrap(),
    ];
    let mut sent_at: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut next_expected = [0u32; 2];
    let mut result = Run {
        wire_bytes: 0,
        payload_bits: 0,
        delays: Vec::new(),
        sent: 0,
        delivered: 0,
    };
    let mut now = 0.0;
    let frames = (seconds / FRAME) as u32;
    // Send for `seconds`, then let everything arrive.
    for frame in 0..frames + 600 {
        for (i, side) in sides.iter_mut().enumerate() {
            if frame < frames {
                for k in 0..10u32 {
                    let id = sent_at[i].len() as u32;
                    let event = Message::Event {
                        id,
                        entity: ((id * 7 + k) % 4096) as u16,
                        x: (id % 1000) as f32 * 0.25,
                    };
                    result.payload_bits += event.measure_bits().unwrap();
                    side.send_message(0, &event).unwrap();
                    sent_at[i].push(now);
                    result.sent += 1;
                }
                let input = Message::Input(vec![frame as u8; 40]);
                result.payload_bits += input.measure_bits().unwrap();
                side.send_message(1, &input).unwrap();
            }
            side.handle_timeout(now);
            while let Some(datagram) = side.poll_transmit(now) {
                result.wire_bytes += datagram.len();
                net.send(now, i as u32, 1 - i as u32, datagram);
            }
        }
        while let Some(delivery) = net.receive(now) {
            let _ = sides[delivery.to as usize].handle_datagram(now, &delivery.data);
        }
        for (i, side) in sides.iter_mut().enumerate() {
            let from = 1 - i;
            while let Some(message) = side.receive_message(0) {
                let Message::Event { id, .. } = message else {
                    panic!("events only on channel 0")
                };
                assert_eq!(id, next_expected[i], "in order");
                next_expected[i] += 1;
                result.delays.push(now - sent_at[from][id as usize]);
                result.delivered += 1;
            }
            while side.receive_message(1).is_some() {}
        }
        now += FRAME;
    }
    assert_eq!(
        result.delivered, result.sent,
        "every reliable message arrives"
    );
    result
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    // `cargo test --benches` runs bench targets with `--bench`-less arguments; keep it short then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let seconds = if quick { 5.0 } else { 60.0 };
    let rtt = 2.0 * LATENCY;
    println!("connection figures: 60 Hz, 10 events + 1 input per frame per side, {rtt:.3} s RTT, {seconds} s");
    for loss in [0.0, 0.05, 0.25] {
        let mut r = run(loss, seconds);
        r.delays.sort_by(f64::total_cmp);
        let payload_bytes = r.payload_bits as f64 / 8.0;
        println!(
            "  loss {:>2.0}%: wire bytes per payload byte {:.3}; reliable delay median {:.2} RTT ({:.1} ms), p99 {:.2} RTT ({:.1} ms); {} messages",
            loss * 100.0,
            r.wire_bytes as f64 / payload_bytes,
            percentile(&r.delays, 0.5) / rtt,
            percentile(&r.delays, 0.5) * 1000.0,
            percentile(&r.delays, 0.99) / rtt,
            percentile(&r.delays, 0.99) * 1000.0,
            r.delivered
        );
    }
    let connection: Connection<Message> = Connection::new(0.0, config()).unwrap();
    println!(
        "  memory bound, every queue full: {} bytes with this config (2 channels)",
        connection.memory_bound()
    );
    let one: Connection<Message> = Connection::new(
        0.0,
        ConnectionConfig {
            max_block_size: 16 * 1024,
            chunk: netser_transport::chunk::ChunkConfig {
                max_slices: 16,
                max_queued_chunks: 2,
                ..Default::default()
            },
            max_received_blocks: 2,
            ..ConnectionConfig::with_channels(vec![ChannelConfig {
                send_queue_size: 256,
                receive_queue_size: 256,
                ..ChannelConfig::reliable_ordered()
            }])
        },
    )
    .unwrap();
    println!(
        "  memory bound, a lean config (1 channel of 256 messages, 16 KiB blocks): {} bytes",
        one.memory_bound()
    );
}
