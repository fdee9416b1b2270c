//! The scene's deterministic simulation: a field of 900 cubes resting on the ground and a
//! pusher cube that drives through it, knocking cubes away (they slide, hop, tumble and
//! knock others), after which every cube comes back to rest. Plain `f32` arithmetic in a
//! fixed order, no randomness after the seed: the same run every time.

use crate::data::Rng;

/// Cubes in the article's scene: the pusher and a 30 x 30 field.
pub const CUBES: usize = 901;
/// The article's field: 30 x 30.
pub const GRID: usize = 30;
/// Field spacing in metres.
const SPACING: f32 = 1.5;
/// A cube's half size in metres (resting height).
const HALF: f32 = 0.25;
/// Radius within which the pusher knocks a cube, metres.
const PUSH_RADIUS: f32 = 3.0;
/// Radius within which a sliding cube knocks a resting one, metres.
const KNOCK_RADIUS: f32 = 0.9;
/// Below this speed (m/s) and on the ground, a cube stops.
const REST_SPEED: f32 = 0.05;
/// Ground friction, m/s^2.
const FRICTION: f32 = 1.1;
const GRAVITY: f32 = 9.81;
/// Angular damping per second (fraction kept).
const SPIN_KEEP: f32 = 0.05;

/// One cube's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Metres.
    pub position: [f32; 3],
    /// Unit quaternion `[x, y, z, w]`.
    pub orientation: [f32; 4],
    /// m/s.
    pub velocity: [f32; 3],
    /// Rotation axis times speed, rad/s.
    pub spin: [f32; 3],
    /// Touched by the pusher or another cube recently (the article's "interacting").
    pub interacting: bool,
    /// Not moving (and not simulated until knocked).
    pub resting: bool,
}

/// The simulation.
pub struct Sim {
    /// The cubes, the pusher first.
    pub bodies: Vec<Body>,
    rng: Rng,
    tick: u64,
    /// Ticks during which the pusher drives.
    drive_ticks: u64,
    /// Half the width the pusher covers, metres.
    reach: f32,
}

impl Sim {
    /// A `grid` x `grid` field at rest and the pusher at its start; the pusher drives
    /// for `drive_ticks` ticks, then stops.
    pub fn new(seed: u64, grid: usize, drive_ticks: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut bodies = Vec::with_capacity(grid * grid + 1);
        let half = (grid as f32 - 1.0) * 0.5;
        bodies.push(Body {
            position: [0.0, 0.0, HALF],
            orientation: [0.0, 0.0, 0.0, 1.0],
            velocity: [0.0; 3],
            spin: [0.0; 3],
            interacting: true,
            resting: false,
        });
        for i in 0..grid {
            for j in 0..grid {
                let yaw = rng.range(-3.1, 3.1) * 0.5;
                bodies.push(Body {
                    position: [
                        (i as f32 - half) * SPACING,
                        (j as f32 - half) * SPACING,
                        HALF,
                    ],
                    orientation: [0.0, 0.0, yaw.sin(), yaw.cos()],
                    velocity: [0.0; 3],
                    spin: [0.0; 3],
                    interacting: false,
                    resting: true,
                });
            }
        }
        Self {
            bodies,
            rng,
            tick: 0,
            drive_ticks,
            reach: half * SPACING + 4.0,
        }
    }

    /// Whether every cube (the pusher too, once it stopped) is at rest.
    pub fn at_rest(&self) -> bool {
        self.bodies.iter().all(|b| b.resting)
    }

    /// Advances one tick of `dt` seconds.
    pub fn step(&mut self, dt: f32) {
        self.tick += 1;
        let driving = self.tick <= self.drive_ticks;
        // The pusher: a figure of eight across the field at 6 m/s.
        {
            let pusher = &mut self.bodies[0];
            if driving {
                let t = self.tick as f32 * dt;
                let r = self.reach;
                let target = [r * (t * 0.23).sin(), 0.8 * r * (t * 0.46).sin(), HALF];
                let mut v = [
                    (target[0] - pusher.position[0]) / dt,
                    (target[1] - pusher.position[1]) / dt,
                    0.0,
                ];
                let speed = (v[0] * v[0] + v[1] * v[1]).sqrt();
                if speed > 6.0 {
                    v[0] *= 6.0 / speed;
                    v[1] *= 6.0 / speed;
                }
                pusher.velocity = v;
                pusher.spin = [0.0, 0.0, 1.5];
                pusher.resting = false;
            } else if !pusher.resting {
                pusher.velocity = [0.0; 3];
                pusher.spin = [0.0; 3];
                pusher.resting = true;
                pusher.interacting = false;
            }
        }
        // Knocks: the pusher and sliding cubes set resting ones moving.
        let movers: Vec<(usize, [f32; 3], [f32; 3])> = self
            .bodies
            .iter()
            .enumerate()
            .filter(|(i, b)| !b.resting && (*i == 0 || speed(b.velocity) > 1.2))
            .map(|(i, b)| (i, b.position, b.velocity))
            .collect();
        for (mover, at, v) in movers {
            let radius = if mover == 0 {
                PUSH_RADIUS
            } else {
                KNOCK_RADIUS
            };
            for (i, body) in self.bodies.iter_mut().enumerate() {
                if i == mover || !body.resting {
                    continue;
                }
                let d = [body.position[0] - at[0], body.position[1] - at[1]];
                let dist = (d[0] * d[0] + d[1] * d[1]).sqrt();
                if dist > radius || dist < 1e-3 {
                    continue;
                }
                let push = if mover == 0 { 4.0 } else { 0.5 * speed(v) };
                body.velocity = [
                    d[0] / dist * push + 0.3 * v[0],
                    d[1] / dist * push + 0.3 * v[1],
                    if mover == 0 {
                        2.0 + self.rng.range(0.0, 1.0)
                    } else {
                        0.8
                    },
                ];
                body.spin = [
                    self.rng.range(-1.5, 1.5),
                    self.rng.range(-1.5, 1.5),
                    self.rng.range(-1.0, 1.0),
                ];
                body.resting = false;
                body.interacting = true;
            }
        }
        for (i, body) in self.bodies.iter_mut().enumerate() {
            if body.resting {
                continue;
            }
            integrate(body, dt, i == 0);
        }
    }
}

fn speed(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Moves a cube one tick: gravity, ground friction, spin damping, rest.
fn integrate(body: &mut Body, dt: f32, pusher: bool) {
    for axis in 0..3 {
        body.position[axis] += body.velocity[axis] * dt;
    }
    if !pusher {
        body.velocity[2] -= GRAVITY * dt;
    }
    if body.position[2] <= HALF {
        body.position[2] = HALF;
        if body.velocity[2] < 0.0 {
            body.velocity[2] = 0.0;
        }
        if !pusher {
            let horizontal =
                (body.velocity[0] * body.velocity[0] + body.velocity[1] * body.velocity[1]).sqrt();
            let slowed = (horizontal - FRICTION * dt).max(0.0);
            let scale = if horizontal > 0.0 {
                slowed / horizontal
            } else {
                0.0
            };
            body.velocity[0] *= scale;
            body.velocity[1] *= scale;
        }
    }
    for axis in 0..2 {
        body.position[axis] = body.position[axis].clamp(-250.0, 250.0);
    }
    body.position[2] = body.position[2].min(31.0);
    // Spin: rotate the orientation, then damp.
    let keep = SPIN_KEEP.powf(dt);
    let w = body.spin;
    let angle = speed(w) * dt;
    if angle > 0.0 {
        let s = (angle * 0.5).sin() / speed(w);
        let dq = [w[0] * s, w[1] * s, w[2] * s, (angle * 0.5).cos()];
        body.orientation = normalize(multiply(dq, body.orientation));
    }
    if !pusher {
        for axis in 0..3 {
            body.spin[axis] *= keep;
        }
        let on_ground = body.position[2] <= HALF + 1e-4;
        if on_ground && speed(body.velocity) < REST_SPEED && speed(body.spin) < 0.2 {
            body.velocity = [0.0; 3];
            body.spin = [0.0; 3];
            body.resting = true;
            body.interacting = false;
        }
    }
}

fn multiply(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}

fn normalize(q: [f32; 4]) -> [f32; 4] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}
