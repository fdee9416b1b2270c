//! The packet endpoint side by side with the `reliable` crate, same payloads, one run:
//! the cost of send + receive + ack processing for a small packet each way, and for a
//! 16 KiB packet sent as 16 fragments with a small reply carrying its ack. Then, netser
//! only, the per-tick cost with a connection's 1024-packet windows full: one packet each
//! way and an update of both sides' estimates, and the update of an idle endpoint.
//!
//! `cargo bench -p netser-transport --bench endpoint`
//!
//! For repeatable instruction counts, set `NETSER_ENDPOINT_PROFILE` to
//! `netser_small`, `reliable_small`, `netser_fragmented` or `reliable_fragmented`: the
//! bench binary then runs that case `NETSER_ENDPOINT_ROUNDS` times (default 10000)
//! without criterion, e.g. under `valgrind --tool=callgrind` (divide the inclusive count
//! of `netser_round` / `reliable_round` by the rounds).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, Criterion, Throughput};
use netser_transport::endpoint::{Config, Endpoint};

fn netser_pair() -> (Endpoint, Endpoint) {
    // The same limits as `reliable`'s defaults, so both do the same work.
    let config = Config {
        max_packet_size: 16 * 1024,
        max_fragments: 16,
        ..Config::default()
    };
    (
        Endpoint::new(0.0, config.clone()).unwrap(),
        Endpoint::new(0.0, config).unwrap(),
    )
}

fn reliable_pair() -> (reliable::Endpoint, reliable::Endpoint) {
    (
        reliable::Endpoint::new(reliable::Config::default(), 0.0),
        reliable::Endpoint::new(reliable::Config::default(), 0.0),
    )
}

/// `a` sends `request` to `b`, `b` answers with `reply`; `a` takes the ack.
#[inline(never)]
fn netser_round(
    a: &mut Endpoint,
    b: &mut Endpoint,
    now: f64,
    request: &[u8],
    reply: &[u8],
) -> usize {
    let mut bytes = 0;
    a.send_packet(now, request).unwrap();
    while let Some(transmit) = a.poll_transmit() {
        if let Ok(Some(packet)) = b.handle_datagram(now, transmit.data) {
            bytes += black_box(packet.payload).len();
        }
    }
    b.send_packet(now, reply).unwrap();
    while let Some(transmit) = b.poll_transmit() {
        if let Ok(Some(packet)) = a.handle_datagram(now, transmit.data) {
            bytes += black_box(packet.payload).len();
        }
    }
    bytes + a.drain_acks().count() + b.drain_acks().count()
}

#[inline(never)]
fn reliable_round(
    a: &mut reliable::Endpoint,
    b: &mut reliable::Endpoint,
    request: &[u8],
    reply: &[u8],
) -> usize {
    let mut bytes = 0;
    a.send_packet(request, |_, datagram| {
        b.receive_packet(datagram, |_, payload| {
            bytes += black_box(payload).len();
            true
        });
    });
    b.send_packet(reply, |_, datagram| {
        a.receive_packet(datagram, |_, payload| {
            bytes += black_box(payload).len();
            true
        });
    });
    bytes + a.drain_acks().count() + b.drain_acks().count()
}

fn bench(c: &mut Criterion, name: &str, request: &[u8], reply: &[u8]) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    group.bench_function("netser", |bencher| {
        let (mut a, mut b) = netser_pair();
        let mut now = 0.0;
        bencher.iter(|| {
            now += 1e-3;
            netser_round(&mut a, &mut b, now, request, reply)
        });
    });
    group.bench_function("reliable", |bencher| {
        let (mut a, mut b) = reliable_pair();
        bencher.iter(|| reliable_round(&mut a, &mut b, request, reply));
    });
    group.finish();
}

fn endpoint(c: &mut Criterion) {
    let small = [7u8; 100];
    bench(c, "small_packet_round_trip", &small, &small);
    let large = vec![9u8; 16 * 1024];
    bench(c, "fragmented_16k_with_reply", &large, &small);
}

/// Two endpoints with the connection's 1024-packet windows, filled by 2048 rounds at
/// 60 Hz.
fn filled_pair() -> (Endpoint, Endpoint, f64) {
    let config = Config {
        sent_packets_buffer_size: 1024,
        received_packets_buffer_size: 1024,
        ..Config::default()
    };
    let mut a = Endpoint::new(0.0, config.clone()).unwrap();
    let mut b = Endpoint::new(0.0, config).unwrap();
    let small = [7u8; 100];
    let mut now = 0.0;
    for _ in 0..2048 {
        now += 1.0 / 60.0;
        netser_round(&mut a, &mut b, now, &small, &small);
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    (a, b, now)
}

fn update(c: &mut Criterion) {
    let small = [7u8; 100];
    let mut group = c.benchmark_group("full_1024_windows");
    group.throughput(Throughput::Elements(1));
    group.bench_function("round_trip_and_update", |bencher| {
        let (mut a, mut b, mut now) = filled_pair();
        bencher.iter(|| {
            now += 1.0 / 60.0;
            let bytes = netser_round(&mut a, &mut b, now, &small, &small);
            a.handle_timeout(now);
            b.handle_timeout(now);
            bytes
        });
    });
    group.bench_function("idle_update", |bencher| {
        let (mut a, _, mut now) = filled_pair();
        bencher.iter(|| {
            now += 1.0 / 60.0;
            a.handle_timeout(now);
            black_box(a.stats().packet_loss)
        });
    });
    group.finish();
}

/// Runs one case a fixed number of times, for callgrind.
fn profile(case: &str) {
    let rounds: u32 = std::env::var("NETSER_ENDPOINT_ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(10_000);
    let small = [7u8; 100];
    let large = vec![9u8; 16 * 1024];
    let (request, implementation) = match case {
        "netser_small" => (&small[..], "netser"),
        "reliable_small" => (&small[..], "reliable"),
        "netser_fragmented" => (&large[..], "netser"),
        "reliable_fragmented" => (&large[..], "reliable"),
        _ => panic!("unknown NETSER_ENDPOINT_PROFILE case {case:?}"),
    };
    let mut total = 0;
    if implementation == "netser" {
        let (mut a, mut b) = netser_pair();
        for round in 0..rounds {
            total += netser_round(&mut a, &mut b, f64::from(round) * 1e-3, request, &small);
        }
    } else {
        let (mut a, mut b) = reliable_pair();
        for _ in 0..rounds {
            total += reliable_round(&mut a, &mut b, request, &small);
        }
    }
    println!("{case}: {rounds} rounds, {total} bytes and acks");
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = endpoint, update
}

fn main() {
    match std::env::var("NETSER_ENDPOINT_PROFILE") {
        Ok(case) => profile(&case),
        Err(_) => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
