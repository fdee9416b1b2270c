//! What an endpoint has done, and the datagrams it dropped by reason.

use super::ReceiveError;

/// Received datagrams dropped, by reason, and in-progress packets abandoned.
///
/// ```
/// use netser_transport::endpoint::DropCounters;
/// assert_eq!(DropCounters::default().total(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DropCounters {
    /// [`ReceiveError::Truncated`] (including empty datagrams).
    pub truncated: u64,
    /// [`ReceiveError::BadPrefix`].
    pub bad_prefix: u64,
    /// [`ReceiveError::NonCanonicalHeader`].
    pub non_canonical_header: u64,
    /// [`ReceiveError::TooLarge`].
    pub too_large: u64,
    /// [`ReceiveError::Stale`].
    pub stale: u64,
    /// [`ReceiveError::Duplicate`], including fragments of a packet already received.
    pub duplicate: u64,
    /// [`ReceiveError::FragmentCountTooLarge`].
    pub fragment_count_too_large: u64,
    /// [`ReceiveError::FragmentIdOutOfRange`].
    pub fragment_id_out_of_range: u64,
    /// [`ReceiveError::FragmentCountMismatch`].
    pub fragment_count_mismatch: u64,
    /// [`ReceiveError::FragmentTooBig`].
    pub fragment_too_big: u64,
    /// [`ReceiveError::FragmentSizeMismatch`].
    pub fragment_size_mismatch: u64,
    /// [`ReceiveError::FragmentSequenceMismatch`].
    pub fragment_sequence_mismatch: u64,
    /// [`ReceiveError::DuplicateFragment`].
    pub duplicate_fragment: u64,
    /// [`ReceiveError::ReassemblyFull`].
    pub reassembly_full: u64,
    /// Packets in reassembly dropped unfinished because newer packets pushed them out of
    /// the window (or the packet arrived whole).
    pub reassembly_expired: u64,
    /// Packets in reassembly dropped unfinished to free memory for a newer one.
    pub reassembly_evicted: u64,
}

impl DropCounters {
    /// Datagrams dropped, all reasons (not counting abandoned reassemblies).
    ///
    /// ```
    /// # use netser_transport::endpoint::{Config, Endpoint};
    /// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
    /// let _ = endpoint.handle_datagram(0.0, &[]);
    /// let _ = endpoint.handle_datagram(0.0, &[0xff, 0, 0, 0, 0]);
    /// assert_eq!(endpoint.counters().drops.total(), 2);
    /// ```
    pub fn total(&self) -> u64 {
        self.truncated
            + self.bad_prefix
            + self.non_canonical_header
            + self.too_large
            + self.stale
            + self.duplicate
            + self.fragment_count_too_large
            + self.fragment_id_out_of_range
            + self.fragment_count_mismatch
            + self.fragment_too_big
            + self.fragment_size_mismatch
            + self.fragment_sequence_mismatch
            + self.duplicate_fragment
            + self.reassembly_full
    }

    pub(super) fn record(&mut self, error: &ReceiveError) {
        let counter = match error {
            ReceiveError::Truncated { .. } => &mut self.truncated,
            ReceiveError::BadPrefix { .. } => &mut self.bad_prefix,
            ReceiveError::NonCanonicalHeader => &mut self.non_canonical_header,
            ReceiveError::TooLarge { .. } => &mut self.too_large,
            ReceiveError::Stale { .. } => &mut self.stale,
            ReceiveError::Duplicate { .. } => &mut self.duplicate,
            ReceiveError::FragmentCountTooLarge { .. } => &mut self.fragment_count_too_large,
            ReceiveError::FragmentIdOutOfRange { .. } => &mut self.fragment_id_out_of_range,
            ReceiveError::FragmentCountMismatch { .. } => &mut self.fragment_count_mismatch,
            ReceiveError::FragmentTooBig { .. } => &mut self.fragment_too_big,
            ReceiveError::FragmentSizeMismatch { .. } => &mut self.fragment_size_mismatch,
            ReceiveError::FragmentSequenceMismatch { .. } => &mut self.fragment_sequence_mismatch,
            ReceiveError::DuplicateFragment { .. } => &mut self.duplicate_fragment,
            ReceiveError::ReassemblyFull { .. } => &mut self.reassembly_full,
        };
        *counter += 1;
    }
}

/// What an [`Endpoint`](super::Endpoint) has done.
///
/// ```
/// # use netser_transport::endpoint::{Config, Endpoint};
/// let mut endpoint = Endpoint::new(0.0, Config::default()).unwrap();
/// endpoint.send_packet(0.0, &[0; 3000]).unwrap();
/// assert_eq!(endpoint.counters().packets_sent, 1);
/// assert_eq!(endpoint.counters().fragments_sent, 3);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counters {
    /// Packets sent (a fragmented packet counts once).
    pub packets_sent: u64,
    /// Fragments sent.
    pub fragments_sent: u64,
    /// Payloads refused by [`Endpoint::send_packet`](super::Endpoint::send_packet) as too
    /// large, or by [`Endpoint::send_packet_with`](super::Endpoint::send_packet_with).
    pub packets_too_large_to_send: u64,
    /// Datagrams handed to [`Endpoint::handle_datagram`](super::Endpoint::handle_datagram),
    /// whatever became of them.
    pub datagrams_received: u64,
    /// Packets received and delivered (a reassembled packet counts once).
    pub packets_received: u64,
    /// Fragments stored for reassembly.
    pub fragments_received: u64,
    /// Packets reassembled from fragments.
    pub packets_reassembled: u64,
    /// Sent packets the other side acked.
    pub packets_acked: u64,
    /// Acks dropped from a full ack list that was never drained (see
    /// [`Endpoint::acks`](super::Endpoint::acks)).
    pub acks_dropped: u64,
    /// Received datagrams dropped, by reason.
    pub drops: DropCounters,
}
