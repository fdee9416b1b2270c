//! The floor: copying the entities' bytes as they lie in memory (a `repr(C)` struct of
//! 44 bytes, flags packed in one byte), with no conversion and no checks.

use bytemuck::{Pod, Zeroable};

use crate::model::{Entity, Position, Snapshot};
use crate::{Contender, Rotation};

/// An entity as plain old data.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PodEntity {
    /// Network id.
    pub id: u16,
    /// Health.
    pub health: u8,
    /// at_rest, on_ground, crouching, firing in bits 0..4.
    pub flags: u8,
    /// Position.
    pub position: [f32; 3],
    /// Orientation.
    pub orientation: [f32; 4],
    /// Velocity.
    pub velocity: [f32; 3],
}

impl From<&Entity> for PodEntity {
    fn from(e: &Entity) -> Self {
        PodEntity {
            id: e.id,
            health: e.health,
            flags: e.at_rest as u8
                | (e.on_ground as u8) << 1
                | (e.crouching as u8) << 2
                | (e.firing as u8) << 3,
            position: [e.position.x, e.position.y, e.position.z],
            orientation: e.orientation,
            velocity: e.velocity,
        }
    }
}

impl From<&PodEntity> for Entity {
    fn from(p: &PodEntity) -> Self {
        Entity {
            id: p.id,
            position: Position {
                x: p.position[0],
                y: p.position[1],
                z: p.position[2],
            },
            orientation: p.orientation,
            at_rest: p.flags & 1 != 0,
            velocity: p.velocity,
            health: p.health,
            on_ground: p.flags & 2 != 0,
            crouching: p.flags & 4 != 0,
            firing: p.flags & 8 != 0,
        }
    }
}

/// Copies the tick and the entity array into a buffer and back into a new `Vec`.
pub struct MemcpyCodec {
    rotation: Rotation<(u32, Vec<PodEntity>)>,
    buf: Vec<u8>,
    output: Option<(u32, Vec<PodEntity>)>,
}

/// The tick and the entities as the buffer holds them.
fn write(tick: u32, entities: &[PodEntity], buf: &mut [u8]) -> usize {
    let len = 4 + size_of_val(entities);
    let (head, body) = buf[..len].split_at_mut(4);
    head.copy_from_slice(&tick.to_le_bytes());
    body.copy_from_slice(bytemuck::cast_slice(entities));
    len
}

impl MemcpyCodec {
    /// A codec holding `snapshots` as plain old data, copied in turn.
    ///
    /// # Panics
    /// If `snapshots` is empty.
    pub fn new(snapshots: &[Snapshot]) -> Self {
        let inputs: Vec<(u32, Vec<PodEntity>)> = snapshots
            .iter()
            .map(|s| (s.tick, s.entities.iter().map(PodEntity::from).collect()))
            .collect();
        let most = inputs.iter().map(|(_, e)| e.len()).max().unwrap_or(0);
        let mut buf = vec![0; 4 + most * size_of::<PodEntity>()];
        let rotation = Rotation::new(inputs, |(tick, entities)| {
            let len = write(*tick, entities, &mut buf);
            buf[..len].to_vec()
        });
        MemcpyCodec {
            rotation,
            buf,
            output: None,
        }
    }
}

impl Contender for MemcpyCodec {
    fn name(&self) -> &'static str {
        "memcpy"
    }

    fn encode(&mut self) -> usize {
        let (tick, entities) = self.rotation.next_input();
        write(*tick, entities, &mut self.buf)
    }

    fn decode(&mut self) {
        let (head, body) = self.rotation.next_frame().split_at(4);
        let tick = u32::from_le_bytes(head.try_into().expect("4 bytes"));
        let mut entities = vec![PodEntity::zeroed(); body.len() / size_of::<PodEntity>()];
        bytemuck::cast_slice_mut(&mut entities).copy_from_slice(body);
        self.output = Some((tick, entities));
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        let (tick, entities) = self.output.as_ref()?;
        Some(Snapshot {
            tick: *tick,
            entities: entities.iter().map(Entity::from).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;

    #[test]
    fn pod_is_44_bytes_and_round_trips() {
        assert_eq!(size_of::<PodEntity>(), 44);
        let s = Workload::new(64, true).snapshot();
        let mut c = MemcpyCodec::new(std::slice::from_ref(&s));
        assert_eq!(c.encode(), 4 + 64 * 44);
        c.decode();
        assert_eq!(c.decoded(), Some(s));
    }
}
