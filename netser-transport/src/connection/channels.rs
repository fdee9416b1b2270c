//! A connection's channels: each one's settings, sender, receiver, counters and packet
//! room together, one value per channel.

use netser::{Encoder, NetSerialize};

use super::packet::{self, Incoming, IncomingItem};
use crate::channel::reliable::{Item, Payload, ResendTiming};
use crate::channel::unreliable::Dropped;
use crate::channel::wire::EncodedMessage;
use crate::channel::{
    ChannelConfig, ChannelCounters, ChannelKind, ReliableReceiver, ReliableSender,
    UnreliableReceiver, UnreliableSender,
};
use crate::chunk::ChunkId;

#[derive(Debug)]
pub(crate) enum Sender {
    Reliable(ReliableSender),
    Unreliable(UnreliableSender),
}

#[derive(Debug)]
pub(crate) enum Receiver<In> {
    Reliable(ReliableReceiver<In>),
    Unreliable(UnreliableReceiver<In>),
}

/// One channel of a connection.
#[derive(Debug)]
pub(crate) struct Channel<In> {
    pub config: ChannelConfig,
    pub sender: Sender,
    pub receiver: Receiver<In>,
    pub counters: ChannelCounters,
    /// The largest message that fits one packet, in bits.
    pub max_message_bits: u64,
}

impl<In: NetSerialize> Channel<In> {
    /// Channel `config` of `channels`, in packets of `payload_bits`, its reliable sender
    /// remembering `sent_packets` packets.
    pub fn new(
        config: &ChannelConfig,
        channels: usize,
        payload_bits: u64,
        sent_packets: usize,
    ) -> Self {
        let (sender, receiver) = match config.kind {
            ChannelKind::ReliableOrdered { resend_delay }
            | ChannelKind::ReliableUnordered { resend_delay } => {
                let mut sender = ReliableSender::new(
                    config.send_queue_size,
                    config.receive_queue_size,
                    sent_packets,
                    resend_delay,
                    config.max_messages_per_packet,
                );
                // A block holds the window until its bytes are all with the peer, so the
                // window never runs past a receiver waiting for them.
                sender.hold_window_for_blocks();
                let ordered = matches!(config.kind, ChannelKind::ReliableOrdered { .. });
                (
                    Sender::Reliable(sender),
                    Receiver::Reliable(ReliableReceiver::new(config.receive_queue_size, ordered)),
                )
            }
            ChannelKind::UnreliableSequenced | ChannelKind::Unreliable => {
                let sequenced = config.kind == ChannelKind::UnreliableSequenced;
                (
                    Sender::Unreliable(UnreliableSender::new(
                        sequenced,
                        config.send_queue_size,
                        config.max_messages_per_packet,
                    )),
                    Receiver::Unreliable(UnreliableReceiver::new(
                        sequenced,
                        config.receive_queue_size,
                    )),
                )
            }
        };
        Self {
            config: config.clone(),
            sender,
            receiver,
            counters: ChannelCounters::default(),
            max_message_bits: packet::max_message_bits(payload_bits, channels, config),
        }
    }

    pub fn is_full(&self) -> bool {
        match &self.sender {
            Sender::Reliable(s) => s.is_full(),
            Sender::Unreliable(s) => s.is_full(),
        }
    }

    /// Messages not yet acked (reliable) or not yet sent (unreliable).
    pub fn queued(&self) -> usize {
        match &self.sender {
            Sender::Reliable(s) => s.len(),
            Sender::Unreliable(s) => s.len(),
        }
    }

    /// Messages received and not yet taken.
    pub fn received(&self) -> usize {
        match &self.receiver {
            Receiver::Reliable(r) => r.len(),
            Receiver::Unreliable(r) => r.len(),
        }
    }

    /// Whether a message is due in a packet built at `now`.
    pub fn has_due(&self, now: f64) -> bool {
        match &self.sender {
            Sender::Reliable(s) => s.has_due(now),
            Sender::Unreliable(s) => s.len() > 0,
        }
    }

    /// When a message is next due, not before `time` nor before the bandwidth budget
    /// allows (`budget`).
    pub fn next_due_time(&self, time: f64, budget: f64) -> Option<f64> {
        match &self.sender {
            Sender::Reliable(s) => s.next_due_time().map(|t| t.max(time).max(budget)),
            Sender::Unreliable(s) => (s.len() > 0).then_some(budget),
        }
    }

    /// Picks the messages of the next packet (see the senders' `select`); counts
    /// resends. Returns how many and their bits.
    pub fn select(
        &mut self,
        now: f64,
        start: u64,
        overhead: u64,
        share: u64,
        remaining: u64,
    ) -> (usize, u64) {
        match &mut self.sender {
            Sender::Reliable(s) => {
                let selection = s.select(now, start, overhead, share, remaining);
                self.counters.messages_resent += selection.resent as u64;
                (selection.count, selection.bits)
            }
            Sender::Unreliable(s) => s.select(start, overhead, share, remaining),
        }
    }

    /// Writes the messages selected, in packet `packet_sequence`.
    pub fn write<E: Encoder>(
        &mut self,
        e: &mut E,
        now: f64,
        packet_sequence: u16,
    ) -> netser::Result<()> {
        match &mut self.sender {
            Sender::Reliable(sender) => sender.write(e, now, packet_sequence),
            Sender::Unreliable(sender) => sender.write(e),
        }
    }

    /// Queues `encoded`, which fits a packet.
    pub fn push_message(&mut self, encoded: EncodedMessage) {
        match &mut self.sender {
            Sender::Reliable(s) => {
                s.push(Payload::Message(encoded));
            }
            Sender::Unreliable(s) => s.push(encoded),
        }
    }

    /// Whether a message of `encoded` goes on this channel as a block.
    pub fn is_block(&self, encoded: &EncodedMessage) -> bool {
        encoded.max_bits() > self.max_message_bits
    }

    /// Our packet `sequence` was acked: its reliable messages are.
    pub fn on_packet_acked(&mut self, sequence: u16) {
        if let Sender::Reliable(sender) = &mut self.sender {
            self.counters.messages_acked += sender.on_packet_acked(sequence) as u64;
        }
    }

    /// A packet of the peer's came in whose newest ack is `ack`: the reliable sender
    /// learns which of its messages the peer missed.
    pub fn on_ack_header(&mut self, now: f64, ack: u16) {
        if let Sender::Reliable(sender) = &mut self.sender {
            sender.on_ack_header(now, ack);
        }
    }

    /// The endpoint's estimates (`None` before the first ack), and the block the peer
    /// now holds whole, if any. Returns whether a block may still hold the window.
    pub fn update(&mut self, timing: Option<ResendTiming>, completed: Option<ChunkId>) -> bool {
        let Sender::Reliable(sender) = &mut self.sender else {
            return false;
        };
        sender.set_resend_timing(timing);
        if let Some(chunk) = completed {
            sender.on_block_delivered(chunk);
        }
        sender.holds_blocks()
    }

    /// Hands a parsed message to the receiver, counting what it drops. Returns whether
    /// one of the channel's receive counters counted it (`messages_received` or a drop).
    pub fn accept(&mut self, id: u16, item: IncomingItem<In>) -> bool {
        let counters = &mut self.counters;
        match &mut self.receiver {
            Receiver::Reliable(receiver) => {
                let item = match item {
                    IncomingItem::Message(message) => Item::Message(message),
                    IncomingItem::Block(chunk) => Item::Block(chunk),
                };
                match receiver.accept(id, item) {
                    Ok(()) => counters.messages_received += 1,
                    Err(_) => counters.duplicates_dropped += 1,
                }
                true
            }
            Receiver::Unreliable(receiver) => {
                let IncomingItem::Message(message) = item else {
                    return false; // unreliable channels carry no blocks
                };
                match receiver.accept(id, message) {
                    Ok(()) => counters.messages_received += 1,
                    Err(Dropped::Stale) => counters.stale_dropped += 1,
                    Err(Dropped::QueueFull) => counters.receive_queue_full_dropped += 1,
                }
                true
            }
        }
    }

    /// Whether the receiver can take message `id`, one of `in_packet` in a packet.
    pub fn can_accept(&self, id: u16, in_packet: usize) -> bool {
        match &self.receiver {
            Receiver::Reliable(receiver) => receiver.can_accept(id, in_packet),
            Receiver::Unreliable(_) => true,
        }
    }

    /// The most heap bytes the channel holds: its send queue full of the largest
    /// messages that fit a packet (and its sent-packet map), its receive queue full.
    pub fn memory_bound(&self) -> usize {
        let max_message_bytes = self.max_message_bits.div_ceil(8) as usize;
        let sender = match &self.sender {
            Sender::Reliable(s) => s.memory_bound(max_message_bytes),
            Sender::Unreliable(s) => s.memory_bound(max_message_bytes),
        };
        let receiver = match &self.receiver {
            Receiver::Reliable(r) => r.memory_bound(),
            Receiver::Unreliable(r) => r.memory_bound(),
        };
        sender.saturating_add(receiver)
    }

    /// Scratch bytes of the messages one packet of this channel parses into.
    pub fn incoming_bytes(&self) -> usize {
        self.config
            .max_messages_per_packet
            .saturating_mul(core::mem::size_of::<Incoming<In>>())
    }
}
