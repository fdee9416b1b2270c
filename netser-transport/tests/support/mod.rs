//! Shared by the connection tests: a message type and a pair of connections wired
//! directly (datagrams in a queue each way) or through the simulator.
#![allow(dead_code)]

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};

/// The tests' message: a small value, a byte string up to 300 KB, and a bounded value.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum Msg {
    Small(#[net(range = 0..=1_000_000)] u32),
    Bytes(#[net(max_len = 300_000)] Vec<u8>),
    Bounded(#[net(range = 0..=100)] u8),
}

/// Two connections, `a` (address 1) and `b` (address 2).
pub struct Pair {
    pub a: Connection<Msg>,
    pub b: Connection<Msg>,
    pub net: Simulator,
    pub now: f64,
}

impl Pair {
    pub fn new(config: ConnectionConfig, net: SimulatorConfig) -> Self {
        Self {
            a: Connection::new(0.0, config.clone()).unwrap(),
            b: Connection::new(0.0, config).unwrap(),
            net: Simulator::new(net),
            now: 0.0,
        }
    }

    pub fn lossless(config: ConnectionConfig) -> Self {
        Self::new(config, SimulatorConfig::default())
    }

    /// One frame: both sides update and send, the network delivers, time moves on.
    pub fn step(&mut self, dt: f64) {
        let now = self.now;
        for (side, from, to) in [(&mut self.a, 1, 2), (&mut self.b, 2, 1)] {
            side.handle_timeout(now);
            while let Some(datagram) = side.poll_transmit(now) {
                self.net.send(now, from, to, datagram);
            }
        }
        while let Some(delivery) = self.net.receive(now) {
            let side = if delivery.to == 1 {
                &mut self.a
            } else {
                &mut self.b
            };
            let _ = side.handle_datagram(now, &delivery.data);
        }
        self.now += dt;
    }
}

/// All datagrams `side` has to send now.
pub fn drain(side: &mut Connection<Msg>, now: f64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(datagram) = side.poll_transmit(now) {
        out.push(datagram.to_vec());
    }
    out
}

/// Every message waiting on `channel`.
pub fn receive_all(side: &mut Connection<Msg>, channel: u8) -> Vec<Msg> {
    std::iter::from_fn(|| side.receive_message(channel)).collect()
}

/// A payload of `len` bytes derived from `seed`.
pub fn bytes(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(31) ^ seed.wrapping_mul(7)) as u8)
        .collect()
}
