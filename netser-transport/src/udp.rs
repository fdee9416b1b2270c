//! Layer 7: real UDP. [`UdpServer`] and [`UdpClient`] put the sans-IO
//! [`Server`](crate::netcode::Server) and [`Client`](crate::netcode::Client) on a socket,
//! for a game to call once per frame; [`UdpDriver`] is the socket underneath, usable on
//! its own.
//!
//! Everything below this module takes the time as an argument and never touches a
//! socket; this is the one place that reads a clock ([`Clock`]) and calls the operating
//! system. A game with its own socket or engine uses the sans-IO types directly and
//! feeds them the same way. [`UdpDriver`] is deliberately small:
//!
//! - a non-blocking socket whose kernel buffers are sized for the largest block (the
//!   chunk article: "make sure you increase the size of your OS socket buffers on both
//!   ends so they are larger than your maximum chunk size (I recommend at least double),
//!   otherwise you'll be dropping slices before they even hit the wire"), see
//!   [`UdpConfig::socket_buffer_size`];
//! - a bounded queue for datagrams the kernel could not take yet, retried on
//!   [`UdpDriver::flush`];
//! - optionally a seeded [`Simulator`](crate::simulator::Simulator) on the way out and
//!   on the way in, so loss, latency and jitter can be added to a real socket;
//! - on drop, what it still holds (simulated delays, a full kernel buffer) is sent for
//!   at most [`UdpConfig::linger`], so a disconnect sent just before is not lost;
//! - a counter, and a `tracing` event at debug level, for every datagram it drops, with
//!   the reason ([`DropReason`], [`UdpStats`]); on Linux the datagrams the kernel itself
//!   dropped for a full receive buffer are counted too. Without a `tracing` subscriber
//!   installed nothing is printed;
//! - on Linux, datagrams that leave together (a burst to one address in one segmented
//!   send, a batch to many in one `sendmmsg`), and a flooding peer isolated on a socket
//!   of its own ([`UdpDriver::isolate`]), so its flood fills only its own kernel buffer.
//!
//! Connects and disconnects are logged at info level, as are the server starting and
//! shutting down.
//!
//! A game server and client: see [`UdpServer`] and [`UdpClient`] (and the repository's
//! `examples/src/bin/demo.rs` for a complete game). The driver's own run loop, once per
//! game frame:
//!
//! ```
//! use netser_transport::udp::{UdpConfig, UdpDriver};
//!
//! # fn main() -> std::io::Result<()> {
//! let mut a = UdpDriver::bind("127.0.0.1:0", UdpConfig::default())?;
//! let mut b = UdpDriver::bind("127.0.0.1:0", UdpConfig::default())?;
//! a.send(b.local_addr(), b"hello").expect("queued or sent");
//! a.flush();
//!
//! let mut got = Vec::new();
//! for _ in 0..1000 {
//!     // One frame: read the clock, take what arrived, feed it to the state machine,
//!     // send what it produced.
//!     let _now = b.now();
//!     b.receive(|from, bytes| got.push((from, bytes.to_vec())));
//!     b.flush();
//!     if !got.is_empty() {
//!         break;
//!     }
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! assert_eq!(got, vec![(a.local_addr(), b"hello".to_vec())]);
//! # Ok(())
//! # }
//! ```

mod client;
mod clock;
mod common;
mod driver;
mod server;

pub use client::{UdpClient, UdpClientConfig, UdpClientEvent};
pub use clock::Clock;
pub use common::BlockProgress;
pub use common::MAX_QUEUED_EVENTS;
pub use driver::{
    DropReason, UdpConfig, UdpConfigError, UdpDriver, UdpStats, ISOLATED_READS_PER_POLL,
    ISOLATED_READS_PER_SECOND, MAX_ISOLATED_PEERS, MAX_LINGER, MAX_UDP_PAYLOAD,
};
pub use server::{StartError, UdpServer, UdpServerConfig, UdpServerEvent};
