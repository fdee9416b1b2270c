//! The articles' cube scene through netser's snapshot layer: 901 cubes at 60 Hz, a pusher
//! driving through a field of resting cubes that then come back to rest, sent over the
//! transport's seeded simulator with a 100 ms round trip at 0% and at 5% loss. Every
//! figure counts the packets' headers and 28 bytes of IP and UDP per datagram (server to
//! client). Then a large scene (4097 cubes as entity sets under a 256 kbit/s budget).
//!
//! `cargo run --release -p netser-bench --bin scene`

use netser_bench::scene::run::{run, run_large, Figures};
use netser_bench::scene::CUBES;

const DRIVE_TICKS: u64 = 30 * 60;
const REST_TICKS: u64 = 10 * 60;

fn print(f: &Figures) {
    let active = f.active_ticks;
    println!(
        "{:.0}% loss, 100 ms RTT: {} s active ({:.1} cubes changed per snapshot), {} s at rest",
        f.loss * 100.0,
        active / 60,
        f.changed,
        f.rest_ticks / 60
    );
    println!(
        "  naive absolute f32   {:>9.1} kbit/s",
        f.naive.kbps(active)
    );
    println!(
        "  bitcode (quantized)  {:>9.1} kbit/s",
        f.bitcode.kbps(active)
    );
    println!(
        "  netser absolute      {:>9.1} kbit/s",
        f.absolute.kbps(active)
    );
    println!(
        "  netser delta         {:>9.1} kbit/s  ({:.0} bits a snapshot, baseline {:.1} snapshots old on average, {} sent whole)",
        f.delta.kbps(active),
        f.delta_bits_per_snapshot,
        f.mean_baseline_age,
        f.delta_absolute_sent
    );
    println!(
        "  at rest (delta)      {:>9.1} kbit/s  ({} datagrams in {} s)",
        f.rest.kbps(f.rest_ticks),
        f.rest.datagrams,
        f.rest_ticks / 60
    );
    println!(
        "  checked {} decoded snapshots: {} mismatches, {} refused",
        f.checked, f.mismatches, f.refused
    );
}

fn main() {
    println!("scene: {CUBES} cubes at 60 Hz, 80 bits a cube absolute");
    let lossless = run(0.0, DRIVE_TICKS, REST_TICKS, 1);
    print(&lossless);
    let lossy = run(0.05, DRIVE_TICKS, REST_TICKS, 2);
    print(&lossy);
    let large = run_large(256_000.0, DRIVE_TICKS, 3);
    println!(
        "large scene: {} cubes as entity sets, {:.0} kbit/s budget, 5% loss: {:.1} kbit/s used over {} s, \
         max age {} ticks, {:.0} entities waiting on average, {} packets over budget, {} mismatches at rest",
        large.entities,
        large.budget_kbps,
        large.wire.kbps(large.ticks),
        large.ticks / 60,
        large.max_age,
        large.mean_pending,
        large.over_budget,
        large.mismatches
    );
    let mismatches = lossless.mismatches + lossy.mismatches + large.mismatches;
    println!(
        "scene: {:.0} kbit/s delta, {:.0} kbit/s absolute, {:.1} kbit/s at rest, {:.0} changed per snapshot, {} mismatches",
        lossy.delta.kbps(lossy.active_ticks),
        lossy.absolute.kbps(lossy.active_ticks),
        lossy.rest.kbps(lossy.rest_ticks),
        lossy.changed,
        mismatches
    );
}
