//! Compressed floats: a bounded float sent as an integer in `[0, max_integer_value]`,
//! as "Serialization Strategies" describes and the reference implements.
//!
//! ```
//! use netser::{Decoder, Encoder, Quantize, ReadStream, WriteStream};
//!
//! // A position in a 2 km world to the centimetre: 18 bits instead of 32.
//! const POS: Quantize = Quantize::new(-1024.0, 1024.0, 0.01);
//! let mut buf = [0u8; 8];
//! let mut w = WriteStream::new(&mut buf);
//! w.write_compressed_f32(123.456, &POS)?;
//! assert_eq!(w.bit_position(), 18);
//! let len = w.finish();
//!
//! let x = ReadStream::new(&buf[..len]).read_compressed_f32(&POS)?;
//! assert!((x - 123.456).abs() <= 0.005); // within half a step
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! Every step is float32 arithmetic that rounds (Rust never fuses a multiply and an add
//! unless asked), so the bytes are identical on x86 and arm64.
//!
//! # Division without dividing
//!
//! The reference divides twice per value: `f32(v - min) / delta` on write and
//! `f32(integer) / f32(max_integer_value)` on read. Both divisors are fixed when the
//! quantization is built, so [`Quantize`] keeps their reciprocals as float64 and
//! multiplies instead: for float32 `a >= 0` and `d > 0`, with `r = RN64(1 / d)`,
//! `RN32(RN64(a * r)) == RN32(a / d)` whenever `a / d` is a normal float32 (and both are
//! below `2^-126` otherwise). [`crate::quat`] does the same for its bound.
//!
//! Proof. Let `q = a / d`, and `m` a float32 rounding boundary (a midpoint between two
//! adjacent float32 values) nearest to `q`. In the binade `[2^e, 2^(e+1))` of `q`,
//! `m = (2K + 1) * 2^(e-24)` with `2K + 1` an odd integer in `[2^24, 2^25)`.
//!
//! 1. `q != m`: write `a = A * 2^x` and `d = D * 2^y` with `A`, `D` odd integers below
//!    2^24. `a = m * d` would give `A = (2K + 1) * D >= 2^24`, a contradiction. So the
//!    quotient is never halfway between two float32 values.
//! 2. `|q - m| > q * 2^-49`: `a` is a multiple of its spacing, more than `a * 2^-24`, and
//!    `m * d` a multiple of `2^(e-24)` times `d`'s spacing, more than
//!    `(q / 2) * 2^-24 * d * 2^-24 = a * 2^-49`. So `a - m * d`, not zero, is at least
//!    their smaller power of two, more than `a * 2^-49`, and dividing by `d` gives it.
//!    Boundaries in the binades beside `q`'s are farther still (at least `2^(e-25)`).
//! 3. `|RN64(a * r) - q| < q * 2^-51`: two float64 roundings of relative error at most
//!    `2^-53` each (no underflow or overflow: `q` is a normal float32, `r` lies in
//!    `[2^-128, 2^149]`).
//!
//! So no rounding boundary lies between `q` and the float64 product, and both round to
//! the same float32. When `q` is below `2^-126` (a subnormal `n`, from a value within a
//! subnormal distance of `min`), both round to values below `2^-126`, and
//! `floor(f32(f32(n * max_integer_value) + 0.5))` is 0 either way. On read the quotient is
//! 0 or at least `2^-32`. `netser/examples/exhaustive_quantize.rs` checks every float32 input and
//! every integer of the quantizations the benchmark and the conformance vectors use
//! against the dividing arithmetic; `tests/tests/quantize_division_free.rs` samples ten
//! million inputs of each in CI.
//!
//! # Dividing an integer with fused multiply-adds
//!
//! The batch path's read, at the vector levels that have fused multiply-adds, finds the
//! same quotient `RN32(n / M)` for integers `0 <= n <= M` with `1 <= M < 2^22` (both
//! exact as float32) in three steps, with `r = RN32(1 / M)`:
//! `q = RN32(n * r)`, `e = RN32(n - q * M)` (fused), `t = RN32(q + e * r)` (fused).
//!
//! Proof that `t = RN32(n / M)`. Let `x = n / M`, in the binade `[2^f, 2^(f+1))`
//! (`f <= 0`), so its spacing is `u = 2^(f-23)`; `x = 0` gives `q = e = t = 0`.
//!
//! 1. `|r - 1/M| <= 2^-24 / M` (`r` is `1/M` correctly rounded), so
//!    `|n * r - x| <= 2^-24 * x < u`, and rounding adds at most `u` more (half the
//!    spacing of a product that may reach the next binade): `|q - x| < 2u`.
//! 2. `e` is exact: `n - q * M` is a multiple of `q`'s spacing (`n` is an integer, `M`
//!    an integer, the spacing at most 2^-23), of magnitude `M * |x - q| < 2^22 * 2u`,
//!    which is at most 2^24 times that spacing (at least `u / 2`): it fits 24 bits.
//! 3. So `q + e * r - x = e * (r - 1/M)`, of magnitude at most
//!    `M * |x - q| * 2^-24 / M < 2u * 2^-24 = 2^(f-46)`, and the fused step rounds that
//!    exact sum once.
//! 4. No rounding boundary lies that close to `x`. If `x` is a float32 the nearest
//!    boundary is at least `2^(f-25)` away. Otherwise a boundary in its binade is
//!    `m = (2K + 1) * 2^(f-24)`; `x = m` would make `M * (2K + 1) = n * 2^(24-f)`, whose
//!    reduced denominator `2^(24-f) >= 2^24` exceeds `M`, so `x != m`, and
//!    `|x - m| = |n * 2^(24-f) - (2K + 1) * M| / (M * 2^(24-f)) >= 2^(f-24) / M`,
//!    more than `2^(f-46)` because `M < 2^22`.
//!
//! So `t` and `x` round to the same float32. (Against a general float32 divisor step 4
//! leaves no such margin, which is why the write keeps its float64 product.)
//! `netser/examples/exhaustive_quantize.rs` checks it for every integer of the benchmark's and
//! the conformance vectors' quantizations, and `tests/tests/quantize_division_free.rs`
//! for every integer of theirs and sampled pairs up to 2^22.

// The negated comparisons are deliberate: they follow the reference, where a NaN fails
// every comparison and so takes the clamping branch.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub(crate) mod column;

/// `a / b` by fused multiply-adds, with `r = RN32(1 / b)`: `q = a * r`, then `q`
/// corrected once by the remainder `a - q * b`, which the first fused step finds
/// exactly. The correctly rounded quotient where the module docs prove it (integers
/// below 2^22) and where [`crate::quat::divide_by_bound_fused`]'s exhaustive check
/// shows it; not for any float32 divisor.
#[cfg(feature = "std")]
#[inline(always)]
pub(crate) fn fused_quotient(a: f32, b: f32, r: f32) -> f32 {
    let q = a * r;
    (-q).mul_add(b, a).mul_add(r, q)
}

use crate::bits::bits_required;
use crate::error::{shortest, Error, ErrorKind, Result};

/// The largest `delta / res` the reference allows (the largest float32 below 2^32).
const MAX_VALUES: f32 = 4_294_967_040.0;

/// A quantization: `min..=max` at resolution `res`, with its integer range and bit cost
/// precomputed (usable in `const` items).
///
/// ```
/// use netser::Quantize;
/// const POS: Quantize = Quantize::new(-1024.0, 1024.0, 0.01);
/// assert_eq!(POS.max_integer_value(), 204_800);
/// assert_eq!(POS.bits(), 18);
/// // The reference's `ceil`: 63.3 / 1 rounds up to 64 steps, which takes 7 bits.
/// assert_eq!(Quantize::new(0.0, 63.3, 1.0).bits(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantize {
    min: f32,
    max: f32,
    res: f32,
    delta: f32,
    max_integer_value: u32,
    /// `max_integer_value` as a float, converted once.
    max_integer_f32: f32,
    /// `RN64(1 / delta)`: the write's division as a multiplication (module docs).
    inv_delta: f64,
    /// `RN64(1 / f32(max_integer_value))`: the read's division as a multiplication.
    inv_max_integer: f64,
    /// `RN32(1 / f32(max_integer_value))`: the read's division as fused multiply-adds
    /// (module docs).
    inv_max_integer_f32: f32,
    /// The value the top integer decodes to, `f32(delta + min)`: `max` itself, or the
    /// float32 next to it when `delta` rounded. The writer accepts it, so that every
    /// value a reader returns encodes again (to the top integer).
    top: f32,
    bits: u32,
    clamp: bool,
}

impl Quantize {
    /// `min..=max` at resolution `res`. Values outside the range are an error when
    /// written; see [`Quantize::clamping`].
    ///
    /// # Panics
    /// When the parameters are invalid (see [`Quantize::try_new`]); in a `const` item
    /// that is a compile error.
    ///
    /// ```
    /// use netser::Quantize;
    /// const AIM: Quantize = Quantize::new(-1.0, 1.0, 0.01);
    /// assert_eq!((AIM.max_integer_value(), AIM.bits()), (200, 8));
    /// ```
    pub const fn new(min: f32, max: f32, res: f32) -> Self {
        match Self::try_new(min, max, res) {
            Some(q) => q,
            None => panic!("invalid quantization: need finite min < max and 0 < res"),
        }
    }

    /// `min..=max` at resolution `res`, or `None` unless all three are finite, `min < max`
    /// and `res > 0`.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert!(Quantize::try_new(1.0, 0.0, 0.1).is_none());
    /// assert!(Quantize::try_new(0.0, 1.0, 0.0).is_none());
    /// ```
    pub const fn try_new(min: f32, max: f32, res: f32) -> Option<Self> {
        let valid = min.is_finite() && max.is_finite() && res.is_finite() && min < max && res > 0.0;
        if !valid {
            return None;
        }
        let delta = max - min;
        if !delta.is_finite() {
            return None;
        }
        let mut values = delta / res;
        if !(values >= 1.0) {
            values = 1.0;
        } else if values > MAX_VALUES {
            values = MAX_VALUES;
        }
        // ceil(values), exact for the clamped range.
        let truncated = values as u32;
        let max_integer_value = if (truncated as f32) < values {
            truncated + 1
        } else {
            truncated
        };
        let max_integer_f32 = max_integer_value as f32;
        Some(Quantize {
            min,
            max,
            res,
            delta,
            max_integer_value,
            max_integer_f32,
            inv_delta: 1.0 / delta as f64,
            inv_max_integer: 1.0 / max_integer_f32 as f64,
            inv_max_integer_f32: 1.0 / max_integer_f32,
            // `dequantize(max_integer_value)`: its quotient is exactly 1, and `1 * delta`
            // is `delta`.
            top: delta + min,
            bits: bits_required(0, max_integer_value as u64),
            clamp: false,
        })
    }

    /// The same quantization, but finite values outside the range clamp to its ends
    /// instead of failing (the reference's behaviour). NaN is still an error.
    ///
    /// ```
    /// use netser::Quantize;
    /// let q = Quantize::new(0.0, 10.0, 0.5).clamping();
    /// assert_eq!(q.quantize(99.0, 0)?, q.max_integer_value());
    /// assert_eq!(q.quantize(-5.0, 0)?, 0);
    /// assert!(q.quantize(f32::NAN, 0).is_err()); // NaN has no nearest end
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub const fn clamping(mut self) -> Self {
        self.clamp = true;
        self
    }

    /// Bits each value takes on the wire.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert_eq!(Quantize::new(0.0, 10.0, 0.5).bits(), 5); // 21 values
    /// ```
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest integer sent, `ceil((max - min) / res)`.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert_eq!(Quantize::new(0.0, 10.0, 0.5).max_integer_value(), 20);
    /// // 1 / 0.3 rounds up: 4 steps of 0.25.
    /// assert_eq!(Quantize::new(0.0, 1.0, 0.3).max_integer_value(), 4);
    /// ```
    pub const fn max_integer_value(&self) -> u32 {
        self.max_integer_value
    }

    /// The range minimum.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert_eq!(Quantize::new(-2.0, 3.0, 0.25).min(), -2.0);
    /// ```
    pub const fn min(&self) -> f32 {
        self.min
    }

    /// The range maximum.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert_eq!(Quantize::new(-2.0, 3.0, 0.25).max(), 3.0);
    /// ```
    pub const fn max(&self) -> f32 {
        self.max
    }

    /// The resolution asked for.
    ///
    /// ```
    /// use netser::Quantize;
    /// assert_eq!(Quantize::new(-2.0, 3.0, 0.25).res(), 0.25);
    /// ```
    pub const fn res(&self) -> f32 {
        self.res
    }

    /// Whether out-of-range values clamp.
    ///
    /// ```
    /// use netser::Quantize;
    /// let q = Quantize::new(0.0, 1.0, 0.1);
    /// assert!(!q.is_clamping());
    /// assert!(q.clamping().is_clamping());
    /// ```
    pub const fn is_clamping(&self) -> bool {
        self.clamp
    }

    /// The integer sent for `value`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFinite`] for NaN or an infinity,
    /// [`ErrorKind::QuantizedOutOfRange`] outside the range unless clamping (the range reaches up to [`Quantize::top`], the value the
    /// top integer decodes to); `bit` is the offset reported in the error.
    ///
    /// ```
    /// use netser::Quantize;
    /// let q = Quantize::new(0.0, 10.0, 0.01);
    /// assert_eq!(q.quantize(0.105, 0)?, 11); // float32 rounding, as the reference
    /// assert_eq!(q.quantize(10.0, 0)?, 1000);
    /// let e = q.quantize(10.5, 3).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     "value 10.5 out of range 0..=10 (quantized in steps of 0.01) at bit 3"
    /// );
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    pub fn quantize(&self, value: f32, bit: u64) -> Result<u32> {
        // In range (NaN fails both comparisons), `f32(value - min) <= delta` by monotone
        // rounding, so `n` is already in [0, 1]: the reference's clamps cannot fire here.
        let n = if value >= self.min && value <= self.max {
            // `f32(value - min) / delta`, exactly (module docs).
            ((value - self.min) as f64 * self.inv_delta) as f32
        } else {
            self.outside(value, bit)?
        };
        let scaled = n * self.max_integer_f32;
        // Non-negative and below 2^32, so truncation is floor (through i64: one convert
        // instruction instead of the saturating u32 sequence). Between 2^23 and 2^24
        // float32 steps are 1.0, so `max + 0.5` rounds to even: an odd
        // `max_integer_value` would become one more, which the reader refuses (the
        // reference does so); clamp it.
        Ok(((scaled + 0.5) as i64).min(self.max_integer_value as i64) as u32)
    }

    /// A value outside the range: an error, or the clamped `n` (0 or 1, as the
    /// reference's clamps give) when clamping.
    #[cold]
    #[inline(never)]
    fn outside(&self, value: f32, bit: u64) -> Result<f32> {
        if !value.is_finite() {
            return Err(Error::new(
                ErrorKind::NotFinite {
                    value: value as f64,
                },
                bit,
            ));
        }
        if value > self.max && value <= self.top {
            // The top step's decoded value, a rounding above `max`: the reference's clamp
            // makes it `n = 1`, the top integer it came from.
            return Ok(1.0);
        }
        if !self.clamp {
            return Err(Error::new(
                ErrorKind::quantized_write(value as f64, self),
                bit,
            ));
        }
        Ok(if value < self.min { 0.0 } else { 1.0 })
    }

    /// The value the top integer decodes to: [`Quantize::max`], or the float32 just above
    /// it when `max - min` rounds up. Writing accepts every value up to it, so whatever a
    /// reader returns encodes again to the same integer.
    ///
    /// ```
    /// use netser::Quantize;
    /// let q = Quantize::new(-1.0, 0.1, 0.001);
    /// assert_eq!(q.top(), 0.100000024);
    /// assert_eq!(q.dequantize(q.max_integer_value()), q.top());
    /// assert_eq!(q.quantize(q.top(), 0).unwrap(), q.max_integer_value());
    /// ```
    pub const fn top(&self) -> f32 {
        self.top
    }

    /// Whether every integer decodes to a value that encodes again to that integer. A
    /// sufficient condition, checked when the quantization is built: at most 2^20 steps,
    /// each at least 16 float32 spacings wide where the range's largest magnitude lies.
    /// When it is false the resolution may be finer than float32 carries there, and
    /// several integers can decode to one float, of which only one encodes back to itself
    /// (the reference's own `[0, 1e10]` at 1 is such a quantization).
    ///
    /// ```
    /// use netser::Quantize;
    /// assert!(Quantize::new(-2048.0, 2048.0, 0.01).round_trips());
    /// // 0.00001 is below float32's spacing at 1000 (0.000061).
    /// assert!(!Quantize::new(1000.0, 1001.0, 0.00001).round_trips());
    /// ```
    pub const fn round_trips(&self) -> bool {
        // Why it suffices, in units of one step `s = delta / M` (`M` the top integer,
        // `u` the float32 spacing at the largest magnitude `R` of min, max and top): each
        // float32 operation errs by less than 2^-24 relative, or half a spacing. Decoding
        // `i` errs by less than `i * 2^-24` steps in the quotient, as much in the product
        // with `delta`, and `u / 2 / s` in the sum with `min`; encoding the value back
        // errs by less than `u / s` in the difference (it is at most `2R`), then
        // `M * 2^-24` in each of the quotient and the product with `M`. With `M <= 2^20`
        // and `s >= 16u` that is below 4 / 16 + 1.5 / 16 = 0.34 of a step, and the `+ 0.5`
        // rounds by at most 2^-4 below 2^20: `floor` lands on `i`. Decoded values lie in
        // `[min, top]` by monotone rounding, which the writer accepts.
        let m = self.max_integer_value;
        if m > 1 << 20 {
            return false;
        }
        let mut r = self.min.abs();
        if self.max.abs() > r {
            r = self.max.abs();
        }
        if self.top.abs() > r {
            r = self.top.abs();
        }
        // The spacing of float32 at `r` (subnormal spacing below the normal range).
        let exponent = ((r.to_bits() >> 23) & 0xff) as i32;
        let spacing = if exponent == 0 {
            pow2(-149)
        } else {
            pow2(exponent - 127 - 23)
        };
        (self.delta as f64) / (m as f64) >= 16.0 * spacing
    }

    /// The value an integer read from the wire stands for. The caller has checked
    /// `integer <= max_integer_value`.
    ///
    /// ```
    /// use netser::Quantize;
    /// let q = Quantize::new(0.0, 10.0, 0.01);
    /// assert_eq!(q.dequantize(0), 0.0);
    /// assert_eq!(q.dequantize(1000), 10.0);
    /// assert!((q.dequantize(11) - 0.11).abs() < 1e-6);
    /// ```
    #[inline(always)]
    pub fn dequantize(&self, integer: u32) -> f32 {
        // `f32(integer) / f32(max_integer_value)`, exactly (module docs).
        let t = (integer as f32 as f64 * self.inv_max_integer) as f32;
        t * self.delta + self.min
    }
}

/// `2^e` as a float64, for `-1074 <= e <= 1023`.
const fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// The errors of a value a quantizer cannot write or read. Defined here, beside
/// [`Quantize`], so that `error` (the bottom layer) does not import `quantize`.
impl ErrorKind {
    /// [`ErrorKind::QuantizedOutOfRange`] for a `value` that `q` cannot write (outside
    /// `q.min()..=q.max()`, not clamping).
    ///
    /// ```
    /// use netser::{ErrorKind, Quantize};
    /// let q = Quantize::new(-180.0, 180.0, 0.1);
    /// assert_eq!(
    ///     ErrorKind::quantized_write(181.5, &q).to_string(),
    ///     "value 181.5 out of range -180..=180 (quantized in steps of 0.1)"
    /// );
    /// ```
    #[cold]
    pub fn quantized_write(value: f64, q: &Quantize) -> Self {
        // An `f32` value reads as written; an `f64` one keeps all its digits.
        let value = if value as f32 as f64 == value {
            shortest(value)
        } else {
            value
        };
        ErrorKind::QuantizedOutOfRange {
            value,
            min: shortest(q.min() as f64),
            max: shortest(q.max() as f64),
            step: step_of(q),
        }
    }

    /// [`ErrorKind::QuantizedOutOfRange`] for an `integer` read from the wire above
    /// `q.max_integer_value()`: reported as the value it stands for, in the units of
    /// the write error.
    ///
    /// ```
    /// use netser::{ErrorKind, Quantize};
    /// let q = Quantize::new(-180.0, 180.0, 0.1); // 3600 steps in 12 bits
    /// assert_eq!(q.max_integer_value(), 3600);
    /// assert_eq!(
    ///     ErrorKind::quantized_read(3605, &q).to_string(),
    ///     "value 180.5 out of range -180..=180 (quantized in steps of 0.1)"
    /// );
    /// ```
    #[cold]
    pub fn quantized_read(integer: u64, q: &Quantize) -> Self {
        let step = step_of(q);
        ErrorKind::QuantizedOutOfRange {
            value: shortest(q.min() as f64 + integer as f64 * step),
            min: shortest(q.min() as f64),
            max: shortest(q.max() as f64),
            step,
        }
    }
}

/// The step between two quantized values, as short as `f32` shows it (`0.1`, not
/// `0.10000000149011612`).
fn step_of(q: &Quantize) -> f64 {
    shortest((q.max() as f64 - q.min() as f64) / q.max_integer_value().max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_discriminating_values() {
        // [0,10] at 0.01: float32 rounding at every step gives 1, 3, 11, 1000.
        let q = Quantize::new(0.0, 10.0, 0.01);
        let got: [u32; 4] = [0.005, 0.025, 0.105, 9.995].map(|v| q.quantize(v, 0).unwrap());
        assert_eq!(got, [1, 3, 11, 1000]);
    }

    #[test]
    fn out_of_range_is_an_error_unless_clamping() {
        let q = Quantize::new(-1.0, 1.0, 0.01);
        let e = q.quantize(1.5, 9).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::QuantizedOutOfRange {
                value: 1.5,
                min: -1.0,
                max: 1.0,
                step: 0.01
            }
        );
        assert_eq!(e.bit(), 9);
        assert_eq!(
            q.quantize(-1.01, 0).unwrap_err().to_string(),
            "value -1.01 out of range -1..=1 (quantized in steps of 0.01) at bit 0"
        );
        assert_eq!(
            q.clamping().quantize(1.5, 0).unwrap(),
            q.max_integer_value()
        );
        assert_eq!(q.clamping().quantize(-7.0, 0).unwrap(), 0);
        assert!(matches!(
            q.clamping().quantize(f32::NAN, 0).unwrap_err().kind(),
            ErrorKind::NotFinite { .. }
        ));
    }

    #[test]
    fn ends_round_trip_exactly() {
        let q = Quantize::new(-100.0, 100.0, 0.001);
        assert_eq!(q.dequantize(q.quantize(-100.0, 0).unwrap()), -100.0);
        assert_eq!(q.dequantize(q.quantize(100.0, 0).unwrap()), 100.0);
    }

    #[test]
    fn values_clamp_to_the_reference_limits() {
        assert_eq!(Quantize::new(0.0, 1.0, 10.0).max_integer_value(), 1);
        assert_eq!(
            Quantize::new(0.0, 1.0, 1e-12).max_integer_value(),
            4_294_967_040
        );
        assert_eq!(Quantize::new(0.0, 1.0, 1e-12).bits(), 32);
    }
}
