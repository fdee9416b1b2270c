//! The send path: a packet's header and payload (or its fragments) written into the
//! outgoing queue.

use core::ops::Range;

use super::header::{FragmentHeader, PacketHeader, FRAGMENT_HEADER_BYTES, MAX_PACKET_HEADER_BYTES};
use super::{Endpoint, QueuedTransmit, SendError};

impl Endpoint {
    /// Sends `payload` as the next packet: one datagram, or fragments when it is longer
    /// than [`Config::fragment_above`](super::Config::fragment_above). The datagrams
    /// wait for [`poll_transmit`](Self::poll_transmit). Returns the packet's sequence;
    /// it will be reported by [`drain_acks`](Self::drain_acks) once the other side
    /// receives it. An empty payload is allowed (a packet that only carries acks).
    ///
    /// To write the payload straight into the outgoing queue instead of copying it
    /// there, see [`send_packet_with`](Self::send_packet_with).
    ///
    /// # Errors
    ///
    /// [`SendError::TooLarge`] if `payload` is longer than
    /// [`Config::max_packet_size`](super::Config::max_packet_size); nothing is sent and
    /// the sequence does not advance.
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// assert_eq!(endpoint.send_packet(0.0, &[7; 2500]), Ok(0));
    /// let sizes: Vec<usize> = std::iter::from_fn(|| endpoint.poll_transmit().map(|t| t.data.len())).collect();
    /// // fragment header 5 (+ packet header 8 on fragment 0) + 1024, 1024, 452 bytes
    /// assert_eq!(sizes, [5 + 8 + 1024, 5 + 1024, 5 + 452]);
    /// ```
    pub fn send_packet(&mut self, now: f64, payload: &[u8]) -> Result<u16, SendError> {
        self.send_packet_with(now, payload.len(), |buf| {
            buf.copy_from_slice(payload);
            payload.len()
        })
    }

    /// Sends the next packet, its payload written by `write` straight into the
    /// outgoing queue (no copy of it from a buffer of your own). `write` is handed
    /// `capacity` bytes (their contents unspecified) and returns how many of them,
    /// from the start, it wrote. The datagrams are the same as
    /// [`send_packet`](Self::send_packet)'s for the same payload, fragments included
    /// (a payload longer than [`Config::fragment_above`](super::Config::fragment_above)
    /// is cut into fragments after it is written).
    ///
    /// Ask for the most the payload can take, not more: the queue keeps room for it.
    ///
    /// # Errors
    ///
    /// Nothing is sent and the sequence does not advance when:
    /// - [`SendError::TooLarge`]: `capacity` is above
    ///   [`Config::max_packet_size`](super::Config::max_packet_size) (`write` is not
    ///   called);
    /// - [`SendError::WrittenPastCapacity`]: `write` returned a length above
    ///   `capacity`.
    ///
    /// Both are counted in [`Counters::packets_too_large_to_send`](super::Counters).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint, SendError};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// let sequence = endpoint.send_packet_with(0.0, 64, |buf| {
    ///     buf[..5].copy_from_slice(b"hello");
    ///     5
    /// });
    /// assert_eq!(sequence, Ok(0));
    /// let datagram = endpoint.poll_transmit().unwrap().data.to_vec();
    ///
    /// // The same bytes as sending the payload from a buffer.
    /// let mut other = Endpoint::new(0.0, Config::default()).unwrap();
    /// other.send_packet(0.0, b"hello").unwrap();
    /// assert_eq!(other.poll_transmit().unwrap().data, &datagram[..]);
    ///
    /// assert_eq!(
    ///     endpoint.send_packet_with(0.0, 8, |_| 9),
    ///     Err(SendError::WrittenPastCapacity { written: 9, capacity: 8 })
    /// );
    /// assert_eq!(endpoint.next_sequence(), 1);
    /// ```
    pub fn send_packet_with(
        &mut self,
        now: f64,
        capacity: usize,
        write: impl FnOnce(&mut [u8]) -> usize,
    ) -> Result<u16, SendError> {
        let max = self.config.max_packet_size;
        if capacity > max {
            self.counters.packets_too_large_to_send += 1;
            return Err(SendError::TooLarge {
                size: capacity,
                max,
            });
        }
        if self.next_transmit == self.transmits.len() {
            // Everything handed out before has been sent: reuse the buffers.
            self.outgoing_used = 0;
            self.transmits.clear();
            self.next_transmit = 0;
        }
        // The payload goes after room for the longest header, the header just before
        // it once its length is known.
        let payload_start = self.outgoing_used + MAX_PACKET_HEADER_BYTES;
        let room = payload_start + capacity;
        if self.outgoing.len() < room {
            self.outgoing.resize(room, 0);
        }
        let written = write(&mut self.outgoing[payload_start..room]);
        if written > capacity {
            self.counters.packets_too_large_to_send += 1;
            return Err(SendError::WrittenPastCapacity { written, capacity });
        }
        let sequence = self.sequence;
        self.sequence = sequence.wrapping_add(1);
        self.update.time = now;
        let (header, header_len) = PacketHeader {
            sequence,
            ack: self.ack,
            ack_bits: self.ack_bits,
        }
        .encode();
        let per_datagram = self.config.packet_header_size;
        let payload_end = payload_start + written;
        let wire_bytes = if written <= self.config.fragment_above {
            let start = payload_start - header_len;
            self.outgoing[start..payload_start].copy_from_slice(&header[..header_len]);
            self.outgoing_used = payload_end;
            self.transmits.push(QueuedTransmit {
                sequence,
                start,
                end: payload_end,
            });
            per_datagram + header_len + written
        } else {
            self.queue_fragments(sequence, &header[..header_len], payload_start..payload_end)
        };
        self.sent
            .insert(sequence, now, u32::try_from(wire_bytes).unwrap_or(u32::MAX));
        self.counters.packets_sent += 1;
        Ok(sequence)
    }

    /// Queues the fragments of packet `sequence`, whose payload is in the outgoing
    /// buffer at `payload` (after every datagram queued before it): the fragments are
    /// written after it. Returns their bytes on the wire.
    fn queue_fragments(&mut self, sequence: u16, header: &[u8], payload: Range<usize>) -> usize {
        let fragment_size = self.config.fragment_size;
        let per_datagram = self.config.packet_header_size;
        let num_fragments = payload.len().div_ceil(fragment_size);
        let room =
            payload.end + payload.len() + header.len() + num_fragments * FRAGMENT_HEADER_BYTES;
        if self.outgoing.len() < room {
            self.outgoing.resize(room, 0);
        }
        let mut at = payload.end;
        let mut wire_bytes = 0;
        for fragment_id in 0..num_fragments {
            let start = at;
            let fragment_header = FragmentHeader {
                sequence,
                fragment_id: fragment_id as u8,
                num_fragments: num_fragments as u16,
            }
            .encode();
            self.outgoing[at..at + FRAGMENT_HEADER_BYTES].copy_from_slice(&fragment_header);
            at += FRAGMENT_HEADER_BYTES;
            if fragment_id == 0 {
                self.outgoing[at..at + header.len()].copy_from_slice(header);
                at += header.len();
            }
            let from = payload.start + fragment_id * fragment_size;
            let to = (from + fragment_size).min(payload.end);
            self.outgoing.copy_within(from..to, at);
            at += to - from;
            self.transmits.push(QueuedTransmit {
                sequence,
                start,
                end: at,
            });
            wire_bytes += per_datagram + at - start;
        }
        self.outgoing_used = at;
        self.counters.fragments_sent += num_fragments as u64;
        wire_bytes
    }
}
