//! Writes the bytes that `arbitrary` (1.x) reads back as a given script, so the script
//! targets' seeds are real scripts (a handshake, an exchange of every kind of message)
//! and not only noise. Integers are little-endian, a `bool` is a byte's low bit, an enum
//! variant is a `u32` scaled to the variant count, and each element of the last field's
//! list follows a `true` byte (a `false` byte ends it). The corpus tests read every seed
//! back and compare it with the script it was written from.

/// A script being written.
#[derive(Debug, Default, Clone)]
pub struct ScriptBytes(Vec<u8>);

impl ScriptBytes {
    /// Nothing written yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A `bool`.
    pub fn bool(mut self, value: bool) -> Self {
        self.0.push(u8::from(value));
        self
    }

    /// A `u8`.
    pub fn u8(mut self, value: u8) -> Self {
        self.0.push(value);
        self
    }

    /// A `u16`.
    pub fn u16(mut self, value: u16) -> Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A `u32`.
    pub fn u32(mut self, value: u32) -> Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A `u64`.
    pub fn u64(mut self, value: u64) -> Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Variant `index` of an enum of `count` variants: the smallest `u32` that the derive
    /// scales (`value * count >> 32`) to `index`.
    pub fn variant(self, index: u32, count: u32) -> Self {
        assert!(index < count);
        let value = (u64::from(index) << 32).div_ceil(u64::from(count));
        self.u32(value as u32)
    }

    /// Another element of the last field's list follows.
    pub fn item(self) -> Self {
        self.bool(true)
    }

    /// The bytes, with the list ended.
    pub fn finish(self) -> Vec<u8> {
        self.bool(false).0
    }
}

/// A fixed pseudo-random stream (xorshift), for reproducible noise seeds.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
