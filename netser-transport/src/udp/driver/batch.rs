//! Datagrams to different addresses, gathered to leave in one system call (Linux's
//! `sendmmsg`): a server's tick sends one snapshot to each client, and a batch saves a
//! system call's fixed cost on all but one of them. Elsewhere, and once the kernel
//! refused the call, each datagram leaves on its own `send_to` as it is sent.

use std::net::SocketAddr;

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
}
