//! State synchronization ("Snapshot Compression", "State Synchronization"): the game's
//! world sent as snapshots, each delta-encoded against the newest snapshot the peer is
//! known to hold, over a [`Connection`](crate::connection::Connection) whose acks say
//! which arrived.
//!
//! Two ways to send a world:
//!
//! * **Whole snapshots** ([`SnapshotSender`], [`SnapshotReceiver`]) for a world that fits
//!   a packet once delta-encoded. The sender keeps a ring of the last
//!   [`history`](SnapshotConfig::history) snapshots with the packet that carried each;
//!   the connection reports which packets were acked; each new snapshot goes against the
//!   newest acked one (absolute when none is acked, or it left the ring), and names it on
//!   the wire. The receiver keeps a ring of what it decoded and refuses a snapshot whose
//!   baseline it does not hold (counted, and the packet left unacked), so it never
//!   decodes a wrong value. A server with many clients keeps one [`SnapshotHistory`]
//!   and a [`SnapshotPeer`] per client: clients that hold the same baseline share one
//!   encoding.
//! * **Entity sets** ([`EntitySender`], [`EntityReceiver`]) for a world larger than a
//!   packet: a priority accumulator fills each packet to a byte budget with the entities
//!   that most need sending, each delta-encoded against the last state of it the peer
//!   acked.
//!
//! The types sent implement [`netser::NetDelta`] (`#[derive(NetSerialize)]` with
//! `#[net(delta)]`, or by hand).
//!
//! # A world at rest
//!
//! A snapshot equal (`==`) to the baseline the peer acked tells the peer nothing new, so
//! it is sent only every [`keep_alive`](SnapshotConfig::keep_alive) seconds (to keep the
//! peer's view of time and the acks moving); in between, nothing goes, not even a packet
//! of acks (the peer owes acks only for packets that carried something). Store quantized
//! values in the snapshot, so that a world at rest compares equal.
//!
//! # Memory
//!
//! Everything is bounded by the configuration and the snapshot type's own bounds
//! ([`netser::NetSerialize::MAX_HEAP_BYTES`]): see
//! [`SnapshotReceiver::memory_bound`], [`SnapshotHistory::memory_bound`],
//! [`SnapshotPeer::memory_bound`] and the entity types' `memory_bound`.
//!
//! # Wire
//!
//! A snapshot is the *section* of a connection packet (after the channels' messages,
//! see WIRE.md):
//!
//! ```text
//! 0                  kind: a whole snapshot (1: an entity set, see `EntitySender`)
//! sequence           16 bits, wrapping
//! delta              1 bit
//! baseline offset    if delta: sequence - baseline - 1, in bits_required(0, history - 2)
//! snapshot           NetDelta::encode_delta against the baseline, or NetSerialize::encode
//! ```
//!
//! A run over the simulator, with a world that changes one value a tick:
//!
//! ```
//! use netser_transport::connection::{Connection, ConnectionConfig};
//! use netser_transport::snapshot::{SnapshotConfig, SnapshotReceiver, SnapshotSender};
//! use netser::NetSerialize;
//!
//! #[derive(NetSerialize, Debug, Clone, PartialEq)]
//! #[net(delta)] // the delta encoding, from the same description
//! struct World([u16; 8]);
//!
//! let config = SnapshotConfig::default();
//! let mut server: Connection<u8> = Connection::new(0.0, ConnectionConfig::default())?;
//! // The client sends nothing that could carry its acks: it acks each snapshot at once.
//! let acks_at_once = ConnectionConfig { ack_delay: 0.0, ..ConnectionConfig::default() };
//! let mut client: Connection<u8> = Connection::new(0.0, acks_at_once)?;
//! let mut sender = SnapshotSender::new(config.clone())?;
//! let mut receiver = SnapshotReceiver::<World>::new(config)?;
//! let mut world = World([0; 8]);
//! for tick in 0..60u16 {
//!     let now = f64::from(tick) / 60.0;
//!     world.0[usize::from(tick % 8)] = tick;
//!     sender.send(now, &mut server, world.clone())?;
//!     while let Some(datagram) = server.poll_transmit(now).map(<[u8]>::to_vec) {
//!         receiver.handle_datagram(now, &mut client, &datagram)?;
//!     }
//!     while let Some(datagram) = client.poll_transmit(now).map(<[u8]>::to_vec) {
//!         server.handle_datagram(now, &datagram)?; // the acks
//!     }
//!     assert_eq!(receiver.newest().map(|(_, w)| w), Some(&world));
//! }
//! // The first went whole; the others against the one before, which was acked at once.
//! assert_eq!(sender.stats().absolute_sent, 1);
//! assert_eq!(sender.stats().last_baseline_age, Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod entities;
mod entity_receiver;
mod history;
mod receiver;
mod sender;
mod sync;

pub use entities::{EntityConfig, EntitySendError, EntitySender, EntityStats};
pub use entity_receiver::{EntityCounters, EntityReceiver};
pub use history::{HistoryCounters, SnapshotHistory};
pub use receiver::{ReceiverCounters, SnapshotReceiver, SnapshotRefusal};
pub use sender::{SendOutcome, SnapshotPeer, SnapshotSendError, SnapshotSender, SnapshotStats};
pub use sync::SnapshotError;
pub(crate) use sync::{ClientReceivers, ClientSync};

use netser::bits::bits_required;
use netser::{Decoder, Encoder};

use crate::sequence::SequenceBuffer;

/// Most snapshots a [`SnapshotConfig::history`] keeps.
pub const MAX_HISTORY: usize = 1024;

/// The kind bit of a whole snapshot section.
const KIND_SNAPSHOT: bool = false;
/// The kind bit of an entity-set section.
const KIND_ENTITIES: bool = true;

/// Settings of a snapshot sender and receiver. Both sides must use the same `history`
/// (it sets the width of the baseline offset on the wire).
///
/// ```
/// use netser_transport::snapshot::SnapshotConfig;
/// let config = SnapshotConfig::default();
/// assert_eq!(config.history, 64);
/// assert!(SnapshotConfig { history: 48, ..config }.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotConfig {
    /// Snapshots each side keeps, the baselines it can use: a power of two in
    /// `2..=1024`. Default 64 (a second at 60 Hz). A baseline must be acked within this
    /// many snapshots to be used, so at `r` snapshots a second it should exceed `r`
    /// times the round-trip time, or snapshots go absolute.
    pub history: usize,
    /// Seconds between sends of a snapshot equal to the baseline the peer acked (a world
    /// at rest). Default 0.1; 0 sends every snapshot.
    pub keep_alive: f64,
    /// The sequence of the first snapshot a sender pushes. Default 0; a test starts near
    /// 65535 to cross the wrap early.
    pub first_sequence: u16,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        Self {
            history: 64,
            keep_alive: 0.1,
            first_sequence: 0,
        }
    }
}

impl SnapshotConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), SnapshotConfigError> {
        if !(self.history.is_power_of_two() && (2..=MAX_HISTORY).contains(&self.history)) {
            return Err(SnapshotConfigError {
                field: "history",
                expected: "a power of two in 2..=1024",
            });
        }
        if !(self.keep_alive.is_finite() && self.keep_alive >= 0.0) {
            return Err(SnapshotConfigError {
                field: "keep_alive",
                expected: "finite and at least 0",
            });
        }
        Ok(())
    }

    /// Bits of the baseline offset on the wire.
    fn offset_bits(&self) -> u32 {
        bits_required(0, self.history as u64 - 2)
    }
}

/// A snapshot or entity setting out of range.
///
/// ```
/// use netser_transport::snapshot::SnapshotConfig;
/// let error = SnapshotConfig { keep_alive: -1.0, ..SnapshotConfig::default() }.validate().unwrap_err();
/// assert_eq!(error.to_string(), "snapshot config: keep_alive must be finite and at least 0");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotConfigError {
    /// The field.
    pub field: &'static str,
    /// What it must be.
    pub expected: &'static str,
}

impl core::fmt::Display for SnapshotConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "snapshot config: {} must be {}",
            self.field, self.expected
        )
    }
}

impl std::error::Error for SnapshotConfigError {}

/// Moves an empty ring's window so that `first` is the next sequence it expects (a
/// ring starts at 0; a sender's sequences may be anywhere on the circle when a peer
/// joins). In steps of at most a quarter circle, as a ring only moves forward.
fn start_ring_at<T>(ring: &mut SequenceBuffer<T>, first: u16) {
    ring.reset();
    while ring.sequence() != first {
        let step = first.wrapping_sub(ring.sequence()).min(16_384);
        ring.advance(ring.sequence().wrapping_add(step).wrapping_sub(1));
    }
}

/// The header of a whole snapshot section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SnapshotHeader {
    pub sequence: u16,
    pub baseline: Option<u16>,
}

impl SnapshotHeader {
    /// The longest header: kind, sequence, delta flag and the widest offset (history
    /// 1024).
    pub const MAX_BITS: u64 = 1 + 16 + 1 + 10;

    /// Header bits for `history`: kind, sequence, delta flag and offset.
    pub fn bits(&self, offset_bits: u32) -> u64 {
        1 + 16
            + 1
            + if self.baseline.is_some() {
                u64::from(offset_bits)
            } else {
                0
            }
    }

    pub fn write<E: Encoder>(&self, e: &mut E, offset_bits: u32) -> netser::Result<()> {
        e.write_bool(KIND_SNAPSHOT)?;
        e.write_bits(u64::from(self.sequence), 16)?;
        e.write_bool(self.baseline.is_some())?;
        if let Some(baseline) = self.baseline {
            let offset = self.sequence.wrapping_sub(baseline);
            debug_assert!(offset >= 1);
            e.write_bits(u64::from(offset - 1), offset_bits)?;
        }
        Ok(())
    }

    /// Reads the header after the kind bit.
    pub fn read_after_kind<D: Decoder>(d: &mut D, offset_bits: u32) -> netser::Result<Self> {
        let sequence = d.read_bits(16)? as u16;
        let baseline = if d.read_bool()? {
            let offset = d.read_bits(offset_bits)? as u16 + 1;
            Some(sequence.wrapping_sub(offset))
        } else {
            None
        };
        Ok(Self { sequence, baseline })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each setting out of range is named; the defaults and the edges pass.
    #[test]
    fn configs_validate() {
        assert_eq!(SnapshotConfig::default().validate(), Ok(()));
        for history in [2, 1024] {
            let config = SnapshotConfig {
                history,
                ..SnapshotConfig::default()
            };
            assert_eq!(config.validate(), Ok(()));
        }
        for history in [0, 1, 3, 100, 2048] {
            let config = SnapshotConfig {
                history,
                ..SnapshotConfig::default()
            };
            assert_eq!(config.validate().unwrap_err().field, "history");
        }
        for keep_alive in [-0.1, f64::NAN, f64::INFINITY] {
            let config = SnapshotConfig {
                keep_alive,
                ..SnapshotConfig::default()
            };
            assert_eq!(config.validate().unwrap_err().field, "keep_alive");
        }
        assert_eq!(EntityConfig::default().validate(), Ok(()));
        let bad = [
            (
                EntityConfig {
                    max_entities: 0,
                    ..EntityConfig::default()
                },
                "max_entities",
            ),
            (
                EntityConfig {
                    max_entities: 65_537,
                    ..EntityConfig::default()
                },
                "max_entities",
            ),
            (
                EntityConfig {
                    max_per_packet: 0,
                    ..EntityConfig::default()
                },
                "max_per_packet",
            ),
            (
                EntityConfig {
                    window: 3,
                    ..EntityConfig::default()
                },
                "window",
            ),
            (
                EntityConfig {
                    packet_budget: 63,
                    ..EntityConfig::default()
                },
                "packet_budget",
            ),
            (
                EntityConfig {
                    removal_priority: f32::NAN,
                    ..EntityConfig::default()
                },
                "removal_priority",
            ),
            (
                EntityConfig {
                    max_age: 0,
                    ..EntityConfig::default()
                },
                "max_age",
            ),
            (
                EntityConfig {
                    resend_delay: -1.0,
                    ..EntityConfig::default()
                },
                "resend_delay",
            ),
        ];
        for (config, field) in bad {
            assert_eq!(config.validate().unwrap_err().field, field);
        }
    }

    /// Offsets: history 2 needs none, 64 six bits, 1024 ten (the header's widest).
    #[test]
    fn offset_widths() {
        let bits = |history| {
            SnapshotConfig {
                history,
                ..SnapshotConfig::default()
            }
            .offset_bits()
        };
        assert_eq!((bits(2), bits(64), bits(1024)), (0, 6, 10));
        assert_eq!(SnapshotHeader::MAX_BITS, 1 + 16 + 1 + u64::from(bits(1024)));
    }

    /// A ring placed anywhere on the circle expects exactly that sequence next.
    #[test]
    fn rings_start_anywhere() {
        for first in [0u16, 1, 100, 32_768, 40_000, 65_535] {
            let mut ring = SequenceBuffer::<u8>::new(64);
            ring.insert(3, 1).unwrap();
            start_ring_at(&mut ring, first);
            assert_eq!(ring.sequence(), first);
            assert!(ring.is_empty());
            assert!(!ring.is_stale(first));
            assert!(ring.is_stale(first.wrapping_sub(65)));
        }
    }
}
