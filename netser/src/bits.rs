//! The bit layer: a word-at-a-time bit writer and reader, as "Reading and Writing
//! Packets" describes, with the reference library's 64-bit flush.
//!
//! Bits are packed LSB-first: the stream is one little-endian integer built with
//! `acc |= value << position`. The writer gathers bits in a 64-bit scratch word and
//! stores it eight bytes at a time; the reader loads the 64-bit window at its position.
//! Both work on slices of any length and never touch a byte outside them.
//!
//! ```
//! use netser::bits::{bits_required, BitReader, BitWriter};
//!
//! // A health in 0..=100 takes 7 bits; a flag 1: both fit in one byte.
//! let mut buf = [0u8; 4];
//! let mut w = BitWriter::new(&mut buf);
//! w.write_bits(87, bits_required(0, 100))?;
//! w.write_bits(1, 1)?;
//! let len = w.finish();
//! assert_eq!(&buf[..len], &[87 | 1 << 7]);
//!
//! let mut r = BitReader::new(&buf[..len]);
//! assert_eq!(r.read_bits(7)?, 87);
//! assert_eq!(r.read_bits(1)?, 1);
//! # Ok::<(), netser::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};

/// Bits needed to send any value in `min..=max` as an offset from `min`: 0 when
/// `min == max`, else the bit length of `max - min`.
///
/// ```
/// use netser::bits::bits_required;
/// assert_eq!(bits_required(0, 7), 3);
/// assert_eq!(bits_required(0, 8), 4);
/// assert_eq!(bits_required(5, 5), 0);
/// assert_eq!(bits_required(0, u64::MAX), 64);
/// ```
#[inline]
pub const fn bits_required(min: u64, max: u64) -> u32 {
    if max <= min {
        0
    } else {
        64 - (max - min).leading_zeros()
    }
}

/// [`bits_required`] for 128-bit ranges (the offset in the unsigned 128-bit domain).
///
/// ```
/// use netser::bits::bits_required_u128;
/// assert_eq!(bits_required_u128(0, u128::MAX), 128);
/// ```
#[inline]
pub const fn bits_required_u128(min: u128, max: u128) -> u32 {
    if max <= min {
        0
    } else {
        128 - (max - min).leading_zeros()
    }
}

/// [`bits_required`] for signed 64-bit bounds (the difference taken in the unsigned domain).
///
/// ```
/// use netser::bits::bits_required_i64;
/// assert_eq!(bits_required_i64(-10, 10), 5);
/// assert_eq!(bits_required_i64(i64::MIN, i64::MAX), 64);
/// ```
#[inline]
pub const fn bits_required_i64(min: i64, max: i64) -> u32 {
    if max <= min {
        0
    } else {
        64 - (max.wrapping_sub(min) as u64).leading_zeros()
    }
}

/// The low `bits` bits set, for 0..=64 (a shift by 64 gives 0, not an overflow).
#[inline(always)]
const fn low_mask(bits: u32) -> u64 {
    match u64::MAX.checked_shr(64 - bits) {
        Some(mask) => mask,
        None => 0,
    }
}

/// `MASKS[n]` has the low `n` bits set (`0..=64`; all 64 above): one load, where
/// computing the mask takes a shift, a test and a select (a shift by 64 is not a
/// shift). 256 entries so that a width's low byte indexes it with no masking.
const MASKS: [u64; 256] = {
    let mut masks = [u64::MAX; 256];
    let mut n = 0;
    while n < 64 {
        masks[n] = (1u64 << n) - 1;
        n += 1;
    }
    masks
};

/// The widest read [`BitReader::read_bits`] takes from one 8-byte window at any bit
/// offset: a window holds `64 - 7` bits past the largest bit offset in its first byte.
const FAST_READ_BITS: u32 = 57;

/// Writes bits LSB-first into a caller's buffer, a 64-bit word at a time.
///
/// The buffer may have any length; writing past its end is an error, never a silent
/// truncation. Call [`BitWriter::finish`] to flush the last partial word and get the
/// packet length, `ceil(bits / 8)` bytes.
///
/// ```
/// use netser::bits::BitWriter;
/// let mut buf = [0u8; 8];
/// let mut w = BitWriter::new(&mut buf);
/// w.write_bits(5, 3)?;
/// w.write_bits(1000, 10)?;
/// w.write_bits(0xABCDEF, 24)?;
/// let len = w.finish();
/// assert_eq!(&buf[..len], &[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug)]
pub struct BitWriter<'a> {
    buf: &'a mut [u8],
    /// Pending bits of the current word, low bits first: bits `64 * k ..` of the stream,
    /// where `k = bits_written / 64`. Its bits above `bits_written % 64` are zero.
    scratch: u64,
    bits_written: u64,
    capacity_bits: u64,
    /// The end of the word that was being filled when [`BitWriter::write_bits`] last
    /// took one of its other paths, or one past the buffer's last bit when that comes
    /// first. A write that ends before it fits and leaves the word unfilled, so one
    /// comparison sends every other write (one that fills the word, finds no room or is
    /// wider than 64 bits) to the other paths. The other writes leave it alone: once
    /// they move to a later word it is behind `bits_written`, and the next `write_bits`
    /// sets it again. So while it is ahead of `bits_written` it is the end of the word
    /// holding `bits_written` (or one past the buffer, inside that word), which the
    /// word-filling path relies on.
    limit: u64,
}

impl<'a> BitWriter<'a> {
    /// A writer over `buf`; its capacity is `8 * buf.len()` bits.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 4];
    /// let w = BitWriter::new(&mut buf);
    /// assert_eq!(w.bits_available(), 32);
    /// ```
    pub fn new(buf: &'a mut [u8]) -> Self {
        let capacity_bits = (buf.len() as u64) * 8;
        BitWriter {
            buf,
            scratch: 0,
            bits_written: 0,
            capacity_bits,
            limit: capacity_bits.min(63) + 1,
        }
    }

    /// Bits written so far.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 4];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(3, 2)?;
    /// w.write_bits(0, 7)?;
    /// assert_eq!(w.bits_written(), 9);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn bits_written(&self) -> u64 {
        self.bits_written
    }

    /// Room left, in bits.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 2];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(1, 5)?;
    /// assert_eq!(w.bits_available(), 11);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn bits_available(&self) -> u64 {
        self.capacity_bits - self.bits_written
    }

    /// Writes the low `bits` bits of `value` (0..=64 bits).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`] above 64 bits, [`ErrorKind::ValueTooWide`] when
    /// `value` has bits set above `bits`, [`ErrorKind::BufferFull`] when the buffer has
    /// no room. Nothing is written on error.
    ///
    /// ```
    /// use netser::{bits::BitWriter, ErrorKind};
    /// let mut buf = [0u8; 1];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(0b101, 3)?;
    /// assert_eq!(
    ///     w.write_bits(8, 3).unwrap_err().kind(),
    ///     &ErrorKind::ValueTooWide { value: 8, bits: 3 }
    /// );
    /// assert!(matches!(w.write_bits(0, 6).unwrap_err().kind(), ErrorKind::BufferFull { .. }));
    /// assert_eq!(w.bits_written(), 3); // refused writes leave nothing
    /// assert_eq!(w.finish(), 1);
    /// assert_eq!(buf, [0b101]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn write_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        let end = self.bits_written + bits as u64;
        // Ending before `limit` means `bits < 64` (so `bits as u8` is `bits`) and room in
        // the word: only the width is left to check (`MASKS` instead of a shift by
        // `bits`: one compare).
        if end < self.limit && value <= MASKS[bits as u8 as usize] {
            self.scratch |= value.wrapping_shl(self.bits_written as u32);
            self.bits_written = end;
            return Ok(());
        }
        // The word fills up, `limit` is behind, or an error. The common case, checked
        // here: a valid write while `limit` is ahead, so that `limit` is this word's end
        // and the write fills the word, and the next word whole inside the buffer too.
        // That one bounds check stands for the room check: `end` falls inside the next
        // word, and the next `limit`, its end, is inside the buffer (no clamp).
        if bits <= 64 && value <= MASKS[bits as usize] && self.limit > self.bits_written {
            let (words, _) = self.buf.as_chunks_mut::<8>();
            let index = (self.bits_written >> 6) as usize;
            if let Some([dst, _]) = words.get_mut(index..index + 2) {
                let pos = (self.bits_written & 63) as u32;
                *dst = (self.scratch | value << pos).to_le_bytes();
                // The bits of `value` that did not fit (`v >> (64 - pos)`, see `put`).
                self.scratch = (value >> 1) >> (63 - pos);
                self.bits_written = end;
                self.limit = (end | 63) + 1;
                return Ok(());
            }
        }
        // Within a word of the buffer's end, after writes that left `limit` behind, or
        // an error of any kind.
        self.scratch = write_near_end(
            self.buf,
            self.scratch,
            self.bits_written,
            self.capacity_bits,
            value,
            bits,
        )?;
        self.bits_written = end;
        self.limit = ((end | 63) + 1).min(self.capacity_bits + 1);
        Ok(())
    }

    /// Writes `value < 2^bits` (`bits <= 64`, guaranteed by the caller, as the bounded
    /// primitives do); only the room is checked.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`]; nothing is written.
    #[inline(always)]
    pub(crate) fn write_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        debug_assert!(bits <= 64 && value.checked_shr(bits).unwrap_or(0) == 0);
        if bits as u64 > self.capacity_bits - self.bits_written {
            return Err(full(bits as u64, self.bits_written, self.capacity_bits));
        }
        self.push(value, bits);
        Ok(())
    }

    /// Writes whole 64-bit `words`, then `last < 2^last_bits` in `last_bits < 64` bits,
    /// after one room check for all of them (a packed run of fields).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`]; nothing is written.
    #[inline(always)]
    pub(crate) fn write_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        debug_assert!(last_bits < 64 && last >> last_bits == 0);
        let need = words.len() as u64 * 64 + last_bits as u64;
        if need > self.capacity_bits - self.bits_written {
            return Err(full(need, self.bits_written, self.capacity_bits));
        }
        for &w in words {
            self.push(w, 64);
        }
        self.push(last, last_bits);
        Ok(())
    }

    /// The bits written but not yet stored, and how many there are (`< 64`): the start
    /// of the next whole word of the stream. A caller that packs its own words starting
    /// with them hands back stream-aligned words to [`BitWriter::write_aligned_words`].
    #[inline(always)]
    pub(crate) fn pending(&self) -> (u64, u32) {
        (self.scratch, (self.bits_written & 63) as u32)
    }

    /// Stores `words`, the next whole words of the stream (the first one beginning with
    /// the [`BitWriter::pending`] bits), as they are, then keeps `last` as the pending
    /// `last_bits` (`< 64`) bits; one room check for all of it. What the derive's batch
    /// path writes a block with: no shifting, only stores.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`]; nothing is written.
    #[inline(always)]
    pub(crate) fn write_aligned_words(
        &mut self,
        words: &[u64],
        last: u64,
        last_bits: u32,
    ) -> Result<()> {
        debug_assert!(last_bits < 64 && last >> last_bits == 0);
        let start = self.bits_written & !63;
        let end = start + words.len() as u64 * 64 + last_bits as u64;
        if end < self.bits_written || end > self.capacity_bits {
            let need = end.saturating_sub(self.bits_written);
            return Err(full(need, self.bits_written, self.capacity_bits));
        }
        // Every whole word ends at or before `end`, inside the buffer.
        let at = (start / 8) as usize;
        if let Some(dst) = self.buf.get_mut(at..at + words.len() * 8) {
            for (d, w) in dst.chunks_exact_mut(8).zip(words) {
                d.copy_from_slice(&w.to_le_bytes());
            }
        }
        self.scratch = last;
        self.bits_written = end;
        Ok(())
    }

    /// The buffer from the word holding the pending bits on, and those bits
    /// ([`BitWriter::pending`]): for a caller that stores whole stream words itself,
    /// then hands the position back with [`BitWriter::take_lent_words`]. The caller
    /// leaves every byte past its last written bit as it was.
    #[inline(always)]
    pub(crate) fn lend_words(&mut self) -> (&mut [u8], u64, u32) {
        let at = ((self.bits_written >> 6) * 8) as usize;
        let (acc, used) = self.pending();
        (self.buf.get_mut(at..).unwrap_or(&mut []), acc, used)
    }

    /// After [`BitWriter::lend_words`]: the stream is `bits` (counted from the start of
    /// the lent word) long, its whole words stored in the buffer, `last` its pending
    /// bits.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`] when `bits` ends past the buffer or before the
    /// position; nothing changes.
    #[inline(always)]
    pub(crate) fn take_lent_words(&mut self, bits: u64, last: u64) -> Result<()> {
        let end = (self.bits_written & !63) + bits;
        if end < self.bits_written || end > self.capacity_bits {
            let need = end.saturating_sub(self.bits_written);
            return Err(full(need, self.bits_written, self.capacity_bits));
        }
        debug_assert!(last >> (end & 63) == 0 || end & 63 == 0 && last == 0);
        self.scratch = last;
        self.bits_written = end;
        Ok(())
    }

    /// The unchecked core: `bits <= 64`, `value < 2^bits` and room checked by the caller.
    #[inline(always)]
    fn push(&mut self, value: u64, bits: u32) {
        self.scratch = put(self.buf, self.scratch, self.bits_written, value, bits);
        self.bits_written += bits as u64;
    }

    /// Number of padding bits [`BitWriter::align`] would write now.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 2];
    /// let mut w = BitWriter::new(&mut buf);
    /// assert_eq!(w.align_bits(), 0);
    /// w.write_bits(1, 3)?;
    /// assert_eq!(w.align_bits(), 5);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn align_bits(&self) -> u32 {
        (8 - (self.bits_written % 8) as u32) % 8
    }

    /// Writes zero bits up to the next byte boundary (nothing when already aligned).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`] when the padding does not fit.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 2];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(1, 3)?;
    /// w.align()?;
    /// w.write_bits(0xff, 8)?;
    /// assert_eq!(w.finish(), 2);
    /// assert_eq!(buf, [0x01, 0xff]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn align(&mut self) -> Result<()> {
        let pad = self.align_bits();
        if pad as u64 > self.bits_available() {
            return Err(full(pad as u64, self.bits_written, self.capacity_bits));
        }
        self.push(0, pad);
        Ok(())
    }

    /// Aligns, then copies `data` in bulk.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`] when padding and data do not fit; nothing is written.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 4];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(1, 1)?;
    /// w.write_bytes(b"hi")?; // aligned first: 7 bits of padding
    /// assert_eq!(w.bits_written(), 24);
    /// assert!(w.write_bytes(b"no").is_err()); // 16 bits, 8 of room: nothing written
    /// assert_eq!(w.finish(), 3);
    /// assert_eq!(&buf[..3], &[0x01, b'h', b'i']);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let pad = self.align_bits();
        let need = pad as u64 + (data.len() as u64) * 8;
        if need > self.bits_available() {
            return Err(full(need, self.bits_written, self.capacity_bits));
        }
        self.push(0, pad);
        if data.len() < 16 {
            // Short runs are cheaper through the scratch word than a flush and reload.
            for &b in data {
                self.push(b as u64, 8);
            }
            return Ok(());
        }
        // Store the scratch word (its bytes past `pos` are zeros the copy overwrites:
        // the run is at least 16 bytes), copy in bulk, then reload the partial last word.
        let pos = (self.bits_written / 8) as usize;
        store_word(self.buf, self.bits_written >> 6, self.scratch);
        let end = pos + data.len();
        self.buf[pos..end].copy_from_slice(data);
        self.bits_written += (data.len() as u64) * 8;
        // The partial last word comes from `data` (the copy's source): reading it back from
        // the buffer just written would stall on store forwarding.
        let mut last = [0u8; 8];
        last.copy_from_slice(&data[data.len() - 8..]);
        let tail_bits = (end % 8) as u32 * 8;
        self.scratch = u64::from_le_bytes(last)
            .checked_shr(64 - tail_bits)
            .unwrap_or(0);
        Ok(())
    }

    /// Flushes the last partial word and returns the packet length, `ceil(bits / 8)`.
    /// Bytes of the buffer after that length are left untouched.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 8];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(0x1ff, 9)?;
    /// assert_eq!(w.finish(), 2); // 9 bits take 2 bytes
    /// assert_eq!(&buf[..2], &[0xff, 0x01]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn finish(mut self) -> usize {
        self.flush()
    }

    /// Flushes the pending bits without consuming the writer; returns the length so far.
    ///
    /// ```
    /// use netser::bits::BitWriter;
    /// let mut buf = [0u8; 8];
    /// let mut w = BitWriter::new(&mut buf);
    /// w.write_bits(0xab, 8)?;
    /// assert_eq!(w.flush(), 1);
    /// w.write_bits(0xcd, 8)?; // the writer stays open
    /// assert_eq!(w.finish(), 2);
    /// assert_eq!(&buf[..2], &[0xab, 0xcd]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn flush(&mut self) -> usize {
        let len = self.bits_written.div_ceil(8) as usize;
        let word_start = ((self.bits_written >> 6) * 8) as usize;
        // At most 7 bytes: a byte loop beats a call to memcpy here.
        for (dst, src) in self.buf[word_start..len]
            .iter_mut()
            .zip(self.scratch.to_le_bytes())
        {
            *dst = src;
        }
        len
    }
}

/// Reads bits LSB-first from any byte slice.
///
/// Each read loads the eight bytes at the current byte position as one little-endian
/// word and shifts it into place (the reference's branchless 64-bit window), so the
/// reader's only state is its position. Near the end of the slice it assembles the
/// window from the bytes that exist, so it never reads outside the slice. Reading past
/// the end is an error, never zeros; trailing bits after the last read are accepted
/// (framing decides whether a packet must be consumed whole).
///
/// ```
/// use netser::bits::BitReader;
/// let mut r = BitReader::new(&[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// assert_eq!(r.read_bits(3)?, 5);
/// assert_eq!(r.read_bits(10)?, 1000);
/// assert_eq!(r.read_bits(24)?, 0xABCDEF);
/// assert!(r.read_bits(4).is_err()); // only 3 bits left
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    buf: &'a [u8],
    bits_read: u64,
    len_bits: u64,
}

impl<'a> BitReader<'a> {
    /// A reader over all of `buf`.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let r = BitReader::new(&[1, 2, 3]);
    /// assert_eq!(r.bits_remaining(), 24);
    /// ```
    pub fn new(buf: &'a [u8]) -> Self {
        BitReader {
            buf,
            bits_read: 0,
            len_bits: (buf.len() as u64) * 8,
        }
    }

    /// Bits read so far.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let mut r = BitReader::new(&[0xff, 0xff]);
    /// r.read_bits(5)?;
    /// assert_eq!(r.bits_read(), 5);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn bits_read(&self) -> u64 {
        self.bits_read
    }

    /// Bits left to read.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let mut r = BitReader::new(&[0xff, 0xff]);
    /// r.read_bits(5)?;
    /// assert_eq!(r.bits_remaining(), 11);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn bits_remaining(&self) -> u64 {
        self.len_bits - self.bits_read
    }

    /// The bytes the reader was made from.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let packet = [7u8, 8, 9];
    /// let mut r = BitReader::new(&packet);
    /// r.read_bits(8)?;
    /// assert_eq!(r.bytes(), &packet); // the whole input, whatever was read
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// Reads `bits` bits (0..=64).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`] above 64, [`ErrorKind::EndOfBuffer`] when fewer bits
    /// remain; nothing is consumed on error.
    ///
    /// ```
    /// use netser::{bits::BitReader, ErrorKind};
    /// let mut r = BitReader::new(&[0b1010_1101]);
    /// assert_eq!(r.read_bits(3)?, 0b101);
    /// assert_eq!(
    ///     r.read_bits(6).unwrap_err().kind(),
    ///     &ErrorKind::EndOfBuffer { wanted: 6, remaining: 5 }
    /// );
    /// assert_eq!(r.read_bits(5)?, 0b10101); // the refused read consumed nothing
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn read_bits(&mut self, bits: u32) -> Result<u64> {
        let byte = (self.bits_read >> 3) as usize;
        // The common case: up to 57 bits and a whole window in the buffer. The bits end
        // by bit `8 * byte + 7 + 57`, the window's end, so inside the buffer: the
        // window's own bounds check is the check of the bits remaining.
        if bits <= FAST_READ_BITS {
            if let Some(window) = self.buf.get(byte..byte + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(window);
                let value =
                    (u64::from_le_bytes(word) >> (self.bits_read & 7)) & MASKS[bits as usize];
                self.bits_read += bits as u64;
                return Ok(value);
            }
        } else if bits <= 64 {
            // Wider reads: the window and the byte after it, in the buffer.
            if let Some(window) = self.buf.get(byte..byte + 9) {
                let mut word = [0u8; 8];
                word.copy_from_slice(&window[..8]);
                let shift = (self.bits_read & 7) as u32;
                let value =
                    (u64::from_le_bytes(word) >> shift) | (window[8] as u64) << 1 << (63 - shift);
                self.bits_read += bits as u64;
                // Shifted, not `MASKS`: a mask of its own keeps this path from sharing
                // (and jumping to) the narrow path's tail.
                return Ok(value & (u64::MAX >> (64 - bits)));
            }
        }
        if bits > 64 || bits as u64 > self.len_bits - self.bits_read {
            return Err(refuse_read(bits, self.bits_read, self.len_bits));
        }
        Ok(self.pull(bits))
    }

    /// Fills `words` with 64-bit reads, then reads `last_bits < 64` more bits, after one
    /// check of the bits remaining for all of them (a packed run of fields).
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`]; nothing is read.
    #[inline(always)]
    pub(crate) fn read_words(&mut self, words: &mut [u64], last_bits: u32) -> Result<u64> {
        let need = words.len() as u64 * 64 + last_bits as u64;
        if need > self.len_bits - self.bits_read {
            return Err(end(need, self.bits_read, self.len_bits));
        }
        for w in words.iter_mut() {
            *w = self.pull(64);
        }
        Ok(self.pull(last_bits))
    }

    /// Consumes `bits` bits unread (a block the batch decode peeked and accepted).
    #[inline(always)]
    pub(crate) fn skip(&mut self, bits: u64) -> Result<()> {
        if bits > self.len_bits - self.bits_read {
            return Err(end(bits, self.bits_read, self.len_bits));
        }
        self.bits_read += bits;
        Ok(())
    }

    /// The unchecked core: `bits <= 64` and enough bits remain.
    #[inline(always)]
    fn pull(&mut self, bits: u32) -> u64 {
        let byte = (self.bits_read >> 3) as usize;
        let shift = (self.bits_read & 7) as u32;
        let low = match self.buf.get(byte..byte + 8) {
            Some(w) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(w);
                u64::from_le_bytes(word) >> shift
            }
            None => tail_window(self.buf, byte) >> shift,
        };
        // A window holds 64 - shift bits; a wider read takes the rest from the ninth byte,
        // which exists because the remaining-bits check passed.
        let value = if bits + shift > 64 {
            low | (self.buf.get(byte + 8).copied().unwrap_or(0) as u64) << (64 - shift)
        } else {
            low
        };
        self.bits_read += bits as u64;
        value & low_mask(bits)
    }

    /// Padding bits [`BitReader::align`] would consume now.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let mut r = BitReader::new(&[0, 0]);
    /// r.read_bits(3)?;
    /// assert_eq!(r.align_bits(), 5);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn align_bits(&self) -> u32 {
        (8 - (self.bits_read % 8) as u32) % 8
    }

    /// Skips to the next byte boundary.
    ///
    /// # Errors
    /// [`ErrorKind::NonZeroPadding`] when the padding is not all zeros,
    /// [`ErrorKind::EndOfBuffer`] when it runs past the end.
    ///
    /// ```
    /// use netser::{bits::BitReader, ErrorKind};
    /// let mut r = BitReader::new(&[0b0000_0001, 0xff]);
    /// assert_eq!(r.read_bits(1)?, 1);
    /// r.align()?;
    /// assert_eq!(r.read_bits(8)?, 0xff);
    /// // Padding must be zeros: anything else is not what a writer sends.
    /// let mut r = BitReader::new(&[0b1000_0001]);
    /// r.read_bits(1)?;
    /// assert!(matches!(r.align().unwrap_err().kind(), ErrorKind::NonZeroPadding { .. }));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    pub fn align(&mut self) -> Result<()> {
        let at = self.bits_read;
        let found = self.read_bits(self.align_bits())?;
        if found != 0 {
            self.bits_read = at;
            return Err(Error::new(
                ErrorKind::NonZeroPadding { found: found as u8 },
                at,
            ));
        }
        Ok(())
    }

    /// Aligns, then fills `out` with the next `out.len()` bytes in bulk.
    ///
    /// # Errors
    /// As [`BitReader::align`], and [`ErrorKind::EndOfBuffer`] when fewer bytes remain.
    ///
    /// ```
    /// use netser::bits::BitReader;
    /// let mut r = BitReader::new(&[0x01, b'h', b'i']);
    /// r.read_bits(1)?;
    /// let mut out = [0u8; 2];
    /// r.read_bytes(&mut out)?;
    /// assert_eq!(&out, b"hi");
    /// assert!(r.read_bytes(&mut [0u8; 1]).is_err()); // nothing left
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn read_bytes(&mut self, out: &mut [u8]) -> Result<()> {
        let need = self.align_bits() as u64 + (out.len() as u64) * 8;
        if need > self.bits_remaining() {
            return Err(end(need, self.bits_read, self.len_bits));
        }
        self.align()?;
        let pos = (self.bits_read / 8) as usize;
        out.copy_from_slice(&self.buf[pos..pos + out.len()]);
        self.bits_read += (out.len() as u64) * 8;
        Ok(())
    }
}

// The cold paths take plain values, never `&self`: a reference to the writer or reader
// passed to an out-of-line function would keep its state in memory on the hot path too
// (its address escapes), where it otherwise lives in registers.

/// Why [`BitWriter::write_bits`] refused.
#[cold]
#[inline(never)]
fn refuse_write(value: u64, bits: u32, at: u64, capacity: u64) -> Error {
    let kind = if bits > 64 {
        ErrorKind::InvalidBitCount {
            bits,
            min: 0,
            max: 64,
        }
    } else if value.checked_shr(bits).unwrap_or(0) != 0 {
        ErrorKind::ValueTooWide {
            value: value as u128,
            bits,
        }
    } else {
        return full(bits as u64, at, capacity);
    };
    Error::new(kind, at)
}

#[cold]
#[inline(never)]
fn full(wanted: u64, at: u64, capacity: u64) -> Error {
    Error::new(
        ErrorKind::BufferFull {
            wanted,
            remaining: capacity - at,
        },
        at,
    )
}

/// [`BitWriter::write_bits`] within a word of the buffer's end, or refused: the new
/// pending bits. Out of line, with the writer's state passed by value (see above).
#[cold]
#[inline(never)]
fn write_near_end(
    buf: &mut [u8],
    scratch: u64,
    at: u64,
    capacity: u64,
    value: u64,
    bits: u32,
) -> Result<u64> {
    if at + bits as u64 > capacity || bits > 64 || value > MASKS[bits as usize] {
        return Err(refuse_write(value, bits, at, capacity));
    }
    Ok(put(buf, scratch, at, value, bits))
}

/// `value` (`bits <= 64`, `value < 2^bits`, room checked by the caller) added at bit
/// `at` to the pending bits `scratch`, whose word is stored when it fills: the new
/// pending bits. The writer's state by value, so that the cold path shares it.
#[inline(always)]
fn put(buf: &mut [u8], scratch: u64, at: u64, value: u64, bits: u32) -> u64 {
    let pos = (at & 63) as u32;
    let word = scratch | value << pos;
    if pos + bits < 64 {
        return word;
    }
    store_word(buf, at >> 6, word);
    // The bits of `value` that did not fit; `(v >> 1) >> (63 - pos)` is `v >> (64 - pos)`
    // without a shift by 64 when `pos == 0`.
    (value >> 1) >> (63 - pos)
}

#[inline(always)]
fn store_word(buf: &mut [u8], word_index: u64, word: u64) {
    let at = (word_index * 8) as usize;
    match buf.get_mut(at..at + 8) {
        Some(dst) => dst.copy_from_slice(&word.to_le_bytes()),
        None => store_tail(buf, at, word),
    }
}

/// The last word of a buffer whose length is not a multiple of 8: the room check
/// guarantees the bits beyond the buffer are zero.
#[cold]
#[inline(never)]
fn store_tail(buf: &mut [u8], at: usize, word: u64) {
    let n = buf.len().saturating_sub(at);
    if let Some(dst) = buf.get_mut(at..at + n) {
        dst.copy_from_slice(&word.to_le_bytes()[..n]);
    }
}

/// Why [`BitReader::read_bits`] refused.
#[cold]
#[inline(never)]
fn refuse_read(bits: u32, at: u64, len: u64) -> Error {
    if bits > 64 {
        Error::new(
            ErrorKind::InvalidBitCount {
                bits,
                min: 0,
                max: 64,
            },
            at,
        )
    } else {
        end(bits as u64, at, len)
    }
}

#[cold]
#[inline(never)]
fn end(wanted: u64, at: u64, len: u64) -> Error {
    Error::new(
        ErrorKind::EndOfBuffer {
            wanted,
            remaining: len - at,
        },
        at,
    )
}

/// The window at `byte` when fewer than eight bytes are left: zeros past the end.
/// A byte loop, inlined: a call (to this or to memcpy) would take registers from the
/// reader's hot path around it.
#[inline(always)]
fn tail_window(buf: &[u8], byte: usize) -> u64 {
    let mut word = 0u64;
    for (i, &b) in buf.get(byte..).unwrap_or(&[]).iter().take(8).enumerate() {
        word |= (b as u64) << (8 * i);
    }
    word
}

/// Counts bits exactly, for the measure stream: it knows the position, so alignment is
/// charged exactly (the reference charges a worst case of 7 bits per align).
///
/// ```
/// use netser::bits::BitCounter;
/// let mut c = BitCounter::default();
/// c.add(8);
/// c.align();
/// c.add(8);
/// assert_eq!(c.bits(), 16);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BitCounter {
    bits: u64,
}

impl BitCounter {
    /// Counts `bits` more bits.
    ///
    /// ```
    /// use netser::bits::BitCounter;
    /// let mut c = BitCounter::default();
    /// c.add(5);
    /// c.add(64);
    /// assert_eq!(c.bits(), 69);
    /// ```
    #[inline(always)]
    pub fn add(&mut self, bits: u64) {
        self.bits += bits;
    }

    /// Counts the padding to the next byte boundary.
    ///
    /// ```
    /// use netser::bits::BitCounter;
    /// let mut c = BitCounter::default();
    /// c.align(); // already aligned: nothing
    /// c.add(3);
    /// c.align();
    /// assert_eq!(c.bits(), 8);
    /// ```
    #[inline(always)]
    pub fn align(&mut self) {
        self.bits = self.bits.div_ceil(8) * 8;
    }

    /// Bits counted so far.
    ///
    /// ```
    /// use netser::bits::BitCounter;
    /// let mut c = BitCounter::default();
    /// assert_eq!(c.bits(), 0);
    /// c.add(12);
    /// assert_eq!(c.bits(), 12);
    /// ```
    #[inline(always)]
    pub fn bits(&self) -> u64 {
        self.bits
    }
}

#[cfg(test)]
mod tests;
