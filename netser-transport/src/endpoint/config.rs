//! The endpoint's settings, their checks and the memory bounds they imply.

use super::header::MAX_FRAGMENTS;
use super::reassembly::Reassembly;
use super::rtt_history::RttHistory;
use super::stats::{ReceivedPacket, SentPacket};
use crate::sequence::{SequenceBuffer, MAX_SEQUENCE_BUFFER_CAPACITY};

/// The reassembly memory bound of [`Config::default`], in bytes: the value of
/// `Config::default().reassembly_memory_bound()` on a 64-bit target. It is the pool
/// (1024 blocks of 1024 bytes), its block map (one bit per block: 128 bytes) and the
/// table of 64 packets in progress (80 bytes each).
pub const DEFAULT_REASSEMBLY_MEMORY_BOUND: usize = 1024 * 1024 + 128 + 64 * 80;

/// The largest [`Config::rtt_history_size`]: 4096 samples (48 KiB with their summary). More adds nothing to
/// min/max/jitter at any sane send rate, and an unbounded value overflowed the allocation.
pub const MAX_RTT_HISTORY_SIZE: usize = 4096;

/// The endpoint's settings. The defaults are the articles' and `reliable`'s (fragment
/// size 1024, 256-packet windows), except where noted: up to 256 fragments per packet
/// (256 KiB) where `reliable` defaults to 16 (16 KiB).
///
/// Two endpoints must agree on `fragment_size` and `max_fragments` (the receiver refuses
/// fragments that do not fit its own); the rest is local.
///
/// ```
/// use netser_transport::endpoint::Config;
/// let config = Config { fragment_above: 1200, ..Config::default() };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.max_packet_size, 256 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Largest payload that can be sent or received, in bytes. Default 256 KiB
    /// (`max_fragments * fragment_size`; `reliable` defaults to 16 KiB).
    pub max_packet_size: usize,
    /// Payloads longer than this are sent as fragments. Default 1024.
    pub fragment_above: usize,
    /// Payload bytes per fragment (the last may be shorter). Default 1024.
    pub fragment_size: usize,
    /// Most fragments per packet, at most 256 (one byte on the wire). Default 256
    /// (`reliable` defaults to 16).
    pub max_fragments: usize,
    /// Sent packets remembered for acks, loss and bandwidth. A power of two, at most
    /// 16384 ([`MAX_SEQUENCE_BUFFER_CAPACITY`]). Default 256.
    pub sent_packets_buffer_size: usize,
    /// Received packets remembered: the window for acks and for refusing stale and
    /// duplicate packets. A power of two in `32..=16384`. Default 256.
    pub received_packets_buffer_size: usize,
    /// Packets that can be in reassembly at once. A power of two, at most 16384. Default
    /// 64.
    pub fragment_reassembly_buffer_size: usize,
    /// Most bytes of fragment data held for reassembly, across all packets in progress
    /// (rounded down to whole fragments; at least one full packet). A packet's first
    /// fragment reserves room for all of its fragments, so its payload is reassembled in
    /// one piece. Default 1 MiB. `reliable` has no such cap; this is what bounds a flood
    /// of fragments.
    pub max_reassembly_bytes: usize,
    /// Deprecated: ignored, and no longer validated. [`Stats::rtt`](super::Stats::rtt)
    /// is now the smoothed RTT of RFC 6298 (each sample weighs 1/8), where `reliable`
    /// smoothed by this factor (0.0025) and read the first samples for minutes. The field
    /// stays so that existing configurations still build; it will go in the next
    /// breaking release. Default 0.0025.
    pub rtt_smoothing_factor: f64,
    /// RTT samples kept for min/max/avg and jitter, in
    /// `1..=`[`MAX_RTT_HISTORY_SIZE`] (4096). Default 512.
    pub rtt_history_size: usize,
    /// Weight of each new packet loss measure. Default 0.1.
    pub packet_loss_smoothing_factor: f64,
    /// Weight of each new bandwidth measure. Default 0.1.
    pub bandwidth_smoothing_factor: f64,
    /// Bytes added per datagram in bandwidth stats for the IP and UDP headers.
    /// Default 28 (IPv4 20 + UDP 8).
    pub packet_header_size: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_packet_size: 256 * 1024,
            fragment_above: 1024,
            fragment_size: 1024,
            max_fragments: 256,
            sent_packets_buffer_size: 256,
            received_packets_buffer_size: 256,
            fragment_reassembly_buffer_size: 64,
            max_reassembly_bytes: 1024 * 1024,
            rtt_smoothing_factor: 0.0025,
            rtt_history_size: 512,
            packet_loss_smoothing_factor: 0.1,
            bandwidth_smoothing_factor: 0.1,
            packet_header_size: 28,
        }
    }
}

/// A [`Config`] field out of range.
///
/// ```
/// use netser_transport::endpoint::Config;
/// let error = Config { max_fragments: 300, ..Config::default() }.validate().unwrap_err();
/// assert_eq!(error.field, "max_fragments");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The field.
    pub field: &'static str,
    /// What it must be.
    pub expected: &'static str,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "invalid endpoint config: `{}` must be {}",
            self.field, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming the first field out of range.
    ///
    /// ```
    /// use netser_transport::endpoint::Config;
    /// assert!(Config::default().validate().is_ok());
    /// let config = Config { sent_packets_buffer_size: 100, ..Config::default() };
    /// assert_eq!(config.validate().unwrap_err().field, "sent_packets_buffer_size");
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn check(ok: bool, field: &'static str, expected: &'static str) -> Result<(), ConfigError> {
            if ok {
                Ok(())
            } else {
                Err(ConfigError { field, expected })
            }
        }
        let power_of_two = |n: usize| n.is_power_of_two() && n <= MAX_SEQUENCE_BUFFER_CAPACITY;
        check(
            (1..=MAX_FRAGMENTS).contains(&self.max_fragments),
            "max_fragments",
            "in 1..=256",
        )?;
        check(
            (1..=u16::MAX as usize).contains(&self.fragment_size),
            "fragment_size",
            "in 1..=65535",
        )?;
        check(self.max_packet_size >= 1, "max_packet_size", "at least 1")?;
        check(
            self.max_packet_size <= self.fragment_above
                || self.max_packet_size <= self.max_fragments * self.fragment_size,
            "max_packet_size",
            "at most max_fragments * fragment_size when above fragment_above",
        )?;
        check(
            power_of_two(self.sent_packets_buffer_size),
            "sent_packets_buffer_size",
            "a power of two in 1..=16384",
        )?;
        check(
            power_of_two(self.received_packets_buffer_size)
                && self.received_packets_buffer_size >= 32,
            "received_packets_buffer_size",
            "a power of two in 32..=16384 (ack_bits covers 32 packets)",
        )?;
        check(
            power_of_two(self.fragment_reassembly_buffer_size),
            "fragment_reassembly_buffer_size",
            "a power of two in 1..=16384",
        )?;
        check(
            self.max_reassembly_bytes / self.fragment_size >= self.fragments_per_max_packet()
                && self.max_reassembly_bytes / self.fragment_size < u32::MAX as usize,
            "max_reassembly_bytes",
            "room for one packet of max_packet_size in whole fragments",
        )?;
        check(
            (1..=MAX_RTT_HISTORY_SIZE).contains(&self.rtt_history_size),
            "rtt_history_size",
            "in 1..=4096",
        )?;
        let factor = |x: f64| x > 0.0 && x <= 1.0;
        check(
            factor(self.packet_loss_smoothing_factor),
            "packet_loss_smoothing_factor",
            "in (0, 1]",
        )?;
        check(
            factor(self.bandwidth_smoothing_factor),
            "bandwidth_smoothing_factor",
            "in (0, 1]",
        )?;
        check(
            self.packet_header_size <= 65535,
            "packet_header_size",
            "at most 65535",
        )
    }

    fn fragments_per_max_packet(&self) -> usize {
        if self.max_packet_size > self.fragment_above {
            self.max_packet_size.div_ceil(self.fragment_size)
        } else {
            0
        }
    }

    pub(super) fn max_reassembly_blocks(&self) -> usize {
        self.max_reassembly_bytes / self.fragment_size
    }

    /// The most heap bytes reassembly can hold with this config, whatever arrives:
    /// the fragment pool (a completed packet is returned from it, not copied out), its
    /// block map and the table of packets in progress.
    ///
    /// ```
    /// use netser_transport::endpoint::{Config, DEFAULT_REASSEMBLY_MEMORY_BOUND};
    /// # #[cfg(target_pointer_width = "64")]
    /// assert_eq!(Config::default().reassembly_memory_bound(), DEFAULT_REASSEMBLY_MEMORY_BOUND);
    /// ```
    pub fn reassembly_memory_bound(&self) -> usize {
        Reassembly::memory_bound(
            self.fragment_reassembly_buffer_size,
            self.fragment_size,
            self.max_reassembly_blocks(),
        )
    }

    /// The most heap bytes an [`Endpoint`](super::Endpoint) with this config holds, apart from the
    /// outgoing queue and the acks not yet drained (both grow only with what you send):
    /// [`reassembly_memory_bound`](Self::reassembly_memory_bound) plus the sent and
    /// received windows and the RTT history.
    ///
    /// ```
    /// use netser_transport::endpoint::Config;
    /// let config = Config::default();
    /// assert!(config.memory_bound() > config.reassembly_memory_bound());
    /// assert!(config.memory_bound() < 1_100_000);
    /// ```
    pub fn memory_bound(&self) -> usize {
        // Saturating: a bound over usize::MAX still reads as "too much", not as a panic.
        self.reassembly_memory_bound()
            .saturating_add(self.fixed_table_bytes())
    }

    fn fixed_table_bytes(&self) -> usize {
        SequenceBuffer::<SentPacket>::heap_bytes_for(self.sent_packets_buffer_size)
            .saturating_add(SequenceBuffer::<ReceivedPacket>::heap_bytes_for(
                self.received_packets_buffer_size,
            ))
            .saturating_add(RttHistory::heap_bytes_for(self.rtt_history_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_reassembly_bound_matches_the_documented_constant() {
        if cfg!(target_pointer_width = "64") {
            assert_eq!(
                Config::default().reassembly_memory_bound(),
                DEFAULT_REASSEMBLY_MEMORY_BOUND
            );
        }
    }

    /// A huge RTT history is refused by `validate` (it overflowed the allocation in
    /// `Endpoint::new`), and `memory_bound` saturates instead of overflowing.
    #[test]
    fn rtt_history_is_bounded_and_memory_bound_saturates() {
        use crate::endpoint::Endpoint;
        let at_max = Config {
            rtt_history_size: MAX_RTT_HISTORY_SIZE,
            ..Config::default()
        };
        assert!(Endpoint::new(0.0, at_max).is_ok());
        for size in [MAX_RTT_HISTORY_SIZE + 1, usize::MAX] {
            let config = Config {
                rtt_history_size: size,
                ..Config::default()
            };
            assert_eq!(config.validate().unwrap_err().field, "rtt_history_size");
            assert!(Endpoint::new(0.0, config.clone()).is_err());
        }
        let huge = Config {
            rtt_history_size: usize::MAX,
            ..Config::default()
        };
        assert_eq!(huge.memory_bound(), usize::MAX);
    }

    /// The largest packet windows are accepted and run: 200 packets each way, every one
    /// delivered and acked. Half the sequence circle is refused.
    #[test]
    fn the_largest_windows_run_and_half_the_circle_is_refused() {
        use crate::endpoint::Endpoint;
        let max = MAX_SEQUENCE_BUFFER_CAPACITY;
        let config = Config {
            sent_packets_buffer_size: max,
            received_packets_buffer_size: max,
            fragment_reassembly_buffer_size: max,
            ..Config::default()
        };
        let mut a = Endpoint::new(0.0, config.clone()).unwrap();
        let mut b = Endpoint::new(0.0, config.clone()).unwrap();
        for i in 0..200u32 {
            let now = f64::from(i) * 0.01;
            a.send_packet(now, &i.to_le_bytes()).unwrap();
            while let Some(d) = a.poll_transmit() {
                let p = b.handle_datagram(now, d.data).unwrap().unwrap();
                assert_eq!(p.payload, i.to_le_bytes());
            }
            b.send_packet(now, b"ack").unwrap();
            while let Some(d) = b.poll_transmit() {
                a.handle_datagram(now, d.data).unwrap();
            }
        }
        assert_eq!(a.counters().packets_acked, 200);
        for field in [
            "sent_packets_buffer_size",
            "received_packets_buffer_size",
            "fragment_reassembly_buffer_size",
        ] {
            let mut half = config.clone();
            match field {
                "sent_packets_buffer_size" => half.sent_packets_buffer_size = 2 * max,
                "received_packets_buffer_size" => half.received_packets_buffer_size = 2 * max,
                _ => half.fragment_reassembly_buffer_size = 2 * max,
            }
            assert_eq!(half.validate().unwrap_err().field, field);
        }
    }
}
