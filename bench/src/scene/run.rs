//! The scene through the real transport: each encoding sent as the snapshot section of
//! connection packets over the seeded simulator, every server -> client datagram counted
//! with 28 bytes of IP and UDP.

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};
use netser_transport::snapshot::{
    EntityConfig, EntityReceiver, EntitySender, SnapshotConfig, SnapshotReceiver, SnapshotSender,
};

use super::sim::{Sim, CUBES, GRID};
use super::{Cube, Scene};

/// Ticks per second.
pub const RATE: f64 = 60.0;
const TICK: f64 = 1.0 / RATE;
/// Bytes charged per datagram for IP and UDP.
const UDP_IP: u64 = 28;

/// Bytes on the wire in one direction.
#[derive(Debug, Default, Clone, Copy)]
pub struct Wire {
    /// Datagrams sent.
    pub datagrams: u64,
    /// Datagram bytes plus 28 per datagram.
    pub bytes: u64,
}

impl Wire {
    fn count(&mut self, datagram: &[u8]) {
        self.datagrams += 1;
        self.bytes += datagram.len() as u64 + UDP_IP;
    }

    /// kbit/s over `ticks`.
    pub fn kbps(&self, ticks: u64) -> f64 {
        self.bytes as f64 * 8.0 / 1000.0 / (ticks as f64 / RATE)
    }
}

/// One stream: a server connection, a client connection and the network between them.
struct Link {
    server: Connection<u8>,
    client: Connection<u8>,
    net: Simulator,
    down: Wire,
    /// Whether the client's acks go back (a stream that needs none saves the work).
    acks: bool,
}

fn connection_config() -> ConnectionConfig {
    let mut config = ConnectionConfig::default();
    // Whole scenes (9 KB absolute, 26 KB as floats) go as fragmented packets.
    config.endpoint.max_packet_size = 32 * 1024;
    config.endpoint.max_fragments = 32;
    config.endpoint.max_reassembly_bytes = 4 * 32 * 1024;
    config
}

impl Link {
    fn new(net: &SimulatorConfig, acks: bool) -> Self {
        Self {
            server: Connection::new(0.0, connection_config()).expect("valid"),
            client: Connection::new(0.0, connection_config()).expect("valid"),
            net: Simulator::new(net.clone()),
            down: Wire::default(),
            acks,
        }
    }

    /// Sends what the server has, delivers what arrived by `now` to `take` (client) or
    /// the server (acks), then sends the client's acks: a game's frame, receive then
    /// send.
    fn pump(&mut self, now: f64, mut take: impl FnMut(&mut Connection<u8>, &[u8])) {
        self.server.handle_timeout(now);
        while let Some(d) = self.server.poll_transmit(now) {
            self.down.count(d);
            self.net.send(now, 1, 2, d);
        }
        while let Some(delivery) = self.net.receive(now) {
            if delivery.to == 2 {
                take(&mut self.client, &delivery.data);
            } else {
                let _ = self.server.handle_datagram(now, &delivery.data);
            }
        }
        self.client.handle_timeout(now);
        while let Some(d) = self.client.poll_transmit(now) {
            if self.acks {
                self.net.send(now, 2, 1, d);
            }
        }
    }
}

/// What one run at one loss level measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The simulator's loss.
    pub loss: f64,
    /// Ticks of the active run (the pusher driving, then cubes settling).
    pub active_ticks: u64,
    /// Ticks of the run at rest.
    pub rest_ticks: u64,
    /// The snapshot layer, delta against the newest acked snapshot (active run).
    pub delta: Wire,
    /// The snapshot layer with no acks: every snapshot whole.
    pub absolute: Wire,
    /// Seven `f32` and a byte a cube.
    pub naive: Wire,
    /// bitcode of the quantized cubes.
    pub bitcode: Wire,
    /// The delta stream at rest.
    pub rest: Wire,
    /// Changed cubes per snapshot over the active run.
    pub changed: f64,
    /// Decoded snapshots (delta and absolute streams) that differ from the server's.
    pub mismatches: u64,
    /// Decoded snapshots checked.
    pub checked: u64,
    /// Delta stream: snapshots sent whole.
    pub delta_absolute_sent: u64,
    /// Delta stream: section bits per snapshot sent.
    pub delta_bits_per_snapshot: f64,
    /// Delta stream: snapshots between each one sent and its baseline, on average.
    pub mean_baseline_age: f64,
    /// Snapshots refused by the delta stream's receiver.
    pub refused: u64,
}

/// The delta (or, without acks, absolute) stream's sender and receiver.
struct Layer {
    link: Link,
    sender: SnapshotSender<Scene>,
    receiver: SnapshotReceiver<Scene>,
}

impl Layer {
    fn new(net: &SimulatorConfig, acks: bool) -> Self {
        let config = SnapshotConfig::default();
        Self {
            link: Link::new(net, acks),
            sender: SnapshotSender::new(config.clone()).expect("valid"),
            receiver: SnapshotReceiver::new(config).expect("valid"),
        }
    }

    /// Sends `scene`, pumps, and checks what the client decoded against the server's
    /// history: returns (checked, mismatches).
    fn tick(&mut self, now: f64, scene: &Scene) -> (u64, u64) {
        self.sender
            .send(now, &mut self.link.server, scene.clone())
            .expect("the scene encodes and fits");
        let receiver = &mut self.receiver;
        self.link.pump(now, |client, bytes| {
            let _ = receiver.handle_datagram(now, client, bytes);
        });
        match self.receiver.poll_snapshot() {
            Some((sequence, decoded)) => match self.sender.history().get(sequence) {
                Some(sent) => (1, u64::from(sent != decoded)),
                None => (0, 0),
            },
            None => (0, 0),
        }
    }
}

/// The quantized cubes as bitcode sees them.
#[derive(bitcode::Encode)]
struct BitcodeCube {
    x: i32,
    y: i32,
    z: i32,
    largest: u8,
    small: [i16; 3],
    interacting: bool,
}

/// A section sent as-is (its bytes, whole).
fn send_bytes(link: &mut Link, now: f64, bytes: &[u8]) {
    link.server
        .send_section(now, bytes, bytes.len() as u64 * 8)
        .expect("fits max_packet_size");
    link.pump(now, |client, bytes| {
        let _ = client.handle_datagram_with(now, bytes, |_| true);
    });
}

/// Runs the scene at `loss` (100 ms round trip): `drive` ticks of the pusher, the
/// cubes settling, then `rest` ticks at rest.
pub fn run(loss: f64, drive: u64, rest: u64, seed: u64) -> Figures {
    let net = SimulatorConfig {
        latency: 0.05,
        loss,
        seed,
        ..SimulatorConfig::default()
    };
    let mut sim = Sim::new(7, GRID, drive);
    let mut delta = Layer::new(&net, true);
    let mut absolute = Layer::new(&net, false);
    let mut naive = Link::new(&net, false);
    let mut bitcode_link = Link::new(&net, false);
    let mut figures = Figures {
        loss,
        ..Figures::default()
    };
    let mut previous = Scene::of(&sim);
    let mut changed = 0u64;
    let mut now = 0.0;
    let mut tick = 0u64;
    let mut rest_left = rest;
    let mut rest_from: Option<(Wire, u64)> = None;
    let mut ages = 0u64;
    let mut aged = 0u64;
    while rest_left > 0 {
        sim.step(TICK as f32);
        tick += 1;
        let scene = Scene::of(&sim);
        let at_rest = tick > drive && sim.at_rest();
        if at_rest && rest_from.is_none() {
            figures.active_ticks = tick - 1;
            rest_from = Some((delta.link.down, tick));
        }
        if rest_from.is_none() {
            changed += scene.changed_from(&previous) as u64;
        } else {
            rest_left -= 1;
        }
        let (c, m) = delta.tick(now, &scene);
        figures.checked += c;
        figures.mismatches += m;
        if let Some(age) = delta.sender.stats().last_baseline_age {
            ages += u64::from(age);
            aged += 1;
        }
        if rest_from.is_none() {
            let (c, m) = absolute.tick(now, &scene);
            figures.checked += c;
            figures.mismatches += m;
            let mut floats = Vec::with_capacity(CUBES * 29);
            for cube in scene.cubes.iter() {
                for v in [cube.x, cube.y, cube.z].iter().chain(&cube.orientation) {
                    floats.extend_from_slice(&v.to_le_bytes());
                }
                floats.push(u8::from(cube.interacting));
            }
            send_bytes(&mut naive, now, &floats);
            let cubes: Vec<BitcodeCube> = scene
                .cubes
                .iter()
                .map(|c| {
                    let ([x, y, z], largest, small) = c.integers();
                    BitcodeCube {
                        x,
                        y,
                        z,
                        largest,
                        small,
                        interacting: c.interacting,
                    }
                })
                .collect();
            send_bytes(&mut bitcode_link, now, &bitcode::encode(&cubes));
        }
        previous = scene;
        now += TICK;
        if tick > drive + 60 * 60 {
            panic!("the scene did not come to rest within a minute of the pusher stopping");
        }
    }
    let (at_rest_wire, rest_tick) = rest_from.expect("came to rest");
    figures.rest_ticks = tick - rest_tick + 1;
    figures.delta = Wire {
        datagrams: at_rest_wire.datagrams,
        bytes: at_rest_wire.bytes,
    };
    figures.rest = Wire {
        datagrams: delta.link.down.datagrams - at_rest_wire.datagrams,
        bytes: delta.link.down.bytes - at_rest_wire.bytes,
    };
    figures.absolute = absolute.link.down;
    figures.naive = naive.down;
    figures.bitcode = bitcode_link.down;
    figures.changed = changed as f64 / figures.active_ticks as f64;
    let stats = delta.sender.stats();
    figures.delta_absolute_sent = stats.absolute_sent;
    figures.delta_bits_per_snapshot = stats.bits_per_snapshot();
    figures.mean_baseline_age = ages as f64 / aged.max(1) as f64;
    let r = delta.receiver.counters();
    figures.refused = r.unknown_baseline + r.baseline_evicted + r.malformed + r.wrong_kind;
    // The client holds the final scene exactly.
    if delta.receiver.newest().map(|(_, s)| s) != Some(&previous) {
        figures.mismatches += 1;
    }
    figures
}

/// What the large scene measured.
#[derive(Debug, Clone, Default)]
pub struct LargeFigures {
    /// Entities (cubes).
    pub entities: usize,
    /// The budget, kbit/s.
    pub budget_kbps: f64,
    /// Ticks run.
    pub ticks: u64,
    /// Server -> client.
    pub wire: Wire,
    /// The longest any entity waited with news, ticks.
    pub max_age: u32,
    /// Mean entities waiting per tick.
    pub mean_pending: f64,
    /// Packets over the budget (must be 0).
    pub over_budget: u64,
    /// Entities the client holds differently from the server at the end (must be 0).
    pub mismatches: u64,
}

/// A 64 x 64 field (4097 cubes) as entity sets at `budget_bps`, 5% loss, 100 ms round
/// trip: `drive` ticks of the pusher, then until at rest and everything arrived.
pub fn run_large(budget_bps: f64, drive: u64, seed: u64) -> LargeFigures {
    let grid = 64;
    let entities = grid * grid + 1;
    let config = EntityConfig {
        max_entities: entities,
        ..EntityConfig::default()
    }
    .with_bandwidth(budget_bps, RATE);
    let budget = config.packet_budget as u64;
    let net = SimulatorConfig {
        latency: 0.05,
        loss: 0.05,
        seed,
        ..SimulatorConfig::default()
    };
    let mut link = Link::new(&net, true);
    let mut sender = EntitySender::<Cube>::new(config.clone()).expect("valid");
    let mut receiver = EntityReceiver::<Cube>::new(config).expect("valid");
    let mut sim = Sim::new(11, grid, drive);
    let mut figures = LargeFigures {
        entities,
        budget_kbps: budget_bps / 1000.0,
        ..LargeFigures::default()
    };
    let mut now = 0.0;
    let mut pending = 0u64;
    let mut world: Vec<Option<Cube>> = Vec::new();
    loop {
        sim.step(TICK as f32);
        figures.ticks += 1;
        world.clear();
        world.extend(sim.bodies.iter().map(|b| Some(Cube::quantize(b))));
        let interacting: Vec<bool> = sim.bodies.iter().map(|b| b.interacting).collect();
        sender
            .send(now, &mut link.server, &world, |id, _| {
                if interacting[id] {
                    10.0
                } else {
                    1.0
                }
            })
            .expect("encodes");
        let before = link.down.bytes;
        let datagrams = link.down.datagrams;
        link.pump(now, |client, bytes| {
            let _ = receiver.handle_datagram(now, client, bytes);
        });
        if link.down.datagrams == datagrams + 1 && link.down.bytes - before > budget {
            figures.over_budget += 1;
        }
        pending += sender.stats().pending as u64;
        now += TICK;
        if figures.ticks > drive && sim.at_rest() && sender.stats().pending == 0 {
            break;
        }
        assert!(figures.ticks < drive + 60 * 120, "the large scene settles");
    }
    // Let the last packets land, then compare.
    for _ in 0..30 {
        sender
            .send(now, &mut link.server, &world, |_, _| 1.0)
            .expect("encodes");
        link.pump(now, |client, bytes| {
            let _ = receiver.handle_datagram(now, client, bytes);
        });
        now += TICK;
    }
    figures.mismatches = world
        .iter()
        .enumerate()
        .filter(|(id, cube)| receiver.entity(*id) != cube.as_ref())
        .count() as u64;
    figures.wire = link.down;
    figures.max_age = sender.stats().max_age_ever;
    figures.mean_pending = pending as f64 / figures.ticks as f64;
    figures
}

/// The scene's absolute size in bits, for the report.
pub fn absolute_bits() -> u64 {
    Scene::MAX_BITS
}
