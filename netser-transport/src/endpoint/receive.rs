//! The receive path: the header and fragment checks, reassembly, the receive window and
//! the acks a packet carries.

use super::header::{FragmentHeader, PacketHeader, FRAGMENT_HEADER_BYTES, MAX_PACKET_HEADER_BYTES};
use super::reassembly::{Fragment, Stored};
use super::stats;
use super::{Endpoint, Payload, ReceiveError};
use crate::sequence::{sequence_difference, sequence_less_than};

impl Endpoint {
    pub(super) fn process_datagram(
        &mut self,
        now: f64,
        datagram: &[u8],
        ack_delay: f64,
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
            self.accept(now, header, datagram.len(), ack_delay)?;
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
                // The layer above reads a reassembled payload only after this, so the
                // acks of fragment 0's header are taken without an ack delay.
                self.accept(now, header, wire_bytes, 0.0)?;
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
            self.ack_received_at = None;
        }
    }

    /// Records a whole packet as received and processes the acks it carries;
    /// `ack_delay` is how long the peer says it held the newest of them.
    fn accept(
        &mut self,
        now: f64,
        header: PacketHeader,
        wire_bytes: usize,
        ack_delay: f64,
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
            self.ack_received_at = Some(now);
        } else if newer_by == 0 {
            // The packet whose first fragment moved the window is now whole.
            self.ack_received_at = Some(now);
            self.ack_bits |= 1;
        } else if -newer_by < 32 {
            self.ack_bits |= 1 << -newer_by;
        }

        if self.reassembly.advance(sequence) {
            self.sync_reassembly_drops();
        }

        let mut bits = self.unseen_acks(header.ack, header.ack_bits);
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
                // As QUIC: only the newest packet the header acks (`back == 0`), newly
                // acked, gives an RTT sample (and the first ack, whatever its bit). A
                // packet acked by an older bit waited for the peer's next packet, or
                // an earlier ack was lost: its time says little about the path. The
                // peer's reported ack delay is how long it held that newest ack.
                if back == 0 || !self.update.has_rtt {
                    let delay = if back == 0 { ack_delay } else { 0.0 };
                    self.take_rtt_sample(rtt, delay);
                }
            }
        }
        Ok(())
    }

    /// The bits of an ack header (`ack`, `ack_bits`) that no earlier header set: a
    /// peer repeats each ack in up to 32 headers, and looking each one up in the sent
    /// window again was most of the cost of taking a packet in. Only a header whose
    /// `ack` names a packet already sent joins the seen acks, so a forged header that
    /// acks packets not yet sent cannot hide their real acks later.
    fn unseen_acks(&mut self, ack: u16, ack_bits: u32) -> u32 {
        if !sequence_less_than(ack, self.sequence) {
            return ack_bits;
        }
        let (seen_ack, seen_bits) = self.seen_acks;
        let newer_by = sequence_difference(ack, seen_ack);
        // The seen bits in the header's alignment (bit `n` is `ack - n`).
        let seen = match newer_by {
            0 => seen_bits,
            1..=31 => seen_bits << newer_by,
            -31..=-1 => seen_bits >> -newer_by,
            _ => 0,
        };
        let unseen = ack_bits & !seen;
        self.seen_acks = match newer_by {
            d if d >= 0 => (ack, seen | ack_bits),
            d if d > -32 => (seen_ack, seen_bits | (ack_bits << -d)),
            _ => (seen_ack, seen_bits),
        };
        unseen
    }

    /// Takes an RTT sample (`rtt` from send to ack, of which the peer held the ack
    /// `ack_delay`) into every estimate: the path's round trip is the sample less the
    /// delay, as QUIC adjusts it. The peer is trusted below the whole sample: one that
    /// overstates its delay lowers only the timeouts of what is sent to it. A delay at or
    /// past the whole sample is not taken off (on a path shorter than the two sides'
    /// frame clocks can tell, both stamps are coarse), so the estimate never falls to 0
    /// from a sample above 0.
    fn take_rtt_sample(&mut self, rtt: f64, ack_delay: f64) {
        let finite = |x: f64| if x.is_finite() { x.max(0.0) } else { 0.0 };
        let (rtt, ack_delay) = (finite(rtt), finite(ack_delay));
        let path_rtt = if ack_delay < rtt {
            rtt - ack_delay
        } else {
            rtt
        };
        self.stats.min_rtt = if self.update.has_rtt {
            self.stats.min_rtt.min(path_rtt)
        } else {
            path_rtt
        };
        self.rtt_history.push(path_rtt);
        self.update.rtt_changed = true;
        let allowance = self.ack_allowance();
        stats::update_rto(&mut self.stats, !self.update.has_rtt, path_rtt, allowance);
        self.stats.rtt = self.stats.smoothed_rtt;
        self.update.has_rtt = true;
    }
}
