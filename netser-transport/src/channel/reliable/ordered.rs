//! The receiving half of a reliable-ordered channel: a window of slots from the next id
//! to deliver, each message waiting there for the ones before it.

use super::{BlockState, Item, Refused};
use crate::chunk::ChunkId;
use crate::sequence::sequence_less_than;

/// Messages at `base..base + capacity`, delivered in id order.
#[derive(Debug)]
pub(crate) struct OrderedReceiver<In> {
    /// Slot `id & mask` holds message `id` until its turn.
    slots: Box<[Option<Item<In>>]>,
    mask: usize,
    /// The next id to deliver.
    base: u16,
    /// Messages in `slots`.
    buffered: usize,
}

impl<In> OrderedReceiver<In> {
    /// A window of `capacity` ids, a power of two.
    pub fn new(capacity: usize) -> Self {
        debug_assert!(capacity.is_power_of_two());
        Self {
            slots: (0..capacity).map(|_| None).collect(),
            mask: capacity - 1,
            base: 0,
            buffered: 0,
        }
    }

    /// Whether a message with this id fits the window (or is a duplicate to drop).
    pub fn can_accept(&self, id: u16) -> bool {
        sequence_less_than(id, self.base)
            || usize::from(id.wrapping_sub(self.base)) < self.slots.len()
    }

    /// Buffers a message (after [`can_accept`](Self::can_accept) said yes).
    pub fn accept(&mut self, id: u16, item: Item<In>) -> Result<(), Refused> {
        if sequence_less_than(id, self.base) {
            return Err(Refused::Duplicate);
        }
        let slot = &mut self.slots[usize::from(id) & self.mask];
        if slot.is_some() {
            return Err(Refused::Duplicate);
        }
        *slot = Some(item);
        self.buffered += 1;
        Ok(())
    }

    /// The next message in order, if it is here. A block waits for `take_block` to find
    /// its bytes; a block whose bytes do not decode is skipped (the caller counts it).
    pub fn next(&mut self, mut take_block: impl FnMut(ChunkId) -> BlockState<In>) -> Option<In> {
        // Nothing buffered: answered without touching the slots (a game polls every
        // channel of every client each tick; the slot at `base` is a cache miss).
        if self.buffered == 0 {
            return None;
        }
        loop {
            let index = usize::from(self.base) & self.mask;
            let message = match self.slots[index].take()? {
                Item::Message(message) => Some(message),
                Item::Block(chunk) => match take_block(chunk) {
                    BlockState::Ready(message) => Some(message),
                    BlockState::Failed => None,
                    BlockState::Pending => {
                        self.slots[index] = Some(Item::Block(chunk));
                        return None;
                    }
                },
            };
            // Delivered or failed: either way this id is done.
            self.base = self.base.wrapping_add(1);
            self.buffered -= 1;
            if message.is_some() {
                return message;
            }
        }
    }

    /// Heap bytes of the slots (what messages own is bounded by their type).
    pub fn memory_bound(&self) -> usize {
        self.slots.len() * core::mem::size_of::<Option<Item<In>>>()
    }

    /// Messages buffered, not yet delivered.
    pub fn len(&self) -> usize {
        self.buffered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(receiver: &mut OrderedReceiver<u16>) -> Vec<u16> {
        let mut out = Vec::new();
        while let Some(m) = receiver.next(|_| BlockState::Pending) {
            out.push(m);
        }
        out
    }

    #[test]
    fn delivers_in_id_order_and_drops_duplicates() {
        let mut receiver = OrderedReceiver::new(8);
        for id in [2, 0, 3] {
            receiver.accept(id, Item::Message(id)).unwrap();
        }
        assert_eq!(
            receiver.accept(2, Item::Message(2)),
            Err(Refused::Duplicate)
        );
        assert_eq!(drain(&mut receiver), [0], "1 is missing");
        assert_eq!(receiver.len(), 2);
        receiver.accept(1, Item::Message(1)).unwrap();
        assert_eq!(drain(&mut receiver), [1, 2, 3]);
        assert_eq!(
            receiver.accept(0, Item::Message(0)),
            Err(Refused::Duplicate)
        );
        assert!(
            receiver.can_accept(0),
            "an old id is a duplicate to drop, not a refusal"
        );
    }

    #[test]
    fn the_window_is_capacity_ids_from_the_next_to_deliver_across_the_wrap() {
        let mut receiver: OrderedReceiver<u16> = OrderedReceiver::new(4);
        receiver.base = u16::MAX - 1;
        assert!(receiver.can_accept(u16::MAX - 1));
        assert!(receiver.can_accept(1));
        assert!(!receiver.can_accept(2));
        for id in [u16::MAX - 1, u16::MAX, 0, 1] {
            receiver.accept(id, Item::Message(id)).unwrap();
        }
        assert_eq!(drain(&mut receiver), [u16::MAX - 1, u16::MAX, 0, 1]);
        assert!(receiver.can_accept(5) && !receiver.can_accept(6));
    }

    #[test]
    fn a_block_holds_the_order_until_its_bytes_are_here() {
        let mut receiver = OrderedReceiver::new(8);
        receiver.accept(0, Item::Block(7)).unwrap();
        receiver.accept(1, Item::Message(1)).unwrap();
        receiver.accept(2, Item::Block(8)).unwrap();
        receiver.accept(3, Item::Message(3)).unwrap();
        assert_eq!(receiver.next(|_| BlockState::Pending), None);
        assert_eq!(
            receiver.next(|chunk| BlockState::Ready(chunk * 100)),
            Some(700)
        );
        assert_eq!(receiver.next(|_| BlockState::Pending), Some(1));
        // A block that does not decode is skipped.
        assert_eq!(receiver.next(|_| BlockState::Failed), Some(3));
        assert_eq!(receiver.len(), 0);
    }
}
