//! Criterion: encode and decode of every contender on every workload, side by side in one
//! run (`cargo bench -p netser-bench --bench peers`). Encoded sizes are printed first.
//! The interleaved ratios and the chart come from the `report` program (BENCHMARKS.md).

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use netser_bench::{contenders_for, size_report, Workload};

fn print_sizes() {
    for (workload, sizes) in size_report() {
        let row: Vec<String> = sizes.iter().map(|(n, b)| format!("{n} {b} B")).collect();
        println!("sizes {workload}: {}", row.join(", "));
    }
}

fn peers(c: &mut Criterion) {
    print_sizes();
    for w in Workload::ALL {
        let mut encode = c.benchmark_group(format!("encode {}", w.label()));
        encode.throughput(Throughput::Elements(w.entities as u64));
        for mut contender in contenders_for(&w) {
            encode.bench_function(BenchmarkId::from_parameter(contender.name()), |b| {
                b.iter(|| black_box(contender.encode()))
            });
        }
        encode.finish();

        let mut decode = c.benchmark_group(format!("decode {}", w.label()));
        decode.throughput(Throughput::Elements(w.entities as u64));
        for mut contender in contenders_for(&w) {
            contender.encode();
            decode.bench_function(BenchmarkId::from_parameter(contender.name()), |b| {
                b.iter(|| {
                    contender.decode();
                    black_box(contender.bytes().len())
                })
            });
        }
        decode.finish();
    }
}

criterion_group! {
    name = benches;
    // 56 benchmarks: short windows keep a full run near three minutes.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = peers
}
criterion_main!(benches);
