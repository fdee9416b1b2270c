//! The retransmission timeout against a peer that only acks, under yojimbo's soak
//! profile (1 s latency and 100 ms jitter each way, 25% loss, 25% duplicates): such a
//! peer sends a packet only when one of ours arrives, so the interval between its
//! packets is ours, seconds here. It reports how long it held each ack (at most its
//! `ack_delay`), so the RTO must allow for no more than that, not for its idle
//! interval.

use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const FRAME: f64 = 1.0 / 60.0;

#[test]
fn the_rto_does_not_grow_with_an_idle_peers_send_interval() {
    let config = ConnectionConfig::default();
    let ack_delay = config.ack_delay;
    let mut a: Connection<u32> = Connection::new(0.0, config.clone()).unwrap();
    let mut b: Connection<u32> = Connection::new(0.0, config).unwrap();
    let mut net: Simulator = Simulator::new(SimulatorConfig {
        latency: 1.0,
        jitter: 0.1,
        loss: 0.25,
        duplicate: 0.25,
        seed: 77,
        ..SimulatorConfig::default()
    });
    let (mut sent, mut received) = (0u32, 0u32);
    let mut largest_rto: f64 = 0.0;
    for frame in 0..(120.0 / FRAME) as u32 {
        let now = f64::from(frame) * FRAME;
        while let Some(delivery) = net.receive(now) {
            let side = if delivery.to == 1 { &mut b } else { &mut a };
            let _ = side.handle_datagram(now, &delivery.data); // duplicates are refused
        }
        while let Some(value) = b.receive_message(0) {
            assert_eq!(value, received);
            received += 1;
        }
        // a sends a message every 3 s; b sends nothing but its acks.
        if frame % 180 == 0 {
            a.send_message(0, &sent).unwrap();
            sent += 1;
        }
        for (side, to) in [(&mut a, 1), (&mut b, 0)] {
            side.handle_timeout(now);
            while let Some(datagram) = side.poll_transmit(now) {
                net.send(now, 1 - to, to, datagram);
            }
        }
        let stats = a.stats();
        if now > 30.0 {
            // The path's RTO (RFC 6298) plus the most b holds an ack: its ack delay and
            // the frame before it polls.
            let bound = stats.smoothed_rtt
                + (4.0 * stats.rtt_variance).max(0.001)
                + ack_delay
                + 2.0 * FRAME;
            assert!(
                stats.rto <= bound,
                "at {now:.2} s: rto {:.3} s, smoothed RTT {:.3} s, variance {:.3} s",
                stats.rto,
                stats.smoothed_rtt,
                stats.rtt_variance
            );
            largest_rto = largest_rto.max(stats.rto);
        }
    }
    assert!(received >= 30, "{received} of {sent} delivered");
    assert!(largest_rto < 4.0, "largest RTO {largest_rto:.3} s");
    let rtt = a.stats().smoothed_rtt;
    assert!((1.9..2.4).contains(&rtt), "smoothed RTT {rtt:.3} s");
}
