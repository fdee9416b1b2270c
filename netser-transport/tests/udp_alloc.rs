//! A counting global allocator over real loopback sockets: a `UdpServer` and eight
//! `UdpClient`s in the steady state of a game (an input from each client and a world
//! update broadcast to all of them every tick at 60 Hz) allocate nothing per packet,
//! the sockets' system calls included (Linux sends a tick's datagrams to different
//! clients in one `sendmmsg`). Each phase of each side's run loop is counted apart,
//! so a failure names where the allocations are. The messages encode to at most 22
//! bytes, which a queue stores in place (a larger one costs one allocation when it is
//! queued, shared by every client it is broadcast to).

mod netcode_support;

use std::cell::Cell;

use netcode_support::{protocol, token_params};
use netser::NetSerialize;
use netser_transport::netcode::{generate_key, ConnectToken};
use netser_transport::udp::{
    UdpClient, UdpClientConfig, UdpClientEvent, UdpServer, UdpServerConfig, UdpServerEvent,
};
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

thread_local! {
    /// Allocations on this thread while counting; `None` when not counting.
    static COUNT: Cell<Option<u64>> = const { Cell::new(None) };
}

struct Counter;

impl AllocationTracker for Counter {
    fn allocated(&self, _addr: usize, _size: usize, _wrapped: usize, _group: AllocationGroupId) {
        let _ = COUNT.try_with(|count| {
            if let Some(n) = count.get() {
                count.set(Some(n + 1));
            }
        });
    }

    fn deallocated(
        &self,
        _addr: usize,
        _size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
    }
}

/// Runs `f` and returns how many allocations it made on this thread.
fn counted(f: impl FnOnce()) -> u64 {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        AllocationRegistry::set_global_tracker(Counter).expect("one tracker");
        AllocationRegistry::enable_tracking();
    });
    COUNT.with(|count| count.set(Some(0)));
    f();
    COUNT.with(|count| count.replace(None)).unwrap_or(0)
}

#[derive(NetSerialize, Debug, Clone, Copy, PartialEq)]
enum Msg {
    /// A client's input for a tick.
    Input { tick: u32, buttons: u8 },
    /// The server's world update for a tick, the same for every client.
    World {
        tick: u32,
        #[net(range = 0..=4095)]
        entity: u16,
        x: i32,
        y: i32,
    },
}

const CLIENTS: u64 = 8;
/// The default connection's unreliable channel.
const UNRELIABLE: u8 = 1;

/// The phases counted, in the order of a tick.
const PHASES: [&str; 8] = [
    "client transmit",
    "server receive",
    "server poll_event",
    "server broadcast_message",
    "server transmit",
    "client receive",
    "client poll_event",
    "client send_message",
];

/// The allocations per phase over `measured` ticks after `warm_up` ticks (on the
/// game's clock, 60 Hz; the frames run back to back), the datagrams the server sent and
/// received then, and the inputs and world updates delivered.
fn run(warm_up: u32, measured: u32) -> ([u64; 8], u64, u64, u64, u64) {
    let key = generate_key().unwrap();
    let config = UdpServerConfig {
        max_clients: CLIENTS as usize,
        ..UdpServerConfig::new(key)
    };
    let mut server: UdpServer<Msg, Msg> =
        UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    let mut clients: Vec<UdpClient<Msg, Msg>> = (1..=CLIENTS)
        .map(|id| {
            let params = token_params(&protocol::<Msg, Msg>(), server.local_addr(), id);
            let token = ConnectToken::generate(&params, &key).unwrap();
            UdpClient::connect(token, &protocol(), UdpClientConfig::default()).unwrap()
        })
        .collect();
    let mut per_phase = [0u64; 8];
    let (mut inputs, mut worlds, mut connected) = (0u64, 0u64, 0u64);
    let mut at_start = (0, 0);
    let start = 1000.0;
    for tick in 0..warm_up + measured {
        let now = start + f64::from(tick) / 60.0;
        let measuring = tick >= warm_up;
        if tick == warm_up {
            assert_eq!(connected, CLIENTS, "every client connected in the warm-up");
            let stats = server.driver().stats();
            at_start = (stats.datagrams_sent, stats.datagrams_received);
        }
        let mut phase = |index: usize, f: &mut dyn FnMut()| {
            let n = counted(f);
            if measuring {
                per_phase[index] += n;
            }
        };
        phase(0, &mut || {
            clients.iter_mut().for_each(|c| c.transmit_at(now))
        });
        phase(1, &mut || server.receive_at(now));
        phase(2, &mut || {
            while let Some(event) = server.poll_event() {
                match event {
                    UdpServerEvent::ClientConnected { .. } => connected += 1,
                    UdpServerEvent::Message {
                        message: Msg::Input { .. },
                        ..
                    } => inputs += u64::from(measuring),
                    other => panic!("unexpected server event {other:?}"),
                }
            }
        });
        phase(3, &mut || {
            let world = Msg::World {
                tick,
                entity: (tick % 4096) as u16,
                x: tick as i32,
                y: -(tick as i32),
            };
            // Before every client is connected some are not yet there to get it.
            let _ = server.broadcast_message(UNRELIABLE, &world);
        });
        phase(4, &mut || server.transmit_at(now));
        phase(5, &mut || {
            clients.iter_mut().for_each(|c| c.receive_at(now))
        });
        phase(6, &mut || {
            for c in clients.iter_mut() {
                while let Some(event) = c.poll_event() {
                    match event {
                        UdpClientEvent::Connected { .. } => {}
                        UdpClientEvent::Message {
                            message: Msg::World { .. },
                            ..
                        } => worlds += u64::from(measuring),
                        other => panic!("unexpected client event {other:?}"),
                    }
                }
            }
        });
        phase(7, &mut || {
            for c in clients.iter_mut() {
                let input = Msg::Input {
                    tick,
                    buttons: tick as u8,
                };
                // Before the client is connected the input is refused; it is a game's.
                let _ = c.send_message(UNRELIABLE, &input);
            }
        });
    }
    let stats = server.driver().stats();
    let sent = stats.datagrams_sent - at_start.0;
    let received = stats.datagrams_received - at_start.1;
    (per_phase, sent, received, inputs, worlds)
}

/// Names the phases that allocated, with their counts.
fn allocating(per_phase: &[u64; 8]) -> Vec<(&'static str, u64)> {
    PHASES
        .iter()
        .zip(per_phase)
        .filter(|(_, &n)| n > 0)
        .map(|(&name, &n)| (name, n))
        .collect()
}

#[test]
fn a_server_and_eight_clients_allocate_nothing_per_packet_in_the_steady_state() {
    const MEASURED: u32 = 600;
    let (per_phase, sent, received, inputs, worlds) = run(120, MEASURED);
    // The traffic was real: every tick an input from each client reached the server
    // and a world update from the server reached each client, with room for the odd
    // datagram the loopback drops under the machine's load.
    let expected = u64::from(MEASURED) * CLIENTS;
    assert!(
        inputs >= expected * 95 / 100,
        "{inputs} inputs of {expected}"
    );
    assert!(
        worlds >= expected * 95 / 100,
        "{worlds} updates of {expected}"
    );
    assert!(sent >= expected * 95 / 100, "server sent {sent} datagrams");
    assert!(
        received >= expected * 95 / 100,
        "server received {received}"
    );
    assert_eq!(
        allocating(&per_phase),
        [],
        "allocations over {MEASURED} ticks ({sent} datagrams sent and {received} received by \
         the server)"
    );
}
