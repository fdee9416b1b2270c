//! The seven netcode packets, byte for byte, and the checks that refuse malformed ones
//! with the least work: size, prefix, sequence length and size for the type, before any
//! cryptography.
//!
//! Useful on its own to craft packets in tests and tools; [`super::NetcodeServer`] and
//! [`super::NetcodeClient`] use it for every datagram.

use super::crypto::{decrypt, encrypt, encrypt_from, Key};
use super::replay::ReplayProtection;
use super::{
    Layout, CHALLENGE_TOKEN_BYTES, CONNECTION_REQUEST_BYTES, CONNECT_TOKEN_NONCE_BYTES,
    CONNECT_TOKEN_PRIVATE_BYTES, MAC_BYTES, MAX_PACKET_BYTES, RENETCODE_MAX_PAYLOAD_BYTES,
    VERSION_INFO,
};

/// The packet type in the low 4 bits of the prefix byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketType {
    /// Client to server, unencrypted: the private connect token.
    ConnectionRequest = 0,
    /// Server to client: full (or otherwise refused after the token was read).
    ConnectionDenied = 1,
    /// Server to client: the encrypted challenge token to echo.
    Challenge = 2,
    /// Client to server: the echoed challenge token.
    Response = 3,
    /// Both ways: "still here"; from the server it also carries the client's slot.
    KeepAlive = 4,
    /// Both ways: application bytes.
    Payload = 5,
    /// Both ways: the connection is closed.
    Disconnect = 6,
}

impl PacketType {
    fn from_nibble(value: u8) -> Option<Self> {
        Some(match value {
            0 => PacketType::ConnectionRequest,
            1 => PacketType::ConnectionDenied,
            2 => PacketType::Challenge,
            3 => PacketType::Response,
            4 => PacketType::KeepAlive,
            5 => PacketType::Payload,
            6 => PacketType::Disconnect,
            _ => return None,
        })
    }

    /// Whether replay protection applies (keep-alive, payload and disconnect packets).
    pub fn replay_protected(self) -> bool {
        matches!(
            self,
            PacketType::KeepAlive | PacketType::Payload | PacketType::Disconnect
        )
    }

    /// The allowed size range of the decrypted body in either layout (payloads up to
    /// `renetcode`'s limit; the layout's own limit is checked after).
    fn body_sizes(self) -> (usize, usize) {
        match self {
            PacketType::ConnectionRequest => {
                (CONNECTION_REQUEST_BYTES - 1, CONNECTION_REQUEST_BYTES - 1)
            }
            PacketType::ConnectionDenied | PacketType::Disconnect => (0, 0),
            PacketType::Challenge | PacketType::Response => {
                (8 + CHALLENGE_TOKEN_BYTES, 8 + CHALLENGE_TOKEN_BYTES)
            }
            PacketType::KeepAlive => (8, 8),
            PacketType::Payload => (1, RENETCODE_MAX_PAYLOAD_BYTES),
        }
    }
}

/// A decoded packet, borrowing from the datagram it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet<'a> {
    /// See [`PacketType::ConnectionRequest`] (version already checked).
    ConnectionRequest {
        /// The game's protocol id.
        protocol_id: u64,
        /// When the token expires, seconds since the Unix epoch.
        expire_timestamp: u64,
        /// The private token's XChaCha20 nonce.
        nonce: &'a [u8; CONNECT_TOKEN_NONCE_BYTES],
        /// The encrypted private connect token.
        private_data: &'a [u8; CONNECT_TOKEN_PRIVATE_BYTES],
    },
    /// See [`PacketType::ConnectionDenied`].
    ConnectionDenied,
    /// See [`PacketType::Challenge`].
    Challenge {
        /// The sequence the challenge token was encrypted with.
        token_sequence: u64,
        /// The encrypted challenge token.
        token_data: &'a [u8; CHALLENGE_TOKEN_BYTES],
    },
    /// See [`PacketType::Response`].
    Response {
        /// As received in the challenge.
        token_sequence: u64,
        /// As received in the challenge.
        token_data: &'a [u8; CHALLENGE_TOKEN_BYTES],
    },
    /// See [`PacketType::KeepAlive`].
    KeepAlive {
        /// The client's slot on the server (0 from clients).
        client_index: u32,
        /// The server's number of slots (0 from clients).
        max_clients: u32,
    },
    /// See [`PacketType::Payload`]: 1 to [`Layout::max_payload_bytes`] bytes.
    Payload(&'a [u8]),
    /// See [`PacketType::Disconnect`].
    Disconnect,
}

impl Packet<'_> {
    /// The packet's type.
    pub fn packet_type(&self) -> PacketType {
        match self {
            Packet::ConnectionRequest { .. } => PacketType::ConnectionRequest,
            Packet::ConnectionDenied => PacketType::ConnectionDenied,
            Packet::Challenge { .. } => PacketType::Challenge,
            Packet::Response { .. } => PacketType::Response,
            Packet::KeepAlive { .. } => PacketType::KeepAlive,
            Packet::Payload(_) => PacketType::Payload,
            Packet::Disconnect => PacketType::Disconnect,
        }
    }

    /// Bytes of the body: what follows the prefix (a request) or the sequence (the rest),
    /// before the tag.
    fn body_len(&self) -> usize {
        match self {
            Packet::ConnectionRequest { .. } => CONNECTION_REQUEST_BYTES - 1,
            Packet::Challenge { token_data, .. } | Packet::Response { token_data, .. } => {
                8 + token_data.len()
            }
            Packet::KeepAlive { .. } => 8,
            Packet::Payload(payload) => payload.len(),
            Packet::ConnectionDenied | Packet::Disconnect => 0,
        }
    }

    /// Writes the body into `out`, which is [`Self::body_len`] bytes.
    fn write_body(&self, out: &mut [u8]) {
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        match *self {
            Packet::ConnectionRequest {
                protocol_id,
                expire_timestamp,
                nonce,
                private_data,
            } => {
                put(&VERSION_INFO);
                put(&protocol_id.to_le_bytes());
                put(&expire_timestamp.to_le_bytes());
                put(nonce);
                put(private_data);
            }
            Packet::Challenge {
                token_sequence,
                token_data,
            }
            | Packet::Response {
                token_sequence,
                token_data,
            } => {
                put(&token_sequence.to_le_bytes());
                put(token_data);
            }
            Packet::KeepAlive {
                client_index,
                max_clients,
            } => {
                put(&client_index.to_le_bytes());
                put(&max_clients.to_le_bytes());
            }
            Packet::Payload(payload) => put(payload),
            Packet::ConnectionDenied | Packet::Disconnect => {}
        }
    }

    /// Bytes [`Packet::encode`] appends for this packet under `sequence`.
    ///
    /// ```
    /// use netser_transport::netcode::packet::Packet;
    /// assert_eq!(Packet::Payload(b"hi").encoded_len(1000), 1 + 2 + 2 + 16);
    /// ```
    pub fn encoded_len(&self, sequence: u64) -> usize {
        match self {
            Packet::ConnectionRequest { .. } => CONNECTION_REQUEST_BYTES,
            _ => 1 + sequence_bytes(sequence) + self.body_len() + MAC_BYTES,
        }
    }

    /// Appends the packet to `out`: a connection request as it is (it is never encrypted),
    /// any other packet encrypted and signed with `key` under `sequence` (which must never
    /// repeat for one key). Returns the number of bytes appended.
    ///
    /// A payload outside 1..=[`Layout::max_payload_bytes`] is the caller's error (the
    /// client and server check it first); it is written as given. The sequence takes 1 to
    /// 8 bytes (sequence 0 one byte), which both layouts read.
    ///
    /// ```
    /// use netser_transport::netcode::packet::{decode, Packet};
    /// let key = [7u8; 32];
    /// let mut out = Vec::new();
    /// let len = Packet::Payload(b"hi").encode(1000, 42, &key, &mut out);
    /// assert_eq!(len, 1 + 2 + 2 + 16); // prefix, 2 sequence bytes, payload, tag
    /// let (sequence, packet) = decode(&mut out, 42, &key, None).unwrap();
    /// assert_eq!((sequence, packet), (1000, Packet::Payload(b"hi")));
    /// ```
    pub fn encode(&self, sequence: u64, protocol_id: u64, key: &Key, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        let len = self.encoded_len(sequence);
        out.resize(start + len, 0);
        self.encode_into(sequence, protocol_id, key, &mut out[start..]);
        len
    }

    /// [`Packet::encode`] into `out`, which is exactly [`Packet::encoded_len`] bytes
    /// (whatever they held is overwritten). A payload is encrypted from the caller's bytes
    /// straight into `out`, without a copy first.
    pub(crate) fn encode_into(&self, sequence: u64, protocol_id: u64, key: &Key, out: &mut [u8]) {
        let kind = self.packet_type();
        if kind == PacketType::ConnectionRequest {
            out[0] = 0;
            self.write_body(&mut out[1..]);
            return;
        }
        let sequence_bytes = sequence_bytes(sequence);
        let prefix = kind as u8 | ((sequence_bytes as u8) << 4);
        out[0] = prefix;
        out[1..1 + sequence_bytes].copy_from_slice(&sequence.to_le_bytes()[..sequence_bytes]);
        let sealed = &mut out[1 + sequence_bytes..];
        let aad = packet_aad(protocol_id, prefix);
        match self {
            Packet::Payload(payload) => encrypt_from(payload, sealed, sequence, key, &aad),
            _ => {
                self.write_body(&mut sealed[..self.body_len()]);
                encrypt(sealed, sequence, key, &aad);
            }
        }
    }
}

/// Bytes the sequence takes: its low bytes up to the highest non-zero one, at least one.
pub fn sequence_bytes(sequence: u64) -> usize {
    (8 - sequence.leading_zeros() as usize / 8).max(1)
}

/// The associated data of a packet: version, protocol id, prefix byte (so the type cannot
/// be changed).
fn packet_aad(protocol_id: u64, prefix: u8) -> [u8; 22] {
    let mut aad = [0u8; 22];
    aad[..13].copy_from_slice(&VERSION_INFO);
    aad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    aad[21] = prefix;
    aad
}

/// Why a datagram was refused. Every refusal is counted by reason
/// ([`RefusalCounters`]); none panics or allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// Shorter than any packet of its type (an empty datagram, or a size below prefix,
    /// sequence and tag).
    TooSmall,
    /// Longer than [`MAX_PACKET_BYTES`].
    TooLarge,
    /// Packet type 7 to 15.
    InvalidPacketType,
    /// A type this side never receives (a challenge at the server, a request at a client).
    UnexpectedPacketType,
    /// A sequence length above 8 bytes.
    InvalidSequenceBytes,
    /// The size does not fit the packet type (a request is exactly 1078 bytes, a
    /// keep-alive body 8, ...).
    WrongSize,
    /// The version string is not `"NETCODE 1.02"`.
    WrongVersion,
    /// Another game's protocol id.
    WrongProtocolId,
    /// The connect token's expiry has passed.
    TokenExpired,
    /// The private connect token does not decrypt with the server's key, or is malformed.
    TokenInvalid,
    /// The server's address is not among the token's.
    NotInHostList,
    /// The address or the client id is already connected.
    AlreadyConnected,
    /// The token was already used from another address.
    TokenUsedElsewhere,
    /// Too many handshakes in progress (the bound on pending clients).
    PendingFull,
    /// An encrypted packet from an address that has no keys (not connecting, not connected).
    UnknownAddress,
    /// At a client: a datagram from an address other than the server's.
    WrongSource,
    /// The sequence was already received, or is older than the replay window.
    Replayed,
    /// The tag does not authenticate: forged, corrupted, or another key.
    DoesNotDecrypt,
    /// The challenge token of a response does not decrypt, or was issued to another
    /// handshake.
    ChallengeInvalid,
    /// A valid packet the current state has no use for (a payload before connected, a
    /// second challenge, ...).
    UnexpectedInState,
    /// The server has no event room for a new connection until the application polls.
    EventQueueFull,
    /// An authenticated packet, or a private connect token, in a form only the other
    /// [`Layout`] writes: the peer (or the backend) uses `renetcode`'s layout where this
    /// side uses the standard's, or the token's IPv6 addresses match this server only when
    /// read in the other layout. Set the same layout on both sides.
    LayoutMismatch,
}

impl Refusal {
    /// Every reason, in counter order.
    pub const ALL: [Refusal; 22] = [
        Refusal::TooSmall,
        Refusal::TooLarge,
        Refusal::InvalidPacketType,
        Refusal::UnexpectedPacketType,
        Refusal::InvalidSequenceBytes,
        Refusal::WrongSize,
        Refusal::WrongVersion,
        Refusal::WrongProtocolId,
        Refusal::TokenExpired,
        Refusal::TokenInvalid,
        Refusal::NotInHostList,
        Refusal::AlreadyConnected,
        Refusal::TokenUsedElsewhere,
        Refusal::PendingFull,
        Refusal::UnknownAddress,
        Refusal::WrongSource,
        Refusal::Replayed,
        Refusal::DoesNotDecrypt,
        Refusal::ChallengeInvalid,
        Refusal::UnexpectedInState,
        Refusal::EventQueueFull,
        Refusal::LayoutMismatch,
    ];
}

/// Datagrams refused, by [`Refusal`].
///
/// ```
/// use netser_transport::netcode::{Refusal, RefusalCounters};
/// let mut counters = RefusalCounters::default();
/// counters.add(Refusal::TooSmall);
/// assert_eq!(counters.get(Refusal::TooSmall), 1);
/// assert_eq!(counters.total(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefusalCounters {
    counts: [u64; Refusal::ALL.len()],
}

impl RefusalCounters {
    /// Counts one refusal.
    pub fn add(&mut self, reason: Refusal) {
        self.counts[reason as usize] += 1;
    }
    /// Refusals for `reason`.
    pub fn get(&self, reason: Refusal) -> u64 {
        self.counts[reason as usize]
    }
    /// All refusals.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// The reasons with a non-zero count.
    pub fn iter(&self) -> impl Iterator<Item = (Refusal, u64)> + '_ {
        Refusal::ALL
            .iter()
            .map(|&r| (r, self.get(r)))
            .filter(|&(_, n)| n > 0)
    }
}

/// What can be learned from a datagram without cryptography, in the standard's layout:
/// the packet type and, for encrypted packets, the sequence. Checks, in this order: empty,
/// too large, type, request size and version, sequence length, size for the type.
///
/// # Errors
/// The [`Refusal`] of the first check that fails.
pub fn peek(bytes: &[u8]) -> Result<(PacketType, u64), Refusal> {
    peek_with(bytes, Layout::Standard)
}

/// [`peek`] in `layout`: [`Layout::Renetcode`] also reads a sequence in zero bytes (as
/// `renetcode` writes sequence 0) and payloads up to 1300 bytes.
///
/// # Errors
/// The [`Refusal`] of the first check that fails.
///
/// ```
/// use netser_transport::netcode::packet::{peek_with, PacketType};
/// use netser_transport::netcode::{Layout, Refusal};
/// let denied_sequence_0_in_no_bytes = [0x01; 17];
/// assert_eq!(peek_with(&denied_sequence_0_in_no_bytes, Layout::Standard), Err(Refusal::InvalidSequenceBytes));
/// assert_eq!(
///     peek_with(&denied_sequence_0_in_no_bytes, Layout::Renetcode),
///     Ok((PacketType::ConnectionDenied, 0))
/// );
/// ```
pub fn peek_with(bytes: &[u8], layout: Layout) -> Result<(PacketType, u64), Refusal> {
    let peeked = peek_in(bytes, layout)?;
    match peeked.foreign {
        Some(refusal) => Err(refusal),
        None => Ok((peeked.kind, peeked.sequence)),
    }
}

/// What [`peek_in`] learned.
pub(crate) struct Peeked {
    pub(crate) kind: PacketType,
    pub(crate) sequence: u64,
    /// In [`Layout::Standard`], a packet in a form only `renetcode` writes (a sequence in
    /// zero bytes, a payload over 1200 bytes): the standard's refusal for it. The caller
    /// may authenticate it to learn that the peer uses the other layout.
    pub(crate) foreign: Option<Refusal>,
}

pub(crate) fn peek_in(bytes: &[u8], layout: Layout) -> Result<Peeked, Refusal> {
    let Some(&prefix) = bytes.first() else {
        return Err(Refusal::TooSmall);
    };
    if bytes.len() > MAX_PACKET_BYTES {
        return Err(Refusal::TooLarge);
    }
    let kind = PacketType::from_nibble(prefix & 0x0f).ok_or(Refusal::InvalidPacketType)?;
    if kind == PacketType::ConnectionRequest {
        if bytes.len() != CONNECTION_REQUEST_BYTES {
            return Err(Refusal::WrongSize);
        }
        if prefix != 0 {
            return Err(Refusal::InvalidSequenceBytes);
        }
        if bytes[1..14] != VERSION_INFO {
            return Err(Refusal::WrongVersion);
        }
        return Ok(Peeked {
            kind,
            sequence: 0,
            foreign: None,
        });
    }
    // 1 to 8 in the standard; renetcode writes sequence 0 with no bytes.
    let sequence_bytes = usize::from(prefix >> 4);
    if sequence_bytes > 8 {
        return Err(Refusal::InvalidSequenceBytes);
    }
    // The standard refuses zero sequence bytes before any size check.
    let no_sequence = if sequence_bytes == 0 && layout == Layout::Standard {
        Refusal::InvalidSequenceBytes
    } else {
        Refusal::WrongSize
    };
    let Some(body) = bytes.len().checked_sub(1 + sequence_bytes + MAC_BYTES) else {
        return Err(match no_sequence {
            Refusal::InvalidSequenceBytes => no_sequence,
            _ => Refusal::TooSmall,
        });
    };
    let (min, max) = kind.body_sizes();
    if body < min || body > max {
        return Err(no_sequence);
    }
    let foreign = if layout == Layout::Renetcode {
        None
    } else if sequence_bytes == 0 {
        Some(Refusal::InvalidSequenceBytes)
    } else if kind == PacketType::Payload && body > layout.max_payload_bytes() {
        Some(Refusal::WrongSize)
    } else {
        None
    };
    let mut sequence = [0u8; 8];
    sequence[..sequence_bytes].copy_from_slice(&bytes[1..1 + sequence_bytes]);
    Ok(Peeked {
        kind,
        sequence: u64::from_le_bytes(sequence),
        foreign,
    })
}

/// Reads a connection request (after [`peek`] said it is one).
fn read_request(bytes: &[u8]) -> Packet<'_> {
    let field = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let nonce_at = 1 + 13 + 16;
    let data_at = nonce_at + CONNECT_TOKEN_NONCE_BYTES;
    Packet::ConnectionRequest {
        protocol_id: field(14),
        expire_timestamp: field(22),
        nonce: bytes[nonce_at..data_at]
            .try_into()
            .unwrap_or(&[0; CONNECT_TOKEN_NONCE_BYTES]),
        private_data: bytes[data_at..]
            .try_into()
            .unwrap_or(&[0; CONNECT_TOKEN_PRIVATE_BYTES]),
    }
}

/// Decodes a datagram in the standard's layout: [`peek`], then for encrypted packets the
/// replay check (if `replay` is given and the type is protected), decryption in place with
/// `key`, and the replay window's advance. A connection request is returned as read (check
/// its protocol id and token yourself).
///
/// # Errors
/// The [`Refusal`] of the first check that fails; [`Refusal::Replayed`] before and
/// [`Refusal::DoesNotDecrypt`] after the only cryptographic step.
pub fn decode<'a>(
    bytes: &'a mut [u8],
    protocol_id: u64,
    key: &Key,
    replay: Option<&mut ReplayProtection>,
) -> Result<(u64, Packet<'a>), Refusal> {
    decode_with(bytes, protocol_id, key, replay, Layout::Standard)
}

/// [`decode`] in `layout` (see [`peek_with`]).
///
/// # Errors
/// As [`decode`].
///
/// ```
/// use netser_transport::netcode::packet::{decode_with, Packet};
/// use netser_transport::netcode::{Layout, Refusal};
/// let key = [7u8; 32];
/// let mut out = Vec::new();
/// Packet::Payload(&[1; 1250]).encode(3, 42, &key, &mut out);
/// let mut copy = out.clone();
/// assert!(decode_with(&mut copy, 42, &key, None, Layout::Renetcode).is_ok());
/// assert_eq!(decode_with(&mut out, 42, &key, None, Layout::Standard), Err(Refusal::WrongSize));
/// ```
pub fn decode_with<'a>(
    bytes: &'a mut [u8],
    protocol_id: u64,
    key: &Key,
    replay: Option<&mut ReplayProtection>,
    layout: Layout,
) -> Result<(u64, Packet<'a>), Refusal> {
    let (kind, sequence) = peek_with(bytes, layout)?;
    if kind == PacketType::ConnectionRequest {
        return Ok((0, read_request(bytes)));
    }
    open(bytes, kind, sequence, protocol_id, key, replay).map(|packet| (sequence, packet))
}

/// The cryptographic half of [`decode`], for callers that already [`peek`]ed.
pub(crate) fn open<'a>(
    bytes: &'a mut [u8],
    kind: PacketType,
    sequence: u64,
    protocol_id: u64,
    key: &Key,
    replay: Option<&mut ReplayProtection>,
) -> Result<Packet<'a>, Refusal> {
    let replay = replay.filter(|_| kind.replay_protected());
    if let Some(replay) = &replay {
        if replay.already_received(sequence) {
            return Err(Refusal::Replayed);
        }
    }
    let prefix = bytes[0];
    let body_at = 1 + usize::from(prefix >> 4);
    if !decrypt(
        &mut bytes[body_at..],
        sequence,
        key,
        &packet_aad(protocol_id, prefix),
    ) {
        return Err(Refusal::DoesNotDecrypt);
    }
    if let Some(replay) = replay {
        replay.advance(sequence);
    }
    let end = bytes.len() - MAC_BYTES;
    let body = &bytes[body_at..end];
    let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap_or_default());
    let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap_or_default());
    // Sizes were checked by `peek`, so the conversions below cannot fail.
    Ok(match kind {
        PacketType::ConnectionDenied => Packet::ConnectionDenied,
        PacketType::Disconnect => Packet::Disconnect,
        PacketType::KeepAlive => Packet::KeepAlive {
            client_index: u32_at(0),
            max_clients: u32_at(4),
        },
        PacketType::Payload => Packet::Payload(body),
        PacketType::Challenge | PacketType::Response => {
            let token_sequence = u64_at(0);
            let token_data = body[8..].try_into().map_err(|_| Refusal::WrongSize)?;
            if kind == PacketType::Challenge {
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
        PacketType::ConnectionRequest => read_request(body),
    })
}

/// The challenge token: the client id and user data, encrypted by the server with a key
/// only it knows, so a client must receive the challenge at its claimed address to answer.
/// ChaCha20-Poly1305 of the first 284 bytes (client id, user data, zeros), the sequence as
/// nonce, no associated data, the tag in the last 16 bytes.
///
/// ```
/// use netser_transport::netcode::packet::{decrypt_challenge, encrypt_challenge};
/// let token = encrypt_challenge(77, &[5; 256], 3, &[9; 32]);
/// assert_eq!(decrypt_challenge(&token, 3, &[9; 32]), Some((77, [5; 256])));
/// assert_eq!(decrypt_challenge(&token, 4, &[9; 32]), None);
/// ```
pub fn encrypt_challenge(
    client_id: u64,
    user_data: &[u8; super::USER_DATA_BYTES],
    sequence: u64,
    key: &Key,
) -> [u8; CHALLENGE_TOKEN_BYTES] {
    let mut token = [0u8; CHALLENGE_TOKEN_BYTES];
    token[..8].copy_from_slice(&client_id.to_le_bytes());
    token[8..8 + super::USER_DATA_BYTES].copy_from_slice(user_data);
    encrypt(&mut token, sequence, key, &[]);
    token
}

/// Opens a challenge token: `(client id, user data)` or `None` if it does not decrypt.
pub fn decrypt_challenge(
    token: &[u8; CHALLENGE_TOKEN_BYTES],
    sequence: u64,
    key: &Key,
) -> Option<(u64, [u8; super::USER_DATA_BYTES])> {
    let mut plain = *token;
    if !decrypt(&mut plain, sequence, key, &[]) {
        return None;
    }
    let client_id = u64::from_le_bytes(plain[..8].try_into().ok()?);
    let user_data = plain[8..8 + super::USER_DATA_BYTES].try_into().ok()?;
    Some((client_id, user_data))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: Key = [9; 32];

    #[test]
    fn sequence_lengths() {
        assert_eq!(sequence_bytes(0), 1);
        assert_eq!(sequence_bytes(255), 1);
        assert_eq!(sequence_bytes(256), 2);
        assert_eq!(sequence_bytes(1000), 2);
        assert_eq!(sequence_bytes(u64::MAX), 8);
        let mut out = Vec::new();
        Packet::Disconnect.encode(1000, 1, &KEY, &mut out);
        assert_eq!(&out[..3], &[0x26, 0xE8, 0x03]);
    }

    #[test]
    fn every_type_round_trips() {
        let nonce = [1u8; 24];
        let data = [2u8; 1024];
        let token = [3u8; 300];
        let packets = [
            Packet::ConnectionRequest {
                protocol_id: 5,
                expire_timestamp: 6,
                nonce: &nonce,
                private_data: &data,
            },
            Packet::ConnectionDenied,
            Packet::Challenge {
                token_sequence: 7,
                token_data: &token,
            },
            Packet::Response {
                token_sequence: 8,
                token_data: &token,
            },
            Packet::KeepAlive {
                client_index: 3,
                max_clients: 64,
            },
            Packet::Payload(&[4; RENETCODE_MAX_PAYLOAD_BYTES]),
            Packet::Disconnect,
        ];
        for (i, packet) in packets.iter().enumerate() {
            let mut out = Vec::new();
            let sequence = 1u64 << (i * 9);
            packet.encode(sequence, 5, &KEY, &mut out);
            let mut copy = out.clone();
            let (read_sequence, read) =
                decode_with(&mut copy, 5, &KEY, None, Layout::Renetcode).unwrap();
            assert_eq!(read, *packet);
            if i > 0 {
                assert_eq!(read_sequence, sequence);
                // Flipping any bit of an encrypted packet makes it fail.
                for bit in 0..out.len() * 8 {
                    let mut flipped = out.clone();
                    flipped[bit / 8] ^= 1 << (bit % 8);
                    assert!(
                        decode_with(&mut flipped, 5, &KEY, None, Layout::Renetcode).is_err(),
                        "{packet:?} bit {bit}"
                    );
                }
            }
        }
        assert_eq!(
            {
                let mut out = Vec::new();
                packets[0].encode(0, 5, &KEY, &mut out)
            },
            CONNECTION_REQUEST_BYTES
        );
    }

    #[test]
    fn checks_before_crypto() {
        assert_eq!(peek(&[]), Err(Refusal::TooSmall));
        assert_eq!(peek(&[7; 20]), Err(Refusal::InvalidPacketType));
        assert_eq!(peek(&[0x94; 40]), Err(Refusal::InvalidSequenceBytes));
        assert_eq!(peek(&[0x84; 24]), Err(Refusal::TooSmall));
        assert_eq!(peek(&[0x14; 20]), Err(Refusal::WrongSize));
        assert_eq!(peek(&[0x14; 27]), Err(Refusal::WrongSize));
        assert_eq!(peek(&[0x14; 26]).map(|(t, _)| t), Ok(PacketType::KeepAlive));
        assert_eq!(peek(&[0x15; 18]), Err(Refusal::WrongSize)); // an empty payload
        assert_eq!(peek(&[0x15; 19]).map(|(t, _)| t), Ok(PacketType::Payload));
        assert_eq!(peek(&[0; 1077]), Err(Refusal::WrongSize));
        assert_eq!(peek(&[0; 1078]), Err(Refusal::WrongVersion));
        assert_eq!(peek(&[0x15; MAX_PACKET_BYTES + 1]), Err(Refusal::TooLarge));
        // renetcode's sequence 0 has no sequence bytes: refused by the standard.
        assert_eq!(peek(&[0x01; 17]), Err(Refusal::InvalidSequenceBytes));
        assert_eq!(
            peek_with(&[0x01; 17], Layout::Renetcode),
            Ok((PacketType::ConnectionDenied, 0))
        );
        // A payload over 1200 bytes is renetcode's, over 1300 nobody's.
        assert_eq!(peek(&[0x15; 18 + 1201]), Err(Refusal::WrongSize));
        assert!(peek_with(&[0x15; 18 + 1300], Layout::Renetcode).is_ok());
        assert_eq!(
            peek_with(&[0x15; 18 + 1301], Layout::Renetcode),
            Err(Refusal::WrongSize)
        );
    }

    #[test]
    fn replay_is_refused_before_decryption() {
        let mut replay = ReplayProtection::new();
        let mut out = Vec::new();
        Packet::KeepAlive {
            client_index: 0,
            max_clients: 0,
        }
        .encode(3, 1, &KEY, &mut out);
        let mut first = out.clone();
        assert!(decode(&mut first, 1, &KEY, Some(&mut replay)).is_ok());
        let mut again = out.clone();
        assert_eq!(
            decode(&mut again, 1, &KEY, Some(&mut replay)),
            Err(Refusal::Replayed)
        );
        // A forged packet with a fresh sequence does not move the window.
        let mut forged = out.clone();
        forged[1] = 200;
        assert_eq!(
            decode(&mut forged, 1, &KEY, Some(&mut replay)),
            Err(Refusal::DoesNotDecrypt)
        );
        assert!(!replay.already_received(200));
    }

    #[test]
    fn challenge_token() {
        let token = encrypt_challenge(77, &[5; 256], 3, &KEY);
        assert_eq!(decrypt_challenge(&token, 3, &KEY), Some((77, [5; 256])));
        assert_eq!(decrypt_challenge(&token, 4, &KEY), None);
    }
}
