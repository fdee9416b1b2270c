//! The server side of replication: ids for the replicated entities, their states read each
//! frame, and each client's packet of them.

use std::collections::{HashMap, VecDeque};
use std::marker::PhantomData;

use bevy_app::{App, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::resource::IsResource;
use bevy_ecs::world::EntityRef;
use netser_transport::netcode::ClientId;
use netser_transport::snapshot::{EntityStats, SnapshotError};

use super::state::ComponentSet;
use super::{ClientVisibility, ReplicationConfig, ReplicationSystems};
use crate::{NetMessage, NetSend, NetServer};

/// Marks an entity the server replicates to its clients, with the components of the
/// replicated set it has. Removing it (or despawning the entity) despawns the entity on
/// the clients.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser::NetSerialize;
/// use netser_bevy::Replicated;
///
/// #[derive(Component, NetSerialize, Clone, PartialEq)]
/// #[net(delta)]
/// struct Health(#[net(range = 0..=100)] u8);
///
/// fn spawn_monster(mut commands: Commands) {
///     commands.spawn((Replicated, Health(100)));
/// }
/// ```
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replicated;

/// How much a replicated entity matters: what it adds each frame to its accumulated
/// priority while it has news for a client (1 without this component). Under the byte
/// budget, entities go in the order of what they accumulated, so an entity of priority 10
/// goes about ten times as often as one of priority 1 when not all fit; none starves
/// ([`EntityConfig::max_age`](netser_transport::snapshot::EntityConfig::max_age)).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::{Replicated, ReplicationPriority};
///
/// fn spawn_player(mut commands: Commands) {
///     commands.spawn((Replicated, ReplicationPriority(10.0)));
/// }
/// ```
#[derive(Component, Debug, Clone, Copy, PartialEq)]
pub struct ReplicationPriority(pub f32);

impl Default for ReplicationPriority {
    fn default() -> Self {
        Self(1.0)
    }
}

/// What the server's replication did, refreshed each frame it sends.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ReplicationStats;
///
/// fn show(stats: Res<ReplicationStats>) {
///     println!("{} of {} entities replicated, {} waiting", stats.entities, stats.max_entities, stats.waiting);
///     for (client_id, sent) in &stats.clients {
///         println!("client {client_id}: {} pending, {} bits sent", sent.pending, sent.bits_sent);
///     }
/// }
/// ```
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct ReplicationStats {
    /// Entities replicated (each holds an id).
    pub entities: usize,
    /// Most entities replicated at once: the configuration's `max_entities`.
    pub max_entities: usize,
    /// [`Replicated`] entities beyond `max_entities`, unsent, waiting for an id.
    pub waiting: u64,
    /// Refusals: each frame an entity waited for an id counts one.
    pub refused: u64,
    /// Packets the transport refused to build (an entity out of its declared bounds, say),
    /// counted per client and frame; the last error is in `last_error`.
    pub send_errors: u64,
    /// The last error of the transport.
    pub last_error: Option<SnapshotError>,
    /// What went to each connected client, by id.
    pub clients: Vec<(ClientId, EntityStats)>,
}

/// An entity's id on the wire.
#[derive(Debug, Clone, Copy)]
struct Slot {
    entity: Entity,
    /// The frame it was last seen with `Replicated`.
    seen: u64,
}

/// The replicated entities, their states read each frame.
type ReplicatedQuery = QueryState<
    (
        Entity,
        EntityRef<'static>,
        Option<&'static ReplicationPriority>,
    ),
    (With<Replicated>, Without<IsResource>),
>;

/// The server's replication state: ids, and the world as the transport takes it.
#[derive(Resource)]
struct ServerReplication<C: ComponentSet> {
    config: ReplicationConfig,
    frame: u64,
    ids: HashMap<Entity, u32>,
    slots: Vec<Option<Slot>>,
    /// Ids free, the longest free first (an id freed late is reused late, so that the
    /// clients have heard of the removal).
    free: VecDeque<u32>,
    /// By id: the state sent, `None` for a free id.
    world: Vec<Option<C::State>>,
    priorities: Vec<f32>,
    /// A client's view when it does not see everything.
    view: Vec<Option<C::State>>,
    query: Option<ReplicatedQuery>,
    marker: PhantomData<C>,
}

impl<C: ComponentSet> ServerReplication<C> {
    fn new(config: ReplicationConfig) -> Self {
        Self {
            config,
            frame: 0,
            ids: HashMap::new(),
            slots: Vec::new(),
            free: VecDeque::new(),
            world: Vec::new(),
            priorities: Vec::new(),
            view: Vec::new(),
            query: None,
            marker: PhantomData,
        }
    }

    /// The id of `entity`, given one if it had none and one is free.
    fn id(&mut self, entity: Entity) -> Option<u32> {
        if let Some(&id) = self.ids.get(&entity) {
            return Some(id);
        }
        let id = if self.slots.len() < self.config.entities().max_entities {
            self.slots.push(None);
            self.world.push(None);
            self.priorities.push(0.0);
            (self.slots.len() - 1) as u32
        } else {
            self.free.pop_front()?
        };
        self.ids.insert(entity, id);
        Some(id)
    }

    /// Reads every replicated entity into `world`; frees the ids of those gone.
    fn read(&mut self, world: &mut World, stats: &mut ReplicationStats) {
        self.frame += 1;
        let frame = self.frame;
        let mut query = self.query.take().unwrap_or_else(|| world.query_filtered());
        let mut waiting = 0;
        for (entity, entity_ref, priority) in query.iter(world) {
            let Some(id) = self.id(entity) else {
                waiting += 1;
                continue;
            };
            let id = id as usize;
            self.slots[id] = Some(Slot {
                entity,
                seen: frame,
            });
            self.world[id] = Some(C::state(entity, &entity_ref));
            self.priorities[id] = priority.map_or(1.0, |p| p.0);
        }
        self.query = Some(query);
        for id in 0..self.slots.len() {
            if let Some(slot) = self.slots[id]
                && slot.seen != frame
            {
                self.slots[id] = None;
                self.world[id] = None;
                self.ids.remove(&slot.entity);
                self.free.push_back(id as u32);
            }
        }
        stats.entities = self.ids.len();
        stats.max_entities = self.config.entities().max_entities;
        stats.waiting = waiting;
        stats.refused += waiting;
    }
}

/// Adds the server's replication of `C` to the app.
pub(crate) fn add_server_systems<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    app: &mut App,
    config: ReplicationConfig,
) {
    if C::LEN == 0 {
        return;
    }
    app.insert_resource(ServerReplication::<C>::new(config))
        .init_resource::<ReplicationStats>()
        .init_resource::<ClientVisibility>()
        .configure_sets(PostUpdate, ReplicationSystems::Send.before(NetSend))
        .add_systems(
            PostUpdate,
            send::<Out, In, C>.in_set(ReplicationSystems::Send),
        );
}

/// `PostUpdate`: reads the replicated entities and queues each client's packet.
fn send<Out: NetMessage, In: NetMessage, C: ComponentSet>(world: &mut World) {
    if !world.contains_resource::<NetServer<Out, In, C>>() {
        return;
    }
    world.resource_scope(|world, mut state: Mut<ServerReplication<C>>| {
        world.resource_scope(|world, mut stats: Mut<ReplicationStats>| {
            world.resource_scope(|world, mut server: Mut<NetServer<Out, In, C>>| {
                world.resource_scope(|world, mut visibility: Mut<ClientVisibility>| {
                    if server.is_added() {
                        // A new server: new ids, new counters.
                        let config = state.config.clone();
                        *state = ServerReplication::new(config.clone());
                        *stats = ReplicationStats::default();
                        if let Err(e) = server.set_entity_config(config.entities().clone()) {
                            unreachable!("ReplicationConfig validated its EntityConfig: {e}");
                        }
                    }
                    state.read(world, &mut stats);
                    let clients = server.client_ids();
                    visibility.retain(&clients, |e| world.get_entity(e).is_ok());
                    state.send_all(&mut server, &visibility, &clients, &mut stats);
                });
            });
        });
    });
}

impl<C: ComponentSet> ServerReplication<C> {
    /// Queues each client's packet: the whole world for a client that sees everything, a
    /// view of it with the hidden entities absent for the others.
    fn send_all<Out: NetMessage, In: NetMessage>(
        &mut self,
        server: &mut NetServer<Out, In, C>,
        visibility: &ClientVisibility,
        clients: &[ClientId],
        stats: &mut ReplicationStats,
    ) {
        let Self {
            world,
            priorities,
            view,
            slots,
            ..
        } = self;
        stats.clients.clear();
        for &client_id in clients {
            let sent = if visibility.sees_all(client_id) {
                world.as_slice()
            } else {
                view.clear();
                view.extend(
                    world
                        .iter()
                        .zip(slots.iter())
                        .map(|(state, slot)| match slot {
                            Some(slot) if visibility.is_visible(client_id, slot.entity) => {
                                state.clone()
                            }
                            _ => None,
                        }),
                );
                view.as_slice()
            };
            if let Err(e) = server.send_entities(client_id, sent, |id, _| priorities[id]) {
                stats.send_errors += 1;
                stats.last_error = Some(e);
            }
            if let Some(sent) = server.entity_stats(client_id) {
                stats.clients.push((client_id, *sent));
            }
        }
    }
}
