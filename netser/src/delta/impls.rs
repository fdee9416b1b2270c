//! [`NetDelta`] for the primitives at their full width, `Option`, arrays and tuples.

use super::{seq, NetDelta};
use crate::error::Result;
use crate::stream::{Decoder, Encoder};
use crate::NetSerialize;

/// A full-width value: `0` when its bits equal the baseline's, else `1` and the value.
macro_rules! changed_bit_then_absolute {
    ($($t:ty, $same:expr;)*) => {$(
        impl NetDelta for $t {
            const MAX_DELTA_BITS: u64 = 1 + <$t as NetSerialize>::MAX_BITS;
            #[inline]
            fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
                let same: fn(&$t, &$t) -> bool = $same;
                if same(self, baseline) {
                    e.write_bool(false)
                } else {
                    e.write_bool(true)?;
                    self.encode(e)
                }
            }
            #[inline]
            fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
                if d.read_bool()? { Self::decode(d) } else { Ok(*baseline) }
            }
            #[inline]
            fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
                let same: fn(&$t, &$t) -> bool = $same;
                Ok(same(self, baseline))
            }
            #[inline]
            fn decode_unchanged(baseline: &Self) -> Result<Self> {
                Ok(*baseline)
            }
            const MAX_CHANGED_BITS: u64 = <$t as NetSerialize>::MAX_BITS;
            #[inline]
            fn encode_changed<E: Encoder>(&self, _: &Self, e: &mut E) -> Result<()> {
                self.encode(e)
            }
            #[inline]
            fn decode_changed<D: Decoder>(_: &Self, d: &mut D) -> Result<Self> {
                Self::decode(d)
            }
        }
    )*};
}

changed_bit_then_absolute! {
    u8, |a, b| a == b;
    u16, |a, b| a == b;
    u32, |a, b| a == b;
    u64, |a, b| a == b;
    u128, |a, b| a == b;
    i8, |a, b| a == b;
    i16, |a, b| a == b;
    i32, |a, b| a == b;
    i64, |a, b| a == b;
    i128, |a, b| a == b;
    // Floats compare by bits: -0.0 and 0.0 differ on the wire, and a NaN equals itself.
    f32, |a, b| a.to_bits() == b.to_bits();
    f64, |a, b| a.to_bits() == b.to_bits();
}

/// A bool's delta is its value: one bit, as cheap as a "changed" bit.
impl NetDelta for bool {
    const MAX_DELTA_BITS: u64 = 1;
    #[inline]
    fn encode_delta<E: Encoder>(&self, _: &Self, e: &mut E) -> Result<()> {
        e.write_bool(*self)
    }
    #[inline]
    fn decode_delta<D: Decoder>(_: &Self, d: &mut D) -> Result<Self> {
        d.read_bool()
    }
    #[inline]
    fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
        Ok(self == baseline)
    }
    #[inline]
    fn decode_unchanged(baseline: &Self) -> Result<Self> {
        Ok(*baseline)
    }
}

impl NetDelta for () {
    const MAX_DELTA_BITS: u64 = 0;
    fn encode_delta<E: Encoder>(&self, _: &Self, _: &mut E) -> Result<()> {
        Ok(())
    }
    fn decode_delta<D: Decoder>(_: &Self, _: &mut D) -> Result<Self> {
        Ok(())
    }
    fn is_unchanged(&self, _: &Self) -> Result<bool> {
        Ok(true)
    }
    fn decode_unchanged(_: &Self) -> Result<Self> {
        Ok(())
    }
}

/// `0` when unchanged; else `1`, then: against `None`, the value absolute (it is
/// `Some`); against `Some`, the presence bit and, when `Some`, the value's changes.
impl<T: NetDelta> NetDelta for Option<T> {
    const MAX_DELTA_BITS: u64 = 1 + Self::MAX_CHANGED_BITS;
    const MAX_CHANGED_BITS: u64 = {
        let a = T::MAX_BITS;
        let b = 1 + T::MAX_CHANGED_BITS;
        if a > b {
            a
        } else {
            b
        }
    };
    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        if matches!(self.is_unchanged(baseline), Ok(true)) {
            return e.write_bool(false);
        }
        e.write_bool(true)?;
        self.encode_changed(baseline, e)
    }
    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        if d.read_bool()? {
            Self::decode_changed(baseline, d)
        } else {
            Self::decode_unchanged(baseline)
        }
    }
    fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
        match (self, baseline) {
            (None, None) => Ok(true),
            (Some(v), Some(b)) => v.is_unchanged(b),
            (Some(v), None) => v.measure_bits().map(|_| false),
            (None, Some(_)) => Ok(false),
        }
    }
    fn decode_unchanged(baseline: &Self) -> Result<Self> {
        baseline.as_ref().map(T::decode_unchanged).transpose()
    }
    fn encode_changed<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        match (self, baseline) {
            (Some(v), None) => v.encode(e),
            // Unchanged against `None`: written as the absolute form's `None` would be
            // (never by `encode_delta`, which sends it as "unchanged").
            (None, None) => e.write_bool(false),
            (None, Some(_)) => e.write_bool(false),
            (Some(v), Some(b)) => {
                e.write_bool(true)?;
                v.encode_changed(b, e)
            }
        }
    }
    fn decode_changed<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        match baseline {
            None => T::decode(d).map(Some),
            Some(b) => {
                if d.read_bool()? {
                    T::decode_changed(b, d).map(Some)
                } else {
                    Ok(None)
                }
            }
        }
    }
}

/// An array of `N` elements: the changed indices, each with its changes.
impl<T: NetDelta, const N: usize> NetDelta for [T; N] {
    const MAX_DELTA_BITS: u64 = 1 + Self::MAX_CHANGED_BITS;
    const MAX_CHANGED_BITS: u64 = 1 + (N as u64).saturating_mul(1 + T::MAX_CHANGED_BITS);
    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        seq::write(
            e,
            &self[..],
            &baseline[..],
            None,
            seq::Elements {
                same: |v: &T, b: &T| v.is_unchanged(b),
                changed: |e: &mut E, v: &T, b: &T| v.encode_changed(b, e),
                absolute: |e: &mut E, v: &T| v.encode(e),
            },
        )
    }
    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        let items = seq::read(
            d,
            &baseline[..],
            None,
            T::MIN_BITS,
            T::decode_unchanged,
            |d, b| T::decode_changed(b, d),
            T::decode,
        )?;
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("an array's delta has the baseline's length")))
    }
    fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
        seq::unchanged_from(&self[..], &baseline[..], None, T::is_unchanged)
    }
    fn decode_unchanged(baseline: &Self) -> Result<Self> {
        let items = seq::unchanged_all(&baseline[..], None, 0, T::decode_unchanged)?;
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("as many elements as the baseline")))
    }
}

macro_rules! tuple {
    ($($name:ident $i:tt),+) => {
        /// `0` when every element is unchanged; else `1` and each element's delta.
        impl<$($name: NetDelta),+> NetDelta for ($($name,)+) {
            const MAX_DELTA_BITS: u64 = 1 + Self::MAX_CHANGED_BITS;
            const MAX_CHANGED_BITS: u64 = 0 $(+ $name::MAX_DELTA_BITS)+;
            fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
                if matches!(self.is_unchanged(baseline), Ok(true)) {
                    return e.write_bool(false);
                }
                e.write_bool(true)?;
                self.encode_changed(baseline, e)
            }
            fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
                if d.read_bool()? {
                    Self::decode_changed(baseline, d)
                } else {
                    Self::decode_unchanged(baseline)
                }
            }
            fn is_unchanged(&self, baseline: &Self) -> Result<bool> {
                Ok(true $(&& self.$i.is_unchanged(&baseline.$i)?)+)
            }
            fn decode_unchanged(baseline: &Self) -> Result<Self> {
                Ok(($($name::decode_unchanged(&baseline.$i)?,)+))
            }
            fn encode_changed<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
                $(self.$i.encode_delta(&baseline.$i, e)?;)+
                Ok(())
            }
            fn decode_changed<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
                Ok(($($name::decode_delta(&baseline.$i, d)?,)+))
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
    use crate::{ReadStream, WriteStream};

    fn round<T: NetDelta + core::fmt::Debug + PartialEq>(v: &T, b: &T) -> (u64, T) {
        let mut buf = [0u8; 256];
        let mut w = WriteStream::new(&mut buf);
        v.encode_delta(b, &mut w).unwrap();
        let bits = w.bit_position();
        assert!(bits <= T::MAX_DELTA_BITS);
        let len = w.finish();
        (
            bits,
            T::decode_delta(b, &mut ReadStream::new(&buf[..len])).unwrap(),
        )
    }

    #[test]
    fn primitives() {
        assert_eq!(round(&5u32, &5), (1, 5));
        assert_eq!(round(&6u32, &5), (33, 6));
        assert_eq!(round(&true, &false), (1, true));
        assert_eq!(round(&(-0.0f32), &0.0).0, 33);
        assert_eq!(round(&-3i8, &-3), (1, -3));
    }

    #[test]
    fn options() {
        assert_eq!(round(&Some(1u8), &Some(1)), (1, Some(1)));
        assert_eq!(round(&None::<u8>, &None), (1, None));
        assert_eq!(round(&Some(2u8), &None), (1 + 8, Some(2)));
        assert_eq!(round(&Some(2u8), &Some(1)), (1 + 1 + 8, Some(2)));
        assert_eq!(round(&None, &Some(1u8)), (2, None));
    }

    #[test]
    fn arrays_send_changed_indices() {
        let b = [0u16; 64];
        let mut v = b;
        assert_eq!(round(&v, &b), (1, v));
        v[3] = 9;
        v[40] = 1;
        let (bits, got) = round(&v, &b);
        assert_eq!(got, v);
        // changed, sparse mode, +4, +37, the sentinel +24, two elements of 16 bits.
        assert_eq!(bits, 1 + 1 + 5 + 13 + 13 + 2 * 16);
    }

    #[test]
    fn tuples() {
        assert_eq!(round(&(1u8, true), &(1, true)), (1, (1, true)));
        assert_eq!(round(&(2u8, true), &(1, true)), (1 + 9 + 1, (2, true)));
    }
}
