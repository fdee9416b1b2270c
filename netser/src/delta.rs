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

use crate::error::Result;
use crate::serialize::NetSerialize;
use crate::stream::{Decoder, Encoder, MeasureStream};

/// A type that can be sent relative to a baseline value of itself. See the
/// [module docs](self) for the contract.
pub trait NetDelta: NetSerialize {
    /// The most bits any delta takes, whatever the value and the baseline.
    const MAX_DELTA_BITS: u64;

    /// Writes `self` relative to `baseline` (to a write or a measure stream).
    ///
    /// # Errors
    /// A value outside its declared bounds (as [`NetSerialize::encode`]), or a full
    /// buffer.
    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()>;

    /// Reads a value written relative to `baseline`.
    ///
    /// # Errors
    /// Any bound violated by the input or by the value it describes, or the input
    /// running out.
    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self>;

    /// Bits the delta of `self` against `baseline` takes, exactly.
    ///
    /// # Errors
    /// As [`NetDelta::encode_delta`].
    fn measure_delta_bits(&self, baseline: &Self) -> Result<u64> {
        let mut m = MeasureStream::new();
        self.encode_delta(baseline, &mut m)?;
        Ok(m.bits())
    }
}
