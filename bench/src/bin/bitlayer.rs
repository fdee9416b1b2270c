//! The bit layer's mixed-width workload (the one of `cargo bench -p netser --bench
//! bits`), run a given number of times and nothing else, for instruction and branch
//! counts under callgrind, which a loaded machine does not disturb:
//!
//! ```sh
//! B=target/release/bitlayer
//! for n in 0 100; do valgrind --tool=callgrind --branch-sim=yes $B write $n; done
//! ```
//!
//! The difference between the two runs, divided by `100 * 4096`, is the cost per value.
//! Each operation is its own function, never inlined, so that adding one does not
//! change how the others compile.
//! `write` and `read` time [`BitWriter`] and [`BitReader`]; `stream-write` and
//! `stream-read` the same values through [`WriteStream`] and [`ReadStream`];
//! `write-plain` is `write` without `black_box` on each value (a variant, not the
//! bench's loop); `floor-write`, `floor-byte-write`, `floor-read` and `floor-read-exact` run the
//! bench's unchecked floors (`netser/benches/bits/floor.rs`, not netser).

use std::hint::black_box;

use netser::bits::{BitReader, BitWriter};
use netser::{Decoder, Encoder, ReadStream, WriteStream};

/// The unchecked floors of the criterion bench (not netser), the same source.
#[path = "../../../netser/benches/bits/floor.rs"]
mod floor;

/// Widths a game packet mixes (as the criterion bench).
const WIDTHS: [u32; 12] = [1, 3, 5, 7, 10, 12, 16, 18, 24, 32, 48, 64];
const VALUES: usize = 4096;

fn values() -> Vec<(u64, u32)> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..VALUES)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = WIDTHS[i % WIDTHS.len()];
            (if bits == 64 { x } else { x & ((1 << bits) - 1) }, bits)
        })
        .collect()
}

const USAGE: &str = "usage: bitlayer write|read|stream-write|stream-read|write-plain|floor-write|floor-byte-write|floor-read|floor-read-exact N";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (op, n) = match args.as_slice() {
        [op, n] => (op.as_str(), n.parse::<usize>().expect("a count")),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let values = values();
    let total: u64 = values.iter().map(|&(_, b)| b as u64).sum();
    let mut buf = vec![0u8; (total as usize).div_ceil(8) + 8];
    let mut w = BitWriter::new(&mut buf);
    for &(v, bits) in &values {
        w.write_bits(v, bits).expect("room");
    }
    let len = w.finish();
    let packet = buf[..len].to_vec();
    match op {
        "write" => write(&values, &mut buf, n),
        "stream-write" => stream_write(&values, &mut buf, n),
        "write-plain" => write_plain(&values, &mut buf, n),
        "read" => read(&values, &packet, n),
        "stream-read" => stream_read(&values, &packet, n),
        "floor-write" => floor_write(&values, n),
        "floor-byte-write" => floor_byte_write(&values, n),
        "floor-read" => floor_read(&values, &packet, n, false),
        "floor-read-exact" => floor_read(&values, &packet, n, true),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
}

#[inline(never)]
fn write(values: &[(u64, u32)], buf: &mut [u8], n: usize) {
    for _ in 0..n {
        let mut w = BitWriter::new(buf);
        for &(v, bits) in values {
            w.write_bits(black_box(v), bits).expect("room");
        }
        black_box(w.finish());
    }
}

/// As `write`, the values not passed through `black_box` (a variant beside the
/// bench's loop, not it).
#[inline(never)]
fn write_plain(values: &[(u64, u32)], buf: &mut [u8], n: usize) {
    for _ in 0..n {
        let mut w = BitWriter::new(buf);
        for &(v, bits) in values {
            w.write_bits(v, bits).expect("room");
        }
        black_box(w.finish());
    }
}

#[inline(never)]
fn stream_write(values: &[(u64, u32)], buf: &mut [u8], n: usize) {
    for _ in 0..n {
        let mut w = WriteStream::new(buf);
        for &(v, bits) in values {
            w.write_bits(black_box(v), bits).expect("room");
        }
        black_box(w.finish());
    }
}

#[inline(never)]
fn read(values: &[(u64, u32)], packet: &[u8], n: usize) {
    let mut acc = 0u64;
    for _ in 0..n {
        let mut r = BitReader::new(black_box(packet));
        for &(_, bits) in values {
            acc ^= r.read_bits(bits).expect("bits");
        }
    }
    black_box(acc);
}

#[inline(never)]
fn stream_read(values: &[(u64, u32)], packet: &[u8], n: usize) {
    let mut acc = 0u64;
    for _ in 0..n {
        let mut r = ReadStream::new(black_box(packet));
        for &(_, bits) in values {
            acc ^= r.read_bits(bits).expect("bits");
        }
    }
    black_box(acc);
}

#[inline(never)]
fn floor_write(values: &[(u64, u32)], n: usize) {
    let mut words = Box::new([0u64; floor::BYTES / 8]);
    for _ in 0..n {
        let mut w = floor::WordWriter::new(&mut words);
        for &(v, bits) in values {
            w.write(black_box(v), bits);
        }
        black_box(w.finish());
    }
}

#[inline(never)]
fn floor_byte_write(values: &[(u64, u32)], n: usize) {
    let mut bytes = Box::new([0u8; floor::BYTES + 8]);
    for _ in 0..n {
        let mut w = floor::ByteWriter {
            buf: &mut bytes,
            acc: 0,
            pos: 0,
        };
        for &(v, bits) in values {
            w.write(black_box(v), bits);
        }
        black_box(w.finish());
    }
}

#[inline(never)]
fn floor_read(values: &[(u64, u32)], packet: &[u8], n: usize, exact: bool) {
    let mut padded = Box::new([0u8; floor::BYTES + 8]);
    padded[..packet.len()].copy_from_slice(packet);
    let mut acc = 0u64;
    for _ in 0..n {
        let mut r = floor::WindowReader {
            buf: black_box(&padded),
            pos: 0,
        };
        if exact {
            for &(_, bits) in values {
                acc ^= r.read_exact(bits);
            }
        } else {
            for &(_, bits) in values {
                acc ^= r.read(bits);
            }
        }
    }
    black_box(acc);
}
