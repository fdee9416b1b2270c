//! The reliable channels' two halves: the [`ReliableSender`] (send queue, packing, acks,
//! resends) and the receiver, one type per delivery order: [`OrderedReceiver`] (a window
//! of slots, delivered in id order) and [`UnorderedReceiver`] (the ids arrived in the
//! window, delivered as they come), behind [`ReliableReceiver`].

#[cfg(test)]
mod delay_tests;
#[cfg(test)]
mod model_tests;
mod ordered;
mod sender;
mod unordered;

pub(crate) use ordered::OrderedReceiver;
pub(crate) use sender::{PeerAcks, ReliableSender, ResendTiming};
pub(crate) use unordered::UnorderedReceiver;

use super::wire::EncodedMessage;
use crate::chunk::ChunkId;

/// Bits of a block reference on the wire: the flag and the chunk id.
pub(crate) const BLOCK_REFERENCE_BITS: u64 = 16;

/// What a reliable message carries on the wire.
#[derive(Debug)]
pub(crate) enum Payload {
    /// The message's encoded bits.
    Message(EncodedMessage),
    /// A reference to the chunk that carries the message's bytes.
    Block(ChunkId),
}

impl Payload {
    /// Bits after the message id, which ends at `position` of the packet: the block
    /// flag and the message (its size there) or the chunk id.
    fn bits_at(&self, position: u64) -> u64 {
        1 + match self {
            Self::Message(m) => m.bits_at(position + 1),
            Self::Block(_) => BLOCK_REFERENCE_BITS,
        }
    }
}

/// A message received on a reliable channel, not yet delivered.
#[derive(Debug)]
pub(crate) enum Item<In> {
    Message(In),
    Block(ChunkId),
}

/// Where a block's bytes are.
#[derive(Debug)]
pub(crate) enum BlockState<In> {
    /// Still on their way.
    Pending,
    /// Arrived but did not decode (dropped and counted).
    Failed,
    /// Arrived and decoded.
    Ready(In),
}

/// Why a reliable message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Already queued or delivered.
    Duplicate,
}

/// The receiving half of a reliable channel: ordered or unordered.
#[derive(Debug)]
pub(crate) enum ReliableReceiver<In> {
    Ordered(OrderedReceiver<In>),
    Unordered(UnorderedReceiver<In>),
}

impl<In> ReliableReceiver<In> {
    /// A receiver with a window of `capacity` ids (a power of two), delivering in order
    /// or as messages arrive.
    pub fn new(capacity: usize, ordered: bool) -> Self {
        if ordered {
            Self::Ordered(OrderedReceiver::new(capacity))
        } else {
            Self::Unordered(UnorderedReceiver::new(capacity))
        }
    }

    /// Whether a message with this id, arriving now in a packet of `in_packet` messages
    /// of this channel, could be buffered (or is a duplicate to drop). `false` means the
    /// packet must be refused: the sender went past the window, or the user has not
    /// taken enough messages.
    pub fn can_accept(&self, id: u16, in_packet: usize) -> bool {
        match self {
            Self::Ordered(r) => r.can_accept(id),
            Self::Unordered(r) => r.can_accept(id, in_packet),
        }
    }

    /// Buffers a message (after [`can_accept`](Self::can_accept) said yes).
    pub fn accept(&mut self, id: u16, item: Item<In>) -> Result<(), Refused> {
        match self {
            Self::Ordered(r) => r.accept(id, item),
            Self::Unordered(r) => r.accept(id, item),
        }
    }

    /// The next message to deliver, if it is here. A block is delivered once `take_block`
    /// finds its bytes; a block whose bytes do not decode is skipped (the caller counts it).
    pub fn next(&mut self, take_block: impl FnMut(ChunkId) -> BlockState<In>) -> Option<In> {
        match self {
            Self::Ordered(r) => r.next(take_block),
            Self::Unordered(r) => r.next(take_block),
        }
    }

    /// Heap bytes of the queues themselves when full (the heap that messages own is
    /// bounded by their type and not counted here).
    pub fn memory_bound(&self) -> usize {
        match self {
            Self::Ordered(r) => r.memory_bound(),
            Self::Unordered(r) => r.memory_bound(),
        }
    }

    /// Messages buffered, not yet delivered.
    pub fn len(&self) -> usize {
        match self {
            Self::Ordered(r) => r.len(),
            Self::Unordered(r) => r.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::reliable::sender::tests::{message, send};

    /// A block whose bytes are still on their way holds the receiver's window at its id;
    /// the sender, whose window moved on once the block's reference was acked, used to
    /// send ids the receiver could not buffer, and the receiver refused those whole
    /// packets (`ReceiveQueueFull`), the other channels' messages in them included.
    #[test]
    fn an_undelivered_block_holds_the_window_where_the_receiver_is() {
        let window = 8;
        let mut sender = ReliableSender::new(64, window, 256, 0.1, 4);
        sender.hold_window_for_blocks();
        let mut receiver: ReliableReceiver<u8> = ReliableReceiver::new(window, true);
        for value in 0..40u8 {
            if value == 2 {
                sender.push(Payload::Block(7));
            } else {
                sender.push(message(value));
            }
        }
        let (mut delivered, mut block_here) = (Vec::new(), false);
        for tick in 0..60u16 {
            if tick == 20 {
                // The ack of the block's last slice reaches the sender.
                sender.on_block_delivered(7);
            }
            let now = f64::from(tick);
            let ids = send(&mut sender, now, tick);
            for &id in &ids {
                assert!(
                    receiver.can_accept(id, ids.len()),
                    "tick {tick}: id {id} is past the receiver's window"
                );
                let item = if id == 2 {
                    Item::Block(7)
                } else {
                    Item::Message(id as u8)
                };
                receiver.accept(id, item).unwrap();
            }
            sender.on_packet_acked(tick);
            while let Some(value) = receiver.next(|_| {
                if block_here {
                    BlockState::Ready(2)
                } else {
                    BlockState::Pending
                }
            }) {
                delivered.push(value);
            }
            if tick == 19 {
                assert_eq!(delivered, [0, 1], "held at the block");
                assert!(sender.len() > 0, "and messages wait to be sent");
                // The block's bytes reach the receiver, which takes its messages.
                block_here = true;
                while let Some(value) = receiver.next(|_| BlockState::Ready(2)) {
                    delivered.push(value);
                }
            }
        }
        assert_eq!(delivered, (0..40).collect::<Vec<u8>>());
        assert_eq!(sender.len(), 0);
    }
}
