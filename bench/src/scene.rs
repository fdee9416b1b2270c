//! The articles' cube scene ("Snapshot Compression"): 901 cubes at 60 Hz, each sent as
//! its position at 512 units per metre in [-256, 255] m horizontally and [0, 32) m up, its
//! orientation as smallest-three at 9 bits, and whether it is interacting: 80 bits a cube
//! absolute. [`sim`] moves them; [`run`] sends them through netser's snapshot layer over
//! the transport's seeded simulator and counts the bits (the `scene` program).

pub mod run;
pub mod sim;

use netser::NetSerialize;

pub use sim::CUBES;

/// Units per metre of a position.
pub const UNITS_PER_METRE: f32 = 512.0;

/// A cube as sent: 18 + 18 + 14 + 29 + 1 = 80 bits absolute; its delta encoding comes
/// from the derive (`#[net(delta)]`).
#[derive(NetSerialize, Debug, Clone, Copy, PartialEq, Default)]
#[net(delta)]
pub struct Cube {
    /// East, metres: 512 steps a metre in [-256, 255].
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    pub x: f32,
    /// North, as `x`.
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    pub y: f32,
    /// Up, metres: 512 steps a metre in [0, 32).
    #[net(quantize(0.0, 31.998046875, 1.0 / 512.0))]
    pub z: f32,
    /// Unit quaternion `[x, y, z, w]`, smallest three at 9 bits.
    #[net(quat(bits = 9))]
    pub orientation: [f32; 4],
    /// Touched by the pusher or another cube and not yet at rest.
    pub interacting: bool,
}

impl Cube {
    /// A simulated body as the client will see it: clamped to the scene's bounds and
    /// quantized (encoded and decoded), so that the server's state is bit for bit what
    /// the client decodes, and a body at rest gives the same cube every tick.
    pub fn quantize(body: &sim::Body) -> Self {
        let cube = Self {
            x: body.position[0].clamp(-256.0, 255.0),
            y: body.position[1].clamp(-256.0, 255.0),
            z: body.position[2].clamp(0.0, 31.998_047),
            orientation: body.orientation,
            interacting: body.interacting,
        };
        let bytes = cube.to_vec().expect("in bounds");
        Self::decode_from_slice(&bytes).expect("decodes what it encoded")
    }

    /// The position in 1/512 m and the orientation as smallest three at 9 bits: the
    /// integers bitcode is given.
    pub fn integers(&self) -> ([i32; 3], u8, [i16; 3]) {
        let p = [self.x, self.y, self.z].map(|v| (v * UNITS_PER_METRE).round() as i32);
        let o = self.orientation;
        let mut largest = 0;
        for i in 1..4 {
            if o[i].abs() > o[largest].abs() {
                largest = i;
            }
        }
        let sign = if o[largest] < 0.0 { -1.0 } else { 1.0 };
        let mut small = [0i16; 3];
        let mut k = 0;
        for (i, c) in o.iter().enumerate() {
            if i != largest {
                small[k] = ((c * sign * core::f32::consts::SQRT_2 * 255.5).round() as i32)
                    .clamp(-256, 255) as i16;
                k += 1;
            }
        }
        (p, largest as u8, small)
    }
}

/// The scene: every cube. Its delta (from the derive) sends the changed cubes' indices
/// and each changed cube's changes.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct Scene {
    /// The cubes, the pusher first.
    #[net(max_len = 901)]
    pub cubes: Vec<Cube>,
}

impl Scene {
    /// The scene of a simulation's bodies.
    pub fn of(sim: &sim::Sim) -> Self {
        Self {
            cubes: sim.bodies.iter().map(Cube::quantize).collect(),
        }
    }

    /// Cubes that differ from `other`.
    pub fn changed_from(&self, other: &Self) -> usize {
        self.cubes
            .iter()
            .zip(other.cubes.iter())
            .filter(|(a, b)| a != b)
            .count()
    }
}
