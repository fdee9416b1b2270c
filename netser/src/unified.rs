//! The articles' unified stream: one hand-written `serialize` function per type serves
//! the write, read and measure streams (see [the stream module](crate::stream) for how
//! this relates to [`Encoder`] and [`Decoder`]).
//!
//! ```
//! use netser::{MeasureStream, ReadStream, Result, Stream, WriteStream};
//!
//! // The article's "PacketB": a bounded count, then that many ints, one function.
//! #[derive(Default, Debug, PartialEq)]
//! struct PacketB { items: Vec<i32> }
//!
//! fn serialize_packet_b<S: Stream>(s: &mut S, p: &mut PacketB) -> Result<()> {
//!     let mut count = p.items.len() as u32;
//!     s.serialize_int(&mut count, 0, 8)?;
//!     if S::IS_READING {
//!         p.items = vec![0; count as usize];
//!     }
//!     for item in &mut p.items {
//!         s.serialize_int(item, -100, 100)?;
//!     }
//!     Ok(())
//! }
//!
//! let mut packet = PacketB { items: vec![1, -2, 3] };
//! let mut measure = MeasureStream::new();
//! serialize_packet_b(&mut measure, &mut packet)?;
//! assert_eq!(measure.bits(), 4 + 3 * 8);
//!
//! let mut buf = [0u8; 8];
//! let mut w = WriteStream::new(&mut buf);
//! serialize_packet_b(&mut w, &mut packet)?;
//! let len = w.finish();
//! let mut back = PacketB::default();
//! serialize_packet_b(&mut ReadStream::new(&buf[..len]), &mut back)?;
//! assert_eq!(back, packet);
//! // A count above 8 on the wire is refused before anything is allocated.
//! assert!(serialize_packet_b(&mut ReadStream::new(&[0xff; 8]), &mut back).is_err());
//! # Ok::<(), netser::Error>(())
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Result;
use crate::int::RangedInt;
use crate::quantize::Quantize;
use crate::stream::{Decoder, Encoder, MeasureStream, ReadStream, WriteStream};
use crate::trace::{NoTrace, Tracer};
use crate::NetSerialize;

/// Which way a stream goes: the encoder or the decoder it is.
///
/// ```
/// use netser::{Decoder, Direction, Encoder, Result, Stream};
/// // A custom primitive for hand-written code: a direction written once per side.
/// fn serialize_flags<S: Stream>(s: &mut S, flags: &mut [bool; 3]) -> Result<()> {
///     match s.direction() {
///         Direction::Write(e) => {
///             let bits = flags.iter().rev().fold(0u64, |acc, &f| acc << 1 | u64::from(f));
///             e.write_bits(bits, 3)
///         }
///         Direction::Read(d) => {
///             let bits = d.read_bits(3)?;
///             *flags = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
///             Ok(())
///         }
///     }
/// }
/// let mut buf = [0u8; 1];
/// let mut w = netser::WriteStream::new(&mut buf);
/// serialize_flags(&mut w, &mut [true, false, true])?;
/// assert_eq!(w.finish(), 1);
/// assert_eq!(buf[0], 0b101);
/// let mut back = [false; 3];
/// serialize_flags(&mut netser::ReadStream::new(&buf), &mut back)?;
/// assert_eq!(back, [true, false, true]);
/// # Ok::<(), netser::Error>(())
/// ```
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
///
/// ```
/// use netser::{Direction, Never, ReadStream, Stream, WriteStream};
/// let mut buf = [0u8; 1];
/// let mut w = WriteStream::new(&mut buf);
/// // A write stream's decoder is `Never`: its `Read` arm cannot be reached.
/// let _: &mut Never = match w.direction() {
///     Direction::Write(_) => return,
///     Direction::Read(never) => never,
/// };
/// ```
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
    ///
    /// ```
    /// use netser::{Direction, MeasureStream, Stream};
    /// let mut m = MeasureStream::new();
    /// assert!(matches!(m.direction(), Direction::Write(_)));
    /// assert!(<MeasureStream>::IS_WRITING);
    /// ```
    fn direction(&mut self) -> Direction<&mut Self::Encoder, &mut Self::Decoder>;

    /// Bits processed so far.
    ///
    /// ```
    /// use netser::{MeasureStream, Stream};
    /// let mut m = MeasureStream::new();
    /// m.serialize_bool(&mut true)?;
    /// m.serialize_int(&mut 5u8, 0, 9)?;
    /// assert_eq!(m.bits_processed(), 1 + 4);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn bits_processed(&self) -> u64;

    /// `bits` raw bits (see [`Encoder::write_bits`]).
    ///
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_bits(&mut 0x2a, 6)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0;
    /// r.serialize_bits(&mut v, 6)?;
    /// assert_eq!(v, 0x2a);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_bool(&mut true)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = false;
    /// r.serialize_bool(&mut v)?;
    /// assert!(v);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_int(&mut -7i32, -10, 10)?; // 5 bits
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0i32;
    /// r.serialize_int(&mut v, -10, 10)?;
    /// assert_eq!(v, -7);
    /// assert!(WriteStream::new(&mut [0u8; 4]).serialize_int(&mut 11i32, -10, 10).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_uint_bits(&mut 300u16, 9)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0u16;
    /// r.serialize_uint_bits(&mut v, 9)?;
    /// assert_eq!(v, 300);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// // 2.75 in 2 fraction bits is 11; whole units -4..=4.
    /// w.serialize_fixed(&mut 11i32, 2, -4, 4)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut raw = 0i32;
    /// r.serialize_fixed(&mut raw, 2, -4, 4)?;
    /// assert_eq!(raw as f32 / 4.0, 2.75);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_f32(&mut 1.5)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0.0f32;
    /// r.serialize_f32(&mut v)?;
    /// assert_eq!(v, 1.5);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_f64(&mut -0.25)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0.0f64;
    /// r.serialize_f64(&mut v)?;
    /// assert_eq!(v, -0.25);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// let q = netser::Quantize::new(-1.0, 1.0, 0.01); // 8 bits
    /// w.serialize_compressed_f32(&mut 0.5, &q)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0.0f32;
    /// r.serialize_compressed_f32(&mut v, &q)?;
    /// assert!((v - 0.5).abs() <= 0.005);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// let q = netser::Quantize::new(-10.0, 10.0, 0.1);
    /// w.serialize_compressed_f32s(&mut [1.0, -2.5, 9.9], &q)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = [0.0f32; 3];
    /// r.serialize_compressed_f32s(&mut v, &q)?;
    /// assert!(v.iter().zip([1.0, -2.5, 9.9]).all(|(a, b)| (a - b).abs() <= 0.05));
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// let half = core::f32::consts::FRAC_1_SQRT_2;
    /// w.serialize_quat(&mut [0.0, 0.0, half, half], 9)?; // 2 + 3 x 9 bits
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut q = [0.0f32; 4];
    /// r.serialize_quat(&mut q, 9)?;
    /// assert!(q.iter().zip([0.0, 0.0, half, half]).all(|(a, b)| (a - b).abs() < 0.01));
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_bool(&mut true)?;
    /// w.serialize_align()?;
    /// w.serialize_bits(&mut 0xab, 8)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    ///
    /// r.serialize_bool(&mut false)?;
    /// r.serialize_align()?;
    /// assert_eq!(buf[..len], [1, 0xab]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_bytes(&mut b"key".clone())?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut key = [0u8; 3];
    /// r.serialize_bytes(&mut key)?;
    /// assert_eq!(&key, b"key");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_string(&mut "gg wp".to_string(), 32)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut text = String::new();
    /// r.serialize_string(&mut text, 32)?;
    /// assert_eq!(text, "gg wp");
    /// // Longer than its bound: an error on write, and on read.
    /// assert!(WriteStream::new(&mut [0u8; 64]).serialize_string(&mut "x".repeat(33), 32).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// // Sorted entity ids: each one relative to the one before, 1 bit for +1.
    /// w.serialize_int_relative(10, &mut 11)?;
    /// w.serialize_int_relative(11, &mut 15)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let (mut a, mut b) = (0, 0);
    /// r.serialize_int_relative(10, &mut a)?;
    /// r.serialize_int_relative(a, &mut b)?;
    /// assert_eq!((a, b), (11, 15));
    /// assert_eq!(len, 1); // 1 + 5 bits
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_int(&mut 3u8, 0, 7)?;
    /// w.serialize_check(0x5EC7_10A1)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut v = 0u8;
    /// r.serialize_int(&mut v, 0, 7)?;
    /// r.serialize_check(0x5EC7_10A1)?;
    /// // Read out of step (6 bits instead of 3): the check names the place.
    /// let mut r = ReadStream::new(&buf[..len]);
    /// r.serialize_int(&mut v, 0, 63)?;
    /// assert!(r.serialize_check(0x5EC7_10A1).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_seq(&mut vec![7u16, 8, 9], 4)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut items: Vec<u16> = Vec::new();
    /// r.serialize_seq(&mut items, 4)?;
    /// assert_eq!(items, [7, 8, 9]);
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    ///
    /// w.serialize_option(&mut Some(5u8))?;
    /// w.serialize_option(&mut None::<u8>)?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let (mut a, mut b) = (None::<u8>, Some(1u8));
    /// r.serialize_option(&mut a)?;
    /// r.serialize_option(&mut b)?;
    /// assert_eq!((a, b), (Some(5), None));
    /// # Ok::<(), netser::Error>(())
    /// ```
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
    /// ```
    /// use netser::{ReadStream, Stream, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// #[derive(netser::NetSerialize, Default, Debug, PartialEq)]
    /// struct Hit { #[net(range = 0..=100)] damage: u8 }
    /// w.serialize_value(&mut Hit { damage: 40 })?;
    /// let len = w.finish();
    /// let mut r = ReadStream::new(&buf[..len]);
    /// let mut hit = Hit::default();
    /// r.serialize_value(&mut hit)?;
    /// assert_eq!(hit, Hit { damage: 40 });
    /// # Ok::<(), netser::Error>(())
    /// ```
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
