//! Floors for the mixed-width bit layer: the same loops with no checks at all, NOT
//! netser. They show what this machine does per value when nothing is checked (no room,
//! no width, no value range, no bounds; fixed power-of-two buffers indexed under a mask
//! so that the compiler drops its own bounds checks), to compare the checked writer and
//! reader against. Shared by `netser/benches/bits.rs` (criterion) and
//! `bench/src/bin/bitlayer.rs` (instruction counts), so both measure the same code.
#![allow(dead_code)]

/// Bytes of the floors' buffers: a power of two above the workload's 10,240 bytes.
pub const BYTES: usize = 1 << 14;

/// The low `n` bits set for `n` in `0..=64`, indexed by `n & 127` (no bounds check).
pub const MASKS: [u64; 128] = {
    let mut masks = [0u64; 128];
    let mut n = 1;
    while n <= 64 {
        masks[n] = u64::MAX >> (64 - n);
        n += 1;
    }
    masks
};

/// The accumulator writer with no checks: bits gather in a word, stored when it fills
/// (the reference's release build). `limit` is the end of the word being filled, so
/// the common write is one comparison (`bits <= 64` assumed, never checked).
pub struct WordWriter<'a> {
    pub words: &'a mut [u64; BYTES / 8],
    pub acc: u64,
    pub pos: u64,
    pub limit: u64,
}

impl<'a> WordWriter<'a> {
    pub fn new(words: &'a mut [u64; BYTES / 8]) -> Self {
        WordWriter {
            words,
            acc: 0,
            pos: 0,
            limit: 64,
        }
    }

    #[inline(always)]
    pub fn write(&mut self, value: u64, bits: u32) {
        let end = self.pos + bits as u64;
        let sh = (self.pos & 63) as u32;
        if end < self.limit {
            self.acc |= value << sh;
        } else {
            self.acc |= value << sh;
            self.words[(self.pos >> 6) as usize & (BYTES / 8 - 1)] = self.acc.to_le();
            self.acc = (value >> 1) >> (63 - sh);
            self.limit += 64;
        }
        self.pos = end;
    }

    pub fn finish(&mut self) -> u64 {
        self.words[(self.pos >> 6) as usize & (BYTES / 8 - 1)] = self.acc.to_le();
        // The stores are the result: kept, as netser's into the caller's buffer.
        std::hint::black_box(&mut *self.words);
        self.pos.div_ceil(8)
    }
}

/// The byte-position writer with no checks: every value stores the eight bytes at the
/// current byte (the pending bits of that byte first); no branch on a word filling.
/// Widths above 56 go as two halves (a value and its position's 7 bits fit one word).
pub struct ByteWriter<'a> {
    pub buf: &'a mut [u8; BYTES + 8],
    pub acc: u64,
    pub pos: u64,
}

impl ByteWriter<'_> {
    #[inline(always)]
    fn put(&mut self, value: u64, bits: u32) {
        let sh = (self.pos & 7) as u32;
        let word = self.acc | value << sh;
        let at = (self.pos >> 3) as usize & (BYTES - 1);
        self.buf[at..at + 8].copy_from_slice(&word.to_le_bytes());
        let total = sh + bits;
        self.acc = word >> (total & 56);
        self.pos += bits as u64;
    }

    #[inline(always)]
    pub fn write(&mut self, value: u64, bits: u32) {
        if bits > 56 {
            self.put(value & 0xffff_ffff, 32);
            self.put(value >> 32, bits - 32);
        } else {
            self.put(value, bits);
        }
    }

    pub fn finish(&mut self) -> u64 {
        std::hint::black_box(&mut *self.buf);
        self.pos.div_ceil(8)
    }
}

/// The windowed reader with no checks: `(load_u64(pos >> 3) >> (pos & 7)) & MASK[bits]`
/// over a padded buffer. Wrong above 57 bits at some offsets (the window holds
/// `64 - pos % 8` bits): a pure floor.
pub struct WindowReader<'a> {
    pub buf: &'a [u8; BYTES + 8],
    pub pos: u64,
}

impl WindowReader<'_> {
    #[inline(always)]
    pub fn read(&mut self, bits: u32) -> u64 {
        let at = (self.pos >> 3) as usize & (BYTES - 1);
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.buf[at..at + 8]);
        let value = (u64::from_le_bytes(word) >> (self.pos & 7)) & MASKS[(bits & 127) as usize];
        self.pos += bits as u64;
        value
    }

    /// The same, exact at every width: reads wider than 57 bits (where the window may
    /// hold too few) take the ninth byte, on a branch (a branch-free ninth byte costs
    /// a double shift on every read).
    #[inline(always)]
    pub fn read_exact(&mut self, bits: u32) -> u64 {
        let at = (self.pos >> 3) as usize & (BYTES - 1);
        let sh = (self.pos & 7) as u32;
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.buf[at..at + 8]);
        let mut value = u64::from_le_bytes(word) >> sh;
        if bits > 57 {
            value |= (self.buf[at + 8] as u64) << 1 << (63 - sh);
        }
        self.pos += bits as u64;
        value & MASKS[(bits & 127) as usize]
    }
}
