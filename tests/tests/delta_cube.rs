//! The articles' cube scene through the derived delta: 901 cubes, 80 bits each absolute
//! (position at 512 steps per metre in [-256, 255] m horizontally and [0, 32) m up,
//! smallest three at 9 bits, an `interacting` bool). The figures the snapshot layer's
//! budget rests on: an unchanged cube, typical small moves (a cube moving at 2 m/s with
//! the baseline 6 ticks old at 60 Hz, so 0.2 m), and the worst case. Run with
//! `--nocapture` to see them.
#![allow(missing_docs)]

#[path = "delta/types.rs"]
#[allow(dead_code)]
mod types;

use netser::{NetDelta, NetSerialize};
use types::{Cube, Scene};

/// A small deterministic generator (xorshift), so the figures are the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Quaternion product `a * b`, `[x, y, z, w]`.
fn mul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// A rotation of `angle` radians about the unit `axis`.
fn axis_angle(axis: [f32; 3], angle: f32) -> [f32; 4] {
    let s = (angle / 2.0).sin();
    [axis[0] * s, axis[1] * s, axis[2] * s, (angle / 2.0).cos()]
}

/// A cube at rest on the ground, at a random place and yaw.
fn resting(rng: &mut Rng) -> Cube {
    let yaw = (rng.unit() - 0.5) * 3.0;
    Cube {
        x: (rng.unit() - 0.5) * 200.0,
        y: (rng.unit() - 0.5) * 200.0,
        z: 0.5,
        orientation: axis_angle([0.0, 0.0, 1.0], yaw),
        interacting: false,
    }
}

#[derive(Clone, Copy, Debug)]
enum Motion {
    /// Pushed along the ground at 2 m/s: 0.2 m in the baseline's 6 ticks.
    Slide,
    /// Sliding and spinning about the vertical at 2 rad/s.
    SlideSpin,
    /// Rolling over at 2 m/s: a 1 m cube turns 0.4 rad about a horizontal axis and its
    /// centre rises.
    Tumble,
}

/// `c` after 0.1 s of `motion` in a random direction.
fn moved(c: &Cube, motion: Motion, rng: &mut Rng) -> Cube {
    let heading = rng.unit() * std::f32::consts::TAU;
    let (dx, dy) = (0.2 * heading.cos(), 0.2 * heading.sin());
    let mut m = c.clone();
    m.x += dx;
    m.y += dy;
    match motion {
        Motion::Slide => {}
        Motion::SlideSpin => {
            m.orientation = mul(axis_angle([0.0, 0.0, 1.0], 0.2), c.orientation);
        }
        Motion::Tumble => {
            let axis = [-heading.sin(), heading.cos(), 0.0];
            let angle = 0.4f32;
            m.orientation = mul(axis_angle(axis, angle), c.orientation);
            m.z = 0.5 * (angle.cos() + angle.sin());
        }
    }
    m
}

/// Average bits per changed cube, index included, in a 901-cube scene where `changed`
/// cubes move by `motion`; and the scene's delta in bits.
fn scene_delta(motion: Motion, changed: usize, seed: u64) -> (f64, u64) {
    let mut rng = Rng(seed);
    let base = Scene {
        frame: 100,
        cubes: (0..901).map(|_| resting(&mut rng)).collect(),
    };
    let mut value = base.clone();
    value.frame = 106;
    let mut moved_count = 0;
    while moved_count < changed {
        let i = (rng.next() % 901) as usize;
        if value.cubes[i] == base.cubes[i] {
            value.cubes[i] = moved(&base.cubes[i], motion, &mut rng);
            moved_count += 1;
        }
    }
    let bits = value.measure_delta_bits(&base).unwrap();
    // The scene's own bits: changed, the frame (1 + 32), changed, length, index mode.
    let own = 1 + 33 + 1 + 10 + 1;
    let mut unchanged_scene = base.clone();
    unchanged_scene.frame = 106;
    assert_eq!(
        unchanged_scene.measure_delta_bits(&base).unwrap(),
        1 + 33 + 1
    );
    ((bits - own) as f64 / changed as f64, bits)
}

#[test]
fn an_unchanged_cube_is_one_bit_and_nothing_in_a_scene() {
    let mut rng = Rng(7);
    let c = resting(&mut rng);
    assert_eq!(c.measure_delta_bits(&c).unwrap(), 1);
    let scene = Scene {
        frame: 0,
        cubes: (0..901).map(|_| resting(&mut rng)).collect(),
    };
    // 901 cubes at rest: the scene's changed bit... and nothing else.
    assert_eq!(scene.measure_delta_bits(&scene).unwrap(), 1);
    println!(
        "cube: absolute {} bits; unchanged delta 1 bit (0 in a scene: not indexed); at rest a whole scene is 1 bit",
        Cube::MAX_BITS
    );
}

#[test]
fn typical_small_moves() {
    let mut rng = Rng(11);
    for motion in [Motion::Slide, Motion::SlideSpin, Motion::Tumble] {
        let mut total = 0;
        let n = 2000;
        let mut most = 0;
        for _ in 0..n {
            let c = resting(&mut rng);
            let m = moved(&c, motion, &mut rng);
            let mut w = netser::MeasureStream::new();
            m.encode_changed(&c, &mut w).unwrap();
            let bits = netser::Encoder::bit_position(&w);
            most = most.max(bits);
            total += bits;
        }
        let avg = total as f64 / n as f64;
        println!("{motion:?}: {avg:.1} bits per changed cube on average (at most {most}), index not included");
        let limit = match motion {
            Motion::Slide => 30.0,
            Motion::SlideSpin => 50.0,
            // Three components in the large tier, and the centre rising 79 steps:
            // beyond z's 14-bit large tier (±72), so z goes absolute.
            Motion::Tumble => 70.0,
        };
        assert!(avg <= limit, "{motion:?}: {avg}");
    }
}

#[test]
fn scene_of_901_cubes_within_the_article_budget() {
    // The article's scene: 901 cubes, 250 kbit/s at 60 Hz is 4166 bits per snapshot.
    for (motion, changed) in [
        (Motion::Slide, 75),
        (Motion::SlideSpin, 75),
        (Motion::Tumble, 75),
        (Motion::SlideSpin, 150),
    ] {
        let (per_cube, bits) = scene_delta(motion, changed, 3);
        println!(
            "{changed} cubes {motion:?}: {per_cube:.1} bits per changed cube with its index; scene {bits} bits = {:.1} kbit/s at 60 Hz",
            bits as f64 * 60.0 / 1000.0
        );
        if changed == 75 && !matches!(motion, Motion::Tumble) {
            assert!(per_cube <= 60.0, "{motion:?}: {per_cube}");
        }
    }
}

#[test]
fn worst_case_of_a_cube() {
    // Every field in its absolute tier: 21 + 21 + 17 + 31 + 1 bits, plus the cube's
    // changed bit when it stands alone (inside a collection its index says it).
    assert_eq!(Cube::MAX_CHANGED_BITS, 91);
    assert_eq!(Cube::MAX_DELTA_BITS, 92);
    let a = Cube {
        x: -256.0,
        y: -256.0,
        z: 0.0,
        orientation: [0.0, 0.0, 0.0, 1.0],
        interacting: false,
    };
    let b = Cube {
        x: 255.0,
        y: 255.0,
        z: 31.9,
        orientation: [1.0, 0.0, 0.0, 0.0],
        interacting: true,
    };
    assert_eq!(b.measure_delta_bits(&a).unwrap(), 92);
    // In a scene, an index costs at most 23 bits (up to 69914 apart) in the relative
    // form, which is only chosen when it is shorter than a bit per cube.
    println!(
        "cube worst case: {} bits changed (absolute {} + {}), {} standalone",
        Cube::MAX_CHANGED_BITS,
        Cube::MAX_BITS,
        Cube::MAX_CHANGED_BITS - Cube::MAX_BITS,
        Cube::MAX_DELTA_BITS
    );
}
