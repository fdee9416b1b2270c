//! netser's division-free quantization equals the dividing float32 arithmetic of the
//! reference (kept here as the oracle): ten million float32 inputs per quantization the
//! benchmark and the conformance vectors use, edge cases included, every integer on
//! read (or ten million of them), and the quaternion's division by its bound. The
//! exhaustive version, over all 2^32 inputs, is
//! `cargo run --release -p netser --example exhaustive_quantize`.

use netser::quat::{pack_with, QuatFormat, SMALLEST_THREE_BOUND};
use netser::Quantize;

/// Inputs written per quantization.
const SAMPLES: u64 = 10_000_000;

/// The benchmark's quantizations (bench/src/model.rs), then the conformance vectors'.
const QUANTIZERS: [(f32, f32, f32); 12] = [
    (-2048.0, 2048.0, 0.01),
    (0.0, 512.0, 0.01),
    (-64.0, 64.0, 0.01),
    (-1.0, 1.0, 0.001),
    (-10.0, 10.0, 0.01),
    (-100.0, 100.0, 0.01),
    (0.0, 1.0, 2.0),
    (0.0, 10.0, 0.01),
    (0.0, 10.0, 0.3),
    (0.0, 15.0, 1.0),
    (0.0, 1e10, 1.0),
    (0.0, 63.3, 1.0),
];

/// The reference's write for a finite value: its clamps and its division.
fn reference_quantize(q: &Quantize, value: f32) -> u32 {
    let delta = q.max() - q.min();
    let mut n = (value - q.min()) / delta;
    if !(n >= 0.0) {
        n = 0.0;
    } else if !(n <= 1.0) {
        n = 1.0;
    }
    let scaled = n * q.max_integer_value() as f32;
    // Round-to-even can give `max + 1` between 2^23 and 2^24: netser writes `max`.
    ((scaled + 0.5) as u64).min(q.max_integer_value() as u64) as u32
}

/// The reference's read, with its division.
fn reference_dequantize(q: &Quantize, integer: u32) -> f32 {
    let delta = q.max() - q.min();
    (integer as f32 / q.max_integer_value() as f32) * delta + q.min()
}

/// Compares one input, strict and clamping, with the reference.
fn check_value(q: &Quantize, v: f32) {
    let strict = q.quantize(v, 0);
    let clamped = q.clamping().quantize(v, 0);
    if !v.is_finite() {
        assert!(strict.is_err() && clamped.is_err(), "{v:?} accepted");
        return;
    }
    let want = reference_quantize(q, v);
    assert_eq!(
        clamped.ok(),
        Some(want),
        "{q:?}: clamping {v:?} ({:#010x})",
        v.to_bits()
    );
    let in_range = v >= q.min() && v <= q.top().max(q.max());
    match strict {
        Ok(i) => assert!(
            in_range && i == want,
            "{q:?}: {v:?} -> {i}, reference {want}"
        ),
        Err(_) => assert!(!in_range, "{q:?}: {v:?} refused"),
    }
}

/// The float32 values `k` spacings either side of `v`, for `k` in `0..=radius`.
fn around(v: f32, radius: u32) -> impl Iterator<Item = f32> {
    let b = v.to_bits();
    (0..=radius).flat_map(move |k| [b.wrapping_add(k), b.wrapping_sub(k)].map(f32::from_bits))
}

/// Edge cases: the range's ends and top, zero, the subnormal and normal limits and the
/// infinities, each with its neighbours; then every bit pattern's class.
fn edge_cases(q: &Quantize) -> Vec<f32> {
    let centres = [
        q.min(),
        q.max(),
        q.top(),
        0.0,
        -0.0,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        (q.min() + q.max()) / 2.0,
    ];
    centres.iter().flat_map(|&c| around(c, 256)).collect()
}

#[test]
fn ten_million_inputs_per_quantizer_match_the_dividing_arithmetic() {
    for (min, max, res) in QUANTIZERS {
        let q = Quantize::new(min, max, res);
        let edges = edge_cases(&q);
        for &v in &edges {
            check_value(&q, v);
        }
        let rest = SAMPLES - edges.len() as u64;
        // Half over all bit patterns (a golden-ratio walk), half uniform in the range.
        for i in 0..rest / 2 {
            check_value(&q, f32::from_bits((i as u32).wrapping_mul(0x9E37_79B9)));
        }
        let span = q.top().max(q.max()) - q.min();
        for i in 0..rest - rest / 2 {
            let u = (i as f32) / ((rest - rest / 2) as f32);
            check_value(&q, q.min() + span * u);
        }
    }
}

#[test]
fn every_integer_read_matches_the_dividing_arithmetic() {
    for (min, max, res) in QUANTIZERS {
        let q = Quantize::new(min, max, res);
        let last = q.max_integer_value() as u64;
        // Every integer, or ten million spread over the range with both ends.
        let stride = last.div_ceil(SAMPLES).max(1);
        let integers = (0..=last).step_by(stride as usize).chain([last, last - 1]);
        for i in integers {
            let i = i as u32;
            let (got, want) = (q.dequantize(i), reference_dequantize(&q, i));
            assert_eq!(got.to_bits(), want.to_bits(), "{q:?}: integer {i}");
        }
    }
}

#[test]
fn the_quaternion_divides_by_its_bound_exactly() {
    // The writer's `(x * inv) / bound` through a float64 reciprocal, for ten million
    // float32 components (bit-pattern walk) and every value near the bound, at the
    // benchmark's 10 bits and the derive bench's 9: checked through `pack_with` on
    // quaternions whose normalization leaves the component unchanged (`[x, 0, 0, 1]`
    // with `x` small enough that `1 + x^2` rounds to 1).
    let inv_bound = 1.0 / SMALLEST_THREE_BOUND as f64;
    let mut xs: Vec<f32> = around(SMALLEST_THREE_BOUND, 4096)
        .chain(around(-SMALLEST_THREE_BOUND, 4096))
        .chain(around(0.0, 4096))
        .collect();
    xs.extend((0..SAMPLES as u32).map(|i| f32::from_bits(i.wrapping_mul(0x9E37_79B9))));
    for x in xs.into_iter().filter(|x| !x.is_nan()) {
        let divided = x / SMALLEST_THREE_BOUND;
        let multiplied = (x as f64 * inv_bound) as f32;
        // Equal, or both below the normal range (where the component is 0 either way).
        assert!(
            divided.to_bits() == multiplied.to_bits()
                || (divided.abs() < f32::MIN_POSITIVE && multiplied.abs() < f32::MIN_POSITIVE),
            "{x:?}: {divided:?} vs {multiplied:?}"
        );
    }
    for bits in [9, 10] {
        let f = QuatFormat::new(bits);
        let max = (1u32 << bits) - 1;
        for b in 0..1u32 << 16 {
            // Components below 2^-13 in magnitude: 1 + x^2 is 1 in float32.
            let x = f32::from_bits(b << 8) * if b & 1 == 0 { 1.0 } else { -1.0 };
            if !(x.abs() < 1.0 / 8192.0) {
                continue;
            }
            let (largest, small) = pack_with([x, 0.0, 0.0, 1.0], &f, 0).unwrap();
            let n = (x / SMALLEST_THREE_BOUND).clamp(-1.0, 1.0);
            let want = (((n + 1.0) * (max as f32 * 0.5) + 0.5) as i64).min(max as i64) as u32;
            assert_eq!((largest, small[0]), (3, want), "{x:?}");
        }
    }
}
