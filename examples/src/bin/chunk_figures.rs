//! Prints the chunk-transfer figures, measured over the seeded
//! simulator: time to send 256 KiB at a 1 Mbit/s budget with 100 ms RTT and 1% loss
//! against the bandwidth-limited ideal, the same with the initial burst on a fast link,
//! and bytes on the wire per byte delivered.
//!
//! `cargo run -p netser-examples --bin chunk_figures [seeds]` (default 20 seeds per row).

use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const SERVER: u32 = 1;
const CLIENT: u32 = 2;
const CHUNK_BYTES: usize = 256 * 1024;
/// IPv4 + UDP headers, counted on the wire for every packet.
const UDP_IP_HEADER: usize = 28;

/// One transfer's measurements.
struct Run {
    /// `now` when the receiver had the whole chunk.
    received_at: f64,
    /// `now` when the sender saw the last ack.
    acked_at: f64,
    /// Slice packet bytes put on the wire (chunk layer only).
    slice_bytes: usize,
    slice_packets: usize,
    /// Ack packet bytes put on the wire.
    ack_bytes: usize,
    ack_packets: usize,
}

fn transfer(net: SimulatorConfig, chunk: ChunkConfig, rtt: Option<f64>) -> Run {
    let mut sim: Simulator = Simulator::new(net);
    let mut sender = ChunkSender::new(chunk.clone()).expect("valid config");
    let mut receiver = ChunkReceiver::new(chunk).expect("valid config");
    sender.set_rtt(rtt);
    let data: Vec<u8> = (0..CHUNK_BYTES).map(|i| (i * 7 % 251) as u8).collect();
    sender.send(data.clone()).expect("chunk fits");
    let mut run = Run {
        received_at: f64::NAN,
        acked_at: f64::NAN,
        slice_bytes: 0,
        slice_packets: 0,
        ack_bytes: 0,
        ack_packets: 0,
    };
    let mut now = 0.0;
    while now < 3600.0 {
        while let Some(d) = sim.receive(now) {
            if d.to == CLIENT {
                let _ = receiver.receive_slice(now, &d.data);
            } else {
                let _ = sender.receive_ack(now, &d.data);
            }
        }
        while let Some(p) = sender.poll_packet(now) {
            run.slice_bytes += p.len();
            run.slice_packets += 1;
            sim.send(now, SERVER, CLIENT, p);
        }
        while let Some(a) = receiver.poll_ack(now) {
            run.ack_bytes += a.len();
            run.ack_packets += 1;
            sim.send(now, CLIENT, SERVER, a);
        }
        if let Some(chunk) = receiver.take_chunk() {
            assert!(chunk.data == data, "chunk corrupted");
            run.received_at = now;
        }
        if let Some((_, at)) = sender.last_completed() {
            run.acked_at = at;
            return run;
        }
        // Jump to the next event.
        let next = [
            sim.next_delivery_time(),
            sender.next_send_time(),
            receiver.next_ack_time(),
        ]
        .into_iter()
        .flatten()
        .min_by(f64::total_cmp);
        match next {
            Some(t) => now = t.max(now),
            None => break,
        }
    }
    panic!("transfer did not finish");
}

struct Row {
    received: Vec<f64>,
    acked: Vec<f64>,
    chunk_wire: Vec<f64>,
    udp_wire: Vec<f64>,
    packets: Vec<f64>,
}

fn row(
    seeds: u64,
    net: impl Fn(u64) -> SimulatorConfig,
    chunk: &ChunkConfig,
    rtt: Option<f64>,
) -> Row {
    let mut r = Row {
        received: Vec::new(),
        acked: Vec::new(),
        chunk_wire: Vec::new(),
        udp_wire: Vec::new(),
        packets: Vec::new(),
    };
    for seed in 0..seeds {
        let run = transfer(net(seed), chunk.clone(), rtt);
        let chunk_bytes = (run.slice_bytes + run.ack_bytes) as f64;
        let udp_bytes =
            chunk_bytes + ((run.slice_packets + run.ack_packets) * UDP_IP_HEADER) as f64;
        r.received.push(run.received_at);
        r.acked.push(run.acked_at);
        r.chunk_wire.push(chunk_bytes / CHUNK_BYTES as f64);
        r.udp_wire.push(udp_bytes / CHUNK_BYTES as f64);
        r.packets.push(run.slice_packets as f64);
    }
    r
}

fn stats(values: &[f64]) -> String {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{mean:.3} [{min:.3}..{max:.3}]")
}

fn print_row(name: &str, r: &Row) {
    println!(
        "| {name} | {} | {} | {} | {} | {} |",
        stats(&r.received),
        stats(&r.acked),
        stats(&r.packets),
        stats(&r.chunk_wire),
        stats(&r.udp_wire)
    );
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let budget = ChunkConfig::default(); // 1024-byte slices, 125 000 B/s = 1 Mbit/s
    let link = |loss: f64| {
        move |seed: u64| SimulatorConfig {
            latency: 0.05, // 100 ms RTT
            loss,
            seed,
            ..SimulatorConfig::default()
        }
    };
    let ideal = CHUNK_BYTES as f64 / budget.bandwidth;
    let packets = CHUNK_BYTES / budget.slice_size;
    let with_headers = (packets * (budget.max_slice_packet_size() - 2 + budget.packet_overhead) + 2)
        as f64
        / budget.bandwidth;
    println!("256 KiB chunk, 1024-byte slices, {seeds} seeds per row: mean [min..max]");
    println!(
        "bandwidth-limited ideal at 1 Mbit/s: {ideal:.3} s of payload; {with_headers:.3} s \
         with slice headers and UDP/IP (the budget charges both)"
    );
    println!();
    println!(
        "| case | received (s) | sender acked (s) | slice packets | chunk bytes / byte | \
         + UDP/IP / byte |"
    );
    println!("|---|---|---|---|---|---|");
    for loss in [0.0, 0.01, 0.10, 0.50] {
        let pct = loss * 100.0;
        print_row(
            &format!("1 Mbit/s budget, 100 ms RTT, {pct:.0}% loss, RTT unknown (100 ms resend)"),
            &row(seeds, link(loss), &budget, None),
        );
        print_row(
            &format!("1 Mbit/s budget, 100 ms RTT, {pct:.0}% loss, RTT known (125 ms resend)"),
            &row(seeds, link(loss), &budget, Some(0.1)),
        );
    }
    // Acks coalesced as a 60 Hz game loop would send them.
    let paced = ChunkConfig {
        ack_interval: 1.0 / 60.0,
        ..ChunkConfig::default()
    };
    print_row(
        "1 Mbit/s budget, 100 ms RTT, 1% loss, RTT known, acks at most 60 per second",
        &row(seeds, link(0.01), &paced, Some(0.1)),
    );
    let burst = ChunkConfig {
        initial_burst: true,
        ..ChunkConfig::default()
    };
    for (name, cap) in [("100 Mbit/s", 12_500_000.0), ("10 Mbit/s", 1_250_000.0)] {
        let fast = move |seed: u64| SimulatorConfig {
            bandwidth: Some(cap),
            ..link(0.01)(seed)
        };
        print_row(
            &format!("burst + 1 Mbit/s budget, {name} link, 100 ms RTT, 1% loss, RTT known"),
            &row(seeds, fast, &burst, Some(0.1)),
        );
    }
}
