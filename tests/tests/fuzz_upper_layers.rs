//! The fuzz targets of the upper layers (`connection_script`, `netcode_packets`,
//! `handshake_script`) without the fuzzer: their seeds are the scripts and packets they
//! were written from and reach the states that matter (both clients connected, an
//! attacker's handshake, blocks delivered, the AEAD passed), the sealing written from the
//! specification agrees with the crate's writers, and noise runs clean.

use std::collections::HashSet;

use arbitrary::{Arbitrary, Unstructured};
use netser_tests::adversarial::connection::{
    self, connection_config, run_connection_script, ConnectionScript, CHANNELS,
};
use netser_tests::adversarial::handshake::{
    self, client_addrs, run_handshake_script, token_client_id, tokens, HandshakeScript,
};
use netser_tests::adversarial::netcode::{
    self, deterministic_token, netcode_packets, open_packet, open_private, seal_packet,
    seal_private, seed_token, server_addr, PACKET_KEY, PROTOCOL_ID, SERVER_KEY,
};
use netser_tests::adversarial::script_bytes::noise;
use netser_transport::netcode::packet::{decode, Packet};
use netser_transport::netcode::{
    ClientState, ConnectToken, PrivateConnectToken, TokenParams, CONNECT_TOKEN_PRIVATE_BYTES,
};

#[test]
fn connection_seeds_read_back_as_their_scripts() {
    let scripts = connection::seed_scripts();
    assert_eq!(scripts.len(), 8);
    for (name, script) in &scripts {
        let bytes = connection::write_script(script);
        let read = ConnectionScript::arbitrary_take_rest(Unstructured::new(&bytes))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(format!("{read:?}"), format!("{script:?}"), "{name}");
    }
}

#[test]
fn handshake_seeds_read_back_as_their_scripts() {
    let scripts = handshake::seed_scripts();
    assert_eq!(scripts.len(), 4);
    for (name, script) in &scripts {
        let bytes = handshake::write_script(script);
        let read = HandshakeScript::arbitrary_take_rest(Unstructured::new(&bytes))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(format!("{read:?}"), format!("{script:?}"), "{name}");
    }
}

#[test]
fn both_connection_configurations_are_valid() {
    for small in [false, true] {
        assert_eq!(
            connection_config(small).validate(),
            Ok(()),
            "small: {small}"
        );
    }
}

#[test]
fn connection_seeds_deliver_every_kind_of_message_and_blocks() {
    for (name, script) in connection::seed_scripts() {
        let outcome = run_connection_script(&script);
        let tampered = name.starts_with("tampered");
        // Tampered datagrams can hold a channel back (a forged block never arrives).
        for side in 0..2 {
            for channel in (0..CHANNELS).filter(|_| !tampered) {
                assert!(
                    outcome.delivered[side][channel] > 0,
                    "{name}: nothing delivered to side {side} on channel {channel}: {outcome:?}"
                );
            }
        }
        assert_eq!(outcome.clean, !tampered, "{name}");
        if name.starts_with("exchange") {
            assert_eq!(outcome.blocks, 0, "{name}");
        } else if !tampered {
            assert!(outcome.blocks >= 4, "{name}: {outcome:?}");
        }
        if tampered {
            assert!(outcome.refused > 0, "{name}: tampering refused nothing");
        }
    }
}

#[test]
fn handshake_seeds_connect_the_clients_and_the_attacker() {
    let scripts: Vec<_> = handshake::seed_scripts();
    let outcome = |name: &str| {
        let (_, script) = scripts.iter().find(|(n, _)| n == name).expect("a seed");
        run_handshake_script(script)
    };
    let [a, b] = client_addrs();
    let connect = outcome("connect");
    assert!(connect.connected.contains(&(1, a)), "{connect:?}");
    assert!(connect.connected.contains(&(2, b)), "{connect:?}");
    assert!(
        connect.payloads[0] >= 1 && connect.payloads[1] >= 1,
        "{connect:?}"
    );

    let stepwise = outcome("stepwise");
    assert!(stepwise.connected.contains(&(1, a)), "{stepwise:?}");
    assert!(
        stepwise.refused > 0,
        "replays were not refused: {stepwise:?}"
    );

    // The attacker holds token 2 (id 3) and completes its handshake from an address of
    // its own; the server has one slot, so the real client is denied or waits.
    let attacker = outcome("attacker");
    let ids: HashSet<u64> = attacker.connected.iter().map(|&(id, _)| id).collect();
    assert!(ids.contains(&3), "{attacker:?}");
    assert!(attacker
        .connected
        .iter()
        .all(|&(_, at)| at != server_addr()));

    let full = outcome("full");
    assert_eq!(full.connected.len(), 1, "one slot: {full:?}");
    assert_ne!(full.states[0], ClientState::Connected, "{full:?}");
}

#[test]
fn handshake_tokens_are_reproducible_and_of_their_kind() {
    let again = deterministic_token(
        &TokenParams {
            client_id: 7,
            user_data: [0xab; 256],
            ..TokenParams::new(
                PROTOCOL_ID,
                vec!["[2001:db8::5]:40001".parse().unwrap(), server_addr()],
                netcode::NOW,
            )
        },
        &SERVER_KEY,
        7,
    );
    assert_eq!(again.to_bytes(), seed_token().to_bytes());
    // Only the token signed with another key does not open with the server's; the
    // others carry the client id they were issued for in their private part (the
    // standard layout's public part has none).
    for (i, token) in tokens().iter().enumerate() {
        let opened = PrivateConnectToken::decrypt(
            token.private_data(),
            token.protocol_id(),
            token.expire_timestamp(),
            token.nonce(),
            &SERVER_KEY,
        );
        assert_eq!(opened.is_ok(), i != 6, "token {i}");
        if let Ok(private) = opened {
            assert_eq!(private.client_id, token_client_id(i), "token {i}");
        }
    }
}

#[test]
fn packet_sealing_agrees_with_the_crate() {
    let challenge = [9u8; 300];
    let packets = [
        Packet::ConnectionDenied,
        Packet::Challenge {
            token_sequence: 77,
            token_data: &challenge,
        },
        Packet::KeepAlive {
            client_index: 1,
            max_clients: 2,
        },
        Packet::Payload(b"payload bytes"),
        Packet::Disconnect,
    ];
    for packet in packets {
        for sequence in [0u64, 1, 255, 256, 1 << 40] {
            let mut datagram = Vec::new();
            packet.encode(sequence, PROTOCOL_ID, &PACKET_KEY, &mut datagram);
            let plain = open_packet(&datagram, &PACKET_KEY, PROTOCOL_ID).expect("opens");
            assert_eq!(
                seal_packet(plain[0], sequence, &plain[9..], &PACKET_KEY, PROTOCOL_ID),
                datagram,
                "{packet:?} at {sequence}"
            );
            assert!(open_packet(&datagram, &[0; 32], PROTOCOL_ID).is_none());
        }
    }
    // A sealed body the crate reads back, with a sequence longer than it needs.
    let mut long = seal_packet(0x85, 3, b"xyz", &PACKET_KEY, PROTOCOL_ID);
    let (sequence, packet) = decode(&mut long, PROTOCOL_ID, &PACKET_KEY, None).unwrap();
    assert_eq!((sequence, packet), (3, Packet::Payload(b"xyz")));
}

#[test]
fn private_token_sealing_agrees_with_the_crate() {
    let token = seed_token();
    let open = |data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES]| {
        open_private(
            data,
            token.protocol_id(),
            token.expire_timestamp(),
            token.nonce(),
            &SERVER_KEY,
        )
    };
    let plain = open(token.private_data()).expect("the crate's token opens");
    let sealed = seal_private(
        &plain,
        token.protocol_id(),
        token.expire_timestamp(),
        token.nonce(),
        &SERVER_KEY,
    );
    assert_eq!(&sealed, token.private_data());
    let mut other = *token.private_data();
    other[0] ^= 1;
    assert!(open(&other).is_none());
}

#[test]
fn netcode_seeds_pass_the_aead_and_read_back() {
    let seeds = netcode::seeds();
    assert!(seeds.len() >= 40);
    for (name, bytes) in &seeds {
        // Every sealed seed opens with the key the target reads with.
        if bytes[0] == 0 && !name.starts_with("request") {
            assert!(
                open_packet(&bytes[1..], &PACKET_KEY, PROTOCOL_ID).is_some(),
                "{name}"
            );
        }
        netcode_packets(bytes);
    }
    let token = seeds.iter().find(|(n, _)| n == "token").unwrap();
    assert_eq!(
        ConnectToken::from_bytes(&token.1[1..]).unwrap(),
        seed_token()
    );
}

#[test]
fn the_upper_targets_survive_noise() {
    for seed in 0..64u64 {
        for len in [16, 200, 1500] {
            let data = noise(seed * 7919 + len as u64, len);
            for target in ["connection_script", "netcode_packets", "handshake_script"] {
                netser_tests::adversarial::corpus::run(target, &data);
            }
        }
    }
}
