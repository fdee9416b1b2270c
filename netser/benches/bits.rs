//! Bit layer throughput: writer and reader on mixed widths, aligned bytes against
//! memcpy, and CRC32 framing of a 1200-byte packet.
//!
//! `cargo bench -p netser --bench bits`
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netser::bits::{BitReader, BitWriter};
use netser::framing::{read_packet_with, write_packet_with};
use netser::{Decoder, Encoder, ReadStream, WriteStream};

#[path = "bits/floor.rs"]
mod floor;

/// Widths a game packet mixes: flags, small ranges, quantized floats, ids, raw words.
const WIDTHS: [u32; 12] = [1, 3, 5, 7, 10, 12, 16, 18, 24, 32, 48, 64];
const VALUES: usize = 4096;

fn values() -> (Vec<(u64, u32)>, u64) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut total_bits = 0;
    let v = (0..VALUES)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = WIDTHS[i % WIDTHS.len()];
            total_bits += bits as u64;
            (if bits == 64 { x } else { x & ((1 << bits) - 1) }, bits)
        })
        .collect();
    (v, total_bits)
}

fn bit_layer(c: &mut Criterion) {
    let (values, total_bits) = values();
    let mut buf = vec![0u8; (total_bits as usize).div_ceil(8) + 8];
    let mut g = c.benchmark_group("mixed_widths");
    g.throughput(Throughput::Bytes(total_bits / 8));
    g.bench_function("bitwriter_write", |b| {
        b.iter(|| {
            let mut w = BitWriter::new(&mut buf);
            for &(v, bits) in &values {
                w.write_bits(black_box(v), bits).unwrap();
            }
            black_box(w.finish())
        })
    });
    // A variant beside the loop above, not the target's loop: the values not passed
    // through `black_box` (which stores and reloads each one).
    g.bench_function(
        "bitwriter_write_plain (variant: values not black_boxed)",
        |b| {
            b.iter(|| {
                let mut w = BitWriter::new(&mut buf);
                for &(v, bits) in &values {
                    w.write_bits(v, bits).unwrap();
                }
                black_box(w.finish())
            })
        },
    );
    g.bench_function("writestream_write", |b| {
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            for &(v, bits) in &values {
                w.write_bits(black_box(v), bits).unwrap();
            }
            black_box(w.finish())
        })
    });
    let len = {
        let mut w = BitWriter::new(&mut buf);
        for &(v, bits) in &values {
            w.write_bits(v, bits).unwrap();
        }
        w.finish()
    };
    let packet = &buf[..len];
    g.bench_function("bitreader_read", |b| {
        b.iter(|| {
            let mut r = BitReader::new(black_box(packet));
            let mut acc = 0u64;
            for &(_, bits) in &values {
                acc ^= r.read_bits(bits).unwrap();
            }
            black_box(acc)
        })
    });
    g.bench_function("readstream_read", |b| {
        b.iter(|| {
            let mut r = ReadStream::new(black_box(packet));
            let mut acc = 0u64;
            for &(_, bits) in &values {
                acc ^= r.read_bits(bits).unwrap();
            }
            black_box(acc)
        })
    });
    floors(&mut g, &values, packet);
    g.finish();

    // Ranged ints: the check, the subtraction and the computed width per value.
    let ints: Vec<i32> = values
        .iter()
        .map(|&(v, _)| (v % 2001) as i32 - 1000)
        .collect();
    let mut g = c.benchmark_group("ranged_int");
    g.throughput(Throughput::Elements(ints.len() as u64));
    g.bench_function("write_int_-1000..=1000", |b| {
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            for &v in &ints {
                w.write_int(black_box(v), -1000, 1000).unwrap();
            }
            black_box(w.finish())
        })
    });
    let len = {
        let mut w = WriteStream::new(&mut buf);
        for &v in &ints {
            w.write_int(v, -1000, 1000).unwrap();
        }
        w.finish()
    };
    let packet = buf[..len].to_vec();
    g.bench_function("read_int_-1000..=1000", |b| {
        b.iter(|| {
            let mut r = ReadStream::new(black_box(&packet));
            let mut acc = 0i32;
            for _ in 0..ints.len() {
                acc ^= r.read_int(-1000, 1000).unwrap();
            }
            black_box(acc)
        })
    });
    g.finish();
}

/// The unchecked floors (`floor.rs`, not netser) in the same harness and loop shape,
/// each checked once to produce the bytes and values of netser's writer and reader.
fn floors(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    values: &[(u64, u32)],
    packet: &[u8],
) {
    let mut words = Box::new([0u64; floor::BYTES / 8]);
    let mut bytes = Box::new([0u8; floor::BYTES + 8]);
    let word_floor = |words: &mut [u64; floor::BYTES / 8]| {
        let mut w = floor::WordWriter::new(words);
        for &(v, bits) in values {
            w.write(black_box(v), bits);
        }
        w.finish()
    };
    let byte_floor = |buf: &mut [u8; floor::BYTES + 8]| {
        let mut w = floor::ByteWriter {
            buf,
            acc: 0,
            pos: 0,
        };
        for &(v, bits) in values {
            w.write(black_box(v), bits);
        }
        w.finish()
    };
    // The floors write what netser writes.
    let len = word_floor(&mut words) as usize;
    let flat: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(&flat[..len], packet);
    bytes.fill(0);
    let len = byte_floor(&mut bytes) as usize;
    assert_eq!(&bytes[..len], packet);

    g.bench_function("floor_word_write (unchecked, not netser)", |b| {
        b.iter(|| black_box(word_floor(&mut words)))
    });
    g.bench_function("floor_byte_write (unchecked, not netser)", |b| {
        b.iter(|| black_box(byte_floor(&mut bytes)))
    });

    let mut padded = Box::new([0u8; floor::BYTES + 8]);
    padded[..packet.len()].copy_from_slice(packet);
    let expected = values
        .iter()
        .fold(0u64, |acc, &(v, bits)| acc ^ if bits <= 57 { v } else { 0 });
    let mut r = floor::WindowReader {
        buf: &padded,
        pos: 0,
    };
    let exact = values.iter().all(|&(v, bits)| r.read_exact(bits) == v);
    assert!(exact);
    let mut r = floor::WindowReader {
        buf: &padded,
        pos: 0,
    };
    let narrow = values.iter().fold(0u64, |acc, &(_, bits)| {
        let x = r.read(bits);
        acc ^ if bits <= 57 { x } else { 0 }
    });
    assert_eq!(narrow, expected);

    floor_read(
        g,
        "floor_window_read (unchecked, <= 57 bits exact, not netser)",
        &padded,
        values,
        |r, bits| r.read(bits),
    );
    floor_read(
        g,
        "floor_window_read_exact (unchecked, ninth byte past 57 bits, not netser)",
        &padded,
        values,
        |r, bits| r.read_exact(bits),
    );
}

/// One unchecked floor reader's loop (a generic, so each reader is inlined into its own).
fn floor_read<F: Fn(&mut floor::WindowReader<'_>, u32) -> u64>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    padded: &[u8; floor::BYTES + 8],
    values: &[(u64, u32)],
    read: F,
) {
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut r = floor::WindowReader {
                buf: black_box(padded),
                pos: 0,
            };
            let mut acc = 0u64;
            for &(_, bits) in values {
                acc ^= read(&mut r, bits);
            }
            black_box(acc)
        })
    });
}

fn bytes_vs_memcpy(c: &mut Criterion) {
    for size in [1024usize, 16384] {
        bytes_run(c, size);
    }
}

/// One aligned run of `size` bytes in a fresh stream (3 bits before it, so the stream
/// aligns first), against a plain copy of the same bytes.
fn bytes_run(c: &mut Criterion, size: usize) {
    let data: Vec<u8> = (0..size as u32).map(|i| (i * 31) as u8).collect();
    let mut buf = vec![0u8; size + 64];
    let mut out = vec![0u8; size];
    let mut g = c.benchmark_group(format!("bytes_{size}"));
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            buf[1..size + 1].copy_from_slice(black_box(&data));
            black_box(&buf);
        })
    });
    g.bench_function("write_bytes", |b| {
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            w.write_bits(5, 3).unwrap();
            w.write_bytes(black_box(&data)).unwrap();
            black_box(w.finish())
        })
    });
    let len = {
        let mut w = WriteStream::new(&mut buf);
        w.write_bits(5, 3).unwrap();
        w.write_bytes(&data).unwrap();
        w.finish()
    };
    let packet = buf[..len].to_vec();
    g.bench_function("read_bytes", |b| {
        b.iter(|| {
            let mut r = ReadStream::new(black_box(&packet));
            r.read_bits(3).unwrap();
            r.read_bytes(&mut out).unwrap();
            black_box(&out);
        })
    });
    g.finish();
}

fn framing(c: &mut Criterion) {
    const ID: u64 = 0x6E65_7473_6572_0001;
    let payload: Vec<u8> = (0..1192u32).map(|i| (i * 7) as u8).collect();
    let mut buf = vec![0u8; 1200];
    let mut out = vec![0u8; payload.len()];
    let len = write_packet_with(ID, &mut buf, |w| w.write_bytes(&payload)).unwrap();
    assert_eq!(len, 1200);
    let packet = buf.clone();
    let mut g = c.benchmark_group("framing_1200");
    g.throughput(Throughput::Bytes(1200));
    g.bench_function("write_packet", |b| {
        b.iter(|| {
            black_box(
                write_packet_with(ID, &mut buf, |w| w.write_bytes(black_box(&payload))).unwrap(),
            )
        })
    });
    g.bench_function("read_packet", |b| {
        b.iter(|| {
            read_packet_with(ID, black_box(&packet), |r| r.read_bytes(&mut out)).unwrap();
            black_box(&out);
        })
    });
    g.finish();
}

criterion_group!(benches, bit_layer, bytes_vs_memcpy, framing);
criterion_main!(benches);
