//! Smallest-three quaternions decode to unit quaternions that encode back to the same
//! bits, or are refused: every encoding at 2 to 6 bits per component,
//! property tests up to `quat::MAX_BITS`, and the writer's output always decodes.

use netser::quat::{pack, pack_with, unpack, unpack_with, QuatFormat, MAX_BITS};
use netser::{Decoder, ErrorKind, ReadStream};
use proptest::prelude::*;

/// Largest float32 error allowed in `|q|^2` of a decoded quaternion: four rounding steps.
const UNIT_TOLERANCE: f32 = 4.0 * f32::EPSILON;

fn norm2(q: [f32; 4]) -> f32 {
    q.iter().map(|c| c * c).sum()
}

/// The step between two component values at `bits`.
fn step(bits: u32) -> f32 {
    std::f32::consts::SQRT_2 / ((1u64 << bits) - 1) as f32
}

/// Checks one encoding: refused with `NonCanonicalQuaternion`, or decoded to a unit
/// quaternion that encodes back to the same bits. Returns whether it decoded.
fn check_encoding(f: &QuatFormat, largest: u32, small: [u32; 3]) -> Result<bool, String> {
    match unpack_with(largest, small, f, 0) {
        Err(e) => match e.kind() {
            ErrorKind::NonCanonicalQuaternion { largest: l } if u32::from(*l) == largest => {
                Ok(false)
            }
            other => Err(format!("{largest} {small:?}: unexpected error {other:?}")),
        },
        Ok(q) => {
            if (norm2(q) - 1.0).abs() > UNIT_TOLERANCE {
                return Err(format!(
                    "{largest} {small:?} -> {q:?}: |q|^2 = {}",
                    norm2(q)
                ));
            }
            let again = pack_with(q, f, 0).map_err(|e| e.to_string())?;
            if again != (largest, small) {
                return Err(format!("{largest} {small:?} -> {q:?} -> {again:?}"));
            }
            let back = unpack_with(again.0, again.1, f, 0).map_err(|e| e.to_string())?;
            if back != q {
                return Err(format!("{q:?} -> {back:?}"));
            }
            Ok(true)
        }
    }
}

#[test]
fn every_encoding_at_small_bit_counts_is_canonical_or_refused() {
    for bits in 2..=6u32 {
        let f = QuatFormat::new(bits);
        let max = (1u32 << bits) - 1;
        let mut decoded = 0u64;
        for largest in 0..4 {
            for a in 0..=max {
                for b in 0..=max {
                    for c in 0..=max {
                        match check_encoding(&f, largest, [a, b, c]) {
                            Ok(true) => decoded += 1,
                            Ok(false) => {}
                            Err(e) => panic!("{bits} bits: {e}"),
                        }
                    }
                }
            }
        }
        // Roughly two thirds of the encodings are canonical (a fair share at 2 bits).
        let total = 4u64 << (3 * bits);
        assert!(decoded * 8 >= total, "{bits} bits: {decoded} of {total}");
    }
}

#[test]
fn three_small_components_at_the_bound_are_refused() {
    // `ff ff ff 1f`: largest index 3, the other three at +0.7071, norm 1.22 before.
    let mut r = ReadStream::new(&[0xff, 0xff, 0xff, 0x1f]);
    let e = r.read_quat(9).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NonCanonicalQuaternion { largest: 3 });
    assert_eq!(e.bit(), 0);
}

#[test]
fn an_omitted_component_that_is_not_the_largest_is_refused() {
    let f = QuatFormat::new(9);
    // x at the top of its range (0.7071), y and z in the middle: w = sqrt(1 - 0.5) ties x,
    // and with index 3 after x the writer would have omitted x.
    let top = 511;
    let mid = 255; // -0.0014
    let refused = unpack_with(3, [top, mid, mid], &f, 0).unwrap_err();
    assert_eq!(
        refused.kind(),
        &ErrorKind::NonCanonicalQuaternion { largest: 3 }
    );
    // A negative small component larger than the omitted one: the writer would have
    // omitted it and flipped the sign.
    assert!(unpack_with(0, [0, 300, 300], &f, 0).is_err());
    // The same rotation as the writer encodes it decodes.
    let (l, s) = pack([0.9, 0.3, 0.2, 0.1], 9, 0).unwrap();
    assert_eq!(l, 0);
    assert!(unpack(l, s, 9, 0).is_ok());
}

#[test]
fn widths_outside_2_to_max_bits_are_refused() {
    for bits in [0, 1, MAX_BITS + 1, 32, 33] {
        assert!(QuatFormat::try_new(bits).is_none());
        assert_eq!(
            pack([0.0, 0.0, 0.0, 1.0], bits, 0).unwrap_err().kind(),
            &ErrorKind::InvalidBitCount {
                bits,
                min: 2,
                max: MAX_BITS
            }
        );
        assert_eq!(
            unpack(3, [0; 3], bits, 0).unwrap_err().kind(),
            &ErrorKind::InvalidBitCount {
                bits,
                min: 2,
                max: MAX_BITS
            }
        );
    }
}

#[test]
fn ties_between_the_largest_components_encode_canonically_at_every_width() {
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let third = 1.0 / 3.0f32.sqrt();
    let qs = [
        [h, h, 0.0, 0.0],
        [0.0, -h, 0.0, h],
        [h, 0.0, 0.0, -h],
        [0.5, 0.5, 0.5, 0.5],
        [-0.5, 0.5, -0.5, 0.5],
        [third, third, third, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [0.0, 1.0, -1.0, 0.0],
        [0.5000001, 0.5, 0.5, 0.4999999],
    ];
    for bits in 2..=MAX_BITS {
        let f = QuatFormat::new(bits);
        for q in qs {
            let (l, s) = pack_with(q, &f, 0).unwrap();
            check_encoding(&f, l, s).unwrap_or_else(|e| panic!("{bits} bits, {q:?}: {e}"));
            let back = unpack_with(l, s, &f, 0).unwrap();
            assert!(
                same_rotation_within(q, back, bits),
                "{bits}: {q:?} -> {back:?}"
            );
        }
    }
}

/// Whether `b` is `q` normalized (or its negation) within the quantization's error: three
/// steps per component (half a step of rounding, the rebuilt largest's share of the
/// others' rounding, and a step when the writer moves a near-tie to stay canonical).
fn same_rotation_within(q: [f32; 4], b: [f32; 4], bits: u32) -> bool {
    let n = norm2(q).sqrt();
    let u = q.map(|c| c / n);
    let tolerance = 3.0 * step(bits) + 1e-6;
    let close = |sign: f32| {
        u.iter()
            .zip(&b)
            .all(|(x, y)| (sign * x - y).abs() <= tolerance)
    };
    close(1.0) || close(-1.0)
}

/// A quaternion with two components close in magnitude, to reach the writer's exact check.
fn near_tie() -> impl Strategy<Value = [f32; 4]> {
    (
        0usize..4,
        1usize..4,
        -1.0f32..1.0,
        -1e-3f32..1e-3,
        -0.5f32..0.5,
        -0.5f32..0.5,
    )
        .prop_map(|(i, k, a, d, x, y)| {
            let mut q = [x, y, x * y, y - x];
            q[i] = a;
            q[(i + k) % 4] = if a.abs() < 0.1 {
                1.0
            } else {
                a.signum() * (a.abs() + d)
            };
            q
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn any_encoding_decodes_to_a_fixed_point_or_is_refused(
        bits in 7..=MAX_BITS,
        largest in 0u32..4,
        small in prop::array::uniform3(any::<u32>()),
    ) {
        let f = QuatFormat::new(bits);
        let mask = (1u32 << bits) - 1;
        let small = small.map(|v| v & mask);
        if let Err(e) = check_encoding(&f, largest, small) {
            return Err(TestCaseError::fail(format!("{bits} bits: {e}")));
        }
    }

    #[test]
    fn what_the_writer_sends_decodes_within_the_quantization_error(
        bits in 2..=MAX_BITS,
        q in prop_oneof![prop::array::uniform4(-1.0f32..1.0), near_tie()],
    ) {
        prop_assume!(norm2(q) > 1e-6);
        let f = QuatFormat::new(bits);
        let (l, s) = pack_with(q, &f, 0).unwrap();
        if let Err(e) = check_encoding(&f, l, s) {
            return Err(TestCaseError::fail(format!("{bits} bits, {q:?}: {e}")));
        }
        let back = unpack_with(l, s, &f, 0).unwrap();
        prop_assert!(same_rotation_within(q, back, bits), "{} bits: {:?} -> {:?}", bits, q, back);
    }
}
