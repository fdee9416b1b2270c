//! When acks go: a connection holds the acks it owes for a packet of its own to carry
//! them, up to its `ack_delay` (none when a packet arrives after a gap), and reports
//! how long it held the newest one.

use netser::NetSerialize;

use super::{activity, packet, Connection};
use crate::sequence::{sequence_difference, sequence_less_than};

/// Packets with messages received since the connection last sent a packet: the acks
/// it owes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AcksOwed {
    /// When the first of them arrived, if any.
    pub since: Option<f64>,
    /// The oldest of their sequences.
    pub oldest: u16,
    /// One of them arrived with a packet missing before it: the ack goes at once.
    pub gap: bool,
}

/// Acks wait at most this many packets (of the peer's sequence) before an ack-only
/// packet goes out at once: half the 32 packets a header acks, so that every packet is
/// named by at least two headers, and a frame's batch of arrivals cannot push a packet
/// out of the window before the connection is polled.
const MAX_PACKETS_WAITING_FOR_ACK: i32 = 16;

/// The delay of the newest ack the connection sends, reported in each packet it sends
/// until the peer has received one of them (it acks one of our packets at or after the
/// first that carried the report): a later packet gives the peer no new RTT sample.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AckReport {
    /// The newest sequence received, whose delay is reported.
    pub ack: u16,
    /// Our first packet that reported it.
    pub first_carrier: Option<u16>,
    /// The peer acked a packet that carried it.
    pub delivered: bool,
}

impl<Out: NetSerialize, In: NetSerialize> Connection<Out, In> {
    /// Turns the endpoint's packet acks into message acks. Only reliable channels with
    /// messages queued are told: the others have nothing an ack could release, and
    /// catch up with the newest ack when given a message.
    pub(super) fn process_acks(&mut self) {
        for sequence in self.endpoint.drain_acks() {
            if let Some(first) = self.ack_report.first_carrier {
                if !sequence_less_than(sequence, first) {
                    self.ack_report.delivered = true;
                }
            }
            self.activity.peer.on_packet_acked(sequence);
            for index in activity::bits(self.activity.reliable_queued()) {
                let channel = &mut self.channels[index];
                channel.on_packet_acked(sequence);
                self.activity.note_queued(index, channel.queued());
            }
            if self.sections.on_packet_acked(sequence) {
                self.counters.acked_sections_dropped += 1;
            }
        }
    }

    /// A packet of the peer's came in whose newest ack is `ack`: the reliable senders
    /// with messages queued learn which of them the peer missed.
    pub(super) fn on_ack_header(&mut self, now: f64, ack: u16) {
        self.activity.peer.on_ack_header(now, ack);
        for index in activity::bits(self.activity.reliable_queued()) {
            self.channels[index].on_ack_header(now, ack);
        }
    }

    /// Notes the ack owed for packet `sequence`, received at `now`.
    pub(super) fn owe_ack(&mut self, now: f64, sequence: u16) {
        let gap = self.arrived_after_a_gap(sequence);
        match self.acks_owed.since {
            None => {
                self.acks_owed = AcksOwed {
                    since: Some(now),
                    oldest: sequence,
                    gap,
                }
            }
            Some(_) => {
                if sequence_less_than(sequence, self.acks_owed.oldest) {
                    self.acks_owed.oldest = sequence;
                }
                self.acks_owed.gap |= gap;
            }
        }
    }

    /// Whether packet `sequence`, just received, shows the peer a loss it has not heard
    /// of: the packet before it is missing, or it came after a newer one (as QUIC, which
    /// acks at once on either). The peer learns of the loss from this ack a round
    /// trip after it sent the packet instead of an ack delay later, and resends that
    /// much sooner.
    fn arrived_after_a_gap(&self, sequence: u16) -> bool {
        if self.counters.packets_received < 2 {
            return false;
        }
        let (newest, bits) = self.endpoint.ack_state();
        sequence != newest || bits & 2 == 0
    }

    /// When the acks owed must go, in an ack-only packet if no other carries them: the
    /// ack delay after the first arrived, or at once when many packets wait or one of
    /// them arrived after a gap.
    pub(super) fn ack_deadline(&self) -> Option<f64> {
        let since = self.acks_owed.since?;
        let (newest, _) = self.endpoint.ack_state();
        if self.acks_owed.gap
            || sequence_difference(newest, self.acks_owed.oldest) + 1 >= MAX_PACKETS_WAITING_FOR_ACK
        {
            return Some(since);
        }
        Some(since + self.config.ack_delay)
    }

    /// The ack delay to write in the next packet, in the wire's units (0: none).
    pub(super) fn ack_delay_to_report(&mut self, now: f64) -> u16 {
        let (newest, bits) = self.endpoint.ack_state();
        if newest != self.ack_report.ack {
            self.ack_report = AckReport {
                ack: newest,
                ..AckReport::default()
            };
        }
        // With no ack delay the acks go at once and none is reported: the packets are
        // bit for bit those of a connection before ack delays.
        if self.ack_report.delivered || bits & 1 == 0 || self.config.ack_delay == 0.0 {
            return 0;
        }
        packet::ack_delay_units(self.endpoint.ack_delay(now))
    }
}

#[cfg(test)]
mod tests {
    use crate::connection::{Connection, ConnectionConfig};

    /// b holds its acks up to its ack delay while a's packets arrive in order, and acks
    /// at once the packet that shows one missing (a resends that much sooner).
    #[test]
    fn a_packet_after_a_gap_is_acked_at_once() {
        let config = ConnectionConfig::default();
        let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
        let mut b: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
        let mut packets = Vec::new();
        for (i, now) in [0.0, 0.1, 0.2, 0.3].into_iter().enumerate() {
            a.send_message(0, &(i as u8)).unwrap();
            a.handle_timeout(now);
            packets.push(a.poll_transmit(now).unwrap().to_vec());
        }
        for (packet, now) in packets[..2].iter().zip([1.0, 1.01]) {
            b.handle_datagram(now, packet).unwrap();
        }
        assert_eq!(
            b.poll_timeout(),
            Some(1.0 + config.ack_delay),
            "in order: held"
        );
        b.handle_timeout(1.01);
        assert!(b.poll_transmit(1.01).is_none());
        b.handle_timeout(1.0 + config.ack_delay);
        assert!(b.poll_transmit(1.0 + config.ack_delay).is_some());
        // Packet 2 is lost: packet 3 arrives after a gap.
        b.handle_datagram(1.1, &packets[3]).unwrap();
        assert_eq!(b.poll_timeout(), Some(1.1), "after a gap: at once");
        b.handle_timeout(1.1);
        assert!(b.poll_transmit(1.1).is_some());
        // Packet 2 arrives late, after a newer one: at once too.
        b.handle_datagram(1.2, &packets[2]).unwrap();
        assert_eq!(b.poll_timeout(), Some(1.2), "out of order: at once");
    }
}
