//! Sections: bits of a layer above (the [snapshot](crate::snapshot) layer) carried at the
//! end of a connection packet, after the channels' messages, and the acks of the
//! packets that carried them.
//!
//! The connection keeps the only packet -> payload maps: each reliable channel's packet
//! -> message ids, and here which packets carried a section. The layer above asks which
//! of those were acked ([`Connection::drain_acked_sections`]) and keeps what each packet
//! carried in its own terms (a snapshot sequence per packet sequence).

use std::collections::VecDeque;

use netser::{Decoder, NetSerialize, ReadStream};

use super::error::ReceiveError;
use super::Connection;
use crate::sequence::SequenceBuffer;

/// A section refused by [`Connection::send_section`]. Nothing is sent when it is returned.
///
/// ```
/// use netser_transport::connection::{Connection, ConnectionConfig, SectionError};
/// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
/// let error = a.send_section(0.0, &[0; 4], 33).unwrap_err();
/// assert_eq!(error, SectionError::BitsBeyondBytes { bits: 33, len: 4 });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SectionError {
    /// The section is longer than a packet can carry
    /// ([`Connection::max_section_bits`]).
    TooLarge {
        /// Its length in bits.
        bits: u64,
        /// The most a packet carries.
        max_bits: u64,
    },
    /// `bits` is more than `bytes` holds.
    BitsBeyondBytes {
        /// The length given.
        bits: u64,
        /// The bytes given.
        len: usize,
    },
}

impl core::fmt::Display for SectionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooLarge { bits, max_bits } => write!(
                f,
                "section of {bits} bits is over the {max_bits} bits a packet carries \
                 (raise endpoint.max_packet_size to fragment larger packets)"
            ),
            Self::BitsBeyondBytes { bits, len } => {
                write!(f, "section of {bits} bits given in {len} bytes")
            }
        }
    }
}

impl std::error::Error for SectionError {}

/// A section received in a packet, handed to the callback of
/// [`Connection::handle_datagram_with`].
#[derive(Debug, Clone, Copy)]
pub struct ReceivedSection<'a> {
    /// The sequence of the packet that carried it.
    pub packet_sequence: u16,
    payload: &'a [u8],
    start: u64,
}

impl<'a> ReceivedSection<'a> {
    /// A reader positioned at the section's first bit. The section runs to the end of
    /// the packet; after it come at most 7 zero bits of padding.
    pub fn reader(&self) -> ReadStream<'a> {
        let mut r = ReadStream::new(self.payload);
        r.skip_bits(self.start)
            .expect("the section starts inside its packet");
        r
    }
}

/// Checks that a section ended at `r`'s position: fewer than 8 bits left, all zero.
///
/// # Errors
/// [`netser::ErrorKind::Custom`] at the position when anything else follows.
pub(crate) fn check_padding(r: &mut ReadStream<'_>) -> netser::Result<()> {
    let rest = r.bits_remaining();
    let position = r.bit_position();
    if rest >= 8 || r.read_bits(rest as u32)? != 0 {
        return Err(netser::Error::new(
            netser::ErrorKind::Custom("bits after the section are not zero padding"),
            position,
        ));
    }
    Ok(())
}

/// Hands the section of a parsed packet (if it has one) to `on_section`.
pub(super) fn hand_up(
    packet_sequence: u16,
    payload: &[u8],
    start: Option<u64>,
    on_section: &mut dyn FnMut(ReceivedSection<'_>) -> bool,
) -> Result<(), ReceiveError> {
    let Some(start) = start else {
        return Ok(());
    };
    let section = ReceivedSection {
        packet_sequence,
        payload,
        start,
    };
    if on_section(section) {
        Ok(())
    } else {
        Err(ReceiveError::SectionRefused)
    }
}

/// Which packets carried a section, and which of those were acked since the layer
/// above last asked: at most `sent_packets_buffer_size` of each (the endpoint's window
/// of sent packets, past which it reports no acks anyway).
#[derive(Debug)]
pub(super) struct SectionAcks {
    sent: SequenceBuffer<()>,
    acked: VecDeque<u16>,
    capacity: usize,
}

impl SectionAcks {
    pub fn new(capacity: usize) -> Self {
        Self {
            sent: SequenceBuffer::new(capacity),
            acked: VecDeque::new(),
            capacity,
        }
    }

    pub fn on_packet_sent(&mut self, sequence: u16) {
        // The connection's own sequences only move forward: never stale.
        let _ = self.sent.insert(sequence, ());
    }

    /// Returns `true` when an ack was dropped because `capacity` wait.
    pub fn on_packet_acked(&mut self, sequence: u16) -> bool {
        if self.sent.remove(sequence).is_none() {
            return false;
        }
        let dropped = self.acked.len() == self.capacity;
        if dropped {
            self.acked.pop_front();
        }
        self.acked.push_back(sequence);
        dropped
    }

    pub fn heap_bytes(capacity: usize) -> usize {
        SequenceBuffer::<()>::heap_bytes_for(capacity)
            .saturating_add(capacity.saturating_mul(core::mem::size_of::<u16>()))
    }
}

impl<Out: NetSerialize, In: NetSerialize> Connection<Out, In> {
    /// The longest section, in bits, one packet carries: its `endpoint.max_packet_size`
    /// bytes less the 2 bits that end the channels and mark the section. With the
    /// default configuration a packet is one datagram (`mtu - 9` payload bytes); raise
    /// `endpoint.max_packet_size` to let the endpoint fragment larger ones.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// // Less the end of the channel entries, the section flag and an ack delay.
    /// assert_eq!(a.max_section_bits(), 1191 * 8 - 2 - 18);
    /// ```
    pub fn max_section_bits(&self) -> u64 {
        (self.config.endpoint.max_packet_size as u64 * 8)
            .saturating_sub(2 + super::packet::ACK_DELAY_BITS)
    }

    /// The sequence the next packet will have (the one [`send_section`](Self::send_section)
    /// would return now), so a section can name earlier packets relative to its own.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert_eq!(a.next_packet_sequence(), 0);
    /// assert_eq!(a.send_section(0.0, &[1], 1), Ok(0));
    /// assert_eq!(a.next_packet_sequence(), 1);
    /// ```
    pub fn next_packet_sequence(&self) -> u16 {
        self.endpoint.next_sequence()
    }

    /// Sends `bits` bits of `bytes` as the section of a packet built now, with the
    /// messages due that fit beside it and the acks owed. Returns the packet's sequence:
    /// [`drain_acked_sections`](Self::drain_acked_sections) reports it once acked. The
    /// packet is charged to the bandwidth budget but never held back by it: the layer
    /// above keeps its own budget. Collect its datagrams with
    /// [`poll_transmit`](Self::poll_transmit).
    ///
    /// # Errors
    /// [`SectionError`] if the section is longer than
    /// [`max_section_bits`](Self::max_section_bits) or than `bytes`.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// a.send_message(1, &7).unwrap(); // goes in the same packet
    /// assert_eq!(a.send_section(0.0, &[0xff, 0x01], 9), Ok(0));
    /// assert!(a.poll_transmit(0.0).is_some());
    /// assert!(a.poll_transmit(0.0).is_none());
    /// assert_eq!(a.queued_messages(1), 0);
    /// ```
    pub fn send_section(&mut self, now: f64, bytes: &[u8], bits: u64) -> Result<u16, SectionError> {
        if bits > bytes.len() as u64 * 8 {
            return Err(SectionError::BitsBeyondBytes {
                bits,
                len: bytes.len(),
            });
        }
        let max_bits = self.max_section_bits();
        if bits > max_bits {
            return Err(SectionError::TooLarge { bits, max_bits });
        }
        self.time = now;
        let sequence = self
            .build_packet_with(now, Some((bytes, bits)))
            .expect("a packet with a section is always built");
        self.counters.sections_sent += 1;
        Ok(sequence)
    }

    /// The sequences of packets that carried a section and were acked since the last
    /// call, oldest ack first. At most `endpoint.sent_packets_buffer_size` wait; past
    /// that the oldest are dropped and counted
    /// ([`ConnectionCounters::acked_sections_dropped`](super::ConnectionCounters::acked_sections_dropped)).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default();
    /// let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
    /// let mut b: Connection<u8> = Connection::new(0.0, config).unwrap();
    /// let sequence = a.send_section(0.0, &[1], 1).unwrap();
    /// let datagram = a.poll_transmit(0.0).unwrap().to_vec();
    /// b.handle_datagram_with(0.05, &datagram, |_| true).unwrap();
    /// // The ack it owes, once no packet of b's carried it within its ack delay.
    /// let ack = b.poll_transmit(0.1).unwrap().to_vec();
    /// a.handle_datagram(0.15, &ack).unwrap();
    /// assert_eq!(a.drain_acked_sections().collect::<Vec<_>>(), [sequence]);
    /// ```
    pub fn drain_acked_sections(&mut self) -> std::collections::vec_deque::Drain<'_, u16> {
        self.sections.acked.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::ConnectionConfig;

    fn pair() -> (Connection<u8>, Connection<u8>) {
        let config = ConnectionConfig::default();
        (
            Connection::new(0.0, config.clone()).unwrap(),
            Connection::new(0.0, config).unwrap(),
        )
    }

    /// A refused section drops its packet unacked; its messages are not delivered.
    #[test]
    fn refused_section_is_not_acked() {
        let (mut a, mut b) = pair();
        a.send_message(0, &5).unwrap();
        let sequence = a.send_section(0.0, &[3], 2).unwrap();
        let datagram = a.poll_transmit(0.0).unwrap().to_vec();
        assert_eq!(
            b.handle_datagram(0.05, &datagram),
            Err(ReceiveError::SectionRefused)
        );
        assert_eq!(b.counters().sections_refused, 1);
        assert_eq!(b.receive_message(0), None);
        assert!(b.poll_transmit(0.05).is_none(), "no ack owed");
        // Taken the second time: delivered and acked.
        b.handle_datagram_with(0.06, &datagram, |s| s.reader().read_bits(2).unwrap() == 3)
            .unwrap();
        assert_eq!(b.receive_message(0), Some(5));
        assert!(
            b.poll_transmit(0.06).is_none(),
            "the ack waits for a packet of b's"
        );
        let ack = b
            .poll_transmit(0.06 + b.config().ack_delay)
            .unwrap()
            .to_vec();
        a.handle_datagram(0.2, &ack).unwrap();
        assert_eq!(a.drain_acked_sections().collect::<Vec<_>>(), [sequence]);
    }

    /// Packets without a section are never reported; a packet carrying one is, once.
    #[test]
    fn only_section_packets_are_reported() {
        let (mut a, mut b) = pair();
        a.send_message(1, &1).unwrap();
        while let Some(d) = a.poll_transmit(0.0).map(<[u8]>::to_vec) {
            b.handle_datagram(0.0, &d).unwrap();
        }
        let s = a.send_section(0.0, &[0], 8).unwrap();
        while let Some(d) = a.poll_transmit(0.0).map(<[u8]>::to_vec) {
            b.handle_datagram_with(0.0, &d, |_| true).unwrap();
        }
        for _ in 0..2 {
            b.send_message(1, &2).unwrap();
            while let Some(d) = b.poll_transmit(0.0).map(<[u8]>::to_vec) {
                a.handle_datagram(0.0, &d).unwrap();
            }
        }
        assert_eq!(a.drain_acked_sections().collect::<Vec<_>>(), [s]);
    }

    /// A section larger than a packet is refused; with a larger `max_packet_size` the
    /// endpoint fragments it and the receiver gets it whole.
    #[test]
    fn large_sections_fragment() {
        let (mut a, _) = pair();
        let big = vec![0xa5u8; 3000];
        assert!(matches!(
            a.send_section(0.0, &big, 24_000),
            Err(SectionError::TooLarge { .. })
        ));
        let mut config = ConnectionConfig::default();
        config.endpoint.max_packet_size = 4096;
        config.endpoint.max_reassembly_bytes = 2 * 4096;
        let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
        let mut b: Connection<u8> = Connection::new(0.0, config).unwrap();
        a.send_section(0.0, &big, 24_000).unwrap();
        let mut got = Vec::new();
        let mut datagrams = 0;
        while let Some(d) = a.poll_transmit(0.0).map(<[u8]>::to_vec) {
            assert!(d.len() <= 1200);
            datagrams += 1;
            b.handle_datagram_with(0.0, &d, |s| {
                let mut r = s.reader();
                got = (0..3000).map(|_| r.read_bits(8).unwrap() as u8).collect();
                check_padding(&mut r).is_ok()
            })
            .unwrap();
        }
        assert_eq!(datagrams, 3);
        assert_eq!(got, big);
    }

    /// Acks waiting for the layer above are bounded by the sent-packet window.
    #[test]
    fn acked_sections_are_bounded() {
        let mut acks = SectionAcks::new(4);
        for s in 0..6 {
            acks.on_packet_sent(s);
        }
        let dropped: Vec<bool> = (0..6).map(|s| acks.on_packet_acked(s)).collect();
        // 0 and 1 left the sent window of 4 before their ack: not ours any more.
        assert_eq!(dropped, [false, false, false, false, false, false]);
        assert_eq!(acks.acked, [2, 3, 4, 5]);
        acks.on_packet_sent(6);
        assert!(acks.on_packet_acked(6));
        assert_eq!(acks.acked, [3, 4, 5, 6]);
    }
}
