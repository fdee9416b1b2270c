//! netcode payload packets side by side with `renetcode` 2.x, one run: encrypt (client)
//! plus decrypt with replay protection (server) of a 1200-byte payload, each through the
//! crate's public client and server on an established connection, with one client and
//! with 64 (the sender in the last slot: renetcode finds a client's slot by a linear scan,
//! netser by a keyed hash table). Each datagram is copied once from the sender's buffer
//! into the receiver's, as a socket would, for both. Also the bare packet
//! functions of netser's `netcode::packet`, for the cost of the layer around them, and
//! apart at the sizes of a game's input (40 bytes) and snapshot (1,100 bytes), where
//! the AEAD is nearly all of the cost (`netcode_packet`).
//!
//! `cargo bench -p netser-transport --bench netcode`
//!
//! On a busy machine, count instructions instead: set `NETSER_NETCODE_PROFILE` to
//! `netser` or `renetcode` and the bench binary runs that case `NETSER_NETCODE_ROUNDS`
//! times (default 10000) with `NETSER_NETCODE_CLIENTS` connected clients (default 1, at
//! most 64; the sender is the last) without criterion, e.g. under `valgrind --tool=callgrind`
//! (compare the totals of the two runs; setup is a handshake, the same for both).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Duration;

use criterion::{criterion_group, Criterion, Throughput};
use netser_transport::netcode::packet::{decode, Packet};
use netser_transport::netcode::{
    ConnectToken, NetcodeClient, NetcodeServer, ReplayProtection, ServerConfig, TokenParams,
};

const PROTOCOL_ID: u64 = 7;
const KEY: [u8; 32] = [9; 32];
const T0: f64 = 1_700_000_000.0;
const PAYLOAD: usize = 1200;

fn server_addr() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}
fn client_addr(i: u16) -> SocketAddr {
    SocketAddr::new([127, 0, 0, 1].into(), 50_000 + i)
}

/// A server with `clients` connected clients; returns the last one (in the last slot).
fn netser_pair(clients: u16) -> (NetcodeClient, NetcodeServer) {
    let mut server = NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig::new(PROTOCOL_ID, KEY, vec![server_addr()]),
    )
    .unwrap();
    let mut last = None;
    for i in 0..clients {
        let params = TokenParams {
            client_id: u64::from(i),
            ..TokenParams::new(PROTOCOL_ID, vec![server_addr()], T0 as u64)
        };
        let token = ConnectToken::generate(&params, &KEY).unwrap();
        let mut client = NetcodeClient::new(0.0, token);
        let mut t = 0.0;
        while !client.is_connected() {
            client.handle_timeout(t);
            let mut out = Vec::new();
            while let Some(transmit) = client.poll_transmit() {
                out.push(transmit.data.to_vec());
            }
            for mut b in out {
                server.handle_datagram(T0 + t, client_addr(i), &mut b);
            }
            let mut out = Vec::new();
            while let Some(transmit) = server.poll_transmit() {
                out.push((transmit.to, transmit.data.to_vec()));
            }
            for (_, mut b) in out.into_iter().filter(|(to, _)| *to == client_addr(i)) {
                client.handle_datagram(t, server_addr(), &mut b);
            }
            t += 0.1;
        }
        last = Some(client);
    }
    (last.unwrap(), server)
}

/// The same with renetcode.
fn renetcode_pair(clients: u16) -> (renetcode::NetcodeClient, renetcode::NetcodeServer) {
    let now = Duration::from_secs(T0 as u64);
    let mut server = renetcode::NetcodeServer::new(renetcode::ServerConfig {
        current_time: now,
        max_clients: 64,
        protocol_id: PROTOCOL_ID,
        public_addresses: vec![server_addr()],
        authentication: renetcode::ServerAuthentication::Secure { private_key: KEY },
    });
    let mut last = None;
    for i in 0..clients {
        let token = renetcode::ConnectToken::generate(
            now,
            PROTOCOL_ID,
            300,
            u64::from(i),
            15,
            vec![server_addr()],
            None,
            &KEY,
        )
        .unwrap();
        let mut client = renetcode::NetcodeClient::new(
            now,
            renetcode::ClientAuthentication::Secure {
                connect_token: token,
            },
        )
        .unwrap();
        while !client.is_connected() {
            let Some((packet, _)) = client.update(Duration::from_millis(300)) else {
                continue;
            };
            let mut reply = match server.process_packet(client_addr(i), packet) {
                renetcode::ServerResult::PacketToSend { payload, .. } => payload.to_vec(),
                renetcode::ServerResult::ClientConnected { payload, .. } => payload.to_vec(),
                _ => continue,
            };
            client.process_packet(&mut reply);
        }
        last = Some(client);
    }
    (last.unwrap(), server)
}

fn payload_packets(c: &mut Criterion) {
    let payload: Vec<u8> = (0..PAYLOAD).map(|i| i as u8).collect();
    let mut group = c.benchmark_group("netcode_payload_1200");
    group.throughput(Throughput::Bytes(PAYLOAD as u64));

    let mut buffer = Vec::with_capacity(2048);
    // One client, and a full server of 64 with the sender in the last slot.
    for clients in [1u16, 64] {
        let from = client_addr(clients - 1);
        let (mut client, mut server) = netser_pair(clients);
        group.bench_function(format!("netser/{clients}_clients"), |b| {
            b.iter(|| {
                client.send_payload(black_box(&payload)).unwrap();
                while let Some(transmit) = client.poll_transmit() {
                    let bytes = transmit.data;
                    buffer.clear();
                    buffer.extend_from_slice(bytes);
                }
                let received = server.handle_datagram(T0, from, &mut buffer).unwrap();
                black_box(received.payload.len())
            })
        });
        let (mut client, mut server) = renetcode_pair(clients);
        group.bench_function(format!("renetcode/{clients}_clients"), |b| {
            b.iter(|| {
                let (_, packet) = client.generate_payload_packet(black_box(&payload)).unwrap();
                buffer.clear();
                buffer.extend_from_slice(packet);
                match server.process_packet(from, &mut buffer) {
                    renetcode::ServerResult::Payload { payload, .. } => black_box(payload.len()),
                    _ => unreachable!("not a payload"),
                }
            })
        });
    }

    // The bare packet functions: encode + decode with replay protection.
    let mut replay = ReplayProtection::new();
    let mut sequence = 1u64 << 16;
    group.bench_function("netser_packet_only", |b| {
        b.iter(|| {
            buffer.clear();
            Packet::Payload(black_box(&payload)).encode(sequence, PROTOCOL_ID, &KEY, &mut buffer);
            sequence += 1;
            let (_, packet) = decode(&mut buffer, PROTOCOL_ID, &KEY, Some(&mut replay)).unwrap();
            black_box(packet);
        })
    });
    group.finish();
}

/// Encode (encrypt) and decode (decrypt, no replay window) apart, at the payload sizes
/// of a game's input and snapshot. Each decode first copies the sealed packet back
/// (decryption is in place), as a socket's read would.
fn packet_sizes(c: &mut Criterion) {
    let mut group = c.benchmark_group("netcode_packet");
    let mut out = Vec::with_capacity(2048);
    for size in [40usize, 1100] {
        let payload: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let mut sequence = 1u64 << 16;
        group.bench_function(format!("encode/{size}"), |b| {
            b.iter(|| {
                out.clear();
                sequence += 1;
                Packet::Payload(black_box(&payload)).encode(sequence, PROTOCOL_ID, &KEY, &mut out)
            })
        });
        let mut sealed = Vec::new();
        Packet::Payload(&payload).encode(1 << 20, PROTOCOL_ID, &KEY, &mut sealed);
        group.bench_function(format!("decode/{size}"), |b| {
            b.iter(|| {
                out.clear();
                out.extend_from_slice(black_box(&sealed));
                let (_, packet) = decode(&mut out, PROTOCOL_ID, &KEY, None).unwrap();
                black_box(packet);
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = payload_packets, packet_sizes
}
/// One case, `NETSER_NETCODE_ROUNDS` times, for instruction counting.
fn profile(case: &str) {
    let rounds: usize = std::env::var("NETSER_NETCODE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10_000);
    let payload: Vec<u8> = (0..PAYLOAD).map(|i| i as u8).collect();
    let clients: u16 = std::env::var("NETSER_NETCODE_CLIENTS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let mut total = 0usize;
    let from = client_addr(clients - 1);
    match case {
        "netser" => {
            let (mut client, mut server) = netser_pair(clients);
            let mut buffer = Vec::with_capacity(2048);
            for _ in 0..rounds {
                client.send_payload(&payload).unwrap();
                while let Some(transmit) = client.poll_transmit() {
                    let bytes = transmit.data;
                    buffer.clear();
                    buffer.extend_from_slice(bytes);
                }
                total += server
                    .handle_datagram(T0, from, &mut buffer)
                    .unwrap()
                    .payload
                    .len();
            }
        }
        "renetcode" => {
            let (mut client, mut server) = renetcode_pair(clients);
            let mut buffer = Vec::with_capacity(2048);
            for _ in 0..rounds {
                let (_, packet) = client.generate_payload_packet(&payload).unwrap();
                buffer.clear();
                buffer.extend_from_slice(packet);
                if let renetcode::ServerResult::Payload { payload, .. } =
                    server.process_packet(from, &mut buffer)
                {
                    total += payload.len();
                }
            }
        }
        other => panic!("unknown case {other}: netser or renetcode"),
    }
    println!("{case}: {rounds} rounds, {total} payload bytes");
}

fn main() {
    match std::env::var("NETSER_NETCODE_PROFILE") {
        Ok(case) => profile(&case),
        Err(_) => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
