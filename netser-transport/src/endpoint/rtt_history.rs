//! The recent RTT samples behind min/max/average RTT and jitter, summarized in constant
//! time: running sums and two queues of the samples that can still become the minimum
//! or the maximum, kept as samples come and go, instead of a pass over the history on
//! every update.

use std::collections::VecDeque;

use super::stats::Stats;

/// Samples are kept in whole nanoseconds, so the sums are exact integers (no drift
/// however long the connection lives, and a variance of exactly 0 for a constant RTT).
const NANOS_PER_SECOND: f64 = 1e9;

/// The largest sample counted, about 4.9 hours: it keeps the sum of squares of 4096
/// samples within a `u128`. An RTT that long is only a packet acked hours after it left.
const MAX_SAMPLE_NANOS: u64 = 1 << 44;

fn to_nanos(rtt: f64) -> u64 {
    // `as` saturates (NaN to 0), then the cap.
    ((rtt * NANOS_PER_SECOND).round() as u64).min(MAX_SAMPLE_NANOS)
}

fn to_seconds(nanos: f64) -> f64 {
    nanos / NANOS_PER_SECOND
}

/// The last `capacity` RTT samples, oldest overwritten first, with their running sum,
/// sum of squares, minimum and maximum.
#[derive(Debug, Clone)]
pub(crate) struct RttHistory {
    samples: Vec<u64>,
    capacity: usize,
    /// The slot the next sample goes to.
    next: usize,
    sum: u128,
    sum_squares: u128,
    /// The values of the queues' fronts (0 when empty), kept here so that a summary
    /// reads no heap memory: on a server of many connections that memory is rarely in
    /// the cache.
    min: u64,
    max: u64,
    /// Slots of the samples that are the smallest of everything pushed after them, oldest
    /// first (so their values increase): the front is the minimum. A sample with a
    /// smaller or equal one after it can never be the minimum again.
    min_candidates: VecDeque<u16>,
    /// The same for the maximum (values decrease).
    max_candidates: VecDeque<u16>,
}

impl RttHistory {
    /// `capacity` is at most [`MAX_RTT_HISTORY_SIZE`](super::MAX_RTT_HISTORY_SIZE), so a
    /// slot fits a `u16`.
    pub fn new(capacity: usize) -> Self {
        debug_assert!((1..=usize::from(u16::MAX)).contains(&capacity));
        Self {
            samples: Vec::with_capacity(capacity),
            capacity,
            next: 0,
            sum: 0,
            sum_squares: 0,
            min: 0,
            max: 0,
            min_candidates: VecDeque::with_capacity(capacity),
            max_candidates: VecDeque::with_capacity(capacity),
        }
    }

    /// Heap bytes of a history of `capacity` samples.
    pub fn heap_bytes_for(capacity: usize) -> usize {
        capacity.saturating_mul(core::mem::size_of::<u64>() + 2 * core::mem::size_of::<u16>())
    }

    pub fn heap_bytes(&self) -> usize {
        self.samples.capacity() * core::mem::size_of::<u64>()
            + (self.min_candidates.capacity() + self.max_candidates.capacity())
                * core::mem::size_of::<u16>()
    }

    pub fn push(&mut self, rtt: f64) {
        let sample = to_nanos(rtt);
        let slot = self.next;
        let mut front_left = false;
        if self.samples.len() < self.capacity {
            self.samples.push(sample);
        } else {
            let old = self.samples[slot];
            self.sum -= u128::from(old);
            self.sum_squares -= u128::from(old) * u128::from(old);
            // The oldest sample leaves; it is the front of a queue if it is there at all.
            if self.min_candidates.front() == Some(&(slot as u16)) {
                self.min_candidates.pop_front();
                front_left = true;
            }
            if self.max_candidates.front() == Some(&(slot as u16)) {
                self.max_candidates.pop_front();
                front_left = true;
            }
            self.samples[slot] = sample;
        }
        self.sum += u128::from(sample);
        self.sum_squares += u128::from(sample) * u128::from(sample);
        let samples = &self.samples;
        while self
            .min_candidates
            .back()
            .is_some_and(|&s| samples[usize::from(s)] >= sample)
        {
            self.min_candidates.pop_back();
        }
        self.min_candidates.push_back(slot as u16);
        while self
            .max_candidates
            .back()
            .is_some_and(|&s| samples[usize::from(s)] <= sample)
        {
            self.max_candidates.pop_back();
        }
        self.max_candidates.push_back(slot as u16);
        // The fronts change when the new sample emptied a queue (it is the front) or
        // the old front left (rare but for a run that rises or falls all the way).
        if front_left || self.min_candidates.len() == 1 || self.max_candidates.len() == 1 {
            self.min = samples[usize::from(self.min_candidates[0])];
            self.max = samples[usize::from(self.max_candidates[0])];
        }
        self.next = (slot + 1) % self.capacity;
    }

    pub fn clear(&mut self) {
        self.samples.clear();
        self.next = 0;
        self.sum = 0;
        self.sum_squares = 0;
        self.min_candidates.clear();
        self.max_candidates.clear();
        self.min = 0;
        self.max = 0;
    }

    /// The samples in seconds, in slot order (for checks against a plain pass).
    #[cfg(test)]
    pub fn samples(&self) -> impl Iterator<Item = f64> + '_ {
        self.samples.iter().map(|&s| to_seconds(s as f64))
    }

    /// Sets the min/max/avg RTT and the jitter fields of `stats`, in constant time (the
    /// endpoint calls it only when a sample came or went since the last call).
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
        let (min, max) = (self.min, self.max);
        let count = self.samples.len() as u128;
        let avg = self.sum as f64 / count as f64;
        // n^2 * variance = n * sum(x^2) - sum(x)^2, exactly, and never negative.
        let scaled_variance = count * self.sum_squares - self.sum * self.sum;
        stats.rtt_min = to_seconds(min as f64);
        stats.rtt_max = to_seconds(max as f64);
        stats.rtt_avg = to_seconds(avg);
        stats.jitter_avg_vs_min_rtt = to_seconds(avg - min as f64);
        stats.jitter_max_vs_min_rtt = to_seconds((max - min) as f64);
        stats.jitter_stddev_vs_avg_rtt = to_seconds((scaled_variance as f64).sqrt() / count as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_by_hand() {
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
        history.clear();
        history.summarize(&mut stats);
        assert_eq!(stats, Stats::default());
    }

    #[test]
    fn a_constant_rtt_has_no_jitter_at_all() {
        let mut history = RttHistory::new(64);
        for _ in 0..1000 {
            history.push(0.1 + 1.0 / 60.0);
        }
        let mut stats = Stats::default();
        history.summarize(&mut stats);
        assert_eq!(stats.jitter_stddev_vs_avg_rtt, 0.0);
        assert_eq!(stats.jitter_max_vs_min_rtt, 0.0);
        assert_eq!(stats.rtt_min, stats.rtt_max);
    }

    /// Against a plain pass over the same samples, through rising, falling and random
    /// runs (a rising run makes the minimum leave on every push).
    #[test]
    fn constant_time_summary_equals_a_pass_over_the_samples() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for capacity in [1, 2, 7, 64, 512] {
            let mut history = RttHistory::new(capacity);
            for i in 0..3000u32 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let rtt = match (i / 300) % 4 {
                    0 => f64::from(i % 300) * 0.001,
                    1 => 0.3 - f64::from(i % 300) * 0.001,
                    2 => (state % 1_000_000) as f64 * 1e-6,
                    _ => [0.05, 0.25, 0.05][(state % 3) as usize],
                };
                history.push(rtt);
                let mut fast = Stats::default();
                history.summarize(&mut fast);
                let samples: Vec<f64> = history.samples().collect();
                let n = samples.len() as f64;
                let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
                let max = samples.iter().copied().fold(0.0, f64::max);
                let avg = samples.iter().sum::<f64>() / n;
                let variance = samples.iter().map(|s| (s - avg) * (s - avg)).sum::<f64>() / n;
                assert_eq!(fast.rtt_min, min, "capacity {capacity}, push {i}");
                assert_eq!(fast.rtt_max, max, "capacity {capacity}, push {i}");
                assert!((fast.rtt_avg - avg).abs() < 1e-12);
                assert!((fast.jitter_avg_vs_min_rtt - (avg - min)).abs() < 1e-12);
                assert!((fast.jitter_stddev_vs_avg_rtt - variance.sqrt()).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn absurd_samples_are_capped_not_overflowed() {
        let mut history = RttHistory::new(4096);
        let mut stats = Stats::default();
        for rtt in [f64::INFINITY, 1e30] {
            for _ in 0..5000 {
                history.push(rtt);
            }
            history.summarize(&mut stats);
            assert_eq!(stats.rtt_max, MAX_SAMPLE_NANOS as f64 / NANOS_PER_SECOND);
            assert_eq!(stats.jitter_stddev_vs_avg_rtt, 0.0);
        }
        for rtt in [f64::NAN, -1.0] {
            for _ in 0..5000 {
                history.push(rtt);
            }
            history.summarize(&mut stats);
            assert_eq!(stats.rtt_max, 0.0); // NaN and negative samples count as 0
        }
    }
}
