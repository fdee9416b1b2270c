//! A headless client with netser-bevy: connects to the `server` example, shows the world
//! block arriving, sees the bodies replicated as entities, sends inputs and chat, and after
//! `--seconds` (default 10) leaves gracefully.
//!
//! ```sh
//! cargo run -p netser-bevy --example server
//! cargo run -p netser-bevy --example client -- --seconds 10
//! ```
//!
//! Flags: `--addr 127.0.0.1:40001` (the server), `--seconds 10` (0: until Ctrl+C or the
//! server leaves), `--client-id N` (default: the process id).
//!
//! The client issues its own connect token with the examples' public development key,
//! standing in for a game's backend, which would send the token over HTTPS.

mod common;

use std::time::{Duration, SystemTime};

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, TerminalCtrlCHandlerPlugin};
use bevy_time::TimePlugin;
use common::{Args, Client, ClientMessage, Components, GameClientPlugin, ServerMessage};
use netser_bevy::prelude::*;
use netser_transport::netcode::{ConnectToken, TokenParams};
use netser_transport::udp::UdpClientConfig;

fn main() -> Result<AppExit, Box<dyn std::error::Error>> {
    let args = Args::parse(10.0)?;
    common::init_logging();

    // What the backend would do: a token for this player and this server.
    let protocol = common::protocol();
    let params = TokenParams {
        client_id: args.client_id,
        ..protocol.token_params(vec![args.addr], SystemTime::now())
    };
    let token = ConnectToken::generate(&params, &common::DEV_KEY)?;
    let client = Client::connect(token, &protocol, UdpClientConfig::default())?;

    let mut app = App::new();
    app.add_plugins((
        ScheduleRunnerPlugin::run_loop(Duration::from_secs_f64(1.0 / 60.0)),
        TimePlugin,
        TerminalCtrlCHandlerPlugin,
        NetClientPlugin::<ClientMessage, ServerMessage, Components>::default(),
        GameClientPlugin,
    ))
    .insert_resource(client);
    common::exit_after(&mut app, args.seconds);
    // A failing status if the world or the bodies did not arrive.
    Ok(app.run())
}
