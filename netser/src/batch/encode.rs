//! The batch encode's runtime: integer columns and the [`Sink`] that packs a block's
//! bits into words before one write.

use crate::bits::BitWriter;
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
/// is valid). The tests' oracle for [`int_lane`], which the derive uses.
#[cfg(test)]
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

/// An integer field's offset for `write_int` (`v - min`, wrapping outside `min..=max`),
/// read where the derived `encode_slice` packs it, and its verdict: `ok` is cleared
/// when the lane is active and `v` outside `min..=max` (the range's validity is the
/// caller's `min <= max`). The
/// element is read in place: a column written by scalar stores and read back at once
/// by vector loads makes the loads wait for the stores to complete.
#[inline(always)]
pub fn int_lane<I: RangedInt>(v: I, min: I, max: I, active: bool, ok: &mut bool) -> u64 {
    *ok &= ((v >= min) & (v <= max)) | !active;
    v.offset_from(min) as u64
}

/// An unsigned field of `bits` bits (`write_uint_bits`), read in place like
/// [`int_lane`]: its value, and its verdict (the width's validity is [`bits_valid`]).
#[inline(always)]
pub fn bits_lane<I: RangedInt>(v: I, bits: u32, active: bool, ok: &mut bool) -> u64 {
    let raw = v.offset_from(I::ZERO) as u64;
    *ok &= ((v >= I::ZERO) & (raw.checked_shr(bits).unwrap_or(0) == 0)) | !active;
    raw
}

/// Whether `bits` is a valid width for `I` in `write_uint_bits`.
#[inline(always)]
pub fn bits_valid<I: RangedInt>(bits: u32) -> bool {
    let signed = I::MIN < I::ZERO;
    bits <= I::WIDTH - signed as u32 && bits <= 64
}

/// A column of unsigned integers in `bits` bits (`write_uint_bits`): the tests' oracle
/// for [`bits_lane`].
#[cfg(test)]
pub fn bits_column<I: RangedInt, const N: usize>(
    values: &[I; N],
    bits: u32,
    active: &[bool; N],
    out: &mut [u64; N],
) -> bool {
    let mut ok = bits_valid::<I>(bits);
    for i in 0..N {
        let raw = values[i].offset_from(I::ZERO) as u64;
        out[i] = raw;
        let fits = (values[i] >= I::ZERO) & (raw.checked_shr(bits).unwrap_or(0) == 0);
        ok &= fits | !active[i];
    }
    ok
}

/// The bits of `word` that a put at bit `s` of a word carries into the next one:
/// `word >> (64 - s)`, 0 when `s == 0`. A shift by `64 - s` masked to 6 bits (what the
/// instruction does), then cleared; not a double-width shift (`shld`, several
/// micro-ops on AMD cores).
#[inline(always)]
fn spilled(word: u64, s: u32) -> u64 {
    (word >> (64u32.wrapping_sub(s) & 63)) & 0u64.wrapping_sub((s != 0) as u64)
}

/// The block's bits, packed LSB first into 64-bit words before one write.
///
/// Each [`Sink::put`] stores an element's words (composed at compile-time shifts) at a
/// bit position: about four instructions per word, and a dependency chain on the
/// position only. Every bit at or past the position is zero, so the word being filled
/// takes an `|=` and every later word a plain store. The position is the caller's (a
/// local the compiler keeps in a register), passed in and returned by each call.
pub struct Sink<const W: usize> {
    words: [u64; W],
    /// The words are the stream's own (begun with its pending bits): stored as they are.
    aligned: bool,
}

impl<const W: usize> Default for Sink<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize> Sink<W> {
    /// An empty sink (its position starts at 0).
    #[inline(always)]
    pub fn new() -> Self {
        Sink {
            words: [0; W],
            aligned: false,
        }
    }

    /// Whether a block of `BLOCK` elements of at most `max_bits` each, put in pieces
    /// of at most `max_bits` together, fits the sink whole after up to 63 pending
    /// bits: then the caller needs no [`Sink::spill`].
    #[inline(always)]
    pub const fn holds(max_bits: u64) -> bool {
        // The last put begins by bit `63 + (BLOCK - 1) * max_bits` and stores the words
        // up to its end plus one.
        63 + super::BLOCK as u64 * max_bits + 128 <= 64 * W as u64
    }

    /// Begins a block at `e`'s position, and returns the sink's starting position:
    /// when `e` packs whole words, the sink begins with `e`'s pending bits, so that its
    /// words are the stream's and are stored without shifting
    /// ([`Encoder::put_aligned_words`]). What an earlier block left in the sink past
    /// the start is never read: each put stores every word after the one it begins in.
    #[inline(always)]
    pub fn begin<E: Encoder>(&mut self, e: &E) -> usize {
        let (acc, used, aligned) = match e.pending_bits() {
            Some((acc, used)) => (acc, used as usize, true),
            None => (0, 0, false),
        };
        self.words[0] = acc;
        self.aligned = aligned;
        used
    }

    /// [`Sink::begin`] on a bare [`BitWriter`] (for hand-written codecs): the sink
    /// begins with its pending bits.
    #[inline(always)]
    pub fn begin_bits(&mut self, w: &BitWriter<'_>) -> usize {
        let (acc, used) = w.pending();
        self.words[0] = acc;
        self.aligned = true;
        used as usize
    }

    /// [`Sink::write`] to a bare [`BitWriter`], after [`Sink::begin_bits`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short; nothing is written.
    #[inline(always)]
    pub fn write_bits(&self, pos: usize, w: &mut BitWriter<'_>) -> Result<()> {
        debug_assert!(self.aligned);
        let full = pos / 64;
        let words = self.words.get(..full).unwrap_or(&[]);
        let last = self.words.get(full).copied().unwrap_or(0);
        w.write_aligned_words(words, last, (pos % 64) as u32)
    }

    /// Appends the low `len` bits of the run `bits` (LSB first; every bit past `len`
    /// zero) at bit `pos` (every bit of the sink at or past `pos` zero), and returns
    /// the position after them. `len <= max <= 64 * M`, and `max` is a constant: only
    /// the `ceil(max / 64)` words that may hold bits are stored, plus the word after
    /// them. Those words must lie inside the sink (the caller sizes it with
    /// [`Sink::holds`] or calls [`Sink::spill`] after each element); past its end the
    /// bits are dropped.
    #[inline(always)]
    #[must_use]
    pub fn put<const M: usize>(&mut self, pos: usize, bits: [u64; M], len: u32, max: u32) -> usize {
        debug_assert!(len <= max && max as usize <= 64 * M);
        debug_assert!(bits.iter().enumerate().all(|(k, &w)| {
            let below = (len as u64).saturating_sub(64 * k as u64);
            below >= 64 || w >> below == 0
        }));
        let n = (max as usize).div_ceil(64);
        let (i, s) = (pos / 64, (pos % 64) as u32);
        debug_assert!(i + n < W, "the caller sizes the sink");
        // One bounds check for the `n + 1` words (`n` is a constant, so every index
        // below is known in bounds).
        if let Some(dst) = self.words.get_mut(i..i + n + 1) {
            // The bits of the word being filled; bits at `s` and up are zero.
            let mut carry = dst[0];
            for (k, &word) in bits.iter().enumerate().take(n) {
                dst[k] = carry | word << s;
                carry = spilled(word, s);
            }
            // The word after them: the carry alone (the words of `bits` past the `n`
            // are zero, past `len`).
            dst[n] = carry;
        }
        pos + len as usize
    }

    /// Writes the full words before `pos` to `e` when one more element of at most
    /// [`MAX_ELEMENT_BITS`] might not fit the sink (the room for the whole block was
    /// checked), keeps the partial word, and returns the new position.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn spill<E: Encoder>(&mut self, pos: usize, e: &mut E) -> Result<usize> {
        // A put stores at most `MAX_ELEMENT_BITS / 64 + 1` words and the one after.
        const ELEMENT_WORDS: usize = (MAX_ELEMENT_BITS / 64) as usize + 2;
        let full = pos / 64;
        if full + ELEMENT_WORDS <= W {
            return Ok(pos);
        }
        let (words, rest) = self.words.split_at(full.min(W));
        let last = rest.first().copied().unwrap_or(0);
        if self.aligned {
            // The partial word stays in the sink and becomes the stream's pending bits.
            e.put_aligned_words(words, last, (pos % 64) as u32)?;
        } else {
            e.put_words(words, 0, 0)?;
        }
        self.words[0] = last;
        Ok(pos % 64)
    }

    /// Writes the bits before `pos` to `e` (after one room check).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BufferFull`] when the room is short (the caller checked it).
    #[inline(always)]
    pub fn write<E: Encoder>(&self, pos: usize, e: &mut E) -> Result<()> {
        let full = pos / 64;
        let words = self.words.get(..full).unwrap_or(&[]);
        let last = self.words.get(full).copied().unwrap_or(0);
        let used = (pos % 64) as u32;
        if self.aligned {
            e.put_aligned_words(words, last, used)
        } else {
            e.put_words(words, last, used)
        }
    }
}

/// Words a [`Direct`] sink may save past a block's end: a put stores its words from
/// the one its element begins in (at most the block's last) through at most
/// `MAX_ELEMENT_BITS / 64 + 1` more.
const SAVED: usize = (MAX_ELEMENT_BITS / 64) as usize + 2;

/// The word `k` of `words` (little-endian), 0 past the end.
#[inline(always)]
fn load(words: &[[u8; 8]], k: usize) -> u64 {
    words.get(k).map_or(0, |&b| u64::from_le_bytes(b))
}

/// Stores the word `k` of `words` (little-endian), if inside them.
#[inline(always)]
fn store(words: &mut [[u8; 8]], k: usize, word: u64) {
    if let Some(b) = words.get_mut(k) {
        *b = word.to_le_bytes();
    }
}

/// A block's bits stored in place, in the stream buffer lent by
/// [`Encoder::lend_words`], with the puts of [`Sink::put`] (no scratch words and no
/// copy). The words a put may store past the block's end are saved first and put back
/// by [`Direct::finish`]: every byte past the stream's last bit stays as it was, and
/// nothing is stored past the buffer (a block without that room takes a [`Sink`]).
pub struct Direct<'a> {
    /// The lent buffer's whole words.
    buf: &'a mut [[u8; 8]],
    /// The word holding the block's last bit (or the position after it).
    end_word: usize,
    saved: [u64; SAVED],
    count: usize,
}

impl<'a> Direct<'a> {
    /// Begins a block of exactly `bits` bits whose elements have at most `max_bits`
    /// each, in the buffer `lent` by [`Encoder::lend_words`] (its bytes from the word
    /// holding the pending bits, those bits and their count); returns the sink and
    /// its starting position. `None` when the buffer lacks room for every word a put
    /// may store, or `max_bits` is above [`MAX_ELEMENT_BITS`].
    #[inline(always)]
    pub fn begin(
        lent: (&'a mut [u8], u64, u32),
        bits: u64,
        max_bits: u64,
    ) -> Option<(Self, usize)> {
        let (buf, acc, used) = lent;
        let buf = buf.as_chunks_mut::<8>().0;
        let end_word = usize::try_from((used as u64 + bits) / 64).ok()?;
        let count = max_bits.div_ceil(64) as usize + 1;
        if count > SAVED || end_word.checked_add(count)? > buf.len() {
            return None;
        }
        let mut saved = [0u64; SAVED];
        for (k, word) in saved.iter_mut().enumerate().take(count) {
            *word = load(buf, end_word + k);
        }
        // The first word begins with the stream's pending bits (zero above them).
        store(buf, 0, acc);
        let sink = Direct {
            buf,
            end_word,
            saved,
            count,
        };
        Some((sink, used as usize))
    }

    /// [`Sink::put`] into the lent buffer (the same contract: `len <= max <= 64 * M`,
    /// `max` a constant, bits past `len` zero; the words of `bits` past the `ceil(max /
    /// 64)` that may hold bits are not read).
    #[inline(always)]
    #[must_use]
    pub fn put<const M: usize>(&mut self, pos: usize, bits: [u64; M], len: u32, max: u32) -> usize {
        debug_assert!(len <= max && max as usize <= 64 * M);
        let n = (max as usize).div_ceil(64);
        let (i, s) = (pos / 64, (pos % 64) as u32);
        debug_assert!(i + n < self.end_word + self.count, "begin checked the room");
        // One bounds check for the `n + 1` words.
        if let Some(dst) = self.buf.get_mut(i..i + n + 1) {
            // The bits of the word being filled; bits at `s` and up are zero.
            let mut carry = load(dst, 0);
            for (k, d) in dst.iter_mut().enumerate() {
                // Past the `n` words that may hold bits: zero, not read.
                let word = if k < n {
                    bits.get(k).copied().unwrap_or(0)
                } else {
                    0
                };
                *d = (carry | word << s).to_le_bytes();
                carry = spilled(word, s);
            }
        }
        pos + len as usize
    }

    /// Ends the block at `pos` (the `bits` given to [`Direct::begin`] after the
    /// starting position): puts back the saved words, and returns the stream's length
    /// from the lent word and its pending bits, for [`Encoder::take_lent_words`].
    #[inline(always)]
    pub fn finish(self, pos: usize) -> (u64, u64) {
        debug_assert_eq!(pos / 64, self.end_word);
        let last = load(self.buf, pos / 64);
        for (k, &word) in self.saved.iter().enumerate().take(self.count) {
            store(self.buf, self.end_word + k, word);
        }
        (pos as u64, last)
    }
}

/// `lb` or `la` as `on`, without a branch (the compiler otherwise splits the element
/// loop on the gate: mispredicted on mixed blocks).
#[inline(always)]
pub fn select_len(on: bool, la: u32, lb: u32) -> u32 {
    lb.wrapping_add((on as u32).wrapping_mul(la.wrapping_sub(lb)))
}

/// `if on { a } else { b }`, word by word without a branch (a gate's two candidate runs).
#[inline(always)]
pub fn select<const M: usize>(on: bool, a: [u64; M], b: [u64; M]) -> [u64; M] {
    let m = 0u64.wrapping_sub(on as u64);
    core::array::from_fn(|k| b[k] ^ ((a[k] ^ b[k]) & m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::run::mask;
    use crate::{Encoder, WriteStream};

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.rotate_left(17).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x9E37;
            self.0
        }
    }

    /// A run of `len` random bits in `M` words (the bits past `len` zero).
    fn run<const M: usize>(rng: &mut Rng, len: u32) -> [u64; M] {
        core::array::from_fn(|k| {
            let below = len.saturating_sub(64 * k as u32).min(64);
            rng.next() & mask(below)
        })
    }

    /// The model: the same bits through `put_bits`, 64 at most at a time.
    fn model(w: &mut WriteStream<'_>, bits: &[u64], len: u32) {
        for (k, &word) in bits.iter().enumerate() {
            let n = len.saturating_sub(64 * k as u32).min(64);
            if n > 0 {
                w.put_bits(word, n).unwrap();
            }
        }
    }

    /// Puts of every shape (1 to 3 words, lengths up to `max`, every bit offset) give
    /// the bytes of field-by-field writes, through the aligned path (begun with the
    /// stream's pending bits), the shifted one, and with a spill after every put.
    #[test]
    fn puts_equal_field_by_field_writes() {
        let mut rng = Rng(0x6E65_7473_6572);
        for lead in 0..64u32 {
            for mode in 0..3 {
                let mut a = [0u8; 1024];
                let mut b = [0u8; 1024];
                let mut wa = WriteStream::new(&mut a);
                let mut wb = WriteStream::new(&mut b);
                let head = rng.next() & mask(lead);
                wa.put_bits(head, lead).unwrap();
                wb.put_bits(head, lead).unwrap();
                let mut sink = Sink::<16>::new();
                let mut pos = match mode {
                    1 => 0,
                    _ => sink.begin(&wb),
                };
                for _ in 0..24 {
                    let shape = rng.next();
                    let max = (shape % 193) as u32;
                    let len = ((shape >> 8) % (max as u64 + 1)) as u32;
                    let words: [u64; 3] = run(&mut rng, len);
                    model(&mut wa, &words, len);
                    pos = match max.div_ceil(64) {
                        0 | 1 => sink.put::<1>(pos, [words[0]], len, max),
                        2 => sink.put::<2>(pos, [words[0], words[1]], len, max),
                        _ => sink.put::<3>(pos, words, len, max),
                    };
                    if mode == 2 || pos > 64 * 10 {
                        // 16 words are fewer than an element may need: every spill
                        // writes the full words.
                        pos = sink.spill(pos, &mut wb).unwrap();
                        assert!(pos < 64);
                    }
                }
                sink.write(pos, &mut wb).unwrap();
                assert_eq!(
                    wa.bit_position(),
                    wb.bit_position(),
                    "lead {lead} mode {mode}"
                );
                let n = wa.finish();
                assert_eq!(n, wb.finish());
                assert_eq!(a, b, "lead {lead} mode {mode}");
            }
        }
    }

    /// The same through a bare `BitWriter`, and a short room refused with nothing
    /// written.
    #[test]
    fn puts_to_a_bit_writer() {
        let mut rng = Rng(0x5EED);
        for lead in 0..64u32 {
            let mut a = [0u8; 256];
            let mut b = [0u8; 256];
            let mut wa = WriteStream::new(&mut a);
            let mut wb = BitWriter::new(&mut b);
            let head = rng.next() & mask(lead);
            wa.put_bits(head, lead).unwrap();
            wb.write_bits(head, lead).unwrap();
            let mut sink = Sink::<16>::new();
            let mut pos = sink.begin_bits(&wb);
            for _ in 0..6 {
                let len = (rng.next() % 152) as u32;
                let words: [u64; 3] = run(&mut rng, len);
                model(&mut wa, &words, len);
                pos = sink.put::<3>(pos, words, len, 151);
            }
            let total = wa.bit_position();
            sink.write_bits(pos, &mut wb).unwrap();
            assert_eq!(wb.bits_written(), total);
            let n = wa.finish();
            assert_eq!(n, wb.finish());
            assert_eq!(a, b, "lead {lead}");
        }
        let mut small = [0u8; 8];
        let mut w = BitWriter::new(&mut small);
        w.write_bits(1, 3).unwrap();
        let mut sink = Sink::<16>::new();
        let pos = sink.begin_bits(&w);
        let pos = sink.put::<2>(pos, [u64::MAX, 1], 65, 65);
        assert!(sink.write_bits(pos, &mut w).is_err());
        assert_eq!(w.bits_written(), 3);
    }

    /// Puts in place in the stream's buffer give the bytes of field-by-field writes at
    /// every lead, leave every byte past the stream's end as it was (buffers filled
    /// with a marker, up to an exact fit), and a buffer without room past the block is
    /// refused untouched.
    #[test]
    fn direct_puts_equal_field_by_field_writes() {
        let mut rng = Rng(0xD1EC7);
        let mut direct = 0;
        let mut refused = 0;
        for lead in 0..64u32 {
            for size in [24usize, 40, 48, 56, 64, 72, 80, 200] {
                let head = rng.next() & mask(lead);
                let runs: [(u32, [u64; 4]); 5] = core::array::from_fn(|_| {
                    let len = (rng.next() % 152) as u32;
                    (len, run(&mut rng, len))
                });
                let bits: u64 = runs.iter().map(|r| r.0 as u64).sum();
                let tail = rng.next() & mask(9);
                let mut a = [0xA5u8; 200];
                let mut b = [0xA5u8; 200];
                let mut wa = WriteStream::new(&mut a[..size]);
                let mut wb = WriteStream::new(&mut b[..size]);
                wa.put_bits(head, lead).unwrap();
                wb.put_bits(head, lead).unwrap();
                let fits = wb.bits_available() >= bits;
                for (len, words) in &runs {
                    if fits {
                        model(&mut wa, words, *len);
                    }
                }
                let lent = Encoder::lend_words(&mut wb).unwrap();
                let room = lent.0.len() / 8;
                let end_word = (lead as u64 + bits) as usize / 64;
                match Direct::begin(lent, bits, 151) {
                    Some((mut d, mut pos)) => {
                        assert!(end_word + 4 <= room, "lead {lead} size {size}");
                        for (len, words) in runs {
                            pos = d.put::<4>(pos, words, len, 151);
                        }
                        let (len, last) = d.finish(pos);
                        if fits {
                            wb.take_lent_words(len, last).unwrap();
                        } else {
                            // Past the buffer: refused, nothing changes.
                            assert!(wb.take_lent_words(len, last).is_err());
                        }
                        direct += 1;
                    }
                    None => {
                        assert!(end_word + 4 > room, "lead {lead} size {size}");
                        if fits {
                            for (len, words) in &runs {
                                model(&mut wb, words, *len);
                            }
                        }
                        refused += 1;
                    }
                }
                assert_eq!(wa.bit_position(), wb.bit_position());
                // The stream goes on after the block.
                if wa.bits_available() >= 9 {
                    wa.put_bits(tail, 9).unwrap();
                    wb.put_bits(tail, 9).unwrap();
                }
                let n = wa.finish();
                assert_eq!(n, wb.finish());
                assert_eq!(a, b, "lead {lead} size {size}");
                assert!(a[n..].iter().all(|&x| x == 0xA5));
            }
        }
        assert!(direct > 100 && refused > 100, "{direct} {refused}");
    }

    /// Integers read in place lane by lane give `int_column`'s and `bits_column`'s
    /// offsets and verdicts, and `count` counts the set lanes below `n`.
    #[test]
    fn in_place_lanes_and_counts_equal_the_columns() {
        let mut rng = Rng(0xC0_17);
        for _ in 0..2000 {
            let r = rng.next();
            let vals: [i16; 16] = core::array::from_fn(|_| (rng.next() % 40) as i16 - 20);
            let active: [bool; 16] = core::array::from_fn(|_| !rng.next().is_multiple_of(4));
            let (min, max) = ((r % 30) as i16 - 15, ((r >> 8) % 30) as i16 - 10);
            let mut out = [0u64; 16];
            let verdict = int_column(&vals, min, max, &active, &mut out);
            let mut ok = min <= max;
            for k in 0..16 {
                assert_eq!(int_lane(vals[k], min, max, active[k], &mut ok), out[k]);
            }
            assert_eq!(ok, verdict);
            let bits = ((r >> 16) % 10) as u32;
            let raw: [i8; 16] = core::array::from_fn(|_| (rng.next() % 300) as i8);
            let verdict = bits_column(&raw, bits, &active, &mut out);
            let mut ok = bits_valid::<i8>(bits);
            for k in 0..16 {
                assert_eq!(bits_lane(raw[k], bits, active[k], &mut ok), out[k]);
            }
            assert_eq!(ok, verdict);
            let n = ((r >> 24) % 17) as usize;
            let naive = (0..n).filter(|&k| active[k]).count() as u64;
            assert_eq!(super::super::count(&active, n), naive);
        }
        assert!(bits_valid::<u64>(64) && !bits_valid::<i64>(64) && !bits_valid::<u8>(9));
        assert_eq!(super::super::count(&[true; 20], 20), 20);
        assert_eq!(super::super::count(&[true; 20], 13), 13);
    }

    #[test]
    fn sizes_and_selects() {
        // The benchmark's entity (151 bits) fits a sink of 64 words whole; 256-bit
        // elements do not.
        assert!(Sink::<64>::holds(151));
        assert!(!Sink::<64>::holds(256));
        assert_eq!(select_len(true, 151, 109), 151);
        assert_eq!(select_len(false, 151, 109), 109);
        assert_eq!(select(true, [1u64, 2], [3, 4]), [1, 2]);
        assert_eq!(select(false, [1u64, 2], [3, 4]), [3, 4]);
    }
}
