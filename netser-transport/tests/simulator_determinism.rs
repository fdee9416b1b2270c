//! The simulator through its public API: a seeded run replays exactly, with addresses of
//! any `Copy + Eq` type, and conditions can change midway without losing determinism.

use netser_transport::simulator::{Delivery, Simulator, SimulatorConfig};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

fn addr(port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
}

/// Two peers ping-pong over a bad link; halfway through the link gets much worse.
fn conversation(seed: u64) -> (Vec<(f64, Delivery<SocketAddr>)>, String) {
    let mut sim = Simulator::new(SimulatorConfig {
        latency: 0.1,
        jitter: 0.05,
        loss: 0.1,
        duplicate: 0.05,
        reorder: 0.05,
        corrupt: 0.01,
        truncate: 0.01,
        seed,
        ..SimulatorConfig::default()
    });
    let (a, b) = (addr(1000), addr(2000));
    let mut log = Vec::new();
    let mut now = 0.0;
    for tick in 0..2000u32 {
        if tick == 1000 {
            let worse = SimulatorConfig {
                loss: 0.5,
                latency: 0.5,
                ..sim.config().clone()
            };
            sim.set_config(worse);
        }
        sim.send(now, a, b, &tick.to_le_bytes());
        while let Some(d) = sim.receive(now) {
            if d.to == b {
                // b answers every packet it gets, which couples the two directions.
                sim.send(now, b, a, &d.data);
            }
            log.push((now, d));
        }
        now += 1.0 / 60.0;
    }
    while let Some(at) = sim.next_delivery_time() {
        now = at;
        while let Some(d) = sim.receive(now) {
            log.push((now, d));
        }
    }
    (log, format!("{:?}", sim.stats()))
}

#[test]
fn a_seeded_conversation_replays_exactly() {
    let first = conversation(0xdead_beef);
    let second = conversation(0xdead_beef);
    assert!(first.0.len() > 1000);
    assert_eq!(first, second);
}

#[test]
fn different_seeds_differ() {
    assert_ne!(conversation(1).0, conversation(2).0);
}

#[test]
fn the_worse_half_loses_more() {
    let (log, _) = conversation(77);
    let a_to_b: Vec<u32> = log
        .iter()
        .filter(|(_, d)| d.to == addr(2000) && d.data.len() == 4)
        .map(|(_, d)| u32::from_le_bytes([d.data[0], d.data[1], d.data[2], d.data[3]]))
        .collect();
    let early = a_to_b.iter().filter(|&&t| t < 1000).count();
    let late = a_to_b
        .iter()
        .filter(|&&t| (1000..2000).contains(&t))
        .count();
    // About 90% (+5% duplicates) against about 50% (+5%) of 1000 packets.
    assert!(early > 850 && late < 650, "early {early} late {late}");
}
