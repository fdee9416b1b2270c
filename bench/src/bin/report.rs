//! Times every contender on every workload with interleaved samples (each round runs a
//! batch of each contender in turn, so load from other processes hits all of them alike),
//! prints medians and netser/peer ratios taken within each round, the CPU and the load,
//! and draws the ratios to `bench/ratios.svg`.
//!
//! ```text
//! cargo run --release -p netser-bench --bin report                # full run (~30 s)
//! cargo run --release -p netser-bench --bin report -- --rounds 5  # quick look
//! report --only netser encode "256 moving" 1000                  # for callgrind
//! ```

use std::path::PathBuf;
use std::time::Instant;

use netser_bench::{contenders_for, Contender, Workload};
use plotters::prelude::*;

/// The peers each netser ratio is taken against, in table and chart order.
const PEERS: [&str; 9] = [
    "bitcode",
    "bitcode-quant",
    "bincode",
    "naia-serde",
    "memcpy",
    "netser-hand",
    "netser-lean",
    "netser-columns",
    "netser-sse2",
];

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Encode,
    Decode,
}

struct Options {
    rounds: usize,
    batch_us: f64,
    svg: PathBuf,
}

/// Medians for one workload: per contender (bytes, encode ns, decode ns) and per peer the
/// median of the per-round ratios (encode, decode) plus the bytes ratio.
struct WorkloadResult {
    label: String,
    rows: Vec<(&'static str, usize, f64, f64)>,
    ratios: Vec<(&'static str, f64, f64, f64)>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--only") {
        only(&args[1..]);
        return;
    }
    let mut options = Options {
        rounds: 41,
        batch_us: 2000.0,
        svg: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ratios.svg"),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--rounds" => options.rounds = parse(value()),
            "--batch-us" => options.batch_us = parse(value()),
            "--svg" => options.svg = PathBuf::from(value()),
            other => usage(&format!("unknown argument {other}")),
        }
    }

    println!("CPU: {}", cpu_model());
    println!(
        "netser's batch path: {}",
        match netser::batch::simd_level() {
            netser::batch::SimdLevel::Avx512 =>
                "AVX-512 and AVX2 (runtime dispatch; NETSER_SIMD=avx2 stops it at AVX2); \
                 netser-sse2 is the same with the dispatch off",
            netser::batch::SimdLevel::Avx2 =>
                "AVX2 and BMI2 (runtime dispatch); netser-sse2 is the same with the dispatch off",
            netser::batch::SimdLevel::Baseline => "as compiled (no AVX2 or BMI2 on this CPU)",
        }
    );
    println!("load average before: {}", load_average());
    println!(
        "{} interleaved rounds, batches of ~{} us per contender and operation\n",
        options.rounds, options.batch_us
    );
    let results: Vec<WorkloadResult> = Workload::ALL.iter().map(|w| measure(w, &options)).collect();
    for r in &results {
        print_result(r);
    }
    print_targets(&results);
    println!("load average after: {}", load_average());
    match draw(&results, &options.svg) {
        Ok(()) => println!("chart: {}", options.svg.display()),
        Err(e) => eprintln!("could not draw {}: {e}", options.svg.display()),
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: report [--rounds N] [--batch-us US] [--svg PATH]\n       \
         report --only CONTENDER encode|decode \"WORKLOAD\" ITERS"
    );
    std::process::exit(2)
}

fn parse<T: std::str::FromStr>(s: &str) -> T {
    s.parse()
        .unwrap_or_else(|_| usage(&format!("not a number: {s}")))
}

/// Runs one operation of one contender ITERS times and nothing else, so that two runs
/// under callgrind (ITERS and 0) give the instructions of ITERS operations by difference.
fn only(args: &[String]) {
    let [name, op, workload, iters] = args else {
        usage("--only takes 4 arguments")
    };
    let w = Workload::ALL
        .into_iter()
        .find(|w| w.label() == *workload)
        .unwrap_or_else(|| usage(&format!("no workload {workload}")));
    let mut c = contenders_for(&w)
        .into_iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| usage(&format!("no contender {name}")));
    c.encode();
    let iters: usize = parse(iters);
    let start = Instant::now();
    match op.as_str() {
        "encode" => (0..iters).for_each(|_| {
            std::hint::black_box(c.encode());
        }),
        "decode" => (0..iters).for_each(|_| c.decode()),
        _ => usage("the operation is encode or decode"),
    }
    let ns = start.elapsed().as_nanos() as f64 / iters.max(1) as f64;
    std::hint::black_box(c.bytes());
    // On stderr: a quick A/B of two builds without the whole report.
    eprintln!("{name} {op} {workload}: {ns:.0} ns per operation ({iters} operations)");
}

fn run(c: &mut dyn Contender, op: Op, iters: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        match op {
            Op::Encode => {
                std::hint::black_box(c.encode());
            }
            Op::Decode => c.decode(),
        }
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

fn measure(w: &Workload, options: &Options) -> WorkloadResult {
    let mut cs = contenders_for(w);
    let bytes: Vec<usize> = cs.iter_mut().map(|c| c.encode()).collect();
    // Batch sizes: warm up, then enough iterations for ~batch_us per batch.
    let batch = |c: &mut Box<dyn Contender>, op| {
        run(c.as_mut(), op, 10);
        let ns = run(c.as_mut(), op, 50);
        ((options.batch_us * 1000.0 / ns) as usize).max(1)
    };
    let iters: Vec<[usize; 2]> = cs
        .iter_mut()
        .map(|c| [batch(c, Op::Encode), batch(c, Op::Decode)])
        .collect();
    // samples[contender][op][round]
    let mut samples = vec![[vec![], vec![]]; cs.len()];
    for _ in 0..options.rounds {
        for (k, op) in [Op::Encode, Op::Decode].into_iter().enumerate() {
            for (i, c) in cs.iter_mut().enumerate() {
                samples[i][k].push(run(c.as_mut(), op, iters[i][k]));
            }
        }
    }
    let rows = cs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                c.name(),
                bytes[i],
                median(&samples[i][0]),
                median(&samples[i][1]),
            )
        })
        .collect();
    let netser = 0;
    let ratios = PEERS
        .iter()
        .map(|peer| {
            let p = cs.iter().position(|c| c.name() == *peer).expect("peer");
            let ratio = |k: usize| {
                let per_round: Vec<f64> = (0..options.rounds)
                    .map(|r| samples[netser][k][r] / samples[p][k][r])
                    .collect();
                median(&per_round)
            };
            let bytes_ratio = bytes[netser] as f64 / bytes[p] as f64;
            (*peer, ratio(0), ratio(1), bytes_ratio)
        })
        .collect();
    WorkloadResult {
        label: w.label(),
        rows,
        ratios,
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn print_result(r: &WorkloadResult) {
    println!("### {}\n", r.label);
    println!("| contender | bytes | encode ns | decode ns |");
    println!("|---|---:|---:|---:|");
    for (name, bytes, enc, dec) in &r.rows {
        println!("| {name} | {bytes} | {enc:.0} | {dec:.0} |");
    }
    println!("\n| netser / peer | bytes | encode time | decode time |");
    println!("|---|---:|---:|---:|");
    for (peer, enc, dec, bytes) in &r.ratios {
        println!("| {peer} | {bytes:.3} | {enc:.3} | {dec:.3} |");
    }
    println!();
}

fn ratio(results: &[WorkloadResult], label: &str, peer: &str) -> (f64, f64, f64) {
    let r = results.iter().find(|r| r.label == label).expect("workload");
    let (_, enc, dec, bytes) = r.ratios.iter().find(|x| x.0 == peer).expect("peer");
    (*enc, *dec, *bytes)
}

fn print_targets(results: &[WorkloadResult]) {
    println!("### Targets (netser / peer)\n");
    println!("| workload | bytes vs bitcode (<= 0.5) | bytes vs bitcode-quant (<= 0.7) | encode vs bitcode (<= 1) | decode vs bitcode (<= 1) | encode vs naia (<= 0.1) | decode vs naia (<= 0.1) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mark = |v: f64, limit: f64| format!("{v:.3} {}", if v <= limit { "ok" } else { "MISSED" });
    for r in results {
        let (be, bd, bb) = ratio(results, &r.label, "bitcode");
        let (_, _, qb) = ratio(results, &r.label, "bitcode-quant");
        let (ne, nd, _) = ratio(results, &r.label, "naia-serde");
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.label,
            mark(bb, 0.5),
            mark(qb, 0.7),
            mark(be, 1.0),
            mark(bd, 1.0),
            mark(ne, 0.1),
            mark(nd, 0.1)
        );
    }
    println!();
}

fn cpu_model() -> String {
    let from_lscpu = std::process::Command::new("lscpu")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("Model name:").map(|m| m.trim().to_string()))
        });
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} ({cores} cores)",
        from_lscpu.unwrap_or_else(|| "unknown (lscpu not found)".into())
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One panel per workload: for each peer, three bars (encode time, decode time, bytes)
/// of netser / peer on a log scale, with the parity line at 1.
fn draw(
    results: &[WorkloadResult],
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1200, 1280)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(50);
    title.draw(&Text::new(
        format!(
            "netser / peer (below 1: netser smaller or faster) - {}",
            cpu_model()
        ),
        (20, 15),
        ("sans-serif", 20).into_font(),
    ))?;
    let all: Vec<f64> = results
        .iter()
        .flat_map(|r| r.ratios.iter().flat_map(|x| [x.1, x.2, x.3]))
        .collect();
    let lo = all.iter().copied().fold(0.1f64, f64::min) / 1.5;
    let hi = all.iter().copied().fold(1.0f64, f64::max) * 1.5;
    let series = [
        ("encode time", BLUE),
        ("decode time", RED),
        ("bytes", GREEN),
    ];
    for (panel, r) in body.split_evenly((3, 2)).iter().zip(results) {
        let mut chart = ChartBuilder::on(panel)
            .caption(&r.label, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..PEERS.len() as f64, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(PEERS.len() * 2 + 1)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 0.01 {
                    PEERS.get(i).copied().unwrap_or("").to_string()
                } else {
                    String::new()
                }
            })
            .y_desc("netser / peer")
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()?;
        for (k, (name, color)) in series.iter().enumerate() {
            let bars = r.ratios.iter().enumerate().map(|(i, x)| {
                let v = [x.1, x.2, x.3][k];
                let left = i as f64 + 0.15 + k as f64 * 0.23;
                Rectangle::new([(left, lo), (left + 0.2, v)], color.filled())
            });
            chart.draw_series(bars)?.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
            });
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 1.0), (PEERS.len() as f64, 1.0)],
            BLACK.stroke_width(1),
        )))?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn a_quick_run_measures_every_peer_and_draws() {
        let options = Options {
            rounds: 3,
            batch_us: 50.0,
            svg: std::env::temp_dir().join(format!("netser-ratios-{}.svg", std::process::id())),
        };
        let r = measure(&Workload::new(64, true), &options);
        assert_eq!(r.rows.len(), 10);
        assert_eq!(r.ratios.len(), PEERS.len());
        assert!(r.rows.iter().all(|x| x.2 > 0.0 && x.3 > 0.0));
        let results = vec![r];
        draw(&results, &options.svg).unwrap();
        let svg = std::fs::read_to_string(&options.svg).unwrap();
        assert!(svg.contains("<svg") && svg.contains("naia-serde"));
        std::fs::remove_file(&options.svg).unwrap();
    }
}
