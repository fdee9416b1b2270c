//! Datagrams read from a socket in batches (Linux's `recvmmsg`): a server under load
//! finds hundreds of datagrams waiting at each poll, and a batch saves a system call's
//! fixed cost on all but one in [`RECV_BATCH`]. The first read of a poll from each
//! socket stays a `recvmsg` of one datagram, the one that brings the kernel's drop
//! count (`SO_RXQ_OVFL`). Elsewhere, and once the kernel refused the call, one
//! `recv_from` per datagram.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use tracing::warn;

use super::{sys, DropReason, UdpDriver};

/// Most datagrams read by one batched call: past a few dozen a larger batch saves
/// nothing more.
pub(super) const RECV_BATCH: usize = 32;

/// Most bytes of receive buffers a driver holds: [`RECV_BATCH`] datagrams of the
/// default 1,500 bytes fit (48 KiB); with larger datagrams the batch is shorter (one
/// datagram of [`MAX_UDP_PAYLOAD`](super::MAX_UDP_PAYLOAD) fills it).
pub(super) const RECV_BUFFER_BYTES: usize = 64 * 1024;

/// The buffers datagrams are read into: `batch` slots of `slot` bytes end to end.
pub(super) struct Receiver {
    /// Off where the platform has no `recvmmsg`, or its kernel refused it.
    enabled: bool,
    /// `batch * slot` bytes.
    buffers: Vec<u8>,
    /// One byte longer than the largest accepted datagram, so that a longer one (which
    /// the kernel truncates to the slot) is recognised and dropped.
    slot: usize,
    batch: usize,
    /// The datagrams of the last read, in the order they arrived: datagram `i` is in
    /// slot `i`. At most `batch`.
    received: Vec<sys::Received>,
    /// Room for the drop count the kernel attaches to a datagram (Linux).
    control: Vec<u8>,
    /// Tests: the next batched read is refused as a kernel without the call would.
    #[cfg(test)]
    pub(super) refuse: bool,
}

impl Receiver {
    /// Slots for datagrams of up to `max_datagram_size` bytes: [`RECV_BATCH`] of them,
    /// fewer if they would take more than [`RECV_BUFFER_BYTES`] or if a poll reads
    /// fewer (`max_receive_per_poll`), at least one.
    pub(super) fn new(max_datagram_size: usize, max_receive_per_poll: usize) -> Self {
        let slot = max_datagram_size + 1;
        let batch = (RECV_BUFFER_BYTES / slot)
            .min(RECV_BATCH)
            .min(max_receive_per_poll)
            .max(1);
        Self {
            enabled: cfg!(target_os = "linux"),
            buffers: vec![0; batch * slot],
            slot,
            batch,
            received: Vec::with_capacity(batch),
            control: sys::control_buffer(),
            #[cfg(test)]
            refuse: false,
        }
    }

    /// Most datagrams one read brings.
    pub(super) fn batch(&self) -> usize {
        if self.enabled {
            self.batch
        } else {
            1
        }
    }

    pub(super) fn disable(&mut self) {
        self.enabled = false;
    }

    /// Reads from `socket` into the slots: one datagram with the kernel's drop count
    /// for the socket (returned, where the platform tells) if `drops`, else up to
    /// `most` (at most [`batch`](Self::batch)). What was read is in
    /// [`received`](Self::received); an error means nothing was.
    fn read(
        &mut self,
        socket: &UdpSocket,
        ipv4: bool,
        most: usize,
        drops: bool,
    ) -> io::Result<Option<u32>> {
        self.received.clear();
        let slot = self.slot;
        if drops {
            let (len, from, drops) =
                sys::recv_with_drops(socket, &mut self.buffers[..slot], &mut self.control)?;
            self.received.push(sys::Received::whole(len, from));
            return Ok(drops);
        }
        let most = most.clamp(1, self.batch());
        if self.enabled {
            #[cfg(test)]
            let result = if std::mem::take(&mut self.refuse) {
                Err(io::ErrorKind::Unsupported.into())
            } else {
                sys::recv_many(
                    socket,
                    ipv4,
                    &mut self.buffers[..most * slot],
                    slot,
                    &mut self.received,
                )
            };
            #[cfg(not(test))]
            let result = sys::recv_many(
                socket,
                ipv4,
                &mut self.buffers[..most * slot],
                slot,
                &mut self.received,
            );
            match result {
                Err(e) if sys::is_unsupported(&e) => {
                    warn!(%e, "udp: the kernel refused a batched receive; one datagram per call from now on");
                    self.disable();
                }
                result => return result.map(|()| None),
            }
        }
        let (len, from) = socket.recv_from(&mut self.buffers[..slot])?;
        self.received.push(sys::Received::whole(len, from));
        Ok(None)
    }

    /// The bytes of datagram `i` of the last read.
    fn datagram(&self, i: usize) -> &[u8] {
        let len = self.received[i].len.min(self.slot);
        &self.buffers[i * self.slot..][..len]
    }
}

/// Which socket a read is from: the shared one, or isolated peer `k`'s.
#[derive(Clone, Copy)]
enum Source {
    Shared,
    Isolated(usize),
}

impl UdpDriver {
    /// Reads every datagram waiting in the kernel (at most
    /// [`UdpConfig::max_receive_per_poll`](super::UdpConfig::max_receive_per_poll), and
    /// from each isolated peer at most [`ISOLATED_READS_PER_POLL`](super::ISOLATED_READS_PER_POLL),
    /// [`ISOLATED_READS_PER_SECOND`](super::ISOLATED_READS_PER_SECOND) on average) and calls
    /// `on_datagram(from, bytes)` for each that is delivered now (through the receive
    /// simulator, if there is one), in the order they arrived. Returns how many were
    /// delivered. Never blocks.
    ///
    /// On Linux datagrams are read up to 32 a system call (`recvmmsg`), into buffers
    /// the driver holds: 32 times `max_datagram_size + 1` bytes, fewer datagrams a call
    /// when that would pass 64 KiB. A kernel that refuses the call gets one `recv_from`
    /// per datagram from then on, as every other platform does.
    ///
    /// Oversize datagrams and receive errors are dropped, counted and logged; so are,
    /// where the platform tells (Linux), the datagrams the kernel dropped before they
    /// could be read ([`UdpStats::receive_buffer_drops`](super::UdpStats::receive_buffer_drops)),
    /// learnt with the first datagram of each poll.
    ///
    /// ```
    /// use netser_transport::udp::{UdpConfig, UdpDriver};
    /// let mut a = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// let mut b = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// a.send(b.local_addr(), b"hello").unwrap();
    /// a.flush();
    /// let mut got = Vec::new();
    /// while got.is_empty() {
    ///     b.receive(|from, bytes| got.push((from, bytes.to_vec())));
    /// }
    /// assert_eq!(got, [(a.local_addr(), b"hello".to_vec())]);
    /// ```
    pub fn receive(&mut self, mut on_datagram: impl FnMut(SocketAddr, &[u8])) -> usize {
        let now = self.clock.now();
        let most = self.config.max_receive_per_poll;
        let (_, mut delivered) = self.read_all(Source::Shared, most, now, &mut on_datagram);
        for k in 0..self.isolated.len() {
            let allowed = self.isolated[k].allowance(now);
            let (read, n) = self.read_all(Source::Isolated(k), allowed, now, &mut on_datagram);
            self.isolated[k].read(read);
            delivered += n;
        }
        if let Some(sim) = &mut self.receive_sim {
            while let Some(delivery) = sim.receive(now) {
                on_datagram(delivery.from, &delivery.data);
                delivered += 1;
            }
        }
        delivered
    }

    /// Reads from `source` until the kernel has nothing more or `most` reads were made
    /// (a datagram, an error or an interrupted call each count as one); returns the
    /// datagrams read and how many were delivered now.
    fn read_all(
        &mut self,
        source: Source,
        most: usize,
        now: f64,
        on_datagram: &mut impl FnMut(SocketAddr, &[u8]),
    ) -> (usize, usize) {
        let (mut read, mut delivered) = (0, 0);
        let mut left = most;
        // The first read of a poll also brings the kernel's drop count.
        let mut drops = match source {
            Source::Shared => self.drops.is_some(),
            Source::Isolated(_) => true,
        };
        let ipv4 = self.local_addr.is_ipv4();
        while left > 0 {
            let asked = if drops { 1 } else { left.min(self.rx.batch()) };
            let timer = self.start_timer();
            let socket = match source {
                Source::Shared => &self.socket,
                Source::Isolated(k) => &self.isolated[k].socket,
            };
            let result = self.rx.read(socket, ipv4, asked, drops);
            self.stop_timer(timer);
            drops = false;
            match result {
                Ok(count) => {
                    if let Some(count) = count {
                        self.count_kernel_drops(source, count);
                    }
                    let got = self.rx.received.len();
                    for i in 0..got {
                        delivered += self.take(i, now, on_datagram);
                    }
                    read += got;
                    left = left.saturating_sub(got.max(1));
                    // Fewer than asked (of a batch not refused meanwhile): the kernel
                    // had no more.
                    if got < asked.min(self.rx.batch()) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => left -= 1,
                Err(e) => {
                    self.receive_error(&e);
                    left -= 1;
                }
            }
        }
        (read, delivered)
    }

    /// The kernel said it has dropped `count` datagrams for `source`'s socket so far.
    fn count_kernel_drops(&mut self, source: Source, count: u32) {
        match source {
            Source::Shared => {
                if let Some(last) = self.drops {
                    self.stats.receive_buffer_drops += u64::from(count.wrapping_sub(last));
                    self.drops = Some(count);
                }
            }
            Source::Isolated(k) => {
                let peer = &mut self.isolated[k];
                self.stats.isolated_drops += u64::from(count.wrapping_sub(peer.drops));
                peer.drops = count;
            }
        }
    }

    /// Counts datagram `i` of the last read and hands it on (or to the receive
    /// simulator); returns 1 if it was delivered now.
    fn take(
        &mut self,
        i: usize,
        now: f64,
        on_datagram: &mut impl FnMut(SocketAddr, &[u8]),
    ) -> usize {
        let received = self.rx.received[i];
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += received.len as u64;
        if received.truncated || received.len > self.config.max_datagram_size {
            self.stats.dropped_receive_oversize += 1;
            let count = self.stats.dropped_receive_oversize;
            self.dropped(received.from, DropReason::ReceiveOversize, count);
            return 0;
        }
        let bytes = self.rx.datagram(i);
        match &mut self.receive_sim {
            Some(sim) => {
                sim.send(now, received.from, self.local_addr, bytes);
                0
            }
            None => {
                on_datagram(received.from, bytes);
                1
            }
        }
    }

    /// ConnectionReset (Windows, after an ICMP port unreachable) and the like say
    /// nothing about the next datagram: count and go on.
    fn receive_error(&mut self, e: &io::Error) {
        self.stats.receive_errors += 1;
        let count = self.stats.receive_errors;
        self.dropped(self.local_addr, DropReason::ReceiveError(e.kind()), count);
    }
}
