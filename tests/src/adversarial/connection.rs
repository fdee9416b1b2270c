//! Structured scripts against two real connections with every channel kind: sends of
//! small messages, aligned text and blocks, takes, pumps and ticks, while the network
//! delivers, drops, duplicates, reorders, corrupts, truncates and mutates their datagrams,
//! and an attacker injects raw bytes or arbitrary payloads behind a valid packet header
//! (what any connected client can put inside its encrypted packets).
//!
//! Checked after every step: no panic; every datagram and every refused one counted
//! (`ConnectionCounters`), every message received is delivered, failed or still queued
//! (`ChannelCounters`); queues within their configured sizes, the endpoint within its
//! memory bound. While the script has not tampered with any datagram: every message is
//! delivered byte-exact and at most once, in send order without gaps on the
//! reliable-ordered channel and in increasing order on the sequenced one; and when the
//! script asks to settle, a lossless network then delivers every reliable message sent.

use std::collections::{HashSet, VecDeque};

use arbitrary::Arbitrary;
use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::endpoint::Endpoint;

use super::script::pattern;
use super::script_bytes::{noise, ScriptBytes};

/// Most datagrams in flight per direction; the oldest is dropped beyond it.
const MAX_IN_FLIGHT: usize = 256;

/// Most datagrams one pump takes from a side: far more than a frame's budget allows, so
/// reaching it means `poll_transmit` never runs dry.
const MAX_PER_PUMP: usize = 4096;

/// The channels: 0 reliable-ordered, 1 reliable-unordered, 2 unreliable-sequenced,
/// 3 unreliable.
pub const CHANNELS: usize = 4;

/// The scripts' message: its number on its channel, optional text (an aligned field),
/// and a fill from which a block is made when it is long.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Note {
    /// Per sender and channel, from 0.
    pub n: u32,
    /// Text on every third note.
    #[net(max_len = 64)]
    pub text: Option<String>,
    /// `pattern(tag, n, len)`.
    #[net(max_len = 16384)]
    pub fill: Vec<u8>,
}

impl Note {
    /// The note `n` of channel `channel` from side `side`, with `len` bytes of fill.
    pub fn new(side: usize, channel: usize, n: u32, len: usize) -> Self {
        Self {
            n,
            text: n.is_multiple_of(3).then(|| format!("#{n} ✓")),
            fill: pattern(tag(side, channel), n, len),
        }
    }
}

fn tag(side: usize, channel: usize) -> u8 {
    (side * CHANNELS + channel) as u8
}

/// What the peers, the network or an attacker do next.
#[derive(Arbitrary, Debug, Clone)]
pub enum ConnectionOp {
    /// `side` sends a note on `channel` (modulo 4) with `len` bytes of fill (times 16
    /// when `big`: a block on the reliable channels, too large on the others).
    Send {
        /// Which connection sends.
        side: bool,
        /// Channel, modulo [`CHANNELS`].
        channel: u8,
        /// Fill bytes.
        len: u16,
        /// Times 16.
        big: bool,
    },
    /// `side` takes up to `count` messages from `channel`.
    Take {
        /// Which connection.
        side: bool,
        /// Channel, modulo [`CHANNELS`].
        channel: u8,
        /// Most messages.
        count: u8,
    },
    /// `side` updates and sends everything it has to send now.
    Pump {
        /// Which connection.
        side: bool,
    },
    /// Deliver the in-flight datagram at `index` (modulo the queue; any order).
    Deliver {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Deliver every datagram in flight, in order.
    Flush,
    /// Lose one.
    Drop {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Queue a copy.
    Duplicate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
    },
    /// Flip one bit.
    Corrupt {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// Bit (modulo the length).
        bit: u32,
    },
    /// Cut one short.
    Truncate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// New length (modulo the length).
        len: u16,
    },
    /// Overwrite one byte of a real datagram.
    Mutate {
        /// From which side.
        side: bool,
        /// Queue position.
        index: u8,
        /// Byte (modulo the length).
        offset: u16,
        /// New value.
        byte: u8,
    },
    /// Raw bytes of the attacker's choosing to `side`.
    Forge {
        /// Towards which side.
        side: bool,
        /// The datagram.
        bytes: Vec<u8>,
    },
    /// A payload of the attacker's choosing behind a valid packet header (from an
    /// endpoint of the same configuration), so it reaches the message parser.
    ForgePayload {
        /// Towards which side.
        side: bool,
        /// The connection payload.
        payload: Vec<u8>,
    },
    /// Time passes; both sides update.
    Tick {
        /// Milliseconds.
        ms: u16,
    },
}

/// A script against two connections.
#[derive(Arbitrary, Debug, Clone)]
pub struct ConnectionScript {
    /// A small MTU, small queues and few blocks, so every limit is reached quickly.
    pub small: bool,
    /// After the operations, run a lossless network until every reliable message sent
    /// has arrived (checked only while the script has not tampered).
    pub settle: bool,
    /// The operations.
    pub ops: Vec<ConnectionOp>,
}

/// The connections' configuration: one channel of each kind.
pub fn connection_config(small: bool) -> ConnectionConfig {
    let channel = |kind: ChannelKind| {
        if small {
            ChannelConfig {
                send_queue_size: 8,
                receive_queue_size: 8,
                max_messages_per_packet: 4,
                ..ChannelConfig::new(kind)
            }
        } else {
            ChannelConfig::new(kind)
        }
    };
    let channels = vec![
        channel(ChannelKind::ReliableOrdered { resend_delay: 0.1 }),
        channel(ChannelKind::ReliableUnordered { resend_delay: 0.1 }),
        channel(ChannelKind::UnreliableSequenced),
        channel(ChannelKind::Unreliable),
    ];
    let mut config = ConnectionConfig::with_channels(channels);
    if small {
        config = config.with_mtu(200);
        config.max_block_size = 4096;
        config.max_received_blocks = 1;
        config.chunk.max_queued_chunks = 2;
        config.endpoint.sent_packets_buffer_size = 64;
        config.endpoint.received_packets_buffer_size = 64;
    }
    config
}

/// What one side has sent on one channel and the other has delivered.
#[derive(Default)]
struct Flow {
    /// Numbers sent (accepted by `send_message`), in order.
    sent: VecDeque<u32>,
    /// Of those, the ones not yet delivered (reliable-ordered: in order).
    undelivered: VecDeque<u32>,
    delivered: HashSet<u32>,
    last: Option<u32>,
    next: u32,
}

struct Harness {
    config: ConnectionConfig,
    sides: [Connection<Note>; 2],
    forgers: [Endpoint; 2],
    /// Datagrams from side i, in flight to the other.
    wire: [VecDeque<Vec<u8>>; 2],
    /// `flows[s][c]`: sent by side `s` on channel `c`.
    flows: [[Flow; CHANNELS]; 2],
    /// `handle_datagram` calls and errors, per receiving side.
    received: [u64; 2],
    refused: [u64; 2],
    clean: bool,
    now: f64,
}

fn pick(queue: &VecDeque<Vec<u8>>, index: u8) -> Option<usize> {
    (!queue.is_empty()).then(|| usize::from(index) % queue.len())
}

impl Harness {
    fn new(small: bool) -> Self {
        let config = connection_config(small);
        let side = || Connection::new(0.0, config.clone()).expect("the configuration is valid");
        let forger = || Endpoint::new(0.0, config.endpoint.clone()).expect("valid");
        Self {
            sides: [side(), side()],
            forgers: [forger(), forger()],
            config,
            wire: [VecDeque::new(), VecDeque::new()],
            flows: Default::default(),
            received: [0; 2],
            refused: [0; 2],
            clean: true,
            now: 0.0,
        }
    }

    fn deliver(&mut self, to: usize, datagram: &[u8]) {
        self.received[to] += 1;
        if self.sides[to].handle_datagram(self.now, datagram).is_err() {
            self.refused[to] += 1;
        }
    }

    fn pump(&mut self, s: usize) {
        self.sides[s].handle_timeout(self.now);
        let mut polled = 0;
        while let Some(datagram) = self.sides[s].poll_transmit(self.now) {
            polled += 1;
            assert!(
                polled <= MAX_PER_PUMP,
                "side {s}: poll_transmit never runs dry"
            );
            if self.wire[s].len() == MAX_IN_FLIGHT {
                self.wire[s].pop_front();
            }
            self.wire[s].push_back(datagram.to_vec());
        }
    }

    fn send(&mut self, s: usize, channel: usize, len: usize) {
        let flow = &mut self.flows[s][channel];
        let note = Note::new(s, channel, flow.next, len);
        flow.next += 1;
        if self.sides[s].send_message(channel as u8, &note).is_ok() {
            flow.sent.push_back(note.n);
            flow.undelivered.push_back(note.n);
        }
    }

    /// Side `s` takes up to `count` messages of `channel`, sent by the other side.
    fn take(&mut self, s: usize, channel: usize, count: usize) {
        let from = 1 - s;
        for _ in 0..count {
            let Some(note) = self.sides[s].receive_message(channel as u8) else {
                break;
            };
            if !self.clean {
                continue;
            }
            let flow = &mut self.flows[from][channel];
            assert_eq!(
                note,
                Note::new(from, channel, note.n, note.fill.len()),
                "side {s} channel {channel}: note {} delivered with other bytes",
                note.n
            );
            assert!(
                flow.sent.contains(&note.n),
                "side {s} channel {channel}: note {} was never sent",
                note.n
            );
            assert!(
                flow.delivered.insert(note.n),
                "side {s} channel {channel}: note {} delivered twice",
                note.n
            );
            match channel {
                0 => assert_eq!(
                    flow.undelivered.front(),
                    Some(&note.n),
                    "side {s}: reliable-ordered note out of order or after a gap"
                ),
                2 => assert!(
                    flow.last.is_none_or(|last| note.n > last),
                    "side {s}: sequenced note {} after {:?}",
                    note.n,
                    flow.last
                ),
                _ => {}
            }
            flow.last = Some(note.n);
            if let Some(i) = flow.undelivered.iter().position(|&n| n == note.n) {
                flow.undelivered.remove(i);
            }
        }
    }

    fn check(&self) {
        for (s, side) in self.sides.iter().enumerate() {
            let c = side.counters();
            assert_eq!(c.datagrams_received, self.received[s], "side {s}: {c:?}");
            assert_eq!(
                c.malformed_packets
                    + c.packets_refused
                    + c.endpoint_drops
                    + c.block_datagram_drops
                    + c.sections_refused,
                self.refused[s],
                "side {s}: a refused datagram not counted once: {c:?}"
            );
            let endpoint = side.endpoint();
            assert!(
                endpoint.memory_bytes() <= self.config.endpoint.memory_bound(),
                "side {s}: endpoint over its memory bound"
            );
            assert!(side.memory_bound() < usize::MAX);
            for (channel, config) in self.config.channels.iter().enumerate() {
                let cc = side.channel_counters(channel as u8).expect("configured");
                let queued = side.received_messages(channel as u8);
                assert!(queued <= config.receive_queue_size, "side {s} ch {channel}");
                assert!(side.queued_messages(channel as u8) <= config.send_queue_size);
                assert_eq!(
                    cc.messages_received,
                    cc.messages_delivered + cc.blocks_failed_decode + queued as u64,
                    "side {s} channel {channel}: a received message lost: {cc:?}"
                );
            }
        }
    }

    fn op(&mut self, op: &ConnectionOp) {
        match op {
            ConnectionOp::Send {
                side,
                channel,
                len,
                big,
            } => {
                let len = usize::from(*len) * if *big { 16 } else { 1 } % 16_385;
                self.send(usize::from(*side), usize::from(*channel) % CHANNELS, len);
            }
            ConnectionOp::Take {
                side,
                channel,
                count,
            } => self.take(
                usize::from(*side),
                usize::from(*channel) % CHANNELS,
                usize::from(*count),
            ),
            ConnectionOp::Pump { side } => self.pump(usize::from(*side)),
            ConnectionOp::Deliver { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&self.wire[s], *index) {
                    let d = self.wire[s].remove(i).expect("picked");
                    self.deliver(1 - s, &d);
                }
            }
            ConnectionOp::Flush => self.flush(),
            ConnectionOp::Drop { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&self.wire[s], *index) {
                    self.wire[s].remove(i);
                }
            }
            ConnectionOp::Duplicate { side, index } => {
                let s = usize::from(*side);
                if let Some(i) = pick(&self.wire[s], *index) {
                    if self.wire[s].len() < MAX_IN_FLIGHT {
                        let copy = self.wire[s][i].clone();
                        self.wire[s].push_back(copy);
                    }
                }
            }
            ConnectionOp::Corrupt { side, index, bit } => {
                self.tamper(*side, *index, |d| {
                    let bit = *bit as usize % (d.len() * 8);
                    d[bit / 8] ^= 1 << (bit % 8);
                });
            }
            ConnectionOp::Truncate { side, index, len } => {
                self.tamper(*side, *index, |d| d.truncate(usize::from(*len) % d.len()));
            }
            ConnectionOp::Mutate {
                side,
                index,
                offset,
                byte,
            } => {
                self.tamper(*side, *index, |d| {
                    let at = usize::from(*offset) % d.len();
                    d[at] = *byte;
                });
            }
            ConnectionOp::Forge { side, bytes } => {
                self.clean = false;
                self.deliver(usize::from(*side), bytes);
            }
            ConnectionOp::ForgePayload { side, payload } => {
                let to = usize::from(*side);
                self.clean = false;
                let forger = &mut self.forgers[to];
                if forger.send_packet(self.now, payload).is_ok() {
                    let mut datagrams = Vec::new();
                    while let Some(t) = forger.poll_transmit() {
                        datagrams.push(t.data.to_vec());
                    }
                    for d in datagrams {
                        self.deliver(to, &d);
                    }
                }
            }
            ConnectionOp::Tick { ms } => {
                self.now += f64::from(*ms) / 1000.0;
                for side in &mut self.sides {
                    side.handle_timeout(self.now);
                }
            }
        }
    }

    fn tamper(&mut self, side: bool, index: u8, change: impl FnOnce(&mut Vec<u8>)) {
        let s = usize::from(side);
        if let Some(i) = pick(&self.wire[s], index) {
            let d = &mut self.wire[s][i];
            if !d.is_empty() {
                change(d);
                self.clean = false;
            }
        }
    }

    fn flush(&mut self) {
        for s in 0..2 {
            while let Some(d) = self.wire[s].pop_front() {
                self.deliver(1 - s, &d);
            }
        }
    }

    /// A lossless network for 60 simulated seconds plus four resend delays (messages
    /// wait the endpoint's RTO, slices `chunk.resend_rtt_factor` RTOs): every reliable
    /// note sent must arrive.
    fn settle(&mut self) {
        let start = self.now;
        for _ in 0..100_000 {
            let rto = self.sides[0].stats().rto.max(self.sides[1].stats().rto);
            let resend = rto * self.config.chunk.resend_rtt_factor.max(1.0);
            if self.now - start > 60.0 + 4.0 * resend {
                break;
            }
            self.now += (resend / 20.0).max(0.05);
            for s in 0..2 {
                self.pump(s);
            }
            self.flush();
            for s in 0..2 {
                for channel in 0..CHANNELS {
                    self.take(s, channel, usize::MAX);
                }
            }
            self.check();
            let done = (0..2).all(|s| {
                self.flows[s][..2]
                    .iter()
                    .all(|flow| flow.undelivered.is_empty())
            });
            if done {
                return;
            }
        }
        for (s, flows) in self.flows.iter().enumerate() {
            for (channel, flow) in flows[..2].iter().enumerate() {
                assert!(
                    flow.undelivered.is_empty(),
                    "side {s} channel {channel}: notes {:?} never arrived; sender (rtt {}) {:?} \
                     {:?} {:?}; receiver {:?} {:?} {:?}",
                    flow.undelivered,
                    self.sides[s].rtt(),
                    self.sides[s].counters(),
                    self.sides[s].channel_counters(channel as u8),
                    self.sides[s].block_send_progress(),
                    self.sides[1 - s].counters(),
                    self.sides[1 - s].channel_counters(channel as u8),
                    self.sides[1 - s].block_receive_progress(),
                );
            }
        }
    }
}

/// What a script did, for the tests that check the seeds reach deep states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionOutcome {
    /// `delivered[s][c]`: messages side `s` took from channel `c`.
    pub delivered: [[u64; CHANNELS]; 2],
    /// Blocks delivered to either side.
    pub blocks: u64,
    /// Datagrams refused by either side.
    pub refused: u64,
    /// No datagram was tampered with.
    pub clean: bool,
}

/// Plays a connection script; panics when an invariant breaks.
pub fn run_connection_script(script: &ConnectionScript) -> ConnectionOutcome {
    let mut h = Harness::new(script.small);
    for op in &script.ops {
        h.op(op);
        h.check();
    }
    if script.settle && h.clean {
        h.settle();
    }
    let mut delivered = [[0; CHANNELS]; 2];
    let mut blocks = 0;
    for (s, side) in h.sides.iter().enumerate() {
        for (c, count) in delivered[s].iter_mut().enumerate() {
            let counters = side.channel_counters(c as u8).expect("configured");
            *count = counters.messages_delivered;
            blocks += counters.blocks_delivered;
        }
    }
    ConnectionOutcome {
        delivered,
        blocks,
        refused: h.refused.iter().sum(),
        clean: h.clean,
    }
}

fn write_op(b: ScriptBytes, op: &ConnectionOp) -> ScriptBytes {
    const N: u32 = 13;
    match *op {
        ConnectionOp::Send {
            side,
            channel,
            len,
            big,
        } => b.variant(0, N).bool(side).u8(channel).u16(len).bool(big),
        ConnectionOp::Take {
            side,
            channel,
            count,
        } => b.variant(1, N).bool(side).u8(channel).u8(count),
        ConnectionOp::Pump { side } => b.variant(2, N).bool(side),
        ConnectionOp::Deliver { side, index } => b.variant(3, N).bool(side).u8(index),
        ConnectionOp::Flush => b.variant(4, N),
        ConnectionOp::Drop { side, index } => b.variant(5, N).bool(side).u8(index),
        ConnectionOp::Duplicate { side, index } => b.variant(6, N).bool(side).u8(index),
        ConnectionOp::Corrupt { side, index, bit } => b.variant(7, N).bool(side).u8(index).u32(bit),
        ConnectionOp::Truncate { side, index, len } => {
            b.variant(8, N).bool(side).u8(index).u16(len)
        }
        ConnectionOp::Mutate {
            side,
            index,
            offset,
            byte,
        } => b.variant(9, N).bool(side).u8(index).u16(offset).u8(byte),
        ConnectionOp::Forge { .. } | ConnectionOp::ForgePayload { .. } => {
            unreachable!("seeds carry no byte strings (the fuzzer adds them)")
        }
        ConnectionOp::Tick { ms } => b.variant(12, N).u16(ms),
    }
}

/// The bytes `arbitrary` reads back as `script` (which holds no byte strings).
pub fn write_script(script: &ConnectionScript) -> Vec<u8> {
    let mut b = ScriptBytes::new().bool(script.small).bool(script.settle);
    for op in &script.ops {
        b = write_op(b.item(), op);
    }
    b.finish()
}

/// Both sides send on every channel, pump, deliver and take, `rounds` times.
fn exchange(rounds: u16, big: bool, network: &[ConnectionOp]) -> Vec<ConnectionOp> {
    let mut ops = Vec::new();
    for round in 0..rounds {
        for side in [false, true] {
            for channel in 0..CHANNELS as u8 {
                let block = big && channel < 2 && round % 3 == 0;
                ops.push(ConnectionOp::Send {
                    side,
                    channel,
                    len: if block {
                        150 + round
                    } else {
                        8 * round + u16::from(channel)
                    },
                    big: block,
                });
            }
            ops.push(ConnectionOp::Pump { side });
        }
        ops.extend_from_slice(network);
        ops.push(ConnectionOp::Flush);
        for side in [false, true] {
            for channel in 0..CHANNELS as u8 {
                ops.push(ConnectionOp::Take {
                    side,
                    channel,
                    count: 255,
                });
            }
        }
        ops.push(ConnectionOp::Tick { ms: 40 });
    }
    ops
}

/// The structured seeds: exchanges of every kind of message and of blocks, over a
/// perfect, a lossy and a tampering network, with both configurations.
pub fn seed_scripts() -> Vec<(String, ConnectionScript)> {
    let lossy = [
        ConnectionOp::Drop {
            side: false,
            index: 1,
        },
        ConnectionOp::Duplicate {
            side: true,
            index: 0,
        },
        ConnectionOp::Deliver {
            side: false,
            index: 2,
        },
        ConnectionOp::Drop {
            side: true,
            index: 3,
        },
    ];
    let tampering = [
        ConnectionOp::Mutate {
            side: false,
            index: 0,
            offset: 12,
            byte: 0xff,
        },
        ConnectionOp::Corrupt {
            side: true,
            index: 1,
            bit: 77,
        },
        ConnectionOp::Truncate {
            side: false,
            index: 2,
            len: 30,
        },
    ];
    let mut out = Vec::new();
    for small in [false, true] {
        let size = if small { "small" } else { "default" };
        for (name, big, network) in [
            ("exchange", false, &[][..]),
            ("blocks", true, &[][..]),
            ("lossy", true, &lossy[..]),
            ("tampered", true, &tampering[..]),
        ] {
            out.push((
                format!("{name}_{size}"),
                ConnectionScript {
                    small,
                    settle: true,
                    ops: exchange(12, big, network),
                },
            ));
        }
    }
    out
}

/// The seed inputs: the structured seeds and two of noise.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = seed_scripts()
        .iter()
        .map(|(name, script)| (name.clone(), write_script(script)))
        .collect();
    for (i, len) in [(0u64, 512), (1, 4096)] {
        out.push((format!("noise_{i}"), noise(0xc0_11ec + i, len)));
    }
    out
}

/// The target on raw bytes: read as a script and played.
pub fn run(data: &[u8]) {
    use arbitrary::Unstructured;
    if let Ok(script) = ConnectionScript::arbitrary_take_rest(Unstructured::new(data)) {
        let _ = run_connection_script(&script);
    }
}
