//! Entity sets ("State Synchronization"): a world larger than a packet, sent a packet at a
//! time in priority order, each entity against the last state of it the peer acked.
//!
//! The wire (a connection packet's section):
//!
//! ```text
//! 1                  kind: an entity set
//! count - 1          bits_required(0, max_per_packet - 1)
//! per entity:
//!   id               bits_required(0, max_entities - 1)
//!   present          1 bit (0: the entity is gone)
//!   if present:
//!     delta          1 bit
//!     offset         if delta: this packet's sequence - the baseline's packet - 1,
//!                    in bits_required(0, window - 2)
//!     state          NetDelta::encode_delta against the baseline, or NetSerialize::encode
//! ```

use netser::bits::bits_required;
use netser::{Encoder, NetDelta, NetSerialize, WriteStream};

use super::{SnapshotConfigError, KIND_ENTITIES};
use crate::connection::{Connection, SectionError};
use crate::endpoint::header::MAX_PACKET_HEADER_BYTES;
use crate::sequence::{sequence_greater_than, SequenceBuffer};

/// Bytes charged per datagram for the IP and UDP headers.
const UDP_IP_HEADER_BYTES: usize = 28;

/// Give up filling a packet after this many entities in a row did not fit.
const GIVE_UP_MISSES: usize = 32;

/// Settings of an [`EntitySender`] and [`EntityReceiver`](super::EntityReceiver). Both
/// sides must agree on `max_entities`, `max_per_packet` and `window` (they set widths
/// on the wire).
///
/// ```
/// use netser_transport::snapshot::EntityConfig;
/// let config = EntityConfig::default().with_bandwidth(256_000.0, 60.0);
/// assert_eq!(config.packet_budget, 533);
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EntityConfig {
    /// Entity ids are `0..max_entities`, `1..=65536`. Default 4096.
    pub max_entities: usize,
    /// Most entities in one packet, `1..=4096`. Default 256.
    pub max_per_packet: usize,
    /// Packets a baseline may be behind the packet that uses it: a power of two in
    /// `2..=1024`. The receiver keeps the states of the last `window` packets. Default
    /// 256 (about 4 s at 60 packets a second). An entity sent less often than that goes
    /// whole.
    pub window: usize,
    /// Bytes a packet may take, its headers and 28 bytes of IP and UDP included (when
    /// no channel message shares it), at least 64. Default 1200.
    pub packet_budget: usize,
    /// What a removal accumulates per tick (a present entity accumulates what the
    /// game's priority says). Default 1.
    pub removal_priority: f32,
    /// Ticks an entity may wait with something to send before it goes ahead of every
    /// priority (oldest first), so that none starves. Default 120.
    pub max_age: u32,
    /// Seconds before an entity whose state is in flight unacked (and unchanged) is
    /// sent again. Default 0.1.
    pub resend_delay: f64,
}

impl Default for EntityConfig {
    fn default() -> Self {
        Self {
            max_entities: 4096,
            max_per_packet: 256,
            window: 256,
            packet_budget: 1200,
            removal_priority: 1.0,
            max_age: 120,
            resend_delay: 0.1,
        }
    }
}

impl EntityConfig {
    /// This configuration with `packet_budget` set to `bits_per_second` at `packets_per_second`.
    pub fn with_bandwidth(mut self, bits_per_second: f64, packets_per_second: f64) -> Self {
        self.packet_budget = (bits_per_second / 8.0 / packets_per_second) as usize;
        self
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), SnapshotConfigError> {
        let fail = |field, expected| Err(SnapshotConfigError { field, expected });
        if !(1..=65_536).contains(&self.max_entities) {
            return fail("max_entities", "in 1..=65536");
        }
        if !(1..=4096).contains(&self.max_per_packet) {
            return fail("max_per_packet", "in 1..=4096");
        }
        if !(self.window.is_power_of_two() && (2..=1024).contains(&self.window)) {
            return fail("window", "a power of two in 2..=1024");
        }
        if self.packet_budget < 64 {
            return fail("packet_budget", "at least 64 bytes");
        }
        if !(self.removal_priority.is_finite() && self.removal_priority >= 0.0) {
            return fail("removal_priority", "finite and at least 0");
        }
        if self.max_age == 0 {
            return fail("max_age", "at least 1");
        }
        if !(self.resend_delay.is_finite() && self.resend_delay >= 0.0) {
            return fail("resend_delay", "finite and at least 0");
        }
        Ok(())
    }

    pub(crate) fn id_bits(&self) -> u32 {
        bits_required(0, self.max_entities as u64 - 1)
    }

    pub(crate) fn count_bits(&self) -> u32 {
        bits_required(0, self.max_per_packet as u64 - 1)
    }

    pub(crate) fn offset_bits(&self) -> u32 {
        bits_required(0, self.window as u64 - 2)
    }
}

/// An entity set that could not be sent. Nothing went out when it is returned.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EntitySendError {
    /// The world has more slots than `max_entities`.
    TooManyEntities {
        /// Slots given.
        len: usize,
        /// The configured most.
        max: usize,
    },
    /// An entity did not encode: a value outside its declared bounds.
    Encode {
        /// Its id.
        id: usize,
        /// Why.
        error: netser::Error,
    },
    /// The connection refused the section.
    Section(SectionError),
}

impl core::fmt::Display for EntitySendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooManyEntities { len, max } => {
                write!(f, "{len} entity slots given, over max_entities {max}")
            }
            Self::Encode { id, .. } => write!(f, "entity {id} does not encode"),
            Self::Section(_) => write!(f, "the connection refused the entity set"),
        }
    }
}

impl std::error::Error for EntitySendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Encode { error, .. } => Some(error),
            Self::Section(error) => Some(error),
            Self::TooManyEntities { .. } => None,
        }
    }
}

/// What an [`EntitySender`] has done.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct EntityStats {
    /// Packets sent.
    pub packets_sent: u64,
    /// Entity states sent whole.
    pub absolute_sent: u64,
    /// Entity states sent against a baseline.
    pub delta_sent: u64,
    /// Removals sent.
    pub removals_sent: u64,
    /// Entities with something to send after the last send (waiting for a later packet).
    pub pending: usize,
    /// The longest any entity with something to send had waited since it was last sent
    /// (or since it had something to send), in ticks, at the last send.
    pub max_age: u32,
    /// The most `max_age` ever was.
    pub max_age_ever: u32,
    /// Section bits sent in all.
    pub bits_sent: u64,
    /// Section bits of the last packet.
    pub last_bits: u64,
}

#[derive(Debug, Clone)]
struct Sent<E> {
    /// The first of the packets that sent this same value in a row: an ack of any of
    /// them means the peer holds it (it applies the newest packet it got, all of which
    /// since carry this value).
    first_packet: u16,
    /// `None`: a removal.
    value: Option<E>,
    time: f64,
    acked: bool,
}

/// One entity's record on the sender.
#[derive(Debug, Clone)]
struct Track<E> {
    priority: f32,
    /// The tick it was last sent, or since which it has something to send.
    since: u64,
    waiting: bool,
    newest_sent: Option<Sent<E>>,
    /// The packet of the newest state (or removal) the peer acked.
    acked_packet: Option<u16>,
    /// The state acked in it (`None`: a removal).
    acked: Option<E>,
}

impl<E> Default for Track<E> {
    fn default() -> Self {
        Self {
            priority: 0.0,
            since: 0,
            waiting: false,
            newest_sent: None,
            acked_packet: None,
            acked: None,
        }
    }
}

/// One client's priority accumulator and per-entity baselines. Each tick, every entity
/// with something new to send (it changed since it was last sent, it appeared or
/// vanished, or its last send went unacked for `resend_delay`) adds its priority to what
/// it accumulated; the packet is filled to `packet_budget` in order of what they
/// accumulated (entities that waited `max_age` ticks first, oldest first), each entity
/// delta-encoded against the last state of it the peer acked; the ones sent start again
/// from zero.
///
/// ```
/// use netser_transport::connection::{Connection, ConnectionConfig};
/// use netser_transport::snapshot::{EntityConfig, EntityReceiver, EntitySender};
/// use netser::NetSerialize;
///
/// #[derive(NetSerialize, Debug, Clone, PartialEq)]
/// #[net(delta)]
/// struct Pos(u16);
///
/// // 1000 entities, 100 bytes a packet: 17 fit each.
/// let config = EntityConfig { max_entities: 1000, packet_budget: 100, ..EntityConfig::default() };
/// let mut server: Connection<u8> = Connection::new(0.0, ConnectionConfig::default())?;
/// let mut client: Connection<u8> = Connection::new(0.0, ConnectionConfig::default())?;
/// let mut sender = EntitySender::<Pos>::new(config.clone())?;
/// let mut receiver = EntityReceiver::<Pos>::new(config)?;
/// let world: Vec<Option<Pos>> = (0..1000).map(|i| Some(Pos(i))).collect();
/// for tick in 0..30 {
///     let now = f64::from(tick) / 60.0;
///     // Entity 7 matters most: it goes in every packet it has news in.
///     sender.send(now, &mut server, &world, |id, _| if id == 7 { 1000.0 } else { 1.0 })?;
///     while let Some(datagram) = server.poll_transmit(now).map(<[u8]>::to_vec) {
///         assert!(datagram.len() + 28 <= 100);
///         receiver.handle_datagram(now, &mut client, &datagram)?;
///     }
///     while let Some(datagram) = client.poll_transmit(now).map(<[u8]>::to_vec) {
///         server.handle_datagram(now, &datagram)?;
///     }
/// }
/// assert_eq!(receiver.entity(7), Some(&Pos(7)));
/// assert!(sender.stats().pending > 0); // still filling in the rest
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EntitySender<E> {
    config: EntityConfig,
    tracks: Vec<Track<E>>,
    /// By packet sequence: what each packet carried.
    in_flight: SequenceBuffer<Vec<(u32, Option<E>)>>,
    tick: u64,
    stats: EntityStats,
    /// Scratch: entities with something to send, the section being built.
    candidates: Vec<u32>,
    entries: Vec<u8>,
    section: Vec<u8>,
    section_bits: u64,
}

impl<E: NetDelta + PartialEq + Clone> EntitySender<E> {
    /// A sender for a peer that holds nothing yet.
    ///
    /// # Errors
    /// [`SnapshotConfigError`] if the configuration does not validate.
    pub fn new(config: EntityConfig) -> Result<Self, SnapshotConfigError> {
        config.validate()?;
        let section_bytes = config.packet_budget;
        Ok(Self {
            tracks: (0..config.max_entities).map(|_| Track::default()).collect(),
            in_flight: SequenceBuffer::new(config.window),
            tick: 0,
            stats: EntityStats::default(),
            candidates: Vec::with_capacity(config.max_entities),
            entries: vec![0; section_bytes],
            section: vec![0; section_bytes],
            section_bits: 0,
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &EntityConfig {
        &self.config
    }

    /// What was sent.
    pub fn stats(&self) -> &EntityStats {
        &self.stats
    }

    /// Ticks entity `id` has waited with something to send (`None` if it has nothing to
    /// send, as of the last [`send`](Self::send)).
    pub fn age(&self, id: usize) -> Option<u32> {
        let track = self.tracks.get(id)?;
        track
            .waiting
            .then(|| (self.tick - track.since).min(u64::from(u32::MAX)) as u32)
    }

    /// The most heap bytes the sender holds: a record per entity, and the states of
    /// the last `window` packets (`max_per_packet` each at most), each entity with at
    /// most `E::MAX_HEAP_BYTES` of its own (three copies: in the world record, the acked
    /// baseline and in flight), and two scratch packets.
    pub fn memory_bound(&self) -> usize {
        let c = &self.config;
        let heap = usize::try_from(E::MAX_HEAP_BYTES).unwrap_or(usize::MAX);
        let tracks = c.max_entities.saturating_mul(
            core::mem::size_of::<Track<E>>().saturating_add(heap.saturating_mul(2)) + 4,
        );
        let in_flight = SequenceBuffer::<Vec<(u32, Option<E>)>>::heap_bytes_for(c.window)
            .saturating_add(
                c.window
                    .saturating_mul(c.max_per_packet)
                    .saturating_mul(core::mem::size_of::<(u32, Option<E>)>().saturating_add(heap)),
            );
        tracks
            .saturating_add(in_flight)
            .saturating_add(c.packet_budget.saturating_mul(2))
    }

    /// Records the acks the connection reports: each entity's baseline becomes the
    /// newest state of it acked.
    fn process_acks<Out: NetSerialize, In: NetSerialize>(
        &mut self,
        connection: &mut Connection<Out, In>,
        current: u16,
    ) {
        let window = self.config.window;
        for packet in connection.drain_acked_sections() {
            let Some(carried) = self.in_flight.remove(packet) else {
                continue;
            };
            for (id, value) in carried {
                let track = &mut self.tracks[id as usize];
                let newer = match track.acked_packet {
                    None => true,
                    // A baseline outside the window is as good as none (and its sequence
                    // may have wrapped).
                    Some(p) => {
                        usize::from(current.wrapping_sub(p)) >= window
                            || sequence_greater_than(packet, p)
                    }
                };
                if newer {
                    track.acked_packet = Some(packet);
                    track.acked = value;
                }
                if let Some(sent) = &mut track.newest_sent {
                    if packet == sent.first_packet
                        || sequence_greater_than(packet, sent.first_packet)
                    {
                        sent.acked = true;
                    }
                }
            }
        }
    }

    /// Sends the next packet of `world` (slot `id` holds entity `id`, `None` if it does
    /// not exist) to the peer over `connection`, after taking the connection's acks.
    /// `priority(id, entity)` is what each entity with something to send adds to its
    /// accumulated priority this tick (negative or NaN counts as 0): a function of the
    /// entity (its distance to the player, whether it is interacting), or per-entity
    /// values the game keeps (`|id, _| priorities[id]`). Call once a tick.
    /// Returns the packet's sequence, or `None` when nothing had to go.
    ///
    /// # Errors
    /// [`EntitySendError`]; nothing is sent then.
    pub fn send<Out: NetSerialize, In: NetSerialize>(
        &mut self,
        now: f64,
        connection: &mut Connection<Out, In>,
        world: &[Option<E>],
        mut priority: impl FnMut(usize, &E) -> f32,
    ) -> Result<Option<u16>, EntitySendError> {
        if world.len() > self.config.max_entities {
            return Err(EntitySendError::TooManyEntities {
                len: world.len(),
                max: self.config.max_entities,
            });
        }
        let current = connection.next_packet_sequence();
        self.process_acks(connection, current);
        self.tick += 1;
        let tick = self.tick;
        // Accumulate, and list the entities with something to send.
        self.candidates.clear();
        // Never before the ack could be back.
        let resend_delay = self.config.resend_delay.max(connection.rtt() * 1.25);
        for (id, track) in self.tracks.iter_mut().enumerate() {
            let value = world.get(id).and_then(Option::as_ref);
            let news = match &track.newest_sent {
                None => value.is_some(),
                Some(sent) => {
                    sent.value.as_ref() != value || (!sent.acked && now - sent.time >= resend_delay)
                }
            };
            if !news {
                track.waiting = false;
                track.priority = 0.0;
                continue;
            }
            if !track.waiting {
                track.waiting = true;
                track.since = tick - 1;
            }
            let add = match value {
                Some(entity) => priority(id, entity),
                None => self.config.removal_priority,
            };
            if add > 0.0 {
                track.priority += add;
            }
            self.candidates.push(id as u32);
        }
        // Entities past max_age first (oldest first), then by accumulated priority.
        let max_age = u64::from(self.config.max_age);
        let tracks = &self.tracks;
        self.candidates.sort_unstable_by(|&a, &b| {
            let (ta, tb) = (&tracks[a as usize], &tracks[b as usize]);
            let (age_a, age_b) = (tick - ta.since, tick - tb.since);
            (age_b >= max_age)
                .cmp(&(age_a >= max_age))
                .then_with(|| {
                    if age_a >= max_age && age_b >= max_age {
                        age_b.cmp(&age_a)
                    } else {
                        tb.priority.total_cmp(&ta.priority)
                    }
                })
                .then(a.cmp(&b))
        });
        let sent = self.fill(current, world, connection.max_section_bits())?;
        let result = if sent.is_empty() {
            None
        } else {
            let bits = self.section_bits;
            let packet = connection
                .send_section(now, &self.section, bits)
                .map_err(EntitySendError::Section)?;
            debug_assert_eq!(packet, current, "offsets were counted from this packet");
            let window = self.config.window;
            for (id, value) in &sent {
                let track = &mut self.tracks[*id as usize];
                track.priority = 0.0;
                track.waiting = false;
                let first_packet = match &track.newest_sent {
                    Some(previous)
                        if previous.value == *value
                            && usize::from(packet.wrapping_sub(previous.first_packet)) < window =>
                    {
                        previous.first_packet
                    }
                    _ => packet,
                };
                track.newest_sent = Some(Sent {
                    first_packet,
                    value: value.clone(),
                    time: now,
                    acked: false,
                });
            }
            self.stats.packets_sent += 1;
            self.stats.bits_sent += bits;
            self.stats.last_bits = bits;
            // The connection's sequences only move forward: never stale.
            let _ = self.in_flight.insert(packet, sent);
            Some(packet)
        };
        let mut max_age_now = 0;
        let mut pending = 0;
        for track in self.tracks.iter().filter(|t| t.waiting) {
            pending += 1;
            max_age_now = max_age_now.max((tick - track.since).min(u64::from(u32::MAX)) as u32);
        }
        self.stats.pending = pending;
        self.stats.max_age = max_age_now;
        self.stats.max_age_ever = self.stats.max_age_ever.max(max_age_now);
        Ok(result)
    }

    /// Writes the candidates that fit the budget, in order, into the section; returns
    /// what went.
    fn fill(
        &mut self,
        current: u16,
        world: &[Option<E>],
        max_section_bits: u64,
    ) -> Result<Vec<(u32, Option<E>)>, EntitySendError> {
        let Self {
            config,
            tracks,
            candidates,
            entries,
            section,
            section_bits,
            stats,
            ..
        } = self;
        let mut sent = Vec::new();
        // The datagram: IP and UDP, the endpoint header, then the payload rounded up to
        // bytes, which holds the 2 bits that end the channels and mark the section, and
        // up to `ACK_DELAY_BITS` of ack delay (WIRE.md section 5).
        let budget_bytes = config
            .packet_budget
            .saturating_sub(UDP_IP_HEADER_BYTES + MAX_PACKET_HEADER_BYTES);
        let budget = (budget_bytes as u64 * 8)
            .saturating_sub(2 + crate::connection::ACK_DELAY_BITS)
            .min(max_section_bits);
        let (id_bits, count_bits, offset_bits) =
            (config.id_bits(), config.count_bits(), config.offset_bits());
        let header = 1 + u64::from(count_bits);
        if budget <= header {
            return Ok(sent);
        }
        let mut remaining = budget - header;
        let mut w = WriteStream::new(entries);
        let mut misses = 0;
        let encode_error = |id: u32| {
            move |error| EntitySendError::Encode {
                id: id as usize,
                error,
            }
        };
        for &id in candidates.iter() {
            if sent.len() == config.max_per_packet || misses >= GIVE_UP_MISSES {
                break;
            }
            let track = &tracks[id as usize];
            let value = world.get(id as usize).and_then(Option::as_ref);
            let baseline = match (value, track.acked_packet, &track.acked) {
                (Some(_), Some(p), Some(b))
                    if (1..config.window).contains(&usize::from(current.wrapping_sub(p))) =>
                {
                    Some((p, b))
                }
                _ => None,
            };
            let body = match (value, baseline) {
                (None, _) => 0,
                (Some(v), Some((_, b))) => {
                    1 + u64::from(offset_bits)
                        + v.measure_delta_bits(b).map_err(encode_error(id))?
                }
                (Some(v), None) => 1 + v.measure_bits().map_err(encode_error(id))?,
            };
            let bits = u64::from(id_bits) + 1 + body;
            if bits > remaining {
                misses += 1;
                continue;
            }
            misses = 0;
            let write = |w: &mut WriteStream<'_>| -> netser::Result<()> {
                w.write_bits(u64::from(id), id_bits)?;
                w.write_bool(value.is_some())?;
                if let Some(v) = value {
                    w.write_bool(baseline.is_some())?;
                    match baseline {
                        Some((p, b)) => {
                            w.write_bits(u64::from(current.wrapping_sub(p) - 1), offset_bits)?;
                            v.encode_delta(b, w)?;
                        }
                        None => v.encode(w)?,
                    }
                }
                Ok(())
            };
            write(&mut w).map_err(encode_error(id))?;
            remaining -= bits;
            match (value, baseline) {
                (None, _) => stats.removals_sent += 1,
                (Some(_), Some(_)) => stats.delta_sent += 1,
                (Some(_), None) => stats.absolute_sent += 1,
            }
            sent.push((id, value.cloned()));
        }
        let entry_bits = w.bit_position();
        w.finish();
        if sent.is_empty() {
            return Ok(sent);
        }
        let mut s = WriteStream::new(section);
        let write = |s: &mut WriteStream<'_>| -> netser::Result<()> {
            s.write_bool(KIND_ENTITIES)?;
            s.write_bits(sent.len() as u64 - 1, count_bits)?;
            crate::channel::wire::copy_bits(s, entries, entry_bits)
        };
        write(&mut s).expect("the section fits the budget it was filled to");
        *section_bits = s.bit_position();
        s.finish();
        Ok(sent)
    }
}
