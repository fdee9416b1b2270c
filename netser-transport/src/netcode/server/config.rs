//! How a [`NetcodeServer`](super::NetcodeServer) is set up, and the bounds of its settings.

use std::net::SocketAddr;

#[cfg(doc)]
use super::NetcodeServer;
use crate::netcode::crypto::{Key, RandomError};
use crate::netcode::Layout;
#[cfg(doc)]
use crate::netcode::Refusal;

/// Most client slots one server may have.
pub const MAX_CLIENTS: usize = 4096;

/// Most handshakes in progress one server may allow ([`ServerConfig::max_pending`]):
/// 65536, far above any real join rate, and low enough that sizes derived from it
/// (`max_clients + max_pending` token uses) cannot overflow.
pub const MAX_PENDING: usize = 65_536;

/// How a [`NetcodeServer`] is set up.
///
/// ```
/// use netser_transport::netcode::ServerConfig;
/// let config = ServerConfig {
///     max_clients: 16,
///     ..ServerConfig::new(0x1234, [0u8; 32], vec!["203.0.113.5:40000".parse().unwrap()])
/// };
/// assert_eq!(config.max_pending, 256);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The game's protocol id; requests for another are refused.
    pub protocol_id: u64,
    /// The key shared with the backend that issues connect tokens.
    pub private_key: Key,
    /// The addresses clients reach this server at; a token must list one of them.
    pub public_addresses: Vec<SocketAddr>,
    /// Client slots, 1 to [`MAX_CLIENTS`] (default 64). It also bounds the events waiting
    /// for [`NetcodeServer::poll_event`]: at `2 * max_clients + 16` connect events, new
    /// clients are refused ([`Refusal::EventQueueFull`]).
    pub max_clients: usize,
    /// Most handshakes in progress at once, 1 to [`MAX_PENDING`] (default 256); beyond it
    /// requests are refused, which bounds the memory a flood of valid tokens can take.
    pub max_pending: usize,
    /// Most bytes of datagrams queued for `poll_transmit` (default 4 MiB); beyond it
    /// packets are not queued (counted in [`NetcodeServer::dropped_datagrams`]).
    pub max_outbox_bytes: usize,
    /// The byte layout of tokens and packets (default [`Layout::Standard`], the netcode
    /// standard's); [`Layout::Renetcode`] to serve `renetcode` clients and tokens. It
    /// gives the payload limit of [`NetcodeServer::send_payload`] and how the private
    /// token's IPv6 addresses are read.
    pub layout: Layout,
}

impl core::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("protocol_id", &self.protocol_id)
            .field("public_addresses", &self.public_addresses)
            .field("max_clients", &self.max_clients)
            .field("max_pending", &self.max_pending)
            .field("max_outbox_bytes", &self.max_outbox_bytes)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// A configuration with the defaults: 64 slots, 256 pending handshakes, 4 MiB outbox,
    /// the standard's layout.
    pub fn new(protocol_id: u64, private_key: Key, public_addresses: Vec<SocketAddr>) -> Self {
        Self {
            protocol_id,
            private_key,
            public_addresses,
            max_clients: 64,
            max_pending: 256,
            max_outbox_bytes: 4 << 20,
            layout: Layout::Standard,
        }
    }
}

/// Why a [`ServerConfig`] was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerConfigError {
    /// No public address: no token could ever name this server.
    NoPublicAddress,
    /// `max_clients` outside 1..=[`MAX_CLIENTS`].
    MaxClients(usize),
    /// `max_pending` outside 1..=[`MAX_PENDING`].
    MaxPending,
    /// `max_outbox_bytes` below one packet.
    MaxOutboxBytes(usize),
    /// No randomness for the challenge key.
    Random(RandomError),
}

impl core::fmt::Display for ServerConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ServerConfigError::NoPublicAddress => {
                write!(f, "a netcode server needs at least one public address")
            }
            ServerConfigError::MaxClients(n) => {
                write!(f, "max_clients is {n}; it must be 1 to {MAX_CLIENTS}")
            }
            ServerConfigError::MaxPending => {
                write!(f, "max_pending must be 1 to {MAX_PENDING}")
            }
            ServerConfigError::MaxOutboxBytes(n) => {
                write!(
                    f,
                    "max_outbox_bytes is {n}; it must hold one packet ({} bytes)",
                    crate::netcode::MAX_PACKET_BYTES
                )
            }
            ServerConfigError::Random(_) => {
                write!(f, "no random bytes for the challenge key")
            }
        }
    }
}

impl std::error::Error for ServerConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerConfigError::Random(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netcode::NetcodeServer;

    /// `ServerConfigError::Random` returns the `RandomError` from `source()`.
    #[test]
    fn random_error_is_the_source() {
        use std::error::Error;
        let random = RandomError(getrandom::Error::UNSUPPORTED);
        crate::assert_source(&ServerConfigError::Random(random), &random);
        assert!(ServerConfigError::MaxPending.source().is_none());
    }

    /// `max_pending = usize::MAX` passed and overflowed `max_clients + max_pending` in
    /// `NetcodeServer::new`; now it is refused, and the largest value is accepted.
    #[test]
    fn max_pending_is_bounded() {
        let config = |max_pending| ServerConfig {
            max_clients: MAX_CLIENTS,
            max_pending,
            ..ServerConfig::new(1, [0; 32], vec!["127.0.0.1:40000".parse().unwrap()])
        };
        assert!(NetcodeServer::new(0.0, std::time::UNIX_EPOCH, config(MAX_PENDING)).is_ok());
        for n in [MAX_PENDING + 1, usize::MAX] {
            assert_eq!(
                NetcodeServer::new(0.0, std::time::UNIX_EPOCH, config(n)).err(),
                Some(ServerConfigError::MaxPending)
            );
        }
    }
}
