//! A connected client that floods the server, over real loopback UDP: its datagrams past
//! its budget are refused before decryption and counted, the other clients are never
//! refused and keep their round trips, an abusive client is disconnected for its own
//! reason when the configuration says so, and a block sent whole on join fits the
//! default budget.
//!
//! The flooder holds a valid connect token and runs its own netcode session and
//! connection (the sans-IO `netcode::Client`) on a raw socket, with its connection's
//! pacing lifted: it sends as fast as the machine lets it.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netser::NetSerialize;
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{
    self, BudgetConfig, BudgetCounters, ClientState, ConnectToken, DisconnectPolicy,
    DisconnectReason, Key, Protocol, TokenParams,
};
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpClientEvent, UdpServer, UdpServerConfig, UdpServerEvent,
};

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Msg {
    /// A well-behaved client's ping, echoed by the server.
    Ping(u32),
    /// A flood message (not answered).
    Flood(u32),
    /// A block (not answered).
    Block(#[net(max_len = 262_000)] Vec<u8>),
}

const RELIABLE: u8 = 0;
const UNRELIABLE: u8 = 1;
/// The flooder's client id; well-behaved clients are 1 to `clients`.
const FLOODER: u64 = 1000;
/// Datagrams the replaying flooder records before it replays them: few, so that it
/// starts replaying soon even in an unoptimized build on a loaded machine.
const RECORDED: usize = 8;
/// A block's bytes: just under the default largest block.
const BLOCK_BYTES: usize = 255 * 1024;

type Server = UdpServer<Msg, Msg>;

fn protocol() -> Protocol<Msg, Msg> {
    Protocol::with_connection(ConnectionConfig::default())
}

/// The same protocol (same id) with the sender's pacing lifted: messages and block
/// slices go as fast as the window lets them, every slice of a block at once.
fn unpaced_protocol() -> Protocol<Msg, Msg> {
    let mut connection = ConnectionConfig {
        bandwidth: 1e9,
        ..ConnectionConfig::default()
    };
    connection.chunk.bandwidth = 1e9;
    connection.chunk.initial_burst = true;
    let unpaced = Protocol::with_connection(connection);
    assert_eq!(
        unpaced.id(),
        protocol().id(),
        "pacing is not in the protocol id"
    );
    unpaced
}

fn token(key: &Key, server: SocketAddr, client_id: u64) -> ConnectToken {
    let unix_now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let params = TokenParams {
        client_id,
        ..TokenParams::new(protocol().id(), vec![server], unix_now)
    };
    ConnectToken::generate(&params, key).unwrap()
}

/// What the flooder does once connected.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flood {
    /// Nothing: the flooder does not connect.
    Quiet,
    /// Reliable messages as fast as its window takes them, and unreliable ones (no
    /// window) as fast as its send queue takes them, acking what it receives.
    Messages,
    /// Largest blocks, every slice at once, one after the other, acking.
    Blocks,
    /// Its own recorded datagrams sent again, `per_ms` a millisecond; it never sends
    /// anything new, so it never acks (it still reads what the server sends).
    Replays { per_ms: u32 },
}

/// What the server saw, from its thread.
#[derive(Debug, Default)]
struct ServerReport {
    flood_messages: u64,
    block_bytes: u64,
    /// Seconds spent in `receive`, the events and `transmit`, and the seconds run.
    busy: f64,
    wall: f64,
    totals: BudgetCounters,
    /// The flooder's counters at the end, if it is still connected; its connect time
    /// and the end on the server's clock.
    flooder: Option<BudgetCounters>,
    flooder_session: Option<(f64, f64)>,
    /// Datagrams refused to the well-behaved clients (all of them, at the end).
    well_behaved_refused: u64,
    disconnects: Vec<(u64, DisconnectReason)>,
    connected_at_end: usize,
    /// Datagrams the kernel dropped for the server's shared socket, and for the
    /// sockets of the clients it isolated, where the platform tells.
    kernel_drops: u64,
    isolated_drops: u64,
}

fn serve(mut server: Server, clients: u64, stop: Arc<AtomicBool>) -> ServerReport {
    let mut report = ServerReport::default();
    let start = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        server.receive();
        while let Some(event) = server.poll_event() {
            match event {
                UdpServerEvent::Message {
                    client_id,
                    message: Msg::Ping(n),
                    ..
                } => {
                    // Ping queues are far from full at one ping per 10 ms.
                    let _ = server.send_message(client_id, RELIABLE, &Msg::Ping(n));
                }
                UdpServerEvent::Message {
                    message: Msg::Flood(_),
                    ..
                } => report.flood_messages += 1,
                UdpServerEvent::Message {
                    message: Msg::Block(bytes),
                    ..
                } => report.block_bytes += bytes.len() as u64,
                UdpServerEvent::ClientConnected { client_id, .. } if client_id == FLOODER => {
                    report.flooder_session = Some((server.now(), server.now()));
                }
                UdpServerEvent::ClientDisconnected {
                    client_id, reason, ..
                } => report.disconnects.push((client_id, reason)),
                _ => {}
            }
        }
        server.transmit();
        report.busy += t0.elapsed().as_secs_f64();
        thread::sleep(Duration::from_micros(100));
    }
    report.wall = start.elapsed().as_secs_f64();
    let budgets = server.budgets();
    let counters_of = |id: u64| {
        let slot = server.netcode().client_slot(id)?;
        budgets.client_counters(slot).copied()
    };
    report.totals = *budgets.counters();
    report.flooder = counters_of(FLOODER);
    if let Some((connected, _)) = report.flooder_session {
        report.flooder_session = Some((connected, server.now()));
    }
    report.well_behaved_refused = (1..=clients)
        .filter_map(counters_of)
        .map(|c| c.refused())
        .sum();
    report.connected_at_end = server.connected_clients();
    report.kernel_drops = server.driver().stats().receive_buffer_drops;
    report.isolated_drops = server.driver().stats().isolated_drops;
    report
}

/// What the flooder saw, from its thread.
#[derive(Debug)]
struct FlooderReport {
    /// Its state at the end (or when it was disconnected).
    state: ClientState,
    /// After a disconnect, the state of a second session with the same token.
    second: Option<ClientState>,
}

fn flood(key: Key, server_addr: SocketAddr, flood: Flood, stop: Arc<AtomicBool>) -> FlooderReport {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let protocol = unpaced_protocol();
    let token = token(&key, server_addr, FLOODER);
    let mut client: netcode::Client<Msg, Msg> =
        netcode::Client::new(0.0, token.clone(), &protocol).unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 2048];
    let mut recorded: Vec<Vec<u8>> = Vec::new();
    let mut replayed = 0u64;
    let mut replay_start = None;
    let mut n = 0u32;
    let block = Msg::Block(vec![0xAB; BLOCK_BYTES]);
    while !stop.load(Ordering::Relaxed) {
        let now = start.elapsed().as_secs_f64();
        while let Ok((len, from)) = socket.recv_from(&mut buf) {
            client.handle_datagram(now, from, &buf[..len]);
        }
        if client.is_disconnected() {
            break;
        }
        client.handle_timeout(now);
        if client.is_connected() {
            match flood {
                Flood::Messages => {
                    for channel in [RELIABLE, UNRELIABLE] {
                        while client.send_message(channel, &Msg::Flood(n)).is_ok() {
                            n = n.wrapping_add(1);
                        }
                    }
                }
                Flood::Blocks => {
                    let _ = client.send_message(RELIABLE, &block);
                }
                Flood::Replays { .. } if recorded.len() < RECORDED => {
                    let _ = client.send_message(RELIABLE, &Msg::Flood(n));
                    n = n.wrapping_add(1);
                }
                Flood::Replays { .. } | Flood::Quiet => {}
            }
        }
        let replaying = matches!(flood, Flood::Replays { .. }) && recorded.len() >= RECORDED;
        if !replaying {
            let record = client.is_connected() && matches!(flood, Flood::Replays { .. });
            while let Some(transmit) = client.poll_transmit() {
                if record && recorded.len() < RECORDED {
                    recorded.push(transmit.data.to_vec());
                }
                let _ = socket.send_to(transmit.data, transmit.to);
            }
            thread::yield_now();
            continue;
        }
        let Flood::Replays { per_ms } = flood else {
            unreachable!()
        };
        let since = *replay_start.get_or_insert(now);
        let due = ((now - since) * 1000.0 * f64::from(per_ms)) as u64;
        if replayed >= due {
            thread::sleep(Duration::from_micros(50));
        }
        while replayed < due {
            let datagram = &recorded[(replayed % recorded.len() as u64) as usize];
            let _ = socket.send_to(datagram, server_addr);
            replayed += 1;
        }
    }
    let state = client.state();
    if state != ClientState::Disconnected(DisconnectReason::DisconnectedByServer) {
        return FlooderReport {
            state,
            second: None,
        };
    }
    // Back with the same token, from the same address.
    let mut second: netcode::Client<Msg, Msg> =
        netcode::Client::new(0.0, token, &protocol).unwrap();
    let again = Instant::now();
    while again.elapsed() < Duration::from_secs(3) && second.is_connecting() {
        let now = again.elapsed().as_secs_f64();
        while let Ok((len, from)) = socket.recv_from(&mut buf) {
            second.handle_datagram(now, from, &buf[..len]);
        }
        second.handle_timeout(now);
        while let Some(transmit) = second.poll_transmit() {
            let _ = socket.send_to(transmit.data, transmit.to);
        }
        thread::sleep(Duration::from_millis(1));
    }
    FlooderReport {
        state,
        second: Some(second.state()),
    }
}

/// One run: a server with `budget`, `clients` well-behaved clients pinging every
/// `ping_interval`, and a flooder, for `warmup` then `measure`.
struct Run {
    budget: BudgetConfig,
    flood: Flood,
    clients: u64,
    ping_interval: Duration,
    warmup: Duration,
    measure: Duration,
}

#[derive(Debug)]
struct Outcome {
    /// Round trips of the well-behaved clients' pings sent while measuring, seconds.
    rtts: Vec<f64>,
    pings_sent: u64,
    pings_answered: u64,
    /// Well-behaved clients disconnected, or not connected at the end.
    clients_lost: u64,
    server: ServerReport,
    flooder: Option<FlooderReport>,
    /// Datagrams the kernel dropped for the well-behaved clients' sockets (full
    /// receive buffers), where the platform tells.
    client_drops: u64,
}

impl Run {
    fn run(&self) -> Outcome {
        let key = netcode::generate_key().unwrap();
        let config = UdpServerConfig {
            max_clients: 16,
            budget: self.budget.clone(),
            ..UdpServerConfig::new(key)
        };
        let server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
        let server_addr = server.local_addr();
        let stop_server = Arc::new(AtomicBool::new(false));
        let stop_flood = Arc::new(AtomicBool::new(false));
        let clients = self.clients;
        let server_thread = {
            let stop = stop_server.clone();
            thread::spawn(move || serve(server, clients, stop))
        };
        let mut well_behaved: Vec<UdpClient<Msg, Msg>> = (1..=clients)
            .map(|id| {
                UdpClient::connect(
                    token(&key, server_addr, id),
                    &protocol(),
                    UdpClientConfig::default(),
                )
                .unwrap()
            })
            .collect();
        let connect_deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < connect_deadline && !well_behaved.iter().all(|c| c.is_connected()) {
            for c in &mut well_behaved {
                c.receive();
                while c.poll_event().is_some() {}
                c.transmit();
            }
            thread::sleep(Duration::from_millis(1));
        }
        assert!(well_behaved.iter().all(|c| c.is_connected()));
        let flooder = (self.flood != Flood::Quiet).then(|| {
            let stop = stop_flood.clone();
            let flood_kind = self.flood;
            thread::spawn(move || flood(key, server_addr, flood_kind, stop))
        });

        let start = Instant::now();
        let measure_from = start + self.warmup;
        let measure_until = measure_from + self.measure;
        let mut sent: Vec<Vec<(u32, Instant, bool)>> = vec![Vec::new(); clients as usize];
        let mut next_ping = start;
        let mut seq = 0u32;
        let mut outcome_rtts = Vec::new();
        let mut answered = 0u64;
        let mut pings_sent = 0u64;
        // Measure, then let the last pings come back.
        let drain_until = measure_until + Duration::from_millis(500);
        while Instant::now() < drain_until {
            let now = Instant::now();
            let pinging = now < measure_until && now >= next_ping;
            if pinging {
                next_ping += self.ping_interval;
            }
            for (i, c) in well_behaved.iter_mut().enumerate() {
                c.receive();
                while let Some(event) = c.poll_event() {
                    if let UdpClientEvent::Message {
                        message: Msg::Ping(n),
                        ..
                    } = event
                    {
                        if let Some(entry) = sent[i].iter_mut().find(|e| e.0 == n) {
                            let rtt = entry.1.elapsed().as_secs_f64();
                            if entry.2 {
                                outcome_rtts.push(rtt);
                                answered += 1;
                            }
                            entry.2 = false;
                        }
                    }
                }
                if pinging && c.send_message(RELIABLE, &Msg::Ping(seq)).is_ok() {
                    let measured = now >= measure_from;
                    sent[i].push((seq, now, measured));
                    if measured {
                        pings_sent += 1;
                    }
                }
                c.transmit();
            }
            if pinging {
                seq += 1;
            }
            thread::sleep(Duration::from_micros(200));
        }
        let client_drops = well_behaved
            .iter()
            .map(|c| c.driver().stats().receive_buffer_drops)
            .sum();
        stop_flood.store(true, Ordering::Relaxed);
        let flooder = flooder.map(|f| f.join().unwrap());
        stop_server.store(true, Ordering::Relaxed);
        let server = server_thread.join().unwrap();
        let clients_lost = well_behaved.iter().filter(|c| !c.is_connected()).count() as u64;
        Outcome {
            rtts: outcome_rtts,
            pings_sent,
            pings_answered: answered,
            clients_lost,
            server,
            flooder,
            client_drops,
        }
    }
}

/// A budget a flooder passes however slowly it runs, that well-behaved clients pinging
/// 20 times a second never meet.
fn test_budget(disconnect: Option<DisconnectPolicy>) -> BudgetConfig {
    BudgetConfig {
        datagrams_per_second: 100.0,
        datagram_burst: 32,
        bytes_per_second: 64.0 * 1024.0,
        byte_burst: 32 * 1024,
        messages_per_second: 1024.0,
        message_burst: 1024,
        disconnect,
    }
}

fn short_run(budget: BudgetConfig, flood: Flood) -> Outcome {
    Run {
        budget,
        flood,
        clients: 2,
        ping_interval: Duration::from_millis(50),
        warmup: Duration::from_millis(300),
        measure: Duration::from_millis(700),
    }
    .run()
}

/// Each kind of flood (messages and blocks from a client that acks, replays from one
/// that never acks) is held to its budget: what the flooder was admitted stays within
/// burst + rate x time, the rest is refused and counted, the well-behaved clients are
/// never refused and every one of their pings is answered.
///
/// The budget is a twentieth of the default or less, so that a flooder in an
/// unoptimized build on a loaded machine (where it may get out only a few hundred
/// datagrams a second) still passes it; each well-behaved client pings 20 times a
/// second, a few dozen datagrams.
#[test]
fn each_flood_is_held_to_its_budget() {
    let budget = test_budget(None);
    for kind in [
        Flood::Messages,
        Flood::Blocks,
        Flood::Replays { per_ms: 20 },
    ] {
        let outcome = short_run(budget.clone(), kind);
        let server = &outcome.server;
        let flooder = server
            .flooder
            .unwrap_or_else(|| panic!("{kind:?}: the flooder is connected: {server:?}"));
        let (connected, end) = server.flooder_session.unwrap();
        let t = end - connected;
        let max_datagrams = f64::from(budget.datagram_burst) + budget.datagrams_per_second * t;
        assert!(
            flooder.admitted as f64 <= max_datagrams,
            "{kind:?}: {} admitted in {t:.3} s, at most {max_datagrams}",
            flooder.admitted
        );
        // Messages are charged after their datagram: one datagram's worth (at most a
        // message a byte) may overdraw.
        let max_messages = f64::from(budget.message_burst) + budget.messages_per_second * t;
        assert!(flooder.messages as f64 <= max_messages + 1200.0, "{kind:?}");
        let max_bytes = budget.byte_burst as f64 + budget.bytes_per_second * t;
        assert!(server.block_bytes as f64 <= max_bytes, "{kind:?}");
        assert!(
            flooder.refused() > 0,
            "{kind:?}: nothing refused: {flooder:?}"
        );
        assert_eq!(server.well_behaved_refused, 0, "{kind:?}");
        assert_eq!(outcome.clients_lost, 0, "{kind:?}");
        assert!(outcome.pings_sent > 0);
        assert_eq!(outcome.pings_answered, outcome.pings_sent, "{kind:?}");
    }
}

/// With a disconnect policy, the flooder is disconnected with its own reason (it sees
/// the standard's server disconnect), cannot come back with the same token, and the
/// other clients stay connected.
#[test]
fn an_abusive_client_is_disconnected_with_its_own_reason() {
    let budget = test_budget(Some(DisconnectPolicy {
        refused: 50,
        window: 1.0,
    }));
    let outcome = short_run(budget, Flood::Replays { per_ms: 20 });
    let server = &outcome.server;
    assert_eq!(
        server.disconnects,
        [(FLOODER, DisconnectReason::OverBudget)],
        "{server:?}"
    );
    assert_eq!(server.totals.disconnected, 1);
    let flooder = outcome.flooder.unwrap();
    assert_eq!(
        flooder.state,
        ClientState::Disconnected(DisconnectReason::DisconnectedByServer)
    );
    assert_eq!(
        flooder.second,
        Some(ClientState::Disconnected(
            DisconnectReason::ConnectionDenied
        ))
    );
    assert_eq!(server.connected_at_end, 2);
    assert_eq!(server.well_behaved_refused, 0);
    assert_eq!(outcome.clients_lost, 0);
}

/// A client that sends the largest block with every slice at once as it joins, with
/// its messages, is within the default budget: the budget saw every datagram and
/// refused none.
#[test]
fn a_block_on_join_fits_the_default_budget() {
    let key = netcode::generate_key().unwrap();
    let config = UdpServerConfig {
        max_clients: 4,
        ..UdpServerConfig::new(key)
    };
    let mut server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    let token = token(&key, server.local_addr(), 1);
    let mut client: UdpClient<Msg, Msg> =
        UdpClient::connect(token, &unpaced_protocol(), UdpClientConfig::default()).unwrap();
    let block = vec![0x5A; BLOCK_BYTES];
    client
        .send_message(RELIABLE, &Msg::Block(block.clone()))
        .unwrap();
    for i in 0..32 {
        client.send_message(RELIABLE, &Msg::Ping(i)).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = None;
    while got.is_none() && Instant::now() < deadline {
        client.receive();
        while client.poll_event().is_some() {}
        client.transmit();
        server.receive();
        while let Some(event) = server.poll_event() {
            if let UdpServerEvent::Message {
                message: Msg::Block(bytes),
                ..
            } = event
            {
                got = Some(bytes);
            }
        }
        server.transmit();
        thread::sleep(Duration::from_micros(500));
    }
    assert_eq!(got.as_deref(), Some(&block[..]));
    let counters = server.budgets().counters();
    let slices = BLOCK_BYTES.div_ceil(1024) as u64;
    assert!(counters.admitted >= slices, "{counters:?}");
    assert_eq!(counters.refused(), 0, "{counters:?}");
}

/// A flood that outruns the server's reads fills the kernel's receive buffer, and the
/// kernel then drops whatever arrives, the other clients' datagrams too (they come again
/// only with a resend, 100 ms or more later). Once its budget has refused the flooder,
/// its datagrams go to a socket of its own: a well-behaved client's message sent behind
/// 2,000 of them, while the server is not reading, is still read in the server's next
/// frame, and the kernel's drops are counted where they happened. Linux: elsewhere no
/// peer can be isolated.
///
/// No timing: loopback queues each datagram as it is sent, and the server reads only
/// when the test says.
#[cfg(target_os = "linux")]
#[test]
fn a_flood_does_not_crowd_the_others_out_of_the_kernel_buffer() {
    let key = netcode::generate_key().unwrap();
    let config = UdpServerConfig {
        max_clients: 4,
        budget: test_budget(None),
        // Small, so that a few hundred datagrams fill it.
        udp: netser_transport::udp::UdpConfig {
            socket_buffer_size: 64 * 1024,
            ..Default::default()
        },
        ..UdpServerConfig::new(key)
    };
    let mut server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    let server_addr = server.local_addr();
    let mut client: UdpClient<Msg, Msg> = UdpClient::connect(
        token(&key, server_addr, 1),
        &protocol(),
        UdpClientConfig::default(),
    )
    .unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let flooder_addr = socket.local_addr().unwrap();
    let mut flooder: netcode::Client<Msg, Msg> =
        netcode::Client::new(0.0, token(&key, server_addr, FLOODER), &protocol()).unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 2048];
    let mut recorded: Vec<Vec<u8>> = Vec::new();
    let serve = |server: &mut Server| {
        server.receive();
        let mut pings = Vec::new();
        while let Some(event) = server.poll_event() {
            if let UdpServerEvent::Message {
                message: Msg::Ping(n),
                ..
            } = event
            {
                pings.push(n);
            }
        }
        server.transmit();
        pings
    };
    // Both connect; the flooder keeps a datagram it sent connected.
    while recorded.is_empty() || !client.is_connected() {
        assert!(start.elapsed() < Duration::from_secs(10), "connecting");
        let now = start.elapsed().as_secs_f64();
        while let Ok((len, from)) = socket.recv_from(&mut buf) {
            flooder.handle_datagram(now, from, &buf[..len]);
        }
        flooder.handle_timeout(now);
        let connected = flooder.is_connected();
        if connected {
            let _ = flooder.send_message(RELIABLE, &Msg::Flood(0));
        }
        while let Some(transmit) = flooder.poll_transmit() {
            if connected {
                recorded.push(transmit.data.to_vec());
            }
            socket.send_to(transmit.data, transmit.to).unwrap();
        }
        client.receive();
        while client.poll_event().is_some() {}
        client.transmit();
        serve(&mut server);
        thread::sleep(Duration::from_millis(1));
    }
    let replay = recorded[0].clone();
    // Past its burst of 32: refused, and so isolated (60 fit the buffer).
    for _ in 0..60 {
        socket.send_to(&replay, server_addr).unwrap();
    }
    thread::sleep(Duration::from_millis(20));
    serve(&mut server);
    assert!(
        server.driver().isolated_peers().any(|p| p == flooder_addr),
        "the flooder is isolated: {:?}",
        server.driver().stats()
    );

    // The server does not read while 2,000 replays and then a ping arrive.
    for _ in 0..2000 {
        socket.send_to(&replay, server_addr).unwrap();
    }
    client.send_message(RELIABLE, &Msg::Ping(7)).unwrap();
    client.transmit();
    thread::sleep(Duration::from_millis(20));
    assert_eq!(
        serve(&mut server),
        [7],
        "the ping is read in the next frame: {:?}",
        server.driver().stats()
    );
    // The isolated socket's drops are learnt with its next datagram queued, once its
    // paced reads have made room.
    for _ in 0..100 {
        serve(&mut server);
        thread::sleep(Duration::from_millis(2));
    }
    socket.send_to(&replay, server_addr).unwrap();
    thread::sleep(Duration::from_millis(20));
    serve(&mut server);
    let stats = server.driver().stats();
    assert_eq!(stats.receive_buffer_drops, 0, "{stats:?}");
    assert!(stats.isolated_drops >= 1000, "{stats:?}");
    assert_eq!(stats.isolations, 1);
    let slot = server.netcode().client_slot(1).unwrap();
    let well_behaved = server.budgets().client_counters(slot).unwrap();
    assert_eq!(well_behaved.refused(), 0);
    assert!(server.driver().isolated_peers().all(|p| p == flooder_addr));
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// The figures of BENCHMARKS.md: four well-behaved clients ping every 10 ms while a
/// flooder floods, against a server with no effective budget ("before") and one with
/// the default budget ("after"), the two interleaved, `FLOOD_ROUNDS` rounds (default 1)
/// of 2 s per phase; `FLOOD_PHASES=quiet,400` runs only the phases whose names contain
/// one of those words. Besides the round trips it prints the datagrams the kernel
/// dropped for the server's shared socket, for the sockets of the clients it isolated,
/// and for the well-behaved clients' sockets (where the platform tells).
///
/// `FLOOD_ROUNDS=5 cargo test --release -p netser-transport --test udp_flood -- --ignored --nocapture`
#[test]
#[ignore = "a measurement (minutes, timing-dependent figures): run it in release by hand, see the doc comment"]
fn flood_round_trip_figures() {
    let rounds: usize = std::env::var("FLOOD_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let unlimited = BudgetConfig {
        datagrams_per_second: 1e12,
        datagram_burst: u32::MAX,
        bytes_per_second: 1e15,
        byte_burst: usize::MAX / 2,
        messages_per_second: 1e12,
        message_burst: u32::MAX,
        disconnect: None,
    };
    let phases = [
        ("quiet", Flood::Quiet),
        ("messages, acking", Flood::Messages),
        ("blocks, acking", Flood::Blocks),
        ("never acking, 20 a ms", Flood::Replays { per_ms: 20 }),
        ("never acking, 400 a ms", Flood::Replays { per_ms: 400 }),
    ];
    // `FLOOD_PHASES=quiet,400` runs only the phases whose names contain one of these.
    let only = std::env::var("FLOOD_PHASES").unwrap_or_default();
    let phases: Vec<_> = phases
        .into_iter()
        .filter(|(name, _)| only.is_empty() || only.split(',').any(|o| name.contains(o)))
        .collect();
    #[derive(Default)]
    struct Totals {
        rtts: Vec<f64>,
        busy: f64,
        wall: f64,
        flood_messages: u64,
        block_bytes: u64,
        refused: u64,
        well_behaved_refused: u64,
        unanswered: u64,
        /// Datagrams the kernel dropped for the server's and the clients' sockets.
        server_drops: u64,
        isolated_drops: u64,
        client_drops: u64,
        /// Each round's p99, ms.
        round_p99: Vec<f64>,
    }
    let mut totals: Vec<[Totals; 2]> = phases.iter().map(|_| Default::default()).collect();
    let measure = Duration::from_secs(2);
    for round in 0..rounds {
        for (p, (name, kind)) in phases.iter().enumerate() {
            for (s, budget) in [unlimited.clone(), BudgetConfig::default()]
                .into_iter()
                .enumerate()
            {
                let outcome = Run {
                    budget,
                    flood: *kind,
                    clients: 4,
                    ping_interval: Duration::from_millis(10),
                    warmup: Duration::from_millis(500),
                    measure,
                }
                .run();
                let total = &mut totals[p][s];
                let mut rtts = outcome.rtts.clone();
                rtts.sort_by(f64::total_cmp);
                total.round_p99.push(percentile(&rtts, 0.99) * 1e3);
                total.well_behaved_refused += outcome.server.well_behaved_refused;
                total.rtts.extend(&outcome.rtts);
                total.busy += outcome.server.busy;
                total.wall += outcome.server.wall;
                total.flood_messages += outcome.server.flood_messages;
                total.block_bytes += outcome.server.block_bytes;
                total.refused += outcome.server.totals.refused();
                total.unanswered += outcome.pings_sent - outcome.pings_answered;
                total.server_drops += outcome.server.kernel_drops;
                total.isolated_drops += outcome.server.isolated_drops;
                total.client_drops += outcome.client_drops;
                eprintln!("round {round} {name} {}: done", ["before", "after"][s]);
            }
        }
    }
    let seconds = measure.as_secs_f64() * rounds as f64;
    println!(
        "| flood | p50 before | p50 after | p99 before | p99 after | server busy before | after |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (p, (name, _)) in phases.iter().enumerate() {
        let mut row = format!("| {name} |");
        let mut p99 = [0.0; 2];
        let mut p50 = [0.0; 2];
        for (s, total) in totals[p].iter_mut().enumerate() {
            total.rtts.sort_by(f64::total_cmp);
            p50[s] = percentile(&total.rtts, 0.5) * 1e3;
            p99[s] = percentile(&total.rtts, 0.99) * 1e3;
        }
        row += &format!(
            " {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.0}% | {:.0}% |",
            p50[0],
            p50[1],
            p99[0],
            p99[1],
            100.0 * totals[p][0].busy / totals[p][0].wall,
            100.0 * totals[p][1].busy / totals[p][1].wall
        );
        println!("{row}");
    }
    for (p, (name, _)) in phases.iter().enumerate() {
        for (s, label) in ["before", "after"].iter().enumerate() {
            let t = &totals[p][s];
            println!(
                "{name} {label}: {} samples, flood messages {:.0}/s, blocks {:.2} MiB/s, refused {} \
                 (well-behaved {}), unanswered {}, kernel drops {} server / {} isolated / {} clients, \
                 p99 by round {:.1?} ms",
                t.rtts.len(),
                t.flood_messages as f64 / seconds,
                t.block_bytes as f64 / seconds / (1024.0 * 1024.0),
                t.refused,
                t.well_behaved_refused,
                t.unanswered,
                t.server_drops,
                t.isolated_drops,
                t.client_drops,
                t.round_p99
            );
        }
    }
}
