//! [`NetSerialize`] for glam's `Vec2`, `Vec3` and `Quat` (feature `glam`): their `f32`
//! components raw, in order. For quantized forms, annotate the field in a derived type
//! with `quantize(..)` or `quat(bits = N)`.

use crate::error::Result;
use crate::schema::fnv1a;
use crate::stream::{Decoder, Encoder};
use crate::NetSerialize;

macro_rules! glam_raw {
    ($t:ty, $n:literal, $name:literal) => {
        /// The components as raw `f32`s, in order.
        impl NetSerialize for $t {
            const MIN_BITS: u64 = 32 * $n;
            const MAX_BITS: u64 = 32 * $n;
            const MAX_HEAP_BYTES: u64 = 0;
            const SCHEMA_HASH: u64 = fnv1a($name.as_bytes());
            #[inline]
            fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
                for c in self.to_array() {
                    e.write_f32(c)?;
                }
                Ok(())
            }
            #[inline]
            fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
                let mut c = [0f32; $n];
                for v in c.iter_mut() {
                    *v = d.read_f32()?;
                }
                Ok(<$t>::from_array(c))
            }
        }
    };
}

glam_raw!(glam::Vec2, 2, "glam::Vec2");
glam_raw!(glam::Vec3, 3, "glam::Vec3");
glam_raw!(glam::Quat, 4, "glam::Quat");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_raw() {
        let v = (
            glam::Vec3::new(1.0, -2.5, 3.0),
            glam::Quat::from_rotation_y(0.3),
        );
        let bytes = v.to_vec().unwrap();
        assert_eq!(bytes.len(), 28);
        assert_eq!(
            <(glam::Vec3, glam::Quat)>::decode_from_slice(&bytes).unwrap(),
            v
        );
    }
}
