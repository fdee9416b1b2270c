//! Integers that can be sent as an offset from a minimum ("ranged integers").
//!
//! A value in `min..=max` goes on the wire as `value - min` in
//! `bits_required(min, max)` bits. The subtraction is done in the unsigned domain of the
//! type's width, as the reference does for its 32, 64 and 128-bit forms; the offsets of
//! narrower types are the same numbers, so every width gives the reference's bytes.
//!
//! ```
//! use netser::{Decoder, Encoder, ReadStream, WriteStream};
//! let mut buf = [0u8; 4];
//! let mut w = WriteStream::new(&mut buf);
//! w.write_int(-3i16, -10, 10)?; // 7 as an offset from -10, in 5 bits
//! let len = w.finish();
//! assert_eq!(buf[0], 7);
//! assert_eq!(ReadStream::new(&buf[..len]).read_int(-10i16, 10)?, -3);
//! # Ok::<(), netser::Error>(())
//! ```

use crate::error::Num;
use core::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// An integer type usable with ranged reads and writes: `u8`..`u128`, `i8`..`i128`,
/// `usize` and `isize`. Sealed: the offset arithmetic is part of the wire format.
///
/// ```
/// use netser::RangedInt;
/// assert_eq!(RangedInt::offset_from(-5i32, -10), 5);
/// assert_eq!(i32::from_offset(-10, 5), -5);
/// assert_eq!(<i32 as RangedInt>::range_bits(-100, 100), 8);
/// ```
pub trait RangedInt: Copy + PartialOrd + Debug + sealed::Sealed {
    /// The type's width in bits.
    const WIDTH: u32;
    /// The smallest value.
    const MIN: Self;
    /// The largest value.
    const MAX: Self;
    /// Zero.
    const ZERO: Self;
    /// `self - min` in the unsigned domain of the type's width, zero-extended.
    ///
    /// ```
    /// use netser::RangedInt;
    /// assert_eq!(3u8.offset_from(1), 2);
    /// assert_eq!((-1i8).offset_from(-128), 127);
    /// assert_eq!(i64::MAX.offset_from(i64::MIN), u64::MAX as u128);
    /// ```
    fn offset_from(self, min: Self) -> u128;
    /// `min + offset`, wrapping in the type's width.
    ///
    /// ```
    /// use netser::RangedInt;
    /// assert_eq!(i8::from_offset(-128, 127), -1);
    /// assert_eq!(u16::from_offset(10, 5), 15);
    /// ```
    fn from_offset(min: Self, offset: u128) -> Self;
    /// The value for error messages.
    ///
    /// ```
    /// use netser::{Num, RangedInt};
    /// assert_eq!((-3i16).to_num(), Num::Int(-3));
    /// assert_eq!(3u64.to_num(), Num::Uint(3));
    /// ```
    fn to_num(self) -> Num;
    /// `self * 2^bits` when it fits in the type, for fixed-point bounds.
    ///
    /// ```
    /// use netser::RangedInt;
    /// assert_eq!(3i32.checked_scale(4), Some(48)); // 3.0 in 4 fraction bits
    /// assert_eq!(100u8.checked_scale(2), None);    // 400 does not fit in a u8
    /// ```
    fn checked_scale(self, bits: u32) -> Option<Self>;
    /// Bits needed for an offset in `min..=max` (0 when `min >= max`).
    ///
    /// ```
    /// use netser::RangedInt;
    /// assert_eq!(u8::range_bits(0, 100), 7);
    /// assert_eq!(i32::range_bits(-10, 10), 5);
    /// assert_eq!(u8::range_bits(5, 5), 0); // one value: nothing to send
    /// ```
    #[inline(always)]
    fn range_bits(min: Self, max: Self) -> u32 {
        if max <= min {
            0
        } else {
            128 - max.offset_from(min).leading_zeros()
        }
    }
}

macro_rules! ranged_int {
    ($($t:ty => $u:ty, $num:ident, $wide:ty;)*) => {$(
        impl sealed::Sealed for $t {}
        impl RangedInt for $t {
            const WIDTH: u32 = <$t>::BITS;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            const ZERO: Self = 0;
            #[inline(always)]
            fn offset_from(self, min: Self) -> u128 {
                self.wrapping_sub(min) as $u as u128
            }
            #[inline(always)]
            fn from_offset(min: Self, offset: u128) -> Self {
                min.wrapping_add(offset as $u as $t)
            }
            #[inline]
            fn checked_scale(self, bits: u32) -> Option<Self> {
                if bits >= <$t>::BITS {
                    return None;
                }
                let r = self.wrapping_shl(bits);
                (r >> bits == self).then_some(r)
            }
            #[inline]
            fn to_num(self) -> Num {
                Num::$num(self as $wide)
            }
        }
    )*};
}

ranged_int! {
    u8 => u8, Uint, u128;
    u16 => u16, Uint, u128;
    u32 => u32, Uint, u128;
    u64 => u64, Uint, u128;
    u128 => u128, Uint, u128;
    usize => usize, Uint, u128;
    i8 => u8, Int, i128;
    i16 => u16, Int, i128;
    i32 => u32, Int, i128;
    i64 => u64, Int, i128;
    i128 => u128, Int, i128;
    isize => usize, Int, i128;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_in_the_unsigned_domain() {
        assert_eq!(i32::MAX.offset_from(i32::MIN), u32::MAX as u128);
        assert_eq!(i64::MAX.offset_from(i64::MIN), u64::MAX as u128);
        assert_eq!(i128::MAX.offset_from(i128::MIN), u128::MAX);
        assert_eq!(i8::from_offset(i8::MIN, 255), i8::MAX);
        assert_eq!(<i32 as RangedInt>::range_bits(i32::MIN, i32::MAX), 32);
        assert_eq!(<i128 as RangedInt>::range_bits(i128::MIN, i128::MAX), 128);
        assert_eq!(<u8 as RangedInt>::range_bits(3, 3), 0);
        assert_eq!(<u8 as RangedInt>::range_bits(0, 8), 4);
        assert_eq!((-1i16).checked_scale(15), Some(i16::MIN));
        assert_eq!(1i16.checked_scale(15), None);
        assert_eq!(1u64.checked_scale(63), Some(1 << 63));
        assert_eq!(i64::MIN.checked_scale(64), None);
    }
}
