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
//! `write` and `read` time [`BitWriter`] and [`BitReader`]; `stream-write` and
//! `stream-read` the same values through [`WriteStream`] and [`ReadStream`].

use std::hint::black_box;

use netser::bits::{BitReader, BitWriter};
use netser::{Decoder, Encoder, ReadStream, WriteStream};

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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (op, n) = match args.as_slice() {
        [op, n] => (op.as_str(), n.parse::<usize>().expect("a count")),
        _ => {
            eprintln!("usage: bitlayer write|read|stream-write|stream-read N");
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
    match op {
        "write" => {
            for _ in 0..n {
                let mut w = BitWriter::new(&mut buf);
                for &(v, bits) in &values {
                    w.write_bits(black_box(v), bits).expect("room");
                }
                black_box(w.finish());
            }
        }
        "stream-write" => {
            for _ in 0..n {
                let mut w = WriteStream::new(&mut buf);
                for &(v, bits) in &values {
                    w.write_bits(black_box(v), bits).expect("room");
                }
                black_box(w.finish());
            }
        }
        "stream-read" => {
            let packet = buf[..len].to_vec();
            let mut acc = 0u64;
            for _ in 0..n {
                let mut r = ReadStream::new(black_box(&packet));
                for &(_, bits) in &values {
                    acc ^= r.read_bits(bits).expect("bits");
                }
            }
            black_box(acc);
        }
        "read" => {
            let packet = buf[..len].to_vec();
            let mut acc = 0u64;
            for _ in 0..n {
                let mut r = BitReader::new(black_box(&packet));
                for &(_, bits) in &values {
                    acc ^= r.read_bits(bits).expect("bits");
                }
            }
            black_box(acc);
        }
        _ => {
            eprintln!("usage: bitlayer write|read|stream-write|stream-read N");
            std::process::exit(2);
        }
    }
}
