//! Goodput of blocks on a long, lossy path: yojimbo's soak profile (1 s latency and
//! 100 ms jitter each way, 25% loss, 25% duplicates). A client sends as many
//! reliable-ordered messages as its connection takes (32 payload bytes, every 64th a
//! 4 KiB block) at the default budget; the server takes them every tick.
//!
//! A block is a message whose bytes travel through the chunk path, so the channel
//! delivers nothing past a block until its bytes are whole. With one block in flight
//! at a time, a block costs a round trip (2 s) and, at 25% loss of slices and of acks,
//! usually another one or two: at most about 64 messages every 4 to 6 seconds. With
//! several blocks in flight, the round trip carries several.
//!
//! `NETSER_GOODPUT_SECONDS=300 cargo test --release -p netser-transport --test
//! chunk_goodput -- --nocapture` prints the figure of the channels bench (300 s).

use netser::NetSerialize;
use netser_transport::channel::ChannelConfig;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const TICK: f64 = 1.0 / 60.0;

/// A message: its id and its bytes.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Payload {
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
}

/// yojimbo's soak profile, each way (the channels bench's link).
fn yojimbo_link() -> SimulatorConfig {
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

/// The bench's connection: one reliable-ordered channel at 256,000 bytes/s.
fn config() -> ConnectionConfig {
    ConnectionConfig {
        bandwidth: 256_000.0,
        ..ConnectionConfig::with_channels(vec![ChannelConfig::reliable_ordered()])
    }
}

/// What a saturated run did.
#[derive(Debug)]
struct Run {
    delivered: u32,
    blocks_delivered: u64,
    max_blocks_in_flight: u64,
}

/// `seconds` of a saturated client; messages checked in order, exactly once, intact.
fn saturate(config: ConnectionConfig, seconds: f64) -> Run {
    let mut net: Simulator = Simulator::new(yojimbo_link());
    let mut sides: [Connection<Payload>; 2] = [
        Connection::new(0.0, config.clone()).unwrap(),
        Connection::new(0.0, config).unwrap(),
    ];
    let mut sent = 0u32;
    let mut delivered = 0u32;
    let frames = (seconds / TICK).round() as u32;
    for frame in 0..frames {
        let now = f64::from(frame) * TICK;
        while let Some(delivery) = net.receive(now) {
            let _ = sides[delivery.to as usize].handle_datagram(now, &delivery.data);
        }
        while let Some(message) = sides[1].receive_message(0) {
            let len = if delivered % 64 == 63 { 4096 } else { 28 };
            assert_eq!(message, Payload::new(delivered, len), "in order, intact");
            delivered += 1;
        }
        loop {
            let len = if sent % 64 == 63 { 4096 } else { 28 };
            if sides[0].send_message(0, &Payload::new(sent, len)).is_err() {
                break;
            }
            sent += 1;
        }
        for (side, connection) in sides.iter_mut().enumerate() {
            connection.handle_timeout(now);
            while let Some(datagram) = connection.poll_transmit(now) {
                net.send(now, side as u32, 1 - side as u32, datagram);
            }
        }
    }
    Run {
        delivered,
        blocks_delivered: sides[1].channel_counters(0).unwrap().blocks_delivered,
        max_blocks_in_flight: sides[0].block_sender_stats().max_chunks_in_flight_seen,
    }
}

/// One block in flight at a time delivers about 64 messages every 4 to 6 s of this
/// path: under 900 in 60 s (575 messages, 8 blocks in this run). The default
/// connection keeps 32 blocks in flight and delivers many times that (11,583 messages,
/// 180 blocks), and at least 80 a second.
#[test]
fn blocks_fill_a_long_lossy_path() {
    let seconds = std::env::var("NETSER_GOODPUT_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(60.0);
    let run = saturate(config(), seconds);
    println!("{seconds} s, default blocks in flight: {run:?}");
    assert!(run.max_blocks_in_flight > 1, "{run:?}");
    assert!(
        f64::from(run.delivered) >= 80.0 * seconds,
        "{} messages in {seconds} s",
        run.delivered
    );
    assert!(run.blocks_delivered >= u64::from(run.delivered / 64));
}

/// A setting of 1 is the article's transfer, one block at a time: the figure it
/// replaced, and an upper bound the test above must beat.
#[test]
fn one_block_in_flight_is_the_articles_transfer() {
    let mut config = config();
    config.chunk.max_chunks_in_flight = 1;
    let run = saturate(config, 60.0);
    println!("60 s, one block in flight: {run:?}");
    assert_eq!(run.max_blocks_in_flight, 1, "{run:?}");
    assert!(run.delivered < 900, "{run:?}");
    assert!(run.delivered > 200, "{run:?}");
}
