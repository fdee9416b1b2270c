//! What the UDP server and client share: network info, block progress, send errors,
//! the default protocol id.

use std::fmt;

use netser::NetSerialize;

use crate::connection::{self, Connection};

/// A connection's estimates, as a game shows them: RTT, packet loss, bandwidth.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetworkInfo {
    /// Smoothed round-trip time, seconds (0 until the first ack).
    pub rtt: f64,
    /// Share of sent packets not acked, `0.0..=1.0`.
    pub packet_loss: f64,
    /// Kilobits per second sent.
    pub sent_kbps: f64,
    /// Kilobits per second received.
    pub received_kbps: f64,
    /// Kilobits per second sent and acked.
    pub acked_kbps: f64,
}

impl NetworkInfo {
    pub(crate) fn of<Out: NetSerialize, In: NetSerialize>(connection: &Connection<Out, In>) -> Self {
        let stats = connection.stats();
        Self {
            rtt: stats.rtt,
            packet_loss: stats.packet_loss,
            sent_kbps: stats.sent_kbps,
            received_kbps: stats.received_kbps,
            acked_kbps: stats.acked_kbps,
        }
    }
}

/// Where a block (a message too large for one packet) is: slices and bytes acked by the
/// receiver when sending, received when receiving. A progress with
/// `slices_done == slice_count` is complete.
///
/// ```
/// use netser_transport::udp::BlockProgress;
/// let p = BlockProgress { done: 1024, total: 4000, slices_done: 1, slice_count: 4 };
/// assert_eq!(p.fraction(), 0.25);
/// assert!(!p.is_complete());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockProgress {
    /// Bytes so far.
    pub done: usize,
    /// Bytes in the block. A receiver learns the exact size with the last slice; before
    /// it this is `slice_count * slice_size`, at most one slice too many.
    pub total: usize,
    /// Slices so far.
    pub slices_done: u16,
    /// Slices in the block.
    pub slice_count: u16,
}

impl BlockProgress {
    /// Share of the slices done, `0.0..=1.0`.
    pub fn fraction(&self) -> f64 {
        if self.slice_count == 0 {
            0.0
        } else {
            f64::from(self.slices_done) / f64::from(self.slice_count)
        }
    }

    /// Whether every slice is done.
    pub fn is_complete(&self) -> bool {
        self.slices_done >= self.slice_count
    }

    /// The same block, complete.
    pub(crate) fn completed(self) -> Self {
        Self {
            done: self.total,
            slices_done: self.slice_count,
            ..self
        }
    }

    /// Sending side: slices acked of the block in flight.
    pub(crate) fn sending<Out: NetSerialize, In: NetSerialize>(
        connection: &Connection<Out, In>,
    ) -> Option<Self> {
        connection.block_send_progress().map(|p| Self {
            done: p.bytes_acked,
            total: p.chunk_size,
            slices_done: p.slices_acked,
            slice_count: p.slice_count,
        })
    }

    /// Receiving side: slices of the block being received.
    pub(crate) fn receiving<Out: NetSerialize, In: NetSerialize>(
        connection: &Connection<Out, In>,
    ) -> Option<Self> {
        let slice_size = connection.config().chunk.slice_size;
        connection.block_receive_progress().map(|p| Self {
            done: p.bytes_received,
            total: p
                .chunk_size
                .unwrap_or(usize::from(p.slice_count) * slice_size),
            slices_done: p.slices_received,
            slice_count: p.slice_count,
        })
    }

    /// The event to report when the progress moved from `last` to `now`: a change, or
    /// the completion when a block's progress disappears (it was delivered).
    pub(crate) fn change(last: Option<Self>, now: Option<Self>) -> Option<Self> {
        match (last, now) {
            (_, Some(p)) if Some(p) != last => Some(p),
            (Some(l), None) if !l.is_complete() => Some(l.completed()),
            _ => None,
        }
    }
}

/// Why a message could not be sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SendError {
    /// No connected client has this id (server), or the client is not connected yet or
    /// any more (client).
    NotConnected,
    /// The connection refused it: unknown channel, full queue, a value out of its
    /// bounds, an unreliable message too large for a packet...
    Connection(connection::SendError),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotConnected => f.write_str("not connected"),
            Self::Connection(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotConnected => None,
            Self::Connection(e) => Some(e),
        }
    }
}

impl From<connection::SendError> for SendError {
    fn from(e: connection::SendError) -> Self {
        Self::Connection(e)
    }
}

/// The default protocol id of a game whose server sends `S` and whose clients send `C`:
/// both schema hashes, so a client built from another message schema is refused at
/// connect (its connection request names another protocol).
///
/// ```
/// use netser_transport::udp::protocol_id;
/// assert_ne!(protocol_id::<u8, u16>(), protocol_id::<u16, u8>());
/// ```
pub fn protocol_id<S: NetSerialize, C: NetSerialize>() -> u64 {
    S::SCHEMA_HASH.rotate_left(17) ^ C::SCHEMA_HASH
}
