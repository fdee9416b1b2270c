//! The delta types the delta tests, the snapshot tests and the `decode_delta` fuzz target
//! share (included by path, so the fuzz crate needs no test-only library code).

use std::collections::BTreeMap;

use netser::NetSerialize;

/// The articles' cube: 18 + 18 + 14 + 29 + 1 = 80 bits absolute.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct Cube {
    /// 512 steps per metre in [-256, 255] m.
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    pub x: f32,
    /// As `x`.
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    pub y: f32,
    /// 512 steps per metre in [0, 32) m.
    #[net(quantize(0.0, 31.998046875, 1.0 / 512.0))]
    pub z: f32,
    /// Smallest three at 9 bits.
    #[net(quat(bits = 9))]
    pub orientation: [f32; 4],
    /// Held by a player.
    pub interacting: bool,
}

/// A scene of up to 1024 cubes.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct Scene {
    /// The frame number, a full-width integer.
    pub frame: u32,
    /// The cubes, by index.
    #[net(max_len = 1024)]
    pub cubes: Vec<Cube>,
}

/// One of each field kind.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct Player {
    /// A ranged integer of 7 bits (no tiers below 6 bits: it has them).
    #[net(range = 0..=100)]
    pub health: u8,
    /// An unsigned integer of 12 bits.
    #[net(bits = 12)]
    pub ammo: u16,
    /// A full-width integer.
    pub score: u32,
    /// A signed ranged integer of 5 bits (no tiers).
    #[net(range = -10..=10)]
    pub lean: i8,
    /// A bool.
    pub alive: bool,
    /// A full-width float.
    pub speed: f32,
    /// A nested delta type.
    pub cube: Cube,
    /// A string: absolute when changed.
    #[net(max_len = 16)]
    pub name: String,
    /// Opted out.
    #[net(absolute, range = -1000..=1000)]
    pub money: i32,
    /// An option with an attribute.
    #[net(range = 0..=9)]
    pub slot: Option<u8>,
    /// An option through its own impl.
    pub bonus: Option<u16>,
    /// An array with an attribute.
    #[net(range = 0..=3)]
    pub keys: [u8; 4],
    /// A bounded list of ranged integers.
    #[net(max_len = 6, range = 0..=1000)]
    pub path: Vec<u16>,
    /// A map: absolute when changed.
    #[net(max_len = 4)]
    pub stats: BTreeMap<u8, u16>,
    /// An enum.
    pub shape: Shape,
    /// Sent only while alive.
    #[net(when = *alive, quantize(0.0, 1.0, 0.01))]
    pub stamina: f32,
    /// Never sent.
    #[net(skip)]
    pub local_only: u64,
}

/// An enum: same variant, fields relative; else the tag and the fields absolute.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub enum Shape {
    /// A sphere.
    Sphere {
        /// 0..=10 m at 1 cm: 10 bits.
        #[net(quantize(0.0, 10.0, 0.01))]
        radius: f32,
    },
    /// A box.
    Box(#[net(range = 0..=255)] u8, #[net(range = 0..=255)] u8),
    /// Nothing.
    Empty,
}

/// A cube at rest on the ground at `(x, y)`, its orientation turned by `yaw` radians.
pub fn cube(x: f32, y: f32, yaw: f32) -> Cube {
    Cube {
        x,
        y,
        z: 0.5,
        orientation: [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()],
        interacting: false,
    }
}

/// A player with every field set.
pub fn player() -> Player {
    Player {
        health: 80,
        ammo: 300,
        score: 12_345,
        lean: -3,
        alive: true,
        speed: 1.5,
        cube: cube(3.0, -4.0, 0.3),
        name: "ada".into(),
        money: 250,
        slot: Some(2),
        bonus: None,
        keys: [0, 1, 2, 3],
        path: vec![10, 20, 30],
        stats: BTreeMap::from([(1, 10), (2, 20)]),
        shape: Shape::Sphere { radius: 0.5 },
        stamina: 0.75,
        local_only: 0,
    }
}
