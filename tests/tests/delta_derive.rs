//! `#[net(delta)]`: each rule of the derived delta encoding, checked against the
//! absolute encoding of the same value.
#![allow(missing_docs)]

#[path = "delta/types.rs"]
mod types;

use netser::{Encoder, ErrorKind, NetDelta, NetSerialize, ReadStream, WriteStream};
use types::{cube, player, Cube, Player, Scene, Shape};

/// The delta of `v` against `b`: its bits and bytes.
fn delta<T: NetDelta>(v: &T, b: &T) -> (u64, Vec<u8>) {
    let mut buf = vec![0u8; T::MAX_DELTA_BITS.div_ceil(8) as usize + 1];
    let mut w = WriteStream::new(&mut buf);
    v.encode_delta(b, &mut w).unwrap();
    let bits = w.bit_position();
    let len = w.finish();
    buf.truncate(len);
    (bits, buf)
}

/// Encodes `v` against `b`, decodes it, checks it is what absolute decoding gives (by
/// their encodings: floats bit for bit) within the worst case, and returns the bits.
fn round<T: NetDelta + core::fmt::Debug>(v: &T, b: &T) -> u64 {
    let (bits, bytes) = delta(v, b);
    assert!(bits <= T::MAX_DELTA_BITS, "{bits} > {}", T::MAX_DELTA_BITS);
    assert_eq!(v.measure_delta_bits(b).unwrap(), bits);
    let got = T::decode_delta(b, &mut ReadStream::new(&bytes)).unwrap();
    let abs = T::decode_from_slice(&v.to_vec().unwrap()).unwrap();
    assert_eq!(
        got.to_vec().unwrap(),
        abs.to_vec().unwrap(),
        "{got:?} != {abs:?}"
    );
    bits
}

#[test]
fn the_cube_is_80_bits_absolute_and_one_bit_unchanged() {
    assert_eq!(Cube::MAX_BITS, 80);
    let c = cube(10.0, -20.0, 0.5);
    assert_eq!(round(&c, &c), 1);
    // A value that quantizes to the baseline's integers is unchanged too.
    let mut near = c.clone();
    near.x += 0.0005;
    assert_eq!(round(&near, &c), 1);
    // Worst case: each field's worst plus the struct's bit.
    assert_eq!(Cube::MAX_DELTA_BITS, 1 + 21 + 21 + 17 + 31 + 1);
    assert_eq!(Cube::MAX_CHANGED_BITS, Cube::MAX_DELTA_BITS - 1);
}

#[test]
fn quantized_floats_go_in_tiers_of_their_own_range() {
    let c = cube(10.0, 0.0, 0.0);
    let bits = |dx: f32| {
        round(
            &Cube {
                x: 10.0 + dx / 512.0,
                ..c.clone()
            },
            &c,
        )
    };
    // Struct bit, then x's delta, then four unchanged fields of one bit.
    let rest = 1 + 4;
    assert_eq!(bits(1.0), rest + 2 + 5); // small tier: ±16 in 5 bits
    assert_eq!(bits(-16.0), rest + 2 + 5);
    assert_eq!(bits(17.0), rest + 3 + 9); // large tier: ±(16 + 256) in 9 bits
    assert_eq!(bits(-272.0), rest + 3 + 9);
    assert_eq!(bits(273.0), rest + 3 + 18); // absolute
                                            // z has 14 bits: tiers of 4 and 7.
    let up = Cube {
        z: 0.5 + 8.0 / 512.0,
        ..c.clone()
    };
    assert_eq!(round(&up, &c), rest + 2 + 4);
}

#[test]
fn quaternions_go_relative_on_their_smallest_three() {
    let c = cube(0.0, 0.0, 0.0);
    // A small turn about z: the same largest component (w), one component moves.
    let turned = cube(0.0, 0.0, 0.02);
    assert_eq!(round(&turned, &c), 1 + 4 + 2 + 3 * 6);
    // 0.2 rad: 36 steps of 9-bit smallest three, the large tier.
    let turned = cube(0.0, 0.0, 0.2);
    assert_eq!(round(&turned, &c), 1 + 4 + 2 + 6 + 6 + 9);
    // Half a turn: z becomes the largest component: absolute, 2 + 29 bits.
    let flipped = cube(0.0, 0.0, 3.0);
    assert_eq!(round(&flipped, &c), 1 + 4 + 2 + 29);
}

#[test]
fn each_field_kind_costs_one_bit_unchanged() {
    let p = player();
    assert_eq!(round(&p, &p), 1);
    // Changing one field costs the struct's bit, one bit per other sent field (16, one
    // of them `stamina`, sent while alive), and the field's own delta.
    let others = 1 + 15;
    let one = |f: &dyn Fn(&mut Player)| {
        let mut q = player();
        f(&mut q);
        round(&q, &p) - others
    };
    assert_eq!(one(&|q| q.health = 81), 2 + 2); // 7 bits: tiers of 2 and 4
    assert_eq!(one(&|q| q.health = 0), 3 + 7);
    assert_eq!(one(&|q| q.ammo = 301), 2 + 3); // 12 bits: small tier of 3
    assert_eq!(one(&|q| q.score = 0), 1 + 32); // full width: changed bit, value
    assert_eq!(one(&|q| q.lean = 4), 1 + 5); // 5 bits: no tiers
                                             // Its bit is the value, and `stamina` is no longer sent: one bit for one bit.
    assert_eq!(one(&|q| q.alive = false), 0);
    assert_eq!(one(&|q| q.speed = -0.0), 1 + 32);
    assert_eq!(one(&|q| q.cube.interacting = true), 1 + 5); // nested: its own delta
                                                            // An absolute string: its length, padding to a byte boundary (where it falls in the
                                                            // delta), its bytes.
    let name = one(&|q| q.name = "bob".into());
    assert!((1 + 5 + 24..1 + 5 + 7 + 24).contains(&name), "{name}");
    assert_eq!(one(&|q| q.money = 251), 1 + 11); // opted out: absolute
    assert_eq!(one(&|q| q.slot = None), 1 + 1);
    assert_eq!(one(&|q| q.slot = Some(3)), 1 + 1 + 1 + 4);
    assert_eq!(one(&|q| q.bonus = Some(9)), 1 + 16); // against None: absolute
                                                     // Changed, the dense mode (a bit per element: cheaper than two relative indices),
                                                     // the element's delta: changed, and its 2 bits.
    assert_eq!(one(&|q| q.keys[1] = 3), 1 + 1 + 4 + 1 + 2);
    assert_eq!(one(&|q| q.path.push(7)), 1 + 3 + 1 + 1 + 2 + 10); // length, indices, absolute tail
    assert_eq!(
        one(&|q| {
            q.stats.insert(3, 30);
        }),
        1 + 3 + 3 * 24
    ); // absolute map
    assert_eq!(one(&|q| q.stamina = 0.5), 3 + 7);
}

#[test]
fn enums_keep_fields_relative_within_a_variant() {
    let s = Shape::Sphere { radius: 1.0 };
    assert_eq!(round(&s, &s), 1);
    // Changed, same variant, the radius's delta: 10 bits, small tier of 3.
    assert_eq!(round(&Shape::Sphere { radius: 1.02 }, &s), 1 + 1 + 2 + 3);
    // Another variant: changed, other variant, tag and fields absolute.
    assert_eq!(round(&Shape::Box(1, 2), &s), 1 + 1 + 2 + 16);
    assert_eq!(round(&Shape::Empty, &s), 1 + 1 + 2);
    assert_eq!(round(&s, &Shape::Empty), 1 + 1 + 2 + 10);
    assert_eq!(round(&Shape::Empty, &Shape::Empty), 1);
    // Changed, same variant, and the larger of the Box's two deltas (11 bits each) and
    // the absolute worst (tag and two bytes).
    assert_eq!(Shape::MAX_DELTA_BITS, 2 + (11 + 11));
}

#[test]
fn collections_send_changed_indices_relative_to_the_previous_one() {
    let base = Scene {
        frame: 1,
        cubes: (0..900).map(|i| cube(i as f32 * 0.25, 0.0, 0.0)).collect(),
    };
    let mut v = base.clone();
    assert_eq!(round(&v, &base), 1);
    v.frame = 2;
    // frame changed: 1 + 32; cubes unchanged: 1.
    assert_eq!(round(&v, &base), 1 + 33 + 1);
    // Two changed cubes, 40 apart: sparse indices, each cube's changes without its bit.
    v.cubes[10].interacting = true;
    v.cubes[50].interacting = true;
    let cube_changed = 5;
    let indices = 8 + 13 + 18; // +11, +40, then the sentinel +850
    assert_eq!(
        round(&v, &base),
        1 + 33 + 1 + 11 + 1 + indices + 2 * cube_changed
    );
    // Growing: the new cubes absolute after the length.
    let mut grown = base.clone();
    grown.cubes.push(cube(1.0, 1.0, 0.0));
    assert_eq!(round(&grown, &base), 1 + 1 + 1 + 11 + 1 + 18 + 80);
    // Shrinking: the length, and no index among the three left (a bit each: cheaper
    // than the sentinel's 5).
    let mut shrunk = base.clone();
    shrunk.cubes.truncate(3);
    assert_eq!(round(&shrunk, &base), 1 + 1 + 1 + 11 + 1 + 3);
    round(&base, &shrunk);
}

#[test]
fn a_delta_of_many_changes_uses_a_bit_per_index() {
    let base = Scene {
        frame: 0,
        cubes: (0..64).map(|i| cube(i as f32, 0.0, 0.0)).collect(),
    };
    let mut v = base.clone();
    for c in v.cubes.iter_mut().step_by(2) {
        c.interacting = true;
    }
    // Dense: the mode bit and 64 index bits, 32 cubes of 5 bits.
    assert_eq!(round(&v, &base), 1 + 1 + 1 + 11 + 1 + 64 + 32 * 5);
}

#[test]
fn a_value_outside_its_bounds_is_an_error_on_write_even_when_unchanged() {
    let mut p = player();
    p.health = 101;
    let mut m = netser::MeasureStream::new();
    let e = p.encode_delta(&p, &mut m).unwrap_err();
    assert_eq!(e.path(), "Player.health");
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }));
    assert!(p.is_unchanged(&p).is_err());
    // A string over its bound, equal to the baseline's.
    let mut p = player();
    p.name = "x".repeat(17);
    assert_eq!(
        p.encode_delta(&p, &mut m).unwrap_err().path(),
        "Player.name"
    );
    let mut s = Scene {
        frame: 0,
        cubes: vec![cube(0.0, 0.0, 0.0); 1025],
    };
    let e = s.encode_delta(&s.clone(), &mut m).unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::LengthTooLong {
            len: 1025,
            max: 1024
        }
    ));
    s.cubes.truncate(2);
    s.cubes[1].x = f32::NAN;
    let e = s.encode_delta(&s.clone(), &mut m).unwrap_err();
    assert_eq!(e.path(), "Scene.cubes[1].x");
}

#[test]
fn a_delta_leading_outside_the_range_is_a_typed_error() {
    // health 0..=100 against a baseline of 100: a small-tier +1 leads to 101.
    let mut hi = player();
    hi.health = 100;
    let mut lo = player();
    lo.health = 99;
    let (_, bytes) = delta(&hi, &lo); // +1 against 99
    let e = Player::decode_delta(&hi, &mut ReadStream::new(&bytes)).unwrap_err();
    assert_eq!(e.path(), "Player.health");
    assert_eq!(
        e.kind(),
        &ErrorKind::DeltaOutOfRange {
            baseline: 100,
            delta: 1,
            max: 100
        }
    );
}

#[test]
fn a_lying_length_allocates_no_more_than_max_len() {
    #[derive(NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    struct Small {
        #[net(max_len = 3, range = 0..=7)]
        items: Vec<u8>,
    }
    // Changed, changed, length 7 (above 3) in 2 bits is impossible; 3 is the most.
    let e = Small::decode_delta(&Small { items: vec![] }, &mut ReadStream::new(&[0xff; 8]));
    assert!(e.is_ok() || e.is_err());
    assert_eq!(Small::MAX_HEAP_BYTES, 3);
    // The length is read as the absolute decoder reads it: bounded by max_len.
    #[derive(NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    struct Five {
        #[net(max_len = 5, range = 0..=7)]
        items: Vec<u8>,
    }
    // `1` changed struct, `1` changed list, length 7 (3 bits).
    let e =
        Five::decode_delta(&Five { items: vec![] }, &mut ReadStream::new(&[0b11111])).unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::LengthTooLong { len: 7, max: 5 }
    ));
    assert_eq!(e.path(), "Five.items");
}

#[test]
fn an_unchanged_delta_decodes_as_the_baseline_decodes() {
    // A baseline that is not itself a decoded value (its x between two steps): the
    // receiver's value is what absolute decoding of the baseline gives.
    let b = cube(1.0001, 2.0, 0.1);
    let got = Cube::decode_delta(&b, &mut ReadStream::new(&[0])).unwrap();
    let abs = Cube::decode_from_slice(&b.to_vec().unwrap()).unwrap();
    assert_eq!(got.x.to_bits(), abs.x.to_bits());
    assert_eq!(Cube::decode_unchanged(&b).unwrap(), abs);
}

#[test]
fn when_fields_follow_their_condition_on_both_sides() {
    let p = player();
    let mut dead = player();
    dead.alive = false;
    round(&dead, &p);
    round(&p, &dead); // stamina absent from the baseline: sent absolute
    let mut tired = player();
    tired.stamina = 0.1;
    round(&tired, &p);
    assert_eq!(round(&dead, &dead), 1);
}

#[test]
fn the_worst_case_is_the_absolute_worst_plus_the_documented_overhead() {
    // Cube: 1 for the struct, 3 per quantized field, 2 for the quaternion, 0 for bool.
    assert_eq!(Cube::MAX_DELTA_BITS, Cube::MAX_BITS + 1 + 3 * 3 + 2);
    // Player: every field's overhead, summed.
    let nested = Cube::MAX_DELTA_BITS - Cube::MAX_BITS;
    let option_attr = 2; // 1 + max(4, 1 + 5) over 1 + 4
    let option_impl = 1; // 1 + max(16, 1 + 16) over 1 + 16
    let array = 2 + 4 * 2; // 1 + 1 + N (1 + (2 + 1)) over N * 2
    let path = 2 + 6 + 6 * 3; // 1 + len + 1 + M (1 + 13) over len + M * 10
    let overhead = 1 // the struct
        + 3 // health
        + 3 // ammo
        + 1 // score
        + 1 // lean (alive: none)
        + 1 // speed
        + nested
        + 1 // name
        + 1 // money
        + option_attr
        + option_impl
        + array
        + path
        + 1 // stats
        + (Shape::MAX_DELTA_BITS - Shape::MAX_BITS)
        + 3; // stamina
    assert_eq!(Player::MAX_DELTA_BITS, Player::MAX_BITS + overhead);
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Body {
    #[net(quantize(-100.0, 100.0, 0.01))]
    position: glam::Vec3,
    #[net(quat(bits = 12))]
    orientation: glam::Quat,
}

#[test]
fn glam_vectors_and_quaternions() {
    let b = Body {
        position: glam::Vec3::new(1.0, 2.0, 3.0),
        orientation: glam::Quat::IDENTITY,
    };
    assert_eq!(round(&b, &b), 1);
    let mut v = b.clone();
    v.position.y += 0.02;
    // Changed; position changed, x unchanged, y +2 (15 bits: `1 0` + 4), z unchanged;
    // orientation unchanged.
    assert_eq!(round(&v, &b), 1 + 1 + 1 + 6 + 1 + 1);
    v.orientation = glam::Quat::from_rotation_z(0.1);
    round(&v, &b);
    // Worst: the group's bit and three 15-bit levels (18 each), 2 + 3 * 12 + 2.
    assert_eq!(Body::MAX_DELTA_BITS, 1 + (1 + 3 * 18) + (4 + 36));
}

/// A generic delta type: its parameter gets a `NetDelta` bound.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Slot<T> {
    item: T,
    #[net(max_len = 3)]
    history: Vec<T>,
}

/// A tuple struct with a `with` field (sent absolute when changed).
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Tagged(
    #[net(range = 0..=15)] u8,
    #[net(with = serialize_code, max_bits = 8)] u8,
);

fn serialize_code<S: netser::Stream>(s: &mut S, v: &mut u8) -> netser::Result<()> {
    s.serialize_uint_bits(v, 8)
}

#[test]
fn generics_tuple_structs_and_with_fields() {
    let a = Slot {
        item: 5u16,
        history: vec![1, 2],
    };
    assert_eq!(round(&a, &a), 1);
    let b = Slot {
        item: 6u16,
        history: vec![1, 3, 4],
    };
    round(&b, &a);
    round(&a, &b);
    let c = Slot {
        item: cube(0.0, 0.0, 0.0),
        history: vec![],
    };
    assert_eq!(round(&c, &c), 1);
    assert_eq!(Slot::<u16>::MAX_DELTA_BITS, 1 + 17 + (2 + 2 + 3 * (1 + 16)));

    let t = Tagged(3, 200);
    assert_eq!(round(&t, &t), 1);
    assert_eq!(round(&Tagged(3, 201), &t), 1 + 1 + (1 + 8));
    assert_eq!(round(&Tagged(4, 200), &t), 1 + (1 + 4) + 1);
}
