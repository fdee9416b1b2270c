//! The receiving end of a chunk transfer: reassembly into one bounded buffer, acks with
//! the whole bitfield, and a ready-to-read chunk the user takes.

use super::packet::{bitfield_bytes, AckPacket, SlicePacket, ACK_HEADER_BYTES};
use super::{ChunkConfig, ChunkError, ChunkId, ChunkPacketError, ChunkRejections};
use crate::sequence::sequence_greater_than;

mod window;
pub(crate) use window::PER_CHUNK_STATE_BYTES as RECEIVER_PER_CHUNK_STATE_BYTES;

/// Slices of an older chunk refused, with no progress on the current one, before the
/// receiver goes back to that older chunk (see [`ChunkReceiver::receive_slice`]).
const RETURN_AFTER_REFUSED_SLICES: u32 = 16;

/// Seconds over which slices of a chunk skipped by a jump forward must keep coming (and
/// at least [`RETURN_AFTER_REFUSED_SLICES`] of them, with no progress between) after the
/// chunk the jump reached was completed, before the receiver goes back to it. Late copies
/// of a chunk the sender cancelled stop within the network's longest delay (seconds);
/// slices still coming after this long come from a sender that never got the chunk acked.
const RETURN_AFTER_SECONDS: f64 = 30.0;

/// Reassembles chunks from slice packets and acks them.
///
/// Call [`receive_slice`](Self::receive_slice) with every slice packet,
/// [`poll_ack`](Self::poll_ack) every update to get the ack packets to send back, and
/// [`take_chunk`](Self::take_chunk) to drain a completed chunk. Until the user takes it,
/// a completed chunk stays ready to read, its slices keep being acked, and slices of the
/// next chunk are dropped (the sender resends them). See the [module docs](crate::chunk).
///
/// Memory: at most two buffers of at most `slice_size * max_slices` bytes each and two
/// bitfields of `max_slices` bits: the chunk being received, and the partial chunk a
/// move to a newer chunk id left, kept until that move is confirmed (see
/// [`receive_slice`](Self::receive_slice)); nothing grows with the input.
///
/// With [`ChunkConfig::max_chunks_in_flight`] above 1, the receiver reassembles that many
/// consecutive chunks at once, from the oldest one not yet taken, and delivers them in
/// order: at most that many buffers and bitfields, whose buffers take at most
/// [`ChunkConfig::max_bytes_in_flight`] plus one chunk (the oldest, always accepted;
/// see [`bytes_held`](Self::bytes_held)). A slice of a chunk at least
/// `max_chunks_in_flight` past the oldest one not completed, or that would start a chunk
/// past the bytes counted from there, is refused
/// ([`ChunkPacketError::ChunkBeyondWindow`], [`ChunkPacketError::BytesBeyondWindow`]),
/// never stored; one of a chunk the sender may send but past the window or the bytes
/// (completed chunks wait to be taken) is dropped and counted in
/// [`ChunkReceiverStats::discarded_while_ready`].
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
/// let mut receiver = ChunkReceiver::new(ChunkConfig::default())?;
/// // Chunk 0, the only (so last) slice, 3 bytes.
/// receiver.receive_slice(0.0, &[0xc1, 0, 0, 0, 0, 1, 0, 3, 0, b'a', b'b', b'c'])?;
/// assert_eq!(receiver.poll_ack(0.0), Some(&[0xc2, 0, 0, 1, 0, 0b1][..]));
/// let chunk = receiver.take_chunk().unwrap();
/// assert_eq!((chunk.id, chunk.data), (0, b"abc".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ChunkReceiver {
    config: ChunkConfig,
    /// The chunk being received, or ready to read, or expected next.
    chunk_id: ChunkId,
    receiving: bool,
    ready: bool,
    /// The chunk being received (or ready to read): its slices so far.
    cur: Reassembly,
    /// The chunk taken last and its slice count: its slices may still come (our acks
    /// were lost), and are answered with a full ack so the sender can finish.
    previous: Option<(ChunkId, u16)>,
    ack_current: bool,
    ack_previous: bool,
    last_ack_time: Option<f64>,
    /// The chunk expected before the receiver last moved forward to a newer chunk id
    /// without completing one, while that move is unconfirmed (see `receive_slice`).
    jumped_from: Option<ChunkId>,
    /// Slices of chunks in `jumped_from..chunk_id` refused since the current chunk last
    /// stored a new slice.
    older_since_progress: u32,
    /// Chunk ids `lo..hi` that a jump forward skipped and that were never delivered, kept
    /// once the chunk the jump reached completed (a forged or corrupted slice completes a
    /// chunk as easily as it starts one); cleared when a chunk completes in order.
    skipped: Option<(ChunkId, ChunkId)>,
    /// Slices of `skipped` chunks refused since the last progress, and when the first of
    /// them came.
    skipped_refused: u32,
    skipped_since: f64,
    /// After going back to a skipped chunk: the ids `lo..hi` completed (and taken) after
    /// the jump. A chunk id completes at most once, so their slices get a full ack and
    /// are never received again; the receiver steps over them when it gets there.
    delivered_ahead: Option<(ChunkId, ChunkId)>,
    /// A full ack owed for a chunk in `delivered_ahead` (its id and slice count).
    ack_full: Option<(ChunkId, u16)>,
    /// The partial chunk the first unconfirmed move forward left (the chunk at
    /// `jumped_from`): the sender counts the slices we acked as delivered and will not
    /// send them again, so going back to that chunk resumes it from here. Dropped once a
    /// chunk completes in order.
    suspended: Option<(ChunkId, Reassembly)>,
    /// Latest `now` seen.
    now: f64,
    packet: Vec<u8>,
    full_bits: Vec<u8>,
    stats: ChunkReceiverStats,
    /// The chunks in flight when `max_chunks_in_flight` is above 1 (the fields above
    /// then stay unused but for `config`, `last_ack_time`, `now`, the buffers and the
    /// counters).
    window: Option<window::Window>,
}

/// A chunk's reassembly: the receiver's current chunk, or one a move forward set aside.
#[derive(Debug, Clone)]
struct Reassembly {
    slice_count: u16,
    /// Slice `i` in bit `i % 8` of byte `i / 8`, as the ack packet carries it.
    received: Vec<u8>,
    received_count: usize,
    received_bytes: usize,
    chunk_size: Option<usize>,
    data: Vec<u8>,
    started_at: f64,
}

impl Reassembly {
    /// Expects `slice_count` slices of `slice_size` bytes, none received yet.
    fn restart(&mut self, slice_count: u16, slice_size: usize, now: f64) {
        self.slice_count = slice_count;
        self.received.fill(0);
        self.received_count = 0;
        self.received_bytes = 0;
        self.chunk_size = None;
        self.started_at = now;
        // slice_count <= max_slices was checked by the decoder, so `size` is within the
        // bound. The buffer is reused when it is big enough; otherwise the old one is
        // freed first and a new one of exactly `size` bytes allocated: growing it in
        // place would round its capacity up (amortized growth), past the bound.
        let size = usize::from(slice_count) * slice_size;
        self.data.clear();
        if self.data.capacity() < size {
            self.data = Vec::new();
            self.data.reserve_exact(size);
        }
        self.data.resize(size, 0);
    }

    /// Nothing received, with a bitfield of `bitfield` bytes.
    fn empty(bitfield: usize) -> Self {
        Self {
            slice_count: 0,
            received: vec![0; bitfield],
            received_count: 0,
            received_bytes: 0,
            chunk_size: None,
            data: Vec::new(),
            started_at: 0.0,
        }
    }
}

/// Counters of a [`ChunkReceiver`].
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
/// let receiver = ChunkReceiver::new(ChunkConfig::default()).unwrap();
/// assert_eq!(receiver.stats().slices_received, 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkReceiverStats {
    /// New slices stored.
    pub slices_received: u64,
    /// Slices received again (they trigger an ack: ours may have been lost).
    pub duplicate_slices: u64,
    /// Slices of the chunk taken last (answered with a full ack).
    pub stale_slices: u64,
    /// Slices of a newer chunk dropped because a completed chunk waits to be taken.
    pub discarded_while_ready: u64,
    /// Partial chunks dropped because the sender moved on (it cancelled them).
    pub abandoned_chunks: u64,
    /// Returns to an older chunk whose slices kept coming after a move to a newer chunk
    /// id that made no progress (a forged or corrupted slice had moved it), and restarts
    /// of the current chunk with the slice count its slices keep carrying.
    pub returned_to_older_chunk: u64,
    /// Slices of a chunk whose id completed ahead before the receiver went back to a
    /// skipped chunk: answered with a full ack and dropped, since a chunk id completes
    /// at most once (a forged or corrupted chunk took the id; see the
    /// [module docs](crate::chunk)).
    pub displaced_slices: u64,
    /// Chunks completed.
    pub chunks_completed: u64,
    /// Ack packets produced.
    pub acks_sent: u64,
    /// Slice packets refused, by reason.
    pub rejected: ChunkRejections,
}

/// How far the chunk being received has got.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
/// let mut receiver = ChunkReceiver::new(ChunkConfig { slice_size: 2, ..Default::default() }).unwrap();
/// receiver.receive_slice(0.5, &[0xc1, 0, 0, 0, 0, 3, 0, 1, 2]).unwrap();
/// let p = receiver.progress().unwrap();
/// assert_eq!((p.slices_received, p.slice_count, p.bytes_received, p.chunk_size), (1, 3, 2, None));
/// assert_eq!(p.started_at, 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReceiveProgress {
    /// The chunk.
    pub chunk_id: ChunkId,
    /// Its slices.
    pub slice_count: u16,
    /// Slices received so far.
    pub slices_received: u16,
    /// Bytes in the received slices.
    pub bytes_received: usize,
    /// Its size, known once the last slice has arrived.
    pub chunk_size: Option<usize>,
    /// `now` when its first slice arrived.
    pub started_at: f64,
}

/// A completed chunk, taken from the receiver.
///
/// ```
/// use netser_transport::chunk::ReceivedChunk;
/// let chunk = ReceivedChunk { id: 3, data: vec![1, 2] };
/// assert_eq!(chunk.data.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedChunk {
    /// Its id.
    pub id: ChunkId,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl ChunkReceiver {
    /// A receiver with these settings, expecting chunk `config.first_chunk_id` first.
    ///
    /// # Errors
    /// [`ChunkError::InvalidConfig`] when a setting is out of range
    /// ([`ChunkConfig::validate`]).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// assert!(ChunkReceiver::new(ChunkConfig { max_slices: 9000, ..Default::default() }).is_err());
    /// ```
    pub fn new(config: ChunkConfig) -> Result<Self, ChunkError> {
        config.validate()?;
        let bitfield = config.max_slices.div_ceil(8);
        Ok(Self {
            chunk_id: config.first_chunk_id,
            receiving: false,
            ready: false,
            cur: Reassembly::empty(bitfield),
            previous: None,
            ack_current: false,
            ack_previous: false,
            last_ack_time: None,
            jumped_from: None,
            older_since_progress: 0,
            skipped: None,
            skipped_refused: 0,
            skipped_since: 0.0,
            delivered_ahead: None,
            ack_full: None,
            suspended: None,
            now: 0.0,
            packet: vec![0; ACK_HEADER_BYTES + bitfield],
            full_bits: vec![0; bitfield],
            stats: ChunkReceiverStats::default(),
            window: (config.max_chunks_in_flight > 1).then(|| window::Window::new(&config)),
            config,
        })
    }

    /// The settings.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// assert_eq!(ChunkReceiver::new(ChunkConfig::default()).unwrap().config().max_slices, 256);
    /// ```
    pub fn config(&self) -> &ChunkConfig {
        &self.config
    }

    /// Reads a slice packet.
    ///
    /// A new slice of the current chunk is stored; a slice seen before, or a slice of the
    /// chunk taken last, only asks for an ack (the sender evidently missed ours); a slice
    /// of a newer chunk means the sender cancelled the current one, which is dropped,
    /// unless a completed chunk waits to be taken, in which case the slice is dropped
    /// (the sender resends it). Slice packets carry no authentication: if, after such a
    /// move, more than 16 slices of a chunk between the one expected before it and the
    /// new one arrive while the new one gains no slice, the move was a forgery or a
    /// corrupted id, and the receiver goes back to that chunk (counted in
    /// [`ChunkReceiverStats::returned_to_older_chunk`]); likewise, more than 16 slices
    /// of the current chunk with another slice count and no progress restart it with
    /// theirs.
    ///
    /// # Errors
    /// A malformed packet ([`SlicePacket::decode`]: slice id out of range, impossible last
    /// slice size, data longer than a slice...),
    /// [`ChunkPacketError::SliceCountChanged`] when the slice count differs from the
    /// chunk's, [`ChunkPacketError::UnexpectedChunk`] for an older chunk id. Each is
    /// counted in [`ChunkReceiverStats::rejected`] and changes nothing else.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkPacketError, ChunkReceiver};
    /// let mut receiver = ChunkReceiver::new(ChunkConfig { slice_size: 2, ..Default::default() }).unwrap();
    /// receiver.receive_slice(0.0, &[0xc1, 0, 0, 0, 0, 3, 0, 1, 2]).unwrap();
    /// assert_eq!(
    ///     receiver.receive_slice(0.0, &[0xc1, 0, 0, 1, 0, 4, 0, 3, 4]),
    ///     Err(ChunkPacketError::SliceCountChanged { expected: 3, found: 4 })
    /// );
    /// assert_eq!(receiver.stats().rejected.slice_count_changed, 1);
    /// ```
    pub fn receive_slice(&mut self, now: f64, packet: &[u8]) -> Result<(), ChunkPacketError> {
        if now > self.now {
            self.now = now;
        }
        let slice = match SlicePacket::decode(packet, &self.config) {
            Ok(slice) => slice,
            Err(e) => return Err(self.stats.rejected.record(e)),
        };
        if let Some(window) = &mut self.window {
            return window.receive(&slice, now, &self.config, &mut self.stats);
        }
        if let Some((lo, hi)) = self.delivered_ahead {
            if slice.chunk_id.wrapping_sub(lo) < hi.wrapping_sub(lo) {
                self.stats.displaced_slices += 1;
                self.ack_full = Some((slice.chunk_id, slice.slice_count));
                return Ok(());
            }
        }
        if slice.chunk_id == self.chunk_id {
            if (self.receiving || self.ready) && slice.slice_count != self.cur.slice_count {
                // The same as a wrong chunk id: a corrupted or forged slice count that
                // started this chunk must not refuse the genuine slices forever.
                self.older_since_progress += 1;
                if self.ready || self.older_since_progress <= RETURN_AFTER_REFUSED_SLICES {
                    return Err(self.slice_count_changed(self.cur.slice_count, slice.slice_count));
                }
                self.stats.abandoned_chunks += 1;
                self.stats.returned_to_older_chunk += 1;
                self.start(slice.slice_count, now);
            }
            if self.ready {
                self.stats.duplicate_slices += 1;
                self.ack_current = true;
                return Ok(());
            }
            if !self.receiving {
                self.start(slice.slice_count, now);
            }
            self.store(&slice);
            return Ok(());
        }
        if let Some((_, count)) = self.previous.filter(|(id, _)| *id == slice.chunk_id) {
            if slice.slice_count != count {
                return Err(self.slice_count_changed(count, slice.slice_count));
            }
            self.stats.stale_slices += 1;
            self.ack_previous = true;
            return Ok(());
        }
        // At or before the chunk taken last: delivered already. Checked against that
        // chunk rather than the current one, because a forged id half the id space ahead
        // turns the wrapping comparison with the current id around: old chunks would
        // look newer and be received a second time.
        if let Some((lo, hi)) = self.skipped {
            if slice.chunk_id.wrapping_sub(lo) < hi.wrapping_sub(lo) {
                return self.skipped_slice(&slice, now);
            }
        }
        if let Some((taken, _)) = self.previous {
            if !sequence_greater_than(slice.chunk_id, taken) {
                return Err(self.unexpected(slice.chunk_id));
            }
        }
        if sequence_greater_than(slice.chunk_id, self.chunk_id) {
            if self.ready {
                self.stats.discarded_while_ready += 1;
                return Ok(());
            }
            // The sender only leaves a chunk unacked for a newer one when it cancelled it.
            if self.receiving {
                self.stats.abandoned_chunks += 1;
                if self.jumped_from.is_none() {
                    self.suspend();
                }
            }
            self.jumped_from.get_or_insert(self.chunk_id);
            self.chunk_id = slice.chunk_id;
            self.start(slice.slice_count, now);
            self.store(&slice);
            return Ok(());
        }
        // An older chunk the sender evidently still sends: the move forward came from a
        // forged or corrupted slice, or from a cancel whose late copies are still
        // arriving. Once its slices keep coming while the current chunk makes no
        // progress, go back to it; a wrong guess corrects itself the same way, so one
        // bad packet can never wedge the transfer.
        if let Some(from) = self.jumped_from {
            let behind = self.chunk_id.wrapping_sub(slice.chunk_id);
            if !self.ready && behind > 0 && behind <= self.chunk_id.wrapping_sub(from) {
                self.older_since_progress += 1;
                if self.older_since_progress > RETURN_AFTER_REFUSED_SLICES {
                    if self.receiving {
                        self.stats.abandoned_chunks += 1;
                    }
                    self.stats.returned_to_older_chunk += 1;
                    self.go_back(&slice, now);
                    return Ok(());
                }
            }
        }
        Err(self.unexpected(slice.chunk_id))
    }

    /// The next ack packet to send back at `now`, or `None` when there is no news or the
    /// last ack was less than `ack_interval` ago. An ack goes out after any slice of the
    /// current chunk (new or not) and after any slice of the chunk taken last. With
    /// several chunks in flight, one ack per chunk with news (chunks taken first, then
    /// the window in order): call it until `None`.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// let mut receiver = ChunkReceiver::new(ChunkConfig { slice_size: 1, ..Default::default() }).unwrap();
    /// assert_eq!(receiver.poll_ack(0.0), None);
    /// receiver.receive_slice(0.0, &[0xc1, 0, 0, 1, 0, 10, 0, 9]).unwrap(); // slice 1 of 10
    /// assert_eq!(receiver.poll_ack(0.0), Some(&[0xc2, 0, 0, 10, 0, 0b10, 0][..]));
    /// assert_eq!(receiver.poll_ack(0.0), None);
    /// ```
    pub fn poll_ack(&mut self, now: f64) -> Option<&[u8]> {
        if now > self.now {
            self.now = now;
        }
        if !self.ack_owed() {
            return None;
        }
        if self
            .last_ack_time
            .is_some_and(|t| now < t + self.config.ack_interval)
        {
            return None;
        }
        let ack = if let Some(window) = &mut self.window {
            window.next_ack(&mut self.full_bits)?
        } else if self.ack_current {
            self.ack_current = false;
            AckPacket {
                chunk_id: self.chunk_id,
                slice_count: self.cur.slice_count,
                received: &self.cur.received[..bitfield_bytes(self.cur.slice_count)],
            }
        } else {
            let (chunk_id, slice_count) = match self.ack_full.take() {
                Some(full) => full,
                None => {
                    self.ack_previous = false;
                    self.previous?
                }
            };
            let bytes = bitfield_bytes(slice_count);
            let bits = &mut self.full_bits[..bytes];
            bits.fill(0xff);
            if slice_count % 8 != 0 {
                bits[bytes - 1] = (1u8 << (slice_count % 8)) - 1;
            }
            AckPacket {
                chunk_id,
                slice_count,
                received: bits,
            }
        };
        // Cannot fail: the buffer holds the largest ack and the bitfield matches the count.
        let len = ack.encode(&mut self.packet).ok()?;
        self.last_ack_time = Some(now);
        self.stats.acks_sent += 1;
        Some(&self.packet[..len])
    }

    /// Earliest time at which [`poll_ack`](Self::poll_ack) has an ack to give (never
    /// before the latest `now` seen), `None` when no ack is owed.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// let mut receiver = ChunkReceiver::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(receiver.next_ack_time(), None);
    /// receiver.receive_slice(2.5, &[0xc1, 0, 0, 0, 0, 1, 0, 1, 0, 42]).unwrap();
    /// assert_eq!(receiver.next_ack_time(), Some(2.5));
    /// ```
    pub fn next_ack_time(&self) -> Option<f64> {
        if !self.ack_owed() {
            return None;
        }
        let allowed = self
            .last_ack_time
            .map_or(self.now, |t| t + self.config.ack_interval);
        Some(allowed.max(self.now))
    }

    /// Is a completed chunk waiting to be taken?
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// let mut receiver = ChunkReceiver::new(ChunkConfig::default()).unwrap();
    /// assert!(!receiver.is_ready());
    /// receiver.receive_slice(0.0, &[0xc1, 0, 0, 0, 0, 1, 0, 1, 0, 42]).unwrap();
    /// assert!(receiver.is_ready());
    /// ```
    pub fn is_ready(&self) -> bool {
        match &self.window {
            Some(window) => window.is_ready(),
            None => self.ready,
        }
    }

    /// Chunks held: being received or completed and waiting to be taken (at most 1, or
    /// 2 while a move to a newer chunk is unconfirmed; at most `max_chunks_in_flight`
    /// with several in flight).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// let config = ChunkConfig { max_chunks_in_flight: 4, ..Default::default() };
    /// let mut receiver = ChunkReceiver::new(config).unwrap();
    /// // Single-slice chunks 1 and 2 complete before chunk 0.
    /// receiver.receive_slice(0.0, &[0xc1, 1, 0, 0, 0, 1, 0, 1, 0, 7]).unwrap();
    /// receiver.receive_slice(0.0, &[0xc1, 2, 0, 0, 0, 1, 0, 1, 0, 8]).unwrap();
    /// assert_eq!(receiver.chunks_held(), 2);
    /// assert!(receiver.take_chunk().is_none()); // delivered in order: chunk 0 first
    /// ```
    pub fn chunks_held(&self) -> usize {
        match &self.window {
            Some(window) => window.chunks_held(),
            None => {
                usize::from(self.receiving || self.ready) + usize::from(self.suspended.is_some())
            }
        }
    }

    /// Bytes of the buffers of the chunks held. With several chunks in flight, at most
    /// [`ChunkConfig::max_bytes_in_flight`] plus one chunk of `slice_size * max_slices`
    /// bytes (the oldest chunk not yet taken is always accepted); with one, at most two
    /// such chunks.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkPacketError, ChunkReceiver};
    /// let config = ChunkConfig {
    ///     slice_size: 2,
    ///     max_chunks_in_flight: 4,
    ///     max_bytes_in_flight: 6,
    ///     ..Default::default()
    /// };
    /// let mut receiver = ChunkReceiver::new(config).unwrap();
    /// // Chunk 1, slice 0 of 2 (4 bytes): fits.
    /// receiver.receive_slice(0.0, &[0xc1, 1, 0, 0, 0, 2, 0, 1, 2]).unwrap();
    /// assert_eq!(receiver.bytes_held(), 4);
    /// // Chunk 2, slice 0 of 2: 8 bytes would be held, past 6.
    /// assert_eq!(
    ///     receiver.receive_slice(0.0, &[0xc1, 2, 0, 0, 0, 2, 0, 1, 2]),
    ///     Err(ChunkPacketError::BytesBeyondWindow { found: 2, held: 4, size: 4, max: 6 })
    /// );
    /// // Chunk 0, the oldest, is always accepted.
    /// receiver.receive_slice(0.0, &[0xc1, 0, 0, 0, 0, 2, 0, 1, 2]).unwrap();
    /// assert_eq!(receiver.bytes_held(), 8);
    /// ```
    pub fn bytes_held(&self) -> usize {
        match &self.window {
            Some(window) => window.bytes_held(),
            None => {
                self.cur.data.capacity()
                    + self
                        .suspended
                        .as_ref()
                        .map_or(0, |(_, r)| r.data.capacity())
            }
        }
    }

    /// Whether an ack is owed.
    fn ack_owed(&self) -> bool {
        match &self.window {
            Some(window) => window.has_ack_owed(),
            None => self.ack_current || self.ack_previous || self.ack_full.is_some(),
        }
    }

    /// Takes the completed chunk, if any, and gets ready for the next one. Its slices are
    /// still answered with full acks until the next chunk arrives.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// let mut receiver = ChunkReceiver::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(receiver.take_chunk(), None);
    /// receiver.receive_slice(0.0, &[0xc1, 0, 0, 0, 0, 1, 0, 1, 0, 42]).unwrap();
    /// assert_eq!(receiver.take_chunk().unwrap().data, [42]);
    /// assert_eq!(receiver.take_chunk(), None);
    /// ```
    pub fn take_chunk(&mut self) -> Option<ReceivedChunk> {
        if let Some(window) = &mut self.window {
            return window.take();
        }
        if !self.ready {
            return None;
        }
        let size = self.cur.chunk_size?;
        // Hand over the buffer itself: no copy, and the next chunk allocates its own.
        let mut data = std::mem::take(&mut self.cur.data);
        data.truncate(size);
        let chunk = ReceivedChunk {
            id: self.chunk_id,
            data,
        };
        self.previous = Some((self.chunk_id, self.cur.slice_count));
        self.ack_previous |= self.ack_current;
        self.ack_current = false;
        self.chunk_id = self.chunk_id.wrapping_add(1);
        if let Some((lo, hi)) = self.delivered_ahead {
            if self.chunk_id == lo {
                self.chunk_id = hi;
            }
        }
        self.ready = false;
        self.receiving = false;
        Some(chunk)
    }

    /// Progress of the chunk being received (or ready to read), `None` before its first
    /// slice.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// assert!(ChunkReceiver::new(ChunkConfig::default()).unwrap().progress().is_none());
    /// ```
    pub fn progress(&self) -> Option<ReceiveProgress> {
        if let Some(window) = &self.window {
            return window.progress();
        }
        (self.receiving || self.ready).then_some(ReceiveProgress {
            chunk_id: self.chunk_id,
            slice_count: self.cur.slice_count,
            slices_received: self.cur.received_count as u16,
            bytes_received: self.cur.received_bytes,
            chunk_size: self.cur.chunk_size,
            started_at: self.cur.started_at,
        })
    }

    /// Counters.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkReceiver};
    /// assert_eq!(ChunkReceiver::new(ChunkConfig::default()).unwrap().stats().acks_sent, 0);
    /// ```
    pub fn stats(&self) -> &ChunkReceiverStats {
        &self.stats
    }

    /// Refuses a slice of chunk `found`, which is not the one being received: counted.
    fn unexpected(&mut self, found: u16) -> ChunkPacketError {
        self.stats
            .rejected
            .record(ChunkPacketError::UnexpectedChunk {
                expected: self.chunk_id,
                found,
            })
    }

    /// A slice of a chunk a jump forward skipped (never delivered) after the chunk the
    /// jump reached completed. Refused, unless such slices have kept coming for
    /// [`RETURN_AFTER_SECONDS`] with no progress: then the sender still sends that chunk,
    /// the jump came from a forged or corrupted slice, and the receiver goes back to it.
    /// Without this, one forged single-slice chunk ahead, once taken, would make the
    /// genuine chunk look delivered already and the transfer would never finish.
    fn skipped_slice(&mut self, slice: &SlicePacket<'_>, now: f64) -> Result<(), ChunkPacketError> {
        if self.skipped_refused == 0 {
            self.skipped_since = now;
        }
        self.skipped_refused = self.skipped_refused.saturating_add(1);
        if self.ready
            || self.skipped_refused <= RETURN_AFTER_REFUSED_SLICES
            || now - self.skipped_since < RETURN_AFTER_SECONDS
        {
            return Err(self.unexpected(slice.chunk_id));
        }
        if self.receiving {
            self.stats.abandoned_chunks += 1;
        }
        self.stats.returned_to_older_chunk += 1;
        if let Some((_, hi)) = self.skipped.take() {
            self.delivered_ahead = Some((hi, self.chunk_id));
        }
        self.go_back(slice, now);
        Ok(())
    }

    /// Sets the partial chunk being received aside (see `suspended`).
    fn suspend(&mut self) {
        let fresh = Reassembly::empty(self.cur.received.len());
        self.suspended = Some((self.chunk_id, std::mem::replace(&mut self.cur, fresh)));
    }

    /// Goes back to the older chunk of `slice`: resumed where the move forward left it
    /// when that is the chunk set aside (same id and slice count), else from scratch.
    fn go_back(&mut self, slice: &SlicePacket<'_>, now: f64) {
        let resumed = self
            .suspended
            .take_if(|(id, r)| *id == slice.chunk_id && r.slice_count == slice.slice_count);
        self.chunk_id = slice.chunk_id;
        match resumed {
            Some((_, r)) => {
                self.begin();
                self.cur = r;
            }
            None => self.start(slice.slice_count, now),
        }
        self.store(slice);
    }

    fn slice_count_changed(&mut self, expected: u16, found: u16) -> ChunkPacketError {
        self.stats
            .rejected
            .record(ChunkPacketError::SliceCountChanged { expected, found })
    }

    /// Starts receiving `slice_count` slices from nothing.
    fn start(&mut self, slice_count: u16, now: f64) {
        self.begin();
        self.cur.restart(slice_count, self.config.slice_size, now);
    }

    /// Receiving the chunk in `cur`, from whatever it holds.
    fn begin(&mut self) {
        self.older_since_progress = 0;
        self.receiving = true;
        self.ready = false;
        self.ack_current = false;
    }

    fn store(&mut self, slice: &SlicePacket<'_>) {
        let i = usize::from(slice.slice_id);
        let (byte, bit) = (i / 8, 1u8 << (i % 8));
        self.ack_current = true;
        if self.cur.received[byte] & bit != 0 {
            self.stats.duplicate_slices += 1;
            return;
        }
        let start = i * self.config.slice_size;
        self.cur.data[start..start + slice.data.len()].copy_from_slice(slice.data);
        self.cur.received[byte] |= bit;
        self.older_since_progress = 0;
        self.skipped_refused = 0;
        self.cur.received_count += 1;
        self.cur.received_bytes += slice.data.len();
        self.stats.slices_received += 1;
        if slice.is_last() {
            self.cur.chunk_size = Some(start + slice.data.len());
        }
        if self.cur.received_count == usize::from(self.cur.slice_count) {
            // Reached by a jump: the chunks it skipped stay known as never delivered. In
            // order: whatever was skipped before is settled.
            self.skipped = self.jumped_from.take().map(|from| (from, self.chunk_id));
            // Only the chunk a jump skipped may be gone back to; in order, none.
            let skipped_from = self.skipped.map(|(from, _)| from);
            if self.suspended.as_ref().map(|(id, _)| *id) != skipped_from {
                self.suspended = None;
            }
            if let Some((lo, hi)) = self.delivered_ahead {
                // Past the window (not before it, where the returned-to chunks are).
                let id = self.chunk_id;
                if !sequence_greater_than(lo, id) && id.wrapping_sub(lo) >= hi.wrapping_sub(lo) {
                    self.delivered_ahead = None;
                }
            }
            self.receiving = false;
            self.ready = true;
            self.stats.chunks_completed += 1;
        }
    }
}

#[cfg(test)]
mod tests;
