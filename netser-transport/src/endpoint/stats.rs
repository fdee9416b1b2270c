//! Round-trip time, jitter, packet loss and bandwidth estimates. RTT as TCP (RFC 6298)
//! and QUIC compute it: a smoothed RTT and its variance from one sample per ack header
//! (less the ack delay the peer reports, when it does), the smallest sample since the
//! start, and a history of recent samples for min/max/average/jitter (in
//! `rtt_history`). Loss and bandwidth from the first packets on: loss over the sent
//! packets that have had time to be acked, bandwidth over every packet in the sent and
//! received windows (from the running totals in `windows`); each is `None` until there
//! is data for it, where `reliable` reads 0 until half its window has been sent (128
//! packets, over 6 s at 20 Hz).

/// The endpoint's estimates. Times in seconds, packet loss a fraction in `0.0..=1.0`,
/// bandwidth in kilobits per second (including the assumed IP + UDP header per packet).
///
/// The RTT fields move with every ack; the others are recomputed by
/// [`Endpoint::handle_timeout`](super::Endpoint::handle_timeout). Loss and bandwidth are
/// `None` ("not yet known") until there is data to measure them, never a made-up 0.
///
/// # What the round-trip time includes
///
/// An RTT sample is the time from sending a packet to receiving the first packet that
/// acks it, taken from the newest packet each ack header names (as QUIC). The peer may
/// hold an ack until it has a packet to send (a [`Connection`](crate::connection)
/// holds it up to its `ack_delay`) and reports how long it held it; that delay is
/// subtracted, so [`rtt`](Self::rtt), [`rtt_min`](Self::rtt_min) and the jitter are the
/// network path's round trip, plus the time between a datagram's arrival and the
/// `handle_datagram` call that takes it in (up to a frame of the receiving loop).
/// [`min_rtt`](Self::min_rtt) is the smallest since the start. With the bare endpoint, whose peer reports no delay
/// ([`Endpoint::handle_datagram`](super::Endpoint::handle_datagram)), the samples keep
/// the delay: up to one send interval of the peer. The retransmission timeout
/// [`rto`](Self::rto) adds the peer's ack delay back, since a resend must wait for it.
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, Stats};
/// let stats = Stats::default();
/// assert_eq!(stats.rtt, 0.0);
/// assert_eq!(stats.packet_loss, None);
///
/// // Three packets in 0.1 s, none acked yet: the bandwidth is known at once, the
/// // loss only once the packets have had time to be acked (1 s without an RTT).
/// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// for t in [0.0, 0.05, 0.1] {
///     endpoint.send_packet(t, &[0; 100]).unwrap();
/// }
/// endpoint.handle_timeout(0.1);
/// assert!(endpoint.stats().sent_kbps.is_some());
/// assert_eq!(endpoint.stats().packet_loss, None);
/// endpoint.handle_timeout(2.0);
/// assert_eq!(endpoint.stats().packet_loss, Some(1.0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// The round-trip time of the path: smoothed as TCP does (RFC 6298: each sample
    /// weighs 1/8), less the ack delays the peer reports (see [the type's docs](Self));
    /// 0 until the first ack. The same value as [`smoothed_rtt`](Self::smoothed_rtt), under
    /// the name a game reads. (Until this release it was the `reliable` library's figure,
    /// smoothed by 1/400 with the ack delays in, which kept its first samples for
    /// minutes.)
    pub rtt: f64,
    /// Round-trip time smoothed as TCP does (RFC 6298: each sample weighs 1/8), less the
    /// reported ack delays; 0 until the first ack. It follows a change of path within a
    /// few packets.
    pub smoothed_rtt: f64,
    /// The smallest round trip of the path since the connection began (each sample less
    /// its reported ack delay, as QUIC's `min_rtt`); 0 until the first ack. The floor
    /// of [`rtt`](Self::rtt): what the path takes without queues on the way.
    pub min_rtt: f64,
    /// Mean deviation of the RTT samples from [`smoothed_rtt`](Self::smoothed_rtt)
    /// (RFC 6298's RTTVAR: each sample weighs 1/4); 0 until the first ack.
    pub rtt_variance: f64,
    /// Retransmission timeout: how long to wait for the ack of a packet before counting
    /// it lost and resending what it carried, as TCP (RFC 6298) and QUIC compute it:
    /// `smoothed_rtt + max(4 * rtt_variance, 1 ms)` plus the peer's ack delay (the
    /// smoothed interval between the packets it sends, the longest it holds an ack; for
    /// a peer that reports its ack delays, as a connection does, no more than the
    /// largest it reported, as QUIC adds the peer's `max_ack_delay`), at least
    /// [`MIN_RTO`] (10 ms); 0 until the first ack. As in QUIC, only the newest
    /// packet an ack header names gives a sample: a packet acked by an older bit was
    /// acked late because it waited for the peer's next packet or an earlier ack was
    /// lost, not because the path was slow.
    pub rto: f64,
    /// Smallest round-trip time in the history (the recent samples, less their reported
    /// ack delays).
    pub rtt_min: f64,
    /// Largest round-trip time in the history.
    pub rtt_max: f64,
    /// Mean round-trip time over the history.
    pub rtt_avg: f64,
    /// Mean of `rtt - rtt_min` over the history.
    pub jitter_avg_vs_min_rtt: f64,
    /// Largest `rtt - rtt_min` in the history.
    pub jitter_max_vs_min_rtt: f64,
    /// Standard deviation of the history around `rtt_avg`.
    pub jitter_stddev_vs_avg_rtt: f64,
    /// Smoothed fraction of sent packets not acked, over the packets in the sent window
    /// that have had time to be acked (sent more than twice the largest RTT ago plus
    /// 50 ms, or 1 s while there is no RTT sample). `None` until there is one.
    pub packet_loss: Option<f64>,
    /// Smoothed sent bandwidth over the sent window; `None` until two packets have been
    /// sent at different times.
    pub sent_kbps: Option<f64>,
    /// Smoothed received bandwidth over the received window; `None` until two packets
    /// have been received at different times.
    pub received_kbps: Option<f64>,
    /// Smoothed bandwidth of sent packets that were acked, over the packets that have had
    /// time to be acked; `None` until two of them were sent at different times.
    pub acked_kbps: Option<f64>,
}

/// The smallest [`Stats::rto`]: 10 ms.
///
/// ```
/// use netser_transport::endpoint::{Stats, MIN_RTO};
/// assert_eq!(MIN_RTO, 0.01);
/// assert_eq!(Stats::default().rto, 0.0); // no ack yet
/// ```
pub const MIN_RTO: f64 = 0.01;

/// The clock granularity RFC 6298 adds at least of to the smoothed RTT: 1 ms, as QUIC.
const RTO_GRANULARITY: f64 = 0.001;

/// Takes an RTT sample into `smoothed_rtt`, `rtt_variance` and `rto` (RFC 6298 section 2:
/// the first sample sets the smoothed RTT and half of it the variance).
pub(crate) fn update_rto(stats: &mut Stats, first: bool, sample: f64, ack_interval: f64) {
    if first {
        stats.smoothed_rtt = sample;
        stats.rtt_variance = sample / 2.0;
    } else {
        stats.rtt_variance = 0.75 * stats.rtt_variance + 0.25 * (stats.smoothed_rtt - sample).abs();
        stats.smoothed_rtt = 0.875 * stats.smoothed_rtt + 0.125 * sample;
    }
    set_rto(stats, ack_interval);
}

/// Sets `rto` from the smoothed RTT and its variance, allowing `ack_delay` for the
/// peer's ack delay.
pub(crate) fn set_rto(stats: &mut Stats, ack_delay: f64) {
    stats.rto = (stats.smoothed_rtt + (4.0 * stats.rtt_variance).max(RTO_GRANULARITY) + ack_delay)
        .max(MIN_RTO);
}

/// What the endpoint remembers about a packet it sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SentPacket {
    pub time: f64,
    /// Datagram bytes plus the assumed IP + UDP header, per datagram.
    pub bytes: u32,
    pub acked: bool,
}

/// What the endpoint remembers about a packet it received.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReceivedPacket {
    pub time: f64,
    pub bytes: u32,
    /// It was newer than every packet in the window when it arrived. Such packets
    /// arrive in sequence order, and every other packet arrived after one of them with
    /// a newer sequence, so the oldest of them has the earliest time in the window.
    pub in_order: bool,
}

/// Moves `current` towards `sample` by `factor`, snapping when they are already equal
/// (so a steady value settles exactly instead of creeping).
pub(crate) fn smooth(current: f64, sample: f64, factor: f64) -> f64 {
    if (current - sample).abs() > 1e-9 {
        current + (sample - current) * factor
    } else {
        sample
    }
}

/// How long a sent packet is given to be acked before it counts as lost in the packet
/// loss: twice the largest RTT in the history (which includes the peer's ack delay)
/// plus 50 ms, or 1 s while nothing has been acked.
pub(crate) fn settle_time(stats: &Stats, has_rtt: bool) -> f64 {
    if has_rtt {
        2.0 * stats.rtt_max + 0.05
    } else {
        1.0
    }
}

/// Loss and bandwidth measured at one update, before smoothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    pub packet_loss: Option<f64>,
    pub sent_kbps: Option<f64>,
    pub received_kbps: Option<f64>,
    pub acked_kbps: Option<f64>,
}

impl Measured {
    /// Smooths each measurement into `stats`; the first is taken as it is.
    pub fn blend_into(self, stats: &mut Stats, loss_factor: f64, bandwidth_factor: f64) {
        let blend =
            |current: Option<f64>, measured: Option<f64>, factor: f64| match (current, measured) {
                (Some(c), Some(m)) => Some(smooth(c, m, factor)),
                (c, m) => m.or(c),
            };
        stats.packet_loss = blend(stats.packet_loss, self.packet_loss, loss_factor);
        stats.sent_kbps = blend(stats.sent_kbps, self.sent_kbps, bandwidth_factor);
        stats.received_kbps = blend(stats.received_kbps, self.received_kbps, bandwidth_factor);
        stats.acked_kbps = blend(stats.acked_kbps, self.acked_kbps, bandwidth_factor);
    }
}

/// The plain definitions, a pass over every packet in the windows: what the endpoint's
/// running totals must agree with.
#[cfg(test)]
pub(crate) mod reference {
    use super::{Measured, ReceivedPacket, SentPacket};
    use crate::sequence::{sequence_greater_than, SequenceBuffer};

    /// The fraction of the sent packets older than `settle` seconds at `now` that were
    /// not acked (an acked packet counts at once), or `None` when there is no such packet.
    pub fn packet_loss(sent: &SequenceBuffer<SentPacket>, now: f64, settle: f64) -> Option<f64> {
        let (mut count, mut lost) = (0u32, 0u32);
        for (_, packet) in sent.iter() {
            if packet.acked {
                count += 1;
            } else if now - packet.time >= settle {
                count += 1;
                lost += 1;
            }
        }
        (count > 0).then(|| f64::from(lost) / f64::from(count))
    }

    /// Kilobits per second from `(sequence, time, bytes, counted)` samples: the counted
    /// bytes of every sample but the latest (the latest time; of several at that time,
    /// the newest sequence), over the time from the first sample to the latest. `None`
    /// when there are fewer than two distinct times.
    pub fn bandwidth_kbps(samples: &[(u16, f64, u32, bool)]) -> Option<f64> {
        let latest = samples.iter().copied().reduce(|a, b| {
            if b.1 > a.1 || (b.1 == a.1 && sequence_greater_than(b.0, a.0)) {
                b
            } else {
                a
            }
        })?;
        let start = samples.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
        let bytes: u64 = samples
            .iter()
            .filter(|s| s.0 != latest.0 && s.3)
            .map(|s| u64::from(s.2))
            .sum();
        (latest.1 > start).then(|| bytes as f64 * 8.0 / 1000.0 / (latest.1 - start))
    }

    pub fn measure(
        sent: &SequenceBuffer<SentPacket>,
        received: &SequenceBuffer<ReceivedPacket>,
        now: f64,
        settle: f64,
    ) -> Measured {
        let all_sent: Vec<_> = sent
            .iter()
            .map(|(s, p)| (s, p.time, p.bytes, true))
            .collect();
        let all_received: Vec<_> = received
            .iter()
            .map(|(s, p)| (s, p.time, p.bytes, true))
            .collect();
        let settled: Vec<_> = sent
            .iter()
            .filter(|(_, p)| p.acked || now - p.time >= settle)
            .map(|(s, p)| (s, p.time, p.bytes, p.acked))
            .collect();
        Measured {
            packet_loss: packet_loss(sent, now, settle),
            sent_kbps: bandwidth_kbps(&all_sent),
            received_kbps: bandwidth_kbps(&all_received),
            acked_kbps: bandwidth_kbps(&settled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_bandwidth_from_two_packets_on() {
        use reference::bandwidth_kbps;
        // Two packets 0.1 s apart: 100 bytes per 0.1 s = 8 kbps, not 16.
        let two = bandwidth_kbps(&[(0, 0.0, 100, true), (1, 0.1, 100, true)]).unwrap();
        assert!((two - 8.0).abs() < 1e-9, "{two}");
        // The latest is left out even when it comes first, and of two at the latest
        // time, the newer sequence.
        let latest_first =
            bandwidth_kbps(&[(2, 0.1, 7, true), (1, 0.1, 100, true), (0, 0.0, 100, true)]).unwrap();
        assert!((latest_first - 16.0).abs() < 1e-9, "{latest_first}");
        // Uncounted bytes are not summed.
        let uncounted = bandwidth_kbps(&[(0, 0.0, 100, false), (1, 0.1, 100, true)]).unwrap();
        assert_eq!(uncounted, 0.0);
        // One packet, or several at one time: not yet known.
        assert_eq!(bandwidth_kbps(&[(0, 0.5, 100, true)]), None);
        assert_eq!(
            bandwidth_kbps(&[(0, 0.5, 100, true), (1, 0.5, 9, true)]),
            None
        );
        assert_eq!(bandwidth_kbps(&[]), None);
    }

    #[test]
    fn estimates_start_unknown_then_take_the_first_measurement_then_smooth() {
        let mut stats = Stats::default();
        let unknown = Measured {
            packet_loss: None,
            sent_kbps: None,
            received_kbps: None,
            acked_kbps: None,
        };
        unknown.blend_into(&mut stats, 0.1, 0.1);
        assert_eq!(stats, Stats::default());
        let first = Measured {
            packet_loss: Some(0.0),
            sent_kbps: Some(8.0),
            ..unknown
        };
        first.blend_into(&mut stats, 0.1, 0.1);
        // Taken at once, not 0.8.
        assert_eq!(stats.packet_loss, Some(0.0));
        assert_eq!(stats.sent_kbps, Some(8.0));
        assert_eq!(stats.received_kbps, None);
        let second = Measured {
            packet_loss: Some(0.5),
            ..unknown
        };
        second.blend_into(&mut stats, 0.1, 0.1);
        // Smoothed by 0.1; a measure not known this time keeps the last value.
        assert!((stats.packet_loss.unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(stats.sent_kbps, Some(8.0));
    }

    #[test]
    fn rto_follows_rfc_6298() {
        let mut stats = Stats::default();
        update_rto(&mut stats, true, 0.1, 0.0);
        // SRTT = R, RTTVAR = R / 2, RTO = SRTT + 4 * RTTVAR.
        assert!((stats.rto - 0.3).abs() < 1e-12);
        update_rto(&mut stats, false, 0.1, 0.0);
        // RTTVAR = 3/4 * 0.05 + 1/4 * 0; SRTT stays.
        assert!((stats.rtt_variance - 0.0375).abs() < 1e-12);
        assert!((stats.rto - 0.25).abs() < 1e-12);
        // A steady RTT: the variance decays, the RTO comes down to the RTT plus the
        // granularity, never under the floor.
        for _ in 0..200 {
            update_rto(&mut stats, false, 0.1, 0.0);
        }
        assert!((stats.rto - 0.101).abs() < 1e-6, "{}", stats.rto);
        let mut lan = Stats::default();
        for first in [true, false, false] {
            update_rto(&mut lan, first, 0.0001, 0.0);
        }
        for _ in 0..200 {
            update_rto(&mut lan, false, 0.0001, 0.0);
        }
        assert_eq!(lan.rto, MIN_RTO);
        // A late sample raises it at once.
        update_rto(&mut stats, false, 0.3, 0.0);
        assert!(stats.rto > 0.3, "{}", stats.rto);
    }

    #[test]
    fn packets_get_twice_the_largest_rtt_to_be_acked() {
        let stats = Stats {
            rtt_max: 0.2,
            ..Stats::default()
        };
        assert!((settle_time(&stats, true) - 0.45).abs() < 1e-12);
        assert_eq!(settle_time(&stats, false), 1.0);
    }

    #[test]
    fn smoothing_converges_and_snaps() {
        let mut value = 0.0;
        for _ in 0..200 {
            value = smooth(value, 1.0, 0.1);
        }
        assert!((value - 1.0).abs() < 1e-8);
        assert_eq!(smooth(1.0 + 1e-12, 1.0, 0.1), 1.0);
    }
}
