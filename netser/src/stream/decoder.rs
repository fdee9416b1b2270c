//! The [`Decoder`] trait: every primitive's reading side, implemented by
//! [`ReadStream`](super::ReadStream).

use alloc::string::String;
use alloc::vec::Vec;

use super::{
    decode_element, fixed_bounds, headroom_error, seq_capacity, tag_bits, trace_int, RELATIVE_TIERS,
};
use crate::error::{Error, ErrorKind, Num, Result};
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::trace::{TraceValue, Tracer};
use crate::NetSerialize;
// Named in the docs only.
#[cfg(doc)]
use crate::{trace::NoTrace, Encoder, ReadStream};

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
    /// (`stream::run`) instead of field by field: only with no tracer to feed.
    #[doc(hidden)]
    const PACKS_RUNS: bool = false;

    /// Reads `bits` (0..=64) bits, without tracing.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidBitCount`] or [`ErrorKind::EndOfBuffer`].
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// let mut r = ReadStream::new(&[0xab]);
    /// assert_eq!(r.get_bits(4)?, 0xb);
    /// let e = r.get_bits(65).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::InvalidBitCount { bits: 65, min: 0, max: 64 });
    /// assert_eq!(e.to_string(), "invalid bit count 65, expected 0..=64 at bit 4");
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn get_bits(&mut self, bits: u32) -> Result<u64>;

    /// Fills `words` with 64-bit reads, then reads and returns `last_bits` (`< 64`)
    /// more bits, after one check of the bits remaining for all of them; what derived
    /// code reads a packed run of fields with (`stream::run`).
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

    /// Consumes `bits` bits without returning them: the block of elements derived code
    /// peeked ([`Decoder::peek_input`]) and accepted.
    ///
    /// # Errors
    /// [`ErrorKind::EndOfBuffer`]; nothing is consumed.
    #[doc(hidden)]
    #[inline]
    fn skip_bits(&mut self, bits: u64) -> Result<()> {
        check_remaining(self, bits)?;
        let mut words = [0u64; 16];
        let mut left = bits;
        while left >= 64 * 16 {
            self.get_words(&mut words, 0)?;
            left -= 64 * 16;
        }
        let full = (left / 64) as usize;
        self.get_words(&mut words[..full], (left % 64) as u32)?;
        Ok(())
    }

    /// The whole input and the bit position reached in it, when the stream reads from a
    /// byte slice: derived code peeks a block of elements there before consuming it
    /// ([`crate::batch`]). `None` (the default) keeps it element by element.
    #[doc(hidden)]
    #[inline(always)]
    fn peek_input(&self) -> Option<(&[u8], u64)> {
        None
    }

    /// Skips the padding to the next byte boundary.
    ///
    /// # Errors
    /// [`ErrorKind::NonZeroPadding`] or [`ErrorKind::EndOfBuffer`].
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// let mut r = ReadStream::new(&[0x01, 0xff]);
    /// assert!(r.read_bool()?);
    /// r.read_align()?;
    /// assert_eq!(r.bit_position(), 8);
    /// // Padding that is not zero was not written by a writer.
    /// let mut r = ReadStream::new(&[0x03]);
    /// r.read_bool()?;
    /// assert!(matches!(r.read_align().unwrap_err().kind(), ErrorKind::NonZeroPadding { .. }));
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn read_align(&mut self) -> Result<()>;

    /// Aligns, then fills `out` with raw bytes.
    ///
    /// # Errors
    /// As [`Decoder::read_align`]; [`ErrorKind::EndOfBuffer`] when too few bytes remain.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0x01, b'h', b'i']);
    /// r.read_bool()?;
    /// let mut out = [0u8; 2];
    /// r.read_bytes(&mut out)?;
    /// assert_eq!(&out, b"hi");
    /// assert!(r.read_bytes(&mut [0u8; 1]).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn read_bytes(&mut self, out: &mut [u8]) -> Result<()>;

    /// Bits read so far.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0, 0]);
    /// r.read_bits(5)?;
    /// assert_eq!(r.bit_position(), 5);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn bit_position(&self) -> u64;

    /// Bits left.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0, 0]);
    /// r.read_bits(3)?;
    /// assert_eq!(r.bits_remaining(), 13);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn bits_remaining(&self) -> u64;

    /// The stream's tracer.
    ///
    /// ```
    /// use netser::{trace::Trace, Decoder, ReadStream};
    /// let mut r = ReadStream::with_tracer(&[1], Trace::new());
    /// r.read_bool()?;
    /// assert_eq!(r.tracer().entries().len(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn tracer(&mut self) -> &mut Self::Tracer;

    /// Records `value` as the primitive that took bits `start..` up to the position now.
    ///
    /// ```
    /// use netser::trace::{Trace, TraceValue};
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::with_tracer(&[0b101], Trace::new());
    /// // A hand-written primitive: untraced bits, then one trace entry for them.
    /// let start = r.bit_position();
    /// let v = r.get_bits(3)?;
    /// r.trace(start, TraceValue::Bits(v));
    /// let e = &r.tracer().entries()[0];
    /// assert_eq!((e.start, e.bits), (0, 3));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    fn trace(&mut self, start: u64, value: TraceValue<'_>) {
        let end = self.bit_position();
        self.tracer().value(start, end, value);
    }

    /// Reads `bits` (0..=64) raw bits, traced.
    ///
    /// # Errors
    /// As [`Decoder::get_bits`].
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0xbc, 0x0a]);
    /// assert_eq!(r.read_bits(12)?, 0xabc);
    /// assert!(r.read_bits(5).is_err()); // 4 bits left
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0b101]);
    /// assert_eq!([r.read_bool()?, r.read_bool()?, r.read_bool()?], [true, false, true]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// assert_eq!(ReadStream::new(&[7]).read_int(-10i32, 10)?, -3); // offset 7 from -10
    /// // 5 bits carry 0..=31: an offset above 20 is refused, in the range's own units.
    /// let e = ReadStream::new(&[31]).read_int(-10i32, 10).unwrap_err();
    /// assert_eq!(e.to_string(), "value 21 out of range -10..=10 at bit 0");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// assert_eq!(ReadStream::new(&[0b1101]).read_uint_bits::<u8>(3)?, 5);
    /// // A signed type's sign bit is never part of the field.
    /// let e = ReadStream::new(&[0]).read_uint_bits::<i8>(8).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::InvalidBitCount { bits: 8, min: 0, max: 7 });
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    fn read_uint_bits<I: RangedInt>(&mut self, bits: u32) -> Result<I> {
        let start = self.bit_position();
        let max = I::WIDTH - (I::MIN < I::ZERO) as u32;
        if bits > max {
            return Err(Error::new(
                ErrorKind::InvalidBitCount { bits, min: 0, max },
                start,
            ));
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_fixed(40i32, 4, -8, 8)?; // 2.5 with 4 fraction bits
    /// let len = w.finish();
    /// let raw = ReadStream::new(&buf[..len]).read_fixed::<i32>(4, -8, 8)?;
    /// assert_eq!(raw as f32 / 16.0, 2.5);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let bytes = 1.5f32.to_bits().to_le_bytes();
    /// assert_eq!(ReadStream::new(&bytes).read_f32()?, 1.5);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let bytes = (-0.1f64).to_bits().to_le_bytes();
    /// assert_eq!(ReadStream::new(&bytes).read_f64()?, -0.1);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Quantize, ReadStream};
    /// let q = Quantize::new(-1.0, 1.0, 0.01); // 200 steps in 8 bits
    /// assert_eq!(ReadStream::new(&[150]).read_compressed_f32(&q)?, 0.5);
    /// // 255 is from the headroom above 200: reported as the value it stands for.
    /// let e = ReadStream::new(&[255]).read_compressed_f32(&q).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     "value 1.55 out of range -1..=1 (quantized in steps of 0.01) at bit 0"
    /// );
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Quantize, ReadStream};
    /// let q = Quantize::new(-1.0, 1.0, 0.01);
    /// assert_eq!(ReadStream::new(&[100]).read_compressed_f64(&q)?, 0.0);
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    fn read_compressed_f64(&mut self, q: &Quantize) -> Result<f64> {
        self.read_compressed_f32(q).map(f64::from)
    }

    /// A vector of compressed floats into `out`.
    ///
    /// # Errors
    /// As [`Decoder::read_compressed_f32`], with the failing component's index.
    ///
    /// ```
    /// use netser::{Decoder, Quantize, ReadStream};
    /// let q = Quantize::new(0.0, 1.0, 0.5); // integers 0..=2 in 2 bits
    /// let mut out = [0.0f32; 3];
    /// ReadStream::new(&[0 | 1 << 2 | 2 << 4]).read_compressed_f32s(&mut out, &q)?;
    /// assert_eq!(out, [0.0, 0.5, 1.0]);
    /// let e = ReadStream::new(&[3 << 2]).read_compressed_f32s(&mut out, &q).unwrap_err();
    /// assert_eq!(e.path(), "[1]");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// [`ErrorKind::InvalidBitCount`] unless `2 <= bits <= 20`, [`ErrorKind::EndOfBuffer`],
    /// [`ErrorKind::NonCanonicalQuaternion`] for an encoding no writer produces.
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let h = std::f32::consts::FRAC_1_SQRT_2;
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_quat([0.0, h, 0.0, h], 12)?;
    /// let len = w.finish();
    /// let q = ReadStream::new(&buf[..len]).read_quat(12)?;
    /// assert!((q[1] - h).abs() < 1e-3 && (q[3] - h).abs() < 1e-3);
    /// assert!(ReadStream::new(&buf[..len]).read_quat(21).is_err()); // above quat::MAX_BITS
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0x01, 0x02]);
    /// r.read_bool()?;
    /// r.align()?;
    /// assert_eq!(r.read_bits(8)?, 2);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// assert_eq!(ReadStream::new(&[3]).read_len(10)?, 3);
    /// let e = ReadStream::new(&[11]).read_len(10).unwrap_err(); // 4 bits hold 11
    /// assert_eq!(e.kind(), &ErrorKind::LengthTooLong { len: 11, max: 10 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// assert_eq!(ReadStream::new(&[2, b'h', b'i']).read_string(15)?, "hi");
    /// let e = ReadStream::new(&[1, 0xff]).read_string(15).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::InvalidUtf8 { valid_up_to: 0 });
    /// // A length the packet cannot hold is refused before anything is allocated.
    /// assert!(ReadStream::new(&[15]).read_string(15).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_wstring("hé", 7)?;
    /// let len = w.finish();
    /// assert_eq!(ReadStream::new(&buf[..len]).read_wstring(7)?, "hé");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_int_relative(10, 11)?;
    /// w.write_int_relative(11, 14)?;
    /// w.write_int_relative(14, 1_000_000)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// assert_eq!(r.read_int_relative(10)?, 11);
    /// assert_eq!(r.read_int_relative(11)?, 14);
    /// assert_eq!(r.read_int_relative(14)?, 1_000_000);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// ReadStream::new(&[0x78, 0x56, 0x34, 0x12]).read_check(0x1234_5678)?;
    /// let e = ReadStream::new(&[0; 4]).read_check(0x1234_5678).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::CheckMismatch { expected: 0x1234_5678, found: 0 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// assert_eq!(ReadStream::new(&[2]).read_tag(5)?, 2); // 3 bits
    /// let e = ReadStream::new(&[7]).read_tag(5).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::UnknownTag { tag: 7, variants: 5 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_value(&(true, 7u8))?;
    /// let len = w.finish();
    /// assert_eq!(ReadStream::new(&buf[..len]).read_value::<(bool, u8)>()?, (true, 7));
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline]
    fn read_value<T: NetSerialize>(&mut self) -> Result<T> {
        T::decode(self)
    }

    /// A bounded sequence (see [`Encoder::write_seq`]). Never reserves more than
    /// `max_len` elements, nor more than the bits left could hold.
    ///
    /// # Errors
    /// [`ErrorKind::LengthTooLong`], or the first element's error with its index.
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_seq(&[1u8, 2, 3], 7)?;
    /// let len = w.finish();
    /// assert_eq!(ReadStream::new(&buf[..len]).read_seq::<u8>(7)?, [1, 2, 3]);
    /// // A length of 7 with 5 bits left: the first element fails, with its index.
    /// let e = ReadStream::new(&[7]).read_seq::<u8>(7).unwrap_err();
    /// assert_eq!(e.path(), "[0]");
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn read_seq<T: NetSerialize>(&mut self, max_len: usize) -> Result<Vec<T>> {
        let len = self.read_len(max_len)?;
        let mut items = Vec::with_capacity(seq_capacity::<T>(len, self.bits_remaining()));
        T::decode_extend(self, len, &mut items)?;
        Ok(items)
    }

    /// An `Option` (see [`Encoder::write_option`]).
    ///
    /// # Errors
    /// Whatever the value's decoder returns.
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_option(Some(&5u8))?;
    /// w.write_option::<u8>(None)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// assert_eq!(r.read_option::<u8>()?, Some(5));
    /// assert_eq!(r.read_option::<u8>()?, None);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, Encoder, ReadStream, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// // Most of 4 elements changed: the bit-per-element form.
    /// w.write_subset(4, |i| i != 1, |w, i| w.write_int(i as u8, 0, 3))?;
    /// let len = w.finish();
    /// let mut got = Vec::new();
    /// ReadStream::new(&buf[..len]).read_subset(4, |r, i| {
    ///     assert_eq!(r.read_int(0u8, 3)?, i as u8);
    ///     got.push(i);
    ///     Ok(())
    /// })?;
    /// assert_eq!(got, [0, 2, 3]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadStream;

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
