//! Replication end to end: a server `App` and client `App`s in one process over loopback
//! UDP (and through the transport's simulator), stepped with `app.update()`.

mod harness;

use bevy_ecs::prelude::*;
use harness::*;
use netser_bevy::prelude::*;
use netser_transport::simulator::SimulatorConfig;
use netser_transport::udp::UdpConfig;

/// Spawns `n` entities from `first` on: a position each, health on the even ones, and a
/// secret (not replicated) on all.
fn spawn_many(game: &mut Game, first: u32, n: u32) -> Vec<Entity> {
    (first..first + n)
        .map(|i| {
            let position = Position::quantized([i as f32 * 0.37, -(i as f32) * 0.11]);
            let entity = game.spawn((position, Secret(i)));
            if i % 2 == 0 {
                game.server
                    .world_mut()
                    .entity_mut(entity)
                    .insert(Health((i % 101) as u8));
            }
            entity
        })
        .collect()
}

/// Moves every replicated entity a step.
fn step_all(game: &mut Game) {
    let mut q = game
        .server
        .world_mut()
        .query_filtered::<&mut Position, With<Replicated>>();
    for mut p in q.iter_mut(game.server.world_mut()) {
        *p = Position::quantized([p.0[0] + 0.25, p.0[1] - 0.5]);
    }
}

/// 1,000 entities spawned, moved, partly despawned and respawned, components added and
/// removed, to 4 clients: each client ends with exactly the server's replicated
/// components, under the right server entity, and never a component outside the set.
fn thousand_entities_to_four_clients(udp: UdpConfig) {
    let mut game = Game::new(4, 4096, udp);
    game.connect_all();
    let entities = spawn_many(&mut game, 0, 1000);
    for _ in 0..30 {
        step_all(&mut game);
        game.frame();
    }
    // A fifth go, a tenth come; health changes hands.
    for (i, &e) in entities.iter().enumerate() {
        let world = game.server.world_mut();
        if i % 5 == 0 {
            world.despawn(e);
        } else if i % 7 == 0 {
            world.entity_mut(e).remove::<Health>();
        } else if i % 2 == 1 {
            world.entity_mut(e).insert(Health(42));
        }
    }
    spawn_many(&mut game, 1000, 100);
    for _ in 0..10 {
        step_all(&mut game);
        game.frame();
    }
    let expected = server_world(&mut game.server);
    assert_eq!(expected.len(), 900);
    for i in 0..4 {
        game.run_until_client_holds(i, &expected);
    }
    for client in &mut game.clients {
        let mut secrets = client.world_mut().query::<&Secret>();
        assert_eq!(secrets.iter(client.world()).count(), 0);
        let stats = client.world().resource::<ClientReplicationStats>();
        assert_eq!(stats.entities, 900);
        assert_eq!(stats.spawned - stats.despawned, 900, "{stats:?}");
        assert_eq!(stats.invalid + stats.respawned, 0, "{stats:?}");
        let counters = stats.counters.unwrap();
        assert!(counters.taken > 10, "{counters:?}");
        assert_eq!(counters.malformed + counters.wrong_kind, 0, "{counters:?}");
    }
    let stats = game.server.world().resource::<ReplicationStats>();
    assert_eq!(
        (stats.entities, stats.waiting, stats.send_errors),
        (900, 0, 0)
    );
    assert_eq!(stats.clients.len(), 4);
    for (_, sent) in &stats.clients {
        // Moving entities went against their acked baselines.
        assert!(sent.delta_sent > sent.absolute_sent, "{sent:?}");
    }
}

#[test]
fn thousand_entities_to_four_clients_over_loopback() {
    thousand_entities_to_four_clients(UdpConfig::default());
}

#[test]
fn thousand_entities_to_four_clients_through_the_simulator() {
    let sim = SimulatorConfig {
        latency: 0.01,
        jitter: 0.005,
        loss: 0.1,
        duplicate: 0.02,
        reorder: 0.02,
        seed: 11,
        ..SimulatorConfig::default()
    };
    thousand_entities_to_four_clients(UdpConfig {
        send_simulator: Some(sim),
        ..UdpConfig::default()
    });
}

/// Hidden entities despawn on that client only; shown again, they spawn. A client on an
/// `Only` list sees what it is shown.
#[test]
fn visibility_per_client() {
    let mut game = Game::new(3, 4096, UdpConfig::default());
    game.connect_all();
    let entities = spawn_many(&mut game, 0, 50);
    let everything = server_world(&mut game.server);
    for i in 0..3 {
        game.run_until_client_holds(i, &everything);
    }
    let hidden = &entities[..10];
    {
        let mut visibility = game.server.world_mut().resource_mut::<ClientVisibility>();
        for &e in hidden {
            visibility.hide(1, e);
        }
        visibility.set_policy(3, VisibilityPolicy::Only);
        for &e in &entities[40..45] {
            visibility.show(3, e);
        }
    }
    let seen_by_1 = visible_world(&mut game.server, 1);
    let seen_by_3 = visible_world(&mut game.server, 3);
    assert_eq!((seen_by_1.len(), seen_by_3.len()), (40, 5));
    game.run_until_client_holds(0, &seen_by_1);
    game.run_until_client_holds(2, &seen_by_3);
    game.run_until_client_holds(1, &everything);
    let despawned = game.clients[0]
        .world()
        .resource::<ClientReplicationStats>()
        .despawned;
    assert_eq!(despawned, 10);
    // Shown again, moved meanwhile: back, where they are now.
    step_all(&mut game);
    {
        let mut visibility = game.server.world_mut().resource_mut::<ClientVisibility>();
        for &e in hidden {
            visibility.show(1, e);
        }
        visibility.reset(3);
    }
    let everything = server_world(&mut game.server);
    for i in 0..3 {
        game.run_until_client_holds(i, &everything);
    }
}

/// A component outside the set never goes: changing only it sends no entity at all.
#[test]
fn unregistered_components_are_never_sent() {
    let mut game = Game::new(1, 4096, UdpConfig::default());
    game.connect_all();
    spawn_many(&mut game, 0, 100);
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    // Let every state be acked and every resend settle.
    let bits = |game: &Game| {
        game.server.world().resource::<ReplicationStats>().clients[0]
            .1
            .bits_sent
    };
    let mut last = bits(&game);
    game.run_until("the sender to fall quiet", |g| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = bits(g);
        let quiet = now == last;
        last = now;
        quiet
    });
    let before = bits(&game);
    for round in 0..50 {
        let mut q = game.server.world_mut().query::<&mut Secret>();
        for mut s in q.iter_mut(game.server.world_mut()) {
            s.0 = s.0.wrapping_add(round + 1);
        }
        game.frame();
    }
    assert_eq!(bits(&game), before);
    let mut secrets = game.clients[0].world_mut().query::<&Secret>();
    assert_eq!(secrets.iter(game.clients[0].world()).count(), 0);
}

/// A client that leaves and connects again gets the whole world again, from nothing.
#[test]
fn a_client_reconnecting_gets_the_world_again() {
    let mut game = Game::new(2, 4096, UdpConfig::default());
    game.connect_all();
    spawn_many(&mut game, 0, 200);
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    game.run_until_client_holds(1, &expected);

    // Client 1 leaves; the world changes meanwhile.
    game.clients[0].world_mut().remove_resource::<Client>();
    game.run_until("the server to see client 1 leave", |g| {
        g.server.world().resource::<ServerStats>().clients.len() == 1
    });
    spawn_many(&mut game, 200, 20);
    step_all(&mut game);
    let client = game.client(1);
    game.clients[0].insert_resource(client);
    game.connect_all();
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    game.run_until_client_holds(1, &expected);
    let stats = game.clients[0].world().resource::<ClientReplicationStats>();
    // Counted from the new connection: every entity spawned once, none left over.
    assert_eq!((stats.spawned, stats.despawned), (220, 0), "{stats:?}");
}

/// At most `max_entities` are replicated; the others wait, counted, and go when ids free.
#[test]
fn max_entities_bound_and_refusals() {
    let mut game = Game::new(1, 64, UdpConfig::default());
    game.connect_all();
    let entities = spawn_many(&mut game, 0, 80);
    game.frame();
    let stats = game.server.world().resource::<ReplicationStats>().clone();
    assert_eq!(
        (stats.entities, stats.max_entities, stats.waiting),
        (64, 64, 16)
    );
    assert!(stats.refused >= 16);
    game.run_until("the client to hold 64", |g| {
        client_world(&mut g.clients[0]).len() == 64
    });
    let server = server_world(&mut game.server);
    for (e, components) in client_world(&mut game.clients[0]) {
        assert_eq!(server.get(&e), Some(&components));
    }
    // Thirty go: the waiting ones take their ids.
    for &e in &entities[..30] {
        game.server.world_mut().despawn(e);
    }
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    let stats = game.server.world().resource::<ReplicationStats>();
    assert_eq!((stats.entities, stats.waiting), (50, 0));
}

/// An entity that stops being replicated despawns on the client; marked again, it comes
/// back under the same server entity (perhaps another id on the wire), once.
#[test]
fn replicated_removed_and_added_again() {
    let mut game = Game::new(1, 4096, UdpConfig::default());
    game.connect_all();
    let entities = spawn_many(&mut game, 0, 40);
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    for &e in &entities[..10] {
        game.server.world_mut().entity_mut(e).remove::<Replicated>();
    }
    let expected = server_world(&mut game.server);
    assert_eq!(expected.len(), 30);
    game.run_until_client_holds(0, &expected);
    // Back, in the next frame for half of them: the client may hear of the removal and
    // the return in either order.
    for &e in &entities[..10] {
        game.server.world_mut().entity_mut(e).insert(Replicated);
    }
    step_all(&mut game);
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    let stats = game.clients[0].world().resource::<ClientReplicationStats>();
    assert_eq!(stats.spawned - stats.despawned, 40, "{stats:?}");
    assert_eq!(stats.invalid + stats.respawned, 0, "{stats:?}");
}

/// Under a budget too small for every change, an entity of high priority is updated far
/// more often than the others.
#[test]
fn priority_under_a_small_budget() {
    let mut game = Game::with_config(
        1,
        netser_transport::snapshot::EntityConfig {
            max_entities: 256,
            packet_budget: 120,
            ..Default::default()
        },
        UdpConfig::default(),
    );
    game.connect_all();
    let entities = spawn_many(&mut game, 0, 200);
    let (important, plain) = (entities[7], entities[8]);
    game.server
        .world_mut()
        .entity_mut(important)
        .insert(ReplicationPriority(1000.0));
    let expected = server_world(&mut game.server);
    game.run_until_client_holds(0, &expected);
    let mut changes = [0u32; 2];
    let mut last = [None, None];
    for _ in 0..120 {
        step_all(&mut game);
        game.frame();
        let held = client_world(&mut game.clients[0]);
        for (k, e) in [important, plain].into_iter().enumerate() {
            let now = held.get(&e).copied();
            if now != last[k] {
                changes[k] += 1;
                last[k] = now;
            }
        }
    }
    assert!(changes[0] > 60, "{changes:?}");
    assert!(changes[0] > 3 * changes[1], "{changes:?}");
}

/// The component set is part of the protocol: a client built with another set than the
/// server's (here `Position` alone) is refused when it connects with the server's token,
/// with a reason that says the protocols differ, instead of misreading entity sets.
#[test]
fn a_client_of_another_component_set_is_refused_at_connect() {
    use netser_transport::netcode::SetupError;
    use netser_transport::udp::{StartError, UdpClientConfig};

    let game = Game::new(0, 16, UdpConfig::default());
    let other = NetProtocol::<u8, u8, (Position,)>::new();
    assert_ne!(other.id(), game.protocol.id());

    let refused = NetClient::<u8, u8, (Position,)>::connect(
        game.token(1),
        &other,
        UdpClientConfig::default(),
    )
    .unwrap_err();
    match &refused {
        StartError::Setup(SetupError::ProtocolMismatch { token, expected }) => {
            assert_eq!(*token, game.protocol.id());
            assert_eq!(*expected, other.id());
        }
        e => panic!("refused for another reason: {e:?}"),
    }
    let reason = std::error::Error::source(&refused).unwrap().to_string();
    assert!(reason.contains("different protocols"), "{reason}");

    // The same components in another order are another protocol too.
    let swapped = NetProtocol::<u8, u8, (Health, Position)>::new();
    assert_ne!(swapped.id(), game.protocol.id());
    // The server's own set connects.
    assert!(Client::connect(game.token(2), &game.protocol, UdpClientConfig::default()).is_ok());
}
