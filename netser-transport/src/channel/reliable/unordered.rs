//! The receiving half of a reliable-unordered channel: which ids of the window have
//! arrived (to drop duplicates), and the messages arrived and not yet taken.

use std::collections::VecDeque;

use super::{BlockState, Item, Refused};
use crate::chunk::ChunkId;
use crate::sequence::sequence_less_than;

/// Messages delivered as they arrive; ids in `base..base + capacity` remembered.
#[derive(Debug)]
pub(crate) struct UnorderedReceiver<In> {
    /// `arrived[id & mask]`: message `id` of the window has arrived.
    arrived: Box<[bool]>,
    mask: usize,
    /// The oldest id not yet arrived.
    base: u16,
    /// Messages arrived and not yet taken (blocks wait here for their bytes).
    ready: VecDeque<Item<In>>,
}

impl<In> UnorderedReceiver<In> {
    /// A window of `capacity` ids, a power of two; as many messages wait at most.
    pub fn new(capacity: usize) -> Self {
        debug_assert!(capacity.is_power_of_two());
        Self {
            arrived: vec![false; capacity].into_boxed_slice(),
            mask: capacity - 1,
            base: 0,
            ready: VecDeque::new(),
        }
    }

    fn capacity(&self) -> usize {
        self.arrived.len()
    }

    /// Whether a message with this id fits the window and, with the `in_packet` messages
    /// of its packet, the queue (or is a duplicate to drop).
    pub fn can_accept(&self, id: u16, in_packet: usize) -> bool {
        if sequence_less_than(id, self.base) {
            return true;
        }
        usize::from(id.wrapping_sub(self.base)) < self.capacity()
            && self.ready.len() + in_packet <= self.capacity()
    }

    /// Queues a message (after [`can_accept`](Self::can_accept) said yes).
    pub fn accept(&mut self, id: u16, item: Item<In>) -> Result<(), Refused> {
        if sequence_less_than(id, self.base) {
            return Err(Refused::Duplicate);
        }
        let index = usize::from(id) & self.mask;
        if self.arrived[index] {
            return Err(Refused::Duplicate);
        }
        self.arrived[index] = true;
        self.ready.push_back(item);
        while self.arrived[usize::from(self.base) & self.mask] {
            self.arrived[usize::from(self.base) & self.mask] = false;
            self.base = self.base.wrapping_add(1);
        }
        Ok(())
    }

    /// The oldest message waiting, else the oldest block whose bytes `take_block` finds;
    /// a block whose bytes do not decode is dropped (the caller counts it).
    pub fn next(&mut self, mut take_block: impl FnMut(ChunkId) -> BlockState<In>) -> Option<In> {
        if self.ready.is_empty() {
            return None;
        }
        let position = self
            .ready
            .iter()
            .position(|item| matches!(item, Item::Message(_)));
        if let Some(position) = position {
            if let Some(Item::Message(message)) = self.ready.remove(position) {
                return Some(message);
            }
        }
        let mut position = 0;
        while let Some(item) = self.ready.get(position) {
            let Item::Block(chunk) = item else {
                position += 1;
                continue;
            };
            match take_block(*chunk) {
                BlockState::Ready(message) => {
                    self.ready.remove(position);
                    return Some(message);
                }
                BlockState::Failed => {
                    self.ready.remove(position);
                }
                BlockState::Pending => position += 1,
            }
        }
        None
    }

    /// Heap bytes of the window and the queue when full (what messages own is bounded by
    /// their type).
    pub fn memory_bound(&self) -> usize {
        self.capacity() * (1 + core::mem::size_of::<Item<In>>())
    }

    /// Messages waiting, not yet taken.
    pub fn len(&self) -> usize {
        self.ready.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_as_messages_arrive_and_drops_duplicates() {
        let mut receiver = UnorderedReceiver::new(8);
        for id in [2u16, 0, 5] {
            receiver.accept(id, Item::Message(id)).unwrap();
        }
        assert_eq!(
            receiver.accept(5, Item::Message(5)),
            Err(Refused::Duplicate)
        );
        assert_eq!(receiver.base, 1, "0 arrived, 1 not yet");
        let mut got = Vec::new();
        while let Some(m) = receiver.next(|_| BlockState::Pending) {
            got.push(m);
        }
        assert_eq!(got, [2, 0, 5]);
        // Still remembered after delivery: a late copy is a duplicate.
        assert_eq!(
            receiver.accept(2, Item::Message(2)),
            Err(Refused::Duplicate)
        );
        assert_eq!(
            receiver.accept(0, Item::Message(0)),
            Err(Refused::Duplicate)
        );
    }

    #[test]
    fn the_window_and_the_queue_bound_what_is_accepted() {
        let mut receiver = UnorderedReceiver::new(4);
        assert!(receiver.can_accept(3, 1) && !receiver.can_accept(4, 1));
        for id in [1u16, 2, 3] {
            receiver.accept(id, Item::Message(id)).unwrap();
        }
        // Three wait, untaken: a packet of two more does not fit the queue.
        assert!(receiver.can_accept(0, 1));
        assert!(!receiver.can_accept(0, 2));
        receiver.accept(0, Item::Message(0)).unwrap();
        assert_eq!(receiver.base, 4);
        assert!(receiver.can_accept(7, 0) && !receiver.can_accept(8, 0));
    }

    #[test]
    fn messages_pass_a_block_whose_bytes_are_on_their_way() {
        let mut receiver = UnorderedReceiver::new(8);
        receiver.accept(0, Item::Block(3)).unwrap();
        receiver.accept(1, Item::Message(10u16)).unwrap();
        assert_eq!(receiver.next(|_| BlockState::Pending), Some(10));
        assert_eq!(receiver.next(|_| BlockState::Pending), None);
        assert_eq!(
            receiver.next(|chunk| BlockState::Ready(chunk * 100)),
            Some(300)
        );
        assert_eq!(receiver.len(), 0);
    }
}
