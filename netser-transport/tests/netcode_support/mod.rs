//! Shared by the netcode and UDP tests: the protocol they speak, connect tokens, a UDP
//! server and client stepped frame by frame over loopback, and a relay on the path that
//! records what the client sent.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime};

use netser::{NetDelta, NetSerialize};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{ConnectToken, Key, Protocol, TokenParams};
use netser_transport::udp::{UdpClient, UdpServer};

/// The protocol these tests speak: the message types given, the default connection
/// settings.
pub fn protocol<C: NetSerialize, S: NetSerialize>() -> Protocol<C, S> {
    Protocol::with_connection(ConnectionConfig::default())
}

/// What a connect token of `protocol` for `client_id` to `server` is made from, created
/// now, with the defaults otherwise.
pub fn token_params<C: NetSerialize, S: NetSerialize, Snap: NetDelta>(
    protocol: &Protocol<C, S, Snap>,
    server: SocketAddr,
    client_id: u64,
) -> TokenParams {
    TokenParams {
        client_id,
        ..protocol.token_params(vec![server], SystemTime::now())
    }
}

/// A connect token of the `u32` protocol for `client_id` to `server`, created now.
pub fn token(key: &Key, server: SocketAddr, client_id: u64) -> ConnectToken {
    let params = token_params(&protocol::<u32, u32>(), server, client_id);
    ConnectToken::generate(&params, key).unwrap()
}

/// One frame over loopback: the client reads and sends, then the server; then a
/// millisecond's sleep so that the datagrams arrive.
pub fn udp_frame<C, S, Snap>(server: &mut UdpServer<S, C, Snap>, client: &mut UdpClient<C, S, Snap>)
where
    C: NetSerialize,
    S: NetSerialize,
    Snap: NetDelta + PartialEq + Clone,
{
    client.receive();
    client.transmit();
    server.receive();
    server.transmit();
    std::thread::sleep(Duration::from_millis(1));
}

/// Runs frames until the client and the server see each other connected, then drops
/// the events of the handshake.
///
/// # Panics
/// If they are not connected within 5 seconds.
pub fn udp_connect<C, S, Snap>(
    server: &mut UdpServer<S, C, Snap>,
    client: &mut UdpClient<C, S, Snap>,
) where
    C: NetSerialize,
    S: NetSerialize,
    Snap: NetDelta + PartialEq + Clone,
{
    let start = Instant::now();
    while !(client.is_connected() && server.connected_clients() == 1) {
        assert!(start.elapsed() < Duration::from_secs(5), "no connection");
        udp_frame(server, client);
    }
    while server.poll_event().is_some() {}
    while client.poll_event().is_some() {}
}

/// A UDP relay on the path between one client and the server: the client talks to
/// `front`, the server sees the client at `back`'s address. It records what the client
/// sent, as an attacker on the path would.
pub struct Relay {
    /// Where the client sends (the address in its token).
    pub front: UdpSocket,
    /// Where the relay forwards from (the server sees this address as the client's).
    pub back: UdpSocket,
    pub server: SocketAddr,
    pub client: Option<SocketAddr>,
    pub recorded: Vec<Vec<u8>>,
}

impl Relay {
    pub fn new(server: SocketAddr) -> Self {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        front.set_nonblocking(true).unwrap();
        back.set_nonblocking(true).unwrap();
        Self {
            front,
            back,
            server,
            client: None,
            recorded: Vec::new(),
        }
    }

    /// Forwards what waits on either side.
    pub fn pump(&mut self) {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = self.front.recv_from(&mut buf) {
            self.client = Some(from);
            self.recorded.push(buf[..n].to_vec());
            self.back.send_to(&buf[..n], self.server).unwrap();
        }
        while let Ok((n, _)) = self.back.recv_from(&mut buf) {
            if let Some(client) = self.client {
                // The client may be gone (a replay after it left): not the server's fault.
                let _ = self.front.send_to(&buf[..n], client);
            }
        }
    }
}
