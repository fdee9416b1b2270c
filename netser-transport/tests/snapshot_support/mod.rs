//! Shared by the snapshot tests: a world of bodies with the derive's delta encoding,
//! a seeded world generator (bodies appearing, vanishing, moving, resting), and a server
//! and a client connection through the simulator with a snapshot sender and receiver.
#![allow(dead_code)]

use std::net::SocketAddr;

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Pair, Peer, SimulatorConfig};
use netser_transport::snapshot::{
    EntityReceiver, SnapshotConfig, SnapshotReceiver, SnapshotSender,
};

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

/// A snapshot or entity receiver: takes a datagram through its connection.
pub trait Receiver {
    fn take(&mut self, now: f64, connection: &mut Connection<u8>, datagram: &[u8]) -> bool;
}

impl Receiver for SnapshotReceiver<World> {
    fn take(&mut self, now: f64, connection: &mut Connection<u8>, datagram: &[u8]) -> bool {
        self.handle_datagram(now, connection, datagram).is_ok()
    }
}

impl Receiver for EntityReceiver<Body> {
    fn take(&mut self, now: f64, connection: &mut Connection<u8>, datagram: &[u8]) -> bool {
        self.handle_datagram(now, connection, datagram).is_ok()
    }
}

/// A client connection whose datagrams go through its receiver.
pub struct Receiving<R> {
    pub connection: Connection<u8>,
    pub receiver: R,
}

impl<R: Receiver> Peer for Receiving<R> {
    fn handle_datagram(&mut self, now: f64, _from: SocketAddr, datagram: &[u8]) -> bool {
        self.receiver.take(now, &mut self.connection, datagram)
    }

    fn poll_transmit(&mut self, now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        Peer::poll_transmit(&mut self.connection, now)
    }

    fn handle_timeout(&mut self, now: f64) {
        self.connection.handle_timeout(now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        self.connection.poll_timeout()
    }
}

/// A peer that keeps the size of every datagram it sends.
pub struct Sizes<P> {
    pub peer: P,
    pub sizes: Vec<usize>,
}

impl<P: Peer> Peer for Sizes<P> {
    fn handle_datagram(&mut self, now: f64, from: SocketAddr, datagram: &[u8]) -> bool {
        self.peer.handle_datagram(now, from, datagram)
    }

    fn poll_transmit(&mut self, now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        let transmit = self.peer.poll_transmit(now);
        if let Some((_, datagram)) = &transmit {
            self.sizes.push(datagram.len());
        }
        transmit
    }

    fn handle_timeout(&mut self, now: f64) {
        self.peer.handle_timeout(now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        self.peer.poll_timeout()
    }
}

/// A peer and what `look` saw of it after each datagram it was handed (with whether it
/// took it), for checks after every datagram rather than every frame.
pub struct Watched<P, T> {
    pub peer: P,
    pub look: fn(&mut P, bool) -> Option<T>,
    pub seen: Vec<T>,
}

impl<P: Peer, T> Peer for Watched<P, T> {
    fn handle_datagram(&mut self, now: f64, from: SocketAddr, datagram: &[u8]) -> bool {
        let taken = self.peer.handle_datagram(now, from, datagram);
        if let Some(seen) = (self.look)(&mut self.peer, taken) {
            self.seen.push(seen);
        }
        taken
    }

    fn poll_transmit(&mut self, now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        self.peer.poll_transmit(now)
    }

    fn handle_timeout(&mut self, now: f64) {
        self.peer.handle_timeout(now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        self.peer.poll_timeout()
    }
}

/// A server connection (`pair.a`) sending snapshots of a world to a client (`pair.b`)
/// through the simulator; `pair.traffic[0]` counts the server's datagrams.
pub struct Link {
    pub pair: Pair<Connection<u8>, Receiving<SnapshotReceiver<World>>>,
    pub sender: SnapshotSender<World>,
}

impl Link {
    pub fn new(config: SnapshotConfig, net: SimulatorConfig) -> Self {
        let mut connection = ConnectionConfig::default();
        // Long latencies: the windows must cover the round trip.
        connection.endpoint.sent_packets_buffer_size = 1024;
        // Each snapshot acked at once, as the tests count (one ack per packet).
        connection.ack_delay = 0.0;
        let client = Receiving {
            connection: Connection::new(0.0, connection.clone()).unwrap(),
            receiver: SnapshotReceiver::new(config.clone()).unwrap(),
        };
        let server = Connection::new(0.0, connection).unwrap();
        Self {
            pair: Pair::new(server, client, net),
            sender: SnapshotSender::new(config).unwrap(),
        }
    }
}
