//! naia-serde 0.25, the game-netcode bit-level peer, as its users annotate a struct: its
//! fixed-point float types (`SignedFloat<BITS, FRACTION_DIGITS>`: a sign bit, then
//! `BITS` bits of `value * 10^FRACTION_DIGITS`), `UnsignedInteger<BITS>`, `Option` for
//! the gated velocity (one presence bit), one bit per bool. Its derive is `SerdeInternal`
//! when naia-serde is used on its own (`Serde` names the `naia_shared` facade).
//!
//! naia has no quaternion compression, so the orientation is four `SignedFloat<10, 3>`
//! (11 bits each); everything else takes netser's bit count or one more (naia's sign
//! bit). The values are converted to naia's types when the codec is built, not in the
//! timed encode, which favours naia.

use naia_serde::{
    BitReader, FileBitWriter, Serde, SerdeInternal, SignedFloat, UnsignedFloat, UnsignedInteger,
};

use crate::model::Snapshot;
use crate::{Contender, Rotation};

/// One entity in naia's types.
#[derive(SerdeInternal, Clone, PartialEq, Debug)]
pub struct NaiaEntity {
    /// Network id, 12 bits.
    pub id: UnsignedInteger<12>,
    /// East, cm: sign + 18 bits.
    pub x: SignedFloat<18, 2>,
    /// North, cm: sign + 18 bits.
    pub y: SignedFloat<18, 2>,
    /// Altitude, cm: 16 bits.
    pub z: UnsignedFloat<16, 2>,
    /// Quaternion components in thousandths: sign + 10 bits each.
    pub orientation: [SignedFloat<10, 3>; 4],
    /// Velocity in cm/s (sign + 13 bits each), `None` at rest.
    pub velocity: Option<[SignedFloat<13, 2>; 3]>,
    /// Health, 7 bits.
    pub health: UnsignedInteger<7>,
    /// Standing on the ground.
    pub on_ground: bool,
    /// Crouching.
    pub crouching: bool,
    /// Firing.
    pub firing: bool,
}

/// The snapshot in naia's types (naia's `Vec` sends its length as a varint of 5-bit
/// chunks).
#[derive(SerdeInternal, Clone, PartialEq, Debug)]
pub struct NaiaSnapshot {
    /// Simulation tick.
    pub tick: u32,
    /// The entities.
    pub entities: Vec<NaiaEntity>,
}

impl NaiaSnapshot {
    /// The shared snapshot in naia's types.
    pub fn from_snapshot(s: &Snapshot) -> Self {
        let entities = s
            .entities
            .iter()
            .map(|e| NaiaEntity {
                id: UnsignedInteger::new(e.id),
                x: SignedFloat::new(e.position.x),
                y: SignedFloat::new(e.position.y),
                z: UnsignedFloat::new(e.position.z),
                orientation: e.orientation.map(SignedFloat::new),
                velocity: (!e.at_rest).then(|| e.velocity.map(SignedFloat::new)),
                health: UnsignedInteger::new(e.health),
                on_ground: e.on_ground,
                crouching: e.crouching,
                firing: e.firing,
            })
            .collect();
        NaiaSnapshot {
            tick: s.tick,
            entities,
        }
    }
}

/// naia-serde writing with its heap-backed `FileBitWriter` (its `BitWriter` stops at a
/// 430-byte MTU, smaller than these snapshots) and reading with `BitReader`.
pub struct NaiaCodec {
    rotation: Rotation<NaiaSnapshot>,
    bytes: Vec<u8>,
    output: Option<NaiaSnapshot>,
}

impl NaiaCodec {
    /// A codec that encodes `snapshots` in turn, converted to naia's types.
    ///
    /// # Panics
    /// If `snapshots` is empty.
    pub fn new(snapshots: &[Snapshot]) -> Self {
        let inputs = snapshots.iter().map(NaiaSnapshot::from_snapshot).collect();
        NaiaCodec {
            rotation: Rotation::new(inputs, |x| {
                let mut writer = FileBitWriter::new();
                x.ser(&mut writer);
                writer.to_vec()
            }),
            bytes: Vec::new(),
            output: None,
        }
    }

    /// The last value decoded.
    pub fn output(&self) -> Option<&NaiaSnapshot> {
        self.output.as_ref()
    }

    /// The first value encoded.
    pub fn input(&self) -> &NaiaSnapshot {
        self.rotation.first()
    }
}

impl Contender for NaiaCodec {
    fn name(&self) -> &'static str {
        "naia-serde"
    }

    fn encode(&mut self) -> usize {
        let mut writer = FileBitWriter::new();
        self.rotation.next_input().ser(&mut writer);
        // The writer owns its Vec; keeping it replaces the previous one (one free).
        self.bytes = writer.to_vec();
        self.bytes.len()
    }

    fn decode(&mut self) {
        let mut reader = BitReader::new(self.rotation.next_frame());
        let value = NaiaSnapshot::de(&mut reader).expect("naia reads what it wrote");
        self.output = Some(value);
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;

    #[test]
    fn round_trips_exactly_in_its_own_types() {
        for w in Workload::ALL {
            let mut c = NaiaCodec::new(&[w.snapshot()]);
            c.encode();
            c.decode();
            assert_eq!(c.output(), Some(c.input()), "{}", w.label());
        }
    }

    #[test]
    fn size_is_the_sum_of_its_fields() {
        // tick 32, length 64 as two 6-bit varint chunks, then per entity 12 + 19 + 19 + 16
        // + 44 + 7 + 3 bits and the Option bit, plus 42 bits of velocity when moving.
        let mut c = NaiaCodec::new(&[Workload::new(64, true).snapshot()]);
        let bits: usize = 32 + 12 + 64 * (12 + 19 + 19 + 16 + 44 + 7 + 3 + 1) + 32 * 42;
        assert_eq!(c.encode(), bits.div_ceil(8));
    }
}
