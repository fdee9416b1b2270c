//! Datagrams waiting to be sent: one growing byte buffer and a list of (address, range),
//! reused after every drain, with a bound on the bytes held.

use std::net::SocketAddr;

use super::crypto::Key;
use super::packet::Packet;

#[derive(Debug)]
pub(crate) struct Outbox {
    bytes: Vec<u8>,
    datagrams: Vec<(SocketAddr, usize, usize)>,
    max_bytes: usize,
    /// Datagrams not queued because the bound was reached.
    pub(crate) dropped: u64,
}

impl Outbox {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            bytes: Vec::new(),
            datagrams: Vec::new(),
            max_bytes,
            dropped: 0,
        }
    }

    /// Queues `packet` for `to`; `false` (and counted in `dropped`) if the bound is reached.
    pub(crate) fn push(
        &mut self,
        to: SocketAddr,
        packet: &Packet<'_>,
        sequence: u64,
        protocol_id: u64,
        key: &Key,
    ) -> bool {
        if !self.has_room() {
            self.dropped += 1;
            return false;
        }
        let start = self.bytes.len();
        let len = packet.encode(sequence, protocol_id, key, &mut self.bytes);
        self.datagrams.push((to, start, len));
        true
    }

    /// Whether one more datagram of the largest size fits the bound.
    pub(crate) fn has_room(&self) -> bool {
        self.bytes.len() + super::MAX_PACKET_BYTES <= self.max_bytes
    }

    pub(crate) fn len(&self) -> usize {
        self.datagrams.len()
    }

    pub(crate) fn drain(&mut self, mut send: impl FnMut(SocketAddr, &[u8])) {
        for &(to, start, len) in &self.datagrams {
            send(to, &self.bytes[start..start + len]);
        }
        self.datagrams.clear();
        self.bytes.clear();
    }

    /// Heap bytes held (capacity, not length).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.datagrams.capacity() * core::mem::size_of::<(SocketAddr, usize, usize)>()
    }
}
