//! netser-transport: a sans-IO game network transport.
//!
//! Layers, bottom up (see the crate README and `../shared/DESIGN.md`):
//! [`sequence`] math and buffers, the packet [`endpoint`] (acks, RTT, loss, bandwidth,
//! fragmentation and reassembly, wire-compatible with the `reliable` library),
//! [`chunk`] transfer of large blocks, and a seeded network [`simulator`].
//!
//! Nothing in this crate reads a clock or touches a socket: time is an argument.
#![forbid(unsafe_code)]

pub mod channel;
pub mod chunk;
pub mod connection;
pub mod endpoint;
pub mod sequence;
pub mod simulator;
