//! When acks go: a connection holds the acks it owes for a packet of its own to carry
//! them, up to its `ack_delay`, and reports how long it held the newest one.

use netser::NetSerialize;

use super::{packet, Connection};
use crate::sequence::{sequence_difference, sequence_less_than};

/// Packets with messages received since the connection last sent a packet: the acks
/// it owes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AcksOwed {
    /// When the first of them arrived, if any.
    pub since: Option<f64>,
    /// The oldest of their sequences.
    pub oldest: u16,
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
    /// Notes the ack owed for packet `sequence`, received at `now`.
    pub(super) fn owe_ack(&mut self, now: f64, sequence: u16) {
        match self.acks_owed.since {
            None => {
                self.acks_owed = AcksOwed {
                    since: Some(now),
                    oldest: sequence,
                }
            }
            Some(_) => {
                if sequence_less_than(sequence, self.acks_owed.oldest) {
                    self.acks_owed.oldest = sequence;
                }
            }
        }
    }

    /// When the acks owed must go, in an ack-only packet if no other carries them: the
    /// ack delay after the first arrived, or at once when many packets wait.
    pub(super) fn ack_deadline(&self) -> Option<f64> {
        let since = self.acks_owed.since?;
        let (newest, _) = self.endpoint.ack_state();
        if sequence_difference(newest, self.acks_owed.oldest) + 1 >= MAX_PACKETS_WAITING_FOR_ACK {
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
