//! The examples' game, a smaller cousin of the workspace's `demo`: 16 bodies moving on
//! the server, replicated to clients by netser-bevy (the `Body` component, each frame, each
//! body against the last state of it the client acked);
//! chat relayed to everyone (reliable-ordered); a 64 KiB world block sent to each client
//! on join, with its progress. Clients send inputs every frame and a chat line every two
//! seconds.
//!
//! [`GameServerPlugin`] and [`GameClientPlugin`] are the game's systems; the `server`,
//! `client` and `local` examples add one or both beside netser-bevy's plugins.
#![allow(
    dead_code,
    reason = "the server and the client examples each use one half"
)]

use std::time::Duration;

use bevy_app::{App, AppExit, Last, Plugin, Startup, Update};
use bevy_ecs::prelude::*;
use bevy_time::{Time, Timer, TimerMode};
use netser::NetSerialize;
use netser_bevy::prelude::*;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::ConnectionConfig;
use tracing::{info, warn};

/// Channel 0: reliable-ordered. Chat, and the world block.
pub const RELIABLE: u8 = 0;
/// Channel 1: unreliable-sequenced. Inputs: a late one is dropped.
pub const SEQUENCED: u8 = 1;
/// Bodies in the world.
pub const BODIES: u8 = 16;
/// Bytes of the world block.
pub const WORLD_BYTES: usize = 64 * 1024;
/// The public development key of the examples: anyone who knows it can connect. A real
/// game keeps its key on its backend and servers, and clients receive tokens.
pub const DEV_KEY: [u8; 32] = *b"netser-bevy example key: public!";
/// Where the server listens unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:40001";

/// The components replicated from the server to its clients: the third type parameter of
/// both plugins, `NetServerPlugin<ServerMessage, ClientMessage, Components>`.
pub type Components = (Body,);
/// The server's messages and components.
pub type Server = NetServer<ServerMessage, ClientMessage, Components>;
/// The client's.
pub type Client = NetClient<ClientMessage, ServerMessage, Components>;

/// A body, replicated: the server moves it, clients see it move.
#[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
#[net(delta)]
pub struct Body {
    /// Which body.
    #[net(range = 0..=15)]
    pub id: u8,
    /// Metres, at 1/128 m.
    #[net(quantize(min = -256.0, max = 256.0, res = 0.0078125))]
    pub position: [f32; 3],
    /// Orientation `[x, y, z, w]`, smallest three.
    #[net(quat(bits = 10))]
    pub orientation: [f32; 4],
}

/// A chat line.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Chat {
    /// Who wrote it (filled in by the server when it relays it).
    pub from: u64,
    /// The text.
    #[net(max_len = 64)]
    pub text: String,
}

/// What the server sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// On [`RELIABLE`], relayed to everyone.
    Chat(Chat),
    /// On [`RELIABLE`], once on join: too large for a packet, it goes as a block.
    World(#[net(max_len = 65536)] Vec<u8>),
}

/// What clients send.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// On [`SEQUENCED`], every frame: the stick.
    Input(#[net(quantize(min = -1.0, max = 1.0, res = 0.01))] [f32; 2]),
    /// On [`RELIABLE`].
    Chat(Chat),
}

/// The game's protocol, one for the server, its clients and the token issuing: the
/// message types, the two channels, the replicated components.
pub fn protocol() -> NetProtocol<ClientMessage, ServerMessage, Components> {
    NetProtocol::<ClientMessage, ServerMessage, Components>::with_connection(
        ConnectionConfig::with_channels(vec![
            ChannelConfig::reliable_ordered(),
            ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ]),
    )
}

/// The world block's bytes, a pattern the client checks.
pub fn world_data() -> Vec<u8> {
    (0..WORLD_BYTES as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

/// How a body moves (server side only: not in [`Components`], so never sent).
#[derive(Component, Debug, Clone, Copy)]
pub struct Mover {
    /// Where it circles around.
    pub home: [f32; 3],
}

/// The server's game: bodies that move, the world block on join, chat relay.
pub struct GameServerPlugin;

/// What the server counts, for its summary.
#[derive(Resource, Debug, Default)]
pub struct ServerTally {
    /// Frames the bodies moved.
    pub tick: u32,
    /// Inputs received, all clients.
    pub inputs: u64,
    /// Chat lines relayed.
    pub chat: u64,
}

#[derive(Resource)]
struct ReportTimer(Timer);

impl Plugin for GameServerPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ServerTally>()
            .insert_resource(ReportTimer(Timer::from_seconds(2.0, TimerMode::Repeating)))
            .add_systems(Startup, spawn_bodies)
            .add_systems(
                Update,
                (
                    send_world_on_join,
                    log_leaves,
                    relay_chat_and_count_inputs,
                    move_bodies,
                    report_server,
                )
                    .run_if(server_running),
            )
            // On exit, before the plugin shuts the server down.
            .add_systems(
                Last,
                server_summary.run_if(on_message::<AppExit>).before(NetSend),
            );
    }
}

fn server_summary(stats: Res<ServerStats>, tally: Res<ServerTally>) {
    info!(
        clients = stats.clients.len(),
        ticks = tally.tick,
        inputs = tally.inputs,
        chat = tally.chat,
        datagrams_in = stats.udp.datagrams_received,
        datagrams_out = stats.udp.datagrams_sent,
        refused = stats.refusals.total(),
        "server: exiting"
    );
}

fn spawn_bodies(mut commands: Commands) {
    for id in 0..BODIES {
        let home = [
            f32::from(id % 4) * 20.0 - 30.0,
            0.5,
            f32::from(id / 4) * 20.0 - 30.0,
        ];
        // `Replicated`: sent to every client, with its components of `Components`.
        commands.spawn((
            Replicated,
            Body {
                id,
                position: home,
                orientation: [0.0, 0.0, 0.0, 1.0],
            },
            Mover { home },
        ));
    }
}

/// The world goes to each client that joins, as one reliable message: a block.
fn send_world_on_join(mut joins: MessageReader<ClientConnected>, mut server: ResMut<Server>) {
    for join in joins.read() {
        info!(client_id = join.client_id, addr = %join.addr, "joined; sending the world");
        if let Err(e) = server.send_message(
            join.client_id,
            RELIABLE,
            &ServerMessage::World(world_data()),
        ) {
            warn!(client_id = join.client_id, "world not sent: {e}");
        }
    }
}

fn log_leaves(mut leaves: MessageReader<ClientDisconnected>) {
    for leave in leaves.read() {
        info!(client_id = leave.client_id, reason = %leave.reason, "left");
    }
}

fn relay_chat_and_count_inputs(
    mut messages: MessageReader<FromClient<ClientMessage>>,
    mut server: ResMut<Server>,
    mut tally: ResMut<ServerTally>,
) {
    for m in messages.read() {
        match &m.message {
            ClientMessage::Input(_) => tally.inputs += 1,
            ClientMessage::Chat(chat) => {
                tally.chat += 1;
                let relayed = ServerMessage::Chat(Chat {
                    from: m.client_id,
                    text: chat.text.clone(),
                });
                if let Err(e) = server.broadcast_message(RELIABLE, &relayed) {
                    warn!(client_id = e.client_id, "chat not relayed: {}", e.error);
                }
            }
        }
    }
}

fn move_bodies(
    time: Res<Time>,
    mut tally: ResMut<ServerTally>,
    mut bodies: Query<(&mut Body, &Mover)>,
) {
    tally.tick = tally.tick.wrapping_add(1);
    let t = time.elapsed_secs();
    for (mut body, mover) in &mut bodies {
        let i = f32::from(body.id);
        if body.id % 4 == 0 {
            continue; // a quarter of them rest, and are not sent again
        }
        let phase = t * (0.5 + i * 0.02) + i;
        body.position = [
            mover.home[0] + 6.0 * phase.cos(),
            0.5 + 3.0 * (t * 2.0 + i).sin().abs(),
            mover.home[2] + 6.0 * phase.sin(),
        ];
        let yaw = (t + i) % std::f32::consts::TAU;
        body.orientation = [0.0, (yaw / 2.0).sin(), 0.0, (yaw / 2.0).cos()];
    }
}

fn report_server(
    time: Res<Time>,
    mut timer: ResMut<ReportTimer>,
    stats: Res<ServerStats>,
    tally: Res<ServerTally>,
    mut blocks: MessageReader<BlockToClient>,
) {
    for b in blocks.read().filter(|b| b.progress.is_complete()) {
        info!(
            client_id = b.client_id,
            bytes = b.progress.total,
            "world delivered"
        );
    }
    if !timer.0.tick(time.delta()).just_finished() {
        return;
    }
    for c in &stats.clients {
        info!(
            client_id = c.client_id,
            rtt_ms = format!("{:.1}", c.network.rtt * 1000.0),
            loss = ?c.network.packet_loss,
            "client"
        );
    }
    info!(
        clients = stats.clients.len(),
        tick = tally.tick,
        inputs = tally.inputs,
        chat = tally.chat,
        datagrams_in = stats.udp.datagrams_received,
        datagrams_out = stats.udp.datagrams_sent,
        refused = stats.refusals.total(),
        "server"
    );
}

/// The client's game: the bodies it sees (spawned and moved by replication), the world
/// block, chat, inputs.
pub struct GameClientPlugin;

/// What the client counts, for its summary.
#[derive(Resource, Debug, Default)]
pub struct ClientTally {
    /// The world block arrived, byte for byte.
    pub world_ok: bool,
    /// The most bodies seen at once.
    pub bodies: usize,
    /// Chat lines received (the client's own included, relayed back).
    pub chat: u64,
    /// Chat lines sent.
    pub chat_sent: u64,
}

#[derive(Resource)]
struct ChatTimer(Timer);

impl Plugin for GameClientPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ClientTally>()
            .insert_resource(ChatTimer(Timer::from_seconds(2.0, TimerMode::Repeating)))
            .insert_resource(ClientReportTimer(Timer::from_seconds(
                1.0,
                TimerMode::Repeating,
            )))
            .add_systems(
                Update,
                (
                    log_client_connection,
                    receive_from_server,
                    count_bodies,
                    (send_input, send_chat).run_if(client_connected),
                    report_client,
                ),
            )
            .add_systems(
                Last,
                client_summary.run_if(on_message::<AppExit>).before(NetSend),
            );
    }
}

/// On exit: what arrived, and a failing exit status if the world or the bodies did not.
fn client_summary(
    stats: Res<ClientStats>,
    tally: Res<ClientTally>,
    mut exit: MessageWriter<AppExit>,
) {
    info!(
        state = ?stats.state,
        world_intact = tally.world_ok,
        bodies = tally.bodies,
        chat_received = tally.chat,
        chat_sent = tally.chat_sent,
        "client: exiting"
    );
    if !tally.world_ok || tally.bodies == 0 {
        exit.write(AppExit::error());
    }
}

#[derive(Resource)]
struct ClientReportTimer(Timer);

fn log_client_connection(
    mut connected: MessageReader<ConnectedToServer>,
    mut disconnected: MessageReader<DisconnectedFromServer>,
    mut exit: MessageWriter<AppExit>,
) {
    for c in connected.read() {
        info!(client_id = c.client_id, "connected");
    }
    for d in disconnected.read() {
        info!(reason = %d.reason, "disconnected");
        // Nothing left to do without a server.
        exit.write(AppExit::Success);
    }
}

fn receive_from_server(
    mut messages: MessageReader<FromServer<ServerMessage>>,
    mut blocks: MessageReader<BlockFromServer>,
    mut tally: ResMut<ClientTally>,
) {
    for b in blocks.read() {
        info!(
            "world: {:>3.0}% ({} of {} bytes)",
            b.progress.fraction() * 100.0,
            b.progress.done,
            b.progress.total
        );
    }
    for m in messages.read() {
        match &m.message {
            ServerMessage::World(data) => {
                tally.world_ok = *data == world_data();
                info!(
                    bytes = data.len(),
                    intact = tally.world_ok,
                    "world received"
                );
            }
            ServerMessage::Chat(chat) => {
                tally.chat += 1;
                info!(from = chat.from, "chat: {}", chat.text);
            }
        }
    }
}

/// The bodies replication spawned (`Remote`: from the server; in a listen server the
/// server's own bodies are in the same world, without it).
fn count_bodies(bodies: Query<&Body, With<Remote>>, mut tally: ResMut<ClientTally>) {
    tally.bodies = tally.bodies.max(bodies.iter().count());
}

fn send_input(time: Res<Time>, mut client: ResMut<Client>) {
    let t = time.elapsed_secs();
    let stick = [t.cos(), t.sin()];
    if let Err(e) = client.send_message(SEQUENCED, &ClientMessage::Input(stick)) {
        warn!("input not sent: {e}");
    }
}

fn send_chat(
    time: Res<Time>,
    mut timer: ResMut<ChatTimer>,
    mut tally: ResMut<ClientTally>,
    mut client: ResMut<Client>,
) {
    if !timer.0.tick(time.delta()).just_finished() {
        return;
    }
    let chat = Chat {
        from: 0,
        text: format!("line {} from {}", tally.chat_sent, client.client_id()),
    };
    match client.send_message(RELIABLE, &ClientMessage::Chat(chat)) {
        Ok(()) => tally.chat_sent += 1,
        Err(e) => warn!("chat not sent: {e}"),
    }
}

fn report_client(
    time: Res<Time>,
    mut timer: ResMut<ClientReportTimer>,
    stats: Res<ClientStats>,
    replication: Res<ClientReplicationStats>,
    seen: Query<&Body, With<Remote>>,
) {
    if !timer.0.tick(time.delta()).just_finished() || stats.state.is_none() {
        return;
    }
    let body_1 = seen
        .iter()
        .find(|b| b.id == 1)
        .map(|b| b.position.map(|x| (x * 10.0).round() / 10.0));
    info!(
        state = ?stats.state,
        rtt_ms = format!("{:.1}", stats.network.rtt * 1000.0),
        bodies = seen.iter().count(),
        body_1 = ?body_1,
        updates = replication.updated,
        "client"
    );
}

/// Reads `--flag value` pairs: `--seconds` (how long to run; 0 for ever), `--addr` (the
/// server's address), `--client-id`.
pub struct Args {
    /// How long to run before a graceful exit; `None` for ever.
    pub seconds: Option<f64>,
    /// The server's address (to listen on, or to connect to).
    pub addr: std::net::SocketAddr,
    /// The client's id.
    pub client_id: u64,
}

impl Args {
    /// Parses the command line, with `seconds` as the default run time.
    pub fn parse(seconds: f64) -> Result<Self, String> {
        let mut args = Self {
            seconds: Some(seconds),
            addr: DEFAULT_ADDR.parse().expect("a valid address"),
            client_id: u64::from(std::process::id()),
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let value = it.next().ok_or(format!("{flag} needs a value"))?;
            let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
            match flag.as_str() {
                "--seconds" => {
                    let s: f64 = value.parse().map_err(|e| bad(&e))?;
                    args.seconds = (s > 0.0).then_some(s);
                }
                "--addr" => args.addr = value.parse().map_err(|e| bad(&e))?,
                "--client-id" => args.client_id = value.parse().map_err(|e| bad(&e))?,
                _ => {
                    return Err(format!(
                        "unknown flag {flag} (--seconds, --addr, --client-id)"
                    ));
                }
            }
        }
        Ok(args)
    }
}

/// Exits the app after `seconds` of its clock (`AppExit`: the plugins shut down
/// gracefully).
pub fn exit_after(app: &mut App, seconds: Option<f64>) {
    let Some(seconds) = seconds else { return };
    let limit = Duration::from_secs_f64(seconds);
    app.add_systems(
        Update,
        move |time: Res<Time>, mut exit: MessageWriter<AppExit>| {
            if time.elapsed() >= limit {
                exit.write(AppExit::Success);
            }
        },
    );
}

/// Prints the transport's and the game's `tracing` events to the terminal.
pub fn init_logging() {
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .init();
}
