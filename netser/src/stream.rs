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

mod decoder;
mod encoder;
mod measure;
mod read;
/// Runs of fixed-width fields for the derive; reached through `__private`.
pub(crate) mod run;
mod write;

pub use decoder::Decoder;
pub use encoder::Encoder;
pub use measure::MeasureStream;
pub use read::ReadStream;
pub use write::WriteStream;

use crate::error::{Error, ErrorKind, Num, Result};
use crate::int::RangedInt;
use crate::trace::{Segment, TraceValue, Tracer};
use crate::NetSerialize;

/// The flag-ladder tiers of `int_relative`: `(largest difference, payload bits)`. A
/// difference of 1 is a single flag; past the last tier the current value goes raw.
const RELATIVE_TIERS: [(u32, u32); 5] = [(6, 3), (23, 5), (280, 9), (4377, 13), (69914, 17)];

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
pub(crate) fn trace_int<I: RangedInt>(v: I) -> TraceValue<'static> {
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
