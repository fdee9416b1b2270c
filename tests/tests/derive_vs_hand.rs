//! The derive against hand-written serialize functions of the same schemas, written
//! against the `Encoder`/`Decoder` API the way a user would: for random values, both
//! produce identical bytes, and each reads the other's bytes back to the same value.
#![allow(missing_docs)]

use std::collections::BTreeMap;

use netser::NetSerialize;
use netser::{Decoder, Encoder, Quantize, ReadStream, Result, WriteStream};
use proptest::prelude::*;

fn hand_bytes(write: impl FnOnce(&mut WriteStream<'_>) -> Result<()>) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let mut w = WriteStream::new(&mut buf);
    write(&mut w)?;
    let len = w.finish();
    buf.truncate(len);
    Ok(buf)
}

// ---- a player input ----------------------------------------------------------------

const YAW: Quantize = Quantize::new(-180.0, 180.0, 0.1);
const PITCH: Quantize = Quantize::new(-90.0, 90.0, 0.1);

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct PlayerInput {
    #[net(bits = 16)]
    sequence: u32,
    #[net(bits = 6)]
    buttons: u8,
    #[net(range = -127..=127)]
    move_x: i8,
    #[net(quantize(-180.0, 180.0, 0.1))]
    yaw: f32,
    #[net(quantize(-90.0, 90.0, 0.1))]
    pitch: f32,
}

fn write_input<E: Encoder>(e: &mut E, v: &PlayerInput) -> Result<()> {
    e.write_uint_bits(v.sequence, 16)?;
    e.write_uint_bits(v.buttons, 6)?;
    e.write_int(v.move_x, -127, 127)?;
    e.write_compressed_f32(v.yaw, &YAW)?;
    e.write_compressed_f32(v.pitch, &PITCH)
}

fn read_input<D: Decoder>(d: &mut D) -> Result<PlayerInput> {
    Ok(PlayerInput {
        sequence: d.read_uint_bits(16)?,
        buttons: d.read_uint_bits(6)?,
        move_x: d.read_int(-127, 127)?,
        yaw: d.read_compressed_f32(&YAW)?,
        pitch: d.read_compressed_f32(&PITCH)?,
    })
}

prop_compose! {
    fn input()(sequence in 0u32..=65535, buttons in 0u8..64, move_x in -127i8..=127,
               yaw in -180.0f32..=180.0, pitch in -90.0f32..=90.0) -> PlayerInput {
        PlayerInput { sequence, buttons, move_x, yaw, pitch }
    }
}

// ---- the article's rigid body ------------------------------------------------------

const POSITION: Quantize = Quantize::new(-256.0, 256.0, 0.01);
const LINEAR: Quantize = Quantize::new(-32.0, 32.0, 0.01);

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct RigidBody {
    #[net(quantize(-256.0, 256.0, 0.01))]
    position: [f32; 3],
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    at_rest: bool,
    #[net(when = !at_rest, quantize(-32.0, 32.0, 0.01))]
    linear_velocity: [f32; 3],
}

fn write_body<E: Encoder>(e: &mut E, v: &RigidBody) -> Result<()> {
    for p in v.position {
        e.write_compressed_f32(p, &POSITION)?;
    }
    e.write_quat(v.orientation, 9)?;
    e.write_bool(v.at_rest)?;
    if !v.at_rest {
        for l in v.linear_velocity {
            e.write_compressed_f32(l, &LINEAR)?;
        }
    }
    Ok(())
}

fn read_body<D: Decoder>(d: &mut D) -> Result<RigidBody> {
    let mut position = [0.0; 3];
    for p in &mut position {
        *p = d.read_compressed_f32(&POSITION)?;
    }
    let orientation = d.read_quat(9)?;
    let at_rest = d.read_bool()?;
    let mut linear_velocity = [0.0; 3];
    if !at_rest {
        for l in &mut linear_velocity {
            *l = d.read_compressed_f32(&LINEAR)?;
        }
    }
    Ok(RigidBody {
        position,
        orientation,
        at_rest,
        linear_velocity,
    })
}

fn unit_quat() -> impl Strategy<Value = [f32; 4]> {
    prop::array::uniform4(-1.0f32..1.0).prop_filter_map("near zero", |q| {
        let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
        (n > 0.1).then(|| q.map(|c| c / n))
    })
}

prop_compose! {
    fn body()(position in prop::array::uniform3(-256.0f32..=256.0), orientation in unit_quat(),
              at_rest in any::<bool>(), linear_velocity in prop::array::uniform3(-32.0f32..=32.0)) -> RigidBody {
        RigidBody { position, orientation, at_rest, linear_velocity: if at_rest { [0.0; 3] } else { linear_velocity } }
    }
}

// ---- packets: an enum with a string, a bounded vector and a map ----------------------

#[derive(NetSerialize, Debug, PartialEq, Clone)]
enum Packet {
    Input(PlayerInput),
    Chat {
        #[net(range = 0..=7)]
        channel: u8,
        #[net(max_len = 64)]
        text: String,
    },
    Bodies(#[net(max_len = 8)] Vec<RigidBody>),
    Scores(#[net(max_len = 4, range = 0..=999)] BTreeMap<u8, u16>),
    Keepalive,
}

fn write_packet<E: Encoder>(e: &mut E, p: &Packet) -> Result<()> {
    match p {
        Packet::Input(i) => {
            e.write_tag(0, 5)?;
            write_input(e, i)
        }
        Packet::Chat { channel, text } => {
            e.write_tag(1, 5)?;
            e.write_int(*channel, 0, 7)?;
            e.write_string(text, 64)
        }
        Packet::Bodies(bodies) => {
            e.write_tag(2, 5)?;
            e.write_len(bodies.len(), 8)?;
            bodies.iter().try_for_each(|b| write_body(e, b))
        }
        Packet::Scores(scores) => {
            e.write_tag(3, 5)?;
            e.write_len(scores.len(), 4)?;
            for (k, v) in scores {
                e.write_value(k)?;
                e.write_int(*v, 0, 999)?;
            }
            Ok(())
        }
        Packet::Keepalive => e.write_tag(4, 5),
    }
}

fn read_packet<D: Decoder>(d: &mut D) -> Result<Packet> {
    Ok(match d.read_tag(5)? {
        0 => Packet::Input(read_input(d)?),
        1 => Packet::Chat {
            channel: d.read_int(0, 7)?,
            text: d.read_string(64)?,
        },
        2 => {
            let len = d.read_len(8)?;
            Packet::Bodies((0..len).map(|_| read_body(d)).collect::<Result<_>>()?)
        }
        3 => {
            let len = d.read_len(4)?;
            let mut scores = BTreeMap::new();
            for _ in 0..len {
                let bit = d.bit_position();
                let k: u8 = d.read_value()?;
                let v = d.read_int(0, 999)?;
                // Keys go in increasing order (the order they are written back in).
                if scores.last_key_value().is_some_and(|(last, _)| k < *last) {
                    return Err(netser::Error::new(
                        netser::ErrorKind::Custom("map keys not in increasing order"),
                        bit,
                    ));
                }
                // A repeated key would silently lose a score: refuse it.
                if scores.insert(k, v).is_some() {
                    return Err(netser::Error::new(
                        netser::ErrorKind::Custom("duplicate key in a map"),
                        bit,
                    ));
                }
            }
            Packet::Scores(scores)
        }
        _ => Packet::Keepalive,
    })
}

fn packet() -> impl Strategy<Value = Packet> {
    prop_oneof![
        input().prop_map(Packet::Input),
        (0u8..=7, "[a-z ]{0,64}").prop_map(|(channel, text)| Packet::Chat { channel, text }),
        prop::collection::vec(body(), 0..=8).prop_map(Packet::Bodies),
        prop::collection::btree_map(any::<u8>(), 0u16..=999, 0..=4).prop_map(Packet::Scores),
        Just(Packet::Keepalive),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn input_matches_hand_written(v in input()) {
        let derived = v.to_vec().unwrap();
        prop_assert_eq!(&derived, &hand_bytes(|w| write_input(w, &v)).unwrap());
        prop_assert_eq!(PlayerInput::decode_from_slice(&derived).unwrap(), read_input(&mut ReadStream::new(&derived)).unwrap());
    }

    #[test]
    fn body_matches_hand_written(v in body()) {
        let derived = v.to_vec().unwrap();
        prop_assert_eq!(&derived, &hand_bytes(|w| write_body(w, &v)).unwrap());
        prop_assert_eq!(RigidBody::decode_from_slice(&derived).unwrap(), read_body(&mut ReadStream::new(&derived)).unwrap());
    }

    #[test]
    fn packet_matches_hand_written(v in packet()) {
        let derived = v.to_vec().unwrap();
        prop_assert_eq!(&derived, &hand_bytes(|w| write_packet(w, &v)).unwrap());
        prop_assert_eq!(derived.len() as u64, v.measure_bits().unwrap().div_ceil(8));
        prop_assert!(v.measure_bits().unwrap() <= Packet::MAX_BITS);
        prop_assert_eq!(Packet::decode_from_slice(&derived).unwrap(), read_packet(&mut ReadStream::new(&derived)).unwrap());
    }

    /// Out-of-bounds values fail in both, never truncated.
    #[test]
    fn bad_values_fail_alike(move_x in any::<i8>(), buttons in any::<u8>(), yaw in any::<f32>()) {
        let v = PlayerInput { sequence: 0, buttons, move_x, yaw, pitch: 0.0 };
        let derived = v.to_vec();
        let hand = hand_bytes(|w| write_input(w, &v));
        prop_assert_eq!(derived.is_ok(), hand.is_ok());
        if let (Ok(a), Ok(b)) = (&derived, &hand) {
            prop_assert_eq!(a, b);
        }
        if let (Err(a), Err(b)) = (derived, hand) {
            prop_assert_eq!(a.kind(), b.kind());
            prop_assert_eq!(a.bit(), b.bit());
        }
    }

    /// Any input decodes to an error or to a value, identically in both.
    #[test]
    fn random_bytes_decode_alike(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let derived = Packet::decode_from_slice(&bytes);
        let hand = read_packet(&mut ReadStream::new(&bytes));
        match (derived, hand) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(a), Err(b)) => {
                prop_assert_eq!(a.kind(), b.kind());
                prop_assert_eq!(a.bit(), b.bit());
            }
            (a, b) => prop_assert!(false, "derived {:?} vs hand-written {:?}", a, b),
        }
    }
}
