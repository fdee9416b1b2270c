//! The UDP layer on the game's clock: a server and a client driven with `receive_at` and
//! `transmit_at` from an engine time far from the driver's connect, exchange messages,
//! and report their times and wakeups on that clock.

use std::time::{Duration, Instant, SystemTime};

use netser_transport::netcode::{ConnectToken, DefaultChannel, Protocol, TokenParams};
use netser_transport::udp::{UdpClient, UdpClientConfig, UdpServer, UdpServerConfig};

const KEY: [u8; 32] = [0x3C; 32];
/// Where the engine's clock stands when the test starts (a game that has run for a day).
const ENGINE_START: f64 = 86_400.0;

#[test]
fn server_and_client_run_on_the_engine_clock() {
    let protocol = Protocol::<u32, u32>::new();
    let mut server = UdpServer::bind("127.0.0.1:0", &protocol, UdpServerConfig::new(KEY)).unwrap();
    let params = TokenParams {
        client_id: 5,
        ..protocol.token_params(vec![server.local_addr()], SystemTime::now())
    };
    let token = ConnectToken::generate(&params, &KEY).unwrap();
    let mut client = UdpClient::connect(token, &protocol, UdpClientConfig::default()).unwrap();

    let start = Instant::now();
    let engine = || ENGINE_START + start.elapsed().as_secs_f64();
    let mut got = None;
    while got.is_none() {
        assert!(start.elapsed() < Duration::from_secs(5), "no message");
        client.receive_at(engine());
        if client.is_connected() {
            client
                .send_message(DefaultChannel::ReliableOrdered, &7)
                .unwrap();
        }
        client.transmit_at(engine());
        server.receive_at(engine());
        got = server.receive_message(5, DefaultChannel::ReliableOrdered);
        server.transmit_at(engine());
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(got, Some(7));
    // Both read the engine's clock now, and their next wakeups are on it: a keep-alive
    // within the netcode send interval, not at the driver's few seconds since start.
    for (now, wakeup) in [
        (server.now(), server.poll_timeout()),
        (client.now(), client.poll_timeout()),
    ] {
        assert!(now >= ENGINE_START && now < engine() + 1.0, "{now}");
        let wakeup = wakeup.unwrap();
        assert!(wakeup > ENGINE_START && wakeup < engine() + 1.0, "{wakeup}");
    }
}
