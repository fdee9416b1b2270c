//! Chunks: large blocks (the initial world state on join) sent quickly and reliably over
//! loss, as "Sending Large Blocks of Data" describes.
//!
//! A chunk is split into slices (1024 bytes, at most 256 per chunk, both configurable).
//! The [`ChunkSender`] sends slices within a bandwidth budget, walking them round-robin
//! from where it stopped and resending each one until it is acked, no sooner than a
//! minimum resend delay (RTT x 1.25, or 100 ms while the RTT is unknown; once the owner
//! feeds an RTT, the smaller of that and the sender's own, measured from its slices'
//! acks), or as soon as a slice sent after it is acked and 9/8 of that RTT has passed
//! (it was lost); an optional initial burst sends every slice once before the budget
//! applies. The [`ChunkReceiver`]
//! reassembles the slices and answers with [`AckPacket`]s that carry the whole bitfield of
//! received slices, so a lost or late ack costs nothing: a slice counts as acked the first
//! time any ack says so. One chunk is in flight at a time, with a queue in front of the
//! sender; a completed chunk waits on the receiver until the user takes it.
//!
//! A chunk costs at least a round trip, so on a long path one chunk at a time leaves
//! most of the bandwidth unused. With [`ChunkConfig::max_chunks_in_flight`] above 1 (both
//! sides must agree), the sender keeps the slices of up to that many consecutive chunks
//! in flight, oldest chunk first, from the oldest one not yet acked; the receiver
//! reassembles as many at once and delivers them in order; each side holds at most that
//! many chunk buffers. A slice of a chunk past that window is refused
//! ([`ChunkPacketError::ChunkBeyondWindow`]) and never stored. What is in flight is
//! bounded in bytes too ([`ChunkConfig::max_bytes_in_flight`]): many small chunks fill a
//! long path where a few large ones stay within the setting; a slice that would start
//! a chunk past it is refused ([`ChunkPacketError::BytesBeyondWindow`]) unless that
//! chunk is the oldest one not yet taken. Packets are the same; only
//! which chunk ids may interleave changes. [`ChunkSender::cancel`] needs one chunk in
//! flight. The connection keeps 32 in flight by default
//! ([`DEFAULT_BLOCKS_IN_FLIGHT`](crate::connection::DEFAULT_BLOCKS_IN_FLIGHT)).
//!
//! One sender/receiver pair per direction: a server that also receives chunks from its
//! clients keeps a `ChunkSender` and a `ChunkReceiver` per client. Both sides must use the
//! same [`ChunkConfig::slice_size`], [`ChunkConfig::max_slices`],
//! [`ChunkConfig::first_chunk_id`], [`ChunkConfig::max_chunks_in_flight`] and
//! [`ChunkConfig::max_bytes_in_flight`].
//!
//! Slices are not authenticated at this layer (run it under netcode, whose AEAD is, for
//! that). A corrupted or forged slice with a newer chunk id moves the receiver forward;
//! if the sender keeps sending the chunk it was on, the receiver goes back to it: on the
//! 17th of its slices with no progress on the newer chunk (the first 16 are refused), or,
//! once that newer chunk was completed, when more than 16 have come over at least 30 s
//! (late copies of a chunk the sender cancelled stop long before; one that comes later
//! still can bring the cancelled chunk back, delivered late). It resumes that chunk with the slices it had (the sender
//! counts the acked ones delivered and never sends them again), which it keeps aside
//! until the move forward is confirmed: a receiver holds at most two chunk buffers. A
//! chunk id completes at most once: after going back, the ids completed ahead are
//! answered with full acks and stepped over, so a genuine chunk whose id a forged one
//! took is acked without being delivered (its data is lost, as with any forgery this
//! layer cannot tell apart).
//!
//! Sans-IO: time is an argument and packets are bytes in and out. The run loop, over the
//! seeded [`simulator`](crate::simulator) with 10% loss:
//!
//! ```
//! use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
//! use netser_transport::simulator::{Simulator, SimulatorConfig};
//!
//! const SERVER: u32 = 1;
//! const CLIENT: u32 = 2;
//! let mut net: Simulator = Simulator::new(SimulatorConfig {
//!     latency: 0.05,
//!     loss: 0.1,
//!     seed: 1,
//!     ..SimulatorConfig::default()
//! });
//! let mut sender = ChunkSender::new(ChunkConfig::default())?;
//! let mut receiver = ChunkReceiver::new(ChunkConfig::default())?;
//!
//! let world: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
//! let id = sender.send(world.clone())?;
//!
//! let mut now = 0.0;
//! let chunk = loop {
//!     // Server: slices within the bandwidth budget; acks coming back.
//!     while let Some(packet) = sender.poll_packet(now) {
//!         net.send(now, SERVER, CLIENT, packet);
//!     }
//!     // Client: slices in, acks out, and the chunk once it is whole.
//!     while let Some(delivery) = net.receive(now) {
//!         if delivery.to == CLIENT {
//!             let _ = receiver.receive_slice(now, &delivery.data);
//!         } else {
//!             let _ = sender.receive_ack(now, &delivery.data);
//!         }
//!     }
//!     while let Some(ack) = receiver.poll_ack(now) {
//!         net.send(now, CLIENT, SERVER, ack);
//!     }
//!     if let Some(chunk) = receiver.take_chunk() {
//!         break chunk;
//!     }
//!     now += 1.0 / 60.0; // a 60 Hz frame
//! };
//! assert_eq!((chunk.id, chunk.data), (id, world));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod packet;
mod receiver;
mod sender;

pub use packet::{
    AckPacket, SlicePacket, ACK_HEADER_BYTES, ACK_PACKET_TYPE, LAST_SLICE_HEADER_BYTES,
    SLICE_HEADER_BYTES, SLICE_PACKET_TYPE,
};
pub(crate) use receiver::RECEIVER_PER_CHUNK_STATE_BYTES;
pub use receiver::{ChunkReceiver, ChunkReceiverStats, ReceiveProgress, ReceivedChunk};
pub use sender::{ChunkSender, ChunkSenderStats, SendProgress};
pub(crate) use sender::{
    PER_CHUNK_STATE_BYTES as SENDER_PER_CHUNK_STATE_BYTES, PER_SLICE_STATE_BYTES,
};

use std::fmt;

/// A chunk's id: 16 bits that wrap, compared with
/// [`sequence_greater_than`](crate::sequence::sequence_greater_than).
pub type ChunkId = u16;

/// Largest [`ChunkConfig::max_slices`]: its ack bitfield (1 KiB) still fits a 1200-byte
/// packet.
///
/// ```
/// assert_eq!(netser_transport::chunk::MAX_SLICES_LIMIT, 8192);
/// ```
pub const MAX_SLICES_LIMIT: usize = 8192;

// The largest ack still fits a 1200-byte packet.
const _: () = assert!(ACK_HEADER_BYTES + MAX_SLICES_LIMIT / 8 <= 1200);

/// Largest [`ChunkConfig::slice_size`]: the last slice packet still fits a UDP datagram
/// (65507 bytes over IPv4).
///
/// ```
/// assert_eq!(netser_transport::chunk::MAX_SLICE_SIZE_LIMIT, 65_498);
/// ```
pub const MAX_SLICE_SIZE_LIMIT: usize = 65_507 - LAST_SLICE_HEADER_BYTES;

/// Largest [`ChunkConfig::packet_overhead`]: no header stack is larger than a UDP
/// datagram, and the bound keeps `slice packet + overhead` from overflowing.
///
/// ```
/// assert_eq!(netser_transport::chunk::MAX_PACKET_OVERHEAD, 65_535);
/// ```
pub const MAX_PACKET_OVERHEAD: usize = 65_535;

/// Largest [`ChunkConfig::max_chunks_in_flight`]: the receiver's window and the chunks
/// it answers after taking them stay far inside the 16-bit chunk ids' half range.
///
/// ```
/// assert_eq!(netser_transport::chunk::MAX_CHUNKS_IN_FLIGHT_LIMIT, 1024);
/// ```
pub const MAX_CHUNKS_IN_FLIGHT_LIMIT: usize = 1024;

/// Settings for both ends of a chunk transfer. The defaults are the article's.
///
/// ```
/// use netser_transport::chunk::ChunkConfig;
/// let config = ChunkConfig::default();
/// assert_eq!((config.slice_size, config.max_slices), (1024, 256));
/// assert_eq!(config.max_chunk_size(), 256 * 1024);
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkConfig {
    /// Bytes per slice (every slice but the last is exactly this long). Default 1024.
    pub slice_size: usize,
    /// Most slices per chunk, `1..=`[`MAX_SLICES_LIMIT`]. Default 256.
    pub max_slices: usize,
    /// Id of the first chunk; the sender and receiver must agree. Default 0.
    pub first_chunk_id: ChunkId,
    /// Sender budget in bytes per second, accumulated per update. Default 125 000
    /// (1 Mbit/s, the article's "aggressive" rate).
    pub bandwidth: f64,
    /// Most budget saved up while nothing can be sent, in seconds of `bandwidth` (never
    /// less than one slice packet). Default 0.1.
    pub budget_window: f64,
    /// Bytes charged to the budget per slice packet on top of its own length: the
    /// UDP/IP and connection headers. At most [`MAX_PACKET_OVERHEAD`] (65535, more than
    /// any real header stack). Default 28 (IPv4 + UDP).
    pub packet_overhead: usize,
    /// Send every slice once, ignoring the budget, when a chunk starts. Default off.
    pub initial_burst: bool,
    /// Minimum resend delay of a slice while the RTT is unknown, seconds. Default 0.1.
    pub resend_delay: f64,
    /// Minimum resend delay as a multiple of the RTT once it is known. Default 1.25.
    pub resend_rtt_factor: f64,
    /// Chunks the sender queues behind the ones in flight. Default 8.
    pub max_queued_chunks: usize,
    /// Chunks in flight at once, `1..=`[`MAX_CHUNKS_IN_FLIGHT_LIMIT`]; both sides must
    /// agree. Default 1: the article's transfer, one chunk at a time. With more, the
    /// sender sends the slices of up to this many consecutive chunks (chunk ids from
    /// the oldest one not yet acked, that id included), so a long round trip carries
    /// several chunks instead of one; the receiver reassembles that many at once and
    /// delivers them in order. Each side then holds up to this many chunks of
    /// `slice_size * max_slices` bytes.
    pub max_chunks_in_flight: usize,
    /// Bytes of chunks in flight at once, at least 1; both sides must agree. A chunk
    /// counts as its slice count times `slice_size` (what the receiver sets aside for
    /// it). Default `256 * 1024`, one chunk of the default size. With
    /// `max_chunks_in_flight` above 1, the sender starts a chunk only while the chunks
    /// from the oldest one not yet acked to the newest started, plus the new one, fit
    /// this (a chunk larger than it still goes alone, so any chunk up to
    /// `slice_size * max_slices` can be sent); many small chunks fill a long path, a
    /// few large ones cannot hold `max_chunks_in_flight` times the largest. The
    /// receiver stores a slice that would start a chunk past this only for the oldest
    /// chunk not yet taken, which it always accepts (others are refused,
    /// [`ChunkPacketError::BytesBeyondWindow`], or dropped while completed chunks wait
    /// to be taken): it holds at most this plus one chunk of `slice_size * max_slices`
    /// bytes, and no more than this when the sender agrees and chunks are taken as they
    /// complete.
    pub max_bytes_in_flight: usize,
    /// Shortest time between two acks from the receiver, seconds (whatever chunks they
    /// ack). Default 0: one ack per [`ChunkReceiver::poll_ack`] call that has news.
    pub ack_interval: f64,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self {
            slice_size: 1024,
            max_slices: 256,
            first_chunk_id: 0,
            bandwidth: 125_000.0,
            budget_window: 0.1,
            packet_overhead: 28,
            initial_burst: false,
            resend_delay: 0.1,
            resend_rtt_factor: 1.25,
            max_queued_chunks: 8,
            max_chunks_in_flight: 1,
            max_bytes_in_flight: 256 * 1024,
            ack_interval: 0.0,
        }
    }
}

impl ChunkConfig {
    /// Largest chunk: `slice_size * max_slices` bytes.
    ///
    /// ```
    /// use netser_transport::chunk::ChunkConfig;
    /// let c = ChunkConfig { slice_size: 100, max_slices: 3, ..Default::default() };
    /// assert_eq!(c.max_chunk_size(), 300);
    /// ```
    pub fn max_chunk_size(&self) -> usize {
        self.slice_size.saturating_mul(self.max_slices)
    }

    /// Largest slice packet this configuration produces.
    ///
    /// ```
    /// use netser_transport::chunk::ChunkConfig;
    /// assert_eq!(ChunkConfig::default().max_slice_packet_size(), 1033);
    /// ```
    pub fn max_slice_packet_size(&self) -> usize {
        LAST_SLICE_HEADER_BYTES + self.slice_size
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`ChunkError::InvalidConfig`] naming the first field out of range: `slice_size`
    /// (`1..=65498`), `max_slices` (`1..=8192`), `packet_overhead` (`0..=65535`),
    /// `max_chunks_in_flight` (`1..=1024`), `max_bytes_in_flight` (at least 1),
    /// `bandwidth` (finite, > 0),
    /// `budget_window`, `resend_delay`, `resend_rtt_factor`, `ack_interval` (finite, >= 0).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkError};
    /// let bad = ChunkConfig { max_slices: 0, ..Default::default() };
    /// assert!(matches!(bad.validate(), Err(ChunkError::InvalidConfig { field: "max_slices", .. })));
    /// ```
    pub fn validate(&self) -> Result<(), ChunkError> {
        let invalid = |field: &'static str, reason: &'static str| {
            Err(ChunkError::InvalidConfig { field, reason })
        };
        if self.slice_size == 0 || self.slice_size > MAX_SLICE_SIZE_LIMIT {
            return invalid("slice_size", "must be 1..=65498");
        }
        if self.max_slices == 0 || self.max_slices > MAX_SLICES_LIMIT {
            return invalid("max_slices", "must be 1..=8192");
        }
        if self.packet_overhead > MAX_PACKET_OVERHEAD {
            return invalid("packet_overhead", "must be at most 65535");
        }
        if self.max_chunks_in_flight == 0 || self.max_chunks_in_flight > MAX_CHUNKS_IN_FLIGHT_LIMIT
        {
            return invalid("max_chunks_in_flight", "must be 1..=1024");
        }
        if self.max_bytes_in_flight == 0 {
            return invalid("max_bytes_in_flight", "must be at least 1");
        }
        if !(self.bandwidth.is_finite() && self.bandwidth > 0.0) {
            return invalid("bandwidth", "must be a finite number above 0");
        }
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !non_negative(self.budget_window) {
            return invalid("budget_window", "must be a finite number >= 0");
        }
        if !non_negative(self.resend_delay) {
            return invalid("resend_delay", "must be a finite number >= 0");
        }
        if !non_negative(self.resend_rtt_factor) {
            return invalid("resend_rtt_factor", "must be a finite number >= 0");
        }
        if !non_negative(self.ack_interval) {
            return invalid("ack_interval", "must be a finite number >= 0");
        }
        Ok(())
    }
}

/// Errors of the chunk API (as opposed to bad packets, [`ChunkPacketError`]).
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkError, ChunkSender};
/// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
/// assert_eq!(sender.send(Vec::new()), Err(ChunkError::EmptyChunk));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkError {
    /// A chunk must hold at least one byte (a slice carries 1..=slice_size bytes).
    EmptyChunk,
    /// The chunk is larger than `slice_size * max_slices`.
    ChunkTooLarge {
        /// The chunk's size.
        size: usize,
        /// The largest chunk the configuration allows.
        max: usize,
    },
    /// `max_queued_chunks` chunks already wait behind the ones in flight. Try again once
    /// the peer has acked the oldest chunk in flight (a [`ChunkSender::receive_ack`]
    /// completes it).
    QueueFull {
        /// The queue's capacity.
        capacity: usize,
    },
    /// A [`ChunkConfig`] field is out of range.
    InvalidConfig {
        /// The field.
        field: &'static str,
        /// What it must be.
        reason: &'static str,
    },
}

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyChunk => write!(f, "a chunk must hold at least one byte"),
            Self::ChunkTooLarge { size, max } => {
                write!(
                    f,
                    "chunk of {size} bytes is larger than the maximum of {max}"
                )
            }
            Self::QueueFull { capacity } => {
                write!(
                    f,
                    "chunk send queue is full ({capacity} chunks wait); try again after the peer \
                     acks the chunk in flight"
                )
            }
            Self::InvalidConfig { field, reason } => {
                write!(f, "invalid chunk config: `{field}` {reason}")
            }
        }
    }
}

impl std::error::Error for ChunkError {}

/// Why a slice or ack packet was refused. Every refusal is also counted in
/// [`ChunkRejections`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
///
/// ```
/// use netser_transport::chunk::ChunkPacketError;
/// let e = ChunkPacketError::SliceIdOutOfRange { slice_id: 9, slice_count: 4 };
/// assert_eq!(e.to_string(), "slice id 9 is out of range for a chunk of 4 slices");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkPacketError {
    /// The first byte is not this packet's type.
    WrongPacketType {
        /// The type expected.
        expected: u8,
        /// The type found.
        found: u8,
    },
    /// The packet is shorter than its header says.
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes found.
        found: usize,
    },
    /// The slice count is 0 or above `max_slices`.
    SliceCountOutOfRange {
        /// The count found.
        slice_count: u16,
        /// The configured maximum.
        max_slices: usize,
    },
    /// The slice id is not below the slice count.
    SliceIdOutOfRange {
        /// The id found.
        slice_id: u16,
        /// The chunk's slice count.
        slice_count: u16,
    },
    /// The slice count differs from the one this chunk started with.
    SliceCountChanged {
        /// The chunk's slice count.
        expected: u16,
        /// The count in the packet.
        found: u16,
    },
    /// More data than the slice holds (a whole slice, or the last slice's size).
    SliceTooLong {
        /// Data bytes found.
        bytes: usize,
        /// Data bytes expected.
        expected: usize,
    },
    /// The last slice claims a size of 0 or more than a slice.
    LastSliceSize {
        /// The size claimed.
        bytes: usize,
        /// The slice size.
        slice_size: usize,
    },
    /// A slice of a chunk that is neither the current one, the previous one (re-acked),
    /// nor a newer one (the sender cancelled).
    UnexpectedChunk {
        /// The chunk the receiver is on.
        expected: ChunkId,
        /// The chunk id found.
        found: ChunkId,
    },
    /// A slice of a chunk past the receiver's window: at least `max_chunks_in_flight`
    /// chunks past the oldest one it has not completed, which no sender that agrees on
    /// the setting sends. Refused and not stored.
    ChunkBeyondWindow {
        /// The oldest chunk the receiver has not completed.
        oldest_incomplete: ChunkId,
        /// The chunk id found.
        found: ChunkId,
    },
    /// A slice that would start a chunk other than the oldest one not yet taken while
    /// the chunks held from the oldest one not completed and it would pass
    /// `max_bytes_in_flight`, which no sender that agrees on the setting sends (or
    /// restart such a chunk larger past it). Refused and not stored. (A slice that
    /// fits from the oldest chunk not completed but not with the completed chunks
    /// waiting to be taken is dropped and counted in
    /// [`ChunkReceiverStats::discarded_while_ready`] instead.)
    BytesBeyondWindow {
        /// The chunk id found.
        found: ChunkId,
        /// Bytes the receiver holds for its chunks (each a slice count times
        /// `slice_size`).
        held: usize,
        /// Bytes the new chunk would take (its slice count times `slice_size`).
        size: usize,
        /// The configured `max_bytes_in_flight`.
        max: usize,
    },
    /// An ack for a chunk the sender is not sending (nor the one it just finished).
    AckChunkMismatch {
        /// The chunk in flight, if any.
        expected: Option<ChunkId>,
        /// The chunk id found.
        found: ChunkId,
    },
    /// An ack packet whose length does not match its slice count.
    AckLength {
        /// Bytes expected.
        expected: usize,
        /// Bytes found.
        found: usize,
    },
    /// Bits set in an ack past its last slice.
    AckPaddingBits,
    /// The output buffer is too small (encoding only).
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
}

impl fmt::Display for ChunkPacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongPacketType { expected, found } => {
                write!(f, "packet type {found:#04x}, expected {expected:#04x}")
            }
            Self::Truncated { needed, found } => {
                write!(f, "packet of {found} bytes is truncated: {needed} needed")
            }
            Self::SliceCountOutOfRange {
                slice_count,
                max_slices,
            } => write!(f, "slice count {slice_count} is not in 1..={max_slices}"),
            Self::SliceIdOutOfRange {
                slice_id,
                slice_count,
            } => write!(
                f,
                "slice id {slice_id} is out of range for a chunk of {slice_count} slices"
            ),
            Self::SliceCountChanged { expected, found } => write!(
                f,
                "slice count changed within a chunk: {found}, expected {expected}"
            ),
            Self::SliceTooLong { bytes, expected } => {
                write!(f, "slice data of {bytes} bytes, expected {expected}")
            }
            Self::LastSliceSize { bytes, slice_size } => write!(
                f,
                "last slice of {bytes} bytes is impossible: must be 1..={slice_size}"
            ),
            Self::UnexpectedChunk { expected, found } => {
                write!(f, "slice of chunk {found}, receiving chunk {expected}")
            }
            Self::ChunkBeyondWindow {
                oldest_incomplete,
                found,
            } => write!(
                f,
                "slice of chunk {found}, beyond the chunks in flight from chunk \
                 {oldest_incomplete}"
            ),
            Self::BytesBeyondWindow {
                found,
                held,
                size,
                max,
            } => write!(
                f,
                "slice of chunk {found} of {size} bytes, {held} bytes held: past the \
                 {max} bytes in flight"
            ),
            Self::AckChunkMismatch {
                expected: Some(expected),
                found,
            } => write!(f, "ack for chunk {found}, sending chunk {expected}"),
            Self::AckChunkMismatch {
                expected: None,
                found,
            } => write!(f, "ack for chunk {found}, not sending any chunk"),
            Self::AckLength { expected, found } => {
                write!(f, "ack packet of {found} bytes, expected {expected}")
            }
            Self::AckPaddingBits => write!(f, "ack packet has bits set past its last slice"),
            Self::BufferTooSmall { needed, available } => {
                write!(f, "buffer of {available} bytes, {needed} needed")
            }
        }
    }
}

impl std::error::Error for ChunkPacketError {}

/// How many packets were refused, by reason.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
/// let mut receiver = ChunkReceiver::new(ChunkConfig::default()).unwrap();
/// assert!(receiver.receive_slice(0.0, &[0xc1, 0, 0]).is_err());
/// assert_eq!(receiver.stats().rejected.truncated, 1);
/// assert_eq!(receiver.stats().rejected.total(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkRejections {
    /// [`ChunkPacketError::WrongPacketType`].
    pub wrong_packet_type: u64,
    /// [`ChunkPacketError::Truncated`].
    pub truncated: u64,
    /// [`ChunkPacketError::SliceCountOutOfRange`].
    pub slice_count_out_of_range: u64,
    /// [`ChunkPacketError::SliceIdOutOfRange`].
    pub slice_id_out_of_range: u64,
    /// [`ChunkPacketError::SliceCountChanged`].
    pub slice_count_changed: u64,
    /// [`ChunkPacketError::SliceTooLong`].
    pub slice_too_long: u64,
    /// [`ChunkPacketError::LastSliceSize`].
    pub last_slice_size: u64,
    /// [`ChunkPacketError::UnexpectedChunk`].
    pub unexpected_chunk: u64,
    /// [`ChunkPacketError::ChunkBeyondWindow`].
    pub chunk_beyond_window: u64,
    /// [`ChunkPacketError::BytesBeyondWindow`].
    pub bytes_beyond_window: u64,
    /// [`ChunkPacketError::AckChunkMismatch`].
    pub ack_chunk_mismatch: u64,
    /// [`ChunkPacketError::AckLength`].
    pub ack_length: u64,
    /// [`ChunkPacketError::AckPaddingBits`].
    pub ack_padding_bits: u64,
}

impl ChunkRejections {
    /// All refusals.
    ///
    /// ```
    /// use netser_transport::chunk::ChunkRejections;
    /// assert_eq!(ChunkRejections::default().total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.wrong_packet_type
            + self.truncated
            + self.slice_count_out_of_range
            + self.slice_id_out_of_range
            + self.slice_count_changed
            + self.slice_too_long
            + self.last_slice_size
            + self.unexpected_chunk
            + self.chunk_beyond_window
            + self.bytes_beyond_window
            + self.ack_chunk_mismatch
            + self.ack_length
            + self.ack_padding_bits
    }

    /// Counts one refusal and hands the error back, for `Err(rejections.record(e))`.
    pub(crate) fn record(&mut self, error: ChunkPacketError) -> ChunkPacketError {
        let counter = match error {
            ChunkPacketError::WrongPacketType { .. } => &mut self.wrong_packet_type,
            ChunkPacketError::Truncated { .. } => &mut self.truncated,
            ChunkPacketError::SliceCountOutOfRange { .. } => &mut self.slice_count_out_of_range,
            ChunkPacketError::SliceIdOutOfRange { .. } => &mut self.slice_id_out_of_range,
            ChunkPacketError::SliceCountChanged { .. } => &mut self.slice_count_changed,
            ChunkPacketError::SliceTooLong { .. } => &mut self.slice_too_long,
            ChunkPacketError::LastSliceSize { .. } => &mut self.last_slice_size,
            ChunkPacketError::UnexpectedChunk { .. } => &mut self.unexpected_chunk,
            ChunkPacketError::ChunkBeyondWindow { .. } => &mut self.chunk_beyond_window,
            ChunkPacketError::BytesBeyondWindow { .. } => &mut self.bytes_beyond_window,
            ChunkPacketError::AckChunkMismatch { .. } => &mut self.ack_chunk_mismatch,
            ChunkPacketError::AckLength { .. } => &mut self.ack_length,
            ChunkPacketError::AckPaddingBits => &mut self.ack_padding_bits,
            // Only encoding produces it; never a received packet.
            ChunkPacketError::BufferTooSmall { .. } => return error,
        };
        *counter += 1;
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `packet_overhead = usize::MAX` passed validation and overflowed in
    /// `ChunkSender::poll_packet`; now it is refused, and the largest accepted value runs.
    #[test]
    fn packet_overhead_is_bounded() {
        for overhead in [MAX_PACKET_OVERHEAD + 1, usize::MAX] {
            let config = ChunkConfig {
                packet_overhead: overhead,
                ..Default::default()
            };
            assert!(matches!(
                ChunkSender::new(config),
                Err(ChunkError::InvalidConfig {
                    field: "packet_overhead",
                    ..
                })
            ));
        }
        let config = ChunkConfig {
            packet_overhead: MAX_PACKET_OVERHEAD,
            ..Default::default()
        };
        let mut sender = ChunkSender::new(config).unwrap();
        sender.send(vec![1; 3000]).unwrap();
        assert!(sender.poll_packet(0.0).is_some());
        assert!(sender.poll_packet(10.0).is_some());
    }

    #[test]
    fn config_validation_names_the_field() {
        let field = |c: ChunkConfig| match c.validate() {
            Err(ChunkError::InvalidConfig { field, .. }) => field,
            other => panic!("expected an invalid config, got {other:?}"),
        };
        let d = ChunkConfig::default;
        assert_eq!(
            field(ChunkConfig {
                slice_size: 0,
                ..d()
            }),
            "slice_size"
        );
        assert_eq!(
            field(ChunkConfig {
                slice_size: MAX_SLICE_SIZE_LIMIT + 1,
                ..d()
            }),
            "slice_size"
        );
        assert_eq!(
            field(ChunkConfig {
                max_slices: MAX_SLICES_LIMIT + 1,
                ..d()
            }),
            "max_slices"
        );
        assert_eq!(
            field(ChunkConfig {
                bandwidth: 0.0,
                ..d()
            }),
            "bandwidth"
        );
        assert_eq!(
            field(ChunkConfig {
                bandwidth: f64::NAN,
                ..d()
            }),
            "bandwidth"
        );
        assert_eq!(
            field(ChunkConfig {
                budget_window: -1.0,
                ..d()
            }),
            "budget_window"
        );
        assert_eq!(
            field(ChunkConfig {
                resend_delay: f64::INFINITY,
                ..d()
            }),
            "resend_delay"
        );
        assert_eq!(
            field(ChunkConfig {
                resend_rtt_factor: f64::NAN,
                ..d()
            }),
            "resend_rtt_factor"
        );
        assert_eq!(
            field(ChunkConfig {
                ack_interval: -0.1,
                ..d()
            }),
            "ack_interval"
        );
        for max_chunks_in_flight in [0, MAX_CHUNKS_IN_FLIGHT_LIMIT + 1, usize::MAX] {
            assert_eq!(
                field(ChunkConfig {
                    max_chunks_in_flight,
                    ..d()
                }),
                "max_chunks_in_flight"
            );
        }
        assert_eq!(
            field(ChunkConfig {
                max_bytes_in_flight: 0,
                ..d()
            }),
            "max_bytes_in_flight"
        );
        let limits = ChunkConfig {
            slice_size: MAX_SLICE_SIZE_LIMIT,
            max_slices: MAX_SLICES_LIMIT,
            max_chunks_in_flight: MAX_CHUNKS_IN_FLIGHT_LIMIT,
            max_bytes_in_flight: usize::MAX,
            ..d()
        };
        assert!(limits.validate().is_ok());
    }

    #[test]
    fn rejections_count_each_reason_once() {
        let mut r = ChunkRejections::default();
        let errors = [
            ChunkPacketError::WrongPacketType {
                expected: 1,
                found: 2,
            },
            ChunkPacketError::Truncated {
                needed: 1,
                found: 0,
            },
            ChunkPacketError::SliceCountOutOfRange {
                slice_count: 0,
                max_slices: 1,
            },
            ChunkPacketError::SliceIdOutOfRange {
                slice_id: 1,
                slice_count: 1,
            },
            ChunkPacketError::SliceCountChanged {
                expected: 1,
                found: 2,
            },
            ChunkPacketError::SliceTooLong {
                bytes: 2,
                expected: 1,
            },
            ChunkPacketError::LastSliceSize {
                bytes: 0,
                slice_size: 1,
            },
            ChunkPacketError::UnexpectedChunk {
                expected: 1,
                found: 0,
            },
            ChunkPacketError::ChunkBeyondWindow {
                oldest_incomplete: 1,
                found: 9,
            },
            ChunkPacketError::BytesBeyondWindow {
                found: 2,
                held: 10,
                size: 5,
                max: 12,
            },
            ChunkPacketError::AckChunkMismatch {
                expected: None,
                found: 0,
            },
            ChunkPacketError::AckLength {
                expected: 6,
                found: 5,
            },
            ChunkPacketError::AckPaddingBits,
        ];
        for e in &errors {
            assert_eq!(r.record(e.clone()), *e);
            assert!(!e.to_string().is_empty());
        }
        assert_eq!(r.total(), errors.len() as u64);
        let all_ones = ChunkRejections {
            wrong_packet_type: 1,
            truncated: 1,
            slice_count_out_of_range: 1,
            slice_id_out_of_range: 1,
            slice_count_changed: 1,
            slice_too_long: 1,
            last_slice_size: 1,
            unexpected_chunk: 1,
            chunk_beyond_window: 1,
            bytes_beyond_window: 1,
            ack_chunk_mismatch: 1,
            ack_length: 1,
            ack_padding_bits: 1,
        };
        assert_eq!(r, all_ones);
    }
}
