//! Which entities each client sees.

use std::collections::{HashMap, HashSet};

use bevy_ecs::prelude::*;
use netser_transport::netcode::ClientId;

/// How a client's list in [`ClientVisibility`] reads.
///
/// ```
/// use netser_bevy::VisibilityPolicy;
/// assert_eq!(VisibilityPolicy::default(), VisibilityPolicy::AllBut);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum VisibilityPolicy {
    /// Every replicated entity but those hidden (the default).
    #[default]
    AllBut,
    /// Only the entities shown.
    Only,
}

#[derive(Debug, Clone, Default)]
struct ClientList {
    policy: VisibilityPolicy,
    /// Hidden under `AllBut`, shown under `Only`.
    listed: HashSet<Entity>,
}

/// Which replicated entities each client sees, set by the game (server side). A client
/// sees every [`Replicated`](crate::Replicated) entity unless told otherwise. An entity
/// hidden from a client despawns on that client only; shown again, it spawns again.
///
/// Memory: an entry per client that has a list, and the entities listed. The plugin drops
/// the entries of clients that are no longer connected and of entities despawned, each
/// frame, so the lists hold at most the game's live entities.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser_bevy::{ClientVisibility, VisibilityPolicy};
///
/// let mut world = World::new();
/// let (door, treasure) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let mut visibility = ClientVisibility::default();
/// visibility.hide(1, treasure); // client 1 sees all but the treasure
/// visibility.set_policy(2, VisibilityPolicy::Only);
/// visibility.show(2, door); // client 2 sees the door only
/// assert!(visibility.is_visible(1, door) && !visibility.is_visible(1, treasure));
/// assert!(visibility.is_visible(2, door) && !visibility.is_visible(2, treasure));
/// assert!(visibility.is_visible(3, treasure)); // no list: everything
/// ```
#[derive(Resource, Debug, Clone, Default)]
pub struct ClientVisibility {
    clients: HashMap<ClientId, ClientList>,
}

impl ClientVisibility {
    /// Sets how `client_id`'s list reads, emptying it.
    ///
    /// ```
    /// use netser_bevy::{ClientVisibility, VisibilityPolicy};
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// let mut visibility = ClientVisibility::default();
    /// visibility.set_policy(4, VisibilityPolicy::Only);
    /// assert!(!visibility.is_visible(4, entity));
    /// assert_eq!(visibility.policy(4), VisibilityPolicy::Only);
    /// ```
    pub fn set_policy(&mut self, client_id: ClientId, policy: VisibilityPolicy) {
        let list = self.clients.entry(client_id).or_default();
        list.policy = policy;
        list.listed.clear();
    }

    /// How `client_id`'s list reads ([`VisibilityPolicy::AllBut`] without one).
    ///
    /// ```
    /// use netser_bevy::{ClientVisibility, VisibilityPolicy};
    /// assert_eq!(ClientVisibility::default().policy(1), VisibilityPolicy::AllBut);
    /// ```
    pub fn policy(&self, client_id: ClientId) -> VisibilityPolicy {
        self.clients
            .get(&client_id)
            .map_or(VisibilityPolicy::AllBut, |l| l.policy)
    }

    /// Sets whether `client_id` sees `entity`.
    ///
    /// ```
    /// use netser_bevy::ClientVisibility;
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// let mut visibility = ClientVisibility::default();
    /// visibility.set_visible(1, entity, false);
    /// assert!(!visibility.is_visible(1, entity));
    /// visibility.set_visible(1, entity, true);
    /// assert!(visibility.is_visible(1, entity));
    /// ```
    pub fn set_visible(&mut self, client_id: ClientId, entity: Entity, visible: bool) {
        let list = self.clients.entry(client_id).or_default();
        if visible == (list.policy == VisibilityPolicy::Only) {
            list.listed.insert(entity);
        } else {
            list.listed.remove(&entity);
        }
    }

    /// `set_visible(client_id, entity, false)`.
    ///
    /// ```
    /// use netser_bevy::ClientVisibility;
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// let mut visibility = ClientVisibility::default();
    /// visibility.hide(1, entity);
    /// assert!(!visibility.is_visible(1, entity));
    /// ```
    pub fn hide(&mut self, client_id: ClientId, entity: Entity) {
        self.set_visible(client_id, entity, false);
    }

    /// `set_visible(client_id, entity, true)`.
    ///
    /// ```
    /// use netser_bevy::ClientVisibility;
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// let mut visibility = ClientVisibility::default();
    /// visibility.hide(1, entity);
    /// visibility.show(1, entity);
    /// assert!(visibility.is_visible(1, entity));
    /// ```
    pub fn show(&mut self, client_id: ClientId, entity: Entity) {
        self.set_visible(client_id, entity, true);
    }

    /// Whether `client_id` sees `entity` (if it is replicated).
    ///
    /// ```
    /// use netser_bevy::ClientVisibility;
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// assert!(ClientVisibility::default().is_visible(9, entity));
    /// ```
    pub fn is_visible(&self, client_id: ClientId, entity: Entity) -> bool {
        match self.clients.get(&client_id) {
            None => true,
            Some(list) => list.listed.contains(&entity) == (list.policy == VisibilityPolicy::Only),
        }
    }

    /// Forgets `client_id`'s list: it sees everything again.
    ///
    /// ```
    /// use netser_bevy::ClientVisibility;
    /// # let mut world = bevy_ecs::world::World::new();
    /// # let entity = world.spawn_empty().id();
    /// let mut visibility = ClientVisibility::default();
    /// visibility.hide(1, entity);
    /// visibility.reset(1);
    /// assert!(visibility.is_visible(1, entity));
    /// ```
    pub fn reset(&mut self, client_id: ClientId) {
        self.clients.remove(&client_id);
    }

    /// Whether `client_id` sees everything (no list, or an empty `AllBut` list): the
    /// server then sends it the world as is, without a copy of its own.
    pub(crate) fn sees_all(&self, client_id: ClientId) -> bool {
        self.clients
            .get(&client_id)
            .is_none_or(|l| l.policy == VisibilityPolicy::AllBut && l.listed.is_empty())
    }

    /// Drops the lists of clients not in `connected` and the entities that no longer exist.
    pub(crate) fn retain(&mut self, connected: &[ClientId], exists: impl Fn(Entity) -> bool) {
        self.clients.retain(|id, _| connected.contains(id));
        for list in self.clients.values_mut() {
            list.listed.retain(|e| exists(*e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists of clients gone and entities despawned are dropped; the others stay.
    #[test]
    fn retain_drops_the_stale() {
        let mut world = World::new();
        let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
        let mut v = ClientVisibility::default();
        v.hide(1, a);
        v.hide(1, b);
        v.hide(2, a);
        world.despawn(b);
        v.retain(&[1], |e| world.get_entity(e).is_ok());
        assert!(!v.is_visible(1, a));
        assert!(v.is_visible(2, a));
        assert_eq!(v.clients[&1].listed.len(), 1);
        assert!(!v.sees_all(1));
        v.show(1, a);
        assert!(v.sees_all(1));
    }
}
