//! The demo game's client, for a terminal of its own; start `server` first.
//!
//! ```sh
//! cargo run -p netser-examples --bin client -- --server 127.0.0.1:40000 --key dev
//! ```
//!
//! With `--key`, the client issues its own connect token, standing in for the game's
//! backend (see the top of `server.rs` for how a real backend does it). With
//! `--token FILE` it reads a token a backend issued (`ConnectToken::to_bytes`) instead.
//!
//! It shows the world block arriving, then once a second the snapshots received and
//! the RTT; it sends 60 inputs a second and a chat line every two seconds, prints the
//! chat it receives, and disconnects after `--seconds` (default 10).

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netser_examples::game::{self, ClientMessage, ServerMessage, RELIABLE, SEQUENCED};
use netser_transport::netcode::{ConnectToken, TokenParams};
use netser_transport::udp::{UdpClient, UdpClientConfig, UdpClientEvent};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server: SocketAddr = "127.0.0.1:40000".parse()?;
    let mut key = None;
    let mut token_file = None;
    let mut seconds = 10.0;
    let unix_now = SystemTime::now().duration_since(UNIX_EPOCH)?;
    // Any id will do for development; a backend uses the player's account id.
    let mut client_id = u64::from(unix_now.subsec_nanos());
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--server" => server = value.parse()?,
            "--key" => key = Some(game::parse_key(&value)?),
            "--token" => token_file = Some(value),
            "--client-id" => client_id = value.parse()?,
            "--seconds" => seconds = value.parse()?,
            _ => return Err(format!("unknown flag {flag}; see the top of client.rs").into()),
        }
    }

    let protocol = game::protocol();
    let token = match (token_file, key) {
        (Some(path), _) => ConnectToken::from_bytes(&std::fs::read(path)?)?,
        (None, key) => {
            // What the backend would do: a token for this player and this server, valid
            // for 5 minutes, the connection timing out after 15 s of silence.
            let params = TokenParams {
                client_id,
                ..protocol.token_params(vec![server], SystemTime::now())
            };
            ConnectToken::generate(&params, &key.unwrap_or(game::DEV_KEY))?
        }
    };
    let mut client = UdpClient::connect(token, &protocol, UdpClientConfig::default())?;
    println!("client {} connecting to {server}", client.client_id());

    let start = Instant::now();
    let frame = Duration::from_secs_f64(1.0 / game::INPUT_HZ);
    let (mut frames, mut snapshots, mut chat_sent, mut last_report) = (0u32, 0u32, 0u32, 0u64);
    loop {
        let frame_start = Instant::now();
        let t = start.elapsed().as_secs_f64();
        client.receive();
        while let Some(event) = client.poll_event() {
            match event {
                UdpClientEvent::Connected { client_id } => println!("connected as {client_id}"),
                UdpClientEvent::Disconnected { reason } => {
                    println!("disconnected: {reason}");
                    return Ok(());
                }
                UdpClientEvent::BlockProgress { progress } => {
                    println!("world: {:3.0}%", progress.fraction() * 100.0);
                }
                UdpClientEvent::Message { message, .. } => match message {
                    ServerMessage::World(world) => {
                        let ok = world.data == game::world_data();
                        println!(
                            "world received ({} bytes, {})",
                            world.data.len(),
                            if ok { "byte-exact" } else { "WRONG" }
                        );
                    }
                    ServerMessage::Snapshot(_) => snapshots += 1,
                    ServerMessage::Chat(line) => {
                        println!("chat from {}: {}", line.from, line.text);
                    }
                },
                // Events added to the transport later.
                _ => {}
            }
        }
        if client.is_connected() {
            let input = game::Input {
                frame: frames % (1 << 20),
                move_dir: [(t as f32).sin(), 0.0],
                jump: false,
                fire: frames.is_multiple_of(30),
            };
            client.send_message(SEQUENCED, &ClientMessage::Input(input))?;
            frames += 1;
            if t >= 2.0 * f64::from(chat_sent + 1) {
                let text = game::chat_text(client.client_id(), chat_sent);
                client.send_message(
                    RELIABLE,
                    &ClientMessage::Chat(game::Chat {
                        from: 0,
                        seq: chat_sent,
                        text,
                    }),
                )?;
                chat_sent += 1;
            }
            if t as u64 > last_report {
                last_report = t as u64;
                let rtt = client.network_info().rtt * 1000.0;
                println!("{snapshots} snapshots in the last second, rtt {rtt:.1} ms");
                snapshots = 0;
            }
        }
        client.transmit();
        if t >= seconds {
            client.disconnect();
            println!("disconnected after {seconds} s");
            return Ok(());
        }
        std::thread::sleep(frame.saturating_sub(frame_start.elapsed()));
    }
}
