//! Pins the snapshot section of WIRE.md (whole snapshots and entity sets): real datagrams
//! from a snapshot sender and an entity sender, read back field by field by an annotator
//! written from the document, snapshot-tested. A change to the wire shows up here.

use std::fmt::Write as _;

use netser::{Decoder, Encoder, NetDelta, NetSerialize, ReadStream, Result};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::endpoint::header::PacketHeader;
use netser_transport::snapshot::{
    EntityConfig, EntityReceiver, EntitySender, SnapshotConfig, SnapshotReceiver, SnapshotSender,
};

/// A point on a 0..=1000 grid; delta: per field a changed bit and the value.
#[derive(NetSerialize, Debug, Clone, Copy, PartialEq)]
struct Point {
    #[net(range = 0..=1000)]
    x: u16,
    #[net(range = 0..=1000)]
    y: u16,
}

impl NetDelta for Point {
    const MAX_DELTA_BITS: u64 = 2 + 20;
    fn encode_delta<E: Encoder>(&self, b: &Self, e: &mut E) -> Result<()> {
        for (v, b) in [(self.x, b.x), (self.y, b.y)] {
            e.write_bool(v != b)?;
            if v != b {
                e.write_int(v, 0, 1000)?;
            }
        }
        Ok(())
    }
    fn decode_delta<D: Decoder>(b: &Self, d: &mut D) -> Result<Self> {
        let x = if d.read_bool()? {
            d.read_int(0, 1000)?
        } else {
            b.x
        };
        let y = if d.read_bool()? {
            d.read_int(0, 1000)?
        } else {
            b.y
        };
        Ok(Self { x, y })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A reader that logs each field: bit position, width, name, value.
struct Annotator<'a> {
    r: ReadStream<'a>,
    out: String,
}

impl<'a> Annotator<'a> {
    fn field(&mut self, bits: u32, name: &str) -> u64 {
        let at = self.r.bit_position();
        let value = self.r.read_bits(bits).unwrap();
        writeln!(self.out, "  bit {at:>3} +{bits:<2} {name} = {value}").unwrap();
        value
    }
}

/// Reads a connection packet carrying no messages and a section, as WIRE.md says.
fn annotate(datagram: &[u8], section: impl FnOnce(&mut Annotator<'_>)) -> String {
    let (header, len) = PacketHeader::read(datagram).unwrap();
    let mut a = Annotator {
        r: ReadStream::new(&datagram[len..]),
        out: String::new(),
    };
    writeln!(
        a.out,
        "datagram ({} bytes): {}\nendpoint header ({len} bytes): sequence {}",
        datagram.len(),
        hex(datagram),
        header.sequence
    )
    .unwrap();
    a.field(1, "more channels");
    a.field(1, "section follows");
    section(&mut a);
    let rest = a.r.bits_remaining();
    let padding = a.field(rest as u32, "padding");
    assert!(rest < 8 && padding == 0);
    a.out
}

fn point(a: &mut Annotator<'_>, name: &str) {
    a.field(10, &format!("{name}.x (0..=1000)"));
    a.field(10, &format!("{name}.y (0..=1000)"));
}

fn point_delta(a: &mut Annotator<'_>, name: &str) {
    for axis in ["x", "y"] {
        if a.field(1, &format!("{name}.{axis} changed")) == 1 {
            a.field(10, &format!("{name}.{axis}"));
        }
    }
}

/// A whole snapshot (a `Point`) absolute, then against the acked one (history 64: a
/// 6-bit baseline offset).
#[test]
fn snapshot_section_layout() {
    let config = SnapshotConfig::default();
    let mut server: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut client: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut sender = SnapshotSender::new(config.clone()).unwrap();
    let mut receiver = SnapshotReceiver::<Point>::new(config).unwrap();
    let mut report = String::new();
    for (tick, p) in [Point { x: 5, y: 700 }, Point { x: 6, y: 700 }]
        .into_iter()
        .enumerate()
    {
        sender.send(tick as f64, &mut server, p).unwrap();
        let datagram = server.poll_transmit(tick as f64).unwrap().to_vec();
        receiver
            .handle_datagram(tick as f64, &mut client, &datagram)
            .unwrap();
        let ack = client.poll_transmit(tick as f64).unwrap().to_vec();
        server.handle_datagram(tick as f64, &ack).unwrap();
        report += &annotate(&datagram, |a| {
            a.field(1, "kind (0: snapshot)");
            a.field(16, "sequence");
            if a.field(1, "delta") == 1 {
                a.field(6, "baseline offset - 1");
                point_delta(a, "snapshot");
            } else {
                point(a, "snapshot");
            }
        });
    }
    assert_eq!(receiver.newest(), Some((1, &Point { x: 6, y: 700 })));
    insta::assert_snapshot!(report);
}

/// An entity set: 4 entities (2 id bits), count over 2 bits (at most 4 a packet),
/// a window of 8 packets (3-bit offsets): entity 2 appears, then moves, entity 0 appears,
/// then entity 2 is gone.
#[test]
fn entity_section_layout() {
    let config = EntityConfig {
        max_entities: 4,
        max_per_packet: 4,
        window: 8,
        ..EntityConfig::default()
    };
    let mut server: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut client: Connection<u8> = Connection::new(0.0, immediate_acks()).unwrap();
    let mut sender = EntitySender::<Point>::new(config.clone()).unwrap();
    let mut receiver = EntityReceiver::<Point>::new(config).unwrap();
    let worlds = [
        vec![None, None, Some(Point { x: 1, y: 2 })],
        vec![Some(Point { x: 9, y: 9 }), None, Some(Point { x: 1, y: 3 })],
        vec![Some(Point { x: 9, y: 9 }), None, None],
    ];
    let mut report = String::new();
    for (tick, world) in worlds.iter().enumerate() {
        let now = tick as f64;
        // Entity 0 first: it matters more.
        sender
            .send(
                now,
                &mut server,
                world,
                |id, _| if id == 0 { 2.0 } else { 1.0 },
            )
            .unwrap();
        let datagram = server.poll_transmit(now).unwrap().to_vec();
        receiver
            .handle_datagram(now, &mut client, &datagram)
            .unwrap();
        let ack = client.poll_transmit(now).unwrap().to_vec();
        server.handle_datagram(now, &ack).unwrap();
        report += &annotate(&datagram, |a| {
            a.field(1, "kind (1: entity set)");
            let count = a.field(2, "count - 1") + 1;
            for _ in 0..count {
                a.field(2, "id");
                if a.field(1, "present") == 1 {
                    if a.field(1, "delta") == 1 {
                        a.field(3, "baseline packet offset - 1");
                        point_delta(a, "entity");
                    } else {
                        point(a, "entity");
                    }
                }
            }
        });
    }
    assert_eq!(receiver.entity(0), Some(&Point { x: 9, y: 9 }));
    assert_eq!(receiver.entity(2), None);
    insta::assert_snapshot!(report);
}

/// The default connection settings, acking at once: these tests hand each packet over
/// and expect its ack in the same step (the default holds an ack up to 50 ms for a
/// packet of the receiver's own to carry it).
fn immediate_acks() -> ConnectionConfig {
    ConnectionConfig {
        ack_delay: 0.0,
        ..ConnectionConfig::default()
    }
}
