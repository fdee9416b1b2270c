//! The sending side: per peer, which snapshots went in which packet and which were acked,
//! and the choice of baseline.

use netser::{NetDelta, NetSerialize};

use super::history::SnapshotHistory;
use super::{SnapshotConfig, SnapshotConfigError};
use crate::connection::{Connection, SectionError};
use crate::sequence::{sequence_greater_than, SequenceBuffer};

/// A snapshot that could not be sent. Nothing went out when it is returned.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SnapshotSendError {
    /// Nothing was pushed to the history yet.
    NoSnapshot,
    /// The snapshot did not encode: a value outside its declared bounds.
    Encode(netser::Error),
    /// The connection refused the section (too large for a packet: raise
    /// `endpoint.max_packet_size`, or send an entity set).
    Section(SectionError),
}

impl core::fmt::Display for SnapshotSendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoSnapshot => write!(f, "no snapshot pushed yet"),
            Self::Encode(_) => write!(f, "the snapshot does not encode"),
            Self::Section(_) => write!(f, "the connection refused the snapshot"),
        }
    }
}

impl std::error::Error for SnapshotSendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NoSnapshot => None,
            Self::Encode(error) => Some(error),
            Self::Section(error) => Some(error),
        }
    }
}

/// What a send did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendOutcome {
    /// The snapshot went in a packet.
    Sent {
        /// Its sequence.
        sequence: u16,
        /// The packet that carries it.
        packet_sequence: u16,
        /// The snapshot it was encoded against, if any.
        baseline: Option<u16>,
        /// Its section's length (header included).
        bits: u64,
    },
    /// It equals the baseline the peer acked, and the last send was less than
    /// `keep_alive` ago: nothing went.
    Unchanged,
    /// This snapshot was already sent to this peer.
    AlreadySent,
}

/// What a sender has done for one peer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct SnapshotStats {
    /// Snapshots sent.
    pub sent: u64,
    /// Of those, sent whole (no baseline acked, or it was too old).
    pub absolute_sent: u64,
    /// Of those, delta-encoded.
    pub delta_sent: u64,
    /// Sends skipped: equal to the acked baseline within `keep_alive`.
    pub unchanged_skipped: u64,
    /// Snapshots the peer acked.
    pub acked: u64,
    /// Section bits sent in all (headers of the snapshot layer included; not the
    /// packet's headers).
    pub bits_sent: u64,
    /// Section bits of the last snapshot sent.
    pub last_bits: u64,
    /// Snapshots between the last one sent and its baseline (`None`: absolute).
    pub last_baseline_age: Option<u16>,
    /// The newest snapshot the peer is known to hold.
    pub newest_acked: Option<u16>,
}

impl SnapshotStats {
    /// Average section bits per snapshot sent (0 before the first).
    pub fn bits_per_snapshot(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.bits_sent as f64 / self.sent as f64
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    packet: u16,
    acked: bool,
}

/// One peer's side of a snapshot sender: which snapshots of the shared
/// [`SnapshotHistory`] went to it, in which packet, and which it acked. It picks each
/// send's baseline: the newest snapshot the peer acked, if still in the history
/// (absolute otherwise).
///
/// ```
/// use netser_transport::connection::{Connection, ConnectionConfig};
/// use netser_transport::snapshot::{SendOutcome, SnapshotConfig, SnapshotHistory, SnapshotPeer};
/// let mut history = SnapshotHistory::<u32>::new(SnapshotConfig::default()).unwrap();
/// let mut peers = [SnapshotPeer::new(SnapshotConfig::default()).unwrap(), SnapshotPeer::new(SnapshotConfig::default()).unwrap()];
/// let mut connections: Vec<Connection<u8>> = (0..2).map(|_| Connection::new(0.0, ConnectionConfig::default()).unwrap()).collect();
/// history.push(42);
/// for (peer, connection) in peers.iter_mut().zip(&mut connections) {
///     let outcome = peer.send(0.0, &mut history, connection).unwrap();
///     assert!(matches!(outcome, SendOutcome::Sent { baseline: None, .. }));
/// }
/// // Both held no baseline: one encoding served both.
/// assert_eq!(history.counters().encodings, 1);
/// assert_eq!(history.counters().encodings_shared, 1);
/// ```
#[derive(Debug)]
pub struct SnapshotPeer {
    config: SnapshotConfig,
    /// By snapshot sequence.
    sent: SequenceBuffer<Sent>,
    last_sent: f64,
    stats: SnapshotStats,
}

impl SnapshotPeer {
    /// A peer that holds nothing yet.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    pub fn new(config: SnapshotConfig) -> Result<Self, SnapshotConfigError> {
        config.validate()?;
        Ok(Self {
            sent: SequenceBuffer::new(config.history),
            config,
            last_sent: f64::NEG_INFINITY,
            stats: SnapshotStats::default(),
        })
    }

    /// What was sent to this peer.
    pub fn stats(&self) -> &SnapshotStats {
        &self.stats
    }

    /// The heap bytes this peer holds (fixed at creation): its ring of `history` records.
    pub fn memory_bound(&self) -> usize {
        SequenceBuffer::<Sent>::heap_bytes_for(self.config.history)
    }

    /// Records that the packet `packet_sequence` arrived (from
    /// [`Connection::drain_acked_sections`]); [`send`](Self::send) does it itself.
    pub fn on_packet_acked(&mut self, packet_sequence: u16) {
        // The newest snapshot sent in that packet (a packet sequence cannot name two
        // snapshots in the ring unless 65536 packets went in `history` snapshots).
        let mut found: Option<u16> = None;
        for (sequence, sent) in self.sent.iter() {
            if sent.packet == packet_sequence
                && !sent.acked
                && found.is_none_or(|f| sequence_greater_than(sequence, f))
            {
                found = Some(sequence);
            }
        }
        let Some(sequence) = found else { return };
        if let Some(sent) = self.sent.get_mut(sequence) {
            sent.acked = true;
        }
        self.stats.acked += 1;
        if self
            .stats
            .newest_acked
            .is_none_or(|n| !self.sent.contains(n) || sequence_greater_than(sequence, n))
        {
            self.stats.newest_acked = Some(sequence);
        }
    }

    /// The baseline for snapshot `sequence`: the newest acked, if the peer and the
    /// history still hold it and it is less than `history` snapshots old.
    fn baseline_for<S: NetDelta + PartialEq>(
        &self,
        sequence: u16,
        history: &SnapshotHistory<S>,
    ) -> Option<u16> {
        let baseline = self.stats.newest_acked?;
        let age = usize::from(sequence.wrapping_sub(baseline));
        let held = self.sent.get(baseline).is_some_and(|s| s.acked);
        (held && (1..self.config.history).contains(&age) && history.get(baseline).is_some())
            .then_some(baseline)
    }

    /// Sends the newest snapshot of `history` to this peer over `connection` (after
    /// taking the connection's acks): against the newest snapshot the peer acked, or
    /// whole. A snapshot equal to that baseline is sent only if the last send was
    /// `keep_alive` or more ago.
    ///
    /// # Errors
    /// [`SnapshotSendError`]; nothing is sent then.
    pub fn send<S, Out, In>(
        &mut self,
        now: f64,
        history: &mut SnapshotHistory<S>,
        connection: &mut Connection<Out, In>,
    ) -> Result<SendOutcome, SnapshotSendError>
    where
        S: NetDelta + PartialEq,
        Out: NetSerialize,
        In: NetSerialize,
    {
        for packet in connection.drain_acked_sections() {
            self.on_packet_acked(packet);
        }
        let (sequence, snapshot) = history.newest().ok_or(SnapshotSendError::NoSnapshot)?;
        if self.sent.is_empty() || self.sent.is_stale(sequence) {
            // A new peer, or one that missed half the circle: start its ring here.
            super::start_ring_at(&mut self.sent, sequence);
            self.stats.newest_acked = None;
        }
        if self.sent.contains(sequence) {
            return Ok(SendOutcome::AlreadySent);
        }
        let baseline = self.baseline_for(sequence, history);
        if let Some(b) = baseline {
            if now - self.last_sent < self.config.keep_alive && history.get(b) == Some(snapshot) {
                self.stats.unchanged_skipped += 1;
                return Ok(SendOutcome::Unchanged);
            }
        }
        let encoding = history
            .encoding(baseline)
            .map_err(SnapshotSendError::Encode)?;
        let bits = encoding.bits;
        let packet_sequence = connection
            .send_section(now, &encoding.bytes, bits)
            .map_err(SnapshotSendError::Section)?;
        // Snapshot sequences only move forward: never stale.
        let _ = self.sent.insert(
            sequence,
            Sent {
                packet: packet_sequence,
                acked: false,
            },
        );
        self.last_sent = now;
        let stats = &mut self.stats;
        stats.sent += 1;
        stats.bits_sent += bits;
        stats.last_bits = bits;
        stats.last_baseline_age = baseline.map(|b| sequence.wrapping_sub(b));
        match baseline {
            Some(_) => stats.delta_sent += 1,
            None => stats.absolute_sent += 1,
        }
        Ok(SendOutcome::Sent {
            sequence,
            packet_sequence,
            baseline,
            bits,
        })
    }
}

/// A snapshot sender for one peer: a [`SnapshotHistory`] and a [`SnapshotPeer`]. See the
/// [module docs](super) for a run.
#[derive(Debug)]
pub struct SnapshotSender<S> {
    history: SnapshotHistory<S>,
    peer: SnapshotPeer,
}

impl<S: NetDelta + PartialEq> SnapshotSender<S> {
    /// A sender that has sent nothing.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    ///
    /// ```
    /// use netser_transport::snapshot::{SnapshotConfig, SnapshotSender};
    /// assert!(SnapshotSender::<u8>::new(SnapshotConfig::default()).is_ok());
    /// ```
    pub fn new(config: SnapshotConfig) -> Result<Self, SnapshotConfigError> {
        Ok(Self {
            history: SnapshotHistory::new(config.clone())?,
            peer: SnapshotPeer::new(config)?,
        })
    }

    /// Pushes `snapshot` as the newest (its sequence is the previous one's plus one) and
    /// sends it to the peer as [`SnapshotPeer::send`] does.
    ///
    /// # Errors
    /// [`SnapshotSendError`]; the snapshot is in the history but was not sent.
    pub fn send<Out: NetSerialize, In: NetSerialize>(
        &mut self,
        now: f64,
        connection: &mut Connection<Out, In>,
        snapshot: S,
    ) -> Result<SendOutcome, SnapshotSendError> {
        self.history.push(snapshot);
        self.peer.send(now, &mut self.history, connection)
    }

    /// What was sent.
    pub fn stats(&self) -> &SnapshotStats {
        self.peer.stats()
    }

    /// The snapshots kept.
    pub fn history(&self) -> &SnapshotHistory<S> {
        &self.history
    }

    /// The most heap bytes the sender holds (its history and its peer record).
    pub fn memory_bound(&self) -> usize {
        self.history
            .memory_bound()
            .saturating_add(self.peer.memory_bound())
    }
}
