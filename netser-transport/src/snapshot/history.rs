//! The sender's ring of snapshots, shared by every peer it sends to, and the encodings of
//! the newest one against each baseline asked for (so peers that hold the same baseline
//! share one encoding).

use netser::{NetDelta, WriteStream};

use super::{SnapshotConfig, SnapshotConfigError, SnapshotHeader};
use crate::sequence::SequenceBuffer;

/// The newest snapshot encoded against one baseline (or absolute), header included.
#[derive(Debug)]
pub(crate) struct Encoding {
    pub baseline: Option<u16>,
    pub bytes: Vec<u8>,
    pub bits: u64,
}

/// What a [`SnapshotHistory`] has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryCounters {
    /// Snapshots pushed.
    pub pushed: u64,
    /// Encodings made (one per snapshot and distinct baseline asked for).
    pub encodings: u64,
    /// Sends that reused an encoding made for another peer.
    pub encodings_shared: u64,
}

/// The last [`history`](SnapshotConfig::history) snapshots a sender pushed, numbered by
/// a wrapping 16-bit sequence, with the encodings of the newest against the baselines
/// its peers hold. One per server, shared by the [`SnapshotPeer`](super::SnapshotPeer)
/// of every client: push the world once a tick, then send to each peer.
///
/// ```
/// use netser_transport::snapshot::{SnapshotConfig, SnapshotHistory};
/// let mut history = SnapshotHistory::<u32>::new(SnapshotConfig::default()).unwrap();
/// assert_eq!(history.push(7), 0);
/// assert_eq!(history.push(8), 1);
/// assert_eq!(history.newest(), Some((1, &8)));
/// assert_eq!(history.get(0), Some(&7));
/// ```
#[derive(Debug)]
pub struct SnapshotHistory<S> {
    config: SnapshotConfig,
    ring: SequenceBuffer<S>,
    next: u16,
    /// Encodings of the newest snapshot, at most `history` (one per baseline in the ring
    /// and the absolute one).
    encodings: Vec<Encoding>,
    counters: HistoryCounters,
}

impl<S: NetDelta + PartialEq> SnapshotHistory<S> {
    /// An empty history.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    pub fn new(config: SnapshotConfig) -> Result<Self, SnapshotConfigError> {
        config.validate()?;
        let mut ring = SequenceBuffer::new(config.history);
        super::start_ring_at(&mut ring, config.first_sequence);
        Ok(Self {
            ring,
            next: config.first_sequence,
            encodings: Vec::new(),
            counters: HistoryCounters::default(),
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &SnapshotConfig {
        &self.config
    }

    /// Adds the newest snapshot and returns its sequence (0 first, wrapping after
    /// 65535). The oldest leaves the ring when it is full.
    pub fn push(&mut self, snapshot: S) -> u16 {
        let sequence = self.next;
        self.next = sequence.wrapping_add(1);
        // Sequences only move forward here: never stale.
        let _ = self.ring.insert(sequence, snapshot);
        self.encodings.clear();
        self.counters.pushed += 1;
        sequence
    }

    /// The newest snapshot and its sequence.
    pub fn newest(&self) -> Option<(u16, &S)> {
        let sequence = self.next.wrapping_sub(1);
        self.ring.get(sequence).map(|s| (sequence, s))
    }

    /// The snapshot of `sequence`, if still in the ring.
    pub fn get(&self, sequence: u16) -> Option<&S> {
        self.ring.get(sequence)
    }

    /// What the history has done.
    pub fn counters(&self) -> &HistoryCounters {
        &self.counters
    }

    /// The most heap bytes the history holds: the ring of `history` snapshots (each with
    /// at most `S::MAX_HEAP_BYTES` of its own) and up to `history` encodings of the
    /// newest, each at most the snapshot's worst case (absolute or delta) and its header.
    ///
    /// ```
    /// use netser_transport::snapshot::{SnapshotConfig, SnapshotHistory};
    /// let history = SnapshotHistory::<u32>::new(SnapshotConfig::default()).unwrap();
    /// assert!(history.memory_bound() < 16 * 1024);
    /// ```
    pub fn memory_bound(&self) -> usize {
        let history = self.config.history;
        let heap = usize::try_from(S::MAX_HEAP_BYTES).unwrap_or(usize::MAX);
        let encoding = usize::try_from(
            S::MAX_BITS
                .max(S::MAX_DELTA_BITS)
                .saturating_add(SnapshotHeader::MAX_BITS)
                .div_ceil(8),
        )
        .unwrap_or(usize::MAX)
        .saturating_add(core::mem::size_of::<Encoding>());
        SequenceBuffer::<S>::heap_bytes_for(history)
            .saturating_add(history.saturating_mul(heap))
            .saturating_add(history.saturating_mul(encoding))
    }

    /// The newest snapshot encoded against `baseline` (which must be in the ring), made
    /// once per baseline and kept until the next push.
    pub(crate) fn encoding(&mut self, baseline: Option<u16>) -> netser::Result<&Encoding> {
        if let Some(index) = self.encodings.iter().position(|e| e.baseline == baseline) {
            self.counters.encodings_shared += 1;
            return Ok(&self.encodings[index]);
        }
        let (sequence, snapshot) = self.newest().expect("a snapshot was pushed");
        let header = SnapshotHeader { sequence, baseline };
        let offset_bits = self.config.offset_bits();
        let base = baseline.map(|b| self.ring.get(b).expect("the baseline is in the ring"));
        let body = match base {
            Some(base) => snapshot.measure_delta_bits(base)?,
            None => snapshot.measure_bits()?,
        };
        let bits = header.bits(offset_bits) + body;
        let mut bytes = vec![0u8; bits.div_ceil(8) as usize];
        let mut w = WriteStream::new(&mut bytes);
        header.write(&mut w, offset_bits)?;
        match base {
            Some(base) => snapshot.encode_delta(base, &mut w)?,
            None => snapshot.encode(&mut w)?,
        }
        w.finish();
        self.counters.encodings += 1;
        self.encodings.push(Encoding {
            baseline,
            bytes,
            bits,
        });
        Ok(self.encodings.last().expect("just pushed"))
    }
}
