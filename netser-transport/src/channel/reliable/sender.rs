//! The sending half of a reliable channel: the send queue, packing by the packet's bit
//! budget within the receiver's window, the packet -> message ids map that turns packet
//! acks into message acks, and the resend timing.

use std::collections::VecDeque;

use netser::{Encoder, Result};

use super::Payload;
use crate::channel::wire::{id_relative_bits, write_id_relative, MESSAGE_HEAP_OVERHEAD};
use crate::chunk::ChunkId;
use crate::endpoint::Stats;
use crate::sequence::{
    sequence_greater_than, sequence_less_than, SequenceBuffer, MAX_SEQUENCE_BUFFER_CAPACITY,
};

/// Stop packing once fewer bits than this are left (no message is that small but an
/// empty one, and scanning the whole window for it costs more than it saves).
const GIVE_UP_BITS: u64 = 4;

/// How far short of the time a message is found lost it may already go: the ack
/// delay on the wire is in tenths of a millisecond, rounded down, so an RTT sample taken
/// less it can be over by up to that, and the times compared are differences of frame
/// times. Without it a loss that the peer's packet shows at one frame waited for the
/// next.
const TIME_EPSILON: f64 = 1e-4;

/// The least loss delay, as QUIC's `kGranularity`: on a path of a fraction of a
/// millisecond, a peer's packet that left before ours was taken in (the peer polls once a
/// frame) would otherwise show every message missing, and each poll would resend it.
const MIN_LOSS_DELAY: f64 = 0.001;

#[derive(Debug)]
struct SendEntry {
    payload: Payload,
    /// When it was last included in a packet; `-inf` before the first time.
    last_sent: f64,
    /// The packet that last carried it.
    last_packet: u16,
    /// It was just resent and goes once more, in the next packet that leaves after
    /// that tick (see [`ReliableSender::select`]).
    copy_owed: bool,
}

/// What the peer's packets told of ours: the newest acked, and the newest ack header
/// and when it arrived. Every reliable sender of a connection folds the same packets
/// into it, so a sender that was idle (nothing queued, skipped by the connection) takes
/// the connection's copy when it is given a message (see
/// [`ReliableSender::catch_up`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PeerAcks {
    /// The newest packet the peer acked (any packet of the connection).
    largest_acked: Option<u16>,
    /// When the newest packet from the peer arrived (`-inf`: none yet, or nobody
    /// reports them), and the ack header it carried (see
    /// [`on_ack_header`](Self::on_ack_header)).
    fresh_ack_time: f64,
    newest_ack_header: Option<u16>,
}

impl Default for PeerAcks {
    fn default() -> Self {
        Self {
            largest_acked: None,
            fresh_ack_time: f64::NEG_INFINITY,
            newest_ack_header: None,
        }
    }
}

impl PeerAcks {
    /// Our packet `packet_sequence` was acked.
    pub fn on_packet_acked(&mut self, packet_sequence: u16) {
        if self
            .largest_acked
            .is_none_or(|largest| sequence_greater_than(packet_sequence, largest))
        {
            self.largest_acked = Some(packet_sequence);
        }
    }

    /// A packet from the peer arrived at `now` with `ack` in its header; one whose ack
    /// header is not older than any seen before is the peer's latest word.
    pub fn on_ack_header(&mut self, now: f64, ack: u16) {
        if self
            .newest_ack_header
            .is_none_or(|newest| !sequence_less_than(ack, newest))
        {
            self.newest_ack_header = Some(ack);
            self.fresh_ack_time = now;
        }
    }
}

/// The endpoint's estimates a reliable sender times its resends by (see
/// [`ReliableSender::set_rtt_stats`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ResendTiming {
    rto: f64,
    min_rtt: f64,
}

impl ResendTiming {
    pub fn from_stats(stats: &Stats) -> Self {
        Self {
            rto: stats.rto,
            min_rtt: stats.min_rtt,
        }
    }
}

/// The sending half of a reliable channel.
#[derive(Debug)]
pub(crate) struct ReliableSender {
    queue: SequenceBuffer<SendEntry>,
    /// Packet sequence -> the message ids that packet carried.
    sent_packets: SequenceBuffer<Vec<u16>>,
    /// Id lists of packets acked or forgotten, reused for the next packets so that a
    /// packet sent costs no allocation. With those in `sent_packets`, at most one more
    /// list than `sent_packets` holds ever exists.
    spare_ids: Vec<Vec<u16>>,
    next_id: u16,
    oldest_unacked: u16,
    resend_delay: f64,
    /// The configured resend delay, before the RTT is taken into account.
    min_resend_delay: f64,
    /// The peer's acks and ack headers (see [`PeerAcks`]).
    peer: PeerAcks,
    /// How long after it was sent a message not acked is taken as lost once the peer's
    /// packets show it missing (see [`set_rtt_stats`](Self::set_rtt_stats)); `None`
    /// until the RTT is known, and when the resends follow the timer alone.
    loss_delay: Option<f64>,
    /// Ids at or past `oldest_unacked + window` are never sent: the receiver could not
    /// buffer them.
    window: u16,
    /// Blocks whose bytes the peer may not have yet, oldest first: their message id and
    /// chunk. The receiver's window cannot pass a block before its bytes arrive, so the
    /// sender's window starts at the oldest of them even after its reference is acked
    /// (see [`on_block_delivered`](Self::on_block_delivered)). Their ids lie between
    /// the oldest and the newest queued id, so at most `window` plus the send queue's
    /// capacity of them.
    undelivered_blocks: VecDeque<(u16, ChunkId)>,
    /// Whoever drives the sender reports delivered blocks, so they may hold the window
    /// (see [`hold_window_for_blocks`](Self::hold_window_for_blocks)).
    holds_for_blocks: bool,
    max_per_packet: usize,
    /// The ids picked by the last [`select`](Self::select).
    selected: Vec<u16>,
}

/// What [`ReliableSender::select`] picked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Selection {
    pub count: usize,
    pub bits: u64,
    pub resent: usize,
}

impl ReliableSender {
    pub fn new(
        send_queue_size: usize,
        receive_queue_size: usize,
        sent_packets: usize,
        resend_delay: f64,
        max_per_packet: usize,
    ) -> Self {
        Self {
            queue: SequenceBuffer::new(send_queue_size),
            sent_packets: SequenceBuffer::new(sent_packets),
            spare_ids: Vec::new(),
            next_id: 0,
            oldest_unacked: 0,
            resend_delay,
            min_resend_delay: resend_delay,
            peer: PeerAcks::default(),
            loss_delay: None,
            window: send_queue_size
                .min(receive_queue_size)
                .min(MAX_SEQUENCE_BUFFER_CAPACITY) as u16,
            max_per_packet,
            undelivered_blocks: VecDeque::new(),
            holds_for_blocks: false,
            selected: Vec::with_capacity(max_per_packet),
        }
    }

    /// Resends wait at least `rtt_delay` too (never less than the configured delay).
    /// The previous timing, kept for the delay tests' comparison.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn set_rtt_delay(&mut self, rtt_delay: f64) {
        self.resend_delay = self.min_resend_delay.max(rtt_delay);
    }

    /// Resend timing from the endpoint's estimates (`None` until the first ack): a
    /// message is due again once the path's smallest round trip ([`Stats::min_rtt`], at
    /// least [`MIN_LOSS_DELAY`]) has passed since it was sent and the peer's packets show
    /// it missing (a packet
    /// sent after the one that carried it was acked, or the peer's newest packet, see
    /// [`on_ack_header`](Self::on_ack_header)), and in any case after the
    /// retransmission timeout ([`Stats::rto`]), which covers the last packets before a
    /// pause that nothing acks after. Until the first ack, the configured delay.
    ///
    /// The smallest round trip, not the smoothed one: the peer's packet that arrives a
    /// round trip at the path's fastest after the message left was sent when the
    /// message could have reached it. The smoothed RTT is larger by the frames each
    /// side waits before it takes a datagram in, and waiting for it cost a frame on
    /// most losses (a message slower than the fastest path is resent for nothing, as a
    /// fixed resend delay of one round trip would).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn set_rtt_stats(&mut self, stats: Option<&Stats>) {
        self.set_resend_timing(stats.map(ResendTiming::from_stats));
    }

    /// [`set_rtt_stats`](Self::set_rtt_stats) from the estimates it takes.
    pub fn set_resend_timing(&mut self, timing: Option<ResendTiming>) {
        match timing {
            Some(timing) => {
                self.resend_delay = timing.rto;
                self.loss_delay = Some(timing.min_rtt.max(MIN_LOSS_DELAY));
            }
            None => {
                self.resend_delay = self.min_resend_delay;
                self.loss_delay = None;
            }
        }
    }

    /// A packet from the peer arrived at `now` with `ack` in its header (the newest of
    /// our packets it had received when it sent it), its acks already reported. A packet
    /// whose ack header is not older than any seen before is the peer's latest word: a
    /// message still unacked that was last sent at least the loss delay before `now`
    /// had not reached the peer when it sent that packet, so it is lost (or later than
    /// a round trip), one send interval sooner than the ack of a later packet tells.
    pub fn on_ack_header(&mut self, now: f64, ack: u16) {
        self.peer.on_ack_header(now, ack);
    }

    /// Takes `peer` (the connection's fold of every ack and ack header) and `timing`
    /// (the estimates last given to every sender) for its own: a sender with nothing
    /// queued may be skipped by the connection, and catches up here before it is given
    /// a message. Nothing reads either while the queue is empty, and what the skipped
    /// acks would have removed (ids of packets whose messages were all acked) the
    /// sent-packet map evicts as the sequence moves on.
    pub fn catch_up(&mut self, peer: &PeerAcks, timing: Option<ResendTiming>) {
        debug_assert_eq!(self.len(), 0, "only an idle sender is skipped");
        self.peer = *peer;
        self.set_resend_timing(timing);
    }

    /// Whether a block may still hold the window (see
    /// [`on_block_delivered`](Self::on_block_delivered)).
    pub fn holds_blocks(&self) -> bool {
        !self.undelivered_blocks.is_empty()
    }

    /// When the message is due again (`-inf`: never sent).
    fn due_time(&self, entry: &SendEntry) -> f64 {
        let timer = entry.last_sent + self.resend_delay;
        let Some(delay) = self.loss_delay else {
            return timer;
        };
        let lost_at = entry.last_sent + delay - TIME_EPSILON;
        let later_acked = self
            .peer
            .largest_acked
            .is_some_and(|largest| sequence_greater_than(largest, entry.last_packet));
        if later_acked || self.peer.fresh_ack_time >= lost_at {
            timer.min(lost_at)
        } else {
            timer
        }
    }

    /// Messages queued and not yet acked.
    pub fn len(&self) -> usize {
        usize::from(self.next_id.wrapping_sub(self.oldest_unacked))
    }

    pub fn is_full(&self) -> bool {
        self.len() >= self.queue.capacity()
    }

    /// Queues a message; returns its id. The caller checks [`is_full`](Self::is_full).
    pub fn push(&mut self, payload: Payload) -> u16 {
        debug_assert!(!self.is_full());
        let id = self.next_id;
        if let (Payload::Block(chunk), true) = (&payload, self.holds_for_blocks) {
            self.undelivered_blocks.push_back((id, *chunk));
        }
        let inserted = self.queue.insert(
            id,
            SendEntry {
                payload,
                last_sent: f64::NEG_INFINITY,
                last_packet: 0,
                copy_owed: false,
            },
        );
        debug_assert!(inserted.is_ok());
        self.next_id = id.wrapping_add(1);
        id
    }

    /// From now on a block holds the window at its id until
    /// [`on_block_delivered`](Self::on_block_delivered) reports its chunk complete; the
    /// caller promises to (the connection does). Without it, the window moves on once a
    /// block's reference is acked, and may run past a receiver still waiting for the
    /// block's bytes.
    pub fn hold_window_for_blocks(&mut self) {
        self.holds_for_blocks = true;
    }

    /// The chunk of a block is all with the peer (the chunk sender's last completed
    /// chunk): blocks up to it no longer hold the window back. Chunks complete in the
    /// order they were sent, so every block with an older chunk is done too; a chunk of
    /// another channel releases this channel's older blocks the same way.
    pub fn on_block_delivered(&mut self, chunk: ChunkId) {
        while self
            .undelivered_blocks
            .front()
            .is_some_and(|&(_, c)| !sequence_greater_than(c, chunk))
        {
            self.undelivered_blocks.pop_front();
        }
    }

    /// The ids that may be sent: from the oldest unacked, up to `window` past the oldest
    /// of it and the undelivered blocks (the receiver's window starts there at the
    /// latest). Returns the first and how many.
    fn sendable(&self) -> (u16, usize) {
        let start = self.oldest_unacked;
        // A block not acked yet is at or after `start` and holds nothing back.
        let held = match self.undelivered_blocks.front() {
            Some(&(id, _)) if sequence_less_than(id, start) => usize::from(start.wrapping_sub(id)),
            _ => 0,
        };
        let room = usize::from(self.window).saturating_sub(held);
        (start, self.len().min(room))
    }

    /// Ids in the window, oldest first.
    fn window_ids(&self) -> impl Iterator<Item = u16> {
        let (start, n) = self.sendable();
        (0..n as u16).map(move |i| start.wrapping_add(i))
    }

    /// Whether a message in the window is due at `now` (never sent, or its resend delay
    /// has passed).
    pub fn has_due(&self, now: f64) -> bool {
        self.window_ids().any(|id| {
            self.queue
                .get(id)
                .is_some_and(|entry| self.due_time(entry) <= now)
        })
    }

    /// When the next message is due, if any is waiting.
    pub fn next_due_time(&self) -> Option<f64> {
        self.window_ids()
            .filter_map(|id| self.queue.get(id))
            .map(|entry| self.due_time(entry))
            .min_by(f64::total_cmp)
    }

    /// Picks, oldest first, the messages due at `now` that fit (and the second copies
    /// of messages resent before `now`, which never make a packet go by themselves): `used + cost <= soft`,
    /// except that the first message may use up to `hard`. `used` starts at `overhead`
    /// (the channel's entry header), which begins at bit `entry_start` of the packet (a message
    /// with alignment is sized where it lands). Returns what was picked (nothing: count 0).
    pub fn select(
        &mut self,
        now: f64,
        entry_start: u64,
        overhead: u64,
        soft: u64,
        hard: u64,
    ) -> Selection {
        self.selected.clear();
        let mut used = overhead;
        let mut previous: Option<u16> = None;
        let mut resent = 0;
        let (start, n) = self.sendable();
        for i in 0..n as u16 {
            let id = start.wrapping_add(i);
            let Some(entry) = self.queue.get(id) else {
                continue;
            };
            let copy = entry.copy_owed && entry.last_sent < now;
            if !copy && self.due_time(entry) > now {
                continue;
            }
            let id_bits = previous.map_or(16, |p| id_relative_bits(p, id));
            let cost = id_bits + entry.payload.bits_at(entry_start + used + id_bits);
            let limit = if previous.is_none() { hard } else { soft };
            if used + cost > limit {
                continue;
            }
            used += cost;
            if entry.last_sent != f64::NEG_INFINITY {
                resent += 1;
            }
            self.selected.push(id);
            previous = Some(id);
            if self.selected.len() == self.max_per_packet
                || soft.saturating_sub(used) < GIVE_UP_BITS
            {
                break;
            }
        }
        Selection {
            count: self.selected.len(),
            bits: used - overhead,
            resent,
        }
    }

    /// Writes the selected messages (ids and payloads; the count is the caller's), marks
    /// them sent at `now` and remembers them as carried by `packet_sequence`.
    pub fn write<E: Encoder>(&mut self, e: &mut E, now: f64, packet_sequence: u16) -> Result<()> {
        let mut previous: Option<u16> = None;
        for &id in &self.selected {
            match previous {
                None => e.write_bits(u64::from(id), 16)?,
                Some(p) => write_id_relative(e, p, id)?,
            }
            previous = Some(id);
            let entry = self.queue.get_mut(id).expect("selected ids are queued");
            match &entry.payload {
                Payload::Message(m) => {
                    e.write_bool(false)?;
                    m.write(e)?;
                }
                Payload::Block(chunk) => {
                    e.write_bool(true)?;
                    e.write_bits(u64::from(*chunk), 16)?;
                }
            }
            let entry = self.queue.get_mut(id).expect("selected ids are queued");
            // A resend goes in two packets: if it is lost as well, in-order delivery
            // holds everything behind it until the next resend, a round trip later.
            entry.copy_owed = entry.last_sent.is_finite() && !entry.copy_owed;
            entry.last_sent = now;
            entry.last_packet = packet_sequence;
        }
        let mut ids = self.spare_ids.pop().unwrap_or_default();
        ids.clone_from(&self.selected);
        let spare = &mut self.spare_ids;
        let _ = self
            .sent_packets
            .insert_evicting(packet_sequence, ids, |_, old| spare.push(old));
        Ok(())
    }

    /// A packet was acked: its messages leave the send queue. Returns how many were
    /// acked now (not before).
    pub fn on_packet_acked(&mut self, packet_sequence: u16) -> usize {
        self.peer.on_packet_acked(packet_sequence);
        let Some(ids) = self.sent_packets.remove(packet_sequence) else {
            return 0;
        };
        let mut acked = 0;
        for &id in &ids {
            if self.queue.remove(id).is_some() {
                acked += 1;
            }
        }
        self.spare_ids.push(ids);
        while self.oldest_unacked != self.next_id && !self.queue.contains(self.oldest_unacked) {
            self.oldest_unacked = self.oldest_unacked.wrapping_add(1);
        }
        acked
    }

    /// Heap bytes with the send queue full of messages of `max_message_bytes` and every
    /// sent packet remembered with the most messages (the id lists, in use or spare, and
    /// the list of spares).
    pub fn memory_bound(&self, max_message_bytes: usize) -> usize {
        let lists = self.sent_packets.capacity() + 1;
        SequenceBuffer::<SendEntry>::heap_bytes_for(self.queue.capacity())
            + self.queue.capacity() * (max_message_bytes + MESSAGE_HEAP_OVERHEAD)
            + SequenceBuffer::<Vec<u16>>::heap_bytes_for(self.sent_packets.capacity())
            + lists * self.max_per_packet * 2
            + lists * core::mem::size_of::<Vec<u16>>()
            + (usize::from(self.window) + self.queue.capacity())
                * core::mem::size_of::<(u16, ChunkId)>()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::channel::wire::EncodedMessage;

    pub(crate) fn message(value: u8) -> Payload {
        Payload::Message(EncodedMessage::encode(&value).unwrap())
    }

    /// Sends what is due at `now` in packet `sequence`; the ids sent.
    pub(crate) fn send(sender: &mut ReliableSender, now: f64, sequence: u16) -> Vec<u16> {
        sender.select(now, 0, 0, 10_000, 10_000);
        let mut buffer = [0u8; 256];
        let mut w = netser::WriteStream::new(&mut buffer);
        sender.write(&mut w, now, sequence).unwrap();
        sender.selected.clone()
    }

    #[test]
    fn resends_follow_the_configured_delay_then_the_rto_and_later_acks() {
        let mut sender = ReliableSender::new(64, 64, 256, 0.1, 8);
        sender.push(message(1));
        assert_eq!(send(&mut sender, 0.0, 0), [0]);
        // No RTT yet: the configured delay.
        assert_eq!(sender.next_due_time(), Some(0.1));
        let stats = Stats {
            min_rtt: 0.08,
            rto: 0.3,
            ..Stats::default()
        };
        sender.set_rtt_stats(Some(&stats));
        assert_eq!(
            sender.next_due_time(),
            Some(0.3),
            "the RTO, nothing acked after"
        );
        sender.push(message(2));
        assert_eq!(send(&mut sender, 0.05, 1), [1]);
        // Packet 1 acked, 0 not: 0 is lost the path's smallest round trip after it left
        // (less the rounding allowance), 1's message is done.
        assert_eq!(sender.on_packet_acked(1), 1);
        assert_eq!(sender.next_due_time(), Some(0.08 - TIME_EPSILON));
        assert!(!sender.has_due(0.0798));
        assert!(sender.has_due(0.08));
        assert_eq!(send(&mut sender, 0.1, 2), [0]);
        // Resent in packet 2, newer than anything acked: the RTO again.
        assert_eq!(sender.next_due_time(), Some(0.4));
        sender.set_rtt_stats(None);
        assert_eq!(
            sender.next_due_time(),
            Some(0.2),
            "back to the configured delay"
        );
    }

    /// The peer's packet that arrives a smoothed RTT after a message left and does not
    /// ack it says it is lost, a send interval before the ack of a later packet would;
    /// an older header (a packet reordered behind a newer one) says nothing.
    #[test]
    fn a_fresh_ack_header_that_misses_a_message_makes_it_due() {
        let mut sender = ReliableSender::new(64, 64, 256, 0.1, 8);
        let stats = Stats {
            min_rtt: 0.1,
            rto: 0.3,
            ..Stats::default()
        };
        sender.set_rtt_stats(Some(&stats));
        sender.push(message(1));
        assert_eq!(send(&mut sender, 1.0, 10), [0]);
        assert_eq!(
            sender.next_due_time(),
            Some(1.3),
            "the RTO, no word from the peer"
        );
        // The peer's newest packet, sent before the message could reach it.
        sender.on_ack_header(1.05, 9);
        assert_eq!(sender.next_due_time(), Some(1.3));
        // A smoothed RTT after: the peer had the time to receive it, and did not.
        sender.on_ack_header(1.1, 9);
        assert!(sender.has_due(1.1));
        assert_eq!(send(&mut sender, 1.1, 11), [0]);
        // A reordered older header later on is not the peer's latest word.
        sender.on_ack_header(1.25, 8);
        assert!(!sender.has_due(1.39), "the RTO after the resend, no sooner");
        assert!(sender.has_due(1.41));
    }

    /// The peer reports its ack delay in tenths of a millisecond, rounded down, so the
    /// smallest round trip can be over by up to that: the header that arrives one round
    /// trip after the message left still shows it lost in that frame, not the next.
    #[test]
    fn a_round_trip_over_by_the_ack_delays_rounding_still_counts_at_its_frame() {
        let mut sender = ReliableSender::new(64, 64, 256, 0.1, 8);
        let stats = Stats {
            min_rtt: 0.1 + 0.000_07,
            rto: 0.3,
            ..Stats::default()
        };
        sender.set_rtt_stats(Some(&stats));
        sender.push(message(1));
        let frame = 1.0 / 60.0;
        assert_eq!(send(&mut sender, 10.0 * frame, 10), [0]);
        sender.on_ack_header(16.0 * frame, 9);
        assert!(sender.has_due(16.0 * frame));
    }

    /// A resend goes in two packets: the second copy rides in the next packet that
    /// leaves after the resend's tick, but never makes one go by itself.
    #[test]
    fn a_resend_rides_again_in_the_next_packet() {
        let mut sender = ReliableSender::new(64, 64, 256, 0.1, 8);
        sender.push(message(0));
        assert_eq!(send(&mut sender, 0.0, 0), [0]);
        assert_eq!(send(&mut sender, 0.1, 1), [0], "resent");
        assert_eq!(
            send(&mut sender, 0.1, 2),
            [] as [u16; 0],
            "not twice in a tick"
        );
        assert!(!sender.has_due(0.12), "the copy makes no packet go");
        assert_eq!(sender.next_due_time(), Some(0.2));
        sender.push(message(1));
        assert_eq!(send(&mut sender, 0.12, 3), [0, 1], "the copy rides along");
        // Once: the copy is not copied.
        sender.push(message(2));
        assert_eq!(send(&mut sender, 0.14, 4), [2]);
        // Acked through either packet, it is done.
        assert_eq!(sender.on_packet_acked(1), 1);
        sender.push(message(3));
        assert_eq!(send(&mut sender, 0.30, 5), [1, 2, 3], "1 and 2 resent");
        assert_eq!(sender.on_packet_acked(5), 3);
        sender.push(message(4));
        assert_eq!(send(&mut sender, 0.32, 6), [4], "acked: no copy owed");
    }
}
