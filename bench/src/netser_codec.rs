//! netser: the derived impl on [`Snapshot`], and a hand-written impl of the same wire
//! layout with the `Encoder`/`Decoder` API as a control (it shows what the derive costs).

use netser::{Decoder, Encoder, NetSerialize, Quantize, Result};

use crate::model::{Entity, Position, Snapshot, MAX_ENTITIES, QUAT_BITS};
use crate::{Contender, Rotation};

const POS_XY: Quantize = Quantize::new(-2048.0, 2048.0, 0.01);
const POS_Z: Quantize = Quantize::new(0.0, 512.0, 0.01);
const VELOCITY: Quantize = Quantize::new(-64.0, 64.0, 0.01);

/// The snapshot with a hand-written [`NetSerialize`] impl; same bits as the derive.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HandSnapshot(pub Snapshot);

fn encode_entity<E: Encoder>(x: &Entity, e: &mut E) -> Result<()> {
    e.write_int(x.id, 0, 4095)?;
    e.write_compressed_f32(x.position.x, &POS_XY)?;
    e.write_compressed_f32(x.position.y, &POS_XY)?;
    e.write_compressed_f32(x.position.z, &POS_Z)?;
    e.write_quat(x.orientation, QUAT_BITS)?;
    e.write_bool(x.at_rest)?;
    if !x.at_rest {
        for v in x.velocity {
            e.write_compressed_f32(v, &VELOCITY)?;
        }
    }
    e.write_int(x.health, 0, 100)?;
    e.write_bool(x.on_ground)?;
    e.write_bool(x.crouching)?;
    e.write_bool(x.firing)
}

fn decode_entity<D: Decoder>(d: &mut D) -> Result<Entity> {
    let id = d.read_int(0u16, 4095)?;
    let position = Position {
        x: d.read_compressed_f32(&POS_XY)?,
        y: d.read_compressed_f32(&POS_XY)?,
        z: d.read_compressed_f32(&POS_Z)?,
    };
    let orientation = d.read_quat(QUAT_BITS)?;
    let at_rest = d.read_bool()?;
    let mut velocity = [0.0; 3];
    if !at_rest {
        for v in &mut velocity {
            *v = d.read_compressed_f32(&VELOCITY)?;
        }
    }
    Ok(Entity {
        id,
        position,
        orientation,
        at_rest,
        velocity,
        health: d.read_int(0u8, 100)?,
        on_ground: d.read_bool()?,
        crouching: d.read_bool()?,
        firing: d.read_bool()?,
    })
}

impl NetSerialize for HandSnapshot {
    const MIN_BITS: u64 = Snapshot::MIN_BITS;
    const MAX_BITS: u64 = Snapshot::MAX_BITS;
    const MAX_HEAP_BYTES: u64 = Snapshot::MAX_HEAP_BYTES;
    const SCHEMA_HASH: u64 = Snapshot::SCHEMA_HASH;

    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_uint_bits(self.0.tick, 32)?;
        e.write_len(self.0.entities.len(), MAX_ENTITIES)?;
        self.0.entities.iter().try_for_each(|x| encode_entity(x, e))
    }

    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        let tick = d.read_uint_bits(32)?;
        let len = d.read_len(MAX_ENTITIES)?;
        let mut entities = Vec::with_capacity(len);
        for _ in 0..len {
            entities.push(decode_entity(d)?);
        }
        Ok(HandSnapshot(Snapshot { tick, entities }))
    }
}

/// netser on any [`NetSerialize`] type: encodes its inputs in turn into a reused buffer
/// of `MAX_BYTES`.
#[derive(Debug)]
pub struct NetserCodec<T> {
    name: &'static str,
    rotation: Rotation<T>,
    buf: Vec<u8>,
    output: Option<T>,
    /// Whether the batch path may use the CPU's vector instructions (`batch::simd`).
    simd: bool,
}

impl<T: NetSerialize> NetserCodec<T> {
    /// A codec named `name` that encodes `inputs` in turn.
    ///
    /// # Panics
    /// If an input is outside its declared bounds, or `inputs` is empty.
    pub fn new(name: &'static str, inputs: Vec<T>) -> Self {
        NetserCodec {
            name,
            rotation: Rotation::new(inputs, |x| x.to_vec().expect("within the declared bounds")),
            buf: vec![0; T::MAX_BYTES as usize],
            output: None,
            simd: true,
        }
    }

    /// The last value decoded.
    pub fn output(&self) -> Option<&T> {
        self.output.as_ref()
    }
}

/// netser's derived impl on the shared struct.
pub fn derived(snapshots: &[Snapshot]) -> NetserCodec<Snapshot> {
    NetserCodec::new("netser", snapshots.to_vec())
}

/// netser's derived impl with the batch path compiled for the baseline only
/// (`netser::batch::set_simd(false)` around each call): what the runtime dispatch to
/// AVX-512 or AVX2 saves.
pub fn derived_baseline(snapshots: &[Snapshot]) -> NetserCodec<Snapshot> {
    NetserCodec {
        simd: false,
        ..NetserCodec::new("netser-sse2", snapshots.to_vec())
    }
}

/// netser's hand-written impl on the same data.
pub fn hand(snapshots: &[Snapshot]) -> NetserCodec<HandSnapshot> {
    NetserCodec::new(
        "netser-hand",
        snapshots.iter().cloned().map(HandSnapshot).collect(),
    )
}

impl<T: NetSerialize + AsSnapshot> Contender for NetserCodec<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&mut self) -> usize {
        netser::batch::set_simd(self.simd);
        let len = self
            .rotation
            .next_input()
            .encode_to_slice(&mut self.buf)
            .expect("the workload is within the declared bounds");
        netser::batch::set_simd(true);
        len
    }

    fn decode(&mut self) {
        netser::batch::set_simd(self.simd);
        let value =
            T::decode_from_slice(self.rotation.next_frame()).expect("netser reads what it wrote");
        netser::batch::set_simd(true);
        self.output = Some(value);
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        self.output.as_ref().map(|s| s.as_snapshot().clone())
    }
}

/// Views both netser types as the shared snapshot (for round-trip checks).
pub trait AsSnapshot {
    /// The snapshot inside.
    fn as_snapshot(&self) -> &Snapshot;
}

impl AsSnapshot for Snapshot {
    fn as_snapshot(&self) -> &Snapshot {
        self
    }
}

impl AsSnapshot for HandSnapshot {
    fn as_snapshot(&self) -> &Snapshot {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;

    #[test]
    fn hand_written_and_derived_give_the_same_bytes() {
        for w in Workload::ALL {
            let s = w.snapshot();
            let derived = s.to_vec().unwrap();
            let hand = HandSnapshot(s.clone()).to_vec().unwrap();
            assert_eq!(derived, hand, "{}", w.label());
            assert_eq!(
                Snapshot::decode_from_slice(&hand).unwrap(),
                HandSnapshot::decode_from_slice(&derived).unwrap().0
            );
        }
    }

    #[test]
    fn size_is_the_sum_of_the_fields() {
        // 32-bit tick, 9-bit length (0..=256), then 151 bits per moving entity and 109
        // per resting one.
        let s = Workload::new(64, true).snapshot();
        let bits = 32 + 9 + 32 * 151 + 32 * 109;
        assert_eq!(s.measure_bits().unwrap(), bits);
        assert_eq!(s.to_vec().unwrap().len(), (bits as usize).div_ceil(8));
    }

    #[test]
    fn a_truncated_snapshot_is_an_error() {
        let s = Workload::new(64, false).snapshot();
        let bytes = s.to_vec().unwrap();
        let err = Snapshot::decode_from_slice(&bytes[..bytes.len() - 3]).unwrap_err();
        assert!(err.path().contains("entities"), "{}", err.path());
    }
}
