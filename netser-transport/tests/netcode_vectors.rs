//! Conformance with the C reference implementation of netcode 1.02 (netcode.c, the code of
//! the netcode standard): replays every netcode vector of `tests/data/netcode_vectors.json`,
//! written by that code (see `tests/data/netcode_vectors.md` for the format). In the
//! standard's layout, the default:
//!
//! * each connect token is read with the fields the C reader found, public and private
//!   (IPv4 and IPv6 addresses, internal addresses, user data, the decrypted plaintext), and
//!   written again byte for byte from the same inputs, nonce and keys;
//! * each challenge token is encrypted byte for byte and read back;
//! * each packet of the seven types is written byte for byte from its inputs and read with
//!   its fields; each connection request is also accepted by a server (which answers a
//!   challenge);
//! * each refusal (packets and tokens) is refused, by the reason named here.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use netser_transport::netcode::packet::{
    decode, decrypt_challenge, encrypt_challenge, peek, Packet, PacketType,
};
use netser_transport::netcode::{
    ConnectToken, Key, Layout, NetcodeServer, PrivateConnectToken, Refusal, ReplayProtection,
    ServerConfig, TokenError, TokenParams, USER_DATA_BYTES,
};
use serde_json::Value;

fn vectors() -> Value {
    let text = include_str!("data/netcode_vectors.json");
    serde_json::from_str(text).expect("the vectors are JSON")
}

fn hex(value: &Value) -> Vec<u8> {
    let text = value.as_str().expect("a hex string");
    assert!(text.len().is_multiple_of(2), "odd hex length");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}

fn array<const N: usize>(value: &Value) -> [u8; N] {
    hex(value).try_into().expect("the array's length")
}

fn u64_of(value: &Value) -> u64 {
    value.as_u64().expect("an unsigned integer")
}

/// An address as the vectors hold it (`type` 1 with four octets, or 2 with eight 16-bit
/// groups), checked against its `text`.
fn address(value: &Value) -> SocketAddr {
    let port = u64_of(&value["port"]) as u16;
    let ip = match u64_of(&value["type"]) {
        1 => {
            let o: Vec<u8> = value["ipv4"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| u64_of(v) as u8)
                .collect();
            Ipv4Addr::new(o[0], o[1], o[2], o[3]).into()
        }
        2 => {
            let g: Vec<u16> = value["ipv6"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| u64_of(v) as u16)
                .collect();
            Ipv6Addr::new(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]).into()
        }
        other => panic!("address type {other}"),
    };
    let address = SocketAddr::new(ip, port);
    let text: SocketAddr = value["text"].as_str().unwrap().parse().unwrap();
    assert_eq!(address, text);
    address
}

fn addresses(value: &Value) -> Vec<SocketAddr> {
    value.as_array().unwrap().iter().map(address).collect()
}

fn parsed(value: &Value) -> Vec<SocketAddr> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect()
}

/// The private fields the C reader found (`decoded.private`, or a request's
/// `private_connect_token`) against ours.
fn check_private(name: &str, private: &PrivateConnectToken, expected: &Value) {
    assert_eq!(private.client_id, u64_of(&expected["client_id"]), "{name}");
    assert_eq!(
        i64::from(private.timeout_seconds),
        expected["timeout_seconds"].as_i64().unwrap(),
        "{name}"
    );
    let internal = addresses(&expected["server_addresses"]);
    assert_eq!(
        internal.len() as u64,
        u64_of(&expected["num_server_addresses"]),
        "{name}"
    );
    assert_eq!(private.server_addresses.as_slice(), internal, "{name}");
    assert_eq!(
        private.client_to_server_key,
        array::<32>(&expected["client_to_server_key_hex"]),
        "{name}"
    );
    assert_eq!(
        private.server_to_client_key,
        array::<32>(&expected["server_to_client_key_hex"]),
        "{name}"
    );
    assert_eq!(
        private.user_data,
        array::<USER_DATA_BYTES>(&expected["user_data_hex"]),
        "{name}"
    );
}

#[test]
fn the_vectors_are_the_c_reference_standard_set() {
    let v = vectors();
    assert_eq!(v["format"], "netcode-reliable-c-reference-vectors");
    assert_eq!(v["reference"]["netcode"]["protocol"], "NETCODE 1.02");
    assert_eq!(v["deterministic"], true);
    let counts = &v["counts"];
    assert_eq!(counts["connect_tokens"], 10);
    assert_eq!(counts["challenge_tokens"], 4);
    assert_eq!(counts["packets"], 24);
    assert_eq!(counts["negative"], 23);
    for (section, n) in [
        ("connect_tokens", 10),
        ("challenge_tokens", 4),
        ("packets", 24),
        ("negative", 23),
    ] {
        assert_eq!(v[section].as_array().unwrap().len(), n, "{section}");
    }
}

#[test]
fn every_connect_token_reads_with_the_c_fields_and_writes_byte_identical() {
    let v = vectors();
    let mut checked = 0;
    for vector in v["connect_tokens"].as_array().unwrap() {
        let name = vector["name"].as_str().unwrap();
        let bytes = hex(&vector["connect_token_hex"]);
        assert_eq!(bytes.len(), 2048, "{name}");
        let public = &vector["decoded"]["public"];
        let inputs = &vector["inputs"];

        // Read, as a client does.
        let token = ConnectToken::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(token.layout(), Layout::Standard);
        assert_eq!(
            token.protocol_id(),
            u64_of(&public["protocol_id"]),
            "{name}"
        );
        assert_eq!(
            token.create_timestamp(),
            u64_of(&public["create_timestamp"]),
            "{name}"
        );
        assert_eq!(
            token.expire_timestamp(),
            u64_of(&public["expire_timestamp"]),
            "{name}"
        );
        assert_eq!(
            token.nonce(),
            &array::<24>(&public["connect_token_nonce_hex"]),
            "{name}"
        );
        assert_eq!(
            token.private_data(),
            &array::<1024>(&public["encrypted_private_connect_token_hex"]),
            "{name}"
        );
        assert_eq!(
            i64::from(token.timeout_seconds()),
            public["timeout_seconds"].as_i64().unwrap(),
            "{name}"
        );
        let servers = addresses(&public["server_addresses"]);
        assert_eq!(
            servers.len() as u64,
            u64_of(&public["num_server_addresses"]),
            "{name}"
        );
        assert_eq!(token.server_addresses(), servers, "{name}");
        assert_eq!(servers, addresses(&vector["parsed_public_addresses"]));
        let c2s = array::<32>(&public["client_to_server_key_hex"]);
        let s2c = array::<32>(&public["server_to_client_key_hex"]);
        assert_eq!(token.client_to_server_key(), &c2s, "{name}");
        assert_eq!(token.server_to_client_key(), &s2c, "{name}");
        assert_eq!(token.to_bytes(), bytes, "{name}: re-written");

        // The private part, as a server reads it.
        let private_key: Key = array(&inputs["private_key_hex"]);
        let expected = &vector["decoded"]["private"];
        assert_eq!(expected["decrypt_and_read_result"], 1, "{name}");
        let private = PrivateConnectToken::decrypt(
            token.private_data(),
            token.protocol_id(),
            token.expire_timestamp(),
            token.nonce(),
            &private_key,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_private(name, &private, expected);
        assert_eq!(
            private.to_plaintext(Layout::Standard)[..],
            hex(&expected["plaintext_hex"])[..],
            "{name}: plaintext"
        );

        // Issued again from the generator's inputs with its nonce and keys: the same bytes.
        let create = u64_of(&vector["harness"]["create_timestamp"]);
        let expire_seconds = inputs["expire_seconds"].as_i64().unwrap();
        let params = TokenParams {
            client_id: u64_of(&inputs["client_id"]),
            internal_server_addresses: parsed(&inputs["internal_server_addresses"]),
            // -1 is the C reference's "never": the expire timestamp u64::MAX.
            expire_seconds: u64::try_from(expire_seconds).unwrap_or(u64::MAX),
            timeout_seconds: inputs["timeout_seconds"].as_i64().unwrap() as i32,
            user_data: array(&inputs["user_data_hex"]),
            ..TokenParams::new(
                u64_of(&inputs["protocol_id"]),
                parsed(&inputs["public_server_addresses"]),
                create,
            )
        };
        let nonce = array::<24>(&public["connect_token_nonce_hex"]);
        let issued = ConnectToken::generate_with(&params, &private_key, &nonce, &c2s, &s2c)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(issued.to_bytes(), bytes, "{name}: issued again");
        checked += 1;
    }
    assert_eq!(checked, 10);
}

#[test]
fn every_challenge_token_encrypts_byte_identical_and_reads_back() {
    let v = vectors();
    let mut checked = 0;
    for vector in v["challenge_tokens"].as_array().unwrap() {
        let name = vector["name"].as_str().unwrap();
        let inputs = &vector["inputs"];
        let client_id = u64_of(&inputs["client_id"]);
        let user_data = array::<USER_DATA_BYTES>(&inputs["user_data_hex"]);
        let key: Key = array(&inputs["challenge_key_hex"]);
        let sequence = u64_of(&inputs["challenge_token_sequence"]);
        let plain = hex(&vector["plaintext_hex"]);
        assert_eq!(plain[..8], client_id.to_le_bytes(), "{name}");
        assert_eq!(plain[8..8 + USER_DATA_BYTES], user_data, "{name}");
        let encrypted = array::<300>(&vector["encrypted_challenge_token_hex"]);
        assert_eq!(
            encrypt_challenge(client_id, &user_data, sequence, &key),
            encrypted,
            "{name}"
        );
        let decrypted = &vector["decrypted"];
        assert_eq!(
            decrypt_challenge(&encrypted, sequence, &key),
            Some((
                u64_of(&decrypted["client_id"]),
                array::<USER_DATA_BYTES>(&decrypted["user_data_hex"])
            )),
            "{name}"
        );
        assert_eq!(decrypt_challenge(&encrypted, sequence ^ 1, &key), None);
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// A server for the connection requests of the vectors: the token's protocol id and
/// private key, and its first internal address as the server's own.
fn request_server(params: &Value, internal: SocketAddr) -> NetcodeServer {
    NetcodeServer::new(
        0.0,
        std::time::UNIX_EPOCH,
        ServerConfig::new(
            u64_of(&params["protocol_id"]),
            array(&params["private_key_hex"]),
            vec![internal],
        ),
    )
    .unwrap()
}

#[test]
fn every_packet_writes_byte_identical_and_reads_with_the_c_fields() {
    let v = vectors();
    let mut per_type = [0usize; 7];
    for vector in v["packets"].as_array().unwrap() {
        let name = vector["name"].as_str().unwrap();
        let inputs = &vector["inputs"];
        let fields = &inputs["fields"];
        let protocol_id = u64_of(&inputs["protocol_id"]);
        let key: Key = array(&inputs["packet_key_hex"]);
        let sequence = u64_of(&inputs["sequence"]);
        let kind = u64_of(&vector["packet_type"]);
        let expected = hex(&vector["packet_hex"]);
        assert_eq!(expected.len() as u64, u64_of(&vector["write_result"]));

        // Write from the inputs.
        let (nonce, data, token) = (
            fields.get("connect_token_nonce_hex").map(array::<24>),
            fields
                .get("encrypted_private_connect_token_hex")
                .map(array::<1024>),
            fields
                .get("encrypted_challenge_token_hex")
                .map(array::<300>),
        );
        let payload = fields.get("payload_hex").map(hex);
        let packet = match kind {
            0 => {
                assert_eq!(hex(&fields["version_info_hex"]), b"NETCODE 1.02\0");
                Packet::ConnectionRequest {
                    protocol_id: u64_of(&fields["protocol_id"]),
                    expire_timestamp: u64_of(&fields["connect_token_expire_timestamp"]),
                    nonce: nonce.as_ref().unwrap(),
                    private_data: data.as_ref().unwrap(),
                }
            }
            1 => Packet::ConnectionDenied,
            2 | 3 => {
                let token_sequence = u64_of(&fields["challenge_token_sequence"]);
                let token_data = token.as_ref().unwrap();
                if kind == 2 {
                    Packet::Challenge {
                        token_sequence,
                        token_data,
                    }
                } else {
                    Packet::Response {
                        token_sequence,
                        token_data,
                    }
                }
            }
            4 => Packet::KeepAlive {
                client_index: u64_of(&fields["client_index"]) as u32,
                max_clients: u64_of(&fields["max_clients"]) as u32,
            },
            5 => Packet::Payload(payload.as_ref().unwrap()),
            6 => Packet::Disconnect,
            other => panic!("{name}: type {other}"),
        };
        assert_eq!(packet.packet_type() as u64, kind);
        let mut written = Vec::new();
        let len = packet.encode(sequence, protocol_id, &key, &mut written);
        assert_eq!(len, written.len());
        assert_eq!(written, expected, "{name}: written");

        // Read, with the reader's parameters.
        let read = &vector["read"];
        let params = &read["params"];
        let result = &read["result"];
        assert_eq!(result["returned"], "packet", "{name}");
        let mut bytes = expected.clone();
        let (read_sequence, packet) = decode(
            &mut bytes,
            u64_of(&params["protocol_id"]),
            &array(&params["packet_key_hex"]),
            None,
        )
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(read_sequence, u64_of(&result["sequence"]), "{name}");
        assert_eq!(packet.packet_type() as u64, u64_of(&result["packet_type"]));
        let got = &result["fields"];
        match packet {
            Packet::ConnectionRequest {
                protocol_id,
                expire_timestamp,
                nonce,
                private_data,
            } => {
                assert_eq!(protocol_id, u64_of(&got["protocol_id"]), "{name}");
                assert_eq!(
                    expire_timestamp,
                    u64_of(&got["connect_token_expire_timestamp"])
                );
                assert_eq!(nonce, &array::<24>(&got["connect_token_nonce_hex"]));
                // The C reader decrypts in place: plaintext, then the untouched tag.
                let after = hex(&got["connect_token_data_after_decrypt_hex"]);
                assert_eq!(after[1008..], private_data[1008..], "{name}: tag");
                let private = PrivateConnectToken::decrypt(
                    private_data,
                    protocol_id,
                    expire_timestamp,
                    nonce,
                    &array(&params["private_key_hex"]),
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
                let expected_private = &got["private_connect_token"];
                assert_eq!(expected_private["read_result"], 1);
                check_private(name, &private, expected_private);
                assert_eq!(private.to_plaintext(Layout::Standard)[..], after[..1008]);

                // A server at the token's first internal address accepts it.
                let internal = private.server_addresses.as_slice()[0];
                let mut server = request_server(params, internal);
                let now = u64_of(&params["current_timestamp"]) as f64;
                let client: SocketAddr = "198.51.100.1:5000".parse().unwrap();
                let mut request = expected.clone();
                assert!(server.handle_datagram(now, client, &mut request).is_none());
                assert_eq!(server.refusals().total(), 0, "{name}");
                assert_eq!(server.pending_clients(), 1, "{name}");
                let mut replies = Vec::new();
                while let Some(transmit) = server.poll_transmit() {
                    replies.push((transmit.to, transmit.data.to_vec()));
                }
                assert_eq!(replies.len(), 1);
                assert_eq!(peek(&replies[0].1).unwrap().0, PacketType::Challenge);
            }
            Packet::ConnectionDenied | Packet::Disconnect => {
                assert_eq!(got, &serde_json::json!({}), "{name}")
            }
            Packet::Challenge {
                token_sequence,
                token_data,
            }
            | Packet::Response {
                token_sequence,
                token_data,
            } => {
                assert_eq!(token_sequence, u64_of(&got["challenge_token_sequence"]));
                assert_eq!(
                    token_data,
                    &array::<300>(&got["encrypted_challenge_token_hex"])
                );
            }
            Packet::KeepAlive {
                client_index,
                max_clients,
            } => {
                assert_eq!(u64::from(client_index), u64_of(&got["client_index"]));
                assert_eq!(u64::from(max_clients), u64_of(&got["max_clients"]));
            }
            Packet::Payload(payload) => {
                assert_eq!(payload.len() as u64, u64_of(&got["payload_bytes"]));
                assert_eq!(payload, hex(&got["payload_hex"]), "{name}");
            }
        }
        per_type[kind as usize] += 1;
    }
    assert_eq!(per_type, [4, 4, 3, 3, 3, 4, 3]);
}

/// Why this side refuses each packet the C reader refuses.
fn expected_refusal(name: &str) -> Refusal {
    match name {
        // Refused by its size before decryption (the C reader decrypts it first).
        "payload_1201_bytes" => Refusal::WrongSize,
        "keep_alive_wrong_protocol_id" | "keep_alive_wrong_key" | "keep_alive_mac_bit_flipped" => {
            Refusal::DoesNotDecrypt
        }
        // One byte short of a keep-alive's body: refused by its size, before decryption.
        "keep_alive_truncated_by_1" => Refusal::WrongSize,
        // Shorter than prefix, sequence and tag.
        "keep_alive_truncated_to_17" => Refusal::TooSmall,
        "keep_alive_replayed" => Refusal::Replayed,
        "prefix_type_7" => Refusal::InvalidPacketType,
        "prefix_sequence_bytes_0" | "prefix_sequence_bytes_9" => Refusal::InvalidSequenceBytes,
        "request_wrong_protocol_id" => Refusal::WrongProtocolId,
        "request_truncated_1077" => Refusal::WrongSize,
        "request_expired" => Refusal::TokenExpired,
        "request_wrong_private_key" => Refusal::TokenInvalid,
        "request_bad_version" => Refusal::WrongVersion,
        // A keep-alive where the reader allows only requests and responses: at a server,
        // from an address that is not connected.
        "keep_alive_not_allowed" => Refusal::UnknownAddress,
        other => panic!("no refusal named for {other}"),
    }
}

fn expected_token_error(name: &str) -> TokenError {
    match name {
        "token_bad_version" | "token_version_not_nul_terminated" => TokenError::WrongVersion,
        "token_truncated_2047" => TokenError::Truncated,
        "token_create_after_expire" => TokenError::BadTimestamps,
        "token_zero_server_addresses" => TokenError::ServerAddressCount { count: 0 },
        "token_33_server_addresses" => TokenError::ServerAddressCount { count: 33 },
        "token_bad_address_type" => TokenError::AddressType { kind: 3 },
        other => panic!("no refusal named for {other}"),
    }
}

#[test]
fn every_refusal_of_the_c_reader_is_refused() {
    let v = vectors();
    let (mut packets, mut tokens) = (0, 0);
    for vector in v["negative"].as_array().unwrap() {
        let name = vector["name"].as_str().unwrap();
        let input = hex(&vector["input_hex"]);
        assert_eq!(input.len() as u64, u64_of(&vector["input_bytes"]), "{name}");
        if vector["kind"] == "connect_token" {
            assert_eq!(vector["read"]["result"]["read_connect_token_result"], 0);
            assert_eq!(
                ConnectToken::from_bytes(&input),
                Err(expected_token_error(name)),
                "{name}"
            );
            tokens += 1;
            continue;
        }
        let params = &vector["read"]["params"];
        assert_eq!(vector["read"]["result"]["returned"], "NULL", "{name}");
        let protocol_id = u64_of(&params["protocol_id"]);
        let key: Key = array(&params["packet_key_hex"]);
        let expected = expected_refusal(name);
        let is_request = input.first() == Some(&0);
        if is_request || name == "keep_alive_not_allowed" {
            // The checks of the server: a server with the reader's protocol id and private
            // key (the C reader's allowed types are the server's choice by state).
            let private_key: Key = params["private_key_hex"]
                .as_str()
                .map_or([0; 32], |_| array(&params["private_key_hex"]));
            let mut server = NetcodeServer::new(
                0.0,
                std::time::UNIX_EPOCH,
                ServerConfig::new(
                    protocol_id,
                    private_key,
                    vec!["127.0.0.1:40000".parse().unwrap()],
                ),
            )
            .unwrap();
            let now = u64_of(&params["current_timestamp"]) as f64;
            let mut bytes = input.clone();
            let from: SocketAddr = "198.51.100.1:5000".parse().unwrap();
            assert!(server.handle_datagram(now, from, &mut bytes).is_none());
            assert_eq!(server.refusals().get(expected), 1, "{name}");
            assert_eq!(server.refusals().total(), 1, "{name}");
            assert_eq!(server.pending_clients(), 0, "{name}");
            let mut replies = 0;
            while server.poll_transmit().is_some() {
                replies += 1;
            }
            assert_eq!(replies, 0, "{name}: answered");
        } else {
            let mut replay = ReplayProtection::new();
            for sequence in params["replay_already_received"].as_array().unwrap() {
                replay.advance(u64_of(sequence));
            }
            let mut bytes = input.clone();
            let result = decode(&mut bytes, protocol_id, &key, Some(&mut replay));
            assert_eq!(result.map(|_| ()), Err(expected), "{name}");
        }
        packets += 1;
    }
    assert_eq!((packets, tokens), (16, 7));
}
