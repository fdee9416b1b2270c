//! bitcode 0.6: on the shared `f32` struct, and on a pre-quantized version holding the
//! very integers netser sends, in `u16`/`u32` fields, so bitcode packs them as it likes.

use netser::Quantize;

use crate::model::{Snapshot, MAX_SPEED, POSITION_RES, QUAT_BITS, VELOCITY_RES};
use crate::model::{WORLD_HALF_EXTENT, WORLD_HEIGHT};
use crate::{Contender, Rotation};

/// One entity with every value already quantized as netser quantizes it.
#[derive(bitcode::Encode, bitcode::Decode, Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantizedEntity {
    /// Network id, `0..=4095`.
    pub id: u16,
    /// Position steps of 1 cm from the world's minimum corner (19, 19 and 16 bits).
    pub position: [u32; 3],
    /// Index of the largest quaternion component, `0..=3`.
    pub orientation_largest: u8,
    /// The three other components, 10 bits each.
    pub orientation: [u16; 3],
    /// Velocity steps of 1 cm/s from -64 m/s (14 bits each); `None` at rest.
    pub velocity: Option<[u16; 3]>,
    /// Health, `0..=100`.
    pub health: u8,
    /// Standing on the ground.
    pub on_ground: bool,
    /// Crouching.
    pub crouching: bool,
    /// Firing.
    pub firing: bool,
}

/// The pre-quantized snapshot.
#[derive(bitcode::Encode, bitcode::Decode, Debug, Clone, PartialEq, Eq, Default)]
pub struct QuantizedSnapshot {
    /// Simulation tick.
    pub tick: u32,
    /// The entities.
    pub entities: Vec<QuantizedEntity>,
}

impl QuantizedSnapshot {
    /// Quantizes `s` exactly as netser's attributes do.
    ///
    /// # Panics
    /// If a value is outside the world (the generated workloads never are).
    pub fn from_snapshot(s: &Snapshot) -> Self {
        let xy = Quantize::new(-WORLD_HALF_EXTENT, WORLD_HALF_EXTENT, POSITION_RES);
        let z = Quantize::new(0.0, WORLD_HEIGHT, POSITION_RES);
        let v = Quantize::new(-MAX_SPEED, MAX_SPEED, VELOCITY_RES);
        let q = |quant: &Quantize, value: f32| quant.quantize(value, 0).expect("in the world");
        let entities = s
            .entities
            .iter()
            .map(|e| {
                let (largest, small) =
                    netser::quat::pack(e.orientation, QUAT_BITS, 0).expect("unit quaternion");
                QuantizedEntity {
                    id: e.id,
                    position: [
                        q(&xy, e.position.x),
                        q(&xy, e.position.y),
                        q(&z, e.position.z),
                    ],
                    orientation_largest: largest as u8,
                    orientation: small.map(|c| c as u16),
                    velocity: (!e.at_rest).then(|| e.velocity.map(|c| q(&v, c) as u16)),
                    health: e.health,
                    on_ground: e.on_ground,
                    crouching: e.crouching,
                    firing: e.firing,
                }
            })
            .collect();
        QuantizedSnapshot {
            tick: s.tick,
            entities,
        }
    }
}

/// bitcode on any of its types, with one reused [`bitcode::Buffer`] each way, encoding
/// its inputs in turn.
pub struct BitcodeCodec<T> {
    name: &'static str,
    rotation: Rotation<T>,
    encoder: bitcode::Buffer,
    decoder: bitcode::Buffer,
    output: Option<T>,
}

impl<T: bitcode::Encode> BitcodeCodec<T> {
    /// A codec named `name` that encodes `inputs` in turn.
    ///
    /// # Panics
    /// If `inputs` is empty.
    pub fn new(name: &'static str, inputs: Vec<T>) -> Self {
        BitcodeCodec {
            name,
            rotation: Rotation::new(inputs, |x| bitcode::encode(x)),
            encoder: bitcode::Buffer::new(),
            decoder: bitcode::Buffer::new(),
            output: None,
        }
    }

    /// The last value decoded.
    pub fn output(&self) -> Option<&T> {
        self.output.as_ref()
    }
}

/// bitcode on the shared `f32` struct.
pub fn on_f32(snapshots: &[Snapshot]) -> BitcodeCodec<Snapshot> {
    BitcodeCodec::new("bitcode", snapshots.to_vec())
}

/// bitcode on the pre-quantized integers.
pub fn on_quantized(snapshots: &[Snapshot]) -> BitcodeCodec<QuantizedSnapshot> {
    BitcodeCodec::new(
        "bitcode-quant",
        snapshots
            .iter()
            .map(QuantizedSnapshot::from_snapshot)
            .collect(),
    )
}

impl<T> Contender for BitcodeCodec<T>
where
    T: bitcode::Encode + for<'a> bitcode::Decode<'a> + Clone + 'static,
{
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&mut self) -> usize {
        self.encoder.encode(self.rotation.next_input()).len()
    }

    fn decode(&mut self) {
        let value = self
            .decoder
            .decode::<T>(self.rotation.next_frame())
            .expect("bitcode reads what it wrote");
        self.output = Some(value);
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        let any: &dyn core::any::Any = self.output.as_ref()?;
        any.downcast_ref::<Snapshot>().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;

    #[test]
    fn quantized_integers_are_the_ones_netser_sends() {
        use netser::{Decoder, ReadStream};
        let s = Workload::new(64, true).snapshot();
        let q = QuantizedSnapshot::from_snapshot(&s);
        let bytes = netser::NetSerialize::to_vec(&s).unwrap();
        let mut r = ReadStream::new(&bytes);
        assert_eq!(r.read_bits(32).unwrap(), s.tick as u64);
        assert_eq!(r.read_bits(9).unwrap(), 64);
        for e in &q.entities {
            assert_eq!(r.read_bits(12).unwrap(), e.id as u64);
            for (p, bits) in e.position.iter().zip([19, 19, 16]) {
                assert_eq!(r.read_bits(bits).unwrap(), *p as u64);
            }
            assert_eq!(r.read_bits(2).unwrap(), e.orientation_largest as u64);
            for c in e.orientation {
                assert_eq!(r.read_bits(10).unwrap(), c as u64);
            }
            assert_eq!(r.read_bool().unwrap(), e.velocity.is_none());
            for c in e.velocity.iter().flatten() {
                assert_eq!(r.read_bits(14).unwrap(), *c as u64);
            }
            assert_eq!(r.read_bits(7).unwrap(), e.health as u64);
            assert_eq!(r.read_bits(3).unwrap(), {
                e.on_ground as u64 | (e.crouching as u64) << 1 | (e.firing as u64) << 2
            });
        }
    }

    #[test]
    fn quantized_round_trips_exactly() {
        let s = Workload::new(256, true).snapshot();
        let mut c = on_quantized(std::slice::from_ref(&s));
        c.encode();
        c.decode();
        assert_eq!(c.output(), Some(&QuantizedSnapshot::from_snapshot(&s)));
    }
}
