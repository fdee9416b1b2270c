//! Fragment reassembly with a fixed memory budget.
//!
//! Fragments are stored in blocks of exactly `fragment_size` bytes taken from a pool that
//! never holds more than `max_reassembly_bytes / fragment_size` blocks. Every block has
//! the same size, so no sequence of funny-sized fragments can fragment the heap, and
//! freed blocks go back to the pool rather than the allocator. In-progress packets live
//! in a [`SequenceBuffer`], so a newer packet pushes the oldest ones out; when the pool is
//! empty, the oldest in-progress packet gives its blocks up (newer data is worth more).
//! A completed packet is copied into one reusable output buffer.

use super::ReceiveError;
use crate::sequence::{sequence_difference, SequenceBuffer};

use super::header::MAX_FRAGMENTS;

const NO_BLOCK: u32 = u32::MAX;

/// One packet being put back together.
pub(crate) struct PendingPacket {
    num_fragments: u16,
    num_received: u16,
    /// The ack state from fragment 0's packet header.
    ack: Option<(u16, u32)>,
    last_fragment_bytes: usize,
    /// Datagram bytes received for this packet, for bandwidth stats.
    wire_bytes: usize,
    /// The pool block holding each fragment, or `NO_BLOCK`. Fixed size, so a pending
    /// packet never allocates.
    block_of: [u32; MAX_FRAGMENTS],
}

/// A fragment that passed the header checks, ready to store.
pub(crate) struct Fragment<'a> {
    pub sequence: u16,
    pub fragment_id: u8,
    pub num_fragments: u16,
    /// `(ack, ack_bits)` from the packet header in fragment 0.
    pub ack: Option<(u16, u32)>,
    pub data: &'a [u8],
    pub wire_bytes: usize,
}

/// What storing a fragment did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// More fragments are needed.
    Incomplete,
    /// The packet is whole and in [`Reassembly::output`].
    Complete {
        ack: u16,
        ack_bits: u32,
        wire_bytes: usize,
    },
}

/// In-progress packets dropped, and why.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Pushed out of the window by newer packets.
    pub expired: u64,
    /// Gave their blocks up to a newer packet when the pool was empty.
    pub evicted: u64,
}

pub(crate) struct Reassembly {
    fragment_size: usize,
    max_blocks: usize,
    blocks: Vec<Box<[u8]>>,
    free_blocks: Vec<u32>,
    packets: SequenceBuffer<PendingPacket>,
    output: Vec<u8>,
    dropped: Dropped,
}

fn release(free_blocks: &mut Vec<u32>, packet: &PendingPacket) {
    free_blocks.extend(
        packet.block_of[..usize::from(packet.num_fragments)]
            .iter()
            .copied()
            .filter(|&block| block != NO_BLOCK),
    );
}

impl Reassembly {
    pub fn new(capacity: usize, fragment_size: usize, max_blocks: usize) -> Self {
        Self {
            fragment_size,
            max_blocks,
            // Exact capacities, so the bookkeeping never grows past the documented bound.
            blocks: Vec::with_capacity(max_blocks),
            free_blocks: Vec::with_capacity(max_blocks),
            packets: SequenceBuffer::new(capacity),
            output: Vec::new(),
            dropped: Dropped::default(),
        }
    }

    /// The worst-case heap bytes of a reassembly built with these parameters and
    /// completing packets of at most `max_packet_size` bytes.
    pub fn memory_bound(
        capacity: usize,
        fragment_size: usize,
        max_blocks: usize,
        max_packet_size: usize,
    ) -> usize {
        Self::slot_bytes(capacity)
            + max_blocks * (fragment_size + core::mem::size_of::<Box<[u8]>>())
            + max_blocks * core::mem::size_of::<u32>()
            + max_packet_size
    }

    fn slot_bytes(capacity: usize) -> usize {
        SequenceBuffer::<PendingPacket>::heap_bytes_for(capacity)
    }

    /// Heap bytes held now (blocks allocated, bookkeeping, output buffer).
    pub fn memory_bytes(&self) -> usize {
        Self::slot_bytes(self.packets.capacity())
            + self.blocks.len() * self.fragment_size
            + self.blocks.capacity() * core::mem::size_of::<Box<[u8]>>()
            + self.free_blocks.capacity() * core::mem::size_of::<u32>()
            + self.output.capacity()
    }

    /// Bytes of fragment data the pool has allocated (in use or free).
    pub fn block_bytes(&self) -> usize {
        self.blocks.len() * self.fragment_size
    }

    /// Packets with some but not all fragments.
    pub fn pending(&self) -> usize {
        self.packets.len()
    }

    pub fn dropped(&self) -> Dropped {
        self.dropped
    }

    /// The last packet completed by [`store`](Self::store).
    pub fn output(&self) -> &[u8] {
        &self.output
    }

    pub fn contains(&self, sequence: u16) -> bool {
        self.packets.contains(sequence)
    }

    pub fn is_stale(&self, sequence: u16) -> bool {
        self.packets.is_stale(sequence)
    }

    /// Moves the window to `sequence` (a packet received whole), dropping in-progress
    /// packets that fall out of it and any in progress for `sequence` itself.
    pub fn advance(&mut self, sequence: u16) {
        let free_blocks = &mut self.free_blocks;
        let dropped = &mut self.dropped;
        self.packets.advance_evicting(sequence, |_, packet| {
            dropped.expired += 1;
            release(free_blocks, &packet);
        });
        if let Some(packet) = self.packets.remove(sequence) {
            self.dropped.expired += 1;
            release(&mut self.free_blocks, &packet);
        }
    }

    pub fn reset(&mut self) {
        self.packets.reset();
        self.free_blocks.clear();
        self.free_blocks
            .extend((0..self.blocks.len()).map(|block| block as u32));
        self.output.clear();
        self.dropped = Dropped::default();
    }

    fn take_block(&mut self, keep: u16) -> u32 {
        if let Some(block) = self.free_blocks.pop() {
            return block;
        }
        if self.blocks.len() < self.max_blocks {
            self.blocks
                .push(vec![0u8; self.fragment_size].into_boxed_slice());
            return (self.blocks.len() - 1) as u32;
        }
        // The pool is spent: the oldest other in-progress packet gives its blocks up.
        // The config guarantees the pool holds a whole packet, so while `keep` still
        // needs a block some other packet holds one.
        let newest = self.packets.sequence().wrapping_sub(1);
        let oldest = self
            .packets
            .iter()
            .filter(|&(sequence, packet)| sequence != keep && packet.num_received > 0)
            .map(|(sequence, _)| sequence)
            .max_by_key(|&sequence| sequence_difference(newest, sequence));
        match oldest.and_then(|sequence| self.packets.remove(sequence)) {
            Some(packet) => {
                self.dropped.evicted += 1;
                release(&mut self.free_blocks, &packet);
                self.free_blocks.pop().unwrap_or(NO_BLOCK)
            }
            None => NO_BLOCK,
        }
    }

    /// Stores one fragment whose header, size and sequence the endpoint has checked.
    ///
    /// # Errors
    ///
    /// [`ReceiveError::Stale`] for a packet older than the window,
    /// [`ReceiveError::FragmentCountMismatch`] when the count differs from the packet's
    /// first fragment, [`ReceiveError::DuplicateFragment`] for a fragment already held.
    pub fn store(&mut self, fragment: Fragment<'_>) -> Result<Stored, ReceiveError> {
        let sequence = fragment.sequence;
        if !self.packets.contains(sequence) {
            let free_blocks = &mut self.free_blocks;
            let dropped = &mut self.dropped;
            self.packets
                .insert_evicting(
                    sequence,
                    PendingPacket {
                        num_fragments: fragment.num_fragments,
                        num_received: 0,
                        ack: None,
                        last_fragment_bytes: 0,
                        wire_bytes: 0,
                        block_of: [NO_BLOCK; MAX_FRAGMENTS],
                    },
                    |_, packet| {
                        dropped.expired += 1;
                        release(free_blocks, &packet);
                    },
                )
                .map_err(|_| ReceiveError::Stale { sequence })?;
        }
        let fragment_id = usize::from(fragment.fragment_id);
        {
            let Some(packet) = self.packets.get(sequence) else {
                return Err(ReceiveError::Stale { sequence });
            };
            if packet.num_fragments != fragment.num_fragments {
                return Err(ReceiveError::FragmentCountMismatch {
                    sequence,
                    expected: packet.num_fragments,
                    found: fragment.num_fragments,
                });
            }
            if packet.block_of[fragment_id] != NO_BLOCK {
                return Err(ReceiveError::DuplicateFragment {
                    sequence,
                    fragment_id: fragment.fragment_id,
                });
            }
        }
        let block = self.take_block(sequence);
        let (Some(packet), Some(storage)) = (
            self.packets.get_mut(sequence),
            self.blocks.get_mut(block as usize),
        ) else {
            // Unreachable by the config checks (the pool holds a whole packet); dropping
            // the fragment is the safe answer if it ever happened.
            if block != NO_BLOCK {
                self.free_blocks.push(block);
            }
            return Err(ReceiveError::ReassemblyFull { sequence });
        };
        storage[..fragment.data.len()].copy_from_slice(fragment.data);
        packet.block_of[fragment_id] = block;
        packet.num_received += 1;
        packet.wire_bytes += fragment.wire_bytes;
        if fragment.ack.is_some() {
            packet.ack = fragment.ack;
        }
        if fragment_id + 1 == usize::from(packet.num_fragments) {
            packet.last_fragment_bytes = fragment.data.len();
        }
        if packet.num_received < packet.num_fragments {
            return Ok(Stored::Incomplete);
        }

        let Some(packet) = self.packets.remove(sequence) else {
            return Err(ReceiveError::Stale { sequence });
        };
        let num_fragments = usize::from(packet.num_fragments);
        let total = (num_fragments - 1) * self.fragment_size + packet.last_fragment_bytes;
        self.output.clear();
        self.output.reserve_exact(total);
        for (fragment_id, &block) in packet.block_of[..num_fragments].iter().enumerate() {
            let bytes = if fragment_id + 1 == num_fragments {
                packet.last_fragment_bytes
            } else {
                self.fragment_size
            };
            self.output
                .extend_from_slice(&self.blocks[block as usize][..bytes]);
        }
        release(&mut self.free_blocks, &packet);
        let (ack, ack_bits) = packet.ack.unwrap_or((0, 0));
        Ok(Stored::Complete {
            ack,
            ack_bits,
            wire_bytes: packet.wire_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment(sequence: u16, id: u8, count: u16, data: &[u8]) -> Fragment<'_> {
        Fragment {
            sequence,
            fragment_id: id,
            num_fragments: count,
            ack: (id == 0).then_some((7, 0xFF)),
            data,
            wire_bytes: data.len() + 5,
        }
    }

    #[test]
    fn out_of_order_fragments_reassemble_and_blocks_return_to_the_pool() {
        let mut reassembly = Reassembly::new(8, 4, 16);
        let payload: Vec<u8> = (0..10).collect();
        assert_eq!(
            reassembly.store(fragment(3, 2, 3, &payload[8..])),
            Ok(Stored::Incomplete)
        );
        assert_eq!(
            reassembly.store(fragment(3, 0, 3, &payload[..4])),
            Ok(Stored::Incomplete)
        );
        assert_eq!(
            reassembly.store(fragment(3, 1, 3, &payload[4..8])),
            Ok(Stored::Complete {
                ack: 7,
                ack_bits: 0xFF,
                wire_bytes: 25
            })
        );
        assert_eq!(reassembly.output(), payload);
        assert_eq!(reassembly.pending(), 0);
        assert_eq!(reassembly.free_blocks.len(), 3);
        // The next packet reuses the same three blocks.
        for id in 0..3 {
            reassembly.store(fragment(4, id, 3, &payload[..4])).unwrap();
        }
        assert_eq!(reassembly.blocks.len(), 3);
    }

    #[test]
    fn mismatched_count_and_duplicate_fragment_are_refused() {
        let mut reassembly = Reassembly::new(8, 4, 16);
        reassembly.store(fragment(1, 0, 2, &[0; 4])).unwrap();
        assert_eq!(
            reassembly.store(fragment(1, 1, 3, &[0; 4])),
            Err(ReceiveError::FragmentCountMismatch {
                sequence: 1,
                expected: 2,
                found: 3
            })
        );
        assert_eq!(
            reassembly.store(fragment(1, 0, 2, &[0; 4])),
            Err(ReceiveError::DuplicateFragment {
                sequence: 1,
                fragment_id: 0
            })
        );
    }

    #[test]
    fn an_empty_pool_takes_blocks_from_the_oldest_packet() {
        // Pool of 4 blocks, packets of 3 fragments.
        let mut reassembly = Reassembly::new(8, 4, 4);
        reassembly.store(fragment(1, 0, 3, &[1; 4])).unwrap();
        reassembly.store(fragment(1, 1, 3, &[1; 4])).unwrap();
        reassembly.store(fragment(2, 0, 3, &[2; 4])).unwrap();
        reassembly.store(fragment(2, 1, 3, &[2; 4])).unwrap();
        // Packet 2 needs a block: packet 1, the oldest, gives both of its up.
        assert_eq!(
            reassembly.store(fragment(2, 2, 3, &[2; 2])),
            Ok(Stored::Complete {
                ack: 7,
                ack_bits: 0xFF,
                wire_bytes: 4 + 4 + 2 + 15
            })
        );
        assert_eq!(reassembly.output(), [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(reassembly.dropped().evicted, 1);
        assert_eq!(reassembly.blocks.len(), 4);
        assert_eq!(reassembly.pending(), 0);
    }

    #[test]
    fn the_window_expires_old_packets_and_frees_their_blocks() {
        let mut reassembly = Reassembly::new(4, 4, 64);
        reassembly.store(fragment(10, 0, 2, &[0; 4])).unwrap();
        reassembly.store(fragment(20, 0, 2, &[0; 4])).unwrap();
        assert_eq!(reassembly.dropped().expired, 1);
        // Packet 10's block went back to the pool and packet 20 took it.
        assert_eq!(reassembly.blocks.len(), 1);
        assert!(reassembly.free_blocks.is_empty());
        assert_eq!(
            reassembly.store(fragment(10, 1, 2, &[0; 4])),
            Err(ReceiveError::Stale { sequence: 10 })
        );
        reassembly.advance(20);
        assert_eq!(reassembly.pending(), 0);
        assert_eq!(reassembly.dropped().expired, 2);
    }
}
