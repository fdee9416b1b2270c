//! One match of the demo game, run the way an orchestrator (Agones, Nomad, systemd, a
//! plain shell script) expects a game server to behave: it says when it is ready, shows
//! that it is alive, and on SIGTERM or Ctrl-C tells every client the match is over,
//! flushes, and exits 0.
//!
//! ```sh
//! cargo run -p netser-examples --bin match_server -- --listen 127.0.0.1:40000 --key dev
//! ```
//!
//! - **Ready**: once the socket is bound it prints `ready <address>` on standard output.
//!   An orchestrator's adapter (such as the Agones SDK's `Ready()`) goes at that point.
//! - **Health**: with `--health-file PATH`, the match loop writes the current tick to
//!   `PATH` once a second; a liveness probe checks that the file keeps changing. A
//!   stuck loop stops writing. (An SDK's `Health()` call goes at the same point.)
//! - **Graceful shutdown**: SIGTERM (what Kubernetes sends before SIGKILL, after the
//!   pod's grace period starts) or Ctrl-C ends the match: the server keeps running
//!   frames until what it queued to each client is acked, for at most
//!   `--drain-seconds` (default 2), then disconnects everyone (each client sees
//!   `DisconnectedByServer` at once instead of timing out), waits until the disconnect
//!   packets have left, and the process exits 0. Keep `--drain-seconds` under the
//!   orchestrator's grace period (Kubernetes' default is 30 s).
//!
//! Check by hand: start it, connect a `client` (`cargo run -p netser-examples --bin
//! client -- --server 127.0.0.1:40000 --key dev`), then `kill -TERM <pid>` the server:
//! it prints `shutting down: telling 1 clients`, then `shut down: acked and flushed`,
//! and `echo $?` gives 0; the client reports the server closed the connection.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netser_examples::game::{self, ClientMessage, ServerMessage, RELIABLE, SEQUENCED};
use netser_transport::udp::{UdpServer, UdpServerConfig, UdpServerEvent};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let mut listen: SocketAddr = "127.0.0.1:40000".parse()?;
    let mut key = game::DEV_KEY;
    let mut max_clients = 16;
    let mut drain = Duration::from_secs(2);
    let mut health_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--listen" => listen = value.parse()?,
            "--key" => key = game::parse_key(&value)?,
            "--max-clients" => max_clients = value.parse()?,
            "--drain-seconds" => drain = Duration::try_from_secs_f64(value.parse()?)?,
            "--health-file" => health_file = Some(std::path::PathBuf::from(value)),
            _ => return Err(format!("unknown flag {flag}; see the top of match_server.rs").into()),
        }
    }
    // SIGINT, and with ctrlc's `termination` feature SIGTERM and SIGHUP: the handler only
    // raises a flag, which the match loop reads between frames.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))?;

    let config = UdpServerConfig {
        max_clients,
        public_addresses: vec![listen],
        ..UdpServerConfig::new(key)
    };
    let mut server = UdpServer::bind(listen, &game::protocol(), config)?;
    println!("ready {}", server.local_addr());
    let health = |tick: u32| {
        if let Some(path) = &health_file {
            if let Err(e) = std::fs::write(path, tick.to_string()) {
                eprintln!("health file {}: {e}", path.display());
            }
        }
    };
    let clean = run_match(&mut server, &stop, drain, health)?;
    println!(
        "shut down: {}",
        if clean {
            "acked and flushed"
        } else {
            "drain time ran out (clients were still told)"
        }
    );
    Ok(())
}

/// Runs the match at 30 Hz until `stop` is raised, calling `health(tick)` once a second;
/// then shuts down within `drain`. Returns whether everything queued was acked and every
/// disconnect packet left in time.
///
/// # Errors
/// A message that cannot be queued (a bug in the game's messages, not a network error).
fn run_match(
    server: &mut UdpServer<ServerMessage, ClientMessage>,
    stop: &AtomicBool,
    drain: Duration,
    mut health: impl FnMut(u32),
) -> Result<bool, Error> {
    let frame = Duration::from_secs_f64(1.0 / game::SNAPSHOT_HZ);
    let mut tick = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let frame_start = Instant::now();
        server.receive();
        while let Some(event) = server.poll_event() {
            if let UdpServerEvent::Message {
                client_id,
                message: ClientMessage::Chat(mut line),
                ..
            } = event
            {
                line.from = client_id;
                server.broadcast_message(RELIABLE, &ServerMessage::Chat(line))?;
            }
        }
        server.broadcast_message(SEQUENCED, &ServerMessage::Snapshot(game::snapshot(tick)))?;
        server.transmit();
        if tick.is_multiple_of(game::SNAPSHOT_HZ as u32) {
            health(tick);
        }
        tick = tick.wrapping_add(1);
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
    println!(
        "shutting down: telling {} clients",
        server.connected_clients()
    );
    Ok(server.shutdown(drain))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netser_transport::netcode::{ConnectToken, DisconnectReason};
    use netser_transport::udp::{UdpClient, UdpClientConfig, UdpClientEvent};
    use std::time::SystemTime;

    /// Several matches in one process run a server per thread (the README's second way).
    #[test]
    fn a_server_can_move_to_its_own_thread() {
        fn is_send<T: Send>() {}
        is_send::<UdpServer<ServerMessage, ClientMessage>>();
    }

    /// What the signal handler does (raise the flag) ends the match: the connected
    /// client is told at once (`DisconnectedByServer`, not a timeout), the server
    /// reports a clean shutdown, and the loop had reported its health.
    #[test]
    fn the_stop_flag_tells_clients_and_shuts_down_cleanly() {
        let stop = Arc::new(AtomicBool::new(false));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let match_thread = std::thread::spawn(move || {
            let config = UdpServerConfig::new(game::DEV_KEY);
            let mut server = UdpServer::bind("127.0.0.1:0", &game::protocol(), config).unwrap();
            addr_tx.send(server.local_addr()).unwrap();
            let mut healths = 0;
            let clean =
                run_match(&mut server, &flag, Duration::from_secs(2), |_| healths += 1).unwrap();
            (clean, healths, server.connected_clients())
        });
        let addr = addr_rx.recv().unwrap();
        let protocol = game::protocol();
        let params = protocol.token_params(vec![addr], SystemTime::now());
        let token = ConnectToken::generate(&params, &game::DEV_KEY).unwrap();
        let config = UdpClientConfig::default();
        let mut client = UdpClient::connect(token, &protocol, config).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut reason = None;
        while reason.is_none() && Instant::now() < deadline {
            client.receive();
            while let Some(event) = client.poll_event() {
                if let UdpClientEvent::Disconnected { reason: r } = event {
                    reason = Some(r);
                }
            }
            client.transmit();
            if client.is_connected() {
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let (clean, healths, left) = match_thread.join().unwrap();
        assert_eq!(reason, Some(DisconnectReason::DisconnectedByServer));
        assert!(clean, "the shutdown was not clean");
        assert_eq!(left, 0, "clients still connected after the shutdown");
        assert!(healths >= 1);
    }
}
