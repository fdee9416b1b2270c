//! The one bounded event queue of the layers that queue events: the netcode server, the
//! game server, and the UDP server and client.

use std::collections::VecDeque;

/// Events waiting for `poll_event`, oldest first, at most `capacity` of them. A full
/// queue drops the new event and counts it: memory stays bounded for a caller that never
/// polls, and nothing is lost silently.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    queue: VecDeque<E>,
    capacity: usize,
    dropped: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue holding at most `capacity` events.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            queue: VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    /// Queues `event`; `false` (and counted in [`dropped`](Self::dropped)) when full.
    pub(crate) fn push(&mut self, event: E) -> bool {
        if self.queue.len() < self.capacity {
            self.queue.push_back(event);
            true
        } else {
            self.dropped += 1;
            false
        }
    }

    /// Counts events the layer decided not to queue (the disconnect of a client whose
    /// connect was dropped).
    pub(crate) fn count_dropped(&mut self, events: u64) {
        self.dropped += events;
    }

    /// The oldest event.
    pub(crate) fn pop(&mut self) -> Option<E> {
        self.queue.pop_front()
    }

    /// The events waiting, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &E> {
        self.queue.iter()
    }

    /// Events waiting.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Events dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Events the allocation holds (at least [`len`](Self::len)).
    pub(crate) fn allocated(&self) -> usize {
        self.queue.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its capacity a queue drops and counts, and takes events again once polled.
    #[test]
    fn a_full_queue_drops_and_counts() {
        let mut queue = EventQueue::new(2);
        assert!(queue.push(1));
        assert!(queue.push(2));
        assert!(!queue.push(3));
        assert_eq!((queue.len(), queue.dropped()), (2, 1));
        assert_eq!(queue.pop(), Some(1));
        assert!(queue.push(4));
        assert_eq!(queue.iter().copied().collect::<Vec<_>>(), [2, 4]);
        queue.count_dropped(2);
        assert_eq!(queue.dropped(), 3);
        assert!(queue.allocated() >= 2);
    }
}
