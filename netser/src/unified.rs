//! The articles' unified stream: one hand-written `serialize` function per type serves
//! the write, read and measure streams (see [the stream module](crate::stream) for how
//! this relates to [`Encoder`] and [`Decoder`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Result;
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::stream::{Decoder, Encoder, MeasureStream, ReadStream, WriteStream};
use crate::trace::{NoTrace, Tracer};
use crate::NetSerialize;

/// Which way a stream goes: the encoder or the decoder it is.
#[derive(Debug)]
pub enum Direction<E, D> {
    /// A write or measure stream.
    Write(E),
    /// A read stream.
    Read(D),
}

/// The uninhabited type standing for "the other direction" of a stream. A value of it
/// cannot exist, so a `match` on [`Direction`] has one reachable arm per stream and the
/// compiler removes the other: the Rust form of the articles' `Stream::IsWriting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Never {}

impl Encoder for Never {
    type Tracer = NoTrace;
    fn put_bits(&mut self, _: u64, _: u32) -> Result<()> {
        match *self {}
    }
    fn write_align(&mut self) -> Result<()> {
        match *self {}
    }
    fn write_bytes(&mut self, _: &[u8]) -> Result<()> {
        match *self {}
    }
    fn bit_position(&self) -> u64 {
        match *self {}
    }
    fn bits_available(&self) -> u64 {
        match *self {}
    }
    fn tracer(&mut self) -> &mut NoTrace {
        match *self {}
    }
}

impl Decoder for Never {
    type Tracer = NoTrace;
    fn get_bits(&mut self, _: u32) -> Result<u64> {
        match *self {}
    }
    fn read_align(&mut self) -> Result<()> {
        match *self {}
    }
    fn read_bytes(&mut self, _: &mut [u8]) -> Result<()> {
        match *self {}
    }
    fn bit_position(&self) -> u64 {
        match *self {}
    }
    fn bits_remaining(&self) -> u64 {
        match *self {}
    }
    fn tracer(&mut self) -> &mut NoTrace {
        match *self {}
    }
}

/// A stream for hand-written, article-style serialize functions: each method takes a
/// `&mut` place, writes it on a write or measure stream and stores into it on a read
/// stream. Implemented by [`WriteStream`], [`ReadStream`] and [`MeasureStream`].
///
/// ```
/// use netser::{ReadStream, Result, Stream, WriteStream};
///
/// #[derive(Default, Debug, PartialEq)]
/// struct Chat { channel: u8, text: String }
///
/// fn serialize_chat<S: Stream>(s: &mut S, c: &mut Chat) -> Result<()> {
///     s.serialize_int(&mut c.channel, 0, 7)?;
///     s.serialize_string(&mut c.text, 64)
/// }
///
/// let mut buf = [0u8; 80];
/// let mut w = WriteStream::new(&mut buf);
/// serialize_chat(&mut w, &mut Chat { channel: 3, text: "gg".into() })?;
/// let len = w.finish();
/// let mut back = Chat::default();
/// serialize_chat(&mut ReadStream::new(&buf[..len]), &mut back)?;
/// assert_eq!(back.text, "gg");
/// # Ok::<(), netser::Error>(())
/// ```
pub trait Stream {
    /// True for write and measure streams.
    const IS_WRITING: bool;
    /// True for read streams.
    const IS_READING: bool = !Self::IS_WRITING;
    /// The stream as an encoder ([`Never`] for a read stream).
    type Encoder: Encoder;
    /// The stream as a decoder ([`Never`] for write and measure streams).
    type Decoder: Decoder;

    /// The stream's direction; the other variant is uninhabited.
    fn direction(&mut self) -> Direction<&mut Self::Encoder, &mut Self::Decoder>;

    /// Bits processed so far.
    fn bits_processed(&self) -> u64;

    /// `bits` raw bits (see [`Encoder::write_bits`]).
    ///
    /// # Errors
    /// As [`Encoder::write_bits`] / [`Decoder::read_bits`].
    #[inline(always)]
    fn serialize_bits(&mut self, value: &mut u64, bits: u32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_bits(*value, bits),
            Direction::Read(d) => d.read_bits(bits).map(|v| *value = v),
        }
    }

    /// A bool (see [`Encoder::write_bool`]).
    ///
    /// # Errors
    /// As [`Encoder::write_bool`] / [`Decoder::read_bool`].
    #[inline(always)]
    fn serialize_bool(&mut self, value: &mut bool) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_bool(*value),
            Direction::Read(d) => d.read_bool().map(|v| *value = v),
        }
    }

    /// A ranged integer (see [`Encoder::write_int`]).
    ///
    /// # Errors
    /// As [`Encoder::write_int`] / [`Decoder::read_int`].
    #[inline(always)]
    fn serialize_int<I: RangedInt>(&mut self, value: &mut I, min: I, max: I) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_int(*value, min, max),
            Direction::Read(d) => d.read_int(min, max).map(|v| *value = v),
        }
    }

    /// An unsigned integer in `bits` bits (see [`Encoder::write_uint_bits`]).
    ///
    /// # Errors
    /// As [`Encoder::write_uint_bits`] / [`Decoder::read_uint_bits`].
    #[inline(always)]
    fn serialize_uint_bits<I: RangedInt>(&mut self, value: &mut I, bits: u32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_uint_bits(*value, bits),
            Direction::Read(d) => d.read_uint_bits(bits).map(|v| *value = v),
        }
    }

    /// A fixed-point raw value (see [`Encoder::write_fixed`]).
    ///
    /// # Errors
    /// As [`Encoder::write_fixed`] / [`Decoder::read_fixed`].
    #[inline(always)]
    fn serialize_fixed<I: RangedInt>(
        &mut self,
        raw: &mut I,
        fraction_bits: u32,
        min_units: I,
        max_units: I,
    ) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_fixed(*raw, fraction_bits, min_units, max_units),
            Direction::Read(d) => d
                .read_fixed(fraction_bits, min_units, max_units)
                .map(|v| *raw = v),
        }
    }

    /// A raw float32.
    ///
    /// # Errors
    /// As [`Encoder::write_f32`] / [`Decoder::read_f32`].
    #[inline(always)]
    fn serialize_f32(&mut self, value: &mut f32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_f32(*value),
            Direction::Read(d) => d.read_f32().map(|v| *value = v),
        }
    }

    /// A raw float64.
    ///
    /// # Errors
    /// As [`Encoder::write_f64`] / [`Decoder::read_f64`].
    #[inline(always)]
    fn serialize_f64(&mut self, value: &mut f64) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_f64(*value),
            Direction::Read(d) => d.read_f64().map(|v| *value = v),
        }
    }

    /// A compressed float (see [`Encoder::write_compressed_f32`]).
    ///
    /// # Errors
    /// As [`Encoder::write_compressed_f32`] / [`Decoder::read_compressed_f32`].
    #[inline(always)]
    fn serialize_compressed_f32(&mut self, value: &mut f32, q: &Quantize) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_compressed_f32(*value, q),
            Direction::Read(d) => d.read_compressed_f32(q).map(|v| *value = v),
        }
    }

    /// A vector of compressed floats.
    ///
    /// # Errors
    /// As [`Encoder::write_compressed_f32s`] / [`Decoder::read_compressed_f32s`].
    #[inline(always)]
    fn serialize_compressed_f32s(&mut self, values: &mut [f32], q: &Quantize) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_compressed_f32s(values, q),
            Direction::Read(d) => d.read_compressed_f32s(values, q),
        }
    }

    /// A smallest-three quaternion.
    ///
    /// # Errors
    /// As [`Encoder::write_quat`] / [`Decoder::read_quat`].
    #[inline(always)]
    fn serialize_quat(&mut self, q: &mut [f32; 4], bits: u32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_quat(*q, bits),
            Direction::Read(d) => d.read_quat(bits).map(|v| *q = v),
        }
    }

    /// Alignment to a byte boundary.
    ///
    /// # Errors
    /// As [`Encoder::align`] / [`Decoder::align`].
    #[inline(always)]
    fn serialize_align(&mut self) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.align(),
            Direction::Read(d) => d.align(),
        }
    }

    /// Raw bytes, aligned (the count is not sent).
    ///
    /// # Errors
    /// As [`Encoder::write_bytes`] / [`Decoder::read_bytes`].
    #[inline(always)]
    fn serialize_bytes(&mut self, data: &mut [u8]) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_bytes(data),
            Direction::Read(d) => d.read_bytes(data),
        }
    }

    /// A bounded UTF-8 string.
    ///
    /// # Errors
    /// As [`Encoder::write_string`] / [`Decoder::read_string`].
    #[inline(always)]
    fn serialize_string(&mut self, value: &mut String, max_len: usize) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_string(value, max_len),
            Direction::Read(d) => d.read_string(max_len).map(|v| *value = v),
        }
    }

    /// A relative integer: on write `current` is sent relative to `previous`; on read it
    /// is stored into `current`.
    ///
    /// # Errors
    /// As [`Encoder::write_int_relative`] / [`Decoder::read_int_relative`].
    #[inline(always)]
    fn serialize_int_relative(&mut self, previous: i32, current: &mut i32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_int_relative(previous, *current),
            Direction::Read(d) => d.read_int_relative(previous).map(|v| *current = v),
        }
    }

    /// A serialize check.
    ///
    /// # Errors
    /// As [`Decoder::read_check`].
    #[inline(always)]
    fn serialize_check(&mut self, magic: u32) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_check(magic),
            Direction::Read(d) => d.read_check(magic),
        }
    }

    /// A bounded sequence of [`NetSerialize`] values.
    ///
    /// # Errors
    /// As [`Encoder::write_seq`] / [`Decoder::read_seq`].
    #[inline(always)]
    fn serialize_seq<T: NetSerialize>(&mut self, items: &mut Vec<T>, max_len: usize) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_seq(items, max_len),
            Direction::Read(d) => d.read_seq(max_len).map(|v| *items = v),
        }
    }

    /// An `Option` of a [`NetSerialize`] value.
    ///
    /// # Errors
    /// As [`Encoder::write_option`] / [`Decoder::read_option`].
    #[inline(always)]
    fn serialize_option<T: NetSerialize>(&mut self, value: &mut Option<T>) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => e.write_option(value.as_ref()),
            Direction::Read(d) => d.read_option().map(|v| *value = v),
        }
    }

    /// Any [`NetSerialize`] value (the articles' `serialize_object`).
    ///
    /// # Errors
    /// Whatever the type's encoder or decoder returns.
    #[inline(always)]
    fn serialize_value<T: NetSerialize>(&mut self, value: &mut T) -> Result<()> {
        match self.direction() {
            Direction::Write(e) => value.encode(e),
            Direction::Read(d) => T::decode(d).map(|v| *value = v),
        }
    }
}

impl<T: Tracer> Stream for WriteStream<'_, T> {
    const IS_WRITING: bool = true;
    type Encoder = Self;
    type Decoder = Never;
    #[inline(always)]
    fn direction(&mut self) -> Direction<&mut Self, &mut Never> {
        Direction::Write(self)
    }
    #[inline(always)]
    fn bits_processed(&self) -> u64 {
        Encoder::bit_position(self)
    }
}

impl<T: Tracer> Stream for MeasureStream<T> {
    const IS_WRITING: bool = true;
    type Encoder = Self;
    type Decoder = Never;
    #[inline(always)]
    fn direction(&mut self) -> Direction<&mut Self, &mut Never> {
        Direction::Write(self)
    }
    #[inline(always)]
    fn bits_processed(&self) -> u64 {
        Encoder::bit_position(self)
    }
}

impl<T: Tracer> Stream for ReadStream<'_, T> {
    const IS_WRITING: bool = false;
    type Encoder = Never;
    type Decoder = Self;
    #[inline(always)]
    fn direction(&mut self) -> Direction<&mut Never, &mut Self> {
        Direction::Read(self)
    }
    #[inline(always)]
    fn bits_processed(&self) -> u64 {
        Decoder::bit_position(self)
    }
}
