//! Integration tests for netser live in `tests/tests/`. This library holds what they
//! share with the fuzz targets in `fuzz/` ([`adversarial`]), the quantizations the
//! sampled quantization tests check ([`quantizers`]), and a reproducible stream of
//! test words ([`xorshift`]).

pub mod adversarial;
pub mod quantizers;

/// A fixed pseudo-random stream of words from `seed` (xorshift64; `seed` not zero), so
/// sampled tests draw the same values on every run.
///
/// ```
/// let mut next = netser_tests::xorshift(7);
/// let (a, b) = (next(), next());
/// assert_ne!(a, b);
/// assert_eq!(netser_tests::xorshift(7)(), a);
/// ```
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
