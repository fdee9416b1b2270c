//! The server and a client in one process, in one Bevy `App` (a listen server), for a
//! quick look: `cargo run -p netser-bevy --example local`.
//!
//! Both plugins and both halves of the game run side by side; they talk over real UDP on
//! 127.0.0.1, so more clients can join from other terminals
//! (`cargo run -p netser-bevy --example client`). After `--seconds` (default 5) the app
//! exits: the client leaves, the server shuts down, and a summary says whether the world,
//! bodies, chat and inputs arrived (the exit status is 0 only if they did).

mod common;

use std::time::{Duration, SystemTime};

use bevy_app::{App, AppExit, Last, ScheduleRunnerPlugin, TerminalCtrlCHandlerPlugin};
use bevy_ecs::prelude::*;
use bevy_time::TimePlugin;
use common::{
    Args, Client, ClientMessage, ClientTally, Components, GameClientPlugin, GameServerPlugin,
    Server, ServerMessage, ServerTally,
};
use netser_bevy::prelude::*;
use netser_transport::netcode::{ConnectToken, TokenParams};
use netser_transport::udp::{UdpClientConfig, UdpServerConfig};
use tracing::info;

fn main() -> Result<AppExit, Box<dyn std::error::Error>> {
    let args = Args::parse(5.0)?;
    common::init_logging();

    // One protocol for the server, the client and the token.
    let protocol = common::protocol();
    let config = UdpServerConfig {
        public_addresses: vec![args.addr],
        ..UdpServerConfig::new(common::DEV_KEY)
    };
    let server = Server::bind(args.addr, &protocol, config)?;

    let params = TokenParams {
        client_id: 1,
        ..protocol.token_params(vec![args.addr], SystemTime::now())
    };
    let token = ConnectToken::generate(&params, &common::DEV_KEY)?;
    let client = Client::connect(token, &protocol, UdpClientConfig::default())?;

    let mut app = App::new();
    app.add_plugins((
        ScheduleRunnerPlugin::run_loop(Duration::from_secs_f64(1.0 / 60.0)),
        TimePlugin,
        TerminalCtrlCHandlerPlugin,
        NetServerPlugin::<ServerMessage, ClientMessage, Components>::default(),
        NetClientPlugin::<ClientMessage, ServerMessage, Components>::default(),
        GameServerPlugin,
        GameClientPlugin,
    ))
    .insert_resource(server)
    .insert_resource(client)
    .add_systems(
        Last,
        check_chat_and_inputs
            .run_if(on_message::<AppExit>)
            .before(NetSend),
    );
    common::exit_after(&mut app, args.seconds);
    Ok(app.run())
}

/// On exit: the client's summary checks the world and the bodies; this adds chat both
/// ways and inputs.
fn check_chat_and_inputs(
    client: Res<ClientTally>,
    server: Res<ServerTally>,
    mut exit: MessageWriter<AppExit>,
) {
    let ok = client.chat > 0 && server.chat > 0 && server.inputs > 0;
    info!(
        chat_relayed = server.chat,
        chat_received = client.chat,
        inputs = server.inputs,
        ok,
        "local: exiting"
    );
    if !ok {
        exit.write(AppExit::error());
    }
}
