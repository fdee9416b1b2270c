//! Every `#[net(...)]` attribute of [`#[derive(NetSerialize)]`](macro@crate::NetSerialize),
//! with an example each.
//!
//! The derive writes a type's wire layout from its fields and these attributes:
//! [`NetSerialize::encode`](crate::NetSerialize::encode) (from `&T`),
//! [`decode`](crate::NetSerialize::decode) (into a fresh `T`), exact `MIN_BITS` / `MAX_BITS`
//! constants and a `SCHEMA_HASH`, all from one parsed description of the type. Every
//! value that crosses the wire has a bound known at compile time; a schema that breaks
//! a rule is a compile error that underlines the offending tokens and says what to write
//! instead, every error of the type at once. The wire format is specified in the
//! repository's `WIRE.md`.
//!
//! | attribute | on | what it does |
//! |---|---|---|
//! | [`range = A..=B`](#range) | integers | any integer in `bits_required(A, B)` bits |
//! | [`bits = N`](#bits) | unsigned integers | `N` raw bits |
//! | [`quantize(min, max, res)`](#quantize), [`clamp`](#quantize) | `f32`, `f64`, arrays of them, glam `Vec2`/`Vec3` (feature `glam`) | a float as an integer step of `res` |
//! | [`quat(bits = N)`](#quat) | `[f32; 4]`, glam `Quat` | smallest-three quaternion |
//! | [`align`](#align) | any field | pad to a byte boundary first |
//! | [`max_len = N`](#max_len) | `Vec`, `String`, `Box<[T]>`, maps, sets | the most elements (bytes for a `String`) |
//! | [`skip`](#skip), [`default = expr`](#skip) | any field | not sent; decodes to a default |
//! | [`with = path, max_bits = N`](#with) | any field | a hand-written unified serialize function |
//! | [`when = expr`](#when) | any field but the first | sent only when `expr` is true |
//! | [`check = 0x...`](#check) | any field | a serialize check before the field |
//! | [`absolute`](#absolute) | any field of a `delta` type | sent whole when it changed, never relative |
//! | [`max_bytes = N`](#max_bytes) | the struct or enum | a compile error when the worst case is larger |
//! | [`crate = "path"`](#crate) | the struct or enum | the path to `netser` when it is re-exported |
//! | [`delta`](#delta) | the struct or enum | also implement [`NetDelta`](crate::NetDelta): sent relative to a baseline |
//!
//! ```
//! use netser::NetSerialize;
//!
//! #[derive(NetSerialize, Debug, PartialEq)]
//! struct PlayerState {
//!     #[net(range = 0..=100)]                // 7 bits
//!     health: u8,
//!     #[net(quantize(-512.0, 512.0, 0.01))]  // 17 bits per component
//!     position: [f32; 3],
//!     #[net(max_len = 16)]                   // 5-bit length, then bytes
//!     name: String,
//! }
//!
//! let p = PlayerState { health: 99, position: [1.0, 2.0, 3.0], name: "ada".into() };
//! let bytes = p.to_vec()?;
//! assert_eq!(PlayerState::decode_from_slice(&bytes)?, p);
//! assert_eq!(PlayerState::MIN_BITS, 7 + 3 * 17 + 5);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! # Types
//!
//! Structs (named, tuple, unit), enums (unit, tuple and struct variants) and generic
//! types (each type parameter gets a `NetSerialize` bound). Field types are classified
//! by their syntax: integers, `f32`/`f64`, `bool`, `[T; N]`, `Vec<T>`, `Box<[T]>`,
//! `String`, `Option<T>`, `HashMap`/`BTreeMap`/`HashSet`/`BTreeSet` and, with the
//! `glam` feature, glam's `Vec2`/`Vec3`/`Quat`; any other type is nested and sent by
//! its own `NetSerialize` impl. Unions are refused. An enum sends its variant index
//! (declaration order) in `bits_required(0, variants - 1)` bits; an unknown tag is a
//! decode error.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize, Debug, PartialEq)]
//! enum Packet {
//!     Ping,                                            // tag 0
//!     Input(#[net(bits = 6)] u8),                      // tag 1
//!     Chat { #[net(max_len = 140)] text: String },     // tag 2
//! }
//! assert_eq!(Packet::Ping.to_vec()?, [0]);             // a 2-bit tag
//! assert!(Packet::decode_from_slice(&[3]).is_err());   // no variant 3
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! # Field attributes
//!
//! Attributes apply element-wise through arrays, `Vec`, `Box<[T]>`, `Option`, sets,
//! map values and nested combinations of them.
//!
//! ## range
//!
//! **`range = A..=B`**, **`range = A..B`**: any integer in `bits_required(A, B)` bits.
//! Bounds may be negative, constants or constant expressions (checked by a `const`
//! assertion); a value outside the range is an error on write and on read.
//!
//! ```
//! # use netser::NetSerialize;
//! const MAX_PLAYERS: u8 = 64;
//! #[derive(NetSerialize)]
//! struct Lobby {
//!     #[net(range = 1..=MAX_PLAYERS)]
//!     players: u8,                           // 6 bits
//!     #[net(range = -8..8)]
//!     offsets: [i8; 2],                      // 4 bits each
//! }
//! assert_eq!(Lobby::MAX_BITS, 6 + 8);
//! assert!(Lobby { players: 65, offsets: [0, 0] }.to_vec().is_err());
//! ```
//!
//! ## bits
//!
//! **`bits = N`**: an unsigned integer in `N` raw bits; a value of `2^N` or more is an
//! error.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct Buttons(#[net(bits = 6)] u8);
//! assert_eq!(Buttons::MAX_BITS, 6);
//! assert!(Buttons(64).to_vec().is_err());
//! ```
//!
//! ## quantize
//!
//! **`quantize(min, max, res)`** (or `quantize(min = .., max = .., res = ..)`): an
//! `f32`/`f64` as an integer step of `res` in `min..=max`; parameters are `f32`
//! expressions. On an array (or a glam `Vec2`/`Vec3`) every element is quantized alike.
//! Out-of-range values are an error unless **`clamp`** is given (beside it, or inside:
//! `quantize(0.0, 1.0, 0.01, clamp)`); NaN and the infinities are always an error, with
//! `clamp` too.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct Aim {
//!     #[net(quantize(min = -180.0, max = 180.0, res = 0.1))]
//!     yaw: f32,                                  // 12 bits
//!     #[net(quantize(0.0, 1.0, 0.01), clamp)]
//!     trigger: f32,                              // 7 bits; 1.5 is sent as 1.0
//! }
//! assert_eq!(Aim::MAX_BITS, 12 + 7);
//! assert!(Aim { yaw: 0.0, trigger: 1.5 }.to_vec().is_ok());
//! assert!(Aim { yaw: 181.0, trigger: 0.0 }.to_vec().is_err());
//! assert!(Aim { yaw: f32::NAN, trigger: 0.0 }.to_vec().is_err());
//! ```
//!
//! ## quat
//!
//! **`quat(bits = N)`** (or `quat(N)`): a unit quaternion `[x, y, z, w]` (or glam's `Quat`) in
//! smallest-three form: the largest component's index in 2 bits, the other three in
//! `N` bits each, `N` from 2 to 20 (9 to 12 is typical). The reader refuses an encoding
//! the writer would never produce (the omitted component not the largest), so every
//! decoded quaternion encodes back to the same bits.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct Body {
//!     #[net(quat(bits = 9))]
//!     orientation: [f32; 4],
//! }
//! assert_eq!(Body::MAX_BITS, 2 + 3 * 9);
//! ```
//!
//! ## align
//!
//! **`align`**: pad with zero bits to the next byte boundary before the field (the
//! reader refuses non-zero padding).
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct Block { flag: bool, #[net(align)] data: [u8; 2] }
//! assert_eq!(Block { flag: true, data: [7, 8] }.to_vec()?, [1, 7, 8]);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! ## max_len
//!
//! **`max_len = N`**: the most elements (bytes for a `String`) of a `Vec`, `String`,
//! `Box<[T]>`, map or set; required on each of them. The length goes first in
//! `bits_required(0, N)` bits; a longer collection is an error, and a decoder never
//! allocates for more elements than the input can hold. Map keys and set elements go
//! in increasing order (see [Maps and sets](#maps-and-sets)).
//!
//! ```
//! # use netser::NetSerialize;
//! use std::collections::BTreeMap;
//! #[derive(NetSerialize)]
//! struct Inventory {
//!     #[net(max_len = 16, range = 1..=99)]
//!     stacks: BTreeMap<u16, u8>,
//!     #[net(max_len = 4)]
//!     tags: Vec<String>,                     // 4 strings of up to 4 bytes
//! }
//! assert!(Inventory { stacks: BTreeMap::new(), tags: vec!["toolong".into()] }.to_vec().is_err());
//! ```
//!
//! ### Maps and sets
//!
//! `HashMap<K, V>`, `BTreeMap<K, V>`, `HashSet<T>` and `BTreeSet<T>` (any hasher
//! parameter) send their length, then their entries (key, then value) or elements **in
//! increasing key order**. The wire format of a map does not depend on its type: a
//! `HashMap` and a `BTreeMap` with the same entries encode to the same bits, and a hash
//! map encodes to the same bits whatever its hash seed, capacity or insertion history,
//! in every process. So the key type (the element type of a set) needs `Ord`, consistent
//! with its `Eq`; without it the field does not compile, with an error at the key type.
//!
//! Encoding a hash map or set sorts it: after the length is checked against `max_len`,
//! the encoder collects references to the entries into a `Vec` (one allocation of at
//! most `max_len` pairs of references) and sorts them by key, `O(n log n)` comparisons.
//! A `BTreeMap` / `BTreeSet` is already in order and costs nothing extra. Two keys a
//! hash map holds apart but whose `Ord` calls equal are an encode error (a decoder
//! would refuse them as duplicates).
//!
//! A decoder refuses keys (elements) that are not in strictly increasing order, for
//! every map and set type alike: a key below the one before it is `map keys not in
//! increasing order` (`set elements not in increasing order`), a key equal to it is
//! `duplicate key in a map` (`duplicate element in a set`), both at the first bit of the
//! offending entry, with its index in the error path (`Scores.points[1].key`). Any
//! other order would decode to a value that encodes to other bits.
//!
//! ```
//! # use netser::{Encoder, ErrorKind, NetSerialize, WriteStream};
//! use std::collections::{BTreeMap, HashMap};
//!
//! #[derive(NetSerialize, Debug, PartialEq)]
//! struct Scores {
//!     #[net(max_len = 8, range = 0..=999)]
//!     points: HashMap<u8, u16>,
//! }
//! #[derive(NetSerialize, Debug, PartialEq)]
//! struct OrderedScores {
//!     #[net(max_len = 8, range = 0..=999)]
//!     points: BTreeMap<u8, u16>,
//! }
//!
//! let entries = [(9, 120), (2, 999), (5, 0)];
//! let hashed = Scores { points: HashMap::from(entries) };
//! let bytes = hashed.to_vec()?;
//! // Keys 2, 5, 9 in that order, whatever the table's own order: the BTreeMap's bits.
//! assert_eq!(bytes, OrderedScores { points: BTreeMap::from(entries) }.to_vec()?);
//! assert_eq!(Scores::decode_from_slice(&bytes)?, hashed);
//!
//! // Keys 9 then 2, written by hand: refused, at the second entry's key.
//! let mut buf = [0u8; 8];
//! let mut w = WriteStream::new(&mut buf);
//! w.write_int(2usize, 0, 8)?; // length: 4 bits
//! for key in [9u8, 2] {
//!     w.write_value(&key)?; // 8 bits
//!     w.write_int(1u16, 0, 999)?; // 10 bits
//! }
//! let len = w.finish();
//! let err = Scores::decode_from_slice(&buf[..len]).unwrap_err();
//! assert_eq!(err.kind(), &ErrorKind::Custom("map keys not in increasing order"));
//! assert_eq!(err.path(), "Scores.points[1].key");
//! assert_eq!(err.bit(), 22);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! ## skip
//!
//! **`skip`**: not sent; decodes to `Default::default()`, or to the value of
//! **`default = expr`** (a bare `default` is `Default::default()` too). A field under
//! [`when`](#when) takes `default = expr` as well, for when its condition is false.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize, Debug, PartialEq)]
//! struct Cached {
//!     id: u8,
//!     #[net(skip)]
//!     local_frame: u32,
//!     #[net(skip, default = 1.0)]
//!     interpolation: f32,
//! }
//! let back = Cached::decode_from_slice(&Cached { id: 3, local_frame: 9, interpolation: 0.5 }.to_vec()?)?;
//! assert_eq!(back, Cached { id: 3, local_frame: 0, interpolation: 1.0 });
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! ## with
//!
//! **`with = path, max_bits = N`**: a hand-written unified serialize function
//! `fn<S: netser::Stream>(&mut S, &mut T) -> netser::Result<()>`, as the articles write
//! them. Encode runs it on a clone of the field (the field type must be `Clone`), decode
//! on `T::default()`. `max_bits` bounds what it writes, so the type's worst case stays
//! known; writing or reading more is an error.
//!
//! ```
//! # use netser::NetSerialize;
//! use netser::{Result, Stream};
//! fn serialize_percent<S: Stream>(s: &mut S, v: &mut u8) -> Result<()> {
//!     s.serialize_int(v, 0, 100)
//! }
//! #[derive(NetSerialize)]
//! struct Loading {
//!     #[net(with = serialize_percent, max_bits = 7)]
//!     percent: u8,
//! }
//! assert_eq!(Loading { percent: 42 }.measure_bits()?, 7);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! ## when
//!
//! **`when = expr`**: the field is sent only when `expr` is true. The expression sees
//! the fields sent before it, by name (`_0`, `_1`... in tuples), as shared references;
//! nothing is sent for the condition itself. When false, the field (with its `check`
//! and `align`) is absent and decodes to `Default::default()` or `default = expr`.
//! This is the article's rigid body at rest:
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct RigidBody {
//!     #[net(quantize(-256.0, 256.0, 0.01))]
//!     position: [f32; 3],
//!     at_rest: bool,
//!     #[net(when = !at_rest, quantize(-32.0, 32.0, 0.01))]
//!     linear_velocity: [f32; 3],
//! }
//! let resting = RigidBody { position: [0.0; 3], at_rest: true, linear_velocity: [0.0; 3] };
//! assert_eq!(resting.measure_bits()?, 3 * 16 + 1);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! ## check
//!
//! **`check = 0x...`**: a 32-bit serialize check written before the field; the reader
//! reports a mismatch at that field, which pins down where a desynchronisation began.
//!
//! ```
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! struct Sections { a: u8, #[net(check = 0x5EC7_10A1)] b: u8 }
//! assert_eq!(Sections::MAX_BITS, 8 + 32 + 8);
//! ```
//!
//! ## absolute
//!
//! **`absolute`**: in a [`delta`](#delta) type, the field goes as one "changed" bit
//! and, when it changed, its absolute encoding: never relative to the baseline's value.
//! For a field whose changes are large or random (a seed, an id), where the relative
//! tiers would only add their flag bits; and for a nested type that has no
//! [`NetDelta`](crate::NetDelta) impl (otherwise a compile error at its type says to add
//! one or this). "Changed" compares the two absolute encodings, so a quantized float
//! that rounds to the baseline's step is unchanged. Strings, maps, sets and `with`
//! fields always go this way.
//!
//! ```
//! # use netser::{NetDelta, NetSerialize};
//! #[derive(NetSerialize, Clone)]
//! #[net(delta)]
//! struct Spawn {
//!     #[net(absolute)]
//!     seed: u32,                      // 1 bit, or 1 + 32 bits
//!     #[net(range = 0..=1000)]
//!     count: u16,                     // relative: 1 bit, or up to 10 + 3 bits
//! }
//! let a = Spawn { seed: 7, count: 500 };
//! let b = Spawn { seed: 8, count: 501 };
//! assert_eq!(b.measure_delta_bits(&a)?, 1 + (1 + 32) + (2 + 3));
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! # Container attributes
//!
//! ## max_bytes
//!
//! **`max_bytes = N`**: a compile error, naming the type and both sizes, when the
//! worst case can exceed `N` bytes. A generic type is checked for each instance that
//! is used, when it is compiled to code (`cargo build`; `cargo check` stops before).
//!
//! ```compile_fail
//! # use netser::NetSerialize;
//! #[derive(NetSerialize)]
//! #[net(max_bytes = 4)]
//! struct Header {
//!     sequence: u32,
//!     flags: u8,      // 5 bytes in the worst case: a compile error naming `Header`, 5 and 4
//! }
//! # fn main() { let _ = Header::MAX_BYTES; }
//! ```
//!
//! ## crate
//!
//! **`crate = "path"`**: the path to `netser` for crates that re-export it.
//!
//! ```
//! # use netser::NetSerialize;
//! mod engine {
//!     pub mod net { pub use netser::*; } // an engine re-exporting netser
//! }
//!
//! #[derive(NetSerialize)]
//! #[net(max_bytes = 1200, crate = "engine::net")]
//! struct Snapshot {
//!     #[net(max_len = 64)]
//!     entities: Vec<[u8; 16]>,               // 7 + 64 x 128 bits: 1025 bytes
//! }
//! ```
//!
//! ## delta
//!
//! **`delta`**: the derive also implements [`NetDelta`](crate::NetDelta) from the same
//! fields: a value sent relative to a baseline value the receiver holds ("Snapshot
//! Compression"). A whole unchanged value is one bit; otherwise each field says
//! whether it changed in one bit, and a changed one goes relative to the baseline's:
//! ranged integers, `bits` integers and quantized floats as a change of their integer
//! level in tiers sized from the field's own bits, quaternions on their smallest three,
//! collections as the indices of their changed elements relative to each other; enum
//! variants keep their fields relative while the variant is the baseline's. The
//! worst case is `MAX_DELTA_BITS`, a constant, at most a few bits over `MAX_BITS` per
//! field (the exact bound per field kind is in [`crate::delta`]'s docs). Decoding gives
//! exactly what absolute decoding of the value gives, with every bound checked.
//! Nested types need their own `NetDelta` (`#[net(delta)]` on them, or `#[net(absolute)]`
//! on the field); `align` applies to the absolute encoding only.
//!
//! ```
//! use netser::{NetDelta, NetSerialize, ReadStream, WriteStream};
//!
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! #[net(delta)]
//! struct Body {
//!     #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
//!     x: f32,                                  // 18 bits absolute
//!     #[net(quat(bits = 9))]
//!     orientation: [f32; 4],                   // 29 bits absolute
//! }
//!
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! #[net(delta)]
//! struct World {
//!     #[net(range = 0..=65535)]
//!     tick: u32,
//!     #[net(max_len = 256)]
//!     bodies: Vec<Body>,
//! }
//!
//! let body = Body { x: 0.0, orientation: [0.0, 0.0, 0.0, 1.0] };
//! let baseline = World { tick: 10, bodies: vec![body.clone(); 100] };
//! let mut now = World { tick: 16, ..baseline.clone() };
//! now.bodies[42].x = 0.01;                    // 5 steps: the small tier
//!
//! let mut buf = [0u8; 64];
//! let mut w = WriteStream::new(&mut buf);
//! now.encode_delta(&baseline, &mut w)?;
//! // Changed; tick +6 (2 + 4 bits); bodies changed, length (9 bits), relative indices
//! // (1 + 13 for +43, 13 for the end), body 42's x +5 (2 + 5) and orientation (1).
//! assert_eq!(now.measure_delta_bits(&baseline)?, 1 + 6 + 1 + 9 + 1 + 26 + 8);
//! let len = w.finish();
//! assert_eq!(len, 7); // 4725 bits absolute
//! let got = World::decode_delta(&baseline, &mut ReadStream::new(&buf[..len]))?;
//! assert_eq!(got, World::decode_from_slice(&now.to_vec()?)?);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! # Rules the derive checks
//!
//! Each is a compile error on the tokens at fault, with what to write instead:
//!
//! - `usize` and `isize` need `range` or `bits`: their width differs between machines.
//! - A field takes at most one of `range`, `bits`, `quantize` and `quat`, and each only
//!   on the types in the table above.
//! - `with` needs `max_bits`, and `max_bits` needs `with`; `with` excludes the size
//!   attributes (`range`, `bits`, `quantize`, `quat`, `max_len`): its function decides
//!   the bits.
//! - `skip` excludes every other attribute but `default`; `default` needs `skip` or
//!   `when` (a field that is always sent never takes a default).
//! - `when` is refused on the first field and may name only fields sent before it.
//! - Every collection has a `max_len`, nested ones included (a `Vec` inside a tuple or a
//!   `Box` needs a type of its own).
//! - `#[net]` attributes go on fields and on the type, not on enum variants (put them
//!   on the variant's fields); enums need at least one variant; unions are refused.
//! - `absolute` needs `delta` on the type, and excludes `skip`; `delta` and `absolute`
//!   take no value. In a `delta` type, every nested type sent relatively implements
//!   `NetDelta` (one error at its type otherwise).
//! - `max_bytes` is checked against the worst case, and a collection whose elements take
//!   no bits is refused (its length alone would decide how many values are built).
//!   These two are constants evaluated when the code is built, so `cargo build` reports
//!   them and `cargo check` may not.
//!
//! # Errors, traces and hashes
//!
//! Decode errors carry the field path (`Snapshot.entities[3].health`), the value, the
//! bound and the bit offset; [`trace::layout`](crate::trace::layout) prints the bit layout of any value
//! with the same paths. `SCHEMA_HASH` hashes the wire layout (field names and order,
//! types, bounds, quantization, nested types' hashes) and is usable as the framing's
//! protocol id.
