//! netser-transport: a sans-IO game network transport.
//!
//! Layers, bottom up, one module each (each module's docs explain its layer and show it
//! in use):
//!
//! * [`sequence`]: 16-bit sequence numbers that wrap, and the sequence buffers every
//!   layer keeps its windows in.
//! * [`endpoint`]: packets over datagrams: sequence numbers, acks, fragmentation and
//!   reassembly of packets larger than the MTU, and estimates of round-trip time, loss
//!   and bandwidth ([`endpoint::Stats`]; its docs say what the RTT includes).
//!   Wire-compatible with the `reliable` library.
//! * [`chunk`]: large blocks (a world state on join) sent as slices and acked, quickly
//!   and reliably over loss.
//! * [`simulator`]: a seeded network of latency, jitter, loss and duplicates to put
//!   between two sides in tests.
//!
//! The bytes each layer puts on the wire are specified in the repository's `WIRE.md`
//! (section 3, the packet endpoint; section 4, chunk packets).
//!
//! Nothing in this crate reads a clock or touches a socket: time is an argument, and
//! datagrams go in and out as byte slices.
//!
//! ```
//! use netser_transport::endpoint::{Config, Endpoint};
//!
//! let mut client = Endpoint::new(Config::default(), 0.0).unwrap();
//! let mut server = Endpoint::new(Config::default(), 0.0).unwrap();
//! client.send_packet(0.0, b"hello").unwrap();
//! while let Some(datagram) = client.poll_transmit() {
//!     // A real game sends `datagram.data` on its socket; here it arrives at once.
//!     let packet = server.receive_packet(0.01, datagram.data).unwrap().unwrap();
//!     assert_eq!(packet.payload, b"hello");
//! }
//! ```
#![forbid(unsafe_code)]

pub mod channel;
pub mod chunk;
pub mod connection;
pub mod endpoint;
pub mod netcode;
pub mod sequence;
pub mod simulator;
pub mod udp;
