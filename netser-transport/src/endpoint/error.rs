//! Why a payload could not be sent or a datagram was dropped.

/// A payload that could not be sent.
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, SendError};
/// let mut endpoint = Endpoint::new(0.0, Config { max_packet_size: 4, ..Config::default() }).unwrap();
/// assert_eq!(endpoint.send_packet(0.0, &[0; 5]), Err(SendError::TooLarge { size: 5, max: 4 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// The payload is longer than [`Config::max_packet_size`](super::Config::max_packet_size).
    TooLarge {
        /// The payload's length.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The writer given to [`send_packet_with`](super::Endpoint::send_packet_with)
    /// returned a length past the buffer it was handed.
    WrittenPastCapacity {
        /// The length it returned.
        written: usize,
        /// The buffer's length.
        capacity: usize,
    },
}

impl core::fmt::Display for SendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooLarge { size, max } => {
                write!(f, "payload of {size} bytes is over max_packet_size {max}")
            }
            Self::WrittenPastCapacity { written, capacity } => write!(
                f,
                "the payload writer returned {written} bytes written into a buffer of {capacity}"
            ),
        }
    }
}

impl std::error::Error for SendError {}

/// Why a received datagram was dropped. Each is counted in [`DropCounters`](super::DropCounters).
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, ReceiveError};
/// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// assert_eq!(
///     endpoint.handle_datagram(0.0, &[0x20, 0]).unwrap_err(),
///     ReceiveError::Truncated { needed: 3, found: 2 }
/// );
/// assert_eq!(endpoint.counters().drops.truncated, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReceiveError {
    /// The datagram ends inside a header.
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes there were.
        found: usize,
    },
    /// A prefix byte that is neither a packet's nor a fragment's.
    BadPrefix {
        /// The byte.
        prefix: u8,
    },
    /// A header encoded in a way the writer never produces.
    NonCanonicalHeader,
    /// The payload (or the packet its fragments make) is over `max_packet_size`.
    TooLarge {
        /// Its size, or for a fragmented packet at least its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The packet is older than the receive (or reassembly) window.
    Stale {
        /// Its sequence.
        sequence: u16,
    },
    /// The packet was already received.
    Duplicate {
        /// Its sequence.
        sequence: u16,
    },
    /// The fragment count is over `max_fragments`.
    FragmentCountTooLarge {
        /// The count in the header.
        num_fragments: u16,
        /// The limit.
        max: usize,
    },
    /// The fragment id is not below the fragment count.
    FragmentIdOutOfRange {
        /// The id.
        fragment_id: u8,
        /// The count.
        num_fragments: u16,
    },
    /// A fragment's count differs from the first fragment received for its packet.
    FragmentCountMismatch {
        /// The packet.
        sequence: u16,
        /// The count of the first fragment.
        expected: u16,
        /// The count of this one.
        found: u16,
    },
    /// The fragment carries more than `fragment_size` bytes.
    FragmentTooBig {
        /// Its data bytes.
        size: usize,
        /// `fragment_size`.
        max: usize,
    },
    /// A fragment other than the last is not exactly `fragment_size`, or the last is
    /// empty.
    FragmentSizeMismatch {
        /// The fragment.
        fragment_id: u8,
        /// Its data bytes.
        size: usize,
        /// What it must be (for the last, the most it may be).
        expected: usize,
    },
    /// Fragment 0's packet header has a different sequence from the fragment header.
    FragmentSequenceMismatch {
        /// The fragment header's sequence.
        fragment: u16,
        /// The packet header's.
        packet: u16,
    },
    /// This fragment of this packet is already held.
    DuplicateFragment {
        /// The packet.
        sequence: u16,
        /// The fragment.
        fragment_id: u8,
    },
    /// No run of reassembly blocks could be had for the packet (the config checks make
    /// this unreachable).
    ReassemblyFull {
        /// The packet.
        sequence: u16,
    },
}

impl core::fmt::Display for ReceiveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Truncated { needed, found } => {
                write!(f, "truncated header: needed {needed} bytes, found {found}")
            }
            Self::BadPrefix { prefix } => write!(f, "bad prefix byte {prefix:#04x}"),
            Self::NonCanonicalHeader => write!(f, "non-canonical packet header"),
            Self::TooLarge { size, max } => {
                write!(f, "packet of {size} bytes is over max_packet_size {max}")
            }
            Self::Stale { sequence } => write!(f, "stale packet {sequence}"),
            Self::Duplicate { sequence } => write!(f, "duplicate packet {sequence}"),
            Self::FragmentCountTooLarge { num_fragments, max } => {
                write!(f, "{num_fragments} fragments is over max_fragments {max}")
            }
            Self::FragmentIdOutOfRange {
                fragment_id,
                num_fragments,
            } => write!(
                f,
                "fragment id {fragment_id} out of range for {num_fragments} fragments"
            ),
            Self::FragmentCountMismatch {
                sequence,
                expected,
                found,
            } => write!(
                f,
                "packet {sequence} has {expected} fragments but this fragment says {found}"
            ),
            Self::FragmentTooBig { size, max } => {
                write!(f, "fragment of {size} bytes is over fragment_size {max}")
            }
            Self::FragmentSizeMismatch {
                fragment_id,
                size,
                expected,
            } => write!(
                f,
                "fragment {fragment_id} has {size} bytes, expected {expected}"
            ),
            Self::FragmentSequenceMismatch { fragment, packet } => write!(
                f,
                "fragment of packet {fragment} carries a header for packet {packet}"
            ),
            Self::DuplicateFragment {
                sequence,
                fragment_id,
            } => write!(f, "duplicate fragment {fragment_id} of packet {sequence}"),
            Self::ReassemblyFull { sequence } => {
                write!(f, "no reassembly memory for packet {sequence}")
            }
        }
    }
}

impl std::error::Error for ReceiveError {}
