//! The receiving side of whole snapshots: a ring of what was decoded, and refusal of a
//! snapshot whose baseline is not in it.

use netser::{Decoder, NetDelta, NetSerialize, ReadStream};

use super::{SnapshotConfig, SnapshotConfigError, SnapshotHeader, KIND_SNAPSHOT};
use crate::connection::{section::check_padding, Connection, ReceiveError, ReceivedSection};
use crate::sequence::{sequence_greater_than, SequenceBuffer};

/// Why a snapshot section was refused. The packet that carried it is dropped unacked, so
/// the sender never takes it for received.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SnapshotRefusal {
    /// Encoded against a snapshot this receiver does not hold (never received, or left
    /// the ring).
    UnknownBaseline {
        /// The snapshot.
        sequence: u16,
        /// Its baseline.
        baseline: u16,
    },
    /// Encoded against a snapshot that already left the ring: a packet delayed past
    /// `history` newer snapshots. It is not acked, so the sender never uses it.
    BaselineEvicted {
        /// The snapshot.
        sequence: u16,
        /// Its baseline.
        baseline: u16,
    },
    /// An entity set where a whole snapshot was expected.
    WrongKind,
    /// The bits do not decode (or bits follow the snapshot).
    Malformed(netser::Error),
}

impl core::fmt::Display for SnapshotRefusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UnknownBaseline { sequence, baseline } => write!(
                f,
                "snapshot {sequence} is encoded against snapshot {baseline}, which this receiver does not hold"
            ),
            Self::BaselineEvicted { sequence, baseline } => write!(
                f,
                "snapshot {sequence} is encoded against snapshot {baseline}, which already left the ring"
            ),
            Self::WrongKind => write!(f, "an entity set where a snapshot was expected"),
            Self::Malformed(_) => write!(f, "the snapshot does not decode"),
        }
    }
}

impl std::error::Error for SnapshotRefusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed(error) => Some(error),
            _ => None,
        }
    }
}

/// What a [`SnapshotReceiver`] has done: every section it was handed is counted once,
/// as decoded, duplicate, stale or one of the refusals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReceiverCounters {
    /// Snapshot sections handed in.
    pub received: u64,
    /// Decoded and kept.
    pub decoded: u64,
    /// Already held (a duplicate packet): taken, nothing changes.
    pub duplicates: u64,
    /// Older than the ring (a packet delayed past `history` newer snapshots): taken and
    /// ignored; the sender cannot use it as a baseline any more.
    pub stale: u64,
    /// Refused: baseline not held (never from an honest sender).
    pub unknown_baseline: u64,
    /// Refused: baseline left the ring (a snapshot delayed past `history` newer ones).
    pub baseline_evicted: u64,
    /// Refused: an entity set.
    pub wrong_kind: u64,
    /// Refused: did not decode.
    pub malformed: u64,
}

/// The receiving side of whole snapshots: decodes each snapshot against the baseline it
/// names, keeps the last [`history`](SnapshotConfig::history) it decoded (the baselines
/// the sender can use), and hands the game the newest. See the
/// [module docs](super) for a run.
#[derive(Debug)]
pub struct SnapshotReceiver<S> {
    config: SnapshotConfig,
    ring: SequenceBuffer<S>,
    newest: Option<u16>,
    /// The newest changed since [`poll_snapshot`](Self::poll_snapshot) last returned it.
    fresh: bool,
    counters: ReceiverCounters,
}

impl<S: NetDelta> SnapshotReceiver<S> {
    /// A receiver that holds nothing.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    ///
    /// ```
    /// use netser_transport::snapshot::{SnapshotConfig, SnapshotReceiver};
    /// let receiver = SnapshotReceiver::<u32>::new(SnapshotConfig::default()).unwrap();
    /// assert_eq!(receiver.newest(), None);
    /// ```
    pub fn new(config: SnapshotConfig) -> Result<Self, SnapshotConfigError> {
        config.validate()?;
        Ok(Self {
            ring: SequenceBuffer::new(config.history),
            config,
            newest: None,
            fresh: false,
            counters: ReceiverCounters::default(),
        })
    }

    /// Takes in a datagram for `connection`, handing it the packet's snapshot section
    /// (see [`Connection::handle_datagram_with`]).
    ///
    /// # Errors
    /// The connection's [`ReceiveError`]; [`ReceiveError::SectionRefused`] when this
    /// receiver refused the snapshot (its reason is counted in
    /// [`counters`](Self::counters)).
    pub fn handle_datagram<Out: NetSerialize, In: NetSerialize>(
        &mut self,
        now: f64,
        connection: &mut Connection<Out, In>,
        bytes: &[u8],
    ) -> Result<(), ReceiveError> {
        connection.handle_datagram_with(now, bytes, |section| self.take_section(section))
    }

    /// The callback for [`Connection::handle_datagram_with`]: whether the section was
    /// taken.
    pub fn take_section(&mut self, section: ReceivedSection<'_>) -> bool {
        self.receive_section(&mut section.reader()).is_ok()
    }

    /// Reads one snapshot section (the rest of the packet) and keeps the snapshot.
    ///
    /// # Errors
    /// [`SnapshotRefusal`], counted; nothing is kept then.
    pub fn receive_section(&mut self, r: &mut ReadStream<'_>) -> Result<(), SnapshotRefusal> {
        self.counters.received += 1;
        let result = self.decode_section(r);
        match &result {
            Ok(()) => {}
            Err(SnapshotRefusal::UnknownBaseline { .. }) => self.counters.unknown_baseline += 1,
            Err(SnapshotRefusal::BaselineEvicted { .. }) => self.counters.baseline_evicted += 1,
            Err(SnapshotRefusal::WrongKind) => self.counters.wrong_kind += 1,
            Err(SnapshotRefusal::Malformed(_)) => self.counters.malformed += 1,
        }
        result
    }

    fn decode_section(&mut self, r: &mut ReadStream<'_>) -> Result<(), SnapshotRefusal> {
        if r.read_bool().map_err(SnapshotRefusal::Malformed)? != KIND_SNAPSHOT {
            return Err(SnapshotRefusal::WrongKind);
        }
        let header = SnapshotHeader::read_after_kind(r, self.config.offset_bits())
            .map_err(SnapshotRefusal::Malformed)?;
        let sequence = header.sequence;
        if self.newest.is_none() && self.ring.is_empty() {
            // The first snapshot: the sender's sequences may start anywhere.
            super::start_ring_at(&mut self.ring, sequence);
        }
        if self.ring.is_stale(sequence) {
            self.counters.stale += 1;
            return Ok(());
        }
        if self.ring.contains(sequence) {
            self.counters.duplicates += 1;
            return Ok(());
        }
        let snapshot = match header.baseline {
            None => S::decode(r),
            Some(baseline) => {
                // A baseline is older than its snapshot; anything else is not one we hold.
                if self.ring.is_stale(baseline) {
                    return Err(SnapshotRefusal::BaselineEvicted { sequence, baseline });
                }
                let base = sequence_greater_than(sequence, baseline)
                    .then(|| self.ring.get(baseline))
                    .flatten()
                    .ok_or(SnapshotRefusal::UnknownBaseline { sequence, baseline })?;
                S::decode_delta(base, r)
            }
        }
        .map_err(SnapshotRefusal::Malformed)?;
        check_padding(r).map_err(SnapshotRefusal::Malformed)?;
        // Not stale (checked above), so it is stored.
        let _ = self.ring.insert(sequence, snapshot);
        self.counters.decoded += 1;
        if self
            .newest
            .is_none_or(|n| !self.ring.contains(n) || sequence_greater_than(sequence, n))
        {
            self.newest = Some(sequence);
            self.fresh = true;
        }
        Ok(())
    }

    /// The newest snapshot decoded, and its sequence.
    pub fn newest(&self) -> Option<(u16, &S)> {
        let sequence = self.newest?;
        self.ring.get(sequence).map(|s| (sequence, s))
    }

    /// The newest snapshot, if a newer one was decoded since the last call.
    pub fn poll_snapshot(&mut self) -> Option<(u16, &S)> {
        if !std::mem::take(&mut self.fresh) {
            return None;
        }
        self.newest()
    }

    /// The snapshot of `sequence`, if held.
    pub fn get(&self, sequence: u16) -> Option<&S> {
        self.ring.get(sequence)
    }

    /// Every section counted by outcome.
    pub fn counters(&self) -> &ReceiverCounters {
        &self.counters
    }

    /// The most heap bytes the receiver holds: `history` snapshots, each with at most
    /// `S::MAX_HEAP_BYTES` of its own.
    ///
    /// ```
    /// use netser_transport::snapshot::{SnapshotConfig, SnapshotReceiver};
    /// let receiver = SnapshotReceiver::<[u32; 4]>::new(SnapshotConfig::default()).unwrap();
    /// assert!(receiver.memory_bound() >= 64 * 16);
    /// ```
    pub fn memory_bound(&self) -> usize {
        let heap = usize::try_from(S::MAX_HEAP_BYTES).unwrap_or(usize::MAX);
        SequenceBuffer::<S>::heap_bytes_for(self.config.history)
            .saturating_add(self.config.history.saturating_mul(heap))
    }
}
