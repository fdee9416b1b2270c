//! A counting global allocator checks that a connection with the preset for servers of
//! many clients (`ConnectionConfig::for_many_clients`) never holds more heap than its
//! `Connection::memory_bound`, under the worst a peer can do: it never acks anything
//! the server sends (every send queue, sent-packet map and block queue of the server
//! fills and stays full), it floods the server with messages on every channel, blocks
//! and garbage, and the game does not take what arrives for a long while (every receive
//! queue and the received blocks fill).

use netser::NetSerialize;
use netser_transport::connection::{Connection, ConnectionConfig};
use tracking_allocator::{AllocationRegistry, Allocator};

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

#[path = "support/live_heap.rs"]
mod live_heap;
use live_heap::{Counter, STATE};

/// Runs `f` counting what it allocates (the server's work); what the test itself
/// allocates outside is not counted. Returns `f`'s result and the bytes live after.
fn server<R>(f: impl FnOnce() -> R) -> (R, usize) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        AllocationRegistry::set_global_tracker(Counter).expect("one tracker");
        AllocationRegistry::enable_tracking();
        STATE.with(|s| s.borrow_mut().blocks.reserve(1 << 20));
    });
    STATE.with(|s| s.borrow_mut().active = true);
    let result = f();
    STATE.with(|s| s.borrow_mut().active = false);
    (result, STATE.with(|s| s.borrow().live))
}

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Msg {
    Small(#[net(range = 0..=1000)] u16),
    Bytes(#[net(max_len = 20_000)] Vec<u8>),
}

const FRAME: f64 = 1.0 / 60.0;

#[test]
fn the_many_clients_preset_holds_its_memory_bound_under_a_peer_that_never_acks() {
    let config = ConnectionConfig::default().for_many_clients();
    let mut scratch: Vec<u8> = Vec::with_capacity(64 * 1024);
    let (mut conn, _) = server(|| Connection::<Msg>::new(0.0, config.clone()).unwrap());
    let bound = conn.memory_bound();
    // Two flooding peers (their packets interleave at the server: duplicates, stale and
    // out-of-order sequences), never given anything the server sends.
    let mut peers: Vec<Connection<Msg>> = (0..2)
        .map(|_| Connection::new(0.0, config.clone()).unwrap())
        .collect();
    let packet_message = conn.max_message_bits(0).unwrap() as usize / 8 - 8;
    let block = config.max_block_size - 8;
    let mut held = 0;
    let mut garbage = 0x9e37_79b9_7f4a_7c15u64;
    let mut taken = 0u64;
    for frame in 0..1500u32 {
        let now = f64::from(frame) * FRAME;
        // The peers: every channel, messages of a packet each, blocks, and garbage.
        let mut inbound: Vec<Vec<u8>> = Vec::new();
        for peer in &mut peers {
            let _ = peer.send_message(0, &Msg::Bytes(vec![7; packet_message]));
            let _ = peer.send_message(0, &Msg::Bytes(vec![8; block]));
            for _ in 0..8 {
                let _ = peer.send_message(1, &Msg::Bytes(vec![9; packet_message]));
            }
            peer.handle_timeout(now);
            while let Some(datagram) = peer.poll_transmit(now) {
                inbound.push(datagram.to_vec());
            }
        }
        for _ in 0..4 {
            garbage ^= garbage << 13;
            garbage ^= garbage >> 7;
            garbage ^= garbage << 17;
            let len = 1 + (garbage % 1200) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|i| (garbage >> (i % 56)) as u8).collect();
            bytes[0] &= 0x3e; // a connection packet's prefix, often a valid header
            inbound.push(bytes);
        }
        // The server: sends everything it can (the peer never acks it), takes in the
        // flood, and leaves what arrives waiting for the first 1000 frames.
        let (_, live) = server(|| {
            let _ = conn.send_message(0, &Msg::Bytes(vec![1; packet_message]));
            let _ = conn.send_message(0, &Msg::Bytes(vec![2; block]));
            let _ = conn.send_message(1, &Msg::Bytes(vec![3; packet_message]));
            let _ = conn.send_message(1, &Msg::Small(4));
            let _ = conn.send_section(now, &[0xa5; 200], 1600);
            conn.handle_timeout(now);
            for datagram in &inbound {
                let _ = conn.handle_datagram(now, datagram);
            }
            while let Some(datagram) = conn.poll_transmit(now) {
                // Into room reserved up front: the copy allocates nothing.
                scratch.clear();
                scratch.extend_from_slice(datagram);
            }
            if frame >= 1000 {
                for channel in 0..2 {
                    while conn.receive_message(channel).is_some() {
                        taken += 1;
                    }
                }
            }
        });
        held = held.max(live);
        assert!(
            live <= bound,
            "frame {frame}: {live} bytes held, over the bound {bound}"
        );
    }
    let peak = STATE.with(|s| s.borrow().peak);
    println!("many-clients preset: held at most {held} bytes, peak {peak}, bound {bound}");
    // Even while a queue grows (the old and the new buffer both live) it stays under.
    assert!(peak <= bound, "peak {peak} over the bound {bound}");
    // The flood did fill the server: its queues are full, it refused what did not fit.
    assert_eq!(
        conn.queued_messages(0),
        64,
        "the reliable send queue is full"
    );
    assert!(conn.counters().packets_refused + conn.counters().malformed_packets > 0);
    assert!(conn.channel_counters(1).unwrap().receive_queue_full_dropped > 0);
    assert!(taken > 0, "messages were delivered once taken");
    assert!(
        held > bound / 4,
        "the flood filled a good part of the bound: {held} of {bound}"
    );
}
