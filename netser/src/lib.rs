//! # netser
//!
//! Bit-packed, bounded, attack-safe serialization for game network protocols, as Glenn
//! Fiedler's "Building a Game Network Protocol" articles teach it, and wire-compatible
//! with the reference C++ `serialize` library.
//!
//! * [`bits`]: the word-at-a-time bit writer and reader.
//! * [`stream`]: the write, read and measure streams, and the [`Encoder`] / [`Decoder`]
//!   traits holding every primitive; [`unified`]: the articles' one-function-per-type
//!   [`Stream`]. The module docs of [`stream`] explain how the two fit.
//! * [`NetSerialize`]: one wire layout per type, with its bit bounds and schema hash;
//!   [`#[derive(NetSerialize)]`](macro@NetSerialize) writes it for you (feature
//!   `derive`, on by default) from the `#[net(...)]` field attributes listed, with an
//!   example each, on the [`attributes`] page.
//! * [`framing`]: protocol id + CRC32 + end-of-packet check.
//! * [`trace`]: which value went to which bits.
//!
//! Every read checks its bounds and returns a typed [`Error`] that says what was
//! expected, what was found, at which bit and in which field; nothing panics, loops or
//! allocates without bound on any input. Writing a value outside its bounds is an error
//! too. The wire format is specified bit by bit in the repository's `WIRE.md`.
//!
//! ```
//! use netser::{Decoder, Encoder, ReadStream, WriteStream};
//!
//! let mut buf = [0u8; 16];
//! let mut w = WriteStream::new(&mut buf);
//! w.write_int(-5i32, -10, 10)?;     // 5 bits
//! w.write_bool(true)?;              // 1 bit
//! w.write_string("gg", 31)?;        // 5 bits of length, align, 2 bytes
//! let len = w.finish();
//! assert_eq!(len, 4); // 11 bits, padded to 16, then 2 bytes
//!
//! let mut r = ReadStream::new(&buf[..len]);
//! assert_eq!(r.read_int(-10i32, 10)?, -5);
//! assert!(r.read_bool()?);
//! assert_eq!(r.read_string(31)?, "gg");
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! `netser` is `#![no_std]` (with `alloc`) when its default `std` feature is off.
#![cfg_attr(not(feature = "std"), no_std)]
// Two `unsafe` blocks in the crate, each measured in BENCHMARKS.md: the call of the
// AVX-512 or AVX2 build of the batch path after the CPU was found to have it
// (`batch::simd`), and the `set_len` that ends the build of a decoded block after its
// elements were written into the `Vec`'s spare capacity (`batch::push_block`).
#![deny(unsafe_code)]

extern crate alloc;

/// Items the derive's generated code uses; not part of the public API.
#[doc(hidden)]
#[path = "derive_support.rs"]
pub mod __private;
#[cfg(feature = "derive")]
pub mod attributes;
/// The derive's batch path over collections of derived structs; not part of the public
/// API.
#[doc(hidden)]
pub mod batch;
pub mod bits;
pub mod delta;
pub mod error;
pub mod framing;
#[cfg(feature = "glam")]
mod glam_impls;
pub mod int;
pub mod quantize;
pub mod quat;
pub mod schema;
pub mod serialize;
pub mod stream;
pub mod trace;
pub mod unified;

pub use delta::NetDelta;
pub use error::{Error, ErrorKind, Num, Result};
pub use int::RangedInt;
pub use quantize::Quantize;
pub use serialize::NetSerialize;
pub use stream::{Decoder, Encoder, MeasureStream, ReadStream, WriteStream};
pub use unified::{Direction, Never, Stream};

/// `#[derive(NetSerialize)]`: every `#[net(...)]` attribute, with an example each, is on
/// the [`attributes`] page.
#[cfg(feature = "derive")]
#[doc(inline)]
pub use netser_derive::NetSerialize;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
