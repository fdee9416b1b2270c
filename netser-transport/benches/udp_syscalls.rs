//! What one datagram costs in system calls on this machine, over loopback: the floor a
//! game server cannot go below, and whether batching pays for itself against the plain
//! `std` calls: the driver's (on Linux `sendmmsg` for datagrams to many addresses, GSO
//! for runs to one, `recvmmsg` for receives) and `quinn-udp`'s.
//!
//! `cargo bench -p netser-transport --bench udp_syscalls` prints nanoseconds per datagram
//! (the median of several rounds) for:
//! - `send_to` of a 1100-byte snapshot-sized datagram (the floor), through the driver,
//!   and through `quinn-udp`'s `sendmsg`;
//! - one such datagram to each of 64 addresses, as a server's snapshot tick sends them:
//!   `send_to` one at a time, against the driver gathering them and flushing once (on
//!   Linux one `sendmmsg` a batch of 64);
//! - receiving 1000 datagrams from 100 peers: `recv_from` one at a time, through the
//!   driver (on Linux `recvmmsg` in batches of up to 32), and `quinn-udp`'s `recvmmsg`;
//! - a 256-slice block to one peer: 256 `send_to` against GSO segments.
//!
//! Set `NETSER_BENCH_ROUNDS` for more rounds (default 15).

use std::io::IoSliceMut;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use netser_transport::udp::{UdpConfig, UdpDriver};

const SNAPSHOT: usize = 1100;
const BURST: usize = 1000;
const PEERS: usize = 100;

fn socket() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sock = socket2::SockRef::from(&s);
    sock.set_recv_buffer_size(8 << 20).unwrap();
    sock.set_send_buffer_size(8 << 20).unwrap();
    s.set_nonblocking(true).unwrap();
    s
}

fn drain(s: &UdpSocket) -> usize {
    let mut buf = [0u8; 65536];
    let mut n = 0;
    // Loopback delivers synchronously, but give a straggler a moment.
    let mut idle = 0;
    while idle < 3 {
        match s.recv_from(&mut buf) {
            Ok(_) => n += 1,
            Err(_) => {
                idle += 1;
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
    n
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rounds() -> usize {
    std::env::var("NETSER_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
}

/// ns per datagram of `send` over bursts of BURST datagrams, the receiver drained
/// between bursts (untimed).
fn time_sends(rx: &UdpSocket, mut send: impl FnMut(usize)) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..rounds() {
        let start = Instant::now();
        for i in 0..BURST {
            send(i);
        }
        samples.push(start.elapsed().as_nanos() as f64 / BURST as f64);
        let got = drain(rx);
        assert!(got >= BURST * 9 / 10, "loopback lost datagrams: {got}");
    }
    median(samples)
}

/// ns per datagram of `send(i)` over BURST datagrams spread over the receivers `rxs`
/// (datagram `i` to receiver `i % rxs.len()`), then `flush()`; the receivers drained
/// between bursts (untimed).
fn time_sends_many(
    rxs: &[UdpSocket],
    mut send: impl FnMut(usize, SocketAddr),
    mut flush: impl FnMut(),
) -> f64 {
    let addrs: Vec<SocketAddr> = rxs.iter().map(|r| r.local_addr().unwrap()).collect();
    let mut samples = Vec::new();
    for _ in 0..rounds() {
        let start = Instant::now();
        for i in 0..BURST {
            send(i, addrs[i % addrs.len()]);
        }
        flush();
        samples.push(start.elapsed().as_nanos() as f64 / BURST as f64);
        let got: usize = rxs.iter().map(drain).sum();
        assert!(got >= BURST * 9 / 10, "loopback lost datagrams: {got}");
    }
    median(samples)
}

/// ns per datagram to receive BURST datagrams from PEERS senders.
fn time_receives(
    rx: &UdpSocket,
    peers: &[UdpSocket],
    size: usize,
    mut receive_all: impl FnMut() -> usize,
) -> f64 {
    let to = rx.local_addr().unwrap();
    let payload = vec![7u8; size];
    let mut samples = Vec::new();
    for _ in 0..rounds() {
        for i in 0..BURST {
            peers[i % peers.len()].send_to(&payload, to).unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
        let start = Instant::now();
        let got = receive_all();
        samples.push(start.elapsed().as_nanos() as f64 / got.max(1) as f64);
        assert_eq!(got, BURST);
    }
    median(samples)
}

fn main() {
    // `cargo test --benches` runs this with `--bench`-less args; keep that quick.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let payload = [7u8; SNAPSHOT];
    let rx = socket();
    let to: SocketAddr = rx.local_addr().unwrap();

    println!(
        "udp_syscalls: ns per datagram over loopback (median of {} rounds)",
        rounds()
    );

    // --- send ---
    let tx = socket();
    let floor = time_sends(&rx, |_| {
        tx.send_to(&payload, to).unwrap();
    });
    println!("send  std send_to (the floor)        {floor:8.0}");

    let mut driver = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let driver_send = time_sends(&rx, |_| {
        driver.send(to, &payload).unwrap();
        driver.flush();
    });
    println!("send  UdpDriver send + flush          {driver_send:8.0}");

    // --- send: one datagram to each of many addresses (a snapshot tick) ---
    let clients: Vec<UdpSocket> = (0..64).map(|_| socket()).collect();
    let many_plain = time_sends_many(
        &clients,
        |_, to| {
            tx.send_to(&payload, to).unwrap();
        },
        || {},
    );
    println!("send  std send_to, 64 addresses       {many_plain:8.0}");
    let mut batched = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let batched = std::cell::RefCell::new(&mut batched);
    let many_batched = time_sends_many(
        &clients,
        |_, to| batched.borrow_mut().send(to, &payload).unwrap(),
        || batched.borrow_mut().flush(),
    );
    println!("send  UdpDriver batch, 64 addresses   {many_batched:8.0}");
    let mut one_by_one = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    let many_driver = time_sends_many(
        &clients,
        |_, to| {
            one_by_one.send(to, &payload).unwrap();
            one_by_one.flush();
        },
        || {},
    );
    println!("send  UdpDriver flush each, 64 addr.  {many_driver:8.0}");

    let qtx = socket();
    let state = quinn_udp::UdpSocketState::new((&qtx).into()).unwrap();
    let quinn_send = time_sends(&rx, |_| {
        let t = quinn_udp::Transmit {
            destination: to,
            ecn: None,
            contents: &payload,
            segment_size: None,
            src_ip: None,
        };
        state.try_send((&qtx).into(), &t).unwrap();
    });
    println!("send  quinn-udp sendmsg               {quinn_send:8.0}");

    // --- receive: snapshot-sized (1100 bytes) and input-sized (64 bytes) datagrams ---
    let peers: Vec<UdpSocket> = (0..PEERS).map(|_| socket()).collect();
    // 1000 snapshot-sized datagrams take about 2.3 MB of kernel accounting.
    let big = UdpConfig {
        socket_buffer_size: 8 << 20,
        ..UdpConfig::default()
    };
    let mut rdriver = UdpDriver::bind("127.0.0.1:0", big).unwrap();
    let qrx = socket();
    let qstate = quinn_udp::UdpSocketState::new((&qrx).into()).unwrap();
    let gro = qstate.gro_segments().max(1);
    let mut storage = vec![vec![0u8; 1500 * gro]; quinn_udp::BATCH_SIZE];
    let mut meta = vec![quinn_udp::RecvMeta::default(); quinn_udp::BATCH_SIZE];
    let mut buf = vec![0u8; 1501];
    for size in [SNAPSHOT, 64] {
        let plain_recv = time_receives(&rx, &peers, size, || {
            let mut n = 0;
            while rx.recv_from(&mut buf).is_ok() {
                n += 1;
            }
            n
        });
        println!("recv  {size:4} B std recv_from            {plain_recv:8.0}");

        let rto = rdriver.local_addr();
        let mut samples = Vec::new();
        for _ in 0..rounds() {
            for i in 0..BURST {
                peers[i % PEERS].send_to(&payload[..size], rto).unwrap();
            }
            std::thread::sleep(Duration::from_millis(2));
            let start = Instant::now();
            let got = rdriver.receive(|_, bytes| {
                std::hint::black_box(bytes);
            });
            samples.push(start.elapsed().as_nanos() as f64 / got.max(1) as f64);
            assert_eq!(got, BURST);
        }
        println!(
            "recv  {size:4} B UdpDriver receive        {:8.0}",
            median(samples)
        );

        let quinn_recv = time_receives(&qrx, &peers, size, || {
            let mut n = 0;
            loop {
                let mut iovs: Vec<IoSliceMut<'_>> =
                    storage.iter_mut().map(|b| IoSliceMut::new(b)).collect();
                match qstate.recv((&qrx).into(), &mut iovs, &mut meta) {
                    Ok(msgs) => {
                        for m in &meta[..msgs] {
                            n += m.len.div_ceil(m.stride.max(1));
                        }
                    }
                    Err(_) => break,
                }
            }
            n
        });
        println!(
            "recv  {size:4} B quinn-udp recvmmsg ({:2}) {quinn_recv:8.0}",
            quinn_udp::BATCH_SIZE
        );
    }

    // --- a block: 256 slices of 1024 bytes to one peer ---
    let slices = 256;
    let slice = [3u8; 1024];
    let block_rx = socket();
    let bto = block_rx.local_addr().unwrap();
    let mut plain = Vec::new();
    let mut gso = Vec::new();
    let gso_max = state.max_gso_segments().clamp(1, 65_507 / 1024);
    let block: Vec<u8> = slice.repeat(slices);
    for _ in 0..rounds() {
        let start = Instant::now();
        for _ in 0..slices {
            tx.send_to(&slice, bto).unwrap();
        }
        plain.push(start.elapsed().as_nanos() as f64 / slices as f64);
        drain(&block_rx);
        let start = Instant::now();
        for chunk in block.chunks(1024 * gso_max) {
            let t = quinn_udp::Transmit {
                destination: bto,
                ecn: None,
                contents: chunk,
                segment_size: (gso_max > 1).then_some(1024),
                src_ip: None,
            };
            state.try_send((&qtx).into(), &t).unwrap();
        }
        gso.push(start.elapsed().as_nanos() as f64 / slices as f64);
        drain(&block_rx);
    }
    println!(
        "block std send_to x256                {:8.0}",
        median(plain)
    );
    println!(
        "block quinn-udp GSO ({gso_max:2} segments)     {:8.0}",
        median(gso)
    );
}
