//! The set of replicated components as a type, and what the transport sends of one entity.

use core::fmt;

use bevy_ecs::prelude::*;
use bevy_ecs::world::{EntityRef, EntityWorldMut};
use netser::schema::{combine, fnv1a};
use netser::{Decoder, Encoder, NetDelta, NetSerialize, Result};

/// What a component needs to be replicated: a Bevy [`Component`] that derives
/// `NetSerialize` with `#[net(delta)]` (so the transport sends it against the last state
/// of it the client acked), `PartialEq` (to tell whether it changed) and `Clone`.
/// Implemented for every such type.
///
/// Store quantized values where you can (the positions the wire carries): a component at
/// rest then compares equal and is not sent again.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser::NetSerialize;
/// use netser_bevy::ReplicatedComponent;
///
/// #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
/// #[net(delta)]
/// struct Health(#[net(range = 0..=100)] u8);
///
/// fn replicable<C: ReplicatedComponent>() {}
/// replicable::<Health>();
/// ```
pub trait ReplicatedComponent: Component + NetDelta + PartialEq + Clone {}

impl<T: Component + NetDelta + PartialEq + Clone> ReplicatedComponent for T {}

/// The components a game replicates, as one type: a tuple of one to eight
/// [`ReplicatedComponent`]s, or `()` for none (the plugins' default: no replication).
/// Sealed: only those tuples implement it.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser::{NetSerialize, NetDelta};
/// use netser_bevy::ComponentSet;
///
/// #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
/// #[net(delta)]
/// struct Position(#[net(quantize(min = -512.0, max = 512.0, res = 0.01))] [f32; 2]);
/// #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
/// #[net(delta)]
/// struct Health(#[net(range = 0..=100)] u8);
///
/// type Replicated = (Position, Health);
/// assert_eq!(<Replicated as ComponentSet>::LEN, 2);
/// assert_eq!(<() as ComponentSet>::LEN, 0);
/// // An entity's state: its id on the server, then each component present or not.
/// type State = <Replicated as ComponentSet>::State;
/// assert_eq!(State::MAX_BITS, 64 + (1 + 2 * 17) + (1 + 7));
/// ```
pub trait ComponentSet: sealed::Slots + Send + Sync + 'static {
    /// What the transport sends of one entity: [`EntityState<Self>`] for a tuple, `()` for
    /// the empty set.
    type State: NetDelta + PartialEq + Clone + Send + Sync + 'static;
    /// Components in the set.
    const LEN: usize;

    /// The state the transport sends of `entity` (on the server).
    #[doc(hidden)]
    fn state(server_entity: Entity, entity: &EntityRef<'_>) -> Self::State;

    /// The server's entity and the components of a state (on the client).
    #[doc(hidden)]
    fn parts(state: &Self::State) -> (u64, Option<&Self::Slots>);
}

/// The component storage behind [`ComponentSet`], out of the public API.
pub(crate) mod sealed {
    use super::*;

    /// One entity's components of the set, and how to read and write them.
    pub trait Slots {
        /// `(Option<A>, Option<B>, ...)`.
        type Slots: Clone + PartialEq + Send + Sync + 'static;
        const MIN_BITS: u64;
        const MAX_BITS: u64;
        const MAX_HEAP_BYTES: u64;
        const MAX_DELTA_BITS: u64;
        const SCHEMA_HASH: u64;
        fn encode<E: Encoder>(slots: &Self::Slots, e: &mut E) -> Result<()>;
        fn decode<D: Decoder>(d: &mut D) -> Result<Self::Slots>;
        fn encode_delta<E: Encoder>(
            slots: &Self::Slots,
            base: &Self::Slots,
            e: &mut E,
        ) -> Result<()>;
        fn decode_delta<D: Decoder>(base: &Self::Slots, d: &mut D) -> Result<Self::Slots>;
        /// The entity's components of the set.
        fn read(entity: &EntityRef<'_>) -> Self::Slots;
        /// Inserts what differs, removes what is absent; whether anything changed.
        fn write(entity: &mut EntityWorldMut<'_>, slots: &Self::Slots) -> bool;
    }
}

/// One replicated entity as the transport sends it: the server's [`Entity`] (so that the
/// client can map it; sent whole when the entity first goes, then one bit) and each
/// component of the set, present or not. The `S` of the
/// [`UdpServer`](netser_transport::udp::UdpServer) inside a
/// [`NetServer`](crate::NetServer) that replicates `C`.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use netser::{NetDelta, NetSerialize};
/// use netser_bevy::EntityState;
///
/// #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
/// #[net(delta)]
/// struct Health(#[net(range = 0..=100)] u8);
///
/// let mut world = World::new();
/// let entity = world.spawn(Health(90)).id();
/// let state = EntityState::<(Health,)>::read(world.entity(entity));
/// assert_eq!(state.server_entity(), Some(entity));
/// assert_eq!(state.components(), &(Some(Health(90)),));
/// // Unchanged against itself: a bit for the entity, a bit for the component.
/// assert_eq!(state.measure_delta_bits(&state).unwrap(), 1 + 1);
/// ```
pub struct EntityState<C: ComponentSet> {
    server_entity: u64,
    slots: C::Slots,
}

impl<C: ComponentSet> EntityState<C> {
    /// The state of `entity`'s components of the set.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use netser::NetSerialize;
    /// use netser_bevy::EntityState;
    ///
    /// #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
    /// #[net(delta)]
    /// struct Armor(bool);
    ///
    /// let mut world = World::new();
    /// let bare = world.spawn_empty().id();
    /// assert_eq!(EntityState::<(Armor,)>::read(world.entity(bare)).components(), &(None,));
    /// ```
    pub fn read(entity: EntityRef<'_>) -> Self {
        Self {
            server_entity: entity.id().to_bits(),
            slots: C::read(&entity),
        }
    }

    /// The server's entity, as the server sent it (`None` if the bits are no entity's).
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use netser_bevy::EntityState;
    ///
    /// let mut world = World::new();
    /// let entity = world.spawn_empty().id();
    /// # #[derive(Component, netser::NetSerialize, Clone, PartialEq)] #[net(delta)] struct A(bool);
    /// assert_eq!(EntityState::<(A,)>::read(world.entity(entity)).server_entity(), Some(entity));
    /// ```
    pub fn server_entity(&self) -> Option<Entity> {
        Entity::try_from_bits(self.server_entity)
    }

    /// Each component of the set: `(Option<A>, Option<B>, ...)`.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use netser_bevy::EntityState;
    /// # #[derive(Component, netser::NetSerialize, Clone, PartialEq, Debug)] #[net(delta)] struct A(bool);
    /// let mut world = World::new();
    /// let entity = world.spawn(A(true)).id();
    /// assert_eq!(EntityState::<(A,)>::read(world.entity(entity)).components().0, Some(A(true)));
    /// ```
    pub fn components(&self) -> &C::Slots {
        &self.slots
    }
}

impl<C: ComponentSet> EntityState<C> {
    /// A state with any bits as the server's entity (what a hostile server could send).
    #[cfg(test)]
    pub(crate) fn from_parts(server_entity: u64, slots: C::Slots) -> Self {
        Self {
            server_entity,
            slots,
        }
    }
}

impl<C: ComponentSet> Clone for EntityState<C> {
    fn clone(&self) -> Self {
        Self {
            server_entity: self.server_entity,
            slots: self.slots.clone(),
        }
    }
}

impl<C: ComponentSet> PartialEq for EntityState<C> {
    fn eq(&self, other: &Self) -> bool {
        self.server_entity == other.server_entity && self.slots == other.slots
    }
}

impl<C: ComponentSet> fmt::Debug for EntityState<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntityState")
            .field("server_entity", &self.server_entity())
            .field("components", &C::LEN)
            .finish_non_exhaustive()
    }
}

/// Named in errors: `EntityState.server_entity`, `EntityState.Position`.
const SERVER_ENTITY: &str = "server_entity";

impl<C: ComponentSet> NetSerialize for EntityState<C> {
    const MIN_BITS: u64 = 64 + <C as sealed::Slots>::MIN_BITS;
    const MAX_BITS: u64 = 64 + <C as sealed::Slots>::MAX_BITS;
    const MAX_HEAP_BYTES: u64 = <C as sealed::Slots>::MAX_HEAP_BYTES;
    const SCHEMA_HASH: u64 = combine(
        fnv1a(b"netser-bevy EntityState: u64"),
        <C as sealed::Slots>::SCHEMA_HASH,
    );

    fn encode<E: Encoder>(&self, e: &mut E) -> Result<()> {
        self.server_entity
            .encode(e)
            .map_err(|err| err.in_field(SERVER_ENTITY))?;
        C::encode(&self.slots, e)
    }

    fn decode<D: Decoder>(d: &mut D) -> Result<Self> {
        let server_entity = u64::decode(d).map_err(|err| err.in_field(SERVER_ENTITY))?;
        Ok(Self {
            server_entity,
            slots: C::decode(d)?,
        })
    }
}

/// The entity's bits (one bit when unchanged), then each component's delta.
impl<C: ComponentSet> NetDelta for EntityState<C> {
    const MAX_DELTA_BITS: u64 = <u64 as NetDelta>::MAX_DELTA_BITS + C::MAX_DELTA_BITS;

    fn encode_delta<E: Encoder>(&self, baseline: &Self, e: &mut E) -> Result<()> {
        self.server_entity
            .encode_delta(&baseline.server_entity, e)
            .map_err(|err| err.in_field(SERVER_ENTITY))?;
        C::encode_delta(&self.slots, &baseline.slots, e)
    }

    fn decode_delta<D: Decoder>(baseline: &Self, d: &mut D) -> Result<Self> {
        let server_entity = u64::decode_delta(&baseline.server_entity, d)
            .map_err(|err| err.in_field(SERVER_ENTITY))?;
        Ok(Self {
            server_entity,
            slots: C::decode_delta(&baseline.slots, d)?,
        })
    }
}

/// Writes one component on a client's entity: inserted when absent or different (so that
/// Bevy's change detection fires only on a change), removed when the server has none.
fn write_slot<T: ReplicatedComponent>(entity: &mut EntityWorldMut<'_>, slot: &Option<T>) -> bool {
    match (slot, entity.get::<T>()) {
        (Some(value), Some(held)) if held == value => false,
        (Some(value), _) => {
            entity.insert(value.clone());
            true
        }
        (None, Some(_)) => {
            entity.remove::<T>();
            true
        }
        (None, None) => false,
    }
}

/// The empty set: no replication; the transport's state is `()`.
impl sealed::Slots for () {
    type Slots = ();
    const MIN_BITS: u64 = 0;
    const MAX_BITS: u64 = 0;
    const MAX_HEAP_BYTES: u64 = 0;
    const MAX_DELTA_BITS: u64 = 0;
    const SCHEMA_HASH: u64 = <() as NetSerialize>::SCHEMA_HASH;
    fn encode<E: Encoder>(_: &(), _: &mut E) -> Result<()> {
        Ok(())
    }
    fn decode<D: Decoder>(_: &mut D) -> Result<()> {
        Ok(())
    }
    fn encode_delta<E: Encoder>(_: &(), _: &(), _: &mut E) -> Result<()> {
        Ok(())
    }
    fn decode_delta<D: Decoder>(_: &(), _: &mut D) -> Result<()> {
        Ok(())
    }
    fn read(_: &EntityRef<'_>) {}
    fn write(_: &mut EntityWorldMut<'_>, _: &()) -> bool {
        false
    }
}

impl ComponentSet for () {
    type State = ();
    const LEN: usize = 0;
    fn state(_: Entity, _: &EntityRef<'_>) {}
    fn parts(_: &()) -> (u64, Option<&()>) {
        (0, None)
    }
}

macro_rules! component_set {
    ($len:literal; $($c:ident $i:tt),+) => {
        impl<$($c: ReplicatedComponent),+> sealed::Slots for ($($c,)+) {
            type Slots = ($(Option<$c>,)+);
            const MIN_BITS: u64 = 0 $(+ <Option<$c> as NetSerialize>::MIN_BITS)+;
            const MAX_BITS: u64 = 0 $(+ <Option<$c> as NetSerialize>::MAX_BITS)+;
            const MAX_HEAP_BYTES: u64 = 0 $(+ <$c as NetSerialize>::MAX_HEAP_BYTES)+;
            const MAX_DELTA_BITS: u64 = 0 $(+ <Option<$c> as NetDelta>::MAX_DELTA_BITS)+;
            const SCHEMA_HASH: u64 = {
                let mut h = fnv1a(b"netser-bevy components");
                $(h = combine(h, <$c as NetSerialize>::SCHEMA_HASH);)+
                h
            };
            fn encode<W: Encoder>(slots: &Self::Slots, e: &mut W) -> Result<()> {
                $(slots.$i.encode(e).map_err(|err| err.in_field(core::any::type_name::<$c>()))?;)+
                Ok(())
            }
            fn decode<R: Decoder>(d: &mut R) -> Result<Self::Slots> {
                Ok(($(<Option<$c>>::decode(d)
                    .map_err(|err| err.in_field(core::any::type_name::<$c>()))?,)+))
            }
            fn encode_delta<W: Encoder>(slots: &Self::Slots, base: &Self::Slots, e: &mut W) -> Result<()> {
                $(slots.$i.encode_delta(&base.$i, e)
                    .map_err(|err| err.in_field(core::any::type_name::<$c>()))?;)+
                Ok(())
            }
            fn decode_delta<R: Decoder>(base: &Self::Slots, d: &mut R) -> Result<Self::Slots> {
                Ok(($(<Option<$c>>::decode_delta(&base.$i, d)
                    .map_err(|err| err.in_field(core::any::type_name::<$c>()))?,)+))
            }
            fn read(entity: &EntityRef<'_>) -> Self::Slots {
                ($(entity.get::<$c>().cloned(),)+)
            }
            fn write(entity: &mut EntityWorldMut<'_>, slots: &Self::Slots) -> bool {
                let mut changed = false;
                $(changed |= write_slot::<$c>(entity, &slots.$i);)+
                changed
            }
        }

        impl<$($c: ReplicatedComponent),+> ComponentSet for ($($c,)+) {
            type State = EntityState<Self>;
            const LEN: usize = $len;
            fn state(server_entity: Entity, entity: &EntityRef<'_>) -> EntityState<Self> {
                EntityState {
                    server_entity: server_entity.to_bits(),
                    slots: <Self as sealed::Slots>::read(entity),
                }
            }
            fn parts(state: &EntityState<Self>) -> (u64, Option<&Self::Slots>) {
                (state.server_entity, Some(&state.slots))
            }
        }
    };
}

component_set!(1; C0 0);
component_set!(2; C0 0, C1 1);
component_set!(3; C0 0, C1 1, C2 2);
component_set!(4; C0 0, C1 1, C2 2, C3 3);
component_set!(5; C0 0, C1 1, C2 2, C3 3, C4 4);
component_set!(6; C0 0, C1 1, C2 2, C3 3, C4 4, C5 5);
component_set!(7; C0 0, C1 1, C2 2, C3 3, C4 4, C5 5, C6 6);
component_set!(8; C0 0, C1 1, C2 2, C3 3, C4 4, C5 5, C6 6, C7 7);

#[cfg(test)]
mod tests {
    use super::*;
    use netser::{ReadStream, WriteStream};

    #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    struct Pos(#[net(quantize(min = -128.0, max = 128.0, res = 0.0078125))] [f32; 2]);

    #[derive(Component, NetSerialize, Debug, Clone, PartialEq)]
    #[net(delta)]
    struct Hp(#[net(range = 0..=100)] u8);

    type Set = (Pos, Hp);

    fn state(world: &World, e: Entity) -> EntityState<Set> {
        EntityState::read(world.entity(e))
    }

    fn round(value: &EntityState<Set>, base: Option<&EntityState<Set>>) -> (u64, EntityState<Set>) {
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        match base {
            Some(b) => value.encode_delta(b, &mut w).unwrap(),
            None => value.encode(&mut w).unwrap(),
        }
        let bits = w.bit_position();
        let len = w.finish();
        let mut r = ReadStream::new(&buf[..len]);
        let back = match base {
            Some(b) => EntityState::decode_delta(b, &mut r).unwrap(),
            None => EntityState::decode(&mut r).unwrap(),
        };
        (bits, back)
    }

    /// Whole and against a baseline, a state comes back equal; an unchanged entity costs a
    /// bit for its id and one per component; the worst cases bound what was written.
    #[test]
    fn states_round_trip() {
        let mut world = World::new();
        let a = world.spawn((Pos([1.0, 2.0]), Hp(50))).id();
        let b = world.spawn(Pos([-3.0, 4.5])).id();
        let (sa, sb) = (state(&world, a), state(&world, b));
        assert_eq!(sb.components(), &(Some(Pos([-3.0, 4.5])), None));
        for (value, base) in [(&sa, None), (&sb, None), (&sa, Some(&sa)), (&sb, Some(&sa))] {
            let (bits, back) = round(value, base);
            assert_eq!(&back, value);
            match base {
                Some(_) => assert!(bits <= EntityState::<Set>::MAX_DELTA_BITS, "{bits}"),
                None => assert!(bits <= EntityState::<Set>::MAX_BITS, "{bits}"),
            }
        }
        assert_eq!(round(&sa, Some(&sa)).0, 3);
        assert_eq!(round(&sa, None).0, 64 + 1 + 32 + 1 + 7);
        // Another entity in the same id: its bits go whole.
        assert!(round(&sb, Some(&sa)).0 > 64);
    }

    /// A client's entity takes what differs, loses what the server has not, and reports a
    /// change only when there was one.
    #[test]
    fn writes_insert_and_remove() {
        let mut world = World::new();
        let server = world.spawn((Pos([1.0, 1.0]), Hp(9))).id();
        let slots = state(&world, server).components().clone();
        let client = world.spawn(Hp(3)).id();
        let mut entity = world.entity_mut(client);
        assert!(<Set as sealed::Slots>::write(&mut entity, &slots));
        assert!(!<Set as sealed::Slots>::write(&mut entity, &slots));
        assert!(<Set as sealed::Slots>::write(
            &mut entity,
            &(None, Some(Hp(9)))
        ));
        assert_eq!(world.get::<Pos>(client), None);
        assert_eq!(world.get::<Hp>(client), Some(&Hp(9)));
    }

    /// Other components, or the same in another order, hash differently.
    #[test]
    fn schema_hashes_differ() {
        let h = |x: u64| x;
        assert_ne!(
            h(EntityState::<(Pos, Hp)>::SCHEMA_HASH),
            EntityState::<(Hp, Pos)>::SCHEMA_HASH
        );
        assert_ne!(
            EntityState::<(Pos,)>::SCHEMA_HASH,
            EntityState::<(Pos, Hp)>::SCHEMA_HASH
        );
        assert_ne!(
            EntityState::<(Pos,)>::SCHEMA_HASH,
            <() as NetSerialize>::SCHEMA_HASH
        );
    }

    /// Bits out of range in a component are refused with the component named.
    #[test]
    fn bad_component_is_named() {
        let mut buf = [0u8; 16];
        let mut w = WriteStream::new(&mut buf);
        7u64.encode(&mut w).unwrap();
        w.write_bool(false).unwrap(); // no Pos
        w.write_bool(true).unwrap(); // an Hp
        w.write_bits(127, 7).unwrap(); // over 100
        let len = w.finish();
        let err = EntityState::<Set>::decode(&mut ReadStream::new(&buf[..len])).unwrap_err();
        assert!(err.path().contains("Hp"), "{}", err.path());
    }
}
