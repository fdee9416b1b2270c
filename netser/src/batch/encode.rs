//! The batch encode's runtime: integer columns and the [`Sink`] that packs a block's
//! bits into words before one write.

use crate::error::Result;
use crate::int::RangedInt;
use crate::stream::{encode_element, Encoder};
use crate::NetSerialize;

use super::MAX_ELEMENT_BITS;

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

/// `u32` column to `u64`.
#[inline(always)]
pub fn widen<const N: usize>(ints: &[u32; N]) -> [u64; N] {
    core::array::from_fn(|i| ints[i] as u64)
}

/// The block's bits, packed LSB first into 64-bit words before one write.
///
/// Each [`Sink::put`] stores an element's words (composed at compile-time shifts) at the
/// sink's bit position: about five instructions per word, and a dependency chain on the
/// position only. Every bit at or past the position is zero, so the word being filled
/// takes an `|=` and every later word a plain store.
pub struct Sink<const W: usize> {
    words: [u64; W],
    /// Bits so far, from the start of `words[0]`.
    pos: usize,
    /// The words are the stream's own (begun with its pending bits): stored as they are.
    aligned: bool,
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
        const { assert!(W.is_power_of_two(), "a sink holds a power of two of words") };
        Sink {
            words: [0; W],
            pos: 0,
            aligned: false,
        }
    }

    /// Whether a block of `BLOCK` elements of at most `max_bits` each fits the sink
    /// whole, after up to 63 pending bits and with the spare word a put stores past
    /// the end: then the caller needs no [`Sink::spill`].
    #[inline(always)]
    pub const fn holds(max_bits: u64) -> bool {
        63 + super::BLOCK as u64 * max_bits + 128 <= 64 * W as u64
    }

    /// A sink that begins with `e`'s pending bits when `e` packs whole words, so that
    /// its words are the stream's and are stored without shifting
    /// ([`Encoder::put_aligned_words`]).
    #[inline(always)]
    pub fn for_encoder<E: Encoder>(e: &E) -> Self {
        let mut sink = Self::new();
        if let Some((acc, used)) = e.pending_bits() {
            sink.words[0] = acc;
            sink.pos = used as usize;
            sink.aligned = true;
        }
        sink
    }

    /// Bits in the sink (the pending bits it began with included).
    #[inline(always)]
    pub fn bit_len(&self) -> usize {
        self.pos
    }

    /// Appends the low `len` bits of the run `bits` (LSB first; every bit past `len`
    /// zero), where `len <= max <= 64 * M` and `max` is a constant: only the
    /// `ceil(max / 64)` words that may hold bits are stored, plus the word after them.
    /// Indices wrap modulo `W` (the caller sizes the sink with [`Sink::holds`] or
    /// calls [`Sink::spill`] after each element).
    #[inline(always)]
    pub fn put<const M: usize>(&mut self, bits: [u64; M], len: u32, max: u32) {
        debug_assert!(len <= max && max as usize <= 64 * M);
        debug_assert!(bits.iter().enumerate().all(|(k, &w)| {
            let below = (len as u64).saturating_sub(64 * k as u64);
            below >= 64 || w >> below == 0
        }));
        let n = (max as usize).div_ceil(64);
        let i = self.pos / 64;
        let s = (self.pos % 64) as u32;
        // One bounds check for the `n + 1` words (`n` is a constant, so every index
        // below is known in bounds).
        if let Some(dst) = self.words.get_mut(i..i + n + 1) {
            // The bits of the word being filled; bits at `s` and up are zero.
            let mut carry = dst[0];
            for (k, &word) in bits.iter().enumerate().take(n) {
                dst[k] = carry | word << s;
                // `(w >> 1) >> (63 - s)` is `w >> (64 - s)`, 0 when `s == 0`.
                carry = (word >> 1) >> (63 - s);
            }
            dst[n] = carry;
        }
        self.pos += len as usize;
    }

    /// Writes the full words to `e` when one more element of at most
    /// [`MAX_ELEMENT_BITS`] might not fit the scratch (the room for the whole block was
    /// checked), and keeps the partial word.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn spill<E: Encoder>(&mut self, e: &mut E) -> Result<()> {
        const ELEMENT_WORDS: usize = (MAX_ELEMENT_BITS / 64) as usize + 2;
        let full = self.pos / 64;
        if full + ELEMENT_WORDS > W {
            let (words, rest) = self.words.split_at_mut(full.min(W));
            let last = rest.first().copied().unwrap_or(0);
            let used = (self.pos % 64) as u32;
            if self.aligned {
                // The pending bits stay in the sink and become the stream's too.
                e.put_aligned_words(words, last, used)?;
            } else {
                e.put_words(words, 0, 0)?;
            }
            self.words[0] = last;
            self.pos %= 64;
        }
        Ok(())
    }

    /// Writes the bits to `e` (after one room check).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn write<E: Encoder>(&self, e: &mut E) -> Result<()> {
        let full = self.pos / 64;
        let words = self.words.get(..full).unwrap_or(&[]);
        let last = self.words.get(full).copied().unwrap_or(0);
        let used = (self.pos % 64) as u32;
        if self.aligned {
            e.put_aligned_words(words, last, used)
        } else {
            e.put_words(words, last, used)
        }
    }
}

/// `if on { a } else { b }`, word by word without a branch (a gate's two candidate runs).
#[inline(always)]
pub fn select<const M: usize>(on: bool, a: [u64; M], b: [u64; M]) -> [u64; M] {
    let m = 0u64.wrapping_sub(on as u64);
    core::array::from_fn(|k| b[k] ^ ((a[k] ^ b[k]) & m))
}
