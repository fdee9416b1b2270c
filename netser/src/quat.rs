//! Quaternions in smallest-three form: the index of the largest component (2 bits), then
//! the other three, each in `[-1/sqrt(2), 1/sqrt(2)]`, quantized to `bits` bits.
//!
//! `q` and `-q` are the same rotation, so the largest component is made positive and
//! need not be sent: the reader rebuilds it as `sqrt(1 - a^2 - b^2 - c^2)`.
//!
//! Encodings are canonical: the reader refuses one whose rebuilt component would not be
//! positive and the largest (the first of the largest, as the writer picks), so what it
//! returns is a unit quaternion that encodes back to the same bits; the writer moves a
//! small component that quantizes past the largest back by the steps needed.
//!
//! ```
//! use netser::{Decoder, Encoder, ReadStream, WriteStream};
//!
//! // A yaw of 90 degrees, in 2 + 3 * 10 bits.
//! let h = std::f32::consts::FRAC_1_SQRT_2;
//! let mut buf = [0u8; 8];
//! let mut w = WriteStream::new(&mut buf);
//! w.write_quat([0.0, h, 0.0, h], 10)?;
//! assert_eq!(w.bit_position(), netser::quat::quat_bits(10));
//! let len = w.finish();
//!
//! let q = ReadStream::new(&buf[..len]).read_quat(10)?;
//! let len2: f32 = q.iter().map(|c| c * c).sum();
//! assert!((len2 - 1.0).abs() < 1e-5); // a unit quaternion
//! assert!((q[1] - h).abs() < 2e-3 && (q[3] - h).abs() < 2e-3);
//! # Ok::<(), netser::Error>(())
//! ```

mod column;

use crate::error::{Error, ErrorKind, Result};

/// The bound of the three small components: 1/sqrt(2), as float32.
///
/// ```
/// use netser::quat::SMALLEST_THREE_BOUND;
/// // No component but the largest can exceed it: a^2 + b^2 <= 1 with |a| <= |b|.
/// assert!((SMALLEST_THREE_BOUND * SMALLEST_THREE_BOUND - 0.5).abs() < 1e-7);
/// ```
pub const SMALLEST_THREE_BOUND: f32 = core::f32::consts::FRAC_1_SQRT_2;

/// `RN64(1 / SMALLEST_THREE_BOUND)`: the writer divides by the bound by multiplying.
const INV_BOUND: f64 = 1.0 / SMALLEST_THREE_BOUND as f64;

/// `RN32(1 / SMALLEST_THREE_BOUND)`, for [`divide_by_bound_fused`].
#[cfg(feature = "std")]
const INV_BOUND_F32: f32 = 1.0 / SMALLEST_THREE_BOUND;

/// `y / SMALLEST_THREE_BOUND` with fused multiply-adds instead of a division (the batch
/// path's encode at the vector levels that have them): `q = y * r`,
/// `t = fma(fma(-q, bound, y), r, q)` with `r = RN32(1 / bound)`. For the one divisor
/// there is, an exhaustive check stands for a proof: it equals `RN32(y / bound)` for
/// every float32 `y` whose quotient is finite, except where both are at most 2^-25 in
/// magnitude (subnormal `y`), where the quaternion's `n + 1` is 1 either way and so the
/// integers are the same (`netser/examples/exhaustive_quantize.rs`, all 2^32 inputs;
/// `tests/tests/quantize_division_free.rs` samples them in CI).
///
/// ```
/// use netser::quat::{divide_by_bound_fused, SMALLEST_THREE_BOUND};
/// let y = 0.3f32;
/// assert_eq!(divide_by_bound_fused(y).to_bits(), (y / SMALLEST_THREE_BOUND).to_bits());
/// ```
#[cfg(feature = "std")]
#[doc(hidden)]
#[inline(always)]
pub fn divide_by_bound_fused(y: f32) -> f32 {
    crate::quantize::fused_quotient(y, SMALLEST_THREE_BOUND, INV_BOUND_F32)
}

/// `y / SMALLEST_THREE_BOUND` as the column computes it: [`divide_by_bound_fused`] when
/// `fused` ([`crate::batch::SimdLevel::fuses`]), else `divps`; the integers are the same.
#[inline(always)]
fn divide_by_bound(y: f32, fused: bool) -> f32 {
    #[cfg(feature = "std")]
    if fused {
        return divide_by_bound_fused(y);
    }
    let _ = fused;
    y / SMALLEST_THREE_BOUND
}

/// The most bits per component: 20, so that a quaternion is one 62-bit write. Beyond it
/// the steps come close to float32's own spacing near 1/sqrt(2), and a decoded
/// quaternion no longer encodes back to the same bits (sampled: none of 68 million
/// canonical encodings fails at 20 or 21 bits, 0.9% fail at 22).
///
/// ```
/// use netser::quat::{quat_bits, QuatFormat, MAX_BITS};
/// assert_eq!(quat_bits(MAX_BITS), 62);
/// assert!(QuatFormat::try_new(MAX_BITS + 1).is_none());
/// ```
pub const MAX_BITS: u32 = 20;

/// Bits a smallest-three quaternion takes with `bits` per component: `2 + 3 * bits`.
///
/// ```
/// assert_eq!(netser::quat::quat_bits(9), 29);
/// ```
pub const fn quat_bits(bits: u32) -> u64 {
    2 + 3 * bits as u64
}

#[inline]
fn sqrt(x: f32) -> f32 {
    // Both are correctly rounded (IEEE 754), so the results agree everywhere.
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrtf(x)
    }
}

#[inline]
const fn max_int(bits: u32) -> u32 {
    (((1u64) << bits) - 1) as u32
}

/// A component width with its constants, computed once (in a `const` item, at compile
/// time): what [`pack_with`] and [`unpack_with`] use.
///
/// ```
/// use netser::quat::{pack_with, unpack_with, QuatFormat};
/// const Q10: QuatFormat = QuatFormat::new(10);
/// let (largest, small) = pack_with([0.0, 0.6, 0.0, 0.8], &Q10, 0).unwrap();
/// assert_eq!(largest, 3);
/// let q = unpack_with(largest, small, &Q10, 0).unwrap();
/// assert!((q[1] - 0.6).abs() < 1e-3 && (q[3] - 0.8).abs() < 1e-3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuatFormat {
    bits: u32,
    /// The largest component integer, `2^bits - 1`.
    max: u32,
    /// `f32(max) * 0.5`: the encoder's scale from `[-1, 1]` to `[0, max]`.
    half_scale: f32,
    /// `f32(2 * bound / f32(max))`: the decoder's step from an integer to a component.
    step: f32,
    /// How far apart the two largest normalized magnitudes must be for the encoding to be
    /// canonical without checking: 8 steps and 2^-18.
    margin: f32,
}

impl QuatFormat {
    /// The format with `bits` per component.
    ///
    /// # Panics
    /// Unless `2 <= bits <= MAX_BITS` (20); in a `const` item that is a compile error.
    ///
    /// ```
    /// use netser::quat::QuatFormat;
    /// const BONES: QuatFormat = QuatFormat::new(10);
    /// assert_eq!(BONES.wire_bits(), 32);
    /// ```
    pub const fn new(bits: u32) -> Self {
        match Self::try_new(bits) {
            Some(f) => f,
            None => panic!("quaternion components take 2..=20 bits"),
        }
    }

    /// The format with `bits` per component, or `None` unless `2 <= bits <= MAX_BITS`.
    ///
    /// ```
    /// use netser::quat::QuatFormat;
    /// assert_eq!(QuatFormat::try_new(20).map(|f| f.bits()), Some(20));
    /// assert!(QuatFormat::try_new(1).is_none());
    /// assert!(QuatFormat::try_new(21).is_none());
    /// ```
    pub const fn try_new(bits: u32) -> Option<Self> {
        if bits < 2 || bits > MAX_BITS {
            return None;
        }
        let max = max_int(bits);
        let step = 2.0 * SMALLEST_THREE_BOUND / max as f32;
        Some(QuatFormat {
            bits,
            max,
            half_scale: max as f32 * 0.5,
            step,
            margin: 8.0 * step + 1.0 / 262_144.0,
        })
    }

    /// Bits per component.
    ///
    /// ```
    /// use netser::quat::QuatFormat;
    /// assert_eq!(QuatFormat::new(9).bits(), 9);
    /// ```
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// Bits on the wire: `2 + 3 * bits`.
    ///
    /// ```
    /// use netser::quat::QuatFormat;
    /// assert_eq!(QuatFormat::new(9).wire_bits(), 29);
    /// ```
    pub const fn wire_bits(&self) -> u64 {
        quat_bits(self.bits)
    }

    /// The three small components an encoding stands for.
    #[inline(always)]
    fn components(&self, small: [u32; 3]) -> [f32; 3] {
        small.map(|v| v as f32 * self.step - SMALLEST_THREE_BOUND)
    }

    /// The decoded quaternion, when `(largest, small)` is canonical: the omitted component
    /// `sqrt(1 - a^2 - b^2 - c^2)` is positive and is the one the writer would omit (no
    /// component before it as large, none after it larger).
    #[inline(always)]
    fn decode(&self, largest: usize, small: [u32; 3]) -> Option<[f32; 4]> {
        let c = self.components(small);
        let rest = 1.0 - c[0] * c[0] - c[1] * c[1] - c[2] * c[2];
        // NaN when `rest < 0`, and then every comparison below fails.
        let big = sqrt(rest);
        // `others(largest)[j] < largest` exactly when `j < largest`.
        let ok = (rest > 0.0)
            & (if 0 < largest {
                c[0].abs() < big
            } else {
                c[0].abs() <= big
            })
            & (if 1 < largest {
                c[1].abs() < big
            } else {
                c[1].abs() <= big
            })
            & (if 2 < largest {
                c[2].abs() < big
            } else {
                c[2].abs() <= big
            });
        if !ok {
            return None;
        }
        let mut q = [0f32; 4];
        for (j, &i) in others(largest).iter().enumerate() {
            q[i] = c[j];
        }
        q[largest] = big;
        Some(q)
    }

    /// Moves the small component largest in magnitude one step towards zero until the
    /// encoding is canonical. Only a quaternion with two components within a few steps of
    /// each other in magnitude gets here, and one or two moves settle it: each makes the
    /// moved component smaller and the rebuilt one larger (a step, at most 2^-20 * sqrt 2,
    /// is always many float32 spacings, so every move changes the decoded value).
    #[cold]
    #[inline(never)]
    fn canonicalize(&self, largest: usize, mut small: [u32; 3]) -> [u32; 3] {
        // `mid` and `mid + 1` decode to -step/2 and +step/2.
        let mid = self.max / 2;
        // Bounded for any input: the middle is reached in at most 2^19 moves per
        // component, and three components of half a step leave the rebuilt one near 1.
        while self.decode(largest, small).is_none() {
            let c = self.components(small);
            let mut j = 0;
            for i in 1..3 {
                if c[i].abs() > c[j].abs() {
                    j = i;
                }
            }
            if small[j] > mid + 1 {
                small[j] -= 1;
            } else if small[j] < mid {
                small[j] += 1;
            } else {
                // Unreachable: all three within half a step of zero are canonical.
                break;
            }
        }
        small
    }
}

/// Packs `q = [x, y, z, w]` as `(largest index, [three quantized components])`.
///
/// The quaternion is normalized first, so a slightly drifting one encodes fine.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 20`,
/// [`ErrorKind::InvalidQuaternion`] for a non-finite or zero-length quaternion.
///
/// ```
/// use netser::{quat, ErrorKind};
/// let (largest, small) = quat::pack([0.0, 0.0, 0.0, 2.0], 9, 0)?; // normalized first
/// assert_eq!(largest, 3);
/// let q = quat::unpack(largest, small, 9, 0)?;
/// assert!((q[3] - 1.0).abs() < 1e-3);
/// let e = quat::pack([0.0; 4], 9, 40).unwrap_err();
/// assert_eq!((e.kind(), e.bit()), (&ErrorKind::InvalidQuaternion, 40));
/// let e = quat::pack([0.0, 0.0, 0.0, 1.0], 21, 0).unwrap_err();
/// assert_eq!(e.kind(), &ErrorKind::InvalidBitCount { bits: 21, min: 2, max: 20 });
/// # Ok::<(), netser::Error>(())
/// ```
#[inline]
pub fn pack(q: [f32; 4], bits: u32, bit: u64) -> Result<(u32, [u32; 3])> {
    match QuatFormat::try_new(bits) {
        Some(f) => pack_with(q, &f, bit),
        None => Err(Error::new(invalid_bits(bits), bit)),
    }
}

/// [`pack`] with the format's constants computed beforehand (`const F: QuatFormat`).
///
/// The encoding is canonical: [`unpack_with`] accepts it. When two components are within
/// a few steps of each other in magnitude, the smaller ones move towards zero by the
/// steps needed for the omitted component to stay the largest.
///
/// # Errors
/// [`ErrorKind::InvalidQuaternion`] for a non-finite or zero-length quaternion.
///
/// ```
/// use netser::quat::{pack_with, unpack_with, QuatFormat};
/// const F: QuatFormat = QuatFormat::new(12);
/// let h = std::f32::consts::FRAC_1_SQRT_2;
/// // Two equal largest components: the first is omitted, and the encoding reads back.
/// let (largest, small) = pack_with([h, 0.0, 0.0, h], &F, 0)?;
/// assert_eq!(largest, 0);
/// let q = unpack_with(largest, small, &F, 0)?;
/// assert!((q[0] - h).abs() < 1e-3 && (q[3] - h).abs() < 1e-3);
/// # Ok::<(), netser::Error>(())
/// ```
#[inline]
pub fn pack_with(q: [f32; 4], f: &QuatFormat, bit: u64) -> Result<(u32, [u32; 3])> {
    let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    // A NaN component makes `len2` NaN and an infinite one makes it infinite.
    if !(len2 > 0.0 && len2.is_finite()) {
        return Err(Error::new(ErrorKind::InvalidQuaternion, bit));
    }
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    let inv = inv_norm(len2);
    let sign = if q[largest] < 0.0 { -inv } else { inv };
    let mut out = [0u32; 3];
    for (j, i) in others(largest).into_iter().enumerate() {
        // Normalized, each small component is within the bound up to rounding: clamp.
        // `(q[i] * sign) / bound`, exactly, as a float64 product with the bound's
        // reciprocal (the proof is in `crate::quantize`'s docs).
        let n = (((q[i] * sign) as f64 * INV_BOUND) as f32).clamp(-1.0, 1.0);
        // Non-negative, so truncation (through i64: one convert instruction) is floor. At
        // 24 bits and more `(n + 1) * half_scale + 0.5` can round past `max` (to 2^32 at
        // 32 bits): clamp before narrowing.
        out[j] = (((n + 1.0) * f.half_scale + 0.5) as i64).min(f.max as i64) as u32;
    }
    // Canonical unless a small component comes within a few steps of the largest in
    // magnitude: each decoded small component is within half a step (and float32
    // rounding) of its normalized value, so the rebuilt largest, at least 1/2, is within
    // 1.5 steps of its own (the others sum to at most 1.5 in magnitude). A margin of 8
    // steps and 2^-18 covers that; closer pairs take the exact check.
    let mut second = 0f32;
    for i in others(largest) {
        second = second.max(q[i].abs());
    }
    // Finite here (`len2` is), so `<=` is the negation of `>`.
    if (q[largest].abs() - second) * inv <= f.margin && f.decode(largest, out).is_none() {
        out = f.canonicalize(largest, out);
    }
    Ok((largest as u32, out))
}

/// How many float32 spacings from 1 [`inv_norm`] takes without a square root.
const NEAR_ONE: u32 = 1024;

/// `f32(1 / f32(sqrt(len2)))` for a positive finite `len2`, exactly. A normalized
/// quaternion's `len2` lies within a few spacings of 1, and there both roundings have a
/// closed form, so no square root and no division is needed:
///
/// - `len2 = 1 + k * 2^-23` (`0 <= k <= 1024`): `sqrt = 1 + k * 2^-24 - e` with
///   `0 < e < k^2 * 2^-49`, far below half a spacing (2^-24), so it rounds to
///   `s = 1 + floor(k / 2) * 2^-23` (an odd `k` sits just below a midpoint). Then
///   `1 / s = 1 - j * 2^-23 + e'` (`j = floor(k / 2)`, `0 <= e' < j^2 * 2^-46`), and below
///   1 the spacing is 2^-24, so it rounds to `1 - 2j * 2^-24`: the bits of 1 minus `2j`.
/// - `len2 = 1 - k * 2^-24` (`1 <= k <= 1024`): `sqrt = 1 - k * 2^-25 - e`, which rounds
///   to `s = 1 - ceil(k / 2) * 2^-24` (an odd `k` sits just below a midpoint, and goes
///   down). Then `1 / s = 1 + j * 2^-24 + e'` (`j = ceil(k / 2)`), and above 1 the spacing
///   is 2^-23, so it rounds to `1 + ceil(j / 2) * 2^-23` (an odd `j` sits just above a
///   midpoint): the bits of 1 plus `ceil(k / 4)`.
///
/// Elsewhere it divides by the square root. Checked against `1 / sqrt` for every `len2`
/// within 1024 spacings in the tests, and for every positive float32 in
/// `netser/examples/exhaustive_quantize.rs`.
///
/// ```
/// use netser::quat::inv_norm;
/// let near = f32::from_bits(1.0f32.to_bits() + 3);
/// assert_eq!(inv_norm(near), 1.0 / near.sqrt());
/// assert_eq!(inv_norm(4.0), 0.5);
/// ```
#[inline(always)]
pub fn inv_norm(len2: f32) -> f32 {
    const ONE: u32 = 0x3f80_0000; // 1.0
    let b = len2.to_bits();
    if b.wrapping_sub(ONE - NEAR_ONE) <= 2 * NEAR_ONE {
        let inv = if b >= ONE {
            ONE - ((b - ONE) & !1)
        } else {
            ONE + (ONE - b).div_ceil(4)
        };
        f32::from_bits(inv)
    } else {
        1.0 / sqrt(len2)
    }
}

/// The indices other than `largest`, in order.
#[inline(always)]
fn others(largest: usize) -> [usize; 3] {
    match largest {
        0 => [1, 2, 3],
        1 => [0, 2, 3],
        2 => [0, 1, 3],
        _ => [0, 1, 2],
    }
}

/// Rebuilds `[x, y, z, w]` from what [`pack`] produced.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 20`;
/// [`ErrorKind::NonCanonicalQuaternion`] for an encoding no writer produces (see
/// [`unpack_with`]).
///
/// ```
/// use netser::{quat, ErrorKind};
/// let (largest, small) = quat::pack([0.6, 0.0, 0.0, 0.8], 10, 0)?;
/// let q = quat::unpack(largest, small, 10, 0)?;
/// assert!((q[0] - 0.6).abs() < 1e-3 && (q[3] - 0.8).abs() < 1e-3);
/// // Three small components at -1/sqrt(2): their squares already exceed 1.
/// let e = quat::unpack(0, [0, 0, 0], 10, 5).unwrap_err();
/// assert_eq!(e.kind(), &ErrorKind::NonCanonicalQuaternion { largest: 0 });
/// # Ok::<(), netser::Error>(())
/// ```
#[inline]
pub fn unpack(largest: u32, small: [u32; 3], bits: u32, bit: u64) -> Result<[f32; 4]> {
    match QuatFormat::try_new(bits) {
        Some(f) => unpack_with(largest, small, &f, bit),
        None => Err(Error::new(invalid_bits(bits), bit)),
    }
}

/// [`unpack`] with the format's constants computed beforehand.
///
/// The omitted component is rebuilt as `sqrt(1 - a^2 - b^2 - c^2)`; the encoding is
/// refused unless that is positive and is the component the writer omits (the first of
/// the largest in magnitude), so the result is a unit quaternion that encodes back to
/// the same bits. `largest` is taken modulo 4 and each component modulo `2^bits`
/// as the reader delivers them.
///
/// # Errors
/// [`ErrorKind::NonCanonicalQuaternion`].
///
/// ```
/// use netser::quat::{pack_with, unpack_with, QuatFormat};
/// const F: QuatFormat = QuatFormat::new(9);
/// let (largest, small) = pack_with([0.0, 0.0, 0.0, 1.0], &F, 0)?;
/// let q = unpack_with(largest, small, &F, 0)?;
/// assert!((q[3] - 1.0).abs() < 1e-3);
/// assert!(unpack_with(1, [0, 0, 0], &F, 0).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
#[inline]
pub fn unpack_with(largest: u32, small: [u32; 3], f: &QuatFormat, bit: u64) -> Result<[f32; 4]> {
    let largest = largest & 3;
    let small = small.map(|v| v & f.max);
    f.decode(largest as usize, small).ok_or_else(|| {
        Error::new(
            ErrorKind::NonCanonicalQuaternion {
                largest: largest as u8,
            },
            bit,
        )
    })
}

/// Refuses a component width outside `2..=MAX_BITS` (20).
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`].
///
/// ```
/// use netser::{quat::check_bits, ErrorKind};
/// assert!(check_bits(9, 0).is_ok());
/// let e = check_bits(21, 7).unwrap_err();
/// assert_eq!(
///     (e.kind(), e.bit()),
///     (&ErrorKind::InvalidBitCount { bits: 21, min: 2, max: 20 }, 7)
/// );
/// assert_eq!(e.to_string(), "invalid bit count 21, expected 2..=20 at bit 7");
/// ```
#[inline]
pub fn check_bits(bits: u32, bit: u64) -> Result<()> {
    if (2..=MAX_BITS).contains(&bits) {
        Ok(())
    } else {
        Err(Error::new(invalid_bits(bits), bit))
    }
}

/// A quaternion's component width outside `2..=MAX_BITS`.
fn invalid_bits(bits: u32) -> ErrorKind {
    ErrorKind::InvalidBitCount {
        bits,
        min: 2,
        max: MAX_BITS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_rotation(a: [f32; 4], b: [f32; 4], tol: f32) -> bool {
        let dot: f32 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
        (1.0 - dot.abs()) < tol
    }

    #[test]
    fn round_trips_within_precision() {
        let qs = [
            [0.0, 0.0, 0.0, 1.0],
            [0.5, 0.5, 0.5, 0.5],
            [-0.5, 0.5, -0.5, -0.5],
            [0.1825742, 0.3651484, 0.5477226, 0.7302967],
            [0.0, -1.0, 0.0, 0.0],
        ];
        for q in qs {
            let (i, s) = pack(q, 12, 0).unwrap();
            let r = unpack(i, s, 12, 0).unwrap();
            assert!(same_rotation(q, r, 1e-5), "{q:?} -> {r:?}");
        }
    }

    #[test]
    fn refuses_degenerate_input() {
        assert_eq!(
            pack([0.0; 4], 9, 3).unwrap_err().kind(),
            &ErrorKind::InvalidQuaternion
        );
        assert_eq!(
            pack([f32::NAN, 0.0, 0.0, 1.0], 9, 3).unwrap_err().kind(),
            &ErrorKind::InvalidQuaternion
        );
        assert_eq!(
            pack([0.0, 0.0, 0.0, 1.0], 1, 3).unwrap_err().kind(),
            &ErrorKind::InvalidBitCount {
                bits: 1,
                min: 2,
                max: MAX_BITS
            }
        );
        assert!(pack([0.0, 0.0, 0.0, 1.0], 33, 3).is_err());
    }

    #[test]
    fn wire_bits_decode_to_unit_quaternions_or_are_refused() {
        let max = max_int(9);
        for v in [0, 1, max / 2, max] {
            match unpack(3, [v, max, 0], 9, 0) {
                Ok(q) => {
                    let n2: f32 = q.iter().map(|c| c * c).sum();
                    assert!((n2 - 1.0).abs() < 1e-6, "{q:?}");
                }
                Err(e) => assert_eq!(e.kind(), &ErrorKind::NonCanonicalQuaternion { largest: 3 }),
            }
        }
    }
}
