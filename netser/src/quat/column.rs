//! Columns of quaternions: [`QuatFormat`] applied to `N` quaternions at once, for the
//! derive's batch path. All or nothing, as [`crate::Quantize::quantize_column`]: `true`
//! means every active lane is exactly what the scalar functions give; `false` sends the
//! caller to the scalar path. Inactive lanes may hold anything and never fail.

#[cfg(doc)]
use super::{pack_with, unpack_with};
use super::{sqrt, QuatFormat, NEAR_ONE, SMALLEST_THREE_BOUND};
use crate::batch::SimdLevel;
use crate::quantize::column::floor_below_2_22;

/// 1.0's bits, the centre of [`super::inv_norm`]'s closed form.
const ONE: u32 = 0x3f80_0000;

/// Rounds of moves [`QuatFormat::pack_column`] makes before it leaves a near-tie to the
/// scalar path. From 9 bits on every near-tie of the tests settles in one; at 2 bits
/// three at most are ever needed (each small component is at most one step from the
/// two integers nearest zero, `mid` and `mid + 1`). The bound keeps the cost of a block
/// fixed whatever it holds.
const SETTLE_ROUNDS: u32 = 4;

impl QuatFormat {
    /// Packs a column of quaternions into their wire form, `largest | a << 2 |
    /// b << (2 + bits) | c << (2 + 2 * bits)` (what [`crate::Encoder::write_quat`] writes
    /// as one field), for every lane `i` with `active[i]`.
    ///
    /// Returns `false` when some active lane needs the scalar path ([`pack_with`]), and
    /// `out` is then unspecified: an invalid quaternion (the error), or one not
    /// normalized to within 1024 float32 spacings of unit `len2` (the scalar path
    /// normalizes it). Normalized data never takes it: near-ties, whose integers
    /// `pack_with` moves to keep the encoding canonical (about 0.2% of random rotations
    /// at 10 bits, 0.3% at 9), are moved here the same way, at a cost only to the blocks
    /// that hold one.
    ///
    /// ```
    /// use netser::quat::{pack_with, QuatFormat};
    /// const F: QuatFormat = QuatFormat::new(10);
    /// let q = [[0.0, 0.0, 0.0, 1.0], [0.6, 0.0, 0.0, 0.8], [0.0; 4]];
    /// let mut out = [0u64; 3];
    /// assert!(F.pack_column(&q, &[true, true, false], &mut out));
    /// let (largest, [a, b, c]) = pack_with(q[1], &F, 0)?;
    /// assert_eq!(out[1], largest as u64 | (a as u64) << 2 | (b as u64) << 12 | (c as u64) << 22);
    /// assert!(!F.pack_column(&q, &[true; 3], &mut out)); // the zero quaternion
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    pub fn pack_column<const N: usize>(
        &self,
        q: &[[f32; 4]; N],
        active: &[bool; N],
        out: &mut [u64; N],
    ) -> bool {
        self.pack_column_with(SimdLevel::Baseline, |i| q[i], active, out)
    }

    /// [`QuatFormat::pack_column`] on the quaternions `q(0)` to `q(N - 1)`, read where
    /// they are (the derive reads them in the elements: a column copied first is read
    /// back by wider loads than its stores, which wait for the stores to complete), for
    /// code compiled at `level` ([`crate::batch::simd_with`]'s argument: from
    /// [`SimdLevel::Avx2`] on, the division by the bound is
    /// [`crate::quat::divide_by_bound_fused`]; the integers are the same).
    #[doc(hidden)]
    #[inline(always)]
    pub fn pack_column_with<const N: usize>(
        &self,
        level: SimdLevel,
        q: impl Fn(usize) -> [f32; 4],
        active: &[bool; N],
        out: &mut [u64; N],
    ) -> bool {
        let (largest, mut small, scalar, near) = self.quantize_lanes_with(level, q, active);
        if scalar {
            return false;
        }
        // Within its margin `pack_with` keeps the integers when they decode; otherwise
        // its `canonicalize` moves them, and so does `settle`. Checking every active lane
        // is the same: beyond either margin they decode (`pack_with`'s proof, and
        // `column_margin`'s for the tighter one tested here).
        if near {
            let unsettled = self.unsettled_lanes(&largest, &small, active);
            if unsettled.iter().fold(false, |any, &u| any | u)
                && !self.settle(&largest, &mut small, &unsettled, SETTLE_ROUNDS)
            {
                return false;
            }
        }
        let bits = self.bits;
        if self.wire_bits() <= 32 {
            // Up to 10 bits the wire form fits a u32 lane: four lanes per shift, widened
            // once (a const format folds the test).
            for i in 0..N {
                out[i] = (largest[i]
                    | small[0][i] << 2
                    | small[1][i] << (2 + bits)
                    | small[2][i] << (2 + 2 * bits)) as u64;
            }
        } else {
            for i in 0..N {
                out[i] = largest[i] as u64
                    | (small[0][i] as u64) << 2
                    | (small[1][i] as u64) << (2 + bits)
                    | (small[2][i] as u64) << (2 + 2 * bits);
            }
        }
        true
    }

    /// `quantize_lanes_with` on a column held in an array (for the tests).
    #[cfg(test)]
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn quantize_lanes<const N: usize>(
        &self,
        q: &[[f32; 4]; N],
        active: &[bool; N],
    ) -> ([u32; N], [[u32; N]; 3], bool, bool) {
        self.quantize_lanes_with(SimdLevel::Baseline, |i| q[i], active)
    }

    /// `pack_with`'s arithmetic on the quaternions `q(0)` to `q(N - 1)`, before
    /// `canonicalize`: per lane the largest index and the three integers, then whether
    /// some active lane needs the scalar path (outside `inv_norm`'s closed form) and
    /// whether some lies within the margin.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn quantize_lanes_with<const N: usize>(
        &self,
        level: SimdLevel,
        q: impl Fn(usize) -> [f32; 4],
        active: &[bool; N],
    ) -> ([u32; N], [[u32; N]; 3], bool, bool) {
        // In phases over local columns, each one loop LLVM vectorizes four lanes wide
        // (one loop doing it all takes more instructions per quaternion). The first
        // reads the quaternions in place, gathering four lanes with scalar loads and
        // shuffles, not through a transposing copy into four local columns, whose
        // vector loads would wait on the 4-byte stores just made.
        // Per lane: the largest index, the three others times the sign and inverse norm,
        // and whether the lane needs the scalar path or lies within the canonical margin.
        let mut largest = [0u32; N];
        let mut scaled = [[0f32; N]; 3];
        let mut scalar = false;
        let mut near = false;
        for i in 0..N {
            let [x0, x1, x2, x3] = q(i);
            // `pack_with`'s operations in its order, as selects instead of branches.
            let len2 = x0 * x0 + x1 * x1 + x2 * x2 + x3 * x3;
            // The first largest magnitude (a later one must be strictly larger, as in the
            // scalar loop) and the largest of the other three (the scalar `second`: when
            // a new largest comes, the old one is the runner-up).
            let (mut l, mut m, mut second) = (0u32, x0.abs(), 0f32);
            for (k, x) in [(1, x1), (2, x2), (3, x3)] {
                let gt = x.abs() > m;
                // `m` when `x` is the new largest (`second <= m`), else the larger of
                // `second` and `|x|`.
                second = max(second, min(x.abs(), m));
                l = if gt { k } else { l };
                m = if gt { x.abs() } else { m };
            }
            // `inv_norm`'s closed form; outside its window (a `len2` that is zero, not
            // finite, or more than 1024 spacings from 1) the lane takes the scalar path.
            let b = len2.to_bits();
            let in_window = b.wrapping_sub(ONE - NEAR_ONE) <= 2 * NEAR_ONE;
            let above = ONE.wrapping_sub(b.wrapping_sub(ONE) & !1);
            let below = ONE.wrapping_add(ONE.wrapping_sub(b).wrapping_add(3) >> 2);
            let inv = f32::from_bits(if b >= ONE { above } else { below });
            // `others(l)`, in order, and `big = x[l]`, as bitwise selects
            // (`x ^ ((x ^ y) & mask)`: `y` where `mask` is all ones). `x0` and `x1` trade
            // places when `l = 0`, giving the first other and `big` for `l <= 1`; `x2`
            // and `x3` when `l = 3`, giving the third and `big` for `l >= 2`.
            let mask = |b: bool| (b as u32).wrapping_neg();
            let (first, last, low) = (mask(l == 0), mask(l == 3), mask(l <= 1));
            let [x0, x1, x2, x3] = [x0, x1, x2, x3].map(f32::to_bits);
            let (swap01, swap23) = ((x0 ^ x1) & first, (x2 ^ x3) & last);
            let (big01, big23) = (x1 ^ swap01, x2 ^ swap23);
            let big = big23 ^ ((big23 ^ big01) & low);
            let others = [x0 ^ swap01, x1 ^ ((x1 ^ x2) & low), x3 ^ swap23].map(f32::from_bits);
            // `-inv` exactly when `big < 0`: `big`'s sign bit on `inv` (`big` is not a
            // zero in a lane within the window: all four would be, and `len2` too).
            let sign = f32::from_bits(inv.to_bits() | (big & 0x8000_0000));
            for (yj, o) in scaled.iter_mut().zip(others) {
                yj[i] = o * sign;
            }
            largest[i] = l;
            scalar |= !in_window & active[i];
            // `pack_with`'s margin test, with `column_margin`: beyond it the encoding is
            // canonical.
            near |= ((m - second) * inv <= self.column_margin()) & active[i];
        }
        // The three integers, `pack_with`'s arithmetic.
        let mut small = [[0u32; N]; 3];
        let fused = level.fuses();
        for (sj, yj) in small.iter_mut().zip(&scaled) {
            for i in 0..N {
                // `RN32(yj / bound)` (`divps`, or the fused steps, exhaustively checked
                // against it): `pack_with`'s float64 product with `INV_BOUND` equals it
                // when it is a normal float32 (the proof in `crate::quantize`'s docs, for
                // either sign); below 2^-126 they may differ, but `n + 1` is 1 either way.
                let n = super::divide_by_bound(yj[i], fused).clamp(-1.0, 1.0);
                // In an active lane `n` is in [-1, 1], so `(n + 1) * half_scale` is in
                // [0, 2 * half_scale = max] (exact: `max < 2^21`) and the sum in
                // [0.5, max + 0.5] (exact): its floor never exceeds `max`, the scalar
                // `min` cannot fire, and the floor is the scalar truncation.
                sj[i] = floor_below_2_22((n + 1.0) * self.half_scale + 0.5);
            }
        }
        (largest, small, scalar, near)
    }

    /// How far apart the two largest normalized magnitudes `g >= s` must be for the
    /// encoding to be canonical without checking: `2 * step + 2 * step^2 + 2^-16`, a
    /// quarter of `pack_with`'s margin at 10 bits: a fifth of the blocks of 16 random
    /// rotations need the exact check instead of three fifths (the tests print both).
    ///
    /// Proof. Each decoded small component `c_j` is within `e = step / 2 + d` of its
    /// normalized value `y_j` (half a step from the floor, `d < 2^-20` from float32
    /// rounding in the quotient, the scaling, `step` itself and the decode), so
    /// `|c_j| <= s + e`, and `rest = 1 - sum c_j^2` is at least
    /// `g^2 - sum |y_j^2 - c_j^2| - h >= g^2 - e * (2S + 3e) - h`, with `S = sum |y_j|`
    /// and `h < 2^-20` (the normalization's and `rest`'s rounding). The encoding is
    /// canonical when `sqrt(rest) > s + e` (with room for `sqrt`'s rounding), which
    /// holds when `(g - s) * (g + s) > 2e * (s + S) + 4e^2 + h'`. Every `|y_j| <= s <= g`
    /// gives `s + S <= 4s <= 2 * (g + s)`, and `g >= 1/2` (the largest of a unit
    /// quaternion) gives `g + s >= 1/2`: it suffices that `g - s > 4e + 8e^2 + 2h'`,
    /// which is `2 * step + 2 * step^2` plus less than `2^-16` (with `d`, `h'` and
    /// `sqrt`'s half spacing). The test's `(m - second) * inv` is `g - s` within two
    /// roundings, less than 2^-23, also inside the `2^-16`.
    #[inline(always)]
    fn column_margin(&self) -> f32 {
        2.0 * self.step + 2.0 * self.step * self.step + 1.0 / 65_536.0
    }

    /// `canonicalize` on the lanes of a column marked `unsettled`, one lane at a time:
    /// while a lane's encoding is not canonical, moves its small component largest in
    /// magnitude (the first of the largest) one step towards zero, `rounds` times at
    /// most. The same decisions on the same values as the scalar loop, so a lane that
    /// settles holds `pack_with`'s integers; the other lanes are left as they are
    /// (canonical, or inactive). Returns whether every marked lane settled.
    ///
    /// Only the marked lanes are visited: near-ties are about 0.2% of random rotations
    /// at 10 bits, so a block holding one most often holds only that one (and a
    /// 256-entity snapshot most often one such block).
    #[cold]
    #[inline(never)]
    fn settle<const N: usize>(
        &self,
        largest: &[u32; N],
        small: &mut [[u32; N]; 3],
        unsettled: &[bool; N],
        rounds: u32,
    ) -> bool {
        // `mid` and `mid + 1` decode to -step/2 and +step/2: a move only goes towards
        // them, so it never wraps.
        let mid = self.max / 2;
        for i in (0..N).filter(|&i| unsettled[i]) {
            let mut s = [small[0][i], small[1][i], small[2][i]];
            let mut moves = 0;
            loop {
                let (c, _, canonical) = self.decode_lane(largest[i], s);
                if canonical {
                    break;
                }
                if moves == rounds {
                    return false;
                }
                // The scalar `j`: a later component must be strictly larger.
                let a = c.map(f32::abs);
                let j1 = a[1] > a[0];
                let j2 = a[2] > if j1 { a[1] } else { a[0] };
                let j = if j2 { 2 } else { j1 as usize };
                s[j] = if s[j] > mid + 1 {
                    s[j] - 1
                } else if s[j] < mid {
                    s[j] + 1
                } else {
                    s[j]
                };
                moves += 1;
            }
            for (sk, v) in small.iter_mut().zip(s) {
                sk[i] = v;
            }
        }
        true
    }

    /// Unpacks a column of wire forms (as [`QuatFormat::pack_column`] makes them; bits
    /// above `2 + 3 * bits` are ignored) into quaternions, for every lane `i` with
    /// `active[i]`.
    ///
    /// Returns `false` when some active encoding is not canonical (input no writer
    /// produces; [`unpack_with`] gives the error): `out` is then unspecified.
    ///
    /// ```
    /// use netser::quat::QuatFormat;
    /// const F: QuatFormat = QuatFormat::new(10);
    /// let mut packed = [0u64; 2];
    /// assert!(F.pack_column(&[[0.0, 0.0, 0.0, 1.0]; 2], &[true; 2], &mut packed));
    /// let mut q = [[0f32; 4]; 2];
    /// assert!(F.unpack_column(&packed, &[true; 2], &mut q));
    /// assert!((q[0][3] - 1.0).abs() < 1e-6);
    /// // Largest index 0 with three small components at -1/sqrt(2): not canonical.
    /// assert!(!F.unpack_column(&[0, packed[1]], &[true; 2], &mut q));
    /// ```
    #[inline(always)]
    pub fn unpack_column<const N: usize>(
        &self,
        packed: &[u64; N],
        active: &[bool; N],
        out: &mut [[f32; 4]; N],
    ) -> bool {
        // Up to 10 bits the wire form is the low u32 of a lane: narrowed in a loop of its
        // own (one with u64 and float32 gets two lanes), then 32-bit shifts, four lanes
        // each (a const format folds the test).
        let mut low = [0u32; N];
        if self.wire_bits() <= 32 {
            for i in 0..N {
                low[i] = packed[i] as u32;
            }
        }
        let mut refused = false;
        for i in 0..N {
            let (l, small) = if self.wire_bits() <= 32 {
                let field = |j: u32| low[i] >> (2 + j * self.bits) & self.max;
                (low[i] & 3, [field(0), field(1), field(2)])
            } else {
                let raw = packed[i];
                let field = |j: u32| (raw >> (2 + j * self.bits)) as u32 & self.max;
                ((raw & 3) as u32, [field(0), field(1), field(2)])
            };
            let (c, big, canonical) = self.decode_lane(l, small);
            // `decode`'s placement: `big` at `l`, the three others in order around it:
            // `c[k]` before it, `c[k - 1]` after it.
            let before = [0, 1, 2].map(|j| before(j, l) as u32);
            // Bitwise selects, `x ^ ((x ^ y) & mask)`: `y` where `mask` is all ones. The
            // first serves two outputs: `big` and `c[0]` trade places unless `l = 0`.
            let mask = before.map(u32::wrapping_neg);
            let [c0, c1, c2, big] = [c[0], c[1], c[2], big].map(f32::to_bits);
            let swap0 = (big ^ c0) & mask[0];
            let pick = |x: u32, y: u32, m: u32| x ^ ((x ^ y) & m);
            out[i] = [
                big ^ swap0,
                pick(c0 ^ swap0, c1, mask[1]),
                pick(pick(c1, big, mask[1]), c2, mask[2]),
                pick(c2, big, mask[2]),
            ]
            .map(f32::from_bits);
            refused |= !canonical & active[i];
        }
        !refused
    }

    /// The active lanes whose `(largest, small)` do not decode (are not canonical).
    #[inline(always)]
    fn unsettled_lanes<const N: usize>(
        &self,
        largest: &[u32; N],
        small: &[[u32; N]; 3],
        active: &[bool; N],
    ) -> [bool; N] {
        // A loop, not `array::from_fn`, which is not inlined into the caller's
        // target-feature build.
        let mut unsettled = [false; N];
        for i in 0..N {
            let (_, _, canonical) =
                self.decode_lane(largest[i], [small[0][i], small[1][i], small[2][i]]);
            unsettled[i] = !canonical & active[i];
        }
        unsettled
    }

    /// `decode`'s arithmetic without its branches, for a lane of a column: the three
    /// small components, the rebuilt one and whether the encoding is canonical. The same
    /// float32 operations in the same order (`sqrt` is correctly rounded in `sqrtps`
    /// too), so the same values. Integers are below 2^20, where `as i32 as f32` is
    /// `as f32`.
    ///
    /// `decode`'s test, `rest > 0` and `|c_j| < big` for a component before the largest
    /// (`j < largest`), `|c_j| <= big` after it, as one comparison: on non-negative
    /// floats the order is that of their bits, so `|c_j| < big` is
    /// `bits(|c_j|) + 1 <= bits(big)`: each is `bits(|c_j|) + (j < largest)`, as a float
    /// (non-negative and finite, as `|c_j| < 1`), at most `big`. That fails for a NaN
    /// `big` (`rest < 0`), and for `big = 0` too (`rest = 0` needs some `c_j != 0`), so
    /// `rest > 0` needs no test of its own.
    #[inline(always)]
    fn decode_lane(&self, largest: u32, small: [u32; 3]) -> ([f32; 3], f32, bool) {
        let c = small.map(|v| v as i32 as f32 * self.step - SMALLEST_THREE_BOUND);
        let rest = 1.0 - c[0] * c[0] - c[1] * c[1] - c[2] * c[2];
        let big = sqrt(rest);
        let bound = |j: u32| c[j as usize].abs().to_bits() + before(j, largest) as u32;
        let canonical = (f32::from_bits(bound(0)) <= big)
            & (f32::from_bits(bound(1)) <= big)
            & (f32::from_bits(bound(2)) <= big);
        (c, big, canonical)
    }
}

/// Whether small component `j` comes before the largest, `j < largest`, as a signed
/// comparison (`pcmpgtd`; SSE2 has no unsigned one). `largest` is at most 3.
#[inline(always)]
fn before(j: u32, largest: u32) -> bool {
    (largest as i32) > j as i32
}

/// `maxps`: the larger, or `b` when either is NaN.
#[inline(always)]
fn max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `minps`: the smaller, or `b` when either is NaN.
#[inline(always)]
fn min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::super::{pack_with, unpack_with};
    use super::*;

    fn wire(f: &QuatFormat, (largest, [a, b, c]): (u32, [u32; 3])) -> u64 {
        largest as u64
            | (a as u64) << 2
            | (b as u64) << (2 + f.bits)
            | (c as u64) << (2 + 2 * f.bits)
    }

    /// Whether the column may send `q` to the scalar path: the scalar one refuses it, or
    /// its `len2` is outside `inv_norm`'s closed form. Near-ties settle in the column.
    fn may_refuse(f: &QuatFormat, q: [f32; 4]) -> bool {
        let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        let b = len2.to_bits();
        pack_with(q, f, 0).is_err() || b.wrapping_sub(ONE - NEAR_ONE) > 2 * NEAR_ONE
    }

    /// Packs `qs` in blocks of 16 (lane `i` active unless `inactive(i)`), compares every
    /// `true` block with `pack_with`, and returns how many blocks were refused.
    fn check_pack(f: &QuatFormat, qs: &[[f32; 4]], inactive: impl Fn(usize) -> bool) -> usize {
        let mut refused = 0;
        for (b, block) in qs.chunks(16).enumerate() {
            let mut q = [[f32::NAN; 4]; 16];
            q[..block.len()].copy_from_slice(block);
            let active: [bool; 16] =
                core::array::from_fn(|i| i < block.len() && !inactive(b * 16 + i));
            // Dividing by the bound, and by fused multiply-adds (the vector levels'; exact
            // in any build, a library call in this one).
            let verdicts = [SimdLevel::Baseline, SimdLevel::Avx2].map(|level| {
                let mut out = [0u64; 16];
                let ok = f.pack_column_with(level, |i| q[i], &active, &mut out);
                (ok, out)
            });
            assert_eq!(verdicts[0].0, verdicts[1].0, "{} bits: {q:?}", f.bits);
            let (ok, out) = verdicts[0];
            if !ok {
                let why = (0..16).any(|i| active[i] && may_refuse(f, q[i]));
                assert!(why, "{} bits: refused {q:?}", f.bits);
                refused += 1;
                continue;
            }
            for i in (0..16).filter(|&i| active[i]) {
                let want = wire(f, pack_with(q[i], f, 0).unwrap());
                assert_eq!(out[i], want, "{} bits: {:?}", f.bits, q[i]);
                assert_eq!(verdicts[1].1[i], want, "{} bits, fused: {:?}", f.bits, q[i]);
            }
        }
        refused
    }

    fn random_quaternions(count: usize, seed: u64) -> Vec<[f32; 4]> {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        (0..count)
            .map(|_| {
                let q = [next(), next(), next(), next()];
                let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                q.map(|c| c / n)
            })
            .collect()
    }

    const WIDTHS: [u32; 5] = [2, 9, 10, 12, 20];

    #[test]
    fn random_quaternions_match_pack_with() {
        for bits in WIDTHS {
            let f = QuatFormat::new(bits);
            let qs = random_quaternions(16 * 2000, 0x853C_49E6_748F_EA9B ^ bits as u64);
            // Normalized, and near-ties settle in the column: no block is refused.
            assert_eq!(check_pack(&f, &qs, |_| false), 0, "{bits} bits");
        }
    }

    #[test]
    fn edge_quaternions_match_pack_with() {
        let h = core::f32::consts::FRAC_1_SQRT_2;
        let mut qs = vec![
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, -1.0, 0.0, 0.0],
            [0.0, 0.0, -1.0, -0.0],
            [-0.0, -0.0, -0.0, -1.0],
            [h, 0.0, 0.0, h],
            [-h, h, 0.0, 0.0],
            [0.0, 0.0, h, -h],
            [0.5; 4],
            [-0.5, 0.5, -0.5, 0.5],
            [0.5, -0.5, -0.5, -0.5],
            // Not unit length: outside the closed form, the scalar path normalizes.
            [0.0, 0.0, 0.0, 2.0],
            [1e-3, 0.0, 0.0, 0.0],
            [1e-20, 1e-20, 0.0, 0.0], // `len2` underflows to zero: an error
            [f32::from_bits(1), 0.0, 0.0, 0.0],
            [0.0; 4],
            [f32::NAN, 0.0, 0.0, 1.0],
            [f32::INFINITY, 0.0, 0.0, 0.0],
            [f32::MAX, f32::MAX, 0.0, 0.0],
        ];
        // Every largest index and sign, with the others near it: two magnitudes apart
        // by a few float32 spacings to a few steps (ties broken to the lowest index).
        for (k, base) in random_quaternions(200, 7).into_iter().enumerate() {
            for largest in 0..4 {
                for delta in [0.0, 1e-7, -1e-7, 1e-4, 2e-3, 1e-2, -1e-2] {
                    let other = (largest + 1 + k % 3) % 4;
                    let mut q = base;
                    let (a, b) = (base[largest].abs().max(0.5), 0.5 - delta);
                    q[largest] = if k % 2 == 0 { a } else { -a };
                    q[other] = if k % 3 == 0 { b } else { -b };
                    let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                    qs.push(q.map(|c| c / n));
                }
            }
        }
        for bits in WIDTHS {
            let f = QuatFormat::new(bits);
            for q in &qs {
                check_pack(&f, &[*q], |_| false);
            }
            check_pack(&f, &qs, |_| false);
        }
    }

    /// Unit quaternions whose two largest magnitudes are `gap` apart, for every ordered
    /// pair of indices `(l, o)` (`l` the larger when `gap > 0`) and all 16 sign
    /// combinations: the two others share the rest, at angles from `seed`.
    fn near_ties(f: &QuatFormat, seed: u64) -> Vec<[f32; 4]> {
        let mut angle = random_quaternions(64, seed).into_iter().map(|q| q[0]);
        let mut qs = Vec::new();
        let gaps = [
            0.0, 1e-7, -1e-7, 0.1, -0.1, 0.25, -0.25, 0.5, -0.5, 0.75, 1.0, 2.0, 3.0,
        ];
        for l in 0..4 {
            for o in (0..4).filter(|&o| o != l) {
                let rest: Vec<usize> = (0..4).filter(|&k| k != l && k != o).collect();
                for (g, gap) in gaps.iter().enumerate() {
                    // Steps, except the two float32-spacing gaps.
                    let gap = if g == 1 || g == 2 { *gap } else { gap * f.step };
                    let t = angle.next().unwrap_or(0.3);
                    // Magnitudes from 1/2 (the others then share 1/2 - gap-ish) to the
                    // bound (nothing left for them).
                    let a = 0.5 + 0.2 * (t * t);
                    let b = (a - gap).clamp(0.0, SMALLEST_THREE_BOUND);
                    let left = (1.0 - a * a - b * b).max(0.0).sqrt();
                    let theta = t * 3.0;
                    let mut base = [0f32; 4];
                    base[l] = a;
                    base[o] = b;
                    base[rest[0]] = left * theta.cos();
                    base[rest[1]] = left * theta.sin();
                    let n = base.iter().map(|c| c * c).sum::<f32>().sqrt();
                    let base = base.map(|c| c / n);
                    for signs in 0..16 {
                        qs.push(core::array::from_fn(|k| {
                            if signs >> k & 1 == 1 {
                                -base[k]
                            } else {
                                base[k]
                            }
                        }));
                    }
                }
            }
        }
        qs
    }

    /// Blocks of `qs` (all lanes active): how many hold a lane whose first integers are
    /// not canonical, and the most rounds of `settle` one needs.
    fn settle_stats(f: &QuatFormat, qs: &[[f32; 4]]) -> (usize, usize, u32) {
        let (mut lanes, mut blocks, mut most) = (0, 0, 0);
        for block in qs.chunks_exact(16) {
            let q: &[[f32; 4]; 16] = block.try_into().unwrap();
            let active = [true; 16];
            let (largest, small, _, _) = f.quantize_lanes(q, &active);
            let moved = (0..16)
                .filter(|&i| {
                    let (_, _, ok) =
                        f.decode_lane(largest[i], [small[0][i], small[1][i], small[2][i]]);
                    !ok
                })
                .count();
            if moved == 0 {
                continue;
            }
            lanes += moved;
            blocks += 1;
            let rounds = (1..=64)
                .find(|&r| {
                    let unsettled = f.unsettled_lanes(&largest, &small, &active);
                    f.settle(&largest, &mut small.clone(), &unsettled, r)
                })
                .expect("settles");
            most = most.max(rounds);
        }
        (lanes, blocks, most)
    }

    #[test]
    fn near_ties_settle_in_the_column_as_in_pack_with() {
        for bits in WIDTHS {
            let f = QuatFormat::new(bits);
            let qs: Vec<[f32; 4]> = (0..4).flat_map(|seed| near_ties(&f, seed)).collect();
            // Every block, and every quaternion alone: never refused, always `pack_with`.
            assert_eq!(check_pack(&f, &qs, |_| false), 0, "{bits} bits");
            for q in &qs {
                assert_eq!(check_pack(&f, &[*q], |_| false), 0, "{bits} bits: {q:?}");
            }
            let (lanes, blocks, most) = settle_stats(&f, &qs);
            println!(
                "{bits} bits: {lanes} of {} near-ties moved, at most {most} rounds",
                qs.len()
            );
            // Not vacuous: many lanes needed moves, and within the bound.
            assert!(lanes * 50 > qs.len() && blocks > 0, "{bits} bits: {lanes}");
            assert!(most <= SETTLE_ROUNDS, "{bits} bits: {most} rounds");
        }
    }

    /// `column_margin` is sound: a lane whose two largest normalized magnitudes are
    /// farther apart than it gets canonical integers from `quantize_lanes` alone. Checked
    /// on random rotations, the near-ties, and the worst case around `[1/2; 4]` (every
    /// small component as large as the second), perturbed by up to four steps; the
    /// widest gap of a non-canonical lane is printed in steps.
    #[test]
    fn beyond_the_column_margin_the_integers_are_canonical() {
        for bits in WIDTHS {
            let f = QuatFormat::new(bits);
            let mut qs = random_quaternions(20_000, 5 ^ bits as u64);
            qs.extend((0..4).flat_map(|seed| near_ties(&f, seed)));
            let jitter = random_quaternions(40_000, 9 ^ bits as u64);
            for (k, j) in jitter.iter().enumerate() {
                let scale = 4.0 * f.step * (k % 7) as f32 / 6.0;
                let q: [f32; 4] = core::array::from_fn(|c| {
                    let v = 0.5 + scale * j[c];
                    if (k >> c) & 1 == 1 {
                        -v
                    } else {
                        v
                    }
                });
                let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                qs.push(q.map(|c| c / n));
            }
            let (mut far, mut widest) = (0, f32::NEG_INFINITY);
            // Blocks of 16 of the random rotations with a lane within each margin.
            let (mut near_blocks, mut near_blocks_scalar) = (0, 0);
            let (mut near_block, mut near_block_scalar) = (false, false);
            for (k, q) in qs.iter().enumerate() {
                let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
                let inv = super::super::inv_norm(len2);
                let a = q.map(f32::abs);
                let l = (1..4).fold(0, |l, k| if a[k] > a[l] { k } else { l });
                let second = (0..4).filter(|&k| k != l).map(|k| a[k]).fold(0.0, f32::max);
                let gap = (a[l] - second) * inv;
                let (largest, small, _, _) = f.quantize_lanes(&[*q], &[true]);
                let s = [small[0][0], small[1][0], small[2][0]];
                // `decode`, the scalar test.
                if f.decode(largest[0] as usize, s).is_none() {
                    widest = widest.max(gap);
                    assert!(gap <= f.column_margin(), "{bits} bits: {q:?}, gap {gap}");
                }
                far += (gap > f.column_margin()) as usize;
                if k < 20_000 {
                    near_block |= gap <= f.column_margin();
                    near_block_scalar |= gap <= f.margin;
                    if k % 16 == 15 {
                        near_blocks += near_block as usize;
                        near_blocks_scalar += near_block_scalar as usize;
                        (near_block, near_block_scalar) = (false, false);
                    }
                }
            }
            println!(
                "{bits} bits: {far} of {} beyond the margin ({} steps); non-canonical up to a \
                 gap of {} steps; random blocks within it {near_blocks} of 1250 \
                 ({near_blocks_scalar} with `pack_with`'s margin)",
                qs.len(),
                f.column_margin() / f.step,
                widest / f.step,
            );
            // Not vacuous: from 9 bits on a third of the lanes are beyond the margin,
            // and some are not canonical.
            if bits >= 9 {
                assert!(far * 3 > qs.len() && widest.is_finite(), "{bits} bits");
            }
        }
    }

    #[test]
    fn inactive_lanes_never_refuse() {
        let f = QuatFormat::new(10);
        let mut qs = random_quaternions(64, 3);
        let garbage = [
            [f32::NAN; 4],
            [0.0; 4],
            [f32::INFINITY, f32::NEG_INFINITY, 0.0, 1.0],
            [f32::MAX; 4],
            [f32::from_bits(u32::MAX); 4],
            [0.5, 0.5, 0.5, 0.5 + 1e-7], // a near-tie
        ];
        for (i, q) in qs.iter_mut().enumerate() {
            if i % 2 == 1 {
                *q = garbage[i % garbage.len()];
            }
        }
        let good = random_quaternions(64, 3);
        let refused = check_pack(&f, &qs, |i| i % 2 == 1);
        // The same refusals as with well-formed inactive lanes: none come from garbage.
        assert_eq!(refused, check_pack(&f, &good, |i| i % 2 == 1));
        let mut packed = [0u64; 8];
        assert!(f.pack_column(&[[f32::NAN; 4]; 8], &[false; 8], &mut packed));
        let mut out = [[0f32; 4]; 8];
        assert!(f.unpack_column(&[u64::MAX; 8], &[false; 8], &mut out));
    }

    /// Unpacks `packed` in blocks of 16 and compares with `unpack_with`: the column
    /// refuses a block exactly when some active lane is not canonical.
    fn check_unpack(f: &QuatFormat, packed: &[u64]) {
        for block in packed.chunks(16) {
            let mut p = [u64::MAX; 16];
            p[..block.len()].copy_from_slice(block);
            let active: [bool; 16] = core::array::from_fn(|i| i < block.len());
            let scalar = p.map(|raw| {
                let field = |k: u32| ((raw >> (2 + k * f.bits)) & f.max as u64) as u32;
                unpack_with((raw & 3) as u32, [field(0), field(1), field(2)], f, 0)
            });
            let mut out = [[0f32; 4]; 16];
            let ok = f.unpack_column(&p, &active, &mut out);
            assert_eq!(
                ok,
                (0..16).all(|i| !active[i] || scalar[i].is_ok()),
                "{p:x?}"
            );
            // With the refused lanes inactive, the rest decodes as `unpack_with` does.
            let active: [bool; 16] = core::array::from_fn(|i| active[i] && scalar[i].is_ok());
            assert!(f.unpack_column(&p, &active, &mut out));
            for i in (0..16).filter(|&i| active[i]) {
                let want = scalar[i].clone().unwrap().map(f32::to_bits);
                assert_eq!(out[i].map(f32::to_bits), want, "{:#x}", p[i]);
            }
        }
    }

    #[test]
    fn packed_values_match_unpack_with() {
        for bits in WIDTHS {
            let f = QuatFormat::new(bits);
            let top = 1u64 << f.wire_bits();
            // A walk over the wire forms, the canonical ones the packer makes, and
            // garbage above the wire bits.
            let mut packed: Vec<u64> = (0..20_000u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % top)
                .collect();
            for q in random_quaternions(5_000, 11) {
                packed.push(wire(&f, pack_with(q, &f, 0).unwrap()));
            }
            packed.extend([0, top - 1, u64::MAX, top | 3]);
            check_unpack(&f, &packed);
        }
    }
}
