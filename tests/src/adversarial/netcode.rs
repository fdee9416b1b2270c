//! The netcode packet and token readers under raw bytes and under packets sealed with the
//! right keys, so the fuzzer gets past the AEAD and mutates the plaintext.
//!
//! An input is a tag byte, then:
//! - 0: a datagram, read by `peek` and `decode` (with and without a replay window) under
//!   [`PACKET_KEY`];
//! - 1: a plaintext packet (prefix byte, 8 sequence bytes of which the prefix keeps as
//!   many as it says, body), sealed with [`PACKET_KEY`] and then read the same way: it
//!   must open, and read back what was sealed;
//! - 2: a public connect token, read by `ConnectToken::from_bytes` (what reads must write
//!   back to the same bytes) and handed to a client;
//! - 3: a private connect token's plaintext (protocol id, expire timestamp, then the
//!   plaintext), sealed with [`SERVER_KEY`]: it must open, and what it reads must
//!   encrypt and read back the same; it is then sent to a server in a connection
//!   request, which answers with a challenge only for a token that names it;
//! - 4: a private connect token as sent (protocol id, expire timestamp, nonce, data),
//!   opened with [`SERVER_KEY`].
//!
//! The sealing here is written from the specification (WIRE.md), and tests check it
//! against the crate's own writers, so a change of the AEAD's inputs shows there.

use std::net::SocketAddr;

use chacha20poly1305::{AeadInOut, ChaCha20Poly1305, KeyInit, Tag, XChaCha20Poly1305};
use netser_transport::netcode::packet::{decode, peek, sequence_bytes, Packet, PacketType};
use netser_transport::netcode::{
    ClientState, ConnectToken, Key, NetcodeClient, NetcodeServer, PrivateConnectToken,
    ReplayProtection, ServerConfig, TokenParams, CONNECT_TOKEN_NONCE_BYTES,
    CONNECT_TOKEN_PRIVATE_BYTES, MAC_BYTES, VERSION_INFO,
};

/// The protocol id of every packet and token here.
pub const PROTOCOL_ID: u64 = 0x6e65_7473_6572_0001;

/// The key packets are sealed with.
pub const PACKET_KEY: Key = [0x42; 32];

/// The key shared by the token issuer and the servers.
pub const SERVER_KEY: Key = [0x17; 32];

/// The nonce of the private tokens sealed by tag 3.
pub const TOKEN_NONCE: [u8; CONNECT_TOKEN_NONCE_BYTES] = [0x99; CONNECT_TOKEN_NONCE_BYTES];

/// Seconds since the Unix epoch at which tokens are issued and used.
pub const NOW: u64 = 1_700_000_000;

/// The address of the server the tokens name.
pub fn server_addr() -> SocketAddr {
    SocketAddr::from(([192, 0, 2, 1], 40_000))
}

/// A packet's additional data: version, protocol id, prefix byte.
fn packet_aad(protocol_id: u64, prefix: u8) -> [u8; 22] {
    let mut aad = [0u8; 22];
    aad[..13].copy_from_slice(&VERSION_INFO);
    aad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    aad[21] = prefix;
    aad
}

fn packet_nonce(sequence: u64) -> chacha20poly1305::Nonce {
    let mut nonce = [0u8; 12];
    nonce[4..].copy_from_slice(&sequence.to_le_bytes());
    nonce.into()
}

/// The datagram of prefix byte `prefix`, whose sequence (as many bytes of `sequence` as
/// the prefix's high nibble says, at most 8) and `body` are sealed with `key`.
pub fn seal_packet(prefix: u8, sequence: u64, body: &[u8], key: &Key, protocol_id: u64) -> Vec<u8> {
    let len = usize::from(prefix >> 4).min(8);
    let bytes = sequence.to_le_bytes();
    let mut kept = [0u8; 8];
    kept[..len].copy_from_slice(&bytes[..len]);
    let sequence = u64::from_le_bytes(kept);
    let mut out = vec![prefix];
    out.extend_from_slice(&bytes[..len]);
    let mut text = body.to_vec();
    let tag = ChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(
            &packet_nonce(sequence),
            &packet_aad(protocol_id, prefix),
            text.as_mut_slice().into(),
        )
        .expect("short texts seal");
    out.extend_from_slice(&text);
    out.extend_from_slice(&tag);
    out
}

/// The plaintext of an encrypted datagram: prefix, 8 sequence bytes and body (the input
/// form of tag 1), or `None` if it does not open with `key`.
pub fn open_packet(datagram: &[u8], key: &Key, protocol_id: u64) -> Option<Vec<u8>> {
    let (&prefix, rest) = datagram.split_first()?;
    let len = usize::from(prefix >> 4);
    if len > 8 || rest.len() < len + MAC_BYTES {
        return None;
    }
    let mut sequence = [0u8; 8];
    sequence[..len].copy_from_slice(&rest[..len]);
    let (text, tag) = rest[len..].split_at(rest.len() - len - MAC_BYTES);
    let mut text = text.to_vec();
    ChaCha20Poly1305::new(key.into())
        .decrypt_inout_detached(
            &packet_nonce(u64::from_le_bytes(sequence)),
            &packet_aad(protocol_id, prefix),
            text.as_mut_slice().into(),
            &Tag::try_from(tag).ok()?,
        )
        .ok()?;
    let mut out = vec![prefix];
    out.extend_from_slice(&sequence);
    out.extend_from_slice(&text);
    Some(out)
}

fn token_aad(protocol_id: u64, expire_timestamp: u64) -> [u8; 29] {
    let mut aad = [0u8; 29];
    aad[..13].copy_from_slice(&VERSION_INFO);
    aad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    aad[21..].copy_from_slice(&expire_timestamp.to_le_bytes());
    aad
}

/// Private token data: `plain` (zero-padded or cut to the plaintext size) sealed with
/// `key` under `nonce`, for `protocol_id` and `expire_timestamp`.
pub fn seal_private(
    plain: &[u8],
    protocol_id: u64,
    expire_timestamp: u64,
    nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
    key: &Key,
) -> [u8; CONNECT_TOKEN_PRIVATE_BYTES] {
    let mut out = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
    let (text, tag_out) = out.split_at_mut(CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES);
    let len = plain.len().min(text.len());
    text[..len].copy_from_slice(&plain[..len]);
    let tag = XChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(
            nonce.into(),
            &token_aad(protocol_id, expire_timestamp),
            text.into(),
        )
        .expect("short texts seal");
    tag_out.copy_from_slice(&tag);
    out
}

/// The plaintext of private token data, or `None` if it does not open with `key`.
pub fn open_private(
    data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES],
    protocol_id: u64,
    expire_timestamp: u64,
    nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
    key: &Key,
) -> Option<Vec<u8>> {
    let (text, tag) = data.split_at(CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES);
    let mut text = text.to_vec();
    XChaCha20Poly1305::new(key.into())
        .decrypt_inout_detached(
            nonce.into(),
            &token_aad(protocol_id, expire_timestamp),
            text.as_mut_slice().into(),
            &Tag::try_from(tag).ok()?,
        )
        .ok()?;
    Some(text)
}

fn replace_once(bytes: &mut [u8], old: &[u8], new: &[u8]) {
    let at: Vec<usize> = (0..=bytes.len() - old.len())
        .filter(|&i| &bytes[i..i + old.len()] == old)
        .collect();
    assert_eq!(at.len(), 1, "a random field found {} times", at.len());
    bytes[at[0]..at[0] + old.len()].copy_from_slice(new);
}

/// A connect token like `ConnectToken::generate` makes, but with keys and nonce derived
/// from `seed` instead of random ones, so seeds and scripts are reproducible. It is
/// generated, then its random fields are replaced (found by value, whatever the layout)
/// and its private part is encrypted again with them.
///
/// # Panics
/// If `params` are invalid or the token does not read back.
pub fn deterministic_token(params: &TokenParams, key: &Key, seed: u8) -> ConnectToken {
    let token = ConnectToken::generate(params, key).expect("valid token parameters");
    let mut private = PrivateConnectToken::decrypt(
        token.private_data(),
        token.protocol_id(),
        token.expire_timestamp(),
        token.nonce(),
        key,
    )
    .expect("a fresh token opens");
    private.client_to_server_key = [seed.wrapping_mul(2).wrapping_add(1); 32];
    private.server_to_client_key = [seed.wrapping_mul(2).wrapping_add(2); 32];
    let nonce = [seed ^ 0x5a; CONNECT_TOKEN_NONCE_BYTES];
    let data = private.encrypt(token.protocol_id(), token.expire_timestamp(), &nonce, key);
    let mut bytes = token.to_bytes();
    replace_once(&mut bytes, token.private_data(), &data);
    replace_once(&mut bytes, token.nonce(), &nonce);
    replace_once(
        &mut bytes,
        token.client_to_server_key(),
        &private.client_to_server_key,
    );
    replace_once(
        &mut bytes,
        token.server_to_client_key(),
        &private.server_to_client_key,
    );
    let fixed = ConnectToken::from_bytes(&bytes).expect("a patched token reads back");
    assert_eq!(fixed.client_to_server_key(), &private.client_to_server_key);
    assert_eq!(fixed.private_data(), &data);
    fixed
}

/// The token of the seeds: client 7, for [`server_addr`] and an IPv6 address.
pub fn seed_token() -> ConnectToken {
    let params = TokenParams {
        client_id: 7,
        user_data: [0xab; 256],
        ..TokenParams::new(
            PROTOCOL_ID,
            vec!["[2001:db8::5]:40001".parse().expect("valid"), server_addr()],
            NOW,
        )
    };
    deterministic_token(&params, &SERVER_KEY, 7)
}

/// The connection request a client sends with `token`.
pub fn request_for(token: &ConnectToken) -> Vec<u8> {
    let mut out = Vec::new();
    Packet::ConnectionRequest {
        protocol_id: token.protocol_id(),
        expire_timestamp: token.expire_timestamp(),
        nonce: token.nonce(),
        private_data: token.private_data(),
    }
    .encode(0, token.protocol_id(), &[0; 32], &mut out);
    out
}

/// Reads `datagram` every way; when `sealed_right`, it was sealed with [`PACKET_KEY`] and
/// must open. Returns the packet type read, if any.
fn check_datagram(datagram: &[u8], sealed_right: bool) -> Option<PacketType> {
    let peeked = peek(datagram);
    let mut copy = datagram.to_vec();
    let decoded = decode(&mut copy, PROTOCOL_ID, &PACKET_KEY, None);
    let (kind, sequence) = match peeked {
        Err(refusal) => {
            assert_eq!(
                decoded.map(|_| ()),
                Err(refusal),
                "decode disagrees with peek"
            );
            return None;
        }
        Ok(peeked) => peeked,
    };
    assert_eq!(kind as u8, datagram[0] & 0x0f, "type from another nibble");
    let Ok((read_sequence, packet)) = decoded else {
        assert!(
            !sealed_right,
            "a packet sealed with the right key is refused: {decoded:?}"
        );
        return Some(kind);
    };
    assert_eq!(packet.packet_type(), kind);
    if kind == PacketType::ConnectionRequest {
        return Some(kind);
    }
    assert_eq!(read_sequence, sequence);
    // What reads must write back, when the sequence took its shortest form.
    if usize::from(datagram[0] >> 4) == sequence_bytes(sequence) {
        let mut again = Vec::new();
        packet.encode(sequence, PROTOCOL_ID, &PACKET_KEY, &mut again);
        assert_eq!(again, datagram, "{kind:?} does not write back the same");
    }
    // With a replay window: accepted once, then refused if the type is protected.
    let mut window = ReplayProtection::new();
    for attempt in 0..2 {
        let mut copy = datagram.to_vec();
        let result = decode(&mut copy, PROTOCOL_ID, &PACKET_KEY, Some(&mut window));
        if attempt == 1 && kind.replay_protected() {
            assert!(result.is_err(), "{kind:?} replayed and accepted");
        } else {
            assert!(result.is_ok(), "{kind:?} refused with a fresh window");
        }
    }
    Some(kind)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..) {
        let n = s.len().min(8);
        b[..n].copy_from_slice(&s[..n]);
    }
    u64::from_le_bytes(b)
}

/// Runs the target on `data`; panics when an invariant breaks.
pub fn netcode_packets(data: &[u8]) {
    let Some((&tag, rest)) = data.split_first() else {
        return;
    };
    match tag % 5 {
        0 => {
            check_datagram(rest, false);
        }
        1 => {
            let Some((&prefix, rest)) = rest.split_first() else {
                return;
            };
            let sequence = u64_at(rest, 0);
            let body = rest.get(8..).unwrap_or_default();
            let datagram = seal_packet(prefix, sequence, body, &PACKET_KEY, PROTOCOL_ID);
            let kind = check_datagram(&datagram, prefix & 0x0f != 0);
            if kind == Some(PacketType::Payload) {
                let mut copy = datagram.clone();
                let (_, packet) =
                    decode(&mut copy, PROTOCOL_ID, &PACKET_KEY, None).expect("checked");
                assert_eq!(packet, Packet::Payload(body), "payload read back otherwise");
            }
        }
        2 => {
            if let Ok(token) = ConnectToken::from_bytes(rest) {
                assert_eq!(
                    token.to_bytes(),
                    rest,
                    "a token does not write back the same"
                );
                let client = NetcodeClient::new(NOW as f64, token.clone());
                assert!(token.server_addresses().contains(&client.server_addr()));
                if token.create_timestamp() <= token.expire_timestamp() {
                    assert_eq!(client.state(), ClientState::SendingConnectionRequest);
                }
            }
        }
        3 => {
            let protocol_id = u64_at(rest, 0);
            let expire = u64_at(rest, 8);
            let plain = rest.get(16..).unwrap_or_default();
            let data = seal_private(plain, protocol_id, expire, &TOKEN_NONCE, &SERVER_KEY);
            let opened =
                PrivateConnectToken::decrypt(&data, protocol_id, expire, &TOKEN_NONCE, &SERVER_KEY);
            if let Ok(private) = &opened {
                let again = private.encrypt(protocol_id, expire, &TOKEN_NONCE, &SERVER_KEY);
                let reread = PrivateConnectToken::decrypt(
                    &again,
                    protocol_id,
                    expire,
                    &TOKEN_NONCE,
                    &SERVER_KEY,
                );
                assert_eq!(
                    reread.as_ref(),
                    Ok(private),
                    "a private token reads back otherwise"
                );
            } else {
                assert_ne!(
                    opened.as_ref().map(|_| ()),
                    Err(&netser_transport::netcode::TokenError::DoesNotDecrypt),
                    "a private token sealed with the right key does not open"
                );
            }
            request_to_server(protocol_id, expire, &data, opened.ok());
        }
        _ => {
            let protocol_id = u64_at(rest, 0);
            let expire = u64_at(rest, 8);
            let mut nonce = [0u8; CONNECT_TOKEN_NONCE_BYTES];
            let mut data = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
            for (i, &b) in rest.iter().skip(16).enumerate() {
                match i.checked_sub(CONNECT_TOKEN_NONCE_BYTES) {
                    None => nonce[i] = b,
                    Some(j) if j < data.len() => data[j] = b,
                    Some(_) => break,
                }
            }
            let _ = PrivateConnectToken::decrypt(&data, protocol_id, expire, &nonce, &SERVER_KEY);
        }
    }
}

/// Sends a connection request carrying `data` to a fresh server of [`PROTOCOL_ID`]: it
/// answers (one challenge) only to a token that opened, is of its protocol, has not
/// expired and names it.
fn request_to_server(
    protocol_id: u64,
    expire: u64,
    data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES],
    opened: Option<PrivateConnectToken>,
) {
    let config = ServerConfig::new(PROTOCOL_ID, SERVER_KEY, vec![server_addr()]);
    let mut server =
        NetcodeServer::new(0.0, std::time::UNIX_EPOCH, config).expect("valid configuration");
    let mut request = Vec::new();
    Packet::ConnectionRequest {
        protocol_id,
        expire_timestamp: expire,
        nonce: &TOKEN_NONCE,
        private_data: data,
    }
    .encode(0, protocol_id, &[0; 32], &mut request);
    let from = SocketAddr::from(([198, 51, 100, 7], 50_000));
    let now = NOW as f64;
    assert!(server.handle_datagram(now, from, &mut request).is_none());
    let mut answers = Vec::new();
    while let Some(transmit) = server.poll_transmit() {
        answers.push((transmit.to, transmit.data.to_vec()));
    }
    let welcome = opened.is_some_and(|token| {
        protocol_id == PROTOCOL_ID
            && expire as f64 > now
            && token.server_addresses.as_slice().contains(&server_addr())
    });
    assert_eq!(
        answers.len(),
        usize::from(welcome),
        "server answered {} datagrams to a request (welcome: {welcome})",
        answers.len()
    );
    assert_eq!(server.pending_clients(), usize::from(welcome));
    assert_eq!(server.refusals().total(), u64::from(!welcome));
    if let Some((to, answer)) = answers.first() {
        assert_eq!(*to, from);
        assert!(
            answer.len() < request.len(),
            "a reply larger than its request"
        );
        assert_eq!(
            peek(answer).map(|(kind, _)| kind),
            Ok(PacketType::Challenge)
        );
    }
}

fn tagged(tag: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend_from_slice(bytes);
    out
}

/// The seeds: every packet type as the crate writes it (and its plaintext), a real
/// connection request, tokens and private token data from the real writers.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let token = seed_token();
    let challenge = [0x3c; 300];
    let payload: Vec<u8> = (0..200u16).map(|i| (i * 7) as u8).collect();
    let packets = [
        ("denied", Packet::ConnectionDenied),
        (
            "challenge",
            Packet::Challenge {
                token_sequence: 5,
                token_data: &challenge,
            },
        ),
        (
            "response",
            Packet::Response {
                token_sequence: 5,
                token_data: &challenge,
            },
        ),
        (
            "keep_alive",
            Packet::KeepAlive {
                client_index: 3,
                max_clients: 64,
            },
        ),
        ("payload", Packet::Payload(&payload)),
        ("disconnect", Packet::Disconnect),
    ];
    let mut out = Vec::new();
    for (name, packet) in packets {
        for (label, sequence) in [("0", 0u64), ("300", 300), ("max", u64::MAX)] {
            let mut datagram = Vec::new();
            packet.encode(sequence, PROTOCOL_ID, &PACKET_KEY, &mut datagram);
            let plain = open_packet(&datagram, &PACKET_KEY, PROTOCOL_ID).expect("opens");
            out.push((format!("{name}_{label}"), tagged(0, &datagram)));
            out.push((format!("{name}_{label}_plain"), tagged(1, &plain)));
        }
    }
    out.push(("request".into(), tagged(0, &request_for(&token))));
    out.push(("token".into(), tagged(2, &token.to_bytes())));
    let header = |protocol: u64, expire: u64| {
        let mut h = protocol.to_le_bytes().to_vec();
        h.extend_from_slice(&expire.to_le_bytes());
        h
    };
    let plain = open_private(
        token.private_data(),
        token.protocol_id(),
        token.expire_timestamp(),
        token.nonce(),
        &SERVER_KEY,
    )
    .expect("the seed token opens");
    let mut private = header(token.protocol_id(), token.expire_timestamp());
    private.extend_from_slice(&plain);
    out.push(("private_plain".into(), tagged(3, &private)));
    let mut sent = header(token.protocol_id(), token.expire_timestamp());
    sent.extend_from_slice(token.nonce());
    sent.extend_from_slice(token.private_data());
    out.push(("private_data".into(), tagged(4, &sent)));
    out
}
