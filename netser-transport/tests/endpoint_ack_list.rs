//! The endpoint's ack list stays bounded when the user never drains it.

use netser_transport::endpoint::{Config, Endpoint};

#[test]
fn an_undrained_ack_list_keeps_the_newest_acks_within_its_bound() {
    let config = Config::default();
    let mut a = Endpoint::new(0.0, config.clone()).unwrap();
    let mut b = Endpoint::new(0.0, config.clone()).unwrap();
    for i in 0..10_000u32 {
        let now = f64::from(i) / 60.0;
        a.send_packet(now, b"ping").unwrap();
        let datagram = a.poll_transmit().unwrap().data.to_vec();
        b.handle_datagram(now, &datagram).unwrap();
        b.send_packet(now, b"pong").unwrap();
        let datagram = b.poll_transmit().unwrap().data.to_vec();
        a.handle_datagram(now, &datagram).unwrap();
        assert!(a.acks().len() <= config.sent_packets_buffer_size);
    }
    let counters = a.counters();
    assert_eq!(counters.packets_acked, 10_000);
    assert_eq!(
        counters.acks_dropped + a.acks().len() as u64,
        counters.packets_acked,
        "every ack is either listed or counted as dropped"
    );
    // The newest acks are the ones kept, in order.
    let newest = (10_000 - a.acks().len() as u32..10_000)
        .map(|s| s as u16)
        .collect::<Vec<_>>();
    assert_eq!(a.acks(), newest);
}
