//! The batch encode reads integer fields in place where it packs them and checks them
//! there, after composing the block's words and before storing any of them: a bad
//! integer (ungated, or under a gate that is on) at any lane of a full or a short block
//! gives the element-by-element path's error (index, field, bit), and nothing of the
//! block is written (the bytes past the stream's end stay as they were); under a gate
//! that is off, an integer outside its range is not sent and not an error.
#![allow(missing_docs)]

use netser::trace::{NoTrace, Tracer};
use netser::{Encoder, Error, NetSerialize, WriteStream};

/// Listens to nothing, but keeps the derive off its packed and batch paths.
struct Listener;
impl Tracer for Listener {}

#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Unit {
    #[net(range = 0..=4095)]
    id: u16,
    #[net(quantize(min = -8.0, max = 8.0, res = 0.01))]
    x: f32,
    on: bool,
    #[net(when = *on, range = -50..=50)]
    level: i8,
    #[net(bits = 5)]
    small: u8,
    #[net(range = 0..=100)]
    health: u8,
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Holder {
    flag: bool,
    #[net(max_len = 80)]
    units: Vec<Unit>,
}

fn unit(i: usize) -> Unit {
    Unit {
        id: (i * 37 % 4096) as u16,
        x: (i as f32 * 0.37) % 8.0 - 4.0,
        on: !i.is_multiple_of(3),
        // Outside -50..=50 where the gate is off: not sent, not an error.
        level: if i.is_multiple_of(3) {
            127
        } else {
            (i % 101) as i8 - 50
        },
        small: (i % 32) as u8,
        health: (i % 101) as u8,
    }
}

/// The stream's bytes (the whole buffer, marker bytes past its end included), its bit
/// position, or the error.
fn write<T: NetSerialize, R: Tracer>(h: &T, tracer: R) -> Result<(Vec<u8>, u64), Error> {
    let mut buf = vec![0xA5u8; 2048];
    let mut w = WriteStream::with_tracer(&mut buf, tracer);
    h.encode(&mut w)?;
    let bits = Encoder::bit_position(&w);
    let n = w.finish();
    assert!(
        buf[n..].iter().all(|&b| b == 0xA5),
        "bytes past the end changed"
    );
    Ok((buf, bits))
}

/// `field` of element `bad` made bad in a collection of `len`.
fn check(len: usize, bad: usize, field: &str) {
    let mut units: Vec<Unit> = (0..len).map(unit).collect();
    let u = &mut units[bad];
    match field {
        "id" => u.id = 4096,
        "level" => {
            u.on = true;
            u.level = -51;
        }
        "small" => u.small = 32,
        "health" => u.health = 101,
        _ => unreachable!(),
    }
    let h = Holder { flag: true, units };
    let fast = write(&h, NoTrace).unwrap_err();
    let slow = write(&h, Listener).unwrap_err();
    assert_eq!(fast.path(), format!("Holder.units[{bad}].{field}"));
    assert_eq!(format!("{:?}", fast.kind()), format!("{:?}", slow.kind()));
    assert_eq!(fast.bit(), slow.bit(), "{len} {bad} {field}");
    assert_eq!(fast.to_string(), slow.to_string());
}

#[test]
fn a_bad_integer_at_any_lane_is_the_element_by_element_error() {
    for len in [1usize, 5, 15, 16, 17, 31, 32, 33, 64, 70] {
        for bad in 0..len {
            for field in ["id", "level", "small", "health"] {
                check(len, bad, field);
            }
        }
    }
}

#[test]
fn gated_off_integers_out_of_range_are_not_sent() {
    for len in [0usize, 1, 15, 16, 17, 64, 70] {
        let h = Holder {
            flag: false,
            units: (0..len).map(unit).collect(),
        };
        let fast = write(&h, NoTrace).unwrap();
        assert_eq!(fast, write(&h, Listener).unwrap(), "{len}");
        // The flag, the length (0..=80: 7 bits), then per unit the id (12 bits), x (1601
        // steps: 11), on, small (5) and health (7), and the level (101 values: 7) where
        // the gate is on.
        let on = (0..len).filter(|i| !i.is_multiple_of(3)).count() as u64;
        assert_eq!(fast.1, 1 + 7 + 36 * len as u64 + 7 * on);
    }
}

// A nested struct's integers are read and checked in place by its `pack_fixed_column`.
#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Cell {
    #[net(range = -20..=20)]
    dx: i16,
    #[net(bits = 3)]
    tag: u8,
}

#[derive(NetSerialize, Debug, Clone, PartialEq, Default)]
struct Tile {
    #[net(range = 0..=9)]
    kind: u8,
    cell: Cell,
    pair: [Cell; 2],
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Board {
    #[net(max_len = 80)]
    tiles: Vec<Tile>,
}

fn tile(i: usize) -> Tile {
    let cell = |j: usize| Cell {
        dx: (j % 41) as i16 - 20,
        tag: (j % 8) as u8,
    };
    Tile {
        kind: (i % 10) as u8,
        cell: cell(i * 7),
        pair: [cell(i * 3 + 1), cell(i * 5 + 2)],
    }
}

#[test]
fn nested_integers_batch_as_element_by_element() {
    for len in [0usize, 1, 15, 16, 17, 33, 70] {
        let b = Board {
            tiles: (0..len).map(tile).collect(),
        };
        let fast = write(&b, NoTrace).unwrap();
        assert_eq!(fast, write(&b, Listener).unwrap(), "{len}");
        // The length (0..=80: 7 bits), then per tile the kind (4 bits) and three cells
        // of dx (41 values: 6 bits) and tag (3).
        assert_eq!(fast.1, 7 + (4 + 3 * 9) * len as u64);
    }
}

#[test]
fn a_bad_nested_integer_at_any_lane_is_the_element_by_element_error() {
    let fields = ["cell.dx", "cell.tag", "pair[0].dx", "pair[1].tag"];
    for len in [1usize, 5, 16, 17, 33] {
        for bad in 0..len {
            for field in fields {
                let mut tiles: Vec<Tile> = (0..len).map(tile).collect();
                let t = &mut tiles[bad];
                match field {
                    "cell.dx" => t.cell.dx = 21,
                    "cell.tag" => t.cell.tag = 8,
                    "pair[0].dx" => t.pair[0].dx = -21,
                    "pair[1].tag" => t.pair[1].tag = 255,
                    _ => unreachable!(),
                }
                let b = Board { tiles };
                let fast = write(&b, NoTrace).unwrap_err();
                let slow = write(&b, Listener).unwrap_err();
                assert_eq!(fast.path(), format!("Board.tiles[{bad}].{field}"));
                assert_eq!(fast.path(), slow.path(), "{len} {bad} {field}");
                assert_eq!(fast.bit(), slow.bit(), "{len} {bad} {field}");
                assert_eq!(fast.to_string(), slow.to_string());
            }
        }
    }
}
