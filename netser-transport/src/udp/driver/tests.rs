//! The driver over loopback sockets.

use super::*;

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
