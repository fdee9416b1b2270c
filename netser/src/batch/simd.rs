//! Runtime dispatch of the batch path to the vector instructions of the CPU it runs on.
//!
//! The column kernels and the packing loops are written so that LLVM vectorizes them.
//! Compiled for the x86_64 baseline they get SSE2 (four `f32` or two `u64` lanes, no
//! blend, no variable shift without `cl`); compiled for AVX2 and BMI2 (every x86_64 CPU
//! since 2013 to 2015) the same source gets eight and four lanes, blends and `shlx`. On the
//! benchmark's snapshot that is 216 -> 125 instructions per moving entity to encode and
//! 175 -> 138 to decode. [`simd`] runs a closure compiled for AVX2 and BMI2 when the CPU
//! has them, and as compiled otherwise; the bytes and values are the same either way (the
//! same IEEE operations: Rust never fuses a multiply and an add, and every operation the
//! kernels use is correctly rounded in both instruction sets).

/// Runs `f`, compiled for AVX2, BMI1, BMI2, LZCNT and POPCNT when this CPU has them (x86_64
/// with the `std` feature, detected once), else as the crate is compiled. The
/// environment variable `NETSER_SIMD=0` turns the dispatch off for the process.
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
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    if x86_64::available() {
        return x86_64::run(f);
    }
    f()
}

/// Whether [`simd`] runs its closure compiled for AVX2 and BMI2: the CPU has them (or the
/// crate is compiled for them) and [`set_simd`] has not turned the dispatch off.
#[doc(hidden)]
pub fn simd_enabled() -> bool {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    let on = x86_64::available();
    #[cfg(not(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2"))))]
    let on = cfg!(all(target_arch = "x86_64", target_feature = "avx2"));
    on
}

/// Turns the dispatch of [`simd`] off (`false`: closures run as the crate is compiled) or
/// back on (`true`: detected again). For benchmarks and tests that compare the two code
/// generations; the results are the same.
#[doc(hidden)]
pub fn set_simd(on: bool) {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    x86_64::set(on);
    let _ = on;
}

#[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
mod x86_64 {
    use core::sync::atomic::{AtomicU8, Ordering::Relaxed};

    const UNKNOWN: u8 = 0;
    const YES: u8 = 1;
    const NO: u8 = 2;

    /// What detection found (`YES` only after every feature `run` enables was detected),
    /// or `NO` while [`super::set_simd`] has the dispatch off.
    static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

    #[inline(always)]
    pub(super) fn available() -> bool {
        match STATE.load(Relaxed) {
            YES => true,
            UNKNOWN => detect(),
            _ => false,
        }
    }

    #[cold]
    fn detect() -> bool {
        // `NETSER_SIMD=0` turns the dispatch off for the whole process (tests run the
        // baseline build that way; a CPU that misreports its features can too).
        let off = std::env::var_os("NETSER_SIMD").is_some_and(|v| v == "0");
        let yes = !off
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt");
        // A concurrent `set(false)` wins: only `UNKNOWN` becomes the detected state.
        let _ = STATE.compare_exchange(UNKNOWN, if yes { YES } else { NO }, Relaxed, Relaxed);
        STATE.load(Relaxed) == YES
    }

    pub(super) fn set(on: bool) {
        // Back on means detected again: nothing but `detect` ever stores `YES`.
        STATE.store(if on { UNKNOWN } else { NO }, Relaxed);
    }

    /// Runs `f` with the features enabled: LLVM inlines the closure (and what it inlines)
    /// into this function and compiles it for them.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn run<R>(f: impl FnOnce() -> R) -> R {
        debug_assert_eq!(STATE.load(Relaxed), YES);
        // SAFETY: `with_features` may only run on a CPU that has every feature it enables.
        // `run` is only called after `available()` returned true, which it does only once
        // `detect` stored `YES`, after `is_x86_feature_detected!` found each of them on
        // this CPU (`set(true)` stores `UNKNOWN`, never `YES`).
        unsafe { with_features(f) }
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn with_features<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_only_where_detected_and_switchable() {
        let detected = cfg!(all(target_arch = "x86_64", feature = "std")) && {
            #[cfg(all(target_arch = "x86_64", feature = "std"))]
            let d = std::env::var_os("NETSER_SIMD").is_none_or(|v| v != "0")
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("bmi2")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("lzcnt")
                && std::is_x86_feature_detected!("popcnt");
            #[cfg(not(all(target_arch = "x86_64", feature = "std")))]
            let d = false;
            d
        };
        let compiled = cfg!(all(target_arch = "x86_64", target_feature = "avx2"));
        assert_eq!(simd_enabled(), detected || compiled);
        set_simd(false);
        assert_eq!(simd_enabled(), compiled);
        assert_eq!(simd(|| 7), 7);
        set_simd(true);
        assert_eq!(simd_enabled(), detected || compiled);
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
