//! `send_laid_out` (datagrams straight from a caller's buffer) against its model: `send`
//! of each datagram in turn, then `flush`.

use proptest::prelude::*;

use super::*;

/// How the sender is set up for one case.
#[derive(Debug, Clone, Copy)]
struct Setup {
    /// A datagram already waits in the send queue (a full kernel buffer earlier).
    queued: bool,
    /// Through a lossy send simulator.
    simulator: bool,
    /// The kernel refuses the first batched call.
    refuse: bool,
}

/// What came of one run: what each peer received, in order, and the sender's counters.
#[derive(Debug, PartialEq)]
struct Outcome {
    received: Vec<Vec<Vec<u8>>>,
    counters: [u64; 6],
}

/// Sends `datagrams` (peer, bytes) from a fresh driver, laid out in one buffer or one
/// `send` each, flushes, and reads what each of `peers` peers received.
fn run(setup: Setup, peers: usize, datagrams: &[(usize, Vec<u8>)], laid_out: bool) -> Outcome {
    let mut a = UdpDriver::bind(
        "127.0.0.1:0",
        UdpConfig {
            max_send_queue: 40,
            send_simulator: setup.simulator.then(|| crate::simulator::SimulatorConfig {
                loss: 0.3,
                seed: 7,
                ..Default::default()
            }),
            ..UdpConfig::default()
        },
    )
    .unwrap();
    let mut peers = drivers(peers);
    if setup.queued {
        a.send_queue
            .push_back((peers[0].local_addr(), b"before".to_vec()));
    }
    a.batch.refuse = setup.refuse;
    if laid_out {
        let mut bytes = Vec::new();
        let mut list = Vec::new();
        for (peer, datagram) in datagrams {
            let start = bytes.len();
            bytes.extend_from_slice(datagram);
            list.push((peers[*peer].local_addr(), start, bytes.len()));
        }
        a.send_laid_out(&bytes, &list);
    } else {
        for (peer, datagram) in datagrams {
            let _ = a.send(peers[*peer].local_addr(), datagram);
        }
    }
    assert!(a.flush_all(Duration::from_secs(2)));
    let sent = a.stats().datagrams_sent;
    // Every datagram handed to the kernel arrives over loopback (the buffers are far
    // larger than a case sends).
    let mut received: Vec<Vec<Vec<u8>>> = peers.iter().map(|_| Vec::new()).collect();
    let mut total = 0;
    for _ in 0..2000 {
        for (i, peer) in peers.iter_mut().enumerate() {
            peer.receive(|_, bytes| received[i].push(bytes.to_vec()));
        }
        total = received.iter().map(Vec::len).sum::<usize>() as u64;
        if total >= sent {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(total, sent);
    let s = a.stats();
    Outcome {
        received,
        counters: [
            s.datagrams_sent,
            s.bytes_sent,
            s.dropped_send_oversize,
            s.dropped_send_queue_full,
            s.dropped_send_error,
            s.send_would_block,
        ],
    }
}

/// Datagrams to a few peers: runs to one peer (bursts on Linux), lengths up to past the
/// size limit, empty ones; each marked with its index.
fn datagrams(peers: usize) -> impl Strategy<Value = Vec<(usize, Vec<u8>)>> {
    prop::collection::vec((0..peers, 0usize..1600, 1usize..6), 0..40).prop_map(|runs| {
        let mut out = Vec::new();
        for (peer, len, repeat) in runs {
            for _ in 0..repeat {
                let mut datagram = vec![0xA5; len];
                let index = (out.len() as u16).to_le_bytes();
                let n = len.min(2);
                datagram[..n].copy_from_slice(&index[..n]);
                out.push((peer, datagram));
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The same datagrams arrive in the same order at each peer, with the same counts
    /// and drops, as when each is sent on its own.
    #[test]
    fn laid_out_sends_what_send_each_sends(
        datagrams in datagrams(3),
        queued in any::<bool>(),
        simulator in any::<bool>(),
        refuse in any::<bool>(),
    ) {
        let setup = Setup { queued, simulator, refuse };
        let model = run(setup, 3, &datagrams, false);
        let laid_out = run(setup, 3, &datagrams, true);
        prop_assert_eq!(laid_out, model);
    }
}

/// A server's snapshots, one to each of many clients, straight from one buffer: on
/// Linux they leave 64 a system call, none waits for the flush, every one arrives.
#[test]
fn laid_out_datagrams_to_many_addresses_leave_together() {
    let (mut a, _) = pair(UdpConfig {
        measure_syscalls: true,
        ..UdpConfig::default()
    });
    let mut peers = drivers(100);
    let mut bytes = Vec::new();
    let mut list = Vec::new();
    for (i, peer) in peers.iter().enumerate() {
        let start = bytes.len();
        bytes.extend_from_slice(&[i as u8; 1100]);
        list.push((peer.local_addr(), start, bytes.len()));
    }
    a.send_laid_out(&bytes, &list);
    assert_eq!(a.held(), 0);
    assert_eq!(a.stats().datagrams_sent, 100);
    assert_eq!(a.stats().bytes_sent, 110_000);
    let linux = cfg!(target_os = "linux");
    assert_eq!(a.stats().syscalls, if linux { 2 } else { 100 });
    for (i, peer) in peers.iter_mut().enumerate() {
        assert_eq!(
            receive_all(peer, 1),
            [(a.local_addr(), vec![i as u8; 1100])]
        );
    }
}

/// What `send` gathered before leaves before the laid-out datagrams.
#[test]
fn laid_out_datagrams_leave_after_what_was_gathered() {
    let (mut a, mut b) = pair(UdpConfig::default());
    let mut c = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    a.send(b.local_addr(), b"first").unwrap();
    a.send(c.local_addr(), b"to c").unwrap();
    a.send_laid_out(b"second", &[(b.local_addr(), 0, 6)]);
    a.flush();
    let got: Vec<Vec<u8>> = receive_all(&mut b, 2).into_iter().map(|(_, d)| d).collect();
    assert_eq!(got, [b"first".to_vec(), b"second".to_vec()]);
    assert_eq!(receive_all(&mut c, 1).len(), 1);
}
