//! Snapshots of delta encodings: the bits, the bytes and the traced bit layout of the
//! delta of representative values against their baselines. They pin the delta section
//! of WIRE.md; each `.snap` in `snapshots/` was reviewed entry by entry against it
//! (changed bits, tier flags and codes, smallest-three changes, relative indices).
#![allow(missing_docs)]

#[path = "delta/types.rs"]
mod types;

use std::fmt::Write as _;

use netser::trace::Trace;
use netser::{Encoder, NetDelta, ReadStream, WriteStream};
use types::{cube, player, Cube, Scene, Shape};

/// Bits, bytes in hex and the bit layout of `value`'s delta against `baseline`; and a
/// check that it decodes to what absolute decoding of `value` gives.
fn render<T: NetDelta>(value: &T, baseline: &T) -> String {
    let mut buf = vec![0u8; T::MAX_DELTA_BITS.div_ceil(8) as usize];
    let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    value.encode_delta(baseline, &mut w).unwrap();
    let bits = w.bit_position();
    let layout = w.tracer().to_string();
    let len = w.finish();
    let got = T::decode_delta(baseline, &mut ReadStream::new(&buf[..len])).unwrap();
    assert_eq!(
        got.to_vec().unwrap(),
        T::decode_from_slice(&value.to_vec().unwrap())
            .unwrap()
            .to_vec()
            .unwrap()
    );
    let mut out = String::new();
    writeln!(
        out,
        "delta bits: {bits} (absolute {}, worst delta {})",
        value.measure_bits().unwrap(),
        T::MAX_DELTA_BITS
    )
    .unwrap();
    write!(out, "bytes ({len}):").unwrap();
    for (i, b) in buf[..len].iter().enumerate() {
        if i % 16 == 0 {
            out.push_str("\n ");
        }
        write!(out, " {b:02x}").unwrap();
    }
    writeln!(out).unwrap();
    out.push_str(&layout);
    out
}

#[test]
fn cube_unchanged() {
    let c = cube(10.0, -20.0, 0.5);
    insta::assert_snapshot!(render(&c, &c));
}

#[test]
fn cube_small_tiers() {
    // x +3 steps, y -16 steps (the small tier's ends), z +5, a 0.02 rad turn.
    let base = cube(10.0, -20.0, 0.5);
    let v = Cube {
        x: 10.0 + 3.0 / 512.0,
        y: -20.0 - 16.0 / 512.0,
        z: 0.5 + 5.0 / 512.0,
        ..cube(10.0, -20.0, 0.52)
    };
    insta::assert_snapshot!(render(&v, &base));
}

#[test]
fn cube_pushed_at_2_m_per_s() {
    // 0.2 m along x (102 steps: the large tier), spinning 0.2 rad, picked up.
    let base = cube(10.0, -20.0, 0.5);
    let v = Cube {
        x: 10.2,
        interacting: true,
        ..cube(10.0, -20.0, 0.7)
    };
    insta::assert_snapshot!(render(&v, &base));
}

#[test]
fn cube_absolute_tiers() {
    // Far away on x (absolute level), and half a turn: another largest component.
    let base = cube(10.0, -20.0, 0.5);
    let v = Cube {
        x: -100.0,
        ..cube(10.0, -20.0, 3.0)
    };
    insta::assert_snapshot!(render(&v, &base));
}

#[test]
fn scene_changed_grown() {
    let base = Scene {
        frame: 7,
        cubes: (0..20).map(|i| cube(i as f32, 0.0, 0.0)).collect(),
    };
    let mut v = base.clone();
    v.frame = 8;
    v.cubes[2].interacting = true;
    v.cubes[3].z = 0.5 + 1.0 / 512.0;
    v.cubes[12].x = 12.25;
    v.cubes.push(cube(-1.0, -1.0, 0.0));
    insta::assert_snapshot!(render(&v, &base));
}

#[test]
fn player_fields() {
    let base = player();
    let mut v = player();
    v.health = 79;
    v.name = "ada!".into();
    v.slot = Some(5);
    v.keys[3] = 0;
    v.path.truncate(1);
    v.shape = Shape::Sphere { radius: 0.75 };
    insta::assert_snapshot!(render(&v, &base));
}

#[test]
fn shape_other_variant() {
    insta::assert_snapshot!(render(&Shape::Box(3, 4), &Shape::Sphere { radius: 1.0 }));
}
