//! What a game reads of the network: `NetworkInfo { rtt, min_rtt }` of a game client on a
//! simulated 100 ms path comes out near 100 ms, whether the server's acks ride on its own
//! messages or wait out the ack delay alone (the delay is reported and taken off).

use std::time::SystemTime;

use netser_transport::netcode::{
    Client, ConnectToken, DefaultChannel, NetworkInfo, Protocol, Server, TokenParams,
};
use netser_transport::simulator::{SimulatorConfig, Star};

type GameStar = Star<Server<u32>, Client<u32>>;

const FRAME: f64 = 1.0 / 60.0;
/// The path's round trip: 50 ms each way.
const PATH_RTT: f64 = 0.1;

/// A server and one connected client over a path of [`PATH_RTT`].
fn connected() -> GameStar {
    let protocol = Protocol::<u32, u32>::new();
    let key = [3; 32];
    let unix_now = SystemTime::now();
    let config = protocol.server_config(key, vec![GameStar::SERVER_ADDR]);
    let server = Server::new(0.0, unix_now, config, &protocol).unwrap();
    let net = SimulatorConfig {
        latency: PATH_RTT / 2.0,
        ..SimulatorConfig::default()
    };
    let mut star = GameStar::new(server, net);
    let params = TokenParams {
        client_id: 1,
        ..protocol.token_params(vec![GameStar::SERVER_ADDR], unix_now)
    };
    let token = ConnectToken::generate(&params, &key).unwrap();
    star.add_client(Client::new(0.0, token, &protocol).unwrap());
    assert!(star.run_until(2.0, |star| star.clients[0].is_connected()
        && star.server.is_connected(1)));
    star
}

/// Runs three seconds of 60 Hz frames: the client sends a message every frame, the
/// server too when `server_talks`.
fn play(star: &mut GameStar, server_talks: bool) {
    let channel = DefaultChannel::Unreliable;
    for frame in 0..180u32 {
        star.clients[0].send_message(channel, &frame).unwrap();
        if server_talks {
            star.server.send_message(1, channel, &frame).unwrap();
        }
        star.step(FRAME);
        while star.server.receive_message(1, channel).is_some() {}
        while star.clients[0].receive_message(channel).is_some() {}
    }
}

/// The RTT a game reads is the path's, plus at most a frame at each end before a
/// datagram is read (what `NetworkInfo::rtt`'s docs say it includes).
fn assert_near_path(info: NetworkInfo, who: &str) {
    let most = PATH_RTT + 2.0 * FRAME + 1e-3;
    assert!(
        (PATH_RTT - 1e-3..=most).contains(&info.rtt),
        "{who}: rtt {} outside {PATH_RTT}..={most}",
        info.rtt
    );
    assert!(
        (PATH_RTT - 1e-3..=info.rtt + 1e-9).contains(&info.min_rtt),
        "{who}: min_rtt {} outside {PATH_RTT}..={}",
        info.min_rtt,
        info.rtt
    );
}

#[test]
fn both_sides_read_the_path_rtt_when_both_talk() {
    let mut star = connected();
    play(&mut star, true);
    assert_near_path(star.clients[0].network_info(), "client");
    assert_near_path(star.server.network_info(1).unwrap(), "server");
}

#[test]
fn the_client_reads_the_path_rtt_when_the_server_only_acks() {
    let mut star = connected();
    play(&mut star, false);
    // The server's acks wait up to the ack delay (50 ms by default) for a payload
    // packet that never comes; the delay it reports is taken off, so the RTT is still
    // the path's and not 150 ms.
    assert_near_path(star.clients[0].network_info(), "client");
}
