//! Checks netser's division-free quantization against the reference's dividing float32
//! arithmetic for every float32 input and every integer, for each quantization the
//! benchmark (`bench/src/model.rs`) and the conformance vectors use, and the
//! quaternion's division by its bound for every float32 component (and the vector
//! levels' fused multiply-adds standing for that division) and its
//! normalization factor `1 / sqrt(len2)` for every positive float32. Then the derive's
//! batch path: the column functions (`Quantize::quantize_column`, `dequantize_column`,
//! `QuatFormat::unpack_column`, 16 lanes at a time) against the scalar ones, for every
//! float32 input and every integer of those quantizations, and every 9- and 10-bit
//! quaternion wire form (2^29 and 2^32).
//!
//! ```text
//! cargo run --release -p netser --example exhaustive_quantize            # all, 2 threads
//! cargo run --release -p netser --example exhaustive_quantize -- 4       # 4 threads
//! cargo run --release -p netser --example exhaustive_quantize -- 2 quat  # names containing "quat"
//! cargo run --release -p netser --example exhaustive_quantize -- 2 column  # the columns only
//! cargo run --release -p netser --example exhaustive_quantize -- 2 column simd  # as dispatched here
//! NETSER_SIMD=avx2 cargo run --release -p netser --example exhaustive_quantize -- 2 column simd
//! ```
//!
//! With `simd` the columns run as the batch path runs them on this CPU: its AVX-512 build
//! where the CPU has AVX-512, else its AVX2 build; `NETSER_SIMD=avx2` picks the AVX2 build.
//! Those builds read integers with fused multiply-adds instead of a division (the proof is
//! in `netser::quantize`'s module docs), so `column ... simd` checks that arithmetic too.
//!
//! It takes minutes; it prints each check, its count and time, and exits non-zero on the
//! first mismatch. `tests/tests/quantize_division_free.rs` is the sampled CI version.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use netser::quat::{divide_by_bound_fused, unpack_with, QuatFormat, SMALLEST_THREE_BOUND};
use netser::Quantize;

// The reference's negated comparisons: a NaN takes the clamping branch.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
/// The reference's write for a finite value (its clamps), with its division.
fn reference_quantize(q: &Quantize, value: f32) -> u32 {
    let delta = q.max() - q.min();
    let mut n = (value - q.min()) / delta;
    if !(n >= 0.0) {
        n = 0.0;
    } else if !(n <= 1.0) {
        n = 1.0;
    }
    let scaled = n * q.max_integer_value() as f32;
    // floor of a non-negative float below 2^32 + 1; the reader's bound.
    ((scaled + 0.5) as u64).min(q.max_integer_value() as u64) as u32
}

/// The reference's read, with its division.
fn reference_dequantize(q: &Quantize, integer: u32) -> f32 {
    let delta = q.max() - q.min();
    (integer as f32 / q.max_integer_value() as f32) * delta + q.min()
}

/// The quaternion writer's component integer for a normalized component `x`, dividing.
fn reference_quat_component(x: f32, bits: u32) -> u32 {
    let max = ((1u64 << bits) - 1) as u32;
    let n = (x / SMALLEST_THREE_BOUND).clamp(-1.0, 1.0);
    (((n + 1.0) * (max as f32 * 0.5) + 0.5) as i64).min(max as i64) as u32
}

/// The same through netser's reciprocal (as `quat::pack_with` computes it).
fn netser_quat_component(x: f32, bits: u32) -> u32 {
    let max = ((1u64 << bits) - 1) as u32;
    let inv_bound = 1.0 / SMALLEST_THREE_BOUND as f64;
    let n = ((x as f64 * inv_bound) as f32).clamp(-1.0, 1.0);
    (((n + 1.0) * (max as f32 * 0.5) + 0.5) as i64).min(max as i64) as u32
}

/// One input's check: `Err` describes the mismatch. Every finite value goes through the
/// clamping quantizer (the reference's semantics); values in the writer's range through
/// the strict one too (refusals outside it are the sampled test's business: an error
/// allocates, which would dominate the run).
fn check_value(q: &Quantize, clamping: &Quantize, write_max: f32, v: f32) -> Result<(), String> {
    if !v.is_finite() {
        return match clamping.quantize(v, 0) {
            Err(_) => Ok(()),
            Ok(i) => Err(format!("{v:?} ({:#010x}) accepted as {i}", v.to_bits())),
        };
    }
    let want = reference_quantize(q, v);
    let clamped = clamping.quantize(v, 0);
    if clamped.as_ref().ok() != Some(&want) {
        return Err(format!(
            "clamping {v:?} ({:#010x}): {clamped:?}, reference {want}",
            v.to_bits()
        ));
    }
    if v >= q.min() && v <= write_max {
        let strict = q.quantize(v, 0);
        if strict.as_ref().ok() != Some(&want) {
            return Err(format!(
                "{v:?} ({:#010x}): {strict:?}, reference {want}",
                v.to_bits()
            ));
        }
    }
    Ok(())
}

/// Runs `check(bits)` for every 32-bit pattern on `threads` threads.
fn every_u32(threads: u64, check: impl Fn(u32) -> Result<(), String> + Sync) -> Result<(), String> {
    every_integer(u32::MAX, threads, check)
}

/// Runs `check(i)` for every `i` in `0..=last` on `threads` threads.
fn every_integer(
    last: u32,
    threads: u64,
    check: impl Fn(u32) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let failures = AtomicU64::new(0);
    let count = last as u64 + 1;
    let first = std::sync::Mutex::new(None::<String>);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (check, failures, first) = (&check, &failures, &first);
            s.spawn(move || {
                let start = count * t / threads;
                let end = count * (t + 1) / threads;
                for i in start..end {
                    if let Err(e) = check(i as u32) {
                        if failures.fetch_add(1, Ordering::Relaxed) == 0 {
                            *first.lock().unwrap() = Some(e);
                        }
                    }
                }
            });
        }
    });
    match first.into_inner().unwrap() {
        None => Ok(()),
        Some(e) => Err(format!(
            "{} mismatches, first: {e}",
            failures.load(Ordering::Relaxed)
        )),
    }
}

/// Lanes per column call: the derive's usual block.
const LANES: usize = 16;

/// The quantize column on the 16 values from `first` up (as bit patterns): an accepted
/// block must equal `quantize` lane for lane, a refused one hold a value outside
/// `min..=max`. Lanes whose value is NaN are made inactive in one call of two, so
/// garbage in inactive lanes is exercised too.
fn check_quantize_column(q: &Quantize, first: u32) -> Result<(), String> {
    let values: [f32; LANES] =
        std::array::from_fn(|i| f32::from_bits(first.wrapping_add(i as u32)));
    let mut out = [0u32; LANES];
    for active in [[true; LANES], values.map(|v| !v.is_nan())] {
        let ok = netser::batch::simd(
            #[inline(always)]
            || q.quantize_column(&values, &active, &mut out),
        );
        let lanes = (0..LANES).filter(|&i| active[i]);
        let inside = lanes
            .clone()
            .all(|i| values[i] >= q.min() && values[i] <= q.max());
        if ok != inside {
            return Err(format!("{:#010x}..: column says {ok}", first));
        }
        for i in lanes.filter(|_| ok) {
            if q.quantize(values[i], 0).ok() != Some(out[i]) {
                return Err(format!(
                    "{:?}: column {}, quantize {:?}",
                    values[i],
                    out[i],
                    q.quantize(values[i], 0)
                ));
            }
        }
    }
    Ok(())
}

/// The dequantize column on the integers from `first` up to `last`.
fn check_dequantize_column(q: &Quantize, first: u32, last: u32) -> Result<(), String> {
    let ints: [u32; LANES] = std::array::from_fn(|i| first.saturating_add(i as u32).min(last));
    let mut out = [0f32; LANES];
    // At the CPU's level: from AVX2 on, the column's quotient is found by fused
    // multiply-adds instead of a division.
    if !netser::batch::simd_with(
        #[inline(always)]
        |level| q.dequantize_column_at(level, &ints, &[true; LANES], &mut out),
    ) {
        return Err(format!("integers from {first} refused"));
    }
    for i in 0..LANES {
        if out[i].to_bits() != q.dequantize(ints[i]).to_bits() {
            return Err(format!(
                "integer {}: column {:?}, dequantize {:?}",
                ints[i],
                out[i],
                q.dequantize(ints[i])
            ));
        }
    }
    Ok(())
}

/// The unpack column on the 16 wire forms from `first` up (modulo the wire space): it
/// refuses exactly the blocks holding a non-canonical form; with those lanes inactive it
/// decodes the rest as `unpack_with` does.
fn check_unpack_column(f: &QuatFormat, first: u64) -> Result<(), String> {
    let bits = f.bits();
    let space = 1u64 << f.wire_bits();
    let packed: [u64; LANES] = std::array::from_fn(|i| (first + i as u64) % space);
    let scalar = packed.map(|raw| {
        let field = |k: u32| ((raw >> (2 + k * bits)) & ((1 << bits) - 1)) as u32;
        unpack_with((raw & 3) as u32, [field(0), field(1), field(2)], f, 0)
    });
    let canonical = scalar.each_ref().map(|r| r.is_ok());
    let mut out = [[0f32; 4]; LANES];
    let ok = netser::batch::simd(
        #[inline(always)]
        || f.unpack_column(&packed, &[true; LANES], &mut out),
    );
    if ok != canonical.iter().all(|&c| c) {
        return Err(format!("{first:#x}..: column says {ok}"));
    }
    if !netser::batch::simd(
        #[inline(always)]
        || f.unpack_column(&packed, &canonical, &mut out),
    ) {
        return Err(format!("{first:#x}..: canonical lanes refused"));
    }
    for i in (0..LANES).filter(|&i| canonical[i]) {
        let want = scalar[i].as_ref().unwrap().map(f32::to_bits);
        if out[i].map(f32::to_bits) != want {
            return Err(format!(
                "{:#x}: column {:?}, unpack_with {:?}",
                packed[i], out[i], scalar[i]
            ));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let threads: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    let filter = std::env::args().nth(2).unwrap_or_default();
    // The columns as the crate is compiled (SSE2 on x86_64), or with `simd` as the batch
    // path runs them on this CPU (`netser::batch::simd`: AVX-512 or AVX2; `NETSER_SIMD=avx2`
    // checks the AVX2 build on a CPU with AVX-512).
    let simd = std::env::args().nth(3).is_some_and(|a| a == "simd");
    netser::batch::set_simd(simd);
    if simd && !netser::batch::simd_enabled() {
        eprintln!("this CPU lacks AVX2 or BMI2: nothing to check with `simd`");
        return ExitCode::FAILURE;
    }
    println!(
        "columns compiled for {}",
        match netser::batch::simd_level() {
            netser::batch::SimdLevel::Avx512 => "AVX-512 (with AVX2 and BMI2)",
            netser::batch::SimdLevel::Avx2 => "AVX2 and BMI2",
            netser::batch::SimdLevel::Baseline => "the crate's target",
        }
    );
    let wanted = |name: &str| name.contains(filter.as_str());
    // The benchmark's quantizations (bench/src/model.rs), then the conformance vectors'.
    let quantizers: [(&str, f32, f32, f32); 12] = [
        ("bench position x/y", -2048.0, 2048.0, 0.01),
        ("bench position z", 0.0, 512.0, 0.01),
        ("bench velocity", -64.0, 64.0, 0.01),
        ("conformance [-1, 1] 0.001", -1.0, 1.0, 0.001),
        ("conformance [-10, 10] 0.01", -10.0, 10.0, 0.01),
        ("conformance [-100, 100] 0.01", -100.0, 100.0, 0.01),
        ("conformance [0, 1] 2", 0.0, 1.0, 2.0),
        ("conformance [0, 10] 0.01", 0.0, 10.0, 0.01),
        ("conformance [0, 10] 0.3", 0.0, 10.0, 0.3),
        ("conformance [0, 15] 1", 0.0, 15.0, 1.0),
        ("conformance [0, 1e10] 1", 0.0, 1e10, 1.0),
        ("conformance [0, 63.3] 1", 0.0, 63.3, 1.0),
    ];
    let all = Instant::now();
    let mut failed = false;
    let mut report =
        |name: String, what: &str, count: u64, started: Instant, r: Result<(), String>| {
            let secs = started.elapsed().as_secs_f64();
            match r {
                Ok(()) => println!("ok   {name}: {what}, {count} checked in {secs:.1} s"),
                Err(e) => {
                    failed = true;
                    println!("FAIL {name}: {what}: {e}");
                }
            }
        };
    for (name, min, max, res) in quantizers {
        if !wanted(name) {
            continue;
        }
        let q = Quantize::new(min, max, res);
        let clamping = q.clamping();
        let started = Instant::now();
        let write_max = q.top().max(q.max());
        let r = every_u32(threads, |b| {
            check_value(&q, &clamping, write_max, f32::from_bits(b))
        });
        report(name.into(), "every float32 written", 1 << 32, started, r);
        let started = Instant::now();
        let last = q.max_integer_value();
        let r = every_integer(last, threads, |i| {
            let (got, want) = (q.dequantize(i), reference_dequantize(&q, i));
            if got.to_bits() == want.to_bits() {
                Ok(())
            } else {
                Err(format!("integer {i}: {got:?}, reference {want:?}"))
            }
        });
        report(
            name.into(),
            "every integer read",
            last as u64 + 1,
            started,
            r,
        );
    }
    for bits in [9, 10] {
        if !wanted(&format!("quaternion {bits} bits")) {
            continue;
        }
        let started = Instant::now();
        let r = every_u32(threads, |b| {
            let x = f32::from_bits(b);
            if x.is_nan() {
                return Ok(()); // the writer refuses NaN before dividing
            }
            let (got, want) = (
                netser_quat_component(x, bits),
                reference_quat_component(x, bits),
            );
            if got == want {
                Ok(())
            } else {
                Err(format!("{x:?}: {got}, reference {want}"))
            }
        });
        report(
            format!("quaternion {bits} bits"),
            "every float32 component",
            1 << 32,
            started,
            r,
        );
    }
    if wanted("quaternion fused division") {
        // The vector levels' division by the bound (`quat::divide_by_bound_fused`):
        // the quotient's bits, or both at most 2^-25 in magnitude (then `n + 1` is 1
        // either way, and so are the integers).
        let tiny = 2f32.powi(-25);
        let started = Instant::now();
        let r = every_u32(threads, |b| {
            let y = f32::from_bits(b);
            let (got, want) = (divide_by_bound_fused(y), y / SMALLEST_THREE_BOUND);
            let ok = if !want.is_finite() || y.is_nan() {
                true // NaN and overflow: the column sends such lanes to the scalar path
            } else {
                got.to_bits() == want.to_bits() || got.abs() <= tiny && want.abs() <= tiny
            };
            if ok {
                Ok(())
            } else {
                Err(format!("{y:?}: fused {got:?}, divided {want:?}"))
            }
        });
        report(
            "quaternion fused division".to_string(),
            "every float32 component",
            1 << 32,
            started,
            r,
        );
    }
    if wanted("quaternion 1 / sqrt(len2)") {
        let started = Instant::now();
        let r = every_integer(0x7f7f_ffff, threads, |b| {
            // Every positive finite float32 (zero is refused before normalizing).
            let len2 = f32::from_bits(b);
            if len2 == 0.0 {
                return Ok(());
            }
            let (got, want) = (netser::quat::inv_norm(len2), 1.0 / len2.sqrt());
            if got.to_bits() == want.to_bits() {
                Ok(())
            } else {
                Err(format!("len2 {len2:?}: {got:?}, reference {want:?}"))
            }
        });
        report(
            "quaternion 1 / sqrt(len2)".into(),
            "every positive float32",
            0x7f80_0000,
            started,
            r,
        );
    }
    for (name, min, max, res) in quantizers {
        let name = format!("column {name}");
        if !wanted(&name) {
            continue;
        }
        let q = Quantize::new(min, max, res);
        let started = Instant::now();
        let r = every_integer(u32::MAX / LANES as u32, threads, |b| {
            check_quantize_column(&q, b * LANES as u32)
        });
        report(name.clone(), "every float32 written", 1 << 32, started, r);
        let started = Instant::now();
        let last = q.max_integer_value();
        let r = every_integer(last / LANES as u32, threads, |b| {
            check_dequantize_column(&q, b * LANES as u32, last)
        });
        report(name, "every integer read", last as u64 + 1, started, r);
    }
    for bits in [9, 10] {
        let name = format!("column quaternion {bits} bits");
        if !wanted(&name) {
            continue;
        }
        let f = QuatFormat::new(bits);
        let space = 1u64 << f.wire_bits();
        let started = Instant::now();
        let blocks = (space / LANES as u64 - 1) as u32;
        let r = every_integer(blocks, threads, |b| {
            check_unpack_column(&f, b as u64 * LANES as u64)
        });
        report(name, "every wire form read", space, started, r);
    }
    println!("total {:.1} s", all.elapsed().as_secs_f64());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
