//! What can go wrong sending and receiving, and the connection's counters.

use crate::channel::ChannelId;
use crate::chunk::ChunkPacketError;
use crate::endpoint;

/// A message refused by [`Connection::send_message`](super::Connection::send_message).
/// Nothing is queued when it is returned.
///
/// ```
/// use netser_transport::channel::ChannelId;
/// use netser_transport::connection::{Connection, ConnectionConfig, SendError};
/// // Channel 1 of the default configuration is unreliable: a message larger than one
/// // packet is refused rather than fragmented.
/// let mut a: Connection<[u64; 200]> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
/// let error = a.send_message(1, &[0; 200]).unwrap_err(); // 1600 bytes
/// assert!(matches!(error, SendError::MessageTooLarge { channel: ChannelId(1), .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SendError {
    /// No channel with this id in the configuration.
    InvalidChannel {
        /// The id.
        channel: ChannelId,
    },
    /// The channel's send queue holds `capacity` messages not yet acked (reliable) or
    /// not yet sent (unreliable). Try again after the next acks arrive.
    SendQueueFull {
        /// The channel.
        channel: ChannelId,
        /// The queue's size.
        capacity: usize,
    },
    /// The message did not encode: a value outside its declared bounds.
    Encode(netser::Error),
    /// An unreliable message too large for one packet (unreliable messages are never
    /// fragmented).
    MessageTooLarge {
        /// The channel.
        channel: ChannelId,
        /// The message's size in bits (for a message with an alignment, such as a
        /// string, its size at the worst bit offset: at most 7 bits more than measured).
        bits: u64,
        /// The most a message on this channel can take in one packet.
        max_bits: u64,
    },
    /// A reliable message larger than [`ConnectionConfig::max_block_size`](super::ConnectionConfig::max_block_size).
    BlockTooLarge {
        /// The channel.
        channel: ChannelId,
        /// The message's size in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// `chunk.max_queued_chunks` blocks already wait behind the blocks in flight
    /// (`chunk.max_chunks_in_flight`). Try again after the peer acks the oldest block in
    /// flight.
    BlockQueueFull {
        /// The queue's capacity.
        capacity: usize,
    },
}

impl core::fmt::Display for SendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::InvalidChannel { channel } => write!(f, "no {channel} in the configuration"),
            Self::SendQueueFull { channel, capacity } => {
                write!(
                    f,
                    "{channel}: send queue full ({capacity} messages); try again after the peer \
                     acks some"
                )
            }
            Self::Encode(_) => write!(f, "the message does not encode"),
            Self::MessageTooLarge {
                channel,
                bits,
                max_bits,
            } => write!(
                f,
                "{channel}: unreliable message of {bits} bits is over the {max_bits} bits one packet holds"
            ),
            Self::BlockTooLarge { channel, size, max } => {
                write!(f, "{channel}: message of {size} bytes is over max_block_size {max}")
            }
            Self::BlockQueueFull { capacity } => {
                write!(
                    f,
                    "block queue full ({capacity} blocks wait); try again after the peer acks \
                     the oldest block in flight"
                )
            }
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Encode(error) => Some(error),
            _ => None,
        }
    }
}

/// A datagram dropped by [`Connection::handle_datagram`](super::Connection::handle_datagram).
/// A dropped datagram delivers nothing and acks nothing; each is counted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReceiveError {
    /// The endpoint refused the packet (duplicate, stale, malformed header...).
    Endpoint(endpoint::ReceiveError),
    /// A slice or slice ack was refused by the block path.
    Block(ChunkPacketError),
    /// A message did not decode; the whole packet is dropped.
    Malformed(netser::Error),
    /// A channel index beyond the configuration.
    UnknownChannel {
        /// The index read.
        channel: u8,
    },
    /// A channel appears twice in one packet.
    RepeatedChannel {
        /// The channel.
        channel: ChannelId,
    },
    /// Padding after the last channel is not zero, or longer than a byte.
    TrailingBits,
    /// A reliable message beyond what the receive queue can hold (the user has not taken
    /// enough messages, or the peer ignores the window). The packet is not acked, so
    /// the peer sends its messages again later.
    ReceiveQueueFull {
        /// The channel.
        channel: ChannelId,
    },
    /// The packet's section (a snapshot) was refused by the layer above (see
    /// [`Connection::handle_datagram_with`](super::Connection::handle_datagram_with));
    /// the packet is not acked. [`Connection::handle_datagram`](super::Connection::handle_datagram)
    /// refuses every section: a connection that carries snapshots is fed through the
    /// snapshot layer.
    SectionRefused,
}

impl core::fmt::Display for ReceiveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Endpoint(_) => write!(f, "packet refused by the endpoint"),
            Self::Block(_) => write!(f, "block datagram refused"),
            Self::Malformed(_) => write!(f, "a message does not decode; packet dropped"),
            Self::UnknownChannel { channel } => write!(f, "unknown channel {channel}"),
            Self::RepeatedChannel { channel } => write!(f, "{channel} twice in one packet"),
            Self::TrailingBits => write!(f, "non-zero or excess padding after the last channel"),
            Self::ReceiveQueueFull { channel } => {
                write!(f, "{channel}: receive queue full, packet not acked")
            }
            Self::SectionRefused => write!(f, "the packet's snapshot section was refused"),
        }
    }
}

impl std::error::Error for ReceiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Endpoint(error) => Some(error),
            Self::Block(error) => Some(error),
            Self::Malformed(error) => Some(error),
            _ => None,
        }
    }
}

/// What a [`Connection`](super::Connection) has done. The endpoint's own counters
/// (drops by reason, fragments) are in [`Connection::endpoint`](super::Connection::endpoint).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionCounters {
    /// Connection packets sent (with messages or acks only).
    pub packets_sent: u64,
    /// Of those, packets that carried only acks.
    pub ack_only_packets_sent: u64,
    /// Slice datagrams sent by the block path.
    pub slices_sent: u64,
    /// Slice ack datagrams sent.
    pub slice_acks_sent: u64,
    /// Datagrams handed to `handle_datagram`.
    pub datagrams_received: u64,
    /// Connection packets accepted.
    pub packets_received: u64,
    /// Packets dropped because a message did not decode (or the framing was wrong).
    pub malformed_packets: u64,
    /// Messages decoded from accepted packets, all channels: those queued for delivery
    /// and those dropped as duplicates, stale or for a full receive queue (the sum of
    /// the channels' `messages_received`, `duplicates_dropped`, `stale_dropped` and
    /// `receive_queue_full_dropped`, kept as one count so that a server charging each
    /// client for its messages does not walk the channels per datagram).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default();
    /// let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
    /// let mut b: Connection<u8> = Connection::new(0.0, config).unwrap();
    /// a.send_message(0, &1).unwrap();
    /// a.send_message(1, &2).unwrap();
    /// let datagram = a.poll_transmit(0.0).unwrap().to_vec();
    /// b.handle_datagram(0.05, &datagram).unwrap();
    /// assert_eq!(b.counters().messages_decoded, 2);
    /// ```
    pub messages_decoded: u64,
    /// Packets refused because a reliable receive queue was full.
    pub packets_refused: u64,
    /// Datagrams the endpoint refused (see its drop counters for why).
    pub endpoint_drops: u64,
    /// Slice or slice ack datagrams refused.
    pub block_datagram_drops: u64,
    /// Packets sent with a section of the layer above (a snapshot).
    pub sections_sent: u64,
    /// Packets dropped because the layer above refused their section (it counts why).
    pub sections_refused: u64,
    /// Acks of section packets dropped because the layer above had not taken the
    /// `endpoint.sent_packets_buffer_size` that waited.
    pub acked_sections_dropped: u64,
}

impl ReceiveError {
    pub(crate) fn count(&self, counters: &mut ConnectionCounters) {
        let counter = match self {
            Self::Endpoint(_) => &mut counters.endpoint_drops,
            Self::Block(_) => &mut counters.block_datagram_drops,
            Self::ReceiveQueueFull { .. } => &mut counters.packets_refused,
            Self::SectionRefused => &mut counters.sections_refused,
            Self::Malformed(_)
            | Self::UnknownChannel { .. }
            | Self::RepeatedChannel { .. }
            | Self::TrailingBits => &mut counters.malformed_packets,
        };
        *counter += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// `SendError::Encode` and the wrapping `ReceiveError`s return their inner error from
    /// `source()` and do not repeat it in Display.
    #[test]
    fn send_and_receive_errors_have_sources() {
        let encode = netser::Error::new(netser::ErrorKind::Custom("out of bounds"), 3);
        crate::assert_source(&SendError::Encode(encode.clone()), &encode);
        assert!(SendError::BlockQueueFull { capacity: 1 }.source().is_none());

        let endpoint = endpoint::ReceiveError::BadPrefix { prefix: 7 };
        crate::assert_source(&ReceiveError::Endpoint(endpoint), &endpoint);
        let block = ChunkPacketError::AckPaddingBits;
        crate::assert_source(&ReceiveError::Block(block.clone()), &block);
        crate::assert_source(&ReceiveError::Malformed(encode.clone()), &encode);
        assert!(ReceiveError::TrailingBits.source().is_none());
    }

    /// Errors a caller can recover from say how.
    #[test]
    fn recoverable_errors_say_what_to_do() {
        let full = SendError::SendQueueFull {
            channel: ChannelId(0),
            capacity: 4,
        };
        assert!(full
            .to_string()
            .ends_with("try again after the peer acks some"));
        let blocks = SendError::BlockQueueFull { capacity: 8 };
        assert!(blocks.to_string().contains("try again after the peer acks"));
        let chunks = crate::chunk::ChunkError::QueueFull { capacity: 8 };
        assert!(chunks.to_string().contains("try again after the peer acks"));
        let message = crate::netcode::MessageError::NotConnected.to_string();
        assert!(message.contains("wait for its ClientConnected event"));
        let payload = crate::netcode::PayloadError::NotConnected.to_string();
        assert!(payload.contains("wait for ClientState::Connected"));
    }
}
