//! The load benchmark: how many clients one server core holds at 30 Hz, each sent a
//! 64-body snapshot every tick and sending 60 inputs a second, with the clients driven
//! from another process over loopback, each with its own socket.
//!
//! `cargo run --release -p netser-examples --bin load -- --compare-renet` runs the same
//! game through netser and then through renet 2 with its netcode transport (messages
//! encoded with bitcode, as renet's users write them), and ends with the line
//! `load: N clients per core (netser), R clients per core (renet)`. The default run is
//! short; `--clients 500 --seconds 10` measures for real (more clients need a machine
//! whose clients' process keeps up: it runs them all on one thread), and
//! `--server-preset` runs netser with a proposed preset for servers of many clients.
//!
//! Each server runs on this process's main thread (one core); a second process (this
//! program with `--drive` or `--drive-renet`) runs the clients. The report gives the
//! server thread's CPU time per phase (Linux's per-thread CPU clock, so a busy machine
//! does not inflate it), the CPU cost of one snapshot sent and one input
//! received, the cost of a tick with nothing received, and from them the clients one
//! core holds (30 snapshots and 60 inputs a second each, whatever rate the clients'
//! process managed). The clients' process counts the datagrams and UDP payload bytes
//! each way. A counting allocator gives the server's live heap bytes per client once
//! connected; the worst case is the bound each library configures (netser's
//! `Connection::memory_bound`, renet's channel memory limits).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netser::NetSerialize;
use netser_examples::game::{self, ClientMessage, ServerMessage, SEQUENCED};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{generate_key, ConnectToken, Protocol, TokenParams};
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpClientEvent, UdpConfig, UdpServer, UdpServerConfig,
    UdpServerEvent,
};
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

type Error = Box<dyn std::error::Error>;

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

/// Live heap bytes while tracking is on (allocated minus freed).
static LIVE: AtomicI64 = AtomicI64::new(0);

struct LiveBytes;

impl AllocationTracker for LiveBytes {
    fn allocated(&self, _addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        LIVE.fetch_add(size as i64, Ordering::Relaxed);
    }

    fn deallocated(
        &self,
        _addr: usize,
        size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        LIVE.fetch_sub(size as i64, Ordering::Relaxed);
    }
}

/// Kernel buffers of both servers' sockets: a tick's inputs from every client wait in
/// the kernel, and a tick's snapshots leave in a burst.
const SOCKET_BUFFER: usize = 8 << 20;

/// The renet side's protocol id (any number both sides agree on).
const RENET_PROTOCOL: u64 = 0x6e65_7473_6572_7265;

/// The largest renet server the netcode transport allows (renetcode's client table).
const RENET_MAX_CLIENTS: u64 = 1024;

struct Options {
    clients: u64,
    seconds: f64,
    compare_renet: bool,
    server_preset: bool,
}

/// The connection settings of both sides: the game's, or with `--server-preset`
/// [`ConnectionConfig::for_many_clients`]: queues of 64 messages a channel, 256-packet
/// endpoint windows, a 64-sample RTT history, and blocks up to 16 KiB, two in flight,
/// two queued and two received (a connection holds about 44 KiB at rest instead of
/// 339 KiB, and its bound is about 0.34 MiB instead of 9.3 MiB).
fn connection_config(server_preset: bool) -> ConnectionConfig {
    let config = game::connection_config();
    if server_preset {
        config.for_many_clients()
    } else {
        config
    }
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--drive") => return drive(&args[1..], false),
        Some("--drive-preset") => return drive(&args[1..], true),
        Some("--drive-renet") => return drive_renet(&args[1..]),
        _ => {}
    }
    let mut options = Options {
        clients: 300,
        seconds: 3.0,
        compare_renet: false,
        server_preset: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--help" | "-h" => {
                println!(
                    "load: how many clients one server core holds at 30 Hz\n\n\
                     usage: load [--clients N] [--seconds S] [--compare-renet] [--server-preset]\n  \
                     --clients N       clients driven from a second process (default 300)\n  \
                     --seconds S       measured seconds after all have connected (default 3)\n  \
                     --compare-renet   the same game through renet 2 too (at most {RENET_MAX_CLIENTS} clients)\n  \
                     --server-preset   netser with smaller queues and windows (the proposed server preset)"
                );
                return Ok(());
            }
            "--compare-renet" => options.compare_renet = true,
            "--server-preset" => options.server_preset = true,
            "--clients" | "--seconds" => {
                let value = it.next().ok_or(format!("{flag} needs a value"))?;
                if flag == "--clients" {
                    options.clients = value.parse()?;
                } else {
                    options.seconds = value.parse()?;
                }
            }
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    if options.clients == 0 || options.seconds.is_nan() || options.seconds <= 0.0 {
        return Err("--clients and --seconds must be above 0".into());
    }
    if options.compare_renet && options.clients > RENET_MAX_CLIENTS {
        return Err(format!(
            "--compare-renet: renet's server holds at most {RENET_MAX_CLIENTS} clients"
        )
        .into());
    }
    AllocationRegistry::set_global_tracker(LiveBytes).map_err(|_| "tracker already set")?;

    // The heap is counted from before the server starts until it has played a second
    // with every client connected.
    let heap_before = LIVE.load(Ordering::Relaxed);
    AllocationRegistry::enable_tracking();
    let netser = measure(
        &mut NetserLoad::start(options.clients, options.server_preset)?,
        &options,
        heap_before,
    )?;
    let renet = if options.compare_renet {
        let heap_before = LIVE.load(Ordering::Relaxed);
        AllocationRegistry::enable_tracking();
        Some(measure(
            &mut RenetLoad::start(options.clients)?,
            &options,
            heap_before,
        )?)
    } else {
        None
    };
    println!();
    println!(
        "| 30 Hz, {} clients, {:.0} s | netser{} | renet |",
        options.clients,
        options.seconds,
        if options.server_preset {
            " (server preset)"
        } else {
            ""
        }
    );
    println!("| --- | --- | --- |");
    let cell =
        |f: &dyn Fn(&Figures) -> String| (f(&netser), renet.as_ref().map_or("-".to_string(), f));
    let rows: [(&str, &Cell); 8] = [
        ("clients per core", &|f| {
            format!("{:.0}", f.clients_per_core())
        }),
        ("server CPU per client-tick", &|f| {
            format!("{:.1} us", f.per_client_tick() * 1e6)
        }),
        ("bytes per client-second out / in (30 + 60 Hz)", &|f| {
            format!("{:.0} / {:.0}", f.traffic.nominal(2), f.traffic.nominal(4))
        }),
        ("datagrams per client-second out / in (30 + 60 Hz)", &|f| {
            format!("{:.1} / {:.1}", f.traffic.nominal(1), f.traffic.nominal(3))
        }),
        ("snapshot bytes (encoded)", &|f| {
            f.snapshot_bytes.to_string()
        }),
        ("heap per connected client", &|f| {
            format!("{:.1} KiB", f.heap_per_client / 1024.0)
        }),
        ("worst case per client (configured bound)", &|f| {
            format!("{:.1} MiB", f.worst_per_client as f64 / (1 << 20) as f64)
        }),
        ("inputs delivered per client-second", &|f| {
            format!("{:.1}", f.inputs_per_client_second)
        }),
    ];
    for (name, row) in rows {
        let (a, b) = cell(row);
        println!("| {name} | {a} | {b} |");
    }
    println!();
    match renet {
        Some(r) => println!(
            "load: {:.0} clients per core (netser), {:.0} clients per core (renet)",
            netser.clients_per_core(),
            r.clients_per_core()
        ),
        None => println!(
            "load: {:.0} clients per core (netser)",
            netser.clients_per_core()
        ),
    }
    Ok(())
}

/// One row of the table: a figure of one server's run, formatted.
type Cell = dyn Fn(&Figures) -> String;

/// A server under load: the phases of one tick, timed apart.
trait LoadServer {
    fn name(&self) -> &'static str;
    /// The clients' process, spawned by `start`.
    fn child(&mut self) -> &mut Child;
    /// Reads the socket and runs the protocol's timers.
    fn receive(&mut self) -> Result<(), Error>;
    /// Takes what was received; returns how many inputs.
    fn events(&mut self) -> Result<u64, Error>;
    /// Encodes the tick's snapshot and queues it to every client; returns its bytes.
    fn queue_snapshot(&mut self, snapshot: &game::Snapshot) -> Result<usize, Error>;
    /// Encrypts and sends what is queued.
    fn send(&mut self);
    fn connected(&self) -> usize;
    /// The configured bound of one connection's memory.
    fn worst_per_client(&self) -> usize;
    /// Says goodbye to the clients.
    fn stop(&mut self);
}

/// What one server's run measured.
struct Figures {
    /// CPU seconds per snapshot sent, per input received, per client per idle tick.
    per_snapshot: f64,
    per_input: f64,
    idle_per_client_tick: f64,
    snapshot_bytes: usize,
    heap_per_client: f64,
    worst_per_client: usize,
    inputs_per_client_second: f64,
    traffic: Traffic,
}

impl Figures {
    /// CPU seconds one client costs a second: 30 ticks with a snapshot, 60 inputs.
    fn per_client_second(&self) -> f64 {
        game::SNAPSHOT_HZ * (self.per_snapshot + self.idle_per_client_tick)
            + game::INPUT_HZ * self.per_input
    }

    fn per_client_tick(&self) -> f64 {
        self.per_client_second() / game::SNAPSHOT_HZ
    }

    fn clients_per_core(&self) -> f64 {
        1.0 / self.per_client_second()
    }
}

/// The clients' process's counts over the measured seconds: `[seconds, datagrams in,
/// bytes in, datagrams out, bytes out]` (in = what the server sent), the clients, and
/// the server's ticks and the inputs it received in the same seconds.
#[derive(Default)]
struct Traffic {
    values: [f64; 5],
    clients: f64,
    ticks: f64,
    inputs: f64,
}

impl Traffic {
    /// What the clients' process counted, per client-second.
    fn measured(&self, index: usize) -> f64 {
        self.values[index] / self.values[0].max(1e-9) / self.clients.max(1.0)
    }

    /// Per client-second at the game's rates, whatever rates a busy machine managed:
    /// what the server sent per client-tick times 30 (`index` 1 datagrams, 2 bytes),
    /// and what the clients sent per input delivered times 60 (3 datagrams, 4 bytes).
    fn nominal(&self, index: usize) -> f64 {
        if index <= 2 {
            self.values[index] / self.ticks.max(1.0) / self.clients.max(1.0) * game::SNAPSHOT_HZ
        } else {
            self.values[index] / self.inputs.max(1.0) * game::INPUT_HZ
        }
    }
}

/// Connects every client, measures heap, ticks under load, ticks with the clients
/// paused, and stops.
fn measure(
    server: &mut dyn LoadServer,
    options: &Options,
    heap_before: i64,
) -> Result<Figures, Error> {
    let name = server.name();
    println!("{name}: {} clients in another process", options.clients);
    let mut stdin = server.child().stdin.take().ok_or("no child stdin")?;
    let start = Instant::now();
    let mut last_tick = (Instant::now(), 0.0);
    while (server.connected() as u64) < options.clients
        && start.elapsed() < Duration::from_secs(120)
    {
        server.receive()?;
        server.events()?;
        server.send();
        std::thread::sleep(Duration::from_millis(5));
        if last_tick.0.elapsed() > Duration::from_secs(10) {
            last_tick = (Instant::now(), server.connected() as f64);
            println!("  {} connected so far", last_tick.1);
        }
    }
    println!(
        "  {} connected in {:.1} s",
        server.connected(),
        start.elapsed().as_secs_f64()
    );
    // One more second of play with the live heap tracked (the counter's cost stays out
    // of the CPU figures below).
    run_ticks(server, 1.0)?;
    AllocationRegistry::disable_tracking();
    let heap_growth = LIVE.load(Ordering::Relaxed) - heap_before;

    writeln!(stdin, "mark")?;
    let loaded = run_ticks(server, options.seconds)?;
    writeln!(stdin, "pause")?;
    std::thread::sleep(Duration::from_millis(500));
    server.receive()?; // what was still on its way
    server.events()?;
    let idle = run_ticks(server, 1.0)?;
    let connected = server.connected().max(1) as f64;
    let worst_per_client = server.worst_per_client();
    drop(stdin);
    server.stop();
    let report: Vec<String> =
        BufReader::new(server.child().stdout.take().ok_or("no child stdout")?)
            .lines()
            .map_while(Result::ok)
            .collect();
    server.child().wait()?;

    let ticks = f64::from(loaded.ticks.max(1));
    let mut traffic = Traffic {
        clients: options.clients as f64,
        ticks: f64::from(loaded.ticks),
        inputs: loaded.inputs as f64,
        ..Traffic::default()
    };
    for line in &report {
        match line.strip_prefix("traffic ") {
            Some(numbers) => {
                for (slot, n) in traffic.values.iter_mut().zip(numbers.split(' ')) {
                    *slot = n.parse()?;
                }
            }
            None => println!("  clients' process: {line}"),
        }
    }
    let idle_receive = (idle.cpu_phase[0] + idle.cpu_phase[1]) / f64::from(idle.ticks.max(1));
    let receive_per_tick = (loaded.cpu_phase[0] + loaded.cpu_phase[1]) / ticks;
    let figures = Figures {
        per_snapshot: (loaded.cpu_phase[2] + loaded.cpu_phase[3]) / (ticks * connected),
        per_input: (receive_per_tick - idle_receive).max(0.0) * ticks
            / (loaded.inputs.max(1) as f64),
        idle_per_client_tick: idle_receive / connected,
        snapshot_bytes: loaded.snapshot_bytes,
        heap_per_client: heap_growth.max(0) as f64 / connected,
        worst_per_client,
        inputs_per_client_second: loaded.inputs as f64 / loaded.wall / connected,
        traffic,
    };
    let busy: f64 = loaded.cpu_phase.iter().sum();
    let ms = |s: f64| 1000.0 * s / ticks;
    println!(
        "  measured {:.1} s: {} ticks ({} over 33 ms by the clock); server thread CPU {:.1}% of a core, per tick {:.2} ms: receive {:.2}, events {:.2}, encode+queue {:.2}, encrypt+send {:.2}",
        loaded.wall,
        loaded.ticks,
        loaded.overruns,
        100.0 * busy / loaded.wall,
        ms(busy),
        ms(loaded.cpu_phase[0]),
        ms(loaded.cpu_phase[1]),
        ms(loaded.cpu_phase[2]),
        ms(loaded.cpu_phase[3]),
    );
    println!(
        "  CPU per snapshot sent {:.1} us, per input received {:.1} us, per client per idle tick {:.2} us -> {:.0} clients per core",
        figures.per_snapshot * 1e6,
        figures.per_input * 1e6,
        figures.idle_per_client_tick * 1e6,
        figures.clients_per_core()
    );
    let t = &figures.traffic;
    println!(
        "  measured by the clients' process, per client-second: out {:.1} datagrams, {:.0} bytes; in {:.1} datagrams, {:.0} bytes",
        t.measured(1),
        t.measured(2),
        t.measured(3),
        t.measured(4)
    );
    Ok(figures)
}

/// What [`run_ticks`] measured.
struct Ticks {
    /// CPU seconds in receive, events, encode + queue, encrypt + send.
    cpu_phase: [f64; 4],
    wall: f64,
    inputs: u64,
    ticks: u32,
    overruns: u32,
    snapshot_bytes: usize,
}

/// Runs the server at 30 Hz for `seconds`, broadcasting a snapshot each tick.
fn run_ticks(server: &mut dyn LoadServer, seconds: f64) -> Result<Ticks, Error> {
    let tick = Duration::from_secs_f64(1.0 / game::SNAPSHOT_HZ);
    let mut t = Ticks {
        cpu_phase: [0.0; 4],
        wall: 0.0,
        inputs: 0,
        ticks: 0,
        overruns: 0,
        snapshot_bytes: 0,
    };
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        let tick_start = Instant::now();
        let snapshot = moving_snapshot(t.ticks);
        let mut marks = [cpu_seconds(); 5];
        server.receive()?;
        marks[1] = cpu_seconds();
        t.inputs += server.events()?;
        marks[2] = cpu_seconds();
        t.snapshot_bytes = server.queue_snapshot(&snapshot)?;
        marks[3] = cpu_seconds();
        server.send();
        marks[4] = cpu_seconds();
        for phase in 0..4 {
            t.cpu_phase[phase] += marks[phase + 1] - marks[phase];
        }
        t.ticks += 1;
        let busy = tick_start.elapsed();
        if busy > tick {
            t.overruns += 1;
        }
        std::thread::sleep(tick.saturating_sub(busy));
    }
    t.wall = start.elapsed().as_secs_f64();
    Ok(t)
}

/// Every body moving: the largest snapshot.
fn moving_snapshot(tick: u32) -> game::Snapshot {
    let mut snapshot = game::snapshot(tick);
    for body in &mut snapshot.bodies {
        body.at_rest = false;
        body.velocity = [1.0 + f32::from(body.id) * 0.1, -2.0, 0.5];
    }
    snapshot
}

/// Seconds this thread has run on a CPU (Linux's CLOCK_THREAD_CPUTIME_ID); 0 elsewhere.
/// CPU time, unlike the clock, does not count the time the thread waited for a core on
/// a busy machine.
fn cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
    }
    #[cfg(not(target_os = "linux"))]
    {
        0.0
    }
}

fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// This program again, as the clients' process.
fn spawn_clients(
    mode: &str,
    server: SocketAddr,
    key: &[u8; 32],
    clients: u64,
) -> Result<Child, Error> {
    Ok(Command::new(std::env::current_exe()?)
        .args([mode, &server.to_string(), &hex(key), &clients.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?)
}

struct NetserLoad {
    server: UdpServer<ServerMessage, ClientMessage>,
    child: Child,
}

impl NetserLoad {
    fn start(clients: u64, server_preset: bool) -> Result<Self, Error> {
        let key = generate_key()?;
        let protocol = Protocol::with_connection(connection_config(server_preset));
        let config = UdpServerConfig {
            max_clients: clients as usize,
            udp: UdpConfig {
                socket_buffer_size: SOCKET_BUFFER,
                max_receive_per_poll: 1 << 16,
                max_send_queue: 1 << 16,
                ..UdpConfig::default()
            },
            ..UdpServerConfig::new(key)
        };
        let server = UdpServer::bind("127.0.0.1:0", &protocol, config)?;
        let mode = if server_preset {
            "--drive-preset"
        } else {
            "--drive"
        };
        let child = spawn_clients(mode, server.local_addr(), &key, clients)?;
        Ok(Self { server, child })
    }
}

impl LoadServer for NetserLoad {
    fn name(&self) -> &'static str {
        "netser"
    }

    fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    fn receive(&mut self) -> Result<(), Error> {
        self.server.receive();
        Ok(())
    }

    fn events(&mut self) -> Result<u64, Error> {
        let mut inputs = 0;
        while let Some(event) = self.server.poll_event() {
            if let UdpServerEvent::Message {
                message: ClientMessage::Input(_),
                ..
            } = event
            {
                inputs += 1;
            }
        }
        Ok(inputs)
    }

    fn queue_snapshot(&mut self, snapshot: &game::Snapshot) -> Result<usize, Error> {
        let message = ServerMessage::Snapshot(snapshot.clone());
        let bytes = message.measure_bits()?.div_ceil(8) as usize;
        self.server.broadcast_message(SEQUENCED, &message)?;
        Ok(bytes)
    }

    fn send(&mut self) {
        self.server.transmit();
    }

    fn connected(&self) -> usize {
        self.server.connected_clients()
    }

    fn worst_per_client(&self) -> usize {
        let id = self.server.client_ids().first().copied();
        id.and_then(|id| self.server.connection(id))
            .map_or(0, |c| c.memory_bound())
    }

    fn stop(&mut self) {
        self.server.shutdown(Duration::from_millis(200));
    }
}

/// The renet side's messages, written as renet's users write them: plain fields,
/// encoded with bitcode.
#[derive(bitcode::Encode, bitcode::Decode)]
struct RenetBody {
    id: u8,
    health: u8,
    position: [f32; 3],
    orientation: [f32; 4],
    at_rest: bool,
    velocity: [f32; 3],
}

#[derive(bitcode::Encode, bitcode::Decode)]
struct RenetSnapshot {
    tick: u32,
    bodies: Vec<RenetBody>,
}

#[derive(bitcode::Encode, bitcode::Decode)]
struct RenetInput {
    frame: u32,
    move_dir: [f32; 2],
    jump: bool,
    fire: bool,
}

struct RenetLoad {
    server: renet::RenetServer,
    transport: renet_netcode::NetcodeServerTransport,
    last_update: Instant,
    child: Child,
}

impl RenetLoad {
    fn start(clients: u64) -> Result<Self, Error> {
        let mut key = [0u8; 32];
        key.copy_from_slice(&generate_key()?);
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        let sock = socket2::SockRef::from(&socket);
        sock.set_recv_buffer_size(SOCKET_BUFFER)?;
        sock.set_send_buffer_size(SOCKET_BUFFER)?;
        let addr = socket.local_addr()?;
        let config = renet_netcode::ServerConfig {
            current_time: SystemTime::now().duration_since(UNIX_EPOCH)?,
            max_clients: clients as usize,
            protocol_id: RENET_PROTOCOL,
            public_addresses: vec![addr],
            authentication: renet_netcode::ServerAuthentication::Secure { private_key: key },
        };
        let transport = renet_netcode::NetcodeServerTransport::new(config, socket)?;
        let server = renet::RenetServer::new(renet::ConnectionConfig::default());
        let child = spawn_clients("--drive-renet", addr, &key, clients)?;
        Ok(Self {
            server,
            transport,
            last_update: Instant::now(),
            child,
        })
    }
}

impl LoadServer for RenetLoad {
    fn name(&self) -> &'static str {
        "renet"
    }

    fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    fn receive(&mut self) -> Result<(), Error> {
        let now = Instant::now();
        let delta = now - self.last_update;
        self.last_update = now;
        self.server.update(delta);
        self.transport.update(delta, &mut self.server)?;
        Ok(())
    }

    fn events(&mut self) -> Result<u64, Error> {
        while self.server.get_event().is_some() {}
        let mut inputs = 0;
        for client_id in self.server.clients_id() {
            while let Some(message) = self
                .server
                .receive_message(client_id, renet::DefaultChannel::Unreliable)
            {
                let _input: RenetInput = bitcode::decode(&message)?;
                inputs += 1;
            }
        }
        Ok(inputs)
    }

    fn queue_snapshot(&mut self, snapshot: &game::Snapshot) -> Result<usize, Error> {
        let message = bitcode::encode(&RenetSnapshot {
            tick: snapshot.tick,
            bodies: snapshot
                .bodies
                .iter()
                .map(|b| RenetBody {
                    id: b.id,
                    health: b.health,
                    position: b.position,
                    orientation: b.orientation,
                    at_rest: b.at_rest,
                    velocity: b.velocity,
                })
                .collect(),
        });
        let bytes = message.len();
        self.server
            .broadcast_message(renet::DefaultChannel::Unreliable, message);
        Ok(bytes)
    }

    fn send(&mut self) {
        self.transport.send_packets(&mut self.server);
    }

    fn connected(&self) -> usize {
        self.server.connected_clients()
    }

    fn worst_per_client(&self) -> usize {
        // renet bounds each channel's memory by its `max_memory_usage_bytes`, on both
        // sides of the connection.
        let config = renet::ConnectionConfig::default();
        config
            .server_channels_config
            .iter()
            .chain(&config.client_channels_config)
            .map(|c| c.max_memory_usage_bytes)
            .sum()
    }

    fn stop(&mut self) {
        self.transport.disconnect_all(&mut self.server);
    }
}

/// The clients' process's side of the stdin protocol: `mark` starts the count of
/// traffic, `pause` ends it and stops the clients' sends (the server then measures its
/// ticks with nothing arriving), the end of stdin stops the process.
struct Control {
    stop: mpsc::Receiver<()>,
    paused: Arc<AtomicBool>,
    marked: Arc<AtomicBool>,
}

impl Control {
    fn listen() -> Self {
        let (stop_tx, stop) = mpsc::channel();
        let paused = Arc::new(AtomicBool::new(false));
        let marked = Arc::new(AtomicBool::new(false));
        let (pause, mark) = (paused.clone(), marked.clone());
        std::thread::spawn(move || {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                match line.trim() {
                    "mark" => mark.store(true, Ordering::Relaxed),
                    _ => pause.store(true, Ordering::Relaxed),
                }
                line.clear();
            }
            let _ = stop_tx.send(());
        });
        Self {
            stop,
            paused,
            marked,
        }
    }

    fn running(&self) -> bool {
        self.stop.try_recv().is_err()
    }
}

/// Counts of the clients' traffic, `[datagrams in, bytes in, datagrams out, bytes out]`,
/// and the window between `mark` and `pause`.
#[derive(Default)]
struct Counts {
    now: [u64; 4],
    at_mark: Option<([u64; 4], Instant)>,
    at_pause: Option<([u64; 4], Instant)>,
}

impl Counts {
    fn follow(&mut self, control: &Control) {
        if self.at_mark.is_none() && control.marked.load(Ordering::Relaxed) {
            self.at_mark = Some((self.now, Instant::now()));
        }
        if self.at_pause.is_none() && control.paused.load(Ordering::Relaxed) {
            self.at_pause = Some((self.now, Instant::now()));
        }
    }

    fn print(&self) {
        if let (Some((a, t0)), Some((b, t1))) = (self.at_mark, self.at_pause) {
            println!(
                "traffic {} {} {} {} {}",
                (t1 - t0).as_secs_f64(),
                b[0] - a[0],
                b[1] - a[1],
                b[2] - a[2],
                b[3] - a[3]
            );
        }
    }
}

fn drive_args(args: &[String]) -> Result<(SocketAddr, [u8; 32], u64), Error> {
    let server: SocketAddr = args.first().ok_or("server address")?.parse()?;
    let key = game::parse_key(args.get(1).ok_or("key")?)?;
    let count: u64 = args.get(2).ok_or("count")?.parse()?;
    Ok((server, key, count))
}

/// The netser clients' process: `--drive <server> <key hex> <count>` (or
/// `--drive-preset`, with the server preset's settings).
fn drive(args: &[String], server_preset: bool) -> Result<(), Error> {
    let (server, key, count) = drive_args(args)?;
    let protocol = Protocol::with_connection(connection_config(server_preset));
    let mut clients = Vec::new();
    for client_id in 1..=count {
        let params = TokenParams {
            client_id,
            timeout_seconds: 30,
            ..protocol.token_params(vec![server], SystemTime::now())
        };
        let token = ConnectToken::generate(&params, &key)?;
        clients.push(UdpClient::<ClientMessage, ServerMessage>::connect(
            token,
            &protocol,
            UdpClientConfig::default(),
        )?);
    }
    let control = Control::listen();
    let mut counts = Counts::default();
    let frame = Duration::from_secs_f64(1.0 / game::INPUT_HZ);
    let (mut snapshots, mut frames) = (0u64, 0u32);
    let start = Instant::now();
    while control.running() {
        let frame_start = Instant::now();
        let paused = control.paused.load(Ordering::Relaxed);
        for client in clients.iter_mut() {
            client.receive();
            while let Some(event) = client.poll_event() {
                if let UdpClientEvent::Message {
                    message: ServerMessage::Snapshot(_),
                    ..
                } = event
                {
                    snapshots += 1;
                }
            }
            if client.is_connected() && !paused {
                let input = game::Input {
                    frame: frames % (1 << 20),
                    move_dir: [0.5, -0.5],
                    jump: false,
                    fire: true,
                };
                client.send_message(SEQUENCED, &ClientMessage::Input(input))?;
            }
            if !paused {
                client.transmit();
            }
        }
        counts.now = clients.iter().fold([0; 4], |mut sum, c| {
            let s = c.driver().stats();
            sum[0] += s.datagrams_received;
            sum[1] += s.bytes_received;
            sum[2] += s.datagrams_sent;
            sum[3] += s.bytes_sent;
            sum
        });
        counts.follow(&control);
        frames += 1;
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {wall:.1} s ({:.1} Hz), {:.1} snapshots/s per client",
        f64::from(frames) / wall,
        snapshots as f64 / wall / count as f64
    );
    counts.print();
    Ok(())
}

/// One renet client of the load: its socket, netcode and connection. The load drives
/// renetcode's client by hand (rather than through renet_netcode's client transport)
/// only to count the datagrams and bytes each way.
struct RenetDriven {
    socket: UdpSocket,
    netcode: renetcode::NetcodeClient,
    connection: renet::RenetClient,
}

/// The renet clients' process: `--drive-renet <server> <key hex> <count>`.
fn drive_renet(args: &[String]) -> Result<(), Error> {
    let (server, key, count) = drive_args(args)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
    let mut clients = Vec::new();
    for client_id in 1..=count {
        let token = renetcode::ConnectToken::generate(
            now,
            RENET_PROTOCOL,
            300,
            client_id,
            30,
            vec![server],
            None,
            &key,
        )?;
        let auth = renetcode::ClientAuthentication::Secure {
            connect_token: token,
        };
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_nonblocking(true)?;
        clients.push(RenetDriven {
            socket,
            netcode: renetcode::NetcodeClient::new(now, auth)?,
            connection: renet::RenetClient::new(renet::ConnectionConfig::default()),
        });
    }
    let control = Control::listen();
    let mut counts = Counts::default();
    let frame = Duration::from_secs_f64(1.0 / game::INPUT_HZ);
    let (mut snapshots, mut frames) = (0u64, 0u32);
    let mut buf = [0u8; renetcode::NETCODE_MAX_PACKET_BYTES];
    let start = Instant::now();
    let mut last = Instant::now();
    while control.running() {
        let frame_start = Instant::now();
        let delta = frame_start - last;
        last = frame_start;
        let paused = control.paused.load(Ordering::Relaxed);
        for c in clients.iter_mut() {
            while let Ok((len, from)) = c.socket.recv_from(&mut buf) {
                counts.now[0] += 1;
                counts.now[1] += len as u64;
                if from != server {
                    continue;
                }
                if let Some(payload) = c.netcode.process_packet(&mut buf[..len]) {
                    c.connection.process_packet(payload);
                }
            }
            if let Some((packet, to)) = c.netcode.update(delta) {
                if !paused {
                    counts.now[2] += 1;
                    counts.now[3] += packet.len() as u64;
                    c.socket.send_to(packet, to)?;
                }
            }
            if c.netcode.is_connected() {
                c.connection.set_connected();
            } else if c.netcode.is_connecting() {
                c.connection.set_connecting();
            }
            c.connection.update(delta);
            while let Some(message) = c
                .connection
                .receive_message(renet::DefaultChannel::Unreliable)
            {
                let _snapshot: RenetSnapshot = bitcode::decode(&message)?;
                snapshots += 1;
            }
            if c.connection.is_connected() && !paused {
                let input = RenetInput {
                    frame: frames,
                    move_dir: [0.5, -0.5],
                    jump: false,
                    fire: true,
                };
                c.connection
                    .send_message(renet::DefaultChannel::Unreliable, bitcode::encode(&input));
            }
            if !paused {
                for packet in c.connection.get_packets_to_send() {
                    let (to, bytes) = c.netcode.generate_payload_packet(&packet)?;
                    counts.now[2] += 1;
                    counts.now[3] += bytes.len() as u64;
                    c.socket.send_to(bytes, to)?;
                }
            }
        }
        counts.follow(&control);
        frames += 1;
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {wall:.1} s ({:.1} Hz), {:.1} snapshots/s per client",
        f64::from(frames) / wall,
        snapshots as f64 / wall / count as f64
    );
    counts.print();
    Ok(())
}
