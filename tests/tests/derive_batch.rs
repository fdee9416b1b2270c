//! The derive's batch path over collections of fixed-width structs (blocks converted by
//! columns, then packed) against the element-by-element path, which a stream with a
//! tracer takes: for collections of every length from 0 to 70 (across the block
//! boundaries), random elements (many out of their bounds, NaN, infinities, zero
//! quaternions, values in the rounding step above `max`), buffers of every length,
//! truncated, bit-flipped and random inputs, both give the same bytes and bit positions,
//! the same values (bit for bit), and the same errors (kind, bit, path with index and
//! field). What decodes encodes again to the same bytes.
#![allow(missing_docs)]

use netser::batch::simd_level;
use netser::trace::Tracer;
use netser::{Decoder, Encoder, Error, NetSerialize, ReadStream, WriteStream};
use proptest::prelude::*;

/// Listens to nothing, but keeps the derive off its packed and batch paths.
struct Listener;
impl Tracer for Listener {}

// The benchmark's entity: a nested packed struct, a quaternion, a gated vector.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Position {
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    x: f32,
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    y: f32,
    #[net(quantize(min = 0.0, max = 512.0, res = 0.01))]
    z: f32,
}

#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Entity {
    #[net(range = 0..=4095)]
    id: u16,
    position: Position,
    #[net(quat(bits = 10))]
    orientation: [f32; 4],
    at_rest: bool,
    #[net(when = !*at_rest, quantize(min = -64.0, max = 64.0, res = 0.01))]
    velocity: [f32; 3],
    #[net(range = 0..=100)]
    health: u8,
    on_ground: bool,
    crouching: bool,
    firing: bool,
}

// Every other leaf: bit-counted, signed, full-width and raw values, quaternions at 9 and
// 20 bits, a clamping quantizer, gates on an integer, on two fields and on a gated
// field (with a `default`), a nested struct holding nested structs.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Inner {
    #[net(range = 1..=3)]
    a: u8,
    b: bool,
    #[net(quantize(-1.0, 1.0, 0.5))]
    c: f32,
}

#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Outer {
    inner: Inner,
    #[net(range = -3..=3)]
    d: i8,
    pair: [Inner; 2],
}

#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Wide {
    #[net(bits = 5)]
    small: u8,
    #[net(range = -1000..=1000)]
    delta: i32,
    #[net(range = -5..=5)]
    pair: [i8; 2],
    big: u64,
    signed: i16,
    raw: f32,
    raw64: f64,
    #[net(quat(bits = 9))]
    q9: [f32; 4],
    #[net(quat(bits = 20))]
    q20: [f32; 4],
    #[net(quantize(min = -1.0, max = 1.0, res = 0.001), clamp)]
    clamped: f32,
    #[net(range = 0..=3)]
    mode: u8,
    #[net(when = *mode == 2, range = 0..=9)]
    extra: u8,
    #[net(when = *mode >= 1 && *small > 3, quantize(min = 0.0, max = 10.0, res = 0.1))]
    scale: [f32; 2],
    flag: bool,
    #[net(when = *flag, default = 7)]
    level: u8,
    #[net(when = *level > 100, bits = 3)]
    deep: u8,
    outer: Outer,
}

// A tuple struct with a gate on its bool.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Tuple(
    #[net(range = 0..=9)] u8,
    bool,
    #[net(when = *_1, quat(bits = 12))] [f32; 4],
    Outer,
);

// glam's vectors and quaternion.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct GlamEl {
    #[net(quantize(-100.0, 100.0, 0.5))]
    p: glam::Vec3,
    #[net(quantize(-1.0, 1.0, 0.5))]
    f: glam::Vec2,
    #[net(quat(bits = 11))]
    o: glam::Quat,
    alive: bool,
}

/// Every collection that routes through the batch hooks.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Holder<T: NetSerialize> {
    flag: bool,
    #[net(max_len = 80)]
    items: Vec<T>,
    #[net(max_len = 80)]
    boxed: Box<[T]>,
}

type Bytes = Result<(Vec<u8>, u64), Error>;

fn write<T: NetSerialize, R: Tracer>(v: &T, room: usize, tracer: R) -> Bytes {
    let mut buf = vec![0u8; room];
    let mut w = WriteStream::with_tracer(&mut buf, tracer);
    v.encode(&mut w)?;
    let bits = w.bit_position();
    let n = w.finish();
    buf.truncate(n);
    Ok((buf, bits))
}

fn fast<T: NetSerialize>(v: &T, room: usize) -> Bytes {
    write(v, room, netser::trace::NoTrace)
}

fn slow<T: NetSerialize>(v: &T, room: usize) -> Bytes {
    write(v, room, Listener)
}

fn same_errors(a: &Error, b: &Error) {
    assert_eq!(format!("{:?}", a.kind()), format!("{:?}", b.kind()));
    assert_eq!(a.bit(), b.bit());
    assert_eq!(a.path(), b.path());
    assert_eq!(a.to_string(), b.to_string());
}

fn same(a: &Bytes, b: &Bytes, what: &str) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
        (Err(a), Err(b)) => same_errors(a, b),
        (a, b) => panic!("{what}: batch {a:?}, element by element {b:?}"),
    }
}

/// Rooms to try: every one for short values, else a stride and every byte near the end.
fn rooms(need: usize) -> impl Iterator<Item = usize> {
    (0..need).filter(move |&r| need <= 160 || r % 13 == 0 || r + 24 >= need)
}

fn check_encode<T: NetSerialize>(v: &T) {
    let full = fast(v, 4096);
    same(&full, &slow(v, 4096), "full room");
    let need = full.as_ref().map(|(b, _)| b.len()).unwrap_or(0);
    for room in rooms(need) {
        same(&fast(v, room), &slow(v, room), "short room");
    }
}

fn decode<T: NetSerialize, R: Tracer>(bytes: &[u8], tracer: R) -> Result<(T, u64), Error> {
    let mut r = ReadStream::with_tracer(bytes, tracer);
    let v = T::decode(&mut r)?;
    Ok((v, r.bit_position()))
}

/// Decodes both ways; values compare by their text and by their bits (the element by
/// element encoding of each, which carries raw floats' NaN payloads and signs).
fn check_decode<T: NetSerialize + core::fmt::Debug>(bytes: &[u8]) {
    let a = decode::<T, _>(bytes, netser::trace::NoTrace);
    let b = decode::<T, _>(bytes, Listener);
    match (&a, &b) {
        (Ok((a, at)), Ok((b, bt))) => {
            assert_eq!(at, bt);
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            let room = bytes.len().max(4096);
            same(&slow(a, room), &slow(b, room), "decoded values");
            // What decodes encodes again to the same bits, on both paths.
            let again = fast(a, room).expect("a decoded value encodes");
            let (mut prefix, bits) = (bytes.to_vec(), *at);
            prefix.truncate(again.0.len());
            if let Some(last) = prefix.last_mut() {
                if bits % 8 != 0 {
                    *last &= (1u8 << (bits % 8)) - 1;
                }
            }
            assert_eq!(again, (prefix, bits));
        }
        (Err(a), Err(b)) => same_errors(a, b),
        (a, b) => panic!("batch {a:?}, element by element {b:?}"),
    }
}

fn check_all<T: NetSerialize + Clone + core::fmt::Debug>(items: Vec<T>, flips: &[(usize, u8)]) {
    let h = Holder {
        flag: true,
        boxed: items.iter().rev().cloned().collect(),
        items,
    };
    check_encode(&h);
    // The encoder's own `write_seq` goes through the same hook.
    let mut a = [0u8; 4096];
    let mut b = [0u8; 4096];
    let mut wa = WriteStream::new(&mut a);
    let mut wb = WriteStream::with_tracer(&mut b, Listener);
    let ra = wa.write_seq(&h.items, 80).map(|_| wa.bit_position());
    let rb = wb.write_seq(&h.items, 80).map(|_| wb.bit_position());
    match (ra, rb) {
        (Ok(x), Ok(y)) => {
            assert_eq!(x, y);
            let n = wa.finish();
            assert_eq!(n, wb.finish());
            assert_eq!(a[..n], b[..n]);
            let seq_a = ReadStream::new(&a[..n]).read_seq::<T>(80);
            let seq_b = ReadStream::with_tracer(&a[..n], Listener).read_seq::<T>(80);
            assert_eq!(format!("{seq_a:?}"), format!("{seq_b:?}"));
        }
        (Err(x), Err(y)) => same_errors(&x, &y),
        (x, y) => panic!("write_seq: batch {x:?}, element by element {y:?}"),
    }
    if let Ok((mut bytes, _)) = fast(&h, 4096) {
        check_decode::<Holder<T>>(&bytes);
        for n in rooms(bytes.len()) {
            check_decode::<Holder<T>>(&bytes[..n]);
        }
        for &(at, bit) in flips {
            let len = bytes.len();
            if len > 0 {
                bytes[at % len] ^= 1 << bit;
            }
        }
        check_decode::<Holder<T>>(&bytes);
    }
}

fn float(min: f32, max: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        12 => min..=max,
        1 => prop::num::f32::ANY,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(max),
        1 => Just(min),
        // The rounding step above `max`, which the scalar path accepts.
        1 => Just(max + (max - min) * 1e-7),
        1 => (min - 1.0)..(max + 1.0),
    ]
}

fn quat() -> impl Strategy<Value = [f32; 4]> {
    prop_oneof![
        10 => prop::array::uniform4(-1.0f32..1.0),
        1 => Just([0.0f32; 4]),
        1 => prop::array::uniform4(prop::num::f32::ANY),
        1 => Just([0.0, 0.0, 0.0, -1.0]),
    ]
}

fn rarely<T: core::fmt::Debug + Clone + 'static>(
    good: impl Strategy<Value = T> + 'static,
    any: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<T> {
    prop_oneof![30 => good, 1 => any].boxed()
}

prop_compose! {
    fn position()(
        x in float(-2048.0, 2048.0),
        y in float(-2048.0, 2048.0),
        z in float(0.0, 512.0),
    ) -> Position {
        Position { x, y, z }
    }
}

prop_compose! {
    fn entity()(
        id in rarely(0u16..=4095, any::<u16>()),
        position in position(),
        orientation in quat(),
        at_rest in any::<bool>(),
        velocity in prop::array::uniform3(float(-64.0, 64.0)),
        health in rarely(0u8..=100, any::<u8>()),
        flags in any::<(bool, bool, bool)>(),
    ) -> Entity {
        Entity {
            id, position, orientation, at_rest, velocity, health,
            on_ground: flags.0, crouching: flags.1, firing: flags.2,
        }
    }
}

prop_compose! {
    fn inner()(
        a in rarely(1u8..=3, any::<u8>()),
        b in any::<bool>(),
        c in float(-1.0, 1.0),
    ) -> Inner {
        Inner { a, b, c }
    }
}

prop_compose! {
    fn outer()(inner in inner(), d in rarely(-3i8..=3, any::<i8>()), pair in [inner(), inner()]) -> Outer {
        Outer { inner, d, pair }
    }
}

prop_compose! {
    fn wide()(
        small in rarely(0u8..32, any::<u8>()),
        delta in rarely(-1000i32..=1000, any::<i32>()),
        pair in prop::array::uniform2(rarely(-5i8..=5, any::<i8>())),
        big in any::<u64>(),
        signed in any::<i16>(),
        raw in prop_oneof![prop::num::f32::ANY, Just(-0.0f32), Just(f32::from_bits(0x7fc0_1234))],
        raw64 in prop_oneof![prop::num::f64::ANY, Just(-0.0f64), Just(f64::from_bits(0xfff8_0000_0000_0042))],
        q9 in quat(),
        q20 in quat(),
        clamped in prop_oneof![-1.5f32..1.5, prop::num::f32::ANY],
        mode in rarely(0u8..=3, any::<u8>()),
        extra in rarely(0u8..=9, any::<u8>()),
        scale in prop::array::uniform2(float(0.0, 10.0)),
        flag in any::<bool>(),
        level in any::<u8>(),
        deep in rarely(0u8..8, any::<u8>()),
        outer in outer(),
    ) -> Wide {
        Wide {
            small, delta, pair, big, signed, raw, raw64, q9, q20, clamped, mode, extra,
            scale, flag, level, deep, outer,
        }
    }
}

prop_compose! {
    fn tuple()(a in rarely(0u8..=9, any::<u8>()), b in any::<bool>(), q in quat(), o in outer()) -> Tuple {
        Tuple(a, b, q, o)
    }
}

prop_compose! {
    fn glam_el()(
        p in prop::array::uniform3(float(-100.0, 100.0)),
        f in prop::array::uniform2(float(-1.0, 1.0)),
        o in quat(),
        alive in any::<bool>(),
    ) -> GlamEl {
        GlamEl {
            p: glam::Vec3::from_array(p),
            f: glam::Vec2::from_array(f),
            o: glam::Quat::from_array(o),
            alive,
        }
    }
}

/// Up to 70 elements: lengths across several blocks, usually all valid (so the blocks
/// batch), sometimes one bad element somewhere.
fn items<T: core::fmt::Debug + Clone + 'static>(
    good: impl Strategy<Value = T> + 'static,
    bad: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Vec<T>> {
    (
        prop::collection::vec(good, 0..=70),
        prop::option::of((bad, any::<prop::sample::Index>())),
    )
        .prop_map(|(mut v, bad)| {
            if let (Some((x, at)), false) = (bad, v.is_empty()) {
                let i = at.index(v.len());
                v[i] = x;
            }
            v
        })
}

prop_compose! {
    fn valid_entity()(
        id in 0u16..=4095,
        x in -2048.0f32..=2048.0, y in -2048.0f32..=2048.0, z in 0.0f32..=512.0,
        orientation in prop::array::uniform4(-1.0f32..1.0),
        at_rest in any::<bool>(),
        velocity in prop::array::uniform3(-64.0f32..=64.0),
        health in 0u8..=100,
        flags in any::<(bool, bool, bool)>(),
    ) -> Entity {
        Entity {
            id, position: Position { x, y, z }, orientation, at_rest, velocity, health,
            on_ground: flags.0, crouching: flags.1, firing: flags.2,
        }
    }
}

fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((any::<usize>(), 0u8..8), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn entities_batch_as_element_by_element(v in items(valid_entity(), entity()), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn random_entities_batch_as_element_by_element(v in prop::collection::vec(entity(), 0..=40), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn wide_structs_batch_as_element_by_element(v in prop::collection::vec(wide(), 0..=40), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn tuple_structs_batch_as_element_by_element(v in prop::collection::vec(tuple(), 0..=70), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn nested_structs_batch_as_element_by_element(v in prop::collection::vec(outer(), 0..=70), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn glam_structs_batch_as_element_by_element(v in prop::collection::vec(glam_el(), 0..=70), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn random_bytes_decode_alike(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_decode::<Holder<Entity>>(&bytes);
        check_decode::<Holder<Wide>>(&bytes);
        check_decode::<Holder<Tuple>>(&bytes);
        check_decode::<Holder<GlamEl>>(&bytes);
        check_decode::<Arrays>(&bytes);
    }
}

/// Arrays of derived structs route through the hooks too.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Arrays {
    outers: [Outer; 20],
    entities: [Entity; 3],
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn arrays_batch_as_element_by_element(
        o in prop::collection::vec(outer(), 20),
        e in (valid_entity(), entity(), valid_entity()),
    ) {
        let v = Arrays { outers: o.try_into().unwrap(), entities: [e.0, e.1, e.2] };
        check_encode(&v);
        if let Ok((bytes, _)) = fast(&v, 4096) {
            check_decode::<Arrays>(&bytes);
            for n in 0..bytes.len() {
                check_decode::<Arrays>(&bytes[..n]);
            }
        }
    }
}

fn moving(i: u16) -> Entity {
    Entity {
        id: i,
        position: Position {
            x: i as f32,
            y: -(i as f32),
            z: 1.5,
        },
        orientation: [0.0, 0.0, 0.0, 1.0],
        at_rest: i.is_multiple_of(2),
        velocity: [1.0, -2.0, 0.5],
        health: 100,
        ..Entity::default()
    }
}

/// The first bad element is reported with its index, field and bit, from any block.
#[test]
fn the_first_bad_element_names_its_index_field_and_bit() {
    for bad in [0usize, 15, 16, 17, 40, 69] {
        let mut items: Vec<Entity> = (0..70).map(moving).collect();
        items[bad].position.y = f32::NAN;
        items[69].health = 101; // a later bad value: not the one reported
        let h = Holder {
            flag: true,
            items,
            boxed: Box::new([]),
        };
        let e = fast(&h, 4096).unwrap_err();
        same_errors(&e, &slow(&h, 4096).unwrap_err());
        if bad != 69 {
            assert_eq!(e.path(), format!("Holder.items[{bad}].position.y"));
        }
        // flag 1, length 7, then 151 bits per moving element and 109 per resting one.
        let before: u64 = (0..bad as u64)
            .map(|i| if i.is_multiple_of(2) { 109 } else { 151 })
            .sum();
        assert_eq!(e.bit(), 1 + 7 + before + 12 + 19, "element {bad}");
    }
}

/// A crowd long enough for the decode's pairs: after two blocks whose gates differ, a
/// block's starts are found two at a time without a branch on the gates.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Crowd {
    #[net(max_len = 256)]
    entities: Vec<Entity>,
}

/// 256 entities at rest or not at random (so most blocks go by pairs), read as element
/// by element does: whole, cut short, with bits flipped, and with one bad health in a
/// late block (the error names that element, its field and its bit).
#[test]
fn random_gates_decode_by_pairs_as_element_by_element() {
    let mut next = netser_tests::xorshift(0x2545_F491_4F6C_DD1D);
    for round in 0..12 {
        let entities: Vec<Entity> = (0..256)
            .map(|i| {
                let mut e = moving(i);
                e.at_rest = next() & 1 == 1;
                e.velocity = if e.at_rest {
                    [0.0; 3]
                } else {
                    [1.0, -2.0, 0.5]
                };
                e.firing = next() & 1 == 1;
                e
            })
            .collect();
        let c = Crowd { entities };
        let (bytes, _) = fast(&c, 8192).unwrap();
        assert_eq!(Some(&bytes), slow(&c, 8192).ok().map(|b| b.0).as_ref());
        check_decode::<Crowd>(&bytes);
        check_decode::<Crowd>(&bytes[..bytes.len() - 1 - round * 37]);
        let mut flipped = bytes.clone();
        for _ in 0..1 + round % 3 {
            let at = (next() as usize) % bytes.len();
            flipped[at] ^= 1 << (next() % 8);
        }
        check_decode::<Crowd>(&flipped);
        // Health 127 (out of 0..=100) in element `bad`: its 7 bits follow the element's
        // 99 bits of head and, when it moves, its 42 bits of velocity.
        let bad = 64 + (next() as usize) % 192;
        // The length takes 9 bits (0..=256).
        let start: u64 = 9 + c.entities[..bad]
            .iter()
            .map(|e| if e.at_rest { 109 } else { 151 })
            .sum::<u64>();
        let at = start + 99 + if c.entities[bad].at_rest { 0 } else { 42 };
        let mut broken = bytes.clone();
        for b in at..at + 7 {
            broken[(b / 8) as usize] |= 1 << (b % 8);
        }
        let e = decode::<Crowd, _>(&broken, netser::trace::NoTrace).unwrap_err();
        same_errors(&e, &decode::<Crowd, _>(&broken, Listener).unwrap_err());
        assert_eq!(e.path(), format!("Crowd.entities[{bad}].health"));
        assert_eq!(e.bit(), at, "element {bad}");
    }
}

/// The batch path writes what the element-by-element path writes, at full blocks.
#[test]
fn full_blocks_write_the_same_bytes() {
    let items: Vec<Entity> = (0..64).map(moving).collect();
    let h = Holder {
        flag: false,
        boxed: items.clone().into_boxed_slice(),
        items,
    };
    let (bytes, bits) = fast(&h, 4096).unwrap();
    assert_eq!((bytes.clone(), bits), slow(&h, 4096).unwrap());
    assert_eq!(bits, 1 + 2 * (7 + 32 * 109 + 32 * 151));
    let (back, _) = decode::<Holder<Entity>, _>(&bytes, netser::trace::NoTrace).unwrap();
    assert_eq!(back.items.len(), 64);
    assert_eq!(back.items[3].id, 3);
    assert_eq!(back.items[3].velocity, [1.0, -2.0, 0.5]);
    assert_eq!(back.items[2].velocity, [0.0; 3]);
}

/// Which types have the column hooks: the nested packed ones.
#[test]
fn nested_columns_equal_pack_fixed() {
    let inners = [
        Inner {
            a: 1,
            b: true,
            c: 0.5,
        },
        Inner {
            a: 3,
            b: false,
            c: -1.0,
        },
        Inner {
            a: 2,
            b: true,
            c: 1.0,
        },
    ];
    let mut out = [0u64; 3];
    assert!(Inner::pack_fixed_column(
        |k| &inners[k],
        &[true; 3],
        &mut out,
        simd_level()
    ));
    for (k, v) in inners.iter().enumerate() {
        assert_eq!(out[k], v.pack_fixed(0).unwrap());
    }
    let lane = Inner::unpack_fixed_column(out, [true; 3], simd_level()).unwrap();
    let back: Vec<Inner> = (0..3).map(lane).collect();
    assert_eq!(back, inners);
    let bad = [
        Inner {
            a: 4,
            ..inners[0].clone()
        },
        inners[1].clone(),
    ];
    assert!(!Inner::pack_fixed_column(
        |k| &bad[k],
        &[true; 2],
        &mut [0; 2],
        simd_level()
    ));
    // An inactive lane never fails.
    assert!(Inner::pack_fixed_column(
        |k| &bad[k],
        &[false, true],
        &mut [0; 2],
        simd_level()
    ));
    // Offset 3 for `a` (range 1..=3) is not a value.
    assert!(Inner::unpack_fixed_column([3], [true], simd_level()).is_none());
}

/// Stretches of the parse: a gated field right after another (each closing its own
/// stretch), a gate naming a field two stretches back, and a gated last field.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Trailing {
    #[net(range = 0..=9)]
    count: u8,
    moving: bool,
    #[net(when = *moving, quantize(min = -8.0, max = 8.0, res = 0.01))]
    speed: [f32; 2],
    #[net(when = *count > 4, bits = 40)]
    stamp: u64,
    #[net(range = -3..=3)]
    turn: i8,
    #[net(when = *count % 2 == 1, default = 2, range = 0..=50)]
    last: u16,
}

prop_compose! {
    fn trailing()(
        count in rarely(0u8..=9, any::<u8>()),
        moving in any::<bool>(),
        speed in prop::array::uniform2(float(-8.0, 8.0)),
        stamp in rarely(0u64..(1 << 40), any::<u64>()),
        turn in rarely(-3i8..=3, any::<i8>()),
        last in rarely(0u16..=50, any::<u16>()),
    ) -> Trailing {
        Trailing { count, moving, speed, stamp, turn, last }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn trailing_gates_batch_as_element_by_element(v in prop::collection::vec(trailing(), 0..=70), f in flips()) {
        check_all(v, &f);
    }

    #[test]
    fn trailing_gates_decode_random_bytes_alike(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_decode::<Holder<Trailing>>(&bytes);
    }
}

/// An element of 243 bits at most (the widest a sink of 64 words holds for a block
/// without spilling), whose first put is four words long with a gated run of 128 bits
/// in it, and whose second put begins with a gate of its own.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Long {
    head: u64,
    on: bool,
    #[net(when = *on)]
    wide: [f64; 2],
    tail: u32,
    #[net(when = !*on, range = 0..=1000)]
    other: u16,
    last: u8,
}

prop_compose! {
    fn long()(
        head in any::<u64>(),
        on in any::<bool>(),
        wide in prop::array::uniform2(any::<f64>()),
        tail in any::<u32>(),
        other in rarely(0u16..=1000, any::<u16>()),
        last in any::<u8>(),
    ) -> Long {
        Long { head, on, wide: if on { wide } else { [0.0; 2] }, tail, other, last }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn long_structs_batch_as_element_by_element(v in prop::collection::vec(long(), 0..=70), f in flips()) {
        check_all(v, &f);
    }
}

#[test]
fn long_elements_fill_a_block_without_spilling() {
    assert_eq!(Long::MAX_BITS, 243);
    assert!(netser::batch::Sink::<{ netser::batch::SINK_WORDS }>::holds(
        Long::MAX_BITS
    ));
    // Every element at its widest, in full blocks: the batch bytes equal the element
    // by element ones.
    let v: Vec<Long> = (0..64u32)
        .map(|i| Long {
            head: u64::MAX - i as u64,
            on: true,
            wide: [f64::from_bits(u64::MAX - 1), -(i as f64)],
            tail: u32::MAX,
            other: 0,
            last: 0xFF,
        })
        .collect();
    check_all(v, &[]);
}

/// A nested struct holding nested structs unpacks, through its lane function (which
/// calls its fields' own), every lane of a full block to the values it packed; an
/// inactive lane that does not unpack fails nothing, an active one fails the column.
#[test]
fn nested_lane_functions_give_every_lane() {
    let outers: Vec<Outer> = (0..16u8)
        .map(|k| {
            let inner = |j: u8| Inner {
                a: 1 + (k + j) % 3,
                b: (k + j).is_multiple_of(2),
                c: f32::from((k + j) % 5) * 0.5 - 1.0,
            };
            Outer {
                inner: inner(0),
                d: (k % 7) as i8 - 3,
                pair: [inner(1), inner(2)],
            }
        })
        .collect();
    let mut raw = [0u64; 16];
    assert!(Outer::pack_fixed_column(
        |k| &outers[k],
        &[true; 16],
        &mut raw,
        simd_level()
    ));
    let lane = Outer::unpack_fixed_column(raw, [true; 16], simd_level()).unwrap();
    for (k, v) in outers.iter().enumerate() {
        assert_eq!(&lane(k), v, "lane {k}");
        assert_eq!(raw[k], v.pack_fixed(0).unwrap());
    }
    // Lane 5's `inner.a` offset 3 is not a value (range 1..=3): refused when active.
    let mut bad = raw;
    bad[5] |= 3;
    let mut active = [true; 16];
    assert!(Outer::unpack_fixed_column(bad, active, simd_level()).is_none());
    active[5] = false;
    let lane = Outer::unpack_fixed_column(bad, active, simd_level()).unwrap();
    assert_eq!(lane(4), outers[4]);
}

/// Blocks stored in place in the stream's buffer: at every lead and room (exact fits,
/// one word short of the saved words, short rooms), the batch path writes the bytes
/// and errors of the element-by-element path, and leaves every byte past the written
/// length as it was (a marker fills the buffers).
#[test]
fn in_place_blocks_leave_the_bytes_past_the_end_untouched() {
    let items: Vec<Entity> = (0..40).map(moving).collect();
    let h = Holder {
        flag: true,
        items: items.clone(),
        boxed: items[..17].to_vec().into_boxed_slice(),
    };
    let run = |lead: u32, room: usize, fast: bool| {
        let mut buf = vec![0xA5u8; room];
        let mut w = WriteStream::new(&mut buf);
        let r = (|| {
            w.put_bits(((1u64 << lead) - 1) & 0x5555_5555_5555_5555, lead)?;
            if fast {
                h.encode(&mut w)
            } else {
                // The element-by-element path.
                w.put_bits(h.flag as u64, 1)?;
                w.put_bits(h.items.len() as u64, 7)?;
                netser::batch::encode_each(&h.items, 0, &mut w)?;
                w.put_bits(h.boxed.len() as u64, 7)?;
                netser::batch::encode_each(&h.boxed, 0, &mut w)?;
                Ok(())
            }
        })();
        let bits = w.bit_position();
        let n = w.finish();
        assert!(
            buf[n..].iter().all(|&b| b == 0xA5),
            "lead {lead} room {room}"
        );
        (r.map(|_| bits), buf)
    };
    for lead in [0u32, 1, 7, 31, 57, 63] {
        let need = (run(lead, 4096, true).0.unwrap() as usize).div_ceil(8);
        for room in (0..need + 48).filter(|&r| r % 7 == 0 || r + 48 >= need) {
            let (a, ba) = run(lead, room, true);
            let (b, bb) = run(lead, room, false);
            match (&a, &b) {
                (Ok(x), Ok(y)) => assert_eq!(x, y),
                (Err(x), Err(y)) => {
                    assert_eq!(format!("{:?}", x.kind()), format!("{:?}", y.kind()));
                    assert_eq!(x.bit(), y.bit());
                }
                _ => panic!("lead {lead} room {room}: {a:?} {b:?}"),
            }
            assert_eq!(ba, bb, "lead {lead} room {room}");
        }
    }
}

/// The quaternion column reads each element's quaternion where it lies: one that
/// refuses the column or needs its exact check (zero, NaN, far from unit length, a
/// near-tie, `w = -1`) at lanes across a full block and as the last element of a short
/// one (whose lanes past the end repeat it), among ordinary ones, encodes and decodes
/// as element by element.
#[test]
fn quaternions_read_in_place_at_every_lane() {
    let h = core::f32::consts::FRAC_1_SQRT_2;
    let odd = [
        [0.0f32; 4],
        [f32::NAN, 0.0, 0.0, 1.0],
        [0.9, 0.9, 0.9, 0.9],
        [h, h, 0.0, 0.0],
        [0.0, 0.0, 0.0, -1.0],
    ];
    for q in odd {
        for len in [16usize, 19] {
            for at in [0, 1, 7, 8, 15, len - 1] {
                let items: Vec<Entity> = (0..len)
                    .map(|k| Entity {
                        id: k as u16,
                        orientation: if k == at { q } else { [0.0, 0.6, 0.0, 0.8] },
                        at_rest: k % 3 == 0,
                        ..Entity::default()
                    })
                    .collect();
                check_all(items, &[]);
            }
        }
    }
}
