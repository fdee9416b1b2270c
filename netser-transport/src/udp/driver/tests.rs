//! The driver over loopback sockets.

use super::*;

mod laid_out;

fn pair(config: UdpConfig) -> (UdpDriver, UdpDriver) {
    let a = UdpDriver::bind("127.0.0.1:0", config.clone()).unwrap();
    let b = UdpDriver::bind("127.0.0.1:0", config).unwrap();
    (a, b)
}

fn receive_all(d: &mut UdpDriver, want: usize) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut got = Vec::new();
    for _ in 0..2000 {
        d.receive(|from, bytes| got.push((from, bytes.to_vec())));
        if got.len() >= want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    got
}

#[test]
fn oversize_send_is_refused_and_counted() {
    let (mut a, b) = pair(UdpConfig {
        max_datagram_size: 100,
        ..UdpConfig::default()
    });
    let err = a.send(b.local_addr(), &[0; 101]).unwrap_err();
    assert_eq!(err, DropReason::SendOversize { len: 101, max: 100 });
    assert_eq!(a.stats().dropped_send_oversize, 1);
    assert_eq!(a.stats().datagrams_sent, 0);
    a.send(b.local_addr(), &[0; 100]).unwrap();
    a.flush();
    assert_eq!(a.stats().datagrams_sent, 1);
}

#[test]
fn oversize_receive_is_dropped_and_counted() {
    let (mut a, mut b) = pair(UdpConfig {
        max_datagram_size: 100,
        ..UdpConfig::default()
    });
    a.socket().send_to(&[7; 101], b.local_addr()).unwrap();
    a.send(b.local_addr(), &[8; 100]).unwrap();
    a.flush();
    let got = receive_all(&mut b, 1);
    assert_eq!(got, vec![(a.local_addr(), vec![8; 100])]);
    assert_eq!(b.stats().dropped_receive_oversize, 1);
    assert_eq!(b.stats().datagrams_received, 2);
}

#[test]
fn max_datagram_size_is_clamped() {
    let (a, _) = pair(UdpConfig {
        max_datagram_size: 1 << 20,
        ..UdpConfig::default()
    });
    assert_eq!(a.config().max_datagram_size, MAX_UDP_PAYLOAD);
}

#[test]
fn receive_is_bounded_per_poll() {
    let (mut a, mut b) = pair(UdpConfig {
        max_receive_per_poll: 3,
        ..UdpConfig::default()
    });
    for i in 0..5u8 {
        a.send(b.local_addr(), &[i]).unwrap();
    }
    a.flush();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut n = 0;
    b.receive(|_, _| n += 1);
    assert_eq!(n, 3);
    b.receive(|_, _| n += 1);
    assert_eq!(n, 5);
}

#[test]
fn system_calls_are_timed_only_when_asked() {
    let (mut a, mut b) = pair(UdpConfig::default());
    a.send(b.local_addr(), b"x").unwrap();
    a.flush();
    b.receive(|_, _| {});
    assert_eq!((a.stats().syscalls, a.stats().syscall_nanos), (0, 0));
    assert_eq!(b.stats().syscalls, 0);

    let (mut a, mut b) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    a.send(b.local_addr(), b"x").unwrap();
    a.flush();
    let got = receive_all(&mut b, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(a.stats().syscalls, 1);
    assert!(a.stats().syscall_nanos > 0);
    // At least the datagram and the empty read that ended the poll.
    assert!(b.stats().syscalls >= 2);
}

/// The system calls one poll makes on Linux to read `waiting` datagrams with a cap of
/// `cap` and batches of `batch`: a `recvmsg` of one datagram (it brings the kernel's
/// drop count), then batches until one comes back short or the cap is reached.
fn reads_per_poll(waiting: usize, cap: usize, batch: usize) -> u64 {
    let (mut calls, mut waiting, mut left) = (1, waiting, cap);
    if waiting == 0 {
        return calls;
    }
    waiting -= 1;
    left -= 1;
    while left > 0 {
        let asked = left.min(batch);
        let got = asked.min(waiting);
        calls += 1;
        waiting -= got;
        left -= got;
        if got < asked {
            break;
        }
    }
    calls
}

/// Datagrams waiting in the kernel are read in batches (Linux), never more a poll than
/// the cap, whether it is below the batch, at it or above it; every one is delivered,
/// in the order it was sent, and counted.
#[test]
fn receive_reads_in_batches_within_the_per_poll_cap() {
    let linux = cfg!(target_os = "linux");
    for (cap, sent) in [(3, 8), (32, 70), (33, 70), (40, 100), (64, 150)] {
        let mut b = UdpDriver::bind(
            "127.0.0.1:0",
            UdpConfig {
                max_receive_per_poll: cap,
                measure_syscalls: true,
                ..UdpConfig::default()
            },
        )
        .unwrap();
        let batch = b.rx.batch();
        assert_eq!(batch, if linux { cap.min(recv::RECV_BATCH) } else { 1 });
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        for i in 0..sent {
            a.send_to(&(i as u32).to_be_bytes(), b.local_addr())
                .unwrap();
        }
        let mut got = Vec::new();
        let mut waiting = sent;
        let mut calls = 0;
        while waiting > 0 {
            let before = got.len();
            let delivered = b.receive(|from, bytes| {
                assert_eq!(from, a.local_addr().unwrap());
                got.push(u32::from_be_bytes(bytes.try_into().unwrap()) as usize);
            });
            assert_eq!(delivered, cap.min(waiting), "cap {cap}, {waiting} waiting");
            assert_eq!(got.len() - before, delivered);
            calls += if linux {
                reads_per_poll(waiting, cap, batch)
            } else {
                // One each, and the one that finds nothing when fewer than the cap wait.
                (cap.min(waiting) + usize::from(waiting < cap)) as u64
            };
            waiting -= delivered;
        }
        assert_eq!(got, (0..sent).collect::<Vec<_>>(), "cap {cap}");
        assert_eq!(b.stats().datagrams_received, sent as u64);
        assert_eq!(b.stats().bytes_received, 4 * sent as u64);
        assert_eq!(b.stats().syscalls, calls, "cap {cap}, {sent} sent");
        assert_eq!(b.receive(|_, _| {}), 0);
    }
    assert_eq!(reads_per_poll(100, 64, 32), 3); // 1 + 32 + 31
    assert_eq!(reads_per_poll(36, 64, 32), 3); // 1 + 32 + 3, short
    assert_eq!(reads_per_poll(33, 64, 32), 3); // 1 + 32 + 0, short
}

/// Oversize datagrams among normal ones, first in a poll or inside a batch: each is
/// counted as oversize and never delivered (not even cut to size), and the others are
/// delivered in order.
#[test]
fn oversize_datagrams_in_a_batch_are_counted_and_the_rest_delivered_in_order() {
    let (_, mut b) = pair(UdpConfig {
        max_datagram_size: 100,
        ..UdpConfig::default()
    });
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sent: Vec<Vec<u8>> = vec![
        vec![0xB; 101],
        vec![1; 100],
        vec![0xB; 1000],
        vec![2; 1],
        vec![3; 50],
        vec![0xB; 101],
        vec![0xB; 60_000],
        vec![4; 99],
    ];
    for datagram in &sent {
        a.send_to(datagram, b.local_addr()).unwrap();
    }
    let mut got = Vec::new();
    let delivered = b.receive(|_, bytes| got.push(bytes.to_vec()));
    let normal: Vec<Vec<u8>> = sent.iter().filter(|d| d.len() <= 100).cloned().collect();
    assert_eq!(delivered, 4);
    assert_eq!(got, normal);
    let stats = b.stats();
    assert_eq!(stats.dropped_receive_oversize, 4);
    assert_eq!(stats.datagrams_received, 8);
    // An oversize datagram counts the bytes read of it: the buffer's 101.
    assert_eq!(stats.bytes_received, 100 + 1 + 50 + 99 + 4 * 101);
    assert_eq!(stats.receive_errors, 0);
}

/// A kernel that refuses the batched call: the driver reads one datagram a call from
/// then on, and loses none.
#[test]
fn a_refused_batched_receive_falls_back_to_one_call_each() {
    let (_, mut b) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    b.rx.refuse = true;
    for round in 0..2u8 {
        for i in 0..5u8 {
            a.send_to(&[round, i], b.local_addr()).unwrap();
        }
        let mut got = Vec::new();
        assert_eq!(b.receive(|_, bytes| got.push(bytes.to_vec())), 5);
        let want: Vec<Vec<u8>> = (0..5u8).map(|i| vec![round, i]).collect();
        assert_eq!(got, want);
        assert_eq!(b.rx.batch(), 1);
    }
    // Each round: five reads (the refused call and its fallback count as one) and the
    // one that finds nothing.
    assert_eq!(b.stats().syscalls, 12);
    assert_eq!(b.stats().receive_errors, 0);
}

/// IPv6 sockets read in batches too (their message headers are apart from IPv4's, on
/// the same thread).
#[test]
fn ipv6_and_ipv4_drivers_read_batches_on_one_thread() {
    let Ok(mut v6) = UdpDriver::bind("[::1]:0", UdpConfig::default()) else {
        // No IPv6 loopback here: nothing to test.
        return;
    };
    let (_, mut v4) = pair(UdpConfig::default());
    let a6 = UdpSocket::bind("[::1]:0").unwrap();
    let a4 = UdpSocket::bind("127.0.0.1:0").unwrap();
    for round in 0..3u8 {
        for i in 0..40u8 {
            a6.send_to(&[6, round, i], v6.local_addr()).unwrap();
            a4.send_to(&[4, round, i], v4.local_addr()).unwrap();
        }
        let mut got6 = Vec::new();
        let mut got4 = Vec::new();
        v6.receive(|from, bytes| got6.push((from, bytes.to_vec())));
        v4.receive(|from, bytes| got4.push((from, bytes.to_vec())));
        let want6: Vec<_> = (0..40u8)
            .map(|i| (a6.local_addr().unwrap(), vec![6, round, i]))
            .collect();
        let want4: Vec<_> = (0..40u8)
            .map(|i| (a4.local_addr().unwrap(), vec![4, round, i]))
            .collect();
        assert_eq!(got6, want6);
        assert_eq!(got4, want4);
    }
}

/// Datagrams 2.. of a run to one address wait for the flush (on Linux) and leave in
/// one system call; all arrive in order, each counted.
#[test]
fn a_burst_to_one_address_leaves_in_order_in_one_call() {
    let (mut a, mut b) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    let sent: Vec<Vec<u8>> = (0..10u8)
        .map(|i| vec![i; 1000])
        .chain([vec![99; 500]])
        .collect();
    for datagram in &sent {
        a.send(b.local_addr(), datagram).unwrap();
    }
    let linux = cfg!(target_os = "linux");
    // The first in a batch, the others in the burst behind it.
    assert_eq!(a.held(), if linux { 11 } else { 0 });
    a.flush();
    assert_eq!(a.held(), 0);
    assert_eq!(a.stats().datagrams_sent, 11);
    assert_eq!(a.stats().bytes_sent, 10_500);
    assert_eq!(a.stats().syscalls, if linux { 2 } else { 11 });
    let got = receive_all(&mut b, 11);
    let bytes: Vec<Vec<u8>> = got.into_iter().map(|(_, d)| d).collect();
    assert_eq!(bytes, sent);
}

/// The plain path (other platforms, or after the kernel refused a segmented send):
/// every datagram leaves at once, one call each.
#[test]
fn without_segmentation_a_run_leaves_one_call_each() {
    let (mut a, mut b) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    a.burst.disable();
    a.batch.disable();
    for i in 0..5u8 {
        a.send(b.local_addr(), &[i; 100]).unwrap();
        assert_eq!(a.held(), 0);
    }
    assert_eq!((a.stats().datagrams_sent, a.stats().syscalls), (5, 5));
    assert_eq!(receive_all(&mut b, 5).len(), 5);
    assert!(burst::is_refusal(&io::Error::from_raw_os_error(5)) == cfg!(target_os = "linux"));
    assert!(!burst::is_refusal(&io::Error::from(
        io::ErrorKind::WouldBlock
    )));
}

/// A burst ends at a datagram to another address, or a longer one, and leaves
/// before it: the order of everything sent is kept.
#[test]
fn a_burst_leaves_before_what_cannot_join_it() {
    let (mut a, mut b) = pair(UdpConfig::default());
    let mut c = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let to_b: Vec<Vec<u8>> = vec![vec![1; 300], vec![2; 300], vec![3; 300], vec![4; 900]];
    for datagram in &to_b[..3] {
        a.send(b.local_addr(), datagram).unwrap();
    }
    a.send(c.local_addr(), b"c").unwrap();
    let linux = cfg!(target_os = "linux");
    // Only the datagram to c waits, in a batch.
    assert_eq!(
        a.held(),
        usize::from(linux),
        "the burst left before the datagram to c"
    );
    a.send(b.local_addr(), &to_b[3]).unwrap();
    a.flush();
    let got: Vec<Vec<u8>> = receive_all(&mut b, 4).into_iter().map(|(_, d)| d).collect();
    assert_eq!(got, to_b);
    assert_eq!(receive_all(&mut c, 1).len(), 1);
    assert_eq!(a.stats().datagrams_sent, 5);
}

fn drivers(n: usize) -> Vec<UdpDriver> {
    (0..n)
        .map(|_| UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap())
        .collect()
}

/// One datagram to each of many addresses, as a server's snapshots go: on Linux they
/// wait for the flush and leave 64 a system call; every one arrives, each counted.
#[test]
fn datagrams_to_many_addresses_leave_together() {
    let (mut a, _) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    let mut peers = drivers(100);
    for (i, peer) in peers.iter().enumerate() {
        a.send(peer.local_addr(), &[i as u8; 1100]).unwrap();
    }
    let linux = cfg!(target_os = "linux");
    // The first 64 left when the batch was full.
    assert_eq!(a.held(), if linux { 36 } else { 0 });
    a.flush();
    assert_eq!(a.held(), 0);
    assert_eq!(a.stats().datagrams_sent, 100);
    assert_eq!(a.stats().bytes_sent, 110_000);
    assert_eq!(a.stats().syscalls, if linux { 2 } else { 100 });
    for (i, peer) in peers.iter_mut().enumerate() {
        assert_eq!(
            receive_all(peer, 1),
            [(a.local_addr(), vec![i as u8; 1100])]
        );
    }
}

/// A kernel that refuses the batched call: the batch leaves one datagram a call, and
/// so does everything after it, at once.
#[test]
fn a_refused_batch_falls_back_to_one_call_each() {
    let (mut a, _) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    let mut peers = drivers(3);
    a.batch.refuse = true;
    for peer in &peers {
        a.send(peer.local_addr(), b"one").unwrap();
    }
    a.flush();
    let linux = cfg!(target_os = "linux");
    // The refused call and one each.
    assert_eq!(a.stats().syscalls, if linux { 4 } else { 3 });
    for peer in &peers {
        a.send(peer.local_addr(), b"two").unwrap();
        assert_eq!(a.held(), 0);
    }
    assert_eq!(a.stats().datagrams_sent, 6);
    assert_eq!(a.stats().dropped_send_error, 0);
    for peer in &mut peers {
        let got: Vec<Vec<u8>> = receive_all(peer, 2).into_iter().map(|(_, d)| d).collect();
        assert_eq!(got, [b"one".to_vec(), b"two".to_vec()]);
    }
}

/// A datagram of a batch that the kernel refuses (port 0 is no destination) is dropped
/// and counted with its reason; the ones around it leave.
#[test]
fn a_refused_datagram_in_a_batch_is_counted_and_the_rest_leave() {
    let (mut a, mut b) = pair(UdpConfig::default());
    let mut c = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let nowhere: SocketAddr = "127.0.0.1:0".parse().unwrap();
    a.send(b.local_addr(), b"b").unwrap();
    let refused = a.send(nowhere, b"x");
    a.send(c.local_addr(), b"c").unwrap();
    a.flush();
    if cfg!(target_os = "linux") {
        assert_eq!(refused, Ok(()), "counted when the batch leaves");
    }
    assert_eq!(a.stats().dropped_send_error, 1);
    assert_eq!(a.stats().datagrams_sent, 2);
    assert_eq!(receive_all(&mut b, 1).len(), 1);
    assert_eq!(receive_all(&mut c, 1).len(), 1);
}

/// Datagrams the kernel dropped because the driver did not read fast enough are
/// counted (Linux), learnt with the next datagram: sent = received + dropped.
#[cfg(target_os = "linux")]
#[test]
fn the_kernels_drops_are_counted() {
    let mut b = UdpDriver::bind(
        "127.0.0.1:0",
        UdpConfig {
            socket_buffer_size: 16 * 1024,
            ..UdpConfig::default()
        },
    )
    .unwrap();
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..1000 {
        a.send_to(&[1; 100], b.local_addr()).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut got = b.receive(|_, _| {});
    assert!(got < 1000, "the buffer holds fewer: {got}");
    a.send_to(&[2; 100], b.local_addr()).unwrap();
    got += receive_all(&mut b, 1).len();
    assert_eq!(b.stats().receive_buffer_drops + got as u64, 1001);
    assert_eq!(b.stats().datagrams_received, got as u64);
}

/// Over several overflows read in batched polls, the kernel's drops stay exact: the
/// first datagram read after an overflow brings every drop before it, so after each
/// round sent = received + dropped for all the rounds before it, and at the end for
/// all of them.
#[cfg(target_os = "linux")]
#[test]
fn the_kernels_drops_are_counted_across_batched_polls() {
    let mut b = UdpDriver::bind(
        "127.0.0.1:0",
        UdpConfig {
            socket_buffer_size: 16 * 1024,
            max_receive_per_poll: 50,
            ..UdpConfig::default()
        },
    )
    .unwrap();
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (mut sent, mut got) = (0u64, 0u64);
    for round in 0..3u8 {
        let before = sent - got;
        for _ in 0..1000 {
            a.send_to(&[round; 100], b.local_addr()).unwrap();
            sent += 1;
        }
        loop {
            let n = b.receive(|_, bytes| assert_eq!(bytes, [round; 100]));
            assert!(n <= 50);
            if n == 0 {
                break;
            }
            got += n as u64;
        }
        assert!(got < sent, "round {round}: the buffer holds fewer");
        assert_eq!(b.stats().receive_buffer_drops, before, "round {round}");
    }
    a.send_to(b"last", b.local_addr()).unwrap();
    got += receive_all(&mut b, 1).len() as u64;
    assert_eq!(b.stats().receive_buffer_drops + got, sent + 1);
    assert_eq!(b.stats().datagrams_received, got);
}

/// An isolated peer's datagrams arrive on its own socket: a flood from it, while the
/// driver does not read, leaves room for everyone else; at most
/// `ISOLATED_READS_PER_POLL` of its datagrams are read a poll, and its kernel's drops
/// are counted apart. Released, it arrives on the shared socket again.
#[cfg(target_os = "linux")]
#[test]
fn an_isolated_peer_fills_only_its_own_buffer() {
    let mut server = UdpDriver::bind(
        "127.0.0.1:0",
        UdpConfig {
            socket_buffer_size: 16 * 1024,
            ..UdpConfig::default()
        },
    )
    .unwrap();
    let to = server.local_addr();
    let flooder = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer = flooder.local_addr().unwrap();
    let others: Vec<UdpSocket> = (0..20)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    assert!(server.isolate(peer).unwrap());
    assert!(!server.isolate(peer).unwrap(), "already isolated");
    for _ in 0..5000 {
        flooder.send_to(&[0xF; 100], to).unwrap();
    }
    for other in &others {
        other.send_to(&[1; 100], to).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut from_flooder = 0;
    let mut from_others = 0;
    server.receive(|from, _| {
        if from == peer {
            from_flooder += 1;
        } else {
            from_others += 1;
        }
    });
    assert_eq!(from_others, 20);
    assert_eq!(from_flooder, ISOLATED_READS_PER_POLL);
    // Its reads are paced (`ISOLATED_READS_PER_SECOND`): drain the rest. Its drops are
    // learnt with its next datagram queued.
    let mut idle = 0;
    while idle < 3 {
        idle = if server.receive(|_, _| {}) == 0 {
            idle + 1
        } else {
            0
        };
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    flooder.send_to(&[0xF; 100], to).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(server.receive(|_, _| {}), 1);
    let stats = server.stats().clone();
    assert_eq!(stats.receive_buffer_drops, 0);
    assert_eq!(
        stats.isolated_drops + stats.datagrams_received,
        5000 + 20 + 1,
        "{stats:?}"
    );
    assert_eq!(stats.isolations, 1);

    assert!(server.release(peer));
    assert!(!server.release(peer));
    flooder.send_to(b"back", to).unwrap();
    let got = receive_all(&mut server, 1);
    assert_eq!(got, [(peer, b"back".to_vec())]);
}

/// At most `MAX_ISOLATED_PEERS` are isolated; past it the driver says so and nothing
/// changes.
#[cfg(target_os = "linux")]
#[test]
fn isolated_peers_are_bounded() {
    let mut server = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let peers: Vec<SocketAddr> = (0..=MAX_ISOLATED_PEERS)
        .map(|i| SocketAddr::from(([127, 0, 0, 1], 20_000 + i as u16)))
        .collect();
    for &peer in &peers[..MAX_ISOLATED_PEERS] {
        assert!(server.isolate(peer).unwrap());
    }
    let err = server.isolate(peers[MAX_ISOLATED_PEERS]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
    assert_eq!(server.isolated_peers().count(), MAX_ISOLATED_PEERS);
    assert_eq!(server.stats().isolations, MAX_ISOLATED_PEERS as u64);
    // No other socket can join the port.
    let other = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    let other = UdpSocket::from(other);
    sys::set_reuse_port(&other, true).unwrap();
    let bound = socket2::SockRef::from(&other).bind(&server.local_addr().into());
    assert!(bound.is_err());
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
#[test]
fn the_segment_control_message_is_laid_out_as_linux_reads_it() {
    let (control, len) = burst::segment_control(1200);
    assert_eq!(len, 24); // CMSG_SPACE(2) on 64-bit Linux
    assert_eq!(&control[..8], &18usize.to_ne_bytes()); // CMSG_LEN(2)
    assert_eq!(&control[8..12], &17i32.to_ne_bytes()); // SOL_UDP
    assert_eq!(&control[12..16], &103i32.to_ne_bytes()); // UDP_SEGMENT
    assert_eq!(&control[16..18], &1200u16.to_ne_bytes());
}

#[test]
fn drop_reasons_display() {
    assert_eq!(
        DropReason::SendOversize { len: 9, max: 8 }.to_string(),
        "datagram of 9 bytes is over the 8-byte limit"
    );
    assert_eq!(
        DropReason::SendQueueFull.to_string(),
        "socket send buffer and send queue are full"
    );
}
