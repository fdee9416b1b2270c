//! One clock: every layer's `now` is the game's monotonic time (engine time, from any
//! epoch); the netcode server checks connect tokens against the Unix time it was given as
//! a `SystemTime`. A game whose clock starts at zero gets tokens that expire when they
//! should, not tokens that live forever.

use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

use netser_transport::netcode::{
    ClientState, ConnectToken, NetcodeClient, NetcodeServer, Refusal, ServerConfig, TokenParams,
};

const PROTOCOL_ID: u64 = 0x71AE;
const KEY: [u8; 32] = [0x5A; 32];
/// The Unix time (seconds) at which the server starts, at engine time 0.
const UNIX_START: u64 = 1_800_000_000;

fn server_addr() -> SocketAddr {
    "192.0.2.7:40000".parse().unwrap()
}
fn client_addr() -> SocketAddr {
    "198.51.100.7:50000".parse().unwrap()
}

/// A token the backend issued at Unix `created`, usable for `expire_seconds`.
fn token(created: u64, expire_seconds: u64) -> ConnectToken {
    let params = TokenParams {
        client_id: 1,
        expire_seconds,
        timeout_seconds: 1000,
        ..TokenParams::new(PROTOCOL_ID, vec![server_addr()], created)
    };
    ConnectToken::generate(&params, &KEY).unwrap()
}

/// A server at engine time 0, when the Unix time is `UNIX_START`.
fn server() -> NetcodeServer {
    let unix = UNIX_EPOCH + Duration::from_secs(UNIX_START);
    NetcodeServer::new(
        0.0,
        unix,
        ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()]),
    )
    .unwrap()
}

/// Runs a client made at engine time `start` against `server` until it connects or
/// `start + 5` s pass; returns whether it connected.
fn connect(server: &mut NetcodeServer, token: ConnectToken, start: f64) -> bool {
    let mut client = NetcodeClient::new(start, token);
    let mut t = start;
    while t < start + 5.0 && !client.is_connected() {
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            server.handle_datagram(t, client_addr(), &mut transmit.data.to_vec());
        }
        server.handle_timeout(t);
        while let Some(transmit) = server.poll_transmit() {
            client.handle_datagram(t, server_addr(), &mut transmit.data.to_vec());
        }
        t += 0.05;
    }
    client.is_connected()
}

/// A token valid for 30 s from the server's start connects at engine time 20 and is
/// refused as expired at engine time 31: engine time starting at 0 reaches the token's
/// Unix expiry 30 s later, as the wall clock does.
#[test]
fn engine_time_from_zero_expires_tokens_on_time() {
    let mut early = server();
    assert!(connect(&mut early, token(UNIX_START, 30), 20.0));
    assert_eq!(early.refusals().get(Refusal::TokenExpired), 0);

    let mut late = server();
    assert!(!connect(&mut late, token(UNIX_START, 30), 31.0));
    assert!(late.refusals().get(Refusal::TokenExpired) > 0);
    assert_eq!(late.connected_clients(), 0);
}

/// A token that expired before the server started is refused at once, at engine time 0.
#[test]
fn an_expired_token_is_refused() {
    let mut server = server();
    // Issued 400 s before the server's start, usable for 300 s.
    assert!(!connect(&mut server, token(UNIX_START - 400, 300), 0.0));
    assert!(server.refusals().get(Refusal::TokenExpired) > 0);
    assert_eq!(server.pending_clients(), 0);
}

/// A handshake in progress ends when its token expires: the server's wakeup is the
/// expiry on the engine clock, and the pending slot is gone after it.
#[test]
fn a_pending_handshake_ends_at_the_token_expiry_in_engine_time() {
    let mut server = server();
    let mut client = NetcodeClient::new(0.0, token(UNIX_START, 10));
    client.handle_timeout(0.0);
    let mut request = client.poll_transmit().unwrap().data.to_vec();
    server.handle_datagram(0.0, client_addr(), &mut request);
    assert_eq!(server.pending_clients(), 1);
    let wakeup = server.poll_timeout().unwrap();
    assert!((wakeup - 10.0).abs() < 1e-6, "{wakeup}");
    server.handle_timeout(9.9);
    assert_eq!(server.pending_clients(), 1);
    server.handle_timeout(10.0);
    assert_eq!(server.pending_clients(), 0);
}

/// `set_unix_time` re-ties the clocks: after the game clock paused for a minute, a token
/// valid for 30 s from the start is expired although engine time only reached 5 s.
#[test]
fn set_unix_time_moves_expiry_with_the_wall_clock() {
    let mut server = server();
    server.set_unix_time(5.0, UNIX_EPOCH + Duration::from_secs(UNIX_START + 60));
    assert!(!connect(&mut server, token(UNIX_START, 30), 5.0));
    assert!(server.refusals().get(Refusal::TokenExpired) > 0);
}

/// The client measures the token's lifetime from its first `handle_timeout`, not from
/// when it was made: a client made at engine time 0 and first run at 500 still connects
/// with a 300 s token the server accepts then.
#[test]
fn the_client_counts_the_lifetime_from_its_first_run() {
    let unix = UNIX_EPOCH + Duration::from_secs(UNIX_START + 500);
    let mut server = NetcodeServer::new(
        500.0,
        unix,
        ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()]),
    )
    .unwrap();
    let token = token(UNIX_START + 500, 300);
    let mut client = NetcodeClient::new(0.0, token);
    let mut t = 500.0;
    while t < 505.0 && !client.is_connected() {
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            server.handle_datagram(t, client_addr(), &mut transmit.data.to_vec());
        }
        server.handle_timeout(t);
        while let Some(transmit) = server.poll_transmit() {
            client.handle_datagram(t, server_addr(), &mut transmit.data.to_vec());
        }
        t += 0.05;
    }
    assert_eq!(client.state(), ClientState::Connected);
}
