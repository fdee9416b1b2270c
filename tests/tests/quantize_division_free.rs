//! netser's division-free quantization equals the dividing float32 arithmetic of the
//! reference (kept here as the oracle): ten million float32 inputs per quantization the
//! benchmark and the conformance vectors use, edge cases included, every integer on
//! read (or ten million of them), and the quaternion's division by its bound. The
//! exhaustive version, over all 2^32 inputs, is
//! `cargo run --release -p netser --example exhaustive_quantize`.

use netser::batch::SimdLevel;
use netser::quat::{
    divide_by_bound_fused, pack_with, unpack_with, QuatFormat, SMALLEST_THREE_BOUND,
};
use netser::Quantize;
use netser_tests::quantizers::{around, edge_cases, QUANTIZERS};

/// Inputs written per quantization.
const SAMPLES: u64 = 10_000_000;

// The reference's negated comparisons: a NaN takes the clamping branch.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
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

/// The batch read at the vector levels (fused multiply-adds instead of the division,
/// `netser::quantize`'s module docs) on `ints`, against the reference, 16 at a time.
fn check_fused_read(q: &Quantize, ints: impl Iterator<Item = u32>) {
    let ints: Vec<u32> = ints.collect();
    for chunk in ints.chunks(16) {
        let mut lanes = [0u32; 16];
        lanes[..chunk.len()].copy_from_slice(chunk);
        let mut out = [0f32; 16];
        // Called directly, not through `simd`: the fused steps are exact whatever the
        // instructions (a library call here), so this checks the arithmetic itself.
        assert!(q.dequantize_column_at(SimdLevel::Avx2, &lanes, &[true; 16], &mut out));
        for (&i, got) in chunk.iter().zip(out) {
            let want = reference_dequantize(q, i);
            assert_eq!(got.to_bits(), want.to_bits(), "{q:?}: integer {i}");
        }
    }
}

#[test]
fn every_integer_read_by_fused_multiply_adds_matches_the_division() {
    for (min, max, res) in QUANTIZERS {
        let q = Quantize::new(min, max, res);
        let last = q.max_integer_value();
        // Every integer below 2^22 steps (the fused read's domain; larger ones divide).
        let stride = (last as u64).div_ceil(SAMPLES).max(1) as usize;
        check_fused_read(&q, (0..=last).step_by(stride).chain([last - 1, last]));
    }
}

/// The proof covers every `n <= M < 2^22`: pairs drawn across that whole domain, every
/// `M` near the powers of two and near 2^22, with the ends of each range.
#[test]
fn sampled_integer_pairs_read_by_fused_multiply_adds_match_the_division() {
    let mut next = netser_tests::xorshift(0x9E37_79B9_7F4A_7C15);
    let mut steps: Vec<u32> = (1..22)
        .flat_map(|k| [(1 << k) - 1, 1 << k, (1 << k) + 1])
        .collect();
    steps.extend([(1 << 22) - 1, (1 << 22) - 2, 3, 5, 7, 409_600, 12_800]);
    steps.extend((0..2000).map(|_| 1 + (next() % ((1 << 22) - 1)) as u32));
    for m in steps {
        // `res = 1` over `0..=m`: exactly `m` steps.
        let q = Quantize::new(0.0, m as f32, 1.0);
        assert_eq!(q.max_integer_value(), m);
        let drawn: Vec<u32> = (0..2000)
            .map(|_| (next() % (m as u64 + 1)) as u32)
            .collect();
        let ends = [0, 1, m / 3, m / 2, m.saturating_sub(1), m];
        check_fused_read(&q, drawn.into_iter().chain(ends));
    }
}

/// The vector levels' division by the bound (`quat::divide_by_bound_fused`) against the
/// division: the same bits, or both at most 2^-25 (then `n + 1` is 1 either way), for
/// ten million bit patterns and every component near the bound, 1 and the subnormals.
#[test]
fn the_quaternion_divides_by_its_bound_with_fused_multiply_adds() {
    let tiny = 2f32.powi(-25);
    let check = |y: f32| {
        let (got, want) = (divide_by_bound_fused(y), y / SMALLEST_THREE_BOUND);
        if want.is_finite() && !y.is_nan() {
            assert!(
                got.to_bits() == want.to_bits() || got.abs() <= tiny && want.abs() <= tiny,
                "{y:?}: fused {got:?}, divided {want:?}"
            );
        }
    };
    let stride = (1u64 << 32) / SAMPLES;
    for i in 0..SAMPLES {
        check(f32::from_bits((i * stride + i % 7) as u32));
    }
    for centre in [SMALLEST_THREE_BOUND, 1.0, f32::MIN_POSITIVE, 2f32.powi(-25)] {
        for d in -20_000i32..=20_000 {
            let y = f32::from_bits(centre.to_bits().wrapping_add_signed(d));
            check(y);
            check(-y);
        }
    }
}

#[test]
fn the_quaternion_divides_by_its_bound_exactly() {
    // The writer's `(x * inv) / bound` through a float64 reciprocal, for ten million
    // float32 components (bit-pattern walk) and every value near the bound and zero.
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
    // End to end: the writer against the dividing writer netser had before, on a million
    // quaternions per width, normalized in float32 (as a game's are) or not at all.
    let mut state = 0x853C_49E6_748F_EA9Bu64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    for bits in [9, 10] {
        let f = QuatFormat::new(bits);
        let mut moved = 0;
        for k in 0..1_000_000 {
            let q = [next(), next(), next(), next()];
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            let q = if k % 2 == 0 { q.map(|c| c / n) } else { q };
            let got = pack_with(q, &f, 0).unwrap();
            let want = reference_pack(q, bits);
            if got != want {
                // Only where the dividing writer sent a non-canonical encoding.
                assert!(
                    unpack_with(want.0, want.1, &f, 0).is_err(),
                    "{q:?}: {got:?} vs {want:?}"
                );
                moved += 1;
            }
        }
        // Near-ties the old writer sent non-canonically (decoding to another value):
        // about 0.35% at 9 bits.
        assert!(moved < 10_000, "{moved} encodings moved at {bits} bits");
    }
}

/// The quaternion writer as netser had it before: dividing by the norm and the bound.
fn reference_pack(q: [f32; 4], bits: u32) -> (u32, [u32; 3]) {
    let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    let inv = 1.0 / len2.sqrt();
    let sign = if q[largest] < 0.0 { -inv } else { inv };
    let max = (1u32 << bits) - 1;
    let half_scale = max as f32 * 0.5;
    let mut out = [0u32; 3];
    let others: Vec<usize> = (0..4).filter(|&i| i != largest).collect();
    for (j, &i) in others.iter().enumerate() {
        let n = ((q[i] * sign) / SMALLEST_THREE_BOUND).clamp(-1.0, 1.0);
        out[j] = (((n + 1.0) * half_scale + 0.5) as i64).min(max as i64) as u32;
    }
    (largest as u32, out)
}

#[test]
fn the_quaternion_normalizes_without_a_square_root_near_one_exactly() {
    // Every `len2` within 4096 spacings of 1 (the closed form covers 1024), then ten
    // million positive float32 values: `inv_norm` is `1 / sqrt(len2)` rounded twice.
    let one = 1.0f32.to_bits();
    let near = (one - 4096..=one + 4096).map(f32::from_bits);
    let walk = (0..SAMPLES as u32).map(|i| f32::from_bits(i.wrapping_mul(0x9E37_79B9) >> 1));
    for len2 in near.chain(walk).filter(|x| *x > 0.0 && x.is_finite()) {
        let want = 1.0 / len2.sqrt();
        let got = netser::quat::inv_norm(len2);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "len2 {len2:?} ({:#010x})",
            len2.to_bits()
        );
    }
}
