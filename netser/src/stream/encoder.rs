//! The [`Encoder`] trait: every primitive's writing side, shared by
//! [`WriteStream`](super::WriteStream) and [`MeasureStream`](super::MeasureStream).

use super::{
    encode_element, fixed_bounds, range_error, relative_bits, tag_bits, trace_int, RELATIVE_TIERS,
};
use crate::error::{Error, ErrorKind, Result};
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::trace::{TraceValue, Tracer};
use crate::NetSerialize;
// Named in the docs only.
#[cfg(doc)]
use crate::{trace::NoTrace, Decoder, MeasureStream, WriteStream};

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
    /// writes (`stream::run`) instead of field by field: only for a stream that writes
    /// and has no tracer to feed.
    #[doc(hidden)]
    const PACKS_RUNS: bool = false;

    /// Writes the low `bits` (0..=64) bits of `value`, without tracing.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`], [`ErrorKind::ValueTooWide`] or
    /// [`ErrorKind::BufferFull`].
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, WriteStream};
    /// let mut buf = [0u8; 2];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.put_bits(0b101, 3)?;
    /// let e = w.put_bits(0b1_0000, 4).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::ValueTooWide { value: 16, bits: 4 });
    /// assert_eq!(w.bit_position(), 3);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()>;

    /// Writes `value`, which the caller guarantees is below `2^bits` with `bits <= 64`
    /// (a bounded offset, a quantized float, a tag): only the room is checked. The
    /// primitives use it to skip a check their own bounds already made.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, WriteStream};
    /// let mut buf = [0u8; 1];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.put_bits_bounded(0b11, 2)?;
    /// let e = w.put_bits_bounded(0, 7).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::BufferFull { .. }));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    fn put_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        self.put_bits(value, bits)
    }

    /// Writes whole 64-bit `words`, then the low `last_bits` (`< 64`) bits of `last`
    /// (`last < 2^last_bits`), after one room check for all of them; what derived code
    /// writes a packed run of fields with (`stream::run`).
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

    /// The bits written but not yet stored and their count (`< 64`), when the stream
    /// packs whole 64-bit words (derived code's batch path starts its words with them);
    /// `None` (the default) when it does not.
    #[doc(hidden)]
    #[inline(always)]
    fn pending_bits(&self) -> Option<(u64, u32)> {
        None
    }

    /// Stores whole stream words that begin with the [`Encoder::pending_bits`], then
    /// keeps `last` as the `last_bits` pending bits (one room check). Only for a stream
    /// whose `pending_bits` is `Some`; the default writes the words after the pending
    /// bits as [`Encoder::put_words`] would.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`]; nothing is written.
    #[doc(hidden)]
    #[inline(always)]
    fn put_aligned_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        let _ = (words, last, last_bits);
        Err(Error::new(
            ErrorKind::Custom("this stream does not take aligned words"),
            self.bit_position(),
        ))
    }

    /// The stream's buffer from the word holding the [`Encoder::pending_bits`] on, and
    /// those bits, for derived code that stores whole stream words in place (it leaves
    /// every byte past its last bit as it was), then calls
    /// [`Encoder::take_lent_words`]. `None` (the default) when the stream has no such
    /// buffer.
    #[doc(hidden)]
    #[inline(always)]
    fn lend_words(&mut self) -> Option<(&mut [u8], u64, u32)> {
        None
    }

    /// After [`Encoder::lend_words`]: the stream is now `bits` long counted from the
    /// start of the lent word, `last` its pending bits.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`] when that ends past the buffer or before the position
    /// (nothing changes); an error for a stream that lends no words.
    #[doc(hidden)]
    #[inline(always)]
    fn take_lent_words(&mut self, bits: u64, last: u64) -> Result<()> {
        let _ = (bits, last);
        Err(Error::new(
            ErrorKind::Custom("this stream lends no words"),
            self.bit_position(),
        ))
    }

    /// Writes zero bits up to the next byte boundary.
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_bool(true)?;
    /// m.write_align()?;
    /// assert_eq!(m.bits(), 8);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn write_align(&mut self) -> Result<()>;

    /// Aligns, then writes `data` as raw bytes (the length is not sent).
    ///
    /// # Errors
    /// [`ErrorKind::BufferFull`].
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_bool(true)?;
    /// w.write_bytes(&[0xab, 0xcd])?;
    /// let len = w.finish();
    /// assert_eq!(&buf[..len], &[0x01, 0xab, 0xcd]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn write_bytes(&mut self, data: &[u8]) -> Result<()>;

    /// Bits written (or counted) so far.
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_int(5u8, 0, 9)?;
    /// assert_eq!(m.bit_position(), 4);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn bit_position(&self) -> u64;

    /// Room left, in bits (`u64::MAX` for a measure stream).
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_bool(true)?;
    /// assert_eq!(w.bits_available(), 31);
    /// assert_eq!(MeasureStream::new().bits_available(), u64::MAX);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn bits_available(&self) -> u64;

    /// The stream's tracer.
    ///
    /// ```
    /// use netser::{trace::Trace, Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    /// w.write_bool(true)?;
    /// assert_eq!(w.tracer().entries().len(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn tracer(&mut self) -> &mut Self::Tracer;

    /// Records `value` as the primitive that took bits `start..` up to the position now.
    ///
    /// ```
    /// use netser::trace::{Trace, TraceValue};
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    /// // A hand-written primitive: untraced bits, then one trace entry for them.
    /// let start = w.bit_position();
    /// w.put_bits(0b101, 3)?;
    /// w.trace(start, TraceValue::Bits(0b101));
    /// let e = &w.tracer().entries()[0];
    /// assert_eq!((e.start, e.bits), (0, 3));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    fn trace(&mut self, start: u64, value: TraceValue<'_>) {
        let end = self.bit_position();
        self.tracer().value(start, end, value);
    }

    /// Writes the low `bits` (0..=64) bits of `value`, traced.
    ///
    /// # Errors
    /// As [`Encoder::put_bits`].
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 2];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_bits(0xabc, 12)?;
    /// assert_eq!(w.finish(), 2);
    /// assert_eq!(buf, [0xbc, 0x0a]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 1];
    /// let mut w = WriteStream::new(&mut buf);
    /// for b in [true, false, true] {
    ///     w.write_bool(b)?;
    /// }
    /// assert_eq!(w.finish(), 1);
    /// assert_eq!(buf, [0b101]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_int(-3i32, -10, 10)?; // 21 values: 5 bits, sent as -3 - -10 = 7
    /// assert_eq!(w.bit_position(), 5);
    /// let e = w.write_int(11i32, -10, 10).unwrap_err();
    /// assert_eq!(e.to_string(), "value 11 out of range -10..=10 at bit 5");
    /// w.finish();
    /// assert_eq!(buf[0], 7);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_uint_bits(5u32, 3)?;
    /// assert_eq!(m.bits(), 3);
    /// let e = m.write_uint_bits(8u32, 3).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::ValueTooWide { value: 8, bits: 3 });
    /// let e = m.write_uint_bits(1u8, 9).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::InvalidBitCount { bits: 9, min: 0, max: 8 });
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    fn write_uint_bits<I: RangedInt>(&mut self, value: I, bits: u32) -> Result<()> {
        let start = self.bit_position();
        // As the reader: a signed type's sign bit is never part of the field.
        let max = I::WIDTH - (I::MIN < I::ZERO) as u32;
        if bits > max {
            return Err(Error::new(
                ErrorKind::InvalidBitCount { bits, min: 0, max },
                start,
            ));
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
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// // 2.5 with 4 fraction bits is 40, in -8.0..=8.0 (raw -128..=128: 9 bits).
    /// m.write_fixed(40i32, 4, -8, 8)?;
    /// assert_eq!(m.bits(), 9);
    /// assert!(m.write_fixed(129i32, 4, -8, 8).is_err()); // 8.0625 is above 8.0
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_f32(1.5)?;
    /// assert_eq!(w.finish(), 4);
    /// assert_eq!(buf, 1.5f32.to_bits().to_le_bytes());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_f64(-0.1)?;
    /// assert_eq!(w.finish(), 8);
    /// assert_eq!(buf, (-0.1f64).to_bits().to_le_bytes());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, Quantize, ReadStream, WriteStream};
    /// let q = Quantize::new(-1.0, 1.0, 0.01); // 200 steps: 8 bits
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_compressed_f32(0.5, &q)?;
    /// assert_eq!(w.bit_position(), 8);
    /// let e = w.write_compressed_f32(1.5, &q).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     "value 1.5 out of range -1..=1 (quantized in steps of 0.01) at bit 8"
    /// );
    /// // A clamping quantization sends the nearest end instead.
    /// w.write_compressed_f32(1.5, &q.clamping())?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// assert_eq!(r.read_compressed_f32(&q)?, 0.5);
    /// assert_eq!(r.read_compressed_f32(&q)?, 1.0);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, Quantize, ReadStream, WriteStream};
    /// let q = Quantize::new(-1.0, 1.0, 0.01);
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_compressed_f64(-0.25, &q)?;
    /// assert!(w.write_compressed_f64(1e300, &q).is_err());
    /// let len = w.finish();
    /// assert_eq!(ReadStream::new(&buf[..len]).read_compressed_f64(&q)?, -0.25);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream, Quantize};
    /// let q = Quantize::new(0.0, 1.0, 0.5); // 2 steps: 2 bits
    /// let mut m = MeasureStream::new();
    /// m.write_compressed_f32s(&[0.0, 0.5, 1.0], &q)?;
    /// assert_eq!(m.bits(), 6);
    /// let e = m.write_compressed_f32s(&[0.5, 2.0], &q).unwrap_err();
    /// assert_eq!(e.path(), "[1]");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 20` ([`crate::quat::MAX_BITS`]),
    /// [`ErrorKind::BufferFull`].
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ErrorKind, ReadStream, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_quat([0.0, 0.0, 0.0, 1.0], 9)?; // 2 + 3 * 9 bits
    /// assert_eq!(w.bit_position(), 29);
    /// let e = w.write_quat([0.0; 4], 9).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::InvalidQuaternion);
    /// let len = w.finish();
    /// let back = ReadStream::new(&buf[..len]).read_quat(9)?;
    /// assert!((back[3] - 1.0).abs() < 1e-3 && back[0].abs() < 1e-2);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_bool(true)?;
    /// m.align()?;
    /// assert_eq!(m.bits(), 8);
    /// m.align()?; // already aligned: nothing
    /// assert_eq!(m.bits(), 8);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_len(3, 10)?; // 0..=10: 4 bits
    /// assert_eq!(m.bits(), 4);
    /// let e = m.write_len(11, 10).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::LengthTooLong { len: 11, max: 10 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_string("hi", 15)?; // 4 bits of length, 4 of padding, 2 bytes
    /// let e = w.write_string("a\0b", 15).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::NulInString { position: 1 });
    /// let len = w.finish();
    /// assert_eq!(&buf[..len], &[2, b'h', b'i']);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_wstring("hé", 7)?; // 3 bits of length, then 32 bits per UTF-16 unit
    /// assert_eq!(m.bits(), 3 + 2 * 32);
    /// assert!(m.write_wstring("too long", 7).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_int_relative(10, 11)?; // +1: one bit
    /// assert_eq!(m.bits(), 1);
    /// m.write_int_relative(11, 14)?; // +3: two flags and 3 bits
    /// assert_eq!(m.bits(), 1 + 5);
    /// let e = m.write_int_relative(14, 14).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::NotIncreasing { previous: 14, current: 14 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_check(0x1234_5678)?;
    /// assert_eq!(w.finish(), 4);
    /// assert_eq!(buf, [0x78, 0x56, 0x34, 0x12]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, ErrorKind, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_tag(2, 5)?; // tags 0..=4: 3 bits
    /// assert_eq!(m.bits(), 3);
    /// let e = m.write_tag(5, 5).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::UnknownTag { tag: 5, variants: 5 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_value(&(true, 7u8))?;
    /// assert_eq!(m.bits(), 1 + 8);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    fn write_value<T: NetSerialize>(&mut self, value: &T) -> Result<()> {
        value.encode(self)
    }

    /// A bounded sequence: its length as `int(0, max_len)`, then each element.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], or the first element's error (with its index).
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ErrorKind, ReadStream, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_seq(&[1u8, 2, 3], 7)?; // 3 bits of length, then 3 x 8 bits
    /// assert_eq!(w.bit_position(), 3 + 24);
    /// let e = w.write_seq(&[0u8; 8], 7).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::LengthTooLong { len: 8, max: 7 });
    /// let len = w.finish();
    /// assert_eq!(ReadStream::new(&buf[..len]).read_seq::<u8>(7)?, [1, 2, 3]);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn write_seq<T: NetSerialize>(&mut self, items: &[T], max_len: usize) -> Result<()> {
        self.write_len(items.len(), max_len)?;
        T::encode_slice(items, self)
    }

    /// An `Option`: a presence bit, then the value when present.
    ///
    /// # Errors
    /// Whatever the value's encoder returns.
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_option(Some(&5u8))?; // presence bit, then the value
    /// m.write_option::<u8>(None)?; // presence bit only
    /// assert_eq!(m.bits(), 1 + 8 + 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// // Two of 64 entities changed: the few-changed form, indices relative to each other.
    /// let health = [100u8; 64];
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_subset(64, |i| i == 2 || i == 40, |w, i| w.write_int(health[i], 0, 100))?;
    /// assert!(w.bit_position() < 64); // less than a bit per entity
    /// let len = w.finish();
    ///
    /// let mut got = Vec::new();
    /// ReadStream::new(&buf[..len]).read_subset(64, |r, i| {
    ///     got.push((i, r.read_int(0u8, 100)?));
    ///     Ok(())
    /// })?;
    /// assert_eq!(got, [(2, 100), (40, 100)]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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

#[cfg(test)]
mod tests;
