//! The Linux socket calls `std` lacks, through the safe APIs of `nix` and `rustix`: the
//! kernel's count of datagrams it dropped for a socket (`SO_RXQ_OVFL`), `SO_REUSEPORT`
//! for an isolated peer's socket, and `sendmmsg`. Elsewhere each says `Unsupported` and
//! the driver keeps its plain path.

use std::io;

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd;

    use nix::sys::socket::{self, sockopt, ControlMessageOwned, MsgFlags, SockaddrStorage};

    pub(crate) fn count_drops(socket: &UdpSocket) -> io::Result<()> {
        Ok(socket::setsockopt(socket, sockopt::RxqOvfl, &1)?)
    }

    pub(crate) fn set_reuse_port(socket: &UdpSocket, on: bool) -> io::Result<()> {
        Ok(socket::setsockopt(socket, sockopt::ReusePort, &on)?)
    }

    pub(crate) fn control_buffer() -> Vec<u8> {
        nix::cmsg_space!(u32)
    }

    pub(crate) fn recv_with_drops(
        socket: &UdpSocket,
        buf: &mut [u8],
        control: &mut [u8],
    ) -> io::Result<(usize, SocketAddr, Option<u32>)> {
        let mut iov = [IoSliceMut::new(buf)];
        let msg = socket::recvmsg::<SockaddrStorage>(
            socket.as_raw_fd(),
            &mut iov,
            Some(control),
            MsgFlags::empty(),
        )?;
        let from = msg
            .address
            .and_then(|a| {
                a.as_sockaddr_in()
                    .map(|v4| SocketAddr::V4((*v4).into()))
                    .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into())))
            })
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
        let drops = msg.cmsgs().ok().and_then(|mut cmsgs| {
            cmsgs.find_map(|c| match c {
                ControlMessageOwned::RxqOvfl(n) => Some(n),
                _ => None,
            })
        });
        Ok((msg.bytes, from, drops))
    }

    /// One `sendmmsg` of `datagrams` (each an address and its bytes' range in `bytes`; at
    /// most 1024, the kernel's limit); how many the kernel took, from the first. An
    /// error means it took none: it is the first datagram's.
    pub(crate) fn send_many(
        socket: &UdpSocket,
        bytes: &[u8],
        datagrams: &[(SocketAddr, usize, usize)],
    ) -> io::Result<usize> {
        use rustix::net::addr::SocketAddrArg;
        use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags};
        let addrs: Vec<_> = datagrams.iter().map(|(to, _, _)| to.as_any()).collect();
        let iovs: Vec<[IoSlice<'_>; 1]> = datagrams
            .iter()
            .map(|&(_, start, end)| [IoSlice::new(&bytes[start..end])])
            .collect();
        let mut controls: Vec<SendAncillaryBuffer<'_, '_, '_>> = datagrams
            .iter()
            .map(|_| SendAncillaryBuffer::default())
            .collect();
        let mut messages: Vec<MMsgHdr<'_>> = addrs
            .iter()
            .zip(&iovs)
            .zip(&mut controls)
            .map(|((addr, iov), control)| MMsgHdr::new_with_addr(addr, iov, control))
            .collect();
        Ok(rustix::net::sendmmsg(
            socket,
            &mut messages,
            SendFlags::empty(),
        )?)
    }
}

#[cfg(target_os = "linux")]
pub(super) use linux::*;

#[cfg(not(target_os = "linux"))]
mod other {
    use std::io;
    use std::net::{SocketAddr, UdpSocket};

    fn unsupported<T>() -> io::Result<T> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn count_drops(_: &UdpSocket) -> io::Result<()> {
        unsupported()
    }

    pub(crate) fn set_reuse_port(_: &UdpSocket, _: bool) -> io::Result<()> {
        unsupported()
    }

    pub(crate) fn control_buffer() -> Vec<u8> {
        Vec::new()
    }

    pub(crate) fn recv_with_drops(
        socket: &UdpSocket,
        buf: &mut [u8],
        _: &mut [u8],
    ) -> io::Result<(usize, SocketAddr, Option<u32>)> {
        socket.recv_from(buf).map(|(len, from)| (len, from, None))
    }

    pub(crate) fn send_many(
        _: &UdpSocket,
        _: &[u8],
        _: &[(SocketAddr, usize, usize)],
    ) -> io::Result<usize> {
        unsupported()
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) use other::*;

/// Whether `e` says the platform cannot do the call at all (rather than that this
/// datagram failed): Linux's ENOSYS, EOPNOTSUPP, or `Unsupported`.
pub(super) fn is_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || (cfg!(target_os = "linux") && matches!(e.raw_os_error(), Some(38 | 95)))
}
