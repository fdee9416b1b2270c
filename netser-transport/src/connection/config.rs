//! The connection's configuration and its checks.

use crate::channel::{ChannelConfig, ChannelConfigError, ChannelKind};
use crate::chunk::{ChunkConfig, ChunkError};
use crate::endpoint::header::MAX_PACKET_HEADER_BYTES;
use crate::endpoint::{self};

/// The default datagram budget: 1200 bytes, under any real path MTU.
pub const DEFAULT_MTU: usize = 1200;

/// The default largest block message: 256 KiB.
pub const DEFAULT_MAX_BLOCK_SIZE: usize = 256 * 1024;

/// The default blocks in flight at once, each way
/// ([`ChunkConfig::max_chunks_in_flight`] of [`ConnectionConfig::chunk`]): 32. A block
/// costs at least a round trip, and under loss two or three; with one in flight, a
/// path with a 2-second round trip delivers a block every 4 to 6 seconds, whatever its
/// bandwidth. What they hold is bounded in bytes by [`DEFAULT_BYTES_IN_FLIGHT`].
///
/// ```
/// assert_eq!(netser_transport::connection::DEFAULT_BLOCKS_IN_FLIGHT, 32);
/// ```
pub const DEFAULT_BLOCKS_IN_FLIGHT: usize = 32;

/// The default bytes of blocks in flight at once, each way
/// ([`ChunkConfig::max_bytes_in_flight`] of [`ConnectionConfig::chunk`]): 256 KiB, one
/// block of the largest default size. 32 blocks of 4 KiB fill a long path; a block
/// larger than this still goes, alone. Each side then holds at most this (the sender)
/// or this plus one largest block (the receiver, which always accepts the oldest) of
/// blocks in flight, not 32 times the largest block.
///
/// ```
/// assert_eq!(netser_transport::connection::DEFAULT_BYTES_IN_FLIGHT, 256 * 1024);
/// ```
pub const DEFAULT_BYTES_IN_FLIGHT: usize = 256 * 1024;

/// Blocks in flight in [`ConnectionConfig::for_many_clients`].
const MANY_CLIENTS_BLOCKS_IN_FLIGHT: usize = 2;

/// The default [`ConnectionConfig::ack_delay`]: 50 ms.
pub const DEFAULT_ACK_DELAY: f64 = 0.05;

/// Queues and messages per packet of each channel in
/// [`ConnectionConfig::for_many_clients`].
const MANY_CLIENTS_QUEUE: usize = 64;

/// Most channels per connection.
pub const MAX_CHANNELS: usize = 64;

/// A [`Connection`](super::Connection)'s settings. Both sides must use the same channel
/// list, `mtu`-independent wire settings (each channel's kind, `receive_queue_size` and
/// `max_messages_per_packet`), and chunk `slice_size` / `max_slices` / `first_chunk_id`
/// / `max_chunks_in_flight` / `max_bytes_in_flight`.
///
/// The default has two channels: 0 reliable-ordered, 1 unreliable.
///
/// ```
/// use netser_transport::channel::{ChannelConfig, ChannelKind};
/// use netser_transport::connection::ConnectionConfig;
/// let config = ConnectionConfig {
///     channels: vec![
///         ChannelConfig::reliable_ordered(),
///         ChannelConfig::new(ChannelKind::UnreliableSequenced),
///     ],
///     ..ConnectionConfig::default()
/// };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.mtu, 1200);
/// assert_eq!(config.max_block_size, 256 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionConfig {
    /// The channels, indexed by [`ChannelId`](crate::channel::ChannelId). `1..=64`.
    pub channels: Vec<ChannelConfig>,
    /// Largest datagram the connection produces, in bytes (endpoint header included),
    /// `64..=65507`. Default 1200. Layers above that wrap datagrams (encryption, netcode)
    /// lower it by their overhead.
    ///
    /// Other fields must agree with it: `endpoint.fragment_above` and
    /// `endpoint.max_packet_size` at least `mtu - 9`, and `chunk.slice_size + 9` at most
    /// `mtu`. [`with_mtu`](Self::with_mtu) sets all of them together.
    pub mtu: usize,
    /// Largest message sent as a block on a reliable channel, in encoded bytes. Default
    /// 256 KiB; at most `chunk.max_chunk_size()`.
    pub max_block_size: usize,
    /// Blocks received and waiting for their turn in their channel. Default 8. When
    /// full, the next block stays unacknowledged in the chunk receiver (the sender
    /// waits) until the user takes messages.
    pub max_received_blocks: usize,
    /// Deprecated: ignored, and no longer validated. Reliable channels now resend from
    /// the endpoint's estimates (its retransmission timeout, and the acks of later
    /// packets), which already allow for a long round trip; a channel's `resend_delay`
    /// applies only until the first ack. The field stays so that existing
    /// configurations still build; it will go in the next breaking release. Default 1.25.
    pub resend_rtt_factor: f64,
    /// Budget for packets of messages, in bytes per second (each datagram charged its
    /// length plus 28 bytes of IP and UDP headers). Default 256 000 (about 2 Mbit/s).
    /// It also bounds the packets in flight to what the endpoint's sent and received
    /// windows (1024 packets by default) can track over a long round trip. Blocks have
    /// their own budget, `chunk.bandwidth`; packets of acks only are never held back.
    pub bandwidth: f64,
    /// Most budget saved up while idle, in seconds of `bandwidth` (at least one
    /// packet). Default 0.1.
    pub budget_window: f64,
    /// Longest the connection holds an ack for a packet of messages, in seconds, waiting
    /// for a packet of its own to carry it, before it sends a packet of acks only (as
    /// TCP's delayed ack and QUIC's `max_ack_delay`). Default 0.05: a server sending 20
    /// or more packets a second, or a client sending inputs every frame, acks in its
    /// own packets and sends no packet of acks only. The ack goes at once when 16
    /// packets wait for it (acks older than 32 packets cannot be sent at all), or when a
    /// packet arrives with the one before it missing or after a newer one (as in QUIC:
    /// the peer learns of a loss without the delay).
    /// `0.0..=1.0`. The time held is reported to the peer with the ack (18 bits in a
    /// packet that acks something new), which subtracts it from its RTT. 0 acks every
    /// packet of messages at once and reports nothing: the packets are bit for bit those
    /// of a connection without ack delays. It is checked when the
    /// connection is polled: a driver polls by
    /// [`poll_timeout`](super::Connection::poll_timeout), or each frame, so an ack waits
    /// at most this plus a frame.
    pub ack_delay: f64,
    /// The packet endpoint's settings. `fragment_above` must be at least
    /// `mtu - 9` (the connection never fragments at the endpoint).
    pub endpoint: endpoint::Config,
    /// The block path's settings (slices, bandwidth, resends, blocks in flight). Once
    /// the RTT is known, a slice is resent after `chunk.resend_rtt_factor` times the
    /// endpoint's retransmission timeout ([`Stats::rto`](crate::endpoint::Stats::rto)).
    /// `chunk.max_chunks_in_flight` blocks travel at once, default
    /// [`DEFAULT_BLOCKS_IN_FLIGHT`] (32, where [`ChunkConfig`]'s own default is the
    /// article's 1), within `chunk.max_bytes_in_flight` bytes, default
    /// [`DEFAULT_BYTES_IN_FLIGHT`] (256 KiB; a larger block goes alone); the receiver
    /// refuses slices of blocks past either (but always accepts the oldest block).
    pub chunk: ChunkConfig,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        let payload = DEFAULT_MTU - MAX_PACKET_HEADER_BYTES;
        Self {
            channels: vec![
                ChannelConfig::reliable_ordered(),
                ChannelConfig::new(ChannelKind::Unreliable),
            ],
            mtu: DEFAULT_MTU,
            max_block_size: DEFAULT_MAX_BLOCK_SIZE,
            max_received_blocks: 8,
            resend_rtt_factor: 1.25,
            bandwidth: 256_000.0,
            budget_window: 0.1,
            ack_delay: DEFAULT_ACK_DELAY,
            endpoint: endpoint::Config {
                max_packet_size: payload,
                fragment_above: payload,
                sent_packets_buffer_size: 1024,
                received_packets_buffer_size: 1024,
                max_reassembly_bytes: 2 * endpoint::Config::default().fragment_size,
                ..endpoint::Config::default()
            },
            chunk: ChunkConfig {
                max_chunks_in_flight: DEFAULT_BLOCKS_IN_FLIGHT,
                max_bytes_in_flight: DEFAULT_BYTES_IN_FLIGHT,
                ..ChunkConfig::default()
            },
        }
    }
}

impl ConnectionConfig {
    /// The default settings with these channels.
    ///
    /// ```
    /// use netser_transport::channel::ChannelConfig;
    /// use netser_transport::connection::ConnectionConfig;
    /// let config = ConnectionConfig::with_channels(vec![ChannelConfig::reliable_ordered()]);
    /// assert_eq!(config.channels.len(), 1);
    /// ```
    pub fn with_channels(channels: Vec<ChannelConfig>) -> Self {
        Self {
            channels,
            ..Self::default()
        }
    }

    /// This configuration with `mtu` and the fields that depend on it:
    /// `endpoint.fragment_above` and `endpoint.max_packet_size` become `mtu - 9` (the
    /// connection never fragments at the endpoint), `chunk.slice_size` is lowered to
    /// `mtu - 9` if a slice packet would not fit, and `max_block_size` to
    /// `chunk.max_chunk_size()` if the smaller slices cannot carry it. An `mtu` outside
    /// `64..=65507` is kept, and [`validate`](Self::validate) refuses it.
    ///
    /// ```
    /// use netser_transport::connection::ConnectionConfig;
    /// let config = ConnectionConfig::default().with_mtu(576);
    /// assert!(config.validate().is_ok());
    /// assert_eq!(config.endpoint.fragment_above, 567);
    /// assert_eq!(config.chunk.slice_size, 567);
    /// assert_eq!(config.max_block_size, 567 * 256);
    /// // A mismatched mtu set by hand is refused instead.
    /// let by_hand = ConnectionConfig { mtu: 576, ..ConnectionConfig::default() };
    /// assert!(by_hand.validate().is_err());
    /// ```
    pub fn with_mtu(mut self, mtu: usize) -> Self {
        let payload = mtu.saturating_sub(MAX_PACKET_HEADER_BYTES);
        self.mtu = mtu;
        self.endpoint.fragment_above = payload;
        self.endpoint.max_packet_size = payload;
        // The slice header is as long as the endpoint's (9 bytes).
        self.chunk.slice_size = self.chunk.slice_size.min(payload);
        self.max_block_size = self.max_block_size.min(self.chunk.max_chunk_size());
        self
    }

    /// This configuration sized for a server of many clients: each channel's queues
    /// and `max_messages_per_packet` 64 (default 2048 on a reliable channel and 1024
    /// on an unreliable one, and 256), endpoint windows of 256 packets (1024), an RTT
    /// history of 64 samples (512), blocks of at most 16 slices (`max_block_size` 16
    /// slices, 16 KiB with the default 1024-byte slices, where the default is 256 KiB),
    /// two blocks in flight each way within 16 KiB (32 within 256 KiB), two queued to
    /// send and two received waiting (8 and 8). The channel kinds, MTU, bandwidth and
    /// ack delay are kept.
    ///
    /// With the default two channels a connection then holds about 45 KiB once
    /// connected and at most about 0.34 MiB under any load
    /// ([`Connection::memory_bound`](super::Connection::memory_bound)), where the
    /// default holds about 220 KiB and is bounded by about 9.2 MiB (blocks of 256 KiB
    /// queued, in flight and received make most of it): a thousand clients take at
    /// most about 340 MiB, whatever they send and however they ack.
    ///
    /// Both sides of a connection use the same preset: a channel's
    /// `receive_queue_size` and `max_messages_per_packet` are part of the wire
    /// agreement. A game that sends larger blocks (a level, a save) raises the bound
    /// with [`with_max_block_size`](Self::with_max_block_size) on both sides: each
    /// byte of `max_block_size` adds about eight to the bound (two blocks queued, two in
    /// flight, two being received, two waiting).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default().for_many_clients();
    /// assert!(config.validate().is_ok());
    /// assert_eq!(config.max_block_size, 16 * 1024);
    /// let connection: Connection<u32> = Connection::new(0.0, config.clone())?;
    /// assert!(connection.memory_bound() < 400 * 1024);
    ///
    /// // Blocks of up to 64 KiB: the bound grows with them.
    /// let larger: Connection<u32> = Connection::new(0.0, config.with_max_block_size(64 * 1024))?;
    /// assert!(larger.memory_bound() > connection.memory_bound() + 6 * 48 * 1024);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_many_clients(mut self) -> Self {
        for channel in &mut self.channels {
            channel.send_queue_size = MANY_CLIENTS_QUEUE;
            channel.receive_queue_size = MANY_CLIENTS_QUEUE;
            channel.max_messages_per_packet =
                channel.max_messages_per_packet.min(MANY_CLIENTS_QUEUE);
        }
        self.endpoint.sent_packets_buffer_size = 256;
        self.endpoint.received_packets_buffer_size = 256;
        self.endpoint.rtt_history_size = 64;
        self.chunk.max_queued_chunks = 2;
        self.chunk.max_chunks_in_flight = MANY_CLIENTS_BLOCKS_IN_FLIGHT;
        self.max_received_blocks = 2;
        self.chunk.max_slices = 16;
        self.max_block_size = self.chunk.max_chunk_size();
        // Two small blocks, or one of the largest.
        self.chunk.max_bytes_in_flight = self.max_block_size;
        self
    }

    /// This configuration with blocks of up to `max_block_size` bytes: `chunk.max_slices`
    /// raised (or lowered) to the slices that carry it, and `max_block_size` set. Both
    /// sides must agree on `chunk.max_slices`. A size the slices cannot reach
    /// (over `chunk.slice_size` times 8192) is kept, and [`validate`](Self::validate)
    /// refuses it.
    ///
    /// ```
    /// use netser_transport::connection::ConnectionConfig;
    /// let config = ConnectionConfig::default().with_max_block_size(1024 * 1024);
    /// assert!(config.validate().is_ok());
    /// assert_eq!(config.chunk.max_slices, 1024); // 1024-byte slices
    /// ```
    pub fn with_max_block_size(mut self, max_block_size: usize) -> Self {
        let slices = max_block_size.div_ceil(self.chunk.slice_size.max(1));
        self.chunk.max_slices = slices.clamp(1, crate::chunk::MAX_SLICES_LIMIT);
        self.max_block_size = max_block_size;
        self
    }

    /// Payload bytes per packet after the endpoint header: `mtu - 9`.
    pub fn packet_payload_bytes(&self) -> usize {
        self.mtu.saturating_sub(MAX_PACKET_HEADER_BYTES)
    }

    /// Checks every setting.
    ///
    /// # Errors
    /// A [`ConfigError`] for the first one out of range.
    ///
    /// ```
    /// use netser_transport::connection::{ConfigError, ConnectionConfig};
    /// let config = ConnectionConfig { mtu: 20, ..ConnectionConfig::default() };
    /// assert!(matches!(config.validate(), Err(ConfigError::Field { field: "mtu", .. })));
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.channels.is_empty() || self.channels.len() > MAX_CHANNELS {
            return Err(ConfigError::field("channels", "a list of 1 to 64 channels"));
        }
        for (index, channel) in self.channels.iter().enumerate() {
            channel
                .validate()
                .map_err(|error| ConfigError::Channel { index, error })?;
        }
        // Before the endpoint and chunk: a bad mtu is named as such, not through the
        // fields derived from it.
        if !(64..=65_507).contains(&self.mtu) {
            return Err(ConfigError::field("mtu", "in 64..=65507 bytes"));
        }
        self.endpoint.validate().map_err(ConfigError::Endpoint)?;
        self.chunk.validate().map_err(ConfigError::Chunk)?;
        if self.endpoint.fragment_above < self.packet_payload_bytes()
            || self.endpoint.max_packet_size < self.packet_payload_bytes()
        {
            return Err(ConfigError::field(
                "endpoint",
                "set with fragment_above and max_packet_size of at least mtu - 9 \
                 (see ConnectionConfig::with_mtu)",
            ));
        }
        if self.chunk.max_slice_packet_size() > self.mtu {
            return Err(ConfigError::field(
                "chunk",
                "set with slice_size at most mtu - 9, so a slice packet fits the mtu \
                 (see ConnectionConfig::with_mtu)",
            ));
        }
        if self.max_block_size == 0 || self.max_block_size > self.chunk.max_chunk_size() {
            return Err(ConfigError::field(
                "max_block_size",
                "in 1..=chunk.max_chunk_size() bytes",
            ));
        }
        if !(self.bandwidth.is_finite() && self.bandwidth > 0.0) {
            return Err(ConfigError::field("bandwidth", "finite and positive"));
        }
        if !(self.budget_window.is_finite() && self.budget_window > 0.0) {
            return Err(ConfigError::field("budget_window", "finite and positive"));
        }
        if !(0.0..=1.0).contains(&self.ack_delay) {
            return Err(ConfigError::field("ack_delay", "in 0.0..=1.0 seconds"));
        }
        if self.max_received_blocks == 0 {
            return Err(ConfigError::field("max_received_blocks", "at least 1"));
        }
        Ok(())
    }
}

/// A [`ConnectionConfig`] that cannot be used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A channel's settings.
    Channel {
        /// The channel's index.
        index: usize,
        /// What is wrong.
        error: ChannelConfigError,
    },
    /// The endpoint's settings.
    Endpoint(endpoint::ConfigError),
    /// The chunk settings.
    Chunk(ChunkError),
    /// A connection setting.
    Field {
        /// The field.
        field: &'static str,
        /// What it must be.
        reason: &'static str,
    },
}

impl ConfigError {
    fn field(field: &'static str, reason: &'static str) -> Self {
        Self::Field { field, reason }
    }
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Channel { index, .. } => {
                write!(f, "connection config: channel {index} is invalid")
            }
            Self::Endpoint(_) => write!(f, "connection config: endpoint settings are invalid"),
            Self::Chunk(_) => write!(f, "connection config: chunk settings are invalid"),
            Self::Field { field, reason } => {
                write!(f, "connection config: {field} must be {reason}")
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Channel { error, .. } => Some(error),
            Self::Endpoint(error) => Some(error),
            Self::Chunk(error) => Some(error),
            Self::Field { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// The wrapping `ConfigError`s return their inner error from `source()` and do not
    /// repeat it in Display.
    #[test]
    fn config_error_sources() {
        let channel = crate::channel::ChannelConfig {
            send_queue_size: 3,
            ..crate::channel::ChannelConfig::reliable_unordered()
        }
        .validate()
        .unwrap_err();
        let outer = ConfigError::Channel {
            index: 2,
            error: channel.clone(),
        };
        crate::assert_source(&outer, &channel);
        assert!(outer.to_string().contains("channel 2"));
        let endpoint = endpoint::ConfigError {
            field: "mtu",
            expected: "larger",
        };
        crate::assert_source(&ConfigError::Endpoint(endpoint.clone()), &endpoint);
        let chunk = ChunkError::EmptyChunk;
        crate::assert_source(&ConfigError::Chunk(chunk.clone()), &chunk);
        assert!(ConfigError::field("mtu", "x").source().is_none());
    }

    /// An ack delay outside `0.0..=1.0` (or NaN) is refused and named.
    #[test]
    fn ack_delay_is_checked() {
        for ack_delay in [0.0, 0.05, 1.0] {
            let config = ConnectionConfig {
                ack_delay,
                ..ConnectionConfig::default()
            };
            assert_eq!(config.validate(), Ok(()));
        }
        for ack_delay in [-0.01, 1.5, f64::NAN, f64::INFINITY] {
            let config = ConnectionConfig {
                ack_delay,
                ..ConnectionConfig::default()
            };
            assert_eq!(
                config.validate(),
                Err(ConfigError::field("ack_delay", "in 0.0..=1.0 seconds"))
            );
        }
    }

    /// `with_mtu` gives a valid config across the mtu range, and the reasons read as
    /// English after "{field} must be".
    #[test]
    fn with_mtu_agrees_and_reasons_read() {
        for mtu in [64, 100, 576, 1200, 1500, 9000, 65_507] {
            let config = ConnectionConfig::default().with_mtu(mtu);
            assert_eq!(config.validate(), Ok(()), "mtu {mtu}");
            assert!(config.chunk.max_slice_packet_size() <= mtu);
        }
        for mtu in [0, 9, 63, 65_508, usize::MAX] {
            let config = ConnectionConfig::default().with_mtu(mtu);
            assert!(matches!(
                config.validate(),
                Err(ConfigError::Field { field: "mtu", .. })
            ));
        }
        let mut config = ConnectionConfig::default();
        config.chunk.slice_size = 1200;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "connection config: chunk must be set with slice_size at most mtu - 9, so a slice \
             packet fits the mtu (see ConnectionConfig::with_mtu)"
        );
    }
}
