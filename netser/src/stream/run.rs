//! Support for derived code: a run of fixed-width fields written as a few packed 64-bit
//! writes and read as a few 64-bit reads.
//!
//! The derive checks the room for the whole run once, converts every field to its wire
//! integer with the same checks and the same errors as the field-by-field primitives
//! (each at the bit where that field starts), and only then packs them. The stream is
//! LSB-first, so `a` in `wa` bits then `b` in `wb` bits is the same bits as
//! `a | b << wa` in `wa + wb` bits: the packed writes give the very bytes the
//! field-by-field path gives. Not a public API: its shape follows the derive.

use crate::error::{Error, ErrorKind, Result};
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::quat::QuatFormat;
use crate::stream::{headroom_error, range_error, Decoder, Encoder};

/// `v >> n`, 0 when `n >= 64`.
#[inline(always)]
fn shr(v: u64, n: u32) -> u64 {
    v.checked_shr(n).unwrap_or(0)
}

/// The low `bits` bits set (0..=64).
#[inline(always)]
pub fn mask(bits: u32) -> u64 {
    shr(u64::MAX, 64 - bits)
}

/// Writes `(value, width)` pairs in order, each `value < 2^width`, `width <= 64`:
/// packed into 64-bit words, then written after one room check for all of them. With
/// the widths constant (as in derived code) the loops unroll and every index and shift
/// folds away.
///
/// # Errors
/// [`ErrorKind::BufferFull`] when the run does not fit; nothing is written.
#[inline(always)]
pub fn put<E: Encoder, const N: usize>(e: &mut E, fields: [(u64, u32); N]) -> Result<()> {
    let (words, at) = pack(fields);
    let (full, last_bits) = ((at / 64) as usize, at % 64);
    let last = if last_bits > 0 {
        words.get(full).copied().unwrap_or(0)
    } else {
        0
    };
    e.put_words(words.get(..full).unwrap_or(&[]), last, last_bits)
}

/// `(value, width)` pairs (each `value < 2^width`, `width <= 64`) packed LSB first into
/// 64-bit words, and their total width. The run has at most `64 * N` bits, so its words
/// (the last one partial) fit `N`. With the widths constant the loop unrolls and every
/// index and shift folds away.
#[inline(always)]
pub fn pack<const N: usize>(fields: [(u64, u32); N]) -> ([u64; N], u32) {
    debug_assert!(fields.iter().all(|&(v, w)| w <= 64 && shr(v, w) == 0));
    pack_candidate(fields)
}

/// [`pack`] for a candidate run that is used only when every value is below
/// `2^width`: a wider value (a gated field's lane where the gate is off, which the
/// batch columns leave unspecified) spoils the run, and its caller then discards it.
/// Widths are at most 64.
#[inline(always)]
pub fn pack_candidate<const N: usize>(fields: [(u64, u32); N]) -> ([u64; N], u32) {
    let mut words = [0u64; N];
    let mut at = 0u32;
    for (v, w) in fields {
        debug_assert!(w <= 64);
        let (i, s) = ((at / 64) as usize, at % 64);
        if let Some(word) = words.get_mut(i) {
            *word |= v << s;
        }
        if s + w > 64 {
            if let Some(word) = words.get_mut(i + 1) {
                *word |= v >> (64 - s);
            }
        }
        at += w;
    }
    (words, at)
}

/// Reads fields of the given widths (each `<= 64`), the inverse of [`put`]: one check
/// of the bits remaining, then 64-bit reads.
///
/// # Errors
/// [`ErrorKind::EndOfBuffer`] when the input is shorter than the run; nothing is read.
#[inline(always)]
pub fn get<D: Decoder, const N: usize>(d: &mut D, widths: [u32; N]) -> Result<[u64; N]> {
    let mut total = 0u32;
    for w in widths {
        total += w;
    }
    let mut words = [0u64; N];
    let (full, last_bits) = ((total / 64) as usize, total % 64);
    let last = d.get_words(words.get_mut(..full).unwrap_or(&mut []), last_bits)?;
    if last_bits > 0 {
        if let Some(word) = words.get_mut(full) {
            *word = last;
        }
    }
    let mut out = [0u64; N];
    let mut at = 0u32;
    for (slot, w) in out.iter_mut().zip(widths) {
        let (i, s) = ((at / 64) as usize, at % 64);
        let mut v = words.get(i).copied().unwrap_or(0) >> s;
        if s + w > 64 {
            v |= words.get(i + 1).copied().unwrap_or(0) << (64 - s);
        }
        *slot = v & mask(w);
        at += w;
    }
    Ok(out)
}

/// [`Encoder::write_int`]'s check and offset, for a range of at most 64 bits.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] (or [`ErrorKind::InvalidRange`]) at `bit`.
#[inline(always)]
pub fn int<I: RangedInt>(value: I, min: I, max: I, bit: u64) -> Result<u64> {
    if !(value >= min && value <= max) {
        return Err(range_error(value, min, max, bit));
    }
    Ok(value.offset_from(min) as u64)
}

/// [`Decoder::read_int`]'s checks and value, for a range of at most 64 bits.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] for an offset above `max - min`, [`ErrorKind::InvalidRange`].
#[inline(always)]
pub fn int_from<I: RangedInt>(raw: u64, min: I, max: I, bit: u64) -> Result<I> {
    if min > max {
        return Err(range_error(min, min, max, bit));
    }
    let offset = raw as u128;
    if offset > max.offset_from(min) {
        return Err(headroom_error(offset, min, max, bit));
    }
    Ok(I::from_offset(min, offset))
}

/// [`Encoder::write_uint_bits`]'s checks, for at most 64 bits.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`], [`ErrorKind::ValueTooWide`] at `bit`.
#[inline(always)]
pub fn uint_bits<I: RangedInt>(value: I, bits: u32, bit: u64) -> Result<u64> {
    let max = I::WIDTH - (I::MIN < I::ZERO) as u32;
    if bits > max {
        return Err(Error::new(
            ErrorKind::InvalidBitCount { bits, min: 0, max },
            bit,
        ));
    }
    let raw = value.offset_from(I::ZERO);
    if value < I::ZERO || (bits < 128 && raw >> bits != 0) {
        return Err(Error::new(
            ErrorKind::ValueTooWide { value: raw, bits },
            bit,
        ));
    }
    Ok(raw as u64)
}

/// [`Decoder::read_uint_bits`]'s check and value, for at most 64 bits.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`] at `bit`.
#[inline(always)]
pub fn uint_bits_from<I: RangedInt>(raw: u64, bits: u32, bit: u64) -> Result<I> {
    let max = I::WIDTH - (I::MIN < I::ZERO) as u32;
    if bits > max {
        return Err(Error::new(
            ErrorKind::InvalidBitCount { bits, min: 0, max },
            bit,
        ));
    }
    Ok(I::from_offset(I::ZERO, raw as u128))
}

/// [`Encoder::write_compressed_f32`]'s integer.
///
/// # Errors
/// As [`Quantize::quantize`].
#[inline(always)]
pub fn quantize(value: f32, q: &Quantize, bit: u64) -> Result<u64> {
    q.quantize(value, bit).map(u64::from)
}

/// [`Decoder::read_compressed_f32`]'s check and value.
///
/// # Errors
/// [`ErrorKind::QuantizedOutOfRange`] above `q.max_integer_value()`.
#[inline(always)]
pub fn dequantize(raw: u64, q: &Quantize, bit: u64) -> Result<f32> {
    if raw > q.max_integer_value() as u64 {
        return Err(Error::new(ErrorKind::quantized_read(raw, q), bit));
    }
    Ok(q.dequantize(raw as u32))
}

/// [`Encoder::write_quat`]'s packed form (`2 + 3 * bits <= 62` bits), with the
/// format's constants computed at compile time.
///
/// # Errors
/// As [`crate::quat::pack_with`].
#[inline(always)]
pub fn quat(q: [f32; 4], f: &QuatFormat, bit: u64) -> Result<u64> {
    let bits = f.bits();
    let (largest, [a, b, c]) = crate::quat::pack_with(q, f, bit)?;
    Ok(largest as u64 | (a as u64) << 2 | (b as u64) << (2 + bits) | (c as u64) << (2 + 2 * bits))
}

/// [`Decoder::read_quat`]'s value from its packed form.
///
/// # Errors
/// As [`crate::quat::unpack_with`].
#[inline(always)]
pub fn quat_from(raw: u64, f: &QuatFormat, bit: u64) -> Result<[f32; 4]> {
    let bits = f.bits();
    let field = |k: u32| (shr(raw, 2 + k * bits) & mask(bits)) as u32;
    crate::quat::unpack_with((raw & 3) as u32, [field(0), field(1), field(2)], f, bit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReadStream, WriteStream};

    /// Runs of every shape against the field-by-field writes: same bytes, same values.
    #[test]
    fn packed_runs_equal_field_by_field() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for lead in 0..64u32 {
            for shape in 0..40u32 {
                x = x.rotate_left(17).wrapping_mul(0x2545_F491_4F6C_DD1D);
                let widths: [u32; 6] =
                    core::array::from_fn(|k| ((x >> (k * 10)) % 65) as u32 ^ (shape % 2));
                let widths = widths.map(|w| w.min(64));
                let fields: [(u64, u32); 6] = core::array::from_fn(|k| {
                    let v = x.rotate_left(k as u32 * 11).wrapping_mul(k as u64 + 3);
                    (v & mask(widths[k]), widths[k])
                });
                let mut a = [0u8; 64];
                let mut b = [0u8; 64];
                let mut wa = WriteStream::new(&mut a);
                let mut wb = WriteStream::new(&mut b);
                wa.put_bits(mask(lead), lead).unwrap();
                wb.put_bits(mask(lead), lead).unwrap();
                for (v, w) in fields {
                    wa.put_bits(v, w).unwrap();
                }
                put(&mut wb, fields).unwrap();
                assert_eq!(wa.bit_position(), wb.bit_position());
                let n = wa.finish();
                assert_eq!(n, wb.finish());
                assert_eq!(a, b, "lead {lead} widths {widths:?}");
                let mut r = ReadStream::new(&a[..n]);
                r.get_bits(lead).unwrap();
                let got = get(&mut r, widths).unwrap();
                assert_eq!(got, fields.map(|f| f.0));
                assert_eq!(r.bit_position(), wa_bits(lead, &widths));
            }
        }
    }

    fn wa_bits(lead: u32, widths: &[u32]) -> u64 {
        lead as u64 + widths.iter().map(|&w| w as u64).sum::<u64>()
    }

    #[test]
    fn conversions_report_the_primitives_errors() {
        let e = int(7u8, 0, 5, 40).unwrap_err();
        assert_eq!(e.bit(), 40);
        assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }));
        let e = int_from::<u8>(7, 0, 5, 41).unwrap_err();
        assert_eq!(e.bit(), 41);
        assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }));
        assert_eq!(int_from::<i16>(3, -5, 5, 0).unwrap(), -2);
        assert_eq!(int(-2i16, -5, 5, 0).unwrap(), 3);
        assert_eq!(
            uint_bits(9u8, 3, 2).unwrap_err().kind(),
            &ErrorKind::ValueTooWide { value: 9, bits: 3 }
        );
        let q = Quantize::new(0.0, 1.0, 0.01);
        let e = dequantize(q.max_integer_value() as u64 + 1, &q, 5).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::quantized_read(101, &q));
        assert_eq!(e.bit(), 5);
        assert_eq!(
            quantize(1.5, &q, 6).unwrap_err().kind(),
            &ErrorKind::quantized_write(1.5, &q)
        );
        assert_eq!(
            dequantize(quantize(0.5, &q, 0).unwrap(), &q, 0).unwrap(),
            q.dequantize(q.quantize(0.5, 0).unwrap())
        );
    }
}
