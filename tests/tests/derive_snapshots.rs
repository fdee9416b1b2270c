//! Snapshots of the encoded bytes and bit layouts of representative game types.
//! Each `.snap` in `snapshots/` was reviewed field by field against WIRE.md: tags,
//! presence bits, `when` fields, lengths, quantized and smallest-three values.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use netser::NetSerialize;

/// Sizes, bytes in hex, and the bit layout; and a check that the bytes decode to a
/// value that encodes to the same bytes.
fn render<T: netser::NetSerialize>(value: &T) -> String {
    let bytes = value.to_vec().unwrap();
    let again = T::decode_from_slice(&bytes).unwrap().to_vec().unwrap();
    assert_eq!(again, bytes, "decode then encode changed the bytes");
    let mut out = String::new();
    writeln!(
        out,
        "bits: {} (min {}, max {})",
        value.measure_bits().unwrap(),
        T::MIN_BITS,
        T::MAX_BITS
    )
    .unwrap();
    write!(out, "bytes ({}):", bytes.len()).unwrap();
    for (i, b) in bytes.iter().enumerate() {
        if i % 16 == 0 {
            out.push_str("\n ");
        }
        write!(out, " {b:02x}").unwrap();
    }
    writeln!(out).unwrap();
    write!(out, "{}", netser::trace::layout(value).unwrap()).unwrap();
    out
}

// 1. A player input, sent every frame.
#[derive(NetSerialize, Debug, PartialEq)]
struct PlayerInput {
    #[net(bits = 16)]
    sequence: u32,
    #[net(bits = 6)]
    buttons: u8,
    #[net(range = -127..=127)]
    move_x: i8,
    #[net(range = -127..=127)]
    move_y: i8,
    #[net(quantize(min = -180.0, max = 180.0, res = 0.1))]
    yaw: f32,
    #[net(quantize(min = -90.0, max = 90.0, res = 0.1))]
    pitch: f32,
}

#[test]
fn player_input() {
    let v = PlayerInput {
        sequence: 1234,
        buttons: 0b10_0101,
        move_x: -127,
        move_y: 64,
        yaw: 90.0,
        pitch: -45.5,
    };
    insta::assert_snapshot!(render(&v));
}

// 2. The article's rigid body: velocities only when moving.
#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct RigidBody {
    #[net(quantize(-256.0, 256.0, 0.01))]
    position: [f32; 3],
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    at_rest: bool,
    #[net(when = !at_rest, quantize(-32.0, 32.0, 0.01))]
    linear_velocity: [f32; 3],
    #[net(when = !at_rest, quantize(-16.0, 16.0, 0.01))]
    angular_velocity: [f32; 3],
}

fn rigid_body(at_rest: bool) -> RigidBody {
    RigidBody {
        position: [10.0, -2.5, 0.25],
        orientation: [0.0, 0.0, 0.0, 1.0],
        at_rest,
        linear_velocity: if at_rest { [0.0; 3] } else { [1.0, 0.0, -8.0] },
        angular_velocity: if at_rest { [0.0; 3] } else { [0.0, 3.0, 0.0] },
    }
}

#[test]
fn rigid_body_moving() {
    insta::assert_snapshot!(render(&rigid_body(false)));
}

#[test]
fn rigid_body_at_rest() {
    insta::assert_snapshot!(render(&rigid_body(true)));
}

// 3. A snapshot of 64 entities: quantized positions, smallest-three orientations.
#[derive(NetSerialize, Debug, PartialEq, Clone, Copy)]
struct EntityState {
    #[net(quantize(-512.0, 512.0, 0.05))]
    position: [f32; 3],
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    #[net(range = 0..=100)]
    health: u8,
}

#[derive(NetSerialize, Debug, PartialEq)]
#[net(max_bytes = 1200)]
struct Snapshot {
    #[net(bits = 16)]
    tick: u32,
    entities: [EntityState; 64],
}

fn snapshot() -> Snapshot {
    Snapshot {
        tick: 60,
        entities: std::array::from_fn(|i| {
            let f = i as f32;
            EntityState {
                position: [f * 8.0 - 256.0, 0.5, -f * 0.25],
                // No ties between components: a tie may pick another largest index when
                // the decoded value is encoded again.
                orientation: if i % 2 == 0 {
                    [0.0, 0.0, 0.0, 1.0]
                } else {
                    [0.0, 0.6, 0.0, 0.8]
                },
                health: (i as u8 * 3) % 101,
            }
        }),
    }
}

#[test]
fn snapshot_of_64_entities() {
    // 16 + 64 x (3 x 15 + 29 + 7) bits = 5200 bits: 650 bytes, within the budget.
    assert_eq!(Snapshot::MAX_BITS, 5200);
    insta::assert_snapshot!(render(&snapshot()));
}

// 4. The packet types of a connection.
#[derive(NetSerialize, Debug, PartialEq)]
enum Packet {
    ConnectionRequest {
        client_salt: u64,
    },
    Challenge {
        challenge_salt: u64,
        #[net(bits = 10)]
        client_index: u16,
    },
    Input(PlayerInput),
    Keepalive,
    Disconnect {
        #[net(range = 0..=3)]
        reason: u8,
    },
}

#[test]
fn packet_types() {
    let mut out = String::new();
    for p in [
        Packet::ConnectionRequest {
            client_salt: 0x0123_4567_89ab_cdef,
        },
        Packet::Challenge {
            challenge_salt: 1,
            client_index: 1023,
        },
        Packet::Keepalive,
        Packet::Disconnect { reason: 2 },
    ] {
        writeln!(out, "{p:?}\n{}", render(&p)).unwrap();
    }
    insta::assert_snapshot!(out);
}

// 5. A chat message with a bounded string.
#[derive(NetSerialize, Debug, PartialEq)]
struct ChatMessage {
    #[net(range = 0..=7)]
    channel: u8,
    #[net(range = 0..=63)]
    sender: u8,
    #[net(max_len = 140)]
    text: String,
}

#[test]
fn chat_message() {
    insta::assert_snapshot!(render(&ChatMessage {
        channel: 2,
        sender: 17,
        text: "gg wp".into()
    }));
}

// 6. A subset of a scene: only the cubes that changed.
#[derive(NetSerialize, Debug, PartialEq)]
struct CubeState {
    #[net(range = 0..=900)]
    index: u16,
    #[net(quantize(-64.0, 64.0, 0.01))]
    position: [f32; 3],
    interacting: bool,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct SceneUpdate {
    #[net(bits = 16)]
    sequence: u32,
    #[net(max_len = 32)]
    changed: Vec<CubeState>,
}

#[test]
fn scene_subset() {
    let v = SceneUpdate {
        sequence: 7,
        changed: vec![
            CubeState {
                index: 3,
                position: [1.0, 2.0, 3.0],
                interacting: false,
            },
            CubeState {
                index: 900,
                position: [-64.0, 64.0, 0.0],
                interacting: true,
            },
        ],
    };
    insta::assert_snapshot!(render(&v));
}

// 7. Nested generics.
#[derive(NetSerialize, Debug, PartialEq)]
struct Envelope<T> {
    #[net(bits = 16)]
    sequence: u32,
    payload: T,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Tagged<K, V> {
    key: K,
    #[net(max_len = 3)]
    values: Vec<V>,
}

#[test]
fn nested_generics() {
    let v = Envelope {
        sequence: 65535,
        payload: Tagged {
            key: Some(ChatMessage {
                channel: 1,
                sender: 2,
                text: "hi".into(),
            }),
            values: vec![Envelope {
                sequence: 1,
                payload: true,
            }],
        },
    };
    insta::assert_snapshot!(render(&v));
}

// 8. An inventory: a bounded map with ranged values.
#[derive(NetSerialize, Debug, PartialEq)]
struct Inventory {
    #[net(bits = 20)]
    gold: u32,
    #[net(max_len = 16, range = 1..=99)]
    stacks: BTreeMap<u16, u8>,
}

#[test]
fn inventory() {
    let v = Inventory {
        gold: 999_999,
        stacks: BTreeMap::from([(3, 99), (1001, 1)]),
    };
    insta::assert_snapshot!(render(&v));
}

// 9. A server info block: checks and alignment before byte-sized data.
#[derive(NetSerialize, Debug, PartialEq)]
struct ServerInfo {
    #[net(range = 0..=64)]
    players: u8,
    #[net(check = 0x5E4F_0001, max_len = 32)]
    name: String,
    #[net(align)]
    build: u32,
    password: bool,
}

#[test]
fn server_info() {
    insta::assert_snapshot!(render(&ServerInfo {
        players: 12,
        name: "eu-1".into(),
        build: 0xdead_beef,
        password: true
    }));
}

// 10. A weapon event with optional quantized data and a nested enum.
#[derive(NetSerialize, Debug, PartialEq)]
enum Weapon {
    Rifle,
    Shotgun {
        #[net(range = 1..=12)]
        pellets: u8,
    },
}

#[derive(NetSerialize, Debug, PartialEq)]
struct FireEvent {
    weapon: Weapon,
    #[net(quantize(0.0, 1.0, 0.01))]
    spread: Option<f32>,
    #[net(range = 0..=63, max_len = 4)]
    hits: Vec<Option<u8>>,
}

#[test]
fn fire_event() {
    let v = FireEvent {
        weapon: Weapon::Shotgun { pellets: 8 },
        spread: Some(0.25),
        hits: vec![Some(5), None, Some(63)],
    };
    insta::assert_snapshot!(render(&v));
}
