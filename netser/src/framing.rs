//! Packet framing, as "Serialization Strategies" lays a packet out:
//!
//! ```text
//! [protocol id] (64 bits)   not sent: prefixes the CRC32 computation
//! [crc32]       (32 bits)   little-endian, bytes 0..4
//! (packet data)             bit-packed
//! [end of packet check] (32 bits)
//! ```
//!
//! A packet from a peer with another protocol id (or schema hash) fails the CRC, like a
//! corrupted one; a packet cut short fails the CRC or the end check; bytes after the end
//! check are refused. Every case is a typed [`ErrorKind`].
//!
//! ```
//! use netser::framing::{read_packet, write_packet};
//! const PROTOCOL_ID: u64 = 0x6E65_7473_6572_0001;
//! let mut buf = [0u8; 64];
//! let len = write_packet(PROTOCOL_ID, &mut buf, &(7u8, true))?;
//! let (n, flag): (u8, bool) = read_packet(PROTOCOL_ID, &buf[..len])?;
//! assert_eq!((n, flag), (7, true));
//! assert!(read_packet::<(u8, bool)>(PROTOCOL_ID + 1, &buf[..len]).is_err());
//! # Ok::<(), netser::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::stream::{Decoder, Encoder, ReadStream, WriteStream};
use crate::NetSerialize;

/// Bytes of header: the CRC32.
pub const HEADER_BYTES: usize = 4;

/// Bits of framing around the packet data: the CRC32 and the end-of-packet check.
pub const OVERHEAD_BITS: u64 = 64;

/// The end-of-packet serialize check's magic value.
pub const END_OF_PACKET: u32 = crate::schema::magic("end of packet");

fn crc(protocol_id: u64, body: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&protocol_id.to_le_bytes());
    h.update(body);
    h.finalize()
}

/// Writes a framed packet into `buf` with `write_body` filling the packet data; returns
/// its length in bytes.
///
/// # Errors
/// [`ErrorKind::BufferFull`] when `buf` cannot hold the header or the packet, and
/// whatever else `write_body` returns.
pub fn write_packet_with<F>(protocol_id: u64, buf: &mut [u8], write_body: F) -> Result<usize>
where
    F: FnOnce(&mut WriteStream<'_>) -> Result<()>,
{
    if buf.len() < HEADER_BYTES {
        let remaining = buf.len() as u64 * 8;
        return Err(Error::new(
            ErrorKind::BufferFull {
                wanted: 32,
                remaining,
            },
            0,
        ));
    }
    let (header, body) = buf.split_at_mut(HEADER_BYTES);
    let mut w = WriteStream::new(body);
    write_body(&mut w)?;
    w.write_check(END_OF_PACKET)?;
    let body_len = w.finish();
    header.copy_from_slice(&crc(protocol_id, &body[..body_len]).to_le_bytes());
    Ok(HEADER_BYTES + body_len)
}

/// Writes `value` as a framed packet; returns its length in bytes.
///
/// # Errors
/// As [`write_packet_with`].
pub fn write_packet<T: NetSerialize>(protocol_id: u64, buf: &mut [u8], value: &T) -> Result<usize> {
    write_packet_with(protocol_id, buf, |w| value.encode(w))
}

/// Checks a framed packet and reads its data with `read_body`.
///
/// # Errors
/// [`ErrorKind::PacketTooShort`], [`ErrorKind::CrcMismatch`] (corrupted or foreign),
/// whatever `read_body` returns, [`ErrorKind::CheckMismatch`] or
/// [`ErrorKind::EndOfBuffer`] at the end check (truncated, or read and write out of
/// step), [`ErrorKind::TrailingBytes`].
pub fn read_packet_with<T, F>(protocol_id: u64, packet: &[u8], read_body: F) -> Result<T>
where
    F: FnOnce(&mut ReadStream<'_>) -> Result<T>,
{
    if packet.len() < HEADER_BYTES {
        return Err(Error::new(
            ErrorKind::PacketTooShort {
                len: packet.len(),
                min: HEADER_BYTES,
            },
            0,
        ));
    }
    let (header, body) = packet.split_at(HEADER_BYTES);
    let found = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let expected = crc(protocol_id, body);
    if found != expected {
        return Err(Error::new(ErrorKind::CrcMismatch { expected, found }, 0));
    }
    let mut r = ReadStream::new(body);
    let value = read_body(&mut r)?;
    r.read_check(END_OF_PACKET)?;
    // The writer pads the last byte with zeros: other padding would read as the same
    // value and write back as other bytes.
    r.read_align()?;
    let used = r.bytes_read();
    if used != body.len() {
        return Err(Error::new(
            ErrorKind::TrailingBytes {
                count: body.len() - used,
            },
            r.bit_position(),
        ));
    }
    Ok(value)
}

/// Checks a framed packet and decodes a `T` from it.
///
/// # Errors
/// As [`read_packet_with`].
pub fn read_packet<T: NetSerialize>(protocol_id: u64, packet: &[u8]) -> Result<T> {
    read_packet_with(protocol_id, packet, |r| T::decode(r))
}

/// The largest framed packet a `T` can make, in bytes.
///
/// ```
/// assert_eq!(netser::framing::max_packet_bytes::<u32>(), 4 + 8);
/// ```
pub const fn max_packet_bytes<T: NetSerialize>() -> u64 {
    HEADER_BYTES as u64 + (T::MAX_BITS + 32).div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: u64 = 0x1234_5678_9abc_def0;

    fn packet() -> ([u8; 32], usize) {
        let mut buf = [0u8; 32];
        let len = write_packet(ID, &mut buf, &(0xBEEFu16, 42u32)).unwrap();
        (buf, len)
    }

    #[test]
    fn layout_is_crc_then_body_then_check() {
        let (buf, len) = packet();
        assert_eq!(len, 4 + 2 + 4 + 4);
        assert_eq!(&buf[4..6], &[0xEF, 0xBE]);
        assert_eq!(&buf[10..14], &END_OF_PACKET.to_le_bytes());
        let crc_expected = crc(ID, &buf[4..len]);
        assert_eq!(&buf[..4], &crc_expected.to_le_bytes());
    }

    #[test]
    fn corrupted_foreign_truncated_and_padded_packets_are_refused() {
        let (buf, len) = packet();
        let mut bad = buf;
        bad[7] ^= 0x10;
        assert!(matches!(
            read_packet::<(u16, u32)>(ID, &bad[..len])
                .unwrap_err()
                .kind(),
            ErrorKind::CrcMismatch { .. }
        ));
        assert!(matches!(
            read_packet::<(u16, u32)>(ID ^ 1, &buf[..len])
                .unwrap_err()
                .kind(),
            ErrorKind::CrcMismatch { .. }
        ));
        assert!(matches!(
            read_packet::<(u16, u32)>(ID, &buf[..3]).unwrap_err().kind(),
            ErrorKind::PacketTooShort { len: 3, min: 4 }
        ));
        // A truncated packet whose CRC was recomputed (a buggy sender) hits the end check.
        let mut cut = [0u8; 32];
        cut[4..len - 1].copy_from_slice(&buf[4..len - 1]);
        let c = crc(ID, &cut[4..len - 1]);
        cut[..4].copy_from_slice(&c.to_le_bytes());
        assert!(matches!(
            read_packet::<(u16, u32)>(ID, &cut[..len - 1])
                .unwrap_err()
                .kind(),
            ErrorKind::EndOfBuffer { .. }
        ));
        // Trailing bytes under a valid CRC.
        let mut long = [0u8; 32];
        long[4..len].copy_from_slice(&buf[4..len]);
        let c = crc(ID, &long[4..len + 2]);
        long[..4].copy_from_slice(&c.to_le_bytes());
        assert_eq!(
            read_packet::<(u16, u32)>(ID, &long[..len + 2])
                .unwrap_err()
                .kind(),
            &ErrorKind::TrailingBytes { count: 2 }
        );
    }

    #[test]
    fn round_trip() {
        let (buf, len) = packet();
        assert_eq!(
            read_packet::<(u16, u32)>(ID, &buf[..len]).unwrap(),
            (0xBEEF, 42)
        );
    }
}
