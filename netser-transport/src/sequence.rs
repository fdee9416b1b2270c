//! 16-bit sequence numbers that wrap, as the articles use for packets, acks and chunk ids.

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
