//! The plugins end to end: a server `App` and client `App`s in one process over loopback
//! UDP (and through the transport's simulator), stepped with `app.update()`.

mod clock;
mod harness;

use std::collections::BTreeSet;

use bevy_app::{App, AppExit, Update};
use bevy_ecs::prelude::*;
use harness::*;
use netser_bevy::prelude::*;
use netser_transport::simulator::SimulatorConfig;
use netser_transport::udp::UdpConfig;

/// Connects, then disconnects once from each side; both sides see each event with its
/// reason, and the run conditions follow.
#[test]
fn connect_and_disconnect_events() {
    let mut game = Game::new(2, UdpConfig::default());
    game.connect_all();

    let mut joined: Vec<_> = logged::<ClientConnected>(&game.server).to_vec();
    joined.sort_by_key(|c| c.client_id);
    assert_eq!(joined.len(), 2, "{joined:?}");
    for (i, c) in joined.iter().enumerate() {
        assert_eq!(c.client_id, i as u64 + 1);
        // The token's user data (all zero here) comes with it.
        assert_eq!(*c.user_data, [0; 256]);
        // The port the server saw is the client's socket's.
        assert_eq!(
            c.addr.port(),
            game.clients[i]
                .world()
                .resource::<Client>()
                .local_addr()
                .port()
        );
        assert_eq!(
            logged::<ConnectedToServer>(&game.clients[i]),
            [ConnectedToServer {
                client_id: i as u64 + 1
            }]
        );
    }

    // Client 1 leaves.
    game.client_mut(0).disconnect();
    game.run_until("the server to see client 1 leave", |g| {
        !logged::<ClientDisconnected>(&g.server).is_empty()
    });
    assert_eq!(
        left(&game.server),
        [(1, DisconnectReason::DisconnectedByClient)]
    );
    assert_eq!(
        logged::<DisconnectedFromServer>(&game.clients[0]),
        [DisconnectedFromServer {
            reason: DisconnectReason::DisconnectedByClient
        }]
    );

    // The server drops client 2.
    assert!(game.server_mut().disconnect(2));
    game.run_until("client 2 to be told", |g| {
        !logged::<DisconnectedFromServer>(&g.clients[1]).is_empty()
    });
    assert_eq!(
        logged::<DisconnectedFromServer>(&game.clients[1]),
        [DisconnectedFromServer {
            reason: DisconnectReason::DisconnectedByServer
        }]
    );
    assert_eq!(
        left(&game.server)[1],
        (2, DisconnectReason::DisconnectedByServer)
    );
    let stats = game.clients[1].world().resource::<ClientStats>();
    assert_eq!(
        stats.state,
        Some(ClientState::Disconnected(
            DisconnectReason::DisconnectedByServer
        ))
    );
    assert!(
        game.server
            .world()
            .resource::<ServerStats>()
            .clients
            .is_empty()
    );
}

/// Messages go both ways on each of the four channel kinds and arrive on the channel
/// they were sent on: every reliable one, in order on the ordered channel.
#[test]
fn messages_both_ways_on_every_channel_kind() {
    let mut game = Game::new(1, UdpConfig::default());
    unreliable_senders(&mut game);
    game.connect_all();

    const N: u32 = 20;
    for channel in [RELIABLE_ORDERED, RELIABLE_UNORDERED] {
        for i in 0..N {
            let n = u32::from(channel) * 1000 + i;
            game.server_mut()
                .send_message(1, channel, &Down::Number(n))
                .unwrap();
            game.client_mut(0)
                .send_message(channel, &Up::Number(n))
                .unwrap();
        }
    }
    // The unreliable channels carry a message each frame (`unreliable_senders`): one lost
    // is followed by the next.
    let unreliable_seen = |g: &Game, channel: u8| {
        logged::<FromClient<Up>>(&g.server)
            .iter()
            .any(|m| m.channel.0 == channel)
            && logged::<FromServer<Down>>(&g.clients[0])
                .iter()
                .any(|m| m.channel.0 == channel)
    };
    game.run_until("every message on every channel", |g| {
        let reliable = |channel: u8| {
            logged::<FromClient<Up>>(&g.server)
                .iter()
                .filter(|m| m.channel.0 == channel)
                .count()
                == N as usize
                && logged::<FromServer<Down>>(&g.clients[0])
                    .iter()
                    .filter(|m| m.channel.0 == channel)
                    .count()
                    == N as usize
        };
        reliable(RELIABLE_ORDERED)
            && reliable(RELIABLE_UNORDERED)
            && unreliable_seen(g, SEQUENCED)
            && unreliable_seen(g, UNRELIABLE)
    });
    let up: Vec<_> = logged::<FromClient<Up>>(&game.server).to_vec();
    let down: Vec<_> = logged::<FromServer<Down>>(&game.clients[0]).to_vec();
    assert!(up.iter().all(|m| m.client_id == 1));
    for channel in [RELIABLE_ORDERED, RELIABLE_UNORDERED] {
        let expected: Vec<u32> = (0..N).map(|i| u32::from(channel) * 1000 + i).collect();
        let got_up: Vec<u32> = up
            .iter()
            .filter(|m| m.channel.0 == channel)
            .map(|m| match m.message {
                Up::Number(n) => n,
                ref other => panic!("unexpected {other:?}"),
            })
            .collect();
        let got_down: Vec<u32> = down
            .iter()
            .filter(|m| m.channel.0 == channel)
            .map(|m| match m.message {
                Down::Number(n) => n,
                ref other => panic!("unexpected {other:?}"),
            })
            .collect();
        if channel == RELIABLE_ORDERED {
            assert_eq!(got_up, expected);
            assert_eq!(got_down, expected);
        } else {
            let set = |v: &[u32]| v.iter().copied().collect::<BTreeSet<_>>();
            assert_eq!(set(&got_up), set(&expected));
            assert_eq!(set(&got_down), set(&expected));
            assert_eq!(got_up.len(), expected.len(), "no duplicates");
        }
    }
    for channel in [SEQUENCED, UNRELIABLE] {
        let text = format!("on {channel}");
        for m in up.iter().filter(|m| m.channel.0 == channel) {
            assert_eq!(m.message, Up::Text(text.clone()));
        }
        for m in down.iter().filter(|m| m.channel.0 == channel) {
            assert_eq!(m.message, Down::Text(text.clone()));
        }
    }
    let stats = game.server.world().resource::<ServerStats>();
    assert_eq!(stats.messages_received, up.len() as u64);
    let stats = game.clients[0].world().resource::<ClientStats>();
    assert_eq!(stats.messages_received, down.len() as u64);
}

/// Systems that send a text on each unreliable channel every frame, each side, gated by
/// the run conditions.
fn unreliable_senders(game: &mut Game) {
    fn server_sends(mut server: ResMut<Server>) {
        for channel in [SEQUENCED, UNRELIABLE] {
            server
                .broadcast_message(channel, &Down::Text(format!("on {channel}")))
                .unwrap();
        }
    }
    fn client_sends(mut client: ResMut<Client>) {
        for channel in [SEQUENCED, UNRELIABLE] {
            client
                .send_message(channel, &Up::Text(format!("on {channel}")))
                .unwrap();
        }
    }
    game.server
        .add_systems(Update, server_sends.run_if(server_running));
    for client in &mut game.clients {
        client.add_systems(Update, client_sends.run_if(client_connected));
    }
}

/// A message too large for a packet goes as a block: the client sees its progress rise to
/// complete, then the message; the server sees the slices acked.
#[test]
fn block_with_progress() {
    let mut game = Game::new(1, UdpConfig::default());
    game.connect_all();
    let data: Vec<u8> = (0..60_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    game.server_mut()
        .send_message(1, RELIABLE_ORDERED, &Down::Block(data.clone()))
        .unwrap();
    game.run_until("the block", |g| {
        !logged::<FromServer<Down>>(&g.clients[0]).is_empty()
            && logged::<BlockToClient>(&g.server)
                .last()
                .is_some_and(|b| b.progress.is_complete())
    });
    assert_eq!(
        logged::<FromServer<Down>>(&game.clients[0]),
        [FromServer {
            channel: RELIABLE_ORDERED.into(),
            message: Down::Block(data)
        }]
    );
    let sent: Vec<_> = logged::<BlockToClient>(&game.server)
        .iter()
        .map(|b| b.progress)
        .collect();
    let received: Vec<_> = logged::<BlockFromServer>(&game.clients[0])
        .iter()
        .map(|b| b.progress)
        .collect();
    for progress in [&sent, &received] {
        assert!(progress.len() >= 2, "{progress:?}");
        assert!(
            progress
                .windows(2)
                .all(|w| w[0].slices_done < w[1].slices_done),
            "{progress:?}"
        );
        assert!(progress.last().unwrap().is_complete());
    }
    // The sender knows the encoded size: the data, its length and the variant's tag.
    let total = sent.last().unwrap().total;
    assert!((60_000..60_010).contains(&total), "{total}");
    // A receiver learns it with the last slice; until then it counts whole slices.
    let estimate = received.last().unwrap().total;
    assert!(
        estimate >= total && estimate - total < 1024,
        "{estimate} for {total}"
    );
    assert!(
        logged::<BlockToClient>(&game.server)
            .iter()
            .all(|b| b.client_id == 1)
    );
}

/// The stats resources show the connection as it goes, and the run conditions follow
/// them: systems gated by `client_connecting`, `client_connected`, `client_disconnected`,
/// `client_just_connected`, `client_just_disconnected` and `server_running` run in the
/// frames they should.
#[test]
fn stats_and_run_conditions() {
    #[derive(Resource, Default, Debug)]
    struct Frames {
        connecting: u32,
        connected: u32,
        disconnected: u32,
        just_connected: u32,
        just_disconnected: u32,
        running: u32,
    }
    let mut game = Game::new(1, UdpConfig::default());
    game.server.init_resource::<Frames>().add_systems(
        Update,
        (|mut f: ResMut<Frames>| f.running += 1).run_if(server_running),
    );
    game.clients[0].init_resource::<Frames>().add_systems(
        Update,
        (
            (|mut f: ResMut<Frames>| f.connecting += 1).run_if(client_connecting),
            (|mut f: ResMut<Frames>| f.connected += 1).run_if(client_connected),
            (|mut f: ResMut<Frames>| f.disconnected += 1).run_if(client_disconnected),
            (|mut f: ResMut<Frames>| f.just_connected += 1).run_if(client_just_connected),
            (|mut f: ResMut<Frames>| f.just_disconnected += 1).run_if(client_just_disconnected),
        ),
    );
    // Before the first frame the stats are empty: nothing has run.
    assert_eq!(
        game.clients[0].world().resource::<ClientStats>().state,
        None
    );
    game.connect_all();
    game.server_mut()
        .send_message(1, RELIABLE_ORDERED, &Down::Number(1))
        .unwrap();
    game.client_mut(0)
        .send_message(RELIABLE_ORDERED, &Up::Number(1))
        .unwrap();
    game.run_until("a message each way", |g| {
        g.server.world().resource::<ServerStats>().messages_received == 1
            && g.clients[0]
                .world()
                .resource::<ClientStats>()
                .messages_received
                == 1
    });

    let client_addr = game.clients[0].world().resource::<Client>().local_addr();
    let server = game.server.world().resource::<ServerStats>();
    assert!(server.running);
    assert_eq!(
        server.local_addr,
        Some(game.server.world().resource::<Server>().local_addr())
    );
    assert_eq!(server.max_clients, 64);
    assert_eq!(server.clients.len(), 1);
    let entry = server.client(1).unwrap();
    assert_eq!(entry.addr.port(), client_addr.port());
    assert!(entry.network.rtt < 1.0, "{:?}", entry.network);
    assert!(server.udp.datagrams_received > 0 && server.udp.datagrams_sent > 0);
    assert_eq!(server.dropped_events, 0);

    let client = game.clients[0].world().resource::<ClientStats>();
    assert_eq!(client.state, Some(ClientState::Connected));
    assert_eq!(client.client_id, Some(1));
    assert_eq!(client.local_addr, Some(client_addr));
    assert!(client.udp.datagrams_received > 0 && client.udp.bytes_sent > 0);
    assert_eq!(client.refusals.total(), 0);

    let f = game.clients[0].world().resource::<Frames>();
    assert!(f.connecting > 0, "{f:?}");
    assert!(f.connected > 0, "{f:?}");
    assert_eq!(f.disconnected, 0, "{f:?}");
    assert_eq!((f.just_connected, f.just_disconnected), (1, 0), "{f:?}");
    let running = game.server.world().resource::<Frames>().running;
    assert!(running > 0);

    // Without the server resource the stats say so, and gated systems stop.
    game.server.world_mut().remove_resource::<Server>();
    game.run_until("client told the server left", |g| {
        !logged::<DisconnectedFromServer>(&g.clients[0]).is_empty()
    });
    let server = game.server.world().resource::<ServerStats>();
    assert_eq!(*server, ServerStats::default());
    assert_eq!(game.server.world().resource::<Frames>().running, running);
    let connected = game.clients[0].world().resource::<Frames>().connected;
    game.frame();
    let f = game.clients[0].world().resource::<Frames>();
    assert_eq!(f.connected, connected);
    assert!(f.disconnected > 0);
    assert_eq!((f.just_connected, f.just_disconnected), (1, 1), "{f:?}");
}

/// A client that leaves (its resource removed) and comes back with a new token is a new
/// connection: connected again on both sides, and messages flow.
#[test]
fn client_reconnects() {
    let mut game = Game::new(1, UdpConfig::default());
    game.connect_all();
    game.clients[0].world_mut().remove_resource::<Client>();
    game.run_until("the server to see the client leave", |g| {
        !logged::<ClientDisconnected>(&g.server).is_empty()
    });
    assert_eq!(
        left(&game.server),
        [(1, DisconnectReason::DisconnectedByClient)]
    );
    assert_eq!(
        game.clients[0].world().resource::<ClientStats>().state,
        None
    );

    let client = game.client(1);
    game.clients[0].insert_resource(client);
    game.run_until("connected again", |g| {
        logged::<ConnectedToServer>(&g.clients[0]).len() == 2
            && logged::<ClientConnected>(&g.server).len() == 2
    });
    game.client_mut(0)
        .send_message(RELIABLE_ORDERED, &Up::Number(9))
        .unwrap();
    game.server_mut()
        .send_message(1, RELIABLE_ORDERED, &Down::Number(8))
        .unwrap();
    game.run_until("a message each way", |g| {
        !logged::<FromClient<Up>>(&g.server).is_empty()
            && !logged::<FromServer<Down>>(&g.clients[0]).is_empty()
    });
    assert_eq!(
        logged::<FromClient<Up>>(&game.server)[0].message,
        Up::Number(9)
    );
    assert_eq!(
        logged::<FromServer<Down>>(&game.clients[0])[0].message,
        Down::Number(8)
    );
    // The stats started again with the new client.
    assert_eq!(
        game.clients[0]
            .world()
            .resource::<ClientStats>()
            .messages_received,
        1
    );
}

/// `AppExit` on a client: the server is told at once (not after a timeout). `AppExit` on
/// the server: its clients are told, and get what was sent just before. Each side's
/// stats say whether its shutdown saw every ack.
#[test]
fn app_exit_disconnects() {
    let mut game = Game::new(2, UdpConfig::default());
    game.connect_all();

    game.clients[1].world_mut().write_message(AppExit::Success);
    game.clients[1].update();
    // Nothing was waiting for an ack: a clean leave.
    let stats = game.clients[1].world().resource::<ClientStats>();
    assert_eq!(stats.clean_shutdown, Some(true), "{stats:?}");
    assert!(game.clients[1].world().get_resource::<Client>().is_none());
    game.run_until("the server to see client 2 leave", |g| {
        !logged::<ClientDisconnected>(&g.server).is_empty()
    });
    assert_eq!(
        left(&game.server),
        [(2, DisconnectReason::DisconnectedByClient)]
    );

    game.server_mut()
        .send_message(1, RELIABLE_ORDERED, &Down::Number(6))
        .unwrap();
    game.server.world_mut().write_message(AppExit::Success);
    game.server.update();
    // Client 1 could not ack the last message while the shutdown waited (its app runs on
    // this thread): the shutdown says so, after its 100 ms timeout.
    let stats = game.server.world().resource::<ServerStats>();
    assert_eq!(stats.clean_shutdown, Some(false), "{stats:?}");
    assert!(game.server.world().get_resource::<Server>().is_none());
    assert!(!game.server.world().resource::<ServerStats>().running);
    game.run_until("client 1 to be told", |g| {
        !logged::<DisconnectedFromServer>(&g.clients[0]).is_empty()
    });
    assert_eq!(
        logged::<DisconnectedFromServer>(&game.clients[0]),
        [DisconnectedFromServer {
            reason: DisconnectReason::DisconnectedByServer
        }]
    );
    assert_eq!(
        logged::<FromServer<Down>>(&game.clients[0]),
        [FromServer {
            channel: RELIABLE_ORDERED.into(),
            message: Down::Number(6)
        }]
    );
}

/// Through the transport's simulator on every socket (10% loss, 20 ms latency, jitter,
/// duplicates): everyone connects, every reliable message and a block arrive in order.
#[test]
fn through_the_simulator() {
    let udp = UdpConfig {
        send_simulator: Some(SimulatorConfig {
            latency: 0.02,
            jitter: 0.005,
            loss: 0.1,
            duplicate: 0.02,
            seed: 7,
            ..SimulatorConfig::default()
        }),
        ..UdpConfig::default()
    };
    let mut game = Game::new(3, udp);
    game.connect_all();
    const N: u32 = 50;
    for i in 0..N {
        game.server_mut()
            .broadcast_message(RELIABLE_ORDERED, &Down::Number(i))
            .unwrap();
        for c in 0..3 {
            game.client_mut(c)
                .send_message(RELIABLE_ORDERED, &Up::Number(i))
                .unwrap();
        }
    }
    let block: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
    game.server_mut()
        .send_message(2, RELIABLE_ORDERED, &Down::Block(block.clone()))
        .unwrap();
    game.run_until("every message", |g| {
        logged::<FromClient<Up>>(&g.server).len() == 3 * N as usize
            && g.clients.iter().enumerate().all(|(i, c)| {
                logged::<FromServer<Down>>(c).len() == N as usize + usize::from(i == 1)
            })
    });
    let expected: Vec<Down> = (0..N).map(Down::Number).collect();
    for (i, c) in game.clients.iter().enumerate() {
        let got: Vec<Down> = logged::<FromServer<Down>>(c)
            .iter()
            .map(|m| m.message.clone())
            .collect();
        assert_eq!(got[..N as usize], expected[..], "client {}", i + 1);
        if i == 1 {
            assert_eq!(got[N as usize], Down::Block(block.clone()));
        }
    }
    for id in 1..=3 {
        let got: Vec<Up> = logged::<FromClient<Up>>(&game.server)
            .iter()
            .filter(|m| m.client_id == id)
            .map(|m| m.message.clone())
            .collect();
        assert_eq!(
            got,
            (0..N).map(Up::Number).collect::<Vec<_>>(),
            "from client {id}"
        );
    }
    // The simulator did drop packets: the test ran over loss.
    let server = game.server.world().resource::<Server>();
    let sim = server.driver().send_simulator_stats().unwrap();
    assert!(sim.lost > 0 && sim.duplicated > 0, "{sim:?}");
    assert!(
        logged::<BlockFromServer>(&game.clients[1])
            .last()
            .unwrap()
            .progress
            .is_complete()
    );
}

/// The plugins without their resources: nothing runs, the stats stay empty, no message
/// is written.
#[test]
fn plugin_without_resource_is_idle() {
    let mut app = App::new();
    app.add_plugins((
        NetClientPlugin::<Up, Down>::default(),
        NetServerPlugin::<Down, Up>::default(),
    ));
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(
        *app.world().resource::<ClientStats>(),
        ClientStats::default()
    );
    assert_eq!(
        *app.world().resource::<ServerStats>(),
        ServerStats::default()
    );
    assert!(
        app.world()
            .resource::<Messages<ConnectedToServer>>()
            .is_empty()
    );
}
