//! The three streams (write, read, measure) and the traits they share.
//!
//! # One schema, three streams
//!
//! The articles write one templated `serialize` function per type that serves reading,
//! writing and measuring, its `if (Stream::IsWriting)` branches resolved at compile
//! time. netser keeps that idea and adds what Rust asks for: encoding must work from a
//! shared `&T` (no clone, no `&mut`), and decoding must build a fresh `T` (no `Default`
//! placeholder to overwrite). The design has two layers:
//!
//! * [`Encoder`] (implemented by [`WriteStream`] and [`MeasureStream`]) and [`Decoder`]
//!   (implemented by [`ReadStream`]) hold every primitive, each written once per
//!   direction: `write_int(v, min, max)` and `read_int(min, max) -> v`. The
//!   [`NetSerialize`] trait that the derive implements is
//!   `encode(&self, &mut impl Encoder)` plus `decode(&mut impl Decoder) -> Self`, so
//!   writing and measuring share one function from `&T`, and reading builds a new value.
//! * [`Stream`](crate::Stream) is the articles' unified stream for hand-written code:
//!   `serialize_int(&mut v, min, max)` writes `v` on a write or measure stream and
//!   stores into `v` on a read stream. Each stream names itself as the encoder or
//!   decoder through [`Stream::direction`](crate::Stream::direction); the other side is
//!   the uninhabited [`Never`](crate::Never) type, so the `match` in each method has one
//!   reachable arm and the branch vanishes, exactly as `Stream::IsWriting` does in C++.
//!
//! ```
//! use netser::{MeasureStream, ReadStream, Result, Stream, WriteStream};
//!
//! #[derive(Debug, Default, PartialEq)]
//! struct PacketA { x: i32, y: i32, z: i32 }
//!
//! // One function serves all three streams.
//! fn serialize_packet_a<S: Stream>(s: &mut S, p: &mut PacketA) -> Result<()> {
//!     s.serialize_int(&mut p.x, -1000, 1000)?;
//!     s.serialize_int(&mut p.y, -1000, 1000)?;
//!     s.serialize_int(&mut p.z, 0, 10)
//! }
//!
//! let mut p = PacketA { x: -5, y: 999, z: 10 };
//! let mut m = MeasureStream::new();
//! serialize_packet_a(&mut m, &mut p)?;
//! assert_eq!(m.bits(), 11 + 11 + 4);
//!
//! let mut buf = [0u8; 16];
//! let mut w = WriteStream::new(&mut buf);
//! serialize_packet_a(&mut w, &mut p)?;
//! let len = w.finish();
//!
//! let mut q = PacketA::default();
//! serialize_packet_a(&mut ReadStream::new(&buf[..len]), &mut q)?;
//! assert_eq!(p, q);
//! # Ok::<(), netser::Error>(())
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::bits::{BitCounter, BitReader, BitWriter};
use crate::error::{Error, ErrorKind, Num, Result};
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::trace::{NoTrace, Segment, TraceValue, Tracer};
use crate::NetSerialize;

/// The flag-ladder tiers of `int_relative`: `(largest difference, payload bits)`. A
/// difference of 1 is a single flag; past the last tier the current value goes raw.
const RELATIVE_TIERS: [(u32, u32); 5] = [(6, 3), (23, 5), (280, 9), (4377, 13), (69914, 17)];

/// The writing side of a stream: every primitive, from values and shared references.
///
/// Three methods are required ([`put_bits`](Encoder::put_bits),
/// [`write_align`](Encoder::write_align), [`write_bytes`](Encoder::write_bytes)); every
/// other one is built on them, checks its bounds and returns an error instead of
/// truncating. Implemented by [`WriteStream`] and [`MeasureStream`].
///
/// ```
/// use netser::{Encoder, WriteStream};
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::new(&mut buf);
/// w.write_int(42u16, 0, 1000)?;            // 10 bits
/// assert!(w.write_int(1001u16, 0, 1000).is_err()); // out of range: nothing written
/// assert_eq!(w.bit_position(), 10);
/// # Ok::<(), netser::Error>(())
/// ```
pub trait Encoder: Sized {
    /// The tracer events go to ([`NoTrace`] by default).
    type Tracer: Tracer;

    /// Whether derived code may write a run of fixed-width fields as a few packed
    /// writes (`bits::run`) instead of field by field: only for a stream that writes
    /// and has no tracer to feed.
    #[doc(hidden)]
    const PACKS_RUNS: bool = false;

    /// Writes the low `bits` (0..=64) bits of `value`, without tracing.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`], [`ErrorKind::ValueTooWide`] or
    /// [`ErrorKind::BufferFull`].
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()>;

    /// Writes `value`, which the caller guarantees is below `2^bits` with `bits <= 64`
    /// (a bounded offset, a quantized float, a tag): only the room is checked. The
    /// primitives use it to skip a check their own bounds already made.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn put_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        self.put_bits(value, bits)
    }

    /// Writes whole 64-bit `words`, then the low `last_bits` (`< 64`) bits of `last`
    /// (`last < 2^last_bits`), after one room check for all of them; what derived code
    /// writes a packed run of fields with (`bits::run`).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`]; nothing is written.
    #[doc(hidden)]
    #[inline(always)]
    fn put_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        check_room(self, words.len() as u64 * 64 + last_bits as u64)?;
        for &w in words {
            self.put_bits_bounded(w, 64)?;
        }
        self.put_bits_bounded(last, last_bits)
    }

    /// Writes zero bits up to the next byte boundary.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    fn write_align(&mut self) -> Result<()>;

    /// Aligns, then writes `data` as raw bytes (the length is not sent).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    fn write_bytes(&mut self, data: &[u8]) -> Result<()>;

    /// Bits written (or counted) so far.
    fn bit_position(&self) -> u64;

    /// Room left, in bits (`u64::MAX` for a measure stream).
    fn bits_available(&self) -> u64;

    /// The stream's tracer.
    fn tracer(&mut self) -> &mut Self::Tracer;

    /// Records `value` as the primitive that took bits `start..` up to the position now.
    #[inline(always)]
    fn trace(&mut self, start: u64, value: TraceValue<'_>) {
        let end = self.bit_position();
        self.tracer().value(start, end, value);
    }

    /// Writes the low `bits` (0..=64) bits of `value`, traced.
    ///
    /// # Errors
    /// As [`Encoder::put_bits`].
    #[inline]
    fn write_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        let start = self.bit_position();
        self.put_bits(value, bits)?;
        self.trace(start, TraceValue::Bits(value));
        Ok(())
    }

    /// A bool, 1 bit.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_bool(&mut self, value: bool) -> Result<()> {
        let start = self.bit_position();
        self.put_bits_bounded(value as u64, 1)?;
        self.trace(start, TraceValue::Bool(value));
        Ok(())
    }

    /// An integer in `min..=max`, sent as `value - min` in `bits_required(min, max)`
    /// bits (none when `min == max`).
    ///
    /// # Errors
    /// [`ErrorKind::OutOfRange`] outside the range, [`ErrorKind::InvalidRange`] when
    /// `min > max`, [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_int<I: RangedInt>(&mut self, value: I, min: I, max: I) -> Result<()> {
        let start = self.bit_position();
        if !(value >= min && value <= max) {
            return Err(range_error(value, min, max, start));
        }
        let bits = I::range_bits(min, max);
        if bits > 64 {
            check_room(self, bits as u64)?;
        }
        put_offset(self, value.offset_from(min), bits)?;
        self.trace(start, trace_int(value));
        Ok(())
    }

    /// An unsigned integer in exactly `bits` bits (up to 128).
    ///
    /// # Errors
    /// [`ErrorKind::ValueTooWide`] when `value >= 2^bits` or it is negative,
    /// [`ErrorKind::InvalidBitCount`] above the type's width (or a signed type's sign
    /// bit, as [`Decoder::read_uint_bits`]), [`ErrorKind::BufferFull`].
    #[inline]
    fn write_uint_bits<I: RangedInt>(&mut self, value: I, bits: u32) -> Result<()> {
        let start = self.bit_position();
        // As the reader: a signed type's sign bit is never part of the field.
        let signed = I::MIN < I::ZERO;
        if bits > I::WIDTH - signed as u32 {
            return Err(Error::new(ErrorKind::InvalidBitCount { bits }, start));
        }
        let raw = value.offset_from(I::ZERO);
        if value < I::ZERO || (bits < 128 && raw >> bits != 0) {
            return Err(Error::new(
                ErrorKind::ValueTooWide { value: raw, bits },
                start,
            ));
        }
        if bits > 64 {
            check_room(self, bits as u64)?;
        }
        put_offset(self, raw, bits)?;
        self.trace(start, trace_int(value));
        Ok(())
    }

    /// A fixed-point number: `raw` is the real value times `2^fraction_bits`, in
    /// `min_units..=max_units` whole units. It is sent like
    /// `write_int(raw, min_units << F, max_units << F)`, as the reference's
    /// `serialize_fixed` does.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRange`] when a bound overflows the type once scaled, and the
    /// errors of [`Encoder::write_int`].
    #[inline]
    fn write_fixed<I: RangedInt>(
        &mut self,
        raw: I,
        fraction_bits: u32,
        min_units: I,
        max_units: I,
    ) -> Result<()> {
        let (min, max) = fixed_bounds(fraction_bits, min_units, max_units, self.bit_position())?;
        self.write_int(raw, min, max)
    }

    /// A float32 as its 32 raw bits (NaN payloads included).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_f32(&mut self, value: f32) -> Result<()> {
        let start = self.bit_position();
        self.put_bits_bounded(value.to_bits() as u64, 32)?;
        self.trace(start, TraceValue::F32(value));
        Ok(())
    }

    /// A float64 as its 64 raw bits.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline]
    fn write_f64(&mut self, value: f64) -> Result<()> {
        let start = self.bit_position();
        self.put_bits_bounded(value.to_bits(), 64)?;
        self.trace(start, TraceValue::F64(value));
        Ok(())
    }

    /// A compressed float: `value` quantized by `q`, in `q.bits()` bits.
    ///
    /// # Errors
    /// [`ErrorKind::NotFinite`] for NaN or infinities, [`ErrorKind::QuantizedOutOfRange`]
    /// outside the range unless `q` clamps, [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_compressed_f32(&mut self, value: f32, q: &Quantize) -> Result<()> {
        let start = self.bit_position();
        let integer = q.quantize(value, start)?;
        self.put_bits_bounded(integer as u64, q.bits())?;
        self.trace(start, TraceValue::F32(value));
        Ok(())
    }

    /// A compressed float from an `f64` field (quantized in float32 arithmetic).
    ///
    /// # Errors
    /// As [`Encoder::write_compressed_f32`]; a finite `f64` too large for `f32` is out of
    /// range.
    #[inline]
    fn write_compressed_f64(&mut self, value: f64, q: &Quantize) -> Result<()> {
        let start = self.bit_position();
        if value.is_finite() && !(value as f32).is_finite() && !q.is_clamping() {
            return Err(Error::new(ErrorKind::quantized_write(value, q), start));
        }
        if !value.is_finite() {
            return Err(Error::new(ErrorKind::NotFinite { value }, start));
        }
        // A clamping quantization clamps a finite f64 beyond the f32 range too, instead
        // of letting `as f32` turn it into an infinity.
        let value32 = value.clamp(f32::MIN as f64, f32::MAX as f64) as f32;
        let integer = q.quantize(value32, start)?;
        self.put_bits_bounded(integer as u64, q.bits())?;
        self.trace(start, TraceValue::F64(value));
        Ok(())
    }

    /// A vector of compressed floats, each quantized by `q`.
    ///
    /// # Errors
    /// As [`Encoder::write_compressed_f32`], for the first component that fails.
    #[inline]
    fn write_compressed_f32s(&mut self, values: &[f32], q: &Quantize) -> Result<()> {
        for (i, &v) in values.iter().enumerate() {
            self.write_compressed_f32(v, q).map_err(|e| e.at_index(i))?;
        }
        Ok(())
    }

    /// A unit quaternion `[x, y, z, w]` in smallest-three form, `2 + 3 * bits` bits.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidQuaternion`] for zero-length or non-finite input,
    /// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 32`, [`ErrorKind::BufferFull`].
    #[inline]
    fn write_quat(&mut self, q: [f32; 4], bits: u32) -> Result<()> {
        let start = self.bit_position();
        let (largest, [a, b, c]) = crate::quat::pack(q, bits, start)?;
        if bits <= 20 {
            // 2 + 3 * bits <= 62: one write.
            let packed = largest as u64
                | (a as u64) << 2
                | (b as u64) << (2 + bits)
                | (c as u64) << (2 + 2 * bits);
            self.put_bits_bounded(packed, 2 + 3 * bits)?;
        } else {
            check_room(self, crate::quat::quat_bits(bits))?;
            self.put_bits_bounded(largest as u64, 2)?;
            for s in [a, b, c] {
                self.put_bits_bounded(s as u64, bits)?;
            }
        }
        self.trace(start, TraceValue::Quat(q));
        Ok(())
    }

    /// Zero bits to the next byte boundary, traced.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline]
    fn align(&mut self) -> Result<()> {
        let start = self.bit_position();
        self.write_align()?;
        if self.bit_position() != start {
            self.trace(start, TraceValue::Align);
        }
        Ok(())
    }

    /// A bounded length: `int(len, 0, max_len)`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`] when `len > max_len`, [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_len(&mut self, len: usize, max_len: usize) -> Result<()> {
        let start = self.bit_position();
        if len > max_len {
            return Err(Error::new(
                ErrorKind::LengthTooLong {
                    len: len as u64,
                    max: max_len as u64,
                },
                start,
            ));
        }
        put_offset(
            self,
            len as u128,
            <usize as RangedInt>::range_bits(0, max_len),
        )?;
        self.trace(start, TraceValue::Len(len));
        Ok(())
    }

    /// A UTF-8 string of at most `max_len` bytes: its length as `int(0, max_len)`, then
    /// its bytes, aligned. This is the reference's `serialize_string` with
    /// `buffer_size = max_len + 1`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], [`ErrorKind::NulInString`] (the reference cannot
    /// carry NUL), [`ErrorKind::BufferFull`].
    fn write_string(&mut self, s: &str, max_len: usize) -> Result<()> {
        let start = self.bit_position();
        if let Some(position) = s.bytes().position(|b| b == 0) {
            return Err(Error::new(ErrorKind::NulInString { position }, start));
        }
        // Length, padding and bytes must all fit before any of them is written.
        let len_bits = <usize as RangedInt>::range_bits(0, max_len) as u64;
        let pad = (8 - (start + len_bits) % 8) % 8;
        if s.len() <= max_len {
            check_room(self, len_bits + pad + s.len() as u64 * 8)?;
        }
        self.write_len(s.len(), max_len)?;
        self.write_bytes(s.as_bytes())?;
        self.trace(start, TraceValue::Str(s));
        Ok(())
    }

    /// A string as UTF-16 code units of 32 bits each, at most `max_units` units, with no
    /// alignment: the reference's `serialize_wstring` with `buffer_size = max_units + 1`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], [`ErrorKind::NulInString`], [`ErrorKind::BufferFull`].
    fn write_wstring(&mut self, s: &str, max_units: usize) -> Result<()> {
        let start = self.bit_position();
        if let Some(position) = s.bytes().position(|b| b == 0) {
            return Err(Error::new(ErrorKind::NulInString { position }, start));
        }
        let units = s.encode_utf16().count();
        self.write_len(units, max_units)?;
        check_room(self, units as u64 * 32)?;
        for u in s.encode_utf16() {
            self.put_bits_bounded(u as u64, 32)?;
        }
        self.trace(start, TraceValue::Str(s));
        Ok(())
    }

    /// `current` relative to `previous` with the reference's flag ladder: 1 bit for +1,
    /// 5 bits for +2..=6, 8 for 7..=23, 13 for 24..=280, 18 for 281..=4377, 23 for
    /// 4378..=69914, else 6 flags and `current` as 32 raw bits.
    ///
    /// # Errors
    /// [`ErrorKind::NotIncreasing`] unless `previous < current`, [`ErrorKind::BufferFull`].
    fn write_int_relative(&mut self, previous: i32, current: i32) -> Result<()> {
        let start = self.bit_position();
        if current <= previous {
            return Err(Error::new(
                ErrorKind::NotIncreasing {
                    previous: previous as i64,
                    current: current as i64,
                },
                start,
            ));
        }
        let d = current.wrapping_sub(previous) as u32;
        check_room(self, relative_bits(d) as u64)?;
        self.put_bits_bounded((d == 1) as u64, 1)?;
        if d != 1 {
            let mut low = 2;
            let mut done = false;
            for (high, bits) in RELATIVE_TIERS {
                let here = d <= high;
                self.put_bits_bounded(here as u64, 1)?;
                if here {
                    self.put_bits_bounded((d - low) as u64, bits)?;
                    done = true;
                    break;
                }
                low = high + 1;
            }
            if !done {
                self.put_bits_bounded(current as u32 as u64, 32)?;
            }
        }
        self.trace(start, TraceValue::Int(current as i128));
        Ok(())
    }

    /// A serialize check: the 32-bit `magic` value, so that the reader can tell where
    /// a desynchronisation started (see [`crate::schema::magic`]).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    #[inline]
    fn write_check(&mut self, magic: u32) -> Result<()> {
        let start = self.bit_position();
        self.put_bits_bounded(magic as u64, 32)?;
        self.trace(start, TraceValue::Check(magic));
        Ok(())
    }

    /// An enum tag in `bits_required(0, variants - 1)` bits.
    ///
    /// # Errors
    /// [`ErrorKind::UnknownTag`] when `tag >= variants`, [`ErrorKind::BufferFull`].
    #[inline(always)]
    fn write_tag(&mut self, tag: u32, variants: u32) -> Result<()> {
        let start = self.bit_position();
        if tag >= variants {
            return Err(Error::new(
                ErrorKind::UnknownTag {
                    tag: tag as u64,
                    variants: variants as u64,
                },
                start,
            ));
        }
        self.put_bits_bounded(tag as u64, tag_bits(variants))?;
        self.trace(start, TraceValue::Tag(tag));
        Ok(())
    }

    /// Any [`NetSerialize`] value: `value.encode(self)`.
    ///
    /// # Errors
    /// Whatever the value's encoder returns.
    #[inline]
    fn write_value<T: NetSerialize>(&mut self, value: &T) -> Result<()> {
        value.encode(self)
    }

    /// A bounded sequence: its length as `int(0, max_len)`, then each element.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], or the first element's error (with its index).
    fn write_seq<T: NetSerialize>(&mut self, items: &[T], max_len: usize) -> Result<()> {
        self.write_len(items.len(), max_len)?;
        for (i, item) in items.iter().enumerate() {
            encode_element(self, i, |e| item.encode(e))?;
        }
        Ok(())
    }

    /// An `Option`: a presence bit, then the value when present.
    ///
    /// # Errors
    /// Whatever the value's encoder returns.
    fn write_option<T: NetSerialize>(&mut self, value: Option<&T>) -> Result<()> {
        self.write_bool(value.is_some())?;
        match value {
            Some(v) => v.encode(self),
            None => Ok(()),
        }
    }

    /// A subset of the elements `0..len`, as "Serializing Array Subsets" describes.
    /// `changed(i)` says whether element `i` is sent; `write_item` writes it.
    ///
    /// One bit picks the cheaper of the article's two encodings, measured exactly:
    /// `0`, then a bit per element (the many-changed case); or `1`, then each sent index
    /// relative to the previous one with [`Encoder::write_int_relative`] (starting from
    /// -1), each followed by its element, ending with the sentinel index `len` (the
    /// few-changed case).
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`] when `len > i32::MAX as usize`, or whatever
    /// `write_item` returns.
    fn write_subset<F, W>(&mut self, len: usize, mut changed: F, mut write_item: W) -> Result<()>
    where
        F: FnMut(usize) -> bool,
        W: FnMut(&mut Self, usize) -> Result<()>,
    {
        let start = self.bit_position();
        if len > i32::MAX as usize {
            return Err(Error::new(
                ErrorKind::LengthTooLong {
                    len: len as u64,
                    max: i32::MAX as u64,
                },
                start,
            ));
        }
        // Index cost of each encoding; element costs are the same in both.
        let mut sparse = 0u64;
        let mut previous = -1i64;
        for i in 0..len {
            if changed(i) {
                sparse += relative_bits((i as i64 - previous) as u32) as u64;
                previous = i as i64;
            }
        }
        sparse += relative_bits((len as i64 - previous) as u32) as u64;
        let use_sparse = sparse < len as u64;
        self.write_bool(use_sparse)?;
        let mut previous = -1i32;
        for i in 0..len {
            let send = changed(i);
            if use_sparse {
                if !send {
                    continue;
                }
                self.write_int_relative(previous, i as i32)?;
                previous = i as i32;
            } else {
                self.write_bool(send)?;
                if !send {
                    continue;
                }
            }
            encode_element(self, i, |e| write_item(e, i))?;
        }
        if use_sparse {
            self.write_int_relative(previous, len as i32)?;
        }
        Ok(())
    }
}

/// The reading side of a stream: every primitive, each returning the value read and
/// refusing anything outside its bounds. Implemented by [`ReadStream`].
///
/// ```
/// use netser::{Decoder, ErrorKind, ReadStream};
/// // 0b1111 in 4 bits is 15, but the range 0..=10 only goes to 10: refused.
/// let mut r = ReadStream::new(&[0b1111]);
/// let e = r.read_int::<u8>(0, 10).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }));
/// ```
pub trait Decoder: Sized {
    /// The tracer events go to ([`NoTrace`] by default).
    type Tracer: Tracer;

    /// Whether derived code may read a run of fixed-width fields as a few packed reads
    /// (`bits::run`) instead of field by field: only with no tracer to feed.
    #[doc(hidden)]
    const PACKS_RUNS: bool = false;

    /// Reads `bits` (0..=64) bits, without tracing.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`] or [`ErrorKind::EndOfBuffer`].
    fn get_bits(&mut self, bits: u32) -> Result<u64>;

    /// Fills `words` with 64-bit reads, then reads and returns `last_bits` (`< 64`)
    /// more bits, after one check of the bits remaining for all of them; what derived
    /// code reads a packed run of fields with (`bits::run`).
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`]; nothing is read.
    #[doc(hidden)]
    #[inline(always)]
    fn get_words(&mut self, words: &mut [u64], last_bits: u32) -> Result<u64> {
        check_remaining(self, words.len() as u64 * 64 + last_bits as u64)?;
        for w in words.iter_mut() {
            *w = self.get_bits(64)?;
        }
        self.get_bits(last_bits)
    }

    /// Skips the padding to the next byte boundary.
    ///
    /// # Errors
    /// [`ErrorKind::NonZeroPadding`] or [`ErrorKind::EndOfBuffer`].
    fn read_align(&mut self) -> Result<()>;

    /// Aligns, then fills `out` with raw bytes.
    ///
    /// # Errors
    /// As [`Decoder::read_align`]; [`ErrorKind::EndOfBuffer`] when too few bytes remain.
    fn read_bytes(&mut self, out: &mut [u8]) -> Result<()>;

    /// Bits read so far.
    fn bit_position(&self) -> u64;

    /// Bits left.
    fn bits_remaining(&self) -> u64;

    /// The stream's tracer.
    fn tracer(&mut self) -> &mut Self::Tracer;

    /// Records `value` as the primitive that took bits `start..` up to the position now.
    #[inline(always)]
    fn trace(&mut self, start: u64, value: TraceValue<'_>) {
        let end = self.bit_position();
        self.tracer().value(start, end, value);
    }

    /// Reads `bits` (0..=64) raw bits, traced.
    ///
    /// # Errors
    /// As [`Decoder::get_bits`].
    #[inline]
    fn read_bits(&mut self, bits: u32) -> Result<u64> {
        let start = self.bit_position();
        let v = self.get_bits(bits)?;
        self.trace(start, TraceValue::Bits(v));
        Ok(v)
    }

    /// A bool, 1 bit.
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_bool(&mut self) -> Result<bool> {
        let start = self.bit_position();
        let v = self.get_bits(1)? != 0;
        self.trace(start, TraceValue::Bool(v));
        Ok(v)
    }

    /// An integer in `min..=max` (see [`Encoder::write_int`]).
    ///
    /// # Errors
    /// [`ErrorKind::OutOfRange`] when the offset read is above `max - min`,
    /// [`ErrorKind::InvalidRange`], [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_int<I: RangedInt>(&mut self, min: I, max: I) -> Result<I> {
        let start = self.bit_position();
        if min > max {
            return Err(Error::new(
                ErrorKind::InvalidRange {
                    min: min.to_num(),
                    max: max.to_num(),
                },
                start,
            ));
        }
        let offset = get_offset(self, I::range_bits(min, max))?;
        if offset > max.offset_from(min) {
            return Err(headroom_error(offset, min, max, start));
        }
        let v = I::from_offset(min, offset);
        self.trace(start, trace_int(v));
        Ok(v)
    }

    /// An unsigned integer in exactly `bits` bits (see [`Encoder::write_uint_bits`]).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`] above the type's width (or a negative type's sign
    /// bit), [`ErrorKind::EndOfBuffer`].
    #[inline]
    fn read_uint_bits<I: RangedInt>(&mut self, bits: u32) -> Result<I> {
        let start = self.bit_position();
        let signed = I::MIN < I::ZERO;
        if bits > I::WIDTH - signed as u32 {
            return Err(Error::new(ErrorKind::InvalidBitCount { bits }, start));
        }
        let raw = get_offset(self, bits)?;
        let v = I::from_offset(I::ZERO, raw);
        self.trace(start, trace_int(v));
        Ok(v)
    }

    /// A fixed-point number's raw value (see [`Encoder::write_fixed`]).
    ///
    /// # Errors
    /// As [`Decoder::read_int`], and [`ErrorKind::InvalidRange`] for bounds that overflow.
    #[inline]
    fn read_fixed<I: RangedInt>(
        &mut self,
        fraction_bits: u32,
        min_units: I,
        max_units: I,
    ) -> Result<I> {
        let (min, max) = fixed_bounds(fraction_bits, min_units, max_units, self.bit_position())?;
        self.read_int(min, max)
    }

    /// A float32 from its 32 raw bits.
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_f32(&mut self) -> Result<f32> {
        let start = self.bit_position();
        let v = f32::from_bits(self.get_bits(32)? as u32);
        self.trace(start, TraceValue::F32(v));
        Ok(v)
    }

    /// A float64 from its 64 raw bits.
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`].
    #[inline]
    fn read_f64(&mut self) -> Result<f64> {
        let start = self.bit_position();
        let v = f64::from_bits(self.get_bits(64)?);
        self.trace(start, TraceValue::F64(v));
        Ok(v)
    }

    /// A compressed float quantized by `q`.
    ///
    /// # Errors
    /// [`ErrorKind::QuantizedOutOfRange`] when the integer is above
    /// `q.max_integer_value()` (reported as the value it stands for, in the units of the
    /// write error), [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_compressed_f32(&mut self, q: &Quantize) -> Result<f32> {
        let start = self.bit_position();
        let integer = self.get_bits(q.bits())?;
        if integer > q.max_integer_value() as u64 {
            return Err(Error::new(ErrorKind::quantized_read(integer, q), start));
        }
        let v = q.dequantize(integer as u32);
        self.trace(start, TraceValue::F32(v));
        Ok(v)
    }

    /// A compressed float into an `f64` field.
    ///
    /// # Errors
    /// As [`Decoder::read_compressed_f32`].
    #[inline]
    fn read_compressed_f64(&mut self, q: &Quantize) -> Result<f64> {
        self.read_compressed_f32(q).map(f64::from)
    }

    /// A vector of compressed floats into `out`.
    ///
    /// # Errors
    /// As [`Decoder::read_compressed_f32`], with the failing component's index.
    #[inline]
    fn read_compressed_f32s(&mut self, out: &mut [f32], q: &Quantize) -> Result<()> {
        for (i, v) in out.iter_mut().enumerate() {
            *v = self.read_compressed_f32(q).map_err(|e| e.at_index(i))?;
        }
        Ok(())
    }

    /// A smallest-three quaternion (see [`Encoder::write_quat`]).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`], [`ErrorKind::EndOfBuffer`].
    #[inline]
    fn read_quat(&mut self, bits: u32) -> Result<[f32; 4]> {
        let start = self.bit_position();
        crate::quat::check_bits(bits, start)?;
        let (largest, small) = if bits <= 20 {
            let packed = self.get_bits(2 + 3 * bits)?;
            let mask = (1u64 << bits) - 1;
            let field = |k: u32| ((packed >> (2 + k * bits)) & mask) as u32;
            ((packed & 3) as u32, [field(0), field(1), field(2)])
        } else {
            let need = crate::quat::quat_bits(bits);
            check_remaining(self, need)?;
            let largest = self.get_bits(2)? as u32;
            let mut small = [0u32; 3];
            for s in small.iter_mut() {
                *s = self.get_bits(bits)? as u32;
            }
            (largest, small)
        };
        let q = crate::quat::unpack(largest, small, bits, start)?;
        self.trace(start, TraceValue::Quat(q));
        Ok(q)
    }

    /// Alignment padding, traced.
    ///
    /// # Errors
    /// As [`Decoder::read_align`].
    #[inline]
    fn align(&mut self) -> Result<()> {
        let start = self.bit_position();
        self.read_align()?;
        if self.bit_position() != start {
            self.trace(start, TraceValue::Align);
        }
        Ok(())
    }

    /// A bounded length (see [`Encoder::write_len`]).
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`] when the value read is above `max_len`,
    /// [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_len(&mut self, max_len: usize) -> Result<usize> {
        let start = self.bit_position();
        let len = get_offset(self, <usize as RangedInt>::range_bits(0, max_len))?;
        if len > max_len as u128 {
            return Err(Error::new(
                ErrorKind::LengthTooLong {
                    len: len as u64,
                    max: max_len as u64,
                },
                start,
            ));
        }
        self.trace(start, TraceValue::Len(len as usize));
        Ok(len as usize)
    }

    /// A string of at most `max_len` bytes (see [`Encoder::write_string`]). Allocates at
    /// most `min(max_len, bytes left in the packet)`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], [`ErrorKind::NonZeroPadding`],
    /// [`ErrorKind::EndOfBuffer`], [`ErrorKind::InvalidUtf8`], [`ErrorKind::NulInString`].
    fn read_string(&mut self, max_len: usize) -> Result<String> {
        let start = self.bit_position();
        let len = self.read_len(max_len)?;
        // Saturating: a 64-bit length read under a huge `max_len` must not overflow.
        let pad = self.bit_position().div_ceil(8) * 8 - self.bit_position();
        let need = (len as u64).saturating_mul(8).saturating_add(pad);
        check_remaining(self, need)?;
        let mut bytes = alloc::vec![0u8; len];
        self.read_bytes(&mut bytes)?;
        if let Some(position) = bytes.iter().position(|&b| b == 0) {
            return Err(Error::new(ErrorKind::NulInString { position }, start));
        }
        let s = String::from_utf8(bytes).map_err(|e| {
            Error::new(
                ErrorKind::InvalidUtf8 {
                    valid_up_to: e.utf8_error().valid_up_to(),
                },
                start,
            )
        })?;
        self.trace(start, TraceValue::Str(&s));
        Ok(s)
    }

    /// A wide string (see [`Encoder::write_wstring`]).
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], [`ErrorKind::EndOfBuffer`],
    /// [`ErrorKind::InvalidUtf16`] for a unit above 0xFFFF, a zero unit or an unpaired
    /// surrogate.
    fn read_wstring(&mut self, max_units: usize) -> Result<String> {
        let start = self.bit_position();
        let n = self.read_len(max_units)?;
        let wanted = (n as u64).saturating_mul(32);
        check_remaining(self, wanted)?;
        let mut units = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.bit_position();
            let u = self.get_bits(32)? as u32;
            if u == 0 || u > 0xFFFF {
                return Err(Error::new(ErrorKind::InvalidUtf16 { unit: u }, at));
            }
            units.push(u as u16);
        }
        let mut s = String::with_capacity(n);
        for (i, c) in char::decode_utf16(units.iter().copied()).enumerate() {
            match c {
                Ok(c) => s.push(c),
                Err(e) => {
                    return Err(Error::new(
                        ErrorKind::InvalidUtf16 {
                            unit: e.unpaired_surrogate() as u32,
                        },
                        start + i as u64,
                    ))
                }
            }
        }
        self.trace(start, TraceValue::Str(&s));
        Ok(s)
    }

    /// A value written by [`Encoder::write_int_relative`] after `previous`.
    ///
    /// Stricter than the reference reader: a flag-tier difference that would wrap past
    /// `i32::MAX` is refused instead of wrapping.
    ///
    /// # Errors
    /// [`ErrorKind::OutOfRange`] for a payload in a tier's headroom,
    /// [`ErrorKind::NotIncreasing`] when the result is not above `previous`,
    /// [`ErrorKind::EndOfBuffer`].
    fn read_int_relative(&mut self, previous: i32) -> Result<i32> {
        let start = self.bit_position();
        let current = if self.get_bits(1)? == 1 {
            previous.checked_add(1)
        } else {
            let mut low = 2u32;
            let mut found = None;
            for (high, bits) in RELATIVE_TIERS {
                if self.get_bits(1)? == 1 {
                    let at = self.bit_position();
                    let offset = self.get_bits(bits)? as u32;
                    if offset > high - low {
                        return Err(Error::new(
                            ErrorKind::OutOfRange {
                                value: Num::Uint((low + offset) as u128),
                                min: Num::Uint(low as u128),
                                max: Num::Uint(high as u128),
                            },
                            at,
                        ));
                    }
                    found = Some(previous.checked_add((low + offset) as i32));
                    break;
                }
                low = high + 1;
            }
            match found {
                Some(c) => c,
                None => Some(self.get_bits(32)? as u32 as i32),
            }
        };
        match current {
            Some(c) if c > previous => {
                self.trace(start, TraceValue::Int(c as i128));
                Ok(c)
            }
            other => Err(Error::new(
                ErrorKind::NotIncreasing {
                    previous: previous as i64,
                    current: other.map_or(previous as i64 + 1, |c| c as i64),
                },
                start,
            )),
        }
    }

    /// A serialize check: reads 32 bits and compares them with `magic`.
    ///
    /// # Errors
    /// [`ErrorKind::CheckMismatch`], [`ErrorKind::EndOfBuffer`].
    #[inline]
    fn read_check(&mut self, magic: u32) -> Result<()> {
        let start = self.bit_position();
        let found = self.get_bits(32)? as u32;
        if found != magic {
            return Err(Error::new(
                ErrorKind::CheckMismatch {
                    expected: magic,
                    found,
                },
                start,
            ));
        }
        self.trace(start, TraceValue::Check(found));
        Ok(())
    }

    /// An enum tag (see [`Encoder::write_tag`]).
    ///
    /// # Errors
    /// [`ErrorKind::UnknownTag`] when the tag read names no variant,
    /// [`ErrorKind::EndOfBuffer`].
    #[inline(always)]
    fn read_tag(&mut self, variants: u32) -> Result<u32> {
        let start = self.bit_position();
        let tag = self.get_bits(tag_bits(variants))?;
        if tag >= variants as u64 {
            return Err(Error::new(
                ErrorKind::UnknownTag {
                    tag,
                    variants: variants as u64,
                },
                start,
            ));
        }
        self.trace(start, TraceValue::Tag(tag as u32));
        Ok(tag as u32)
    }

    /// Any [`NetSerialize`] value: `T::decode(self)`.
    ///
    /// # Errors
    /// Whatever the type's decoder returns.
    #[inline]
    fn read_value<T: NetSerialize>(&mut self) -> Result<T> {
        T::decode(self)
    }

    /// A bounded sequence (see [`Encoder::write_seq`]). Never reserves more than
    /// `max_len` elements, nor more than the bits left could hold.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], or the first element's error with its index.
    fn read_seq<T: NetSerialize>(&mut self, max_len: usize) -> Result<Vec<T>> {
        let len = self.read_len(max_len)?;
        let mut items = Vec::with_capacity(seq_capacity::<T>(len, self.bits_remaining()));
        for i in 0..len {
            items.push(decode_element(self, i, T::decode)?);
        }
        Ok(items)
    }

    /// An `Option` (see [`Encoder::write_option`]).
    ///
    /// # Errors
    /// Whatever the value's decoder returns.
    fn read_option<T: NetSerialize>(&mut self) -> Result<Option<T>> {
        if self.read_bool()? {
            T::decode(self).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A subset written by [`Encoder::write_subset`]: calls `read_item(self, i)` for each
    /// element sent, in increasing order. Runs at most `len + 1` steps whatever the input.
    ///
    /// # Errors
    /// [`ErrorKind::OutOfRange`] for an index at or beyond `len`, the errors of
    /// [`Decoder::read_int_relative`], or whatever `read_item` returns.
    fn read_subset<R>(&mut self, len: usize, mut read_item: R) -> Result<()>
    where
        R: FnMut(&mut Self, usize) -> Result<()>,
    {
        let start = self.bit_position();
        if len > i32::MAX as usize {
            return Err(Error::new(
                ErrorKind::LengthTooLong {
                    len: len as u64,
                    max: i32::MAX as u64,
                },
                start,
            ));
        }
        let sparse = self.read_bool()?;
        if !sparse {
            for i in 0..len {
                if self.read_bool()? {
                    decode_element(self, i, |d| read_item(d, i))?;
                }
            }
            return Ok(());
        }
        let mut previous = -1i32;
        loop {
            let at = self.bit_position();
            let i = self.read_int_relative(previous)?;
            if i as usize == len {
                return Ok(());
            }
            if i as usize > len {
                return Err(Error::new(
                    ErrorKind::OutOfRange {
                        value: Num::Int(i as i128),
                        min: Num::Int(0),
                        max: Num::Int(len as i128),
                    },
                    at,
                ));
            }
            decode_element(self, i as usize, |d| read_item(d, i as usize))?;
            previous = i;
        }
    }
}

/// Capacity to reserve for `len` elements of `T` with `bits_left` bits left: never more
/// than the remaining bits could hold, so a lying length cannot force a big allocation.
#[inline]
pub(crate) fn seq_capacity<T: NetSerialize>(len: usize, bits_left: u64) -> usize {
    // Elements of no bits: the whole (bounded) length, so pushing never regrows.
    match T::MIN_BITS {
        0 => len,
        per => len.min((bits_left / per).min(usize::MAX as u64) as usize),
    }
}

/// Raw bounds of a fixed-point format: the unit bounds times `2^fraction_bits`.
#[inline]
fn fixed_bounds<I: RangedInt>(
    fraction_bits: u32,
    min_units: I,
    max_units: I,
    bit: u64,
) -> Result<(I, I)> {
    match (
        min_units.checked_scale(fraction_bits),
        max_units.checked_scale(fraction_bits),
    ) {
        (Some(min), Some(max)) if min <= max => Ok((min, max)),
        _ => Err(Error::new(
            ErrorKind::InvalidRange {
                min: min_units.to_num(),
                max: max_units.to_num(),
            },
            bit,
        )),
    }
}

#[inline(always)]
fn trace_int<I: RangedInt>(v: I) -> TraceValue<'static> {
    match v.to_num() {
        Num::Int(i) => TraceValue::Int(i),
        Num::Uint(u) => TraceValue::Uint(u),
        Num::Float(f) => TraceValue::F64(f),
    }
}

#[inline(always)]
fn tag_bits(variants: u32) -> u32 {
    crate::bits::bits_required(0, variants.saturating_sub(1) as u64)
}

/// Bits `write_int_relative` takes for a difference `d >= 1`.
pub(crate) fn relative_bits(d: u32) -> u32 {
    if d == 1 {
        return 1;
    }
    let mut flags = 1;
    for (high, bits) in RELATIVE_TIERS {
        flags += 1;
        if d <= high {
            return flags + bits;
        }
    }
    flags + 32
}

#[cold]
pub(crate) fn range_error<I: RangedInt>(value: I, min: I, max: I, bit: u64) -> Error {
    let kind = if min > max {
        ErrorKind::InvalidRange {
            min: min.to_num(),
            max: max.to_num(),
        }
    } else {
        ErrorKind::OutOfRange {
            value: value.to_num(),
            min: min.to_num(),
            max: max.to_num(),
        }
    };
    Error::new(kind, bit)
}

#[cold]
pub(crate) fn headroom_error<I: RangedInt>(offset: u128, min: I, max: I, bit: u64) -> Error {
    let value = match min.to_num() {
        Num::Int(m) => Num::Int(m.wrapping_add(offset as i128)),
        Num::Uint(m) => Num::Uint(m.wrapping_add(offset)),
        f => f,
    };
    Error::new(
        ErrorKind::OutOfRange {
            value,
            min: min.to_num(),
            max: max.to_num(),
        },
        bit,
    )
}

/// Refuses up front a multi-part primitive that would not fit, so that nothing of it
/// is written.
#[inline(always)]
fn check_room<E: Encoder>(e: &mut E, bits: u64) -> Result<()> {
    let remaining = e.bits_available();
    if bits > remaining {
        return Err(Error::new(
            ErrorKind::BufferFull {
                wanted: bits,
                remaining,
            },
            e.bit_position(),
        ));
    }
    Ok(())
}

/// Encodes element `i` of a collection: its index on the trace path and on the error.
#[inline(always)]
pub(crate) fn encode_element<E: Encoder>(
    e: &mut E,
    i: usize,
    encode: impl FnOnce(&mut E) -> Result<()>,
) -> Result<()> {
    e.tracer().enter(Segment::Index(i));
    let written = encode(e);
    // Unwound on error too, so a trace stays readable after a failure.
    e.tracer().exit();
    written.map_err(|err| err.at_index(i))
}

/// Decodes element `i` of a collection, as [`encode_element`] encodes it.
#[inline(always)]
pub(crate) fn decode_element<D: Decoder, T>(
    d: &mut D,
    i: usize,
    decode: impl FnOnce(&mut D) -> Result<T>,
) -> Result<T> {
    d.tracer().enter(Segment::Index(i));
    let read = decode(d);
    d.tracer().exit();
    read.map_err(|err| err.at_index(i))
}

/// Refuses up front a read of `bits` that the input cannot hold, so that a lying length
/// costs nothing and a multi-part primitive consumes nothing.
#[inline(always)]
fn check_remaining<D: Decoder>(d: &mut D, bits: u64) -> Result<()> {
    let remaining = d.bits_remaining();
    if bits > remaining {
        return Err(Error::new(
            ErrorKind::EndOfBuffer {
                wanted: bits,
                remaining,
            },
            d.bit_position(),
        ));
    }
    Ok(())
}

/// Writes an offset of up to 128 bits (two 64-bit parts, low first: identical on the
/// wire to one piece, since packing is LSB-first).
#[inline(always)]
fn put_offset<E: Encoder>(e: &mut E, offset: u128, bits: u32) -> Result<()> {
    // Offsets are bounded by their range, so they fit their width.
    if bits <= 64 {
        e.put_bits_bounded(offset as u64, bits)
    } else {
        e.put_bits_bounded(offset as u64, 64)?;
        e.put_bits_bounded((offset >> 64) as u64, bits - 64)
    }
}

#[inline(always)]
fn get_offset<D: Decoder>(d: &mut D, bits: u32) -> Result<u128> {
    if bits <= 64 {
        d.get_bits(bits).map(u128::from)
    } else {
        check_remaining(d, bits as u64)?;
        let low = d.get_bits(64)? as u128;
        Ok(low | (d.get_bits(bits - 64)? as u128) << 64)
    }
}

/// The write stream: packs bits into a caller's buffer, with no allocation.
///
/// ```
/// use netser::{Encoder, WriteStream};
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::new(&mut buf);
/// w.write_bits(5, 3)?;
/// w.write_bits(1000, 10)?;
/// w.write_bits(0xABCDEF, 24)?;
/// let len = w.finish();
/// assert_eq!(&buf[..len], &[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug)]
pub struct WriteStream<'a, T: Tracer = NoTrace> {
    bits: BitWriter<'a>,
    tracer: T,
}

impl<'a> WriteStream<'a> {
    /// A write stream over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer: NoTrace,
        }
    }
}

impl<'a, T: Tracer> WriteStream<'a, T> {
    /// A write stream over `buf` that reports to `tracer` (see [`crate::trace`]).
    pub fn with_tracer(buf: &'a mut [u8], tracer: T) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer,
        }
    }

    /// Flushes and returns the packet length in bytes, `ceil(bits / 8)`.
    pub fn finish(mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the length so far, keeping the stream open.
    pub fn flush(&mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the tracer.
    pub fn into_tracer(mut self) -> T {
        self.bits.flush();
        self.tracer
    }
}

impl<T: Tracer> Encoder for WriteStream<'_, T> {
    type Tracer = T;
    const PACKS_RUNS: bool = T::IGNORES_EVENTS;
    #[inline(always)]
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        self.bits.write_bits(value, bits)
    }
    #[inline(always)]
    fn put_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        self.bits.write_bits_bounded(value, bits)
    }
    #[inline(always)]
    fn put_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        self.bits.write_words(words, last, last_bits)
    }
    #[inline]
    fn write_align(&mut self) -> Result<()> {
        self.bits.align()
    }
    #[inline]
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let start = self.bits.bits_written();
        self.bits.write_bytes(data)?;
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.bits.bits_written(), TraceValue::Bytes(data));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.bits.bits_written()
    }
    #[inline(always)]
    fn bits_available(&self) -> u64 {
        self.bits.bits_available()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}

/// The measure stream: counts the bits a value would take, exactly, without writing.
///
/// Unlike the reference (which charges 7 bits for every align), it knows the position,
/// so alignment is counted exactly and `bits()` equals what a write stream writes.
///
/// ```
/// use netser::{Encoder, MeasureStream};
/// let mut m = MeasureStream::new();
/// m.write_bits(0xff, 8)?;
/// m.align()?;
/// m.write_bits(0xff, 8)?;
/// assert_eq!(m.bits(), 16); // the reference's MeasureStream says 23
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Default, Clone)]
pub struct MeasureStream<T: Tracer = NoTrace> {
    counter: BitCounter,
    tracer: T,
}

impl MeasureStream {
    /// An empty measure stream.
    pub fn new() -> Self {
        MeasureStream {
            counter: BitCounter::default(),
            tracer: NoTrace,
        }
    }
}

impl<T: Tracer> MeasureStream<T> {
    /// A measure stream that reports to `tracer`.
    pub fn with_tracer(tracer: T) -> Self {
        MeasureStream {
            counter: BitCounter::default(),
            tracer,
        }
    }

    /// Bits counted so far.
    pub fn bits(&self) -> u64 {
        self.counter.bits()
    }

    /// Bytes a write stream would produce: `ceil(bits / 8)`.
    pub fn bytes(&self) -> u64 {
        self.counter.bits().div_ceil(8)
    }

    /// Returns the tracer.
    pub fn into_tracer(self) -> T {
        self.tracer
    }
}

impl<T: Tracer> Encoder for MeasureStream<T> {
    type Tracer = T;
    #[inline(always)]
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        // Same contract as the writer, so measuring finds every error writing would.
        if bits > 64 {
            return Err(Error::new(
                ErrorKind::InvalidBitCount { bits },
                self.counter.bits(),
            ));
        }
        if bits < 64 && value >> bits != 0 {
            return Err(Error::new(
                ErrorKind::ValueTooWide {
                    value: value as u128,
                    bits,
                },
                self.counter.bits(),
            ));
        }
        self.counter.add(bits as u64);
        Ok(())
    }
    #[inline(always)]
    fn put_bits_bounded(&mut self, _: u64, bits: u32) -> Result<()> {
        self.counter.add(bits as u64);
        Ok(())
    }
    #[inline(always)]
    fn write_align(&mut self) -> Result<()> {
        self.counter.align();
        Ok(())
    }
    #[inline]
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let start = self.counter.bits();
        self.counter.align();
        self.counter.add(data.len() as u64 * 8);
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.counter.bits(), TraceValue::Bytes(data));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.counter.bits()
    }
    #[inline(always)]
    fn bits_available(&self) -> u64 {
        u64::MAX - self.counter.bits()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}

/// The read stream: unpacks bits from any byte slice, checking every value.
///
/// ```
/// use netser::{Decoder, ReadStream};
/// let mut r = ReadStream::new(&[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// assert_eq!(r.read_bits(3)?, 5);
/// assert_eq!(r.read_int(0u32, 1023)?, 1000);
/// assert_eq!(r.read_bits(24)?, 0xABCDEF);
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReadStream<'a, T: Tracer = NoTrace> {
    bits: BitReader<'a>,
    tracer: T,
}

impl<'a> ReadStream<'a> {
    /// A read stream over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        ReadStream {
            bits: BitReader::new(bytes),
            tracer: NoTrace,
        }
    }
}

impl<'a, T: Tracer> ReadStream<'a, T> {
    /// A read stream over `bytes` that reports to `tracer`.
    pub fn with_tracer(bytes: &'a [u8], tracer: T) -> Self {
        ReadStream {
            bits: BitReader::new(bytes),
            tracer,
        }
    }

    /// Bytes touched so far: `ceil(bits read / 8)`.
    pub fn bytes_read(&self) -> usize {
        self.bits.bits_read().div_ceil(8) as usize
    }

    /// The whole input.
    pub fn input(&self) -> &'a [u8] {
        self.bits.bytes()
    }

    /// Returns the tracer.
    pub fn into_tracer(self) -> T {
        self.tracer
    }
}

impl<T: Tracer> Decoder for ReadStream<'_, T> {
    type Tracer = T;
    const PACKS_RUNS: bool = T::IGNORES_EVENTS;
    #[inline(always)]
    fn get_bits(&mut self, bits: u32) -> Result<u64> {
        self.bits.read_bits(bits)
    }
    #[inline(always)]
    fn get_words(&mut self, words: &mut [u64], last_bits: u32) -> Result<u64> {
        self.bits.read_words(words, last_bits)
    }
    #[inline]
    fn read_align(&mut self) -> Result<()> {
        self.bits.align()
    }
    #[inline]
    fn read_bytes(&mut self, out: &mut [u8]) -> Result<()> {
        let start = self.bits.bits_read();
        self.bits.read_bytes(out)?;
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.bits.bits_read(), TraceValue::Bytes(out));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.bits.bits_read()
    }
    #[inline(always)]
    fn bits_remaining(&self) -> u64 {
        self.bits.bits_remaining()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    #[test]
    fn a_string_that_does_not_fit_writes_nothing() {
        let mut buf = [0u8; 4];
        let mut w = WriteStream::new(&mut buf);
        w.write_bits(1, 3).unwrap();
        let e = w.write_string("hello", 15).unwrap_err();
        // 4 bits of length, 1 of padding, 40 of bytes, with 29 bits of room.
        assert_eq!(
            e.kind(),
            &ErrorKind::BufferFull {
                wanted: 45,
                remaining: 29
            }
        );
        assert_eq!(w.bit_position(), 3);
        w.write_string("hi", 15).unwrap();
        assert_eq!(w.bit_position(), 24);
    }

    #[test]
    fn the_trace_path_unwinds_when_an_element_fails() {
        let mut buf = [0u8; 16];
        let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
        // 128 bits of room: the length (4 bits) and three u32s fit, the fourth does not.
        let items = [7u32; 5];
        let e = w.write_seq(&items, 8).unwrap_err();
        assert_eq!(e.path(), "[3]");
        w.write_bool(true).unwrap();
        let trace = w.into_tracer();
        assert_eq!(trace.entries().last().unwrap().path, "");
    }

    #[test]
    fn measure_counts_what_write_writes() {
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        let mut m = MeasureStream::new();
        fn ops<E: Encoder>(e: &mut E) -> Result<()> {
            e.write_bits(3, 2)?;
            e.write_string("abc", 10)?;
            e.write_quat([0.0, 0.0, 0.0, 1.0], 9)?;
            e.write_int_relative(5, 300)?;
            e.write_subset(100, |i| i % 40 == 0, |e, i| e.write_int(i as u32, 0, 99))?;
            e.align()
        }
        ops(&mut w).unwrap();
        ops(&mut m).unwrap();
        assert_eq!(w.bit_position(), m.bits());
    }

    #[test]
    fn read_subset_is_bounded_whatever_the_input() {
        // All ones: sparse mode, then +1 steps forever; the reader stops at `len`.
        let bytes = [0xffu8; 64];
        let mut seen = 0;
        let r = ReadStream::new(&bytes).read_subset(10, |_, _| {
            seen += 1;
            Ok(())
        });
        assert!(r.is_ok());
        assert_eq!(seen, 10);
    }
}
