//! Quantization with and without float32 division, side by side in one run: the
//! dividing arithmetic netser used before (kept here) against `Quantize` and
//! `quat::pack_with`, which multiply by reciprocals computed when the quantization is
//! built. Same bits (see `examples/exhaustive_quantize.rs`); this measures the time.
//! The `column16` cases are the derive's batch path: the column functions on blocks of
//! 16 values (`Quantize::quantize_column`, `QuatFormat::pack_column`, ...), against the
//! scalar calls (`netser`) on the same values.
//!
//! `cargo bench -p netser --bench quantize`

#![allow(missing_docs)] // criterion's generated entry points

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netser::quat::{QuatFormat, SMALLEST_THREE_BOUND};

/// Lanes per column call.
const LANES: usize = 16;
use netser::{Quantize, Result};

/// The benchmark's position quantization (bench/src/model.rs).
const POS: Quantize = Quantize::new(-2048.0, 2048.0, 0.01);
/// The benchmark's quaternion width.
const Q10: QuatFormat = QuatFormat::new(10);
/// Values per iteration.
const N: usize = 1024;

/// The dividing write, as netser computed it before: in range, `f32(v - min) / delta`.
#[inline(always)]
fn quantize_dividing(q: &Quantize, delta: f32, value: f32) -> Result<u32> {
    if !(value >= q.min() && value <= q.max()) {
        return q.quantize(value, 0);
    }
    let n = (value - q.min()) / delta;
    let m = q.max_integer_value();
    let scaled = n * m as f32;
    Ok(((scaled + 0.5) as i64).min(m as i64) as u32)
}

/// The dividing read.
#[inline(always)]
fn dequantize_dividing(q: &Quantize, delta: f32, integer: u32) -> f32 {
    (integer as f32 / q.max_integer_value() as f32) * delta + q.min()
}

/// The dividing quaternion write (normalize, then divide each component by the bound).
#[inline(always)]
fn pack_dividing(q: [f32; 4], bits: u32) -> (u32, [u32; 3]) {
    let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    let inv = 1.0 / len2.sqrt();
    let sign = if q[largest] < 0.0 { -inv } else { inv };
    let max = ((1u64 << bits) - 1) as u32;
    let half_scale = max as f32 * 0.5;
    let others = match largest {
        0 => [1, 2, 3],
        1 => [0, 2, 3],
        2 => [0, 1, 3],
        _ => [0, 1, 2],
    };
    let mut out = [0u32; 3];
    for (j, i) in others.into_iter().enumerate() {
        let n = ((q[i] * sign) / SMALLEST_THREE_BOUND).clamp(-1.0, 1.0);
        out[j] = (((n + 1.0) * half_scale + 0.5) as i64).min(max as i64) as u32;
    }
    (largest as u32, out)
}

/// Deterministic inputs: positions across the world, unit quaternions.
fn inputs() -> (Vec<f32>, Vec<u32>, Vec<[f32; 4]>) {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let values = (0..N).map(|_| next() * 4096.0 - 2048.0).collect();
    let integers = (0..N)
        .map(|_| (next() * POS.max_integer_value() as f32) as u32)
        .collect();
    let quats = (0..N)
        .map(|_| {
            let q = [next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5];
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            q.map(|c| c / n)
        })
        .collect();
    (values, integers, quats)
}

fn bench(c: &mut Criterion) {
    let (values, integers, quats) = inputs();
    let delta = POS.max() - POS.min();

    let mut g = c.benchmark_group("quantize");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("dividing", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &v in black_box(&values) {
                sum = sum.wrapping_add(quantize_dividing(&POS, delta, v).unwrap());
            }
            sum
        })
    });
    g.bench_function("netser", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &v in black_box(&values) {
                sum = sum.wrapping_add(POS.quantize(v, 0).unwrap());
            }
            sum
        })
    });
    g.bench_function("column16", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for block in black_box(&values).chunks_exact(LANES) {
                let mut out = [0u32; LANES];
                assert!(POS.quantize_column(block.try_into().unwrap(), &[true; LANES], &mut out));
                sum = out.iter().fold(sum, |s, &i| s.wrapping_add(i));
            }
            sum
        })
    });
    g.finish();

    let mut g = c.benchmark_group("dequantize");
    g.throughput(Throughput::Elements(N as u64));
    // The results fold by xor of their bits: a float sum would be a chain of dependent
    // additions slower than what it measures.
    g.bench_function("dividing", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &i in black_box(&integers) {
                sum ^= dequantize_dividing(&POS, delta, i).to_bits();
            }
            sum
        })
    });
    g.bench_function("netser", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &i in black_box(&integers) {
                sum ^= POS.dequantize(i).to_bits();
            }
            sum
        })
    });
    g.bench_function("column16", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for block in black_box(&integers).chunks_exact(LANES) {
                let mut out = [0f32; LANES];
                assert!(POS.dequantize_column(block.try_into().unwrap(), &[true; LANES], &mut out));
                sum = out.iter().fold(sum, |s, &v| s ^ v.to_bits());
            }
            sum
        })
    });
    g.finish();

    let mut g = c.benchmark_group("quat_pack");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("dividing", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &q in black_box(&quats) {
                let (l, s) = pack_dividing(q, 10);
                sum = sum.wrapping_add(l ^ s[0] ^ s[1] ^ s[2]);
            }
            sum
        })
    });
    g.bench_function("netser", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &q in black_box(&quats) {
                let (l, s) = netser::quat::pack_with(q, &Q10, 0).unwrap();
                sum = sum.wrapping_add(l ^ s[0] ^ s[1] ^ s[2]);
            }
            sum
        })
    });
    // The wire form each way: the scalar call then the shifts, or the column.
    g.bench_function("netser_wire", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for &q in black_box(&quats) {
                let (l, s) = netser::quat::pack_with(q, &Q10, 0).unwrap();
                let wire =
                    l as u64 | (s[0] as u64) << 2 | (s[1] as u64) << 12 | (s[2] as u64) << 22;
                sum = sum.wrapping_add(wire);
            }
            sum
        })
    });
    let mut packed = vec![0u64; N];
    let mut refused = 0;
    g.bench_function("column16", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for block in black_box(&quats).chunks_exact(LANES) {
                let mut out = [0u64; LANES];
                // A refused block takes the scalar path, as the derive does (none here:
                // the column settles near-ties itself and refuses only unnormalized or
                // invalid quaternions).
                if !Q10.pack_column(block.try_into().unwrap(), &[true; LANES], &mut out) {
                    for (o, &q) in out.iter_mut().zip(block) {
                        let (l, s) = netser::quat::pack_with(q, &Q10, 0).unwrap();
                        *o = l as u64
                            | (s[0] as u64) << 2
                            | (s[1] as u64) << 12
                            | (s[2] as u64) << 22;
                    }
                }
                sum = out.iter().fold(sum, |s, &w| s.wrapping_add(w));
            }
            sum
        })
    });
    g.finish();
    for (block, out) in quats
        .chunks_exact(LANES)
        .zip(packed.chunks_exact_mut(LANES))
    {
        let out: &mut [u64; LANES] = out.try_into().unwrap();
        if !Q10.pack_column(block.try_into().unwrap(), &[true; LANES], out) {
            refused += 1;
            for (o, &q) in out.iter_mut().zip(block) {
                let (l, s) = netser::quat::pack_with(q, &Q10, 0).unwrap();
                *o = l as u64 | (s[0] as u64) << 2 | (s[1] as u64) << 12 | (s[2] as u64) << 22;
            }
        }
    }
    eprintln!(
        "quat_pack column16: {refused} of {} blocks took the scalar path",
        N / LANES
    );

    let mut g = c.benchmark_group("quat_unpack");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("netser", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for &raw in black_box(&packed) {
                let field = |k: u32| ((raw >> (2 + 10 * k)) & 1023) as u32;
                let q = netser::quat::unpack_with(
                    (raw & 3) as u32,
                    [field(0), field(1), field(2)],
                    &Q10,
                    0,
                )
                .unwrap();
                sum ^= q[0].to_bits() ^ q[1].to_bits() ^ q[2].to_bits() ^ q[3].to_bits();
            }
            sum
        })
    });
    g.bench_function("column16", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for block in black_box(&packed).chunks_exact(LANES) {
                let mut out = [[0f32; 4]; LANES];
                assert!(Q10.unpack_column(block.try_into().unwrap(), &[true; LANES], &mut out));
                sum = out.iter().fold(sum, |s, q| {
                    s ^ q[0].to_bits() ^ q[1].to_bits() ^ q[2].to_bits() ^ q[3].to_bits()
                });
            }
            sum
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
