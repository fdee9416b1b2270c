//! 16-bit sequence numbers that wrap, as the articles use for packets, acks and chunk ids,
//! and the [`SequenceBuffer`] that stores per-sequence data for a sliding window.
//!
//! Sequence numbers live on a circle of 65536 values: "newer" means "ahead by at most half
//! the circle". The buffer is a fixed array indexed by `sequence % capacity` in which each
//! slot remembers the sequence it holds, so a lookup is one index and one compare. When a
//! newer sequence is inserted, every slot between the previous newest and the new one is
//! cleared first: without that, an entry from 65536 sequences ago could survive in a slot
//! the window skipped over (under 99% loss most slots are skipped) and be mistaken for a
//! fresh one after the wrap, which is the bug the articles warn about.

/// Is `s1` newer than `s2`, treating the 16-bit space as a circle?
///
/// A sequence is newer if it is ahead by less than half the space (32768), so 1 is newer
/// than 65535 after the wrap.
///
/// ```
/// use netser_transport::sequence::sequence_greater_than;
/// assert!(sequence_greater_than(1, 0));
/// assert!(sequence_greater_than(0, 65535)); // across the wrap
/// assert!(!sequence_greater_than(65535, 0));
/// ```
#[inline]
pub fn sequence_greater_than(s1: u16, s2: u16) -> bool {
    (s1 > s2 && s1 - s2 <= 32768) || (s1 < s2 && s2 - s1 > 32768)
}

/// Is `s1` older than `s2`? The mirror of [`sequence_greater_than`].
///
/// ```
/// use netser_transport::sequence::sequence_less_than;
/// assert!(sequence_less_than(65535, 0));
/// ```
#[inline]
pub fn sequence_less_than(s1: u16, s2: u16) -> bool {
    sequence_greater_than(s2, s1)
}

/// The signed distance from `s2` to `s1` on the sequence circle: positive when `s1` is
/// newer, negative when older, zero when equal.
///
/// It agrees with [`sequence_greater_than`] everywhere: `sequence_difference(a, b) > 0`
/// exactly when `sequence_greater_than(a, b)`. At exactly half the circle apart, where
/// "newer" is ambiguous, the numerically larger sequence counts as newer (as in
/// `sequence_greater_than`), giving `32768` or `-32768`.
///
/// ```
/// use netser_transport::sequence::sequence_difference;
/// assert_eq!(sequence_difference(5, 2), 3);
/// assert_eq!(sequence_difference(2, 5), -3);
/// assert_eq!(sequence_difference(1, 65535), 2); // across the wrap
/// assert_eq!(sequence_difference(65535, 1), -2);
/// assert_eq!(sequence_difference(32768, 0), 32768);
/// assert_eq!(sequence_difference(0, 32768), -32768);
/// ```
#[inline]
pub fn sequence_difference(s1: u16, s2: u16) -> i32 {
    let forward = i32::from(s1.wrapping_sub(s2));
    if forward > 32768 || (forward == 32768 && s1 < s2) {
        forward - 65536
    } else {
        forward
    }
}

/// The largest capacity a [`SequenceBuffer`] may have: a quarter of the sequence circle.
/// The window then stays well inside the half circle that "newer than" compares by, so
/// "inside the window" and "newer than" never disagree. (At half the circle, 32768, a new
/// buffer's oldest sequence is exactly half a circle from its next one, and "newer"
/// cannot tell them apart: sequence 0 would be refused as stale.)
pub const MAX_SEQUENCE_BUFFER_CAPACITY: usize = 16384;

/// A sequence was too old for the buffer's window and could not be inserted.
///
/// ```
/// use netser_transport::sequence::{SequenceBuffer, StaleSequence};
/// let mut buffer = SequenceBuffer::<u8>::new(4);
/// buffer.insert(100, 1).unwrap();
/// assert_eq!(buffer.insert(10, 2), Err(StaleSequence { sequence: 10, oldest: 97 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaleSequence {
    /// The sequence that was refused.
    pub sequence: u16,
    /// The oldest sequence the window still accepts.
    pub oldest: u16,
}

impl core::fmt::Display for StaleSequence {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "sequence {} is stale: the window starts at {}",
            self.sequence, self.oldest
        )
    }
}

impl std::error::Error for StaleSequence {}

#[derive(Debug, Clone)]
struct Slot<T> {
    sequence: u16,
    entry: Option<T>,
}

/// Per-sequence data for the `capacity` most recent sequence numbers.
///
/// Insert, lookup and removal by sequence are one array index and one compare; inserting
/// a sequence newer than the newest first clears the slots in between (at most
/// `capacity` of them), so stale entries never survive a wrap of the 16-bit space.
/// The window is `[sequence() - capacity, sequence())`: anything older is stale.
///
/// ```
/// use netser_transport::sequence::SequenceBuffer;
///
/// let mut sent = SequenceBuffer::new(256);
/// sent.insert(65535, "last before the wrap").unwrap();
/// sent.insert(0, "first after the wrap").unwrap();
/// assert_eq!(sent.get(65535), Some(&"last before the wrap"));
/// assert_eq!(sent.sequence(), 1); // one past the newest
/// assert!(sent.is_stale(65535 - 256));
/// assert_eq!(sent.remove(0), Some("first after the wrap"));
/// assert!(!sent.contains(0));
/// ```
#[derive(Debug, Clone)]
pub struct SequenceBuffer<T> {
    /// One past the newest sequence inserted (the articles' `sequence`).
    sequence: u16,
    mask: usize,
    len: usize,
    slots: Box<[Slot<T>]>,
}

impl<T> SequenceBuffer<T> {
    /// Makes an empty buffer holding `capacity` sequences.
    ///
    /// # Panics
    ///
    /// Panics unless `capacity` is a power of two in `1..=16384`
    /// ([`MAX_SEQUENCE_BUFFER_CAPACITY`]). A power of two divides 65536, so a slot's
    /// index does not jump when the sequence wraps.
    ///
    /// ```
    /// use netser_transport::sequence::SequenceBuffer;
    /// let buffer = SequenceBuffer::<u32>::new(64);
    /// assert_eq!(buffer.capacity(), 64);
    /// assert!(buffer.is_empty());
    /// ```
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two() && capacity <= MAX_SEQUENCE_BUFFER_CAPACITY,
            "sequence buffer capacity must be a power of two in 1..=16384, got {capacity}"
        );
        Self {
            sequence: 0,
            mask: capacity - 1,
            len: 0,
            slots: (0..capacity)
                .map(|_| Slot {
                    sequence: 0,
                    entry: None,
                })
                .collect(),
        }
    }

    /// How many sequences the window holds.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// assert_eq!(SequenceBuffer::<()>::new(32).capacity(), 32);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The heap bytes of a buffer of `capacity` entries (fixed at creation).
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// assert!(SequenceBuffer::<u64>::heap_bytes_for(256) >= 256 * 8);
    /// ```
    pub fn heap_bytes_for(capacity: usize) -> usize {
        capacity.saturating_mul(core::mem::size_of::<Slot<T>>())
    }

    /// The heap bytes this buffer holds.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let buffer = SequenceBuffer::<u64>::new(16);
    /// assert_eq!(buffer.heap_bytes(), SequenceBuffer::<u64>::heap_bytes_for(16));
    /// ```
    pub fn heap_bytes(&self) -> usize {
        Self::heap_bytes_for(self.slots.len())
    }

    /// How many entries are stored.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(3, ()).unwrap();
    /// assert_eq!(buffer.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is nothing stored?
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// assert!(SequenceBuffer::<()>::new(8).is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One past the newest sequence inserted or advanced to (0 for a new buffer).
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(41, ()).unwrap();
    /// assert_eq!(buffer.sequence(), 42);
    /// ```
    #[inline]
    pub fn sequence(&self) -> u16 {
        self.sequence
    }

    /// The oldest sequence still inside the window.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(2, ()).unwrap();
    /// assert_eq!(buffer.oldest(), 65531); // 3 - 8, wrapped
    /// ```
    #[inline]
    pub fn oldest(&self) -> u16 {
        self.sequence.wrapping_sub(self.slots.len() as u16)
    }

    /// Is `sequence` too old to be stored (before the window)?
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(100, ()).unwrap();
    /// assert!(!buffer.is_stale(93));
    /// assert!(buffer.is_stale(92));
    /// ```
    #[inline]
    pub fn is_stale(&self, sequence: u16) -> bool {
        sequence_less_than(sequence, self.oldest())
    }

    #[inline]
    fn index(&self, sequence: u16) -> usize {
        usize::from(sequence) & self.mask
    }

    /// Is an entry stored for exactly this sequence?
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(9, ()).unwrap();
    /// assert!(buffer.contains(9));
    /// assert!(!buffer.contains(1)); // same slot, different sequence
    /// assert!(!buffer.contains(10)); // newer than any stored
    /// ```
    #[inline]
    pub fn contains(&self, sequence: u16) -> bool {
        // Only sequences before `sequence()` are stored: one at or past it (the newest
        // packet yet, the common case) is answered without reading its slot.
        if !sequence_less_than(sequence, self.sequence) {
            return false;
        }
        let slot = &self.slots[self.index(sequence)];
        slot.entry.is_some() && slot.sequence == sequence
    }

    /// The entry stored for `sequence`, if any.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(7, 'x').unwrap();
    /// assert_eq!(buffer.get(7), Some(&'x'));
    /// assert_eq!(buffer.get(15), None);
    /// ```
    #[inline]
    pub fn get(&self, sequence: u16) -> Option<&T> {
        let slot = &self.slots[self.index(sequence)];
        if slot.sequence == sequence {
            slot.entry.as_ref()
        } else {
            None
        }
    }

    /// The entry stored for `sequence`, mutably.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(7, 1).unwrap();
    /// *buffer.get_mut(7).unwrap() += 1;
    /// assert_eq!(buffer.get(7), Some(&2));
    /// ```
    #[inline]
    pub fn get_mut(&mut self, sequence: u16) -> Option<&mut T> {
        let index = self.index(sequence);
        let slot = &mut self.slots[index];
        if slot.sequence == sequence {
            slot.entry.as_mut()
        } else {
            None
        }
    }

    /// Replaces the entry stored for `sequence`, which the caller knows is stored,
    /// without reading the slot: on a cold buffer a store does not wait for memory the
    /// way a load does.
    #[inline]
    pub(crate) fn overwrite(&mut self, sequence: u16, entry: T)
    where
        T: Copy,
    {
        debug_assert!(
            self.contains(sequence),
            "overwrite of {sequence}, not stored"
        );
        let index = self.index(sequence);
        self.slots[index] = Slot {
            sequence,
            entry: Some(entry),
        };
    }

    /// Stores `entry` for `sequence`, replacing any entry it had, and returns it.
    /// A sequence newer than the newest moves the window forward and drops the entries
    /// that fall out of it.
    ///
    /// # Errors
    ///
    /// [`StaleSequence`] if `sequence` is older than the window; nothing changes.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(4);
    /// for sequence in 0..10 {
    ///     buffer.insert(sequence, sequence * 2).unwrap();
    /// }
    /// assert_eq!(buffer.len(), 4); // 6, 7, 8 and 9
    /// assert!(buffer.insert(5, 0).is_err());
    /// ```
    #[inline]
    pub fn insert(&mut self, sequence: u16, entry: T) -> Result<&mut T, StaleSequence> {
        self.insert_evicting(sequence, entry, |_, _| {})
    }

    /// [`insert`](Self::insert), handing every entry it drops (those the window leaves
    /// behind and any entry replaced at `sequence`) to `evicted`, for entries that own
    /// resources to give back.
    ///
    /// # Errors
    ///
    /// [`StaleSequence`] if `sequence` is older than the window; nothing changes.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(2);
    /// buffer.insert(0, "a").unwrap();
    /// buffer.insert(1, "b").unwrap();
    /// let mut dropped = Vec::new();
    /// buffer.insert_evicting(3, "c", |sequence, entry| dropped.push((sequence, entry))).unwrap();
    /// assert_eq!(dropped, [(0, "a"), (1, "b")]);
    /// ```
    pub fn insert_evicting(
        &mut self,
        sequence: u16,
        entry: T,
        mut evicted: impl FnMut(u16, T),
    ) -> Result<&mut T, StaleSequence> {
        if self.is_stale(sequence) {
            return Err(StaleSequence {
                sequence,
                oldest: self.oldest(),
            });
        }
        self.advance_evicting(sequence, &mut evicted);
        let index = self.index(sequence);
        let slot = &mut self.slots[index];
        if let Some(old) = slot.entry.take() {
            self.len -= 1;
            evicted(slot.sequence, old);
        }
        slot.sequence = sequence;
        self.len += 1;
        Ok(slot.entry.insert(entry))
    }

    /// Moves the window forward so that `sequence` is the newest, without storing
    /// anything; entries that fall out of the window are dropped. Older sequences change
    /// nothing.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(4);
    /// buffer.insert(1, ()).unwrap();
    /// buffer.advance(10);
    /// assert_eq!(buffer.sequence(), 11);
    /// assert!(buffer.is_empty());
    /// ```
    pub fn advance(&mut self, sequence: u16) {
        self.advance_evicting(sequence, |_, _| {});
    }

    /// [`advance`](Self::advance), handing every dropped entry to `evicted`.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(4);
    /// buffer.insert(1, 'a').unwrap();
    /// let mut dropped = Vec::new();
    /// buffer.advance_evicting(5, |sequence, entry| dropped.push((sequence, entry)));
    /// assert_eq!(dropped, [(1, 'a')]);
    /// ```
    pub fn advance_evicting(&mut self, sequence: u16, mut evicted: impl FnMut(u16, T)) {
        // `sequence + 1 > self.sequence`: the new newest is at or past the next expected.
        if !sequence_greater_than(sequence.wrapping_add(1), self.sequence) {
            return;
        }
        let span = usize::from(sequence.wrapping_sub(self.sequence)) + 1;
        if self.len == 0 {
            // Nothing to evict: the slots are not touched (a per-packet cache miss in
            // buffers that are empty most of the time, as a reassembly's).
        } else if span >= self.slots.len() {
            for slot in self.slots.iter_mut() {
                if let Some(old) = slot.entry.take() {
                    evicted(slot.sequence, old);
                }
            }
            self.len = 0;
        } else {
            let mut cleared = self.sequence;
            for _ in 0..span {
                let index = self.index(cleared);
                let slot = &mut self.slots[index];
                if let Some(old) = slot.entry.take() {
                    self.len -= 1;
                    evicted(slot.sequence, old);
                }
                cleared = cleared.wrapping_add(1);
            }
        }
        self.sequence = sequence.wrapping_add(1);
    }

    /// Removes and returns the entry for `sequence`, if stored.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(3, 'z').unwrap();
    /// assert_eq!(buffer.remove(3), Some('z'));
    /// assert_eq!(buffer.remove(3), None);
    /// ```
    #[inline]
    pub fn remove(&mut self, sequence: u16) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let index = self.index(sequence);
        let slot = &mut self.slots[index];
        if slot.sequence == sequence && slot.entry.is_some() {
            self.len -= 1;
            slot.entry.take()
        } else {
            None
        }
    }

    /// Empties the buffer and moves the window back to sequence 0.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(500, ()).unwrap();
    /// buffer.reset();
    /// assert!(buffer.is_empty());
    /// assert_eq!(buffer.sequence(), 0);
    /// ```
    pub fn reset(&mut self) {
        for slot in self.slots.iter_mut() {
            slot.entry = None;
        }
        self.len = 0;
        self.sequence = 0;
    }

    /// The stored entries with their sequences, in slot order (not sequence order).
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut buffer = SequenceBuffer::new(8);
    /// buffer.insert(4, 'b').unwrap();
    /// buffer.insert(2, 'a').unwrap();
    /// let entries: Vec<_> = buffer.iter().collect();
    /// assert_eq!(entries, [(2, &'a'), (4, &'b')]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (u16, &T)> + '_ {
        self.slots
            .iter()
            .filter_map(|slot| slot.entry.as_ref().map(|entry| (slot.sequence, entry)))
    }

    /// The articles' ack and ack_bits for this buffer: `ack` is the newest sequence
    /// (`sequence() - 1`) and bit `n` of `ack_bits` is set when `ack - n` is stored.
    ///
    /// ```
    /// # use netser_transport::sequence::SequenceBuffer;
    /// let mut received = SequenceBuffer::new(256);
    /// for sequence in [1, 5, 9, 11] {
    ///     received.insert(sequence, ()).unwrap();
    /// }
    /// assert_eq!(received.generate_ack_bits(), (11, 1 | 1 << 2 | 1 << 6 | 1 << 10));
    /// ```
    pub fn generate_ack_bits(&self) -> (u16, u32) {
        let ack = self.sequence.wrapping_sub(1);
        let mut ack_bits = 0u32;
        for bit in 0..32u16 {
            if self.contains(ack.wrapping_sub(bit)) {
                ack_bits |= 1 << bit;
            }
        }
        (ack, ack_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether the slot of `sequence` holds it: the answer of `contains` without its
    /// shortcut for sequences at or past `sequence()`.
    fn slot_holds<T>(buffer: &SequenceBuffer<T>, sequence: u16) -> bool {
        let slot = &buffer.slots[buffer.index(sequence)];
        slot.entry.is_some() && slot.sequence == sequence
    }

    proptest! {
        /// `contains` answers as the slot does for every sequence, through inserts
        /// (in order, late, far ahead, stale), advances and removals across the wrap.
        #[test]
        fn contains_answers_as_the_slot(
            capacity_log in 0u32..6,
            start in any::<u16>(),
            steps in proptest::collection::vec((0u8..4, 0u16..80), 1..200),
        ) {
            let capacity = 1usize << capacity_log;
            let mut buffer = SequenceBuffer::new(capacity);
            let mut newest = start;
            for (op, delta) in steps {
                match op {
                    0 => {
                        newest = newest.wrapping_add(delta % 3);
                        let _ = buffer.insert(newest, ());
                    }
                    1 => {
                        let _ = buffer.insert(newest.wrapping_sub(delta), ());
                    }
                    2 => {
                        newest = newest.wrapping_add(delta);
                        buffer.advance(newest);
                    }
                    _ => {
                        let _ = buffer.remove(newest.wrapping_sub(delta % 8));
                    }
                }
                let around = buffer.sequence().wrapping_sub(100);
                for i in 0..200u16 {
                    let sequence = around.wrapping_add(i);
                    prop_assert_eq!(buffer.contains(sequence), slot_holds(&buffer, sequence));
                }
                for sequence in [0, 1, 32767, 32768, 32769, 65535] {
                    prop_assert_eq!(buffer.contains(sequence), slot_holds(&buffer, sequence));
                }
            }
        }
    }

    /// The largest buffer works from a fresh start, through several wraps of the
    /// sequence, and keeps a full window: every sequence of the last `capacity` is
    /// stored and the one before them is stale. (At 32768, half the circle, a fresh
    /// buffer refused sequence 0.)
    #[test]
    fn the_largest_capacity_keeps_a_whole_window_across_wraps() {
        let capacity = MAX_SEQUENCE_BUFFER_CAPACITY;
        let mut buffer = SequenceBuffer::new(capacity);
        assert!(!buffer.is_stale(0));
        let mut sequence = 0u16;
        for step in 0..4 * 65536u32 / 1000 {
            for _ in 0..1000 {
                buffer
                    .insert(sequence, step)
                    .expect("the next sequence is never stale");
                sequence = sequence.wrapping_add(1);
            }
        }
        assert_eq!(buffer.len(), capacity);
        let newest = sequence.wrapping_sub(1);
        assert!((0..capacity as u16).all(|back| buffer.contains(newest.wrapping_sub(back))));
        let before = newest.wrapping_sub(capacity as u16);
        assert!(buffer.is_stale(before));
        assert_eq!(
            buffer.insert(before, 0),
            Err(StaleSequence {
                sequence: before,
                oldest: before.wrapping_add(1)
            })
        );
    }

    #[test]
    #[should_panic(expected = "power of two in 1..=16384, got 32768")]
    fn half_the_circle_is_refused() {
        let _ = SequenceBuffer::<()>::new(2 * MAX_SEQUENCE_BUFFER_CAPACITY);
    }

    #[test]
    fn greater_than_and_difference_agree_everywhere_near_the_wrap_and_the_half() {
        for a in (0..=u16::MAX)
            .step_by(251)
            .chain([0, 1, 32767, 32768, 65535])
        {
            for delta in [0u16, 1, 2, 255, 32767, 32768, 32769, 65534, 65535] {
                let b = a.wrapping_add(delta);
                assert_eq!(
                    sequence_difference(b, a) > 0,
                    sequence_greater_than(b, a),
                    "{b} vs {a}"
                );
                assert_eq!(
                    sequence_difference(b, a) < 0,
                    sequence_less_than(b, a),
                    "{b} vs {a}"
                );
                assert_eq!(sequence_difference(b, a) == 0, a == b);
            }
        }
        assert_eq!(sequence_difference(32768, 0), 32768);
        assert_eq!(sequence_difference(32769, 0), -32767);
        assert_eq!(sequence_difference(0, 32768), -32768);
        assert_eq!(sequence_difference(113, 32881), -32768);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn capacity_must_be_a_power_of_two() {
        let _ = SequenceBuffer::<()>::new(100);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn capacity_must_be_at_most_half_the_circle() {
        let _ = SequenceBuffer::<()>::new(65536);
    }

    #[test]
    fn insert_across_the_wrap_keeps_the_window() {
        let mut buffer = SequenceBuffer::new(16);
        for sequence in (65530u16..=65535).chain(0..10) {
            buffer.insert(sequence, u32::from(sequence)).unwrap();
        }
        assert_eq!(buffer.sequence(), 10);
        assert_eq!(buffer.len(), 16);
        for sequence in (65530u16..=65535).chain(0..10) {
            assert_eq!(buffer.get(sequence), Some(&u32::from(sequence)));
        }
        assert!(buffer.is_stale(65529));
        assert_eq!(
            buffer.insert(65529, 0),
            Err(StaleSequence {
                sequence: 65529,
                oldest: 65530
            })
        );
        // The slot of 65529 holds 9, which must not answer for 65529 or 25.
        assert!(!buffer.contains(65529));
        assert!(!buffer.contains(25));
    }

    #[test]
    fn older_insert_inside_the_window_does_not_move_it() {
        let mut buffer = SequenceBuffer::new(8);
        buffer.insert(20, 'n').unwrap();
        buffer.insert(15, 'o').unwrap();
        assert_eq!(buffer.sequence(), 21);
        assert_eq!(buffer.get(15), Some(&'o'));
        assert_eq!(buffer.get(20), Some(&'n'));
    }

    #[test]
    fn ninety_nine_percent_loss_never_leaves_a_stale_entry_across_wraps() {
        // Insert one sequence in a hundred for three trips round the circle. After each
        // insert, exactly the inserted sequences inside the window must be present: an
        // entry from a previous lap sits in a slot the window skipped over, and without
        // clearing it would answer for the same sequence 65536 later.
        let capacity = 256usize;
        let mut buffer = SequenceBuffer::new(capacity);
        let mut inserted: Vec<u32> = Vec::new();
        let mut absolute = 0u32;
        while absolute < 3 * 65536 {
            let sequence = absolute as u16;
            buffer.insert(sequence, absolute).unwrap();
            inserted.push(absolute);
            // Every slot, checked against ground truth.
            let newest = absolute;
            for back in 0..capacity as u32 + 512 {
                let Some(candidate) = newest.checked_sub(back) else {
                    break;
                };
                let expect = back < capacity as u32 && inserted.binary_search(&candidate).is_ok();
                // An entry from another lap would show up here with the wrong value.
                let present = buffer.get(candidate as u16).copied();
                assert_eq!(
                    present,
                    expect.then_some(candidate),
                    "sequence {candidate} at newest {newest}"
                );
            }
            assert!(buffer.len() <= capacity.div_ceil(100));
            absolute += 100;
        }
    }

    #[test]
    fn an_entry_from_the_previous_lap_is_gone_when_its_sequence_comes_round() {
        let mut buffer = SequenceBuffer::new(256);
        buffer.insert(5, "old").unwrap();
        // Step round the circle in jumps that never land on slot 5 (5 mod 256).
        let mut sequence = 5u16;
        for _ in 0..(65536 / 200) {
            sequence = sequence.wrapping_add(200);
            if usize::from(sequence) % 256 != 5 {
                buffer.insert(sequence, "filler").unwrap();
            }
        }
        // Walk up to 65536 + 5 - 1 and ask for 5 again: it is a new packet now.
        buffer.advance(4);
        assert!(!buffer.contains(5));
        assert_eq!(buffer.insert(5, "new").copied(), Ok("new"));
        assert_eq!(buffer.get(5), Some(&"new"));
    }

    #[test]
    fn big_jump_clears_everything_and_evicts_each_entry_once() {
        let mut buffer = SequenceBuffer::new(8);
        for sequence in 0..8 {
            buffer.insert(sequence, sequence).unwrap();
        }
        let mut evicted = Vec::new();
        buffer.advance_evicting(1000, |sequence, entry| evicted.push((sequence, entry)));
        evicted.sort_unstable();
        assert_eq!(evicted, (0..8).map(|s| (s, s)).collect::<Vec<_>>());
        assert!(buffer.is_empty());
        assert_eq!(buffer.sequence(), 1001);
    }

    #[test]
    fn replacing_an_entry_evicts_the_old_one() {
        let mut buffer = SequenceBuffer::new(8);
        buffer.insert(3, 'a').unwrap();
        let mut evicted = Vec::new();
        buffer
            .insert_evicting(3, 'b', |sequence, entry| evicted.push((sequence, entry)))
            .unwrap();
        assert_eq!(evicted, [(3, 'a')]);
        assert_eq!(buffer.len(), 1);
        assert_eq!(buffer.get(3), Some(&'b'));
    }

    #[test]
    fn ack_bits_through_holes_and_bursts_of_loss() {
        let mut received = SequenceBuffer::new(256);
        // 0..=40 with a burst lost at 20..=29 and single holes at 35 and 38.
        for sequence in (0..=40u16).filter(|s| !(20..=29).contains(s) && *s != 35 && *s != 38) {
            received.insert(sequence, ()).unwrap();
        }
        let (ack, ack_bits) = received.generate_ack_bits();
        assert_eq!(ack, 40);
        for bit in 0..32u16 {
            let sequence = 40 - bit;
            let expect = !(20..=29).contains(&sequence) && sequence != 35 && sequence != 38;
            assert_eq!(ack_bits & (1 << bit) != 0, expect, "bit {bit}");
        }
        // A burst longer than 32 leaves only the newest.
        received.insert(100, ()).unwrap();
        assert_eq!(received.generate_ack_bits(), (100, 1));
    }

    #[test]
    fn empty_buffer_acks_65535_with_no_bits() {
        assert_eq!(
            SequenceBuffer::<()>::new(64).generate_ack_bits(),
            (65535, 0)
        );
    }
}
