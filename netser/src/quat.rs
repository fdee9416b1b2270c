//! Quaternions in smallest-three form: the index of the largest component (2 bits), then
//! the other three, each in `[-1/sqrt(2), 1/sqrt(2)]`, quantized to `bits` bits.
//!
//! `q` and `-q` are the same rotation, so the largest component is made positive and
//! need not be sent: the reader rebuilds it as `sqrt(1 - a^2 - b^2 - c^2)`.

use crate::error::{Error, ErrorKind, Result};

/// The bound of the three small components: 1/sqrt(2), as float32.
pub const SMALLEST_THREE_BOUND: f32 = core::f32::consts::FRAC_1_SQRT_2;

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
fn max_int(bits: u32) -> u32 {
    (((1u64) << bits) - 1) as u32
}

/// Packs `q = [x, y, z, w]` as `(largest index, [three quantized components])`.
///
/// The quaternion is normalized first, so a slightly drifting one encodes fine.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 32`,
/// [`ErrorKind::InvalidQuaternion`] for a non-finite or zero-length quaternion.
#[inline]
pub fn pack(q: [f32; 4], bits: u32, bit: u64) -> Result<(u32, [u32; 3])> {
    check_bits(bits, bit)?;
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
    let inv = 1.0 / sqrt(len2);
    let sign = if q[largest] < 0.0 { -inv } else { inv };
    let max = max_int(bits);
    let half_scale = max as f32 * 0.5;
    let mut out = [0u32; 3];
    for (j, i) in others(largest).into_iter().enumerate() {
        // Normalized, each small component is within the bound up to rounding: clamp.
        let n = ((q[i] * sign) / SMALLEST_THREE_BOUND).clamp(-1.0, 1.0);
        // Non-negative, so truncation (through i64: one convert instruction) is floor. At
        // 24 bits and more `(n + 1) * half_scale + 0.5` can round past `max` (to 2^32 at
        // 32 bits): clamp before narrowing.
        out[j] = (((n + 1.0) * half_scale + 0.5) as i64).min(max as i64) as u32;
    }
    Ok((largest as u32, out))
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
/// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 32`.
#[inline]
pub fn unpack(largest: u32, small: [u32; 3], bits: u32, bit: u64) -> Result<[f32; 4]> {
    check_bits(bits, bit)?;
    // v / max * 2 - 1, times the bound, as one multiply and one subtract.
    let step = 2.0 * SMALLEST_THREE_BOUND / max_int(bits) as f32;
    let c = small.map(|v| v as f32 * step - SMALLEST_THREE_BOUND);
    let rest = 1.0 - c[0] * c[0] - c[1] * c[1] - c[2] * c[2];
    let big = if rest > 0.0 { sqrt(rest) } else { 0.0 };
    let mut q = [0f32; 4];
    let idx = others(largest as usize & 3);
    q[largest as usize & 3] = big;
    for (j, &i) in idx.iter().enumerate() {
        q[i] = c[j];
    }
    Ok(q)
}

/// Refuses a component width outside 2..=32.
///
/// # Errors
/// [`ErrorKind::InvalidBitCount`].
#[inline]
pub fn check_bits(bits: u32, bit: u64) -> Result<()> {
    if (2..=32).contains(&bits) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::InvalidBitCount { bits }, bit))
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
            &ErrorKind::InvalidBitCount { bits: 1 }
        );
        assert!(pack([0.0, 0.0, 0.0, 1.0], 33, 3).is_err());
    }

    #[test]
    fn any_wire_bits_decode_to_finite_values() {
        let max = max_int(9);
        for v in [0, 1, max / 2, max] {
            let q = unpack(3, [v, max, 0], 9, 0).unwrap();
            assert!(q.iter().all(|c| c.is_finite()));
        }
    }
}
