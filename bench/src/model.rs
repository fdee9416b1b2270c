//! The snapshot as a game programmer writes it: plain `f32` fields laid out as glam's
//! `Vec3`/`Quat` are, annotated for netser, and deriving bitcode's and bincode's traits on
//! the very same struct, so those two peers encode exactly what netser encodes.

use netser::NetSerialize;

/// Most entities one snapshot may hold (the `max_len` of [`Snapshot::entities`]).
pub const MAX_ENTITIES: usize = 256;

/// World bounds: 4 km x 4 km horizontally, 512 m of height, 1 cm resolution.
pub const WORLD_HALF_EXTENT: f32 = 2048.0;
/// Highest altitude in metres.
pub const WORLD_HEIGHT: f32 = 512.0;
/// Position resolution in metres.
pub const POSITION_RES: f32 = 0.01;
/// Fastest speed per axis in m/s, at 1 cm/s resolution.
pub const MAX_SPEED: f32 = 64.0;
/// Velocity resolution in m/s.
pub const VELOCITY_RES: f32 = 0.01;
/// Bits per smallest-three quaternion component.
pub const QUAT_BITS: u32 = 10;
/// Largest entity id.
pub const MAX_ID: u16 = 4095;
/// Largest health.
pub const MAX_HEALTH: u8 = 100;

/// A position in the bounded world (glam's `Vec3` layout).
#[derive(
    NetSerialize,
    bitcode::Encode,
    bitcode::Decode,
    bincode::Encode,
    bincode::Decode,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Default,
)]
pub struct Position {
    /// East, metres.
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    pub x: f32,
    /// North, metres.
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    pub y: f32,
    /// Altitude, metres.
    #[net(quantize(min = 0.0, max = 512.0, res = 0.01))]
    pub z: f32,
}

/// One entity's replicated state.
#[derive(
    NetSerialize,
    bitcode::Encode,
    bitcode::Decode,
    bincode::Encode,
    bincode::Decode,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Default,
)]
pub struct Entity {
    /// Network id.
    #[net(range = 0..=4095)]
    pub id: u16,
    /// Where it is.
    pub position: Position,
    /// Orientation quaternion `[x, y, z, w]` (glam's `Quat` layout).
    #[net(quat(bits = 10))]
    pub orientation: [f32; 4],
    /// Whether it is at rest; its velocity is then zero and not sent.
    pub at_rest: bool,
    /// Velocity in m/s.
    #[net(when = !*at_rest, quantize(min = -64.0, max = 64.0, res = 0.01))]
    pub velocity: [f32; 3],
    /// Health points.
    #[net(range = 0..=100)]
    pub health: u8,
    /// Standing on the ground.
    pub on_ground: bool,
    /// Crouching.
    pub crouching: bool,
    /// Firing its weapon.
    pub firing: bool,
}

/// A world snapshot: the tick it was taken at and every entity in it.
#[derive(
    NetSerialize,
    bitcode::Encode,
    bitcode::Decode,
    bincode::Encode,
    bincode::Decode,
    Debug,
    Clone,
    PartialEq,
    Default,
)]
pub struct Snapshot {
    /// Simulation tick.
    pub tick: u32,
    /// The entities.
    #[net(max_len = 256)]
    pub entities: Vec<Entity>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_bit_bounds_follow_the_attributes() {
        // id 12 + position 19+19+16 + quat 2+3*10 + at_rest 1 + velocity 3*14 + health 7
        // + 3 flags.
        assert_eq!(Entity::MAX_BITS, 12 + 54 + 32 + 1 + 42 + 7 + 3);
        assert_eq!(Entity::MIN_BITS, Entity::MAX_BITS - 42);
        // The quantizations the attributes name are the constants above.
        let q = netser::Quantize::new(-WORLD_HALF_EXTENT, WORLD_HALF_EXTENT, POSITION_RES);
        assert_eq!(q.bits(), 19);
        let q = netser::Quantize::new(-MAX_SPEED, MAX_SPEED, VELOCITY_RES);
        assert_eq!(q.bits(), 14);
        assert_eq!(netser::quat::quat_bits(QUAT_BITS), 32);
    }

    #[test]
    fn out_of_bounds_values_are_refused() {
        let e = Entity {
            health: MAX_HEALTH + 1,
            orientation: [0.0, 0.0, 0.0, 1.0],
            ..Entity::default()
        };
        assert!(e.to_vec().is_err());
        let e = Entity {
            id: MAX_ID + 1,
            orientation: [0.0, 0.0, 0.0, 1.0],
            ..Entity::default()
        };
        assert!(e.to_vec().is_err());
    }
}
