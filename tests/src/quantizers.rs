//! The quantizations the sampled quantization tests check (the benchmark's, then the
//! conformance vectors'), and the edge-case inputs they start from.

use netser::Quantize;

/// The benchmark's quantizations (bench/src/model.rs), then the conformance vectors',
/// as `(min, max, res)`.
pub const QUANTIZERS: [(f32, f32, f32); 12] = [
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

/// The float32 values `k` spacings either side of `v`, for `k` in `0..=radius`.
pub fn around(v: f32, radius: u32) -> impl Iterator<Item = f32> {
    let b = v.to_bits();
    (0..=radius).flat_map(move |k| [b.wrapping_add(k), b.wrapping_sub(k)].map(f32::from_bits))
}

/// The range's ends and top, zero, the subnormal and normal limits, the infinities and
/// NaN, and the middle, each with 256 neighbours either side.
pub fn edge_cases(q: &Quantize) -> Vec<f32> {
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
