//! The sent and received windows, with the totals that packet loss and bandwidth are
//! measured from kept up to date as packets are sent, acked, received and leave the
//! window. An update then costs what changed since the last one (the packets that have
//! newly had time to be acked), not a pass over every packet in both windows.
//!
//! Times are read as a clock that never goes back: a time earlier than one already
//! stored is stored as that one. The windows then keep their times in order (sent
//! packets by sequence; received packets by arrival), which is what lets the oldest
//! time, the newest time and the packets that have had time to be acked be found
//! without a search.

use super::stats::{ReceivedPacket, SentPacket};
use crate::sequence::{sequence_greater_than, SequenceBuffer, StaleSequence};

/// Kilobits per second for `bytes` over the time from `start` to `finish`; `None` when
/// no time passed. As a measure over packets: the bytes of every packet but the latest,
/// over the time from the first to the latest (n packets span n - 1 intervals).
fn kbps(bytes: u64, start: f64, finish: f64) -> Option<f64> {
    (finish > start).then(|| bytes as f64 * 8.0 / 1000.0 / (finish - start))
}

/// The packets sent, newest `capacity` of them (every sequence in turn, so the window
/// is contiguous and its times increase with the sequence).
#[derive(Debug, Clone)]
pub(crate) struct SentWindow {
    packets: SequenceBuffer<SentPacket>,
    /// Bytes of every packet in the window.
    bytes: u64,
    /// Acked packets in the window and their bytes.
    acked: u32,
    acked_bytes: u64,
    /// The newest acked packet in the window.
    newest_acked: Option<u16>,
    /// The oldest `settled` packets have had time to be acked (see
    /// [`settle_time`](super::stats::settle_time)); `settled_unacked` of them were not.
    settled: usize,
    settled_unacked: u32,
    latest_time: f64,
}

impl SentWindow {
    pub fn new(capacity: usize) -> Self {
        Self {
            packets: SequenceBuffer::new(capacity),
            bytes: 0,
            acked: 0,
            acked_bytes: 0,
            newest_acked: None,
            settled: 0,
            settled_unacked: 0,
            latest_time: f64::NEG_INFINITY,
        }
    }

    pub fn packets(&self) -> &SequenceBuffer<SentPacket> {
        &self.packets
    }

    pub fn reset(&mut self) {
        self.packets.reset();
        self.bytes = 0;
        self.acked = 0;
        self.acked_bytes = 0;
        self.newest_acked = None;
        self.settled = 0;
        self.settled_unacked = 0;
        self.latest_time = f64::NEG_INFINITY;
    }

    /// The oldest packet's sequence.
    fn first(&self) -> u16 {
        self.packets
            .sequence()
            .wrapping_sub(self.packets.len() as u16)
    }

    fn packet(&self, sequence: u16) -> &SentPacket {
        self.packets
            .get(sequence)
            .expect("the sent window is contiguous")
    }

    /// Records packet `sequence` (the next one) sent at `now`, of `bytes` on the wire.
    pub fn insert(&mut self, sequence: u16, now: f64, bytes: u32) {
        debug_assert_eq!(sequence, self.packets.sequence());
        let time = now.max(self.latest_time);
        self.latest_time = time;
        let Self {
            packets,
            bytes: total,
            acked,
            acked_bytes,
            newest_acked,
            settled,
            settled_unacked,
            ..
        } = self;
        let packet = SentPacket {
            time,
            bytes,
            acked: false,
        };
        // The newest sequence always fits; only the oldest packet can leave.
        let _ = packets.insert_evicting(sequence, packet, |old_sequence, old| {
            *total -= u64::from(old.bytes);
            if old.acked {
                *acked -= 1;
                *acked_bytes -= u64::from(old.bytes);
                if *newest_acked == Some(old_sequence) {
                    *newest_acked = None;
                }
            }
            if *settled > 0 {
                *settled -= 1;
                if !old.acked {
                    *settled_unacked -= 1;
                }
            }
        });
        *total += u64::from(bytes);
    }

    /// Marks `sequence` acked at `now`; its RTT sample if it was in the window and not
    /// acked before.
    pub fn ack(&mut self, sequence: u16, now: f64) -> Option<f64> {
        let first = self.first();
        let packet = self.packets.get_mut(sequence)?;
        if packet.acked {
            return None;
        }
        packet.acked = true;
        let (time, bytes) = (packet.time, packet.bytes);
        self.acked += 1;
        self.acked_bytes += u64::from(bytes);
        if usize::from(sequence.wrapping_sub(first)) < self.settled {
            self.settled_unacked -= 1;
        }
        if self
            .newest_acked
            .is_none_or(|newest| sequence_greater_than(sequence, newest))
        {
            self.newest_acked = Some(sequence);
        }
        Some((now - time).max(0.0))
    }

    /// Moves the boundary of the packets that have had `settle` seconds at `now` to be
    /// acked. Times increase with the sequence, so those packets are the oldest ones and
    /// the boundary moves over only the packets whose state changed (forward as time
    /// passes, back when the settle time grows).
    pub fn settle(&mut self, now: f64, settle: f64) {
        let first = self.first();
        let old_enough = |packet: &SentPacket| now - packet.time >= settle;
        while self.settled < self.packets.len() {
            let packet = self.packet(first.wrapping_add(self.settled as u16));
            if !old_enough(packet) {
                break;
            }
            if !packet.acked {
                self.settled_unacked += 1;
            }
            self.settled += 1;
        }
        while self.settled > 0 {
            let packet = self.packet(first.wrapping_add(self.settled as u16 - 1));
            if old_enough(packet) {
                break;
            }
            if !packet.acked {
                self.settled_unacked -= 1;
            }
            self.settled -= 1;
        }
    }

    /// The fraction of packets not acked, over the acked ones and those that have had
    /// time to be (as of the last [`settle`](Self::settle)).
    pub fn packet_loss(&self) -> Option<f64> {
        let count = self.acked + self.settled_unacked;
        (count > 0).then(|| f64::from(self.settled_unacked) / f64::from(count))
    }

    /// Bandwidth over every packet in the window.
    pub fn sent_kbps(&self) -> Option<f64> {
        if self.packets.is_empty() {
            return None;
        }
        let latest = self.packet(self.packets.sequence().wrapping_sub(1));
        let start = self.packet(self.first()).time;
        kbps(self.bytes - u64::from(latest.bytes), start, latest.time)
    }

    /// Bandwidth of the acked packets, over the packets that are acked or have had time
    /// to be: their acked bytes but the latest packet's, from the first to the latest.
    pub fn acked_kbps(&self) -> Option<f64> {
        let first = self.first();
        let last_settled = (self.settled > 0).then(|| first.wrapping_add(self.settled as u16 - 1));
        let latest = match (last_settled, self.newest_acked) {
            (Some(settled), Some(acked)) if sequence_greater_than(acked, settled) => acked,
            (Some(settled), _) => settled,
            (None, acked) => acked?,
        };
        let start = if self.settled > 0 {
            first
        } else {
            // Nothing has had time to be acked yet: every packet in the window was sent
            // within the settle time, and the first acked one starts the measure.
            (0..self.packets.len() as u16)
                .map(|i| first.wrapping_add(i))
                .find(|&s| self.packet(s).acked)?
        };
        let latest = self.packet(latest);
        let latest_bytes = if latest.acked { latest.bytes } else { 0 };
        kbps(
            self.acked_bytes - u64::from(latest_bytes),
            self.packet(start).time,
            latest.time,
        )
    }
}

/// The packets received: those in the newest `capacity` sequences, in any order.
#[derive(Debug, Clone)]
pub(crate) struct ReceivedWindow {
    packets: SequenceBuffer<ReceivedPacket>,
    /// Bytes of every packet in the window.
    bytes: u64,
    /// The newest sequence stored.
    newest: Option<u16>,
    /// The oldest packet that was the newest when it arrived (`in_order`): it has the
    /// earliest arrival time in the window (see [`ReceivedPacket::in_order`]).
    first_in_order: Option<u16>,
    /// The packet that arrived last (of those that arrived at that time, the newest).
    latest: Option<u16>,
    latest_time: f64,
}

impl ReceivedWindow {
    pub fn new(capacity: usize) -> Self {
        Self {
            packets: SequenceBuffer::new(capacity),
            bytes: 0,
            newest: None,
            first_in_order: None,
            latest: None,
            latest_time: f64::NEG_INFINITY,
        }
    }

    pub fn packets(&self) -> &SequenceBuffer<ReceivedPacket> {
        &self.packets
    }

    pub fn reset(&mut self) {
        self.packets.reset();
        self.bytes = 0;
        self.newest = None;
        self.first_in_order = None;
        self.latest = None;
        self.latest_time = f64::NEG_INFINITY;
    }

    pub fn contains(&self, sequence: u16) -> bool {
        self.packets.contains(sequence)
    }

    pub fn is_stale(&self, sequence: u16) -> bool {
        self.packets.is_stale(sequence)
    }

    /// Records packet `sequence` received at `now`, of `bytes` on the wire.
    ///
    /// # Errors
    ///
    /// [`StaleSequence`] if it is older than the window; nothing changes.
    pub fn insert(&mut self, sequence: u16, now: f64, bytes: u32) -> Result<(), StaleSequence> {
        let time = now.max(self.latest_time);
        let in_order = self
            .newest
            .is_none_or(|newest| sequence_greater_than(sequence, newest));
        let packet = ReceivedPacket {
            time,
            bytes,
            in_order,
        };
        let mut first_evicted = None;
        let Self {
            packets,
            bytes: total,
            newest,
            first_in_order,
            latest,
            ..
        } = self;
        packets.insert_evicting(sequence, packet, |old_sequence, old| {
            Self::evicted(total, newest, latest, old_sequence, &old);
            if *first_in_order == Some(old_sequence) {
                first_evicted = Some(old_sequence);
            }
        })?;
        self.bytes += u64::from(bytes);
        if in_order {
            self.newest = Some(sequence);
        }
        if let Some(evicted) = first_evicted {
            self.first_in_order = self.find_in_order(evicted.wrapping_add(1));
        } else if self.first_in_order.is_none() && in_order {
            self.first_in_order = Some(sequence);
        }
        // It arrived last; of several at the same time the newest is the latest. The
        // latest can only have left the window for a newer packet, which this one is.
        let keep = self.latest.filter(|&latest| {
            latest != sequence
                && self.packets.get(latest).is_some_and(|p| p.time == time)
                && sequence_greater_than(latest, sequence)
        });
        self.latest = Some(keep.unwrap_or(sequence));
        self.latest_time = time;
        Ok(())
    }

    /// Moves the window so that `sequence` is the newest, without receiving it.
    pub fn advance(&mut self, sequence: u16) {
        let mut first_evicted = None;
        let Self {
            packets,
            bytes: total,
            newest,
            first_in_order,
            latest,
            ..
        } = self;
        packets.advance_evicting(sequence, |old_sequence, old| {
            Self::evicted(total, newest, latest, old_sequence, &old);
            if *first_in_order == Some(old_sequence) {
                first_evicted = Some(old_sequence);
            }
        });
        if let Some(evicted) = first_evicted {
            self.first_in_order = self.find_in_order(evicted.wrapping_add(1));
        }
        if self.latest.is_none() && !self.packets.is_empty() {
            // The latest left while older arrivals with newer sequences stay (a window
            // moved by a fragment): find it again, once.
            self.latest = self.find_latest();
        }
    }

    fn evicted(
        total: &mut u64,
        newest: &mut Option<u16>,
        latest: &mut Option<u16>,
        sequence: u16,
        packet: &ReceivedPacket,
    ) {
        *total -= u64::from(packet.bytes);
        // The newest leaves last, when the window is empty.
        if *newest == Some(sequence) {
            *newest = None;
        }
        if *latest == Some(sequence) {
            *latest = None;
        }
    }

    /// The first packet at or after `from` that arrived in order. Called when the
    /// previous one left, so over time each sequence is passed at most once.
    fn find_in_order(&self, from: u16) -> Option<u16> {
        let start = if self.packets.is_stale(from) {
            self.packets.oldest()
        } else {
            from
        };
        let span = self.packets.sequence().wrapping_sub(start);
        (0..span)
            .map(|i| start.wrapping_add(i))
            .find(|&s| self.packets.get(s).is_some_and(|p| p.in_order))
    }

    fn find_latest(&self) -> Option<u16> {
        self.packets
            .iter()
            .max_by(|(s1, p1), (s2, p2)| {
                p1.time.total_cmp(&p2.time).then_with(|| {
                    if sequence_greater_than(*s1, *s2) {
                        core::cmp::Ordering::Greater
                    } else {
                        core::cmp::Ordering::Less
                    }
                })
            })
            .map(|(s, _)| s)
    }

    /// Bandwidth over every packet in the window.
    pub fn received_kbps(&self) -> Option<f64> {
        let first = self.packets.get(self.first_in_order?)?;
        let latest = self.packets.get(self.latest?)?;
        kbps(
            self.bytes - u64::from(latest.bytes),
            first.time,
            latest.time,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::header::{FragmentHeader, PacketHeader};
    use crate::endpoint::stats::{reference, settle_time, Stats};
    use crate::endpoint::{Config, Endpoint};

    fn sent_window(acked: impl Fn(u16) -> bool) -> SentWindow {
        let mut sent = SentWindow::new(8);
        // Sequences 0..8, one every 0.1 s, 100 bytes.
        for sequence in 0..8u16 {
            sent.insert(sequence, f64::from(sequence) * 0.1, 100);
        }
        for sequence in (0..8u16).filter(|&s| acked(s)) {
            sent.ack(sequence, 1.0).unwrap();
        }
        sent
    }

    #[test]
    fn loss_counts_acked_packets_and_the_unacked_ones_old_enough() {
        let mut sent = sent_window(|s| s % 2 == 1);
        // At 0.75 with 0.3 s to settle: 0..=4 are old enough (0, 2 and 4 lost),
        // 1, 3, 5 and 7 acked; 6 is still in flight.
        sent.settle(0.75, 0.3);
        assert_eq!(sent.packet_loss(), Some(3.0 / 7.0));
        // Long after: every even packet lost.
        sent.settle(10.0, 0.3);
        assert_eq!(sent.packet_loss(), Some(0.5));
        // The settle time grows back: the boundary moves back too.
        sent.settle(0.75, 0.3);
        assert_eq!(sent.packet_loss(), Some(3.0 / 7.0));
        // Nothing acked and nothing old enough: not yet known.
        let mut fresh = sent_window(|_| false);
        fresh.settle(0.75, 1.0);
        assert_eq!(fresh.packet_loss(), None);
        fresh.settle(1.65, 1.0);
        assert_eq!(fresh.packet_loss(), Some(1.0));
        let mut empty = SentWindow::new(8);
        empty.settle(5.0, 1.0);
        assert_eq!(empty.packet_loss(), None);
    }

    #[test]
    fn bandwidth_from_two_packets_on() {
        let mut sent = sent_window(|s| s % 2 == 1);
        // 8 packets over 0.7 s: 7 x 100 bytes per 0.7 s = 8 kbps exactly.
        let all = sent.sent_kbps().unwrap();
        assert!((all - 8.0).abs() < 1e-9, "{all}");
        // Acked only (1, 3, 5, 7 of 0..8), all settled: 300 bytes before the last
        // over 0.7 s.
        sent.settle(10.0, 0.3);
        let acked = sent.acked_kbps().unwrap();
        assert!((acked - 2.4 / 0.7).abs() < 1e-9, "{acked}");
        // Nothing settled yet: from the first acked (1, at 0.1) to the newest (7).
        sent.settle(0.0, 0.3);
        let early = sent.acked_kbps().unwrap();
        assert!((early - 2.4 / 0.6).abs() < 1e-9, "{early}");
        let mut one = SentWindow::new(8);
        one.insert(0, 0.5, 100);
        assert_eq!(one.sent_kbps(), None);
        let mut received = ReceivedWindow::new(8);
        assert_eq!(received.received_kbps(), None);
        // Arrivals out of order: 3 at 1.0, then 1 at 1.5, then 2 at 1.5 (the newest at
        // the latest time is left out).
        received.insert(3, 1.0, 100).unwrap();
        received.insert(1, 1.5, 50).unwrap();
        assert_eq!(received.received_kbps(), Some(100.0 * 8.0 / 1000.0 / 0.5));
        received.insert(2, 1.5, 7).unwrap();
        assert_eq!(received.received_kbps(), Some(150.0 * 8.0 / 1000.0 / 0.5));
        assert_eq!(received.insert(200, 2.0, 1).map(|_| ()), Ok(()));
        assert_eq!(received.received_kbps(), None, "alone in its window");
    }

    /// A window moved by a fragment past the packet that arrived last: the latest is
    /// found again among the older arrivals with newer sequences.
    #[test]
    fn the_latest_arrival_leaving_first_is_found_again() {
        let mut received = ReceivedWindow::new(8);
        received.insert(10, 1.0, 100).unwrap();
        received.insert(4, 2.0, 100).unwrap(); // arrives last, oldest sequence
        received.advance(12); // 4 leaves (window 5..=12); 10 stays
        assert_eq!(received.latest, Some(10));
        assert_eq!(received.received_kbps(), None, "one packet left");
        received.insert(11, 3.0, 100).unwrap();
        assert_eq!(received.received_kbps(), Some(0.8 / 2.0));
    }

    fn assert_agree(endpoint: &mut Endpoint, now: f64, context: &str) {
        endpoint.handle_timeout(now);
        let fast = endpoint.measure(now);
        let settle = settle_time(&endpoint.stats, endpoint.has_rtt);
        let slow = reference::measure(
            endpoint.sent.packets(),
            endpoint.received.packets(),
            now,
            settle,
        );
        assert_eq!(fast, slow, "{context}");
        // The RTT summary against a plain pass over the same samples.
        let samples: Vec<f64> = endpoint.rtt_history.samples().collect();
        let mut expected = Stats::default();
        if !samples.is_empty() {
            let n = samples.len() as f64;
            expected.rtt_min = samples.iter().copied().fold(f64::INFINITY, f64::min);
            expected.rtt_max = samples.iter().copied().fold(0.0, f64::max);
            expected.rtt_avg = samples.iter().sum::<f64>() / n;
            expected.jitter_avg_vs_min_rtt = expected.rtt_avg - expected.rtt_min;
            expected.jitter_max_vs_min_rtt = expected.rtt_max - expected.rtt_min;
            let variance = samples
                .iter()
                .map(|s| (s - expected.rtt_avg).powi(2))
                .sum::<f64>()
                / n;
            expected.jitter_stddev_vs_avg_rtt = variance.sqrt();
        }
        let stats = endpoint.stats();
        assert_eq!(stats.rtt_min, expected.rtt_min, "{context}");
        assert_eq!(stats.rtt_max, expected.rtt_max, "{context}");
        for (fast, slow) in [
            (stats.rtt_avg, expected.rtt_avg),
            (stats.jitter_avg_vs_min_rtt, expected.jitter_avg_vs_min_rtt),
            (stats.jitter_max_vs_min_rtt, expected.jitter_max_vs_min_rtt),
            (
                stats.jitter_stddev_vs_avg_rtt,
                expected.jitter_stddev_vs_avg_rtt,
            ),
        ] {
            assert!((fast - slow).abs() < 1e-9, "{context}: {fast} vs {slow}");
        }
    }

    /// The running totals against the plain definitions over random traffic: loss,
    /// reordering, duplicates, fragments, bursts at one instant, pauses, a clock that
    /// sometimes reads earlier than before, forged sequence jumps past the window and
    /// first fragments that move it; small windows so packets leave them and the
    /// sequence wraps.
    #[test]
    fn running_totals_equal_a_pass_over_the_windows_under_random_traffic() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (round, window) in [16usize, 64, 256].into_iter().enumerate() {
            let config = Config {
                sent_packets_buffer_size: window,
                received_packets_buffer_size: window.max(32),
                rtt_history_size: 1 + window / 2,
                fragment_above: 200,
                fragment_size: 200,
                max_fragments: 8,
                max_packet_size: 1600,
                ..Config::default()
            };
            let mut sides = [
                Endpoint::new(0.0, config.clone()).unwrap(),
                Endpoint::new(0.0, config.clone()).unwrap(),
            ];
            let mut in_flight: Vec<(f64, usize, Vec<u8>)> = Vec::new();
            let mut now = 0.0f64;
            for step in 0..30_000u32 {
                let roll = next();
                now += match roll % 20 {
                    0 => 0.0,
                    1 => 1.5,
                    _ => (roll >> 8) as f64 % 30.0 / 1000.0,
                };
                let from = (roll >> 20) as usize % 2;
                // Sometimes a clock that reads a little earlier than before.
                let at = if roll % 97 == 0 { now - 0.2 } else { now };
                if (roll >> 24) % 4 != 0 {
                    let len = [0, 10, 150, 700][(roll >> 28) as usize % 4];
                    sides[from].send_packet(at, &vec![step as u8; len]).unwrap();
                    while let Some(transmit) = sides[from].poll_transmit() {
                        let fate = next() % 100;
                        if fate < 20 {
                            continue; // lost
                        }
                        let delay = 0.05 + (fate % 7) as f64 * 0.01;
                        in_flight.push((now + delay, 1 - from, transmit.data.to_vec()));
                        if fate > 95 {
                            in_flight.push((now + delay * 2.0, 1 - from, transmit.data.to_vec()));
                        }
                    }
                }
                if roll % 501 == 0 {
                    // A forged packet far ahead, or the first fragment of one.
                    // Ahead of what side 0 sends next by up to twice the window.
                    let ahead = (next() % (2 * window as u64)) as u16;
                    let sequence = sides[0].next_sequence().wrapping_add(ahead);
                    let (header, len) = PacketHeader {
                        sequence,
                        ack: 0,
                        ack_bits: 0,
                    }
                    .encode();
                    let datagram = if roll % 2 == 0 {
                        header[..len].to_vec()
                    } else {
                        let mut datagram = FragmentHeader {
                            sequence,
                            fragment_id: 0,
                            num_fragments: 2,
                        }
                        .encode()
                        .to_vec();
                        datagram.extend_from_slice(&header[..len]);
                        datagram.extend_from_slice(&[0; 200]);
                        datagram
                    };
                    let _ = sides[1].handle_datagram(at, &datagram);
                }
                let mut i = 0;
                while i < in_flight.len() {
                    if in_flight[i].0 <= now {
                        let (_, to, datagram) = in_flight.swap_remove(i);
                        let _ = sides[to].handle_datagram(at, &datagram);
                    } else {
                        i += 1;
                    }
                }
                for side in &mut sides {
                    side.drain_acks().for_each(drop);
                }
                if roll % 3 == 0 {
                    for (index, side) in sides.iter_mut().enumerate() {
                        assert_agree(
                            side,
                            at,
                            &format!("window {window}, step {step}, side {index}"),
                        );
                    }
                }
            }
            let counters = sides[0].counters();
            assert!(counters.packets_acked > 1000, "round {round}: {counters:?}");
        }
    }
}
