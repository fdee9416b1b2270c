//! Soak test of the connection: tens of thousands of messages of random sizes and
//! variants, both directions at once, on two reliable-ordered, one reliable-unordered,
//! one unreliable-sequenced and one unreliable channel, through the simulator at 25%
//! loss, 25% duplicates, 1 s latency with jitter and reordering, then a phase at 99%
//! loss, then the network recovers and everything reliable must arrive.
//!
//! Every message is derived from its channel and id, so the receiver checks it without
//! a side channel: every reliable message arrives exactly once with identical contents
//! (in order on the ordered channels); no unreliable message arrives twice or
//! corrupted; the sequenced channel never goes backwards. Some reliable messages are
//! large enough to go as blocks.
//!
//! By default it runs 2 cycles of 20 s at 25% loss and 5 s at 99% loss (simulated
//! time), a few seconds of wall clock. For long runs: `NETSER_SOAK_ITERATIONS=<cycles>`
//! or `NETSER_SOAK_SECONDS=<wall-clock seconds>`, e.g.
//! `NETSER_SOAK_SECONDS=3600 cargo test --release -p netser-transport --test soak_connection -- --nocapture`.
//! `NETSER_SOAK_SEED` picks the seed.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig, SendError};
use netser_transport::simulator::{Pair, SimulatorConfig};

const FRAME: f64 = 1.0 / 60.0;
const CHANNELS: usize = 5;
const RELIABLE: [bool; CHANNELS] = [true, true, true, false, false];

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum SoakMessage {
    Empty(u32),
    Small(u32, #[net(max_len = 32)] Vec<u8>),
    Medium(u32, #[net(max_len = 900)] Vec<u8>),
    Large(u32, #[net(max_len = 16384)] Vec<u8>),
}

fn hash(channel: usize, id: u32) -> u32 {
    (id ^ (channel as u32) << 24)
        .wrapping_mul(2_654_435_761)
        .rotate_left(13)
        .wrapping_mul(0x9E37_79B1)
}

/// The message with this id on this channel: variant and size from a hash of the id.
fn message(channel: usize, id: u32) -> SoakMessage {
    let h = hash(channel, id);
    let data = |len: usize| -> Vec<u8> {
        (0..len)
            .map(|i| (i as u32).wrapping_mul(31).wrapping_add(h) as u8)
            .collect()
    };
    match h % 4000 {
        0..=399 => SoakMessage::Empty(id),
        400..=3199 => SoakMessage::Small(id, data((h >> 10) as usize % 33)),
        3200..=3995 => SoakMessage::Medium(id, data((h >> 10) as usize % 901)),
        // A few large ones: blocks on reliable channels, refused at send on unreliable.
        _ => SoakMessage::Large(id, data(1200 + (h >> 12) as usize % 15_000)),
    }
}

fn id_of(message: &SoakMessage) -> u32 {
    match message {
        SoakMessage::Empty(id)
        | SoakMessage::Small(id, _)
        | SoakMessage::Medium(id, _)
        | SoakMessage::Large(id, _) => *id,
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// One direction's bookkeeping, per channel.
#[derive(Default)]
struct Flow {
    /// Next id to send; ids refused at send (unreliable too large) are skipped.
    next_id: [u32; CHANNELS],
    /// Reliable ids that must arrive.
    must_arrive: [u64; CHANNELS],
    /// Ordered channels: the next id expected. Others: what arrived.
    next_expected: [u32; CHANNELS],
    arrived: [HashSet<u32>; CHANNELS],
    newest_sequenced: Option<u32>,
    received: [u64; CHANNELS],
    refused_full: u64,
    refused_too_large: u64,
}

fn config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig {
            priority: 2,
            ..ChannelConfig::reliable_ordered()
        },
        ChannelConfig::reliable_unordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

fn send(side: &mut Connection<SoakMessage>, flow: &mut Flow, seed: u32) {
    for (channel, &reliable) in RELIABLE.iter().enumerate() {
        // A few messages per frame per channel, more in bursts.
        let burst = 1 + hash(channel, seed) % if channel < 3 { 6 } else { 3 };
        for _ in 0..burst {
            let id = flow.next_id[channel];
            match side.send_message(channel as u8, &message(channel, id)) {
                Ok(()) => {
                    flow.next_id[channel] += 1;
                    if reliable {
                        flow.must_arrive[channel] += 1;
                    }
                }
                Err(SendError::SendQueueFull { .. } | SendError::BlockQueueFull { .. }) => {
                    flow.refused_full += 1;
                    break;
                }
                Err(SendError::MessageTooLarge { .. }) => {
                    assert!(!reliable);
                    flow.refused_too_large += 1;
                    flow.next_id[channel] += 1;
                }
                Err(error) => panic!("unexpected send error {error}"),
            }
        }
    }
}

fn receive(side: &mut Connection<SoakMessage>, flow: &mut Flow) {
    for channel in 0..CHANNELS {
        while let Some(got) = side.receive_message(channel as u8) {
            let id = id_of(&got);
            assert_eq!(
                got,
                message(channel, id),
                "channel {channel}: corrupted message {id}"
            );
            flow.received[channel] += 1;
            match channel {
                0 | 1 => {
                    assert_eq!(
                        id, flow.next_expected[channel],
                        "channel {channel}: out of order"
                    );
                    flow.next_expected[channel] += 1;
                }
                3 => {
                    assert!(
                        flow.newest_sequenced.is_none_or(|newest| id > newest),
                        "sequenced channel went backwards: {id} after {:?}",
                        flow.newest_sequenced
                    );
                    flow.newest_sequenced = Some(id);
                    assert!(flow.arrived[channel].insert(id));
                }
                _ => assert!(
                    flow.arrived[channel].insert(id),
                    "channel {channel}: message {id} arrived twice"
                ),
            }
        }
    }
}

struct World {
    pair: Pair<Connection<SoakMessage>, Connection<SoakMessage>>,
    /// flows[i]: what side i sends (and the other receives).
    flows: [Flow; 2],
    frame: u32,
}

impl World {
    fn step(&mut self, sending: bool) {
        if sending {
            let sides = [&mut self.pair.a, &mut self.pair.b];
            for (i, (side, flow)) in sides.into_iter().zip(&mut self.flows).enumerate() {
                send(side, flow, self.frame.wrapping_mul(2) + i as u32);
            }
        }
        self.pair.step(FRAME);
        for traffic in &self.pair.traffic {
            assert!(traffic.largest <= 1200, "{traffic:?}");
        }
        // Each side receives what the other sends.
        let [from_a, from_b] = &mut self.flows;
        receive(&mut self.pair.a, from_b);
        receive(&mut self.pair.b, from_a);
        self.frame += 1;
    }

    fn run(&mut self, seconds: f64, sending: bool) {
        for _ in 0..(seconds / FRAME) as u32 {
            self.step(sending);
        }
    }

    fn all_reliable_arrived(&self) -> bool {
        self.flows
            .iter()
            .all(|flow| (0..3).all(|channel| flow.received[channel] == flow.must_arrive[channel]))
    }
}

fn bad_network(seed: u64) -> SimulatorConfig {
    SimulatorConfig {
        latency: 1.0,
        jitter: 0.25,
        loss: 0.25,
        duplicate: 0.25,
        reorder: 0.1,
        max_in_flight: 1 << 16,
        seed,
        ..SimulatorConfig::default()
    }
}

#[test]
fn soak_connection() {
    let seed = env_u64("NETSER_SOAK_SEED").unwrap_or(0x50A5);
    let deadline = env_u64("NETSER_SOAK_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let cycles = env_u64("NETSER_SOAK_ITERATIONS").unwrap_or(2);
    let mut world = World {
        pair: Pair::new(
            Connection::new(0.0, config()).unwrap(),
            Connection::new(0.0, config()).unwrap(),
            bad_network(seed),
        ),
        flows: [Flow::default(), Flow::default()],
        frame: 0,
    };
    let mut cycle = 0;
    loop {
        world.pair.net.set_config(bad_network(seed + cycle));
        world.run(20.0, true);
        world.pair.net.set_config(SimulatorConfig {
            loss: 0.99,
            ..bad_network(seed + cycle)
        });
        world.run(5.0, true);
        cycle += 1;
        let done = match deadline {
            Some(deadline) => Instant::now() >= deadline,
            None => cycle >= cycles,
        };
        if done {
            break;
        }
    }
    // The network recovers: everything reliable arrives, nothing else is sent.
    world.pair.net.set_config(bad_network(seed ^ 0xFF));
    let limit = world.pair.now + 300.0;
    while !world.all_reliable_arrived() {
        world.step(false);
        assert!(world.pair.now < limit, "reliable messages stalled");
    }
    for (i, flow) in world.flows.iter().enumerate() {
        let side = if i == 0 { &world.pair.a } else { &world.pair.b };
        let counters = side.counters();
        eprintln!(
            "side {i}: sent ids {:?}, received {:?}, refused full {}, too large {}, {:?}, channels {:?}",
            flow.next_id,
            world.flows[i].received,
            flow.refused_full,
            flow.refused_too_large,
            counters,
            (0..CHANNELS)
                .map(|c| side.channel_counters(c as u8).unwrap())
                .collect::<Vec<_>>()
        );
        for channel in 0..3 {
            assert_eq!(flow.received[channel], flow.must_arrive[channel]);
        }
        assert!(flow.received[3] > 0 && flow.received[4] > 0);
    }
    let total: u64 = world
        .flows
        .iter()
        .map(|flow| flow.received.iter().sum::<u64>())
        .sum();
    eprintln!(
        "{total} messages delivered in {:.0} simulated seconds",
        world.pair.now
    );
    assert!(total > 20_000, "only {total} messages delivered");
}
