//! The Linux socket calls `std` lacks, through the safe APIs of `nix` and `rustix`: the
//! kernel's count of datagrams it dropped for a socket (`SO_RXQ_OVFL`), `SO_REUSEPORT`
//! for an isolated peer's socket, `sendmmsg` and `recvmmsg`. Elsewhere each says
//! `Unsupported` and the driver keeps its plain path.

use std::io;
use std::net::SocketAddr;

/// One datagram read: its length in its slot, its sender, and whether the kernel cut
/// it to fit the slot (`MSG_TRUNC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Received {
    pub(super) len: usize,
    pub(super) from: SocketAddr,
    pub(super) truncated: bool,
}

impl Received {
    /// A datagram read by a call that does not say whether it was cut (the driver's
    /// slot is one byte longer than the largest datagram accepted, so the length does).
    pub(super) fn whole(len: usize, from: SocketAddr) -> Self {
        Self {
            len,
            from,
            truncated: false,
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::cell::RefCell;
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd;
    use std::thread::LocalKey;

    use nix::sys::socket::{
        self, sockopt, ControlMessageOwned, MsgFlags, MultiHeaders, SockaddrIn, SockaddrIn6,
        SockaddrLike, SockaddrStorage,
    };

    use super::super::batch::MAX_BATCH;
    use super::super::recv::RECV_BATCH;
    use super::Received;

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
                    .map(|&v4| SocketAddr::from(v4))
                    .or_else(|| a.as_sockaddr_in6().map(|&v6| SocketAddr::from(v6)))
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

    thread_local! {
        /// The message headers of `recvmmsg` for IPv4 sockets, made at a thread's first
        /// batched read and reused by every driver on the thread: `nix` keeps raw
        /// pointers in them, which may not move to another thread with a driver. They
        /// hold no control messages: `nix` does not restore a header's room for them
        /// between calls, so the drop count comes with a read of its own.
        static HEADERS_V4: RefCell<Option<MultiHeaders<SockaddrIn>>> =
            const { RefCell::new(None) };
        /// The same for IPv6 sockets. Apart, because each call leaves in a header the
        /// length of the address it read, the room the next call has for one.
        static HEADERS_V6: RefCell<Option<MultiHeaders<SockaddrIn6>>> =
            const { RefCell::new(None) };
    }

    /// One `recvmmsg` from `socket` (of the IPv4 family if `ipv4`) into `buffers`, cut
    /// in slots of `slot` bytes (at most [`RECV_BATCH`] of them): the datagrams read go
    /// to `received`, datagram `i` in slot `i`. An error means none was read.
    pub(crate) fn recv_many(
        socket: &UdpSocket,
        ipv4: bool,
        buffers: &mut [u8],
        slot: usize,
        received: &mut Vec<Received>,
    ) -> io::Result<()> {
        if ipv4 {
            with_headers(&HEADERS_V4, socket, buffers, slot, received)
        } else {
            with_headers(&HEADERS_V6, socket, buffers, slot, received)
        }
    }

    fn with_headers<S>(
        headers: &'static LocalKey<RefCell<Option<MultiHeaders<S>>>>,
        socket: &UdpSocket,
        buffers: &mut [u8],
        slot: usize,
        received: &mut Vec<Received>,
    ) -> io::Result<()>
    where
        S: SockaddrLike + Copy + Into<SocketAddr>,
    {
        let result = headers.try_with(|headers| {
            let mut headers = headers.try_borrow_mut().ok()?;
            let headers =
                headers.get_or_insert_with(|| MultiHeaders::preallocate(RECV_BATCH, None));
            Some(recv_into(socket, headers, buffers, slot, received))
        });
        match result {
            Ok(Some(result)) => result,
            // The thread is ending, or (never) a read is already under way on it.
            _ => {
                received.clear();
                let (len, from) = socket.recv_from(&mut buffers[..slot])?;
                received.push(Received::whole(len, from));
                Ok(())
            }
        }
    }

    fn recv_into<S>(
        socket: &UdpSocket,
        headers: &mut MultiHeaders<S>,
        buffers: &mut [u8],
        slot: usize,
        received: &mut Vec<Received>,
    ) -> io::Result<()>
    where
        S: SockaddrLike + Copy + Into<SocketAddr>,
    {
        received.clear();
        let count = (buffers.len() / slot).min(RECV_BATCH);
        let mut slots = buffers.chunks_exact_mut(slot);
        let mut iovs: [[IoSliceMut<'_>; 1]; RECV_BATCH] =
            std::array::from_fn(|_| [IoSliceMut::new(slots.next().unwrap_or_default())]);
        let messages = socket::recvmmsg(
            socket.as_raw_fd(),
            headers,
            iovs[..count].iter_mut(),
            MsgFlags::empty(),
            None,
        )?;
        for message in messages {
            // `nix` gives every message read its address; (never) one without would
            // come from the unspecified address, which no connection has.
            let from = message
                .address
                .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), Into::into);
            received.push(Received {
                len: message.bytes,
                from,
                truncated: message.flags.contains(MsgFlags::MSG_TRUNC),
            });
        }
        Ok(())
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

    pub(crate) fn recv_many(
        _: &UdpSocket,
        _: bool,
        _: &mut [u8],
        _: usize,
        _: &mut Vec<super::Received>,
    ) -> io::Result<()> {
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
