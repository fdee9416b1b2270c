//! Which channels have anything to do, known without touching them: on a server of
//! many clients each channel's state is a cache miss, and most channels of most clients
//! have nothing queued and nothing received on a given tick. Each mask is a hint one
//! way only: a clear bit means the channel has nothing; a set bit means it may.

use super::channels::{Channel, Sender};
use crate::channel::reliable::{PeerAcks, ResendTiming};

#[derive(Debug)]
pub(super) struct Activity {
    /// Bit `i` clear: channel `i`'s send queue is empty. Set by a send; cleared when a
    /// look at the channel finds it empty.
    queued: u64,
    /// Bit `i` clear: channel `i` holds nothing received. Set by a message received;
    /// cleared when the game takes the last.
    received: u64,
    /// Bit `i` clear: reliable channel `i` has no block that may hold its window. Set
    /// by a block sent; cleared when an update finds none.
    blocks: u64,
    /// The reliable channels.
    reliable: u64,
    /// The peer's acks as every reliable sender folds them, and the estimates last given
    /// to them: a sender skipped while it had nothing to do takes these before it is
    /// given a message.
    pub peer: PeerAcks,
    pub timing: Option<ResendTiming>,
}

/// The indices of the set bits of `mask`, lowest first.
pub(super) fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let index = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(index)
    })
}

impl Activity {
    pub fn new<In>(channels: &[Channel<In>]) -> Self {
        let reliable = channels
            .iter()
            .enumerate()
            .filter(|(_, channel)| matches!(channel.sender, Sender::Reliable(_)))
            .fold(0, |mask, (index, _)| mask | 1 << index);
        Self {
            queued: 0,
            received: 0,
            blocks: 0,
            reliable,
            peer: PeerAcks::default(),
            timing: None,
        }
    }

    /// Channels that may have messages queued.
    pub fn queued(&self) -> u64 {
        self.queued
    }

    /// Reliable channels that may have messages queued: those whose senders acks and
    /// ack headers concern (the others catch up when given a message).
    pub fn reliable_queued(&self) -> u64 {
        self.queued & self.reliable
    }

    /// Whether channel `index` may hold a message received.
    pub fn may_have_received(&self, index: usize) -> bool {
        self.received & (1 << index) != 0
    }

    /// Reliable channels that may have anything a new estimate or a block delivered
    /// changes: messages queued, or blocks holding the window.
    pub fn reliable_busy(&self) -> u64 {
        (self.queued | self.blocks) & self.reliable
    }

    /// Channel `index` is given a message to send; it catches up first if it was idle.
    pub fn on_send<In>(&mut self, index: usize, channel: &mut Channel<In>) {
        if self.queued & (1 << index) == 0 {
            if let Sender::Reliable(sender) = &mut channel.sender {
                sender.catch_up(&self.peer, self.timing);
            }
            self.queued |= 1 << index;
        }
    }

    /// Channel `index` sent a block (after [`on_send`](Self::on_send)).
    pub fn on_block(&mut self, index: usize) {
        self.blocks |= 1 << index;
    }

    /// An update of channel `index` found whether a block still holds its window.
    pub fn note_blocks(&mut self, index: usize, holds_blocks: bool) {
        if !holds_blocks {
            self.blocks &= !(1 << index);
        }
    }

    /// A look at channel `index` (now `queued` messages): clears its bit when empty.
    pub fn note_queued(&mut self, index: usize, queued: usize) {
        if queued == 0 {
            self.queued &= !(1 << index);
        }
    }

    /// Channel `index` received a message (or a duplicate: a hint may be set for
    /// nothing).
    pub fn on_receive(&mut self, index: usize) {
        self.received |= 1 << index;
    }

    /// The game took from channel `index`, which now holds `received`.
    pub fn note_received(&mut self, index: usize, received: usize) {
        if received == 0 {
            self.received &= !(1 << index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bits;

    #[test]
    fn bits_lists_the_set_bits_lowest_first() {
        assert_eq!(bits(0).count(), 0);
        assert_eq!(bits(0b1011).collect::<Vec<_>>(), [0, 1, 3]);
        assert_eq!(bits(1 << 63 | 1).collect::<Vec<_>>(), [0, 63]);
    }
}
