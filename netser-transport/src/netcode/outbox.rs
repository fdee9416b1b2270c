//! Datagrams waiting to be sent: one growing byte buffer and a list of (address, range),
//! handed out one by one by `poll` and reused once all are out, with a bound on the bytes
//! held. The buffer keeps its length when reused, so a packet is sealed straight into it
//! (no zero-fill, no copy of the payload first).

use std::net::SocketAddr;

use super::crypto::Key;
use super::packet::Packet;

#[derive(Debug)]
pub(crate) struct Outbox {
    /// Grows to the most ever queued at once; bytes past `used` are stale.
    bytes: Vec<u8>,
    /// Bytes of `bytes` that hold queued datagrams.
    used: usize,
    /// Each datagram's address and the range (start, end) of its bytes in `bytes`.
    datagrams: Vec<(SocketAddr, usize, usize)>,
    /// The next datagram `poll` hands out.
    next: usize,
    max_bytes: usize,
    /// Datagrams not queued because the bound was reached.
    pub(crate) dropped: u64,
}

impl Outbox {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            bytes: Vec::new(),
            used: 0,
            datagrams: Vec::new(),
            next: 0,
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
        self.reuse_if_sent();
        if !self.has_room() {
            self.dropped += 1;
            return false;
        }
        let start = self.used;
        let len = packet.encoded_len(sequence);
        let end = start + len;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        packet.encode_into(sequence, protocol_id, key, &mut self.bytes[start..end]);
        self.used = end;
        self.datagrams.push((to, start, end));
        true
    }

    /// Empties the buffers once every datagram has been handed out.
    fn reuse_if_sent(&mut self) {
        if self.next > 0 && self.next == self.datagrams.len() {
            self.datagrams.clear();
            self.used = 0;
            self.next = 0;
        }
    }

    /// Whether one more datagram of the largest size fits the bound.
    pub(crate) fn has_room(&mut self) -> bool {
        self.reuse_if_sent();
        self.used + super::MAX_PACKET_BYTES <= self.max_bytes
    }

    /// Datagrams not yet handed out.
    pub(crate) fn len(&self) -> usize {
        self.datagrams.len() - self.next
    }

    /// The next datagram to send, oldest first.
    pub(crate) fn poll(&mut self) -> Option<super::Transmit<'_>> {
        match self.datagrams.get(self.next) {
            Some(&(to, start, end)) => {
                self.next += 1;
                Some(super::Transmit {
                    to,
                    data: &self.bytes[start..end],
                })
            }
            None => {
                self.reuse_if_sent();
                None
            }
        }
    }

    /// Hands every datagram not yet handed out to `send` at once: the buffer they lie in
    /// and each one's address and range in it, oldest first (the layout a batched
    /// system call takes, so they need no copy). They count as handed out afterwards.
    pub(crate) fn drain(&mut self, send: impl FnOnce(&[u8], &[(SocketAddr, usize, usize)])) {
        if self.next < self.datagrams.len() {
            send(&self.bytes[..self.used], &self.datagrams[self.next..]);
            self.next = self.datagrams.len();
        }
        self.reuse_if_sent();
    }

    /// Heap bytes held (capacity, not length).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.datagrams.capacity() * core::mem::size_of::<(SocketAddr, usize, usize)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound holds until every datagram is out: one poll does not make room, the
    /// last one does, and the buffers are reused.
    #[test]
    fn room_comes_back_once_every_datagram_is_out() {
        let to: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut outbox = Outbox::new(2 * crate::netcode::MAX_PACKET_BYTES);
        let payload = [7u8; 1200];
        let packet = Packet::Payload(&payload);
        let mut queued = 0;
        while outbox.push(to, &packet, queued, 1, &[0; 32]) {
            queued += 1;
        }
        assert_eq!((queued, outbox.dropped), (2, 1));
        assert_eq!(outbox.poll().map(|t| t.to), Some(to));
        assert!(!outbox.has_room());
        assert_eq!(outbox.len(), 1);
        assert!(outbox.poll().is_some());
        assert!(outbox.poll().is_none());
        assert!(outbox.has_room());
        assert_eq!(outbox.len(), 0);
        assert!(outbox.push(to, &packet, 2, 1, &[0; 32]));
    }

    /// Datagrams written over the stale bytes of a reused buffer are the bytes a fresh
    /// `Packet::encode` writes, for every packet type sent through an outbox.
    #[test]
    fn reused_buffer_writes_what_encode_writes() {
        let to: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let key = [4u8; 32];
        let mut outbox = Outbox::new(8 * crate::netcode::MAX_PACKET_BYTES);
        // Fill the buffer with other bytes first, then send them all.
        for sequence in 0..4 {
            assert!(outbox.push(to, &Packet::Payload(&[0xEE; 1200]), sequence, 9, &[1; 32]));
        }
        while outbox.poll().is_some() {}
        let token = [6u8; crate::netcode::CHALLENGE_TOKEN_BYTES];
        let packets = [
            Packet::Payload(&[1, 2, 3]),
            Packet::KeepAlive {
                client_index: 3,
                max_clients: 64,
            },
            Packet::Challenge {
                token_sequence: 5,
                token_data: &token,
            },
            Packet::Payload(&[9; 1100]),
            Packet::Disconnect,
            Packet::ConnectionDenied,
        ];
        for (sequence, packet) in (1u64 << 20..).zip(&packets) {
            assert!(outbox.push(to, packet, sequence, 7, &key));
        }
        for (sequence, packet) in (1u64 << 20..).zip(&packets) {
            let mut fresh = Vec::new();
            packet.encode(sequence, 7, &key, &mut fresh);
            assert_eq!(outbox.poll().map(|t| t.data.to_vec()), Some(fresh));
        }
        assert!(outbox.poll().is_none());
    }

    /// `drain` hands out what `poll` would, in its order, from where `poll` left off;
    /// afterwards nothing is left and the buffers are reused.
    #[test]
    fn drain_hands_out_what_poll_would() {
        let key = [3u8; 32];
        let fill = |outbox: &mut Outbox| {
            for (i, len) in [10usize, 1200, 0, 55].into_iter().enumerate() {
                let to = SocketAddr::from(([127, 0, 0, 1], 1 + i as u16));
                assert!(outbox.push(to, &Packet::Payload(&vec![i as u8; len]), i as u64, 5, &key));
            }
        };
        let mut polled = Outbox::new(8 * crate::netcode::MAX_PACKET_BYTES);
        fill(&mut polled);
        let mut want = Vec::new();
        while let Some(t) = polled.poll() {
            want.push((t.to, t.data.to_vec()));
        }
        let mut drained = Outbox::new(8 * crate::netcode::MAX_PACKET_BYTES);
        fill(&mut drained);
        let first = drained.poll().map(|t| (t.to, t.data.to_vec()));
        assert_eq!(first.as_ref(), want.first());
        let mut got = Vec::new();
        drained.drain(|bytes, datagrams| {
            got.extend(
                datagrams
                    .iter()
                    .map(|&(to, start, end)| (to, bytes[start..end].to_vec())),
            );
        });
        assert_eq!(got, want[1..]);
        assert_eq!(drained.len(), 0);
        assert!(drained.poll().is_none());
        drained.drain(|_, _| panic!("nothing is left to drain"));
        // Reused from the start: the next datagram is written at offset 0.
        fill(&mut drained);
        drained.drain(|_, datagrams| assert_eq!(datagrams[0].1, 0));
    }
}
