//! What the UDP server and client share: block progress and their event queues (the
//! netcode layer's bounded queue type).

use netser::NetSerialize;
use tracing::debug;

use crate::connection::Connection;
use crate::netcode::events::EventQueue;

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

    /// Sending side: slices acked of the oldest block in flight.
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

/// Most events held for [`UdpServer::poll_event`](super::UdpServer::poll_event) and
/// [`UdpClient::poll_event`](super::UdpClient::poll_event): a game that polls every frame
/// never comes near it; beyond it new events are dropped and counted
/// ([`UdpServer::dropped_events`](super::UdpServer::dropped_events)), so a server or client
/// that is never polled keeps a bounded memory.
pub const MAX_QUEUED_EVENTS: usize = 65_536;

/// Queues an event unless [`MAX_QUEUED_EVENTS`] are waiting (then counts it dropped, and
/// logs it); returns whether it was queued.
pub(crate) fn push_event<E>(events: &mut EventQueue<E>, event: E) -> bool {
    let queued = events.push(event);
    if !queued {
        debug!(
            dropped = events.dropped(),
            "udp: event queue full, event dropped"
        );
    }
    queued
}

/// The UDP layer's event queue: the shared bounded queue, at [`MAX_QUEUED_EVENTS`].
pub(crate) fn event_queue<E>() -> EventQueue<E> {
    EventQueue::new(MAX_QUEUED_EVENTS)
}

/// The graceful leave of `shutdown`: runs `frame` every millisecond until it reports
/// nothing left unacked (`Some(0)`: true), the peer gone with messages unacked (`None`:
/// false), or `deadline` passed (false; `None` is a deadline never reached).
pub(super) fn wait_for_acks(
    deadline: Option<std::time::Instant>,
    mut frame: impl FnMut() -> Option<usize>,
) -> bool {
    loop {
        match frame() {
            Some(0) => return true,
            None => return false,
            Some(_) if deadline.is_some_and(|d| std::time::Instant::now() >= d) => return false,
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}

/// What is left before `deadline` (all the time there is for `None`).
pub(super) fn time_left(deadline: Option<std::time::Instant>) -> std::time::Duration {
    deadline.map_or(std::time::Duration::MAX, |d| {
        d.saturating_duration_since(std::time::Instant::now())
    })
}
