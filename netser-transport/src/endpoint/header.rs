//! The packet header and fragment header, byte for byte as the `reliable` library writes
//! them (see the repository's `WIRE.md`, section 3).
//!
//! A regular packet starts with a prefix byte whose bit 0 is clear, then the sequence
//! (little-endian u16), then the ack: one byte holding `sequence - ack` when that wrapped
//! difference is at most 255 (prefix bit 5), else the ack itself as a little-endian u16.
//! Then come the bytes of ack_bits that are not `0xFF`, lowest byte first; prefix bits 1
//! to 4 say which are present, and an absent byte means "all eight packets acked", the
//! common case, so a header on a clean link is 4 bytes. Prefix bits 6 and 7 are zero.
//!
//! A fragment starts with the prefix byte `1`, the packet's sequence (little-endian u16),
//! the fragment id and `num_fragments - 1` (one byte each). Fragment 0 carries the packet
//! header right after, then every fragment carries its slice of the payload.
//!
//! Reading is strict: a header the writer would not produce (a present ack_bits byte equal
//! to `0xFF`, a two-byte ack that fits in one, prefix bits 6 or 7 set) is refused, so every
//! header has exactly one encoding.

use super::ReceiveError;

/// The most bytes a packet header takes: prefix, sequence (2), ack (2), ack_bits (4).
pub const MAX_PACKET_HEADER_BYTES: usize = 9;

/// The bytes of a fragment header: prefix, sequence (2), fragment id, fragment count - 1.
pub const FRAGMENT_HEADER_BYTES: usize = 5;

/// The prefix byte of every fragment.
pub const FRAGMENT_PREFIX: u8 = 1;

/// The most fragments the one-byte count field can describe.
pub const MAX_FRAGMENTS: usize = 256;

const PREFIX_FRAGMENT: u8 = 1;
const PREFIX_ACK_IS_DIFFERENCE: u8 = 1 << 5;
const PREFIX_RESERVED: u8 = 0b1100_0000;

/// The header of every packet: its sequence, and the receiver's ack state (the newest
/// sequence it received and a bit for each of the 32 before it, bit 0 being `ack` itself).
///
/// ```
/// use netser_transport::endpoint::header::PacketHeader;
///
/// let header = PacketHeader { sequence: 200, ack: 100, ack_bits: 0xFFFF_FFFF };
/// let (bytes, len) = header.encode();
/// assert_eq!(&bytes[..len], [0x20, 200, 0, 100]); // a clean link: 4 bytes
/// assert_eq!(PacketHeader::read(&bytes[..len]), Ok((header, 4)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketHeader {
    /// The sequence of this packet.
    pub sequence: u16,
    /// The newest sequence the sender of this packet has received.
    pub ack: u16,
    /// Bit `n` set: the sender has received `ack - n`.
    pub ack_bits: u32,
}

impl PacketHeader {
    /// The prefix byte this header is written with.
    ///
    /// ```
    /// # use netser_transport::endpoint::header::PacketHeader;
    /// let header = PacketHeader { sequence: 10000, ack: 100, ack_bits: 0 };
    /// assert_eq!(header.prefix(), 0b0001_1110); // four ack_bits bytes, two-byte ack
    /// ```
    #[inline]
    pub fn prefix(&self) -> u8 {
        let mut prefix = 0u8;
        for byte in 0..4 {
            if (self.ack_bits >> (8 * byte)) as u8 != 0xFF {
                prefix |= 1 << (1 + byte);
            }
        }
        if self.sequence.wrapping_sub(self.ack) <= 255 {
            prefix |= PREFIX_ACK_IS_DIFFERENCE;
        }
        prefix
    }

    /// How many bytes [`encode`](Self::encode) writes: 4 to 9.
    ///
    /// ```
    /// # use netser_transport::endpoint::header::PacketHeader;
    /// assert_eq!(PacketHeader { sequence: 10000, ack: 100, ack_bits: 0 }.encoded_len(), 9);
    /// ```
    #[inline]
    pub fn encoded_len(&self) -> usize {
        let prefix = self.prefix();
        let ack_bytes = if prefix & PREFIX_ACK_IS_DIFFERENCE != 0 {
            1
        } else {
            2
        };
        3 + ack_bytes + (prefix & 0b1_1110).count_ones() as usize
    }

    /// Writes the header; returns the bytes and how many of them are used.
    ///
    /// ```
    /// # use netser_transport::endpoint::header::PacketHeader;
    /// // Sequence 0 before anything was received: ack 65535 (0 - 1), no ack_bits.
    /// let (bytes, len) = PacketHeader { sequence: 0, ack: 65535, ack_bits: 0 }.encode();
    /// assert_eq!(&bytes[..len], [0x3e, 0, 0, 1, 0, 0, 0, 0]);
    /// ```
    #[inline]
    pub fn encode(&self) -> ([u8; MAX_PACKET_HEADER_BYTES], usize) {
        let prefix = self.prefix();
        let mut bytes = [0u8; MAX_PACKET_HEADER_BYTES];
        bytes[0] = prefix;
        bytes[1..3].copy_from_slice(&self.sequence.to_le_bytes());
        let mut len = 3;
        if prefix & PREFIX_ACK_IS_DIFFERENCE != 0 {
            bytes[len] = self.sequence.wrapping_sub(self.ack) as u8;
            len += 1;
        } else {
            bytes[len..len + 2].copy_from_slice(&self.ack.to_le_bytes());
            len += 2;
        }
        for byte in 0..4 {
            if prefix & (1 << (1 + byte)) != 0 {
                bytes[len] = (self.ack_bits >> (8 * byte)) as u8;
                len += 1;
            }
        }
        (bytes, len)
    }

    /// Reads a header from the start of `data`; returns it and its length in bytes.
    /// The payload follows.
    ///
    /// # Errors
    ///
    /// [`ReceiveError::Truncated`] if `data` ends inside the header,
    /// [`ReceiveError::BadPrefix`] for a fragment prefix or reserved bits,
    /// [`ReceiveError::NonCanonicalHeader`] for an encoding the writer never produces.
    ///
    /// ```
    /// use netser_transport::endpoint::{header::PacketHeader, ReceiveError};
    /// assert_eq!(
    ///     PacketHeader::read(&[0x20, 1, 0]),
    ///     Err(ReceiveError::Truncated { needed: 4, found: 3 })
    /// );
    /// ```
    #[inline]
    pub fn read(data: &[u8]) -> Result<(Self, usize), ReceiveError> {
        if data.len() < 3 {
            return Err(ReceiveError::Truncated {
                needed: 3,
                found: data.len(),
            });
        }
        let prefix = data[0];
        if prefix & (PREFIX_FRAGMENT | PREFIX_RESERVED) != 0 {
            return Err(ReceiveError::BadPrefix { prefix });
        }
        let ack_is_difference = prefix & PREFIX_ACK_IS_DIFFERENCE != 0;
        let needed =
            3 + if ack_is_difference { 1 } else { 2 } + (prefix & 0b1_1110).count_ones() as usize;
        if data.len() < needed {
            return Err(ReceiveError::Truncated {
                needed,
                found: data.len(),
            });
        }
        let sequence = u16::from_le_bytes([data[1], data[2]]);
        let mut at = 3;
        let ack = if ack_is_difference {
            at += 1;
            sequence.wrapping_sub(u16::from(data[3]))
        } else {
            at += 2;
            let ack = u16::from_le_bytes([data[3], data[4]]);
            if sequence.wrapping_sub(ack) <= 255 {
                return Err(ReceiveError::NonCanonicalHeader);
            }
            ack
        };
        let mut ack_bits = 0u32;
        for byte in 0..4 {
            let value = if prefix & (1 << (1 + byte)) != 0 {
                let value = data[at];
                at += 1;
                if value == 0xFF {
                    return Err(ReceiveError::NonCanonicalHeader);
                }
                value
            } else {
                0xFF
            };
            ack_bits |= u32::from(value) << (8 * byte);
        }
        Ok((
            Self {
                sequence,
                ack,
                ack_bits,
            },
            at,
        ))
    }
}

/// The header in front of each fragment of a packet sent in pieces.
///
/// ```
/// use netser_transport::endpoint::header::FragmentHeader;
///
/// let header = FragmentHeader { sequence: 0x1234, fragment_id: 2, num_fragments: 16 };
/// assert_eq!(header.encode(), [1, 0x34, 0x12, 2, 15]);
/// assert_eq!(FragmentHeader::read(&header.encode(), 16), Ok(header));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentHeader {
    /// The sequence of the packet this fragment belongs to.
    pub sequence: u16,
    /// Which fragment this is, `0..num_fragments`.
    pub fragment_id: u8,
    /// How many fragments the packet has, `1..=256` (sent as `num_fragments - 1`).
    pub num_fragments: u16,
}

impl FragmentHeader {
    /// Writes the header.
    ///
    /// # Panics
    ///
    /// Panics if `num_fragments` is not in `1..=256`, which the endpoint never makes.
    ///
    /// ```
    /// # use netser_transport::endpoint::header::FragmentHeader;
    /// let header = FragmentHeader { sequence: 1, fragment_id: 255, num_fragments: 256 };
    /// assert_eq!(header.encode(), [1, 1, 0, 255, 255]);
    /// ```
    #[inline]
    pub fn encode(&self) -> [u8; FRAGMENT_HEADER_BYTES] {
        assert!(
            (1..=MAX_FRAGMENTS as u16).contains(&self.num_fragments),
            "num_fragments {} outside 1..=256",
            self.num_fragments
        );
        let [low, high] = self.sequence.to_le_bytes();
        [
            FRAGMENT_PREFIX,
            low,
            high,
            self.fragment_id,
            (self.num_fragments - 1) as u8,
        ]
    }

    /// Reads a fragment header from the start of `data`, refusing a fragment count above
    /// `max_fragments` and a fragment id outside the count. The fragment's data (for
    /// fragment 0, the packet header and then the data) follows the five bytes.
    ///
    /// # Errors
    ///
    /// [`ReceiveError::Truncated`], [`ReceiveError::BadPrefix`],
    /// [`ReceiveError::FragmentCountTooLarge`], [`ReceiveError::FragmentIdOutOfRange`].
    ///
    /// ```
    /// use netser_transport::endpoint::{header::FragmentHeader, ReceiveError};
    /// // Fragment 7 of a packet that has 2.
    /// assert_eq!(
    ///     FragmentHeader::read(&[1, 0, 0, 7, 1], 256),
    ///     Err(ReceiveError::FragmentIdOutOfRange { fragment_id: 7, num_fragments: 2 })
    /// );
    /// ```
    #[inline]
    pub fn read(data: &[u8], max_fragments: usize) -> Result<Self, ReceiveError> {
        if data.len() < FRAGMENT_HEADER_BYTES {
            return Err(ReceiveError::Truncated {
                needed: FRAGMENT_HEADER_BYTES,
                found: data.len(),
            });
        }
        if data[0] != FRAGMENT_PREFIX {
            return Err(ReceiveError::BadPrefix { prefix: data[0] });
        }
        let sequence = u16::from_le_bytes([data[1], data[2]]);
        let fragment_id = data[3];
        let num_fragments = u16::from(data[4]) + 1;
        if usize::from(num_fragments) > max_fragments {
            return Err(ReceiveError::FragmentCountTooLarge {
                num_fragments,
                max: max_fragments,
            });
        }
        if u16::from(fragment_id) >= num_fragments {
            return Err(ReceiveError::FragmentIdOutOfRange {
                fragment_id,
                num_fragments,
            });
        }
        Ok(Self {
            sequence,
            fragment_id,
            num_fragments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn the_four_cases_of_the_reference_have_the_reference_lengths() {
        // Far apart, nothing acked: every field in full.
        let worst = PacketHeader {
            sequence: 10000,
            ack: 100,
            ack_bits: 0,
        };
        let (bytes, len) = worst.encode();
        assert_eq!(len, 9);
        assert_eq!(bytes, [0x1e, 0x10, 0x27, 100, 0, 0, 0, 0, 0]);
        // Far apart, three bytes of ack_bits with holes.
        let rare = PacketHeader {
            ack_bits: 0xFEFE_FFFE,
            ..worst
        };
        let (bytes, len) = rare.encode();
        assert_eq!(&bytes[..len], [0x1a, 0x10, 0x27, 100, 0, 0xfe, 0xfe, 0xfe]);
        // Close together with one hole.
        let common = PacketHeader {
            sequence: 200,
            ack: 100,
            ack_bits: 0xFFFE_FFFF,
        };
        let (bytes, len) = common.encode();
        assert_eq!(&bytes[..len], [0x28, 200, 0, 100, 0xfe]);
        // No loss.
        let ideal = PacketHeader {
            ack_bits: u32::MAX,
            ..common
        };
        assert_eq!(ideal.encoded_len(), 4);
        for header in [worst, rare, common, ideal] {
            let (bytes, len) = header.encode();
            assert_eq!(header.encoded_len(), len);
            assert_eq!(PacketHeader::read(&bytes[..len]), Ok((header, len)));
        }
    }

    #[test]
    fn random_headers_round_trip_and_every_truncation_is_refused() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let random = xorshift(&mut state);
            // Bias ack_bits towards bytes of 0xFF so every prefix combination occurs.
            let mut ack_bits = (random >> 32) as u32;
            for byte in 0..4 {
                if (random >> (8 + byte)) & 1 == 1 {
                    ack_bits |= 0xFF << (8 * byte);
                }
            }
            let sequence = random as u16;
            let ack = if random & (1 << 7) != 0 {
                sequence.wrapping_sub((random >> 16) as u8 as u16)
            } else {
                (random >> 16) as u16
            };
            let header = PacketHeader {
                sequence,
                ack,
                ack_bits,
            };
            let (bytes, len) = header.encode();
            assert_eq!(PacketHeader::read(&bytes[..len]), Ok((header, len)));
            for short in 0..len {
                assert!(matches!(
                    PacketHeader::read(&bytes[..short]),
                    Err(ReceiveError::Truncated { .. })
                ));
            }
        }
    }

    #[test]
    fn non_canonical_encodings_are_refused() {
        // ack_bits byte 0 present but 0xFF.
        assert_eq!(
            PacketHeader::read(&[0x22, 5, 0, 1, 0xff]),
            Err(ReceiveError::NonCanonicalHeader)
        );
        // Two-byte ack that fits in the one-byte difference.
        assert_eq!(
            PacketHeader::read(&[0x00, 5, 0, 4, 0]),
            Err(ReceiveError::NonCanonicalHeader)
        );
        // Reserved prefix bits.
        assert_eq!(
            PacketHeader::read(&[0x60, 5, 0, 1]),
            Err(ReceiveError::BadPrefix { prefix: 0x60 })
        );
        // A fragment prefix is not a packet header.
        assert_eq!(
            PacketHeader::read(&[0x01, 5, 0, 1]),
            Err(ReceiveError::BadPrefix { prefix: 1 })
        );
    }

    #[test]
    fn fragment_header_checks() {
        assert_eq!(
            FragmentHeader::read(&[1, 0, 0, 0], 256),
            Err(ReceiveError::Truncated {
                needed: 5,
                found: 4
            })
        );
        assert_eq!(
            FragmentHeader::read(&[3, 0, 0, 0, 0], 256),
            Err(ReceiveError::BadPrefix { prefix: 3 })
        );
        assert_eq!(
            FragmentHeader::read(&[1, 0, 0, 0, 16], 16),
            Err(ReceiveError::FragmentCountTooLarge {
                num_fragments: 17,
                max: 16
            })
        );
        assert_eq!(
            FragmentHeader::read(&[1, 9, 0, 1, 0], 16),
            Err(ReceiveError::FragmentIdOutOfRange {
                fragment_id: 1,
                num_fragments: 1
            })
        );
        let header = FragmentHeader::read(&[1, 0xff, 0xff, 255, 255], 256).unwrap();
        assert_eq!(
            header,
            FragmentHeader {
                sequence: 65535,
                fragment_id: 255,
                num_fragments: 256
            }
        );
    }
}
