//! The load benchmark: how many clients one server core holds at 30 Hz, each sent a
//! 64-body snapshot (about 1100 bytes) every tick and sending 60 inputs a second, with
//! the clients driven from another process over loopback.
//!
//! `cargo run --release -p netser-examples --bin load -- --clients 1000 --seconds 10`
//!
//! The server runs on this process's main thread; a second process (this program with
//! `--drive`) runs the clients. The report gives the server thread's CPU time per phase
//! (Linux's /proc/thread-self/schedstat, so a busy machine does not inflate it), its
//! split between socket system calls (timed by the driver, `UdpConfig::measure_syscalls`)
//! and netser (everything else: netcode encryption and replay checks, connections,
//! encoding), the CPU cost of one snapshot sent and one input received, the clients one
//! core holds at those costs (30 snapshots and 60 inputs a second each, whatever rate
//! the clients' process managed), and the cost per datagram beside a bare `send_to`.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netser::NetSerialize;
use netser_examples::game::{self, ClientMessage, ServerMessage, SEQUENCED};
use netser_transport::netcode::{generate_key, protocol_id, ConnectToken, TokenParams};
use netser_transport::udp::{
    ClientEvent, ServerEvent, UdpClient, UdpClientConfig, UdpConfig, UdpServer, UdpServerConfig,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--drive") {
        return drive(&args[1..]);
    }
    let mut clients = 1000u64;
    let mut seconds = 10.0;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            println!(
                "load: how many clients one server core holds at 30 Hz\n\n\
                 usage: load [--clients N] [--seconds S]\n  \
                 --clients N   clients driven from a second process (default 1000)\n  \
                 --seconds S   measured seconds after all have connected (default 10)"
            );
            return Ok(());
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--clients" => clients = value.parse()?,
            "--seconds" => seconds = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    serve(clients, seconds)
}

/// Every body moving: the largest snapshot, about 1090 bytes.
fn moving_snapshot(tick: u32) -> game::Snapshot {
    let mut snapshot = game::snapshot(tick);
    for body in &mut snapshot.bodies {
        body.at_rest = false;
        body.velocity = [1.0 + f32::from(body.id) * 0.1, -2.0, 0.5];
    }
    snapshot
}

/// Seconds this thread has run on a CPU (Linux: the first field of
/// /proc/thread-self/schedstat, in ns); 0 where unavailable. CPU time, unlike the clock,
/// does not count the time the thread waited for a core on a busy machine.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split(' ').next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// ns per bare `send_to` of `len` bytes to a socket on loopback (the floor).
fn send_to_floor(len: usize) -> f64 {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_nonblocking(true).unwrap();
    let to = rx.local_addr().unwrap();
    let payload = vec![7u8; len];
    let mut buf = [0u8; 2048];
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let start = Instant::now();
        for _ in 0..100 {
            tx.send_to(&payload, to).unwrap();
        }
        best = best.min(start.elapsed().as_nanos() as f64 / 100.0);
        while rx.recv_from(&mut buf).is_ok() {}
    }
    best
}

fn serve(clients: u64, seconds: f64) -> Result<(), Box<dyn std::error::Error>> {
    let key = generate_key()?;
    let protocol = protocol_id::<ClientMessage, ServerMessage>();
    let config = UdpServerConfig {
        max_clients: clients as usize,
        connection: game::connection_config(),
        udp: UdpConfig {
            // A tick's inputs from every client wait in the kernel: room for them.
            socket_buffer_size: 8 << 20,
            max_receive_per_poll: 1 << 16,
            max_send_queue: 1 << 16,
            measure_syscalls: true,
            ..UdpConfig::default()
        },
        ..UdpServerConfig::new(protocol, key)
    };
    let mut server: UdpServer<ServerMessage, ClientMessage> =
        UdpServer::bind("127.0.0.1:0", config)?;
    let key_hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "--drive",
            &server.local_addr().to_string(),
            &key_hex,
            &clients.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    println!(
        "load: {clients} clients in another process, server at {}",
        server.local_addr()
    );

    // Connect everyone (netcode admits a bounded number of handshakes at a time).
    let start = Instant::now();
    while (server.connected_clients() as u64) < clients
        && start.elapsed() < Duration::from_secs(120)
    {
        server.update();
        while server.poll_event().is_some() {}
        server.send_packets();
        std::thread::sleep(Duration::from_millis(5));
    }
    println!(
        "  {} connected in {:.1} s",
        server.connected_clients(),
        start.elapsed().as_secs_f64()
    );

    // Measure: wall clock and this thread's CPU time for each phase of each tick.
    let udp_before = server.driver().stats().clone();
    let measure = Instant::now();
    let loaded = run_ticks(&mut server, seconds)?;
    let wall = measure.elapsed().as_secs_f64();
    let Ticks {
        wall_phase,
        cpu_phase,
        inputs,
        ticks,
        overruns,
        snapshot_bytes,
    } = loaded;
    let udp = server.driver().stats().clone();
    let syscall_wall = (udp.syscall_nanos - udp_before.syscall_nanos) as f64 / 1e9;
    let syscalls = udp.syscalls - udp_before.syscalls;
    let sent = udp.datagrams_sent - udp_before.datagrams_sent;
    let received = udp.datagrams_received - udp_before.datagrams_received;
    let busy_wall: f64 = wall_phase.iter().sum();
    let busy_cpu: f64 = cpu_phase.iter().sum();
    let connected = server.connected_clients() as f64;
    let snapshots_sent = f64::from(ticks) * connected;

    // The same ticks with the clients paused: the per-client cost of a tick with nothing
    // received (timers, keep-alives, the connections' estimates).
    let mut stdin = child.stdin.take().ok_or("no child stdin")?;
    writeln!(stdin, "pause")?;
    std::thread::sleep(Duration::from_millis(500));
    server.update(); // what was still on its way
    while server.poll_event().is_some() {}
    let idle_before = server.driver().stats().datagrams_received;
    let idle = run_ticks(&mut server, 2.0)?;
    let idle_received = server.driver().stats().datagrams_received - idle_before;
    let idle_receive = (idle.cpu_phase[0] + idle.cpu_phase[1]) / f64::from(idle.ticks.max(1));

    // Stop the clients and wait for their report.
    drop(stdin);
    server.shutdown(Duration::from_millis(200));
    let report: Vec<String> = BufReader::new(child.stdout.take().ok_or("no child stdout")?)
        .lines()
        .map_while(Result::ok)
        .collect();
    child.wait()?;

    let ms = |seconds: f64| 1000.0 * seconds / f64::from(ticks);
    // System calls were timed by the clock; on a busy machine the clock runs on while the
    // thread waits for a core, evenly over the tick, so their share of the clock is their
    // share of the CPU time.
    let syscall_share = syscall_wall / busy_wall;
    // Receiving (update + events) is the inputs' cost; encoding and sending the
    // snapshots'. Keep-alives and acks ride along in both.
    let fixed = idle_receive / connected.max(1.0);
    let receive_per_tick = (cpu_phase[0] + cpu_phase[1]) / f64::from(ticks.max(1));
    let per_input =
        ((receive_per_tick - idle_receive).max(0.0) * f64::from(ticks)) / (received.max(1) as f64);
    let per_snapshot = (cpu_phase[2] + cpu_phase[3]) / snapshots_sent.max(1.0);
    let per_client_second = game::SNAPSHOT_HZ * (per_snapshot + fixed) + game::INPUT_HZ * per_input;
    println!("  measured {wall:.1} s: {ticks} ticks, {overruns} over 33 ms by the clock; snapshots of {snapshot_bytes} bytes");
    println!(
        "  server thread CPU {:.1}% of one core ({:.1}% by the clock), per tick {:.2} ms: receive {:.2}, events {:.2}, encode+queue {:.2}, encrypt+send {:.2}",
        100.0 * busy_cpu / wall,
        100.0 * busy_wall / wall,
        ms(busy_cpu),
        ms(cpu_phase[0]),
        ms(cpu_phase[1]),
        ms(cpu_phase[2]),
        ms(cpu_phase[3]),
    );
    println!(
        "  split: socket system calls {:.1}% ({syscalls} calls), netser {:.1}%",
        100.0 * syscall_share,
        100.0 * (1.0 - syscall_share)
    );
    println!(
        "  datagrams: {sent} sent ({:.0}/s), {received} received ({:.0}/s); inputs delivered {:.1}/s per client (the clients' process managed this rate)",
        sent as f64 / wall,
        received as f64 / wall,
        inputs as f64 / wall / connected.max(1.0)
    );
    let floor = send_to_floor(snapshot_bytes + 60);
    println!(
        "  CPU per snapshot sent {:.1} us ({:.1} us of it in send_to), per input received {:.1} us; a bare send_to of {} bytes: {:.1} us",
        per_snapshot * 1e6,
        per_snapshot * 1e6 * syscall_share,
        per_input * 1e6,
        snapshot_bytes + 60,
        floor / 1000.0
    );
    println!(
        "  CPU per client per tick with nothing received (timers, estimates): {:.1} us ({} idle ticks, {idle_received} datagrams in them)",
        fixed * 1e6,
        idle.ticks
    );
    println!(
        "  per client: {:.0} us of CPU a second (30 ticks, 30 snapshots, 60 inputs) -> one core holds about {:.0} clients",
        per_client_second * 1e6,
        1.0 / per_client_second
    );
    for line in report {
        println!("  clients process: {line}");
    }
    Ok(())
}

/// The clients' process: `--drive <server> <key hex> <count>`; runs until stdin closes.
fn drive(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let server: SocketAddr = args.first().ok_or("server address")?.parse()?;
    let key = game::parse_key(args.get(1).ok_or("key")?)?;
    let count: u64 = args.get(2).ok_or("count")?.parse()?;
    let protocol = protocol_id::<ClientMessage, ServerMessage>();
    let unix_now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let mut clients = Vec::new();
    for client_id in 1..=count {
        let params = TokenParams {
            client_id,
            timeout_seconds: 30,
            ..TokenParams::new(protocol, vec![server], unix_now)
        };
        let token = ConnectToken::generate(&params, &key)?;
        let config = UdpClientConfig {
            connection: game::connection_config(),
            ..UdpClientConfig::default()
        };
        clients.push(UdpClient::<ClientMessage, ServerMessage>::connect(
            token, config,
        )?);
    }
    // A line on stdin pauses the clients (the server then measures its fixed costs with
    // nothing arriving); the end of stdin stops them.
    let (stop_tx, stop_rx) = std::sync::mpsc::channel();
    let paused = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pause = paused.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            pause.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let _ = stop_tx.send(());
    });
    let frame = Duration::from_secs_f64(1.0 / game::INPUT_HZ);
    let (mut snapshots, mut frames, mut overruns) = (0u64, 0u32, 0u32);
    let start = Instant::now();
    while stop_rx.try_recv().is_err() {
        let frame_start = Instant::now();
        if paused.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(frame);
            continue;
        }
        for client in clients.iter_mut() {
            client.update();
            while let Some(event) = client.poll_event() {
                if let ClientEvent::Message {
                    message: ServerMessage::Snapshot(_),
                    ..
                } = event
                {
                    snapshots += 1;
                }
            }
            if client.is_connected() {
                let input = game::Input {
                    frame: frames % (1 << 20),
                    move_dir: [0.5, -0.5],
                    jump: false,
                    fire: true,
                };
                client.send_message(SEQUENCED, &ClientMessage::Input(input))?;
            }
            client.send_packets();
        }
        frames += 1;
        if frame_start.elapsed() > frame {
            overruns += 1;
        }
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {wall:.1} s ({:.1} Hz, {overruns} over 16.7 ms), {:.1} snapshots/s per client",
        f64::from(frames) / wall,
        snapshots as f64 / wall / count as f64
    );
    Ok(())
}

/// What [`run_ticks`] measured.
struct Ticks {
    /// Clock seconds in receive, events, encode + queue, encrypt + send.
    wall_phase: [f64; 4],
    /// CPU seconds in the same phases.
    cpu_phase: [f64; 4],
    inputs: u64,
    ticks: u32,
    overruns: u32,
    snapshot_bytes: usize,
}

/// Runs the server at 30 Hz for `seconds`, broadcasting a snapshot each tick.
fn run_ticks(
    server: &mut UdpServer<ServerMessage, ClientMessage>,
    seconds: f64,
) -> Result<Ticks, Box<dyn std::error::Error>> {
    let tick = Duration::from_secs_f64(1.0 / game::SNAPSHOT_HZ);
    let mut t = Ticks {
        wall_phase: [0.0; 4],
        cpu_phase: [0.0; 4],
        inputs: 0,
        ticks: 0,
        overruns: 0,
        snapshot_bytes: 0,
    };
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        let mut marks = [(Instant::now(), cpu_seconds()); 5];
        server.update();
        marks[1] = (Instant::now(), cpu_seconds());
        while let Some(event) = server.poll_event() {
            if let ServerEvent::Message {
                message: ClientMessage::Input(_),
                ..
            } = event
            {
                t.inputs += 1;
            }
        }
        marks[2] = (Instant::now(), cpu_seconds());
        let snapshot = moving_snapshot(t.ticks);
        t.snapshot_bytes = snapshot.to_vec()?.len();
        server
            .broadcast_message(SEQUENCED, &ServerMessage::Snapshot(snapshot))
            .map_err(|(_, e)| e)?;
        marks[3] = (Instant::now(), cpu_seconds());
        server.send_packets();
        marks[4] = (Instant::now(), cpu_seconds());
        for phase in 0..4 {
            t.wall_phase[phase] += (marks[phase + 1].0 - marks[phase].0).as_secs_f64();
            t.cpu_phase[phase] += marks[phase + 1].1 - marks[phase].1;
        }
        t.ticks += 1;
        let busy = marks[0].0.elapsed();
        if busy > tick {
            t.overruns += 1;
        }
        std::thread::sleep(tick.saturating_sub(busy));
    }
    Ok(t)
}
