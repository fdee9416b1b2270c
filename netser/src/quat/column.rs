//! Columns of quaternions: [`QuatFormat`] applied to `N` quaternions at once, for the
//! derive's batch path. All or nothing, as [`crate::Quantize::quantize_column`]: `true`
//! means every active lane is exactly what the scalar functions give; `false` sends the
//! caller to the scalar path. Inactive lanes may hold anything and never fail.

use super::{pack_with, unpack_with, QuatFormat};

impl QuatFormat {
    /// Packs a column of quaternions into their wire form, `largest | a << 2 |
    /// b << (2 + bits) | c << (2 + 2 * bits)` (what [`crate::Encoder::write_quat`] writes
    /// as one field), for every lane `i` with `active[i]`.
    ///
    /// Returns `false` when some active lane needs the scalar path ([`pack_with`]): an
    /// invalid quaternion (the error), or one the column does not settle itself (`out` is
    /// then unspecified).
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
        let bits = self.bits;
        let mut ok = true;
        for i in 0..N {
            if !active[i] {
                continue;
            }
            match pack_with(q[i], self, 0) {
                Ok((largest, [a, b, c])) => {
                    out[i] = largest as u64
                        | (a as u64) << 2
                        | (b as u64) << (2 + bits)
                        | (c as u64) << (2 + 2 * bits);
                }
                Err(_) => ok = false,
            }
        }
        ok
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
        let bits = self.bits;
        let mut ok = true;
        for i in 0..N {
            if !active[i] {
                continue;
            }
            let raw = packed[i];
            let field = |k: u32| ((raw >> (2 + k * bits)) & self.max as u64) as u32;
            match unpack_with((raw & 3) as u32, [field(0), field(1), field(2)], self, 0) {
                Ok(q) => out[i] = q,
                Err(_) => ok = false,
            }
        }
        ok
    }
}
