//! The receiver of several chunks in flight (`max_chunks_in_flight` above 1): a window of
//! that many reassemblies from the oldest chunk not yet taken, delivered in order.
//!
//! The sender only sends a chunk less than `max_chunks_in_flight` past the oldest one it
//! has not seen fully acked, and that one is never older than the oldest chunk this
//! receiver has not completed. So a slice of a chunk at least `max_chunks_in_flight`
//! past the oldest incomplete one comes from no sender that agrees on the setting: it is
//! refused ([`ChunkPacketError::ChunkBeyondWindow`]) and never stored. A slice of a chunk
//! within that reach but past the window (completed chunks wait to be taken) is dropped
//! and counted, as the single-chunk receiver drops slices while a chunk waits: the
//! sender resends it.
//!
//! The sender also keeps the chunks from its oldest in flight to its newest within
//! `max_bytes_in_flight` (each counted as its slice count times `slice_size`), unless
//! a single chunk is in flight. So a slice that would start a chunk other than the
//! oldest one not yet taken, while the chunks held and it would pass that, is refused
//! ([`ChunkPacketError::BytesBeyondWindow`]) and never stored. The oldest chunk is
//! always accepted, so the window always moves: the chunks held take at most
//! `max_bytes_in_flight` plus one chunk of `slice_size * max_slices` bytes. As with the
//! count, a slice that fits when counted from the oldest chunk not completed (the
//! sender's bytes start there at the latest) but not with the completed chunks waiting
//! to be taken is dropped and counted in `discarded_while_ready`, not refused.

use std::collections::VecDeque;

use super::{Reassembly, RETURN_AFTER_REFUSED_SLICES};
use crate::chunk::packet::{bitfield_bytes, AckPacket, SlicePacket};
use crate::chunk::receiver::{ChunkReceiverStats, ReceiveProgress, ReceivedChunk};
use crate::chunk::{ChunkConfig, ChunkId, ChunkPacketError};
use crate::sequence::sequence_greater_than;

/// The bytes the receiver keeps per chunk of its window besides the chunk's data and
/// bitfield (its slot, and its entry among the chunks taken), for memory bounds.
pub(crate) const PER_CHUNK_STATE_BYTES: usize =
    core::mem::size_of::<Slot>() + core::mem::size_of::<Taken>();

/// The bytes held by the window's chunks and the most it may hold, for a slice of a
/// chunk other than the oldest.
#[derive(Debug, Clone, Copy)]
struct Room {
    held: usize,
    max: usize,
}

/// One chunk id of the window.
#[derive(Debug, Clone, Default)]
struct Slot {
    /// Its slices so far; `None` before the first.
    reassembly: Option<Reassembly>,
    complete: bool,
    ack_owed: bool,
    /// Slices with another slice count refused since the last new slice: past
    /// [`RETURN_AFTER_REFUSED_SLICES`] the count they carry wins (a forged or corrupted
    /// slice must not wedge the chunk).
    refused: u32,
}

/// A chunk taken by the user whose slices may still come (our acks were lost): answered
/// with a full ack.
#[derive(Debug, Clone)]
struct Taken {
    id: ChunkId,
    slice_count: u16,
    ack_owed: bool,
    /// Slices with another slice count refused; past [`RETURN_AFTER_REFUSED_SLICES`]
    /// they get a full ack of their own count (a chunk id completes at most once).
    refused: u32,
}

/// The window: `slots[i]` is chunk `base + i`.
#[derive(Debug, Clone)]
pub(super) struct Window {
    base: ChunkId,
    slots: VecDeque<Slot>,
    /// The last `max_chunks_in_flight` chunks taken, oldest first.
    taken: VecDeque<Taken>,
    /// Slots and chunks taken with `ack_owed` set: asked on every poll of a connection,
    /// so kept up to date where a flag changes rather than found by a pass over both
    /// queues (whose memory, on a server of many connections, is rarely in the cache).
    acks_owed: usize,
}

/// Sets an ack owed, counting it if it was not.
fn owe(flag: &mut bool, acks_owed: &mut usize) {
    if !*flag {
        *flag = true;
        *acks_owed += 1;
    }
}

impl Window {
    pub(super) fn new(config: &ChunkConfig) -> Self {
        let k = config.max_chunks_in_flight;
        Self {
            base: config.first_chunk_id,
            slots: (0..k).map(|_| Slot::default()).collect(),
            taken: VecDeque::with_capacity(k),
            acks_owed: 0,
        }
    }

    /// The oldest chunk not completed, as an offset from `base` (`slots.len()` when all
    /// are complete).
    fn first_incomplete(&self) -> usize {
        self.slots
            .iter()
            .position(|slot| !slot.complete)
            .unwrap_or(self.slots.len())
    }

    pub(super) fn receive(
        &mut self,
        slice: &SlicePacket<'_>,
        now: f64,
        config: &ChunkConfig,
        stats: &mut ChunkReceiverStats,
    ) -> Result<(), ChunkPacketError> {
        let id = slice.chunk_id;
        if let Some(taken) = self.taken.iter_mut().find(|t| t.id == id) {
            if slice.slice_count != taken.slice_count {
                taken.refused = taken.refused.saturating_add(1);
                if taken.refused <= RETURN_AFTER_REFUSED_SLICES {
                    return Err(stats.rejected.record(ChunkPacketError::SliceCountChanged {
                        expected: taken.slice_count,
                        found: slice.slice_count,
                    }));
                }
                // The chunk completed under this id was forged or corrupted; the genuine
                // one gets its full ack and is lost, as in the single-chunk receiver.
                taken.slice_count = slice.slice_count;
                stats.displaced_slices += 1;
            } else {
                stats.stale_slices += 1;
            }
            owe(&mut taken.ack_owed, &mut self.acks_owed);
            return Ok(());
        }
        let offset = usize::from(id.wrapping_sub(self.base));
        if offset < self.slots.len() {
            // The oldest chunk is always accepted; any other may not take the bytes
            // held past the limit, by starting or by restarting larger.
            let grows = self.slots[offset]
                .reassembly
                .as_ref()
                .is_none_or(|r| r.slice_count != slice.slice_count);
            let room = (offset > 0 && grows).then(|| Room {
                held: self.bytes_held(),
                max: config.max_bytes_in_flight,
            });
            if let Some(room) = room.filter(|_| self.slots[offset].reassembly.is_none()) {
                let size = usize::from(slice.slice_count) * config.slice_size;
                let from_incomplete = self
                    .slots
                    .iter()
                    .skip(self.first_incomplete())
                    .filter_map(|s| s.reassembly.as_ref())
                    .map(|r| r.data.capacity())
                    .sum::<usize>();
                if room.held.saturating_add(size) > room.max
                    && from_incomplete.saturating_add(size) <= room.max
                {
                    // Within an agreeing sender's bytes, which start at the oldest chunk
                    // not completed at the latest: completed chunks wait to be taken.
                    stats.discarded_while_ready += 1;
                    return Ok(());
                }
            }
            return Self::store(
                &mut self.slots[offset],
                &mut self.acks_owed,
                slice,
                now,
                room,
                config,
                stats,
            );
        }
        if sequence_greater_than(id, self.base) {
            let first = self.first_incomplete();
            if offset < first + self.slots.len() {
                // Within the sender's reach: completed chunks wait to be taken.
                stats.discarded_while_ready += 1;
                return Ok(());
            }
            let oldest_incomplete = self.base.wrapping_add(first as u16);
            return Err(stats.rejected.record(ChunkPacketError::ChunkBeyondWindow {
                oldest_incomplete,
                found: id,
            }));
        }
        Err(stats.rejected.record(ChunkPacketError::UnexpectedChunk {
            expected: self.base,
            found: id,
        }))
    }

    fn store(
        slot: &mut Slot,
        acks_owed: &mut usize,
        slice: &SlicePacket<'_>,
        now: f64,
        room: Option<Room>,
        config: &ChunkConfig,
        stats: &mut ChunkReceiverStats,
    ) -> Result<(), ChunkPacketError> {
        let size = usize::from(slice.slice_count) * config.slice_size;
        // Bytes the slot holds now (its buffer, reused when large enough).
        let own = slot.reassembly.as_ref().map_or(0, |r| r.data.capacity());
        let over = |room: Room| size > own && (room.held - own).saturating_add(size) > room.max;
        let beyond = |room: Room| ChunkPacketError::BytesBeyondWindow {
            found: slice.chunk_id,
            held: room.held,
            size,
            max: room.max,
        };
        if slot.reassembly.is_none() {
            if let Some(room) = room.filter(|&r| over(r)) {
                return Err(stats.rejected.record(beyond(room)));
            }
        }
        let reassembly = slot.reassembly.get_or_insert_with(|| {
            let mut r = Reassembly::empty(config.max_slices.div_ceil(8));
            r.restart(slice.slice_count, config.slice_size, now);
            r
        });
        if reassembly.slice_count != slice.slice_count {
            slot.refused = slot.refused.saturating_add(1);
            if slot.complete || slot.refused <= RETURN_AFTER_REFUSED_SLICES {
                return Err(stats.rejected.record(ChunkPacketError::SliceCountChanged {
                    expected: reassembly.slice_count,
                    found: slice.slice_count,
                }));
            }
            if let Some(room) = room.filter(|&r| over(r)) {
                // Restarted once it fits, or once it is the oldest.
                return Err(stats.rejected.record(beyond(room)));
            }
            stats.abandoned_chunks += 1;
            stats.returned_to_older_chunk += 1;
            reassembly.restart(slice.slice_count, config.slice_size, now);
        }
        owe(&mut slot.ack_owed, acks_owed);
        let i = usize::from(slice.slice_id);
        let (byte, bit) = (i / 8, 1u8 << (i % 8));
        if reassembly.received[byte] & bit != 0 {
            stats.duplicate_slices += 1;
            return Ok(());
        }
        let start = i * config.slice_size;
        reassembly.data[start..start + slice.data.len()].copy_from_slice(slice.data);
        reassembly.received[byte] |= bit;
        slot.refused = 0;
        reassembly.received_count += 1;
        reassembly.received_bytes += slice.data.len();
        stats.slices_received += 1;
        if slice.is_last() {
            reassembly.chunk_size = Some(start + slice.data.len());
        }
        if reassembly.received_count == usize::from(reassembly.slice_count) {
            slot.complete = true;
            stats.chunks_completed += 1;
        }
        Ok(())
    }

    pub(super) fn has_ack_owed(&self) -> bool {
        debug_assert_eq!(self.acks_owed, self.count_acks_owed());
        self.acks_owed > 0
    }

    /// The acks owed (kept up to date).
    #[cfg(test)]
    pub(super) fn acks_owed(&self) -> usize {
        self.acks_owed
    }

    /// The oldest chunk id of the window.
    #[cfg(test)]
    pub(super) fn base(&self) -> ChunkId {
        self.base
    }

    /// The acks owed, by a pass over the slots and the chunks taken: what `acks_owed`
    /// must equal.
    pub(super) fn count_acks_owed(&self) -> usize {
        self.taken.iter().filter(|t| t.ack_owed).count()
            + self.slots.iter().filter(|s| s.ack_owed).count()
    }

    /// The next ack owed (chunks taken first, then the window in order), its bitfield in
    /// `full_bits` for a chunk taken.
    pub(super) fn next_ack<'a>(&'a mut self, full_bits: &'a mut [u8]) -> Option<AckPacket<'a>> {
        if self.acks_owed == 0 {
            return None;
        }
        if let Some(taken) = self.taken.iter_mut().find(|t| t.ack_owed) {
            taken.ack_owed = false;
            self.acks_owed -= 1;
            let slice_count = taken.slice_count;
            let bytes = bitfield_bytes(slice_count);
            let bits = &mut full_bits[..bytes];
            bits.fill(0xff);
            if slice_count % 8 != 0 {
                bits[bytes - 1] = (1u8 << (slice_count % 8)) - 1;
            }
            return Some(AckPacket {
                chunk_id: taken.id,
                slice_count,
                received: bits,
            });
        }
        let base = self.base;
        let (offset, slot) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.ack_owed)?;
        slot.ack_owed = false;
        self.acks_owed -= 1;
        let reassembly = slot.reassembly.as_ref()?;
        Some(AckPacket {
            chunk_id: base.wrapping_add(offset as u16),
            slice_count: reassembly.slice_count,
            received: &reassembly.received[..bitfield_bytes(reassembly.slice_count)],
        })
    }

    pub(super) fn is_ready(&self) -> bool {
        self.slots.front().is_some_and(|s| s.complete)
    }

    /// Takes the oldest chunk if complete; the window moves one chunk on.
    pub(super) fn take(&mut self) -> Option<ReceivedChunk> {
        if !self.is_ready() {
            return None;
        }
        let slot = self.slots.pop_front()?;
        self.slots.push_back(Slot::default());
        let id = self.base;
        self.base = self.base.wrapping_add(1);
        let Some(reassembly) = slot.reassembly else {
            // Unreachable: a complete slot has its slices. Its ack leaves with it.
            self.acks_owed -= usize::from(slot.ack_owed);
            return None;
        };
        // The oldest chunk taken leaves when the list is full, and its ack with it.
        if self.taken.len() >= self.slots.len()
            && self.taken.pop_front().is_some_and(|t| t.ack_owed)
        {
            self.acks_owed -= 1;
        }
        self.taken.push_back(Taken {
            id,
            slice_count: reassembly.slice_count,
            ack_owed: slot.ack_owed,
            refused: 0,
        });
        let mut data = reassembly.data;
        data.truncate(reassembly.chunk_size.unwrap_or(0));
        Some(ReceivedChunk { id, data })
    }

    /// The oldest chunk with a slice received.
    pub(super) fn progress(&self) -> Option<ReceiveProgress> {
        self.slots.iter().enumerate().find_map(|(offset, slot)| {
            let r = slot.reassembly.as_ref()?;
            Some(ReceiveProgress {
                chunk_id: self.base.wrapping_add(offset as u16),
                slice_count: r.slice_count,
                slices_received: r.received_count as u16,
                bytes_received: r.received_bytes,
                chunk_size: r.chunk_size,
                started_at: r.started_at,
            })
        })
    }

    /// Chunks completed and waiting to be taken, or being received.
    pub(super) fn chunks_held(&self) -> usize {
        self.slots.iter().filter(|s| s.reassembly.is_some()).count()
    }

    /// Bytes of the buffers of the chunks held.
    pub(super) fn bytes_held(&self) -> usize {
        self.slots
            .iter()
            .filter_map(|s| s.reassembly.as_ref())
            .map(|r| r.data.capacity())
            .sum()
    }
}
