//! The README's main command: a client and a server over a simulated lossy network.
//!
//! The server sends the initial world state as a chunk (a large block, split into slices
//! and resent until acked), then 20 snapshots a second of 64 entities, bit-packed by the
//! derive with quantized positions and smallest-three orientations. The client sends its
//! input 60 times a second. Every packet is framed with the schema hash as protocol id
//! and a CRC32, and travels as a payload of the packet endpoint (acks, RTT, loss,
//! fragmentation) through a seeded simulator with latency, jitter, loss, duplicates and
//! reordering. Time is simulated: the run is instant and the same every time.
//!
//! `cargo run -p netser-examples` (add `-- <seconds> <loss %>` to change the run).

use netser::framing::{read_packet, write_packet};
use netser::NetSerialize;
use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use netser_transport::endpoint::{Config, Endpoint};
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

/// Every packet the demo sends, as one enum: the tag takes 2 bits.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Packet {
    Input(PlayerInput),
    Snapshot(Snapshot),
    /// A chunk slice or ack, carried as bytes.
    Chunk(#[net(max_len = 1100)] Vec<u8>),
}

const PROTOCOL_ID: u64 = Packet::SCHEMA_HASH;
const CLIENT: u32 = 1;
const SERVER: u32 = 2;

/// One side: an endpoint and its counters.
struct Peer {
    endpoint: Endpoint,
    address: u32,
    sent: u64,
    decode_errors: u64,
}

impl Peer {
    fn new(address: u32, now: f64) -> Self {
        let endpoint = Endpoint::new(Config::default(), now).expect("default config is valid");
        Peer {
            endpoint,
            address,
            sent: 0,
            decode_errors: 0,
        }
    }

    fn send(&mut self, now: f64, net: &mut Simulator, to: u32, packet: &Packet) {
        let mut buf = [0u8; 4096];
        let len = write_packet(PROTOCOL_ID, &mut buf, packet).expect("our packets are in bounds");
        self.endpoint
            .send_packet(now, &buf[..len])
            .expect("payload within the endpoint's limit");
        while let Some(t) = self.endpoint.poll_transmit() {
            net.send(now, self.address, to, t.data);
        }
        self.sent += 1;
    }
}

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

    // A first packet: bytes and bit layout.
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
        "Entity: {}..={} bits; Snapshot of 64: at most {} bytes; protocol id {:#018x}\n",
        Entity::MIN_BITS,
        Entity::MAX_BITS,
        Snapshot::MAX_BYTES,
        PROTOCOL_ID
    );

    let mut net = Simulator::new(SimulatorConfig {
        latency: 0.05,
        jitter: 0.02,
        loss,
        duplicate: 0.02,
        reorder: 0.02,
        seed: 42,
        ..SimulatorConfig::default()
    });
    let mut now = 0.0;
    let mut client = Peer::new(CLIENT, now);
    let mut server = Peer::new(SERVER, now);

    // The initial world state: 200 KB, as a chunk.
    let world: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut chunk_sender = ChunkSender::new(ChunkConfig::default()).expect("default config");
    let mut chunk_receiver = ChunkReceiver::new(ChunkConfig::default()).expect("default config");
    chunk_sender
        .send(world.clone())
        .expect("within the chunk limit");
    let mut world_received_at = None;

    let (mut inputs_received, mut snapshots_received, mut last_snapshot_tick) = (0u64, 0u64, 0u32);
    let mut snapshot_bytes = 0usize;
    let (mut inputs_sent, mut snapshots_sent) = (0u64, 0u64);
    let dt = 1.0 / 60.0;
    let mut tick = 0u32;
    while now < seconds {
        tick += 1;
        now = tick as f64 * dt;

        // Client: one input a frame, chunk acks when due.
        let input = PlayerInput {
            tick: tick % 65536,
            move_dir: [(now.sin()) as f32, 0.25],
            jump: tick.is_multiple_of(30),
            fire: tick.is_multiple_of(7),
        };
        client.send(now, &mut net, SERVER, &Packet::Input(input));
        inputs_sent += 1;
        if let Some(ack) = chunk_receiver.poll_ack(now) {
            let ack = ack.to_vec();
            client.send(now, &mut net, SERVER, &Packet::Chunk(ack));
        }

        // Server: a snapshot every third frame, slices within the chunk budget.
        if tick.is_multiple_of(3) {
            let snapshot = Snapshot {
                tick: tick % 65536,
                entities: (0..64).map(|i| entity(i, tick)).collect(),
            };
            snapshot_bytes = snapshot.to_vec().expect("in bounds").len();
            server.send(now, &mut net, CLIENT, &Packet::Snapshot(snapshot));
            snapshots_sent += 1;
        }
        chunk_sender.set_rtt(Some(server.endpoint.stats().rtt).filter(|r| *r > 0.0));
        while let Some(slice) = chunk_sender.poll_packet(now) {
            let slice = slice.to_vec();
            server.send(now, &mut net, CLIENT, &Packet::Chunk(slice));
        }

        // Deliver everything due.
        while let Some(d) = net.receive(now) {
            let peer = if d.to == CLIENT {
                &mut client
            } else {
                &mut server
            };
            let Ok(Some(received)) = peer.endpoint.receive_packet(now, &d.data) else {
                continue;
            };
            let packet = match read_packet::<Packet>(PROTOCOL_ID, received.payload) {
                Ok(p) => p,
                Err(_) => {
                    peer.decode_errors += 1;
                    continue;
                }
            };
            match packet {
                Packet::Input(_) => inputs_received += 1,
                Packet::Snapshot(s) => {
                    snapshots_received += 1;
                    last_snapshot_tick = s.tick;
                }
                Packet::Chunk(bytes) if d.to == CLIENT => {
                    let _ = chunk_receiver.receive_slice(now, &bytes);
                    if let Some(chunk) = chunk_receiver.take_chunk() {
                        assert_eq!(chunk.data, world, "the world state arrives byte-exact");
                        world_received_at = Some(now);
                    }
                }
                Packet::Chunk(bytes) => {
                    let _ = chunk_sender.receive_ack(now, &bytes);
                }
            }
        }
        client.endpoint.update(now);
        server.endpoint.update(now);
    }

    let s = server.endpoint.stats();
    println!("{seconds} s over a link with 50 ms latency, 20 ms jitter, {:.0}% loss, 2% duplicates, 2% reordering:", loss * 100.0);
    println!(
        "  world state: {} bytes as a chunk, received byte-exact at {}",
        world.len(),
        world_received_at.map_or("(not yet)".to_string(), |t| format!("{t:.2} s"))
    );
    println!(
        "  snapshots: {} sent, {} received (last tick {}), {} bytes each for 64 entities",
        snapshots_sent, snapshots_received, last_snapshot_tick, snapshot_bytes
    );
    println!(
        "  inputs: {} sent, {} received",
        inputs_sent, inputs_received
    );
    let known = |v: Option<f64>, scale: f64| {
        v.map_or("not yet known".to_string(), |v| format!("{:.1}", v * scale))
    };
    println!(
        "  server view: rtt {:.1} ms, packet loss {}%, sent {} kbps, acked {} kbps",
        s.rtt * 1000.0,
        known(s.packet_loss, 100.0),
        known(s.sent_kbps, 1.0),
        known(s.acked_kbps, 1.0)
    );
    println!(
        "  packets refused by the CRC or a bound: client {}, server {}",
        client.decode_errors, server.decode_errors
    );
}
