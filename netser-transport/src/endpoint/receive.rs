//! The receive path: the header and fragment checks, reassembly, the receive window and
//! the acks a packet carries.

use super::header::{FragmentHeader, PacketHeader, FRAGMENT_HEADER_BYTES, MAX_PACKET_HEADER_BYTES};
use super::reassembly::{Fragment, Stored};
use super::stats;
use super::{Endpoint, Payload, ReceiveError};
use crate::sequence::sequence_difference;

impl Endpoint {
    pub(super) fn process_datagram(
        &mut self,
        now: f64,
        datagram: &[u8],
    ) -> Result<Option<(u16, Payload)>, ReceiveError> {
        let Some(&prefix) = datagram.first() else {
            return Err(ReceiveError::Truncated {
                needed: 1,
                found: 0,
            });
        };
        let limit = self.config.max_packet_size + MAX_PACKET_HEADER_BYTES + FRAGMENT_HEADER_BYTES;
        if datagram.len() > limit {
            return Err(ReceiveError::TooLarge {
                size: datagram.len(),
                max: limit,
            });
        }
        if prefix & 1 == 0 {
            let (header, header_len) = PacketHeader::read(datagram)?;
            let size = datagram.len() - header_len;
            if size > self.config.max_packet_size {
                return Err(ReceiveError::TooLarge {
                    size,
                    max: self.config.max_packet_size,
                });
            }
            self.accept(now, header, datagram.len())?;
            Ok(Some((header.sequence, Payload::Datagram(header_len))))
        } else {
            self.process_fragment(now, datagram)
        }
    }

    fn process_fragment(
        &mut self,
        now: f64,
        datagram: &[u8],
    ) -> Result<Option<(u16, Payload)>, ReceiveError> {
        let fragment = FragmentHeader::read(datagram, self.config.max_fragments)?;
        let sequence = fragment.sequence;
        let mut data = &datagram[FRAGMENT_HEADER_BYTES..];
        let mut ack = None;
        if fragment.fragment_id == 0 {
            let (header, header_len) = PacketHeader::read(data)?;
            if header.sequence != sequence {
                return Err(ReceiveError::FragmentSequenceMismatch {
                    fragment: sequence,
                    packet: header.sequence,
                });
            }
            ack = Some((header.ack, header.ack_bits));
            data = &data[header_len..];
        }
        let fragment_size = self.config.fragment_size;
        if data.len() > fragment_size {
            return Err(ReceiveError::FragmentTooBig {
                size: data.len(),
                max: fragment_size,
            });
        }
        let is_last = u16::from(fragment.fragment_id) + 1 == fragment.num_fragments;
        if (!is_last && data.len() != fragment_size) || (is_last && data.is_empty()) {
            return Err(ReceiveError::FragmentSizeMismatch {
                fragment_id: fragment.fragment_id,
                size: data.len(),
                expected: fragment_size,
            });
        }
        // The smallest packet these fragments can make must fit; the last fragment
        // knows the exact size.
        let full = usize::from(fragment.num_fragments - 1) * fragment_size;
        let size = full + if is_last { data.len() } else { 1 };
        if size > self.config.max_packet_size {
            return Err(ReceiveError::TooLarge {
                size,
                max: self.config.max_packet_size,
            });
        }
        if self.received.contains(sequence) {
            return Err(ReceiveError::Duplicate { sequence });
        }
        if self.received.is_stale(sequence) || self.reassembly.is_stale(sequence) {
            return Err(ReceiveError::Stale { sequence });
        }
        let new_packet = !self.reassembly.contains(sequence);
        let stored = self.reassembly.store(Fragment {
            sequence,
            fragment_id: fragment.fragment_id,
            num_fragments: fragment.num_fragments,
            ack,
            data,
            wire_bytes: datagram.len(),
        });
        self.sync_reassembly_drops();
        let stored = stored?;
        if new_packet {
            // As `reliable` does, the first fragment of a packet moves the receive window
            // (so the ack sent back names it, with its bit still clear): the two write
            // the same headers from the same datagrams.
            self.advance_received(sequence);
        }
        match stored {
            Stored::Incomplete => {
                self.counters.fragments_received += 1;
                Ok(None)
            }
            Stored::Complete {
                ack,
                ack_bits,
                wire_bytes,
                payload,
            } => {
                self.counters.fragments_received += 1;
                self.counters.packets_reassembled += 1;
                let header = PacketHeader {
                    sequence,
                    ack,
                    ack_bits,
                };
                self.accept(now, header, wire_bytes)?;
                Ok(Some((sequence, Payload::Reassembled(payload))))
            }
        }
    }

    fn sync_reassembly_drops(&mut self) {
        let dropped = self.reassembly.dropped();
        self.counters.drops.reassembly_expired = dropped.expired;
        self.counters.drops.reassembly_evicted = dropped.evicted;
    }

    /// Moves the receive window to `sequence` without receiving it.
    fn advance_received(&mut self, sequence: u16) {
        let newer_by = sequence_difference(sequence, self.ack);
        if newer_by > 0 {
            self.received.advance(sequence);
            self.ack_bits = if newer_by < 32 {
                self.ack_bits << newer_by
            } else {
                0
            };
            self.ack = sequence;
        }
    }

    /// Records a whole packet as received and processes the acks it carries.
    fn accept(
        &mut self,
        now: f64,
        header: PacketHeader,
        wire_bytes: usize,
    ) -> Result<(), ReceiveError> {
        let sequence = header.sequence;
        if self.received.is_stale(sequence) {
            return Err(ReceiveError::Stale { sequence });
        }
        if self.received.contains(sequence) {
            return Err(ReceiveError::Duplicate { sequence });
        }
        let bytes = u32::try_from(wire_bytes + self.config.packet_header_size).unwrap_or(u32::MAX);
        if self.received.insert(sequence, now, bytes).is_err() {
            return Err(ReceiveError::Stale { sequence });
        }
        self.counters.packets_received += 1;
        // The peer's send interval, smoothed over the gaps between packets that arrive
        // at different times: the most it holds an ack before a packet carries it.
        if let Some(last) = self.last_receive_time {
            let gap = now - last;
            if gap > 0.0 {
                self.peer_interval = if self.peer_interval == 0.0 {
                    gap
                } else {
                    0.875 * self.peer_interval + 0.125 * gap
                };
            }
        }
        self.last_receive_time = Some(now);

        let newer_by = sequence_difference(sequence, self.ack);
        if newer_by > 0 {
            self.ack_bits = if newer_by < 32 {
                (self.ack_bits << newer_by) | 1
            } else {
                1
            };
            self.ack = sequence;
        } else if -newer_by < 32 {
            self.ack_bits |= 1 << -newer_by;
        }

        self.reassembly.advance(sequence);
        self.sync_reassembly_drops();

        let mut bits = header.ack_bits;
        while bits != 0 {
            let back = bits.trailing_zeros() as u16;
            bits &= bits - 1;
            let acked = header.ack.wrapping_sub(back);
            if let Some(rtt) = self.sent.ack(acked, now) {
                if self.acks.len() >= self.config.sent_packets_buffer_size {
                    // Never drained: keep the newest half (amortised O(1) per ack).
                    let dropped = self.acks.len() - self.acks.len() / 2;
                    self.acks.drain(..dropped);
                    self.counters.acks_dropped += dropped as u64;
                }
                self.acks.push(acked);
                self.counters.packets_acked += 1;
                self.rtt_history.push(rtt);
                // As QUIC: the RTO's estimator takes a sample only from the newest
                // packet the header acks (`back == 0`), newly acked; one acked by an
                // older bit was late because an earlier ack was lost, not because of
                // the path, and would inflate the timeout.
                if back == 0 || !self.rto_sampled {
                    stats::update_rto(&mut self.stats, !self.rto_sampled, rtt, self.peer_interval);
                    self.rto_sampled = true;
                }
                self.stats.rtt = if self.has_rtt {
                    stats::smooth(self.stats.rtt, rtt, self.config.rtt_smoothing_factor)
                } else {
                    rtt
                };
                self.has_rtt = true;
            }
        }
        Ok(())
    }
}
