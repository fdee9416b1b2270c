//! A counting global allocator over a netcode game server in the steady state: after a
//! warm-up, many ticks of a game's traffic (a snapshot-sized message broadcast to every
//! client on an unreliable-sequenced channel, a reliable event now and then, 60 inputs a
//! second from each client, every 13th datagram lost both ways) allocate nothing per
//! packet on the server, on the way in (netcode's lookup and decryption, the connection)
//! or out (the connection's packets, netcode's encryption, the outbox). Each phase of the
//! server's loop is counted apart, so a failure names where the allocations are. A
//! broadcast message above the 22 bytes a queue stores in place costs one allocation
//! per broadcast, shared by every client; that is the only one allowed. The connections
//! use the preset for servers of many clients (see `protocol`).

use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

use netser::NetSerialize;
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::ConnectionConfig;
use netser_transport::netcode::{Client, ConnectToken, Protocol, Server, TokenParams};
use tracking_allocator::Allocator;

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

#[path = "support/alloc_count.rs"]
mod alloc_count;
use alloc_count::counted;

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum ServerMsg {
    /// About a game's snapshot of 64 bodies.
    Snapshot(#[net(max_len = 1100)] Vec<u8>),
    Event(#[net(range = 0..=1000)] u16),
}

#[derive(NetSerialize, Debug, Clone, Copy, PartialEq)]
enum ClientMsg {
    Input {
        #[net(range = 0..=100_000)]
        frame: u32,
        #[net(quantize(min = -1.0, max = 1.0, res = 0.0078125))]
        stick: f32,
    },
    Event(#[net(range = 0..=1000)] u16),
}

const RELIABLE: u8 = 0;
const SEQUENCED: u8 = 1;
const INPUTS: u8 = 2;
const KEY: [u8; 32] = [0x5a; 32];
const UNIX_T0: u64 = 1_700_000_000;
const FRAME: f64 = 1.0 / 60.0;
const CLIENTS: usize = 8;
const WARM_UP: u32 = 1200;
const MEASURED: u32 = 3000;

fn server_addr() -> SocketAddr {
    "10.0.0.1:40000".parse().unwrap()
}

fn client_addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 1, 1], 50_000 + i as u16))
}

/// The preset for servers of many clients: its 256-packet windows wrap within the
/// warm-up, so the id lists of packets lost before it (never acked, kept until their
/// slot is reused) are back in the spare pool when counting starts; a lost packet's
/// list is the only thing the pool grows for, up to the window.
fn protocol() -> Protocol<ClientMsg, ServerMsg> {
    let config = ConnectionConfig {
        channels: vec![
            ChannelConfig::reliable_ordered(),
            ChannelConfig::new(ChannelKind::UnreliableSequenced),
            ChannelConfig::new(ChannelKind::Unreliable),
        ],
        ..ConnectionConfig::default()
    };
    Protocol::with_connection(config.for_many_clients())
}

/// Datagrams waiting for delivery, in reusable buffers reserved up front: queuing one
/// allocates nothing, so the server's send phase can copy its datagrams here while
/// counted.
struct Wire {
    bytes: Vec<u8>,
    datagrams: Vec<(SocketAddr, SocketAddr, usize, usize)>,
    /// Every datagram queued so far, for the 1-in-13 loss.
    sent: u64,
}

impl Wire {
    fn new() -> Self {
        Self {
            bytes: Vec::with_capacity(1 << 20),
            datagrams: Vec::with_capacity(4096),
            sent: 0,
        }
    }

    /// Queues `data` from `from` to `to`, unless it is the 13th.
    fn push(&mut self, from: SocketAddr, to: SocketAddr, data: &[u8]) {
        self.sent += 1;
        if self.sent.is_multiple_of(13) {
            return;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.datagrams.push((from, to, start, data.len()));
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.datagrams.clear();
    }
}

/// Allocations in each phase of the server's loop over the measured ticks.
#[derive(Debug, Default, PartialEq)]
struct Phases {
    handle_datagram: u64,
    receive_message: u64,
    send_message: u64,
    broadcast: u64,
    handle_timeout: u64,
    poll_transmit: u64,
}

#[test]
fn a_game_server_allocates_nothing_per_packet_in_the_steady_state() {
    let protocol = protocol();
    let unix_t0 = UNIX_EPOCH + Duration::from_secs(UNIX_T0);
    let config = protocol.server_config(KEY, vec![server_addr()]);
    let mut server = Server::new(0.0, unix_t0, config, &protocol).unwrap();
    let mut clients: Vec<Client<ClientMsg, ServerMsg>> = (0..CLIENTS)
        .map(|i| {
            let params = TokenParams {
                client_id: 1 + i as u64,
                ..TokenParams::new(protocol.id(), vec![server_addr()], UNIX_T0)
            };
            let token = ConnectToken::generate(&params, &KEY).unwrap();
            Client::new(0.0, token, &protocol).unwrap()
        })
        .collect();
    let mut to_server = Wire::new();
    let mut to_clients = Wire::new();
    let snapshot = ServerMsg::Snapshot(vec![0xa7; 1000]);
    let mut phases = Phases::default();
    let (mut inputs_received, mut snapshots_received, mut events_received) = (0u64, 0u64, 0u64);
    let mut packets = (0u64, 0u64);
    for frame in 0..WARM_UP + MEASURED {
        let now = f64::from(frame) * FRAME;
        let measured = frame >= WARM_UP;
        let count = |phase: &mut u64, n: u64| {
            if measured {
                *phase += n;
            }
        };

        // The clients (not counted): take what arrived, play, send.
        for &(from, to, start, len) in &to_clients.datagrams {
            let i = usize::from(to.port() - 50_000);
            clients[i].handle_datagram(now, from, &to_clients.bytes[start..start + len]);
        }
        to_clients.clear();
        for (i, client) in clients.iter_mut().enumerate() {
            while let Some(message) = client.receive_message(SEQUENCED) {
                assert_eq!(message, snapshot);
                snapshots_received += u64::from(measured);
            }
            while client.receive_message(RELIABLE).is_some() {}
            if client.is_connected() {
                let input = ClientMsg::Input { frame, stick: 0.5 };
                client.send_message(INPUTS, &input).unwrap();
                if frame % 20 == 0 {
                    client.send_message(RELIABLE, &ClientMsg::Event(7)).unwrap();
                }
            }
            client.handle_timeout(now);
            while let Some(transmit) = client.poll_transmit() {
                to_server.push(client_addr(i), transmit.to, transmit.data);
            }
        }

        // The server, each phase counted.
        let (_, n) = counted(|| {
            for &(from, _, start, len) in &to_server.datagrams {
                server.handle_datagram(now, from, &to_server.bytes[start..start + len]);
            }
        });
        count(&mut phases.handle_datagram, n);
        if measured {
            packets.0 += to_server.datagrams.len() as u64;
        }
        to_server.clear();
        while server.poll_event().is_some() {}
        let ids = server.client_ids();
        let (_, n) = counted(|| {
            for &id in &ids {
                while let Some(message) = server.receive_message(id, INPUTS) {
                    assert!(matches!(message, ClientMsg::Input { .. }));
                    inputs_received += u64::from(measured);
                }
                while let Some(message) = server.receive_message(id, RELIABLE) {
                    assert_eq!(message, ClientMsg::Event(7));
                    events_received += u64::from(measured);
                }
            }
        });
        count(&mut phases.receive_message, n);
        let (_, n) = counted(|| {
            if frame % 30 == 0 {
                for &id in &ids {
                    server
                        .send_message(id, RELIABLE, &ServerMsg::Event(3))
                        .unwrap();
                }
            }
        });
        count(&mut phases.send_message, n);
        // 30 Hz snapshots.
        let (_, n) = counted(|| {
            if frame % 2 == 0 {
                server.broadcast_message(SEQUENCED, &snapshot).unwrap();
            }
        });
        if measured && frame % 2 == 0 {
            assert!(n <= 1, "frame {frame}: a broadcast made {n} allocations");
        }
        count(&mut phases.broadcast, n);
        let (_, n) = counted(|| server.handle_timeout(now));
        count(&mut phases.handle_timeout, n);
        let (_, n) = counted(|| {
            while let Some(transmit) = server.poll_transmit() {
                to_clients.push(server_addr(), transmit.to, transmit.data);
            }
        });
        count(&mut phases.poll_transmit, n);
        if measured {
            packets.1 += to_clients.datagrams.len() as u64;
        }
        if frame == WARM_UP {
            assert_eq!(server.connected_clients(), CLIENTS, "all connected");
        }
    }

    println!(
        "server: {} datagrams in, {} out over {MEASURED} ticks; allocations {phases:?}",
        packets.0, packets.1
    );
    // The traffic flowed: inputs, events and snapshots arrived, under the loss.
    let ticks = u64::from(MEASURED) * CLIENTS as u64;
    assert!(packets.0 > ticks * 8 / 10 && packets.1 > ticks * 4 / 10);
    assert!(inputs_received > ticks * 8 / 10, "{inputs_received} inputs");
    assert!(
        snapshots_received > ticks * 4 / 10,
        "{snapshots_received} snapshots"
    );
    // Every reliable event, once: those sent in the measured ticks, give or take the
    // few on their way at either end.
    let sent = ticks / 20;
    assert!(
        events_received.abs_diff(sent) <= 2 * CLIENTS as u64,
        "{events_received} events of {sent}"
    );
    // At most one allocation per broadcast (the shared encoded message), none per packet.
    assert!(phases.broadcast <= u64::from(MEASURED / 2));
    assert_eq!(
        Phases {
            broadcast: 0,
            ..phases
        },
        Phases::default(),
        "allocations per phase of the server's loop"
    );
}
