//! Properties of the derived delta encoding, against any baseline that is itself a
//! decoded value: decoding the delta gives exactly what absolute decoding of the value
//! gives (compared by their encodings, so floats bit for bit), and a delta is never
//! longer than `MAX_DELTA_BITS` nor than the value's absolute encoding plus the
//! documented overhead. Arbitrary bits never make a delta decoder panic.
#![allow(missing_docs)]

#[path = "delta/types.rs"]
mod types;

use std::collections::BTreeMap;

use netser::{Encoder, NetDelta, NetSerialize, ReadStream, WriteStream};
use proptest::prelude::*;
use types::{Cube, Player, Scene, Shape};

/// The cube's highest height: 32 m less one step.
const Z_TOP: f32 = 32.0 - 1.0 / 512.0;

fn quat() -> impl Strategy<Value = [f32; 4]> {
    prop::array::uniform4(-1.0f32..1.0)
        .prop_filter("non-zero", |q| q.iter().map(|c| c * c).sum::<f32>() > 1e-3)
}

fn cube() -> impl Strategy<Value = Cube> {
    (
        prop_oneof![Just(-256.0f32), Just(255.0), -256.0f32..=255.0],
        -256.0f32..=255.0,
        prop_oneof![Just(0.0f32), Just(Z_TOP), 0.0f32..=Z_TOP],
        quat(),
        any::<bool>(),
    )
        .prop_map(|(x, y, z, orientation, interacting)| Cube {
            x,
            y,
            z,
            orientation,
            interacting,
        })
}

/// `c` moved by a few steps (the tiers' territory), still in range.
fn near(c: &Cube, d: [f32; 4], turn: [f32; 4]) -> Cube {
    let clamp = |v: f32, lo: f32, hi: f32| v.clamp(lo, hi);
    Cube {
        x: clamp(c.x + d[0], -256.0, 255.0),
        y: clamp(c.y + d[1], -256.0, 255.0),
        z: clamp(c.z + d[2], 0.0, Z_TOP),
        orientation: [
            c.orientation[0] + turn[0],
            c.orientation[1] + turn[1],
            c.orientation[2] + turn[2],
            c.orientation[3] + turn[3],
        ],
        interacting: c.interacting ^ (d[3] > 0.0),
    }
}

/// A value and a baseline: independent, or the baseline a small move away.
fn cube_pair() -> impl Strategy<Value = (Cube, Cube)> {
    (
        cube(),
        cube(),
        prop::array::uniform4(-1.0f32..1.0),
        prop::array::uniform4(-0.2f32..0.2),
        0..3u8,
    )
        .prop_map(|(v, b, d, turn, mode)| match mode {
            0 => (v, b),
            1 => (near(&b, d, turn), b),
            _ => (near(&b, d.map(|x| x / 40.0), turn.map(|x| x / 40.0)), b),
        })
        .prop_filter("a valid quaternion", |(v, _)| v.to_vec().is_ok())
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (0.0f32..=10.0).prop_map(|radius| Shape::Sphere { radius }),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Shape::Box(a, b)),
        Just(Shape::Empty),
    ]
}

prop_compose! {
    fn player()(
        (health, ammo, score, lean, alive, speed) in (0..=100u8, 0..4096u16, any::<u32>(), -10..=10i8, any::<bool>(), any::<f32>()),
        cube in cube(),
        name in "[a-z]{0,16}",
        money in -1000..=1000i32,
        (slot, bonus, keys) in (prop::option::of(0..=9u8), prop::option::of(any::<u16>()), prop::array::uniform4(0..=3u8)),
        path in prop::collection::vec(0..=1000u16, 0..=6),
        stats in prop::collection::btree_map(any::<u8>(), any::<u16>(), 0..=4),
        shape in shape(),
        stamina in 0.0f32..=1.0,
    ) -> Player {
        Player { health, ammo, score, lean, alive, speed, cube, name, money, slot, bonus, keys, path, stats, shape, stamina, local_only: 0 }
    }
}

/// A player changed in a few fields from `b`.
fn player_pair() -> impl Strategy<Value = (Player, Player)> {
    (player(), player(), prop::collection::vec(any::<bool>(), 17)).prop_map(|(v, b, pick)| {
        let mut m = b.clone();
        let p = |i: usize| pick[i];
        if p(0) {
            m.health = v.health;
        }
        if p(1) {
            m.ammo = v.ammo;
        }
        if p(2) {
            m.score = v.score;
        }
        if p(3) {
            m.lean = v.lean;
        }
        if p(4) {
            m.alive = v.alive;
        }
        if p(5) {
            m.speed = v.speed;
        }
        if p(6) {
            m.cube = v.cube.clone();
        }
        if p(7) {
            m.name = v.name.clone();
        }
        if p(8) {
            m.money = v.money;
        }
        if p(9) {
            m.slot = v.slot;
        }
        if p(10) {
            m.bonus = v.bonus;
        }
        if p(11) {
            m.keys = v.keys;
        }
        if p(12) {
            m.path = v.path.clone();
        }
        if p(13) {
            m.stats = v.stats.clone();
        }
        if p(14) {
            m.shape = v.shape.clone();
        }
        if p(15) {
            m.stamina = v.stamina;
        }
        (m, b)
    })
}

/// What the receiver holds: the baseline after an absolute round trip.
fn decoded<T: NetSerialize>(b: &T) -> T {
    T::decode_from_slice(&b.to_vec().unwrap()).unwrap()
}

/// The delta's bits, after checking it decodes to the absolute decoding of `v`.
fn check<T: NetDelta + core::fmt::Debug>(v: &T, b: &T) -> Result<u64, TestCaseError> {
    let mut buf = vec![0u8; T::MAX_DELTA_BITS.div_ceil(8) as usize];
    let mut w = WriteStream::new(&mut buf);
    v.encode_delta(b, &mut w).unwrap();
    let bits = w.bit_position();
    let len = w.finish();
    prop_assert!(bits <= T::MAX_DELTA_BITS);
    let got = T::decode_delta(b, &mut ReadStream::new(&buf[..len])).unwrap();
    let abs = decoded(v);
    prop_assert_eq!(got.to_vec().unwrap(), abs.to_vec().unwrap());
    // Delta-encoding the decoded value gives the same bits.
    prop_assert_eq!(got.measure_delta_bits(b).unwrap(), bits);
    Ok(bits)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn cube_delta_is_exact_and_bounded((v, b) in cube_pair()) {
        let b = decoded(&b);
        let bits = check(&v, &b)?;
        // Absolute 80 bits, plus at most 1 + 3 + 3 + 3 + 2.
        prop_assert!(bits <= v.measure_bits().unwrap() + 12);
        // Unchanged costs one bit.
        prop_assert_eq!(check(&decoded(&v), &decoded(&v))?, 1);
    }

    #[test]
    fn player_delta_is_exact_and_bounded((v, b) in player_pair()) {
        let b = decoded(&b);
        let bits = check(&v, &b)?;
        prop_assert!(bits <= v.measure_bits().unwrap() + (Player::MAX_DELTA_BITS - Player::MAX_BITS));
    }

    #[test]
    fn scene_delta_is_exact_and_bounded(
        base in prop::collection::vec(cube(), 0..40),
        edits in prop::collection::vec((any::<prop::sample::Index>(), cube()), 0..10),
        len in 0..48usize,
        frame in any::<u32>(),
    ) {
        let base = Scene { frame: 0, cubes: base };
        let base = decoded(&base);
        let mut v = base.clone();
        v.frame = frame;
        v.cubes.resize_with(len, || types::cube(1.0, 2.0, 0.3));
        for (i, c) in edits {
            if !v.cubes.is_empty() {
                let i = i.index(v.cubes.len());
                v.cubes[i] = c;
            }
        }
        let bits = check(&v, &base)?;
        // Over the absolute encoding: the scene's bit, the frame's, the list's bit and
        // index mode, and per element the baseline has too an index bit and at most
        // 11 bits over its 80.
        let common = v.cubes.len().min(base.cubes.len()) as u64;
        prop_assert!(bits <= v.measure_bits().unwrap() + 4 + common * 12);
    }

    #[test]
    fn shape_delta_is_exact_and_bounded(v in shape(), b in shape()) {
        let b = decoded(&b);
        check(&v, &b)?;
    }

    #[test]
    fn arbitrary_bits_never_panic(
        b in player(),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let b = decoded(&b);
        if let Ok(v) = Player::decode_delta(&b, &mut ReadStream::new(&bytes)) {
            // Whatever decodes is a valid value: it encodes, absolutely and relatively.
            prop_assert!(v.to_vec().is_ok());
            check(&v, &b)?;
        }
        let scene = Scene { frame: 1, cubes: vec![b.cube.clone(); 5] };
        if let Ok(v) = Scene::decode_delta(&scene, &mut ReadStream::new(&bytes)) {
            prop_assert!(v.cubes.len() <= 1024);
            check(&v, &scene)?;
        }
    }
}

#[test]
fn maps_compare_by_their_encoding() {
    let mut p = types::player();
    p.stats = BTreeMap::from([(1, 10)]);
    let q = p.clone();
    assert!(p.is_unchanged(&q).unwrap());
}
