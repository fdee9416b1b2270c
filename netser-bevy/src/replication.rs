//! Replication: the server's entities and their registered components, sent to each
//! client through the transport's entity sets
//! ([`EntitySender`](netser_transport::snapshot::EntitySender)), and spawned, updated and
//! despawned on the client.
//!
//! # Registering components
//!
//! The components a game replicates are one type, a tuple, given to both plugins:
//! `NetServerPlugin<ToClient, ToServer, (Position, Health)>` and
//! `NetClientPlugin<ToServer, ToClient, (Position, Health)>`. Each component derives
//! `NetSerialize` with `#[net(delta)]` (the transport sends it against the last state of it
//! the client acked) and `PartialEq` (to tell whether it changed) and `Clone`. A component
//! that is not in the tuple is never sent: the wire has no place for it.
//!
//! The set is a type rather than calls such as `app.replicate::<C>()` because it is part of
//! the protocol: an entity's state is one type, [`EntityState<C>`], whose layout, worst
//! case and schema hash the compiler knows, so the transport's bounds hold for it and the
//! server and its clients cannot register different components in different orders by
//! accident: both name the same type. The set's state is the snapshot type of the game's
//! [`NetProtocol`](crate::NetProtocol), whose id every connect token carries: a client
//! built with another set than the server's is refused at connect
//! ([`SetupError::ProtocolMismatch`](netser_transport::netcode::SetupError::ProtocolMismatch)).
//!
//! # What goes
//!
//! An entity with the [`Replicated`] marker is sent with the components of the set it has
//! (an entity may have none of them: it is still spawned). Each client has its own priority
//! accumulator: each frame, every entity that changed since it was last sent to that
//! client adds its [`ReplicationPriority`] (1 by default) to what it accumulated, and one
//! packet is filled to the byte budget ([`EntityConfig::packet_budget`]) in that order,
//! each entity delta-encoded against the newest state of it the client acked; an entity
//! that waited [`EntityConfig::max_age`] frames goes first. Removing `Replicated` or
//! despawning the entity despawns it on the clients. [`ClientVisibility`] hides entities
//! from some clients (on those, they despawn; shown again, they spawn).
//!
//! On the client, each entity spawned by replication has a [`Remote`] component that names
//! the server's entity, and [`ServerEntityMap`] maps the server's entities to the
//! client's and back (to read an entity named in a message, say).
//!
//! # Bounds
//!
//! At most [`EntityConfig::max_entities`] entities are replicated at once (default 4096,
//! at most 65,536): each takes an id on the wire. An entity beyond it waits, unsent, until a
//! replicated entity goes; [`ReplicationStats::waiting`] says how many wait and
//! [`ReplicationStats::refused`] counts each frame an entity waited. A client holds at most
//! `max_entities` remote entities. The transport's memory follows from the configuration
//! ([`EntitySender::memory_bound`](netser_transport::snapshot::EntitySender::memory_bound)).
//! [`ClientVisibility`] holds a list per connected client of live entities at most.
//!
//! # Cost
//!
//! Each frame the server reads every replicated entity's components of the set (a clone
//! of each) and walks each client's `max_entities` records; a client that does not see
//! everything costs a copy of the states. A client walks its `max_entities` ids in a
//! frame in which something arrived, and writes a component only when it differs, so
//! Bevy's change detection (`Changed<Position>`) fires on real changes only. To replicate
//! less often than every frame, give [`ReplicationSystems::Send`] a run condition.

mod client;
mod server;
mod state;
mod visibility;

pub use client::{ClientReplicationStats, Remote, ServerEntityMap};
pub use server::{Replicated, ReplicationPriority, ReplicationStats};
pub use state::{ComponentSet, EntityState, ReplicatedComponent};
pub use visibility::{ClientVisibility, VisibilityPolicy};

pub(crate) use client::add_client_systems;
pub(crate) use server::add_server_systems;

use bevy_ecs::schedule::SystemSet;
use netser_transport::snapshot::{EntityConfig, SnapshotConfigError};

/// How the plugins replicate: the transport's [`EntityConfig`] (ids, packet budget,
/// priorities); the server's and the clients' must agree on `max_entities`,
/// `max_per_packet` and `window`, which set widths on the wire.
///
/// ```
/// use netser_bevy::ReplicationConfig;
/// use netser_transport::snapshot::EntityConfig;
///
/// // 1,000 entities at most, 16 kB/s per client at 60 frames a second.
/// let entities = EntityConfig { max_entities: 1000, ..EntityConfig::default() }.with_bandwidth(128_000.0, 60.0);
/// let config = ReplicationConfig::new(entities).unwrap();
/// assert_eq!(config.entities().packet_budget, 266);
/// assert!(ReplicationConfig::new(EntityConfig { max_entities: 0, ..EntityConfig::default() }).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplicationConfig {
    entities: EntityConfig,
}

impl ReplicationConfig {
    /// A configuration of entity sets.
    ///
    /// ```
    /// use netser_bevy::ReplicationConfig;
    /// assert_eq!(ReplicationConfig::default().entities().max_entities, 4096);
    /// ```
    ///
    /// # Errors
    /// [`SnapshotConfigError`] naming the first setting out of its bounds.
    pub fn new(entities: EntityConfig) -> Result<Self, SnapshotConfigError> {
        entities.validate()?;
        Ok(Self { entities })
    }

    /// The transport's settings of entity sets.
    ///
    /// ```
    /// use netser_bevy::ReplicationConfig;
    /// assert_eq!(ReplicationConfig::default().entities().packet_budget, 1200);
    /// ```
    pub fn entities(&self) -> &EntityConfig {
        &self.entities
    }
}

/// The system sets of replication. Add a run condition to a set to replicate at a rate of
/// your own (the server sends every frame by default), or order your systems against them.
///
/// ```
/// use bevy_app::{App, PostUpdate};
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ReplicationSystems;
///
/// // Send every other frame.
/// let mut app = App::new();
/// app.configure_sets(
///     PostUpdate,
///     ReplicationSystems::Send.run_if(|mut frame: Local<u64>| {
///         *frame += 1;
///         *frame % 2 == 0
///     }),
/// );
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicationSystems {
    /// `PreUpdate`, after [`NetReceive`](crate::NetReceive), on the client: spawns,
    /// updates and despawns what arrived, so the game's systems in `Update` see it.
    Apply,
    /// `PostUpdate`, before [`NetSend`](crate::NetSend), on the server: reads the
    /// replicated entities and queues each client's packet of them.
    Send,
}
