//! A counting global allocator checks that delta decoding allocates no more than
//! absolute decoding may, whatever the input says: a delta names a length, and the
//! decoder builds at most `max_len` elements, reserving no more than the baseline's
//! elements plus what the input left can hold. Bound: `T::MAX_HEAP_BYTES`, plus, for a
//! field sent absolute and unchanged (strings, maps), its baseline's absolute encoding
//! re-read (at most twice `T::MAX_BYTES` while its buffer grows), plus an error value.
#![allow(missing_docs)]

#[path = "delta/types.rs"]
mod types;

#[path = "delta/fuzz_target.rs"]
#[allow(dead_code)]
mod delta_target;

use netser::{NetDelta, NetSerialize, ReadStream};
use tracking_allocator::{AllocationRegistry, Allocator};
use types::{player, Player, Scene};

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

/// Most bytes an `Error` takes (its box and a path a few segments deep).
const ERROR_BYTES: usize = 1024;

#[path = "support/live_heap.rs"]
mod live_heap;
use live_heap::{Counter, STATE};

/// The most bytes live at once while `f` runs (its result dropped inside).
fn peak<R>(f: impl FnOnce() -> R) -> usize {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        AllocationRegistry::set_global_tracker(Counter).expect("one tracker");
        AllocationRegistry::enable_tracking();
    });
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.blocks.reserve(1 << 16);
        s.live = 0;
        s.peak = 0;
        s.active = true;
    });
    drop(f());
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.active = false;
        s.blocks.clear();
        s.peak
    })
}

/// The seeds' deltas with each byte set to 0xff, all-ones and all-zero runs, and a
/// pseudo-random stream.
fn inputs() -> Vec<Vec<u8>> {
    let mut out = vec![vec![0xff; 4096], vec![0; 4096], vec![0xff; 3], vec![]];
    for (_, seed) in delta_target::seeds() {
        for i in 0..seed.len() {
            let mut s = seed.clone();
            s[i] = 0xff;
            out.push(s[1..].to_vec());
        }
        out.push(seed[1..].to_vec());
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for len in [8, 64, 512, 4096] {
        out.push(
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect(),
        );
    }
    out
}

fn check<T: NetDelta>(name: &str, baseline: &T) -> usize {
    let bound = (T::MAX_HEAP_BYTES + 2 * T::MAX_BYTES) as usize + ERROR_BYTES;
    let mut worst = 0;
    for input in inputs() {
        let p = peak(|| T::decode_delta(baseline, &mut ReadStream::new(&input)));
        assert!(
            p <= bound,
            "{name}: {p} bytes over {bound} for {input:02x?}"
        );
        worst = worst.max(p);
    }
    worst
}

#[test]
fn delta_decoding_allocates_within_the_bound() {
    // An empty baseline: every element would be new, so only the input can pay for them.
    let empty = Scene {
        frame: 0,
        cubes: vec![],
    };
    let worst = check("Scene against an empty scene", &empty);
    println!(
        "Scene: at most {worst} bytes (MAX_HEAP_BYTES {})",
        Scene::MAX_HEAP_BYTES
    );
    // A full baseline: unchanged elements are rebuilt from it, up to max_len.
    let full = Scene {
        frame: 0,
        cubes: (0..1024)
            .map(|i| types::cube(i as f32 * 0.1, 0.0, 0.0))
            .collect(),
    };
    check("Scene against a full scene", &full);
    let worst = check("Player", &player());
    println!(
        "Player: at most {worst} bytes (MAX_HEAP_BYTES {})",
        Player::MAX_HEAP_BYTES
    );
}

#[test]
fn a_lying_length_reserves_nothing_the_input_cannot_pay_for() {
    // `1` scene changed, `0` frame unchanged, `1` cubes changed, length 1024 in 11 bits
    // (the most max_len allows), the index mode bit, then no cube.
    let empty = Scene {
        frame: 0,
        cubes: vec![],
    };
    let input = [0b0000_0101, 0b0010_0000];
    let e = Scene::decode_delta(&empty, &mut ReadStream::new(&input)).unwrap_err();
    assert!(
        matches!(e.kind(), netser::ErrorKind::EndOfBuffer { .. }),
        "{e}"
    );
    assert_eq!(e.path(), "Scene.cubes[0].x");
    let p = peak(|| Scene::decode_delta(&empty, &mut ReadStream::new(&input)));
    // 1024 cubes would take 1024 * 32 bytes; the input holds none of them.
    assert!(p <= ERROR_BYTES, "{p}");
}
