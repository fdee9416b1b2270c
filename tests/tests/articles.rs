//! The articles' examples as tests: "Reading and Writing Packets" and "Serialization
//! Strategies" (Glenn Fiedler, "Building a Game Network Protocol"), written with netser's unified [`Stream`] or
//! its [`Encoder`]/[`Decoder`] halves, with every bit count worked out by hand.

use std::fmt::Debug;

use netser::framing::{read_packet_with, write_packet_with, END_OF_PACKET, HEADER_BYTES};
use netser::trace::Trace;
use netser::{
    Decoder, Encoder, ErrorKind, MeasureStream, Quantize, ReadStream, Result, Stream, WriteStream,
};

/// A type with one article-style serialize function for all three streams.
trait Article: Clone + Debug + Default + PartialEq {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()>;
}

/// Measures, writes and reads `value` with the same function; all three must agree on
/// the bit count. Returns the bytes, the bit count and the value read back.
fn round_trip<T: Article>(value: &T) -> (Vec<u8>, u64, T) {
    let mut m = MeasureStream::new();
    value.clone().serialize(&mut m).expect("measure");

    let mut buf = vec![0u8; 4096];
    let mut w = WriteStream::new(&mut buf);
    value.clone().serialize(&mut w).expect("write");
    let bits = w.bits_processed();
    let len = w.finish();
    buf.truncate(len);

    let mut back = T::default();
    let mut r = ReadStream::new(&buf);
    back.serialize(&mut r).expect("read");

    assert_eq!(m.bits(), bits, "measure == write");
    assert_eq!(r.bits_processed(), bits, "read == write");
    assert_eq!(len as u64, bits.div_ceil(8));
    (buf, bits, back)
}

// ---------------------------------------------------------------- Reading and Writing Packets

#[test]
fn three_ten_and_twenty_four_bits() {
    // The article's example: 5 in 3 bits, 1000 in 10, 0xABCDEF in 24: 37 bits, 5 bytes.
    // As one little-endian integer: 0xABCDEF << 13 | 1000 << 3 | 5 = 0x15_79BD_FF45.
    let (mut a, mut b, mut c) = (5u64, 1000u64, 0xAB_CDEFu64);
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    w.serialize_bits(&mut a, 3).unwrap();
    w.serialize_bits(&mut b, 10).unwrap();
    w.serialize_bits(&mut c, 24).unwrap();
    assert_eq!(w.bits_processed(), 37);
    let len = w.finish();
    assert_eq!(&buf[..len], &[0x45, 0xff, 0xbd, 0x79, 0x15]);
    assert_eq!(
        u64::from_le_bytes(buf),
        0xAB_CDEF << 13 | 1000 << 3 | 5,
        "the stream is one little-endian integer"
    );

    let mut r = ReadStream::new(&buf[..len]);
    let (mut x, mut y, mut z) = (0, 0, 0);
    r.serialize_bits(&mut x, 3).unwrap();
    r.serialize_bits(&mut y, 10).unwrap();
    r.serialize_bits(&mut z, 24).unwrap();
    assert_eq!((x, y, z), (5, 1000, 0xAB_CDEF));
    // 40 bits arrived, 37 were used: the 3 left over are not a value.
    assert!(matches!(
        r.serialize_bits(&mut x, 4).unwrap_err().kind(),
        ErrorKind::EndOfBuffer {
            wanted: 4,
            remaining: 3
        }
    ));
}

/// "PacketA": three ints of 32 bits each.
#[derive(Debug, Clone, Default, PartialEq)]
struct PacketA {
    x: i32,
    y: i32,
    z: i32,
}

impl Article for PacketA {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.serialize_int(&mut self.x, i32::MIN, i32::MAX)?;
        s.serialize_int(&mut self.y, i32::MIN, i32::MAX)?;
        s.serialize_int(&mut self.z, i32::MIN, i32::MAX)
    }
}

const MAX_ELEMENTS: i32 = 32;

/// "PacketB": a variable-length array, its length bounded by `MaxElements`.
#[derive(Debug, Clone, Default, PartialEq)]
struct PacketB {
    num_elements: i32,
    elements: [i32; MAX_ELEMENTS as usize],
}

impl Article for PacketB {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        // bits_required(0, 32) = 6: 33..=63 are headroom an attacker could send.
        s.serialize_int(&mut self.num_elements, 0, MAX_ELEMENTS)?;
        for e in &mut self.elements[..self.num_elements as usize] {
            s.serialize_int(e, i32::MIN, i32::MAX)?;
        }
        Ok(())
    }
}

/// "PacketC": a bool, a short and an int, bit-packed instead of byte-aligned.
#[derive(Debug, Clone, Default, PartialEq)]
struct PacketC {
    x: bool,
    y: i16,
    z: i32,
}

impl Article for PacketC {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.serialize_bool(&mut self.x)?;
        s.serialize_int(&mut self.y, i16::MIN, i16::MAX)?;
        s.serialize_int(&mut self.z, i32::MIN, i32::MAX)
    }
}

#[test]
fn packet_a_round_trips_in_96_bits() {
    let p = PacketA {
        x: i32::MIN,
        y: -1,
        z: i32::MAX,
    };
    let (bytes, bits, back) = round_trip(&p);
    assert_eq!(bits, 3 * 32);
    assert_eq!(back, p);
    // Each int goes as value - i32::MIN: 0, 0x7fffffff, 0xffffffff, little-endian.
    assert_eq!(
        bytes,
        [0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff]
    );
}

#[test]
fn packet_b_round_trips_and_refuses_too_many_elements() {
    for n in [0, 1, 17, MAX_ELEMENTS] {
        let mut p = PacketB {
            num_elements: n,
            ..PacketB::default()
        };
        for i in 0..n as usize {
            p.elements[i] = (i as i32 - 8) * 1_000_003;
        }
        let (_, bits, back) = round_trip(&p);
        assert_eq!(bits, 6 + 32 * n as u64, "n = {n}");
        assert_eq!(back, p);
    }
    // Writing more than MaxElements is an error, not a truncation.
    let mut too_many = PacketB {
        num_elements: MAX_ELEMENTS + 1,
        ..PacketB::default()
    };
    let mut buf = [0u8; 256];
    assert!(matches!(
        too_many
            .serialize(&mut WriteStream::new(&mut buf))
            .unwrap_err()
            .kind(),
        ErrorKind::OutOfRange { .. }
    ));
    // The article's attack: numElements = 63 in the 6-bit field, then plenty of data.
    let mut attack = vec![0xffu8; 300];
    attack[0] = 63;
    let mut victim = PacketB::default();
    let e = victim.serialize(&mut ReadStream::new(&attack)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e}");
    assert_eq!(e.bit(), 0);
}

#[test]
fn packet_c_round_trips_in_49_bits() {
    let p = PacketC {
        x: true,
        y: -12345,
        z: 7,
    };
    let (_, bits, back) = round_trip(&p);
    // 1 + 16 + 32 = 49 bits, where the article's byte-aligned version spends 56
    // (WriteByte + WriteShort + WriteInt) on the same fields.
    assert_eq!(bits, 1 + 16 + 32);
    assert_eq!(back, p);
}

// ---------------------------------------------------------------- the rigid body

const POSITION: Quantize = Quantize::new(-1024.0, 1024.0, 0.01);
const VELOCITY: Quantize = Quantize::new(-32.0, 32.0, 0.01);
const ORIENTATION_BITS: u32 = 9;

/// "RigidBody": velocities are only sent when the body moves.
#[derive(Debug, Clone, Default, PartialEq)]
struct RigidBody {
    position: [f32; 3],
    orientation: [f32; 4],
    linear_velocity: [f32; 3],
    angular_velocity: [f32; 3],
}

impl Article for RigidBody {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.serialize_compressed_f32s(&mut self.position, &POSITION)?;
        s.serialize_quat(&mut self.orientation, ORIENTATION_BITS)?;
        let mut at_rest = if S::IS_WRITING {
            self.linear_velocity == [0.0; 3] && self.angular_velocity == [0.0; 3]
        } else {
            true
        };
        s.serialize_bool(&mut at_rest)?;
        if !at_rest {
            s.serialize_compressed_f32s(&mut self.linear_velocity, &VELOCITY)?;
            s.serialize_compressed_f32s(&mut self.angular_velocity, &VELOCITY)?;
        } else if S::IS_READING {
            self.linear_velocity = [0.0; 3];
            self.angular_velocity = [0.0; 3];
        }
        Ok(())
    }
}

/// What a value becomes on the other side of a compressed-float link.
fn through(q: &Quantize, v: f32) -> f32 {
    q.dequantize(q.quantize(v, 0).expect("in range"))
}

#[test]
fn rigid_body_sends_velocity_only_when_moving() {
    // 2048 / 0.01 = 204800 steps: 18 bits. 64 / 0.01 = 6400 steps: 13 bits.
    assert_eq!((POSITION.bits(), VELOCITY.bits()), (18, 13));
    let quat_bits = 2 + 3 * 9;

    let resting = RigidBody {
        position: [100.25, -3.5, 0.0],
        orientation: [0.0, 0.0, 0.0, 1.0],
        ..RigidBody::default()
    };
    let (_, bits, back) = round_trip(&resting);
    assert_eq!(bits, 3 * 18 + quat_bits + 1);
    assert_eq!(back.linear_velocity, [0.0; 3]);
    assert_eq!(
        back.position,
        resting.position.map(|v| through(&POSITION, v))
    );

    let moving = RigidBody {
        linear_velocity: [1.0, -2.5, 31.99],
        angular_velocity: [0.0, 0.0, -0.5],
        ..resting.clone()
    };
    let (bytes, bits, back) = round_trip(&moving);
    assert_eq!(bits, 3 * 18 + quat_bits + 1 + 6 * 13);
    assert_eq!(
        back.linear_velocity,
        moving.linear_velocity.map(|v| through(&VELOCITY, v))
    );
    assert_eq!(
        back.angular_velocity,
        moving.angular_velocity.map(|v| through(&VELOCITY, v))
    );

    // Reading an at-rest body clears whatever velocity the destination held.
    let (rest_bytes, _, _) = round_trip(&resting);
    let mut stale = moving.clone();
    stale.serialize(&mut ReadStream::new(&rest_bytes)).unwrap();
    assert_eq!(stale.linear_velocity, [0.0; 3]);
    assert_eq!(stale.angular_velocity, [0.0; 3]);
    assert_ne!(bytes, rest_bytes);
}

// ---------------------------------------------------------------- array subsets

const MAX_OBJECTS: usize = 4096;
/// Each object is one value in 0..=1000: 10 bits.
const OBJECT_BITS: u64 = 10;

type Scene = Vec<Option<u16>>;

fn write_object<E: Encoder>(e: &mut E, v: u16) -> Result<()> {
    e.write_int(v, 0, 1000)
}

fn read_object<D: Decoder>(d: &mut D) -> Result<u16> {
    d.read_int(0, 1000)
}

/// Way A, one unified function: a bit per object.
fn serialize_scene_a<S: Stream>(s: &mut S, scene: &mut Scene) -> Result<()> {
    for object in scene.iter_mut() {
        let mut send = object.is_some();
        s.serialize_bool(&mut send)?;
        if !send {
            if S::IS_READING {
                *object = None;
            }
            continue;
        }
        let mut v = object.unwrap_or_default();
        s.serialize_int(&mut v, 0, 1000)?;
        *object = Some(v);
    }
    Ok(())
}

/// Way B: the number of objects, then each absolute index.
fn write_scene_b<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()> {
    let sent = scene.iter().filter(|o| o.is_some()).count();
    e.write_int(sent, 0, MAX_OBJECTS)?;
    for (i, object) in scene.iter().enumerate() {
        if let Some(v) = object {
            e.write_int(i, 0, MAX_OBJECTS - 1)?;
            write_object(e, *v)?;
        }
    }
    Ok(())
}

fn read_scene_b<D: Decoder>(d: &mut D) -> Result<Scene> {
    let mut scene = vec![None; MAX_OBJECTS];
    let sent = d.read_int(0, MAX_OBJECTS)?;
    for _ in 0..sent {
        let i = d.read_int(0, MAX_OBJECTS - 1)?;
        scene[i] = Some(read_object(d)?);
    }
    Ok(scene)
}

/// Way C: absolute indices ended by the sentinel index `MAX_OBJECTS`.
fn write_scene_c<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()> {
    for (i, object) in scene.iter().enumerate() {
        if let Some(v) = object {
            e.write_int(i, 0, MAX_OBJECTS)?;
            write_object(e, *v)?;
        }
    }
    e.write_int(MAX_OBJECTS, 0, MAX_OBJECTS)
}

fn read_scene_c<D: Decoder>(d: &mut D) -> Result<Scene> {
    let mut scene = vec![None; MAX_OBJECTS];
    loop {
        let i = d.read_int(0, MAX_OBJECTS)?;
        if i == MAX_OBJECTS {
            return Ok(scene);
        }
        scene[i] = Some(read_object(d)?);
    }
}

/// Way D, by hand: each index relative to the previous one (from -1), then the sentinel.
fn write_scene_d<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()> {
    let mut previous = -1;
    for (i, object) in scene.iter().enumerate() {
        if let Some(v) = object {
            e.write_int_relative(previous, i as i32)?;
            write_object(e, *v)?;
            previous = i as i32;
        }
    }
    e.write_int_relative(previous, MAX_OBJECTS as i32)
}

fn read_scene_d<D: Decoder>(d: &mut D) -> Result<Scene> {
    let mut scene = vec![None; MAX_OBJECTS];
    let mut previous = -1;
    loop {
        // Strictly increasing, so at most MAX_OBJECTS + 1 steps.
        let i = d.read_int_relative(previous)?;
        if i as usize >= MAX_OBJECTS {
            return if i as usize == MAX_OBJECTS {
                Ok(scene)
            } else {
                Err(netser::Error::new(
                    ErrorKind::Custom("object index past the sentinel"),
                    d.bit_position(),
                ))
            };
        }
        scene[i as usize] = Some(read_object(d)?);
        previous = i;
    }
}

/// Way D through the library: `write_subset` / `read_subset` pick the cheaper of a
/// bit per object and relative indices, with one bit to say which.
fn write_scene_subset<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()> {
    e.write_subset(
        MAX_OBJECTS,
        |i| scene[i].is_some(),
        |e, i| write_object(e, scene[i].unwrap_or_default()),
    )
}

fn read_scene_subset<D: Decoder>(d: &mut D) -> Result<Scene> {
    let mut scene = vec![None; MAX_OBJECTS];
    d.read_subset(MAX_OBJECTS, |d, i| {
        scene[i] = Some(read_object(d)?);
        Ok(())
    })?;
    Ok(scene)
}

/// One of the ways to send a scene subset, as a write and a read function.
trait Way {
    fn write<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()>;
    fn read<D: Decoder>(d: &mut D) -> Result<Scene>;
}

macro_rules! way {
    ($name:ident, $write:ident, $read:ident) => {
        struct $name;
        impl Way for $name {
            fn write<E: Encoder>(e: &mut E, scene: &Scene) -> Result<()> {
                $write(e, scene)
            }
            fn read<D: Decoder>(d: &mut D) -> Result<Scene> {
                $read(d)
            }
        }
    };
}

way!(WayB, write_scene_b, read_scene_b);
way!(WayC, write_scene_c, read_scene_c);
way!(WayD, write_scene_d, read_scene_d);
way!(WaySubset, write_scene_subset, read_scene_subset);

/// Writes with way `W`, checks measure == write, reads back; returns the bits.
fn scene_bits<W: Way>(scene: &Scene) -> u64 {
    let mut m = MeasureStream::new();
    W::write(&mut m, scene).unwrap();
    let mut buf = vec![0u8; 16384];
    let mut w = WriteStream::new(&mut buf);
    W::write(&mut w, scene).unwrap();
    let bits = w.bit_position();
    let len = w.finish();
    assert_eq!(m.bits(), bits, "measure == write");
    let mut r = ReadStream::new(&buf[..len]);
    assert_eq!(&W::read(&mut r).unwrap(), scene, "read back");
    assert_eq!(r.bit_position(), bits);
    bits
}

fn scene_a_bits(scene: &Scene) -> u64 {
    let mut m = MeasureStream::new();
    serialize_scene_a(&mut m, &mut scene.clone()).unwrap();
    let mut buf = vec![0u8; 16384];
    let mut w = WriteStream::new(&mut buf);
    serialize_scene_a(&mut w, &mut scene.clone()).unwrap();
    let bits = w.bits_processed();
    let len = w.finish();
    assert_eq!(m.bits(), bits);
    // Read into a scene full of stale objects: way A clears the ones not sent.
    let mut back = vec![Some(999); MAX_OBJECTS];
    serialize_scene_a(&mut ReadStream::new(&buf[..len]), &mut back).unwrap();
    assert_eq!(&back, scene);
    bits
}

fn make_scene(indices: impl IntoIterator<Item = usize>) -> Scene {
    let mut scene = vec![None; MAX_OBJECTS];
    for i in indices {
        scene[i] = Some((i % 1001) as u16);
    }
    scene
}

/// The index overhead of each way: total bits minus the objects' own bits.
fn overheads(scene: &Scene) -> [u64; 5] {
    let objects = scene.iter().filter(|o| o.is_some()).count() as u64 * OBJECT_BITS;
    [
        scene_a_bits(scene),
        scene_bits::<WayB>(scene),
        scene_bits::<WayC>(scene),
        scene_bits::<WayD>(scene),
        scene_bits::<WaySubset>(scene),
    ]
    .map(|bits| bits - objects)
}

#[test]
fn scene_subset_sparse_10_of_4096() {
    let scene = make_scene([3, 100, 101, 500, 1000, 1001, 1002, 2047, 4000, 4095]);
    // A: one bit per object: 4096.
    // B: count in [0,4096] = 13 bits, then 10 indices in [0,4095] = 12 bits: 13 + 120 = 133.
    // C: 10 indices and the sentinel, each in [0,4096] = 13 bits: 11 * 13 = 143.
    // D: differences from -1: 4 (5 bits), 97 (13), 1 (1), 399 (18), 500 (18), 1 (1),
    //    1 (1), 1045 (18), 1953 (18), 95 (13), sentinel 4096 - 4095 = 1 (1): 107.
    // subset: D is below 4096, so relative indices: 1 mode bit + 107 = 108.
    assert_eq!(overheads(&scene), [4096, 133, 143, 107, 108]);
}

#[test]
fn scene_subset_dense_2000_of_4096() {
    let scene = make_scene((0..4000).step_by(2));
    // A: 4096.
    // B: 13 + 2000 * 12 = 24013 (the article's "almost 3k" of indices).
    // C: 2001 * 13 = 26013.
    // D: 0 - (-1) = 1 (1 bit), then 1999 differences of 2 (5 bits each: 9995), sentinel
    //    4096 - 3998 = 98 (13 bits): 1 + 9995 + 13 = 10009.
    // subset: 10009 >= 4096, so a bit per object: 1 mode bit + 4096 = 4097.
    assert_eq!(overheads(&scene), [4096, 24013, 26013, 10009, 4097]);
}

#[test]
fn scene_subset_empty_and_full() {
    // Empty: B is the count alone (13); C the sentinel alone (13); D the sentinel from -1
    // (4097 apart: 18 bits); subset: 1 + 18 = 19.
    assert_eq!(overheads(&make_scene([])), [4096, 13, 13, 18, 19]);
    // Full: D is 4096 differences of 1 plus the sentinel's 1: 4097 bits; subset picks the
    // bitmask (4097 is not below 4096): 1 + 4096.
    assert_eq!(
        overheads(&make_scene(0..MAX_OBJECTS)),
        [4096, 13 + 4096 * 12, 4097 * 13, 4097, 4097]
    );
}

#[test]
fn scene_subset_reader_refuses_an_index_past_the_end() {
    // The sparse form with index 5000 relative to -1 (5001: 23 bits) in a 4096 array.
    let mut buf = [0u8; 16];
    let mut w = WriteStream::new(&mut buf);
    w.write_bool(true).unwrap();
    w.write_int_relative(-1, 5000).unwrap();
    let len = w.finish();
    let e = read_scene_subset(&mut ReadStream::new(&buf[..len])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e}");
    assert_eq!(e.bit(), 1);
}

// ---------------------------------------------------------------- framing

const PROTOCOL_ID: u64 = 0x6e65_7473_6572_0002;

/// CRC32 (IEEE, reflected, polynomial 0xEDB88320), bit by bit: an independent check of
/// what the framing puts in its header.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = !0u32;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn framed(p: &PacketC) -> Vec<u8> {
    let mut buf = vec![0u8; 64];
    let len = write_packet_with(PROTOCOL_ID, &mut buf, |w| p.clone().serialize(w)).unwrap();
    buf.truncate(len);
    buf
}

fn unframe(packet: &[u8]) -> Result<PacketC> {
    unframe_as(PROTOCOL_ID, packet)
}

fn unframe_as(protocol_id: u64, packet: &[u8]) -> Result<PacketC> {
    read_packet_with(protocol_id, packet, |r| {
        let mut p = PacketC::default();
        p.serialize(r)?;
        Ok(p)
    })
}

/// Re-signs a body as a buggy or hostile sender with the right protocol id would.
fn resign(body: &[u8]) -> Vec<u8> {
    let mut packet = crc32(&[&PROTOCOL_ID.to_le_bytes(), body])
        .to_le_bytes()
        .to_vec();
    packet.extend_from_slice(body);
    packet
}

#[test]
fn framing_layout_and_round_trip() {
    assert_eq!(crc32(&[b"123456789"]), 0xCBF4_3926, "the CRC32 check value");
    let p = PacketC {
        x: true,
        y: 300,
        z: -2,
    };
    let packet = framed(&p);
    // 4 bytes of CRC, 49 bits of data + 32 bits of end check = 81 bits = 11 bytes.
    assert_eq!(packet.len(), HEADER_BYTES + 11);
    let body = &packet[HEADER_BYTES..];
    assert_eq!(
        &packet[..4],
        &crc32(&[&PROTOCOL_ID.to_le_bytes(), body]).to_le_bytes(),
        "the CRC covers the unsent protocol id, then the body"
    );
    assert_eq!(unframe(&packet).unwrap(), p);
}

#[test]
fn framing_refusals() {
    let p = PacketC {
        x: false,
        y: -1,
        z: 123_456,
    };
    let packet = framed(&p);

    // Every single-bit corruption, header or body, fails the CRC.
    for byte in 0..packet.len() {
        for bit in 0..8 {
            let mut bad = packet.clone();
            bad[byte] ^= 1 << bit;
            assert!(
                matches!(
                    unframe(&bad).unwrap_err().kind(),
                    ErrorKind::CrcMismatch { .. }
                ),
                "flip byte {byte} bit {bit}"
            );
        }
    }
    // A foreign protocol id.
    assert!(matches!(
        unframe_as(PROTOCOL_ID ^ 1, &packet).unwrap_err().kind(),
        ErrorKind::CrcMismatch { .. }
    ));
    // Every truncation: too short for the header and the end check, or a CRC that no
    // longer matches.
    for len in 0..packet.len() {
        let e = unframe(&packet[..len]).unwrap_err();
        if len < HEADER_BYTES + 4 {
            assert_eq!(e.kind(), &ErrorKind::PacketTooShort { len, min: 8 });
        } else {
            assert!(
                matches!(e.kind(), ErrorKind::CrcMismatch { .. }),
                "len {len}: {e}"
            );
        }
    }
    // Truncated but re-signed: the data runs out at the end-of-packet check.
    let cut = resign(&packet[HEADER_BYTES..packet.len() - 1]);
    assert!(matches!(
        unframe(&cut).unwrap_err().kind(),
        ErrorKind::EndOfBuffer { .. }
    ));
    // Trailing bytes under a valid CRC.
    let mut long = packet[HEADER_BYTES..].to_vec();
    long.extend_from_slice(&[0, 0, 0]);
    assert_eq!(
        unframe(&resign(&long)).unwrap_err().kind(),
        &ErrorKind::TrailingBytes { count: 3 }
    );
    // Re-signed garbage of the right length fails a bound or the end check, never passes.
    let garbage = resign(&[0xff; 11]);
    assert!(unframe(&garbage).is_err());
}

#[test]
fn framing_catches_a_reader_out_of_step_at_the_end_check() {
    // The writer sends one more field than the reader expects.
    let mut buf = [0u8; 64];
    let len = write_packet_with(PROTOCOL_ID, &mut buf, |w| {
        w.write_int(7u8, 0, 100)?;
        w.write_bool(true)
    })
    .unwrap();
    let e = read_packet_with(PROTOCOL_ID, &buf[..len], |r| r.read_int(0u8, 100)).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::CheckMismatch { expected, .. } if *expected == END_OF_PACKET
        ),
        "{e}"
    );
    assert_eq!(e.bit(), 7, "the check is read one bit early");
}

// ---------------------------------------------------------------- serialize checks

const SECTION_1: u32 = netser::schema::magic("section 1");

/// A packet in two sections with a serialize check between them. `health_max` lets a
/// test build a reader whose schema drifted from the writer's.
fn serialize_sections<S: Stream>(
    s: &mut S,
    health: &mut u16,
    alive: &mut bool,
    score: &mut u32,
    health_max: u16,
) -> Result<()> {
    s.serialize_int(health, 0, health_max)?;
    s.serialize_bool(alive)?;
    s.serialize_check(SECTION_1)?;
    s.serialize_int(score, 0, 1_000_000)
}

#[test]
fn serialize_check_catches_a_desynchronised_read_and_the_traces_show_where() {
    let mut buf = [0u8; 32];
    let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    let (mut health, mut alive, mut score) = (42u16, true, 123_456u32);
    serialize_sections(&mut w, &mut health, &mut alive, &mut score, 100).unwrap();
    assert_eq!(w.bits_processed(), 7 + 1 + 32 + 20);
    let len = w.flush();
    let write_trace = w.into_tracer();

    // In step: the check passes and the traces are identical.
    let mut r = ReadStream::with_tracer(&buf[..len], Trace::new());
    let (mut h, mut a, mut s) = (0, false, 0);
    serialize_sections(&mut r, &mut h, &mut a, &mut s, 100).unwrap();
    assert_eq!((h, a, s), (42, true, 123_456));
    assert_eq!(write_trace.first_difference(&r.into_tracer()), None);

    // Out of step: the reader thinks health goes to 1000 (10 bits, not 7).
    let mut r = ReadStream::with_tracer(&buf[..len], Trace::new());
    let e = serialize_sections(&mut r, &mut h, &mut a, &mut s, 1000).unwrap_err();
    match e.kind() {
        ErrorKind::CheckMismatch { expected, found } => {
            assert_eq!(*expected, SECTION_1);
            assert_ne!(*found, SECTION_1);
        }
        other => panic!("expected a check mismatch, got {other:?}"),
    }
    assert_eq!(
        e.bit(),
        11,
        "the reader reached the check at bit 11, the writer at 8"
    );
    let read_trace = r.into_tracer();

    // The first difference is the first field: same start, different width.
    let at = write_trace
        .first_difference(&read_trace)
        .expect("traces differ");
    assert_eq!(at, 0);
    let (wrote, read) = (&write_trace.entries()[at], &read_trace.entries()[at]);
    assert_eq!(
        (wrote.start, wrote.bits, wrote.value.as_str()),
        (0, 7, "42")
    );
    assert_eq!((read.start, read.bits), (0, 10));
    // 42 in 7 bits, then alive = 1 at bit 7, then the magic's low 2 bits: the reader's
    // 10-bit "health" is 42 | 1 << 7 | (magic & 3) << 8.
    let expected = 42 + (1 << 7) + ((SECTION_1 & 3) << 8);
    assert_eq!(read.value, expected.to_string());
    // The write trace shows the check at bit 8; the read never recorded one.
    assert_eq!(write_trace.entries()[2].start, 8);
    assert!(write_trace.entries()[2].value.starts_with("check"));
    assert!(read_trace
        .entries()
        .iter()
        .all(|e| !e.value.starts_with("check")));
    println!("write:\n{write_trace}\nread:\n{read_trace}");
}

#[test]
fn serialize_check_catches_a_desync_in_a_later_field() {
    // The writer has a 4-bit field that the reader does not: the traces agree on the
    // first field and part ways at the second.
    let mut buf = [0u8; 32];
    let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    w.write_int(3u8, 0, 7).unwrap();
    w.write_int(9u8, 0, 15).unwrap();
    w.write_check(SECTION_1).unwrap();
    let len = w.flush();
    let write_trace = w.into_tracer();

    let mut r = ReadStream::with_tracer(&buf[..len], Trace::new());
    assert_eq!(r.read_int(0u8, 7).unwrap(), 3);
    let e = r.read_check(SECTION_1).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::CheckMismatch { .. }));
    assert_eq!(e.bit(), 3);
    let read_trace = r.into_tracer();
    assert_eq!(write_trace.first_difference(&read_trace), Some(1));
}
