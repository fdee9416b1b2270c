//! Building a connection packet: the channels' messages due, packed by weight under the
//! bandwidth budget, and the section of the layer above.

use netser::{NetSerialize, WriteStream};

use super::{activity, packet, Connection, UDP_IP_HEADER_BYTES};
use crate::endpoint::header::MAX_PACKET_HEADER_BYTES;

impl<Out: NetSerialize, In: NetSerialize> Connection<Out, In> {
    /// Packs a packet of the messages due, and `section` if given (its bytes and bits,
    /// which the caller checked fit [`max_section_bits`](Self::max_section_bits)), and
    /// hands it to the endpoint. Returns its sequence; `None` when there is nothing to
    /// send.
    pub(super) fn build_packet_with(
        &mut self,
        now: f64,
        section: Option<(&[u8], u64)>,
    ) -> Option<u16> {
        let channels = self.channels.len();
        let payload_bits = self.config.packet_payload_bytes() as u64 * 8;
        // Which channels have something to send, and their weights.
        let mut weights = 0u64;
        let mut pending = 0u64; // bit mask of channels with messages due
                                // Only channels that may have messages queued are looked at.
        for index in activity::bits(self.activity.queued()) {
            let channel = &self.channels[index];
            if channel.has_due(now) {
                pending |= 1 << index;
                weights += u64::from(channel.config.priority);
            } else {
                self.activity.note_queued(index, channel.queued());
            }
        }
        self.refill_budget(now);
        if self.budget <= 0.0 {
            pending = 0; // over budget: acks (and a section) only
        }
        let ack_due = self.ack_deadline().is_some_and(|deadline| now >= deadline);
        if pending == 0 && !ack_due && section.is_none() {
            return None;
        }
        let ack_delay = self.ack_delay_to_report(now);
        let ack_delay_bits = if ack_delay > 0 {
            packet::ACK_DELAY_BITS
        } else {
            0
        };
        // Each channel in turn, from a rotating start, gets its weighted share of what is
        // left, and at least room for its oldest message if that fits what is left; so
        // every channel moves and none starves the others. A section takes its room
        // first (the `section follows` bit and its bits); one larger than a packet
        // (fragmented by the endpoint) leaves the messages for the next packet.
        self.plan.clear();
        let section_bits = section.map_or(0, |(_, bits)| 1 + bits) + ack_delay_bits;
        let mut remaining = (payload_bits - 1).saturating_sub(section_bits); // and `no more channels`
        if remaining == 0 {
            pending = 0;
        }
        let start = self.rotation % channels;
        self.rotation = self.rotation.wrapping_add(1);
        for step in 0..channels {
            let index = (start + step) % channels;
            if pending & (1 << index) == 0 {
                continue;
            }
            let channel = &mut self.channels[index];
            let weight = u64::from(channel.config.priority);
            let share = remaining * weight / weights;
            weights -= weight;
            let overhead = packet::entry_overhead(channels, &channel.config);
            if overhead >= remaining {
                continue;
            }
            // Where this entry begins: messages with alignment are sized where they land.
            let start = payload_bits - 1 - section_bits.min(payload_bits - 1) - remaining;
            let (count, bits) = channel.select(now, start, overhead, share, remaining);
            if count > 0 {
                remaining -= overhead + bits;
                channel.counters.messages_packed += count as u64;
                self.plan.push((index, count));
            }
        }
        let packet_sequence = self.endpoint.next_sequence();
        if self.plan.is_empty() && section.is_none() {
            if !ack_due {
                return None; // messages due, none fit: no packet for nothing
            }
            self.counters.ack_only_packets_sent += 1;
        }
        // The payload is written straight into the endpoint's outgoing queue. Its room:
        // the packet budget, or a section larger than a packet with the tail's few bits
        // (the `no more channels` and `section follows` bits and an ack delay).
        let capacity = if self.plan.is_empty() && section.is_none() && ack_delay == 0 {
            0
        } else {
            let section_bytes = section.map_or(0, |(bytes, _)| bytes.len());
            (self.config.packet_payload_bytes() + section_bytes + 4)
                .min(self.config.endpoint.max_packet_size)
        };
        let (channels, plan) = (&mut self.channels, &self.plan);
        let mut len = 0;
        self.endpoint
            .send_packet_with(now, capacity, |buf| {
                if capacity == 0 {
                    return 0;
                }
                let mut w = WriteStream::new(buf);
                packet::write(
                    &mut w,
                    now,
                    packet_sequence,
                    channels,
                    plan,
                    ack_delay,
                    section,
                )
                .expect("the plan fits the packet budget");
                len = w.finish();
                len
            })
            .expect("packets fit max_packet_size");
        if ack_delay > 0 && self.ack_report.first_carrier.is_none() {
            self.ack_report.first_carrier = Some(packet_sequence);
        }
        self.acks_owed = Default::default();
        self.counters.packets_sent += 1;
        if len > 0 {
            self.budget -= (len + MAX_PACKET_HEADER_BYTES + UDP_IP_HEADER_BYTES) as f64;
        }
        if section.is_some() {
            self.sections.on_packet_sent(packet_sequence);
        }
        Some(packet_sequence)
    }
}
