//! Columns: one quantization applied to `N` values at once, for the derive's batch path
//! over collections of structs (a column is one field of every element in a block).
//!
//! A column call is all or nothing: it returns `true` when every active lane took the
//! scalar fast path, and then each active lane's integer or value is exactly what
//! [`Quantize::quantize`] or [`Quantize::dequantize`] gives. When it returns `false`, the
//! outputs are unspecified and the caller takes the scalar path, which reports the error
//! (or handles the rare value the fast path leaves out). Inactive lanes (a field gated off,
//! or past the end of the block) may hold anything, NaN included, and never fail.

use super::Quantize;

impl Quantize {
    /// Quantizes a column: for every lane `i` with `active[i]`, `out[i]` becomes
    /// `self.quantize(values[i], _)` when every active value lies in `min..=max`.
    ///
    /// Returns `false` when some active value is outside `min..=max` (or NaN): `out` is
    /// then unspecified, and [`Quantize::quantize`] on each value gives the error, or the
    /// integer for a value in `max..=top` or a clamped one.
    ///
    /// ```
    /// use netser::Quantize;
    /// const Q: Quantize = Quantize::new(-10.0, 10.0, 0.01);
    /// let values = [1.5, -10.0, 10.0, f32::NAN];
    /// let mut out = [0u32; 4];
    /// // The NaN lane is inactive (a field gated off): it does not count.
    /// assert!(Q.quantize_column(&values, &[true, true, true, false], &mut out));
    /// assert_eq!(&out[..3], &[Q.quantize(1.5, 0)?, 0, Q.max_integer_value()]);
    /// assert!(!Q.quantize_column(&values, &[true; 4], &mut out));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    pub fn quantize_column<const N: usize>(
        &self,
        values: &[f32; N],
        active: &[bool; N],
        out: &mut [u32; N],
    ) -> bool {
        let mut ok = true;
        for i in 0..N {
            let v = values[i];
            let fast = v >= self.min && v <= self.max;
            // The fast path of `quantize`, computed for every lane (no early exit, so the
            // loop has no branch); a lane outside the range produces a value nobody reads.
            let n = ((v - self.min) as f64 * self.inv_delta) as f32;
            let scaled = n * self.max_integer_f32;
            out[i] = ((scaled + 0.5) as i64).min(self.max_integer_value as i64) as u32;
            ok &= fast | !active[i];
        }
        ok
    }

    /// Dequantizes a column: for every lane `i` with `active[i]`, `out[i]` becomes
    /// `self.dequantize(ints[i])` when every active integer is at most
    /// [`Quantize::max_integer_value`].
    ///
    /// Returns `false` when some active integer is above it (input no writer produces):
    /// `out` is then unspecified.
    ///
    /// ```
    /// use netser::Quantize;
    /// const Q: Quantize = Quantize::new(0.0, 10.0, 0.5);
    /// let mut out = [0f32; 3];
    /// assert!(Q.dequantize_column(&[0, 20, 7], &[true; 3], &mut out));
    /// assert_eq!(out, [0.0, 10.0, 3.5]);
    /// assert!(!Q.dequantize_column(&[0, 21, 7], &[true; 3], &mut out));
    /// assert!(Q.dequantize_column(&[0, 21, 7], &[true, false, true], &mut out));
    /// ```
    #[inline(always)]
    pub fn dequantize_column<const N: usize>(
        &self,
        ints: &[u32; N],
        active: &[bool; N],
        out: &mut [f32; N],
    ) -> bool {
        let mut ok = true;
        for i in 0..N {
            out[i] = self.dequantize(ints[i]);
            ok &= ints[i] <= self.max_integer_value || !active[i];
        }
        ok
    }
}
