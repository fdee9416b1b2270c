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
///
/// ```
/// use netser::framing::{write_packet, HEADER_BYTES};
/// let mut buf = [0u8; 16];
/// let len = write_packet(1, &mut buf, &7u8)?;
/// assert_eq!(len, HEADER_BYTES + 1 + 4); // CRC32, the data, the end-of-packet check
/// # Ok::<(), netser::Error>(())
/// ```
pub const HEADER_BYTES: usize = 4;

/// Bits of framing around the packet data: the CRC32 and the end-of-packet check.
///
/// ```
/// use netser::{framing::OVERHEAD_BITS, NetSerialize};
/// // What a packet budget must allow for a (u8, bool) packet, in bits.
/// assert_eq!(<(u8, bool)>::MAX_BITS + OVERHEAD_BITS, 9 + 64);
/// ```
pub const OVERHEAD_BITS: u64 = 64;

/// The smallest framed packet: the CRC32 header and the end-of-packet check around no
/// data.
///
/// ```
/// use netser::framing::{read_packet_with, MIN_PACKET_BYTES};
/// use netser::ErrorKind;
/// let e = read_packet_with(1, &[0; 5], |_| Ok(())).unwrap_err();
/// assert_eq!(e.kind(), &ErrorKind::PacketTooShort { len: 5, min: MIN_PACKET_BYTES });
/// ```
pub const MIN_PACKET_BYTES: usize = HEADER_BYTES + 4;

/// The end-of-packet serialize check's magic value.
///
/// ```
/// use netser::framing::{write_packet, END_OF_PACKET};
/// let mut buf = [0u8; 16];
/// let len = write_packet(1, &mut buf, &())?;
/// assert_eq!(buf[len - 4..len], END_OF_PACKET.to_le_bytes());
/// # Ok::<(), netser::Error>(())
/// ```
pub const END_OF_PACKET: u32 = crate::schema::END_OF_PACKET;

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
///
/// ```
/// use netser::framing::{read_packet_with, write_packet_with};
/// use netser::{Decoder, Encoder};
/// const PROTOCOL_ID: u64 = 0x6E65_7473_6572_0001;
/// // A packet type byte, then the data of that type, written by hand.
/// let mut buf = [0u8; 32];
/// let len = write_packet_with(PROTOCOL_ID, &mut buf, |w| {
///     w.write_int(2u8, 0, 3)?; // packet type 2: a chat line
///     w.write_string("gg", 64)
/// })?;
/// let text = read_packet_with(PROTOCOL_ID, &buf[..len], |r| {
///     assert_eq!(r.read_int(0u8, 3)?, 2);
///     r.read_string(64)
/// })?;
/// assert_eq!(text, "gg");
/// # Ok::<(), netser::Error>(())
/// ```
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
///
/// ```
/// use netser::framing::{max_packet_bytes, write_packet};
/// use netser::NetSerialize;
///
/// #[derive(NetSerialize)]
/// struct Input { #[net(bits = 6)] buttons: u8, #[net(quantize(-1.0, 1.0, 0.01))] steer: f32 }
///
/// // A buffer of the worst case never fails for lack of room.
/// let mut buf = [0u8; max_packet_bytes::<Input>() as usize];
/// let len = write_packet(Input::SCHEMA_HASH, &mut buf, &Input { buttons: 5, steer: 0.5 })?;
/// assert_eq!(len, 4 + 2 + 4); // 6 + 8 bits of data, padded to 2 bytes
/// // A value out of its bounds is refused before anything is sent.
/// assert!(write_packet(Input::SCHEMA_HASH, &mut buf, &Input { buttons: 64, steer: 0.0 }).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
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
///
/// ```
/// use netser::framing::{read_packet_with, write_packet};
/// use netser::{Decoder, ErrorKind};
/// let mut buf = [0u8; 16];
/// let len = write_packet(7, &mut buf, &(1u8, 2u8))?;
/// // Reading less than was written fails at the end-of-packet check.
/// let e = read_packet_with(7, &buf[..len], |r| r.read_bits(8)).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::CheckMismatch { .. }));
/// assert_eq!(read_packet_with(7, &buf[..len], |r| r.read_bits(16))?, 0x0201);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn read_packet_with<T, F>(protocol_id: u64, packet: &[u8], read_body: F) -> Result<T>
where
    F: FnOnce(&mut ReadStream<'_>) -> Result<T>,
{
    read_packet_at_least(protocol_id, packet, MIN_PACKET_BYTES, read_body)
}

/// [`read_packet_with`], refusing up front a packet shorter than `min` bytes.
fn read_packet_at_least<T, F>(
    protocol_id: u64,
    packet: &[u8],
    min: usize,
    read_body: F,
) -> Result<T>
where
    F: FnOnce(&mut ReadStream<'_>) -> Result<T>,
{
    if packet.len() < min {
        return Err(Error::new(
            ErrorKind::PacketTooShort {
                len: packet.len(),
                min,
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
///
/// ```
/// use netser::framing::{read_packet, write_packet};
/// use netser::{ErrorKind, NetSerialize};
///
/// #[derive(NetSerialize, Debug, PartialEq)]
/// enum Packet { Ping, Input(#[net(bits = 6)] u8) }
///
/// let mut buf = [0u8; 16];
/// let len = write_packet(Packet::SCHEMA_HASH, &mut buf, &Packet::Input(9))?;
/// assert_eq!(read_packet::<Packet>(Packet::SCHEMA_HASH, &buf[..len])?, Packet::Input(9));
/// // A peer built from another schema (another hash) fails the CRC32; so does corruption.
/// let e = read_packet::<Packet>(Packet::SCHEMA_HASH ^ 1, &buf[..len]).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::CrcMismatch { .. }));
/// assert!(!e.to_string().contains("at bit"));
/// # Ok::<(), netser::Error>(())
/// ```
pub fn read_packet<T: NetSerialize>(protocol_id: u64, packet: &[u8]) -> Result<T> {
    let min = min_packet_bytes::<T>().min(usize::MAX as u64) as usize;
    read_packet_at_least(protocol_id, packet, min, |r| T::decode(r))
}

/// The smallest framed packet a `T` can make, in bytes: [`read_packet`] refuses a
/// shorter one as [`ErrorKind::PacketTooShort`] before computing its CRC32.
///
/// ```
/// assert_eq!(netser::framing::min_packet_bytes::<u32>(), 4 + 4 + 4);
/// assert_eq!(netser::framing::min_packet_bytes::<()>(), 8);
/// ```
pub const fn min_packet_bytes<T: NetSerialize>() -> u64 {
    HEADER_BYTES as u64 + (T::MIN_BITS + 32).div_ceil(8)
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
            ErrorKind::PacketTooShort { len: 3, min: 14 }
        ));
        // A truncated packet whose CRC was recomputed (a buggy sender) is refused by its
        // length when the type is known, and hits the end check otherwise.
        let mut cut = [0u8; 32];
        cut[4..len - 1].copy_from_slice(&buf[4..len - 1]);
        let c = crc(ID, &cut[4..len - 1]);
        cut[..4].copy_from_slice(&c.to_le_bytes());
        assert!(matches!(
            read_packet::<(u16, u32)>(ID, &cut[..len - 1])
                .unwrap_err()
                .kind(),
            ErrorKind::PacketTooShort { len: 13, min: 14 }
        ));
        assert!(matches!(
            read_packet_with(ID, &cut[..len - 1], |r| <(u16, u32)>::decode(r))
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

    fn message(packet: &[u8], id: u64) -> alloc::string::String {
        use alloc::string::ToString;
        read_packet::<(u16, u32)>(id, packet)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn packet_verdicts_say_what_happened_without_a_bit_offset() {
        let (buf, len) = packet();
        let mut corrupted = buf;
        corrupted[7] ^= 0x10;
        let corrupted = message(&corrupted[..len], ID);
        let foreign = message(&buf[..len], ID ^ 1);
        let truncated = message(&buf[..len - 4], ID);
        for m in [&corrupted, &foreign] {
            assert!(m.starts_with("CRC32 mismatch: computed 0x"), "{m}");
            assert!(
                m.ends_with("(corrupted, truncated, or sent with another protocol id)"),
                "{m}"
            );
        }
        assert_eq!(
            truncated,
            "packet of 10 bytes is shorter than the smallest valid packet, 14 bytes \
             (CRC32 header, data and end-of-packet check): truncated"
        );
        assert_eq!(
            message(&[], ID),
            "packet of 0 bytes is shorter than the smallest valid packet, 14 bytes \
             (CRC32 header, data and end-of-packet check): truncated"
        );
        // A packet of no fixed type is held to the header and the end check.
        let e = read_packet_with(ID, &buf[..7], |_| Ok(())).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::PacketTooShort { len: 7, min: 8 });
    }

    #[test]
    fn another_packet_type_fails_the_end_check_and_says_so() {
        use alloc::string::ToString;
        let mut buf = [0u8; 32];
        let len = write_packet(ID, &mut buf, &(1u8, 2u8)).unwrap();
        let e = read_packet::<u8>(ID, &buf[..len]).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::CheckMismatch {
                expected: END_OF_PACKET,
                ..
            }
        ));
        let m = e.to_string();
        assert!(
            m.starts_with("end-of-packet check failed: expected 0x"),
            "{m}"
        );
        assert!(
            m.contains("read as another type than it was written as"),
            "{m}"
        );
        assert!(m.ends_with("at bit 8"), "{m}");
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
