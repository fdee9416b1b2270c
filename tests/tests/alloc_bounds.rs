//! A counting global allocator checks, for every decoder of representative derived
//! types (floats, quantized floats, quaternions, enums, options, nested bounded
//! collections, strings, maps, sets, arrays, tuples) and the framing, and for the
//! endpoint and the chunk receiver under a flood, that neither a single allocation nor
//! the memory held at any moment exceeds the documented bound, whatever the length
//! prefixes and counts in the input say.
//!
//! Decoders: `T::MAX_HEAP_BYTES` (plus, when decoding fails, the error value: a box and
//! its path, [`ERROR_BYTES`]). Endpoint: `Config::memory_bound()`. Chunk receiver:
//! `slice_size * max_slices` for a buffer, and two buffers with their bitfields in all
//! (the chunk being received and one a jump forward set aside).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use netser::framing::read_packet;
use netser::NetSerialize;
use netser_tests::adversarial::corpus::seeds;
use netser_tests::adversarial::decode::PROTOCOL_ID;
use netser_tests::adversarial::types::{Entity, Event, Numeric, Snapshot};
use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use netser_transport::endpoint::{Config, Endpoint};
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

/// Most bytes an `Error` takes (its box and a path a few segments deep).
const ERROR_BYTES: usize = 1024;

/// What one thread allocated while measuring.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    /// Most bytes live at once (of blocks allocated while measuring).
    peak: usize,
    /// The largest single allocation.
    largest: usize,
    /// Bytes allocated in all.
    total: usize,
    /// Allocations.
    count: usize,
}

#[derive(Default)]
struct State {
    active: bool,
    blocks: HashMap<usize, usize>,
    live: usize,
    usage: Usage,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

struct Counter;

impl AllocationTracker for Counter {
    fn allocated(&self, addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        let _ = STATE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.active {
                    s.blocks.insert(addr, size);
                    s.live += size;
                    s.usage.peak = s.usage.peak.max(s.live);
                    s.usage.largest = s.usage.largest.max(size);
                    s.usage.total += size;
                    s.usage.count += 1;
                }
            }
        });
    }

    fn deallocated(
        &self,
        addr: usize,
        _size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        let _ = STATE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if let Some(size) = s.blocks.remove(&addr) {
                    s.live -= size;
                }
            }
        });
    }
}

/// Runs `f`, counting the allocations this thread makes meanwhile (the result is
/// dropped inside, so its memory counts as live until then).
fn measure<R>(f: impl FnOnce() -> R) -> Usage {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        AllocationRegistry::set_global_tracker(Counter).expect("one tracker");
        AllocationRegistry::enable_tracking();
    });
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.blocks.reserve(1 << 16);
        s.live = 0;
        s.usage = Usage::default();
        s.active = true;
    });
    drop(f());
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.active = false;
        s.blocks.clear();
        s.usage
    })
}

/// Bytes live now (of blocks allocated since `measure` began), on this thread.
fn live() -> usize {
    STATE.with(|s| s.borrow().live)
}

/// Adversarial inputs for a decoder: the seeds, every seed with each byte set to 0xff
/// (length prefixes and counts at their maximum), all-ones and all-zero runs, and a
/// pseudo-random stream.
fn inputs() -> Vec<Vec<u8>> {
    let mut out = vec![vec![0xff; 4096], vec![0; 4096], vec![0xff; 3], vec![]];
    for (_, seed) in seeds("decode_derived")
        .into_iter()
        .chain(seeds("decode_numeric"))
    {
        for i in 0..seed.len() {
            let mut s = seed.clone();
            s[i] = 0xff;
            out.push(s[1..].to_vec());
            s.extend_from_slice(&[0xff; 64]);
            out.push(s);
        }
        out.push(seed[1..].to_vec());
        out.push(seed);
    }
    let mut x = 0x2545_f491_4f6c_dd1du64;
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

/// Decodes every input as `T` and checks the bound; returns the most seen.
fn check_decoder<T: NetSerialize>(name: &str, inputs: &[Vec<u8>]) -> Usage {
    let bound = usize::try_from(T::MAX_HEAP_BYTES).unwrap();
    let mut worst = Usage::default();
    for input in inputs {
        let mut ok = false;
        let usage = measure(|| {
            let r = T::decode_from_slice(input);
            ok = r.is_ok();
            r
        });
        let allowed = if ok { bound } else { bound + ERROR_BYTES };
        assert!(
            usage.peak <= allowed && usage.largest <= allowed.max(ERROR_BYTES),
            "{name}: {usage:?} over {allowed} decoding {} bytes {:02x?}",
            input.len(),
            &input[..input.len().min(32)]
        );
        worst.peak = worst.peak.max(usage.peak);
        worst.largest = worst.largest.max(usage.largest);
        worst.total = worst.total.max(usage.total);
    }
    worst
}

/// An element with one bit on the wire and a kilobyte in memory: allowed, and counted.
#[derive(NetSerialize, Debug)]
struct Slot {
    used: bool,
    // Never read: it is here for the memory it takes.
    #[allow(dead_code)]
    #[net(skip, default = [0; 1024])]
    cache: [u8; 1024],
}

/// Nested rows of elements that take a bit each: costs what it implies.
#[derive(NetSerialize, Debug)]
struct Rows {
    #[net(max_len = 255)]
    rows: Vec<Vec<Slot>>,
}

#[derive(NetSerialize, Debug)]
struct Everything {
    #[net(max_len = 3)]
    boxed: Box<[Entity]>,
    table: Option<(u8, [u16; 4], Option<bool>)>,
    #[net(max_len = 5, range = 0..=9)]
    by_slot: BTreeMap<u8, u8>,
    numeric: Numeric,
    #[net(max_len = 2)]
    events: Vec<Event>,
}

#[test]
fn decoders_stay_within_max_heap_bytes() {
    let inputs = inputs();
    let report = [
        (
            "Snapshot",
            check_decoder::<Snapshot>("Snapshot", &inputs),
            Snapshot::MAX_HEAP_BYTES,
        ),
        (
            "Entity",
            check_decoder::<Entity>("Entity", &inputs),
            Entity::MAX_HEAP_BYTES,
        ),
        (
            "Event",
            check_decoder::<Event>("Event", &inputs),
            Event::MAX_HEAP_BYTES,
        ),
        (
            "Numeric",
            check_decoder::<Numeric>("Numeric", &inputs),
            Numeric::MAX_HEAP_BYTES,
        ),
        (
            "Everything",
            check_decoder::<Everything>("Everything", &inputs),
            Everything::MAX_HEAP_BYTES,
        ),
        (
            "Rows",
            check_decoder::<Rows>("Rows", &inputs),
            Rows::MAX_HEAP_BYTES,
        ),
        (
            "tuple",
            check_decoder::<(Option<u16>, [bool; 3], Box<u64>)>("tuple", &inputs),
            <(Option<u16>, [bool; 3], Box<u64>)>::MAX_HEAP_BYTES,
        ),
    ];
    for (name, usage, bound) in report {
        println!(
            "{name}: peak {} largest {} of MAX_HEAP_BYTES {bound}",
            usage.peak, usage.largest
        );
    }
    // The figures are not vacuous: the all-0xff input drives the lengths to their maxima.
    assert!(report[0].1.peak > 0);
    // Rows: 255 x 255 one-bit slots would be 66 MB; 4 KiB of input can hold 32,768
    // slots' bits, and the decoder reserves no more than the input can hold.
    let slot = std::mem::size_of::<Slot>() as u64;
    assert_eq!(Rows::MAX_HEAP_BYTES, 255 * (24 + 255 * slot));
    assert!(report[5].1.peak as u64 <= 4096 * 8 * slot + 255 * 24 + ERROR_BYTES as u64);
}

/// Encoding a hash map or set sorts references to its entries: one block each, of at
/// most `max_len` references (pairs of them for a map), freed before encode returns;
/// a `BTreeMap` / `BTreeSet` and an empty hash map allocate nothing.
#[test]
fn encoding_a_hash_map_allocates_one_sorted_view() {
    use std::collections::{BTreeSet, HashSet};
    #[derive(NetSerialize)]
    struct Tables {
        #[net(max_len = 64)]
        map: HashMap<u32, u8>,
        #[net(max_len = 64)]
        set: HashSet<u16>,
        #[net(max_len = 64)]
        tree: BTreeMap<u32, u8>,
        #[net(max_len = 64)]
        ordered: BTreeSet<u16>,
    }
    let full = Tables {
        map: (0..64).map(|k| (k * 7, 1)).collect(),
        set: (0..64).collect(),
        tree: (0..64).map(|k| (k, 1)).collect(),
        ordered: (0..64).collect(),
    };
    let mut buf = vec![0u8; full.measure_bits().unwrap().div_ceil(8) as usize];
    let usage = measure(|| full.encode_to_slice(&mut buf).unwrap());
    let word = std::mem::size_of::<usize>();
    assert_eq!(usage.count, 2, "{usage:?}");
    assert_eq!(usage.largest, 64 * 2 * word);
    assert_eq!(usage.total, 64 * 2 * word + 64 * word);
    assert_eq!(live(), 0);

    let empty = Tables {
        map: HashMap::new(),
        set: HashSet::new(),
        tree: (0..64).map(|k| (k, 1)).collect(),
        ordered: (0..64).collect(),
    };
    let usage = measure(|| empty.encode_to_slice(&mut buf).unwrap());
    assert_eq!(usage.count, 0, "{usage:?}");
}

#[test]
fn framing_stays_within_the_body_bound() {
    let bound = usize::try_from(Snapshot::MAX_HEAP_BYTES).unwrap() + ERROR_BYTES;
    for (_, seed) in seeds("decode_derived") {
        let packet = &seed[1..];
        let usage = measure(|| read_packet::<Snapshot>(PROTOCOL_ID, packet));
        assert!(
            usage.peak <= bound && usage.largest <= bound,
            "{usage:?} over {bound}"
        );
    }
}

/// Datagrams for the flood: real fragments of the largest packet, then the same with
/// fragment counts, ids and sequences forged, truncated, and random bytes.
fn flood_datagrams(config: &Config) -> Vec<Vec<u8>> {
    let mut sender = Endpoint::new(0.0, config.clone()).unwrap();
    let mut out = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..24u64 {
        let size = if round % 3 == 0 {
            config.max_packet_size
        } else {
            1 + (next() as usize % config.max_packet_size)
        };
        sender.send_packet(0.0, &vec![round as u8; size]).unwrap();
        let mut fragments = Vec::new();
        while let Some(t) = sender.poll_transmit() {
            fragments.push(t.data.to_vec());
        }
        // Only the first fragment of each packet: every reassembly stays open.
        out.push(fragments[0].clone());
        for f in fragments.iter().take(3) {
            let mut forged = f.clone();
            let at = next() as usize % forged.len().min(12);
            forged[at] = next() as u8;
            out.push(forged);
            let mut cut = f.clone();
            cut.truncate(next() as usize % f.len());
            out.push(cut);
        }
        let len = next() as usize % 1400;
        out.push((0..len).map(|_| next() as u8).collect());
    }
    out
}

#[test]
fn endpoint_under_a_flood_stays_within_its_memory_bound() {
    for config in [
        Config::default(),
        Config {
            max_reassembly_bytes: 300 * 1024,
            ..Config::default()
        },
    ] {
        let bound = config.memory_bound();
        let flood = flood_datagrams(&config);
        let mut drops = 0;
        let mut held = 0;
        let usage = measure(|| {
            let mut e = Endpoint::new(0.0, config.clone()).unwrap();
            for (i, d) in flood.iter().enumerate() {
                let _ = e.handle_datagram(i as f64 * 1e-3, d);
                e.drain_acks().for_each(drop);
                held = held.max(live());
                assert_eq!(live(), e.memory_bytes(), "memory_bytes() is what it holds");
            }
            drops = e.counters().drops.total();
        });
        println!(
            "endpoint: {usage:?}, most held {held}, bound {bound}, {} datagrams",
            flood.len()
        );
        assert!(held <= bound, "held {held} over {bound}");
        assert!(
            usage.largest <= bound,
            "allocation {} over {bound}",
            usage.largest
        );
        // While the reassembly pool grows (geometrically, up to its bound) the old block
        // and the new one are both live for the copy: up to half the pool more.
        let pool = config.max_reassembly_bytes / config.fragment_size * config.fragment_size;
        assert!(
            usage.peak <= bound + pool / 2,
            "peak {} over {bound} + {}",
            usage.peak,
            pool / 2
        );
        assert!(drops > 0);
    }
}

#[test]
fn chunk_receiver_under_a_flood_stays_within_its_buffer_bound() {
    let config = ChunkConfig::default();
    let buffer = config.slice_size * config.max_slices;
    let bound = 2 * (buffer + config.max_slices.div_ceil(8));
    // Slice 0 of a 255-slice chunk, then slice 0 of a 256-slice chunk with the next id:
    // before the receiver's fix, one allocation of 522,240 bytes.
    let mut datagrams = vec![
        [&[0xc1, 0, 0, 0, 0, 0xff, 0][..], &[0; 1024][..]].concat(),
        [&[0xc1, 1, 0, 0, 0, 0, 1][..], &[0; 1024][..]].concat(),
    ];
    // Then every chunk size from a real sender, each cancelled after its first slices by
    // the next, growing and shrinking, and whole chunks taken by the user.
    let mut sender = ChunkSender::new(ChunkConfig {
        initial_burst: true,
        ..config.clone()
    })
    .unwrap();
    for count in [1usize, 256, 2, 255, 256, 17, 256, 128, 256] {
        sender.send(vec![count as u8; count * 1024 - 3]).unwrap();
        let mut n = 0;
        while let Some(p) = sender.poll_packet(0.0) {
            if n < 2 || count < 3 {
                datagrams.push(p.to_vec());
            }
            n += 1;
        }
        sender.cancel();
    }
    let mut receiver = ChunkReceiver::new(config).unwrap();
    let usage = measure(|| {
        for (i, p) in datagrams.iter().enumerate() {
            let _ = receiver.receive_slice(i as f64, p);
            let _ = receiver.poll_ack(i as f64);
            // A chunk the user takes is the user's; dropping it here keeps the count to
            // what the receiver holds.
            drop(receiver.take_chunk());
        }
    });
    println!("chunk receiver: {usage:?}, buffer {buffer}, bound {bound}");
    assert!(
        usage.largest <= buffer,
        "one allocation of {} bytes, over {buffer}",
        usage.largest
    );
    assert!(
        usage.peak <= bound,
        "{} bytes live, over {bound}",
        usage.peak
    );
    assert!(receiver.stats().abandoned_chunks >= 1);
}
