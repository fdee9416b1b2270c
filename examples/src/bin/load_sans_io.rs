//! The load benchmark's game through the sans-IO game server, in one process and with
//! no socket: what netser's own work costs per client, without the kernel's sends and
//! receives (which the `load` benchmark includes).
//!
//! `cargo run --release -p netser-examples --bin load_sans_io -- [CLIENTS] [TICKS]
//! [--preset]` connects CLIENTS clients (default 500), then plays TICKS server ticks
//! (default 300) at 30 Hz, two client frames of 60 Hz inputs each, every body of the
//! 64-body snapshot moving, and prints the server's CPU time per tick by phase
//! (this thread's CPU clock, Linux), per client-tick when the clients are idle, and the
//! clients one core would hold if the kernel cost nothing. `--preset` runs the
//! connections with `ConnectionConfig::for_many_clients`.
use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

use netser_examples::game::{self, ClientMessage, ServerMessage, SEQUENCED};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{Client, ConnectToken, Protocol, Server, TokenParams};

const KEY: [u8; 32] = [0x5a; 32];
const UNIX_T0: u64 = 1_700_000_000;

/// Seconds this thread has run on a CPU (Linux); elsewhere the process's wall clock,
/// which a busy machine inflates.
fn cpu() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
    }
    #[cfg(not(target_os = "linux"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(500, |s| s.parse().unwrap());
    let preset = args.iter().any(|a| a == "--preset");
    let ticks: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let config: ConnectionConfig = if preset {
        game::connection_config().for_many_clients()
    } else {
        game::connection_config()
    };
    let protocol: Protocol<ClientMessage, ServerMessage> = Protocol::with_connection(config);
    let server_addr: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let unix_t0 = UNIX_EPOCH + Duration::from_secs(UNIX_T0);
    let mut sc = protocol.server_config(KEY, vec![server_addr]);
    sc.max_clients = n;
    let mut server = Server::new(0.0, unix_t0, sc, &protocol).unwrap();
    let addr = |i: usize| SocketAddr::from(([10, 0, (i >> 8) as u8 + 1, i as u8], 50_000));
    let mut clients: Vec<Client<ClientMessage, ServerMessage>> = (0..n)
        .map(|i| {
            let params = TokenParams {
                client_id: 1 + i as u64,
                ..TokenParams::new(protocol.id(), vec![server_addr], UNIX_T0)
            };
            Client::new(
                0.0,
                ConnectToken::generate(&params, &KEY).unwrap(),
                &protocol,
            )
            .unwrap()
        })
        .collect();
    let mut index = std::collections::HashMap::new();
    for i in 0..n {
        index.insert(addr(i), i);
    }
    let mut to_server: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut to_clients: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut phase = [0.0f64; 4];
    let (mut inputs, mut snaps) = (0u64, 0u64);
    let warm = 120u32;
    let mut idle_cpu = 0.0;
    for tick in 0..warm + ticks + 30 {
        let idle = tick >= warm + ticks;
        let measured = tick >= warm && !idle;
        // Two client frames per server tick.
        for half in 0..2 {
            let now = (f64::from(tick) * 2.0 + f64::from(half)) / 60.0;
            for (i, c) in clients.iter_mut().enumerate() {
                if half == 0 {
                    for (_, d) in to_clients.iter().filter(|(j, _)| *j == i) {
                        c.handle_datagram(now, server_addr, d);
                    }
                }
                while c.receive_message(SEQUENCED).is_some() {
                    if measured {
                        snaps += 1;
                    }
                }
                while c.receive_message(0).is_some() {}
                if c.is_connected() && !idle {
                    let input = game::Input {
                        frame: tick * 2 + half,
                        move_dir: [0.5, -0.5],
                        jump: false,
                        fire: true,
                    };
                    c.send_message(SEQUENCED, &ClientMessage::Input(input))
                        .unwrap();
                }
                c.handle_timeout(now);
                while let Some(t) = c.poll_transmit() {
                    to_server.push((i, t.data.to_vec()));
                }
            }
        }
        to_clients.clear();
        let now = f64::from(tick) / 30.0 + 1.0 / 60.0;
        let t0 = cpu();
        for (i, d) in &to_server {
            server.handle_datagram(now, addr(*i), d);
        }
        let t1 = cpu();
        let mut k = 0;
        while server.poll_event().is_some() {}
        for id in server.client_ids() {
            while server.receive_message(id, SEQUENCED).is_some() {
                k += 1;
            }
            while server.receive_message(id, 0).is_some() {}
        }
        let t2 = cpu();
        let mut s = game::snapshot(tick);
        for b in &mut s.bodies {
            b.at_rest = false;
            b.velocity = [1.0 + f32::from(b.id) * 0.1, -2.0, 0.5];
        }
        if !idle {
            server
                .broadcast_message(SEQUENCED, &ServerMessage::Snapshot(s))
                .unwrap();
        }
        server.handle_timeout(now);
        let t3 = cpu();
        while let Some(t) = server.poll_transmit() {
            if let Some(&i) = index.get(&t.to) {
                to_clients.push((i, t.data.to_vec()));
            }
        }
        let t4 = cpu();
        to_server.clear();
        if measured {
            inputs += k;
            for (p, d) in phase.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
                *p += d;
            }
        }
        if idle && tick >= warm + ticks + 5 {
            idle_cpu += t4 - t0;
        }
        // sort so each client finds its datagrams quickly
        to_clients.sort_by_key(|(i, _)| *i);
    }
    let per_tick = |x: f64| x / f64::from(ticks) * 1e3;
    let total: f64 = phase.iter().sum();
    let idle_per_client_tick = idle_cpu / 25.0 / n as f64;
    let per_client_second = total / f64::from(ticks) / n as f64 * 30.0;
    println!("{n} clients{}: {} inputs {} snaps; per tick ms: datagrams {:.3} events {:.3} broadcast+timeout {:.3} transmit {:.3}; total {:.3} ms/tick; idle {:.2} us/client-tick; {:.1} us per client-second -> {:.0} clients/core (no kernel)",
        if preset {" preset"} else {""}, inputs, snaps, per_tick(phase[0]), per_tick(phase[1]), per_tick(phase[2]), per_tick(phase[3]), per_tick(total), idle_per_client_tick*1e6, per_client_second*1e6, 1.0/per_client_second);
}
