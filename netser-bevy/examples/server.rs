//! A headless dedicated server with netser-bevy: no renderer, no window, a Bevy `App` run
//! at 60 frames a second by `ScheduleRunnerPlugin`.
//!
//! ```sh
//! cargo run -p netser-bevy --example server               # until Ctrl+C
//! cargo run -p netser-bevy --example client               # in other terminals
//! ```
//!
//! Flags: `--addr 127.0.0.1:40001` (where to listen), `--seconds 0` (0: until Ctrl+C).
//! Ctrl+C is an `AppExit`: the plugin shuts the server down gracefully, telling every
//! client.
//!
//! The game (in `common/`): 16 bodies moving, replicated each frame; chat relayed; a
//! 64 KiB world block to each client on join. Clients issue their own connect tokens with
//! the examples' public development key, standing in for a game's backend (see the
//! workspace's `examples/src/bin/server.rs` for how a real backend does it).

mod common;

use std::time::Duration;

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, TerminalCtrlCHandlerPlugin};
use bevy_time::TimePlugin;
use common::{Args, ClientMessage, Components, GameServerPlugin, Server, ServerMessage};
use netser_bevy::prelude::*;
use netser_transport::udp::UdpServerConfig;

fn main() -> Result<AppExit, Box<dyn std::error::Error>> {
    let args = Args::parse(0.0)?;
    common::init_logging();

    let config = UdpServerConfig {
        max_clients: 16,
        // Clients find this address in their token.
        public_addresses: vec![args.addr],
        ..UdpServerConfig::new(common::DEV_KEY)
    };
    let server = Server::bind(args.addr, &common::protocol(), config)?;

    let mut app = App::new();
    app.add_plugins((
        ScheduleRunnerPlugin::run_loop(Duration::from_secs_f64(1.0 / 60.0)),
        TimePlugin,
        TerminalCtrlCHandlerPlugin,
        NetServerPlugin::<ServerMessage, ClientMessage, Components>::default(),
        GameServerPlugin,
    ))
    .insert_resource(server);
    common::exit_after(&mut app, args.seconds);
    Ok(app.run())
}
