//! The unreliable channels: a bounded FIFO of encoded messages on the sending side,
//! sent once each; on the receiving side a bounded FIFO, and for the sequenced kind a
//! filter that drops anything not newer than the newest message received.

use std::collections::VecDeque;

use netser::{Encoder, Result};

use super::wire::{id_relative_bits, write_id_relative, EncodedMessage, MESSAGE_HEAP_OVERHEAD};
use crate::sequence::sequence_greater_than;

/// The sending half of an unreliable channel.
#[derive(Debug)]
pub(crate) struct UnreliableSender {
    /// Sequenced: each message's id goes with it.
    sequenced: bool,
    queue: VecDeque<(u16, EncodedMessage)>,
    capacity: usize,
    next_id: u16,
    max_per_packet: usize,
    selected: usize,
}

impl UnreliableSender {
    pub fn new(sequenced: bool, capacity: usize, max_per_packet: usize) -> Self {
        Self {
            sequenced,
            queue: VecDeque::new(),
            capacity,
            next_id: 0,
            max_per_packet,
            selected: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_full(&self) -> bool {
        self.queue.len() >= self.capacity
    }

    pub fn push(&mut self, message: EncodedMessage) {
        debug_assert!(!self.is_full());
        self.queue.push_back((self.next_id, message));
        self.next_id = self.next_id.wrapping_add(1);
    }

    /// Bits of a message and its id, the id written at `position` of the packet.
    fn cost(&self, previous: Option<u16>, id: u16, message: &EncodedMessage, position: u64) -> u64 {
        let id_bits = if !self.sequenced {
            0
        } else {
            previous.map_or(16, |p| id_relative_bits(p, id))
        };
        id_bits + message.bits_at(position + id_bits)
    }

    /// Picks messages from the front, in order, while they fit (the first may use up to
    /// `hard`, the rest up to `soft`); `used` starts at `overhead` (the channel's entry
    /// header), which begins at bit `start` of the packet. Returns (count, bits).
    pub fn select(&mut self, start: u64, overhead: u64, soft: u64, hard: u64) -> (usize, u64) {
        let mut used = overhead;
        let mut previous = None;
        let mut count = 0;
        for (id, message) in &self.queue {
            let cost = self.cost(previous, *id, message, start + used);
            let limit = if count == 0 { hard } else { soft };
            if used + cost > limit || count == self.max_per_packet {
                break;
            }
            used += cost;
            previous = Some(*id);
            count += 1;
        }
        self.selected = count;
        (count, used - overhead)
    }

    /// Writes the selected messages and forgets them: they are never resent.
    pub fn write<E: Encoder>(&mut self, e: &mut E) -> Result<()> {
        let mut previous = None;
        for _ in 0..self.selected {
            let (id, message) = self
                .queue
                .pop_front()
                .expect("selected messages are queued");
            if self.sequenced {
                match previous {
                    None => e.write_bits(u64::from(id), 16)?,
                    Some(p) => write_id_relative(e, p, id)?,
                }
                previous = Some(id);
            }
            message.write(e)?;
        }
        self.selected = 0;
        Ok(())
    }

    /// Heap bytes with the queue full of messages of `max_message_bytes`.
    pub fn memory_bound(&self, max_message_bytes: usize) -> usize {
        self.capacity
            * (core::mem::size_of::<(u16, EncodedMessage)>()
                + max_message_bytes
                + MESSAGE_HEAP_OVERHEAD)
    }
}

/// Why an unreliable message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dropped {
    /// Sequenced: not newer than the newest received.
    Stale,
    /// The receive queue is full.
    QueueFull,
}

/// The receiving half of an unreliable channel.
#[derive(Debug)]
pub(crate) struct UnreliableReceiver<In> {
    sequenced: bool,
    newest: Option<u16>,
    queue: VecDeque<In>,
    capacity: usize,
}

impl<In> UnreliableReceiver<In> {
    pub fn new(sequenced: bool, capacity: usize) -> Self {
        Self {
            sequenced,
            newest: None,
            queue: VecDeque::new(),
            capacity,
        }
    }

    pub fn accept(&mut self, id: u16, message: In) -> Result<(), Dropped> {
        if self.sequenced {
            if let Some(newest) = self.newest {
                if !sequence_greater_than(id, newest) {
                    return Err(Dropped::Stale);
                }
            }
        }
        if self.queue.len() >= self.capacity {
            return Err(Dropped::QueueFull);
        }
        if self.sequenced {
            self.newest = Some(id);
        }
        self.queue.push_back(message);
        Ok(())
    }

    pub fn next(&mut self) -> Option<In> {
        self.queue.pop_front()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Heap bytes of the queue when full (not counting what messages own).
    pub fn memory_bound(&self) -> usize {
        self.capacity * core::mem::size_of::<In>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequenced_receiver_drops_anything_not_newer_across_the_wrap() {
        let mut receiver = UnreliableReceiver::new(true, 8);
        receiver.accept(u16::MAX, 1u8).unwrap();
        assert_eq!(receiver.accept(u16::MAX, 2), Err(Dropped::Stale));
        assert_eq!(receiver.accept(u16::MAX - 3, 3), Err(Dropped::Stale));
        receiver.accept(2, 4).unwrap();
        assert_eq!(receiver.accept(0, 5), Err(Dropped::Stale));
        assert_eq!(
            (receiver.next(), receiver.next(), receiver.next()),
            (Some(1), Some(4), None)
        );
    }

    #[test]
    fn a_full_receive_queue_drops_and_a_stale_drop_does_not_move_the_newest() {
        let mut receiver = UnreliableReceiver::new(true, 2);
        receiver.accept(1, 1u8).unwrap();
        receiver.accept(2, 2).unwrap();
        assert_eq!(receiver.accept(3, 3), Err(Dropped::QueueFull));
        assert_eq!(receiver.next(), Some(1));
        // 3 was dropped for room, not seen: it is still newer than the newest kept.
        receiver.accept(3, 3).unwrap();
        let mut plain = UnreliableReceiver::new(false, 2);
        plain.accept(0, 1u8).unwrap();
        plain.accept(0, 1).unwrap();
        assert_eq!(plain.accept(0, 1), Err(Dropped::QueueFull));
        assert_eq!(plain.len(), 2);
    }

    #[test]
    fn the_sender_picks_in_order_within_the_budget_and_the_per_packet_limit() {
        let mut sender = UnreliableSender::new(true, 4, 2);
        for value in 0..3u8 {
            sender.push(EncodedMessage::encode(&value).unwrap());
        }
        assert!(!sender.is_full());
        sender.push(EncodedMessage::encode(&3u8).unwrap());
        assert!(sender.is_full());
        // 16 bits of id and 8 of message, then a relative id: two per packet at most.
        let (count, bits) = sender.select(0, 0, 1000, 1000);
        assert_eq!(count, 2);
        assert!(bits > 24);
        // Room for the first only.
        assert_eq!(sender.select(0, 0, 24, 24), (1, 24));
        let mut buffer = [0u8; 16];
        let mut w = netser::WriteStream::new(&mut buffer);
        sender.write(&mut w).unwrap();
        assert_eq!(sender.len(), 3, "written once, forgotten");
    }
}
