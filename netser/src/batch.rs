//! Support for the derive's batch path over collections of derived structs (a bounded
//! `Vec`, a `Box<[T]>`, an array): the elements go by blocks of
//! [`BLOCK`](crate::batch::BLOCK), each field converted as a column (one quantization
//! over the `x` of every element of the block, written so the compiler vectorizes it),
//! then every element's bits packed into 64-bit words and written with one call.
//!
//! The path is all or nothing per block: when a column reports a value it does not settle
//! (an error, a clamped value, a float in the rounding step above `max`), or the room or
//! the input is short, the block goes element by element through
//! [`NetSerialize::encode`] / [`NetSerialize::decode`]
//! ([`encode_each`](crate::batch::encode_each),
//! [`decode_each`](crate::batch::decode_each)), which gives exactly the bytes, values and
//! errors (index, field, bit) of the path without batches. On x86_64 the blocks run
//! compiled for AVX-512 or AVX2 when the CPU has them ([`simd`](crate::batch::simd)). Not a
//! public API: its shape follows the derive.

mod decode;
mod encode;
mod simd;

pub use decode::*;
pub use encode::*;
pub use simd::*;

/// Elements per block: 16, the size that runs the benchmark's snapshot in the fewest
/// instructions of those measured (BENCHMARKS.md, after the table of instructions per
/// entity).
pub const BLOCK: usize = 16;

/// Most bits per element a block packs in its scratch words; wider structs go element by
/// element (the scratch buffer lives on the stack).
pub const MAX_ELEMENT_BITS: u64 = 1024;

/// Words of a [`Sink`]'s scratch: a block of the benchmark's entities (38 words) fits
/// it whole; wider elements spill it to the stream ([`Sink::spill`]).
pub const SINK_WORDS: usize = 64;

/// The lanes `0..n` of a block: active for a field every element sends.
#[inline(always)]
pub fn live<const N: usize>(n: usize) -> [bool; N] {
    core::array::from_fn(|i| i < n)
}

/// How many of the first `n` lanes are set (elements sending a gated field).
#[inline(always)]
pub fn count<const N: usize>(gate: &[bool; N], n: usize) -> u64 {
    // Eight lanes a word (a bool is byte 0 or 1): one population count per word instead
    // of an extract and an add per lane.
    let mut c = 0u64;
    for (k, lanes) in gate.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        for (b, &g) in bytes.iter_mut().zip(lanes) {
            *b = g as u8;
        }
        let live = n.saturating_sub(8 * k).min(8) as u32;
        let mask = u64::MAX.checked_shr(64 - 8 * live).unwrap_or(0);
        c += (u64::from_le_bytes(bytes) & mask).count_ones() as u64;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn int_columns_check_like_the_primitives() {
        let mut out = [0u64; 4];
        assert!(int_column(
            &[-5i16, 0, 5, 9],
            -5,
            5,
            &[true, true, true, false],
            &mut out
        ));
        assert_eq!(&out[..3], &[0, 5, 10]);
        assert!(!int_column(&[-5i16, 0, 5, 9], -5, 5, &[true; 4], &mut out));
        assert!(!int_column(&[0u8; 4], 5, 1, &[false; 4], &mut out));
        let mut vals = [0i16; 4];
        assert!(int_from_column(
            &[0u64, 5, 10, 11],
            -5i16,
            5,
            &[true, true, true, false],
            &mut vals
        ));
        assert_eq!(&vals[..3], &[-5, 0, 5]);
        assert!(!int_from_column(
            &[0u64, 5, 10, 11],
            -5i16,
            5,
            &[true; 4],
            &mut vals
        ));
        assert!(bits_column(
            &[7u8, 3, 0, 200],
            3,
            &[true, true, true, false],
            &mut out
        ));
        assert!(!bits_column(&[7u8, 8, 0, 0], 3, &[true; 4], &mut out));
        assert!(bits_column(&[u64::MAX; 4], 64, &[true; 4], &mut out));
        assert_eq!(out, [u64::MAX; 4]);
    }
}
