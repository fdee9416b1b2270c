//! Message channels, as "Reliable Ordered Messages" lays them out: each channel has its
//! own send and receive queues and its own delivery guarantee, and the
//! [`Connection`](crate::connection::Connection) packs the messages of all its channels
//! into one packet per datagram.
//!
//! | kind | resent | delivered | use |
//! |------|--------|-----------|-----|
//! | [`ChannelKind::ReliableOrdered`] | until acked | exactly once, in order | game events, chat, RPCs |
//! | [`ChannelKind::ReliableUnordered`] | until acked | exactly once, as it arrives | independent events |
//! | [`ChannelKind::UnreliableSequenced`] | never | at most once, never older than the newest delivered | inputs, snapshots |
//! | [`ChannelKind::Unreliable`] | never | at most once | effects, anything droppable |
//!
//! # The reliable algorithm
//!
//! Each message gets a 16-bit message id that wraps. The send queue (a sequence buffer
//! indexed by message id) holds every message until a packet that carried it is acked;
//! each packet the connection builds includes, oldest first, the messages not sent in the
//! last resend delay (the channel's `resend_delay`, default 0.1, until the first ack; then
//! the endpoint's retransmission timeout, or sooner once the peer's packets show it missing: a later packet acked, or the peer's newest packet, arriving the path's smallest round trip after it left, does not ack it; a resend rides once more in the next packet) that
//! fit the packet's bit budget, and never a
//! message id at or past `oldest unacked + receive queue size` (the receiver's window:
//! it could not buffer it). A map from packet sequence to the message ids it carried
//! turns each packet ack from the endpoint into message acks. The receive queue (a
//! sequence buffer of the same size) holds messages until they can be delivered in order
//! (or at once, unordered); ids already delivered are dropped as duplicates.
//!
//! A reliable message too large for one packet goes as a *block*: its bytes travel in
//! slices through the [`chunk`](crate::chunk) machinery, and the channel carries a small
//! reference in its place, so the block is delivered in order with the channel's other
//! messages. An unreliable message that cannot fit one packet is refused at send.
//!
//! Both sides of a connection must use the same channel list.
//!
//! ```
//! use netser_transport::channel::{ChannelConfig, ChannelKind};
//! let events = ChannelConfig::reliable_ordered();
//! assert_eq!(events.kind, ChannelKind::ReliableOrdered { resend_delay: 0.1 });
//! assert_eq!(events.send_queue_size, 2048);
//! let inputs = ChannelConfig::new(ChannelKind::UnreliableSequenced);
//! assert!(inputs.validate().is_ok());
//! ```

pub(crate) mod reliable;
pub(crate) mod unreliable;
pub(crate) mod wire;

pub(crate) use reliable::{ReliableReceiver, ReliableSender};
pub(crate) use unreliable::{UnreliableReceiver, UnreliableSender};

use crate::sequence::MAX_SEQUENCE_BUFFER_CAPACITY;

/// The index of a channel in [`ConnectionConfig::channels`](crate::connection::ConnectionConfig::channels).
///
/// Implement `From<YourChannelEnum> for ChannelId` to name channels:
///
/// ```
/// use netser_transport::channel::ChannelId;
/// enum Channel { Events, Inputs }
/// impl From<Channel> for ChannelId {
///     fn from(channel: Channel) -> Self {
///         ChannelId(channel as u8)
///     }
/// }
/// assert_eq!(ChannelId::from(Channel::Inputs), ChannelId(1));
/// assert_eq!(ChannelId::from(0u8), ChannelId(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ChannelId(pub u8);

impl From<u8> for ChannelId {
    fn from(index: u8) -> Self {
        ChannelId(index)
    }
}

impl core::fmt::Display for ChannelId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "channel {}", self.0)
    }
}

/// A channel's delivery guarantee.
///
/// ```
/// use netser_transport::channel::ChannelKind;
/// assert!(ChannelKind::ReliableOrdered { resend_delay: 0.1 }.is_reliable());
/// assert!(!ChannelKind::UnreliableSequenced.is_reliable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChannelKind {
    /// Resent until acked; delivered exactly once, in the order sent.
    ReliableOrdered {
        /// Seconds before a message not yet acked is included in a packet again, until
        /// the first ack; from then on the connection resends from the endpoint's
        /// estimates (its retransmission timeout, or sooner once the peer's packets show it missing: a later packet acked, or the peer's newest packet, arriving the path's smallest round trip after it left, does not ack it; a resend rides once more in the next packet).
        resend_delay: f64,
    },
    /// Resent until acked; delivered exactly once, as it arrives.
    ReliableUnordered {
        /// Seconds before a message not yet acked is included in a packet again, until
        /// the first ack; from then on the connection resends from the endpoint's
        /// estimates (its retransmission timeout, or sooner once the peer's packets show it missing: a later packet acked, or the peer's newest packet, arriving the path's smallest round trip after it left, does not ack it; a resend rides once more in the next packet).
        resend_delay: f64,
    },
    /// Never resent; a message older than the newest delivered one is dropped.
    UnreliableSequenced,
    /// Never resent; delivered at most once, in any order.
    Unreliable,
}

impl ChannelKind {
    /// Whether messages are resent until acked.
    pub fn is_reliable(&self) -> bool {
        matches!(
            self,
            Self::ReliableOrdered { .. } | Self::ReliableUnordered { .. }
        )
    }

    /// The resend delay of a reliable kind.
    pub fn resend_delay(&self) -> Option<f64> {
        match *self {
            Self::ReliableOrdered { resend_delay } | Self::ReliableUnordered { resend_delay } => {
                Some(resend_delay)
            }
            _ => None,
        }
    }

    /// Whether messages carry a message id on the wire.
    pub(crate) fn has_ids(&self) -> bool {
        !matches!(self, Self::Unreliable)
    }
}

/// The article's default resend delay: 0.1 s.
pub const DEFAULT_RESEND_DELAY: f64 = 0.1;

/// One channel's configuration. Both sides of a connection must agree on the kind,
/// `receive_queue_size` and `max_messages_per_packet`.
///
/// ```
/// use netser_transport::channel::{ChannelConfig, ChannelKind};
/// let config = ChannelConfig { priority: 4, ..ChannelConfig::reliable_ordered() };
/// assert!(config.validate().is_ok());
/// let bad = ChannelConfig { send_queue_size: 1000, ..ChannelConfig::reliable_ordered() };
/// assert_eq!(bad.validate().unwrap_err().field, "send_queue_size");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelConfig {
    /// The delivery guarantee.
    pub kind: ChannelKind,
    /// Messages queued for sending and not yet acked (reliable) or not yet sent
    /// (unreliable). A power of two in `1..=16384`. Default [`DEFAULT_RELIABLE_QUEUE`]
    /// (2048) on a reliable channel, 1024 on an unreliable one. Sending into a full
    /// queue is [`SendError::SendQueueFull`](crate::connection::SendError::SendQueueFull).
    pub send_queue_size: usize,
    /// Messages received and not yet taken by `receive_message`. A power of two in
    /// `1..=16384`; on a reliable channel it is also the window the sender respects.
    /// Default [`DEFAULT_RELIABLE_QUEUE`] (2048) on a reliable channel, 1024 on an
    /// unreliable one.
    pub receive_queue_size: usize,
    /// Most messages of this channel in one packet, `1..=4096`. Default 256.
    pub max_messages_per_packet: usize,
    /// Weight of this channel's share of each packet's bit budget (`1..=1000`). Default 1.
    /// A channel always gets its share while it has messages waiting, so a backlog on
    /// one channel cannot starve the others; budget a channel leaves unused goes to the
    /// others.
    pub priority: u32,
}

/// The default send and receive queues of a reliable channel: 2048 messages, the
/// window of messages not yet acked. A reliable channel sends at most this many
/// messages per round trip (from the oldest not yet acked, or the oldest block whose
/// bytes are not yet all with the peer): over a 2-second round trip with a block
/// every 64 messages, 2048 keep the 32 blocks in flight of the default
/// [`ConnectionConfig`](crate::connection::ConnectionConfig) busy.
///
/// ```
/// use netser_transport::channel::{ChannelConfig, ChannelKind, DEFAULT_RELIABLE_QUEUE};
/// assert_eq!(ChannelConfig::reliable_unordered().receive_queue_size, DEFAULT_RELIABLE_QUEUE);
/// assert_eq!(ChannelConfig::new(ChannelKind::Unreliable).receive_queue_size, 1024);
/// ```
pub const DEFAULT_RELIABLE_QUEUE: usize = 2048;

impl ChannelConfig {
    /// A channel of `kind` with the default queues ([`DEFAULT_RELIABLE_QUEUE`] on a
    /// reliable channel, 1024 on an unreliable one).
    pub fn new(kind: ChannelKind) -> Self {
        let queue = if kind.is_reliable() {
            DEFAULT_RELIABLE_QUEUE
        } else {
            1024
        };
        Self {
            kind,
            send_queue_size: queue,
            receive_queue_size: queue,
            max_messages_per_packet: 256,
            priority: 1,
        }
    }

    /// A reliable-ordered channel with the default resend delay (0.1 s).
    pub fn reliable_ordered() -> Self {
        Self::new(ChannelKind::ReliableOrdered {
            resend_delay: DEFAULT_RESEND_DELAY,
        })
    }

    /// A reliable-unordered channel with the default resend delay (0.1 s).
    pub fn reliable_unordered() -> Self {
        Self::new(ChannelKind::ReliableUnordered {
            resend_delay: DEFAULT_RESEND_DELAY,
        })
    }

    /// Checks every field.
    ///
    /// # Errors
    /// A [`ChannelConfigError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ChannelConfigError> {
        let queue_ok = |n: usize| n.is_power_of_two() && n <= MAX_SEQUENCE_BUFFER_CAPACITY;
        if let Some(delay) = self.kind.resend_delay() {
            if !(delay.is_finite() && delay >= 0.0) {
                return Err(ChannelConfigError::new(
                    "resend_delay",
                    "must be finite and non-negative",
                ));
            }
        }
        if !queue_ok(self.send_queue_size) {
            return Err(ChannelConfigError::new(
                "send_queue_size",
                "must be a power of two in 1..=16384",
            ));
        }
        if !queue_ok(self.receive_queue_size) {
            return Err(ChannelConfigError::new(
                "receive_queue_size",
                "must be a power of two in 1..=16384",
            ));
        }
        if !(1..=4096).contains(&self.max_messages_per_packet) {
            return Err(ChannelConfigError::new(
                "max_messages_per_packet",
                "must be in 1..=4096",
            ));
        }
        if !(1..=1000).contains(&self.priority) {
            return Err(ChannelConfigError::new("priority", "must be in 1..=1000"));
        }
        Ok(())
    }
}

/// A [`ChannelConfig`] field out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelConfigError {
    /// The field.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ChannelConfigError {
    fn new(field: &'static str, reason: &'static str) -> Self {
        Self { field, reason }
    }
}

impl core::fmt::Display for ChannelConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "channel config: {} {}", self.field, self.reason)
    }
}

impl std::error::Error for ChannelConfigError {}

/// What one channel has done, from
/// [`Connection::channel_counters`](crate::connection::Connection::channel_counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChannelCounters {
    /// Messages accepted by `send_message` (blocks included).
    pub messages_sent: u64,
    /// Messages included in packets, first sends and resends.
    pub messages_packed: u64,
    /// Reliable messages included again after their resend delay.
    pub messages_resent: u64,
    /// Reliable messages acked by the other side.
    pub messages_acked: u64,
    /// Messages received and queued for delivery.
    pub messages_received: u64,
    /// Messages handed to the user by `receive_message`.
    pub messages_delivered: u64,
    /// Reliable messages received again after they were queued or delivered.
    pub duplicates_dropped: u64,
    /// Sequenced messages dropped because a newer one had arrived first.
    pub stale_dropped: u64,
    /// Unreliable messages dropped because the receive queue was full (the user did
    /// not call `receive_message` often enough).
    pub receive_queue_full_dropped: u64,
    /// Messages that went as blocks.
    pub blocks_sent: u64,
    /// Blocks delivered.
    pub blocks_delivered: u64,
    /// Blocks whose bytes did not decode as a message (dropped, never delivered).
    pub blocks_failed_decode: u64,
}
