//! Decode targets: any bytes in, and where decoding succeeds, the value must encode
//! again to exactly the bits it was read from, and decode from those to the same value.

use netser::framing::{read_packet, write_packet, HEADER_BYTES};
use netser::{Decoder, NetSerialize, ReadStream};

use super::types::{Entity, Event, Numeric, Snapshot};

/// The protocol id of the framing target.
pub const PROTOCOL_ID: u64 = 0x6E65_7473_6572_0013;

/// Bits `a[..bits]` and `b[..bits]` are the same.
fn same_bits(a: &[u8], b: &[u8], bits: u64) -> bool {
    let (mut ra, mut rb) = (ReadStream::new(a), ReadStream::new(b));
    let mut left = bits;
    while left > 0 {
        let n = left.min(32) as u32;
        match (ra.read_bits(n), rb.read_bits(n)) {
            (Ok(x), Ok(y)) if x == y => left -= u64::from(n),
            _ => return false,
        }
    }
    true
}

/// Decodes a `T` from `data`; on success checks the round trip (panics on a mismatch,
/// which the fuzzer reports as a crash) and returns the value.
pub fn round_trip<T: NetSerialize + std::fmt::Debug>(data: &[u8]) -> Option<T> {
    let mut r = ReadStream::new(data);
    let value = T::decode(&mut r).ok()?;
    let read = r.bit_position();
    assert!(
        read <= T::MAX_BITS,
        "read {read} bits, more than MAX_BITS {}",
        T::MAX_BITS
    );
    assert!(
        read >= T::MIN_BITS,
        "read {read} bits, fewer than MIN_BITS {}",
        T::MIN_BITS
    );
    let bytes = match value.to_vec() {
        Ok(bytes) => bytes,
        Err(e) => panic!("{value:?} decoded from {data:02x?} does not encode: {e}"),
    };
    let written = value.measure_bits().expect("measured");
    assert_eq!(
        written, read,
        "{value:?}: read {read} bits, writes {written}"
    );
    assert!(
        same_bits(data, &bytes, read),
        "{value:?}: encodes to other bits than it was read from\n read: {data:02x?}\nwrote: {bytes:02x?}"
    );
    let again = T::decode_from_slice(&bytes).expect("its own encoding decodes");
    let bytes_again = again.to_vec().expect("encodes");
    assert_eq!(bytes, bytes_again, "{value:?} -> {again:?}: not stable");
    Some(value)
}

/// The decode target of the derived types without numeric forms, and the framing: the
/// first byte picks the type, the rest is its input.
pub fn decode_derived(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    match pick % 6 {
        0 => drop(round_trip::<Snapshot>(rest)),
        1 => drop(round_trip::<Entity>(rest)),
        2 => drop(round_trip::<Event>(rest)),
        3 => drop(round_trip::<(Option<u16>, [bool; 3], u64)>(rest)),
        4 => framing(rest, false),
        _ => framing(rest, true),
    }
}

/// The decode target of the numeric forms (quantized floats, quaternions).
pub fn decode_numeric(data: &[u8]) {
    let _ = round_trip::<Numeric>(data);
}

/// A framed `Snapshot`: the bytes as they are, or (`fix_crc`) behind the CRC the
/// framing computes over them, so the fuzzer gets past it. A packet that reads must be
/// written back byte for byte.
fn framing(data: &[u8], fix_crc: bool) {
    let packet = if fix_crc {
        let mut h = crc32fast::Hasher::new();
        h.update(&PROTOCOL_ID.to_le_bytes());
        h.update(data);
        let mut packet = Vec::from(h.finalize().to_le_bytes());
        packet.extend_from_slice(data);
        packet
    } else {
        data.to_vec()
    };
    let Ok(value) = read_packet::<Snapshot>(PROTOCOL_ID, &packet) else {
        return;
    };
    let mut buf = vec![0u8; packet.len() + 16];
    let len = write_packet(PROTOCOL_ID, &mut buf, &value).expect("a read packet writes");
    assert_eq!(
        &buf[..len],
        &packet[..],
        "{value:?}: framed packet written back differs"
    );
    assert!(packet.len() >= HEADER_BYTES);
}
