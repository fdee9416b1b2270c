//! The client side of replication: what the transport's entity receiver holds, applied to
//! the client's world, and the map between the server's entities and the client's.

use std::collections::HashMap;
use std::marker::PhantomData;

use bevy_app::{App, PreUpdate};
use bevy_ecs::prelude::*;
use netser_transport::snapshot::EntityCounters;

use super::state::ComponentSet;
use super::{ReplicationConfig, ReplicationSystems};
use crate::{NetClient, NetMessage, NetReceive};

/// On a client, marks an entity spawned by replication and names the server's entity it
/// stands for. Replication despawns it when the server's entity goes (or is hidden from
/// this client).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::Remote;
///
/// fn count(remote: Query<&Remote>) {
///     println!("{} entities from the server", remote.iter().count());
/// }
/// ```
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remote {
    /// The server's entity.
    pub server_entity: Entity,
}

/// The server's entities and the client's that stand for them, both ways (client side).
/// Holds at most `max_entities` entries, one per replicated entity.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ServerEntityMap;
///
/// // A message names a server entity: find ours.
/// fn on_hit(map: Res<ServerEntityMap>, server_entity: Entity) -> Option<Entity> {
///     map.client_entity(server_entity)
/// }
/// assert!(ServerEntityMap::default().is_empty());
/// ```
#[derive(Resource, Debug, Clone, Default)]
pub struct ServerEntityMap {
    /// Server entity -> (client entity, the id that owns it).
    to_client: HashMap<Entity, (Entity, u32)>,
    to_server: HashMap<Entity, Entity>,
}

impl ServerEntityMap {
    /// The client's entity for a server entity.
    ///
    /// ```
    /// use bevy_ecs::entity::Entity;
    /// use netser_bevy::ServerEntityMap;
    /// assert_eq!(ServerEntityMap::default().client_entity(Entity::PLACEHOLDER), None);
    /// ```
    pub fn client_entity(&self, server_entity: Entity) -> Option<Entity> {
        self.to_client
            .get(&server_entity)
            .map(|&(client, _)| client)
    }

    /// The server's entity a client entity stands for.
    ///
    /// ```
    /// use bevy_ecs::entity::Entity;
    /// use netser_bevy::ServerEntityMap;
    /// assert_eq!(ServerEntityMap::default().server_entity(Entity::PLACEHOLDER), None);
    /// ```
    pub fn server_entity(&self, client_entity: Entity) -> Option<Entity> {
        self.to_server.get(&client_entity).copied()
    }

    /// Every pair, `(server entity, client entity)`, in no order.
    ///
    /// ```
    /// use netser_bevy::ServerEntityMap;
    /// assert_eq!(ServerEntityMap::default().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.to_client
            .iter()
            .map(|(&server, &(client, _))| (server, client))
    }

    /// Entities mapped.
    ///
    /// ```
    /// use netser_bevy::ServerEntityMap;
    /// assert_eq!(ServerEntityMap::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.to_client.len()
    }

    /// Whether no entity is mapped.
    ///
    /// ```
    /// use netser_bevy::ServerEntityMap;
    /// assert!(ServerEntityMap::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.to_client.is_empty()
    }
}

/// What the client's replication did since its [`NetClient`] resource was inserted.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::ClientReplicationStats;
///
/// fn show(stats: Res<ClientReplicationStats>) {
///     println!("{} entities; {} spawned, {} despawned", stats.entities, stats.spawned, stats.despawned);
/// }
/// ```
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct ClientReplicationStats {
    /// Entities from the server now.
    pub entities: usize,
    /// Entities spawned.
    pub spawned: u64,
    /// Entities despawned.
    pub despawned: u64,
    /// Updates applied to an entity that existed (one or more components changed).
    pub updated: u64,
    /// States whose server entity was no entity's bits (a server not built with this
    /// crate): refused, the id's entity despawned.
    pub invalid: u64,
    /// Entities the game despawned that the server still sent: spawned again.
    pub respawned: u64,
    /// The transport's counters of entity sets (taken, duplicates, stale, refusals).
    pub counters: Option<EntityCounters>,
}

/// An id's entity as last applied.
#[derive(Debug, Clone, Copy)]
struct Applied {
    server: Entity,
    client: Entity,
    /// The receiver's version of the update applied.
    version: u64,
}

/// The client's replication state.
#[derive(Resource)]
struct ClientReplication<C: ComponentSet> {
    config: ReplicationConfig,
    by_id: Vec<Option<Applied>>,
    /// The transport's `updates_applied` at the last scan: nothing new when unchanged.
    updates: u64,
    marker: PhantomData<C>,
}

impl<C: ComponentSet> ClientReplication<C> {
    fn new(config: ReplicationConfig) -> Self {
        let max = config.entities().max_entities;
        Self {
            config,
            by_id: vec![None; max],
            updates: 0,
            marker: PhantomData,
        }
    }
}

/// Adds the client's replication of `C` to the app.
pub(crate) fn add_client_systems<Out: NetMessage, In: NetMessage, C: ComponentSet>(
    app: &mut App,
    config: ReplicationConfig,
) {
    if C::LEN == 0 {
        return;
    }
    app.insert_resource(ClientReplication::<C>::new(config))
        .init_resource::<ServerEntityMap>()
        .init_resource::<ClientReplicationStats>()
        .configure_sets(PreUpdate, ReplicationSystems::Apply.after(NetReceive))
        .add_systems(
            PreUpdate,
            apply::<Out, In, C>.in_set(ReplicationSystems::Apply),
        );
}

/// Despawns every entity replication spawned and forgets them (a new connection).
pub(crate) fn reset_client(world: &mut World) {
    let Some(map) = world.get_resource_mut::<ServerEntityMap>() else {
        return;
    };
    let map = std::mem::take(map.into_inner());
    for (client, _) in map.to_server {
        world.despawn(client);
    }
    if let Some(mut stats) = world.get_resource_mut::<ClientReplicationStats>() {
        *stats = ClientReplicationStats::default();
    }
}

/// `PreUpdate`: applies what the entity receiver holds that is newer than what was applied.
fn apply<Out: NetMessage, In: NetMessage, C: ComponentSet>(world: &mut World) {
    if !world.contains_resource::<NetClient<Out, In, C>>() {
        return;
    }
    world.resource_scope(|world, mut state: Mut<ClientReplication<C>>| {
        world.resource_scope(|world, mut client: Mut<NetClient<Out, In, C>>| {
            if client.is_added() {
                // A new connection: the server sends the world again, from nothing.
                reset_client(world);
                let config = state.config.clone();
                *state = ClientReplication::new(config.clone());
                if let Err(e) = client.set_entity_config(config.entities().clone()) {
                    unreachable!("ReplicationConfig validated its EntityConfig: {e}");
                }
            }
            let Some(receiver) = client.client().entity_receiver() else {
                return;
            };
            let counters = *receiver.counters();
            if counters.updates_applied != state.updates {
                state.updates = counters.updates_applied;
                world.resource_scope(|world, mut map: Mut<ServerEntityMap>| {
                    world.resource_scope(|world, mut stats: Mut<ClientReplicationStats>| {
                        for id in 0..state.by_id.len() {
                            let Some(version) = receiver.entity_version(id) else {
                                continue;
                            };
                            if state.by_id[id].is_some_and(|a| a.version == version) {
                                continue;
                            }
                            let entity = receiver.entity(id);
                            state.by_id[id] = apply_one::<C>(
                                world,
                                &mut map,
                                &mut stats,
                                state.by_id[id],
                                id as u32,
                                entity,
                                version,
                            );
                        }
                    });
                });
            }
            let entities = world.resource::<ServerEntityMap>().len();
            let mut stats = world.resource_mut::<ClientReplicationStats>();
            stats.counters = Some(counters);
            stats.entities = entities;
        });
    });
}

/// Applies one id's newest update; returns what the id holds now.
fn apply_one<C: ComponentSet>(
    world: &mut World,
    map: &mut ServerEntityMap,
    stats: &mut ClientReplicationStats,
    held: Option<Applied>,
    id: u32,
    state: Option<&C::State>,
    version: u64,
) -> Option<Applied> {
    let Some(state) = state else {
        // A removal.
        if let Some(held) = held {
            release(world, map, stats, held, id);
        }
        // Applied with no entity, so the scan skips it until it changes.
        return placeholder(version);
    };
    let (bits, slots) = C::parts(state);
    let server = Entity::try_from_bits(bits).filter(|&e| e != Entity::PLACEHOLDER);
    let held = match held {
        Some(h) if Some(h.server) != server => {
            release(world, map, stats, h, id);
            None
        }
        other => other,
    };
    let Some(server) = server else {
        stats.invalid += 1;
        return placeholder(version);
    };
    // The client entity: this id's, or the one another id held for the same server entity
    // (an entity that left replication and came back under a new id), or a new one.
    let known = held
        .filter(|h| h.server != Entity::PLACEHOLDER)
        .map(|h| h.client)
        .or_else(|| map.client_entity(server));
    let client = match known.filter(|&c| world.get_entity(c).is_ok()) {
        Some(client) => client,
        None => {
            if known.is_some() {
                stats.respawned += 1;
                if let Some(old) = known {
                    map.to_server.remove(&old);
                }
            }
            stats.spawned += 1;
            world
                .spawn(Remote {
                    server_entity: server,
                })
                .id()
        }
    };
    map.to_client.insert(server, (client, id));
    map.to_server.insert(client, server);
    if let Some(slots) = slots {
        let mut entity = world.entity_mut(client);
        if C::write(&mut entity, slots) && known.is_some() {
            stats.updated += 1;
        }
    }
    Some(Applied {
        server,
        client,
        version,
    })
}

/// An id applied with no entity behind it (a removal, or a refused state): the scan skips
/// it until its version changes.
fn placeholder(version: u64) -> Option<Applied> {
    Some(Applied {
        server: Entity::PLACEHOLDER,
        client: Entity::PLACEHOLDER,
        version,
    })
}

/// Despawns the entity an id held, unless another id holds it now.
fn release(
    world: &mut World,
    map: &mut ServerEntityMap,
    stats: &mut ClientReplicationStats,
    held: Applied,
    id: u32,
) {
    if held.server == Entity::PLACEHOLDER {
        return;
    }
    if map
        .to_client
        .get(&held.server)
        .is_some_and(|&(_, owner)| owner == id)
    {
        map.to_client.remove(&held.server);
        map.to_server.remove(&held.client);
        if world.despawn(held.client) {
            stats.despawned += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EntityState;
    use netser::NetSerialize;

    #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    struct Hp(#[net(range = 0..=100)] u8);

    type Set = (Hp,);

    struct Client {
        world: World,
        map: ServerEntityMap,
        stats: ClientReplicationStats,
        by_id: Vec<Option<Applied>>,
        version: u64,
    }

    impl Client {
        fn new() -> Self {
            Self {
                world: World::new(),
                map: ServerEntityMap::default(),
                stats: ClientReplicationStats::default(),
                by_id: vec![None; 4],
                version: 0,
            }
        }

        fn apply(&mut self, id: u32, state: Option<EntityState<Set>>) {
            self.version += 1;
            let held = self.by_id[id as usize];
            self.by_id[id as usize] = apply_one::<Set>(
                &mut self.world,
                &mut self.map,
                &mut self.stats,
                held,
                id,
                state.as_ref(),
                self.version,
            );
        }

        fn hp(&self, server: Entity) -> Option<&Hp> {
            self.world.get::<Hp>(self.map.client_entity(server)?)
        }
    }

    fn entity(index: u32) -> Entity {
        Entity::from_bits(u64::from(index))
    }

    fn state(server: Entity, hp: Option<u8>) -> Option<EntityState<Set>> {
        Some(EntityState::from_parts(server.to_bits(), (hp.map(Hp),)))
    }

    /// Bits that are no entity's, or the placeholder, are refused and counted; what the id
    /// held goes.
    #[test]
    fn invalid_server_entities_are_refused() {
        let mut c = Client::new();
        c.apply(0, state(entity(5), Some(3)));
        assert_eq!(c.hp(entity(5)), Some(&Hp(3)));
        // Bits 0 are no entity's (Bevy keeps an index's complement, never all ones).
        c.apply(0, Some(EntityState::from_parts(0, (None,))));
        c.apply(
            1,
            Some(EntityState::from_parts(
                Entity::PLACEHOLDER.to_bits(),
                (None,),
            )),
        );
        assert_eq!(c.stats.invalid, 2);
        assert!(c.map.is_empty());
        assert_eq!((c.stats.spawned, c.stats.despawned), (1, 1));
        assert_eq!(c.world.query::<&Remote>().iter(&c.world).count(), 0);
    }

    /// A server entity that moves to another id keeps its client entity; the old id's
    /// removal, arriving after, does not despawn it.
    #[test]
    fn an_entity_moving_to_another_id_stays() {
        let mut c = Client::new();
        let server = entity(9);
        c.apply(0, state(server, Some(1)));
        let client = c.map.client_entity(server).unwrap();
        c.apply(2, state(server, Some(2)));
        c.apply(0, None);
        assert_eq!(c.map.client_entity(server), Some(client));
        assert_eq!(c.hp(server), Some(&Hp(2)));
        assert_eq!((c.stats.spawned, c.stats.despawned), (1, 0));
        // Its removal under the id that holds it despawns it.
        c.apply(2, None);
        assert!(c.map.is_empty());
        assert!(c.world.get_entity(client).is_err());
    }

    /// Another server entity in the same id: the old one despawns, the new one spawns; a
    /// client entity the game despawned comes back, counted.
    #[test]
    fn ids_reused_and_entities_despawned_by_the_game() {
        let mut c = Client::new();
        c.apply(1, state(entity(3), Some(1)));
        c.apply(1, state(entity(4), None));
        assert_eq!(c.map.client_entity(entity(3)), None);
        let client = c.map.client_entity(entity(4)).unwrap();
        assert_eq!(c.world.get::<Hp>(client), None);
        assert_eq!((c.stats.spawned, c.stats.despawned), (2, 1));
        c.world.despawn(client);
        c.apply(1, state(entity(4), Some(7)));
        assert_eq!(c.hp(entity(4)), Some(&Hp(7)));
        assert_eq!(c.stats.respawned, 1);
        assert_eq!(c.map.len(), 1);
        assert_eq!(c.map.iter().count(), 1);
        let client = c.map.client_entity(entity(4)).unwrap();
        assert_eq!(c.map.server_entity(client), Some(entity(4)));
    }
}
