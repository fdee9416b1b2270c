//! Replay protection: a window of the most recent sequences received, so a recorded packet
//! played back later is dropped before decryption.

/// Window size in sequences (the standard's suggestion: a few seconds at 60 Hz).
pub const REPLAY_WINDOW: usize = 256;

const EMPTY: u64 = u64::MAX;

/// Remembers which of the last [`REPLAY_WINDOW`] sequences arrived.
///
/// A sequence older than the newest minus the window is refused; one inside the window is
/// accepted once. [`ReplayProtection::already_received`] is checked before decryption and
/// [`ReplayProtection::advance`] called only after a packet authenticated, so forged
/// packets cannot move the window. Fixed memory: 2 KiB.
///
/// ```
/// use netser_transport::netcode::ReplayProtection;
/// let mut replay = ReplayProtection::new();
/// assert!(!replay.already_received(5));
/// replay.advance(5);
/// assert!(replay.already_received(5));
/// replay.advance(1000);
/// assert!(replay.already_received(6)); // fell out of the window
/// assert!(!replay.already_received(999));
/// ```
#[derive(Debug, Clone)]
pub struct ReplayProtection {
    most_recent: u64,
    received: Box<[u64; REPLAY_WINDOW]>,
}

impl Default for ReplayProtection {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayProtection {
    /// An empty window.
    pub fn new() -> Self {
        Self {
            most_recent: 0,
            received: Box::new([EMPTY; REPLAY_WINDOW]),
        }
    }

    /// Whether `sequence` must be refused: too old for the window, or seen already.
    pub fn already_received(&self, sequence: u64) -> bool {
        if sequence.saturating_add(REPLAY_WINDOW as u64) <= self.most_recent {
            return true;
        }
        let entry = self.received[sequence as usize % REPLAY_WINDOW];
        entry != EMPTY && entry >= sequence
    }

    /// Records `sequence` as received (call after it authenticated).
    pub fn advance(&mut self, sequence: u64) {
        self.most_recent = self.most_recent.max(sequence);
        self.received[sequence as usize % REPLAY_WINDOW] = sequence;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window() {
        let mut r = ReplayProtection::new();
        for s in 0..1000u64 {
            assert!(!r.already_received(s));
            r.advance(s);
            assert!(r.already_received(s));
        }
        // Out of order inside the window is accepted once.
        assert!(!r.already_received(1001));
        r.advance(1003);
        assert!(!r.already_received(1001));
        r.advance(1001);
        assert!(r.already_received(1001));
        assert!(r.already_received(1003 - REPLAY_WINDOW as u64));
        // 748 is inside the window and was received; 1002 is inside and was not.
        assert!(r.already_received(1003 - REPLAY_WINDOW as u64 + 1));
        assert!(!r.already_received(1002));
        // u64::MAX is refused (it cannot be told from an empty entry) only if seen.
        assert!(!r.already_received(u64::MAX - 1));
    }
}
