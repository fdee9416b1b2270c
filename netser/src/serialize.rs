//! [`NetSerialize`]: what the derive implements, and its implementations for the
//! primitive types at their full width.
//!
//! ```
//! use netser::NetSerialize;
//!
//! // Primitives, tuples, arrays and options go at their full width.
//! let v = (true, [7u8; 2], Some(-1i16));
//! let bytes = v.to_vec()?;
//! assert_eq!(bytes.len(), (1 + 16 + 1 + 16usize).div_ceil(8));
//! assert_eq!(<(bool, [u8; 2], Option<i16>)>::decode_from_slice(&bytes)?, v);
//! assert_eq!(<(bool, [u8; 2], Option<i16>)>::MAX_BITS, 34);
//! # Ok::<(), netser::Error>(())
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::error::Result;
use crate::schema::{combine, fnv1a};
use crate::stream::{Decoder, Encoder, MeasureStream, ReadStream, WriteStream};

/// A type with one wire layout: encoded from `&self`, decoded into a fresh value, with
/// its exact size bounds and a schema hash known at compile time.
///
/// Derive it with [`#[derive(NetSerialize)]`](macro@crate::NetSerialize) (its
/// `#[net(...)]` field attributes, with an example each, are on the
/// [`attributes`](crate::attributes) page), or implement it by hand:
///
/// ```
/// use netser::{Decoder, Encoder, NetSerialize, Result};
///
/// #[derive(Debug, PartialEq)]
/// struct Health(u8); // 0..=100
///
/// impl NetSerialize for Health {
///     const MIN_BITS: u64 = 7;
///     const MAX_BITS: u64 = 7;
///     const MAX_HEAP_BYTES: u64 = 0;
///     const SCHEMA_HASH: u64 = netser::schema::fnv1a(b"Health:u8:0..=100");
///     fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
///         e.write_int(self.0, 0, 100)
///     }
///     fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
///         d.read_int(0, 100).map(Health)
///     }
/// }
///
/// let bytes = Health(99).to_vec()?;
/// assert_eq!(bytes, [99]);
/// assert_eq!(Health::decode_from_slice(&bytes)?, Health(99));
/// assert!(Health(101).to_vec().is_err());
/// # Ok::<(), netser::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `NetSerialize`, so netser cannot send it",
    label = "`{Self}` has no wire layout",
    note = "for a type of yours, add `#[derive(NetSerialize)]` to its definition, or implement `NetSerialize` by hand",
    note = "for a type you cannot change, put `#[net(with = path::to::serialize_fn, max_bits = N)]` on the field, with `fn serialize_fn<S: netser::Stream>(s: &mut S, v: &mut T) -> netser::Result<()>`",
    note = "the derive sends `Vec`, `String`, `Box<[T]>`, maps and sets of a field with `#[net(max_len = N)]`, `usize`/`isize` with `#[net(range = A..=B)]`, and glam's `Vec2`/`Vec3`/`Quat` with the `glam` feature; nested in another type (a tuple, a `Box`) they need a type of their own"
)]
pub trait NetSerialize: Sized {
    /// The fewest bits any value takes.
    ///
    /// ```
    /// use netser::NetSerialize;
    /// #[derive(NetSerialize)]
    /// struct Hit {
    ///     #[net(range = 0..=1023)]
    ///     target: u16,
    ///     #[net(max_len = 3)]
    ///     tags: Vec<bool>,
    /// }
    /// assert_eq!(Hit::MIN_BITS, 10 + 2); // the id and an empty list's length
    /// assert_eq!(Hit::MAX_BITS, 10 + 2 + 3);
    /// assert_eq!(Hit::MAX_BYTES, 2);
    /// ```
    const MIN_BITS: u64;
    /// The most bits any value takes (the worst case a packet budget must allow); see
    /// [`NetSerialize::MIN_BITS`] for an example.
    const MAX_BITS: u64;
    /// The most heap memory decoding one value allocates, in bytes: at no moment does
    /// [`NetSerialize::decode`] hold more (on top of `size_of::<Self>()`), and the value
    /// it returns owns no more, whatever the input's lengths and counts say. It is the
    /// memory half of the schema's bound, as `MAX_BITS` is the wire half: a `Vec` of up
    /// to `max_len` elements counts `max_len` times each element's size and heap, a
    /// `String` its `max_len` bytes, a map or set [`table_heap_bytes`].
    ///
    /// The derive computes it and refuses, at compile time, a collection whose elements
    /// take no bits (its length alone would decide how many values are built). Fields the
    /// derive skips are built with `Default` and not counted, nor is what a `with`
    /// function allocates. A hand implementation that allocates must state its own.
    ///
    /// ```
    /// use netser::NetSerialize;
    /// #[derive(NetSerialize)]
    /// struct Chat {
    ///     #[net(max_len = 64)]
    ///     text: String,
    ///     #[net(max_len = 4)]
    ///     ids: Vec<u32>,
    /// }
    /// assert_eq!(Chat::MAX_HEAP_BYTES, 64 + 4 * 4);
    /// ```
    const MAX_HEAP_BYTES: u64;
    /// A hash of the wire layout (see [`crate::schema`]): two types with the same fields
    /// and bounds share it, and any change to what goes on the wire changes it.
    ///
    /// ```
    /// use netser::NetSerialize;
    /// #[derive(NetSerialize)]
    /// struct V1 {
    ///     #[net(range = 0..=100)]
    ///     health: u8,
    /// }
    /// #[derive(NetSerialize)]
    /// struct V2 {
    ///     #[net(range = 0..=200)]
    ///     health: u8,
    /// }
    /// assert_ne!(V1::SCHEMA_HASH, V2::SCHEMA_HASH);
    /// ```
    const SCHEMA_HASH: u64;
    /// The most bytes any value takes on its own: `ceil(MAX_BITS / 8)`; see
    /// [`NetSerialize::MIN_BITS`] for an example.
    const MAX_BYTES: u64 = Self::MAX_BITS.div_ceil(8);

    /// Writes `self` (to a write or a measure stream).
    ///
    /// # Errors
    /// A value outside its declared bounds, or a full buffer.
    ///
    /// ```
    /// use netser::{Encoder, NetSerialize, WriteStream};
    ///
    /// #[derive(NetSerialize)]
    /// struct Input { #[net(range = -1..=1)] steer: i8, fire: bool }
    ///
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_bool(true)?; // a header of your own, then the value
    /// Input { steer: -1, fire: true }.encode(&mut w)?;
    /// assert_eq!(w.bit_position(), 1 + 2 + 1);
    /// assert!(Input { steer: 2, fire: false }.encode(&mut w).is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()>;

    /// Reads a new value.
    ///
    /// # Errors
    /// Any bound violated by the input, or the input running out.
    ///
    /// ```
    /// use netser::{Decoder, NetSerialize, ReadStream};
    ///
    /// #[derive(NetSerialize, Debug, PartialEq)]
    /// struct Input { #[net(range = -1..=1)] steer: i8, fire: bool }
    ///
    /// // Bits: header 1, steer offset 0 (= -1), fire 1.
    /// let mut r = ReadStream::new(&[0b1001]);
    /// assert!(r.read_bool()?);
    /// assert_eq!(Input::decode(&mut r)?, Input { steer: -1, fire: true });
    /// // Offset 3 is above the range -1..=1.
    /// let e = Input::decode(&mut ReadStream::new(&[0b11])).unwrap_err();
    /// assert_eq!(e.path(), "Input.steer");
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn decode<D: Decoder>(d: &mut D) -> Result<Self>;

    /// Bits `self` takes, exactly.
    ///
    /// # Errors
    /// As [`NetSerialize::encode`].
    ///
    /// ```
    /// use netser::NetSerialize;
    ///
    /// #[derive(NetSerialize)]
    /// struct Chat { #[net(max_len = 31)] text: String }
    ///
    /// assert_eq!(Chat { text: "gg".into() }.measure_bits()?, 5 + 3 + 16); // length, padding, bytes
    /// assert!(Chat { text: "x".repeat(32) }.measure_bits().is_err());
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn measure_bits(&self) -> Result<u64> {
        let mut m = MeasureStream::new();
        self.encode(&mut m)?;
        Ok(m.bits())
    }

    /// Encodes into `buf`; returns the length in bytes.
    ///
    /// # Errors
    /// As [`NetSerialize::encode`].
    ///
    /// ```
    /// use netser::{ErrorKind, NetSerialize};
    ///
    /// #[derive(NetSerialize)]
    /// struct Health(#[net(range = 0..=100)] u8);
    ///
    /// let mut buf = [0u8; 1200];
    /// let len = Health(99).encode_to_slice(&mut buf)?;
    /// assert_eq!(&buf[..len], &[99]);
    /// let e = Health(99).encode_to_slice(&mut []).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::BufferFull { .. }));
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn encode_to_slice(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = WriteStream::new(buf);
        self.encode(&mut w)?;
        Ok(w.finish())
    }

    /// Encodes into a new vector of exactly the measured length.
    ///
    /// # Errors
    /// As [`NetSerialize::encode`].
    ///
    /// ```
    /// use netser::NetSerialize;
    ///
    /// #[derive(NetSerialize)]
    /// struct Snapshot { tick: u16, #[net(max_len = 32, range = 0..=100)] health: Vec<u8> }
    ///
    /// let bytes = Snapshot { tick: 7, health: vec![100, 50] }.to_vec()?;
    /// assert_eq!(bytes.len(), (16 + 6 + 2 * 7usize).div_ceil(8));
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn to_vec(&self) -> Result<Vec<u8>> {
        let bits = self.measure_bits()?;
        let mut buf = alloc::vec![0u8; bits.div_ceil(8) as usize];
        let len = self.encode_to_slice(&mut buf)?;
        buf.truncate(len);
        Ok(buf)
    }

    /// Decodes from `bytes` (trailing bits are allowed; see [`crate::framing`] for
    /// packets that must be consumed whole).
    ///
    /// # Errors
    /// As [`NetSerialize::decode`].
    ///
    /// ```
    /// use netser::{ErrorKind, NetSerialize};
    ///
    /// #[derive(NetSerialize, Debug, PartialEq)]
    /// struct Snapshot { tick: u16, #[net(max_len = 32, range = 0..=100)] health: Vec<u8> }
    ///
    /// let v = Snapshot { tick: 7, health: vec![100, 50] };
    /// assert_eq!(Snapshot::decode_from_slice(&v.to_vec()?)?, v);
    /// // Cut short: the error says where and in which field.
    /// let e = Snapshot::decode_from_slice(&[7]).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }));
    /// assert_eq!(e.path(), "Snapshot.tick");
    /// # Ok::<(), netser::Error>(())
    /// ```
    fn decode_from_slice(bytes: &[u8]) -> Result<Self> {
        Self::decode(&mut ReadStream::new(bytes))
    }

    /// Derived code only: when non-zero, every value takes exactly this many bits
    /// (1..=64), given by [`NetSerialize::pack_fixed`] as one integer, so a parent
    /// struct packs it into its own run of fixed-width fields.
    #[doc(hidden)]
    const PACKED_BITS: u32 = 0;

    /// Derived code only: the bits [`NetSerialize::encode`] writes, as one integer
    /// (LSB first), when [`NetSerialize::PACKED_BITS`] is non-zero; errors at `bit`.
    #[doc(hidden)]
    #[inline(always)]
    fn pack_fixed(&self, bit: u64) -> Result<u64> {
        Err(crate::Error::new(
            crate::ErrorKind::Custom("not a fixed-width type"),
            bit,
        ))
    }

    /// Derived code and the collections only: writes `items` in order, element `i`
    /// with its index on the trace path and on its error. The derive overrides it for a
    /// struct of fixed-width fields with a batch path ([`crate::batch`]) giving the same
    /// bytes and errors.
    ///
    /// # Errors
    /// The first element's error, with its index.
    #[doc(hidden)]
    #[inline]
    fn encode_slice<E: Encoder>(items: &[Self], e: &mut E) -> Result<()> {
        crate::batch::encode_each(items, 0, e)
    }

    /// Derived code and the collections only: reads `len` elements and appends them to
    /// `out`, element `i` with its index on the trace path and on its error; pushes no
    /// more than it has read (the caller's reservation bounds the memory).
    ///
    /// # Errors
    /// The first element's error, with its index.
    #[doc(hidden)]
    #[inline]
    fn decode_extend<D: Decoder>(d: &mut D, len: usize, out: &mut Vec<Self>) -> Result<()> {
        crate::batch::decode_each(d, 0, len, out)
    }

    /// Derived code only: [`NetSerialize::pack_fixed`] of `get(i)` into `out[i]` for
    /// every lane with `active[i]`; `false` when some active lane fails (its error then
    /// comes from the element-by-element path). The derive overrides it with columns.
    #[doc(hidden)]
    #[inline(always)]
    fn pack_fixed_column<'a, const N: usize>(
        get: impl Fn(usize) -> &'a Self,
        active: &[bool; N],
        out: &mut [u64; N],
        level: crate::batch::SimdLevel,
    ) -> bool
    where
        Self: 'a,
    {
        let _ = level;
        let mut ok = true;
        for i in 0..N {
            if active[i] {
                match get(i).pack_fixed(0) {
                    Ok(v) => out[i] = v,
                    Err(_) => ok = false,
                }
            }
        }
        ok
    }

    /// Derived code only: the values of `N` packed forms (as
    /// [`NetSerialize::pack_fixed`] gives them) when every active lane is valid, as a
    /// function of the lane (`0..N`; an inactive lane gives any value), so the caller
    /// builds each element in place with no iterator to keep in step. `level` is the
    /// code generation the caller runs at ([`crate::batch::simd_with`]'s argument).
    /// `None` sends the caller to the element-by-element path (the default: no batch).
    #[doc(hidden)]
    #[inline(always)]
    fn unpack_fixed_column<const N: usize>(
        raw: [u64; N],
        active: [bool; N],
        level: crate::batch::SimdLevel,
    ) -> Option<impl Fn(usize) -> Self> {
        let _ = (raw, active, level);
        None::<fn(usize) -> Self>
    }
}

/// The most heap bytes a map or set of up to `len` entries of `entry` bytes each
/// (`size_of` of the key and value, or of the element) takes while a decoder builds it by
/// inserting one entry at a time, whether it is a `HashMap`/`HashSet` or a
/// `BTreeMap`/`BTreeSet`: the larger of the two figures below, saturating.
///
/// - Hash table: a power-of-two number of buckets (at least 4) holding at most 7/8 of
///   them (all but one below 8), each an entry and a control byte, plus 16 control bytes
///   and up to 15 of alignment; while it grows, the old table, half the size, lives
///   beside the new one.
/// - B-tree: nodes of 11 entries and up to 160 bytes of links and lengths; insertion
///   splits a full node into two of at least 5 entries, so `n` entries take at most
///   `(n - 1) / 5 + 1` nodes, plus one being split.
///
/// The derive uses it for `MAX_HEAP_BYTES` of map and set fields.
///
/// ```
/// use netser::serialize::table_heap_bytes;
/// assert_eq!(table_heap_bytes(0, 8), 0);
/// let bytes = table_heap_bytes(100, 8);
/// assert!(bytes >= 100 * 8 && bytes < 100 * 8 * 10);
/// ```
pub const fn table_heap_bytes(len: u64, entry: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let mut buckets: u64 = 4;
    loop {
        let capacity = if buckets < 8 {
            buckets - 1
        } else {
            buckets / 8 * 7
        };
        if capacity >= len || buckets > u64::MAX / 4 {
            break;
        }
        buckets *= 2;
    }
    const fn table(buckets: u64, entry: u64) -> u64 {
        buckets
            .saturating_mul(entry.saturating_add(1))
            .saturating_add(31)
    }
    let hash = table(buckets, entry).saturating_add(table(buckets / 2, entry));
    let nodes = (len - 1) / 5 + 2;
    let btree = nodes.saturating_mul(entry.saturating_mul(11).saturating_add(160));
    if hash > btree {
        hash
    } else {
        btree
    }
}

macro_rules! full_width_int {
    ($($t:ty),*) => {$(
        impl NetSerialize for $t {
            const MIN_BITS: u64 = <$t>::BITS as u64;
            const MAX_BITS: u64 = <$t>::BITS as u64;
            const MAX_HEAP_BYTES: u64 = 0;
            const SCHEMA_HASH: u64 = fnv1a(stringify!($t).as_bytes());
            #[inline]
            fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
                e.write_int(*self, <$t>::MIN, <$t>::MAX)
            }
            #[inline]
            fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
                d.read_int(<$t>::MIN, <$t>::MAX)
            }
        }
    )*};
}

full_width_int!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl NetSerialize for bool {
    const MIN_BITS: u64 = 1;
    const MAX_BITS: u64 = 1;
    const MAX_HEAP_BYTES: u64 = 0;
    const SCHEMA_HASH: u64 = fnv1a(b"bool");
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_bool(*self)
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        d.read_bool()
    }
}

impl NetSerialize for f32 {
    const MIN_BITS: u64 = 32;
    const MAX_BITS: u64 = 32;
    const MAX_HEAP_BYTES: u64 = 0;
    const SCHEMA_HASH: u64 = fnv1a(b"f32");
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_f32(*self)
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        d.read_f32()
    }
}

impl NetSerialize for f64 {
    const MIN_BITS: u64 = 64;
    const MAX_BITS: u64 = 64;
    const MAX_HEAP_BYTES: u64 = 0;
    const SCHEMA_HASH: u64 = fnv1a(b"f64");
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_f64(*self)
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        d.read_f64()
    }
}

impl NetSerialize for () {
    const MIN_BITS: u64 = 0;
    const MAX_BITS: u64 = 0;
    const MAX_HEAP_BYTES: u64 = 0;
    const SCHEMA_HASH: u64 = fnv1a(b"()");
    #[inline]
    fn encode<E: Encoder>(&self, _: &mut E) -> Result<()> {
        Ok(())
    }
    #[inline]
    fn decode<D: Decoder>(_: &mut D) -> Result<Self> {
        Ok(())
    }
}

/// An array: its elements in order, nothing else.
impl<T: NetSerialize, const N: usize> NetSerialize for [T; N] {
    const MIN_BITS: u64 = T::MIN_BITS.saturating_mul(N as u64);
    const MAX_BITS: u64 = T::MAX_BITS.saturating_mul(N as u64);
    // Built in a vector of exactly N elements, then moved out.
    const MAX_HEAP_BYTES: u64 = (N as u64)
        .saturating_mul((core::mem::size_of::<T>() as u64).saturating_add(T::MAX_HEAP_BYTES));
    const SCHEMA_HASH: u64 = combine(combine(fnv1a(b"[T; N]"), N as u64), T::SCHEMA_HASH);
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        T::encode_slice(self, e)
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        let mut items = Vec::with_capacity(N);
        T::decode_extend(d, N, &mut items)?;
        // Exactly N elements were pushed, so the conversion cannot fail.
        items
            .try_into()
            .map_err(|_| crate::Error::new(crate::ErrorKind::Custom("array length"), 0))
    }
}

/// An `Option`: one presence bit, then the value when present.
impl<T: NetSerialize> NetSerialize for Option<T> {
    const MIN_BITS: u64 = 1;
    const MAX_BITS: u64 = 1 + T::MAX_BITS;
    const MAX_HEAP_BYTES: u64 = T::MAX_HEAP_BYTES;
    const SCHEMA_HASH: u64 = combine(fnv1a(b"Option"), T::SCHEMA_HASH);
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_option(self.as_ref())
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        d.read_option()
    }
}

/// A box is its contents.
impl<T: NetSerialize> NetSerialize for Box<T> {
    const MIN_BITS: u64 = T::MIN_BITS;
    const MAX_BITS: u64 = T::MAX_BITS;
    const MAX_HEAP_BYTES: u64 =
        (core::mem::size_of::<T>() as u64).saturating_add(T::MAX_HEAP_BYTES);
    const SCHEMA_HASH: u64 = T::SCHEMA_HASH;
    #[inline]
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        (**self).encode(e)
    }
    #[inline]
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        T::decode(d).map(Box::new)
    }
}

macro_rules! tuple {
    ($($name:ident $idx:tt),+) => {
        /// A tuple: its elements in order.
        impl<$($name: NetSerialize),+> NetSerialize for ($($name,)+) {
            const MIN_BITS: u64 = 0 $(+ $name::MIN_BITS)+;
            const MAX_BITS: u64 = 0 $(+ $name::MAX_BITS)+;
            const MAX_HEAP_BYTES: u64 = 0 $(+ $name::MAX_HEAP_BYTES)+;
            const SCHEMA_HASH: u64 = {
                let mut h = fnv1a(b"tuple");
                $(h = combine(h, $name::SCHEMA_HASH);)+
                h
            };
            #[inline]
            fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
                $(self.$idx.encode(e).map_err(|err| err.at_index($idx))?;)+
                Ok(())
            }
            #[inline]
            fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
                Ok(($($name::decode(d).map_err(|err| err.at_index($idx))?,)+))
            }
        }
    };
}

tuple!(T0 0);
tuple!(T0 0, T1 1);
tuple!(T0 0, T1 1, T2 2);
tuple!(T0 0, T1 1, T2 2, T3 3);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!(<[u16; 3]>::MAX_BITS, 48);
        assert_eq!(<Option<u32>>::MIN_BITS, 1);
        assert_eq!(<Option<u32>>::MAX_BITS, 33);
        assert_eq!(<(u8, bool)>::MAX_BITS, 9);
        assert_ne!(<[u8; 2]>::SCHEMA_HASH, <[u8; 3]>::SCHEMA_HASH);
        assert_eq!(<(u8, f64, Option<bool>)>::MAX_HEAP_BYTES, 0);
        assert_eq!(<[u16; 3]>::MAX_HEAP_BYTES, 6);
        assert_eq!(<Box<[u32; 2]>>::MAX_HEAP_BYTES, 8 + 8);
        assert_ne!(<(u8, u16)>::SCHEMA_HASH, <(u16, u8)>::SCHEMA_HASH);
    }

    #[test]
    fn round_trips() {
        let v = ([1i16, -2, 3], Some(7u8), (), true);
        let bytes = v.to_vec().unwrap();
        assert_eq!(bytes.len() as u64, v.measure_bits().unwrap().div_ceil(8));
        assert_eq!(
            <([i16; 3], Option<u8>, (), bool)>::decode_from_slice(&bytes).unwrap(),
            v
        );
    }

    #[test]
    fn array_errors_carry_the_index() {
        let e = <[u32; 4]>::decode_from_slice(&[0; 10]).unwrap_err();
        assert_eq!(e.path(), "[2]");
    }
}
