//! Peers isolated on a socket of their own (Linux). A second socket bound to the
//! driver's address and connected to one peer takes every datagram that peer sends: the
//! kernel prefers a connected socket's exact match to the shared one. So a flood from
//! that peer fills only its own small kernel buffer, and the kernel drops its excess
//! there, never the other peers' datagrams in the shared buffer.
//!
//! Sockets may share an address only with `SO_REUSEPORT` on every one, so the shared
//! socket and the isolated ones have it for the moment a new one is bound, then all
//! drop it again: no other socket can join the port afterwards.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use socket2::{Domain, Protocol, SockRef, Socket, Type};
use tracing::debug;

use super::{sys, UdpDriver};

/// Most peers isolated at once (each costs a socket and a read per
/// [`UdpDriver::receive`](super::UdpDriver::receive)).
///
/// ```
/// assert_eq!(netser_transport::udp::MAX_ISOLATED_PEERS, 16);
/// ```
pub const MAX_ISOLATED_PEERS: usize = 16;

/// Most datagrams read from one isolated peer by one
/// [`UdpDriver::receive`](super::UdpDriver::receive): far more than a game client sends
/// a frame; the rest wait in its own kernel buffer, which drops them when full (counted
/// in [`UdpStats::isolated_drops`](super::UdpStats::isolated_drops)).
///
/// ```
/// assert_eq!(netser_transport::udp::ISOLATED_READS_PER_POLL, 64);
/// ```
pub const ISOLATED_READS_PER_POLL: usize = 64;

/// Most datagrams read from one isolated peer a second, on average (reads come in
/// bursts of at most [`ISOLATED_READS_PER_POLL`]): four times the datagrams a
/// client's default budget admits, so that a server polling thousands of times a
/// second does not spend its time reading a flood the budget refuses anyway; the
/// kernel drops the rest in the peer's own buffer.
///
/// ```
/// assert_eq!(netser_transport::udp::ISOLATED_READS_PER_SECOND, 8192.0);
/// ```
pub const ISOLATED_READS_PER_SECOND: f64 = 8192.0;

/// Bytes asked for an isolated peer's kernel receive buffer: room for what it may send
/// between two frames, small enough that a flood is dropped early.
const ISOLATED_BUFFER: usize = 256 * 1024;

/// Most datagrams counted out of a released peer's buffer: more than it can hold (the
/// kernel charges every datagram its bookkeeping, over 256 bytes, against the buffer).
const MAX_RELEASE_DRAIN: u64 = 4096;

/// One isolated peer.
pub(super) struct Isolated {
    pub(super) peer: SocketAddr,
    pub(super) socket: UdpSocket,
    /// The kernel's drop count for the socket, as it last reported it.
    pub(super) drops: u32,
    /// Reads allowed now, refilled at [`ISOLATED_READS_PER_SECOND`] up to
    /// [`ISOLATED_READS_PER_POLL`], as of `refilled` (the driver's clock).
    reads: f64,
    refilled: f64,
}

impl Isolated {
    /// How many datagrams may be read now; `read` says how many were.
    pub(super) fn allowance(&mut self, now: f64) -> usize {
        let elapsed = (now - self.refilled).max(0.0);
        self.refilled = now;
        let most = ISOLATED_READS_PER_POLL as f64;
        self.reads = (self.reads + elapsed * ISOLATED_READS_PER_SECOND).min(most);
        self.reads as usize
    }

    pub(super) fn read(&mut self, datagrams: usize) {
        self.reads = (self.reads - datagrams as f64).max(0.0);
    }
}

/// A socket bound to `local` (the address of the sockets `bound`: the shared one and
/// those isolated already) and connected to `peer`, non-blocking, its drops counted
/// where the platform tells.
pub(super) fn open(
    bound: &[&UdpSocket],
    local: SocketAddr,
    peer: SocketAddr,
    now: f64,
) -> io::Result<Isolated> {
    let opened = bound
        .iter()
        .try_for_each(|socket| sys::set_reuse_port(socket, true))
        .and_then(|()| open_connected(local, peer));
    let closed = bound
        .iter()
        .map(|socket| sys::set_reuse_port(socket, false))
        .fold(Ok(()), Result::and);
    let socket = opened?;
    closed?;
    Ok(Isolated {
        peer,
        socket,
        drops: 0,
        reads: ISOLATED_READS_PER_POLL as f64,
        refilled: now,
    })
}

fn open_connected(local: SocketAddr, peer: SocketAddr) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    let socket = UdpSocket::from(socket);
    sys::set_reuse_port(&socket, true)?;
    SockRef::from(&socket).bind(&local.into())?;
    sys::set_reuse_port(&socket, false)?;
    socket.connect(peer)?;
    socket.set_nonblocking(true)?;
    // A smaller buffer than asked only drops a flood sooner.
    let _ = SockRef::from(&socket).set_recv_buffer_size(ISOLATED_BUFFER);
    let _ = sys::count_drops(&socket);
    Ok(socket)
}

impl UdpDriver {
    /// Steers every datagram from `peer` to a socket of its own (on Linux), so that a
    /// flood from it fills only that socket's small kernel buffer: the kernel drops its
    /// excess there ([`UdpStats::isolated_drops`](super::UdpStats::isolated_drops))
    /// instead of the other peers' datagrams in the shared buffer.
    /// [`receive`](Self::receive) reads at most
    /// [`ISOLATED_READS_PER_POLL`] of its datagrams a call and
    /// [`ISOLATED_READS_PER_SECOND`] a second; nothing changes for what is sent to it.
    /// A [`UdpServer`](crate::udp::UdpServer) isolates a client whose budget refused its
    /// datagrams, and releases it when it leaves.
    ///
    /// The shared socket and those of the peers isolated already have `SO_REUSEPORT`
    /// only while the new socket is bound, so no other socket can join the port.
    ///
    /// Returns `Ok(true)` if `peer` was isolated now, `Ok(false)` if it already was.
    ///
    /// # Errors
    /// `Unsupported` on other platforms; `OutOfMemory` when [`MAX_ISOLATED_PEERS`]
    /// are isolated; the operating system's error if the socket could not be set up.
    /// Nothing changes then.
    ///
    /// ```
    /// use netser_transport::udp::{UdpConfig, UdpDriver};
    /// let mut server = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// let flooder = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    /// let peer = flooder.local_addr().unwrap();
    /// if cfg!(target_os = "linux") {
    ///     assert!(server.isolate(peer).unwrap());
    ///     assert_eq!(server.isolated_peers().collect::<Vec<_>>(), [peer]);
    ///     assert!(server.release(peer));
    /// }
    /// ```
    pub fn isolate(&mut self, peer: SocketAddr) -> io::Result<bool> {
        if self.isolated.iter().any(|i| i.peer == peer) {
            return Ok(false);
        }
        if !cfg!(target_os = "linux") {
            return Err(io::ErrorKind::Unsupported.into());
        }
        if self.isolated.len() >= MAX_ISOLATED_PEERS {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        let bound: Vec<&UdpSocket> = std::iter::once(&self.socket)
            .chain(self.isolated.iter().map(|i| &i.socket))
            .collect();
        let isolated = open(&bound, self.local_addr, peer, self.clock.now())?;
        self.isolated.push(isolated);
        self.stats.isolations += 1;
        debug!(local = %self.local_addr, %peer, "udp: peer isolated on a socket of its own");
        Ok(true)
    }

    /// Ends [`isolate`](Self::isolate) for `peer`: its datagrams arrive on the shared
    /// socket again. Those still in its own buffer are dropped and counted in
    /// [`UdpStats::isolated_drops`](super::UdpStats::isolated_drops) (up to 4,096, more
    /// than its buffer can hold; only a peer still flooding as it is released can
    /// outrun that, and what it sends then is lost with the socket). Returns whether it
    /// was isolated.
    pub fn release(&mut self, peer: SocketAddr) -> bool {
        let Some(k) = self.isolated.iter().position(|i| i.peer == peer) else {
            return false;
        };
        let isolated = self.isolated.swap_remove(k);
        let left = isolated.socket.take_error().ok();
        let mut buf = [0u8; 1];
        let mut unread = 0u64;
        while unread < MAX_RELEASE_DRAIN && isolated.socket.recv(&mut buf).is_ok() {
            unread += 1;
        }
        self.stats.isolated_drops += unread;
        debug!(local = %self.local_addr, %peer, unread, ?left, "udp: isolated peer released");
        true
    }

    /// The peers isolated now ([`isolate`](Self::isolate)).
    pub fn isolated_peers(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.isolated.iter().map(|i| i.peer)
    }
}
