//! The sending end of a chunk transfer: a queue, up to `max_chunks_in_flight` chunks in
//! flight, a bandwidth budget.

use std::collections::VecDeque;

use super::packet::{AckPacket, SlicePacket, LAST_SLICE_HEADER_BYTES, SLICE_HEADER_BYTES};
use super::{ChunkConfig, ChunkError, ChunkId, ChunkPacketError, ChunkRejections};

/// Budget comparisons allow for float rounding, so that the time
/// [`ChunkSender::next_send_time`] promises really does afford a packet.
const BUDGET_EPSILON: f64 = 1e-6;

/// Sends chunks as slice packets until every slice is acked.
///
/// Call [`send`](Self::send) to queue a chunk, [`poll_packet`](Self::poll_packet) every
/// update to get the slice packets the budget allows, and
/// [`receive_ack`](Self::receive_ack) with every ack packet. See the
/// [module docs](crate::chunk) for the whole loop.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
/// let mut sender = ChunkSender::new(ChunkConfig::default())?;
/// let mut receiver = ChunkReceiver::new(ChunkConfig::default())?;
/// let id = sender.send(vec![7u8; 3000])?; // 3 slices
/// // A perfect, instant link.
/// while let Some(slice) = sender.poll_packet(0.0) {
///     receiver.receive_slice(0.0, slice)?;
/// }
/// let ack = receiver.poll_ack(0.0).unwrap();
/// sender.receive_ack(0.0, ack)?;
/// assert_eq!(sender.last_completed(), Some((id, 0.0)));
/// assert_eq!(receiver.take_chunk().unwrap().data, vec![7u8; 3000]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ChunkSender {
    config: ChunkConfig,
    queue: VecDeque<(ChunkId, Vec<u8>)>,
    next_id: ChunkId,
    /// The chunks in flight, oldest id first: at most `max_chunks_in_flight`, all with
    /// ids below the oldest's plus `max_chunks_in_flight` (the receiver's window).
    flights: VecDeque<InFlight>,
    /// The newest chunk that went in flight.
    newest_started: Option<ChunkId>,
    /// The chunks started from the oldest in flight to the newest, with their sizes as
    /// the receiver counts them (slice count times `slice_size`): those completed behind
    /// the oldest still wait on the receiver, which delivers in order.
    span: VecDeque<(ChunkId, usize)>,
    /// The sum of the sizes in `span`.
    span_bytes: usize,
    /// The chunk finished or cancelled last, whose late acks are expected and harmless
    /// (with one chunk in flight; see `finished_lately`).
    last_finished: Option<ChunkId>,
    /// Every slice send gets the next place in this order; the latest place among the
    /// acked slices: a slice sent before that one and still unacked is lost once the
    /// loss delay has passed (slices of one burst leave at the same time, so the order,
    /// not the time, says which went first).
    next_order: u64,
    largest_acked_order: Option<u64>,
    /// Bytes the budget allows now.
    budget: f64,
    /// Time of the last budget refill (None before the first poll).
    budget_time: Option<f64>,
    rtt: Option<f64>,
    /// The round trip measured from this sender's own slices (see
    /// [`SliceRtt`]), `None` until a slice sent once is acked.
    slice_rtt: Option<SliceRtt>,
    now: f64,
    last_completed: Option<(ChunkId, f64)>,
    packet: Vec<u8>,
    stats: ChunkSenderStats,
}

/// A slice is lost once a slice sent after it is acked and this many of the slices'
/// smoothed RTTs have passed since it was sent (QUIC's time threshold, RFC 9002: room for
/// slices reordered by jitter).
const SLICE_LOSS_TIME_THRESHOLD: f64 = 9.0 / 8.0;

/// Clock granularity in the retransmission timeout (RFC 6298's G).
const SLICE_RTO_GRANULARITY: f64 = 0.001;

/// A round trip estimated as RFC 6298 does, from slices sent once and the first ack that
/// reports each.
#[derive(Debug, Clone, Copy)]
struct SliceRtt {
    smoothed: f64,
    variance: f64,
}

impl SliceRtt {
    fn first(sample: f64) -> Self {
        Self {
            smoothed: sample,
            variance: sample / 2.0,
        }
    }

    fn update(self, sample: f64) -> Self {
        Self {
            variance: 0.75 * self.variance + 0.25 * (self.smoothed - sample).abs(),
            smoothed: 0.875 * self.smoothed + 0.125 * sample,
        }
    }

    /// The retransmission timeout: `smoothed + max(4 variance, G)`.
    fn rto(&self) -> f64 {
        self.smoothed + (4.0 * self.variance).max(SLICE_RTO_GRANULARITY)
    }
}

/// The heap bytes the sender keeps per slice of a chunk in flight (its acked, resent,
/// last-sent and send-order entries and its place in the resend order), for memory
/// bounds.
pub(crate) const PER_SLICE_STATE_BYTES: usize = 2 * core::mem::size_of::<bool>()
    + core::mem::size_of::<Option<f64>>()
    + core::mem::size_of::<u64>()
    + core::mem::size_of::<u16>();

/// The bytes the sender keeps per chunk in flight besides its data and per-slice
/// state (its entry in the flights and in the span), for memory bounds.
pub(crate) const PER_CHUNK_STATE_BYTES: usize =
    core::mem::size_of::<InFlight>() + core::mem::size_of::<(ChunkId, usize)>();

#[derive(Debug, Clone)]
struct InFlight {
    id: ChunkId,
    data: Vec<u8>,
    slice_count: u16,
    acked: Vec<bool>,
    acked_count: usize,
    acked_bytes: usize,
    last_sent: Vec<Option<f64>>,
    /// Slices sent more than once: their acks give no RTT sample (Karn's rule).
    resent: Vec<bool>,
    /// Each slice's place in the sender's order of sends (its last send).
    send_order: Vec<u64>,
    /// Slices below this were sent at least once (or acked): the first sends go in
    /// order, before any resend.
    next_unsent: usize,
    /// The slices sent, in the order of their last send, so by when they are due
    /// (oldest first; see [`InFlight::due`]); acked ones leave when they reach the
    /// front, which is kept unacked. A poll looks at its front only.
    resends: VecDeque<u16>,
    /// Next slice of the initial burst, while it lasts.
    burst_next: Option<usize>,
}

impl InFlight {
    /// When an unacked slice may go again (`-inf`: never sent): `delay` after its last
    /// send, or `loss_delay` after it once a slice sent later (of any chunk) is acked.
    fn due(&self, slice: usize, timing: Timing) -> f64 {
        let Some(sent) = self.last_sent[slice] else {
            return f64::NEG_INFINITY;
        };
        let timer = sent + timing.delay;
        match timing.loss_delay {
            Some(loss)
                if timing
                    .largest_acked_order
                    .is_some_and(|order| self.send_order[slice] < order) =>
            {
                timer.min(sent + loss)
            }
            _ => timer,
        }
    }

    /// Drops acked slices from the front of the resend order and skips acked slices
    /// not yet sent.
    fn settle(&mut self) {
        while self
            .resends
            .front()
            .is_some_and(|&i| self.acked[usize::from(i)])
        {
            self.resends.pop_front();
        }
        let count = usize::from(self.slice_count);
        while self.next_unsent < count && self.acked[self.next_unsent] {
            self.next_unsent += 1;
        }
    }

    /// The slice this chunk would send next and when it is due: the first never sent
    /// (due at once), else the one sent longest ago. Sends come in order, so the resend
    /// order is also the order of the due times: the loss delay (shorter than the
    /// timer) applies to slices sent before the latest acked, a prefix of that order.
    fn next_due(&self, timing: Timing) -> Option<(usize, f64)> {
        if self.next_unsent < usize::from(self.slice_count) {
            return Some((self.next_unsent, f64::NEG_INFINITY));
        }
        let i = usize::from(*self.resends.front()?);
        Some((i, self.due(i, timing)))
    }

    fn slice_range(&self, slice_id: usize, slice_size: usize) -> std::ops::Range<usize> {
        let start = slice_id * slice_size;
        start..(start + slice_size).min(self.data.len())
    }

    fn packet_len(&self, slice_id: usize, slice_size: usize) -> usize {
        let header = if slice_id + 1 == usize::from(self.slice_count) {
            LAST_SLICE_HEADER_BYTES
        } else {
            SLICE_HEADER_BYTES
        };
        header + self.slice_range(slice_id, slice_size).len()
    }
}

/// The resend timing of one walk over the slices.
#[derive(Debug, Clone, Copy)]
struct Timing {
    delay: f64,
    loss_delay: Option<f64>,
    largest_acked_order: Option<u64>,
}

/// Counters of a [`ChunkSender`].
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkSender};
/// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
/// sender.send(vec![1u8; 10]).unwrap();
/// let len = sender.poll_packet(0.0).unwrap().len();
/// assert_eq!((sender.stats().packets_sent, sender.stats().bytes_sent), (1, len as u64));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkSenderStats {
    /// Slice packets produced.
    pub packets_sent: u64,
    /// Bytes of slice packets produced (without `packet_overhead`).
    pub bytes_sent: u64,
    /// Slice packets for slices that had been sent before.
    pub slices_resent: u64,
    /// Slice packets sent by the initial burst.
    pub burst_packets: u64,
    /// Valid acks for the chunk in flight.
    pub acks_received: u64,
    /// Acks for chunks finished or cancelled lately (late, harmless).
    pub stale_acks: u64,
    /// Chunks fully acked.
    pub chunks_completed: u64,
    /// Chunks cancelled in flight.
    pub chunks_cancelled: u64,
    /// Most chunks in flight at once.
    pub max_chunks_in_flight_seen: u64,
    /// Ack packets refused, by reason.
    pub rejected: ChunkRejections,
}

/// How far a chunk in flight has got, as the sender knows from acks.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, ChunkSender};
/// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
/// sender.send(vec![0u8; 2048]).unwrap();
/// let p = sender.progress().unwrap();
/// assert_eq!((p.slice_count, p.slices_acked, p.chunk_size, p.bytes_acked), (2, 0, 2048, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendProgress {
    /// The chunk in flight.
    pub chunk_id: ChunkId,
    /// Its slices.
    pub slice_count: u16,
    /// Slices acked so far.
    pub slices_acked: u16,
    /// Its size in bytes.
    pub chunk_size: usize,
    /// Bytes in the acked slices.
    pub bytes_acked: usize,
}

impl SendProgress {
    /// Share of the bytes acked, `0.0..=1.0`.
    ///
    /// ```
    /// use netser_transport::chunk::SendProgress;
    /// let p = SendProgress { chunk_id: 0, slice_count: 4, slices_acked: 1, chunk_size: 4000, bytes_acked: 1000 };
    /// assert_eq!(p.fraction(), 0.25);
    /// ```
    pub fn fraction(&self) -> f64 {
        self.bytes_acked as f64 / self.chunk_size.max(1) as f64
    }
}

impl ChunkSender {
    /// A sender with these settings. Its first chunk gets `config.first_chunk_id`.
    ///
    /// # Errors
    /// [`ChunkError::InvalidConfig`] when a setting is out of range
    /// ([`ChunkConfig::validate`]).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// assert!(ChunkSender::new(ChunkConfig { slice_size: 0, ..Default::default() }).is_err());
    /// ```
    pub fn new(config: ChunkConfig) -> Result<Self, ChunkError> {
        config.validate()?;
        Ok(Self {
            next_id: config.first_chunk_id,
            packet: vec![0; config.max_slice_packet_size()],
            queue: VecDeque::new(),
            flights: VecDeque::with_capacity(config.max_chunks_in_flight.min(64)),
            newest_started: None,
            span: VecDeque::new(),
            span_bytes: 0,
            last_finished: None,
            next_order: 0,
            largest_acked_order: None,
            config,
            budget: 0.0,
            budget_time: None,
            rtt: None,
            slice_rtt: None,
            now: 0.0,
            last_completed: None,
            stats: ChunkSenderStats::default(),
        })
    }

    /// The settings.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// assert_eq!(ChunkSender::new(ChunkConfig::default()).unwrap().config().slice_size, 1024);
    /// ```
    pub fn config(&self) -> &ChunkConfig {
        &self.config
    }

    /// Queues a chunk and returns its id. It goes on the wire at once if the window has
    /// room (fewer than `max_chunks_in_flight` chunks from the oldest one not yet acked
    /// to this one, and their bytes with it within `max_bytes_in_flight`, see
    /// [`bytes_in_flight`](Self::bytes_in_flight); or none in flight), else after the
    /// chunks ahead of it.
    ///
    /// # Errors
    /// [`ChunkError::EmptyChunk`], [`ChunkError::ChunkTooLarge`] above
    /// `slice_size * max_slices` bytes, [`ChunkError::QueueFull`] when the window is full
    /// and `max_queued_chunks` chunks already wait.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkError, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(sender.send(vec![0u8; 256 * 1024]), Ok(0));
    /// assert_eq!(
    ///     sender.send(vec![0u8; 256 * 1024 + 1]),
    ///     Err(ChunkError::ChunkTooLarge { size: 256 * 1024 + 1, max: 256 * 1024 })
    /// );
    /// ```
    pub fn send(&mut self, data: impl Into<Vec<u8>>) -> Result<ChunkId, ChunkError> {
        let data = data.into();
        if data.is_empty() {
            return Err(ChunkError::EmptyChunk);
        }
        let max = self.config.max_chunk_size();
        if data.len() > max {
            return Err(ChunkError::ChunkTooLarge {
                size: data.len(),
                max,
            });
        }
        let starts_now =
            self.queue.is_empty() && self.window_has_room(self.next_id, self.declared(&data));
        if !starts_now && self.queue.len() >= self.config.max_queued_chunks {
            return Err(ChunkError::QueueFull {
                capacity: self.config.max_queued_chunks,
            });
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.queue.push_back((id, data));
        self.start_ready();
        Ok(id)
    }

    /// Feeds the round-trip time measured by the connection; `None` (or a value that is
    /// not a finite number >= 0) falls back to [`ChunkConfig::resend_delay`].
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(sender.resend_delay(), 0.1);
    /// sender.set_rtt(Some(0.2));
    /// assert_eq!(sender.resend_delay(), 0.25);
    /// ```
    pub fn set_rtt(&mut self, rtt: Option<f64>) {
        self.rtt = rtt.filter(|r| r.is_finite() && *r >= 0.0);
    }

    /// Minimum time between two sends of the same slice: RTT x `resend_rtt_factor` once
    /// an RTT is fed ([`set_rtt`](Self::set_rtt)), else `resend_delay` (the article's
    /// fixed delay, for a sender whose owner tracks no RTT). The RTT is then the smaller
    /// of the one fed and this sender's own retransmission timeout (RFC 6298, from the
    /// acks of slices sent once): the receiver acks a slice as soon as it arrives, so its
    /// own samples are what it waits for, where an estimate from packets the peer sends
    /// only now and then (acks of rare messages) can grow to many round trips. With an
    /// RTT fed, a slice is also resent, sooner, once a slice sent after it is acked and
    /// 9/8 of the slices' smoothed RTT has passed since it was sent (QUIC's loss
    /// detection): it was lost, or later than any reordering.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let sender = ChunkSender::new(ChunkConfig { resend_delay: 0.5, ..Default::default() }).unwrap();
    /// assert_eq!(sender.resend_delay(), 0.5);
    /// ```
    pub fn resend_delay(&self) -> f64 {
        self.rtt.map_or(self.config.resend_delay, |rtt| {
            let own = self.slice_rtt.map_or(rtt, |own| own.rto());
            rtt.min(own) * self.config.resend_rtt_factor
        })
    }

    /// How long after it was sent a slice is lost once a slice sent after it is acked.
    fn loss_delay(&self) -> Option<f64> {
        self.rtt?;
        self.slice_rtt
            .map(|rtt| SLICE_LOSS_TIME_THRESHOLD * rtt.smoothed)
    }

    /// The next slice packet to send at `now`, or `None` when the budget is spent or every
    /// unacked slice was sent less than a resend delay ago. Call it in a loop each update
    /// and put each packet on the wire before the next call.
    ///
    /// The budget grows by `bandwidth` bytes per second between calls, up to
    /// `budget_window` seconds' worth; each packet costs its length plus
    /// `packet_overhead`. Slices are walked round-robin from where the last walk stopped,
    /// so resends spread over the whole chunk. With `initial_burst`, every slice of a new
    /// chunk is sent once first, free of the budget.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// // 10 000 bytes per second, 100-byte slices: 135 bytes per packet (100 of slice,
    /// // 7 of slice header, 28 of packet_overhead).
    /// let config = ChunkConfig {
    ///     slice_size: 100, bandwidth: 10_000.0, budget_window: 0.1, ..Default::default()
    /// };
    /// let mut sender = ChunkSender::new(config).unwrap();
    /// sender.send(vec![0u8; 10_000]).unwrap();
    /// let mut sent = 0;
    /// while sender.poll_packet(0.0).is_some() { sent += 1; }
    /// assert_eq!(sent, 7); // the saved-up budget: 1000 bytes / 135 per packet
    /// while sender.poll_packet(1.0).is_some() { sent += 1; }
    /// assert_eq!(sent, 14); // the budget saves at most 0.1 s
    /// ```
    pub fn poll_packet(&mut self, now: f64) -> Option<&[u8]> {
        self.refill(now);
        let slice_size = self.config.slice_size;
        let timing = self.timing();
        let (flight, slice_id) = self.choose(timing)?;
        let cur = &mut self.flights[flight];
        if cur.last_sent[slice_id].is_some() {
            self.stats.slices_resent += 1;
            cur.resent[slice_id] = true;
            // A slice sent before is chosen from the front only (the burst sends slices
            // never sent); the search keeps each slice in the order once regardless.
            if cur.resends.front() == Some(&(slice_id as u16)) {
                cur.resends.pop_front();
            } else if let Some(at) = cur.resends.iter().position(|&i| usize::from(i) == slice_id) {
                cur.resends.remove(at);
            }
        }
        cur.next_unsent = cur.next_unsent.max(slice_id + 1);
        cur.resends.push_back(slice_id as u16);
        cur.settle();
        cur.last_sent[slice_id] = Some(self.now);
        cur.send_order[slice_id] = self.next_order;
        // 2^64 sends: never reached.
        self.next_order = self.next_order.saturating_add(1);
        let packet = SlicePacket {
            chunk_id: cur.id,
            slice_id: slice_id as u16,
            slice_count: cur.slice_count,
            data: &cur.data[cur.slice_range(slice_id, slice_size)],
        };
        // Cannot fail: the buffer holds the largest slice packet and a chunk's last slice
        // holds 1..=slice_size bytes.
        let len = packet.encode(&mut self.packet).ok()?;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        Some(&self.packet[..len])
    }

    /// Earliest time at which [`poll_packet`](Self::poll_packet) will surely produce a
    /// packet (it may produce one a little sooner), or `None` when there is nothing to
    /// send. Lets a simulation jump straight to the next event.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(sender.next_send_time(), None);
    /// sender.send(vec![1u8]).unwrap();
    /// while sender.poll_packet(0.0).is_some() {}
    /// assert_eq!(sender.next_send_time(), Some(0.1)); // the resend delay
    /// ```
    pub fn next_send_time(&self) -> Option<f64> {
        if self.flights.iter().any(|cur| cur.burst_next.is_some()) {
            return Some(self.now);
        }
        let timing = self.timing();
        let eligible = self
            .flights
            .iter()
            .filter_map(|cur| cur.next_due(timing))
            .map(|(_, due)| due.max(self.now))
            .min_by(f64::total_cmp)?;
        let cost = (self.config.max_slice_packet_size() + self.config.packet_overhead) as f64;
        let funded = match self.budget_time {
            Some(t) if self.budget < cost => t + (cost - self.budget) / self.config.bandwidth,
            _ => self.now,
        };
        Some(eligible.max(funded).max(self.now))
    }

    /// Reads an ack packet: every slice it marks as received counts as acked, the first
    /// time any ack says so (acks may come late, duplicated or out of order). When the
    /// last slice is acked the chunk is complete and the next queued chunk starts (when
    /// the window has room: the oldest chunk in flight must complete for the window to
    /// move).
    ///
    /// An ack for the chunk finished or cancelled last (with `max_chunks_in_flight` 1),
    /// or for a chunk finished less than `3 * max_chunks_in_flight` chunk ids behind the
    /// newest started (as far back as an agreeing receiver acks: the chunks it took last
    /// and those it holds), is expected and only counted in
    /// [`ChunkSenderStats::stale_acks`].
    ///
    /// # Errors
    /// A malformed packet ([`AckPacket::decode`]),
    /// [`ChunkPacketError::AckChunkMismatch`] for any other chunk, and
    /// [`ChunkPacketError::SliceCountChanged`] when the slice count is not the chunk's.
    /// Each is counted in [`ChunkSenderStats::rejected`].
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkPacketError, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// sender.send(vec![1u8; 10]).unwrap(); // chunk 0, one slice
    /// assert_eq!(
    ///     sender.receive_ack(0.0, &[0xc2, 5, 0, 1, 0, 1]),
    ///     Err(ChunkPacketError::AckChunkMismatch { expected: Some(0), found: 5 })
    /// );
    /// assert_eq!(sender.receive_ack(0.0, &[0xc2, 0, 0, 1, 0, 1]), Ok(()));
    /// assert!(sender.is_idle());
    /// assert_eq!(sender.stats().rejected.ack_chunk_mismatch, 1);
    /// ```
    pub fn receive_ack(&mut self, now: f64, packet: &[u8]) -> Result<(), ChunkPacketError> {
        self.observe(now);
        let ack = match AckPacket::decode(packet, &self.config) {
            Ok(ack) => ack,
            Err(e) => return Err(self.stats.rejected.record(e)),
        };
        let slice_size = self.config.slice_size;
        let Some(flight) = self.flights.iter().position(|c| c.id == ack.chunk_id) else {
            if self.finished_lately(ack.chunk_id) {
                self.stats.stale_acks += 1;
                return Ok(());
            }
            let expected = self.flights.front().map(|c| c.id);
            return Err(self
                .stats
                .rejected
                .record(ChunkPacketError::AckChunkMismatch {
                    expected,
                    found: ack.chunk_id,
                }));
        };
        if ack.slice_count != self.flights[flight].slice_count {
            let expected = self.flights[flight].slice_count;
            return Err(self
                .stats
                .rejected
                .record(ChunkPacketError::SliceCountChanged {
                    expected,
                    found: ack.slice_count,
                }));
        }
        let cur = &mut self.flights[flight];
        self.stats.acks_received += 1;
        // The newly acked slice sent last and only once gives an RTT sample.
        let mut sample: Option<f64> = None;
        let mut largest = self.largest_acked_order;
        for i in 0..cur.slice_count {
            let slot = usize::from(i);
            // The fuse: unacked -> acked once, never back.
            if !cur.acked[slot] && ack.is_received(i) {
                cur.acked[slot] = true;
                cur.acked_count += 1;
                cur.acked_bytes += cur.slice_range(slot, slice_size).len();
                if let Some(sent) = cur.last_sent[slot] {
                    let order = cur.send_order[slot];
                    largest = Some(largest.map_or(order, |o| o.max(order)));
                    if !cur.resent[slot] {
                        let rtt = (self.now - sent).max(0.0);
                        sample = Some(sample.map_or(rtt, |s: f64| s.min(rtt)));
                    }
                }
            }
        }
        cur.settle();
        let complete = cur.acked_count == usize::from(cur.slice_count);
        self.largest_acked_order = largest;
        if let Some(rtt) = sample {
            self.slice_rtt = Some(match self.slice_rtt {
                None => SliceRtt::first(rtt),
                Some(estimate) => estimate.update(rtt),
            });
        }
        if complete {
            self.finish(flight, true);
            self.stats.chunks_completed += 1;
            self.start_ready();
        }
        Ok(())
    }

    /// Stops sending the chunk in flight and returns its id; the next queued chunk starts.
    /// The receiver drops the partial chunk when the next chunk's slices reach it (a chunk
    /// whose slices all arrived already may still be delivered).
    ///
    /// Only with one chunk in flight (`max_chunks_in_flight` 1, the article's transfer):
    /// with more, the receiver delivers chunks in order and keeps waiting for the one
    /// cancelled, so `cancel` returns `None` and changes nothing.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// let first = sender.send(vec![1u8; 5000]).unwrap();
    /// let second = sender.send(vec![2u8; 5000]).unwrap();
    /// assert_eq!(sender.cancel(), Some(first));
    /// assert_eq!(sender.progress().unwrap().chunk_id, second);
    /// assert_eq!(sender.cancel(), Some(second));
    /// assert_eq!(sender.cancel(), None);
    /// ```
    pub fn cancel(&mut self) -> Option<ChunkId> {
        if self.config.max_chunks_in_flight != 1 || self.flights.is_empty() {
            return None;
        }
        let id = self.flights[0].id;
        self.finish(0, false);
        self.stats.chunks_cancelled += 1;
        self.start_ready();
        Some(id)
    }

    /// Drops every queued chunk (not the one in flight) and returns how many there were.
    /// Their ids are skipped.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// sender.send(vec![1u8]).unwrap();
    /// sender.send(vec![2u8]).unwrap();
    /// sender.send(vec![3u8]).unwrap();
    /// assert_eq!(sender.clear_queue(), 2);
    /// assert_eq!(sender.send(vec![4u8]), Ok(3));
    /// ```
    pub fn clear_queue(&mut self) -> usize {
        let dropped = self.queue.len();
        self.queue.clear();
        dropped
    }

    /// Progress of the oldest chunk in flight, `None` when idle.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert!(sender.progress().is_none());
    /// ```
    pub fn progress(&self) -> Option<SendProgress> {
        self.flights.front().map(|cur| SendProgress {
            chunk_id: cur.id,
            slice_count: cur.slice_count,
            slices_acked: cur.acked_count as u16,
            chunk_size: cur.data.len(),
            bytes_acked: cur.acked_bytes,
        })
    }

    /// The newest chunk fully acked along with every chunk sent before it, and the `now`
    /// of the ack that completed the last of them. With one chunk in flight, simply the
    /// last chunk completed (a cancelled one does not count).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(sender.last_completed(), None);
    /// ```
    pub fn last_completed(&self) -> Option<(ChunkId, f64)> {
        self.last_completed
    }

    /// No chunk in flight and none queued.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert!(sender.is_idle());
    /// sender.send(vec![1u8]).unwrap();
    /// assert!(!sender.is_idle());
    /// ```
    pub fn is_idle(&self) -> bool {
        self.flights.is_empty() && self.queue.is_empty()
    }

    /// Chunks in flight (sent, not yet fully acked).
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let config = ChunkConfig { max_chunks_in_flight: 2, ..Default::default() };
    /// let mut sender = ChunkSender::new(config).unwrap();
    /// for byte in 0..3u8 {
    ///     sender.send(vec![byte]).unwrap();
    /// }
    /// assert_eq!((sender.chunks_in_flight(), sender.queued_chunks()), (2, 1));
    /// ```
    pub fn chunks_in_flight(&self) -> usize {
        self.flights.len()
    }

    /// Chunks waiting behind the ones in flight.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let mut sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// sender.send(vec![1u8]).unwrap();
    /// sender.send(vec![2u8]).unwrap();
    /// assert_eq!(sender.queued_chunks(), 1);
    /// ```
    pub fn queued_chunks(&self) -> usize {
        self.queue.len()
    }

    /// Counters.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let sender = ChunkSender::new(ChunkConfig::default()).unwrap();
    /// assert_eq!(sender.stats().packets_sent, 0);
    /// ```
    pub fn stats(&self) -> &ChunkSenderStats {
        &self.stats
    }

    /// Whether chunk `id` of `size` bytes (as [`declared`](Self::declared)) may go in
    /// flight: always when none is; else it is less than `max_chunks_in_flight` past
    /// the oldest chunk in flight (the receiver's window), that many are not already in
    /// flight, and the chunks from the oldest in flight on plus it fit
    /// `max_bytes_in_flight`.
    fn window_has_room(&self, id: ChunkId, size: usize) -> bool {
        let k = self.config.max_chunks_in_flight;
        match self.flights.front() {
            None => true,
            Some(oldest) => {
                self.flights.len() < k
                    && usize::from(id.wrapping_sub(oldest.id)) < k
                    && self.span_bytes.saturating_add(size) <= self.config.max_bytes_in_flight
            }
        }
    }

    /// The bytes a chunk of `data` takes at the receiver: its slices times `slice_size`.
    fn declared(&self, data: &[u8]) -> usize {
        data.len().div_ceil(self.config.slice_size) * self.config.slice_size
    }

    /// Bytes in flight: the chunks from the oldest in flight to the newest started
    /// (those completed between them included: the receiver delivers in order, so it
    /// still holds them), each counted as its slice count times `slice_size`. At most
    /// [`ChunkConfig::max_bytes_in_flight`], or one chunk's when a single chunk larger
    /// than that is in flight.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkSender};
    /// let config = ChunkConfig {
    ///     max_chunks_in_flight: 8,
    ///     max_bytes_in_flight: 4096,
    ///     ..Default::default()
    /// };
    /// let mut sender = ChunkSender::new(config).unwrap();
    /// sender.send(vec![1u8; 1000]).unwrap(); // one 1024-byte slice
    /// sender.send(vec![2u8; 3000]).unwrap(); // three
    /// sender.send(vec![3u8; 10]).unwrap(); // would pass 4096: waits
    /// assert_eq!((sender.chunks_in_flight(), sender.bytes_in_flight()), (2, 4096));
    /// // A chunk larger than the limit goes alone.
    /// let mut alone = ChunkSender::new(sender.config().clone()).unwrap();
    /// alone.send(vec![0u8; 10_000]).unwrap();
    /// assert_eq!(alone.bytes_in_flight(), 10 * 1024);
    /// ```
    pub fn bytes_in_flight(&self) -> usize {
        self.span_bytes
    }

    /// Whether chunk `id`, not in flight, may be one an agreeing receiver still acks.
    /// With one chunk in flight, the article's: the chunk finished last. With `K`, the
    /// receiver acks the `K` chunks it took last and the `K` of its window, which
    /// starts at most `K` before the sender's oldest chunk in flight (it holds the
    /// chunks acked from there on) and at most one past the newest started: every such
    /// id is less than `3K` behind the newest started (the `K` finished last are not
    /// enough when chunks complete out of order).
    fn finished_lately(&self, id: ChunkId) -> bool {
        let k = self.config.max_chunks_in_flight;
        if k == 1 {
            return self.last_finished == Some(id);
        }
        self.newest_started
            .is_some_and(|newest| usize::from(newest.wrapping_sub(id)) < 3 * k)
    }

    /// Drops the chunks before the oldest in flight from the span (all when none is).
    fn trim_span(&mut self) {
        match self.flights.front().map(|c| c.id) {
            None => {
                self.span.clear();
                self.span_bytes = 0;
            }
            Some(oldest) => {
                while let Some(&(id, size)) = self.span.front() {
                    if id == oldest {
                        break;
                    }
                    self.span.pop_front();
                    self.span_bytes -= size;
                }
            }
        }
    }

    /// Puts queued chunks in flight while the window has room.
    fn start_ready(&mut self) {
        while let Some((id, data)) = self.queue.front() {
            let (id, size) = (*id, self.declared(data));
            if !self.window_has_room(id, size) {
                break;
            }
            let Some((id, data)) = self.queue.pop_front() else {
                break;
            };
            // send() refused empty chunks and chunks above max_slices (<= 8192) slices.
            let count = data.len().div_ceil(self.config.slice_size);
            self.flights.push_back(InFlight {
                id,
                data,
                slice_count: count as u16,
                acked: vec![false; count],
                acked_count: 0,
                acked_bytes: 0,
                last_sent: vec![None; count],
                resent: vec![false; count],
                send_order: vec![0; count],
                next_unsent: 0,
                resends: VecDeque::with_capacity(count),
                burst_next: self.config.initial_burst.then_some(0),
            });
            self.span.push_back((id, size));
            self.span_bytes += size;
            self.newest_started = Some(id);
            self.stats.max_chunks_in_flight_seen = self
                .stats
                .max_chunks_in_flight_seen
                .max(self.flights.len() as u64);
        }
    }

    /// Takes chunk `flights[index]` out of flight (`completed`, or cancelled): its late
    /// acks become stale, and when it completed as the oldest, the chunks up to the new
    /// oldest (or all started) are complete in order.
    fn finish(&mut self, index: usize, completed: bool) {
        let Some(done) = self.flights.remove(index) else {
            return;
        };
        self.last_finished = Some(done.id);
        self.trim_span();
        if completed && index == 0 {
            let in_order = match self.flights.front() {
                Some(oldest) => oldest.id.wrapping_sub(1),
                None => self.newest_started.unwrap_or(done.id),
            };
            self.last_completed = Some((in_order, self.now));
        }
    }

    /// The resend timing now.
    fn timing(&self) -> Timing {
        Timing {
            delay: self.resend_delay(),
            loss_delay: self.loss_delay(),
            largest_acked_order: self.largest_acked_order,
        }
    }

    /// The next slice to send, `(flight, slice)`: the initial burst of a chunk first,
    /// then, oldest chunk first, the chunk's next slice never sent or else the one sent
    /// longest ago, once due, within the budget (charged here). Looks at one slice per
    /// chunk in flight: the work of a poll does not grow with the slices in flight.
    fn choose(&mut self, timing: Timing) -> Option<(usize, usize)> {
        let slice_size = self.config.slice_size;
        if let Some(flight) = self.flights.iter().position(|c| c.burst_next.is_some()) {
            let cur = &mut self.flights[flight];
            let next = cur.burst_next?;
            let count = usize::from(cur.slice_count);
            cur.burst_next = (next + 1..count).find(|&i| !cur.acked[i]);
            if cur.burst_next.is_none() {
                // The burst is over: the regular budget applies from here on.
                self.budget = 0.0;
                self.budget_time = Some(self.now);
            }
            self.stats.burst_packets += 1;
            return Some((flight, next));
        }
        for (flight, cur) in self.flights.iter().enumerate() {
            let Some((i, due)) = cur.next_due(timing) else {
                continue;
            };
            if self.now < due {
                continue;
            }
            let cost = (cur.packet_len(i, slice_size) + self.config.packet_overhead) as f64;
            if self.budget + BUDGET_EPSILON < cost {
                return None;
            }
            self.budget -= cost;
            return Some((flight, i));
        }
        None
    }

    /// Moves the clock forward (never back: a late `now` changes nothing).
    fn observe(&mut self, now: f64) {
        if now > self.now {
            self.now = now;
        }
    }

    /// Adds the budget earned since the last refill, up to the window (at least one
    /// packet, so a small window cannot stall the sender).
    fn refill(&mut self, now: f64) {
        self.observe(now);
        let cap = (self.config.bandwidth * self.config.budget_window)
            .max((self.config.max_slice_packet_size() + self.config.packet_overhead) as f64);
        self.budget = match self.budget_time {
            None => cap,
            Some(t) => (self.budget + (self.now - t).max(0.0) * self.config.bandwidth).min(cap),
        };
        self.budget_time = Some(self.now);
    }
}

#[cfg(test)]
mod tests;
