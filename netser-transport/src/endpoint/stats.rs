//! Round-trip time, jitter, packet loss and bandwidth estimates. RTT as the `reliable`
//! library computes it: a smoothed RTT updated on every ack and a history of recent
//! samples for min/max/average/jitter. Loss and bandwidth from the first packets on:
//! loss over the sent packets that have had time to be acked, bandwidth over every
//! packet in the sent and received windows; each is `None` until there is data for it,
//! where `reliable` reads 0 until half its window has been sent (128 packets, over 6 s
//! at 20 Hz).

use crate::sequence::SequenceBuffer;

/// The endpoint's estimates. Times in seconds, packet loss a fraction in `0.0..=1.0`,
/// bandwidth in kilobits per second (including the assumed IP + UDP header per packet).
///
/// [`rtt`](Self::rtt) moves with every ack; the others are recomputed by
/// [`Endpoint::update`](super::Endpoint::update). Loss and bandwidth are `None` ("not
/// yet known") until there is data to measure them, never a made-up 0.
///
/// # What the round-trip time includes
///
/// An RTT sample is the time from sending a packet to receiving the first packet that
/// acks it. The other side acks in the next packet it sends, so every sample includes
/// how long that reply waited: up to one send interval of the peer (at 20 packets per
/// second, up to 50 ms, 25 ms on average, even on loopback). That is the delay a resend
/// timer must allow for, and `rtt` keeps it. For the network path alone read
/// [`rtt_min`](Self::rtt_min): the smallest sample in the history is the one the peer
/// answered fastest. The header has no ack-delay field to subtract it exactly (QUIC's
/// ACK frame carries one; the packet header here is the `reliable` library's, kept
/// wire-compatible), and guessing it from the peer's send rate would be wrong whenever
/// the peer replies as soon as a packet arrives.
///
/// ```
/// use netser_transport::endpoint::{Config, Endpoint, Stats};
/// let stats = Stats::default();
/// assert_eq!(stats.rtt, 0.0);
/// assert_eq!(stats.packet_loss, None);
///
/// // Three packets in 0.1 s, none acked yet: the bandwidth is known at once, the
/// // loss only once the packets have had time to be acked (1 s without an RTT).
/// let mut endpoint = Endpoint::new(Config::default(), 0.0).unwrap();
/// for t in [0.0, 0.05, 0.1] {
///     endpoint.send_packet(t, &[0; 100]).unwrap();
/// }
/// endpoint.update(0.1);
/// assert!(endpoint.stats().sent_kbps.is_some());
/// assert_eq!(endpoint.stats().packet_loss, None);
/// endpoint.update(2.0);
/// assert_eq!(endpoint.stats().packet_loss, Some(1.0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Exponentially smoothed round-trip time; 0 until the first ack. It includes the
    /// time the peer held the ack before sending it (see [the type's docs](Self)).
    pub rtt: f64,
    /// Smallest round-trip time in the history: the best estimate of the network path's
    /// own round trip, with the least ack delay.
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
}

/// The last `capacity` RTT samples, oldest overwritten first.
#[derive(Debug, Clone)]
pub(crate) struct RttHistory {
    samples: Vec<f64>,
    capacity: usize,
    next: usize,
}

impl RttHistory {
    pub fn new(capacity: usize) -> Self {
        Self {
            samples: Vec::with_capacity(capacity),
            capacity,
            next: 0,
        }
    }

    pub fn push(&mut self, rtt: f64) {
        if self.samples.len() < self.capacity {
            self.samples.push(rtt);
        } else {
            self.samples[self.next] = rtt;
        }
        self.next = (self.next + 1) % self.capacity;
    }

    pub fn clear(&mut self) {
        self.samples.clear();
        self.next = 0;
    }

    pub fn heap_bytes(&self) -> usize {
        self.samples.capacity() * core::mem::size_of::<f64>()
    }

    /// Sets the min/max/avg RTT and the jitter fields of `stats`.
    pub fn summarize(&self, stats: &mut Stats) {
        if self.samples.is_empty() {
            stats.rtt_min = 0.0;
            stats.rtt_max = 0.0;
            stats.rtt_avg = 0.0;
            stats.jitter_avg_vs_min_rtt = 0.0;
            stats.jitter_max_vs_min_rtt = 0.0;
            stats.jitter_stddev_vs_avg_rtt = 0.0;
            return;
        }
        let count = self.samples.len() as f64;
        let (mut min, mut max, mut sum) = (f64::INFINITY, 0.0f64, 0.0);
        for &rtt in &self.samples {
            min = min.min(rtt);
            max = max.max(rtt);
            sum += rtt;
        }
        let avg = sum / count;
        let (mut jitter_sum, mut variance_sum) = (0.0, 0.0);
        for &rtt in &self.samples {
            jitter_sum += rtt - min;
            variance_sum += (rtt - avg) * (rtt - avg);
        }
        stats.rtt_min = min;
        stats.rtt_max = max;
        stats.rtt_avg = avg;
        stats.jitter_avg_vs_min_rtt = jitter_sum / count;
        stats.jitter_max_vs_min_rtt = max - min;
        stats.jitter_stddev_vs_avg_rtt = (variance_sum / count).sqrt();
    }
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

/// How long a sent packet is given to be acked before it counts as lost in
/// [`packet_loss`]: twice the largest RTT in the history (which includes the peer's ack
/// delay) plus 50 ms, or 1 s while nothing has been acked.
pub(crate) fn settle_time(stats: &Stats, has_rtt: bool) -> f64 {
    if has_rtt {
        2.0 * stats.rtt_max + 0.05
    } else {
        1.0
    }
}

/// The fraction of the sent packets older than `settle` seconds at `now` that were not
/// acked (an acked packet counts at once), or `None` when there is no such packet.
pub(crate) fn packet_loss(sent: &SequenceBuffer<SentPacket>, now: f64, settle: f64) -> Option<f64> {
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

/// Kilobits per second from `(time, bytes, counted)` samples: the counted bytes sent
/// before the last sample, over the time from the first sample to the last (n packets
/// span n - 1 intervals). `None` when there are fewer than two distinct times.
pub(crate) fn bandwidth_kbps(samples: impl Iterator<Item = (f64, u32, bool)>) -> Option<f64> {
    let (mut bytes, mut start) = (0u64, f64::INFINITY);
    let mut last: Option<(f64, u32, bool)> = None;
    for (time, packet_bytes, counted) in samples {
        start = start.min(time);
        // Keep the latest sample out of the sum; add the one it replaces.
        match last {
            Some((t, b, c)) if time >= t => {
                bytes += if c { u64::from(b) } else { 0 };
                last = Some((time, packet_bytes, counted));
            }
            Some(_) => bytes += if counted { u64::from(packet_bytes) } else { 0 },
            None => last = Some((time, packet_bytes, counted)),
        }
    }
    let finish = last?.0;
    (finish > start).then(|| bytes as f64 * 8.0 / 1000.0 / (finish - start))
}

/// Recomputes loss and bandwidth at `now` into `stats` (whose RTT summary is current),
/// smoothing each new measurement into the previous one; the first measurement is
/// taken as it is.
pub(crate) fn update_estimates(
    stats: &mut Stats,
    has_rtt: bool,
    sent: &SequenceBuffer<SentPacket>,
    received: &SequenceBuffer<ReceivedPacket>,
    now: f64,
    loss_factor: f64,
    bandwidth_factor: f64,
) {
    let settle = settle_time(stats, has_rtt);
    let blend = |current: Option<f64>, measured: Option<f64>, factor: f64| match (current, measured)
    {
        (Some(c), Some(m)) => Some(smooth(c, m, factor)),
        (c, m) => m.or(c),
    };
    stats.packet_loss = blend(
        stats.packet_loss,
        packet_loss(sent, now, settle),
        loss_factor,
    );
    let all_sent = sent.iter().map(|(_, p)| (p.time, p.bytes, true));
    stats.sent_kbps = blend(stats.sent_kbps, bandwidth_kbps(all_sent), bandwidth_factor);
    let all_received = received.iter().map(|(_, p)| (p.time, p.bytes, true));
    stats.received_kbps = blend(
        stats.received_kbps,
        bandwidth_kbps(all_received),
        bandwidth_factor,
    );
    let settled = sent
        .iter()
        .filter(|(_, p)| p.acked || now - p.time >= settle)
        .map(|(_, p)| (p.time, p.bytes, p.acked));
    stats.acked_kbps = blend(stats.acked_kbps, bandwidth_kbps(settled), bandwidth_factor);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_summary_by_hand() {
        let mut history = RttHistory::new(3);
        for rtt in [0.5, 0.1, 0.2, 0.3] {
            history.push(rtt);
        }
        // 0.5 was overwritten: samples are 0.1, 0.2, 0.3.
        let mut stats = Stats::default();
        history.summarize(&mut stats);
        assert!((stats.rtt_min - 0.1).abs() < 1e-12);
        assert!((stats.rtt_max - 0.3).abs() < 1e-12);
        assert!((stats.rtt_avg - 0.2).abs() < 1e-12);
        assert!((stats.jitter_avg_vs_min_rtt - 0.1).abs() < 1e-12);
        assert!((stats.jitter_max_vs_min_rtt - 0.2).abs() < 1e-12);
        let stddev = (0.02f64 / 3.0).sqrt();
        assert!((stats.jitter_stddev_vs_avg_rtt - stddev).abs() < 1e-12);
    }

    fn window(acked: impl Fn(u16) -> bool) -> SequenceBuffer<SentPacket> {
        let mut sent = SequenceBuffer::new(8);
        // Sequences 0..8, one every 0.1 s, 100 bytes.
        for sequence in 0..8u16 {
            sent.insert(
                sequence,
                SentPacket {
                    time: f64::from(sequence) * 0.1,
                    bytes: 100,
                    acked: acked(sequence),
                },
            )
            .unwrap();
        }
        sent
    }

    #[test]
    fn loss_counts_acked_packets_and_the_unacked_ones_old_enough() {
        let sent = window(|s| s % 2 == 1);
        // At 0.75 with 0.3 s to settle: 0..=4 are old enough (2 and 4 lost, 0 lost),
        // 1, 3, 5 and 7 acked; 6 is still in flight.
        assert_eq!(packet_loss(&sent, 0.75, 0.3), Some(3.0 / 7.0));
        // Long after: every even packet lost.
        assert_eq!(packet_loss(&sent, 10.0, 0.3), Some(0.5));
        // Nothing acked and nothing old enough: not yet known.
        let fresh = window(|_| false);
        assert_eq!(packet_loss(&fresh, 0.75, 1.0), None);
        assert_eq!(packet_loss(&fresh, 1.65, 1.0), Some(1.0));
        assert_eq!(packet_loss(&SequenceBuffer::new(8), 5.0, 1.0), None);
    }

    #[test]
    fn bandwidth_from_two_packets_on() {
        let sent = window(|s| s % 2 == 1);
        // 8 packets over 0.7 s: 7 x 100 bytes per 0.7 s = 8 kbps exactly.
        let all = bandwidth_kbps(sent.iter().map(|(_, p)| (p.time, p.bytes, true))).unwrap();
        assert!((all - 8.0).abs() < 1e-9, "{all}");
        // Two packets 0.1 s apart: 100 bytes per 0.1 s = 8 kbps, not 16.
        let two = bandwidth_kbps([(0.0, 100, true), (0.1, 100, true)].into_iter()).unwrap();
        assert!((two - 8.0).abs() < 1e-9, "{two}");
        // Acked only (1, 3, 5, 7 of 0..8): 300 bytes before the last over 0.7 s.
        let acked = bandwidth_kbps(sent.iter().map(|(_, p)| (p.time, p.bytes, p.acked))).unwrap();
        assert!((acked - 2.4 / 0.7).abs() < 1e-9, "{acked}");
        // One packet, or several at one time: not yet known.
        assert_eq!(bandwidth_kbps([(0.5, 100, true)].into_iter()), None);
        assert_eq!(
            bandwidth_kbps([(0.5, 100, true), (0.5, 9, true)].into_iter()),
            None
        );
        assert_eq!(bandwidth_kbps(core::iter::empty()), None);
    }

    #[test]
    fn estimates_start_unknown_then_take_the_first_measurement_then_smooth() {
        let mut stats = Stats::default();
        let received = SequenceBuffer::new(8);
        let mut sent = SequenceBuffer::new(8);
        update_estimates(&mut stats, false, &sent, &received, 0.0, 0.1, 0.1);
        assert_eq!(stats, Stats::default());
        sent.insert(
            0,
            SentPacket {
                time: 0.0,
                bytes: 100,
                acked: false,
            },
        )
        .unwrap();
        update_estimates(&mut stats, false, &sent, &received, 0.5, 0.1, 0.1);
        assert_eq!((stats.packet_loss, stats.sent_kbps), (None, None));
        sent.insert(
            1,
            SentPacket {
                time: 0.1,
                bytes: 100,
                acked: true,
            },
        )
        .unwrap();
        update_estimates(&mut stats, false, &sent, &received, 0.5, 0.1, 0.1);
        // 1 acked, 0 not yet old enough: no loss so far; 8 kbps at once, not 0.8.
        assert_eq!(stats.packet_loss, Some(0.0));
        assert!((stats.sent_kbps.unwrap() - 8.0).abs() < 1e-9);
        assert_eq!(stats.received_kbps, None);
        // 0 times out after 1 s without an RTT: loss 1/2 measured, smoothed by 0.1.
        update_estimates(&mut stats, false, &sent, &received, 1.5, 0.1, 0.1);
        assert!((stats.packet_loss.unwrap() - 0.05).abs() < 1e-12);
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
