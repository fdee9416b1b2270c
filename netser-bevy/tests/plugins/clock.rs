//! The plugins run the transport on Bevy's real time (`Time<Real>`), not the wall clock and
//! not the game's virtual time.

use std::time::{Duration, Instant};

use bevy_time::{Real, Time, TimeUpdateStrategy, Virtual};
use netser_bevy::prelude::*;
use netser_transport::udp::UdpConfig;

use crate::harness::*;

/// Frames of 1 s of Bevy time each, far more than a timeout needs.
const FRAMES: usize = 60;

/// A client whose server went silent times out after the token's timeout (15 s) of Bevy's
/// real time, stepped one second a frame within milliseconds of wall clock, and with the
/// game's virtual time paused: the frame's real time is what the transport runs on.
#[test]
fn client_times_out_on_bevy_real_time() {
    let mut game = Game::new(1, UdpConfig::default());
    game.connect_all();
    let client = &mut game.clients[0];
    client.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs(1)));
    client.world_mut().resource_mut::<Time<Virtual>>().pause();

    // The server app is no longer updated: nothing answers.
    let started = Instant::now();
    let mut frames = 0;
    while logged::<DisconnectedFromServer>(client).is_empty() && frames < FRAMES {
        client.update();
        frames += 1;
    }
    assert_eq!(
        logged::<DisconnectedFromServer>(client),
        [DisconnectedFromServer {
            reason: DisconnectReason::ConnectionTimedOut
        }]
    );
    // 15 s of Bevy time (a frame or two more for the switch of clock), well before 15 s
    // of wall clock.
    assert!(
        (15..=18).contains(&frames),
        "timed out after {frames} frames"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The transport's clock is Bevy's.
    let real = client.world().resource::<Time<Real>>().elapsed_secs_f64();
    let now = client.world().resource::<Client>().now();
    assert!((now - real).abs() < 1.0, "transport {now} s, Bevy {real} s");
}

/// The server's side: a client that went silent is timed out on the server's Bevy time.
#[test]
fn server_times_out_a_client_on_bevy_real_time() {
    let mut game = Game::new(1, UdpConfig::default());
    game.connect_all();
    game.server
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs(1)));

    // The client app is no longer updated.
    let mut frames = 0;
    while left(&game.server).is_empty() && frames < FRAMES {
        game.server.update();
        frames += 1;
    }
    assert_eq!(
        left(&game.server),
        [(1, DisconnectReason::ConnectionTimedOut)]
    );
    assert!(
        (15..=18).contains(&frames),
        "timed out after {frames} frames"
    );
}

/// The other way round: while Bevy's real time stands still, the transport's does too, so
/// a connection idle for longer than a keep-alive in wall-clock time sends nothing.
#[test]
fn client_clock_stands_still_with_bevy_real_time() {
    let mut game = Game::new(1, UdpConfig::default());
    game.connect_all();
    let client = &mut game.clients[0];
    client.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    client.update();
    let sent = |app: &bevy_app::App| app.world().resource::<ClientStats>().udp.datagrams_sent;
    let now = client.world().resource::<Client>().now();
    let before = sent(client);

    // 300 ms of wall clock in frames of no Bevy time: past netcode's keep-alive interval
    // (`PACKET_SEND_INTERVAL`), yet no timer runs.
    for _ in 0..30 {
        client.update();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(sent(client), before, "a keep-alive went on the wall clock");
    let after = client.world().resource::<Client>().now();
    // `now()` reads the driver's clock moved to the game's at the last frame; at a frame it
    // is the frame's time.
    assert!(after - now < 0.2, "{now} -> {after}");

    // Bevy time moves again: keep-alives follow.
    client.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        200,
    )));
    for _ in 0..3 {
        client.update();
    }
    assert!(sent(client) > before);
}
