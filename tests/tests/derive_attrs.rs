//! `#[derive(NetSerialize)]`: one pass case per attribute, with exact bit counts,
//! round trips, and the errors each bound raises on write and on read.
#![allow(missing_docs)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use netser::NetSerialize;
use netser::{Encoder, ErrorKind, Num, ReadStream, Result, Stream, WriteStream};

/// Encodes, checks the measured size, decodes, and returns (bits, decoded).
fn round_trip<T: netser::NetSerialize + PartialEq + std::fmt::Debug>(v: &T) -> (u64, T) {
    let bits = v.measure_bits().unwrap();
    assert!(
        bits >= T::MIN_BITS && bits <= T::MAX_BITS,
        "{bits} outside {}..={}",
        T::MIN_BITS,
        T::MAX_BITS
    );
    let bytes = v.to_vec().unwrap();
    assert_eq!(bytes.len() as u64, bits.div_ceil(8));
    let back = T::decode_from_slice(&bytes).unwrap();
    (bits, back)
}

/// Writes raw fields by hand, for forging inputs the encoder would refuse.
fn forge(f: impl FnOnce(&mut WriteStream<'_>) -> Result<()>) -> Vec<u8> {
    let mut buf = [0u8; 256];
    let mut w = WriteStream::new(&mut buf);
    f(&mut w).unwrap();
    let len = w.finish();
    buf[..len].to_vec()
}

// ---- range -------------------------------------------------------------------------

const MAX_PLAYERS: u8 = 64;

#[derive(NetSerialize, Debug, PartialEq, Clone, Copy)]
struct Ranges {
    #[net(range = 0..=100)]
    health: u8,
    #[net(range = -8..8)]
    dx: i8,
    #[net(range = 1..=MAX_PLAYERS)]
    player: u8,
    #[net(range = 0..MAX_PLAYERS * 2)]
    slot: u8,
    #[net(range = -1_000_000..=1_000_000)]
    altitude: i64,
    #[net(range = 5..=5)]
    constant: u32,
    #[net(range = 0..=u128::MAX)]
    huge: u128,
}

#[test]
fn range_sizes_and_round_trip() {
    // 7 + 4 + 6 + 7 + 21 + 0 + 128
    assert_eq!(Ranges::MIN_BITS, 173);
    assert_eq!(Ranges::MAX_BITS, 173);
    let v = Ranges {
        health: 100,
        dx: -8,
        player: 64,
        slot: 127,
        altitude: -1_000_000,
        constant: 5,
        huge: u128::MAX,
    };
    let (bits, back) = round_trip(&v);
    assert_eq!(bits, 173);
    assert_eq!(back, v);
}

#[test]
fn range_rejects_out_of_bounds_on_write() {
    let v = Ranges {
        health: 101,
        dx: 0,
        player: 1,
        slot: 0,
        altitude: 0,
        constant: 5,
        huge: 0,
    };
    let err = v.to_vec().unwrap_err();
    assert_eq!(err.path(), "Ranges.health");
    assert_eq!(err.bit(), 0);
    assert_eq!(
        err.kind(),
        &ErrorKind::OutOfRange {
            value: Num::Uint(101),
            min: Num::Uint(0),
            max: Num::Uint(100)
        }
    );
    let v = Ranges {
        health: 0,
        dx: 8,
        player: 1,
        slot: 0,
        altitude: 0,
        constant: 5,
        huge: 0,
    };
    let err = v.to_vec().unwrap_err();
    assert_eq!(err.path(), "Ranges.dx");
    assert_eq!(err.bit(), 7);
    let v = Ranges {
        health: 0,
        dx: 0,
        player: 1,
        slot: 0,
        altitude: 0,
        constant: 6,
        huge: 0,
    };
    assert_eq!(v.to_vec().unwrap_err().path(), "Ranges.constant");
}

#[test]
fn range_rejects_headroom_on_read() {
    // health in 7 bits can carry 101..=127: the reader refuses them, naming the field.
    let bytes = forge(|w| w.write_bits(127, 7));
    let err = Ranges::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(err.path(), "Ranges.health");
    assert_eq!(err.bit(), 0);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange {
                max: Num::Uint(100),
                ..
            }
        ),
        "{err}"
    );
}

// ---- bits --------------------------------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq)]
struct Bits {
    #[net(bits = 5)]
    team: u32,
    #[net(bits = 64)]
    id: u64,
    #[net(bits = 1)]
    flag: u8,
}

#[test]
fn bits_sizes_and_errors() {
    assert_eq!((Bits::MIN_BITS, Bits::MAX_BITS), (70, 70));
    let v = Bits {
        team: 31,
        id: u64::MAX,
        flag: 1,
    };
    assert_eq!(round_trip(&v), (70, v));
    let err = Bits {
        team: 32,
        id: 0,
        flag: 0,
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.path(), "Bits.team");
    assert_eq!(err.kind(), &ErrorKind::ValueTooWide { value: 32, bits: 5 });
}

// ---- quantize ----------------------------------------------------------------------

const WORLD: f32 = 512.0;

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Quantized {
    #[net(quantize(-1.0, 1.0, 0.01))]
    aim: f32,
    #[net(quantize(min = -WORLD, max = WORLD, res = 0.125))]
    x: f64,
    #[net(quantize(0.0, 10.0, 0.5), clamp)]
    speed: f32,
    #[net(quantize(-1.0, 1.0, 0.25))]
    dir: [f32; 3],
    #[net(quantize(0.0, 1.0, 0.5), max_len = 3)]
    weights: Vec<f32>,
    #[net(quantize(0.0, 1.0, 0.5))]
    maybe: Option<f32>,
}

fn quantized() -> Quantized {
    Quantized {
        aim: 0.5,
        x: -3.25,
        speed: 4.5,
        dir: [1.0, -0.75, 0.0],
        weights: vec![1.0, 0.5],
        maybe: Some(0.0),
    }
}

#[test]
fn quantize_sizes_and_round_trip() {
    // aim 200 steps: 8; x 8192 steps: 14; speed 20 steps: 5; dir 3 x 8 steps: 3 x 4;
    // weights len 2 + up to 3 x 2; maybe 1 + 2.
    assert_eq!(Quantized::MIN_BITS, 8 + 14 + 5 + 12 + 2 + 1);
    assert_eq!(Quantized::MAX_BITS, 8 + 14 + 5 + 12 + 2 + 6 + 1 + 2);
    let v = quantized();
    let (bits, back) = round_trip(&v);
    assert_eq!(bits, 8 + 14 + 5 + 12 + 2 + 4 + 3);
    // Every value above sits on the grid, so it comes back exactly.
    assert_eq!(back, v);
}

#[test]
fn quantize_out_of_range_and_nan_are_errors_unless_clamped() {
    let mut v = quantized();
    v.aim = 1.5;
    let err = v.to_vec().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Quantized.aim: value 1.5 out of range -1..=1 (quantized in steps of 0.01) at bit 0"
    );
    // The same on read: aim's 200 steps take 8 bits, and 250 is 0.5 above the range.
    let err = Quantized::decode_from_slice(&[250, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Quantized.aim: value 1.5 out of range -1..=1 (quantized in steps of 0.01) at bit 0"
    );
    let mut v = quantized();
    v.x = 600.0;
    let err = v.to_vec().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Quantized.x: value 600 out of range -512..=512 (quantized in steps of 0.125) at bit 8"
    );

    let mut v = quantized();
    v.dir[2] = f32::NAN;
    let err = v.to_vec().unwrap_err();
    assert_eq!(err.path(), "Quantized.dir[2]");
    assert!(matches!(err.kind(), ErrorKind::NotFinite { .. }), "{err}");

    let mut v = quantized();
    v.speed = 99.0;
    let (_, back) = round_trip(&v);
    assert_eq!(back.speed, 10.0, "clamp sends the nearest end");
    v.speed = f32::NAN;
    assert!(matches!(
        v.to_vec().unwrap_err().kind(),
        ErrorKind::NotFinite { .. }
    ));
}

// ---- quat --------------------------------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq)]
struct Orientations {
    #[net(quat(bits = 9))]
    q: [f32; 4],
    #[net(quat(bits = 10), max_len = 2)]
    bones: Vec<[f32; 4]>,
}

#[test]
fn quat_smallest_three() {
    assert_eq!(Orientations::MIN_BITS, 29 + 2);
    assert_eq!(Orientations::MAX_BITS, 29 + 2 + 2 * 32);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let v = Orientations {
        q: [0.0, h, 0.0, h],
        bones: vec![[0.5, 0.5, 0.5, 0.5]],
    };
    let bits = v.measure_bits().unwrap();
    assert_eq!(bits, 29 + 2 + 32);
    let back = Orientations::decode_from_slice(&v.to_vec().unwrap()).unwrap();
    for (a, b) in back.q.iter().zip(v.q) {
        assert!((a - b).abs() < 0.01, "{:?}", back.q);
    }
    for (a, b) in back.bones[0].iter().zip(v.bones[0]) {
        assert!((a - b).abs() < 0.005, "{:?}", back.bones);
    }
}

#[derive(NetSerialize, Debug, PartialEq)]
struct GlamBody {
    #[net(quantize(-100.0, 100.0, 0.5))]
    position: glam::Vec3,
    #[net(quantize(-1.0, 1.0, 0.5))]
    facing: glam::Vec2,
    #[net(quat(bits = 11))]
    orientation: glam::Quat,
}

#[test]
fn glam_types_with_attributes() {
    assert_eq!(GlamBody::MAX_BITS, 3 * 9 + 2 * 3 + (2 + 33));
    let v = GlamBody {
        position: glam::Vec3::new(1.5, -99.5, 100.0),
        facing: glam::Vec2::new(-1.0, 0.5),
        orientation: glam::Quat::IDENTITY,
    };
    let bytes = v.to_vec().unwrap();
    let back = GlamBody::decode_from_slice(&bytes).unwrap();
    assert_eq!(back.position, v.position);
    assert_eq!(back.facing, v.facing);
    assert!(back.orientation.angle_between(v.orientation) < 0.01);
    let layout = netser::trace::layout(&v).unwrap();
    let paths: Vec<&str> = layout.entries().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(&paths[..3], ["position.x", "position.y", "position.z"]);
}

// ---- align -------------------------------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq)]
struct Aligned {
    flag: bool,
    #[net(align)]
    byte: u8,
}

#[test]
fn align_pads_to_the_next_byte() {
    assert_eq!((Aligned::MIN_BITS, Aligned::MAX_BITS), (9, 16));
    let v = Aligned {
        flag: true,
        byte: 0xab,
    };
    assert_eq!(v.to_vec().unwrap(), [0x01, 0xab]);
    assert_eq!(round_trip(&v), (16, v));
    // Non-zero padding is refused, naming the field it precedes.
    let err = Aligned::decode_from_slice(&[0x03, 0xab]).unwrap_err();
    assert_eq!(err.path(), "Aligned.byte");
    assert!(
        matches!(err.kind(), ErrorKind::NonZeroPadding { .. }),
        "{err}"
    );
}

// ---- max_len -----------------------------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq)]
struct Collections {
    #[net(max_len = 3)]
    list: Vec<u8>,
    #[net(max_len = 8)]
    name: String,
    #[net(max_len = 2)]
    boxed: Box<[u16]>,
    #[net(max_len = 2, range = 0..=9)]
    grid: Vec<Vec<u8>>,
    #[net(max_len = 2)]
    hash: HashMap<u8, bool>,
    #[net(max_len = 2, range = 0..=3)]
    tree: BTreeMap<String, u8>,
    #[net(max_len = 3)]
    set: HashSet<u16>,
    #[net(max_len = 3)]
    ordered: BTreeSet<i8>,
}

fn collections() -> Collections {
    Collections {
        list: vec![1, 2, 3],
        name: "ab".into(),
        boxed: vec![7].into_boxed_slice(),
        grid: vec![vec![9, 0], vec![]],
        hash: HashMap::from([(4, true)]),
        tree: BTreeMap::from([("k".to_string(), 3)]),
        set: HashSet::from([10, 20]),
        ordered: BTreeSet::from([-1, 1]),
    }
}

#[test]
fn max_len_collections_round_trip() {
    let v = collections();
    let (_, back) = round_trip(&v);
    assert_eq!(back, v);
    // Lengths take bits_required(0, max_len) bits: 2 + 4 + 2 + 2 + 2 + 2 + 2 + 2.
    assert_eq!(Collections::MIN_BITS, 18);
    assert_eq!(
        Collections::MAX_BITS,
        (2 + 24)
            + (4 + 7 + 64)
            + (2 + 32)
            + (2 + 2 * (2 + 2 * 4))
            + (2 + 2 * 9)
            + (2 + 2 * ((2 + 7 + 16) + 2))
            + (2 + 48)
            + (2 + 24)
    );
}

#[test]
fn max_len_is_enforced_both_ways() {
    let mut v = collections();
    v.list.push(4);
    let err = v.to_vec().unwrap_err();
    assert_eq!(err.path(), "Collections.list");
    assert_eq!(err.kind(), &ErrorKind::LengthTooLong { len: 4, max: 3 });

    let mut v = collections();
    v.grid[1] = vec![1, 2, 3];
    let err = v.to_vec().unwrap_err();
    assert_eq!(err.path(), "Collections.grid[1]");
    assert_eq!(err.kind(), &ErrorKind::LengthTooLong { len: 3, max: 2 });

    // The reader refuses a forged length before allocating anything.
    let bytes = forge(|w| w.write_bits(3, 2)); // list: 3 elements promised, none sent
    let err = Collections::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(err.path(), "Collections.list[0]");
    assert!(matches!(err.kind(), ErrorKind::EndOfBuffer { .. }), "{err}");
}

#[test]
fn duplicate_map_keys_are_refused() {
    #[derive(NetSerialize, Debug, PartialEq)]
    struct Scores {
        #[net(max_len = 4)]
        by_player: BTreeMap<u8, u8>,
    }
    let bytes = forge(|w| {
        w.write_int(2usize, 0, 4)?;
        for _ in 0..2 {
            w.write_value(&7u8)?;
            w.write_value(&1u8)?;
        }
        Ok(())
    });
    let err = Scores::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(err.path(), "Scores.by_player[1].key");
    assert_eq!(err.kind(), &ErrorKind::Custom("duplicate key in a map"));
    assert_eq!(err.bit(), 3 + 16);
}

// ---- skip, default, with, when, check ----------------------------------------------

fn serialize_percent<S: Stream>(s: &mut S, v: &mut u8) -> Result<()> {
    s.serialize_int(v, 0, 100)
}

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Misc {
    #[net(check = 0x5EC7_10A1)]
    id: u16,
    #[net(skip)]
    cached: u32,
    #[net(skip, default = 7)]
    seven: u8,
    #[net(with = serialize_percent, max_bits = 7)]
    percent: u8,
}

#[test]
fn skip_default_with_and_check() {
    assert_eq!((Misc::MIN_BITS, Misc::MAX_BITS), (32 + 16, 32 + 16 + 7));
    let v = Misc {
        id: 9,
        cached: 123,
        seven: 1,
        percent: 55,
    };
    let (bits, back) = round_trip(&v);
    assert_eq!(bits, 32 + 16 + 7);
    assert_eq!(
        back,
        Misc {
            id: 9,
            cached: 0,
            seven: 7,
            percent: 55
        }
    );
    // The `with` function's own bound still applies.
    let err = Misc {
        percent: 101,
        ..v.clone()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.path(), "Misc.percent");
    // A wrong magic value is reported before the field it guards.
    let bytes = forge(|w| w.write_check(0xdead_beef));
    let err = Misc::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(err.path(), "Misc.id");
    assert_eq!(
        err.kind(),
        &ErrorKind::CheckMismatch {
            expected: 0x5EC7_10A1,
            found: 0xdead_beef
        }
    );
}

/// The article's rigid body: at rest, the velocities are not sent.
#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct RigidBody {
    #[net(quantize(-256.0, 256.0, 0.01))]
    position: [f32; 3],
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    at_rest: bool,
    #[net(when = !at_rest, quantize(-32.0, 32.0, 0.01))]
    linear_velocity: [f32; 3],
    #[net(when = !*at_rest, default = [0.0; 3], quantize(-16.0, 16.0, 0.01))]
    angular_velocity: [f32; 3],
}

#[test]
fn when_leaves_out_fields_at_rest() {
    // position 3 x 16 bits, orientation 29, at_rest 1, velocities 3 x 13 and 3 x 12.
    assert_eq!(RigidBody::MIN_BITS, 48 + 29 + 1);
    assert_eq!(RigidBody::MAX_BITS, 48 + 29 + 1 + 39 + 36);
    let moving = RigidBody {
        position: [1.0, 2.0, 3.0],
        orientation: [0.0, 0.0, 0.0, 1.0],
        at_rest: false,
        linear_velocity: [1.0, 0.0, -1.0],
        angular_velocity: [0.5, 0.0, 0.0],
    };
    assert_eq!(moving.measure_bits().unwrap(), 48 + 29 + 1 + 39 + 36);
    let resting = RigidBody {
        at_rest: true,
        ..moving.clone()
    };
    assert_eq!(resting.measure_bits().unwrap(), 48 + 29 + 1);
    let back = RigidBody::decode_from_slice(&resting.to_vec().unwrap()).unwrap();
    assert!(back.at_rest);
    assert_eq!(back.linear_velocity, [0.0; 3]);
    assert_eq!(back.angular_velocity, [0.0; 3]);
}

// ---- enums, tuples, units, generics ------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq, Clone)]
enum Packet {
    Connect {
        #[net(max_len = 16)]
        name: String,
    },
    Input(#[net(bits = 4)] u8, bool),
    Disconnect,
}

#[test]
fn enum_tags_and_unknown_tag() {
    // 3 variants: a 2-bit tag.
    assert_eq!(Packet::MIN_BITS, 2);
    assert_eq!(Packet::MAX_BITS, 2 + 5 + 7 + 128);
    assert_eq!(Packet::Disconnect.to_vec().unwrap(), [0b10]);
    // tag 1 (2 bits), 9 (4 bits), true (1 bit), LSB first: 0b1_1001_01.
    assert_eq!(Packet::Input(9, true).to_vec().unwrap(), [0b0110_0101]);
    for p in [
        Packet::Connect { name: "ada".into() },
        Packet::Input(15, false),
        Packet::Disconnect,
    ] {
        assert_eq!(round_trip(&p).1, p);
    }
    let err = Packet::decode_from_slice(&[0b11]).unwrap_err();
    assert_eq!(err.path(), "Packet");
    assert_eq!(
        err.kind(),
        &ErrorKind::UnknownTag {
            tag: 3,
            variants: 3
        }
    );
    let err = Packet::Input(16, false).to_vec().unwrap_err();
    assert_eq!(err.path(), "Packet.Input.0");
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Unit;

#[derive(NetSerialize, Debug, PartialEq)]
struct Tuple(#[net(range = 0..=3)] u8, #[net(when = *_0 == 3)] u16);

#[test]
fn unit_and_tuple_structs() {
    assert_eq!((Unit::MIN_BITS, Unit::MAX_BITS), (0, 0));
    assert!(Unit.to_vec().unwrap().is_empty());
    assert_eq!(
        Tuple::decode_from_slice(&Unit.to_vec().unwrap_or_default())
            .unwrap_err()
            .path(),
        "Tuple.0"
    );
    assert_eq!(round_trip(&Tuple(3, 500)), (18, Tuple(3, 500)));
    assert_eq!(round_trip(&Tuple(2, 500)), (2, Tuple(2, 0)));
}

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Pair<A, B> {
    first: A,
    #[net(max_len = 2)]
    rest: Vec<B>,
}

#[test]
fn generic_types_use_their_parameters_bounds() {
    assert_eq!(<Pair<u8, bool>>::MIN_BITS, 8 + 2);
    assert_eq!(<Pair<u8, bool>>::MAX_BITS, 8 + 2 + 2);
    assert_eq!(<Pair<u16, Tuple>>::MAX_BITS, 16 + 2 + 2 * 18);
    assert_ne!(<Pair<u8, bool>>::SCHEMA_HASH, <Pair<u8, u8>>::SCHEMA_HASH);
    let v = Pair {
        first: Pair {
            first: 1u8,
            rest: vec![true],
        },
        rest: vec![-1i8, 2],
    };
    assert_eq!(round_trip(&v).1, v);
}

// ---- container attributes ----------------------------------------------------------

mod engine {
    //! A crate that re-exports netser under another name.
    pub use netser as net;
}

#[derive(NetSerialize, Debug, PartialEq)]
#[net(crate = "engine::net", max_bytes = 3)]
struct Reexported {
    #[net(range = 0..=1000)]
    a: u16,
    b: u8,
}

#[test]
fn crate_path_and_max_bytes_within_budget() {
    assert_eq!(Reexported::MAX_BITS, 18);
    let v = Reexported { a: 1000, b: 255 };
    assert_eq!(round_trip(&v), (18, v));
}

// ---- schema hash -------------------------------------------------------------------

mod v1 {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(range = 0..=100)]
        pub health: u8,
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
    }
}
mod same {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Renamed {
        #[net(range = 0..=100)]
        pub health: u8,
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
    }
}
mod bound {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(range = 0..=101)]
        pub health: u8,
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
    }
}
mod quantization {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(range = 0..=100)]
        pub health: u8,
        #[net(quantize(-1.0, 1.0, 0.02))]
        pub aim: f32,
    }
}
mod order {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
        #[net(range = 0..=100)]
        pub health: u8,
    }
}
mod ty {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(range = 0..=100)]
        pub health: u16,
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
    }
}
mod field {
    use netser::NetSerialize;
    #[derive(NetSerialize)]
    pub struct Player {
        #[net(range = 0..=100)]
        pub health: u8,
        #[net(quantize(-1.0, 1.0, 0.01))]
        pub aim: f32,
        pub alive: bool,
    }
}

#[test]
fn schema_hash_follows_the_wire_layout() {
    let base = v1::Player::SCHEMA_HASH;
    // The type's name is not part of the wire.
    assert_eq!(base, same::Renamed::SCHEMA_HASH);
    for other in [
        bound::Player::SCHEMA_HASH,
        quantization::Player::SCHEMA_HASH,
        order::Player::SCHEMA_HASH,
        ty::Player::SCHEMA_HASH,
        field::Player::SCHEMA_HASH,
    ] {
        assert_ne!(base, other);
    }
    // Nested types contribute their hash.
    assert_ne!(
        <Pair<v1::Player, u8>>::SCHEMA_HASH,
        <Pair<bound::Player, u8>>::SCHEMA_HASH
    );
}

// ---- error paths -------------------------------------------------------------------

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Entity {
    #[net(range = 0..=100)]
    health: u8,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Snapshot {
    #[net(range = 0..=4)]
    tick: u8,
    entities: [Entity; 5],
}

#[test]
fn decode_errors_carry_path_value_bound_and_bit() {
    let mut bytes = Snapshot {
        tick: 1,
        entities: std::array::from_fn(|_| Entity { health: 100 }),
    }
    .to_vec()
    .unwrap();
    // entities[3].health starts at bit 3 + 3 * 7 = 24: put 127 there.
    bytes[3] |= 0x7f;
    let err = Snapshot::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(err.path(), "Snapshot.entities[3].health");
    assert_eq!(err.bit(), 24);
    assert_eq!(
        err.kind(),
        &ErrorKind::OutOfRange {
            value: Num::Uint(127),
            min: Num::Uint(0),
            max: Num::Uint(100)
        }
    );
    assert_eq!(
        err.to_string(),
        "Snapshot.entities[3].health: value 127 out of range 0..=100 at bit 24"
    );
}

#[test]
fn decoders_never_read_past_the_end() {
    let bytes = collections().to_vec().unwrap();
    for len in 0..bytes.len() {
        assert!(
            Collections::decode_from_slice(&bytes[..len]).is_err(),
            "prefix {len}"
        );
    }
    let mut r = ReadStream::new(&bytes);
    assert!(Collections::decode(&mut r).is_ok());
}
