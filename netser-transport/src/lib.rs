//! netser-transport: a game network transport, sans-IO up to its thin UDP driver.
//!
//! Layers, bottom up, one module each, each using only the ones above it in this list
//! (each module's docs explain its layer and show it in use):
//!
//! * [`sequence`]: 16-bit sequence numbers that wrap, and the sequence buffers every
//!   layer keeps its windows in.
//! * [`endpoint`]: packets over datagrams: sequence numbers, acks, fragmentation and
//!   reassembly of packets larger than the MTU, and estimates of round-trip time, loss
//!   and bandwidth ([`endpoint::Stats`]; its docs say what the RTT includes).
//!   Wire-compatible with the `reliable` library.
//! * [`chunk`]: large blocks (a world state on join) sent as slices and acked, quickly
//!   and reliably over loss.
//! * [`channel`]: message channels: reliable-ordered (the articles' algorithm),
//!   reliable-unordered, unreliable-sequenced and unreliable.
//! * [`connection`]: one peer: the endpoint, its channels and the block path behind one
//!   interface of typed messages in and datagrams out ([`connection::Connection`]).
//! * [`snapshot`]: state synchronization over a connection: snapshots delta-encoded
//!   against the newest one the peer acked, and entity sets that a priority accumulator
//!   fits to a per-client byte budget.
//! * [`netcode`]: secure connections with connect tokens (the netcode 1.02 protocol as
//!   its standard writes it, which interoperates with the C reference; the `renetcode`
//!   2.x crate's layout is a setting, [`netcode::Layout::Renetcode`]), and the sans-IO game
//!   [`netcode::Server`] (client slots, one connection each) and [`netcode::Client`].
//! * [`udp`]: the driver that runs a server or a client on a `std::net::UdpSocket`
//!   ([`udp::UdpServer`], [`udp::UdpClient`]), optionally through the simulator.
//!
//! Beside them, [`simulator`]: a seeded network of latency, jitter, loss, duplicates and
//! reordering to put between two sides in tests, or on a real socket.
//!
//! The bytes each layer puts on the wire are specified in the repository's `WIRE.md`.
//!
//! Every sans-IO layer speaks the same verbs: `handle_datagram(now, ..)` when a datagram
//! comes in, `poll_transmit(..)` for the next datagram to send, `handle_timeout(now)` to
//! run the timers and `poll_timeout()` for when that is next due, `poll_event()` for what
//! happened. `now` is always the first argument after `self`: seconds, as an `f64`, on
//! the game's own monotonic clock (any epoch; engine time is fine). The [`udp`] layer does
//! the I/O around them: `receive()` reads the socket, `transmit()` sends.
//!
//! Below [`udp`], nothing reads a clock or touches a socket: time is an argument, and
//! datagrams go in and out as byte slices, so a game can drive [`netcode::Server`] from
//! its own socket or engine, and every test is deterministic.
//!
//! ```
//! use netser_transport::endpoint::{Config, Endpoint};
//!
//! let mut client = Endpoint::new(0.0, Config::default()).unwrap();
//! let mut server = Endpoint::new(0.0, Config::default()).unwrap();
//! client.send_packet(0.0, b"hello").unwrap();
//! while let Some(datagram) = client.poll_transmit() {
//!     // A real game sends `datagram.data` on its socket; here it arrives at once.
//!     let packet = server.handle_datagram(0.01, datagram.data).unwrap().unwrap();
//!     assert_eq!(packet.payload, b"hello");
//! }
//! ```
#![forbid(unsafe_code)]

/// The crate README's examples, compiled (and run where they can be) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod channel;
pub mod chunk;
pub mod connection;
pub mod endpoint;
pub mod netcode;
pub mod sequence;
pub mod simulator;
pub mod snapshot;
pub mod udp;

/// `outer.source()` is `inner`, and `outer`'s Display does not repeat `inner`'s.
#[cfg(test)]
pub(crate) fn assert_source<E, I>(outer: &E, inner: &I)
where
    E: std::error::Error,
    I: std::error::Error + PartialEq + 'static,
{
    let source = outer.source().expect("a source");
    assert_eq!(source.downcast_ref::<I>(), Some(inner), "{outer:?}");
    assert!(
        !outer.to_string().contains(&inner.to_string()),
        "{outer} repeats {inner}"
    );
}
