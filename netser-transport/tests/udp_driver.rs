//! The UDP driver over real loopback sockets: datagrams and counters, the simulators
//! between the driver and the socket, buffer sizes.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netser_transport::simulator::SimulatorConfig;
use netser_transport::udp::{UdpConfig, UdpDriver};

fn bind(config: UdpConfig) -> UdpDriver {
    UdpDriver::bind("127.0.0.1:0", config).unwrap()
}

/// Receives until `want` datagrams arrived or `timeout` passed, flushing `also` (the
/// sender, whose simulator may hold datagrams) each round.
fn pump(
    rx: &mut UdpDriver,
    also: &mut UdpDriver,
    want: usize,
    timeout: Duration,
) -> Vec<(SocketAddr, Vec<u8>)> {
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < want && start.elapsed() < timeout {
        also.flush();
        rx.receive(|from, bytes| got.push((from, bytes.to_vec())));
        std::thread::sleep(Duration::from_micros(500));
    }
    got
}

#[test]
fn datagrams_arrive_in_order_with_counters() {
    let mut a = bind(UdpConfig::default());
    let mut b = bind(UdpConfig::default());
    let sizes: Vec<usize> = (0..200).map(|i| i * 7 % 1500).collect();
    for (i, &len) in sizes.iter().enumerate() {
        let datagram: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
        a.send(b.local_addr(), &datagram).unwrap();
    }
    a.flush();
    let got = pump(&mut b, &mut a, sizes.len(), Duration::from_secs(5));
    assert_eq!(got.len(), sizes.len());
    for (i, (from, bytes)) in got.iter().enumerate() {
        assert_eq!(*from, a.local_addr());
        let expected: Vec<u8> = (0..sizes[i]).map(|j| (i + j) as u8).collect();
        assert_eq!(*bytes, expected, "datagram {i}");
    }
    let total: u64 = sizes.iter().map(|&s| s as u64).sum();
    assert_eq!(a.stats().datagrams_sent, 200);
    assert_eq!(a.stats().bytes_sent, total);
    assert_eq!(b.stats().datagrams_received, 200);
    assert_eq!(b.stats().bytes_received, total);
    assert_eq!(a.queued(), 0);
}

#[test]
fn send_simulator_delays_by_its_latency() {
    let latency = 0.080;
    let mut a = bind(UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency,
            seed: 3,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    });
    let mut b = bind(UdpConfig::default());
    let sent_at = Instant::now();
    a.send(b.local_addr(), b"late").unwrap();
    assert!(a.poll_timeout().is_some());
    a.flush();
    assert_eq!(a.stats().datagrams_sent, 0, "held by the simulator");
    let got = pump(&mut b, &mut a, 1, Duration::from_secs(5));
    assert_eq!(got, vec![(a.local_addr(), b"late".to_vec())]);
    assert!(sent_at.elapsed() >= Duration::from_secs_f64(latency));
    assert_eq!(a.send_simulator_stats().unwrap().delivered, 1);
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn send_simulator_loss_is_counted_by_the_simulator() {
    let mut a = bind(UdpConfig {
        send_simulator: Some(SimulatorConfig {
            loss: 0.5,
            seed: 11,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    });
    let mut b = bind(UdpConfig::default());
    for i in 0..400u16 {
        a.send(b.local_addr(), &i.to_le_bytes()).unwrap();
    }
    a.flush();
    let lost = a.send_simulator_stats().unwrap().lost as usize;
    assert!((100..300).contains(&lost), "lost {lost} of 400 at 50%");
    let got = pump(&mut b, &mut a, 400 - lost, Duration::from_secs(5));
    assert_eq!(
        got.len() + lost,
        400,
        "every datagram arrived or was counted lost"
    );
    // Order is kept on a link without jitter or reordering.
    let seq: Vec<u16> = got
        .iter()
        .map(|(_, d)| u16::from_le_bytes([d[0], d[1]]))
        .collect();
    assert!(seq.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn receive_simulator_delays_incoming_datagrams() {
    let latency = 0.060;
    let mut a = bind(UdpConfig::default());
    let mut b = bind(UdpConfig {
        receive_simulator: Some(SimulatorConfig {
            latency,
            seed: 5,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    });
    let start = Instant::now();
    a.send(b.local_addr(), b"in").unwrap();
    a.flush();
    std::thread::sleep(Duration::from_millis(5));
    let mut early = 0;
    b.receive(|_, _| early += 1);
    assert_eq!(early, 0, "held by the receive simulator");
    assert_eq!(b.stats().datagrams_received, 1, "but read from the socket");
    let got = pump(&mut b, &mut a, 1, Duration::from_secs(5));
    assert_eq!(got, vec![(a.local_addr(), b"in".to_vec())]);
    assert!(start.elapsed() >= Duration::from_secs_f64(latency));
}

#[test]
fn socket_buffers_are_sized_for_a_block() {
    let requested = 1 << 20;
    let d = bind(UdpConfig::default());
    let (recv, send) = d.buffer_sizes();
    // Linux grants min(requested, rmem_max) and reports twice that.
    let cap = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
    };
    match (
        cap("/proc/sys/net/core/rmem_max"),
        cap("/proc/sys/net/core/wmem_max"),
    ) {
        (Some(rmax), Some(wmax)) => {
            assert!(recv >= requested.min(rmax), "recv buffer {recv}");
            assert!(send >= requested.min(wmax), "send buffer {send}");
        }
        _ => assert!(recv > 0 && send > 0),
    }
}

#[test]
fn the_clock_moves_forward() {
    let d = bind(UdpConfig::default());
    let a = d.now();
    std::thread::sleep(Duration::from_millis(10));
    let b = d.now();
    assert!(b - a >= 0.009, "{a} -> {b}");
    assert!(d.clock().now() >= b);
}

#[test]
fn flush_all_waits_for_the_simulator_but_stops_at_its_timeout() {
    let slow = |latency: f64| UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency,
            seed: 5,
            ..SimulatorConfig::default()
        }),
        linger: Duration::ZERO,
        ..UdpConfig::default()
    };
    let mut rx = bind(UdpConfig::default());

    // Held for 2 s; a 20 ms flush gives up with it still held.
    let mut a = bind(slow(2.0));
    a.send(rx.local_addr(), b"late").unwrap();
    assert_eq!(a.held(), 1);
    let start = Instant::now();
    assert!(!a.flush_all(Duration::from_millis(20)));
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!((a.held(), a.stats().datagrams_sent), (1, 0));

    // Held for 30 ms: a flush of up to 2 s sends it and returns once it left.
    let mut b = bind(slow(0.03));
    b.send(rx.local_addr(), b"soon").unwrap();
    assert!(b.flush_all(Duration::from_secs(2)));
    assert_eq!((b.held(), b.stats().datagrams_sent), (0, 1));
    let got = pump(&mut rx, &mut b, 1, Duration::from_secs(2));
    assert_eq!(got, vec![(b.local_addr(), b"soon".to_vec())]);
}
