//! The snapshot layer's rules, one test each: baseline choice, a baseline too old, an
//! unknown baseline refused (and left unacked), duplicates, reordering and stale
//! snapshots, sequence wrap, a world at rest, and one encoding shared between peers.

mod snapshot_support;

use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError};
use netser_transport::simulator::SimulatorConfig;
use netser_transport::snapshot::{
    SendOutcome, SnapshotConfig, SnapshotHistory, SnapshotPeer, SnapshotReceiver, SnapshotSender,
};
use snapshot_support::{Link, World, WorldGen, SLOTS};

/// A server and a client wired by hand: each datagram is delivered (or not) by the test.
struct Wire {
    server: Connection<u8>,
    client: Connection<u8>,
    sender: SnapshotSender<World>,
    receiver: SnapshotReceiver<World>,
    gen: WorldGen,
    now: f64,
}

impl Wire {
    fn new(config: SnapshotConfig) -> Self {
        Self {
            server: Connection::new(0.0, immediate_acks()).unwrap(),
            client: Connection::new(0.0, immediate_acks()).unwrap(),
            sender: SnapshotSender::new(config.clone()).unwrap(),
            receiver: SnapshotReceiver::new(config).unwrap(),
            gen: WorldGen::new(7),
            now: 0.0,
        }
    }

    /// Sends the next world; returns the outcome and the datagrams it made.
    fn send(&mut self) -> (SendOutcome, Vec<Vec<u8>>) {
        self.now += 1.0 / 60.0;
        let world = self.gen.step().clone();
        let outcome = self.sender.send(self.now, &mut self.server, world).unwrap();
        let mut datagrams = Vec::new();
        while let Some(d) = self.server.poll_transmit(self.now) {
            datagrams.push(d.to_vec());
        }
        (outcome, datagrams)
    }

    fn deliver(&mut self, datagram: &[u8]) -> Result<(), ReceiveError> {
        self.receiver
            .handle_datagram(self.now, &mut self.client, datagram)
    }

    /// The client's acks reach the server.
    fn ack(&mut self) {
        while let Some(d) = self.client.poll_transmit(self.now).map(<[u8]>::to_vec) {
            self.server.handle_datagram(self.now, &d).unwrap();
        }
    }
}

fn baseline(outcome: SendOutcome) -> Option<u16> {
    match outcome {
        SendOutcome::Sent { baseline, .. } => baseline,
        other => panic!("not sent: {other:?}"),
    }
}

/// The first snapshot goes whole; each later one against the newest the client acked,
/// not the newest sent.
#[test]
fn baseline_is_newest_acked() {
    let mut w = Wire::new(SnapshotConfig::default());
    let (first, d0) = w.send();
    assert_eq!(baseline(first), None);
    let (second, d1) = w.send();
    assert_eq!(baseline(second), None, "nothing acked yet");
    w.deliver(&d0[0]).unwrap();
    w.deliver(&d1[0]).unwrap();
    w.ack();
    let (third, d2) = w.send();
    assert_eq!(baseline(third), Some(1), "the newer of the two acked");
    // 2 is lost; 3 still goes against 1.
    let _ = d2;
    let (fourth, d3) = w.send();
    assert_eq!(baseline(fourth), Some(1));
    w.deliver(&d3[0]).unwrap();
    assert_eq!(w.receiver.newest().unwrap().1, &w.gen.world);
    assert_eq!(w.sender.stats().last_baseline_age, Some(2));
    assert_eq!(w.sender.stats().delta_sent, 2);
    assert_eq!(w.sender.stats().absolute_sent, 2);
}

/// A baseline `history` snapshots old or more is no longer used: the snapshot goes whole.
#[test]
fn baseline_too_old_goes_absolute() {
    let mut w = Wire::new(SnapshotConfig {
        history: 4,
        ..SnapshotConfig::default()
    });
    let (_, d0) = w.send();
    w.deliver(&d0[0]).unwrap();
    w.ack();
    let ages: Vec<Option<u16>> = (0..4).map(|_| baseline(w.send().0)).collect();
    // Snapshots 1, 2, 3 go against 0; 4 would be 4 old: whole.
    assert_eq!(ages, [Some(0), Some(0), Some(0), None]);
}

/// A snapshot against a baseline the receiver does not hold is refused, counted, and its
/// packet not acked (with the messages beside it); nothing wrong is ever decoded.
#[test]
fn unknown_baseline_is_refused_unacked() {
    let mut w = Wire::new(SnapshotConfig::default());
    let (_, d0) = w.send();
    w.deliver(&d0[0]).unwrap();
    w.ack();
    w.server.send_message(0, &9).unwrap();
    let (outcome, d1) = w.send();
    assert_eq!(baseline(outcome), Some(0));
    // A receiver that never got snapshot 0.
    let mut other = Connection::<u8>::new(0.0, immediate_acks()).unwrap();
    let mut fresh = SnapshotReceiver::<World>::new(SnapshotConfig::default()).unwrap();
    assert_eq!(
        fresh.handle_datagram(w.now, &mut other, &d1[0]),
        Err(ReceiveError::SectionRefused)
    );
    assert_eq!(fresh.counters().unknown_baseline, 1);
    assert_eq!(fresh.counters().decoded, 0);
    assert_eq!(fresh.newest(), None);
    assert_eq!(
        other.receive_message(0),
        None,
        "the packet is dropped whole"
    );
    assert!(other.poll_transmit(w.now).is_none(), "and not acked");
    // The right receiver takes it.
    w.deliver(&d1[0]).unwrap();
    assert_eq!(w.client.receive_message(0), Some(9));
    assert_eq!(w.receiver.newest().unwrap().1, &w.gen.world);
}

/// Duplicates are taken once, late snapshots are kept (they can be baselines) but do not
/// replace a newer one, and those older than the ring are ignored.
#[test]
fn duplicates_reordering_and_stale() {
    let mut w = Wire::new(SnapshotConfig {
        history: 8,
        ..SnapshotConfig::default()
    });
    let mut sent = Vec::new();
    let mut worlds = Vec::new();
    for _ in 0..12 {
        let (_, d) = w.send();
        sent.push(d[0].clone());
        worlds.push(w.gen.world.clone());
    }
    // Newest first, then the rest from newest to oldest, each twice.
    for d in sent.iter().rev() {
        w.deliver(d).unwrap_or(());
        let _ = w.deliver(d);
    }
    let counters = *w.receiver.counters();
    assert_eq!(w.receiver.newest(), Some((11, &worlds[11])));
    assert_eq!(counters.received, 24);
    assert_eq!(counters.decoded, 8, "11 down to 4");
    assert_eq!(
        counters.stale, 8,
        "3 down to 0, twice each: older than the ring of 8"
    );
    assert_eq!(counters.duplicates, 8);
    for sequence in 4..12u16 {
        assert_eq!(
            w.receiver.get(sequence),
            Some(&worlds[usize::from(sequence)])
        );
    }
}

/// Sequences wrap past 65535: baselines across the wrap are chosen and decoded right.
#[test]
fn sequence_wrap() {
    let config = SnapshotConfig {
        first_sequence: 65_000,
        ..SnapshotConfig::default()
    };
    let net = SimulatorConfig {
        latency: 0.05,
        loss: 0.1,
        seed: 5,
        ..SimulatorConfig::default()
    };
    let mut link = Link::new(config, net);
    let mut gen = WorldGen::new(3);
    let mut across = 0;
    let mut worlds = std::collections::HashMap::new();
    for _ in 0..1_200u32 {
        let world = gen.step().clone();
        worlds.insert(world.tick, world.clone());
        let outcome = link
            .sender
            .send(link.pair.now, &mut link.pair.a, world.clone())
            .unwrap();
        if let SendOutcome::Sent {
            sequence,
            baseline: Some(b),
            ..
        } = outcome
        {
            across += u32::from(b > sequence);
        }
        link.pair.step(1.0 / 60.0);
        if let Some((_, decoded)) = link.pair.b.receiver.poll_snapshot() {
            assert_eq!(decoded, &worlds[&decoded.tick]);
        }
    }
    assert!(across > 0, "some baselines were before the wrap");
    assert!(link.sender.stats().delta_sent > 1_000);
    let r = link.pair.b.receiver.counters();
    assert_eq!(r.unknown_baseline + r.malformed + r.wrong_kind, 0);
    assert!(r.decoded > 1_000);
}

/// At rest (equal to the acked baseline) a snapshot goes only every `keep_alive`, and
/// between those no datagram goes either way.
#[test]
fn at_rest_sends_keep_alives_only() {
    let config = SnapshotConfig {
        keep_alive: 0.25,
        ..SnapshotConfig::default()
    };
    let mut link = Link::new(config, SimulatorConfig::default());
    let world = World {
        tick: 5,
        bodies: [None; SLOTS],
    };
    let mut outcomes = Vec::new();
    for _ in 0..120 {
        outcomes.push(
            link.sender
                .send(link.pair.now, &mut link.pair.a, world.clone())
                .unwrap(),
        );
        link.pair.step(1.0 / 60.0);
    }
    let sent = outcomes
        .iter()
        .filter(|o| matches!(o, SendOutcome::Sent { .. }))
        .count();
    // The first two (before the first ack is back), then one every 0.25 s over 2 s.
    assert!((8..=11).contains(&sent), "{sent} sent");
    assert_eq!(
        link.pair.traffic[0].datagrams, sent as u64,
        "nothing else went"
    );
    assert_eq!(
        link.pair.b.connection.counters().packets_sent,
        sent as u64,
        "one ack each"
    );
    assert_eq!(
        link.sender.stats().unchanged_skipped,
        120 - sent as u64,
        "{:?}",
        link.sender.stats()
    );
    // Each keep-alive is a few bytes.
    assert!(link.sender.stats().last_bits < 64);
}

/// Peers holding the same baseline share one encoding of the newest snapshot.
#[test]
fn peers_share_encodings() {
    let config = SnapshotConfig::default();
    let mut history = SnapshotHistory::<World>::new(config.clone()).unwrap();
    let mut peers: Vec<SnapshotPeer> = (0..4)
        .map(|_| SnapshotPeer::new(config.clone()).unwrap())
        .collect();
    let mut servers: Vec<Connection<u8>> = (0..4)
        .map(|_| Connection::new(0.0, immediate_acks()).unwrap())
        .collect();
    let mut clients: Vec<Connection<u8>> = (0..4)
        .map(|_| Connection::new(0.0, immediate_acks()).unwrap())
        .collect();
    let mut receivers: Vec<SnapshotReceiver<World>> = (0..4)
        .map(|_| SnapshotReceiver::new(config.clone()).unwrap())
        .collect();
    let mut gen = WorldGen::new(11);
    for tick in 0..3 {
        history.push(gen.step().clone());
        for i in 0..4 {
            peers[i].send(0.0, &mut history, &mut servers[i]).unwrap();
            let datagram = servers[i].poll_transmit(0.0).unwrap().to_vec();
            // Peers 0 and 1 get everything; 2 and 3 only the first snapshot.
            if i < 2 || tick == 0 {
                receivers[i]
                    .handle_datagram(0.0, &mut clients[i], &datagram)
                    .unwrap();
                let ack = clients[i].poll_transmit(0.0).unwrap().to_vec();
                servers[i].handle_datagram(0.0, &ack).unwrap();
            }
        }
    }
    // Tick 0: one absolute for all. Tick 1: all against 0. Tick 2: 0,1 against 1; 2,3
    // against 0.
    assert_eq!(history.counters().encodings, 1 + 1 + 2);
    assert_eq!(history.counters().encodings_shared, 3 + 3 + 2);
    for r in &receivers[..2] {
        assert_eq!(r.newest().unwrap().1, &gen.world);
    }
}

/// A truncated section does not decode: refused as malformed, nothing kept.
#[test]
fn malformed_section_is_refused() {
    let mut w = Wire::new(SnapshotConfig::default());
    let (_, d0) = w.send();
    let mut cut = d0[0].clone();
    cut.truncate(cut.len() - 3);
    assert_eq!(w.deliver(&cut), Err(ReceiveError::SectionRefused));
    assert_eq!(w.receiver.counters().malformed, 1);
    assert_eq!(w.receiver.newest(), None);
}

/// Arbitrary bytes as sections: every one is taken or refused with a reason, never a
/// panic, and the counters add up.
#[test]
fn arbitrary_sections_are_refused_or_taken() {
    use netser::ReadStream;
    use netser_transport::snapshot::{EntityConfig, EntityReceiver};
    use snapshot_support::{Body, Rng};
    let mut snapshots = SnapshotReceiver::<World>::new(SnapshotConfig::default()).unwrap();
    let mut entities = EntityReceiver::<Body>::new(EntityConfig {
        max_entities: 100,
        ..EntityConfig::default()
    })
    .unwrap();
    let mut rng = Rng(99);
    for round in 0..20_000u32 {
        let len = rng.below(200) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let _ = snapshots.receive_section(&mut ReadStream::new(&bytes));
        let _ = entities.receive_section(round as u16, &mut ReadStream::new(&bytes));
    }
    let s = snapshots.counters();
    assert_eq!(
        s.received,
        s.decoded
            + s.duplicates
            + s.stale
            + s.unknown_baseline
            + s.baseline_evicted
            + s.wrong_kind
            + s.malformed
    );
    assert!(s.wrong_kind > 5_000 && s.malformed > 5_000, "{s:?}");
    let e = entities.counters();
    assert_eq!(
        e.received,
        e.taken
            + e.duplicates
            + e.stale
            + e.unknown_baseline
            + e.baseline_evicted
            + e.wrong_kind
            + e.malformed
    );
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
