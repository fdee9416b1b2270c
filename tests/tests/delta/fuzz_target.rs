//! The `decode_delta` fuzz target (`fuzz/fuzz_targets/decode_delta.rs`) and its seeds,
//! shared with the corpus replay in `tests/tests/fuzz_corpus.rs`. The including crate
//! declares `mod types` (this directory's `types.rs`) beside it.
//!
//! An input is a byte choosing the type, then one bit stream holding a baseline in its
//! absolute encoding (so the baseline is a decoded value, as a receiver holds) and a
//! delta against it. Whatever decodes must be a valid value whose delta against the
//! same baseline is within `MAX_DELTA_BITS` and decodes to what absolute decoding of
//! the value gives.

use netser::{Encoder, NetDelta, ReadStream, WriteStream};

use crate::types::{cube, player, Cube, Player, Scene, Shape};

/// Runs the target on `data`; whether it held a baseline and a delta that decoded (and
/// so were checked).
///
/// # Panics
/// When the delta decoder accepts a value that breaks the contract.
pub fn decode_delta(data: &[u8]) -> bool {
    let Some((&kind, rest)) = data.split_first() else {
        return false;
    };
    match kind % 4 {
        0 => check::<Cube>(rest),
        1 => check::<Scene>(rest),
        2 => check::<Player>(rest),
        _ => check::<Shape>(rest),
    }
}

fn check<T: NetDelta + core::fmt::Debug>(data: &[u8]) -> bool {
    let mut r = ReadStream::new(data);
    let Ok(base) = T::decode(&mut r) else {
        return false;
    };
    let Ok(value) = T::decode_delta(&base, &mut r) else {
        return false;
    };
    let bytes = value
        .to_vec()
        .unwrap_or_else(|e| panic!("decoded {value:?}, which does not encode: {e}"));
    let abs = T::decode_from_slice(&bytes).expect("an absolute encoding decodes");
    assert_eq!(
        abs.to_vec().unwrap(),
        bytes,
        "absolute decoding is not stable"
    );
    let mut buf = vec![0u8; T::MAX_DELTA_BITS.div_ceil(8) as usize];
    let mut w = WriteStream::new(&mut buf);
    value
        .encode_delta(&base, &mut w)
        .expect("a decoded value delta-encodes");
    assert!(w.bit_position() <= T::MAX_DELTA_BITS);
    let len = w.finish();
    let again = T::decode_delta(&base, &mut ReadStream::new(&buf[..len])).unwrap();
    assert_eq!(
        again.to_vec().unwrap(),
        bytes,
        "the delta does not decode to the value"
    );
    true
}

/// One input: the type byte, the baseline absolute, the value's delta.
fn input<T: NetDelta>(kind: u8, value: &T, base: &T) -> Vec<u8> {
    let mut buf = vec![0u8; 1 + (T::MAX_BITS + T::MAX_DELTA_BITS).div_ceil(8) as usize];
    buf[0] = kind;
    let mut w = WriteStream::new(&mut buf[1..]);
    base.encode(&mut w).unwrap();
    value.encode_delta(base, &mut w).unwrap();
    let len = w.finish();
    buf.truncate(1 + len);
    buf
}

/// The seed corpus, from the real encoders: `(name, bytes)`.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let c = cube(10.0, -20.0, 0.5);
    let moved = Cube {
        x: 10.2,
        y: -19.9,
        ..cube(10.0, -20.0, 0.7)
    };
    let far = Cube {
        x: -200.0,
        z: 12.0,
        interacting: true,
        ..cube(100.0, 0.0, 2.5)
    };
    for (name, v) in [("unchanged", &c), ("moved", &moved), ("far", &far)] {
        out.push((format!("cube_{name}"), input(0, v, &c)));
    }
    let scene = Scene {
        frame: 9,
        cubes: (0..20).map(|i| cube(i as f32, 0.0, 0.1)).collect(),
    };
    let mut changed = scene.clone();
    changed.frame = 10;
    changed.cubes[3] = moved.clone();
    changed.cubes[17].interacting = true;
    let mut grown = changed.clone();
    grown.cubes.push(far.clone());
    let mut shrunk = scene.clone();
    shrunk.cubes.truncate(5);
    for (name, v) in [
        ("unchanged", &scene),
        ("changed", &changed),
        ("grown", &grown),
        ("shrunk", &shrunk),
    ] {
        out.push((format!("scene_{name}"), input(1, v, &scene)));
    }
    let p = player();
    let mut q = player();
    q.health = 3;
    q.name = "bob".into();
    q.slot = None;
    q.bonus = Some(7);
    q.path.push(999);
    q.shape = Shape::Box(1, 2);
    q.alive = false;
    for (name, v) in [("unchanged", &p), ("changed", &q)] {
        out.push((format!("player_{name}"), input(2, v, &p)));
    }
    out.push(("player_back".into(), input(2, &p, &q)));
    let s = Shape::Sphere { radius: 1.0 };
    out.push((
        "shape_same".into(),
        input(3, &Shape::Sphere { radius: 1.5 }, &s),
    ));
    out.push(("shape_other".into(), input(3, &Shape::Empty, &s)));
    out
}
