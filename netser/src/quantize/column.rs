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
use crate::batch::SimdLevel;

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
        // Whether some active lane is outside `min..=max` (NaN included). Accumulated
        // without an early exit, so the loops below have no branch and vectorize.
        let mut outside = false;
        if self.max_integer_value < 1 << 22 {
            // Every quantizer with fewer than 2^22 steps (a `const` one folds this test).
            // Why each in-range lane equals `quantize`: `n` is its float32, or below 2^-126
            // gives the same `s` ([`Quantize::unit`]), in [0, 1] (see `quantize`), so
            // `scaled` is in [0, M] (monotone rounding; `M` is exact as a float32) and
            // `s = f32(scaled + 0.5)` in [0.5, M + 0.5] (`M + 0.5` is exact below 2^22).
            // Its floor is at most `M`, so the scalar `(s as i64).min(M)` is that floor,
            // which [`floor_below_2_22`] computes (whatever an inactive lane holds, it
            // gives some integer).
            for i in 0..N {
                let v = values[i];
                let s = self.unit(v) * self.max_integer_f32 + 0.5;
                out[i] = floor_below_2_22(s);
                outside |= !(v >= self.min && v <= self.max) & active[i];
            }
        } else {
            // Larger quantizers keep `quantize`'s own conversion, lane by lane.
            for i in 0..N {
                let v = values[i];
                let n = self.unit(v);
                let scaled = n * self.max_integer_f32;
                out[i] = ((scaled + 0.5) as i64).min(self.max_integer_value as i64) as u32;
                outside |= !(v >= self.min && v <= self.max) & active[i];
            }
        }
        !outside
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
        self.dequantize_column_at(SimdLevel::Baseline, ints, active, out)
    }

    /// [`Quantize::dequantize_column`] for code compiled at `level` (the argument
    /// [`crate::batch::simd_with`] passes its closure): from [`SimdLevel::Avx2`] on, the
    /// CPU has fused multiply-adds and the quotient `f32(i) / f32(max_integer_value)` is
    /// found with three of them instead of a division (`divps` takes about ten cycles for
    /// sixteen lanes). The values are the same: the proof is in the module docs of
    /// `crate::quantize`, "Dividing an integer with fused multiply-adds". Below that
    /// level (or without `std`, whose `mul_add` a build without FMA would make a library
    /// call) it divides.
    #[doc(hidden)]
    #[inline(always)]
    pub fn dequantize_column_at<const N: usize>(
        &self,
        level: SimdLevel,
        ints: &[u32; N],
        active: &[bool; N],
        out: &mut [f32; N],
    ) -> bool {
        let mut above = false;
        // The fused steps' proof needs fewer than 2^22 steps.
        let fused = level.fuses() && self.max_integer_value < 1 << 22;
        if self.max_integer_value < 1 << 31 {
            // A lane at most `max_integer_value` is below 2^31, where `as i32 as f32`
            // (one `cvtdq2ps` for four lanes) is the same rounding as `as f32`; the rest
            // is `dequantize`'s arithmetic, operation for operation.
            for i in 0..N {
                // `f32(i) / f32(max_integer_value)` correctly rounded (`divps`, or the
                // fused steps, module docs of `crate::quantize`): the quotient is 0 or at
                // least 2^-32, a normal float32, where `dequantize`'s reciprocal product
                // equals it.
                let t = self.unit_of(ints[i] as i32 as f32, fused);
                out[i] = t * self.delta + self.min;
                above |= (ints[i] > self.max_integer_value) & active[i];
            }
        } else {
            for i in 0..N {
                out[i] = self.dequantize(ints[i]);
                above |= (ints[i] > self.max_integer_value) & active[i];
            }
        }
        !above
    }
}

impl Quantize {
    /// `n / f32(max_integer_value)` for an integer `n` (a float32): the fused steps of
    /// [`super::fused_quotient`] when `fused` (proved for integers below 2^22 steps),
    /// else `divps`.
    #[inline(always)]
    fn unit_of(&self, n: f32, fused: bool) -> f32 {
        #[cfg(feature = "std")]
        if fused {
            return super::fused_quotient(n, self.max_integer_f32, self.inv_max_integer_f32);
        }
        let _ = fused;
        n / self.max_integer_f32
    }

    /// `quantize`'s `n` for a value in range, as a float32 division (`divps`, four lanes
    /// per instruction) instead of `quantize`'s float64 reciprocal product: IEEE division
    /// is correctly rounded, so this is `RN32(f32(v - min) / delta)`, which the product
    /// equals whenever it is a normal float32 (module docs of `crate::quantize`). Below
    /// 2^-126 both may differ, but then `n * max_integer_f32 < 2^-94` and `+ 0.5` gives
    /// 0.5 either way: the same integer.
    #[inline(always)]
    fn unit(&self, v: f32) -> f32 {
        (v - self.min) / self.delta
    }
}

/// `floor(t)` for `t` in `[0, 2^22]`, in float and integer operations SSE2 has for four
/// lanes at once (`t as i32` is exact there too, but Rust's saturating conversion keeps
/// LLVM from vectorizing it). Any other `t` gives some integer, without a panic.
///
/// Why: in `[2^23, 2^24)` float32 values are the integers, so `r = f32(t + 2^23)` is
/// `2^23 + round(t)` (to nearest, ties to even), its bits are those of 2^23 plus
/// `round(t)`, and `r - 2^23` is exact. `round(t)` is `floor(t)` or `floor(t) + 1`, the
/// latter exactly when it is above `t`.
#[inline(always)]
pub(crate) fn floor_below_2_22(t: f32) -> u32 {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    let r = t + MAGIC;
    let round = r.to_bits().wrapping_sub(MAGIC.to_bits());
    round.wrapping_sub((r - MAGIC > t) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark's and conformance vectors' quantizers, and some on the slower
    /// paths: at least 2^22 steps (2^22 exactly, 10^7, 2^32 - 256).
    fn quantizers() -> [Quantize; 9] {
        [
            Quantize::new(-2048.0, 2048.0, 0.01),
            Quantize::new(-64.0, 64.0, 0.01),
            Quantize::new(-1.0, 1.0, 0.001),
            Quantize::new(0.0, 10.0, 0.3),
            Quantize::new(0.0, 1.0, 2.0),
            Quantize::new(-1.0, 0.1, 0.001), // `top` above `max`
            Quantize::new(0.0, 4_194_304.0, 1.0),
            Quantize::new(0.0, 1e7, 1.0),
            Quantize::new(0.0, 1e10, 1.0),
        ]
    }

    /// The values `k` spacings either side of `v`, for `k` in `0..=radius`.
    fn around(v: f32, radius: u32) -> impl Iterator<Item = f32> {
        let b = v.to_bits();
        (0..=radius).flat_map(move |k| [b.wrapping_add(k), b.wrapping_sub(k)].map(f32::from_bits))
    }

    fn edge_values(q: &Quantize) -> Vec<f32> {
        let centres = [
            q.min(),
            q.max(),
            q.top(),
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            (q.min() + q.max()) / 2.0,
        ];
        let mut v: Vec<f32> = centres.iter().flat_map(|&c| around(c, 40)).collect();
        // Subnormal distances above `min`, and the midpoints of the first steps.
        v.extend((1..40).map(|k| q.min() + f32::from_bits(k)));
        let step = (q.max() - q.min()) / q.max_integer_value() as f32;
        v.extend((0..64).flat_map(|k| around(q.min() + (k as f32 + 0.5) * step, 2)));
        v
    }

    /// Runs the column on `values` (blocks of 16; lane `i` active unless
    /// `inactive(i)`), compares every `true` block with `quantize`, and returns how many
    /// blocks were refused.
    fn check(q: &Quantize, values: &[f32], inactive: impl Fn(usize) -> bool) -> usize {
        let mut refused = 0;
        for (b, block) in values.chunks(16).enumerate() {
            let mut v = [f32::NAN; 16];
            v[..block.len()].copy_from_slice(block);
            let active: [bool; 16] =
                core::array::from_fn(|i| i < block.len() && !inactive(b * 16 + i));
            let mut out = [0u32; 16];
            let ok = q.quantize_column(&v, &active, &mut out);
            let any_refused = (0..16).any(|i| active[i] && !(v[i] >= q.min() && v[i] <= q.max()));
            assert_eq!(ok, !any_refused, "{q:?} {v:?} {active:?}");
            if !ok {
                refused += 1;
                continue;
            }
            for i in (0..16).filter(|&i| active[i]) {
                assert_eq!(Ok(out[i]), q.quantize(v[i], 0), "{q:?} {:?}", v[i]);
            }
        }
        refused
    }

    #[test]
    fn edge_values_match_quantize() {
        for q in quantizers() {
            for q in [q, q.clamping()] {
                let values = edge_values(&q);
                // One value per block, then 16.
                for v in &values {
                    check(&q, &[*v], |_| false);
                }
                check(&q, &values, |_| false);
            }
        }
    }

    #[test]
    fn inactive_lanes_never_refuse() {
        let garbage = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            -0.0,
            f32::from_bits(0xffff_ffff),
            1e30,
        ];
        for q in quantizers() {
            let mut values = vec![q.min(); 64];
            for (i, v) in values.iter_mut().enumerate() {
                if i % 3 == 0 {
                    *v = garbage[i % garbage.len()];
                }
            }
            assert_eq!(check(&q, &values, |i| i % 3 == 0), 0, "{q:?}");
            let mut out = [0u32; 8];
            assert!(q.quantize_column(&[f32::NAN; 8], &[false; 8], &mut out));
        }
    }

    #[test]
    fn a_walk_over_every_bit_pattern_matches_quantize() {
        for q in quantizers() {
            // Bit patterns (mostly out of range), then the range itself.
            let walk: Vec<f32> = (0..20_000u32)
                .map(|i| f32::from_bits(i.wrapping_mul(0x9E37_79B9)))
                .collect();
            check(&q, &walk, |_| false);
            let span = q.top() - q.min();
            let range: Vec<f32> = (0..20_000)
                .map(|i| q.min() + span * (i as f32 / 20_000.0))
                .collect();
            let refused = check(&q, &range, |_| false);
            // Only a block holding a value in `max..=top` goes to the scalar path.
            assert!(refused <= 1, "{q:?}: {refused}");
        }
    }

    #[test]
    fn floor_below_2_22_is_floor() {
        for t in (0..1 << 22).step_by(997).map(|i| i as f32) {
            for t in around(t, 3).chain([t + 0.5, t - 0.5, t + 0.25]) {
                if (0.0..=4_194_304.0).contains(&t) {
                    assert_eq!(floor_below_2_22(t), t as u32, "{t:?}");
                }
            }
        }
        for t in [0.0, -0.0, 0.5, 0.49999997, 1.0, 4_194_303.5, 4_194_304.0] {
            assert_eq!(floor_below_2_22(t), t as u32, "{t:?}");
        }
    }

    #[test]
    fn every_integer_matches_dequantize() {
        for q in quantizers() {
            let m = q.max_integer_value();
            let stride = (m / 50_000).max(1) as usize;
            let ints: Vec<u32> = (0..=m)
                .step_by(stride)
                .chain([
                    m,
                    m - 1,
                    m.wrapping_add(1),
                    u32::MAX,
                    1 << 31,
                    (1 << 31) - 1,
                ])
                .collect();
            for block in ints.chunks(16) {
                let mut v = [0u32; 16];
                v[..block.len()].copy_from_slice(block);
                let active: [bool; 16] = core::array::from_fn(|i| i < block.len());
                let mut out = [0f32; 16];
                let ok = q.dequantize_column(&v, &active, &mut out);
                assert_eq!(ok, block.iter().all(|&i| i <= m), "{q:?} {block:?}");
                // Out-of-range lanes made inactive: the rest decodes.
                let active: [bool; 16] = core::array::from_fn(|i| active[i] && v[i] <= m);
                assert!(q.dequantize_column(&v, &active, &mut out));
                for i in (0..16).filter(|&i| active[i]) {
                    assert_eq!(
                        out[i].to_bits(),
                        q.dequantize(v[i]).to_bits(),
                        "{q:?} {}",
                        v[i]
                    );
                }
            }
        }
    }
}
