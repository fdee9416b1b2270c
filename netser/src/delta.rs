//! Delta encoding: a value sent relative to a baseline value of the same type that the
//! receiver already holds ("Snapshot Compression").
//!
//! [`NetDelta`] is the delta half of a type's wire layout, beside the absolute one of
//! [`NetSerialize`]. The contract every implementation keeps (the derive's and a hand
//! one's):
//!
//! * **Exact.** `decode_delta(baseline, encode_delta(value, baseline))` is the value
//!   that absolute decoding of `encode(value)` gives, bit for bit, for every baseline
//!   that is itself a decoded value (what a receiver holds).
//! * **Bounded.** A delta takes at most [`NetDelta::MAX_DELTA_BITS`], a compile-time
//!   constant, and every bound check of absolute decoding holds in delta decoding.
//! * **Symmetric.** The encoder and the decoder read the same baseline, so a baseline
//!   the receiver does not hold must never be used: the snapshot layer of
//!   `netser-transport` names it on the wire and refuses one it does not hold.
//!
//! ```
//! use netser::{Decoder, Encoder, NetDelta, NetSerialize, ReadStream, Result, WriteStream};
//!
//! /// 0..=100, sent as one "unchanged" bit when equal to the baseline.
//! #[derive(Debug, PartialEq)]
//! struct Health(u8);
//!
//! impl NetSerialize for Health {
//!     const MIN_BITS: u64 = 7;
//!     const MAX_BITS: u64 = 7;
//!     const MAX_HEAP_BYTES: u64 = 0;
//!     const SCHEMA_HASH: u64 = netser::schema::fnv1a(b"Health:u8:0..=100");
//!     fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
//!         e.write_int(self.0, 0, 100)
//!     }
//!     fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
//!         d.read_int(0, 100).map(Health)
//!     }
//! }
//!
//! impl NetDelta for Health {
//!     const MAX_DELTA_BITS: u64 = 1 + 7;
//!     fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
//!         e.write_bool(self.0 != baseline.0)?;
//!         if self.0 != baseline.0 {
//!             self.encode(e)?;
//!         }
//!         Ok(())
//!     }
//!     fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
//!         if d.read_bool()? { Self::decode(d) } else { Ok(Health(baseline.0)) }
//!     }
//! }
//!
//! let mut buf = [0u8; 4];
//! let mut w = WriteStream::new(&mut buf);
//! Health(90).encode_delta(&Health(90), &mut w)?;
//! assert_eq!(w.bit_position(), 1); // unchanged: one bit
//! let len = w.finish();
//! assert_eq!(Health::decode_delta(&Health(90), &mut ReadStream::new(&buf[..len]))?, Health(90));
//! assert_eq!(Health(50).measure_delta_bits(&Health(90))?, 8);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! # From the derive
//!
//! `#[derive(NetSerialize)]` with the container attribute `#[net(delta)]` implements
//! [`NetDelta`] too, from the same field description (see the
//! [`attributes`](crate::attributes) page); a field marked `#[net(absolute)]` is sent
//! whole when it changed. The rules, each field kind's worst case over its absolute
//! encoding, and the bits of the articles' cube are below.
//!
//! | field | unchanged | changed | worst case |
//! |---|---|---|---|
//! | struct (a whole derived type) | `0` | `1`, then each field's delta | `1 + Σ fields' worst` |
//! | `range`, `bits`, `quantize` (R bits absolute) | `0` | [`level`] tiers relative to the baseline's level | `R + 3` (`R + 1` when `R < 6`; 0 when `R == 0`) |
//! | `quat(bits = b)` | `0` | [`quat`] tiers on the smallest three | `4 + 3b` (absolute + 2) |
//! | `bool` | its value, 1 bit | | 1 |
//! | full-width integers and floats (`u32`, `f32`, ...) | `0` | `1` + absolute | `1 + width` |
//! | `Option<T>` | `0` | `1`; against `None`: absolute `T`; against `Some`: the presence bit, then `T`'s changes | `1 + max(T abs, 1 + T changed)` |
//! | `[T; N]` | `0` | `1`, the changed indices (a bit per index or relative indices, the cheaper: [`Encoder::write_subset`]), each changed element's changes | `2 + N * (1 + T changed)` |
//! | `Vec<T>`, `Box<[T]>` of `max_len` M | `0` | `1`, the length, the changed indices among the elements the baseline has too, each changed element's changes; the elements past the baseline's length absolute | `2 + len + M * (1 + max(T changed, T abs))` |
//! | `String`, maps, sets, `with`, `#[net(absolute)]` | `0` | `1` + absolute | `1 + abs` |
//! | nested type (`#[net(delta)]` or a hand impl) | its own [`NetDelta`] | | its `MAX_DELTA_BITS` |
//!
//! "len" is `bits_required(0, M)`, "T abs" the element's `MAX_BITS`, and "T changed"
//! [`NetDelta::MAX_CHANGED_BITS`] for a nested type (its worst case less its leading
//! bit: an element already known to have changed does not send it), the element's
//! whole worst delta for any other element form. A `when` field's worst case is the
//! larger of its delta's and its absolute encoding's (against a baseline that did not
//! send it, it goes absolute); a `check` adds its 32 bits; `align` applies to absolute
//! encodings only.
//!
//! "Unchanged" is decided on the wire form: equal levels, equal smallest-three
//! integers, bit-equal full-width floats, equal absolute encodings. The receiver then
//! takes what absolute decoding of the baseline's field gives.
//!
//! # Memory
//!
//! Delta decoding allocates what absolute decoding may ([`NetSerialize::MAX_HEAP_BYTES`]):
//! a collection's length is read against its `max_len`, and its decoder reserves no
//! more than the baseline's elements plus what the input left can hold. An unchanged
//! field sent absolute (a string, a map) is rebuilt by re-reading the baseline's
//! encoding, a buffer of at most that field's absolute size while it lives.
//!
//! ```
//! use netser::{NetDelta, NetSerialize};
//!
//! /// The articles' cube: 80 bits absolute.
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! #[net(delta)]
//! struct Cube {
//!     #[net(quantize(-256.0, 255.0, 1.0 / 512.0))] x: f32, // 18 bits
//!     #[net(quantize(-256.0, 255.0, 1.0 / 512.0))] y: f32, // 18 bits
//!     #[net(quantize(0.0, 31.998046875, 1.0 / 512.0))] z: f32, // [0, 32): 14 bits
//!     #[net(quat(bits = 9))] orientation: [f32; 4],        // 29 bits
//!     interacting: bool,                                   // 1 bit
//! }
//!
//! let rest = Cube { x: 1.0, y: 2.0, z: 0.5, orientation: [0.0, 0.0, 0.0, 1.0], interacting: false };
//! assert_eq!(Cube::MAX_BITS, 80);
//! assert_eq!(rest.measure_delta_bits(&rest)?, 1);
//! let pushed = Cube { x: 1.2, ..rest.clone() }; // 0.2 m: +102 steps
//! assert_eq!(pushed.measure_delta_bits(&rest)?, 1 + 12 + 1 + 1 + 1 + 1);
//! assert_eq!(Cube::MAX_DELTA_BITS, 1 + 21 + 21 + 17 + 31 + 1);
//! # Ok::<(), netser::Error>(())
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::error::Result;
use crate::serialize::NetSerialize;
use crate::stream::{Decoder, Encoder, MeasureStream, ReadStream, WriteStream};

mod impls;
pub mod level;
pub mod quat;
#[doc(hidden)]
pub mod seq;

pub use level::{
    int_unchanged, int_unchanged_from, level_delta_max_bits, level_tiers, quantized_unchanged,
    quantized_unchanged_from, read_int_delta, read_quantized_delta, write_int_delta,
    write_quantized_delta, QuantizedFloat,
};
pub use quat::{
    quat_delta_max_bits, quat_tiers, quat_unchanged, quat_unchanged_from, read_quat_delta,
    write_quat_delta,
};

/// A type that can be sent relative to a baseline value of itself. See the
/// [module docs](self) for the contract, the rules and an example.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `NetDelta`, so netser cannot send it relative to a baseline",
    label = "`{Self}` has no delta encoding",
    note = "for a type of yours, add `#[net(delta)]` beside its `#[derive(NetSerialize)]`, or implement `NetDelta` by hand",
    note = "or mark the field `#[net(absolute)]`: it is then sent whole whenever it changed"
)]
pub trait NetDelta: NetSerialize {
    /// The most bits any delta takes, whatever the value and the baseline.
    ///
    /// ```
    /// use netser::NetDelta;
    /// assert_eq!(<u32 as NetDelta>::MAX_DELTA_BITS, 1 + 32);
    /// assert_eq!(<bool as NetDelta>::MAX_DELTA_BITS, 1);
    /// ```
    const MAX_DELTA_BITS: u64;

    /// The most bits [`NetDelta::encode_changed`] takes: the delta of a value already
    /// known to differ from its baseline. [`NetDelta::MAX_DELTA_BITS`] unless the type
    /// saves its leading "changed" bit there (a derived type does: one bit less).
    ///
    /// ```
    /// use netser::NetDelta;
    /// #[derive(netser::NetSerialize)]
    /// #[net(delta)]
    /// struct Hp { #[net(range = 0..=100)] hp: u8 }
    /// // 7 bits absolute, up to 7 + 3 relative, and the struct's "changed" bit.
    /// assert_eq!(Hp::MAX_DELTA_BITS, 1 + 10);
    /// assert_eq!(Hp::MAX_CHANGED_BITS, 10);
    /// ```
    const MAX_CHANGED_BITS: u64 = Self::MAX_DELTA_BITS;

    /// Writes `self` relative to `baseline` (to a write or a measure stream).
    ///
    /// # Errors
    /// A value outside its declared bounds (as [`NetSerialize::encode`]), or a full
    /// buffer.
    ///
    /// ```
    /// use netser::{Encoder, NetDelta, WriteStream};
    /// let mut buf = [0u8; 8];
    /// let mut w = WriteStream::new(&mut buf);
    /// 7u32.encode_delta(&7, &mut w)?;
    /// assert_eq!(w.bit_position(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()>;

    /// Reads a value written relative to `baseline`.
    ///
    /// # Errors
    /// Any bound violated by the input or by the value it describes, or the input
    /// running out.
    ///
    /// ```
    /// use netser::{NetDelta, ReadStream};
    /// assert_eq!(u32::decode_delta(&7, &mut ReadStream::new(&[0]))?, 7);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self>;

    /// Bits the delta of `self` against `baseline` takes, exactly.
    ///
    /// # Errors
    /// As [`NetDelta::encode_delta`].
    ///
    /// ```
    /// use netser::NetDelta;
    /// assert_eq!(5u8.measure_delta_bits(&6)?, 1 + 8);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn measure_delta_bits(&self, baseline: &Self) -> Result<u64> {
        let mut m = MeasureStream::new();
        self.encode_delta(baseline, &mut m)?;
        Ok(m.bits())
    }

    /// Whether the delta of `self` against `baseline` is "unchanged": `self` encodes to
    /// the same bits as `baseline` (so it decodes to what `baseline` decodes to). A
    /// container sends such an element as nothing or one bit. `false` is always safe;
    /// the default never claims "unchanged".
    ///
    /// # Errors
    /// A value outside its declared bounds, reported at bit 0 (encoding it reports the
    /// same error at its bit).
    ///
    /// ```
    /// use netser::NetDelta;
    /// assert!(3u16.is_unchanged(&3)?);
    /// assert!(!1.5f32.is_unchanged(&1.25)?);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
        let _ = baseline;
        Ok(false)
    }

    /// What an unchanged delta decodes to: exactly what absolute decoding of `baseline`'s
    /// encoding gives. The default encodes and decodes `baseline`; the derive builds it
    /// field by field.
    ///
    /// # Errors
    /// A baseline outside its declared bounds, reported at bit 0.
    ///
    /// ```
    /// use netser::NetDelta;
    /// assert_eq!(f32::decode_unchanged(&0.5)?, 0.5);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn decode_unchanged(baseline: &Self) -> Result<Self> {
        let mut buf: Vec<u8> = alloc::vec![0u8; baseline.measure_bits()?.div_ceil(8) as usize];
        let mut w = WriteStream::new(&mut buf);
        baseline.encode(&mut w)?;
        let len = w.finish();
        Self::decode(&mut ReadStream::new(&buf[..len]))
    }

    /// Writes the delta of a value that [`NetDelta::is_unchanged`] did not call
    /// unchanged, in at most [`NetDelta::MAX_CHANGED_BITS`]. The default writes the whole
    /// [`NetDelta::encode_delta`]; a derived type leaves out its leading bit.
    ///
    /// # Errors
    /// As [`NetDelta::encode_delta`].
    ///
    /// ```
    /// use netser::{NetDelta, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// 9u8.encode_changed(&8, &mut m)?; // a full-width integer: just its 8 bits
    /// assert_eq!(m.bits(), 8);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn encode_changed<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        self.encode_delta(baseline, e)
    }

    /// Reads what [`NetDelta::encode_changed`] wrote.
    ///
    /// # Errors
    /// As [`NetDelta::decode_delta`].
    ///
    /// ```
    /// use netser::{NetDelta, ReadStream};
    /// assert_eq!(u8::decode_changed(&8, &mut ReadStream::new(&[42]))?, 42);
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn decode_changed<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        Self::decode_delta(baseline, d)
    }
}

impl<T: NetDelta> NetDelta for Box<T> {
    const MAX_DELTA_BITS: u64 = T::MAX_DELTA_BITS;
    const MAX_CHANGED_BITS: u64 = T::MAX_CHANGED_BITS;
    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        (**self).encode_delta(baseline, e)
    }
    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        T::decode_delta(baseline, d).map(Box::new)
    }
    fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
        (**self).is_unchanged(baseline)
    }
    fn decode_unchanged(baseline: &Self) -> Result<Self> {
        T::decode_unchanged(baseline).map(Box::new)
    }
    fn encode_changed<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        (**self).encode_changed(baseline, e)
    }
    fn decode_changed<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        T::decode_changed(baseline, d).map(Box::new)
    }
}
