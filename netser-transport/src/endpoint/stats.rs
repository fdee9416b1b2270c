//! Round-trip time, jitter, packet loss and bandwidth estimates, computed the way the
//! `reliable` library does: a smoothed RTT updated on every ack, a history of recent RTT
//! samples for min/max/average/jitter, and loss and bandwidth measured over the older half
//! of the sent and received windows (where packets have had time to be acked).

use crate::sequence::SequenceBuffer;

/// The endpoint's estimates. Times in seconds, packet loss a fraction in `0.0..=1.0`,
/// bandwidth in kilobits per second (including the assumed IP + UDP header per packet).
///
/// [`rtt`](Self::rtt) moves with every ack; the others are recomputed by
/// [`Endpoint::update`](super::Endpoint::update).
///
/// ```
/// use netser_transport::endpoint::Stats;
/// let stats = Stats::default();
/// assert_eq!(stats.rtt, 0.0);
/// assert_eq!(stats.packet_loss, 0.0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Exponentially smoothed round-trip time.
    pub rtt: f64,
    /// Smallest round-trip time in the history.
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
    /// Smoothed fraction of sent packets not acked, over the older half of the sent window.
    pub packet_loss: f64,
    /// Smoothed sent bandwidth.
    pub sent_kbps: f64,
    /// Smoothed received bandwidth.
    pub received_kbps: f64,
    /// Smoothed bandwidth of sent packets that were acked.
    pub acked_kbps: f64,
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

/// The older half of a window: `capacity / 2` sequences starting at its oldest.
fn older_half<T>(buffer: &SequenceBuffer<T>) -> impl Iterator<Item = &T> + '_ {
    let oldest = buffer.oldest();
    (0..(buffer.capacity() / 2) as u16)
        .filter_map(move |offset| buffer.get(oldest.wrapping_add(offset)))
}

/// The fraction of sent packets in the older half of the window that were not acked,
/// or `None` when that half is empty.
pub(crate) fn packet_loss(sent: &SequenceBuffer<SentPacket>) -> Option<f64> {
    let (mut count, mut lost) = (0u32, 0u32);
    for packet in older_half(sent) {
        count += 1;
        lost += u32::from(!packet.acked);
    }
    (count > 0).then(|| f64::from(lost) / f64::from(count))
}

/// Kilobits per second over the older half of a window, from `(time, bytes)` samples;
/// `None` when there are fewer than two distinct times.
pub(crate) fn bandwidth_kbps<'a, T: 'a>(
    buffer: &'a SequenceBuffer<T>,
    sample: impl Fn(&T) -> Option<(f64, u32)>,
) -> Option<f64> {
    let (mut bytes, mut start, mut finish) = (0u64, f64::INFINITY, f64::NEG_INFINITY);
    for (time, packet_bytes) in older_half(buffer).filter_map(sample) {
        bytes += u64::from(packet_bytes);
        start = start.min(time);
        finish = finish.max(time);
    }
    (finish > start).then(|| bytes as f64 * 8.0 / 1000.0 / (finish - start))
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

    #[test]
    fn loss_and_bandwidth_over_the_older_half() {
        let mut sent = SequenceBuffer::new(8);
        // Sequences 0..8, one every 0.1 s, 100 bytes; odd ones acked.
        for sequence in 0..8u16 {
            sent.insert(
                sequence,
                SentPacket {
                    time: f64::from(sequence) * 0.1,
                    bytes: 100,
                    acked: sequence % 2 == 1,
                },
            )
            .unwrap();
        }
        // The older half is 0..4: two of four lost.
        assert_eq!(packet_loss(&sent), Some(0.5));
        // 400 bytes between t=0 and t=0.3: 3200 bits / 0.3 s = 10.667 kbps.
        let kbps = bandwidth_kbps(&sent, |p| Some((p.time, p.bytes))).unwrap();
        assert!((kbps - 3.2 / 0.3).abs() < 1e-9);
        // Acked only: 1 and 3, 200 bytes over 0.2 s = 8 kbps.
        let acked = bandwidth_kbps(&sent, |p| p.acked.then_some((p.time, p.bytes))).unwrap();
        assert!((acked - 8.0).abs() < 1e-9);
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
