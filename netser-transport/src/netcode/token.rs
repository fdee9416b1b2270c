//! Connect tokens: what the backend issues, what the client presents, what only the server
//! can read.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

use super::crypto::{decrypt_xnonce, encrypt_xnonce, random_bytes, Key, RandomError, SecretKey};
use super::{
    Layout, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, KEY_BYTES,
    MAC_BYTES, MAX_SERVER_ADDRESSES, USER_DATA_BYTES, VERSION_INFO,
};

const ADDRESS_IPV4: u8 = 1;
const ADDRESS_IPV6: u8 = 2;

/// What the backend decides when it admits a client; [`ConnectToken::generate`] turns it
/// into a token.
///
/// ```
/// use netser_transport::netcode::TokenParams;
/// let params = TokenParams {
///     client_id: 42,
///     timeout_seconds: 10,
///     ..TokenParams::new(0x1234, vec!["203.0.113.5:40000".parse().unwrap()], 1_700_000_000)
/// };
/// assert_eq!(params.expire_seconds, 300);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParams {
    /// The game's protocol id; a server only accepts tokens for its own.
    pub protocol_id: u64,
    /// The client's globally unique id (the backend's account or session id).
    pub client_id: u64,
    /// The dedicated servers the client may try, in order; 1 to [`MAX_SERVER_ADDRESSES`].
    pub server_addresses: Vec<SocketAddr>,
    /// The addresses the servers know themselves by, written in the encrypted private part
    /// (each server checks that its own is there), when they differ from
    /// `server_addresses` (behind a load balancer or NAT); empty (the default) writes
    /// `server_addresses` in both parts.
    pub internal_server_addresses: Vec<SocketAddr>,
    /// When the token is issued, in seconds since the Unix epoch.
    pub create_timestamp: u64,
    /// How long the token stays usable for connecting, in seconds (default 300).
    /// `u64::MAX` (or any value reaching past it) gives the expire timestamp `u64::MAX`,
    /// the standard's *never expires*.
    pub expire_seconds: u64,
    /// Seconds without a packet after which either side drops the connection (default 15);
    /// zero or negative disables the timeout (for debugging only).
    pub timeout_seconds: i32,
    /// Data for the server only (encrypted in the private part), default all zero.
    pub user_data: [u8; USER_DATA_BYTES],
    /// The byte layout of the token (default [`Layout::Standard`]): a client reading these
    /// bytes and the servers must use the same.
    pub layout: Layout,
}

impl TokenParams {
    /// Parameters with the defaults: client id 0, expiry 300 s, timeout 15 s, zero user
    /// data, the standard's layout.
    pub fn new(protocol_id: u64, server_addresses: Vec<SocketAddr>, now_unix_seconds: u64) -> Self {
        Self {
            protocol_id,
            client_id: 0,
            server_addresses,
            internal_server_addresses: Vec::new(),
            create_timestamp: now_unix_seconds,
            expire_seconds: 300,
            timeout_seconds: 15,
            user_data: [0; USER_DATA_BYTES],
            layout: Layout::Standard,
        }
    }
}

/// Why a token could not be issued or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// A token lists 1 to 32 server addresses; this one has `count`.
    ServerAddressCount {
        /// The number of addresses given or read.
        count: usize,
    },
    /// An address type byte other than 1 (IPv4) or 2 (IPv6).
    AddressType {
        /// The byte read.
        kind: u8,
    },
    /// The version string is not `"NETCODE 1.02"`.
    WrongVersion,
    /// The bytes end before the token does.
    Truncated,
    /// Bytes are left after the token.
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// The create timestamp is after the expire timestamp, or the expiry overflows.
    BadTimestamps,
    /// The private part does not decrypt with this key, protocol id and expiry (forged,
    /// corrupted, or meant for another game or backend).
    DoesNotDecrypt,
    /// Random bytes for keys or the nonce were not available.
    Random(RandomError),
    /// The bytes are a token in the other [`Layout`]: read them with the layout the backend
    /// wrote them in (`ConnectToken::from_bytes_with`), and set the server's the same.
    LayoutMismatch {
        /// The layout asked for.
        expected: Layout,
        /// The layout the bytes are in.
        found: Layout,
    },
}

impl core::fmt::Display for TokenError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TokenError::ServerAddressCount { count } => {
                write!(f, "a connect token lists 1 to {MAX_SERVER_ADDRESSES} server addresses, not {count}")
            }
            TokenError::AddressType { kind } => {
                write!(f, "unknown address type {kind} (1 is IPv4, 2 is IPv6)")
            }
            TokenError::WrongVersion => write!(f, "the token is not a netcode 1.02 token"),
            TokenError::Truncated => write!(f, "the token is truncated"),
            TokenError::TrailingBytes { count } => write!(f, "{count} bytes follow the token"),
            TokenError::BadTimestamps => write!(
                f,
                "the token's create timestamp is after its expire timestamp"
            ),
            TokenError::DoesNotDecrypt => write!(
                f,
                "the private connect token does not decrypt with this key"
            ),
            TokenError::Random(_) => {
                write!(f, "no random bytes for the token's keys or nonce")
            }
            TokenError::LayoutMismatch { expected, found } => write!(
                f,
                "the connect token is in Layout::{found:?}, read as Layout::{expected:?}: \
                 read it, and set the server, with the layout its backend writes"
            ),
        }
    }
}

impl std::error::Error for TokenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TokenError::Random(e) => Some(e),
            _ => None,
        }
    }
}

/// The up to 32 server addresses of a token, without allocating.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ServerAddresses {
    len: u8,
    addresses: [SocketAddr; MAX_SERVER_ADDRESSES],
}

impl core::fmt::Debug for ServerAddresses {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl ServerAddresses {
    fn new(addresses: &[SocketAddr]) -> Result<Self, TokenError> {
        if addresses.is_empty() || addresses.len() > MAX_SERVER_ADDRESSES {
            return Err(TokenError::ServerAddressCount {
                count: addresses.len(),
            });
        }
        let mut list = Self::empty();
        list.addresses[..addresses.len()].copy_from_slice(addresses);
        list.len = addresses.len() as u8;
        Ok(list)
    }

    fn empty() -> Self {
        Self {
            len: 0,
            addresses: [SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
                MAX_SERVER_ADDRESSES],
        }
    }

    /// The addresses, in the order the client tries them.
    pub fn as_slice(&self) -> &[SocketAddr] {
        &self.addresses[..self.len as usize]
    }
}

/// A connect token as the client holds it: the public part (server addresses, keys,
/// timestamps, timeout) and the encrypted private part only servers can read.
///
/// Issue one with [`ConnectToken::generate`] on the backend and send it to the client over
/// a secure channel (HTTPS) with [`ConnectToken::to_bytes`]; the client reads it back with
/// [`ConnectToken::from_bytes`]. The bytes are in the token's [`Layout`]: by default the
/// netcode standard's 2048 bytes, which any standard backend writes and any standard client
/// reads; [`Layout::Renetcode`] for `renetcode` 2.x backends and clients.
///
/// ```
/// use netser_transport::netcode::{generate_key, ConnectToken, TokenParams};
/// let key = generate_key().unwrap();
/// let params = TokenParams {
///     client_id: 7,
///     ..TokenParams::new(99, vec!["127.0.0.1:40000".parse().unwrap()], 1_700_000_000)
/// };
/// let token = ConnectToken::generate(&params, &key).unwrap();
/// let bytes = token.to_bytes();
/// assert_eq!(bytes.len(), 2048);
/// let read = ConnectToken::from_bytes(&bytes).unwrap();
/// assert_eq!(read.to_bytes(), bytes);
/// // The standard's public part has no client id: only the issuer and the server know it.
/// assert_eq!((token.client_id(), read.client_id()), (7, 0));
/// assert_eq!(token.expire_timestamp(), 1_700_000_300);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectToken {
    client_id: u64,
    protocol_id: u64,
    create_timestamp: u64,
    expire_timestamp: u64,
    nonce: [u8; CONNECT_TOKEN_NONCE_BYTES],
    private_data: Box<[u8; CONNECT_TOKEN_PRIVATE_BYTES]>,
    timeout_seconds: i32,
    server_addresses: ServerAddresses,
    client_to_server_key: SecretKey,
    server_to_client_key: SecretKey,
    layout: Layout,
}

impl core::fmt::Debug for ConnectToken {
    // Keys stay out of logs.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConnectToken")
            .field("client_id", &self.client_id)
            .field("protocol_id", &self.protocol_id)
            .field("create_timestamp", &self.create_timestamp)
            .field("expire_timestamp", &self.expire_timestamp)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("server_addresses", &self.server_addresses)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl ConnectToken {
    /// Issues a token (the backend's call): fresh random per-client keys and nonce, the
    /// private part encrypted with `private_key` (XChaCha20-Poly1305, the version, protocol
    /// id and expiry as associated data).
    ///
    /// # Errors
    /// [`TokenError::ServerAddressCount`] for 0 or more than 32 addresses (public or
    /// internal), [`TokenError::Random`] if the operating system has no randomness.
    pub fn generate(params: &TokenParams, private_key: &Key) -> Result<Self, TokenError> {
        // The C reference draws the nonce first, then the two keys.
        let nonce = random_bytes().map_err(TokenError::Random)?;
        let client_to_server_key = random_bytes().map_err(TokenError::Random)?;
        let server_to_client_key = random_bytes().map_err(TokenError::Random)?;
        Self::generate_with(
            params,
            private_key,
            &nonce,
            &client_to_server_key,
            &server_to_client_key,
        )
    }

    /// Issues a token with the nonce and per-client keys given instead of drawn: the same
    /// inputs give the same bytes (the AEAD is deterministic), as test vectors need. Never
    /// reuse a nonce or keys for two tokens; [`ConnectToken::generate`] draws them.
    ///
    /// # Errors
    /// [`TokenError::ServerAddressCount`] for 0 or more than 32 addresses (public or
    /// internal).
    ///
    /// ```
    /// use netser_transport::netcode::{ConnectToken, TokenParams};
    /// let params = TokenParams::new(5, vec!["127.0.0.1:40000".parse().unwrap()], 1_000);
    /// let a = ConnectToken::generate_with(&params, &[1; 32], &[2; 24], &[3; 32], &[4; 32]);
    /// let b = ConnectToken::generate_with(&params, &[1; 32], &[2; 24], &[3; 32], &[4; 32]);
    /// assert_eq!(a.unwrap().to_bytes(), b.unwrap().to_bytes());
    /// ```
    pub fn generate_with(
        params: &TokenParams,
        private_key: &Key,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        client_to_server_key: &Key,
        server_to_client_key: &Key,
    ) -> Result<Self, TokenError> {
        let server_addresses = ServerAddresses::new(&params.server_addresses)?;
        let internal_addresses = if params.internal_server_addresses.is_empty() {
            server_addresses
        } else {
            ServerAddresses::new(&params.internal_server_addresses)?
        };
        let expire_timestamp = params
            .create_timestamp
            .saturating_add(params.expire_seconds);
        let private = PrivateConnectToken {
            client_id: params.client_id,
            timeout_seconds: params.timeout_seconds,
            server_addresses: internal_addresses,
            client_to_server_key: *client_to_server_key,
            server_to_client_key: *server_to_client_key,
            user_data: params.user_data,
        };
        let private_data = Box::new(private.encrypt_with(
            params.protocol_id,
            expire_timestamp,
            nonce,
            private_key,
            params.layout,
        ));
        Ok(Self {
            client_id: params.client_id,
            protocol_id: params.protocol_id,
            create_timestamp: params.create_timestamp,
            expire_timestamp,
            nonce: *nonce,
            private_data,
            timeout_seconds: params.timeout_seconds,
            server_addresses,
            client_to_server_key: SecretKey(*client_to_server_key),
            server_to_client_key: SecretKey(*server_to_client_key),
            layout: params.layout,
        })
    }

    /// The byte layout the token was issued or read in; a client connecting with it uses
    /// the same.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The client's id: in [`Layout::Renetcode`] the public copy the token carries
    /// (servers trust only the private part's); the standard's public part has none, so
    /// a token read from standard bytes gives 0.
    pub fn client_id(&self) -> u64 {
        self.client_id
    }
    /// The protocol id the token was issued for.
    pub fn protocol_id(&self) -> u64 {
        self.protocol_id
    }
    /// When it was issued, seconds since the Unix epoch.
    pub fn create_timestamp(&self) -> u64 {
        self.create_timestamp
    }
    /// When servers stop accepting it, seconds since the Unix epoch.
    pub fn expire_timestamp(&self) -> u64 {
        self.expire_timestamp
    }
    /// Seconds without a packet before the connection drops (zero or negative: never).
    pub fn timeout_seconds(&self) -> i32 {
        self.timeout_seconds
    }
    /// The servers to try, in order.
    pub fn server_addresses(&self) -> &[SocketAddr] {
        self.server_addresses.as_slice()
    }
    /// The key of client-to-server packets.
    pub fn client_to_server_key(&self) -> &Key {
        &self.client_to_server_key.0
    }
    /// The key of server-to-client packets.
    pub fn server_to_client_key(&self) -> &Key {
        &self.server_to_client_key.0
    }
    /// The XChaCha20 nonce of the private part.
    pub fn nonce(&self) -> &[u8; CONNECT_TOKEN_NONCE_BYTES] {
        &self.nonce
    }
    /// The encrypted private part, as sent in connection requests.
    pub fn private_data(&self) -> &[u8; CONNECT_TOKEN_PRIVATE_BYTES] {
        &self.private_data
    }

    /// The token's bytes in its [`Layout`] (see WIRE.md). The standard's: version,
    /// protocol id, create and expire timestamps, nonce, private part, timeout, server
    /// addresses, the two keys, zeros to 2048 bytes. `renetcode`'s: the client id, then the
    /// same fields (IPv6 addresses in network byte order), unpadded.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(CONNECT_TOKEN_BYTES);
        if self.layout == Layout::Renetcode {
            out.extend_from_slice(&self.client_id.to_le_bytes());
        }
        out.extend_from_slice(&VERSION_INFO);
        out.extend_from_slice(&self.protocol_id.to_le_bytes());
        out.extend_from_slice(&self.create_timestamp.to_le_bytes());
        out.extend_from_slice(&self.expire_timestamp.to_le_bytes());
        out.extend_from_slice(&self.nonce);
        out.extend_from_slice(&self.private_data[..]);
        out.extend_from_slice(&self.timeout_seconds.to_le_bytes());
        write_addresses(&mut out, &self.server_addresses, self.layout);
        out.extend_from_slice(&self.client_to_server_key.0);
        out.extend_from_slice(&self.server_to_client_key.0);
        if self.layout == Layout::Standard {
            // At most 13 + 24 + 24 + 1024 + 8 + 19 * 32 + 64 = 1765 bytes: it always fits.
            out.resize(CONNECT_TOKEN_BYTES, 0);
        }
        out
    }

    /// Reads a token in the standard's layout, as any standard backend writes it (and
    /// [`ConnectToken::to_bytes`] of a [`Layout::Standard`] token).
    ///
    /// # Errors
    /// See [`ConnectToken::from_bytes_with`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenError> {
        Self::from_bytes_with(bytes, Layout::Standard)
    }

    /// Reads a token written in `layout` (for [`Layout::Renetcode`], by `renetcode`'s
    /// `ConnectToken::write`).
    ///
    /// # Errors
    /// [`TokenError::LayoutMismatch`] for a token in the other layout;
    /// [`TokenError::Truncated`], [`TokenError::TrailingBytes`], [`TokenError::WrongVersion`],
    /// [`TokenError::ServerAddressCount`], [`TokenError::AddressType`] or
    /// [`TokenError::BadTimestamps`] (created after it expires): the standard's
    /// *invalid connect token*. The standard's padding is not checked, as the C reference
    /// does not check it.
    ///
    /// ```
    /// use netser_transport::netcode::{ConnectToken, Layout, TokenError, TokenParams};
    /// let params = TokenParams {
    ///     layout: Layout::Renetcode,
    ///     ..TokenParams::new(5, vec!["[::1]:40000".parse().unwrap()], 1_000)
    /// };
    /// let bytes = ConnectToken::generate(&params, &[1; 32]).unwrap().to_bytes();
    /// assert!(ConnectToken::from_bytes_with(&bytes, Layout::Renetcode).is_ok());
    /// assert_eq!(
    ///     ConnectToken::from_bytes(&bytes),
    ///     Err(TokenError::LayoutMismatch { expected: Layout::Standard, found: Layout::Renetcode })
    /// );
    /// ```
    pub fn from_bytes_with(bytes: &[u8], layout: Layout) -> Result<Self, TokenError> {
        let mismatch = TokenError::LayoutMismatch {
            expected: layout,
            found: layout.other(),
        };
        let mut r = Reader(bytes);
        let client_id = match layout {
            Layout::Standard => {
                if bytes.len() != CONNECT_TOKEN_BYTES {
                    // renetcode's tokens start with the client id, then the version.
                    if bytes.get(8..21) == Some(&VERSION_INFO[..]) {
                        return Err(mismatch);
                    }
                    return Err(if bytes.len() < CONNECT_TOKEN_BYTES {
                        TokenError::Truncated
                    } else {
                        TokenError::TrailingBytes {
                            count: bytes.len() - CONNECT_TOKEN_BYTES,
                        }
                    });
                }
                0
            }
            Layout::Renetcode => {
                if bytes.len() == CONNECT_TOKEN_BYTES && bytes[..13] == VERSION_INFO {
                    return Err(mismatch);
                }
                r.u64()?
            }
        };
        if r.array::<13>()? != VERSION_INFO {
            return Err(TokenError::WrongVersion);
        }
        let protocol_id = r.u64()?;
        let create_timestamp = r.u64()?;
        let expire_timestamp = r.u64()?;
        let nonce = r.array()?;
        let private_data = Box::new(r.array()?);
        let timeout_seconds = r.u32()? as i32;
        let server_addresses = read_addresses(&mut r, layout)?;
        let client_to_server_key = r.array()?;
        let server_to_client_key = r.array()?;
        if layout == Layout::Renetcode && !r.0.is_empty() {
            return Err(TokenError::TrailingBytes { count: r.0.len() });
        }
        if create_timestamp > expire_timestamp {
            return Err(TokenError::BadTimestamps);
        }
        Ok(Self {
            client_id,
            protocol_id,
            create_timestamp,
            expire_timestamp,
            nonce,
            private_data,
            timeout_seconds,
            server_addresses,
            client_to_server_key: SecretKey(client_to_server_key),
            server_to_client_key: SecretKey(server_to_client_key),
            layout,
        })
    }
}

/// The private part of a connect token, as the server reads it after decryption.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateConnectToken {
    /// The client's globally unique id.
    pub client_id: u64,
    /// Seconds without a packet before the connection drops (zero or negative: never).
    pub timeout_seconds: i32,
    /// The servers the token is good for.
    pub server_addresses: ServerAddresses,
    /// Key of client-to-server packets.
    pub client_to_server_key: Key,
    /// Key of server-to-client packets.
    pub server_to_client_key: Key,
    /// The backend's data for the server.
    pub user_data: [u8; USER_DATA_BYTES],
}

impl core::fmt::Debug for PrivateConnectToken {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrivateConnectToken")
            .field("client_id", &self.client_id)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("server_addresses", &self.server_addresses)
            .finish_non_exhaustive()
    }
}

/// The associated data of the private token: version, protocol id, expiry.
fn token_aad(protocol_id: u64, expire_timestamp: u64) -> [u8; 29] {
    let mut aad = [0u8; 29];
    aad[..13].copy_from_slice(&VERSION_INFO);
    aad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    aad[21..].copy_from_slice(&expire_timestamp.to_le_bytes());
    aad
}

impl PrivateConnectToken {
    /// The 1024 encrypted bytes in the standard's layout: the fields, zero padding to 1008
    /// bytes, the 16-byte tag.
    pub fn encrypt(
        &self,
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
    ) -> [u8; CONNECT_TOKEN_PRIVATE_BYTES] {
        self.encrypt_with(
            protocol_id,
            expire_timestamp,
            nonce,
            private_key,
            Layout::Standard,
        )
    }

    /// The 1008 bytes before encryption in `layout` (the fields, then zeros).
    ///
    /// ```
    /// use netser_transport::netcode::{ConnectToken, Layout, PrivateConnectToken, TokenParams};
    /// let params = TokenParams { client_id: 3, ..TokenParams::new(5, vec!["[::1]:9".parse().unwrap()], 0) };
    /// let token = ConnectToken::generate(&params, &[1; 32]).unwrap();
    /// let private = PrivateConnectToken::decrypt(
    ///     token.private_data(), 5, token.expire_timestamp(), token.nonce(), &[1; 32],
    /// ).unwrap();
    /// let plain = private.to_plaintext(Layout::Standard);
    /// assert_eq!(plain[..8], 3u64.to_le_bytes());
    /// assert_eq!(plain.len(), 1008);
    /// ```
    pub fn to_plaintext(&self, layout: Layout) -> [u8; CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES] {
        let mut plain = Vec::with_capacity(CONNECT_TOKEN_PRIVATE_BYTES);
        plain.extend_from_slice(&self.client_id.to_le_bytes());
        plain.extend_from_slice(&self.timeout_seconds.to_le_bytes());
        write_addresses(&mut plain, &self.server_addresses, layout);
        plain.extend_from_slice(&self.client_to_server_key);
        plain.extend_from_slice(&self.server_to_client_key);
        plain.extend_from_slice(&self.user_data);
        // At most 8 + 4 + 4 + 32 * 19 + 64 + 256 = 944 bytes, so it always fits.
        let mut buffer = [0u8; CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES];
        buffer[..plain.len()].copy_from_slice(&plain);
        buffer
    }

    /// [`PrivateConnectToken::encrypt`] with the server addresses in `layout`.
    pub fn encrypt_with(
        &self,
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
        layout: Layout,
    ) -> [u8; CONNECT_TOKEN_PRIVATE_BYTES] {
        let mut buffer = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
        buffer[..CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES]
            .copy_from_slice(&self.to_plaintext(layout));
        encrypt_xnonce(
            &mut buffer,
            nonce,
            private_key,
            &token_aad(protocol_id, expire_timestamp),
        );
        buffer
    }

    /// Decrypts and reads the private part of a connection request, in the standard's
    /// layout.
    ///
    /// # Errors
    /// [`TokenError::DoesNotDecrypt`] if it does not authenticate; the read errors of
    /// [`ConnectToken::from_bytes`] if the decrypted fields are malformed.
    pub fn decrypt(
        data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES],
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
    ) -> Result<Self, TokenError> {
        Self::decrypt_with(
            data,
            protocol_id,
            expire_timestamp,
            nonce,
            private_key,
            Layout::Standard,
        )
    }

    /// [`PrivateConnectToken::decrypt`] with the server addresses read in `layout`.
    ///
    /// # Errors
    /// As [`PrivateConnectToken::decrypt`].
    pub fn decrypt_with(
        data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES],
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
        layout: Layout,
    ) -> Result<Self, TokenError> {
        let mut buffer = *data;
        if !decrypt_xnonce(
            &mut buffer,
            nonce,
            private_key,
            &token_aad(protocol_id, expire_timestamp),
        ) {
            return Err(TokenError::DoesNotDecrypt);
        }
        let mut r = Reader(&buffer[..CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES]);
        Ok(Self {
            client_id: r.u64()?,
            timeout_seconds: r.u32()? as i32,
            server_addresses: read_addresses(&mut r, layout)?,
            client_to_server_key: r.array::<KEY_BYTES>()?,
            server_to_client_key: r.array::<KEY_BYTES>()?,
            user_data: r.array()?,
        })
    }

    /// The 16-byte tag of an encrypted private part: what the server remembers to tie a
    /// token to the first address that used it.
    pub fn mac_of(data: &[u8; CONNECT_TOKEN_PRIVATE_BYTES]) -> [u8; MAC_BYTES] {
        let mut mac = [0u8; MAC_BYTES];
        mac.copy_from_slice(&data[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..]);
        mac
    }
}

fn write_addresses(out: &mut Vec<u8>, addresses: &ServerAddresses, layout: Layout) {
    out.extend_from_slice(&(addresses.len as u32).to_le_bytes());
    for address in addresses.as_slice() {
        match address.ip() {
            IpAddr::V4(ip) => {
                out.push(ADDRESS_IPV4);
                out.extend_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                out.push(ADDRESS_IPV6);
                out.extend_from_slice(&layout.ipv6_bytes(&ip));
            }
        }
        out.extend_from_slice(&address.port().to_le_bytes());
    }
}

fn read_addresses(r: &mut Reader<'_>, layout: Layout) -> Result<ServerAddresses, TokenError> {
    let count = r.u32()? as usize;
    if count == 0 || count > MAX_SERVER_ADDRESSES {
        return Err(TokenError::ServerAddressCount { count });
    }
    let mut list = ServerAddresses::empty();
    for slot in &mut list.addresses[..count] {
        let ip = match r.u8()? {
            ADDRESS_IPV4 => IpAddr::V4(Ipv4Addr::from(r.array::<4>()?)),
            ADDRESS_IPV6 => IpAddr::V6(layout.ipv6_from(r.array::<16>()?)),
            kind => return Err(TokenError::AddressType { kind }),
        };
        *slot = SocketAddr::new(ip, r.u16()?);
    }
    list.len = count as u8;
    Ok(list)
}

/// Little-endian reads that fail with [`TokenError::Truncated`].
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn array<const N: usize>(&mut self) -> Result<[u8; N], TokenError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(TokenError::Truncated)?;
        self.0 = rest;
        Ok(*head)
    }
    fn u8(&mut self) -> Result<u8, TokenError> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, TokenError> {
        self.array().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Result<u32, TokenError> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, TokenError> {
        self.array().map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TokenError::Random` returns the `RandomError` from `source()`.
    #[test]
    fn random_error_is_the_source() {
        use std::error::Error;
        let random = RandomError(getrandom::Error::UNSUPPORTED);
        crate::assert_source(&TokenError::Random(random), &random);
        assert!(TokenError::Truncated.source().is_none());
    }

    fn params() -> TokenParams {
        TokenParams {
            client_id: 5,
            user_data: [9; USER_DATA_BYTES],
            ..TokenParams::new(
                77,
                vec![
                    "10.0.0.1:4000".parse().unwrap(),
                    "[2001:db8::7]:5000".parse().unwrap(),
                ],
                1000,
            )
        }
    }

    #[test]
    fn private_part_decrypts_only_with_its_key_and_aad() {
        let key = [3u8; 32];
        let token = ConnectToken::generate(&params(), &key).unwrap();
        let private = PrivateConnectToken::decrypt(
            token.private_data(),
            77,
            token.expire_timestamp(),
            token.nonce(),
            &key,
        )
        .unwrap();
        assert_eq!(private.client_id, 5);
        assert_eq!(private.user_data, [9; USER_DATA_BYTES]);
        assert_eq!(
            private.server_addresses.as_slice(),
            token.server_addresses()
        );
        assert_eq!(&private.client_to_server_key, token.client_to_server_key());
        for (protocol, expire, key) in [(78, 1300, key), (77, 1301, key), (77, 1300, [4u8; 32])] {
            assert_eq!(
                PrivateConnectToken::decrypt(
                    token.private_data(),
                    protocol,
                    expire,
                    token.nonce(),
                    &key
                ),
                Err(TokenError::DoesNotDecrypt)
            );
        }
    }

    #[test]
    fn bytes_round_trip_and_refusals() {
        for (layout, head) in [(Layout::Standard, 0), (Layout::Renetcode, 8)] {
            let params = TokenParams { layout, ..params() };
            let token = ConnectToken::generate(&params, &[1u8; 32]).unwrap();
            let bytes = token.to_bytes();
            let read = |b: &[u8]| ConnectToken::from_bytes_with(b, layout);
            let back = read(&bytes).unwrap();
            assert_eq!(back.to_bytes(), bytes);
            assert_eq!(back.client_id(), if head == 0 { 0 } else { 5 });
            for cut in 0..bytes.len() {
                assert_eq!(read(&bytes[..cut]), Err(TokenError::Truncated), "cut {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(read(&longer), Err(TokenError::TrailingBytes { count: 1 }));
            let mut version = bytes.clone();
            version[head + 11] = b'1';
            assert_eq!(read(&version), Err(TokenError::WrongVersion));
            let count_at = head + 13 + 24 + 24 + CONNECT_TOKEN_PRIVATE_BYTES + 4;
            let mut count = bytes.clone();
            count[count_at] = 33;
            assert_eq!(
                read(&count),
                Err(TokenError::ServerAddressCount { count: 33 })
            );
            let mut kind = bytes.clone();
            kind[count_at + 4] = 3;
            assert_eq!(read(&kind), Err(TokenError::AddressType { kind: 3 }));
            let mut create = bytes.clone();
            create[head + 13 + 8..head + 13 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
            assert_eq!(read(&create), Err(TokenError::BadTimestamps));
            // Read in the other layout: a mismatch that names both layouts.
            assert_eq!(
                ConnectToken::from_bytes_with(&bytes, layout.other()),
                Err(TokenError::LayoutMismatch {
                    expected: layout.other(),
                    found: layout
                })
            );
        }
    }

    /// The IPv6 address `[::1]` is eight little-endian groups in the standard's layout
    /// and network order in renetcode's, in the public and the private part.
    #[test]
    fn ipv6_in_each_layout() {
        let v6: SocketAddr = "[::1]:40000".parse().unwrap();
        for (layout, head, tail) in [
            (Layout::Standard, 0, [1u8, 0]),
            (Layout::Renetcode, 8, [0, 1]),
        ] {
            let params = TokenParams {
                layout,
                ..TokenParams::new(77, vec![v6], 1000)
            };
            let token = ConnectToken::generate(&params, &[1u8; 32]).unwrap();
            let bytes = token.to_bytes();
            let at = head + 13 + 24 + 24 + CONNECT_TOKEN_PRIVATE_BYTES + 4 + 4;
            assert_eq!(bytes[at], ADDRESS_IPV6);
            assert_eq!(bytes[at + 15..at + 17], tail);
            assert_eq!(bytes[at + 17..at + 19], 40000u16.to_le_bytes());
            let private = PrivateConnectToken::decrypt_with(
                token.private_data(),
                77,
                token.expire_timestamp(),
                token.nonce(),
                &[1u8; 32],
                layout,
            )
            .unwrap();
            assert_eq!(private.server_addresses.as_slice(), &[v6]);
            assert_eq!(private.to_plaintext(layout)[17 + 14..17 + 16], tail);
        }
    }

    #[test]
    fn address_count_bounds() {
        let mut p = params();
        p.server_addresses.clear();
        assert_eq!(
            ConnectToken::generate(&p, &[0; 32]),
            Err(TokenError::ServerAddressCount { count: 0 })
        );
        p.server_addresses = vec!["[::1]:1".parse().unwrap(); 33];
        assert_eq!(
            ConnectToken::generate(&p, &[0; 32]),
            Err(TokenError::ServerAddressCount { count: 33 })
        );
        // 32 IPv6 addresses still fit in the private part.
        p.server_addresses.pop();
        let token = ConnectToken::generate(&p, &[0; 32]).unwrap();
        let private =
            PrivateConnectToken::decrypt(token.private_data(), 77, 1300, token.nonce(), &[0; 32])
                .unwrap();
        assert_eq!(private.server_addresses.as_slice().len(), 32);
    }
}
