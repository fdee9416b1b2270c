//! Fragment reassembly with a fixed memory budget, into contiguous memory.
//!
//! All fragment data lives in one pool buffer of at most
//! `max_reassembly_bytes / fragment_size` blocks of exactly `fragment_size` bytes. The
//! first fragment of a packet reserves a run of adjacent blocks, one per fragment, and
//! fragment `i` is copied straight into block `i` of that run: when the last one arrives
//! the payload is already whole and is handed back by reference, with no further copy.
//!
//! The pool grows (to the highest block ever reserved) and never shrinks, so once it is
//! full a flood allocates nothing more; a bitmap says which blocks are reserved. Runs are
//! placed first-fit. In-progress packets live in a [`SequenceBuffer`], so a newer packet
//! pushes the oldest ones out; when no run is free for a new packet, the oldest other
//! in-progress packets give their runs up until one is (newer data is worth more). The
//! config guarantees the pool holds one packet of the largest size, so emptying it always
//! makes room.
//!
//! A run is reserved whole by a packet's first fragment, whichever it is, so one datagram
//! (even the 1-byte last fragment of a 256-fragment packet) claims a packet's worth of
//! pool. That costs a flood nothing in memory (the pool is capped all the same) and gives
//! a forger no power it lacks anyway: whoever can inject datagrams into the connection can
//! already take a real packet's sequence with a 4-byte forged packet. Telling peers apart
//! is the connection layer's job.

use core::ops::Range;

use super::ReceiveError;
use crate::sequence::SequenceBuffer;

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
    /// The first pool block of the packet's run of `num_fragments` blocks, or `NO_BLOCK`
    /// before one is reserved.
    first_block: u32,
    /// Bit `i` set: fragment `i` is held. Fixed size, so a pending packet never allocates.
    received: [u64; 4],
}

impl PendingPacket {
    fn has(&self, fragment_id: usize) -> bool {
        self.received[fragment_id / 64] & (1 << (fragment_id % 64)) != 0
    }

    fn blocks(&self) -> Option<Range<usize>> {
        (self.first_block != NO_BLOCK).then(|| {
            let first = self.first_block as usize;
            first..first + usize::from(self.num_fragments)
        })
    }
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
    /// The packet is whole, at `payload` in [`Reassembly::payload`] until the next store.
    Complete {
        ack: u16,
        ack_bits: u32,
        wire_bytes: usize,
        payload: Range<usize>,
    },
}

/// In-progress packets dropped, and why.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Pushed out of the window by newer packets.
    pub expired: u64,
    /// Gave their blocks up to a newer packet when the pool had no room.
    pub evicted: u64,
}

/// One bit per pool block: set while a pending packet holds the block.
struct BlockMap {
    words: Vec<u64>,
    blocks: usize,
}

impl BlockMap {
    fn new(blocks: usize) -> Self {
        Self {
            // Exact capacity, so the bookkeeping never grows past the documented bound.
            words: vec![0; blocks.div_ceil(64)],
            blocks,
        }
    }

    fn heap_bytes_for(blocks: usize) -> usize {
        blocks
            .div_ceil(64)
            .saturating_mul(core::mem::size_of::<u64>())
    }

    fn heap_bytes(&self) -> usize {
        self.words.capacity() * core::mem::size_of::<u64>()
    }

    fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Sets (`used`) or clears every bit of `blocks`.
    fn mark(&mut self, blocks: Range<usize>, used: bool) {
        let mut block = blocks.start;
        while block < blocks.end {
            let bit = block % 64;
            let count = (64 - bit).min(blocks.end - block);
            let mask = (u64::MAX >> (64 - count)) << bit;
            if let Some(word) = self.words.get_mut(block / 64) {
                if used {
                    *word |= mask;
                } else {
                    *word &= !mask;
                }
            }
            block += count;
        }
    }

    /// The first block of the lowest run of `count` free blocks (`count >= 1`).
    fn find_free_run(&self, count: usize) -> Option<usize> {
        self.find_free_run_within(0..self.blocks, count)
    }

    /// [`find_free_run`](Self::find_free_run) among the blocks of `within` only.
    fn find_free_run_within(&self, within: Range<usize>, count: usize) -> Option<usize> {
        let end = within.end.min(self.blocks);
        let mut run_start = within.start;
        let mut block = within.start;
        while block < end {
            let bit = block % 64;
            let word = self.words.get(block / 64).copied().unwrap_or(u64::MAX) >> bit;
            let left_in_word = 64 - bit;
            if word & 1 != 0 {
                // Skip the used blocks; the run restarts after them.
                block += ((!word).trailing_zeros() as usize).min(left_in_word);
                run_start = block;
            } else {
                block += (word.trailing_zeros() as usize).min(left_in_word);
                if block.min(end) - run_start >= count {
                    return Some(run_start);
                }
            }
        }
        None
    }
}

pub(crate) struct Reassembly {
    fragment_size: usize,
    max_blocks: usize,
    /// Every reserved block lies inside `pool` (its length is whole blocks).
    pool: Vec<u8>,
    used: BlockMap,
    packets: SequenceBuffer<PendingPacket>,
    dropped: Dropped,
}

fn release(used: &mut BlockMap, packet: &PendingPacket) {
    if let Some(blocks) = packet.blocks() {
        used.mark(blocks, false);
    }
}

impl Reassembly {
    pub fn new(capacity: usize, fragment_size: usize, max_blocks: usize) -> Self {
        Self {
            fragment_size,
            max_blocks,
            pool: Vec::new(),
            used: BlockMap::new(max_blocks),
            packets: SequenceBuffer::new(capacity),
            dropped: Dropped::default(),
        }
    }

    /// The worst-case heap bytes of a reassembly built with these parameters.
    pub fn memory_bound(capacity: usize, fragment_size: usize, max_blocks: usize) -> usize {
        // Saturating: called on unvalidated configs too.
        Self::slot_bytes(capacity)
            .saturating_add(max_blocks.saturating_mul(fragment_size))
            .saturating_add(BlockMap::heap_bytes_for(max_blocks))
    }

    fn slot_bytes(capacity: usize) -> usize {
        SequenceBuffer::<PendingPacket>::heap_bytes_for(capacity)
    }

    /// Heap bytes held now (pool, bookkeeping).
    pub fn memory_bytes(&self) -> usize {
        Self::slot_bytes(self.packets.capacity()) + self.pool.capacity() + self.used.heap_bytes()
    }

    /// Bytes of fragment data the pool has allocated (in use or free).
    pub fn block_bytes(&self) -> usize {
        self.pool.len()
    }

    /// Packets with some but not all fragments.
    pub fn pending(&self) -> usize {
        self.packets.len()
    }

    pub fn dropped(&self) -> Dropped {
        self.dropped
    }

    /// The bytes of a packet [`store`](Self::store) completed, by its `payload` range;
    /// valid until the next store.
    pub fn payload(&self, range: Range<usize>) -> &[u8] {
        self.pool.get(range).unwrap_or_default()
    }

    pub fn contains(&self, sequence: u16) -> bool {
        self.packets.contains(sequence)
    }

    pub fn is_stale(&self, sequence: u16) -> bool {
        self.packets.is_stale(sequence)
    }

    /// Moves the window to `sequence` (a packet received whole), dropping in-progress
    /// packets that fall out of it and any in progress for `sequence` itself. Returns
    /// whether it dropped any (most packets arrive whole with none in progress).
    pub fn advance(&mut self, sequence: u16) -> bool {
        let expired = self.dropped.expired;
        let used = &mut self.used;
        let dropped = &mut self.dropped;
        self.packets.advance_evicting(sequence, |_, packet| {
            dropped.expired += 1;
            release(used, &packet);
        });
        if let Some(packet) = self.packets.remove(sequence) {
            self.dropped.expired += 1;
            release(&mut self.used, &packet);
        }
        self.dropped.expired != expired
    }

    pub fn reset(&mut self) {
        self.packets.reset();
        self.used.clear();
        self.dropped = Dropped::default();
    }

    /// Reserves a run of `count` adjacent blocks for the packet `keep`, taking runs from
    /// the oldest other in-progress packets while none is free, and makes sure the pool
    /// holds the run. Returns its first block.
    fn reserve_run(&mut self, keep: u16, count: usize) -> Option<usize> {
        let first = match self.used.find_free_run(count) {
            Some(first) => first,
            None => self.evict_for_run(keep, count)?,
        };
        let end = (first + count) * self.fragment_size;
        if self.pool.len() < end {
            // Grow geometrically, never past the pool's bound; the new bytes are zeroed
            // once, when first allocated.
            let max_bytes = self.max_blocks * self.fragment_size;
            let target = end
                .max(self.pool.capacity().saturating_mul(2))
                .min(max_bytes);
            if target > self.pool.capacity() {
                self.pool.reserve_exact(target - self.pool.len());
            }
            self.pool.resize(end, 0);
        }
        self.used.mark(first..first + count, true);
        Some(first)
    }

    /// Drops in-progress packets other than `keep`, oldest first, until a run of `count`
    /// blocks is free. At most one pass over the window.
    fn evict_for_run(&mut self, keep: u16, count: usize) -> Option<usize> {
        let mut sequence = self.packets.oldest();
        for _ in 0..self.packets.capacity() {
            if sequence != keep {
                if let Some(packet) = self.packets.remove(sequence) {
                    self.dropped.evicted += 1;
                    release(&mut self.used, &packet);
                    // A run free only now overlaps the blocks just freed: look around
                    // them rather than through the whole map.
                    if let Some(freed) = packet.blocks() {
                        let around = freed.start.saturating_sub(count - 1)..freed.end + count - 1;
                        if let Some(first) = self.used.find_free_run_within(around, count) {
                            return Some(first);
                        }
                    }
                }
            }
            sequence = sequence.wrapping_add(1);
        }
        None
    }

    /// Stores one fragment whose header, size and sequence the endpoint has checked.
    ///
    /// # Errors
    ///
    /// [`ReceiveError::Stale`] for a packet older than the window,
    /// [`ReceiveError::FragmentCountMismatch`] when the count differs from the packet's
    /// first fragment, [`ReceiveError::DuplicateFragment`] for a fragment already held,
    /// [`ReceiveError::ReassemblyFull`] if no run of blocks could be had (the config
    /// checks make this unreachable).
    pub fn store(&mut self, fragment: Fragment<'_>) -> Result<Stored, ReceiveError> {
        let sequence = fragment.sequence;
        let fragment_id = usize::from(fragment.fragment_id);
        if !self.packets.contains(sequence) {
            let used = &mut self.used;
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
                        first_block: NO_BLOCK,
                        received: [0; 4],
                    },
                    |_, packet| {
                        dropped.expired += 1;
                        release(used, &packet);
                    },
                )
                .map_err(|_| ReceiveError::Stale { sequence })?;
            let first = self.reserve_run(sequence, usize::from(fragment.num_fragments));
            match (first, self.packets.get_mut(sequence)) {
                (Some(first), Some(packet)) => packet.first_block = first as u32,
                (first, _) => {
                    // Unreachable by the config checks (the pool holds a whole packet);
                    // dropping the fragment is the safe answer if it ever happened.
                    if let Some(first) = first {
                        self.used
                            .mark(first..first + usize::from(fragment.num_fragments), false);
                    }
                    self.packets.remove(sequence);
                    return Err(ReceiveError::ReassemblyFull { sequence });
                }
            }
        }
        let Some(packet) = self.packets.get_mut(sequence) else {
            return Err(ReceiveError::Stale { sequence });
        };
        if packet.num_fragments != fragment.num_fragments {
            return Err(ReceiveError::FragmentCountMismatch {
                sequence,
                expected: packet.num_fragments,
                found: fragment.num_fragments,
            });
        }
        if packet.has(fragment_id) {
            return Err(ReceiveError::DuplicateFragment {
                sequence,
                fragment_id: fragment.fragment_id,
            });
        }
        let start = (packet.first_block as usize + fragment_id) * self.fragment_size;
        let Some(storage) = self.pool.get_mut(start..start + fragment.data.len()) else {
            // Unreachable: a reserved run lies inside the pool.
            return Err(ReceiveError::ReassemblyFull { sequence });
        };
        storage.copy_from_slice(fragment.data);
        packet.received[fragment_id / 64] |= 1 << (fragment_id % 64);
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
        // The run goes back to the map, but its bytes stay put until the next store, so
        // the payload is handed back from where the fragments were copied.
        release(&mut self.used, &packet);
        let start = packet.first_block as usize * self.fragment_size;
        let len = (usize::from(packet.num_fragments) - 1) * self.fragment_size
            + packet.last_fragment_bytes;
        let (ack, ack_bits) = packet.ack.unwrap_or((0, 0));
        Ok(Stored::Complete {
            ack,
            ack_bits,
            wire_bytes: packet.wire_bytes,
            payload: start..start + len,
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

    fn complete(reassembly: &Reassembly, stored: Result<Stored, ReceiveError>) -> Vec<u8> {
        match stored {
            Ok(Stored::Complete { payload, .. }) => reassembly.payload(payload).to_vec(),
            other => panic!("expected a complete packet, got {other:?}"),
        }
    }

    #[test]
    fn out_of_order_fragments_reassemble_in_place_and_the_run_is_reused() {
        let mut reassembly = Reassembly::new(8, 4, 16);
        let payload: Vec<u8> = (0..10).collect();
        assert_eq!(
            reassembly.store(fragment(3, 2, 3, &payload[8..])),
            Ok(Stored::Incomplete)
        );
        // The first fragment reserved the packet's whole run.
        assert_eq!(reassembly.block_bytes(), 12);
        assert_eq!(
            reassembly.store(fragment(3, 0, 3, &payload[..4])),
            Ok(Stored::Incomplete)
        );
        assert_eq!(
            reassembly.store(fragment(3, 1, 3, &payload[4..8])),
            Ok(Stored::Complete {
                ack: 7,
                ack_bits: 0xFF,
                wire_bytes: 25,
                payload: 0..10,
            })
        );
        assert_eq!(reassembly.payload(0..10), payload);
        assert_eq!(reassembly.pending(), 0);
        assert_eq!(reassembly.used.find_free_run(16), Some(0));
        // The next packet reuses the same three blocks.
        for id in 0..3 {
            reassembly.store(fragment(4, id, 3, &payload[..4])).unwrap();
        }
        assert_eq!(reassembly.block_bytes(), 12);
    }

    #[test]
    fn packets_in_progress_get_disjoint_runs() {
        let mut reassembly = Reassembly::new(8, 2, 16);
        reassembly.store(fragment(1, 0, 3, &[1; 2])).unwrap();
        reassembly.store(fragment(2, 1, 2, &[2; 2])).unwrap();
        reassembly.store(fragment(1, 2, 3, &[3; 1])).unwrap();
        let stored = reassembly.store(fragment(2, 0, 2, &[4; 2]));
        assert_eq!(complete(&reassembly, stored), [4, 4, 2, 2]);
        let stored = reassembly.store(fragment(1, 1, 3, &[5; 2]));
        assert_eq!(complete(&reassembly, stored), [1, 1, 5, 5, 3]);
        // Packet 1 took blocks 0..3 and packet 2 blocks 3..5.
        assert_eq!(reassembly.block_bytes(), 10);
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
    fn a_full_pool_takes_runs_from_the_oldest_packets() {
        // Pool of 4 blocks, packets of 3 fragments: one fits at a time.
        let mut reassembly = Reassembly::new(8, 4, 4);
        reassembly.store(fragment(1, 0, 3, &[1; 4])).unwrap();
        reassembly.store(fragment(1, 1, 3, &[1; 4])).unwrap();
        // Packet 2 needs a run of 3: packet 1, the oldest, gives its run up.
        reassembly.store(fragment(2, 0, 3, &[2; 4])).unwrap();
        assert_eq!(reassembly.dropped().evicted, 1);
        assert_eq!(reassembly.pending(), 1);
        reassembly.store(fragment(2, 1, 3, &[2; 4])).unwrap();
        let stored = reassembly.store(fragment(2, 2, 3, &[2; 2]));
        assert_eq!(
            complete(&reassembly, stored),
            [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        );
        assert_eq!(reassembly.block_bytes(), 12);
        assert_eq!(reassembly.pending(), 0);
        // Packet 1's fragments now start over.
        assert_eq!(
            reassembly.store(fragment(1, 2, 3, &[1; 4])),
            Ok(Stored::Incomplete)
        );
    }

    #[test]
    fn eviction_goes_oldest_first_and_stops_once_a_run_is_free() {
        // Pool of 6 blocks: packets 1, 2, 3 hold two blocks each.
        let mut reassembly = Reassembly::new(8, 1, 6);
        for sequence in 1..=3 {
            reassembly.store(fragment(sequence, 0, 2, &[0])).unwrap();
        }
        // Packet 4 needs four adjacent blocks: 1 and 2 give theirs up, 3 keeps its own.
        reassembly.store(fragment(4, 0, 4, &[4])).unwrap();
        assert_eq!(reassembly.dropped().evicted, 2);
        assert!(reassembly.contains(3) && reassembly.contains(4));
        assert!(!reassembly.contains(1) && !reassembly.contains(2));
    }

    #[test]
    fn the_window_expires_old_packets_and_frees_their_runs() {
        let mut reassembly = Reassembly::new(4, 4, 64);
        reassembly.store(fragment(10, 0, 2, &[0; 4])).unwrap();
        reassembly.store(fragment(20, 0, 2, &[0; 4])).unwrap();
        assert_eq!(reassembly.dropped().expired, 1);
        // Packet 10's run went back to the map and packet 20 took it.
        assert_eq!(reassembly.block_bytes(), 8);
        assert_eq!(reassembly.used.find_free_run(62), Some(2));
        assert_eq!(
            reassembly.store(fragment(10, 1, 2, &[0; 4])),
            Err(ReceiveError::Stale { sequence: 10 })
        );
        assert!(reassembly.advance(20), "packet 20 in progress is dropped");
        assert_eq!(reassembly.pending(), 0);
        assert_eq!(reassembly.dropped().expired, 2);
        assert_eq!(reassembly.used.find_free_run(64), Some(0));
        assert!(!reassembly.advance(21), "nothing left to drop");
        assert_eq!(reassembly.dropped().expired, 2);
    }

    #[test]
    fn the_pool_grows_geometrically_up_to_its_bound_and_no_further() {
        let mut reassembly = Reassembly::new(64, 1, 100);
        let mut grow = |sequence: u16, count: u16| {
            reassembly
                .store(fragment(sequence, 0, count, &[0]))
                .unwrap();
            (reassembly.block_bytes(), reassembly.pool.capacity())
        };
        assert_eq!(grow(0, 3), (3, 3));
        assert_eq!(grow(1, 2), (5, 6)); // doubled
        assert_eq!(grow(2, 89), (94, 94)); // what the run needs
        assert_eq!(grow(3, 3), (97, 100)); // doubling capped at the bound
        assert_eq!(grow(4, 3), (100, 100));
        assert!(reassembly.memory_bytes() <= Reassembly::memory_bound(64, 1, 100));
    }

    #[test]
    fn block_map_runs_cross_words_and_respect_the_end() {
        let mut map = BlockMap::new(130);
        assert_eq!(map.find_free_run(130), Some(0));
        assert_eq!(map.find_free_run(131), None);
        map.mark(60..70, true);
        assert_eq!(map.find_free_run(60), Some(0));
        assert_eq!(map.find_free_run(61), None);
        map.mark(0..60, true);
        assert_eq!(map.find_free_run(60), Some(70));
        assert_eq!(map.find_free_run(61), None);
        map.mark(128..130, true);
        assert_eq!(map.find_free_run(58), Some(70));
        assert_eq!(map.find_free_run(59), None);
        map.mark(60..70, false);
        assert_eq!(map.find_free_run(68), Some(60));
        assert_eq!(map.find_free_run(69), None);
        assert_eq!(map.find_free_run_within(65..130, 63), Some(65));
        assert_eq!(map.find_free_run_within(65..127, 63), None);
        assert_eq!(map.find_free_run_within(70..80, 10), Some(70));
        map.clear();
        assert_eq!(map.find_free_run(130), Some(0));
    }
}
