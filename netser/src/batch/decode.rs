//! The batch decode's runtime: integer columns, and the [`Peek`] that reads a block's
//! bits from the input before the block is consumed.

use alloc::vec::Vec;

use crate::error::Result;
use crate::int::RangedInt;
use crate::stream::{decode_element, Decoder};
use crate::NetSerialize;

/// Decodes `count` elements one by one into `out`, element `k` with index `base + k`.
///
/// # Errors
/// The first element's error, with its index.
#[inline]
pub fn decode_each<T: NetSerialize, D: Decoder>(
    d: &mut D,
    base: usize,
    count: usize,
    out: &mut Vec<T>,
) -> Result<()> {
    for k in 0..count {
        out.push(decode_element(d, base + k, T::decode)?);
    }
    Ok(())
}

/// A column of offsets read for `min..=max` (`read_int`): the values, and whether every
/// active lane is within the range (and the range is valid).
#[inline(always)]
pub fn int_from_column<I: RangedInt, const N: usize>(
    raw: &[u64; N],
    min: I,
    max: I,
    active: &[bool; N],
    out: &mut [I; N],
) -> bool {
    let top = max.offset_from(min) as u64;
    let mut ok = min <= max;
    for i in 0..N {
        out[i] = I::from_offset(min, raw[i] as u128);
        ok &= (raw[i] <= top) | !active[i];
    }
    ok
}

/// The values of a column of `bits`-bit unsigned integers (`read_uint_bits`), and
/// whether the bit count is valid for the type.
#[inline(always)]
pub fn bits_from_column<I: RangedInt, const N: usize>(
    raw: &[u64; N],
    bits: u32,
    out: &mut [I; N],
) -> bool {
    let signed = I::MIN < I::ZERO;
    for i in 0..N {
        out[i] = I::from_offset(I::ZERO, raw[i] as u128);
    }
    bits <= I::WIDTH - signed as u32
}

/// `u64` column to `u32` (quantized integers, below `2^32` by their width).
#[inline(always)]
pub fn narrow<const N: usize>(raw: &[u64; N]) -> [u32; N] {
    core::array::from_fn(|i| raw[i] as u32)
}

/// Reads a block's bits straight from the input, without consuming them from the
/// stream: the block is then checked as a whole, and consumed (with [`skip`]) only when
/// every element is good.
pub struct Peek<'a> {
    buf: &'a [u8],
    pos: u64,
}

impl<'a> Peek<'a> {
    /// A peek over `buf` from bit `pos`.
    #[inline(always)]
    pub fn new(buf: &'a [u8], pos: u64) -> Self {
        Peek { buf, pos }
    }

    /// The bit position reached.
    #[inline(always)]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next `bits` (`<= 64`) bits; zeros past the end of the input (the caller
    /// compares the position with the input's length afterwards).
    #[inline(always)]
    pub fn take(&mut self, bits: u32) -> u64 {
        let byte = (self.pos >> 3) as usize;
        let shift = (self.pos & 7) as u32;
        let low = match self.buf.get(byte..byte + 8) {
            Some(w) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(w);
                u64::from_le_bytes(word) >> shift
            }
            None => tail_window(self.buf, byte) >> shift,
        };
        let value = if bits + shift > 64 {
            low | (self.buf.get(byte + 8).copied().unwrap_or(0) as u64) << (64 - shift)
        } else {
            low
        };
        self.pos += bits as u64;
        value & crate::bits::run::mask(bits)
    }
}

impl Peek<'_> {
    /// Fields of the given widths (each `<= 64`), read as whole 64-bit words and split
    /// at compile-time shifts when the widths are constant (the inverse of
    /// [`Sink::push_run`]).
    #[inline(always)]
    pub fn take_run<const M: usize>(&mut self, widths: [u32; M]) -> [u64; M] {
        let mut total = 0u32;
        for w in widths {
            total += w;
        }
        let (full, last_bits) = ((total / 64) as usize, total % 64);
        let mut words = [0u64; M];
        for (k, word) in words.iter_mut().enumerate() {
            if k < full {
                *word = self.take(64);
            } else if k == full && last_bits > 0 {
                *word = self.take(last_bits);
            }
        }
        let mut out = [0u64; M];
        let mut at = 0u32;
        for (slot, w) in out.iter_mut().zip(widths) {
            let (i, s) = ((at / 64) as usize, at % 64);
            let mut v = words.get(i).copied().unwrap_or(0) >> s;
            if s + w > 64 {
                v |= words.get(i + 1).copied().unwrap_or(0) << (64 - s);
            }
            *slot = v & crate::bits::run::mask(w);
            at += w;
        }
        out
    }
}

/// The up to 8 bytes from `byte` on, zero-padded.
#[cold]
fn tail_window(buf: &[u8], byte: usize) -> u64 {
    let mut word = [0u8; 8];
    if let Some(rest) = buf.get(byte..) {
        for (d, s) in word.iter_mut().zip(rest) {
            *d = *s;
        }
    }
    u64::from_le_bytes(word)
}

/// Consumes `bits` bits of `d` (a block peeked and accepted).
///
/// # Errors
/// [`crate::ErrorKind::EndOfBuffer`] when the input is shorter (the caller checked it).
#[inline(always)]
pub fn skip<D: Decoder>(d: &mut D, bits: u64) -> Result<()> {
    let mut scratch = [0u64; 16];
    let mut left = bits;
    while left >= 64 * 16 {
        d.get_words(&mut scratch, 0)?;
        left -= 64 * 16;
    }
    let full = (left / 64) as usize;
    d.get_words(
        scratch.get_mut(..full).unwrap_or(&mut []),
        (left % 64) as u32,
    )?;
    Ok(())
}
