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

use super::sys;

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

/// Bytes asked for an isolated peer's kernel receive buffer: room for what it may send
/// between two frames, small enough that a flood is dropped early.
const ISOLATED_BUFFER: usize = 256 * 1024;

/// One isolated peer.
pub(super) struct Isolated {
    pub(super) peer: SocketAddr,
    pub(super) socket: UdpSocket,
    /// The kernel's drop count for the socket, as it last reported it.
    pub(super) drops: u32,
}

/// A socket bound to `local` (the address of the sockets `bound`: the shared one and
/// those isolated already) and connected to `peer`, non-blocking, its drops counted
/// where the platform tells.
pub(super) fn open(
    bound: &[&UdpSocket],
    local: SocketAddr,
    peer: SocketAddr,
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
