//! The simulator demo: a client and a server over a simulated lossy network, no sockets,
//! each holding a `Connection` (acks, resends, channels, blocks) for the other.
//!
//! The server sends the initial world state (200 KB) as one reliable message, which the
//! connection sends as a block in slices; game events on a reliable-ordered channel;
//! and 20 snapshots a second of 64 entities, bit-packed by the derive with quantized
//! positions and smallest-three orientations, on an unreliable-sequenced channel. The
//! client sends its input 60 times a second (unreliable-sequenced) and its actions
//! (reliable-ordered). Everything travels through a seeded simulator with latency,
//! jitter, loss, duplicates and reordering. Time is simulated: the run is instant and
//! the same every time.
//!
//! `cargo run -p netser-examples --bin sim_demo` (add `-- <seconds> <loss %>` to change the run).

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelId, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig, SendError};
use netser_transport::simulator::{Simulator, SimulatorConfig};

/// What a client sends every frame.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(max_bytes = 8)]
struct PlayerInput {
    #[net(range = 0..=65535)]
    tick: u32,
    #[net(quantize(min = -1.0, max = 1.0, res = 0.01))]
    move_dir: [f32; 2],
    jump: bool,
    fire: bool,
}

/// One entity of a snapshot: the article's rigid body with the at-rest optimisation.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Entity {
    #[net(range = 0..=4095)]
    id: u16,
    #[net(quantize(min = -2048.0, max = 2048.0, res = 0.01))]
    position: [f32; 3],
    #[net(quat(bits = 10))]
    orientation: [f32; 4],
    #[net(range = 0..=100)]
    health: u8,
    at_rest: bool,
    #[net(when = !at_rest, quantize(min = -64.0, max = 64.0, res = 0.01))]
    velocity: [f32; 3],
}

/// What the server sends 20 times a second.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(max_bytes = 2400)]
struct Snapshot {
    #[net(range = 0..=65535)]
    tick: u32,
    #[net(max_len = 64)]
    entities: Vec<Entity>,
}

/// The channels, the same list on both sides.
#[derive(Debug, Clone, Copy)]
enum Channel {
    /// Game events and the world state: reliable, in order.
    Events = 0,
    /// Inputs and snapshots: the newest only.
    State = 1,
}

impl From<Channel> for ChannelId {
    fn from(channel: Channel) -> Self {
        ChannelId(channel as u8)
    }
}

fn connection_config() -> ConnectionConfig {
    let mut config = ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
    ]);
    // At 60 packets a second and a 50 ms link, 256 packets of history cover 4 s: the
    // loss and bandwidth estimates (measured over the older half) show up sooner.
    config.endpoint.sent_packets_buffer_size = 256;
    config.endpoint.received_packets_buffer_size = 256;
    config
}

/// What the client sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum ClientMessage {
    Input(PlayerInput),
    /// The player asked to respawn at this spawn point.
    Respawn(#[net(range = 0..=15)] u8),
}

/// What the server sends.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum ServerMessage {
    /// The initial world state: larger than a packet, so it goes as a block.
    World(#[net(max_len = 200_000)] Vec<u8>),
    Snapshot(Snapshot),
    /// An entity scored: events must all arrive, in order.
    Scored {
        #[net(range = 0..=4095)]
        entity: u16,
        #[net(range = 0..=1_000_000)]
        total: u32,
    },
}

const CLIENT: u32 = 1;
const SERVER: u32 = 2;

fn entity(i: u16, tick: u32) -> Entity {
    let t = tick as f32 / 60.0;
    let at_rest = i.is_multiple_of(2);
    let angle = t * 0.5 + i as f32;
    Entity {
        id: i * 61 % 4096,
        position: [
            (i as f32 * 17.0) - 500.0 + if at_rest { 0.0 } else { t * 3.0 },
            2.5,
            i as f32,
        ],
        orientation: [0.0, (angle / 2.0).sin(), 0.0, (angle / 2.0).cos()],
        health: (100 - i % 101) as u8,
        at_rest,
        velocity: if at_rest { [0.0; 3] } else { [3.0, 0.0, 0.0] },
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let loss: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10.0) / 100.0;

    // A first message: bytes and bit layout.
    let input = PlayerInput {
        tick: 1,
        move_dir: [0.5, -1.0],
        jump: true,
        fire: false,
    };
    let bytes = input.to_vec().expect("in bounds");
    println!("PlayerInput {{ tick: 1, move_dir: [0.5, -1.0], jump: true, fire: false }}");
    println!(
        "  {} bits, {} bytes: {:02x?}",
        input.measure_bits().unwrap(),
        bytes.len(),
        bytes
    );
    println!("{}", netser::trace::layout(&input).expect("in bounds"));
    println!(
        "Entity: {}..={} bits; Snapshot of 64: at most {} bytes\n",
        Entity::MIN_BITS,
        Entity::MAX_BITS,
        Snapshot::MAX_BYTES,
    );

    let mut net: Simulator = Simulator::new(SimulatorConfig {
        latency: 0.05,
        jitter: 0.02,
        loss,
        duplicate: 0.02,
        reorder: 0.02,
        seed: 42,
        ..SimulatorConfig::default()
    });
    let mut now = 0.0;
    let mut client: Connection<ClientMessage, ServerMessage> =
        Connection::new(now, connection_config()).expect("valid config");
    let mut server: Connection<ServerMessage, ClientMessage> =
        Connection::new(now, connection_config()).expect("valid config");

    // The initial world state: 200 KB, one reliable message (sent as a block).
    let world: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    server
        .send_message(Channel::Events, &ServerMessage::World(world.clone()))
        .expect("within max_block_size");
    let mut world_received_at = None;

    let (mut inputs_sent, mut inputs_received) = (0u64, 0u64);
    let (mut snapshots_sent, mut snapshots_received, mut last_snapshot_tick) = (0u64, 0u64, 0u32);
    let (mut scores_sent, mut scores_received) = (0u32, 0u32);
    let (mut respawns_sent, mut respawns_received) = (0u64, 0u64);
    let (mut snapshot_bytes, mut snapshots_too_large) = (0usize, 0u64);
    let dt = 1.0 / 60.0;
    let mut tick = 0u32;
    while now < seconds {
        tick += 1;
        now = tick as f64 * dt;

        // Client: one input a frame; now and then a respawn request.
        let input = PlayerInput {
            tick: tick % 65536,
            move_dir: [(now.sin()) as f32, 0.25],
            jump: tick.is_multiple_of(30),
            fire: tick.is_multiple_of(7),
        };
        client
            .send_message(Channel::State, &ClientMessage::Input(input))
            .expect("inputs are in bounds and the queue drains");
        inputs_sent += 1;
        if tick.is_multiple_of(120) {
            client
                .send_message(
                    Channel::Events,
                    &ClientMessage::Respawn((tick / 120 % 16) as u8),
                )
                .expect("in bounds");
            respawns_sent += 1;
        }

        // Server: a snapshot every third frame, a score event every tenth.
        if tick.is_multiple_of(3) {
            let snapshot = Snapshot {
                tick: tick % 65536,
                entities: (0..64).map(|i| entity(i, tick)).collect(),
            };
            snapshot_bytes = snapshot.to_vec().expect("in bounds").len();
            // A snapshot of 64 entities takes at most 1211 bytes, over what one packet
            // carries (1191 by default): the unreliable channel refuses the rare one
            // that does not fit rather than fragment it.
            match server.send_message(Channel::State, &ServerMessage::Snapshot(snapshot)) {
                Ok(()) => snapshots_sent += 1,
                Err(SendError::MessageTooLarge { .. }) => snapshots_too_large += 1,
                Err(error) => panic!("snapshot refused: {error}"),
            }
        }
        if tick.is_multiple_of(10) {
            scores_sent += 1;
            let scored = ServerMessage::Scored {
                entity: (tick % 64) as u16,
                total: scores_sent,
            };
            server
                .send_message(Channel::Events, &scored)
                .expect("in bounds");
        }

        // Both sides: datagrams out, the network delivers, datagrams in.
        for (connection, from, to) in [
            (&mut client as &mut dyn Side, CLIENT, SERVER),
            (&mut server as &mut dyn Side, SERVER, CLIENT),
        ] {
            connection.send_all(now, from, to, &mut net);
        }
        while let Some(d) = net.receive(now) {
            // Drops (duplicates, stale packets) are counted by the connection.
            let _ = if d.to == CLIENT {
                client.handle_datagram(now, &d.data)
            } else {
                server.handle_datagram(now, &d.data)
            };
        }

        // Messages in.
        while let Some(message) = client.receive_message(Channel::Events) {
            match message {
                ServerMessage::World(bytes) => {
                    assert_eq!(bytes, world, "the world state arrives byte-exact");
                    world_received_at = Some(now);
                }
                ServerMessage::Scored { total, .. } => {
                    scores_received += 1;
                    assert_eq!(total, scores_received, "events arrive once each, in order");
                }
                ServerMessage::Snapshot(_) => unreachable!("snapshots go on the state channel"),
            }
        }
        while let Some(message) = client.receive_message(Channel::State) {
            if let ServerMessage::Snapshot(snapshot) = message {
                assert!(
                    snapshot.tick > last_snapshot_tick,
                    "never an older snapshot"
                );
                last_snapshot_tick = snapshot.tick;
                snapshots_received += 1;
            }
        }
        while server.receive_message(Channel::State).is_some() {
            inputs_received += 1;
        }
        while server.receive_message(Channel::Events).is_some() {
            respawns_received += 1;
        }
    }

    let s = server.stats();
    let c = server.counters();
    println!(
        "{seconds} s over a link with 50 ms latency, 20 ms jitter, {:.0}% loss, 2% duplicates, 2% reordering:",
        loss * 100.0
    );
    println!(
        "  world state: {} bytes as a block, received byte-exact at {}",
        world.len(),
        world_received_at.map_or("(not yet)".to_string(), |t| format!("{t:.2} s"))
    );
    println!(
        "  snapshots: {snapshots_sent} sent ({snapshots_too_large} too large for a packet), {snapshots_received} received (last tick {last_snapshot_tick}), {snapshot_bytes} bytes each for 64 entities"
    );
    println!("  score events: {scores_sent} sent, {scores_received} received in order");
    println!("  inputs: {inputs_sent} sent, {inputs_received} received (newest only)");
    println!("  respawn requests: {respawns_sent} sent, {respawns_received} received in order");
    println!(
        "  server view: rtt {:.1} ms, packet loss {}, sent {} kbps, acked {} kbps",
        s.rtt * 1000.0,
        known(s.packet_loss.map(|loss| loss * 100.0), "%"),
        known(s.sent_kbps, ""),
        known(s.acked_kbps, "")
    );
    println!(
        "  server: {} packets and {} block slices sent, {} datagrams dropped (duplicates, stale, malformed)",
        c.packets_sent,
        c.slices_sent,
        c.endpoint_drops + c.malformed_packets + c.block_datagram_drops
    );
}

/// A statistic that may not be known yet (too few packets so far).
fn known(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "not yet known".to_string(), |v| format!("{v:.1}{unit}"))
}

/// Either side's connection, to send its datagrams in one loop.
trait Side {
    fn send_all(&mut self, now: f64, from: u32, to: u32, net: &mut Simulator);
}

impl<Out: NetSerialize, In: NetSerialize> Side for Connection<Out, In> {
    fn send_all(&mut self, now: f64, from: u32, to: u32, net: &mut Simulator) {
        self.handle_timeout(now);
        while let Some(datagram) = self.poll_transmit(now) {
            net.send(now, from, to, datagram);
        }
    }
}
