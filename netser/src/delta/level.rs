//! Integer levels sent relative to the baseline's level: ranged integers (their offset
//! from the minimum), unsigned integers of `bits` bits, and quantized floats (their
//! integer), in the small/large/absolute ladder of "Snapshot Compression".
//!
//! A field whose absolute form takes `R` bits (its levels `0..=max`, `R =
//! bits_required(0, max)`) writes, with `d = level - baseline_level`:
//!
//! | delta | bits | `R >= 6` |
//! |---|---|---|
//! | `d == 0` | `0` | 1 bit |
//! | `1 <= \|d\| <= 2^(s-1)` | `1 0` + `s`-bit code | `2 + s` |
//! | `2^(s-1) < \|d\| <= 2^(s-1) + 2^(l-1)` | `1 1 0` + `l`-bit code | `3 + l` |
//! | otherwise | `1 1 1` + the level in `R` bits | `3 + R` |
//!
//! with `s = (R + 3) / 4` and `l = (R + 1) / 2` ([`level_tiers`]): at the articles'
//! 18-bit positions, 5 and 9 bits, the article's own choice. Below 6 bits a tier saves
//! too little: a changed level is `1` and the level in `R` bits. A field of one value
//! (`R == 0`) takes no bits. The worst case is [`level_delta_max_bits`]: `R + 3` (`R + 1`
//! below 6 bits), three bits over the absolute encoding.

use crate::error::{Error, ErrorKind, Result};
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::stream::{range_error, trace_int, Decoder, Encoder};
use crate::trace::TraceValue;

/// The fewest level bits that get the small and large tiers.
///
/// ```
/// use netser::delta::{level_tiers, level::TIERED_FROM};
/// assert!(level_tiers(TIERED_FROM).is_some());
/// assert!(level_tiers(TIERED_FROM - 1).is_none());
/// ```
pub const TIERED_FROM: u32 = 6;

/// The small and large tiers' code widths `(s, l)` of a level of `bits` bits, or `None`
/// when it has no tiers (fewer than [`TIERED_FROM`] bits).
///
/// ```
/// use netser::delta::level_tiers;
/// assert_eq!(level_tiers(18), Some((5, 9))); // small: ±16, large: ±(16 + 256)
/// assert_eq!(level_tiers(14), Some((4, 7)));
/// assert_eq!(level_tiers(5), None);
/// ```
pub const fn level_tiers(bits: u32) -> Option<(u32, u32)> {
    if bits < TIERED_FROM {
        None
    } else {
        Some((bits.div_ceil(4), bits.div_ceil(2)))
    }
}

/// The most bits a level delta of a `bits`-bit field takes: 0 for no bits, `bits + 1`
/// without tiers, `bits + 3` with them.
///
/// ```
/// use netser::delta::level_delta_max_bits;
/// assert_eq!(level_delta_max_bits(0), 0);
/// assert_eq!(level_delta_max_bits(4), 5);
/// assert_eq!(level_delta_max_bits(18), 21);
/// ```
pub const fn level_delta_max_bits(bits: u32) -> u64 {
    if bits == 0 {
        0
    } else if bits < TIERED_FROM {
        bits as u64 + 1
    } else {
        bits as u64 + 3
    }
}

/// Writes up to 128 bits (low part first: the same bits as one piece).
fn put_wide<E: Encoder>(e: &mut E, v: u128, bits: u32) -> Result<()> {
    if bits <= 64 {
        e.put_bits_bounded(v as u64, bits)
    } else {
        e.put_bits_bounded(v as u64, 64)?;
        e.put_bits_bounded((v >> 64) as u64, bits - 64)
    }
}

fn get_wide<D: Decoder>(d: &mut D, bits: u32) -> Result<u128> {
    if bits <= 64 {
        Ok(d.get_bits(bits)? as u128)
    } else {
        let low = d.get_bits(64)? as u128;
        Ok(low | (d.get_bits(bits - 64)? as u128) << 64)
    }
}

/// Writes `level` relative to `baseline` (both `<= max`, a `bits`-bit field), changed
/// bit included, untraced. The caller has checked both levels.
pub(crate) fn put_level<E: Encoder>(
    e: &mut E,
    level: u128,
    baseline: u128,
    bits: u32,
) -> Result<()> {
    if bits == 0 {
        return Ok(());
    }
    if level == baseline {
        return e.put_bits_bounded(0, 1);
    }
    let Some((s, l)) = level_tiers(bits) else {
        e.put_bits_bounded(1, 1)?;
        return put_wide(e, level, bits);
    };
    let up = level > baseline;
    let mag = if up {
        level - baseline
    } else {
        baseline - level
    };
    let h = 1u128 << (s - 1);
    let big = 1u128 << (l - 1);
    if mag <= h {
        let code = if up { h + mag - 1 } else { h - mag };
        // `1 0`, LSB first: the changed bit, then the tier bit.
        e.put_bits_bounded(0b01, 2)?;
        put_wide(e, code, s)
    } else if mag - h <= big {
        let code = if up {
            big + (mag - h - 1)
        } else {
            big - (mag - h)
        };
        e.put_bits_bounded(0b011, 3)?;
        put_wide(e, code, l)
    } else {
        e.put_bits_bounded(0b111, 3)?;
        put_wide(e, level, bits)
    }
}

/// Reads a level written by [`put_level`] against `baseline`, refusing one above `max`
/// ([`ErrorKind::DeltaOutOfRange`] for a relative tier; the caller's own error for an
/// absolute level, which `Err(level)` carries).
pub(crate) fn get_level<D: Decoder>(
    d: &mut D,
    baseline: u128,
    max: u128,
    bits: u32,
) -> Result<core::result::Result<u128, u128>> {
    let start = d.bit_position();
    if bits == 0 || !d.read_bool()? {
        return Ok(Ok(baseline));
    }
    let Some((s, l)) = level_tiers(bits) else {
        let level = get_wide(d, bits)?;
        return Ok(if level > max { Err(level) } else { Ok(level) });
    };
    let (up, mag) = if !d.read_bool()? {
        let h = 1u128 << (s - 1);
        let code = get_wide(d, s)?;
        if code >= h {
            (true, code - h + 1)
        } else {
            (false, h - code)
        }
    } else if !d.read_bool()? {
        let h = 1u128 << (s - 1);
        let big = 1u128 << (l - 1);
        let code = get_wide(d, l)?;
        if code >= big {
            (true, code - big + h + 1)
        } else {
            (false, big - code + h)
        }
    } else {
        let level = get_wide(d, bits)?;
        return Ok(if level > max { Err(level) } else { Ok(level) });
    };
    let out = if up {
        (mag <= max - baseline).then(|| baseline + mag)
    } else {
        (mag <= baseline).then(|| baseline - mag)
    };
    out.map(Ok).ok_or_else(|| {
        Error::new(
            ErrorKind::DeltaOutOfRange {
                baseline,
                delta: if up { mag as i128 } else { -(mag as i128) },
                max,
            },
            start,
        )
    })
}

/// Writes a ranged integer relative to `baseline`, both in `min..=max`.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] when the value or the baseline is outside the range (a
/// baseline is a value the receiver decoded, so it never is),
/// [`ErrorKind::InvalidRange`], [`ErrorKind::BufferFull`].
///
/// ```
/// use netser::delta::{read_int_delta, write_int_delta};
/// use netser::{MeasureStream, ReadStream, WriteStream, Encoder};
/// let mut m = MeasureStream::new();
/// write_int_delta(&mut m, 500u16, 500, 0, 1000)?;
/// assert_eq!(m.bits(), 1); // unchanged
/// write_int_delta(&mut m, 502u16, 500, 0, 1000)?;
/// assert_eq!(m.bits(), 1 + 2 + 3); // 10 bits: small tier of 3 bits
/// let mut buf = [0u8; 4];
/// let mut w = WriteStream::new(&mut buf);
/// write_int_delta(&mut w, 430u16, 500, 0, 1000)?;
/// let len = w.finish();
/// assert_eq!(read_int_delta(&mut ReadStream::new(&buf[..len]), 500u16, 0, 1000)?, 430);
/// assert!(write_int_delta(&mut m, 1001u16, 500, 0, 1000).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn write_int_delta<E: Encoder, I: RangedInt>(
    e: &mut E,
    value: I,
    baseline: I,
    min: I,
    max: I,
) -> Result<()> {
    let start = e.bit_position();
    for v in [value, baseline] {
        if !(v >= min && v <= max) {
            return Err(range_error(v, min, max, start));
        }
    }
    put_level(
        e,
        value.offset_from(min),
        baseline.offset_from(min),
        I::range_bits(min, max),
    )?;
    e.trace(start, trace_int(value));
    Ok(())
}

/// Reads a ranged integer written by [`write_int_delta`] against `baseline`.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] for a baseline outside the range or an absolute value
/// above it, [`ErrorKind::DeltaOutOfRange`] for a delta leading outside it,
/// [`ErrorKind::EndOfBuffer`].
///
/// ```
/// use netser::delta::read_int_delta;
/// use netser::ReadStream;
/// // `0`: unchanged.
/// assert_eq!(read_int_delta(&mut ReadStream::new(&[0]), -7i32, -100, 100)?, -7);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn read_int_delta<D: Decoder, I: RangedInt>(
    d: &mut D,
    baseline: I,
    min: I,
    max: I,
) -> Result<I> {
    let start = d.bit_position();
    int_unchanged(baseline, min, max, start)?;
    let bits = I::range_bits(min, max);
    let value = match get_level(d, baseline.offset_from(min), max.offset_from(min), bits)? {
        Ok(level) => I::from_offset(min, level),
        Err(level) => {
            return Err(crate::stream::headroom_error(level, min, max, start));
        }
    };
    d.trace(start, trace_int(value));
    Ok(value)
}

/// What an unchanged ranged integer decodes to: the baseline, checked against the range.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] (at `bit`) for a baseline outside the range.
///
/// ```
/// use netser::delta::int_unchanged;
/// assert_eq!(int_unchanged(7u8, 0, 10, 0)?, 7);
/// assert!(int_unchanged(70u8, 0, 10, 0).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn int_unchanged<I: RangedInt>(baseline: I, min: I, max: I, bit: u64) -> Result<I> {
    if baseline >= min && baseline <= max {
        Ok(baseline)
    } else {
        Err(range_error(baseline, min, max, bit))
    }
}

/// Whether a ranged integer's delta is "unchanged": the value, checked against the
/// range, equals the baseline.
///
/// # Errors
/// [`ErrorKind::OutOfRange`] (at `bit`) for a value outside the range.
///
/// ```
/// use netser::delta::int_unchanged_from;
/// assert!(int_unchanged_from(5i8, 5, -8, 8, 0)?);
/// assert!(!int_unchanged_from(6i8, 5, -8, 8, 0)?);
/// assert!(int_unchanged_from(9i8, 9, -8, 8, 0).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn int_unchanged_from<I: RangedInt>(
    value: I,
    baseline: I,
    min: I,
    max: I,
    bit: u64,
) -> Result<bool> {
    if !(value >= min && value <= max) {
        return Err(range_error(value, min, max, bit));
    }
    Ok(value == baseline)
}

/// The integer a `f64` field quantizes to, as [`Encoder::write_compressed_f64`] finds it.
pub(crate) fn quantize_f64(q: &Quantize, value: f64, bit: u64) -> Result<u32> {
    if value.is_finite() && !(value as f32).is_finite() && !q.is_clamping() {
        return Err(Error::new(ErrorKind::quantized_write(value, q), bit));
    }
    if !value.is_finite() {
        return Err(Error::new(ErrorKind::NotFinite { value }, bit));
    }
    q.quantize(value.clamp(f32::MIN as f64, f32::MAX as f64) as f32, bit)
}

/// A float quantized by `q` (an `f32` or an `f64` field), for the generic helpers.
///
/// ```
/// use netser::delta::QuantizedFloat;
/// use netser::Quantize;
/// let q = Quantize::new(0.0, 1.0, 0.01);
/// assert_eq!(0.5f64.level(&q, 0)?, 50);
/// assert_eq!(f64::from_level(&q, 50), 0.5);
/// # Ok::<(), netser::Error>(())
/// ```
pub trait QuantizedFloat: Copy {
    /// Its integer under `q`, as the absolute writer computes it.
    ///
    /// # Errors
    /// As [`Quantize::quantize`].
    ///
    /// ```
    /// use netser::delta::QuantizedFloat;
    /// let q = netser::Quantize::new(0.0, 1.0, 0.01);
    /// assert!(2.0f32.level(&q, 0).is_err());
    /// ```
    fn level(self, q: &Quantize, bit: u64) -> Result<u32>;
    /// The value integer `n` decodes to, as the absolute reader returns it.
    ///
    /// ```
    /// use netser::delta::QuantizedFloat;
    /// let q = netser::Quantize::new(0.0, 1.0, 0.01);
    /// assert_eq!(f32::from_level(&q, 100), 1.0);
    /// ```
    fn from_level(q: &Quantize, n: u32) -> Self;
    /// For traces.
    #[doc(hidden)]
    fn trace_value(self) -> TraceValue<'static>;
}

impl QuantizedFloat for f32 {
    #[inline]
    fn level(self, q: &Quantize, bit: u64) -> Result<u32> {
        q.quantize(self, bit)
    }
    #[inline]
    fn from_level(q: &Quantize, n: u32) -> Self {
        q.dequantize(n)
    }
    fn trace_value(self) -> TraceValue<'static> {
        TraceValue::F32(self)
    }
}

impl QuantizedFloat for f64 {
    #[inline]
    fn level(self, q: &Quantize, bit: u64) -> Result<u32> {
        quantize_f64(q, self, bit)
    }
    #[inline]
    fn from_level(q: &Quantize, n: u32) -> Self {
        f64::from(q.dequantize(n))
    }
    fn trace_value(self) -> TraceValue<'static> {
        TraceValue::F64(self)
    }
}

/// Writes a quantized float (`f32` or `f64`) relative to `baseline`: its integer
/// relative to the baseline's integer.
///
/// # Errors
/// As [`Encoder::write_compressed_f32`] for the value or the baseline.
///
/// ```
/// use netser::delta::write_quantized_delta;
/// use netser::{MeasureStream, Quantize};
/// const X: Quantize = Quantize::new(-256.0, 255.0, 1.0 / 512.0); // 18 bits
/// let mut m = MeasureStream::new();
/// write_quantized_delta(&mut m, 10.0f32, 10.0001, &X)?; // same integer
/// assert_eq!(m.bits(), 1);
/// write_quantized_delta(&mut m, 10.2f32, 10.0, &X)?; // +102: the large tier
/// assert_eq!(m.bits(), 1 + 3 + 9);
/// # Ok::<(), netser::Error>(())
/// ```
pub fn write_quantized_delta<E: Encoder, F: QuantizedFloat>(
    e: &mut E,
    value: F,
    baseline: F,
    q: &Quantize,
) -> Result<()> {
    let start = e.bit_position();
    let n = value.level(q, start)?;
    let nb = baseline.level(q, start)?;
    put_level(e, n as u128, nb as u128, q.bits())?;
    e.trace(start, value.trace_value());
    Ok(())
}

/// Reads a quantized float written by [`write_quantized_delta`] against `baseline`.
///
/// # Errors
/// As [`Decoder::read_compressed_f32`], [`ErrorKind::DeltaOutOfRange`], and the
/// baseline's quantization error.
///
/// ```
/// use netser::delta::{read_quantized_delta, write_quantized_delta};
/// use netser::{Decoder, Encoder, Quantize, ReadStream, WriteStream};
/// const Z: Quantize = Quantize::new(0.0, 32.0, 1.0 / 512.0);
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::new(&mut buf);
/// write_quantized_delta(&mut w, 1.5f32, 1.25, &Z)?;
/// w.write_compressed_f32(1.5, &Z)?; // the same value, absolute
/// let len = w.finish();
/// let mut r = ReadStream::new(&buf[..len]);
/// let delta: f32 = read_quantized_delta(&mut r, 1.25f32, &Z)?;
/// assert_eq!(delta.to_bits(), r.read_compressed_f32(&Z)?.to_bits());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn read_quantized_delta<D: Decoder, F: QuantizedFloat>(
    d: &mut D,
    baseline: F,
    q: &Quantize,
) -> Result<F> {
    let start = d.bit_position();
    let nb = baseline.level(q, start)?;
    let n = match get_level(d, nb as u128, q.max_integer_value() as u128, q.bits())? {
        Ok(n) => n as u32,
        Err(n) => return Err(Error::new(ErrorKind::quantized_read(n as u64, q), start)),
    };
    let v = F::from_level(q, n);
    d.trace(start, v.trace_value());
    Ok(v)
}

/// What an unchanged quantized float decodes to: the baseline's integer, decoded.
///
/// # Errors
/// The baseline's quantization error (at `bit`).
///
/// ```
/// use netser::delta::quantized_unchanged;
/// use netser::Quantize;
/// let q = Quantize::new(0.0, 1.0, 0.01);
/// assert_eq!(quantized_unchanged(0.5f32, &q, 0)?, 0.5);
/// assert_eq!(quantized_unchanged(0.123f32, &q, 0)?, q.dequantize(12));
/// # Ok::<(), netser::Error>(())
/// ```
pub fn quantized_unchanged<F: QuantizedFloat>(baseline: F, q: &Quantize, bit: u64) -> Result<F> {
    Ok(F::from_level(q, baseline.level(q, bit)?))
}

/// Whether a quantized float's delta is "unchanged": the value and the baseline quantize
/// to the same integer.
///
/// # Errors
/// The value's or the baseline's quantization error (at `bit`).
///
/// ```
/// use netser::delta::quantized_unchanged_from;
/// use netser::Quantize;
/// let q = Quantize::new(0.0, 1.0, 0.01);
/// assert!(quantized_unchanged_from(0.5f32, 0.501, &q, 0)?);
/// assert!(quantized_unchanged_from(2.0f32, 0.5, &q, 0).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub fn quantized_unchanged_from<F: QuantizedFloat>(
    value: F,
    baseline: F,
    q: &Quantize,
    bit: u64,
) -> Result<bool> {
    Ok(value.level(q, bit)? == baseline.level(q, bit)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MeasureStream, ReadStream, WriteStream};

    fn round(level: u128, baseline: u128, max: u128, bits: u32) -> (u64, u128) {
        let mut buf = [0u8; 40];
        let mut w = WriteStream::new(&mut buf);
        put_level(&mut w, level, baseline, bits).unwrap();
        let n = w.bit_position();
        let len = w.finish();
        let got = get_level(&mut ReadStream::new(&buf[..len]), baseline, max, bits)
            .unwrap()
            .unwrap();
        (n, got)
    }

    #[test]
    fn every_level_pair_of_small_fields_round_trips_within_the_bound() {
        for bits in 0..=9u32 {
            let max = (1u128 << bits) - 1;
            for b in 0..=max {
                for v in 0..=max {
                    let (n, got) = round(v, b, max, bits);
                    assert_eq!(got, v, "bits {bits} b {b} v {v}");
                    assert!(n <= level_delta_max_bits(bits));
                    if v == b && bits > 0 {
                        assert_eq!(n, 1);
                    }
                }
            }
        }
    }

    #[test]
    fn tier_edges_at_18_bits() {
        let max = (1u128 << 18) - 1;
        let b = 100_000;
        for (d, bits) in [
            (1i128, 7u64),
            (-1, 7),
            (16, 7),
            (-16, 7),
            (17, 12),
            (-17, 12),
            (272, 12),
            (-272, 12),
            (273, 21),
            (-273, 21),
        ] {
            let v = (b as i128 + d) as u128;
            assert_eq!(round(v, b, max, 18), (bits, v), "d {d}");
        }
        assert_eq!(round(max, 0, max, 18), (21, max));
        assert_eq!(round(0, max, max, 18), (21, 0));
    }

    #[test]
    fn a_delta_leading_outside_the_range_is_refused() {
        // 8 bits, levels 0..=200: baseline 199, small tier +2 leads to 201.
        let mut m = [0u8; 4];
        let mut w = WriteStream::new(&mut m);
        put_level(&mut w, 201, 199, 8).unwrap();
        let len = w.finish();
        let e = get_level(&mut ReadStream::new(&m[..len]), 199, 200, 8).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::DeltaOutOfRange {
                baseline: 199,
                delta: 2,
                max: 200
            }
        );
        // Below zero.
        let mut w = WriteStream::new(&mut m);
        put_level(&mut w, 0, 1, 8).unwrap(); // -1
        let len = w.finish();
        assert!(get_level(&mut ReadStream::new(&m[..len]), 0, 200, 8).is_err());
    }

    #[test]
    fn wide_levels_use_two_words() {
        let max = u128::MAX;
        for (v, b) in [
            (u128::MAX, 0),
            (5, 3),
            (1u128 << 100, (1u128 << 100) + 70_000),
        ] {
            let (n, got) = round(v, b, max, 128);
            assert_eq!(got, v);
            assert!(n <= 131);
        }
        let mut m = MeasureStream::new();
        write_int_delta(&mut m, i128::MIN, i128::MAX, i128::MIN, i128::MAX).unwrap();
        assert_eq!(m.bits(), 131);
    }
}
