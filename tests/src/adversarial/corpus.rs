//! Seed corpora, generated from the real writers: encoded values of the representative
//! types and framed packets for the decode targets, and byte strings that the script
//! targets' `Arbitrary` reads as scripts mixing every operation.

use std::collections::{HashMap, HashSet};

use netser::framing::write_packet;
use netser::NetSerialize;

use super::decode::PROTOCOL_ID;
use super::types::{Entity, Event, Numeric, Snapshot};

/// The fuzz targets, by name (as in `fuzz/fuzz_targets/` and `fuzz/corpus/`).
pub const TARGETS: [&str; 7] = [
    "decode_derived",
    "decode_numeric",
    "endpoint_script",
    "chunk_script",
    "connection_script",
    "netcode_packets",
    "handshake_script",
];

/// Runs target `name` on `data`.
///
/// # Panics
/// When the target finds a defect, or on an unknown name.
pub fn run(name: &str, data: &[u8]) {
    use arbitrary::{Arbitrary, Unstructured};
    match name {
        "decode_derived" => super::decode::decode_derived(data),
        "decode_numeric" => super::decode::decode_numeric(data),
        "endpoint_script" => {
            if let Ok(s) =
                super::script::EndpointScript::arbitrary_take_rest(Unstructured::new(data))
            {
                super::script::run_endpoint_script(&s);
            }
        }
        "chunk_script" => {
            if let Ok(s) = super::script::ChunkScript::arbitrary_take_rest(Unstructured::new(data))
            {
                super::script::run_chunk_script(&s);
            }
        }
        "connection_script" => super::connection::run(data),
        "netcode_packets" => super::netcode::netcode_packets(data),
        "handshake_script" => super::handshake::run(data),
        _ => panic!("no target {name}"),
    }
}

fn entity(i: u16) -> Entity {
    Entity {
        id: i * 97 % 4096,
        position: [f32::from(i) * 1.5, -3.25, 1e6],
        speed: f64::from(i) / 7.0,
        name: i.is_multiple_of(2).then(|| format!("e{i}")),
        flags: (i % 32) as u8,
    }
}

fn snapshot(n: u16) -> Snapshot {
    Snapshot {
        frame: u32::from(n) * 1000 + 7,
        entities: (0..n.min(8)).map(entity).collect(),
        events: (0..n.min(4))
            .map(|k| {
                vec![
                    Event::Ping,
                    Event::Hit((k * 30) as u8, k % 2 == 0),
                    Event::Chat {
                        to: vec![k, 65535],
                        text: "gg ✓".into(),
                    },
                ]
            })
            .collect(),
        scores: (0..n.min(4) as u8)
            .map(|p| (p, i32::from(p) * 250 - 500))
            .collect::<HashMap<_, _>>(),
        seen: (0..n.min(6)).map(|p| p * 11).collect::<HashSet<_>>(),
        last: (n % 2 == 1).then_some(Event::Hit(100, true)),
    }
}

fn tagged(tag: u8, bytes: Vec<u8>) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend(bytes);
    out
}

/// A fixed pseudo-random stream (xorshift), so the script seeds are reproducible.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// The seed inputs of target `name`, each with a file name.
///
/// # Panics
/// On an unknown name.
pub fn seeds(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    match name {
        "decode_derived" => {
            for n in [0u16, 1, 3, 8] {
                out.push((
                    format!("snapshot_{n}"),
                    tagged(0, snapshot(n).to_vec().unwrap()),
                ));
                let mut buf = vec![0u8; 4096];
                let len = write_packet(PROTOCOL_ID, &mut buf, &snapshot(n)).unwrap();
                out.push((format!("framed_{n}"), tagged(4, buf[..len].to_vec())));
                out.push((format!("framed_body_{n}"), tagged(5, buf[4..len].to_vec())));
            }
            out.push(("entity".into(), tagged(1, entity(5).to_vec().unwrap())));
            for (i, e) in [
                Event::Ping,
                Event::Hit(3, true),
                Event::Chat {
                    to: vec![1, 2, 3, 4],
                    text: "hello".into(),
                },
            ]
            .iter()
            .enumerate()
            {
                out.push((format!("event_{i}"), tagged(2, e.to_vec().unwrap())));
            }
            out.push((
                "tuple".into(),
                tagged(
                    3,
                    (Some(7u16), [true, false, true], u64::MAX)
                        .to_vec()
                        .unwrap(),
                ),
            ));
        }
        "decode_numeric" => {
            let values = [
                (0.0, 0.0, 0.0, [0.0, 0.0, 0.0, 1.0]),
                (-1.0, -180.0, -10.0, [1.0, 0.0, 0.0, 0.0]),
                (0.1, 0.1, 3.3, [0.5, -0.5, 0.5, -0.5]),
                (0.05, -90.0, 1.25, [0.0, 0.70710677, 0.0, 0.70710677]),
            ];
            for (i, (level, angle, x, q)) in values.into_iter().enumerate() {
                let v = Numeric {
                    level,
                    angle,
                    x,
                    coarse: q,
                    fine: q,
                };
                out.push((format!("numeric_{i}"), v.to_vec().unwrap()));
            }
        }
        "endpoint_script" | "chunk_script" => {
            for i in 0..6u64 {
                let len = [64, 256, 1024, 2048, 4096, 512][i as usize];
                out.push((
                    format!("script_{i}"),
                    noise(i + 1 + name.len() as u64 * 100, len),
                ));
            }
        }
        "connection_script" => out.extend(super::connection::seeds()),
        "netcode_packets" => out.extend(super::netcode::seeds()),
        "handshake_script" => out.extend(super::handshake::seeds()),
        _ => panic!("no target {name}"),
    }
    out
}
