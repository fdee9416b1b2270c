//! Loss and bandwidth are known from the first second of a connection, not after half
//! the sent window (128 packets, over 6 s at 20 Hz), and read "not yet known" before.

use netser_transport::endpoint::{Config, Endpoint};

/// Two endpoints at 20 packets a second each way, 40 ms one way, every fourth packet
/// from `a` lost; runs `frames` frames and returns both, with the mean datagram size
/// each sent plus 28 bytes of IP and UDP header (the header's ack fields vary in size).
fn link(frames: u32) -> (Endpoint, Endpoint, [f64; 2]) {
    let mut bytes = [0usize; 2];
    let latency = 0.04;
    let mut a = Endpoint::new(0.0, Config::default()).unwrap();
    let mut b = Endpoint::new(0.0, Config::default()).unwrap();
    let mut in_flight: Vec<(f64, bool, Vec<u8>)> = Vec::new();
    for frame in 0..frames {
        let now = f64::from(frame) / 20.0;
        a.send_packet(now, &[0; 100]).unwrap();
        while let Some(t) = a.poll_transmit() {
            bytes[0] += 28 + t.data.len();
            if frame % 4 != 3 {
                in_flight.push((now + latency, true, t.data.to_vec()));
            }
        }
        b.send_packet(now, &[0; 100]).unwrap();
        while let Some(t) = b.poll_transmit() {
            bytes[1] += 28 + t.data.len();
            in_flight.push((now + latency, false, t.data.to_vec()));
        }
        let next = f64::from(frame + 1) / 20.0;
        in_flight.sort_by(|x, y| x.0.total_cmp(&y.0));
        while in_flight.first().is_some_and(|p| p.0 <= next) {
            let (at, to_b, datagram) = in_flight.remove(0);
            let target = if to_b { &mut b } else { &mut a };
            target.handle_datagram(at, &datagram).unwrap();
        }
        a.handle_timeout(next);
        b.handle_timeout(next);
    }
    let mean = bytes.map(|b| b as f64 / f64::from(frames));
    (a, b, mean)
}

#[test]
fn nothing_is_known_before_the_first_packets() {
    let a = Endpoint::new(0.0, Config::default()).unwrap();
    let s = a.stats();
    assert_eq!(
        (s.packet_loss, s.sent_kbps, s.received_kbps, s.acked_kbps),
        (None, None, None, None)
    );
    // One frame: one packet each way, no interval to measure, nothing acked yet.
    let (a, _, _) = link(1);
    let s = a.stats();
    assert_eq!(
        (s.packet_loss, s.sent_kbps, s.received_kbps),
        (None, None, None)
    );
}

#[test]
fn loss_and_bandwidth_are_estimated_within_the_first_second() {
    // 20 frames: 1 s, 20 packets each way, where `reliable` would still read 0.
    let (a, b, mean) = link(20);
    let (sa, sb) = (a.stats(), b.stats());
    // About 136 bytes (28 + a 4..9-byte header + 100) x 20/s: 21-22 kbps.
    let [from_a, from_b] = mean.map(|bytes| bytes * 8.0 * 20.0 / 1000.0);
    let near = |kbps: Option<f64>, expected: f64, tolerance: f64| {
        let kbps = kbps.expect("known after 20 packets");
        assert!(
            (kbps - expected).abs() < expected * tolerance,
            "{kbps} vs {expected}"
        );
    };
    near(sa.sent_kbps, from_a, 0.02);
    near(sb.sent_kbps, from_b, 0.02);
    // a receives every packet of b, b three of four of a's. Over one second the losses
    // at the window's edges weigh: b measures its 15 packets from the first to the
    // last received (frame 19's was lost), 0.9 s, 10% above the long-run rate.
    near(sa.received_kbps, from_b, 0.02);
    near(sb.received_kbps, from_a * 0.75, 0.12);
    // A quarter of a's packets are lost; the first estimates are taken as measured and
    // then smoothed, so the estimate is already near, not creeping up from 0.
    let loss = sa
        .packet_loss
        .expect("known once packets had time to be acked");
    assert!((0.1..=0.35).contains(&loss), "{sa:?}");
    assert!(sb.packet_loss.unwrap() < 0.01, "{sb:?}");
    let acked = sa.acked_kbps.unwrap() / sa.sent_kbps.unwrap();
    assert!((0.6..=0.9).contains(&acked), "{acked}");
}

#[test]
fn rtt_includes_the_wait_for_the_reply() {
    // The network round trip is 80 ms. b's packets go out every 50 ms, so a packet of
    // a's arriving 40 ms after a frame waits 10 ms for b's next packet to ack it: every
    // sample is 90 ms, and the RTT says so (see `Stats`: the ack delay is not on the
    // wire to subtract).
    let (a, _, _) = link(200);
    let s = a.stats();
    for rtt in [s.rtt, s.rtt_min, s.rtt_max] {
        assert!((rtt - 0.09).abs() < 1e-9, "{s:?}");
    }
}
