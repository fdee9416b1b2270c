//! The packet endpoint: sequence numbers, acks, RTT/loss/bandwidth estimates, and
//! fragmentation and reassembly of packets larger than the MTU, wire-compatible with the
//! `reliable` library (crate `reliable` 1.x and the C library it ports).
//!
//! An [`Endpoint`] is one side of one connection. It is sans-IO: it never reads a clock or
//! touches a socket. You hand it the time and the bytes; it hands back datagrams to send,
//! payloads received and the sequences of your packets that the other side received.
//!
//! The run loop, once per frame:
//!
//! ```
//! use netser_transport::endpoint::{Config, Endpoint};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut client = Endpoint::new(0.0, Config::default())?;
//! let mut server = Endpoint::new(0.0, Config::default())?;
//! let mut wire: Vec<Vec<u8>> = Vec::new(); // stands in for a UDP socket
//! let mut delivered = Vec::new();
//!
//! for frame in 0..10 {
//!     let now = f64::from(frame) / 60.0;
//!
//!     // Send: one call per packet; big payloads leave as several fragments.
//!     let payload = vec![frame as u8; if frame == 3 { 5000 } else { 100 }];
//!     let _sequence = client.send_packet(now, &payload)?;
//!     while let Some(transmit) = client.poll_transmit() {
//!         wire.push(transmit.data.to_vec()); // socket.send_to(transmit.data, peer)
//!     }
//!
//!     // Receive: every datagram from the socket; a whole packet comes back as a payload.
//!     for datagram in wire.drain(..) {
//!         match server.handle_datagram(now, &datagram) {
//!             Ok(Some(packet)) => delivered.push((packet.sequence, packet.payload.len())),
//!             Ok(None) => {}  // a fragment, stored until its packet is whole
//!             Err(_dropped) => {} // counted in server.counters().drops
//!         }
//!     }
//!
//!     // The server answers (its packets carry the acks), and both update their stats.
//!     server.send_packet(now, b"ack me")?;
//!     while let Some(transmit) = server.poll_transmit() {
//!         client.handle_datagram(now, transmit.data)?;
//!     }
//!     for acked in client.drain_acks() {
//!         // the server received the client's packet `acked`
//!         assert!(acked <= frame as u16);
//!     }
//!     client.handle_timeout(now);
//!     server.handle_timeout(now);
//! }
//! assert_eq!(delivered.len(), 10);
//! assert_eq!(delivered[3], (3, 5000));
//! assert_eq!(client.counters().packets_acked, 10);
//! # Ok(())
//! # }
//! ```
//!
//! # Memory
//!
//! Received data is held only while a fragmented packet is being reassembled. Fragments
//! are copied once, into one pool of `fragment_size` blocks capped by
//! [`Config::max_reassembly_bytes`], where each packet in progress holds a run of adjacent
//! blocks; a completed packet is handed back from there by reference. With the default
//! config the whole reassembly state (pool and bookkeeping) never exceeds
//! [`DEFAULT_REASSEMBLY_MEMORY_BOUND`] bytes (about 1.005 MiB) whatever a peer sends, and
//! [`Endpoint::memory_bytes`] adds the fixed tables for a total under
//! [`Config::memory_bound`]. Outgoing datagrams wait in a
//! queue until [`Endpoint::poll_transmit`] drains it (it grows only with what you send
//! yourself), and acks until [`Endpoint::drain_acks`]: at most
//! [`Config::sent_packets_buffer_size`] of them, so an endpoint whose acks are never
//! drained stays bounded (the oldest half is dropped when full, counted in
//! [`Counters::acks_dropped`]).

mod config;
mod counters;
mod error;
pub mod header;
mod reassembly;
mod receive;
mod rtt_history;
mod send;
mod stats;
mod windows;

use core::ops::Range;

pub use config::{Config, ConfigError, DEFAULT_REASSEMBLY_MEMORY_BOUND, MAX_RTT_HISTORY_SIZE};
pub use counters::{Counters, DropCounters};
pub use error::{ReceiveError, SendError};
use reassembly::Reassembly;
use rtt_history::RttHistory;
pub use stats::{Stats, MIN_RTO};
use windows::{ReceivedWindow, SentWindow};

/// A datagram to send, from [`Endpoint::poll_transmit`].
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// endpoint.send_packet(0.0, b"hi").unwrap();
/// let transmit = endpoint.poll_transmit().unwrap();
/// assert_eq!(transmit.sequence, 0);
/// assert_eq!(transmit.data, [0x3e, 0, 0, 1, 0, 0, 0, 0, b'h', b'i']);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<'a> {
    /// The sequence of the packet this datagram is (a fragment of).
    pub sequence: u16,
    /// The datagram.
    pub data: &'a [u8],
}

/// A packet received whole, from [`Endpoint::handle_datagram`].
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// let packet = endpoint.handle_datagram(0.0, &[0x20, 9, 0, 0, 42]).unwrap().unwrap();
/// assert_eq!((packet.sequence, packet.payload), (9, &[42][..]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received<'a> {
    /// Its sequence.
    pub sequence: u16,
    /// Its payload (after the header; reassembled if it came in fragments).
    pub payload: &'a [u8],
}

#[derive(Debug, Clone, Copy)]
struct QueuedTransmit {
    sequence: u16,
    start: usize,
    end: usize,
}

/// Where a received payload is.
enum Payload {
    /// In the datagram, from this offset.
    Datagram(usize),
    /// In the reassembly pool, at this range.
    Reassembled(Range<usize>),
}

/// One side of a connection: see the [module docs](self) for the run loop.
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint};
/// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// assert_eq!(endpoint.next_sequence(), 0);
/// ```
// In the order written: what every update (`handle_timeout`) reads and writes comes
// first and together, so that the update of a connection that sends and receives
// nothing touches as few cache lines as it can (on a server of many connections they
// are rarely in the cache).
#[repr(C)]
pub struct Endpoint {
    update: Update,
    sent: SentWindow,
    received: ReceivedWindow,
    stats: Stats,
    config: Config,
    sequence: u16,
    /// The ack and ack_bits for the next packet, kept up to date on every receive
    /// (the same as `received.generate_ack_bits()`, without 32 lookups per send).
    ack: u16,
    ack_bits: u32,
    reassembly: Reassembly,
    acks: Vec<u16>,
    /// The datagrams queued, in `outgoing[..outgoing_used]`. The buffer keeps its
    /// length (packets are written into it in place), so reusing it clears nothing.
    outgoing: Vec<u8>,
    outgoing_used: usize,
    /// Datagrams queued in `outgoing`; those before `next_transmit` have been polled.
    /// Both are emptied once everything is polled.
    transmits: Vec<QueuedTransmit>,
    next_transmit: usize,
    rtt_history: RttHistory,
    /// The newest ack a header named and which of the 32 up to it headers have acked
    /// (so each ack is looked up once, not in every header that repeats it).
    seen_acks: (u16, u32),
    /// When the packet `ack` names arrived, if it has (not only its first fragment):
    /// how long the next header holds that ack is its ack delay.
    ack_received_at: Option<f64>,
    /// Smoothed time between packets received at different times, and the last time.
    peer_interval: f64,
    /// The largest ack delay the peer reported, if it reports them (datagrams taken by
    /// [`handle_datagram_with_ack_delay`](Self::handle_datagram_with_ack_delay)): the
    /// longest it holds an ack, whatever the interval between its packets.
    peer_max_ack_delay: Option<f64>,
    last_receive_time: Option<f64>,
    counters: Counters,
}

/// The endpoint's own state that every update reads, with copies of the config values
/// it needs.
#[derive(Debug, Clone, Copy)]
struct Update {
    time: f64,
    packet_loss_smoothing_factor: f64,
    bandwidth_smoothing_factor: f64,
    has_rtt: bool,
    /// An RTT sample came or the history was cleared since the last summary (a summary
    /// of the same samples is the same, so it is not done again).
    rtt_changed: bool,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("time", &self.update.time)
            .field("next_sequence", &self.sequence)
            .field("ack", &self.ack)
            .field("ack_bits", &format_args!("{:#034b}", self.ack_bits))
            .field("pending_acks", &self.acks.len())
            .field("pending_transmits", &self.pending_transmits())
            .field("pending_reassemblies", &self.reassembly.pending())
            .field("stats", &self.stats)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Makes an endpoint; `now` is the current time in seconds.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] if the config does not [`validate`](Config::validate).
    ///
    /// ```
    /// use netser_transport::endpoint::{Config, Endpoint};
    /// assert!(Endpoint::new(12.5, Config::default()).is_ok());
    /// assert!(Endpoint::new(0.0, Config { fragment_size: 0, ..Config::default() }).is_err());
    /// ```
    pub fn new(now: f64, config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            sequence: 0,
            sent: SentWindow::new(config.sent_packets_buffer_size),
            received: ReceivedWindow::new(config.received_packets_buffer_size),
            ack: u16::MAX,
            ack_bits: 0,
            reassembly: Reassembly::new(
                config.fragment_reassembly_buffer_size,
                config.fragment_size,
                config.max_reassembly_blocks(),
            ),
            acks: Vec::new(),
            outgoing: Vec::new(),
            outgoing_used: 0,
            transmits: Vec::new(),
            next_transmit: 0,
            rtt_history: RttHistory::new(config.rtt_history_size),
            seen_acks: (u16::MAX, 0),
            ack_received_at: None,
            peer_interval: 0.0,
            peer_max_ack_delay: None,
            last_receive_time: None,
            stats: Stats::default(),
            counters: Counters::default(),
            update: Update {
                time: now,
                packet_loss_smoothing_factor: config.packet_loss_smoothing_factor,
                bandwidth_smoothing_factor: config.bandwidth_smoothing_factor,
                has_rtt: false,
                rtt_changed: true,
            },
            config,
        })
    }

    /// The config.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.config().fragment_size, 1024);
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The sequence the next packet sent will have, to map acks back to what you sent.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.send_packet(0.0, b"x").unwrap();
    /// assert_eq!(endpoint.next_sequence(), 1);
    /// ```
    pub fn next_sequence(&self) -> u16 {
        self.sequence
    }

    /// Has a packet sent been acked, giving a first RTT sample? Until then
    /// [`Stats::rtt`] and [`Stats::rto`] are the defaults, not measures of the path.
    /// The same as `counters().packets_acked > 0`, read from the state every update
    /// reads anyway.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    /// let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    /// a.send_packet(0.0, b"ping").unwrap();
    /// let ping = a.poll_transmit().unwrap().data.to_vec();
    /// b.handle_datagram(0.01, &ping).unwrap();
    /// b.send_packet(0.01, b"pong").unwrap();
    /// let pong = b.poll_transmit().unwrap().data.to_vec();
    /// assert!(!a.has_rtt());
    /// a.handle_datagram(0.02, &pong).unwrap();
    /// assert!(a.has_rtt());
    /// assert_eq!(a.counters().packets_acked, 1);
    /// ```
    pub fn has_rtt(&self) -> bool {
        self.update.has_rtt
    }

    /// The ack and ack_bits the next packet will carry.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.ack_state(), (65535, 0)); // nothing received yet
    /// ```
    pub fn ack_state(&self) -> (u16, u32) {
        (self.ack, self.ack_bits)
    }

    /// The next datagram to send, oldest first; `None` when all are sent.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.send_packet(0.0, b"a").unwrap();
    /// endpoint.send_packet(0.0, b"b").unwrap();
    /// assert_eq!(endpoint.poll_transmit().unwrap().sequence, 0);
    /// assert_eq!(endpoint.poll_transmit().unwrap().sequence, 1);
    /// assert!(endpoint.poll_transmit().is_none());
    /// ```
    pub fn poll_transmit(&mut self) -> Option<Transmit<'_>> {
        match self.transmits.get(self.next_transmit) {
            Some(queued) => {
                self.next_transmit += 1;
                Some(Transmit {
                    sequence: queued.sequence,
                    data: &self.outgoing[queued.start..queued.end],
                })
            }
            None => {
                self.outgoing_used = 0;
                self.transmits.clear();
                self.next_transmit = 0;
                None
            }
        }
    }

    /// Datagrams waiting for [`poll_transmit`](Self::poll_transmit).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.send_packet(0.0, &[0; 2048]).unwrap();
    /// assert_eq!(endpoint.pending_transmits(), 2);
    /// ```
    pub fn pending_transmits(&self) -> usize {
        self.transmits.len() - self.next_transmit
    }

    /// Takes in one datagram received at `now`. A regular packet, or the last missing
    /// fragment of one, comes back as [`Received`]; a fragment that leaves its packet
    /// incomplete gives `Ok(None)`. Acks it carries are recorded for
    /// [`drain_acks`](Self::drain_acks).
    ///
    /// # Errors
    ///
    /// A [`ReceiveError`] saying why the datagram was dropped (counted in
    /// [`Counters::drops`]). Dropping changes nothing else: a datagram that fails any
    /// check neither acks anything nor moves any window.
    ///
    /// ```
    /// use netser_transport::endpoint::{Config, Endpoint, ReceiveError};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// let datagram = [0x20, 5, 0, 0, b'h', b'i'];
    /// assert_eq!(endpoint.handle_datagram(0.1, &datagram).unwrap().unwrap().payload, b"hi");
    /// assert_eq!(
    ///     endpoint.handle_datagram(0.2, &datagram),
    ///     Err(ReceiveError::Duplicate { sequence: 5 })
    /// );
    /// ```
    pub fn handle_datagram<'a>(
        &'a mut self,
        now: f64,
        datagram: &'a [u8],
    ) -> Result<Option<Received<'a>>, ReceiveError> {
        self.receive(now, datagram, None)
    }

    /// [`handle_datagram`](Self::handle_datagram) for a datagram whose packet says how
    /// long its sender held the newest ack in its header, `ack_delay` seconds (a layer
    /// above carries it in its payload, as the connection does: the header is
    /// `reliable`'s and has no field for it). The RTT sample of that ack is taken less
    /// the delay (never below 0), so [`Stats::rtt`] is the path's round trip rather than
    /// the path's plus the time the peer waited for a packet to carry the ack. A packet
    /// reassembled from fragments takes no delay (its payload is read after its acks).
    ///
    /// A peer whose datagrams come this way reports its delays: the retransmission
    /// timeout ([`Stats::rto`]) then allows for no more ack delay than the largest it
    /// reported, however long the peer goes without sending (a peer that only acks
    /// sends as seldom as it receives).
    ///
    /// # Errors
    ///
    /// As [`handle_datagram`](Self::handle_datagram).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    /// let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    /// a.send_packet(0.0, b"ping").unwrap();
    /// let datagram = a.poll_transmit().unwrap().data.to_vec();
    /// b.handle_datagram(0.05, &datagram).unwrap();
    /// // b answers 0.03 s later: the round trip took 0.13 s, the path 0.1 s.
    /// b.send_packet(0.08, b"pong").unwrap();
    /// assert!((b.ack_delay(0.08) - 0.03).abs() < 1e-12);
    /// let datagram = b.poll_transmit().unwrap().data.to_vec();
    /// a.handle_datagram_with_ack_delay(0.13, &datagram, 0.03).unwrap();
    /// assert!((a.stats().rtt - 0.1).abs() < 1e-12);
    /// assert!((a.stats().min_rtt - 0.1).abs() < 1e-12);
    /// ```
    pub fn handle_datagram_with_ack_delay<'a>(
        &'a mut self,
        now: f64,
        datagram: &'a [u8],
        ack_delay: f64,
    ) -> Result<Option<Received<'a>>, ReceiveError> {
        self.receive(now, datagram, Some(ack_delay))
    }

    /// Both entry points: `ack_delay` is `None` when the peer reports none.
    fn receive<'a>(
        &'a mut self,
        now: f64,
        datagram: &'a [u8],
        ack_delay: Option<f64>,
    ) -> Result<Option<Received<'a>>, ReceiveError> {
        self.counters.datagrams_received += 1;
        self.update.time = now;
        if let Some(delay) = ack_delay.filter(|d| d.is_finite()) {
            let max = self.peer_max_ack_delay.unwrap_or(0.0).max(delay);
            self.peer_max_ack_delay = Some(max);
        }
        let processed = self.process_datagram(now, datagram, ack_delay.unwrap_or(0.0));
        match processed {
            Ok(Some((sequence, Payload::Datagram(start)))) => Ok(Some(Received {
                sequence,
                payload: &datagram[start..],
            })),
            Ok(Some((sequence, Payload::Reassembled(range)))) => Ok(Some(Received {
                sequence,
                payload: self.reassembly.payload(range),
            })),
            Ok(None) => Ok(None),
            Err(error) => {
                self.counters.drops.record(&error);
                Err(error)
            }
        }
    }

    /// What the retransmission timeout allows for the peer's ack delay: the interval
    /// between its packets (the longest it can hold an ack), but no more than the
    /// largest delay it reported when it reports them.
    pub(super) fn ack_allowance(&self) -> f64 {
        match self.peer_max_ack_delay {
            Some(max) => self.peer_interval.min(max),
            None => self.peer_interval,
        }
    }

    /// How long, at `now`, the newest packet received has waited for its ack: the ack
    /// delay of the header the next [`send_packet`](Self::send_packet) writes, for a
    /// layer above to report with it (see
    /// [`handle_datagram_with_ack_delay`](Self::handle_datagram_with_ack_delay)). 0 when
    /// nothing was received yet, or the newest packet is still missing fragments.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.ack_delay(1.0), 0.0);
    /// endpoint.handle_datagram(1.0, &[0x20, 5, 0, 0]).unwrap();
    /// assert_eq!(endpoint.ack_delay(1.25), 0.25);
    /// ```
    pub fn ack_delay(&self, now: f64) -> f64 {
        self.ack_received_at
            .map_or(0.0, |received| (now - received).max(0.0))
    }

    /// The sequences of sent packets the other side has received, since the last
    /// [`drain_acks`](Self::drain_acks) or [`clear_acks`](Self::clear_acks), in the
    /// order their acks arrived. Each sent packet is reported at most once. The list
    /// holds at most [`Config::sent_packets_buffer_size`] acks: when it is full, the
    /// oldest half is dropped and counted in [`Counters::acks_dropped`].
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert!(endpoint.acks().is_empty());
    /// ```
    pub fn acks(&self) -> &[u16] {
        &self.acks
    }

    /// Forgets the acks reported so far.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.clear_acks();
    /// assert!(endpoint.acks().is_empty());
    /// ```
    pub fn clear_acks(&mut self) {
        self.acks.clear();
    }

    /// Takes the acks reported so far (see [`acks`](Self::acks)).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    /// let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    /// a.send_packet(0.0, b"ping").unwrap();
    /// let datagram = a.poll_transmit().unwrap().data.to_vec();
    /// b.handle_datagram(0.05, &datagram).unwrap();
    /// b.send_packet(0.05, b"pong").unwrap();
    /// let datagram = b.poll_transmit().unwrap().data.to_vec();
    /// a.handle_datagram(0.1, &datagram).unwrap();
    /// assert_eq!(a.drain_acks().collect::<Vec<_>>(), [0]);
    /// assert!(a.acks().is_empty());
    /// assert!((a.stats().rtt - 0.1).abs() < 1e-12);
    /// ```
    pub fn drain_acks(&mut self) -> std::vec::Drain<'_, u16> {
        self.acks.drain(..)
    }

    /// Recomputes the statistics at time `now` (seconds). Call once per frame.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// for frame in 0..300 {
    ///     endpoint.send_packet(f64::from(frame) / 60.0, &[0; 100]).unwrap();
    /// }
    /// endpoint.handle_timeout(5.0);
    /// assert_eq!(endpoint.stats().packet_loss, Some(1.0)); // nothing was acked
    /// assert!(endpoint.stats().sent_kbps > Some(0.0));
    /// ```
    pub fn handle_timeout(&mut self, now: f64) {
        self.update.time = now;
        if core::mem::take(&mut self.update.rtt_changed) {
            self.rtt_history.summarize(&mut self.stats);
        }
        self.measure(now).blend_into(
            &mut self.stats,
            self.update.packet_loss_smoothing_factor,
            self.update.bandwidth_smoothing_factor,
        );
    }

    /// Loss and bandwidth at `now` from the windows' running totals (whose cost is the
    /// packets that newly had time to be acked, not the windows).
    fn measure(&mut self, now: f64) -> stats::Measured {
        let settle = stats::settle_time(&self.stats, self.update.has_rtt);
        self.sent.settle(now, settle);
        stats::Measured {
            packet_loss: self.sent.packet_loss(),
            sent_kbps: self.sent.sent_kbps(),
            received_kbps: self.received.received_kbps(),
            acked_kbps: self.sent.acked_kbps(),
        }
    }

    /// The latest estimates (see [`Stats`]).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.stats().rtt_max, 0.0);
    /// ```
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The counters.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.counters().packets_received, 0);
    /// ```
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Packets with some fragments received and some still missing.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.handle_datagram(0.0, &[1, 0, 0, 1, 1]).ok(); // fragment 1 of 2, 0 bytes: refused
    /// assert_eq!(endpoint.pending_reassemblies(), 0);
    /// ```
    pub fn pending_reassemblies(&self) -> usize {
        self.reassembly.pending()
    }

    /// Heap bytes held by reassembly now; never above
    /// [`Config::reassembly_memory_bound`].
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert!(endpoint.reassembly_bytes() <= endpoint.config().reassembly_memory_bound());
    /// ```
    pub fn reassembly_bytes(&self) -> usize {
        self.reassembly.memory_bytes()
    }

    /// Bytes of fragment data the reassembly pool has allocated (in use or free);
    /// never above [`Config::max_reassembly_bytes`].
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.reassembly_block_bytes(), 0);
    /// ```
    pub fn reassembly_block_bytes(&self) -> usize {
        self.reassembly.block_bytes()
    }

    /// Heap bytes held now, apart from the outgoing queue and undrained acks; never above
    /// [`Config::memory_bound`].
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert!(endpoint.memory_bytes() <= endpoint.config().memory_bound());
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.reassembly.memory_bytes()
            + self.sent.packets().heap_bytes()
            + self.received.packets().heap_bytes()
            + self.rtt_history.heap_bytes()
    }

    /// Back to the state of a new endpoint (sequence 0, nothing sent or received,
    /// counters and stats zero); the config and allocated memory are kept.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// endpoint.send_packet(0.0, b"x").unwrap();
    /// endpoint.reset();
    /// assert_eq!(endpoint.next_sequence(), 0);
    /// assert_eq!(endpoint.pending_transmits(), 0);
    /// ```
    pub fn reset(&mut self) {
        self.sequence = 0;
        self.sent.reset();
        self.received.reset();
        self.ack = u16::MAX;
        self.ack_bits = 0;
        self.reassembly.reset();
        self.acks.clear();
        self.outgoing.clear();
        self.outgoing_used = 0;
        self.transmits.clear();
        self.next_transmit = 0;
        self.rtt_history.clear();
        self.update.has_rtt = false;
        self.update.rtt_changed = true;
        self.seen_acks = (u16::MAX, 0);
        self.ack_received_at = None;
        self.peer_interval = 0.0;
        self.peer_max_ack_delay = None;
        self.last_receive_time = None;
        self.stats = Stats::default();
        self.counters = Counters::default();
    }
}

#[cfg(test)]
mod tests;
