//! The derive costs nothing: derived encode and decode against hand-written
//! functions of the same schemas, in one run (the ratio should stay within 1.05).
//!
//! `cargo bench -p netser --bench derive`
#![allow(missing_docs)] // criterion's generated entry points

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netser::{Decoder, Encoder, NetSerialize, Quantize, ReadStream, Result, WriteStream};

const POSITION: Quantize = Quantize::new(-512.0, 512.0, 0.05);

/// One entity of a snapshot: quantized position, smallest-three orientation, health.
#[derive(NetSerialize, Clone, Copy, Debug, PartialEq)]
struct Entity {
    #[net(quantize(-512.0, 512.0, 0.05))]
    position: [f32; 3],
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    #[net(range = 0..=100)]
    health: u8,
    moving: bool,
    #[net(when = *moving, quantize(-512.0, 512.0, 0.05))]
    velocity: [f32; 3],
}

/// A snapshot of 64 entities.
#[derive(NetSerialize, Clone, Debug, PartialEq)]
#[net(max_bytes = 1200)]
struct Snapshot {
    #[net(bits = 16)]
    tick: u32,
    entities: [Entity; 64],
}

fn write_entity<E: Encoder>(e: &mut E, v: &Entity) -> Result<()> {
    for p in v.position {
        e.write_compressed_f32(p, &POSITION)?;
    }
    e.write_quat(v.orientation, 9)?;
    e.write_int(v.health, 0, 100)?;
    e.write_bool(v.moving)?;
    if v.moving {
        for p in v.velocity {
            e.write_compressed_f32(p, &POSITION)?;
        }
    }
    Ok(())
}

fn write_snapshot<E: Encoder>(e: &mut E, v: &Snapshot) -> Result<()> {
    e.write_uint_bits(v.tick, 16)?;
    v.entities.iter().try_for_each(|x| write_entity(e, x))
}

fn read_entity<D: Decoder>(d: &mut D) -> Result<Entity> {
    let mut position = [0.0; 3];
    for p in &mut position {
        *p = d.read_compressed_f32(&POSITION)?;
    }
    let orientation = d.read_quat(9)?;
    let health = d.read_int(0, 100)?;
    let moving = d.read_bool()?;
    let mut velocity = [0.0; 3];
    if moving {
        for p in &mut velocity {
            *p = d.read_compressed_f32(&POSITION)?;
        }
    }
    Ok(Entity {
        position,
        orientation,
        health,
        moving,
        velocity,
    })
}

fn read_snapshot<D: Decoder>(d: &mut D) -> Result<Snapshot> {
    let tick = d.read_uint_bits(16)?;
    let mut entities = [Entity {
        position: [0.0; 3],
        orientation: [0.0; 4],
        health: 0,
        moving: false,
        velocity: [0.0; 3],
    }; 64];
    for x in &mut entities {
        *x = read_entity(d)?;
    }
    Ok(Snapshot { tick, entities })
}

fn snapshot() -> Snapshot {
    Snapshot {
        tick: 600,
        entities: std::array::from_fn(|i| {
            let f = i as f32;
            Entity {
                position: [f * 7.5 - 240.0, 1.25, -f],
                orientation: [0.0, 0.6, 0.0, 0.8],
                health: (i % 101) as u8,
                moving: i % 3 != 0,
                velocity: [f * 0.5, 0.0, -2.0],
            }
        }),
    }
}

fn bench(c: &mut Criterion) {
    let value = snapshot();
    let mut buf = vec![0u8; 2048];
    let len = value.encode_to_slice(&mut buf).unwrap();
    let bytes = buf[..len].to_vec();
    // Same bytes both ways, or the comparison means nothing.
    let mut hand = vec![0u8; 2048];
    let mut w = WriteStream::new(&mut hand);
    write_snapshot(&mut w, &value).unwrap();
    let hand_len = w.finish();
    assert_eq!(&hand[..hand_len], &bytes[..]);
    assert_eq!(
        read_snapshot(&mut ReadStream::new(&bytes)).unwrap(),
        Snapshot::decode_from_slice(&bytes).unwrap()
    );

    let mut g = c.benchmark_group("snapshot_64");
    g.throughput(Throughput::Bytes(len as u64));
    g.bench_function("encode/derived", |b| {
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            black_box(&value).encode(&mut w).unwrap();
            black_box(w.finish())
        })
    });
    g.bench_function("encode/hand_written", |b| {
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            write_snapshot(&mut w, black_box(&value)).unwrap();
            black_box(w.finish())
        })
    });
    g.bench_function("decode/derived", |b| {
        b.iter(|| Snapshot::decode(&mut ReadStream::new(black_box(&bytes))).unwrap())
    });
    g.bench_function("decode/hand_written", |b| {
        b.iter(|| read_snapshot(&mut ReadStream::new(black_box(&bytes))).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
