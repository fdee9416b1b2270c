//! Resend timing from the endpoint's estimates: a first RTT sample from a peer that
//! stalled does not hold back resends once the network is normal again.

mod support;

use netser_transport::connection::{Connection, ConnectionConfig};
use support::{bytes, drain, receive_all, Msg};

const FRAME: f64 = 1.0 / 60.0;
const LATENCY: f64 = 0.05;

/// `a` takes one RTT sample of 400 s (the peer held its ack that long), then sends a
/// block whose first copies are all lost on a normal network (50 ms each way, then no
/// loss). Returns when `b` delivered the block, in seconds after it was sent, if within
/// `limit`.
fn block_after_a_stall(limit: f64) -> Option<f64> {
    let config = ConnectionConfig::default();
    let ack_delay = config.ack_delay;
    let mut a: Connection<Msg> = Connection::new(0.0, config.clone()).unwrap();
    let mut b: Connection<Msg> = Connection::new(0.0, config).unwrap();

    // One packet each way; b's ack reaches a 400 s later.
    a.send_message(1, &Msg::Small(0)).unwrap();
    for datagram in drain(&mut a, 0.0) {
        b.handle_datagram(LATENCY, &datagram).unwrap();
    }
    let acks = drain(&mut b, LATENCY + ack_delay);
    assert!(!acks.is_empty());
    let stall = 400.0;
    for datagram in &acks {
        a.handle_datagram(stall, datagram).unwrap();
    }
    a.handle_timeout(stall);
    assert!(
        a.rtt() > 300.0,
        "the first sample is taken whole: {}",
        a.rtt()
    );

    let block = bytes(7, 20_000);
    a.send_message(0, &Msg::Bytes(block.clone())).unwrap();
    // The first copies of everything a sends in this frame are lost.
    drain(&mut a, stall);

    // In flight: (arrival time, to b?, datagram).
    let mut wire: Vec<(f64, bool, Vec<u8>)> = Vec::new();
    let mut now = stall;
    let mut tick = 0u32;
    while now - stall < limit {
        now += FRAME;
        tick += 1;
        let mut arrived = Vec::new();
        wire.retain(|(at, to_b, d)| {
            if *at <= now {
                arrived.push((*to_b, d.clone()));
                false
            } else {
                true
            }
        });
        for (to_b, datagram) in arrived {
            let side = if to_b { &mut b } else { &mut a };
            side.handle_datagram(now, &datagram).unwrap();
        }
        for (side, to_b) in [(&mut a, true), (&mut b, false)] {
            // Traffic both ways every frame: each side's estimates get samples.
            side.send_message(1, &Msg::Small(tick)).unwrap();
            side.handle_timeout(now);
            for datagram in drain(side, now) {
                wire.push((now + LATENCY, to_b, datagram));
            }
        }
        receive_all(&mut b, 1);
        let delivered = receive_all(&mut b, 0);
        if !delivered.is_empty() {
            assert_eq!(delivered, [Msg::Bytes(block)]);
            return Some(now - stall);
        }
    }
    None
}

#[test]
fn a_huge_first_rtt_sample_does_not_stall_block_resends() {
    let took = block_after_a_stall(10.0).expect("the block arrives within 10 s");
    assert!(took < 5.0, "the block took {took} s");
}
