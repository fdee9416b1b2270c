//! Acks ride on payload packets: a connection holds an ack up to its `ack_delay` for a
//! packet of its own to carry it, sends a packet of acks only when none did, reports how
//! long it held the ack, and the peer takes that off its RTT.

mod support;

use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::SimulatorConfig;
use support::{drain, receive_all, Msg};

const FRAME: f64 = 1.0 / 60.0;

/// Whether a datagram is a connection packet (not a slice or slice ack).
fn is_packet(datagram: &[u8]) -> bool {
    datagram[0] & 0xc0 == 0
}

/// A small xorshift, so each run is the same.
struct Rng(u64);

impl Rng {
    fn chance(&mut self, p: f64) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 1_000_000) as f64 / 1_000_000.0 < p
    }
}

/// Two connections over the simulator, each sending a message on the unreliable channel
/// at its own rate (messages per frame, `0.0..=1.0`, spread evenly), at 60 frames a
/// second.
struct Game {
    pair: support::Pair,
    frame: u64,
}

impl Game {
    fn new(config: ConnectionConfig, net: SimulatorConfig) -> Self {
        Self {
            pair: support::pair(config, net),
            frame: 0,
        }
    }

    /// One frame: each side queues its message if due, runs its timers and sends; the
    /// network delivers. Returns how many datagrams `b` sent.
    fn step(&mut self, a_every: u64, b_every: Option<u64>) -> u64 {
        let message = Msg::Small(self.frame as u32);
        if self.frame.is_multiple_of(a_every) {
            self.pair.a.send_message(1, &message).unwrap();
        }
        if b_every.is_some_and(|every| self.frame.is_multiple_of(every)) {
            self.pair.b.send_message(1, &message).unwrap();
        }
        let sent_before = self.pair.traffic[1].datagrams;
        self.pair.step(FRAME);
        receive_all(&mut self.pair.a, 1);
        receive_all(&mut self.pair.b, 1);
        self.frame += 1;
        self.pair.traffic[1].datagrams - sent_before
    }
}

/// However the receiver's own packets fall, no packet of messages waits for its ack
/// longer than the ack delay plus the frame in which the connection is next polled; the
/// acks that went in packets of acks only are far fewer than the packets acked.
#[test]
fn no_ack_waits_longer_than_the_ack_delay_plus_a_frame() {
    for ack_delay in [0.0, 0.02, 0.05, 0.2] {
        let config = ConnectionConfig {
            ack_delay,
            ..ConnectionConfig::default()
        };
        let mut a: Connection<Msg> = Connection::new(0.0, config.clone()).unwrap();
        let mut b: Connection<Msg> = Connection::new(0.0, config).unwrap();
        let mut rng = Rng(0x5eed ^ ack_delay.to_bits());
        let mut owed_since: Option<f64> = None;
        let mut longest: f64 = 0.0;
        let mut acked = 0u32;
        for frame in 0..3000u32 {
            let now = f64::from(frame) * FRAME;
            // a sends in bursts and pauses; b now and then.
            if rng.chance(0.4) {
                a.send_message(1, &Msg::Small(frame)).unwrap();
            }
            if rng.chance(0.05) {
                b.send_message(1, &Msg::Small(frame)).unwrap();
            }
            a.handle_timeout(now);
            for datagram in drain(&mut a, now) {
                let before = b.channel_counters(1).unwrap().messages_received;
                b.handle_datagram(now, &datagram).unwrap();
                if b.channel_counters(1).unwrap().messages_received > before {
                    owed_since.get_or_insert(now);
                    acked += 1;
                }
            }
            b.handle_timeout(now + FRAME);
            for datagram in drain(&mut b, now + FRAME) {
                if is_packet(&datagram) {
                    // Every packet carries every ack b owes.
                    if let Some(since) = owed_since.take() {
                        longest = longest.max(now + FRAME - since);
                    }
                }
                a.handle_datagram(now + FRAME, &datagram).unwrap();
            }
            receive_all(&mut b, 1);
            receive_all(&mut a, 1);
        }
        assert!(
            longest <= ack_delay + FRAME + 1e-9,
            "ack delay {ack_delay}: an ack waited {longest} s"
        );
        let ack_only = b.counters().ack_only_packets_sent;
        if ack_delay > 0.0 {
            // Held across a frame or more, one packet of acks only covers several.
            let fewer = if ack_delay >= 0.05 { 2.0 } else { 1.2 };
            assert!(
                f64::from(acked) > fewer * ack_only as f64,
                "ack delay {ack_delay}: {ack_only} packets of acks only for {acked} packets"
            );
        } else {
            assert!(
                (longest - FRAME).abs() < 1e-9,
                "no delay: acked in the next poll, not {longest}"
            );
        }
    }
}

/// The time an ack waited goes with it and is taken off: on a 100 ms path (50 ms each
/// way), a client sending 60 packets a second and a server 30 read an RTT of 100 ms
/// plus at most the frame each side takes to notice a datagram, where the server's
/// samples held back by up to 33 ms would read more.
#[test]
fn the_rtt_read_on_a_100_ms_path_is_100_ms() {
    let net = SimulatorConfig {
        latency: 0.05,
        seed: 3,
        ..SimulatorConfig::default()
    };
    let reported = {
        let mut game = Game::new(ConnectionConfig::default(), net.clone());
        for _ in 0..600 {
            game.step(1, Some(2));
        }
        game
    };
    for side in [&reported.pair.a, &reported.pair.b] {
        let stats = side.stats();
        assert!(
            (0.1 - 1e-9..=0.1 + 2.0 * FRAME).contains(&side.rtt()),
            "rtt {} ({stats:?})",
            side.rtt()
        );
        assert_eq!(side.rtt(), stats.smoothed_rtt);
        assert!(stats.min_rtt >= 0.1 - 1e-9 && stats.min_rtt <= side.rtt());
        assert!(
            // The history keeps whole nanoseconds; a delay is reported in 100 us.
            stats.rtt_min >= stats.min_rtt - 1e-9 && stats.rtt_max < 0.1 + 2.0 * FRAME + 1e-4,
            "{stats:?}"
        );
    }
    // Without reports (no ack delay: acks at once, packets as before), each side's
    // samples of the acks that rode on the other's packets keep the time held.
    let unreported = {
        let config = ConnectionConfig {
            ack_delay: 0.0,
            ..ConnectionConfig::default()
        };
        let mut game = Game::new(config, net);
        for _ in 0..600 {
            game.step(1, Some(2));
        }
        game
    };
    assert!(
        unreported.pair.a.stats().rtt_max > reported.pair.a.stats().rtt_max + 0.5 * FRAME,
        "{:?} vs {:?}",
        unreported.pair.a.stats(),
        reported.pair.a.stats()
    );
}

/// Packets of acks only, per second: none when both sides send payload packets; with a
/// silent receiver about one per ack delay (a 60 Hz sender, a 50 ms delay: one every
/// third frame) instead of one per packet received.
#[test]
fn ack_only_packets_per_second_with_and_without_payload_traffic() {
    let seconds = 10.0;
    let frames = (seconds / FRAME) as u32;
    let run = |config: ConnectionConfig, b_every: Option<u64>| {
        let mut game = Game::new(config, SimulatorConfig::default());
        let mut b_datagrams = 0;
        for _ in 0..frames {
            b_datagrams += game.step(1, b_every);
        }
        (
            game.pair.a.counters().ack_only_packets_sent as f64 / seconds,
            game.pair.b.counters().ack_only_packets_sent as f64 / seconds,
            b_datagrams as f64 / seconds,
        )
    };
    // Both send: every ack rides.
    let (a_only, b_only, b_rate) = run(ConnectionConfig::default(), Some(2));
    assert_eq!((a_only, b_only), (0.0, 0.0));
    assert!((b_rate - 30.0).abs() < 0.5, "{b_rate}");
    // b sends nothing of its own.
    let (_, b_only, b_rate) = run(ConnectionConfig::default(), None);
    assert!((18.0..=20.5).contains(&b_only), "{b_only} per second");
    assert_eq!(b_rate, b_only);
    // Without an ack delay, one per packet received (the behaviour before).
    let at_once = ConnectionConfig {
        ack_delay: 0.0,
        ..ConnectionConfig::default()
    };
    let (_, b_only, _) = run(at_once, None);
    assert!((b_only - 60.0).abs() < 0.5, "{b_only} per second");
}

/// When 16 packets wait for their ack, it goes at once, not at the end of the delay:
/// older ones would soon fall out of the 32 a header acks.
#[test]
fn sixteen_packets_waiting_are_acked_at_once() {
    let config = ConnectionConfig {
        ack_delay: 1.0,
        ..ConnectionConfig::default()
    };
    let mut a: Connection<Msg> = Connection::new(0.0, config.clone()).unwrap();
    let mut b: Connection<Msg> = Connection::new(0.0, config).unwrap();
    for i in 0..16 {
        let now = f64::from(i) * 0.001;
        a.send_message(1, &Msg::Small(i)).unwrap();
        for datagram in drain(&mut a, now) {
            b.handle_datagram(now, &datagram).unwrap();
        }
        let acks = drain(&mut b, now);
        if i < 15 {
            assert!(acks.is_empty(), "packet {i}: the ack waits");
            assert_eq!(b.poll_timeout(), Some(1.0));
        } else {
            assert_eq!(acks.len(), 1, "the 16th packet: acked at once");
            a.handle_datagram(now, &acks[0]).unwrap();
        }
    }
    assert_eq!(a.endpoint().counters().packets_acked, 16);
}

/// A peer that claims to have held its acks longer than the round trip cannot make the
/// RTT negative, and the RTO stays above its floor.
#[test]
fn an_overstated_ack_delay_cannot_make_the_rtt_negative() {
    use netser_transport::endpoint::{Config, Endpoint, MIN_RTO};
    let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    for i in 0..50u32 {
        let now = f64::from(i) * 0.1;
        a.send_packet(now, b"x").unwrap();
        let datagram = a.poll_transmit().unwrap().data.to_vec();
        b.handle_datagram(now + 0.05, &datagram).unwrap();
        b.send_packet(now + 0.05, b"y").unwrap();
        let datagram = b.poll_transmit().unwrap().data.to_vec();
        let lie = [60.0, f64::INFINITY, f64::NAN, -5.0][i as usize % 4];
        a.handle_datagram_with_ack_delay(now + 0.1, &datagram, lie)
            .unwrap();
        a.handle_timeout(now + 0.1);
        let stats = a.stats();
        assert!(stats.rtt >= 0.0 && stats.rtt.is_finite(), "{stats:?}");
        assert!(stats.min_rtt >= 0.0 && stats.rto >= MIN_RTO, "{stats:?}");
    }
}

/// A reported delay at or past the whole sample is not taken off: on loopback, where the
/// two sides' frame clocks are coarser than the path, the RTT stays above 0 (it fell to
/// 0 before, and a release-built UDP test read `rtt 0`).
#[test]
fn a_delay_as_long_as_the_sample_leaves_the_sample() {
    use netser_transport::endpoint::{Config, Endpoint};
    let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    for i in 0..20u32 {
        let now = f64::from(i) * 0.1;
        a.send_packet(now, b"x").unwrap();
        let datagram = a.poll_transmit().unwrap().data.to_vec();
        b.handle_datagram(now + 0.00001, &datagram).unwrap();
        b.send_packet(now + 0.00002, b"y").unwrap();
        let datagram = b.poll_transmit().unwrap().data.to_vec();
        // The peer held it a tenth of a millisecond by its clock; we saw 30 us in all.
        a.handle_datagram_with_ack_delay(now + 0.00003, &datagram, 0.0001)
            .unwrap();
    }
    let stats = a.stats();
    assert!((stats.rtt - 0.00003).abs() < 1e-9, "{stats:?}");
    assert!((stats.min_rtt - 0.00003).abs() < 1e-9, "{stats:?}");
}

/// Acks lost, delayed and riding on packets of either side: every reliable message is
/// delivered exactly once, in order, both ways.
#[test]
fn lost_acks_still_deliver_exactly_once() {
    for seed in 1..=4 {
        let net = SimulatorConfig {
            latency: 0.03,
            jitter: 0.01,
            loss: 0.3,
            duplicate: 0.05,
            seed,
            ..SimulatorConfig::default()
        };
        let mut pair = support::pair(ConnectionConfig::default(), net);
        let mut rng = Rng(seed);
        let (mut to_b, mut to_a) = (0u32, 0u32);
        let (mut at_b, mut at_a) = (Vec::new(), Vec::new());
        for _ in 0..6000 {
            let (a, b) = (&mut pair.a, &mut pair.b);
            if to_b < 400 && rng.chance(0.5) && a.queued_messages(0) < 200 {
                a.send_message(0, &Msg::Small(to_b)).unwrap();
                to_b += 1;
            }
            // b sends rarely: most of its acks go alone, after the delay.
            if to_a < 40 && rng.chance(0.02) && b.queued_messages(0) < 200 {
                b.send_message(0, &Msg::Small(to_a)).unwrap();
                to_a += 1;
            }
            pair.step(FRAME);
            at_b.extend(receive_all(&mut pair.b, 0));
            at_a.extend(receive_all(&mut pair.a, 0));
            if at_b.len() == 400 && at_a.len() == 40 && pair.a.queued_messages(0) == 0 {
                break;
            }
        }
        let expected = |n: u32| (0..n).map(Msg::Small).collect::<Vec<_>>();
        assert_eq!(at_b, expected(400), "seed {seed}");
        assert_eq!(at_a, expected(40), "seed {seed}");
        assert_eq!(
            pair.a.queued_messages(0),
            0,
            "seed {seed}: everything acked"
        );
        assert!(pair.b.counters().ack_only_packets_sent > 0);
    }
}
