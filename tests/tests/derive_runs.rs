//! The derive's packed runs against its field-by-field path, which a stream with a
//! tracer takes: for random values (many out of their bounds), random bytes and buffers
//! of every length, both give the same bytes, the same values, and the same errors
//! (kind, bit and field path), and leave the stream at the same position on success.
#![allow(missing_docs)]

use netser::trace::Tracer;
use netser::{Decoder, Encoder, Error, NetSerialize, ReadStream, WriteStream};
use proptest::prelude::*;

/// A tracer that listens to nothing but, unlike `NoTrace`, does not let the derive skip
/// its events: the derive then goes field by field.
struct Listener;
impl Tracer for Listener {}

/// Every kind of constant-width field, in runs broken by a nested type, a gated field,
/// a checked field and an aligned one.
#[derive(NetSerialize, Debug, PartialEq, Clone, Default)]
struct Mixed {
    flag: bool,
    #[net(range = 0..=4095)]
    id: u16,
    #[net(range = -1000..=1000)]
    delta: i32,
    #[net(bits = 5)]
    small: u8,
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    x: f32,
    #[net(quantize(min = 0.0, max = 512.0, res = 0.01))]
    z: f32,
    #[net(quat(bits = 10))]
    orientation: [f32; 4],
    raw8: u8,
    raw_i16: i16,
    inner: Inner,
    // Not packable (a length): the run around it falls back to the runs between.
    tags: Tags,
    // Packable, and holding a packable type.
    pair_inner: [Outer; 2],
    at_rest: bool,
    #[net(when = !*at_rest, quantize(min = -64.0, max = 64.0, res = 0.01))]
    velocity: [f32; 3],
    #[net(range = 0..=100)]
    health: u8,
    raw_f32: f32,
    raw_f64: f64,
    raw_u64: u64,
    #[net(range = -5..=5)]
    pair: [i8; 2],
    #[net(check = 0xC0FFEE)]
    checked: bool,
    #[net(align)]
    aligned: bool,
    #[net(range = 0..=9)]
    last: usize,
}

#[derive(NetSerialize, Debug, PartialEq, Clone, Default)]
struct Inner {
    #[net(range = 1..=3)]
    a: u8,
    b: bool,
}

#[derive(NetSerialize, Debug, PartialEq, Clone, Default)]
struct Tags {
    #[net(max_len = 3, range = 0..=9)]
    list: Vec<u8>,
}

#[derive(NetSerialize, Debug, PartialEq, Clone, Default)]
struct Outer {
    inner: Inner,
    #[net(range = -3..=3)]
    d: i8,
}

#[derive(NetSerialize, Debug, PartialEq, Clone)]
enum Event {
    Idle,
    Hit {
        #[net(range = 0..=4095)]
        target: u16,
        #[net(range = 1..=250)]
        damage: u8,
        critical: bool,
    },
    Move(
        #[net(quantize(min = -10.0, max = 10.0, res = 0.5))] f32,
        #[net(quantize(min = -10.0, max = 10.0, res = 0.5))] f32,
    ),
}

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Events {
    #[net(max_len = 8)]
    events: Vec<Event>,
}

fn fast_bytes<T: NetSerialize>(v: &T, room: usize) -> Result<(Vec<u8>, u64), Error> {
    let mut buf = vec![0u8; room];
    let mut w = WriteStream::new(&mut buf);
    v.encode(&mut w)?;
    let bits = w.bit_position();
    let n = w.finish();
    buf.truncate(n);
    Ok((buf, bits))
}

fn slow_bytes<T: NetSerialize>(v: &T, room: usize) -> Result<(Vec<u8>, u64), Error> {
    let mut buf = vec![0u8; room];
    let mut w = WriteStream::with_tracer(&mut buf, Listener);
    v.encode(&mut w)?;
    let bits = w.bit_position();
    let n = w.finish();
    buf.truncate(n);
    Ok((buf, bits))
}

fn same_errors(a: &Error, b: &Error) {
    // By their text: a `NotFinite { value: NaN }` is not equal to itself.
    assert_eq!(format!("{:?}", a.kind()), format!("{:?}", b.kind()));
    assert_eq!(a.bit(), b.bit());
    assert_eq!(a.path(), b.path());
    assert_eq!(a.to_string(), b.to_string());
}

/// Encodes `v` both ways into buffers of every length up to what it needs and compares.
fn check_encode<T: NetSerialize>(v: &T) {
    let full = fast_bytes(v, 1024);
    match (&full, &slow_bytes(v, 1024)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => same_errors(a, b),
        (a, b) => panic!("packed {a:?}, field by field {b:?}"),
    }
    let need = full.as_ref().map(|(b, _)| b.len()).unwrap_or(0);
    for room in 0..need {
        match (fast_bytes(v, room), slow_bytes(v, room)) {
            (Err(a), Err(b)) => same_errors(&a, &b),
            (a, b) => panic!("room {room}: packed {a:?}, field by field {b:?}"),
        }
    }
}

/// Decodes `bytes` both ways and compares the values or the errors.
fn check_decode<T: NetSerialize + PartialEq + core::fmt::Debug>(bytes: &[u8]) {
    let mut fast = ReadStream::new(bytes);
    let mut slow = ReadStream::with_tracer(bytes, Listener);
    match (T::decode(&mut fast), T::decode(&mut slow)) {
        (Ok(a), Ok(b)) => {
            // Floats compare by bit pattern through their encoding.
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(fast.bit_position(), slow.bit_position());
        }
        (Err(a), Err(b)) => same_errors(&a, &b),
        (a, b) => panic!("packed {a:?}, field by field {b:?}"),
    }
}

fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -3000.0f32..3000.0,
        1 => prop::num::f32::ANY,
        1 => Just(2048.0f32),
        1 => Just(-2048.0f32),
    ]
}

prop_compose! {
    fn mixed()(
        flag in any::<bool>(),
        id in prop_oneof![0u16..=4095, any::<u16>()],
        delta in prop_oneof![-1000i32..=1000, any::<i32>()],
        small in prop_oneof![0u8..32, any::<u8>()],
        x in float(),
        z in float(),
        orientation in prop_oneof![
            4 => prop::array::uniform4(-1.0f32..1.0),
            1 => prop::array::uniform4(prop::num::f32::ANY),
            1 => Just([0.0f32; 4]),
        ],
        raw8 in any::<u8>(),
        raw_i16 in any::<i16>(),
        a in prop_oneof![1u8..=3, any::<u8>()],
        b in any::<bool>(),
        list in prop::collection::vec(prop_oneof![0u8..=9, any::<u8>()], 0..5),
        outer in prop::array::uniform2((prop_oneof![1u8..=3, any::<u8>()], any::<bool>(), prop_oneof![-3i8..=3, any::<i8>()])),
        at_rest in any::<bool>(),
        velocity in prop::array::uniform3(prop_oneof![-64.0f32..64.0, -70.0f32..70.0]),
        health in prop_oneof![0u8..=100, any::<u8>()],
        raw_f32 in prop::num::f32::ANY,
        raw_f64 in prop::num::f64::ANY,
        raw_u64 in any::<u64>(),
        pair in prop::array::uniform2(prop_oneof![-5i8..=5, any::<i8>()]),
        checked in any::<bool>(),
        aligned in any::<bool>(),
        last in prop_oneof![0usize..=9, 0usize..20],
    ) -> Mixed {
        Mixed {
            flag, id, delta, small, x, z, orientation, raw8, raw_i16,
            inner: Inner { a, b }, tags: Tags { list },
            pair_inner: outer.map(|(a, b, d)| Outer { inner: Inner { a, b }, d }),
            at_rest, velocity, health, raw_f32, raw_f64, raw_u64,
            pair, checked, aligned, last,
        }
    }
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Idle),
        (any::<u16>(), any::<u8>(), any::<bool>()).prop_map(|(target, damage, critical)| {
            Event::Hit {
                target: target % 5000,
                damage,
                critical,
            }
        }),
        (-12.0f32..12.0, -12.0f32..12.0).prop_map(|(a, b)| Event::Move(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn encode_packed_equals_field_by_field(v in mixed()) {
        check_encode(&v);
    }

    #[test]
    fn decode_packed_equals_field_by_field(v in mixed(), flips in prop::collection::vec((0usize..64, 0u8..8), 0..4)) {
        // Valid bytes, then the same with a few bits flipped (out-of-range values, bad
        // quaternions, wrong checks), then every truncation.
        if let Ok((mut bytes, _)) = fast_bytes(&v, 1024) {
            check_decode::<Mixed>(&bytes);
            for (at, bit) in flips {
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << bit;
                }
            }
            check_decode::<Mixed>(&bytes);
            for n in 0..bytes.len() {
                check_decode::<Mixed>(&bytes[..n]);
            }
        }
    }

    #[test]
    fn random_bytes_decode_alike(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        check_decode::<Mixed>(&bytes);
        check_decode::<Event>(&bytes);
        check_decode::<Events>(&bytes);
    }

    #[test]
    fn enums_packed_equal_field_by_field(v in prop::collection::vec(event(), 0..6)) {
        for e in &v {
            check_encode(e);
        }
        if let Ok((bytes, _)) = fast_bytes(&Events { events: v.clone() }, 1024) {
            check_decode::<Events>(&bytes);
        }
    }
}

/// A bad value inside a nested packed type names the whole path.
#[test]
fn a_bad_value_in_a_nested_packed_type_names_its_path() {
    let good = Outer {
        inner: Inner { a: 1, b: false },
        d: 0,
    };
    let v = Mixed {
        at_rest: true,
        inner: Inner { a: 1, b: false },
        pair_inner: [
            good.clone(),
            Outer {
                inner: Inner { a: 4, b: false },
                d: 0,
            },
        ],
        orientation: [0.0, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    let err = fast_bytes(&v, 1024).unwrap_err();
    same_errors(&err, &slow_bytes(&v, 1024).unwrap_err());
    assert!(err.path().contains("pair_inner[1]"), "{}", err.path());
    assert!(err.path().contains(".a"), "{}", err.path());
    // 123 bits before tags (see below), tags 2, pair_inner[0] 6.
    assert_eq!(err.bit(), 123 + 2 + 6);
}

/// The first bad value of a run is reported at its own field and bit, packed or not.
#[test]
fn a_bad_value_in_a_run_names_its_field_and_bit() {
    let v = Mixed {
        health: 101,
        at_rest: true,
        inner: Inner { a: 1, b: false },
        pair_inner: [
            Outer {
                inner: Inner { a: 1, b: false },
                d: 0,
            },
            Outer {
                inner: Inner { a: 1, b: false },
                d: 0,
            },
        ],
        orientation: [0.0, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    let err = fast_bytes(&v, 1024).unwrap_err();
    same_errors(&err, &slow_bytes(&v, 1024).unwrap_err());
    assert_eq!(err.path(), "Mixed.health");
    // flag 1, id 12, delta 11, small 5, x 19, z 16, quat 32, raw8 8, raw_i16 16,
    // inner 2 + 1, tags 2 (empty), pair_inner 2 x (3 + 3), at_rest 1 (velocity not
    // sent): health starts at bit 138.
    assert_eq!(err.bit(), 138);

    let v = Mixed {
        pair: [0, 6],
        at_rest: true,
        inner: Inner { a: 1, b: false },
        pair_inner: [
            Outer {
                inner: Inner { a: 1, b: false },
                d: 0,
            },
            Outer {
                inner: Inner { a: 1, b: false },
                d: 0,
            },
        ],
        orientation: [0.0, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    let err = fast_bytes(&v, 1024).unwrap_err();
    same_errors(&err, &slow_bytes(&v, 1024).unwrap_err());
    assert_eq!(err.path(), "Mixed.pair[1]");
    // health 7, raw_f32 32, raw_f64 64, raw_u64 64, pair[0] 4.
    assert_eq!(err.bit(), 138 + 7 + 32 + 64 + 64 + 4);
}

/// Which types pack into their parent's runs: fixed-width structs of at most 64 bits.
#[test]
fn packed_widths() {
    assert_eq!(Inner::PACKED_BITS, 3);
    assert_eq!(Outer::PACKED_BITS, 6);
    assert_eq!(Tags::PACKED_BITS, 0);
    assert_eq!(Mixed::PACKED_BITS, 0);
    assert_eq!(Event::PACKED_BITS, 0);
}

/// glam's vectors and quaternion pack component by component, with the component's
/// name on the error path.
#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct GlamBody {
    flag: bool,
    #[net(quantize(-100.0, 100.0, 0.5))]
    position: glam::Vec3,
    #[net(quantize(-1.0, 1.0, 0.5))]
    facing: glam::Vec2,
    #[net(quat(bits = 11))]
    orientation: glam::Quat,
}

proptest! {
    #[test]
    fn glam_packed_equals_field_by_field(
        flag in any::<bool>(),
        p in prop::array::uniform3(-110.0f32..110.0),
        f in prop::array::uniform2(-1.2f32..1.2),
        q in prop::array::uniform4(-1.0f32..1.0),
    ) {
        let v = GlamBody {
            flag,
            position: glam::Vec3::from_array(p),
            facing: glam::Vec2::from_array(f),
            orientation: glam::Quat::from_array(q),
        };
        check_encode(&v);
        if let Ok((bytes, _)) = fast_bytes(&v, 64) {
            check_decode::<GlamBody>(&bytes);
        }
    }
}

#[test]
fn a_bad_glam_component_names_itself() {
    let v = GlamBody {
        flag: true,
        position: glam::Vec3::new(0.0, 101.0, 0.0),
        facing: glam::Vec2::ZERO,
        orientation: glam::Quat::IDENTITY,
    };
    let err = fast_bytes(&v, 64).unwrap_err();
    same_errors(&err, &slow_bytes(&v, 64).unwrap_err());
    assert_eq!(err.path(), "GlamBody.position.y");
    // flag 1, position.x 9.
    assert_eq!(err.bit(), 10);
}

/// A quantized component out of range reads the same on write and on read, packed or
/// field by field: the real range, the step, the value (given, or read from the
/// headroom above the range).
#[test]
fn a_quantized_component_out_of_range_reads_alike_both_ways() {
    let v = GlamBody {
        flag: true,
        position: glam::Vec3::new(155.5, 0.0, 0.0),
        facing: glam::Vec2::ZERO,
        orientation: glam::Quat::IDENTITY,
    };
    let written = fast_bytes(&v, 64).unwrap_err();
    same_errors(&written, &slow_bytes(&v, 64).unwrap_err());
    // position.x takes 400 steps in 9 bits: 511 is the top of the headroom, 155.5.
    let mut bytes = [0u8; 16];
    let mut w = WriteStream::new(&mut bytes);
    w.write_bool(true).unwrap();
    w.write_bits(511, 9).unwrap();
    w.finish();
    let mut fast = ReadStream::new(&bytes);
    let mut slow = ReadStream::with_tracer(&bytes, Listener);
    let read = GlamBody::decode(&mut fast).unwrap_err();
    same_errors(&read, &GlamBody::decode(&mut slow).unwrap_err());
    let text =
        "GlamBody.position.x: value 155.5 out of range -100..=100 (quantized in steps of 0.5) at bit 1";
    assert_eq!(written.to_string(), text);
    assert_eq!(read.to_string(), text);
}
