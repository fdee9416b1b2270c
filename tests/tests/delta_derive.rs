//! `#[net(delta)]`: each rule of the derived delta encoding, against the absolute one.

use netser::{Decoder, Encoder, NetDelta, NetSerialize, ReadStream, WriteStream};

/// The articles' cube: 80 bits absolute.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Cube {
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    x: f32,
    #[net(quantize(-256.0, 255.0, 1.0 / 512.0))]
    y: f32,
    #[net(quantize(0.0, 31.998046875, 1.0 / 512.0))]
    z: f32,
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    interacting: bool,
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Scene {
    #[net(max_len = 1024)]
    cubes: Vec<Cube>,
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Player {
    #[net(range = 0..=100)]
    health: u8,
    #[net(bits = 12)]
    ammo: u16,
    score: u32,
    alive: bool,
    cube: Cube,
    #[net(max_len = 16)]
    name: String,
    #[net(absolute, range = -1000..=1000)]
    money: i32,
    #[net(range = 0..=9)]
    slot: Option<u8>,
    bonus: Option<u16>,
    #[net(range = 0..=3)]
    keys: [u8; 4],
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
enum Shape {
    Sphere {
        #[net(quantize(0.0, 10.0, 0.01))]
        radius: f32,
    },
    Box(#[net(range = 0..=255)] u8, #[net(range = 0..=255)] u8),
    None,
}

fn delta<T: NetDelta>(v: &T, b: &T) -> (u64, Vec<u8>) {
    let mut buf = vec![0u8; (T::MAX_DELTA_BITS.div_ceil(8) + 8) as usize];
    let mut w = WriteStream::new(&mut buf);
    v.encode_delta(b, &mut w).unwrap();
    let bits = w.bit_position();
    let len = w.finish();
    buf.truncate(len);
    (bits, buf)
}

fn round<T: NetDelta + PartialEq + core::fmt::Debug>(v: &T, b: &T) -> u64 {
    let (bits, bytes) = delta(v, b);
    assert!(bits <= T::MAX_DELTA_BITS);
    let got = T::decode_delta(b, &mut ReadStream::new(&bytes)).unwrap();
    let abs = T::decode_from_slice(&v.to_vec().unwrap()).unwrap();
    assert_eq!(got, abs);
    bits
}

fn cube(x: f32, y: f32) -> Cube {
    Cube {
        x,
        y,
        z: 0.5,
        orientation: [0.0, 0.0, 0.0, 1.0],
        interacting: false,
    }
}

#[test]
fn smoke() {
    let a = cube(1.0, 2.0);
    assert_eq!(Cube::MAX_BITS, 80);
    assert_eq!(round(&a, &a), 1);
    assert_eq!(round(&cube(1.2, 2.0), &a), 17);
    let s = Scene {
        cubes: vec![a.clone(); 10],
    };
    let mut t = s.clone();
    t.cubes[3].x = 5.0;
    t.cubes.push(cube(0.0, 0.0));
    round(&t, &s);
    round(&s, &t);
    let p = Player {
        health: 5,
        ammo: 100,
        score: 7,
        alive: true,
        cube: a.clone(),
        name: "ab".into(),
        money: -5,
        slot: Some(3),
        bonus: None,
        keys: [0, 1, 2, 3],
    };
    assert_eq!(round(&p, &p), 1);
    let mut q = p.clone();
    q.name = "abc".into();
    q.money = 7;
    q.slot = None;
    q.bonus = Some(4);
    q.keys[2] = 0;
    round(&q, &p);
    round(&p, &q);
    let sh = Shape::Sphere { radius: 1.0 };
    assert_eq!(round(&sh, &sh), 1);
    round(&Shape::Box(1, 2), &sh);
    round(&Shape::Sphere { radius: 2.0 }, &sh);
    round(&Shape::None, &Shape::None);
    let _ = (
        ReadStream::new(&[]).read_bool(),
        netser::MeasureStream::new().write_bool(true),
    );
}
