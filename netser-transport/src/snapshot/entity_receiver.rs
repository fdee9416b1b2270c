//! The receiving side of entity sets: the states the last `window` packets carried (the
//! baselines the sender can name) and the newest state of every entity.

use netser::{Decoder, NetDelta, NetSerialize, ReadStream};

use super::entities::EntityConfig;
use super::receiver::SnapshotRefusal;
use super::{SnapshotConfigError, KIND_ENTITIES};
use crate::connection::{section::check_padding, Connection, ReceiveError, ReceivedSection};
use crate::sequence::{sequence_difference, SequenceBuffer};

/// What an [`EntityReceiver`] has done: every section it was handed is counted once, as
/// taken, duplicate, stale or one of the refusals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EntityCounters {
    /// Entity-set sections handed in.
    pub received: u64,
    /// Decoded and applied.
    pub taken: u64,
    /// A packet already taken.
    pub duplicates: u64,
    /// A packet older than the window: taken and ignored (the sender can no longer name
    /// it as a baseline).
    pub stale: u64,
    /// Refused: an entity encoded against a state this receiver does not hold.
    pub unknown_baseline: u64,
    /// Refused: an entity encoded against a packet that already left the window (a
    /// packet delayed past `window` newer ones).
    pub baseline_evicted: u64,
    /// Refused: a whole snapshot where an entity set was expected.
    pub wrong_kind: u64,
    /// Refused: did not decode (an id out of range or twice, bits after the set).
    pub malformed: u64,
    /// Entity updates applied (an update older than one already applied is skipped).
    pub updates_applied: u64,
}

/// The receiving side of entity sets: decodes each entity against the state it names,
/// keeps the states the last `window` packets carried, and the newest state of every
/// entity for the game. See [`EntitySender`](super::EntitySender) for a run.
#[derive(Debug)]
pub struct EntityReceiver<E> {
    config: EntityConfig,
    /// By packet sequence: the states it carried, sorted by id.
    ring: SequenceBuffer<Vec<(u32, E)>>,
    entities: Vec<Option<E>>,
    /// The packet (as a sequence that does not wrap) of each entity's newest update.
    versions: Vec<Option<u64>>,
    newest_packet: Option<u64>,
    counters: EntityCounters,
    scratch: Vec<(u32, Option<E>)>,
    /// A bit per entity: seen in the packet being read.
    seen: Vec<u64>,
}

impl<E: NetDelta + Clone> EntityReceiver<E> {
    /// A receiver that holds nothing.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    pub fn new(config: EntityConfig) -> Result<Self, SnapshotConfigError> {
        config.validate()?;
        Ok(Self {
            ring: SequenceBuffer::new(config.window),
            entities: (0..config.max_entities).map(|_| None).collect(),
            versions: vec![None; config.max_entities],
            newest_packet: None,
            counters: EntityCounters::default(),
            scratch: Vec::with_capacity(config.max_per_packet),
            seen: vec![0; config.max_entities.div_ceil(64)],
            config,
        })
    }

    /// The newest state of entity `id`, if it exists.
    pub fn entity(&self, id: usize) -> Option<&E> {
        self.entities.get(id)?.as_ref()
    }

    /// The sequence of the packet whose update of entity `id` the receiver holds (its
    /// state, or its removal), if any came.
    pub fn entity_packet(&self, id: usize) -> Option<u16> {
        self.versions.get(id)?.map(|v| v as u16)
    }

    /// The version of entity `id`'s newest update (its state or its removal), if any
    /// came: it grows with each update the receiver applies to the entity and never
    /// repeats, unlike [`entity_packet`](Self::entity_packet), whose 16-bit sequence wraps.
    /// A game that mirrors the entities elsewhere (an engine's world) keeps the version it
    /// applied last and applies again when it differs.
    pub fn entity_version(&self, id: usize) -> Option<u64> {
        *self.versions.get(id)?
    }

    /// Every entity that exists, by id.
    pub fn entities(&self) -> impl Iterator<Item = (usize, &E)> + '_ {
        self.entities
            .iter()
            .enumerate()
            .filter_map(|(id, e)| e.as_ref().map(|e| (id, e)))
    }

    /// Every section counted by outcome.
    pub fn counters(&self) -> &EntityCounters {
        &self.counters
    }

    /// The most heap bytes the receiver holds: the newest state of `max_entities`, and
    /// the states of `window` packets of `max_per_packet`, each with at most
    /// `E::MAX_HEAP_BYTES` of its own.
    pub fn memory_bound(&self) -> usize {
        let c = &self.config;
        let heap = usize::try_from(E::MAX_HEAP_BYTES).unwrap_or(usize::MAX);
        let entity = core::mem::size_of::<Option<E>>()
            .saturating_add(core::mem::size_of::<Option<u64>>())
            .saturating_add(heap);
        let carried = core::mem::size_of::<(u32, E)>().saturating_add(heap);
        c.max_entities
            .saturating_mul(entity)
            .saturating_add(SequenceBuffer::<Vec<(u32, E)>>::heap_bytes_for(c.window))
            .saturating_add(
                c.window
                    .saturating_mul(c.max_per_packet)
                    .saturating_mul(carried),
            )
            .saturating_add(
                c.max_per_packet
                    .saturating_mul(core::mem::size_of::<(u32, Option<E>)>()),
            )
    }

    /// Takes in a datagram for `connection`, handing it the packet's entity set.
    ///
    /// # Errors
    /// The connection's [`ReceiveError`]; [`ReceiveError::SectionRefused`] when the set
    /// was refused (its reason is counted in [`counters`](Self::counters)).
    pub fn handle_datagram<Out: NetSerialize, In: NetSerialize>(
        &mut self,
        now: f64,
        connection: &mut Connection<Out, In>,
        bytes: &[u8],
    ) -> Result<(), ReceiveError> {
        connection.handle_datagram_with(now, bytes, |section| self.take_section(section))
    }

    /// The callback for [`Connection::handle_datagram_with`]: whether the set was taken.
    pub fn take_section(&mut self, section: ReceivedSection<'_>) -> bool {
        self.receive_section(section.packet_sequence, &mut section.reader())
            .is_ok()
    }

    /// Reads one entity set (the rest of packet `packet_sequence`) and applies it.
    ///
    /// # Errors
    /// [`SnapshotRefusal`], counted; nothing is applied then.
    pub fn receive_section(
        &mut self,
        packet_sequence: u16,
        r: &mut ReadStream<'_>,
    ) -> Result<(), SnapshotRefusal> {
        self.counters.received += 1;
        let result = self.decode_section(packet_sequence, r);
        match &result {
            Ok(()) => {}
            Err(SnapshotRefusal::UnknownBaseline { .. }) => self.counters.unknown_baseline += 1,
            Err(SnapshotRefusal::BaselineEvicted { .. }) => self.counters.baseline_evicted += 1,
            Err(SnapshotRefusal::WrongKind) => self.counters.wrong_kind += 1,
            Err(SnapshotRefusal::Malformed(_)) => self.counters.malformed += 1,
        }
        result
    }

    fn decode_section(
        &mut self,
        packet: u16,
        r: &mut ReadStream<'_>,
    ) -> Result<(), SnapshotRefusal> {
        let malformed = SnapshotRefusal::Malformed;
        if r.read_bool().map_err(malformed)? != KIND_ENTITIES {
            return Err(SnapshotRefusal::WrongKind);
        }
        if self.newest_packet.is_none() && self.ring.is_empty() {
            super::start_ring_at(&mut self.ring, packet);
        }
        if self.ring.is_stale(packet) {
            self.counters.stale += 1;
            return Ok(());
        }
        if self.ring.contains(packet) {
            self.counters.duplicates += 1;
            return Ok(());
        }
        let c = &self.config;
        let count = r.read_bits(c.count_bits()).map_err(malformed)? as usize + 1;
        if count > c.max_per_packet {
            return Err(SnapshotRefusal::Malformed(netser::Error::new(
                netser::ErrorKind::LengthTooLong {
                    len: count as u64,
                    max: c.max_per_packet as u64,
                },
                r.bit_position(),
            )));
        }
        self.scratch.clear();
        let result = self.read_entries(packet, count, r);
        for (id, _) in &self.scratch {
            self.seen[*id as usize / 64] = 0;
        }
        result?;
        self.apply(packet);
        Ok(())
    }

    /// Reads `count` entries into `scratch`, marking their ids in `seen`.
    fn read_entries(
        &mut self,
        packet: u16,
        count: usize,
        r: &mut ReadStream<'_>,
    ) -> Result<(), SnapshotRefusal> {
        let malformed = SnapshotRefusal::Malformed;
        let c = &self.config;
        for _ in 0..count {
            let at = r.bit_position();
            let id = r.read_bits(c.id_bits()).map_err(malformed)? as u32;
            let bit = 1u64 << (id % 64);
            if id as usize >= c.max_entities || self.seen[id as usize / 64] & bit != 0 {
                return Err(SnapshotRefusal::Malformed(netser::Error::new(
                    netser::ErrorKind::Custom("entity id out of range or repeated"),
                    at,
                )));
            }
            let state = if r.read_bool().map_err(malformed)? {
                Some(if r.read_bool().map_err(malformed)? {
                    let offset = r.read_bits(c.offset_bits()).map_err(malformed)? as u16 + 1;
                    let baseline = packet.wrapping_sub(offset);
                    if self.ring.is_stale(baseline) {
                        return Err(SnapshotRefusal::BaselineEvicted {
                            sequence: packet,
                            baseline,
                        });
                    }
                    let base = self
                        .ring
                        .get(baseline)
                        .and_then(|states| {
                            states
                                .binary_search_by_key(&id, |(i, _)| *i)
                                .ok()
                                .map(|at| &states[at].1)
                        })
                        .ok_or(SnapshotRefusal::UnknownBaseline {
                            sequence: packet,
                            baseline,
                        })?;
                    E::decode_delta(base, r).map_err(malformed)?
                } else {
                    E::decode(r).map_err(malformed)?
                })
            } else {
                None
            };
            self.seen[id as usize / 64] |= bit;
            self.scratch.push((id, state));
        }
        check_padding(r).map_err(malformed)
    }

    /// Keeps the states read as baselines and applies what is newer than what is held.
    fn apply(&mut self, packet: u16) {
        // Taken: keep the states as baselines and apply what is newer than what we have.
        let version = match self.newest_packet {
            None => (1u64 << 32) + u64::from(packet),
            Some(newest) => {
                newest.wrapping_add_signed(i64::from(sequence_difference(packet, newest as u16)))
            }
        };
        if self.newest_packet.is_none_or(|n| version > n) {
            self.newest_packet = Some(version);
        }
        let mut kept: Vec<(u32, E)> = Vec::with_capacity(self.scratch.len());
        for (id, state) in self.scratch.drain(..) {
            let slot = id as usize;
            if self.versions[slot].is_none_or(|v| version > v) {
                self.versions[slot] = Some(version);
                self.entities[slot] = state.clone();
                self.counters.updates_applied += 1;
            }
            if let Some(state) = state {
                kept.push((id, state));
            }
        }
        kept.sort_unstable_by_key(|(id, _)| *id);
        // Not stale (checked above), so it is stored.
        let _ = self.ring.insert(packet, kept);
        self.counters.taken += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::ConnectionConfig;
    use crate::snapshot::EntitySender;

    /// An entity's version grows with each update applied to it (a removal included) and
    /// stays while other entities change.
    #[test]
    fn versions_grow_per_entity() {
        let config = EntityConfig {
            max_entities: 4,
            ..EntityConfig::default()
        };
        // Acks at once, so that an entity the client holds is acked before the next tick.
        let connection = ConnectionConfig {
            ack_delay: 0.0,
            ..ConnectionConfig::default()
        };
        let mut server: Connection<u8> = Connection::new(0.0, connection.clone()).unwrap();
        let mut client: Connection<u8> = Connection::new(0.0, connection).unwrap();
        let mut sender = EntitySender::<u16>::new(config.clone()).unwrap();
        let mut receiver = EntityReceiver::<u16>::new(config).unwrap();
        let mut now = 0.0;
        let mut tick = |world: &[Option<u16>], receiver: &mut EntityReceiver<u16>| {
            sender.send(now, &mut server, world, |_, _| 1.0).unwrap();
            while let Some(d) = server.poll_transmit(now).map(<[u8]>::to_vec) {
                receiver.handle_datagram(now, &mut client, &d).unwrap();
            }
            while let Some(d) = client.poll_transmit(now).map(<[u8]>::to_vec) {
                server.handle_datagram(now, &d).unwrap();
            }
            now += 0.2;
        };
        assert_eq!(receiver.entity_version(0), None);
        tick(&[Some(1), Some(2)], &mut receiver);
        let (a, b) = (
            receiver.entity_version(0).unwrap(),
            receiver.entity_version(1).unwrap(),
        );
        tick(&[Some(1), Some(3)], &mut receiver);
        assert_eq!(receiver.entity_version(0), Some(a));
        assert!(receiver.entity_version(1).unwrap() > b);
        tick(&[None, Some(3)], &mut receiver);
        assert!(receiver.entity_version(0).unwrap() > a);
        assert_eq!(receiver.entity(0), None);
        assert_eq!(receiver.entity_version(9), None);
    }
}
