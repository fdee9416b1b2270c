//! The README's main command: a game server and several clients over real UDP sockets on
//! 127.0.0.1, in one process, with loss, latency and jitter added to every socket.
//!
//! - Clients connect with connect tokens (netcode: challenge handshake, encrypted and
//!   signed packets).
//! - On join the server sends each client the 256 KiB world as one reliable message: the
//!   connection sends it as a block of slices, resent until acked (progress bars).
//! - The server sends 30 snapshots a second of 64 moving rigid bodies through the
//!   snapshot layer: each delta-encoded against the newest one the client acked (clients
//!   holding the same one share the encoding), and relays every chat line to everyone
//!   (reliable-ordered).
//! - Clients send 60 inputs a second (unreliable-sequenced) and a chat line every half
//!   second.
//!
//! At the end every client disconnects and a summary says whether every check passed;
//! the exit status is 0 only if they all did.
//!
//! `cargo run -p netser-examples -- --seconds 5 --loss 5 --latency 50 --jitter 10 --clients 4`

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use netser::NetSerialize;
use netser_examples::game::{self, ClientMessage, ServerMessage, RELIABLE, SEQUENCED};
use netser_transport::netcode::{
    generate_key, ConnectToken, DisconnectReason, Protocol, TokenParams,
};
use netser_transport::simulator::SimulatorConfig;
use netser_transport::snapshot::SendOutcome;
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpClientEvent, UdpConfig, UdpServer, UdpServerConfig,
    UdpServerEvent,
};

/// The bodies as the snapshot layer sends them: `game::Snapshot` with the derive's
/// delta encoding (the same fields and bounds as `game::Body`).
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct Frame {
    /// Server tick (30 Hz), wrapping at 2^20.
    #[net(range = 0..=1048575)]
    tick: u32,
    /// Every body.
    #[net(max_len = 64)]
    bodies: Vec<FrameBody>,
}

/// `game::Body`, with a delta encoding.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
struct FrameBody {
    #[net(range = 0..=63)]
    id: u8,
    #[net(range = 0..=100)]
    health: u8,
    #[net(quantize(min = -256.0, max = 256.0, res = 0.0078125))]
    position: [f32; 3],
    #[net(quat(bits = 10))]
    orientation: [f32; 4],
    at_rest: bool,
    #[net(when = !at_rest, quantize(min = -32.0, max = 32.0, res = 0.015625))]
    velocity: [f32; 3],
}

impl Frame {
    /// The frame of a game snapshot.
    fn of(snapshot: &game::Snapshot) -> Self {
        Self {
            tick: snapshot.tick,
            bodies: snapshot
                .bodies
                .iter()
                .map(|b| FrameBody {
                    id: b.id,
                    health: b.health,
                    position: b.position,
                    orientation: b.orientation,
                    at_rest: b.at_rest,
                    velocity: b.velocity,
                })
                .collect(),
        }
    }

    /// Back to the game's bodies, to check them against the truth.
    fn bodies(&self) -> Vec<game::Body> {
        self.bodies
            .iter()
            .map(|b| game::Body {
                id: b.id,
                health: b.health,
                position: b.position,
                orientation: b.orientation,
                at_rest: b.at_rest,
                velocity: b.velocity,
            })
            .collect()
    }
}

/// The command line.
struct Args {
    seconds: f64,
    loss: f64,
    latency: f64,
    jitter: f64,
    clients: u64,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 5.0,
        loss: 5.0,
        latency: 50.0,
        jitter: 10.0,
        clients: 4,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = |max: f64| -> Result<f64, String> {
            match value.parse::<f64>() {
                Ok(v) if (0.0..=max).contains(&v) => Ok(v),
                _ => Err(format!("{flag} {value}: expected a number from 0 to {max}")),
            }
        };
        match flag.as_str() {
            "--seconds" => args.seconds = number(3600.0)?,
            "--loss" => args.loss = number(90.0)?,
            "--latency" => args.latency = number(2000.0)?,
            "--jitter" => args.jitter = number(2000.0)?,
            "--clients" => args.clients = number(64.0)?.max(1.0) as u64,
            "--seed" => args.seed = number(1e15)? as u64,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

const USAGE: &str =
    "usage: demo [--seconds 5] [--loss 5] [--latency 50] [--jitter 10] [--clients 4] [--seed 1]
  --loss      percent of datagrams lost, each way
  --latency   milliseconds of one-way latency, each way
  --jitter    milliseconds added or taken off the latency at random";

/// What one client saw.
#[derive(Default)]
struct ClientLog {
    connected_at: Option<f64>,
    world_at: Option<f64>,
    world_ok: bool,
    snapshots: u64,
    /// Snapshots the server sent while this client was connected.
    snapshots_expected: u64,
    snapshot_older: u64,
    snapshot_wrong: u64,
    last_tick: Option<u32>,
    /// Next chat line expected from each sender.
    chat_next: HashMap<u64, u32>,
    chat_received: u64,
    chat_out_of_order: u64,
    chat_sent: u32,
    disconnect: Option<DisconnectReason>,
}

/// What the server saw of one client.
#[derive(Default)]
struct ServerLog {
    inputs: u64,
    inputs_older: u64,
    last_frame: Option<u32>,
    disconnect: Option<DisconnectReason>,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // The transport's errors describe their own layer; the cause is in source().
            let mut message = format!("demo: {e}");
            let mut source = e.source();
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<bool, Box<dyn std::error::Error>> {
    // The network: each socket delays, jitters and drops what it sends.
    let network = |seed: u64| UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency: args.latency / 1000.0,
            jitter: args.jitter / 1000.0,
            loss: args.loss / 100.0,
            seed,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    };

    // The server. The key is shared with the backend that issues connect tokens; the
    // protocol id covers the message and snapshot types and the channels, so an
    // incompatible client is refused.
    let key = generate_key()?;
    let protocol =
        Protocol::<ClientMessage, ServerMessage, Frame>::with_connection(game::connection_config());
    let config = UdpServerConfig {
        max_clients: args.clients as usize,
        udp: network(args.seed),
        ..UdpServerConfig::new(key)
    };
    let mut server = UdpServer::bind("127.0.0.1:0", &protocol, config)?;

    // The clients, each with a token the "backend" (here, this process) issued.
    let mut clients = Vec::new();
    for client_id in 1..=args.clients {
        let params = TokenParams {
            client_id,
            ..protocol.token_params(vec![server.local_addr()], SystemTime::now())
        };
        let token = ConnectToken::generate(&params, &key)?;
        let config = UdpClientConfig {
            udp: network(args.seed + client_id),
        };
        clients.push(UdpClient::connect(token, &protocol, config)?);
    }
    println!(
        "netser demo: {} clients and a server on {}, over UDP with {}% loss, {} ms latency, {} ms jitter each way, for {} s",
        args.clients,
        server.local_addr(),
        args.loss,
        args.latency,
        args.jitter,
        args.seconds
    );

    let bars = MultiProgress::new();
    let style = ProgressStyle::with_template(
        "  world to client {prefix}: [{bar:30}] {bytes}/{total_bytes}",
    )?
    .progress_chars("=> ");
    let progress: Vec<ProgressBar> = (1..=args.clients)
        .map(|id| {
            let bar = bars.add(ProgressBar::new(game::WORLD_BYTES as u64));
            bar.set_style(style.clone());
            bar.set_prefix(id.to_string());
            bar
        })
        .collect();

    let world = game::world_data();
    let mut client_logs: Vec<ClientLog> = (0..args.clients).map(|_| ClientLog::default()).collect();
    let mut server_logs: HashMap<u64, ServerLog> = HashMap::new();
    let mut joined_at: HashMap<u64, f64> = HashMap::new();
    let (mut snapshots_sent, mut snapshot_bytes, mut chat_relayed) = (0u64, 0usize, 0u64);
    // Bytes of the snapshots sent to clients as deltas, and how many went whole.
    let (mut delta_sends, mut delta_bits, mut whole_sends) = (0u64, 0u64, 0u64);
    let mut tick = 0u32;
    let frame = Duration::from_secs_f64(1.0 / game::INPUT_HZ);
    let start = Instant::now();
    let play = Duration::from_secs_f64(args.seconds);
    // Chat stops a second before the end; then the run goes on until everything sent
    // has arrived (at most 30 s more: a slow debug build on a busy machine needs it).
    let chat_until = play.saturating_sub(Duration::from_secs(1));
    let deadline = play + Duration::from_secs(30);

    loop {
        let elapsed = start.elapsed();
        let t = elapsed.as_secs_f64();

        // Clients: events, then an input every frame and a chat line every half second.
        for (i, client) in clients.iter_mut().enumerate() {
            let log = &mut client_logs[i];
            client.receive();
            if let Some((_, frame)) = client.poll_snapshot() {
                check_snapshot(log, frame);
            }
            while let Some(event) = client.poll_event() {
                match event {
                    UdpClientEvent::Connected { .. } => log.connected_at = Some(t),
                    UdpClientEvent::Disconnected { reason } => log.disconnect = Some(reason),
                    UdpClientEvent::BlockProgress { progress: block } => {
                        progress[i].set_length(block.total as u64);
                        progress[i].set_position(block.done as u64);
                    }
                    UdpClientEvent::Message { message, .. } => {
                        receive(log, message, &world, t, &progress[i])
                    }
                    // Events added to the transport later.
                    _ => {}
                }
            }
            if client.is_connected() {
                let frame_number = (t * game::INPUT_HZ) as u32 % (1 << 20);
                let input = game::Input {
                    frame: frame_number,
                    move_dir: [(t as f32).sin(), (t as f32).cos()],
                    jump: frame_number.is_multiple_of(40),
                    fire: frame_number.is_multiple_of(7),
                };
                client.send_message(SEQUENCED, &ClientMessage::Input(input))?;
                // (Relayed lines reach a client after its world: one ordered channel.)
                if elapsed < chat_until && t * 2.0 >= f64::from(log.chat_sent) {
                    let line = game::Chat {
                        from: client.client_id(),
                        seq: log.chat_sent,
                        text: game::chat_text(client.client_id(), log.chat_sent),
                    };
                    client.send_message(RELIABLE, &ClientMessage::Chat(line))?;
                    log.chat_sent += 1;
                }
            }
            client.transmit();
        }

        // Server: joins get the world, chat is relayed, inputs counted; 30 Hz snapshots.
        server.receive();
        while let Some(event) = server.poll_event() {
            match event {
                UdpServerEvent::ClientConnected { client_id, .. } => {
                    joined_at.insert(client_id, t);
                    server_logs.entry(client_id).or_default();
                    let message = ServerMessage::World(game::World {
                        data: world.clone(),
                    });
                    server.send_message(client_id, RELIABLE, &message)?;
                }
                UdpServerEvent::ClientDisconnected {
                    client_id, reason, ..
                } => {
                    server_logs.entry(client_id).or_default().disconnect = Some(reason);
                }
                UdpServerEvent::Message {
                    client_id, message, ..
                } => match message {
                    ClientMessage::Input(input) => {
                        let log = server_logs.entry(client_id).or_default();
                        log.inputs += 1;
                        if log.last_frame.is_some_and(|last| input.frame <= last) {
                            log.inputs_older += 1;
                        }
                        log.last_frame = Some(input.frame);
                    }
                    ClientMessage::Chat(mut line) => {
                        line.from = client_id; // the server says who wrote it
                        server.broadcast_message(RELIABLE, &ServerMessage::Chat(line))?;
                        chat_relayed += 1;
                    }
                },
                // BlockProgress, and events added to the transport later.
                _ => {}
            }
        }
        if tick.is_multiple_of(2) && elapsed < play {
            // Quantized by a round trip, so what the clients decode equals it exactly.
            let frame = Frame::decode_from_slice(&Frame::of(&game::snapshot(tick / 2)).to_vec()?)?;
            snapshot_bytes += frame.to_vec()?.len();
            snapshots_sent += 1;
            server.push_snapshot(frame);
            for id in server.client_ids() {
                // (Not `Sent` when equal to what the client holds: nothing went.)
                if let SendOutcome::Sent { baseline, bits, .. } = server.send_snapshot(id)? {
                    delta_sends += 1;
                    delta_bits += bits;
                    whole_sends += u64::from(baseline.is_none());
                    client_logs[id as usize - 1].snapshots_expected += 1;
                }
            }
        }
        server.transmit();
        tick += 1;

        let chat_done = client_logs.iter().all(|log| {
            log.chat_received
                == client_logs
                    .iter()
                    .map(|l| u64::from(l.chat_sent))
                    .sum::<u64>()
                && log.world_at.is_some()
        });
        if (elapsed >= play && chat_done) || elapsed >= deadline {
            break;
        }
        std::thread::sleep(frame.saturating_sub(start.elapsed() - elapsed));
    }

    // Everyone leaves; the server sees each disconnect, then shuts down.
    let infos: Vec<_> = clients.iter().map(|c| c.network_info()).collect();
    let server_infos: HashMap<u64, _> = (1..=args.clients)
        .filter_map(|id| server.network_info(id).map(|info| (id, info)))
        .collect();
    for client in clients.iter_mut() {
        client.disconnect();
    }
    let leave = Instant::now();
    while server.connected_clients() > 0 && leave.elapsed() < Duration::from_secs(3) {
        server.receive();
        while let Some(event) = server.poll_event() {
            if let UdpServerEvent::ClientDisconnected {
                client_id, reason, ..
            } = event
            {
                server_logs.entry(client_id).or_default().disconnect = Some(reason);
            }
        }
        server.transmit();
        for client in clients.iter_mut() {
            client.receive(); // lets the simulators release the disconnect packets
            client.transmit();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    server.shutdown(Duration::from_millis(100));
    for bar in &progress {
        bar.finish_and_clear();
    }

    // The summary.
    let played = start.elapsed().as_secs_f64();
    let avg_snapshot = snapshot_bytes / snapshots_sent.max(1) as usize;
    let avg_delta = delta_bits as f64 / 8.0 / delta_sends.max(1) as f64;
    let plain = game::plain_snapshot_bytes(&game::snapshot(0));
    println!(
        "  snapshots    {snapshots_sent} at 30 Hz, 64 bodies: {avg_snapshot} bytes absolute, {avg_delta:.0} bytes delta on average \
         ({delta_sends} sends, {whole_sends} whole), plain f32 fields {plain} bytes ({:.1}x smaller absolute, {:.1}x delta)",
        plain as f64 / avg_snapshot.max(1) as f64,
        plain as f64 / avg_delta.max(1.0)
    );
    let chat_total: u64 = client_logs.iter().map(|l| u64::from(l.chat_sent)).sum();
    println!("  chat         {chat_total} lines written, {chat_relayed} relayed to every client");
    for (i, log) in client_logs.iter().enumerate() {
        let id = i as u64 + 1;
        let block_time = match (joined_at.get(&id), log.world_at) {
            (Some(joined), Some(done)) => format!("{:.2} s", done - joined),
            _ => "not received".into(),
        };
        // Loss as the client saw it: snapshots sent to it that never arrived (or arrived
        // after a newer one and were dropped by the sequenced channel).
        let sent = log.snapshots_expected.max(1);
        let decoded = clients[i].snapshot_counters().decoded;
        println!(
            "  client {id:<3}   rtt {:5.1} ms (server's view {:5.1} ms), snapshots {} of {} ({:.1}% lost, {} out of order, {} off the truth), chat {}/{} in order, world {} in {block_time}",
            infos[i].rtt * 1000.0,
            server_infos.get(&id).map_or(0.0, |info| info.rtt * 1000.0),
            decoded,
            sent,
            100.0 * (1.0 - decoded as f64 / sent as f64),
            log.snapshot_older,
            log.snapshot_wrong,
            log.chat_received,
            chat_total,
            if log.world_ok { "byte-exact" } else { "WRONG" },
        );
        if let Some(s) = server_logs.get(&id) {
            println!(
                "               inputs {} received by the server in order ({} out of order), left: {}",
                s.inputs,
                s.inputs_older,
                s.disconnect.map_or("still connected".to_string(), |r| r.to_string())
            );
        }
    }
    let udp = server.driver().stats();
    let sim = server
        .driver()
        .send_simulator_stats()
        .cloned()
        .unwrap_or_default();
    println!(
        "  server       {} datagrams sent ({} KiB), {} received; the simulator dropped {} of its datagrams; {} refused by netcode; {played:.1} s in all",
        udp.datagrams_sent,
        udp.bytes_sent / 1024,
        udp.datagrams_received,
        sim.lost,
        server.netcode().refusals().total(),
    );

    // The checks.
    let n = client_logs.len();
    let checks = [
        ("every client connected", client_logs.iter().all(|l| l.connected_at.is_some())),
        ("every client received the 256 KiB world byte-exact", client_logs.iter().all(|l| l.world_ok)),
        (
            "every chat line reached every client, in order, once",
            chat_total > 0 && client_logs.iter().all(|l| l.chat_received == chat_total && l.chat_out_of_order == 0),
        ),
        (
            "snapshots arrived, never older than one already seen, every body within its quantization",
            client_logs.iter().all(|l| l.snapshots > 0 && l.snapshot_older == 0 && l.snapshot_wrong == 0),
        ),
        (
            "snapshots went as deltas against what each client acked, none refused",
            delta_sends > whole_sends
                && clients.iter().all(|c| {
                    let r = c.snapshot_counters();
                    r.unknown_baseline + r.malformed + r.wrong_kind == 0
                }),
        ),
        (
            "the server received inputs from every client, in order",
            server_logs.len() == n && server_logs.values().all(|s| s.inputs > 0 && s.inputs_older == 0),
        ),
        (
            "every client's disconnect was seen by the server",
            server_logs.values().all(|s| s.disconnect == Some(DisconnectReason::DisconnectedByClient)),
        ),
        (
            "no datagram dropped by the sockets (only by the simulated network)",
            udp.dropped_send_error + udp.dropped_send_queue_full + udp.dropped_receive_oversize == 0,
        ),
    ];
    let passed = checks.iter().filter(|(_, ok)| *ok).count();
    for (name, ok) in &checks {
        println!("  [{}] {name}", if *ok { "PASS" } else { "FAIL" });
    }
    let all = passed == checks.len();
    println!(
        "{}: {passed} of {} checks passed (exit status {})",
        if all { "PASS" } else { "FAIL" },
        checks.len(),
        if all { 0 } else { 1 }
    );
    Ok(all)
}

/// A client's handling of one server message.
fn receive(log: &mut ClientLog, message: ServerMessage, world: &[u8], t: f64, bar: &ProgressBar) {
    match message {
        ServerMessage::World(w) => {
            log.world_ok = w.data == world;
            log.world_at = Some(t);
            bar.set_position(bar.length().unwrap_or(0));
        }
        // The demo sends its snapshots through the snapshot layer, not as messages.
        ServerMessage::Snapshot(_) => log.snapshot_wrong += 1,
        ServerMessage::Chat(line) => {
            log.chat_received += 1;
            let next = log.chat_next.entry(line.from).or_insert(0);
            if line.seq != *next || line.text != game::chat_text(line.from, line.seq) {
                log.chat_out_of_order += 1;
            }
            *next = line.seq + 1;
        }
    }
}

/// A client's check of the newest snapshot it decoded.
fn check_snapshot(log: &mut ClientLog, frame: &Frame) {
    log.snapshots += 1;
    if log.last_tick.is_some_and(|last| frame.tick <= last) {
        log.snapshot_older += 1;
    }
    log.last_tick = Some(frame.tick);
    // The motion is a function of the tick: check what quantization left of it.
    let truth = game::snapshot(frame.tick);
    let bodies = frame.bodies();
    let all_match = bodies.len() == truth.bodies.len()
        && bodies
            .iter()
            .zip(&truth.bodies)
            .all(|(r, t)| game::body_matches(r, t));
    if !all_match {
        log.snapshot_wrong += 1;
    }
}
