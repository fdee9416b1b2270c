//! Datagrams to different addresses, gathered to leave in one system call (Linux's
//! `sendmmsg`): a server's tick sends one snapshot to each client, and a batch saves a
//! system call's fixed cost on all but one of them. Elsewhere, and once the kernel
//! refused the call, each datagram leaves on its own `send_to` as it is sent.

use std::io;
use std::net::SocketAddr;

use tracing::warn;

use super::{sys, DropReason, UdpDriver};

/// Most datagrams in one batch: past a few dozen a larger batch saves nothing more, and
/// it bounds what a batch holds to `MAX_BATCH` datagrams.
pub(super) const MAX_BATCH: usize = 64;

/// The datagrams gathered, their bytes end to end.
pub(super) struct Batch {
    /// Off where the platform has no `sendmmsg`, or its kernel refused it.
    enabled: bool,
    bytes: Vec<u8>,
    /// Each datagram's address and the range of its bytes in `bytes`.
    datagrams: Vec<(SocketAddr, usize, usize)>,
    /// Tests: the next batch is refused as a kernel without the call would.
    #[cfg(test)]
    pub(super) refuse: bool,
}

impl Batch {
    pub(super) fn new() -> Self {
        Self {
            enabled: cfg!(target_os = "linux"),
            bytes: Vec::new(),
            datagrams: Vec::new(),
            #[cfg(test)]
            refuse: false,
        }
    }

    /// Datagrams gathered.
    pub(super) fn len(&self) -> usize {
        self.datagrams.len()
    }

    pub(super) fn is_full(&self) -> bool {
        self.datagrams.len() >= MAX_BATCH
    }

    /// Gathers `datagram` for `to`, unless batching is off (then it must leave now).
    pub(super) fn push(&mut self, to: SocketAddr, datagram: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(datagram);
        self.datagrams.push((to, start, self.bytes.len()));
        true
    }

    /// The gathered bytes and datagrams; the batch is empty afterwards.
    pub(super) fn take(&mut self) -> (Vec<u8>, Vec<(SocketAddr, usize, usize)>) {
        (
            std::mem::take(&mut self.bytes),
            std::mem::take(&mut self.datagrams),
        )
    }

    /// Returns the buffers [`take`](Self::take) gave, for their capacity.
    pub(super) fn give_back(
        &mut self,
        mut bytes: Vec<u8>,
        mut datagrams: Vec<(SocketAddr, usize, usize)>,
    ) {
        bytes.clear();
        datagrams.clear();
        self.bytes = bytes;
        self.datagrams = datagrams;
    }

    pub(super) fn disable(&mut self) {
        self.enabled = false;
    }

    pub(super) fn is_enabled(&self) -> bool {
        self.enabled
    }
}

impl UdpDriver {
    /// Sends `datagrams`, each an address and the range of its bytes in `bytes`, as
    /// [`send`](UdpDriver::send) of each in turn would, then hands the kernel the batch
    /// they gathered: the same datagrams leave in the same order, with the same counts,
    /// drops and queueing. A datagram that would join the batch leaves straight from
    /// `bytes` (a server's outbox, where netcode sealed it) instead of being copied into
    /// the batch first; the rest (a simulator, a burst, the send queue, a platform or
    /// kernel without `sendmmsg`) take `send`'s own path.
    pub(crate) fn send_laid_out(&mut self, bytes: &[u8], datagrams: &[(SocketAddr, usize, usize)]) {
        // What was gathered before leaves first.
        self.send_batch();
        // `datagrams[run..i]` wait to leave together, straight from `bytes`.
        let mut run = 0;
        for (i, &(to, start, end)) in datagrams.iter().enumerate() {
            let len = end - start;
            let mut straight = self.send_sim.is_none()
                && self.batch.is_enabled()
                && len <= self.config.max_datagram_size
                && self.send_queue.is_empty()
                && !self.burst.joins(to, len);
            if straight && self.burst.len() > 0 {
                // As in `send`: a burst gathered earlier leaves before this datagram
                // (and the run is empty: it left before the burst began).
                self.send_burst();
                straight = self.send_queue.is_empty() && self.batch.is_enabled();
            }
            if straight {
                self.burst.sent(to, len);
                if i + 1 - run == MAX_BATCH {
                    self.send_batch_of(bytes, &datagrams[run..=i]);
                    run = i + 1;
                }
                continue;
            }
            self.send_batch_of(bytes, &datagrams[run..i]);
            run = i + 1;
            // Counted there when dropped.
            let _ = self.send(to, &bytes[start..end]);
            // Nothing may wait behind the run that leaves next.
            self.send_batch();
        }
        self.send_batch_of(bytes, &datagrams[run..]);
    }

    /// Hands the kernel the batch gathered so far in as few `sendmmsg` calls as it
    /// takes: what the kernel's full buffer leaves goes to the send queue, a datagram it
    /// refuses is dropped and counted, and a kernel without the call gets one `send_to`
    /// each from then on.
    pub(super) fn send_batch(&mut self) {
        if self.batch.len() == 0 {
            return;
        }
        let (bytes, datagrams) = self.batch.take();
        self.send_batch_of(&bytes, &datagrams);
        self.batch.give_back(bytes, datagrams);
    }

    /// [`send_batch`](Self::send_batch) of `datagrams`, each an address and the range
    /// of its bytes in `bytes`, wherever those live (the batch's buffer, or a caller's
    /// for [`send_laid_out`](UdpDriver::send_laid_out)).
    fn send_batch_of(&mut self, bytes: &[u8], datagrams: &[(SocketAddr, usize, usize)]) {
        let mut next = 0;
        while next < datagrams.len() {
            if !self.send_queue.is_empty() {
                for &(to, start, end) in &datagrams[next..] {
                    // Counted and logged by `enqueue` when the queue is full.
                    let _ = self.enqueue(to, bytes[start..end].to_vec());
                }
                break;
            }
            let timer = self.start_timer();
            #[cfg(test)]
            let result = if std::mem::take(&mut self.batch.refuse) {
                Err(io::ErrorKind::Unsupported.into())
            } else {
                sys::send_many(&self.socket, bytes, &datagrams[next..])
            };
            #[cfg(not(test))]
            let result = sys::send_many(&self.socket, bytes, &datagrams[next..]);
            self.stop_timer(timer);
            let (to, start, end) = datagrams[next];
            match result {
                Ok(sent) if sent > 0 => {
                    for &(_, start, end) in &datagrams[next..next + sent] {
                        self.count_sent(end - start);
                    }
                    next += sent;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.send_would_block += 1;
                    let _ = self.enqueue(to, bytes[start..end].to_vec());
                    next += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if sys::is_unsupported(&e) => {
                    warn!(local = %self.local_addr, %e,
                        "udp: the kernel refused a batched send; one datagram per call from now on");
                    self.batch.disable();
                    for &(to, start, end) in &datagrams[next..] {
                        let _ = self.send_now(to, &bytes[start..end]);
                    }
                    break;
                }
                // Zero sent, or the first datagram's own error (unreachable, ...).
                result => {
                    let kind = result.err().map_or(io::ErrorKind::Other, |e| e.kind());
                    self.stats.dropped_send_error += 1;
                    let count = self.stats.dropped_send_error;
                    self.dropped(to, DropReason::SendError(kind), count);
                    next += 1;
                }
            }
        }
    }
}
