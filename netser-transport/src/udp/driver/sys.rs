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

    use super::super::batch::MAX_BATCH;

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

    /// One `sendmmsg` of `datagrams` (each an address and its bytes' range in `bytes`;
    /// the first [`MAX_BATCH`] of them); how many the kernel took, from the first. An
    /// error means it took none: it is the first datagram's.
    ///
    /// The message headers borrow the addresses and bytes, so they cannot outlive the
    /// call: they live in arrays on the stack (about 15 KiB), and a steady stream of
    /// batches allocates nothing. (`nix`'s `sendmmsg` keeps its headers across calls,
    /// but the count it returns is read through an iterator over received messages,
    /// which reads address slots a send leaves uninitialised.)
    pub(crate) fn send_many(
        socket: &UdpSocket,
        bytes: &[u8],
        datagrams: &[(SocketAddr, usize, usize)],
    ) -> io::Result<usize> {
        use rustix::net::addr::SocketAddrArg;
        use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags};
        let datagrams = &datagrams[..datagrams.len().min(MAX_BATCH)];
        let addrs: [_; MAX_BATCH] =
            std::array::from_fn(|i| datagrams.get(i).map(|(to, _, _)| to.as_any()));
        let iovs: [[IoSlice<'_>; 1]; MAX_BATCH] = std::array::from_fn(|i| {
            [IoSlice::new(
                datagrams
                    .get(i)
                    .map_or(&[][..], |&(_, start, end)| &bytes[start..end]),
            )]
        });
        let mut controls: [SendAncillaryBuffer<'_, '_, '_>; MAX_BATCH] =
            std::array::from_fn(|_| SendAncillaryBuffer::default());
        let mut i = 0;
        let mut messages = controls.each_mut().map(|control| {
            let message = match &addrs[i] {
                Some(addr) => MMsgHdr::new_with_addr(addr, &iovs[i], control),
                None => MMsgHdr::new(&iovs[i], control),
            };
            i += 1;
            message
        });
        Ok(rustix::net::sendmmsg(
            socket,
            &mut messages[..datagrams.len()],
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
