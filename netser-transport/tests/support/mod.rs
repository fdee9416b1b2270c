//! Shared by the connection tests: a message type and a pair of connections over the
//! simulator (the transport's own harness).
#![allow(dead_code)]

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::SimulatorConfig;

/// The tests' message: a small value, a byte string up to 300 KB, and a bounded value.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum Msg {
    Small(#[net(range = 0..=1_000_000)] u32),
    Bytes(#[net(max_len = 300_000)] Vec<u8>),
    Bounded(#[net(range = 0..=100)] u8),
}

/// Two connections, `a` and `b`, stepped by the shared harness.
pub type Pair = netser_transport::simulator::Pair<Connection<Msg>, Connection<Msg>>;

/// Two connections of `config` over a network of these conditions.
pub fn pair(config: ConnectionConfig, net: SimulatorConfig) -> Pair {
    let a = Connection::new(0.0, config.clone()).unwrap();
    let b = Connection::new(0.0, config).unwrap();
    Pair::new(a, b, net)
}

/// Two connections of `config` over a perfect link.
pub fn lossless(config: ConnectionConfig) -> Pair {
    pair(config, SimulatorConfig::default())
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
