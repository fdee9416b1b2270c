//! The two packets of the chunk system, byte for byte (see the repository's `WIRE.md`, section 4).
//!
//! All integers are little-endian. A slice packet:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | [`SLICE_PACKET_TYPE`] |
//! | 1 | 2 | chunk id |
//! | 3 | 2 | slice id, `0..slice_count` |
//! | 5 | 2 | slice count, `1..=max_slices` |
//! | 7 | 2 | slice bytes, `1..=slice_size`: **only in the last slice** |
//! | 7 or 9 | n | slice data: `slice_size` bytes, or slice bytes in the last slice |
//!
//! An ack packet:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | [`ACK_PACKET_TYPE`] |
//! | 1 | 2 | chunk id |
//! | 3 | 2 | slice count, `1..=max_slices` |
//! | 5 | ceil(count / 8) | received bits: slice `i` is bit `i % 8` of byte `i / 8`; unused high bits zero |
//!
//! As in the article, only the last slice says its size (all the others are exactly one
//! slice long), and the ack carries the whole bitfield so a lost ack costs nothing. Every
//! length is exact: a packet that is shorter or longer than its header says is refused.

use super::{ChunkConfig, ChunkId, ChunkPacketError};

/// First byte of a slice packet, so the connection layer can tell chunk packets apart.
///
/// ```
/// assert_eq!(netser_transport::chunk::SLICE_PACKET_TYPE, 0xc1);
/// ```
pub const SLICE_PACKET_TYPE: u8 = 0xc1;

/// First byte of a slice ack packet.
///
/// ```
/// assert_eq!(netser_transport::chunk::ACK_PACKET_TYPE, 0xc2);
/// ```
pub const ACK_PACKET_TYPE: u8 = 0xc2;

/// Bytes before the data in a slice packet other than the last.
///
/// ```
/// assert_eq!(netser_transport::chunk::SLICE_HEADER_BYTES, 7);
/// ```
pub const SLICE_HEADER_BYTES: usize = 7;

/// Bytes before the data in the last slice packet of a chunk (it adds its size).
///
/// ```
/// assert_eq!(netser_transport::chunk::LAST_SLICE_HEADER_BYTES, 9);
/// ```
pub const LAST_SLICE_HEADER_BYTES: usize = 9;

/// Bytes before the bitfield in an ack packet.
///
/// ```
/// assert_eq!(netser_transport::chunk::ACK_HEADER_BYTES, 5);
/// ```
pub const ACK_HEADER_BYTES: usize = 5;

/// One slice of a chunk, borrowed from a received packet or from the sender's chunk.
///
/// ```
/// use netser_transport::chunk::{ChunkConfig, SlicePacket};
/// let config = ChunkConfig::default();
/// let slice = SlicePacket { chunk_id: 7, slice_id: 0, slice_count: 1, data: b"hello" };
/// let mut buf = [0u8; 64];
/// let len = slice.encode(&mut buf).unwrap();
/// assert_eq!(&buf[..len], &[0xc1, 7, 0, 0, 0, 1, 0, 5, 0, b'h', b'e', b'l', b'l', b'o']);
/// assert_eq!(SlicePacket::decode(&buf[..len], &config), Ok(slice));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlicePacket<'a> {
    /// Which chunk this slice belongs to.
    pub chunk_id: ChunkId,
    /// Position of the slice in the chunk, `0..slice_count`.
    pub slice_id: u16,
    /// Number of slices in the chunk.
    pub slice_count: u16,
    /// The slice's bytes.
    pub data: &'a [u8],
}

impl<'a> SlicePacket<'a> {
    /// Is this the last slice of its chunk (the one that carries its size)?
    ///
    /// ```
    /// use netser_transport::chunk::SlicePacket;
    /// let s = SlicePacket { chunk_id: 0, slice_id: 2, slice_count: 3, data: &[1] };
    /// assert!(s.is_last());
    /// ```
    pub fn is_last(&self) -> bool {
        u32::from(self.slice_id) + 1 == u32::from(self.slice_count)
    }

    /// Bytes this packet takes on the wire.
    ///
    /// ```
    /// use netser_transport::chunk::SlicePacket;
    /// let s = SlicePacket { chunk_id: 0, slice_id: 0, slice_count: 2, data: &[0; 1024] };
    /// assert_eq!(s.encoded_len(), 7 + 1024);
    /// ```
    pub fn encoded_len(&self) -> usize {
        self.header_len() + self.data.len()
    }

    fn header_len(&self) -> usize {
        if self.is_last() {
            LAST_SLICE_HEADER_BYTES
        } else {
            SLICE_HEADER_BYTES
        }
    }

    /// Writes the packet into `out` and returns its length.
    ///
    /// The sender only encodes slices it cut itself; this checks the one thing a caller
    /// could get wrong, the room in `out`, and that the last slice's size fits its field.
    ///
    /// # Errors
    /// [`ChunkPacketError::BufferTooSmall`] when `out` is shorter than
    /// [`encoded_len`](Self::encoded_len); [`ChunkPacketError::LastSliceSize`] when the last
    /// slice is empty or longer than 65535 bytes.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkPacketError, SlicePacket};
    /// let s = SlicePacket { chunk_id: 0, slice_id: 0, slice_count: 2, data: &[0; 10] };
    /// assert!(matches!(s.encode(&mut [0; 4]), Err(ChunkPacketError::BufferTooSmall { .. })));
    /// ```
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ChunkPacketError> {
        let len = self.encoded_len();
        if out.len() < len {
            return Err(ChunkPacketError::BufferTooSmall {
                needed: len,
                available: out.len(),
            });
        }
        out[0] = SLICE_PACKET_TYPE;
        out[1..3].copy_from_slice(&self.chunk_id.to_le_bytes());
        out[3..5].copy_from_slice(&self.slice_id.to_le_bytes());
        out[5..7].copy_from_slice(&self.slice_count.to_le_bytes());
        if self.is_last() {
            let bytes = u16::try_from(self.data.len())
                .ok()
                .filter(|&b| b > 0)
                .ok_or(ChunkPacketError::LastSliceSize {
                    bytes: self.data.len(),
                    slice_size: usize::from(u16::MAX),
                })?;
            out[7..9].copy_from_slice(&bytes.to_le_bytes());
        }
        out[self.header_len()..len].copy_from_slice(self.data);
        Ok(len)
    }

    /// Reads a slice packet, refusing anything that `config`'s sender could not have
    /// written. Checks, in order: the packet type, the header length, the slice count
    /// (`1..=max_slices`), the slice id (`< slice count`), the last slice's size
    /// (`1..=slice_size`), and that the data is exactly as long as the slice.
    ///
    /// # Errors
    /// One [`ChunkPacketError`] per reason: `WrongPacketType`, `Truncated`,
    /// `SliceCountOutOfRange`, `SliceIdOutOfRange`, `LastSliceSize`, `SliceTooLong`.
    ///
    /// ```
    /// use netser_transport::chunk::{ChunkConfig, ChunkPacketError, SlicePacket};
    /// // Slice 3 of a 2-slice chunk.
    /// let bytes = [0xc1, 0, 0, 3, 0, 2, 0];
    /// assert_eq!(
    ///     SlicePacket::decode(&bytes, &ChunkConfig::default()),
    ///     Err(ChunkPacketError::SliceIdOutOfRange { slice_id: 3, slice_count: 2 })
    /// );
    /// ```
    pub fn decode(bytes: &'a [u8], config: &ChunkConfig) -> Result<Self, ChunkPacketError> {
        check_type(bytes, SLICE_PACKET_TYPE)?;
        let header = bytes.get(..SLICE_HEADER_BYTES).ok_or({
            ChunkPacketError::Truncated {
                needed: SLICE_HEADER_BYTES,
                found: bytes.len(),
            }
        })?;
        let chunk_id = u16::from_le_bytes([header[1], header[2]]);
        let slice_id = u16::from_le_bytes([header[3], header[4]]);
        let slice_count = u16::from_le_bytes([header[5], header[6]]);
        check_slice_count(slice_count, config)?;
        if slice_id >= slice_count {
            return Err(ChunkPacketError::SliceIdOutOfRange {
                slice_id,
                slice_count,
            });
        }
        let (data_start, expected) = if slice_id + 1 == slice_count {
            let size = bytes.get(7..9).ok_or(ChunkPacketError::Truncated {
                needed: LAST_SLICE_HEADER_BYTES,
                found: bytes.len(),
            })?;
            let slice_bytes = usize::from(u16::from_le_bytes([size[0], size[1]]));
            if slice_bytes == 0 || slice_bytes > config.slice_size {
                return Err(ChunkPacketError::LastSliceSize {
                    bytes: slice_bytes,
                    slice_size: config.slice_size,
                });
            }
            (LAST_SLICE_HEADER_BYTES, slice_bytes)
        } else {
            (SLICE_HEADER_BYTES, config.slice_size)
        };
        let data = &bytes[data_start..];
        if data.len() < expected {
            return Err(ChunkPacketError::Truncated {
                needed: data_start + expected,
                found: bytes.len(),
            });
        }
        if data.len() > expected {
            return Err(ChunkPacketError::SliceTooLong {
                bytes: data.len(),
                expected,
            });
        }
        Ok(Self {
            chunk_id,
            slice_id,
            slice_count,
            data,
        })
    }
}

/// The receiver's whole view of a chunk: which of its slices have arrived.
///
/// `received` holds `ceil(slice_count / 8)` bytes, slice `i` in bit `i % 8` of byte `i / 8`.
///
/// ```
/// use netser_transport::chunk::{AckPacket, ChunkConfig};
/// let ack = AckPacket { chunk_id: 1, slice_count: 10, received: &[0b0000_0101, 0b10] };
/// assert!(ack.is_received(0) && !ack.is_received(1) && ack.is_received(9));
/// let mut buf = [0u8; 16];
/// let len = ack.encode(&mut buf).unwrap();
/// assert_eq!(&buf[..len], &[0xc2, 1, 0, 10, 0, 0b101, 0b10]);
/// assert_eq!(AckPacket::decode(&buf[..len], &ChunkConfig::default()), Ok(ack));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckPacket<'a> {
    /// The chunk being acked.
    pub chunk_id: ChunkId,
    /// Number of slices in that chunk.
    pub slice_count: u16,
    /// The bitfield of received slices.
    pub received: &'a [u8],
}

impl AckPacket<'_> {
    /// Has slice `slice_id` been received? False beyond the bitfield.
    ///
    /// ```
    /// use netser_transport::chunk::AckPacket;
    /// let ack = AckPacket { chunk_id: 0, slice_count: 3, received: &[0b100] };
    /// assert!(ack.is_received(2) && !ack.is_received(3) && !ack.is_received(500));
    /// ```
    pub fn is_received(&self, slice_id: u16) -> bool {
        slice_id < self.slice_count
            && self
                .received
                .get(usize::from(slice_id / 8))
                .is_some_and(|byte| byte & (1 << (slice_id % 8)) != 0)
    }

    /// Bytes this packet takes on the wire.
    ///
    /// ```
    /// use netser_transport::chunk::AckPacket;
    /// let ack = AckPacket { chunk_id: 0, slice_count: 256, received: &[0xff; 32] };
    /// assert_eq!(ack.encoded_len(), 37);
    /// ```
    pub fn encoded_len(&self) -> usize {
        ACK_HEADER_BYTES + bitfield_bytes(self.slice_count)
    }

    /// Writes the packet into `out` and returns its length.
    ///
    /// # Errors
    /// [`ChunkPacketError::BufferTooSmall`] when `out` is too short;
    /// [`ChunkPacketError::AckLength`] when `received` is not `ceil(slice_count / 8)` bytes.
    ///
    /// ```
    /// use netser_transport::chunk::{AckPacket, ChunkPacketError};
    /// let ack = AckPacket { chunk_id: 0, slice_count: 9, received: &[0xff] };
    /// assert!(matches!(ack.encode(&mut [0; 16]), Err(ChunkPacketError::AckLength { .. })));
    /// ```
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ChunkPacketError> {
        let len = self.encoded_len();
        if self.received.len() != bitfield_bytes(self.slice_count) {
            return Err(ChunkPacketError::AckLength {
                expected: len,
                found: ACK_HEADER_BYTES + self.received.len(),
            });
        }
        if out.len() < len {
            return Err(ChunkPacketError::BufferTooSmall {
                needed: len,
                available: out.len(),
            });
        }
        out[0] = ACK_PACKET_TYPE;
        out[1..3].copy_from_slice(&self.chunk_id.to_le_bytes());
        out[3..5].copy_from_slice(&self.slice_count.to_le_bytes());
        out[ACK_HEADER_BYTES..len].copy_from_slice(self.received);
        Ok(len)
    }
}

impl<'a> AckPacket<'a> {
    /// Reads an ack packet: the packet type, the slice count (`1..=max_slices`), an exact
    /// length for that count, and zero bits past the last slice.
    ///
    /// # Errors
    /// `WrongPacketType`, `Truncated`, `SliceCountOutOfRange`, `AckLength` or
    /// `AckPaddingBits` ([`ChunkPacketError`]).
    ///
    /// ```
    /// use netser_transport::chunk::{AckPacket, ChunkConfig, ChunkPacketError};
    /// // 3 slices but a bit set for slice 5.
    /// assert_eq!(
    ///     AckPacket::decode(&[0xc2, 0, 0, 3, 0, 0b10_0001], &ChunkConfig::default()),
    ///     Err(ChunkPacketError::AckPaddingBits)
    /// );
    /// ```
    pub fn decode(bytes: &'a [u8], config: &ChunkConfig) -> Result<Self, ChunkPacketError> {
        check_type(bytes, ACK_PACKET_TYPE)?;
        let header = bytes
            .get(..ACK_HEADER_BYTES)
            .ok_or(ChunkPacketError::Truncated {
                needed: ACK_HEADER_BYTES,
                found: bytes.len(),
            })?;
        let chunk_id = u16::from_le_bytes([header[1], header[2]]);
        let slice_count = u16::from_le_bytes([header[3], header[4]]);
        check_slice_count(slice_count, config)?;
        let expected = ACK_HEADER_BYTES + bitfield_bytes(slice_count);
        if bytes.len() != expected {
            return Err(ChunkPacketError::AckLength {
                expected,
                found: bytes.len(),
            });
        }
        let received = &bytes[ACK_HEADER_BYTES..];
        let used_in_last = slice_count % 8;
        if used_in_last != 0 {
            let last = received[received.len() - 1];
            if last >> used_in_last != 0 {
                return Err(ChunkPacketError::AckPaddingBits);
            }
        }
        Ok(Self {
            chunk_id,
            slice_count,
            received,
        })
    }
}

/// Bytes in the received bitfield of a chunk of `slice_count` slices.
pub(crate) fn bitfield_bytes(slice_count: u16) -> usize {
    usize::from(slice_count).div_ceil(8)
}

fn check_type(bytes: &[u8], expected: u8) -> Result<(), ChunkPacketError> {
    match bytes.first() {
        None => Err(ChunkPacketError::Truncated {
            needed: 1,
            found: 0,
        }),
        Some(&found) if found != expected => {
            Err(ChunkPacketError::WrongPacketType { expected, found })
        }
        Some(_) => Ok(()),
    }
}

fn check_slice_count(slice_count: u16, config: &ChunkConfig) -> Result<(), ChunkPacketError> {
    if slice_count == 0 || usize::from(slice_count) > config.max_slices {
        return Err(ChunkPacketError::SliceCountOutOfRange {
            slice_count,
            max_slices: config.max_slices,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> ChunkConfig {
        ChunkConfig {
            slice_size: 4,
            max_slices: 10,
            ..ChunkConfig::default()
        }
    }

    fn slice(bytes: &[u8]) -> Result<SlicePacket<'_>, ChunkPacketError> {
        SlicePacket::decode(bytes, &small())
    }

    #[test]
    fn slice_layout_by_hand() {
        let s = SlicePacket {
            chunk_id: 0x1234,
            slice_id: 1,
            slice_count: 3,
            data: &[9, 8, 7, 6],
        };
        let mut buf = [0u8; 32];
        let len = s.encode(&mut buf).unwrap();
        assert_eq!(&buf[..len], &[0xc1, 0x34, 0x12, 1, 0, 3, 0, 9, 8, 7, 6]);
        assert_eq!(slice(&buf[..len]), Ok(s));

        let last = SlicePacket {
            chunk_id: 0xfffe,
            slice_id: 2,
            slice_count: 3,
            data: &[5, 4],
        };
        let len = last.encode(&mut buf).unwrap();
        assert_eq!(&buf[..len], &[0xc1, 0xfe, 0xff, 2, 0, 3, 0, 2, 0, 5, 4]);
        assert_eq!(slice(&buf[..len]), Ok(last));
    }

    #[test]
    fn slice_rejections() {
        use ChunkPacketError as E;
        assert_eq!(
            slice(&[]),
            Err(E::Truncated {
                needed: 1,
                found: 0
            })
        );
        assert_eq!(
            slice(&[0xc2, 0, 0, 0, 0, 1, 0]),
            Err(E::WrongPacketType {
                expected: 0xc1,
                found: 0xc2
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 0, 0, 1]),
            Err(E::Truncated {
                needed: 7,
                found: 6
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 0, 0, 0, 0]),
            Err(E::SliceCountOutOfRange {
                slice_count: 0,
                max_slices: 10
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 0, 0, 11, 0]),
            Err(E::SliceCountOutOfRange {
                slice_count: 11,
                max_slices: 10
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 5, 0, 5, 0]),
            Err(E::SliceIdOutOfRange {
                slice_id: 5,
                slice_count: 5
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 0xff, 0xff, 10, 0]),
            Err(E::SliceIdOutOfRange {
                slice_id: 0xffff,
                slice_count: 10
            })
        );
        // Last slice: size field missing, zero, and larger than a slice.
        assert_eq!(
            slice(&[0xc1, 0, 0, 1, 0, 2, 0, 1]),
            Err(E::Truncated {
                needed: 9,
                found: 8
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 1, 0, 2, 0, 0, 0]),
            Err(E::LastSliceSize {
                bytes: 0,
                slice_size: 4
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 1, 0, 2, 0, 5, 0, 1, 2, 3, 4, 5]),
            Err(E::LastSliceSize {
                bytes: 5,
                slice_size: 4
            })
        );
        // Data shorter and longer than the slice.
        assert_eq!(
            slice(&[0xc1, 0, 0, 0, 0, 2, 0, 1, 2, 3]),
            Err(E::Truncated {
                needed: 11,
                found: 10
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 0, 0, 2, 0, 1, 2, 3, 4, 5]),
            Err(E::SliceTooLong {
                bytes: 5,
                expected: 4
            })
        );
        assert_eq!(
            slice(&[0xc1, 0, 0, 1, 0, 2, 0, 2, 0, 1, 2, 3]),
            Err(E::SliceTooLong {
                bytes: 3,
                expected: 2
            })
        );
    }

    #[test]
    fn every_truncation_of_a_valid_slice_is_refused() {
        let mut buf = [0u8; 32];
        for data in [&[1u8, 2, 3, 4][..], &[1]] {
            let s = SlicePacket {
                chunk_id: 3,
                slice_id: if data.len() == 4 { 0 } else { 1 },
                slice_count: 2,
                data,
            };
            let len = s.encode(&mut buf).unwrap();
            for cut in 0..len {
                assert!(slice(&buf[..cut]).is_err(), "cut to {cut}");
            }
        }
    }

    #[test]
    fn ack_layout_and_rejections() {
        use ChunkPacketError as E;
        let config = small();
        let ack = AckPacket {
            chunk_id: 0xabcd,
            slice_count: 10,
            received: &[0b1000_0001, 0b11],
        };
        let mut buf = [0u8; 16];
        let len = ack.encode(&mut buf).unwrap();
        assert_eq!(&buf[..len], &[0xc2, 0xcd, 0xab, 10, 0, 0x81, 0x03]);
        assert_eq!(AckPacket::decode(&buf[..len], &config), Ok(ack));
        let received: Vec<u16> = (0..12).filter(|&i| ack.is_received(i)).collect();
        assert_eq!(received, [0, 7, 8, 9]);

        for cut in 0..len {
            assert!(AckPacket::decode(&buf[..cut], &config).is_err());
        }
        assert_eq!(
            AckPacket::decode(&[0xc2, 0, 0, 10, 0, 0, 0, 0], &config),
            Err(E::AckLength {
                expected: 7,
                found: 8
            })
        );
        assert_eq!(
            AckPacket::decode(&[0xc2, 0, 0, 10, 0, 0, 0b100], &config),
            Err(E::AckPaddingBits)
        );
        assert_eq!(
            AckPacket::decode(&[0xc2, 0, 0, 0, 0], &config),
            Err(E::SliceCountOutOfRange {
                slice_count: 0,
                max_slices: 10
            })
        );
        assert_eq!(
            AckPacket::decode(&[0xc1, 0, 0, 1, 0, 1], &config),
            Err(E::WrongPacketType {
                expected: 0xc2,
                found: 0xc1
            })
        );
        // A count that is a multiple of 8 has no padding to check.
        let full = AckPacket::decode(&[0xc2, 0, 0, 8, 0, 0xff], &config).unwrap();
        assert!((0..8).all(|i| full.is_received(i)));
    }

    #[test]
    fn encode_checks_the_buffer() {
        let s = SlicePacket {
            chunk_id: 0,
            slice_id: 0,
            slice_count: 1,
            data: &[1, 2],
        };
        assert_eq!(
            s.encode(&mut [0; 10]),
            Err(ChunkPacketError::BufferTooSmall {
                needed: 11,
                available: 10
            })
        );
        let empty_last = SlicePacket { data: &[], ..s };
        assert!(matches!(
            empty_last.encode(&mut [0; 16]),
            Err(ChunkPacketError::LastSliceSize { bytes: 0, .. })
        ));
    }
}
