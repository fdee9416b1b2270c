//! Shared by the snapshot tests: a world of bodies with the derive's delta encoding,
//! a seeded world generator (bodies appearing, vanishing, moving, resting), and a server
//! and a client connection through the simulator with a snapshot sender and receiver.
#![allow(dead_code)]

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};
use netser_transport::snapshot::{SnapshotConfig, SnapshotReceiver, SnapshotSender};

pub const SLOTS: usize = 32;

/// A body: a position on a bounded grid and whether it rests. Sent relative to a
/// baseline by the derive's delta encoding.
#[derive(NetSerialize, Debug, Clone, Copy, PartialEq)]
#[net(delta)]
pub struct Body {
    #[net(range = -100_000..=100_000)]
    pub x: i32,
    #[net(range = -100_000..=100_000)]
    pub y: i32,
    #[net(range = 0..=4095)]
    pub z: u16,
    pub resting: bool,
}

/// The world of a tick: its number and up to `SLOTS` bodies.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct World {
    pub tick: u32,
    pub bodies: [Option<Body>; SLOTS],
}

/// A small seeded generator (xorshift64*).
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }
}

/// A random world that moves on: bodies appear and vanish, some move, most rest; now and
/// then everything rests for a while.
pub struct WorldGen {
    pub world: World,
    pub rng: Rng,
    calm_until: u32,
}

impl WorldGen {
    pub fn new(seed: u64) -> Self {
        Self {
            world: World {
                tick: 0,
                bodies: [None; SLOTS],
            },
            rng: Rng(seed | 1),
            calm_until: 0,
        }
    }

    /// The next tick's world.
    pub fn step(&mut self) -> &World {
        let rng = &mut self.rng;
        self.world.tick += 1;
        let tick = self.world.tick;
        if tick > self.calm_until && rng.chance(0.01) {
            self.calm_until = tick + 30 + rng.below(90) as u32;
        }
        // The tick changes every time; during a calm nothing else does.
        if tick <= self.calm_until {
            return &self.world;
        }
        for slot in &mut self.world.bodies {
            match slot {
                None if rng.chance(0.02) => {
                    *slot = Some(Body {
                        x: rng.below(200_001) as i32 - 100_000,
                        y: rng.below(200_001) as i32 - 100_000,
                        z: rng.below(4096) as u16,
                        resting: false,
                    });
                }
                Some(_) if rng.chance(0.01) => *slot = None,
                Some(body) => {
                    if rng.chance(0.05) {
                        body.resting = !body.resting;
                    }
                    if !body.resting {
                        body.x = (body.x + rng.below(41) as i32 - 20).clamp(-100_000, 100_000);
                        body.y = (body.y + rng.below(41) as i32 - 20).clamp(-100_000, 100_000);
                        if rng.chance(0.3) {
                            body.z = rng.below(4096) as u16;
                        }
                    }
                }
                None => {}
            }
        }
        &self.world
    }
}

/// A server connection (address 1) sending snapshots of a world to a client connection
/// (address 2) through the simulator.
pub struct Link {
    pub server: Connection<u8>,
    pub client: Connection<u8>,
    pub sender: SnapshotSender<World>,
    pub receiver: SnapshotReceiver<World>,
    pub net: Simulator,
    pub now: f64,
    /// Server -> client datagrams and their bytes.
    pub datagrams: u64,
    pub bytes: u64,
}

impl Link {
    pub fn new(config: SnapshotConfig, net: SimulatorConfig) -> Self {
        let mut connection = ConnectionConfig::default();
        // Long latencies: the windows must cover the round trip.
        connection.endpoint.sent_packets_buffer_size = 1024;
        // Each snapshot acked at once, as the tests count (one ack per packet).
        connection.ack_delay = 0.0;
        Self {
            server: Connection::new(0.0, connection.clone()).unwrap(),
            client: Connection::new(0.0, connection).unwrap(),
            sender: SnapshotSender::new(config.clone()).unwrap(),
            receiver: SnapshotReceiver::new(config).unwrap(),
            net: Simulator::new(net),
            now: 0.0,
            datagrams: 0,
            bytes: 0,
        }
    }

    /// Sends the server's datagrams and the client's acks, delivers what arrives by
    /// `now`, and moves time on by `dt`.
    pub fn pump(&mut self, dt: f64) {
        let now = self.now;
        self.server.handle_timeout(now);
        while let Some(d) = self.server.poll_transmit(now) {
            self.datagrams += 1;
            self.bytes += d.len() as u64;
            self.net.send(now, 1, 2, d);
        }
        self.client.handle_timeout(now);
        while let Some(d) = self.client.poll_transmit(now) {
            self.net.send(now, 2, 1, d);
        }
        while let Some(delivery) = self.net.receive(now) {
            if delivery.to == 2 {
                let _ = self
                    .receiver
                    .handle_datagram(now, &mut self.client, &delivery.data);
            } else {
                let _ = self.server.handle_datagram(now, &delivery.data);
            }
        }
        self.now += dt;
    }
}
