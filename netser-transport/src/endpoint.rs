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
//! let mut client = Endpoint::new(Config::default(), 0.0)?;
//! let mut server = Endpoint::new(Config::default(), 0.0)?;
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
//!         match server.receive_packet(now, &datagram) {
//!             Ok(Some(packet)) => delivered.push((packet.sequence, packet.payload.len())),
//!             Ok(None) => {}  // a fragment, stored until its packet is whole
//!             Err(_dropped) => {} // counted in server.counters().drops
//!         }
//!     }
//!
//!     // The server answers (its packets carry the acks), and both update their stats.
//!     server.send_packet(now, b"ack me")?;
//!     while let Some(transmit) = server.poll_transmit() {
//!         client.receive_packet(now, transmit.data)?;
//!     }
//!     for acked in client.drain_acks() {
//!         // the server received the client's packet `acked`
//!         assert!(acked <= frame as u16);
//!     }
//!     client.update(now);
//!     server.update(now);
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

pub mod header;
mod reassembly;
mod stats;

use core::ops::Range;

use header::{
    FragmentHeader, PacketHeader, FRAGMENT_HEADER_BYTES, MAX_FRAGMENTS, MAX_PACKET_HEADER_BYTES,
};
use reassembly::{Fragment, Reassembly, Stored};
pub use stats::Stats;
use stats::{ReceivedPacket, RttHistory, SentPacket};

use crate::sequence::{sequence_difference, SequenceBuffer, MAX_SEQUENCE_BUFFER_CAPACITY};

/// The reassembly memory bound of [`Config::default`], in bytes: the value of
/// `Config::default().reassembly_memory_bound()` on a 64-bit target. It is the pool
/// (1024 blocks of 1024 bytes), its block map (one bit per block: 128 bytes) and the
/// table of 64 packets in progress (80 bytes each).
pub const DEFAULT_REASSEMBLY_MEMORY_BOUND: usize = 1024 * 1024 + 128 + 64 * 80;

/// The endpoint's settings. The defaults are the articles' and `reliable`'s (fragment
/// size 1024, up to 256 fragments, 256-packet windows), except where noted.
///
/// Two endpoints must agree on `fragment_size` and `max_fragments` (the receiver refuses
/// fragments that do not fit its own); the rest is local.
///
/// ```
/// use netser_transport::endpoint::Config;
/// let config = Config { fragment_above: 1200, ..Config::default() };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.max_packet_size, 256 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Largest payload that can be sent or received, in bytes. Default 256 KiB
    /// (`max_fragments * fragment_size`; `reliable` defaults to 16 KiB).
    pub max_packet_size: usize,
    /// Payloads longer than this are sent as fragments. Default 1024.
    pub fragment_above: usize,
    /// Payload bytes per fragment (the last may be shorter). Default 1024.
    pub fragment_size: usize,
    /// Most fragments per packet, at most 256 (one byte on the wire). Default 256
    /// (`reliable` defaults to 16).
    pub max_fragments: usize,
    /// Sent packets remembered for acks, loss and bandwidth. A power of two. Default 256.
    pub sent_packets_buffer_size: usize,
    /// Received packets remembered: the window for acks and for refusing stale and
    /// duplicate packets. A power of two, at least 32. Default 256.
    pub received_packets_buffer_size: usize,
    /// Packets that can be in reassembly at once. A power of two. Default 64.
    pub fragment_reassembly_buffer_size: usize,
    /// Most bytes of fragment data held for reassembly, across all packets in progress
    /// (rounded down to whole fragments; at least one full packet). A packet's first
    /// fragment reserves room for all of its fragments, so its payload is reassembled in
    /// one piece. Default 1 MiB. `reliable` has no such cap; this is what bounds a flood
    /// of fragments.
    pub max_reassembly_bytes: usize,
    /// Weight of each new RTT sample in the smoothed RTT. Default 0.0025.
    pub rtt_smoothing_factor: f64,
    /// RTT samples kept for min/max/avg and jitter. Default 512.
    pub rtt_history_size: usize,
    /// Weight of each new packet loss measure. Default 0.1.
    pub packet_loss_smoothing_factor: f64,
    /// Weight of each new bandwidth measure. Default 0.1.
    pub bandwidth_smoothing_factor: f64,
    /// Bytes added per datagram in bandwidth stats for the IP and UDP headers.
    /// Default 28 (IPv4 20 + UDP 8).
    pub packet_header_size: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_packet_size: 256 * 1024,
            fragment_above: 1024,
            fragment_size: 1024,
            max_fragments: 256,
            sent_packets_buffer_size: 256,
            received_packets_buffer_size: 256,
            fragment_reassembly_buffer_size: 64,
            max_reassembly_bytes: 1024 * 1024,
            rtt_smoothing_factor: 0.0025,
            rtt_history_size: 512,
            packet_loss_smoothing_factor: 0.1,
            bandwidth_smoothing_factor: 0.1,
            packet_header_size: 28,
        }
    }
}

/// A [`Config`] field out of range.
///
/// ```
/// use netser_transport::endpoint::Config;
/// let error = Config { max_fragments: 300, ..Config::default() }.validate().unwrap_err();
/// assert_eq!(error.field, "max_fragments");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The field.
    pub field: &'static str,
    /// What it must be.
    pub expected: &'static str,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "invalid endpoint config: `{}` must be {}",
            self.field, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming the first field out of range.
    ///
    /// ```
    /// use netser_transport::endpoint::Config;
    /// assert!(Config::default().validate().is_ok());
    /// let config = Config { sent_packets_buffer_size: 100, ..Config::default() };
    /// assert_eq!(config.validate().unwrap_err().field, "sent_packets_buffer_size");
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn check(ok: bool, field: &'static str, expected: &'static str) -> Result<(), ConfigError> {
            if ok {
                Ok(())
            } else {
                Err(ConfigError { field, expected })
            }
        }
        let power_of_two = |n: usize| n.is_power_of_two() && n <= MAX_SEQUENCE_BUFFER_CAPACITY;
        check(
            (1..=MAX_FRAGMENTS).contains(&self.max_fragments),
            "max_fragments",
            "in 1..=256",
        )?;
        check(
            (1..=u16::MAX as usize).contains(&self.fragment_size),
            "fragment_size",
            "in 1..=65535",
        )?;
        check(self.max_packet_size >= 1, "max_packet_size", "at least 1")?;
        check(
            self.max_packet_size <= self.fragment_above
                || self.max_packet_size <= self.max_fragments * self.fragment_size,
            "max_packet_size",
            "at most max_fragments * fragment_size when above fragment_above",
        )?;
        check(
            power_of_two(self.sent_packets_buffer_size),
            "sent_packets_buffer_size",
            "a power of two in 1..=32768",
        )?;
        check(
            power_of_two(self.received_packets_buffer_size)
                && self.received_packets_buffer_size >= 32,
            "received_packets_buffer_size",
            "a power of two in 32..=32768 (ack_bits covers 32 packets)",
        )?;
        check(
            power_of_two(self.fragment_reassembly_buffer_size),
            "fragment_reassembly_buffer_size",
            "a power of two in 1..=32768",
        )?;
        check(
            self.max_reassembly_bytes / self.fragment_size >= self.fragments_per_max_packet()
                && self.max_reassembly_bytes / self.fragment_size < u32::MAX as usize,
            "max_reassembly_bytes",
            "room for one packet of max_packet_size in whole fragments",
        )?;
        check(self.rtt_history_size >= 1, "rtt_history_size", "at least 1")?;
        let factor = |x: f64| x > 0.0 && x <= 1.0;
        check(
            factor(self.rtt_smoothing_factor),
            "rtt_smoothing_factor",
            "in (0, 1]",
        )?;
        check(
            factor(self.packet_loss_smoothing_factor),
            "packet_loss_smoothing_factor",
            "in (0, 1]",
        )?;
        check(
            factor(self.bandwidth_smoothing_factor),
            "bandwidth_smoothing_factor",
            "in (0, 1]",
        )?;
        check(
            self.packet_header_size <= 65535,
            "packet_header_size",
            "at most 65535",
        )
    }

    fn fragments_per_max_packet(&self) -> usize {
        if self.max_packet_size > self.fragment_above {
            self.max_packet_size.div_ceil(self.fragment_size)
        } else {
            0
        }
    }

    fn max_reassembly_blocks(&self) -> usize {
        self.max_reassembly_bytes / self.fragment_size
    }

    /// The most heap bytes reassembly can hold with this config, whatever arrives:
    /// the fragment pool (a completed packet is returned from it, not copied out), its
    /// block map and the table of packets in progress.
    ///
    /// ```
    /// use netser_transport::endpoint::{Config, DEFAULT_REASSEMBLY_MEMORY_BOUND};
    /// # #[cfg(target_pointer_width = "64")]
    /// assert_eq!(Config::default().reassembly_memory_bound(), DEFAULT_REASSEMBLY_MEMORY_BOUND);
    /// ```
    pub fn reassembly_memory_bound(&self) -> usize {
        Reassembly::memory_bound(
            self.fragment_reassembly_buffer_size,
            self.fragment_size,
            self.max_reassembly_blocks(),
        )
    }

    /// The most heap bytes an [`Endpoint`] with this config holds, apart from the
    /// outgoing queue and the acks not yet drained (both grow only with what you send):
    /// [`reassembly_memory_bound`](Self::reassembly_memory_bound) plus the sent and
    /// received windows and the RTT history.
    ///
    /// ```
    /// use netser_transport::endpoint::Config;
    /// let config = Config::default();
    /// assert!(config.memory_bound() > config.reassembly_memory_bound());
    /// assert!(config.memory_bound() < 1_100_000);
    /// ```
    pub fn memory_bound(&self) -> usize {
        self.reassembly_memory_bound() + self.fixed_table_bytes()
    }

    fn fixed_table_bytes(&self) -> usize {
        SequenceBuffer::<SentPacket>::heap_bytes_for(self.sent_packets_buffer_size)
            + SequenceBuffer::<ReceivedPacket>::heap_bytes_for(self.received_packets_buffer_size)
            + self.rtt_history_size * core::mem::size_of::<f64>()
    }
}

/// A payload that could not be sent.
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, SendError};
/// let mut endpoint = Endpoint::new(Config { max_packet_size: 4, ..Config::default() }, 0.0).unwrap();
/// assert_eq!(endpoint.send_packet(0.0, &[0; 5]), Err(SendError::TooLarge { size: 5, max: 4 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// The payload is longer than [`Config::max_packet_size`].
    TooLarge {
        /// The payload's length.
        size: usize,
        /// The limit.
        max: usize,
    },
}

impl core::fmt::Display for SendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooLarge { size, max } => {
                write!(f, "payload of {size} bytes is over max_packet_size {max}")
            }
        }
    }
}

impl std::error::Error for SendError {}

/// Why a received datagram was dropped. Each is counted in [`DropCounters`].
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, ReceiveError};
/// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
/// assert_eq!(
///     endpoint.receive_packet(0.0, &[0x20, 0]).unwrap_err(),
///     ReceiveError::Truncated { needed: 3, found: 2 }
/// );
/// assert_eq!(endpoint.counters().drops.truncated, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReceiveError {
    /// The datagram ends inside a header.
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes there were.
        found: usize,
    },
    /// A prefix byte that is neither a packet's nor a fragment's.
    BadPrefix {
        /// The byte.
        prefix: u8,
    },
    /// A header encoded in a way the writer never produces.
    NonCanonicalHeader,
    /// The payload (or the packet its fragments make) is over `max_packet_size`.
    TooLarge {
        /// Its size, or for a fragmented packet at least its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The packet is older than the receive (or reassembly) window.
    Stale {
        /// Its sequence.
        sequence: u16,
    },
    /// The packet was already received.
    Duplicate {
        /// Its sequence.
        sequence: u16,
    },
    /// The fragment count is over `max_fragments`.
    FragmentCountTooLarge {
        /// The count in the header.
        num_fragments: u16,
        /// The limit.
        max: usize,
    },
    /// The fragment id is not below the fragment count.
    FragmentIdOutOfRange {
        /// The id.
        fragment_id: u8,
        /// The count.
        num_fragments: u16,
    },
    /// A fragment's count differs from the first fragment received for its packet.
    FragmentCountMismatch {
        /// The packet.
        sequence: u16,
        /// The count of the first fragment.
        expected: u16,
        /// The count of this one.
        found: u16,
    },
    /// The fragment carries more than `fragment_size` bytes.
    FragmentTooBig {
        /// Its data bytes.
        size: usize,
        /// `fragment_size`.
        max: usize,
    },
    /// A fragment other than the last is not exactly `fragment_size`, or the last is
    /// empty.
    FragmentSizeMismatch {
        /// The fragment.
        fragment_id: u8,
        /// Its data bytes.
        size: usize,
        /// What it must be (for the last, the most it may be).
        expected: usize,
    },
    /// Fragment 0's packet header has a different sequence from the fragment header.
    FragmentSequenceMismatch {
        /// The fragment header's sequence.
        fragment: u16,
        /// The packet header's.
        packet: u16,
    },
    /// This fragment of this packet is already held.
    DuplicateFragment {
        /// The packet.
        sequence: u16,
        /// The fragment.
        fragment_id: u8,
    },
    /// No run of reassembly blocks could be had for the packet (the config checks make
    /// this unreachable).
    ReassemblyFull {
        /// The packet.
        sequence: u16,
    },
}

impl core::fmt::Display for ReceiveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Truncated { needed, found } => {
                write!(f, "truncated header: needed {needed} bytes, found {found}")
            }
            Self::BadPrefix { prefix } => write!(f, "bad prefix byte {prefix:#04x}"),
            Self::NonCanonicalHeader => write!(f, "non-canonical packet header"),
            Self::TooLarge { size, max } => {
                write!(f, "packet of {size} bytes is over max_packet_size {max}")
            }
            Self::Stale { sequence } => write!(f, "stale packet {sequence}"),
            Self::Duplicate { sequence } => write!(f, "duplicate packet {sequence}"),
            Self::FragmentCountTooLarge { num_fragments, max } => {
                write!(f, "{num_fragments} fragments is over max_fragments {max}")
            }
            Self::FragmentIdOutOfRange {
                fragment_id,
                num_fragments,
            } => write!(
                f,
                "fragment id {fragment_id} out of range for {num_fragments} fragments"
            ),
            Self::FragmentCountMismatch {
                sequence,
                expected,
                found,
            } => write!(
                f,
                "packet {sequence} has {expected} fragments but this fragment says {found}"
            ),
            Self::FragmentTooBig { size, max } => {
                write!(f, "fragment of {size} bytes is over fragment_size {max}")
            }
            Self::FragmentSizeMismatch {
                fragment_id,
                size,
                expected,
            } => write!(
                f,
                "fragment {fragment_id} has {size} bytes, expected {expected}"
            ),
            Self::FragmentSequenceMismatch { fragment, packet } => write!(
                f,
                "fragment of packet {fragment} carries a header for packet {packet}"
            ),
            Self::DuplicateFragment {
                sequence,
                fragment_id,
            } => write!(f, "duplicate fragment {fragment_id} of packet {sequence}"),
            Self::ReassemblyFull { sequence } => {
                write!(f, "no reassembly memory for packet {sequence}")
            }
        }
    }
}

impl std::error::Error for ReceiveError {}

/// Received datagrams dropped, by reason, and in-progress packets abandoned.
///
/// ```
/// use netser_transport::endpoint::DropCounters;
/// assert_eq!(DropCounters::default().total(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DropCounters {
    /// [`ReceiveError::Truncated`] (including empty datagrams).
    pub truncated: u64,
    /// [`ReceiveError::BadPrefix`].
    pub bad_prefix: u64,
    /// [`ReceiveError::NonCanonicalHeader`].
    pub non_canonical_header: u64,
    /// [`ReceiveError::TooLarge`].
    pub too_large: u64,
    /// [`ReceiveError::Stale`].
    pub stale: u64,
    /// [`ReceiveError::Duplicate`], including fragments of a packet already received.
    pub duplicate: u64,
    /// [`ReceiveError::FragmentCountTooLarge`].
    pub fragment_count_too_large: u64,
    /// [`ReceiveError::FragmentIdOutOfRange`].
    pub fragment_id_out_of_range: u64,
    /// [`ReceiveError::FragmentCountMismatch`].
    pub fragment_count_mismatch: u64,
    /// [`ReceiveError::FragmentTooBig`].
    pub fragment_too_big: u64,
    /// [`ReceiveError::FragmentSizeMismatch`].
    pub fragment_size_mismatch: u64,
    /// [`ReceiveError::FragmentSequenceMismatch`].
    pub fragment_sequence_mismatch: u64,
    /// [`ReceiveError::DuplicateFragment`].
    pub duplicate_fragment: u64,
    /// [`ReceiveError::ReassemblyFull`].
    pub reassembly_full: u64,
    /// Packets in reassembly dropped unfinished because newer packets pushed them out of
    /// the window (or the packet arrived whole).
    pub reassembly_expired: u64,
    /// Packets in reassembly dropped unfinished to free memory for a newer one.
    pub reassembly_evicted: u64,
}

impl DropCounters {
    /// Datagrams dropped, all reasons (not counting abandoned reassemblies).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// let _ = endpoint.receive_packet(0.0, &[]);
    /// let _ = endpoint.receive_packet(0.0, &[0xff, 0, 0, 0, 0]);
    /// assert_eq!(endpoint.counters().drops.total(), 2);
    /// ```
    pub fn total(&self) -> u64 {
        self.truncated
            + self.bad_prefix
            + self.non_canonical_header
            + self.too_large
            + self.stale
            + self.duplicate
            + self.fragment_count_too_large
            + self.fragment_id_out_of_range
            + self.fragment_count_mismatch
            + self.fragment_too_big
            + self.fragment_size_mismatch
            + self.fragment_sequence_mismatch
            + self.duplicate_fragment
            + self.reassembly_full
    }

    fn record(&mut self, error: &ReceiveError) {
        let counter = match error {
            ReceiveError::Truncated { .. } => &mut self.truncated,
            ReceiveError::BadPrefix { .. } => &mut self.bad_prefix,
            ReceiveError::NonCanonicalHeader => &mut self.non_canonical_header,
            ReceiveError::TooLarge { .. } => &mut self.too_large,
            ReceiveError::Stale { .. } => &mut self.stale,
            ReceiveError::Duplicate { .. } => &mut self.duplicate,
            ReceiveError::FragmentCountTooLarge { .. } => &mut self.fragment_count_too_large,
            ReceiveError::FragmentIdOutOfRange { .. } => &mut self.fragment_id_out_of_range,
            ReceiveError::FragmentCountMismatch { .. } => &mut self.fragment_count_mismatch,
            ReceiveError::FragmentTooBig { .. } => &mut self.fragment_too_big,
            ReceiveError::FragmentSizeMismatch { .. } => &mut self.fragment_size_mismatch,
            ReceiveError::FragmentSequenceMismatch { .. } => &mut self.fragment_sequence_mismatch,
            ReceiveError::DuplicateFragment { .. } => &mut self.duplicate_fragment,
            ReceiveError::ReassemblyFull { .. } => &mut self.reassembly_full,
        };
        *counter += 1;
    }
}

/// What an [`Endpoint`] has done.
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
/// endpoint.send_packet(0.0, &[0; 3000]).unwrap();
/// assert_eq!(endpoint.counters().packets_sent, 1);
/// assert_eq!(endpoint.counters().fragments_sent, 3);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counters {
    /// Packets sent (a fragmented packet counts once).
    pub packets_sent: u64,
    /// Fragments sent.
    pub fragments_sent: u64,
    /// Payloads refused by [`Endpoint::send_packet`] as too large.
    pub packets_too_large_to_send: u64,
    /// Datagrams handed to [`Endpoint::receive_packet`], whatever became of them.
    pub datagrams_received: u64,
    /// Packets received and delivered (a reassembled packet counts once).
    pub packets_received: u64,
    /// Fragments stored for reassembly.
    pub fragments_received: u64,
    /// Packets reassembled from fragments.
    pub packets_reassembled: u64,
    /// Sent packets the other side acked.
    pub packets_acked: u64,
    /// Acks dropped from a full ack list that was never drained (see
    /// [`Endpoint::acks`]).
    pub acks_dropped: u64,
    /// Received datagrams dropped, by reason.
    pub drops: DropCounters,
}

/// A datagram to send, from [`Endpoint::poll_transmit`].
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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

/// A packet received whole, from [`Endpoint::receive_packet`].
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
/// let packet = endpoint.receive_packet(0.0, &[0x20, 9, 0, 0, 42]).unwrap().unwrap();
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
/// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
/// assert_eq!(endpoint.next_sequence(), 0);
/// ```
pub struct Endpoint {
    config: Config,
    sequence: u16,
    sent: SequenceBuffer<SentPacket>,
    received: SequenceBuffer<ReceivedPacket>,
    /// The ack and ack_bits for the next packet, kept up to date on every receive
    /// (the same as `received.generate_ack_bits()`, without 32 lookups per send).
    ack: u16,
    ack_bits: u32,
    reassembly: Reassembly,
    acks: Vec<u16>,
    outgoing: Vec<u8>,
    /// Datagrams queued in `outgoing`; those before `next_transmit` have been polled.
    /// Both are emptied once everything is polled.
    transmits: Vec<QueuedTransmit>,
    next_transmit: usize,
    rtt_history: RttHistory,
    has_rtt: bool,
    stats: Stats,
    counters: Counters,
    time: f64,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("time", &self.time)
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
    /// assert!(Endpoint::new(Config::default(), 12.5).is_ok());
    /// assert!(Endpoint::new(Config { fragment_size: 0, ..Config::default() }, 0.0).is_err());
    /// ```
    pub fn new(config: Config, now: f64) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            sequence: 0,
            sent: SequenceBuffer::new(config.sent_packets_buffer_size),
            received: SequenceBuffer::new(config.received_packets_buffer_size),
            ack: u16::MAX,
            ack_bits: 0,
            reassembly: Reassembly::new(
                config.fragment_reassembly_buffer_size,
                config.fragment_size,
                config.max_reassembly_blocks(),
            ),
            acks: Vec::new(),
            outgoing: Vec::new(),
            transmits: Vec::new(),
            next_transmit: 0,
            rtt_history: RttHistory::new(config.rtt_history_size),
            has_rtt: false,
            stats: Stats::default(),
            counters: Counters::default(),
            time: now,
            config,
        })
    }

    /// The config.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert_eq!(endpoint.config().fragment_size, 1024);
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The sequence the next packet sent will have, to map acks back to what you sent.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// endpoint.send_packet(0.0, b"x").unwrap();
    /// assert_eq!(endpoint.next_sequence(), 1);
    /// ```
    pub fn next_sequence(&self) -> u16 {
        self.sequence
    }

    /// The ack and ack_bits the next packet will carry.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert_eq!(endpoint.ack_state(), (65535, 0)); // nothing received yet
    /// ```
    pub fn ack_state(&self) -> (u16, u32) {
        (self.ack, self.ack_bits)
    }

    /// Sends `payload` as the next packet: one datagram, or fragments when it is longer
    /// than [`Config::fragment_above`]. The datagrams wait for
    /// [`poll_transmit`](Self::poll_transmit). Returns the packet's sequence; it will be
    /// reported by [`drain_acks`](Self::drain_acks) once the other side receives it.
    /// An empty payload is allowed (a packet that only carries acks).
    ///
    /// # Errors
    ///
    /// [`SendError::TooLarge`] if `payload` is longer than [`Config::max_packet_size`];
    /// nothing is sent and the sequence does not advance.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert_eq!(endpoint.send_packet(0.0, &[7; 2500]), Ok(0));
    /// let sizes: Vec<usize> = std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.len())).collect();
    /// // fragment header 5 (+ packet header 8 on fragment 0) + 1024, 1024, 452 bytes
    /// assert_eq!(sizes, [5 + 8 + 1024, 5 + 1024, 5 + 452]);
    /// ```
    pub fn send_packet(&mut self, now: f64, payload: &[u8]) -> Result<u16, SendError> {
        if payload.len() > self.config.max_packet_size {
            self.counters.packets_too_large_to_send += 1;
            return Err(SendError::TooLarge {
                size: payload.len(),
                max: self.config.max_packet_size,
            });
        }
        let sequence = self.sequence;
        self.sequence = sequence.wrapping_add(1);
        self.time = now;
        if self.next_transmit == self.transmits.len() {
            // Everything handed out before has been sent: reuse the buffers.
            self.outgoing.clear();
            self.transmits.clear();
            self.next_transmit = 0;
        }
        let (header, header_len) = PacketHeader {
            sequence,
            ack: self.ack,
            ack_bits: self.ack_bits,
        }
        .encode();
        let header = &header[..header_len];
        let per_datagram = self.config.packet_header_size;

        let wire_bytes = if payload.len() <= self.config.fragment_above {
            let start = self.outgoing.len();
            self.outgoing.extend_from_slice(header);
            self.outgoing.extend_from_slice(payload);
            self.transmits.push(QueuedTransmit {
                sequence,
                start,
                end: self.outgoing.len(),
            });
            per_datagram + header_len + payload.len()
        } else {
            let num_fragments = payload.len().div_ceil(self.config.fragment_size);
            self.outgoing
                .reserve(payload.len() + header_len + num_fragments * FRAGMENT_HEADER_BYTES);
            let mut wire_bytes = 0;
            for (fragment_id, data) in payload.chunks(self.config.fragment_size).enumerate() {
                let start = self.outgoing.len();
                self.outgoing.extend_from_slice(
                    &FragmentHeader {
                        sequence,
                        fragment_id: fragment_id as u8,
                        num_fragments: num_fragments as u16,
                    }
                    .encode(),
                );
                if fragment_id == 0 {
                    self.outgoing.extend_from_slice(header);
                }
                self.outgoing.extend_from_slice(data);
                let end = self.outgoing.len();
                self.transmits.push(QueuedTransmit {
                    sequence,
                    start,
                    end,
                });
                wire_bytes += per_datagram + end - start;
            }
            self.counters.fragments_sent += num_fragments as u64;
            wire_bytes
        };
        let inserted = self.sent.insert(
            sequence,
            SentPacket {
                time: now,
                bytes: u32::try_from(wire_bytes).unwrap_or(u32::MAX),
                acked: false,
            },
        );
        // The newest sequence always fits its own window.
        debug_assert!(inserted.is_ok());
        self.counters.packets_sent += 1;
        Ok(sequence)
    }

    /// The next datagram to send, oldest first; `None` when all are sent.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
                self.outgoing.clear();
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
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// let datagram = [0x20, 5, 0, 0, b'h', b'i'];
    /// assert_eq!(endpoint.receive_packet(0.1, &datagram).unwrap().unwrap().payload, b"hi");
    /// assert_eq!(
    ///     endpoint.receive_packet(0.2, &datagram),
    ///     Err(ReceiveError::Duplicate { sequence: 5 })
    /// );
    /// ```
    pub fn receive_packet<'a>(
        &'a mut self,
        now: f64,
        datagram: &'a [u8],
    ) -> Result<Option<Received<'a>>, ReceiveError> {
        self.counters.datagrams_received += 1;
        self.time = now;
        match self.process_datagram(now, datagram) {
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

    fn process_datagram(
        &mut self,
        now: f64,
        datagram: &[u8],
    ) -> Result<Option<(u16, Payload)>, ReceiveError> {
        let Some(&prefix) = datagram.first() else {
            return Err(ReceiveError::Truncated {
                needed: 1,
                found: 0,
            });
        };
        let limit = self.config.max_packet_size + MAX_PACKET_HEADER_BYTES + FRAGMENT_HEADER_BYTES;
        if datagram.len() > limit {
            return Err(ReceiveError::TooLarge {
                size: datagram.len(),
                max: limit,
            });
        }
        if prefix & 1 == 0 {
            let (header, header_len) = PacketHeader::read(datagram)?;
            let size = datagram.len() - header_len;
            if size > self.config.max_packet_size {
                return Err(ReceiveError::TooLarge {
                    size,
                    max: self.config.max_packet_size,
                });
            }
            self.accept(now, header, datagram.len())?;
            Ok(Some((header.sequence, Payload::Datagram(header_len))))
        } else {
            self.process_fragment(now, datagram)
        }
    }

    fn process_fragment(
        &mut self,
        now: f64,
        datagram: &[u8],
    ) -> Result<Option<(u16, Payload)>, ReceiveError> {
        let fragment = FragmentHeader::read(datagram, self.config.max_fragments)?;
        let sequence = fragment.sequence;
        let mut data = &datagram[FRAGMENT_HEADER_BYTES..];
        let mut ack = None;
        if fragment.fragment_id == 0 {
            let (header, header_len) = PacketHeader::read(data)?;
            if header.sequence != sequence {
                return Err(ReceiveError::FragmentSequenceMismatch {
                    fragment: sequence,
                    packet: header.sequence,
                });
            }
            ack = Some((header.ack, header.ack_bits));
            data = &data[header_len..];
        }
        let fragment_size = self.config.fragment_size;
        if data.len() > fragment_size {
            return Err(ReceiveError::FragmentTooBig {
                size: data.len(),
                max: fragment_size,
            });
        }
        let is_last = u16::from(fragment.fragment_id) + 1 == fragment.num_fragments;
        if (!is_last && data.len() != fragment_size) || (is_last && data.is_empty()) {
            return Err(ReceiveError::FragmentSizeMismatch {
                fragment_id: fragment.fragment_id,
                size: data.len(),
                expected: fragment_size,
            });
        }
        // The smallest packet these fragments can make must fit; the last fragment
        // knows the exact size.
        let full = usize::from(fragment.num_fragments - 1) * fragment_size;
        let size = full + if is_last { data.len() } else { 1 };
        if size > self.config.max_packet_size {
            return Err(ReceiveError::TooLarge {
                size,
                max: self.config.max_packet_size,
            });
        }
        if self.received.contains(sequence) {
            return Err(ReceiveError::Duplicate { sequence });
        }
        if self.received.is_stale(sequence) || self.reassembly.is_stale(sequence) {
            return Err(ReceiveError::Stale { sequence });
        }
        let new_packet = !self.reassembly.contains(sequence);
        let stored = self.reassembly.store(Fragment {
            sequence,
            fragment_id: fragment.fragment_id,
            num_fragments: fragment.num_fragments,
            ack,
            data,
            wire_bytes: datagram.len(),
        });
        self.sync_reassembly_drops();
        let stored = stored?;
        if new_packet {
            // As `reliable` does, the first fragment of a packet moves the receive window
            // (so the ack sent back names it, with its bit still clear): the two write
            // the same headers from the same datagrams.
            self.advance_received(sequence);
        }
        match stored {
            Stored::Incomplete => {
                self.counters.fragments_received += 1;
                Ok(None)
            }
            Stored::Complete {
                ack,
                ack_bits,
                wire_bytes,
                payload,
            } => {
                self.counters.fragments_received += 1;
                self.counters.packets_reassembled += 1;
                let header = PacketHeader {
                    sequence,
                    ack,
                    ack_bits,
                };
                self.accept(now, header, wire_bytes)?;
                Ok(Some((sequence, Payload::Reassembled(payload))))
            }
        }
    }

    fn sync_reassembly_drops(&mut self) {
        let dropped = self.reassembly.dropped();
        self.counters.drops.reassembly_expired = dropped.expired;
        self.counters.drops.reassembly_evicted = dropped.evicted;
    }

    /// Moves the receive window to `sequence` without receiving it.
    fn advance_received(&mut self, sequence: u16) {
        let newer_by = sequence_difference(sequence, self.ack);
        if newer_by > 0 {
            self.received.advance(sequence);
            self.ack_bits = if newer_by < 32 {
                self.ack_bits << newer_by
            } else {
                0
            };
            self.ack = sequence;
        }
    }

    /// Records a whole packet as received and processes the acks it carries.
    fn accept(
        &mut self,
        now: f64,
        header: PacketHeader,
        wire_bytes: usize,
    ) -> Result<(), ReceiveError> {
        let sequence = header.sequence;
        if self.received.is_stale(sequence) {
            return Err(ReceiveError::Stale { sequence });
        }
        if self.received.contains(sequence) {
            return Err(ReceiveError::Duplicate { sequence });
        }
        let bytes = u32::try_from(wire_bytes + self.config.packet_header_size).unwrap_or(u32::MAX);
        if self
            .received
            .insert(sequence, ReceivedPacket { time: now, bytes })
            .is_err()
        {
            return Err(ReceiveError::Stale { sequence });
        }
        self.counters.packets_received += 1;

        let newer_by = sequence_difference(sequence, self.ack);
        if newer_by > 0 {
            self.ack_bits = if newer_by < 32 {
                (self.ack_bits << newer_by) | 1
            } else {
                1
            };
            self.ack = sequence;
        } else if -newer_by < 32 {
            self.ack_bits |= 1 << -newer_by;
        }

        self.reassembly.advance(sequence);
        self.sync_reassembly_drops();

        let mut bits = header.ack_bits;
        while bits != 0 {
            let back = bits.trailing_zeros() as u16;
            bits &= bits - 1;
            let acked = header.ack.wrapping_sub(back);
            if let Some(sent) = self.sent.get_mut(acked) {
                if !sent.acked {
                    sent.acked = true;
                    let rtt = (now - sent.time).max(0.0);
                    if self.acks.len() >= self.config.sent_packets_buffer_size {
                        // Never drained: keep the newest half (amortised O(1) per ack).
                        let dropped = self.acks.len() - self.acks.len() / 2;
                        self.acks.drain(..dropped);
                        self.counters.acks_dropped += dropped as u64;
                    }
                    self.acks.push(acked);
                    self.counters.packets_acked += 1;
                    self.rtt_history.push(rtt);
                    self.stats.rtt = if self.has_rtt {
                        stats::smooth(self.stats.rtt, rtt, self.config.rtt_smoothing_factor)
                    } else {
                        rtt
                    };
                    self.has_rtt = true;
                }
            }
        }
        Ok(())
    }

    /// The sequences of sent packets the other side has received, since the last
    /// [`drain_acks`](Self::drain_acks) or [`clear_acks`](Self::clear_acks), in the
    /// order their acks arrived. Each sent packet is reported at most once. The list
    /// holds at most [`Config::sent_packets_buffer_size`] acks: when it is full, the
    /// oldest half is dropped and counted in [`Counters::acks_dropped`].
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert!(endpoint.acks().is_empty());
    /// ```
    pub fn acks(&self) -> &[u16] {
        &self.acks
    }

    /// Forgets the acks reported so far.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
    /// let mut a = Endpoint::new(Config::default(), 0.0).unwrap();
    /// let mut b = Endpoint::new(Config::default(), 0.0).unwrap();
    /// a.send_packet(0.0, b"ping").unwrap();
    /// let datagram = a.poll_transmit().unwrap().data.to_vec();
    /// b.receive_packet(0.05, &datagram).unwrap();
    /// b.send_packet(0.05, b"pong").unwrap();
    /// let datagram = b.poll_transmit().unwrap().data.to_vec();
    /// a.receive_packet(0.1, &datagram).unwrap();
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
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// for frame in 0..300 {
    ///     endpoint.send_packet(f64::from(frame) / 60.0, &[0; 100]).unwrap();
    /// }
    /// endpoint.update(5.0);
    /// assert!(endpoint.stats().packet_loss > 0.0); // nothing was acked
    /// assert!(endpoint.stats().sent_kbps > 0.0);
    /// ```
    pub fn update(&mut self, now: f64) {
        self.time = now;
        self.rtt_history.summarize(&mut self.stats);
        self.stats.packet_loss = match stats::packet_loss(&self.sent) {
            Some(loss) => stats::smooth(
                self.stats.packet_loss,
                loss,
                self.config.packet_loss_smoothing_factor,
            ),
            None => 0.0,
        };
        let factor = self.config.bandwidth_smoothing_factor;
        let smooth = |current: f64, measured: Option<f64>| {
            measured.map_or(current, |kbps| stats::smooth(current, kbps, factor))
        };
        self.stats.sent_kbps = smooth(
            self.stats.sent_kbps,
            stats::bandwidth_kbps(&self.sent, |p| Some((p.time, p.bytes))),
        );
        self.stats.received_kbps = smooth(
            self.stats.received_kbps,
            stats::bandwidth_kbps(&self.received, |p| Some((p.time, p.bytes))),
        );
        self.stats.acked_kbps = smooth(
            self.stats.acked_kbps,
            stats::bandwidth_kbps(&self.sent, |p| p.acked.then_some((p.time, p.bytes))),
        );
    }

    /// The latest estimates (see [`Stats`]).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert_eq!(endpoint.stats().rtt_max, 0.0);
    /// ```
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The counters.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert_eq!(endpoint.counters().packets_received, 0);
    /// ```
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Packets with some fragments received and some still missing.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// endpoint.receive_packet(0.0, &[1, 0, 0, 1, 1]).ok(); // fragment 1 of 2, 0 bytes: refused
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
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
    /// let endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
    /// assert!(endpoint.memory_bytes() <= endpoint.config().memory_bound());
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.reassembly.memory_bytes()
            + self.sent.heap_bytes()
            + self.received.heap_bytes()
            + self.rtt_history.heap_bytes()
    }

    /// Back to the state of a new endpoint (sequence 0, nothing sent or received,
    /// counters and stats zero); the config and allocated memory are kept.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
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
        self.transmits.clear();
        self.next_transmit = 0;
        self.rtt_history.clear();
        self.has_rtt = false;
        self.stats = Stats::default();
        self.counters = Counters::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Endpoint, Endpoint) {
        (
            Endpoint::new(Config::default(), 0.0).unwrap(),
            Endpoint::new(Config::default(), 0.0).unwrap(),
        )
    }

    fn transmits(endpoint: &mut Endpoint) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.to_vec())).collect()
    }

    #[test]
    fn default_reassembly_bound_matches_the_documented_constant() {
        if cfg!(target_pointer_width = "64") {
            assert_eq!(
                Config::default().reassembly_memory_bound(),
                DEFAULT_REASSEMBLY_MEMORY_BOUND
            );
        }
    }

    #[test]
    fn incremental_ack_bits_equal_the_buffer_scan() {
        let (_, mut receiver) = pair();
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut sequence = 0u16;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mostly forward, sometimes back, sometimes a burst of loss.
            sequence = match state % 10 {
                0 => sequence.wrapping_sub((state >> 8) as u16 % 40),
                1 => sequence.wrapping_add((state >> 8) as u16 % 100),
                _ => sequence.wrapping_add(1),
            };
            let (bytes, len) = PacketHeader {
                sequence,
                ack: 0,
                ack_bits: 0,
            }
            .encode();
            if (state >> 32).is_multiple_of(3) {
                // The first fragment of a packet moves the window without receiving it.
                let mut datagram = FragmentHeader {
                    sequence,
                    fragment_id: 0,
                    num_fragments: 2,
                }
                .encode()
                .to_vec();
                datagram.extend_from_slice(&bytes[..len]);
                datagram.extend_from_slice(&[0; 1024]);
                let _ = receiver.receive_packet(0.0, &datagram);
            } else {
                let _ = receiver.receive_packet(0.0, &bytes[..len]);
            }
            assert_eq!(receiver.ack_state(), receiver.received.generate_ack_bits());
        }
    }

    #[test]
    fn each_ack_is_reported_once_even_when_repeated_in_later_headers() {
        let (mut a, mut b) = pair();
        for i in 0..10 {
            a.send_packet(f64::from(i), b"x").unwrap();
            for datagram in transmits(&mut a) {
                b.receive_packet(f64::from(i), &datagram).unwrap();
            }
        }
        // Three packets from b all ack 0..10.
        for i in 0..3 {
            b.send_packet(10.0, &[i]).unwrap();
            for datagram in transmits(&mut b) {
                a.receive_packet(10.0, &datagram).unwrap();
            }
        }
        let acks: Vec<u16> = a.drain_acks().collect();
        let mut sorted = acks.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_eq!(a.counters().packets_acked, 10);
    }

    #[test]
    fn a_regular_packet_for_a_sequence_in_reassembly_ends_the_reassembly() {
        let (mut a, mut b) = pair();
        a.send_packet(0.0, &[1; 3000]).unwrap();
        let fragments = transmits(&mut a);
        b.receive_packet(0.0, &fragments[0]).unwrap();
        assert_eq!(b.pending_reassemblies(), 1);
        // The same sequence arriving whole (a forged or confused peer).
        let (header, len) = PacketHeader {
            sequence: 0,
            ack: 65535,
            ack_bits: 0,
        }
        .encode();
        b.receive_packet(0.0, &header[..len]).unwrap();
        assert_eq!(b.pending_reassemblies(), 0);
        assert_eq!(
            b.receive_packet(0.0, &fragments[1]),
            Err(ReceiveError::Duplicate { sequence: 0 })
        );
    }

    #[test]
    fn interleaved_packets_of_every_size_reassemble_exactly_from_a_small_pool() {
        // 48 blocks of 16 bytes for packets of up to 16 fragments: runs of every length
        // come and go, the pool fragments, and full pools evict.
        let config = Config {
            max_packet_size: 256,
            fragment_above: 16,
            fragment_size: 16,
            max_fragments: 16,
            max_reassembly_bytes: 48 * 16,
            fragment_reassembly_buffer_size: 8,
            ..Config::default()
        };
        let mut sender = Endpoint::new(config.clone(), 0.0).unwrap();
        let mut receiver = Endpoint::new(config.clone(), 0.0).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut sent = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut delivered = 0;
        for _ in 0..300 {
            // Five packets at a time, their fragments shuffled together.
            let mut datagrams = Vec::new();
            for _ in 0..5 {
                let len = 17 + (next() % 240) as usize;
                let sequence = sender.next_sequence();
                let payload: Vec<u8> = (0..len).map(|i| (i as u8) ^ (sequence as u8)).collect();
                sender.send_packet(0.0, &payload).unwrap();
                datagrams.extend(transmits(&mut sender));
                sent.push(payload);
            }
            for i in (1..datagrams.len()).rev() {
                datagrams.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            for datagram in &datagrams {
                if let Ok(Some(packet)) = receiver.receive_packet(0.0, datagram) {
                    assert_eq!(packet.payload, sent[usize::from(packet.sequence)]);
                    assert!(seen.insert(packet.sequence), "delivered once");
                    delivered += 1;
                }
                assert!(receiver.memory_bytes() <= config.memory_bound());
                assert!(receiver.reassembly_block_bytes() <= config.max_reassembly_bytes);
            }
        }
        let counters = receiver.counters();
        assert_eq!(counters.packets_reassembled, delivered);
        assert!(
            delivered > 1000,
            "most packets get through: {delivered} of 1500"
        );
        assert!(counters.drops.reassembly_evicted > 0, "the pool ran full");
    }

    /// One datagram reserves a whole run of blocks, so the cheapest flood is the 1-byte
    /// last fragment of a 256-fragment packet: 6 bytes that claim 256 KiB of pool. The
    /// pool fills at once and then recycles, memory never passes the bound, and real
    /// packets sent after the flood push the forged runs out and arrive.
    #[test]
    fn tiny_fragments_reserving_whole_runs_stay_within_the_memory_bound() {
        let (mut sender, mut receiver) = pair();
        let config = receiver.config().clone();
        let mut state = 0x5eed_f00du64;
        let mut reserved = 0;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut datagram = FragmentHeader {
                sequence: 40 + (state % 16) as u16,
                fragment_id: 255,
                num_fragments: 256,
            }
            .encode()
            .to_vec();
            datagram.push(0xEE);
            if receiver.receive_packet(0.0, &datagram) == Ok(None) {
                reserved += 1;
            }
            assert!(receiver.reassembly_bytes() <= config.reassembly_memory_bound());
            assert!(receiver.memory_bytes() <= config.memory_bound());
        }
        assert!(reserved > 16, "forged runs were reserved: {reserved}");
        assert_eq!(
            receiver.reassembly_block_bytes(),
            config.max_reassembly_bytes
        );
        assert!(receiver.counters().drops.reassembly_evicted > 0);
        for round in 0..20u8 {
            let real: Vec<u8> = (0..16 * 1024).map(|i| (i % 251) as u8 ^ round).collect();
            sender.send_packet(1.0, &real).unwrap();
            let mut delivered = None;
            for datagram in transmits(&mut sender) {
                if let Some(packet) = receiver.receive_packet(1.0, &datagram).unwrap() {
                    delivered = Some(packet.payload.to_vec());
                }
                assert!(receiver.memory_bytes() <= config.memory_bound());
            }
            assert!(
                delivered.as_deref() == Some(&real[..]),
                "round {round}: the real packet was not delivered intact"
            );
        }
    }

    #[test]
    fn reset_forgets_everything() {
        let (mut a, mut b) = pair();
        a.send_packet(0.0, &[1; 3000]).unwrap();
        let fragments = transmits(&mut a);
        b.receive_packet(0.0, &fragments[0]).unwrap();
        b.reset();
        assert_eq!(b.pending_reassemblies(), 0);
        assert_eq!(b.ack_state(), (65535, 0));
        assert_eq!(*b.counters(), Counters::default());
        // Fragment 1 starts a fresh reassembly; fragment 0 again completes nothing yet.
        assert_eq!(b.receive_packet(0.0, &fragments[1]), Ok(None));
    }
}
