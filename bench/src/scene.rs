//! The articles' cube scene ("Snapshot Compression"): 901 cubes at 60 Hz, each sent as
//! its position at 512 units per metre in [-256, 255] m horizontally and [0, 32) m up, its
//! orientation as smallest-three at 9 bits, and whether it is interacting: 80 bits a cube
//! absolute. [`sim`] moves them; [`run`] sends them through netser's snapshot layer over
//! the transport's seeded simulator and counts the bits (the `scene` program).

pub mod run;
pub mod sim;

use netser::{Decoder, Encoder, NetDelta, NetSerialize, Result};

pub use sim::CUBES;

/// Units per metre of a position.
pub const UNITS_PER_METRE: f32 = 512.0;
const X_MIN: i32 = -256 * 512;
const X_MAX: i32 = 255 * 512;
const Z_MAX: i32 = 32 * 512 - 1;
/// Smallest-three components: 9 bits each.
const Q_MIN: i32 = -256;
const Q_MAX: i32 = 255;

/// A cube as sent: quantized position, smallest-three orientation, interacting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cube {
    /// East, 1/512 m.
    pub x: i32,
    /// North, 1/512 m.
    pub y: i32,
    /// Up, 1/512 m.
    pub z: i32,
    /// Index of the quaternion's largest component (dropped, made positive).
    pub largest: u8,
    /// The other three, in order, at 9 bits over [-1/sqrt(2), 1/sqrt(2)].
    pub small: [i32; 3],
    /// Touched by the pusher or another cube and not yet at rest.
    pub interacting: bool,
}

impl Cube {
    /// Quantizes a simulated body (clamped to the scene's bounds).
    pub fn quantize(body: &sim::Body) -> Self {
        let q = |v: f32, min: i32, max: i32| ((v * UNITS_PER_METRE).round() as i32).clamp(min, max);
        let o = body.orientation;
        let mut largest = 0;
        for i in 1..4 {
            if o[i].abs() > o[largest].abs() {
                largest = i;
            }
        }
        let sign = if o[largest] < 0.0 { -1.0 } else { 1.0 };
        let mut small = [0; 3];
        let mut k = 0;
        for (i, c) in o.iter().enumerate() {
            if i != largest {
                let scaled = c * sign * core::f32::consts::SQRT_2 * 255.5;
                small[k] = (scaled.round() as i32).clamp(Q_MIN, Q_MAX);
                k += 1;
            }
        }
        Self {
            x: q(body.position[0], X_MIN, X_MAX),
            y: q(body.position[1], X_MIN, X_MAX),
            z: q(body.position[2], 0, Z_MAX),
            largest: largest as u8,
            small,
            interacting: body.interacting,
        }
    }

    /// The position in metres and the orientation as four `f32` (what a naive game
    /// sends: 7 floats and a byte).
    pub fn to_f32(self) -> ([f32; 3], [f32; 4]) {
        let p = [self.x, self.y, self.z].map(|v| v as f32 / UNITS_PER_METRE);
        let mut o = [0.0f32; 4];
        let mut k = 0;
        let mut sum = 0.0;
        for (i, slot) in o.iter_mut().enumerate() {
            if i != usize::from(self.largest) {
                *slot = self.small[k] as f32 / (core::f32::consts::SQRT_2 * 255.5);
                sum += *slot * *slot;
                k += 1;
            }
        }
        o[usize::from(self.largest)] = (1.0 - sum).max(0.0).sqrt();
        (p, o)
    }
}

impl NetSerialize for Cube {
    const MIN_BITS: u64 = 80;
    const MAX_BITS: u64 = 80;
    const MAX_HEAP_BYTES: u64 = 0;
    const SCHEMA_HASH: u64 = netser::schema::fnv1a(b"scene::Cube:18,18,14,2+3x9,1");
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        e.write_int(self.x, X_MIN, X_MAX)?;
        e.write_int(self.y, X_MIN, X_MAX)?;
        e.write_int(self.z, 0, Z_MAX)?;
        e.write_int(self.largest, 0, 3)?;
        for s in self.small {
            e.write_int(s, Q_MIN, Q_MAX)?;
        }
        e.write_bool(self.interacting)
    }
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        Ok(Self {
            x: d.read_int(X_MIN, X_MAX)?,
            y: d.read_int(X_MIN, X_MAX)?,
            z: d.read_int(0, Z_MAX)?,
            largest: d.read_int(0, 3)?,
            small: [
                d.read_int(Q_MIN, Q_MAX)?,
                d.read_int(Q_MIN, Q_MAX)?,
                d.read_int(Q_MIN, Q_MAX)?,
            ],
            interacting: d.read_bool()?,
        })
    }
}

/// A value relative to its baseline: `0` and 5 bits within 16, `10` and 9 bits within
/// 256, else `11` and the absolute value.
fn write_relative<E: Encoder>(e: &mut E, value: i32, base: i32, min: i32, max: i32) -> Result<()> {
    let d = value - base;
    if (-16..16).contains(&d) {
        e.write_bool(false)?;
        e.write_int(d, -16, 15)
    } else if (-256..256).contains(&d) {
        e.write_bits(0b01, 2)?;
        e.write_int(d, -256, 255)
    } else {
        e.write_bits(0b11, 2)?;
        e.write_int(value, min, max)
    }
}

fn read_relative<D: Decoder>(d: &mut D, base: i32, min: i32, max: i32) -> Result<i32> {
    let value = if !d.read_bool()? {
        base + d.read_int(-16, 15)?
    } else if !d.read_bool()? {
        base + d.read_int(-256, 255)?
    } else {
        return d.read_int(min, max);
    };
    if !(min..=max).contains(&value) {
        return Err(netser::Error::new(
            netser::ErrorKind::Custom("relative value out of range"),
            d.bit_position(),
        ));
    }
    Ok(value)
}

impl NetDelta for Cube {
    // Position flag, 3 x (2 + 18), orientation flag and 1 + 2 + 27, interacting.
    const MAX_DELTA_BITS: u64 = 1 + 3 * 20 + 1 + 30 + 1;
    fn encode_delta<E: Encoder>(&self, b: &Self, e: &mut E) -> Result<()> {
        let moved = (self.x, self.y, self.z) != (b.x, b.y, b.z);
        e.write_bool(moved)?;
        if moved {
            write_relative(e, self.x, b.x, X_MIN, X_MAX)?;
            write_relative(e, self.y, b.y, X_MIN, X_MAX)?;
            write_relative(e, self.z, b.z, 0, Z_MAX)?;
        }
        let turned = (self.largest, self.small) != (b.largest, b.small);
        e.write_bool(turned)?;
        if turned {
            let near = self.largest == b.largest
                && self
                    .small
                    .iter()
                    .zip(&b.small)
                    .all(|(s, b)| (-16..16).contains(&(s - b)));
            e.write_bool(near)?;
            if near {
                for (s, b) in self.small.iter().zip(&b.small) {
                    e.write_int(s - b, -16, 15)?;
                }
            } else {
                e.write_int(self.largest, 0, 3)?;
                for s in self.small {
                    e.write_int(s, Q_MIN, Q_MAX)?;
                }
            }
        }
        e.write_bool(self.interacting)
    }
    fn decode_delta<D: Decoder>(b: &Self, d: &mut D) -> Result<Self> {
        let mut cube = *b;
        if d.read_bool()? {
            cube.x = read_relative(d, b.x, X_MIN, X_MAX)?;
            cube.y = read_relative(d, b.y, X_MIN, X_MAX)?;
            cube.z = read_relative(d, b.z, 0, Z_MAX)?;
        }
        if d.read_bool()? {
            if d.read_bool()? {
                for (s, b) in cube.small.iter_mut().zip(&b.small) {
                    *s = b + d.read_int(-16, 15)?;
                    if !(Q_MIN..=Q_MAX).contains(s) {
                        return Err(netser::Error::new(
                            netser::ErrorKind::Custom("relative value out of range"),
                            d.bit_position(),
                        ));
                    }
                }
            } else {
                cube.largest = d.read_int(0, 3)?;
                for s in &mut cube.small {
                    *s = d.read_int(Q_MIN, Q_MAX)?;
                }
            }
        }
        cube.interacting = d.read_bool()?;
        Ok(cube)
    }
}

/// The scene: every cube.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The cubes, the pusher first.
    pub cubes: Box<[Cube; CUBES]>,
}

impl Scene {
    /// The scene of a simulation's bodies.
    pub fn of(sim: &sim::Sim) -> Self {
        let mut cubes = Box::new([Cube::default(); CUBES]);
        for (cube, body) in cubes.iter_mut().zip(&sim.bodies) {
            *cube = Cube::quantize(body);
        }
        Self { cubes }
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

impl NetSerialize for Scene {
    const MIN_BITS: u64 = 80 * CUBES as u64;
    const MAX_BITS: u64 = 80 * CUBES as u64;
    const MAX_HEAP_BYTES: u64 = (CUBES * core::mem::size_of::<Cube>()) as u64;
    const SCHEMA_HASH: u64 = netser::schema::fnv1a(b"scene::Scene:[Cube;901]");
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        self.cubes.iter().try_for_each(|c| c.encode(e))
    }
    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        let mut cubes = Box::new([Cube::default(); CUBES]);
        for cube in cubes.iter_mut() {
            *cube = Cube::decode(d)?;
        }
        Ok(Self { cubes })
    }
}

/// The changed cubes only: per changed cube a `1`, its index relative to the previous
/// changed one, its delta; then a `0`.
impl NetDelta for Scene {
    const MAX_DELTA_BITS: u64 = CUBES as u64 * (1 + 41 + Cube::MAX_DELTA_BITS) + 1;
    fn encode_delta<E: Encoder>(&self, b: &Self, e: &mut E) -> Result<()> {
        let mut previous = -1;
        for (i, (cube, base)) in self.cubes.iter().zip(b.cubes.iter()).enumerate() {
            if cube != base {
                e.write_bool(true)?;
                e.write_int_relative(previous, i as i32)?;
                previous = i as i32;
                cube.encode_delta(base, e)?;
            }
        }
        e.write_bool(false)
    }
    fn decode_delta<D: Decoder>(b: &Self, d: &mut D) -> Result<Self> {
        let mut cubes = b.cubes.clone();
        let mut previous = -1;
        while d.read_bool()? {
            let i = d.read_int_relative(previous)?;
            if i as usize >= CUBES {
                return Err(netser::Error::new(
                    netser::ErrorKind::Custom("cube index out of range"),
                    d.bit_position(),
                ));
            }
            previous = i;
            cubes[i as usize] = Cube::decode_delta(&b.cubes[i as usize], d)?;
        }
        Ok(Self { cubes })
    }
}
