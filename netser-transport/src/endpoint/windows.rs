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
//!
//! The few packets whose time or bytes an update reads (the oldest, the latest, the
//! newest acked, the two at the boundary of the packets that have had time to be
//! acked) are copied into the window itself when they become those packets, where
//! their slot is at hand. An update then reads no slot: on a server of many
//! connections the windows' memory is rarely in the cache, and each slot read was a
//! cache miss per connection per update.

use super::stats::{ReceivedPacket, SentPacket};
use crate::sequence::{sequence_greater_than, SequenceBuffer, StaleSequence};

/// Kilobits per second for `bytes` over the time from `start` to `finish`; `None` when
/// no time passed. As a measure over packets: the bytes of every packet but the latest,
/// over the time from the first to the latest (n packets span n - 1 intervals).
fn kbps(bytes: u64, start: f64, finish: f64) -> Option<f64> {
    (finish > start).then(|| bytes as f64 * 8.0 / 1000.0 / (finish - start))
}

/// A packet of a window named with the time and bytes it was stored with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mark {
    pub sequence: u16,
    pub time: f64,
    pub bytes: u32,
}

/// The newest of the sent packets that have had time to be acked.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LastSettled {
    time: f64,
    bytes: u32,
    acked: bool,
}

impl From<&SentPacket> for LastSettled {
    fn from(packet: &SentPacket) -> Self {
        Self {
            time: packet.time,
            bytes: packet.bytes,
            acked: packet.acked,
        }
    }
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
    newest_acked: Option<Mark>,
    /// The oldest `settled` packets have had time to be acked (see
    /// [`settle_time`](super::stats::settle_time)); `settled_unacked` of them were not.
    settled: usize,
    settled_unacked: u32,
    /// The newest of the settled packets, while there is one (`settled > 0`).
    last_settled: LastSettled,
    /// The time of the oldest packet not settled, while there is one (`settled < len`).
    next_to_settle: f64,
    /// The time of the oldest packet, while there is one.
    first_time: f64,
    /// The time and bytes of the newest packet (the time is also the clock: no packet
    /// is stored earlier).
    latest_time: f64,
    latest_bytes: u32,
    /// The newest packet is acked: with its time and bytes above, its ack (usually
    /// the one a header names first) reads and writes no slot.
    latest_acked: bool,
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
            last_settled: LastSettled {
                time: 0.0,
                bytes: 0,
                acked: false,
            },
            next_to_settle: 0.0,
            first_time: 0.0,
            latest_time: f64::NEG_INFINITY,
            latest_bytes: 0,
            latest_acked: false,
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
        self.latest_bytes = 0;
        self.latest_acked = false;
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
        self.latest_bytes = bytes;
        self.latest_acked = false;
        let mut first_left = false;
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
            first_left = true;
            *total -= u64::from(old.bytes);
            if old.acked {
                *acked -= 1;
                *acked_bytes -= u64::from(old.bytes);
                if newest_acked.is_some_and(|newest| newest.sequence == old_sequence) {
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
        let len = self.packets.len();
        if len == 1 {
            self.first_time = time;
        } else if first_left {
            // The slot next to the one just written.
            self.first_time = self.packet(self.first()).time;
        }
        if self.settled + 1 == len {
            // This packet is the oldest not settled.
            self.next_to_settle = time;
        } else if self.settled == 0 && first_left {
            // The oldest packet left unsettled: the next one is now the oldest.
            self.next_to_settle = self.first_time;
        }
    }

    /// Marks `sequence` acked at `now`; its RTT sample if it was in the window and not
    /// acked before.
    pub fn ack(&mut self, sequence: u16, now: f64) -> Option<f64> {
        let first = self.first();
        let (time, bytes) =
            if !self.packets.is_empty() && sequence == self.packets.sequence().wrapping_sub(1) {
                // The newest packet: its time, bytes and ack are at hand; the slot is only
                // written.
                if self.latest_acked {
                    return None;
                }
                self.latest_acked = true;
                let (time, bytes) = (self.latest_time, self.latest_bytes);
                let packet = SentPacket {
                    time,
                    bytes,
                    acked: true,
                };
                self.packets.overwrite(sequence, packet);
                (time, bytes)
            } else {
                let packet = self.packets.get_mut(sequence)?;
                if packet.acked {
                    return None;
                }
                packet.acked = true;
                (packet.time, packet.bytes)
            };
        self.acked += 1;
        self.acked_bytes += u64::from(bytes);
        let offset = usize::from(sequence.wrapping_sub(first));
        if offset < self.settled {
            self.settled_unacked -= 1;
            if offset + 1 == self.settled {
                self.last_settled.acked = true;
            }
        }
        if self
            .newest_acked
            .is_none_or(|newest| sequence_greater_than(sequence, newest.sequence))
        {
            self.newest_acked = Some(Mark {
                sequence,
                time,
                bytes,
            });
        }
        Some((now - time).max(0.0))
    }

    /// Moves the boundary of the packets that have had `settle` seconds at `now` to be
    /// acked. Times increase with the sequence, so those packets are the oldest ones and
    /// the boundary moves over only the packets whose state changed (forward as time
    /// passes, back when the settle time grows); when it stays, no slot is read.
    pub fn settle(&mut self, now: f64, settle: f64) {
        let first = self.first();
        let len = self.packets.len();
        let old_enough = |time: f64| now - time >= settle;
        while self.settled < len && old_enough(self.next_to_settle) {
            let packet = *self.packet(first.wrapping_add(self.settled as u16));
            if !packet.acked {
                self.settled_unacked += 1;
            }
            self.last_settled = LastSettled::from(&packet);
            self.settled += 1;
            if self.settled < len {
                self.next_to_settle = self.packet(first.wrapping_add(self.settled as u16)).time;
            }
        }
        while self.settled > 0 && !old_enough(self.last_settled.time) {
            if !self.last_settled.acked {
                self.settled_unacked -= 1;
            }
            self.next_to_settle = self.last_settled.time;
            self.settled -= 1;
            if self.settled > 0 {
                let packet = self.packet(first.wrapping_add(self.settled as u16 - 1));
                self.last_settled = LastSettled::from(packet);
            }
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
        kbps(
            self.bytes - u64::from(self.latest_bytes),
            self.first_time,
            self.latest_time,
        )
    }

    /// Bandwidth of the acked packets, over the packets that are acked or have had time
    /// to be: their acked bytes but the latest packet's, from the first to the latest.
    pub fn acked_kbps(&self) -> Option<f64> {
        let first = self.first();
        let last_settled = (self.settled > 0).then(|| {
            let sequence = first.wrapping_add(self.settled as u16 - 1);
            (sequence, self.last_settled)
        });
        let acked = |mark: Mark| LastSettled {
            time: mark.time,
            bytes: mark.bytes,
            acked: true,
        };
        let latest = match (last_settled, self.newest_acked) {
            (Some((settled, _)), Some(newest))
                if sequence_greater_than(newest.sequence, settled) =>
            {
                acked(newest)
            }
            (Some((_, last)), _) => last,
            (None, newest) => acked(newest?),
        };
        let start = if self.settled > 0 {
            self.first_time
        } else {
            // Nothing has had time to be acked yet: every packet in the window was sent
            // within the settle time, and the first acked one starts the measure.
            (0..self.packets.len() as u16)
                .map(|i| self.packet(first.wrapping_add(i)))
                .find(|packet| packet.acked)?
                .time
        };
        let latest_bytes = if latest.acked { latest.bytes } else { 0 };
        kbps(
            self.acked_bytes - u64::from(latest_bytes),
            start,
            latest.time,
        )
    }

    /// Panics unless every total and copied value equals a pass over the slots.
    #[cfg(test)]
    pub fn assert_consistent(&self) {
        let first = self.first();
        let len = self.packets.len();
        let packets: Vec<(u16, SentPacket)> = (0..len as u16)
            .map(|i| first.wrapping_add(i))
            .map(|sequence| (sequence, *self.packet(sequence)))
            .collect();
        let acked = || packets.iter().filter(|(_, p)| p.acked);
        let mark = |&(sequence, p): &(u16, SentPacket)| Mark {
            sequence,
            time: p.time,
            bytes: p.bytes,
        };
        assert_eq!(
            self.bytes,
            packets.iter().map(|(_, p)| u64::from(p.bytes)).sum()
        );
        assert_eq!(self.acked as usize, acked().count());
        assert_eq!(
            self.acked_bytes,
            acked().map(|(_, p)| u64::from(p.bytes)).sum()
        );
        assert_eq!(self.newest_acked, acked().next_back().map(mark));
        assert!(self.settled <= len);
        let unacked = packets[..self.settled].iter().filter(|(_, p)| !p.acked);
        assert_eq!(self.settled_unacked as usize, unacked.count());
        if let Some((_, last)) = self.settled.checked_sub(1).map(|i| packets[i]) {
            assert_eq!(self.last_settled, LastSettled::from(&last));
        }
        if let Some((_, next)) = packets.get(self.settled) {
            assert_eq!(self.next_to_settle, next.time);
        }
        if let (Some((_, oldest)), Some((_, newest))) = (packets.first(), packets.last()) {
            assert_eq!(self.latest_acked, newest.acked);
            assert_eq!(self.first_time, oldest.time);
            assert_eq!(
                (self.latest_time, self.latest_bytes),
                (newest.time, newest.bytes)
            );
        }
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
    first_in_order: Option<Mark>,
    /// The packet that arrived last (of those that arrived at that time, the newest).
    latest: Option<Mark>,
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
            if first_in_order.is_some_and(|first| first.sequence == old_sequence) {
                first_evicted = Some(old_sequence);
            }
        })?;
        self.bytes += u64::from(bytes);
        if in_order {
            self.newest = Some(sequence);
        }
        let mark = Mark {
            sequence,
            time,
            bytes,
        };
        if let Some(evicted) = first_evicted {
            self.first_in_order = self.find_in_order(evicted.wrapping_add(1));
        } else if self.first_in_order.is_none() && in_order {
            self.first_in_order = Some(mark);
        }
        // It arrived last; of several at the same time the newest is the latest. The
        // latest can only have left the window for a newer packet, which this one is.
        let keep = self.latest.filter(|latest| {
            latest.sequence != sequence
                && latest.time == time
                && sequence_greater_than(latest.sequence, sequence)
        });
        self.latest = Some(keep.unwrap_or(mark));
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
            if first_in_order.is_some_and(|first| first.sequence == old_sequence) {
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
        latest: &mut Option<Mark>,
        sequence: u16,
        packet: &ReceivedPacket,
    ) {
        *total -= u64::from(packet.bytes);
        // The newest leaves last, when the window is empty.
        if *newest == Some(sequence) {
            *newest = None;
        }
        if latest.is_some_and(|latest| latest.sequence == sequence) {
            *latest = None;
        }
    }

    /// The first packet at or after `from` that arrived in order. Called when the
    /// previous one left, so over time each sequence is passed at most once.
    fn find_in_order(&self, from: u16) -> Option<Mark> {
        let start = if self.packets.is_stale(from) {
            self.packets.oldest()
        } else {
            from
        };
        let span = self.packets.sequence().wrapping_sub(start);
        (0..span).find_map(|i| {
            let sequence = start.wrapping_add(i);
            let packet = self.packets.get(sequence).filter(|p| p.in_order)?;
            Some(Mark {
                sequence,
                time: packet.time,
                bytes: packet.bytes,
            })
        })
    }

    fn find_latest(&self) -> Option<Mark> {
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
            .map(|(sequence, packet)| Mark {
                sequence,
                time: packet.time,
                bytes: packet.bytes,
            })
    }

    /// Bandwidth over every packet in the window.
    pub fn received_kbps(&self) -> Option<f64> {
        let first = self.first_in_order?;
        let latest = self.latest?;
        kbps(
            self.bytes - u64::from(latest.bytes),
            first.time,
            latest.time,
        )
    }

    /// Panics unless every total and copied value equals a pass over the slots.
    #[cfg(test)]
    pub fn assert_consistent(&self) {
        let oldest = self.packets.oldest();
        let stored = |sequence| Some((sequence, *self.packets.get(sequence)?));
        let packets: Vec<(u16, ReceivedPacket)> = (0..self.packets.capacity() as u16)
            .filter_map(|i| stored(oldest.wrapping_add(i)))
            .collect();
        let mark = |&(sequence, p): &(u16, ReceivedPacket)| Mark {
            sequence,
            time: p.time,
            bytes: p.bytes,
        };
        assert_eq!(self.packets.len(), packets.len());
        assert_eq!(
            self.bytes,
            packets.iter().map(|(_, p)| u64::from(p.bytes)).sum()
        );
        assert_eq!(self.newest, packets.last().map(|(s, _)| *s));
        let first_in_order = packets.iter().find(|(_, p)| p.in_order);
        assert_eq!(self.first_in_order, first_in_order.map(mark));
        let latest = packets.iter().map(mark).reduce(|a, b| {
            let newer = b.time > a.time
                || (b.time == a.time && sequence_greater_than(b.sequence, a.sequence));
            if newer {
                b
            } else {
                a
            }
        });
        assert_eq!(self.latest, latest);
    }
}

#[cfg(test)]
mod tests;
