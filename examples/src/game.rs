//! The demo game's protocol and world, shared by `demo`, `server` and `client`.
//!
//! Everything a game sends is a value of a type deriving `NetSerialize`; the attributes
//! say how many bits each field takes. The server sends [`ServerMessage`]s, clients send
//! [`ClientMessage`]s, each on one of two channels ([`RELIABLE`], [`SEQUENCED`]).

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::Protocol;

/// Channel 0: reliable-ordered. Chat, and the world block sent on join.
pub const RELIABLE: u8 = 0;
/// Channel 1: unreliable-sequenced. Snapshots and inputs: a newer one makes an older one
/// useless, so a late one is dropped instead of delivered out of order.
pub const SEQUENCED: u8 = 1;

/// Number of rigid bodies in the world.
pub const BODIES: usize = 64;
/// Bytes of the world block each client receives on join: 256 KiB.
pub const WORLD_BYTES: usize = 256 * 1024;
/// Most bytes of one chat line.
pub const MAX_CHAT_BYTES: usize = 64;
/// Snapshot rate (Hz).
pub const SNAPSHOT_HZ: f64 = 30.0;
/// Input rate (Hz).
pub const INPUT_HZ: f64 = 60.0;

/// Position quantization: +-256 m at 1/128 m (17 bits an axis instead of 32).
pub const POSITION_RES: f32 = 1.0 / 128.0;
/// Velocity quantization: +-32 m/s at 1/64 m/s (13 bits an axis).
pub const VELOCITY_RES: f32 = 1.0 / 64.0;

/// One rigid body in a snapshot: 129 bits when moving, 90 when at rest (the at-rest bit
/// saves the velocity, as in the snapshot compression article).
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Body {
    /// Which body (0..=63: 6 bits).
    #[net(range = 0..=63)]
    pub id: u8,
    /// Health 0..=100 (7 bits).
    #[net(range = 0..=100)]
    pub health: u8,
    /// Position in metres.
    #[net(quantize(min = -256.0, max = 256.0, res = 0.0078125))]
    pub position: [f32; 3],
    /// Orientation `[x, y, z, w]`, smallest three at 10 bits a component (32 bits).
    #[net(quat(bits = 10))]
    pub orientation: [f32; 4],
    /// The body is not moving: its velocity is not sent.
    pub at_rest: bool,
    /// Linear velocity in m/s, sent only when moving.
    #[net(when = !at_rest, quantize(min = -32.0, max = 32.0, res = 0.015625))]
    pub velocity: [f32; 3],
}

/// The world as the server sees it at one tick.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(max_bytes = 1100)]
pub struct Snapshot {
    /// Server tick (30 Hz), wrapping at 2^20 (about 9.7 hours).
    #[net(range = 0..=1048575)]
    pub tick: u32,
    /// Every body.
    #[net(max_len = 64)]
    pub bodies: Vec<Body>,
}

/// What a player does this frame.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Input {
    /// Client frame (60 Hz), wrapping at 2^20.
    #[net(range = 0..=1048575)]
    pub frame: u32,
    /// Stick direction.
    #[net(quantize(min = -1.0, max = 1.0, res = 0.01))]
    pub move_dir: [f32; 2],
    /// Buttons.
    pub jump: bool,
    /// Buttons.
    pub fire: bool,
}

/// A chat line. `seq` numbers a sender's lines so the receivers can check that none is
/// lost, duplicated or out of order.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Chat {
    /// Who wrote it (the server fills this in when relaying).
    pub from: u64,
    /// The sender's line number, from 0.
    #[net(range = 0..=65535)]
    pub seq: u32,
    /// The text: at most 64 bytes of UTF-8 (its bytes go byte-aligned, wherever the
    /// message lands in a packet).
    #[net(max_len = 64)]
    pub text: String,
}

/// The world block: the static level data a client needs before it can play.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct World {
    /// The bytes ([`WORLD_BYTES`] of them).
    #[net(max_len = 262144)]
    pub data: Vec<u8>,
}

/// Everything the server sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// On [`SEQUENCED`], 30 times a second.
    Snapshot(Snapshot),
    /// On [`RELIABLE`]: a player's chat line, relayed to everyone.
    Chat(Chat),
    /// On [`RELIABLE`], once on join: too large for a packet, so it goes as a block.
    World(World),
}

/// Everything a client sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// On [`SEQUENCED`], 60 times a second.
    Input(Input),
    /// On [`RELIABLE`].
    Chat(Chat),
}

/// The world block's bytes: a pseudo-random pattern the client can check byte for byte.
pub fn world_data() -> Vec<u8> {
    (0..WORLD_BYTES as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

/// Body `id` at `tick`: a closed-form motion, so a client can recompute what the server
/// sent and check that only quantization changed it. A quarter of the bodies rest on
/// the floor; the others circle, bounce and spin, and every fourth second they pause.
pub fn body(id: u8, tick: u32) -> Body {
    let t = tick as f32 / SNAPSHOT_HZ as f32;
    let i = id as f32;
    let home = [
        (i % 8.0) * 24.0 - 84.0,
        0.5,
        (i / 8.0).floor() * 24.0 - 84.0,
    ];
    let pausing = (t + i * 0.37) % 4.0 < 1.0;
    if id.is_multiple_of(4) || pausing {
        let angle = i * 0.7;
        return Body {
            id,
            health: 100 - id,
            position: home,
            orientation: [0.0, (angle / 2.0).sin(), 0.0, (angle / 2.0).cos()],
            at_rest: true,
            velocity: [0.0; 3],
        };
    }
    let w = 0.5 + i * 0.01;
    let phase = w * t + i;
    let bounce = (t * 3.0 + i).sin();
    let angle = t * (1.0 + i * 0.05);
    Body {
        id,
        health: 100 - id,
        position: [
            home[0] + 6.0 * phase.cos(),
            0.5 + 4.0 * bounce.abs(),
            home[2] + 6.0 * phase.sin(),
        ],
        orientation: [0.0, (angle / 2.0).sin(), 0.0, (angle / 2.0).cos()],
        at_rest: false,
        velocity: [
            -6.0 * w * phase.sin(),
            12.0 * bounce.signum() * (t * 3.0 + i).cos(),
            6.0 * w * phase.cos(),
        ],
    }
}

/// The snapshot of every body at `tick`.
pub fn snapshot(tick: u32) -> Snapshot {
    Snapshot {
        tick: tick % (1 << 20),
        bodies: (0..BODIES as u8).map(|id| body(id, tick)).collect(),
    }
}

/// Bytes the same snapshot takes as plain fields: a `u32` tick, and per body a `u8` id,
/// a `u8` health, 3 + 4 + 3 `f32`s and a `bool` byte.
pub fn plain_snapshot_bytes(snapshot: &Snapshot) -> usize {
    4 + snapshot.bodies.len() * (1 + 1 + 4 * (3 + 4 + 3) + 1)
}

/// Whether a received body matches the truth within the quantization: half a step for
/// positions and velocities (a step for safety), a little for the orientation (which may
/// come back negated: `q` and `-q` are the same rotation).
pub fn body_matches(received: &Body, truth: &Body) -> bool {
    let close = |a: &[f32], b: &[f32], tol: f32| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol);
    let negated: Vec<f32> = truth.orientation.iter().map(|c| -c).collect();
    received.id == truth.id
        && received.health == truth.health
        && received.at_rest == truth.at_rest
        && close(&received.position, &truth.position, POSITION_RES)
        && (close(&received.orientation, &truth.orientation, 0.002)
            || close(&received.orientation, &negated, 0.002))
        && (truth.at_rest || close(&received.velocity, &truth.velocity, VELOCITY_RES))
}

/// The development key of the `server` and `client` programs: public, so anyone can
/// connect. A real deployment generates its key once (`netcode::generate_key`), gives
/// it to its backend and its dedicated servers, and never to a client.
pub const DEV_KEY: [u8; 32] = *b"netser development key: public!!";

/// Parses a `--key` value: `dev` for [`DEV_KEY`], or 64 hex digits.
///
/// # Errors
/// A message saying what was expected.
pub fn parse_key(value: &str) -> Result<[u8; 32], String> {
    if value == "dev" {
        return Ok(DEV_KEY);
    }
    let digits = value.as_bytes();
    if digits.len() != 64 {
        return Err(format!(
            "--key: expected `dev` or 64 hex digits, got {} characters",
            digits.len()
        ));
    }
    let mut key = [0u8; 32];
    for (i, pair) in digits.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).map_err(|_| "--key: not hex".to_string())?;
        key[i] = u8::from_str_radix(text, 16).map_err(|_| format!("--key: `{text}` is not hex"))?;
    }
    Ok(key)
}

/// The `seq`-th chat line a client writes.
pub fn chat_text(from: u64, seq: u32) -> String {
    format!("hello from {from}, line {seq}")
}

/// The connection settings both sides use: the two channels, and blocks up to 260 KiB
/// (the world plus its message header) sent at up to 1 MB/s.
pub fn connection_config() -> ConnectionConfig {
    let mut config = ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
    ]);
    config.chunk.max_slices = 260;
    config.chunk.bandwidth = 1_000_000.0;
    config.max_block_size = config.chunk.max_chunk_size();
    config
}

/// The game's protocol, one value for the server, the clients and the backend: the
/// message types each way and the channels of [`connection_config`] (a game that sends
/// snapshots names their type too: `Protocol::<ClientMessage, ServerMessage, Frame>`).
/// A client built from another is refused at connect.
pub fn protocol() -> Protocol<ClientMessage, ServerMessage> {
    Protocol::with_connection(connection_config())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_fit_the_budget_and_round_trip() {
        for tick in [0, 1, 29, 30, 1000, 123_456] {
            let s = snapshot(tick);
            let bytes = s.to_vec().unwrap();
            assert!(bytes.len() <= 1100, "{}", bytes.len());
            assert!(bytes.len() * 2 < plain_snapshot_bytes(&s));
            let back = Snapshot::decode_from_slice(&bytes).unwrap();
            for (r, t) in back.bodies.iter().zip(&s.bodies) {
                assert!(body_matches(r, t), "{r:?} vs {t:?}");
            }
        }
    }

    #[test]
    fn the_connection_config_is_valid_and_holds_the_world() {
        let config = connection_config();
        assert!(config.validate().is_ok());
        let world = ServerMessage::World(World { data: world_data() });
        assert!(world.measure_bits().unwrap().div_ceil(8) as usize <= config.max_block_size);
    }

    #[test]
    fn keys_parse() {
        assert_eq!(parse_key("dev").unwrap(), DEV_KEY);
        assert_eq!(parse_key(&"0f".repeat(32)).unwrap(), [0x0f; 32]);
        assert!(parse_key("0f").is_err());
        assert!(parse_key(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn a_corrupted_body_does_not_match() {
        let truth = body(5, 100);
        let mut moved = truth.clone();
        moved.position[1] += 0.1;
        assert!(!body_matches(&moved, &truth));
    }
}
