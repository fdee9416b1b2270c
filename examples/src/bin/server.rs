//! The demo game's dedicated server, for a terminal of its own; start `client` in others.
//!
//! ```sh
//! cargo run -p netser-examples --bin server -- --listen 127.0.0.1:40000 --key dev
//! cargo run -p netser-examples --bin client -- --server 127.0.0.1:40000 --key dev
//! ```
//!
//! # Connect tokens
//!
//! A client cannot connect with an address alone: it needs a *connect token*, and only
//! someone who holds the server's private key can make one. In a real game that is your
//! backend (the matchmaker or a web service): the player logs in over HTTPS, the backend
//! picks a server, calls `ConnectToken::generate` with the player's account id as the
//! client id, the server's public address, an expiry and any user data, and sends the
//! token's bytes (`to_bytes`) back over HTTPS. The client reads them with
//! `ConnectToken::from_bytes` and connects; the server checks the token with the same key
//! and never needs to talk to the backend. The key goes to the backend and the dedicated
//! servers only.
//!
//! For development both programs take the key on the command line (`--key dev` is a
//! public key built in, or 64 hex digits), and `client` issues its own token with it,
//! standing in for the backend.
//!
//! The server runs the game of the `demo`: 30 Hz snapshots of 64 bodies, the 256 KiB
//! world to each client that joins, chat relayed to everyone. It logs connects and
//! disconnects (the `tracing` events of `netser_transport::udp`); `RUST_LOG`-style
//! filtering is left out to keep the example short: set `--debug` to see every dropped
//! datagram and its reason. It stops after `--seconds` (default: never), disconnecting
//! everyone.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netser_examples::game::{self, ClientMessage, ServerMessage, RELIABLE, SEQUENCED};
use netser_transport::udp::{UdpServer, UdpServerConfig, UdpServerEvent};
use tracing_subscriber::filter::LevelFilter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut listen: SocketAddr = "127.0.0.1:40000".parse()?;
    let mut key = game::DEV_KEY;
    let mut max_clients = 16;
    let mut seconds = f64::INFINITY;
    let mut level = LevelFilter::INFO;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--debug" {
            level = LevelFilter::DEBUG;
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--listen" => listen = value.parse()?,
            "--key" => key = game::parse_key(&value)?,
            "--max-clients" => max_clients = value.parse()?,
            "--seconds" => seconds = value.parse()?,
            _ => return Err(format!("unknown flag {flag}; see the top of server.rs").into()),
        }
    }
    // Print the transport's log lines (connects, disconnects; drops with --debug).
    // Colours only on a terminal: a log redirected to a file stays plain text.
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .init();

    let config = UdpServerConfig {
        max_clients,
        // Clients must find this address in their token. Behind NAT or bound to 0.0.0.0,
        // list the address players reach instead.
        public_addresses: vec![listen],
        ..UdpServerConfig::new(key)
    };
    let mut server = UdpServer::bind(listen, &game::protocol(), config)?;
    if key == game::DEV_KEY {
        println!("using the public development key: anyone can connect");
    }

    let world = game::world_data();
    let start = Instant::now();
    let frame = Duration::from_secs_f64(1.0 / game::SNAPSHOT_HZ);
    let mut tick = 0u32;
    while start.elapsed().as_secs_f64() < seconds {
        let frame_start = Instant::now();
        server.receive();
        while let Some(event) = server.poll_event() {
            match event {
                UdpServerEvent::ClientConnected { client_id, .. } => {
                    let world = ServerMessage::World(game::World {
                        data: world.clone(),
                    });
                    server.send_message(client_id, RELIABLE, &world)?;
                }
                UdpServerEvent::Message {
                    client_id,
                    message: ClientMessage::Chat(mut line),
                    ..
                } => {
                    line.from = client_id;
                    println!("chat from {client_id}: {}", line.text);
                    server.broadcast_message(RELIABLE, &ServerMessage::Chat(line))?;
                }
                UdpServerEvent::BlockProgress {
                    client_id,
                    progress,
                } if progress.is_complete() => {
                    println!("client {client_id} has the world");
                }
                _ => {} // inputs would drive the simulation; disconnects are logged
            }
        }
        server.broadcast_message(SEQUENCED, &ServerMessage::Snapshot(game::snapshot(tick)))?;
        server.transmit();
        tick += 1;
        if tick.is_multiple_of(150) {
            for id in server.client_ids() {
                if let Some(info) = server.network_info(id) {
                    println!("client {id}: rtt {:.1} ms", info.rtt * 1000.0);
                }
            }
        }
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
    server.shutdown(Duration::from_secs(1));
    Ok(())
}
