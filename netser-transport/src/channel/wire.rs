//! Bits on the wire shared by the channels: messages stored as encoded bits, and message
//! ids after the first in a packet written relative to the previous one.

use netser::{Decoder, Encoder, NetSerialize, ReadStream, Result};

/// A message encoded at send: its bytes and its exact length in bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EncodedMessage {
    pub bytes: Box<[u8]>,
    pub bits: u64,
}

impl EncodedMessage {
    /// Measures and encodes `message`.
    pub fn encode<M: NetSerialize>(message: &M) -> Result<Self> {
        let bits = message.measure_bits()?;
        let mut bytes = vec![0u8; bits.div_ceil(8) as usize].into_boxed_slice();
        message.encode_to_slice(&mut bytes)?;
        Ok(Self { bytes, bits })
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Writes the stored bits into `e`, exactly as `message.encode(e)` would have.
    pub fn write<E: Encoder>(&self, e: &mut E) -> Result<()> {
        let mut r = ReadStream::new(&self.bytes);
        let mut left = self.bits;
        while left > 0 {
            let n = left.min(32) as u32;
            e.write_bits(r.read_bits(n)?, n)?;
            left -= u64::from(n);
        }
        Ok(())
    }
}

/// `current` as the difference from `previous` (message ids increase within a packet,
/// modulo 2^16), with the flag ladder of `write_int_relative`.
pub(crate) fn write_id_relative<E: Encoder>(e: &mut E, previous: u16, current: u16) -> Result<()> {
    let d = current.wrapping_sub(previous);
    e.write_int_relative(0, i32::from(d))
}

/// Reads an id written by [`write_id_relative`].
pub(crate) fn read_id_relative<D: Decoder>(d: &mut D, previous: u16) -> Result<u16> {
    let difference = d.read_int_relative(0)?;
    Ok(previous.wrapping_add(difference as u16))
}

/// Bits [`write_id_relative`] takes.
pub(crate) fn id_relative_bits(previous: u16, current: u16) -> u64 {
    let d = u32::from(current.wrapping_sub(previous));
    // The flag ladder of `write_int_relative` (1, 5, 8, 13, 18, 23 bits; ids differ by
    // less than 2^16, so the 38-bit raw form never occurs).
    match d {
        1 => 1,
        2..=6 => 5,
        7..=23 => 8,
        24..=280 => 13,
        281..=4377 => 18,
        _ => 23,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netser::{MeasureStream, WriteStream};

    #[test]
    fn relative_bits_match_the_stream() {
        for d in [1u16, 2, 6, 7, 23, 24, 280, 281, 4377, 4378, 65535] {
            let mut m = MeasureStream::new();
            write_id_relative(&mut m, 65530, 65530u16.wrapping_add(d)).unwrap();
            assert_eq!(
                m.bits(),
                id_relative_bits(65530, 65530u16.wrapping_add(d)),
                "d={d}"
            );
            let mut buf = [0u8; 8];
            let mut w = WriteStream::new(&mut buf);
            write_id_relative(&mut w, 65530, 65530u16.wrapping_add(d)).unwrap();
            w.finish();
            let mut r = ReadStream::new(&buf);
            assert_eq!(
                read_id_relative(&mut r, 65530).unwrap(),
                65530u16.wrapping_add(d)
            );
        }
    }

    #[test]
    fn stored_bits_copy_exactly() {
        let message = (0x1234_5678u32, 0x9u8, true);
        let stored = EncodedMessage::encode(&message).unwrap();
        assert_eq!(stored.bits, 41);
        let mut buf = [0u8; 8];
        let mut w = WriteStream::new(&mut buf);
        w.write_bits(1, 3).unwrap();
        stored.write(&mut w).unwrap();
        w.finish();
        let mut r = ReadStream::new(&buf);
        assert_eq!(r.read_bits(3).unwrap(), 1);
        assert_eq!(<(u32, u8, bool)>::decode(&mut r).unwrap(), message);
    }
}
