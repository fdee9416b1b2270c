//! Soak test of blocks on reliable channels under yojimbo's soak profile (1 s latency,
//! 100 ms jitter, 25% loss, 25% duplicates, as its soak test sets its network
//! simulator): a channel's backlog must never cost another channel a message.
//!
//! Both sides send, every frame, a few messages on a reliable-ordered and a
//! reliable-unordered channel (some of them blocks of a few KiB) and one message on an
//! unreliable channel; both take every message of every channel every frame. Then:
//! - no packet is refused as `ReceiveQueueFull` (the reliable senders never run past
//!   the receivers' windows, even while a block's bytes are on their way);
//! - unreliable delivery equals the link's pass rate: an unreliable message is lost
//!   only when the datagram carrying it is;
//! - every reliable message arrives exactly once, intact, in order on the ordered
//!   channel.
//!
//! Every message is derived from its channel and id, so the receiver checks it without
//! a side channel. By default 60 simulated seconds of sending (a few seconds of wall
//! clock in release, more in debug); for long runs `NETSER_SOAK_SECONDS=<wall-clock
//! seconds>`, e.g.
//! `NETSER_SOAK_SECONDS=3600 cargo test --release -p netser-transport --test soak_blocks -- --nocapture`.
//! `NETSER_SOAK_SEED` picks the seed.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError, SendError};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const FRAME: f64 = 1.0 / 60.0;
const ORDERED: u8 = 0;
const UNORDERED: u8 = 1;
const UNRELIABLE: u8 = 2;
/// Simulated seconds of sending in the default run.
const DEFAULT_SECONDS: f64 = 60.0;

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Message {
    Small(u32, #[net(max_len = 32)] Vec<u8>),
    Block(u32, #[net(max_len = 8192)] Vec<u8>),
}

fn hash(channel: u8, id: u32) -> u32 {
    (id ^ u32::from(channel) << 24)
        .wrapping_mul(2_654_435_761)
        .rotate_left(13)
        .wrapping_mul(0x9E37_79B1)
}

/// The message with this id on this channel. About one in 400 on the ordered channel
/// and one in 40 on the unordered one is a block (2 to 8 KiB): a block is in flight
/// most of the time while the ordered channel sends more than its window in a round
/// trip.
fn message(channel: u8, id: u32) -> Message {
    let h = hash(channel, id);
    let data = |len: usize| -> Vec<u8> {
        (0..len)
            .map(|i| (i as u32).wrapping_mul(31).wrapping_add(h) as u8)
            .collect()
    };
    let one_in = match channel {
        ORDERED => 400,
        UNORDERED => 40,
        _ => u32::MAX,
    };
    if h.is_multiple_of(one_in) {
        Message::Block(id, data(2048 + (h >> 8) as usize % 6145))
    } else {
        Message::Small(id, data((h >> 8) as usize % 33))
    }
}

fn id_of(message: &Message) -> u32 {
    match message {
        Message::Small(id, _) | Message::Block(id, _) => *id,
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

fn config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::reliable_unordered(),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

/// What one side sends and the other receives.
#[derive(Default)]
struct Flow {
    /// Per channel: the next id to send.
    next_id: [u32; 3],
    /// Unreliable messages accepted by `send_message` while the link was measured.
    unreliable_sent: u64,
    /// Of those, the ones received.
    unreliable_received: u64,
    /// Unreliable ids sent while measured (the first and one past the last).
    measured: (u32, u32),
    /// Reliable sends refused for a full queue (the sender waits; not a loss).
    send_queue_full: u64,
    next_ordered: u32,
    unordered: HashSet<u32>,
    unreliable: HashSet<u32>,
    blocks_received: u64,
}

impl Flow {
    fn send(&mut self, side: &mut Connection<Message>, frame: u32, measuring: bool) {
        for (channel, most) in [(ORDERED, 16), (UNORDERED, 3)] {
            for _ in 0..1 + hash(channel, frame) % most {
                let id = self.next_id[usize::from(channel)];
                match side.send_message(channel, &message(channel, id)) {
                    Ok(()) => self.next_id[usize::from(channel)] += 1,
                    Err(SendError::SendQueueFull { .. } | SendError::BlockQueueFull { .. }) => {
                        self.send_queue_full += 1;
                        break;
                    }
                    Err(error) => panic!("unexpected send error {error}"),
                }
            }
        }
        let id = self.next_id[usize::from(UNRELIABLE)];
        side.send_message(UNRELIABLE, &message(UNRELIABLE, id))
            .expect("one small unreliable message a frame always fits");
        self.next_id[usize::from(UNRELIABLE)] += 1;
        if measuring {
            if self.unreliable_sent == 0 {
                self.measured.0 = id;
            }
            self.unreliable_sent += 1;
            self.measured.1 = id + 1;
        }
    }

    fn receive(&mut self, side: &mut Connection<Message>) {
        for channel in [ORDERED, UNORDERED, UNRELIABLE] {
            while let Some(got) = side.receive_message(channel) {
                let id = id_of(&got);
                assert_eq!(got, message(channel, id), "channel {channel}: message {id}");
                if matches!(got, Message::Block(..)) {
                    self.blocks_received += 1;
                }
                match channel {
                    ORDERED => {
                        assert_eq!(id, self.next_ordered, "ordered channel out of order");
                        self.next_ordered += 1;
                    }
                    UNORDERED => {
                        assert!(self.unordered.insert(id), "unordered {id} twice")
                    }
                    _ => {
                        assert!(self.unreliable.insert(id), "unreliable {id} twice");
                        if (self.measured.0..self.measured.1).contains(&id) {
                            self.unreliable_received += 1;
                        }
                    }
                }
            }
        }
    }

    fn reliable_done(&self) -> bool {
        self.next_ordered == self.next_id[usize::from(ORDERED)]
            && self.unordered.len() as u32 == self.next_id[usize::from(UNORDERED)]
    }
}

struct World {
    sides: [Connection<Message>; 2],
    /// flows[i]: what side i sends.
    flows: [Flow; 2],
    net: Simulator,
    now: f64,
    frame: u32,
    /// Packets refused as `ReceiveQueueFull`, per receiving side.
    queue_full: [u64; 2],
}

impl World {
    fn step(&mut self, sending: bool, measuring: bool) {
        let now = self.now;
        for i in 0..2 {
            if sending {
                self.flows[i].send(&mut self.sides[i], self.frame * 2 + i as u32, measuring);
            }
            let side = &mut self.sides[i];
            side.handle_timeout(now);
            while let Some(datagram) = side.poll_transmit(now) {
                self.net.send(now, i as u32, 1 - i as u32, datagram);
            }
        }
        while let Some(delivery) = self.net.receive(now) {
            let to = delivery.to as usize;
            if let Err(ReceiveError::ReceiveQueueFull { .. }) =
                self.sides[to].handle_datagram(now, &delivery.data)
            {
                self.queue_full[to] += 1;
            }
        }
        for i in 0..2 {
            self.flows[1 - i].receive(&mut self.sides[i]);
        }
        self.now += FRAME;
        self.frame += 1;
    }
}

/// yojimbo's soak profile (each way).
fn yojimbo_profile(seed: u64) -> SimulatorConfig {
    SimulatorConfig {
        latency: 1.0,
        jitter: 0.1,
        loss: 0.25,
        duplicate: 0.25,
        max_in_flight: 1 << 16,
        seed,
        ..SimulatorConfig::default()
    }
}

#[test]
fn blocks_cost_the_other_channels_nothing_under_yojimbos_profile() {
    let seed = env_u64("NETSER_SOAK_SEED").unwrap_or(0xB10C);
    let deadline = env_u64("NETSER_SOAK_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let mut world = World {
        sides: [
            Connection::new(0.0, config()).unwrap(),
            Connection::new(0.0, config()).unwrap(),
        ],
        flows: [Flow::default(), Flow::default()],
        net: Simulator::new(yojimbo_profile(seed)),
        now: 0.0,
        frame: 0,
        queue_full: [0; 2],
    };
    // Warm up (the first RTT samples), then measure until the time or the deadline.
    let warm_up = (5.0 / FRAME) as u32;
    let frames = (DEFAULT_SECONDS / FRAME) as u32;
    loop {
        let measuring = world.frame >= warm_up;
        world.step(true, measuring);
        let done = match deadline {
            Some(deadline) => world.frame.is_multiple_of(600) && Instant::now() >= deadline,
            None => world.frame >= warm_up + frames,
        };
        if done {
            break;
        }
    }
    let stats = world.net.stats().clone();
    // Everything in flight arrives (or is lost); then the reliable backlog drains.
    let limit = world.now + 600.0;
    while !world.flows.iter().all(Flow::reliable_done) {
        world.step(false, false);
        assert!(world.now < limit, "reliable messages stalled");
    }
    let pass_rate = 1.0 - stats.lost as f64 / stats.sent as f64;
    for (i, flow) in world.flows.iter().enumerate() {
        let delivery = flow.unreliable_received as f64 / flow.unreliable_sent as f64;
        let receiver = &world.sides[1 - i];
        eprintln!(
            "side {i} -> {}: ids sent {:?}, blocks received {}, send queue full {}, \
             unreliable {}/{} = {delivery:.4} (link passes {pass_rate:.4}), \
             refused as ReceiveQueueFull {}, {:?}",
            1 - i,
            flow.next_id,
            flow.blocks_received,
            flow.send_queue_full,
            flow.unreliable_received,
            flow.unreliable_sent,
            world.queue_full[1 - i],
            receiver.counters(),
        );
        assert!(flow.blocks_received > 10, "too few blocks to test anything");
        assert_eq!(
            world.queue_full[1 - i],
            0,
            "side {}: packets refused as ReceiveQueueFull",
            1 - i
        );
        // Within four standard deviations of the binomial noise (2.3 points on the
        // default run's 3,600 messages; the refusals this guards against cost 11).
        let tolerance = 4.0 * (pass_rate * (1.0 - pass_rate) / flow.unreliable_sent as f64).sqrt();
        assert!(
            (delivery - pass_rate).abs() < tolerance,
            "unreliable delivery {delivery:.4} against the link's pass rate {pass_rate:.4}"
        );
    }
    eprintln!(
        "{:.0} simulated seconds, {} frames; link: {stats:?}",
        world.now, world.frame
    );
}
