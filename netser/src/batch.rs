//! Support for the derive's batch path over collections of derived structs (a bounded
//! `Vec`, a `Box<[T]>`, an array): the elements go by blocks of [`BLOCK`], each field
//! converted as a column (one quantization over the `x` of every element of the block,
//! written so the compiler vectorizes it), then every element's bits packed into 64-bit
//! words and written with one call.
//!
//! The path is all or nothing per block: when a column reports a value it does not settle
//! (an error, a clamped value, a float in the rounding step above `max`), or the room or
//! the input is short, the block goes element by element through
//! [`NetSerialize::encode`] / [`NetSerialize::decode`] ([`encode_each`], [`decode_each`]),
//! which gives exactly the bytes, values and errors (index, field, bit) of the path
//! without batches. Not a public API: its shape follows the derive.

use alloc::vec::Vec;

use crate::error::Result;
use crate::int::RangedInt;
use crate::stream::{decode_element, encode_element, Decoder, Encoder};
use crate::NetSerialize;

/// Elements per block. 16 measured best on the benchmark's snapshot (8 and 32 were tried).
pub const BLOCK: usize = 16;

/// Most bits per element a block packs in its scratch words; wider structs go element by
/// element (the scratch buffer lives on the stack).
pub const MAX_ELEMENT_BITS: u64 = 1024;

/// Words of a [`Sink`]'s scratch: a block of the benchmark's entities (38 words) fits
/// it whole; wider elements spill it to the stream ([`Sink::spill`]).
pub const SINK_WORDS: usize = 64;

/// Encodes `items` one by one, element `k` with index `base + k` on its trace path and
/// errors: what [`NetSerialize::encode_slice`] does without a batch path.
///
/// # Errors
/// The first element's error, with its index.
#[inline]
pub fn encode_each<T: NetSerialize, E: Encoder>(items: &[T], base: usize, e: &mut E) -> Result<()> {
    for (k, item) in items.iter().enumerate() {
        encode_element(e, base + k, |e| item.encode(e))?;
    }
    Ok(())
}

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

/// A column of integers in `min..=max`: `out[i]` is the offset `write_int` sends, for
/// every lane, and the result says whether every active lane is in range (and the range
/// is valid). Branch-free.
#[inline(always)]
pub fn int_column<I: RangedInt, const N: usize>(
    values: &[I; N],
    min: I,
    max: I,
    active: &[bool; N],
    out: &mut [u64; N],
) -> bool {
    let mut ok = min <= max;
    for i in 0..N {
        let v = values[i];
        out[i] = v.offset_from(min) as u64;
        ok &= ((v >= min) & (v <= max)) | !active[i];
    }
    ok
}

/// A column of unsigned integers in `bits` bits (`write_uint_bits`).
#[inline(always)]
pub fn bits_column<I: RangedInt, const N: usize>(
    values: &[I; N],
    bits: u32,
    active: &[bool; N],
    out: &mut [u64; N],
) -> bool {
    let signed = I::MIN < I::ZERO;
    let mut ok = bits <= I::WIDTH - signed as u32 && bits <= 64;
    for i in 0..N {
        let raw = values[i].offset_from(I::ZERO) as u64;
        out[i] = raw;
        let fits = (values[i] >= I::ZERO) & (raw.checked_shr(bits).unwrap_or(0) == 0);
        ok &= fits | !active[i];
    }
    ok
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

/// `u32` column to `u64`.
#[inline(always)]
pub fn widen<const N: usize>(ints: &[u32; N]) -> [u64; N] {
    core::array::from_fn(|i| ints[i] as u64)
}

/// The lanes `0..n` of a block: active for a field every element sends.
#[inline(always)]
pub fn live<const N: usize>(n: usize) -> [bool; N] {
    core::array::from_fn(|i| i < n)
}

/// How many of the first `n` lanes are set (elements sending a gated field).
#[inline(always)]
pub fn count<const N: usize>(gate: &[bool; N], n: usize) -> u64 {
    let mut c = 0u64;
    for (i, &g) in gate.iter().enumerate() {
        c += (g & (i < n)) as u64;
    }
    c
}

/// The block's bits, packed LSB first into 64-bit words before one write.
pub struct Sink<const W: usize> {
    words: [u64; W],
    /// Full words so far.
    full: usize,
    /// Bits of the partial word.
    acc: u64,
    used: u32,
}

impl<const W: usize> Default for Sink<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize> Sink<W> {
    /// An empty sink.
    #[inline(always)]
    pub fn new() -> Self {
        Sink {
            words: [0; W],
            full: 0,
            acc: 0,
            used: 0,
        }
    }

    /// Appends the low `bits` (`<= 64`) bits of `value` (`value < 2^bits`). Past `W`
    /// words the bits are dropped (the caller sizes the sink for its block).
    #[inline(always)]
    pub fn push(&mut self, value: u64, bits: u32) {
        debug_assert!(bits <= 64 && value.checked_shr(bits).unwrap_or(0) == 0);
        let used = self.used;
        let acc = self.acc | value << used;
        let total = used + bits;
        if total >= 64 {
            if let Some(w) = self.words.get_mut(self.full) {
                *w = acc;
            }
            self.full += 1;
            // The bits of `value` that did not fit; `(v >> 1) >> (63 - used)` is
            // `v >> (64 - used)` without a shift by 64 when `used == 0`.
            self.acc = (value >> 1) >> (63 - used);
            self.used = total - 64;
        } else {
            self.acc = acc;
            self.used = total;
        }
    }

    /// Appends `(value, width)` pairs (each `value < 2^width`, `width <= 64`): with the
    /// widths constant, packed into words at compile-time shifts, then pushed a word
    /// at a time.
    #[inline(always)]
    pub fn push_run<const M: usize>(&mut self, fields: [(u64, u32); M]) {
        let mut words = [0u64; M];
        let mut at = 0u32;
        for (v, w) in fields {
            let (i, s) = ((at / 64) as usize, at % 64);
            if let Some(word) = words.get_mut(i) {
                *word |= v << s;
            }
            if s + w > 64 {
                if let Some(word) = words.get_mut(i + 1) {
                    *word |= v >> (64 - s);
                }
            }
            at += w;
        }
        let (full, last_bits) = ((at / 64) as usize, at % 64);
        for (k, &word) in words.iter().enumerate() {
            if k < full {
                self.push(word, 64);
            } else if k == full && last_bits > 0 {
                self.push(word, last_bits);
            }
        }
    }

    /// Writes the full words to `e` when one more element of at most
    /// [`MAX_ELEMENT_BITS`] might not fit the scratch (the room for the whole block was
    /// checked).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn spill<E: Encoder>(&mut self, e: &mut E) -> Result<()> {
        const ELEMENT_WORDS: usize = (MAX_ELEMENT_BITS / 64) as usize + 1;
        if self.full + ELEMENT_WORDS > W {
            e.put_words(self.words.get(..self.full).unwrap_or(&[]), 0, 0)?;
            self.full = 0;
        }
        Ok(())
    }

    /// Writes the bits to `e` (after one room check).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn write<E: Encoder>(&self, e: &mut E) -> Result<()> {
        let words = self.words.get(..self.full).unwrap_or(&[]);
        e.put_words(words, self.acc, self.used)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReadStream, WriteStream};

    #[test]
    fn sink_and_peek_equal_the_streams() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for lead in 0..64u32 {
            let mut fields = Vec::new();
            for _ in 0..40 {
                x = x.rotate_left(17).wrapping_mul(0x2545_F491_4F6C_DD1D);
                let w = (x % 65) as u32;
                fields.push((x.rotate_left(9) & crate::bits::run::mask(w), w));
            }
            let mut a = [0u8; 512];
            let mut b = [0u8; 512];
            let mut wa = WriteStream::new(&mut a);
            let mut wb = WriteStream::new(&mut b);
            wa.put_bits(0, lead).unwrap();
            wb.put_bits(0, lead).unwrap();
            let mut sink = Sink::<64>::new();
            for (i, &(v, w)) in fields.iter().enumerate() {
                wa.put_bits(v, w).unwrap();
                if i % 3 == 0 {
                    sink.push_run([(v, w)]);
                } else {
                    sink.push(v, w);
                }
            }
            sink.write(&mut wb).unwrap();
            assert_eq!(wa.bit_position(), wb.bit_position());
            let n = wa.finish();
            assert_eq!(n, wb.finish());
            assert_eq!(a, b);
            let mut p = Peek::new(&a[..n], lead as u64);
            for &(v, w) in &fields {
                assert_eq!(p.take(w), v);
            }
            let mut r = ReadStream::new(&a[..n]);
            skip(&mut r, p.position()).unwrap();
            assert_eq!(r.bit_position(), p.position());
        }
    }

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
            &[0, 5, 10, 11],
            -5i16,
            5,
            &[true, true, true, false],
            &mut vals
        ));
        assert_eq!(&vals[..3], &[-5, 0, 5]);
        assert!(!int_from_column(
            &[0, 5, 10, 11],
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
