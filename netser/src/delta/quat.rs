//! Quaternions relative to the baseline on their smallest-three integers ("Snapshot
//! Compression": most orientations keep the largest component of their baseline, and
//! then each small component moves by a few steps).
//!
//! With `b` bits per component, small tier `s = (b + 1) / 2` and large tier `l = b - 1`
//! ([`quat_tiers`]; at 9 bits, 5 and 8, the article's own choice):
//!
//! | case | bits |
//! |---|---|
//! | same smallest-three integers | `0` |
//! | same largest index, each component's change `c` in the large range | `1 0`, then per component `0` + `s`-bit code (`-2^(s-1) <= c < 2^(s-1)`) or `1` + `l`-bit code (the `2^l` changes just beyond) |
//! | otherwise | `1 1` + the absolute smallest three (`2 + 3b`) |
//!
//! The worst case is [`quat_delta_max_bits`], `4 + 3b`: the absolute encoding plus two.

use crate::error::{Error, ErrorKind, Result};
use crate::quat::{pack, quat_bits, unpack};
use crate::stream::{Decoder, Encoder};
use crate::trace::TraceValue;

/// The small and large tier widths `(s, l)` of a component of `bits` bits (2..=20).
///
/// ```
/// assert_eq!(netser::delta::quat_tiers(9), (5, 8));
/// assert_eq!(netser::delta::quat_tiers(2), (1, 1));
/// ```
pub const fn quat_tiers(bits: u32) -> (u32, u32) {
    let s = bits.div_ceil(2);
    let l = if bits > 1 { bits - 1 } else { 1 };
    (if s < 1 { 1 } else { s }, l)
}

/// The most bits a quaternion delta takes: `4 + 3 * bits`, the absolute encoding plus 2.
///
/// ```
/// assert_eq!(netser::delta::quat_delta_max_bits(9), 31);
/// ```
pub const fn quat_delta_max_bits(bits: u32) -> u64 {
    2 + quat_bits(bits)
}

/// The code of a component change `c` in a tier: `None` outside the tier.
fn code(c: i64, s: u32, l: u32) -> Option<(bool, u64)> {
    let h = 1i64 << (s - 1);
    let big = 1i64 << (l - 1);
    if (-h..h).contains(&c) {
        Some((false, (c + h) as u64))
    } else if (-h - big..-h).contains(&c) {
        Some((true, (c + h + big) as u64))
    } else if (h..h + big).contains(&c) {
        Some((true, (c - h + big) as u64))
    } else {
        None
    }
}

fn change(large: bool, code: u64, s: u32, l: u32) -> i64 {
    let h = 1i64 << (s - 1);
    let big = 1i64 << (l - 1);
    let code = code as i64;
    if !large {
        code - h
    } else if code < big {
        code - h - big
    } else {
        code + h - big
    }
}

/// Writes a unit quaternion `[x, y, z, w]` relative to `baseline`, both in
/// smallest-three form with `bits` per component.
///
/// # Errors
/// As [`Encoder::write_quat`] for the value or the baseline.
///
/// ```
/// use netser::delta::write_quat_delta;
/// use netser::MeasureStream;
/// let q = [0.0, 0.0, 0.0, 1.0];
/// let turned = [0.0, 0.01, 0.0, 0.99995];
/// let mut m = MeasureStream::new();
/// write_quat_delta(&mut m, q, q, 9)?;
/// assert_eq!(m.bits(), 1);
/// write_quat_delta(&mut m, turned, q, 9)?; // same largest, small changes
/// assert_eq!(m.bits(), 1 + 2 + 3 * 6);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn write_quat_delta<E: Encoder>(
    e: &mut E,
    value: [f32; 4],
    baseline: [f32; 4],
    bits: u32,
) -> Result<()> {
    let start = e.bit_position();
    let (largest, small) = pack(value, bits, start)?;
    let (b_largest, b_small) = pack(baseline, bits, start)?;
    if (largest, small) == (b_largest, b_small) {
        e.put_bits_bounded(0, 1)?;
        e.trace(start, TraceValue::Quat(value));
        return Ok(());
    }
    let (s, l) = quat_tiers(bits);
    let codes = if largest == b_largest {
        let c = |k: usize| code(small[k] as i64 - b_small[k] as i64, s, l);
        match (c(0), c(1), c(2)) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            _ => None,
        }
    } else {
        None
    };
    match codes {
        Some(codes) => {
            e.put_bits_bounded(0b01, 2)?;
            for (large, code) in codes {
                e.put_bits_bounded(large as u64, 1)?;
                e.put_bits_bounded(code, if large { l } else { s })?;
            }
        }
        None => {
            e.put_bits_bounded(0b11, 2)?;
            e.put_bits_bounded(largest as u64, 2)?;
            for v in small {
                e.put_bits_bounded(v as u64, bits)?;
            }
        }
    }
    e.trace(start, TraceValue::Quat(value));
    Ok(())
}

/// Reads a quaternion written by [`write_quat_delta`] against `baseline`: the value
/// [`Decoder::read_quat`] gives for the same smallest-three integers.
///
/// # Errors
/// As [`Decoder::read_quat`], [`ErrorKind::DeltaOutOfRange`] for a change leading
/// outside `0..2^bits`, and the baseline's packing error.
///
/// ```
/// use netser::delta::{read_quat_delta, write_quat_delta};
/// use netser::{ReadStream, WriteStream};
/// let base = [0.0, 0.0, 0.0, 1.0];
/// let value = [0.1, 0.0, 0.0, 0.995];
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::new(&mut buf);
/// write_quat_delta(&mut w, value, base, 9)?;
/// let len = w.finish();
/// let got = read_quat_delta(&mut ReadStream::new(&buf[..len]), base, 9)?;
/// assert!((got[0] - 0.1).abs() < 2e-3);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn read_quat_delta<D: Decoder>(d: &mut D, baseline: [f32; 4], bits: u32) -> Result<[f32; 4]> {
    let start = d.bit_position();
    let (b_largest, b_small) = pack(baseline, bits, start)?;
    let (largest, small) = if !d.read_bool()? {
        (b_largest, b_small)
    } else if !d.read_bool()? {
        let (s, l) = quat_tiers(bits);
        let max = (1i64 << bits) - 1;
        let mut small = [0u32; 3];
        for (k, out) in small.iter_mut().enumerate() {
            let large = d.read_bool()?;
            let c = change(large, d.get_bits(if large { l } else { s })?, s, l);
            let v = b_small[k] as i64 + c;
            if !(0..=max).contains(&v) {
                return Err(Error::new(
                    ErrorKind::DeltaOutOfRange {
                        baseline: b_small[k] as u128,
                        delta: c as i128,
                        max: max as u128,
                    },
                    start,
                ));
            }
            *out = v as u32;
        }
        (b_largest, small)
    } else {
        let largest = d.get_bits(2)? as u32;
        let mut small = [0u32; 3];
        for v in small.iter_mut() {
            *v = d.get_bits(bits)? as u32;
        }
        (largest, small)
    };
    let q = unpack(largest, small, bits, start)?;
    d.trace(start, TraceValue::Quat(q));
    Ok(q)
}

/// What an unchanged quaternion decodes to: the baseline's smallest three, decoded.
///
/// # Errors
/// The baseline's packing or unpacking error (at `bit`).
///
/// ```
/// let q = netser::delta::quat_unchanged([0.0, 0.0, 0.0, 2.0], 9, 0)?;
/// assert!((q[3] - 1.0).abs() < 1e-3);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn quat_unchanged(baseline: [f32; 4], bits: u32, bit: u64) -> Result<[f32; 4]> {
    let (largest, small) = pack(baseline, bits, bit)?;
    unpack(largest, small, bits, bit)
}

/// Whether a quaternion's delta is "unchanged": the same smallest-three integers.
///
/// # Errors
/// The value's or the baseline's packing error (at `bit`).
///
/// ```
/// use netser::delta::quat_unchanged_from;
/// assert!(quat_unchanged_from([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1e-5, 1.0], 9, 0)?);
/// assert!(quat_unchanged_from([0.0; 4], [0.0, 0.0, 0.0, 1.0], 9, 0).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn quat_unchanged_from(
    value: [f32; 4],
    baseline: [f32; 4],
    bits: u32,
    bit: u64,
) -> Result<bool> {
    Ok(pack(value, bits, bit)? == pack(baseline, bits, bit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_cover_each_change_once() {
        for bits in 2..=10u32 {
            let (s, l) = quat_tiers(bits);
            let mut seen = std::collections::HashSet::new();
            let h = 1i64 << (s - 1);
            let big = 1i64 << (l - 1);
            for c in -h - big..h + big {
                let (large, k) = code(c, s, l).expect("in range");
                assert!(k < 1 << if large { l } else { s });
                assert_eq!(change(large, k, s, l), c);
                assert!(seen.insert((large, k)));
            }
            assert!(code(-h - big - 1, s, l).is_none());
            assert!(code(h + big, s, l).is_none());
        }
    }
}
