//! Runtime dispatch of the batch path to the vector instructions of the CPU it runs on.
//!
//! The column kernels and the packing loops are written so that LLVM vectorizes them.
//! Compiled for the x86_64 baseline they get SSE2 (four `f32` or two `u64` lanes, no
//! blend, no variable shift without `cl`); compiled for AVX2, BMI2 and FMA (every x86_64
//! CPU since 2013 to 2015) the same source gets eight and four lanes, blends, `shlx` and
//! fused multiply-adds (which the dequantizing kernel uses at these levels only); with
//! AVX-512 (F, BW, DQ, VL: Intel servers since 2017 and cores since 2019, AMD since Zen 4)
//! it also gets mask registers, 64-bit integer conversions and two-source permutes. Each
//! level runs the benchmark's snapshot in fewer instructions, or less time, than the one
//! below it (the figures are in BENCHMARKS.md). [`simd`] runs a closure compiled for the
//! best of these the CPU has; the bytes and values are the same either way (the same
//! IEEE operations: Rust never fuses a multiply and an add unless told to, and every
//! operation the kernels use is correctly rounded in every instruction set; where a
//! kernel replaces a division by fused multiply-adds, a proof beside it shows the
//! quotient is the same).

/// The code generation [`simd`] runs its closures with.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum SimdLevel {
    /// As the crate is compiled (SSE2 on x86_64 by default).
    Baseline = 0,
    /// AVX2, BMI1, BMI2, LZCNT, POPCNT and FMA.
    Avx2 = 1,
    /// The AVX2 level plus AVX-512 F, BW, DQ and VL.
    Avx512 = 2,
}

impl SimdLevel {
    /// Whether code compiled at this level has fused multiply-adds the kernels use in
    /// place of some divisions (the AVX2 and AVX-512 levels, in a build with `std`,
    /// whose `mul_add` they call).
    pub(crate) const fn fuses(self) -> bool {
        cfg!(feature = "std") && matches!(self, SimdLevel::Avx2 | SimdLevel::Avx512)
    }
}

/// Runs `f` compiled for the widest vector instructions this CPU has of those the batch
/// path knows (x86_64 with the `std` feature, detected once: AVX-512 F, BW, DQ and VL
/// with AVX2; or AVX2, BMI1, BMI2, LZCNT, POPCNT and FMA), else as the crate is compiled. The
/// environment variable `NETSER_SIMD=0` turns the dispatch off for the process, and
/// `NETSER_SIMD=avx2` stops it at AVX2 (to measure or test that build on a CPU with
/// AVX-512).
///
/// The derive's batch path (`Vec`s, boxed slices and arrays of derived structs) goes
/// through it; so does a hand-written batch loop that wants the same code generation.
/// Everything `f` calls that is inlined into it is compiled for the wider instructions
/// too, so the batch hooks and the column kernels are `#[inline(always)]`.
///
/// ```
/// use netser::batch::simd;
/// const Q: netser::Quantize = netser::Quantize::new(-10.0, 10.0, 0.01);
/// let values = [1.5f32; 16];
/// let mut out = [0u32; 16];
/// assert!(simd(|| Q.quantize_column(&values, &[true; 16], &mut out)));
/// assert_eq!(out[0], Q.quantize(1.5, 0)?);
/// # Ok::<(), netser::Error>(())
/// ```
#[inline(always)]
pub fn simd<R>(f: impl FnOnce() -> R) -> R {
    simd_with(
        #[inline(always)]
        |_| f(),
    )
}

/// [`simd`], with the level the closure is compiled for as its argument: a constant
/// once the closure is inlined, so code that is faster one way in one build and the
/// other way in another (the derive's encode gathers its bools by a loop of their own
/// in the AVX-512 build only) costs no branch.
///
/// ```
/// use netser::batch::{simd_with, SimdLevel};
/// let level = simd_with(|level| level);
/// assert!(level <= SimdLevel::Avx512);
/// ```
#[doc(hidden)]
#[inline(always)]
pub fn simd_with<R>(f: impl FnOnce(SimdLevel) -> R) -> R {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    let r = x86_64::run(f);
    #[cfg(not(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2"))))]
    let r = f(compiled());
    r
}

/// The code generation [`simd`] runs its closures with now: what the CPU has (or the
/// crate is compiled for), capped by `NETSER_SIMD` and [`set_simd`].
#[doc(hidden)]
pub fn simd_level() -> SimdLevel {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    let level = x86_64::level();
    #[cfg(not(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2"))))]
    let level = compiled();
    level
}

/// The level the crate is compiled for.
#[cfg_attr(
    all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")),
    allow(dead_code)
)]
const fn compiled() -> SimdLevel {
    if cfg!(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma",
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512dq",
        target_feature = "avx512vl"
    )) {
        SimdLevel::Avx512
    } else if cfg!(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    )) {
        SimdLevel::Avx2
    } else {
        SimdLevel::Baseline
    }
}

/// Whether [`simd`] runs its closure compiled for wider instructions than the crate's
/// ([`simd_level`] above the baseline).
#[doc(hidden)]
pub fn simd_enabled() -> bool {
    simd_level() > SimdLevel::Baseline
}

/// Turns the dispatch of [`simd`] off (`false`: closures run as the crate is compiled) or
/// back on (`true`: at the level detected, within `NETSER_SIMD`). For benchmarks and tests
/// that compare the code generations; the results are the same. Detection runs once per
/// process, so switching costs two atomic stores at most.
#[doc(hidden)]
pub fn set_simd(on: bool) {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    x86_64::set(on);
    let _ = on;
}

#[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
mod x86_64 {
    use super::SimdLevel;
    use core::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

    /// `DETECTED` before detection.
    const UNKNOWN: u8 = u8::MAX;

    /// What detection found, within `NETSER_SIMD` (a [`SimdLevel`] as `u8`), or
    /// `UNKNOWN`. Written by [`detect`] only, with a level whose every feature
    /// `is_x86_feature_detected!` found.
    static DETECTED: AtomicU8 = AtomicU8::new(UNKNOWN);

    /// Cleared while [`super::set_simd`] has the dispatch off.
    static ON: AtomicBool = AtomicBool::new(true);

    #[inline(always)]
    pub(super) fn level() -> SimdLevel {
        if !ON.load(Relaxed) {
            return SimdLevel::Baseline;
        }
        match DETECTED.load(Relaxed) {
            2 => SimdLevel::Avx512,
            1 => SimdLevel::Avx2,
            UNKNOWN => detect(),
            _ => SimdLevel::Baseline,
        }
    }

    #[cold]
    fn detect() -> SimdLevel {
        // `NETSER_SIMD=0` turns the dispatch off for the whole process (tests run the
        // baseline build that way; a CPU that misreports its features can too), and
        // `NETSER_SIMD=avx2` keeps it at AVX2.
        let env = std::env::var_os("NETSER_SIMD");
        let off = env.as_ref().is_some_and(|v| v == "0");
        let cap_avx2 = env.as_ref().is_some_and(|v| v == "avx2");
        let avx2 = !off
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt")
            && std::is_x86_feature_detected!("fma");
        let avx512 = avx2
            && !cap_avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl");
        let level = if avx512 {
            SimdLevel::Avx512
        } else if avx2 {
            SimdLevel::Avx2
        } else {
            SimdLevel::Baseline
        };
        // Threads that race here find the same features and store the same level.
        DETECTED.store(level as u8, Relaxed);
        level
    }

    pub(super) fn set(on: bool) {
        ON.store(on, Relaxed);
    }

    /// Runs `f` compiled for the level detected (`level()`): LLVM inlines the closure
    /// (and what it inlines) into `avx2` or `avx512` and compiles it for their features.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn run<R>(f: impl FnOnce(SimdLevel) -> R) -> R {
        let level = level();
        if level == SimdLevel::Baseline {
            return f(SimdLevel::Baseline);
        }
        // SAFETY: `avx2` and `avx512` may only run on a CPU that has every feature they
        // enable. `level()` returns `Avx2` or `Avx512` only after `detect` stored that
        // level, having found each of its features with `is_x86_feature_detected!` on
        // this CPU (`Avx512`'s features include `Avx2`'s); nothing else stores a level.
        unsafe {
            if level == SimdLevel::Avx512 {
                avx512(
                    #[inline(always)]
                    move || f(SimdLevel::Avx512),
                )
            } else {
                avx2(
                    #[inline(always)]
                    move || f(SimdLevel::Avx2),
                )
            }
        }
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma")]
    fn avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    fn avx512<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level the CPU and `NETSER_SIMD` allow, found independently of the module.
    fn expected() -> SimdLevel {
        #[cfg(all(target_arch = "x86_64", feature = "std"))]
        {
            let env = std::env::var_os("NETSER_SIMD");
            let avx2 = env.as_ref().is_none_or(|v| v != "0")
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("bmi2")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("lzcnt")
                && std::is_x86_feature_detected!("popcnt")
                && std::is_x86_feature_detected!("fma");
            let avx512 = avx2
                && env.as_ref().is_none_or(|v| v != "avx2")
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512dq")
                && std::is_x86_feature_detected!("avx512vl");
            if cfg!(target_feature = "avx2") {
                // Compiled for AVX2 already: no dispatch at all.
                return compiled();
            }
            match (avx2, avx512) {
                (_, true) => SimdLevel::Avx512,
                (true, false) => SimdLevel::Avx2,
                _ => SimdLevel::Baseline,
            }
        }
        #[cfg(not(all(target_arch = "x86_64", feature = "std")))]
        SimdLevel::Baseline
    }

    #[test]
    fn dispatch_only_where_detected_and_switchable() {
        let compiled = cfg!(all(target_arch = "x86_64", target_feature = "avx2"));
        let level = expected();
        assert_eq!(simd_level(), level);
        assert_eq!(simd_enabled(), level > SimdLevel::Baseline);
        set_simd(false);
        assert_eq!(simd_enabled(), compiled);
        assert_eq!(simd(|| 7), 7);
        set_simd(true);
        assert_eq!(simd_level(), level);
        let mut n = 0;
        assert_eq!(
            simd(|| {
                n += 1;
                n
            }),
            1
        );
    }
}
