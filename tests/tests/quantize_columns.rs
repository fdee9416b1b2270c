//! The column functions of the derive's batch path equal the scalar ones bit for bit
//! whenever they return `true`, and return `false` rarely on in-range data:
//! `Quantize::quantize_column` and `dequantize_column` on ten million inputs (one million
//! in the debug profile) per quantization of the benchmark and the conformance vectors
//! (edge cases included),
//! `QuatFormat::pack_column` on random and adversarial quaternions (near-ties it settles
//! as `pack_with` does, refusing none; unnormalized and invalid ones) at 9, 10, 12 and
//! 20 bits, and `unpack_column` on 9- and 10-bit wire forms (a walk over the whole space).
//! The exhaustive version (all 2^32 inputs, every wire form) is
//! `cargo run --release -p netser --example exhaustive_quantize -- 2 column`.
//!
//! Every column call goes through `netser::batch::simd`, as the derive's batch path does:
//! this checks the columns' build for the widest instructions the CPU has (AVX-512, else
//! AVX2 and BMI2), with `NETSER_SIMD=avx2` their AVX2 build, and with `NETSER_SIMD=0` the
//! build for the crate's target (CI runs all three).
//!
//! `NETSER_COLUMN_SAMPLES` sets the sample count (default ten million in an optimized
//! build, one million in the debug profile). Run with `--nocapture` to see the refusal
//! rates.

use netser::batch::simd;
use netser::quat::{pack_with, unpack_with, QuatFormat, SMALLEST_THREE_BOUND};
use netser::Quantize;
use netser_tests::quantizers::{edge_cases, QUANTIZERS};

/// Inputs per quantization (and wire forms per quaternion width): ten million in an
/// optimized build (`cargo test --release`, a second or two), one million in the debug
/// profile CI runs (about ten seconds on two cores).
fn samples() -> u64 {
    let default = if cfg!(debug_assertions) {
        1_000_000
    } else {
        10_000_000
    };
    std::env::var("NETSER_COLUMN_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Lanes per block, as the derive uses most.
const N: usize = 16;

/// Lane `i` of block `b` is inactive for one block in eight, every third lane: their
/// values stay (NaN, infinities, out of range) and must not matter.
fn active(b: u64) -> [bool; N] {
    core::array::from_fn(|i| b % 8 != 5 || i % 3 != 0)
}

/// Counts of a run: blocks, blocks refused, blocks refused although every active value
/// was one the scalar function accepts.
#[derive(Default, Debug)]
struct Counts {
    blocks: u64,
    refused: u64,
    refused_valid: u64,
}

/// Quantizes `values` in blocks through the column and compares every accepted block
/// with `quantize`; a refused block must hold an active value outside `min..=max`.
fn check_quantize(q: &Quantize, values: &mut dyn Iterator<Item = f32>, counts: &mut Counts) {
    loop {
        let mut v = [0f32; N];
        let mut len = 0;
        for slot in v.iter_mut() {
            match values.next() {
                Some(x) => {
                    *slot = x;
                    len += 1;
                }
                None => break,
            }
        }
        if len == 0 {
            return;
        }
        let mut act = active(counts.blocks);
        act[len..].fill(false);
        counts.blocks += 1;
        let mut out = [0u32; N];
        let ok = simd(
            #[inline(always)]
            || q.quantize_column(&v, &act, &mut out),
        );
        let lanes = (0..N).filter(|&i| act[i]);
        if ok {
            for i in lanes {
                assert_eq!(
                    q.quantize(v[i], 0).ok(),
                    Some(out[i]),
                    "{q:?}: {:?} ({:#010x})",
                    v[i],
                    v[i].to_bits()
                );
            }
        } else {
            counts.refused += 1;
            let outside = lanes.clone().any(|i| !(v[i] >= q.min() && v[i] <= q.max()));
            assert!(outside, "{q:?}: refused {v:?} {act:?}");
            if lanes.clone().all(|i| q.quantize(v[i], 0).is_ok()) {
                counts.refused_valid += 1;
            }
        }
    }
}

#[test]
fn quantize_column_matches_quantize_on_ten_million_inputs_per_quantizer() {
    let samples = samples();
    // Two threads, six quantizers each (the machine's two cores).
    std::thread::scope(|s| {
        for half in QUANTIZERS.chunks(6) {
            s.spawn(move || {
                for &(min, max, res) in half {
                    for q in [
                        Quantize::new(min, max, res),
                        Quantize::new(min, max, res).clamping(),
                    ] {
                        let edges = edge_cases(&q);
                        let mut counts = Counts::default();
                        check_quantize(&q, &mut edges.iter().copied(), &mut counts);
                        // Half over all bit patterns (a golden-ratio walk), half uniform
                        // in `min..=top`: the in-range data the refusal rate is about.
                        let rest = samples.saturating_sub(edges.len() as u64);
                        let mut walk = (0..rest / 2)
                            .map(|i| f32::from_bits((i as u32).wrapping_mul(0x9E37_79B9)));
                        check_quantize(&q, &mut walk, &mut counts);
                        let mut in_range = Counts::default();
                        let uniform = rest - rest / 2;
                        let span = q.top() - q.min();
                        let mut values =
                            (0..uniform).map(|i| q.min() + span * (i as f32 / uniform as f32));
                        check_quantize(&q, &mut values, &mut in_range);
                        println!(
                            "{q:?}: {} of {} in-range blocks refused; all inputs {counts:?}",
                            in_range.refused, in_range.blocks
                        );
                        // Only blocks holding a value in `max..=top` (a rounding above
                        // `max`, present when `top > max`): one block in this sweep.
                        assert!(in_range.refused <= 1, "{q:?}: {in_range:?}");
                    }
                }
            });
        }
    });
}

#[test]
fn dequantize_column_matches_dequantize_on_every_integer_or_ten_million() {
    let samples = samples();
    for (min, max, res) in QUANTIZERS {
        let q = Quantize::new(min, max, res);
        let last = q.max_integer_value() as u64;
        let stride = last.div_ceil(samples).max(1);
        // The sweep, both ends, and integers above the range (refused when active).
        let ints: Vec<u32> = (0..=last)
            .step_by(stride as usize)
            .chain([last, last - 1])
            .map(|i| i as u32)
            .chain([q.max_integer_value().wrapping_add(1), u32::MAX, 1 << 31])
            .collect();
        for (b, block) in ints.chunks(N).enumerate() {
            let mut v = [u32::MAX; N];
            v[..block.len()].copy_from_slice(block);
            let mut act = active(b as u64);
            act[block.len()..].fill(false);
            let mut out = [0f32; N];
            let ok = simd(
                #[inline(always)]
                || q.dequantize_column(&v, &act, &mut out),
            );
            let valid = (0..N).all(|i| !act[i] || v[i] <= q.max_integer_value());
            assert_eq!(ok, valid, "{q:?}: {v:?}");
            if ok {
                for i in (0..N).filter(|&i| act[i]) {
                    assert_eq!(
                        out[i].to_bits(),
                        q.dequantize(v[i]).to_bits(),
                        "{q:?}: {}",
                        v[i]
                    );
                }
            }
        }
    }
}

/// A xorshift generator of floats in [-1, 1).
fn uniform(seed: u64) -> impl FnMut() -> f32 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// The wire form `pack_column` writes for `pack_with`'s result.
fn wire(f: &QuatFormat, (largest, [a, b, c]): (u32, [u32; 3])) -> u64 {
    let bits = f.bits();
    largest as u64 | (a as u64) << 2 | (b as u64) << (2 + bits) | (c as u64) << (2 + 2 * bits)
}

/// Whether `pack_column` may leave `q` to the scalar path: `pack_with` refuses it, or
/// its `len2` is more than 1024 float32 spacings from 1 (outside `inv_norm`'s closed
/// form; `pack_with` normalizes it). Near-ties are not a reason: the column settles them.
fn scalar_only(f: &QuatFormat, q: [f32; 4]) -> bool {
    let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    let off = len2.to_bits().abs_diff(1.0f32.to_bits());
    pack_with(q, f, 0).is_err() || off > 1024
}

/// Packs `qs` in blocks, compares every accepted block with `pack_with`, and returns the
/// number of blocks and of refused ones (a refused block must hold an active lane only
/// the scalar path packs: see `scalar_only`).
fn check_pack(f: &QuatFormat, qs: &[[f32; 4]], first_block: u64) -> (u64, u64) {
    let mut refused = 0;
    let mut blocks = 0;
    for (b, block) in qs.chunks(N).enumerate() {
        let mut q = [[f32::NAN; 4]; N];
        q[..block.len()].copy_from_slice(block);
        let mut act = active(first_block + b as u64);
        act[block.len()..].fill(false);
        let mut out = [0u64; N];
        blocks += 1;
        if simd(
            #[inline(always)]
            || f.pack_column(&q, &act, &mut out),
        ) {
            for i in (0..N).filter(|&i| act[i]) {
                let want = pack_with(q[i], f, 0).map(|p| wire(f, p));
                assert_eq!(want.ok(), Some(out[i]), "{} bits: {:?}", f.bits(), q[i]);
            }
        } else {
            refused += 1;
            let why = (0..N).any(|i| act[i] && scalar_only(f, q[i]));
            assert!(why, "{} bits: refused {q:?} {act:?}", f.bits());
        }
    }
    (blocks, refused)
}

/// Whether `pack_with` moved a small component of `q` (a near-tie it keeps canonical):
/// its integers differ from the plain rounding of the normalized components.
fn moved_by_pack_with(f: &QuatFormat, q: [f32; 4]) -> bool {
    let Ok((largest, small)) = pack_with(q, f, 0) else {
        return false;
    };
    let l = largest as usize;
    let inv = 1.0 / (q.iter().map(|c| c * c).sum::<f32>()).sqrt();
    let sign = if q[l] < 0.0 { -inv } else { inv };
    let max = (1u64 << f.bits()) - 1;
    let others = (0..4).filter(|&i| i != l);
    others.zip(small).any(|(i, s)| {
        // `pack_with`'s arithmetic: its float64 product is this float32 division.
        let n = q[i] * sign / SMALLEST_THREE_BOUND;
        let plain = ((n.clamp(-1.0, 1.0) + 1.0) * (max as f32 * 0.5) + 0.5) as u64;
        plain.min(max) != s as u64
    })
}

/// Unit quaternions (uniform in a cube, normalized in float32, as a game's are).
fn random_unit(next: &mut impl FnMut() -> f32) -> [f32; 4] {
    loop {
        let q = [next(), next(), next(), next()];
        let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
        if n > 0.1 {
            return q.map(|c| c / n);
        }
    }
}

#[test]
fn pack_column_matches_pack_with_on_random_and_adversarial_quaternions() {
    let count = (samples() / 10) as usize;
    std::thread::scope(|s| {
        for pair in [[9, 10], [12, 20]] {
            s.spawn(move || {
                for bits in pair {
                    let f = QuatFormat::new(bits);
                    let mut next = uniform(0x853C_49E6_748F_EA9B ^ bits as u64);
                    let random: Vec<[f32; 4]> = (0..count).map(|_| random_unit(&mut next)).collect();
                    let (blocks, refused) = check_pack(&f, &random, 0);
                    let moved = random.iter().filter(|q| moved_by_pack_with(&f, **q)).count();
                    println!(
                        "{bits} bits: {refused} of {blocks} blocks of random unit quaternions refused ({:.3}%); {moved} of {count} lanes are near-ties pack_with moves, settled in the column",
                        100.0 * refused as f64 / blocks as f64
                    );
                    // Normalized: the column settles every near-tie and refuses nothing.
                    assert_eq!(refused, 0, "{bits} bits: {refused} of {blocks}");
                    // Adversarial: the two largest magnitudes a few float32 spacings to a
                    // few steps apart, every largest index and sign, ties (blocks of them);
                    // then not normalized (scaled by 1 + k spacings), tiny, huge, zero, NaN
                    // (lane by lane, and in blocks with the near-ties).
                    let mut near = Vec::with_capacity(count / 2);
                    let mut odd = Vec::with_capacity(count / 2);
                    let step = 2.0 * std::f32::consts::FRAC_1_SQRT_2 / ((1 << bits) - 1) as f32;
                    for k in 0..count / 4 {
                        let mut q = random_unit(&mut next);
                        let l = k % 4;
                        let o = (l + 1 + k / 4 % 3) % 4;
                        let gap = [0.0, 1e-7, -1e-7, 0.1 * step, 0.3 * step, 0.5 * step, step, 4.0 * step, 9.0 * step][k % 9];
                        q[o] = (q[l].abs() - gap).copysign(q[o]);
                        let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                        let q = q.map(|c| c / n);
                        near.push(q);
                        near.push(q.map(|c| -c));
                        let scale = f32::from_bits(1.0f32.to_bits() + (k as u32 % 1100) - 550);
                        odd.push(q.map(|c| c * scale));
                        let mut bad = q.map(|c| c * [1e-20, 1e-3, 1e3, 0.0, 1.0][k % 5]);
                        bad[k % 4] = [f32::NAN, f32::INFINITY, -0.0, f32::MAX, bad[k % 4]][k / 4 % 5];
                        odd.push(bad);
                    }
                    let (blocks, refused) = check_pack(&f, &near, 0);
                    let moved = near.iter().filter(|q| moved_by_pack_with(&f, **q)).count();
                    println!(
                        "{bits} bits: {refused} of {blocks} blocks of near-ties refused; {moved} of {} lanes moved by pack_with",
                        near.len()
                    );
                    // Every one compared with `pack_with`, a good share of them moved.
                    assert_eq!(refused, 0, "{bits} bits");
                    assert!(moved * 50 > near.len(), "{bits} bits: {moved} moved");
                    let mut mixed = near;
                    mixed.extend(&odd);
                    mixed.sort_by_key(|q| q[0].to_bits().wrapping_mul(0x9E37_79B9));
                    let (blocks, refused) = check_pack(&f, &mixed, 0);
                    println!("{bits} bits: {refused} of {blocks} mixed adversarial blocks refused");
                    // Lane by lane the column refuses exactly what only the scalar path
                    // packs: invalid, or `len2` outside the closed form.
                    for q in &odd {
                        let mut out = [0u64; 1];
                        let ok = simd(#[inline(always)] || f.pack_column(&[*q], &[true], &mut out));
                        assert_eq!(ok, !scalar_only(&f, *q), "{bits} bits: {q:?}");
                        if ok {
                            assert_eq!(pack_with(*q, &f, 0).map(|p| wire(&f, p)).ok(), Some(out[0]), "{q:?}");
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn unpack_column_matches_unpack_with_on_sampled_wire_forms() {
    let samples = samples();
    std::thread::scope(|s| {
        for bits in [9, 10] {
            s.spawn(move || {
                let f = QuatFormat::new(bits);
                let space = 1u64 << f.wire_bits();
                // Every wire form when they fit in the sample count (9 bits: 2^29 do
                // not), else a walk with an odd stride near `space / samples`: distinct
                // values spread over the whole space.
                let stride = (space / samples.min(space)) | 1;
                let count = samples.min(space);
                let (mut blocks, mut refused) = (0u64, 0u64);
                let mut v = [0u64; N];
                for start in (0..count).step_by(N) {
                    for (i, slot) in v.iter_mut().enumerate() {
                        // Garbage above the wire bits is ignored.
                        *slot = ((start + i as u64) * stride % space) | (start << 40);
                    }
                    let act = active(blocks);
                    let scalar = v.map(|raw| {
                        let field = |k: u32| ((raw >> (2 + k * bits)) & ((1 << bits) - 1)) as u32;
                        unpack_with((raw & 3) as u32, [field(0), field(1), field(2)], &f, 0)
                    });
                    let mut out = [[0f32; 4]; N];
                    let ok = simd(#[inline(always)] || f.unpack_column(&v, &act, &mut out));
                    assert_eq!(ok, (0..N).all(|i| !act[i] || scalar[i].is_ok()), "{v:x?}");
                    blocks += 1;
                    refused += !ok as u64;
                    // Refused lanes made inactive, the others must decode as the scalar.
                    let act: [bool; N] = core::array::from_fn(|i| act[i] && scalar[i].is_ok());
                    assert!(simd(#[inline(always)] || f.unpack_column(&v, &act, &mut out)));
                    for i in (0..N).filter(|&i| act[i]) {
                        let want = scalar[i].clone().unwrap().map(f32::to_bits);
                        assert_eq!(out[i].map(f32::to_bits), want, "{bits} bits: {:#x}", v[i]);
                    }
                }
                println!("{bits} bits: {blocks} blocks of wire forms, {refused} holding a non-canonical one");
            });
        }
    });
}
