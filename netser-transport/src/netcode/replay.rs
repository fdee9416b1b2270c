//! Replay protection: a window of the most recent sequences received, so a recorded packet
//! played back later is dropped before decryption.

/// Window size in sequences (the standard's suggestion: a few seconds at 60 Hz).
pub const REPLAY_WINDOW: usize = 256;

/// Words of the bitmap: one bit per sequence of the window.
const WORDS: usize = REPLAY_WINDOW / 64;

/// Remembers which of the last [`REPLAY_WINDOW`] sequences arrived.
///
/// A sequence older than the newest minus the window is refused; one inside the window is
/// accepted once. [`ReplayProtection::already_received`] is checked before decryption and
/// [`ReplayProtection::advance`] called only after a packet authenticated, so forged
/// packets cannot move the window. Fixed memory, held inline: the newest sequence and one
/// bit for each of the window's sequences (40 bytes).
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayProtection {
    /// The newest sequence received (0 before any).
    most_recent: u64,
    /// Bit `k` (word `k / 64`, bit `k % 64`) set: `most_recent - k` was received.
    received: [u64; WORDS],
}

impl ReplayProtection {
    /// An empty window.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `sequence` must be refused: too old for the window, or seen already.
    pub fn already_received(&self, sequence: u64) -> bool {
        if sequence.saturating_add(REPLAY_WINDOW as u64) <= self.most_recent {
            return true;
        }
        // Inside the window or newer: `age` < REPLAY_WINDOW when it is not newer.
        match self.most_recent.checked_sub(sequence) {
            Some(age) => self.bit(age as usize),
            None => false,
        }
    }

    /// Records `sequence` as received (call after it authenticated). A sequence the
    /// window already refuses for its age changes nothing.
    pub fn advance(&mut self, sequence: u64) {
        match sequence.checked_sub(self.most_recent) {
            Some(newer) => {
                self.shift(newer);
                self.most_recent = sequence;
                self.received[0] |= 1;
            }
            None => {
                let age = self.most_recent - sequence;
                if age < REPLAY_WINDOW as u64 {
                    self.received[age as usize / 64] |= 1 << (age % 64);
                }
            }
        }
    }

    fn bit(&self, age: usize) -> bool {
        self.received
            .get(age / 64)
            .is_some_and(|word| word >> (age % 64) & 1 == 1)
    }

    /// Ages every bit by `by` sequences: bit `k` moves to `k + by`, those past the window
    /// are forgotten.
    fn shift(&mut self, by: u64) {
        if by >= REPLAY_WINDOW as u64 {
            self.received = [0; WORDS];
            return;
        }
        let (words, bits) = (by as usize / 64, by as u32 % 64);
        // From the oldest word down, so each reads words not yet written.
        for i in (0..WORDS).rev() {
            let from = i.checked_sub(words).map_or(0, |j| self.received[j]);
            let carry = i
                .checked_sub(words + 1)
                .map_or(0, |j| self.received[j])
                .checked_shr(64 - bits)
                .unwrap_or(0);
            self.received[i] = (from << bits) | carry;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The window as it was first written (one slot per sequence modulo the window,
    /// holding the last sequence stored there, 2 KiB): the model the bitmap must equal.
    struct SlotWindow {
        most_recent: u64,
        received: Box<[u64; REPLAY_WINDOW]>,
    }

    impl SlotWindow {
        const EMPTY: u64 = u64::MAX;

        fn new() -> Self {
            Self {
                most_recent: 0,
                received: Box::new([Self::EMPTY; REPLAY_WINDOW]),
            }
        }

        fn already_received(&self, sequence: u64) -> bool {
            if sequence.saturating_add(REPLAY_WINDOW as u64) <= self.most_recent {
                return true;
            }
            let entry = self.received[sequence as usize % REPLAY_WINDOW];
            entry != Self::EMPTY && entry >= sequence
        }

        fn advance(&mut self, sequence: u64) {
            self.most_recent = self.most_recent.max(sequence);
            self.received[sequence as usize % REPLAY_WINDOW] = sequence;
        }
    }

    /// Where the next sequence comes from, relative to the newest so far where it says so.
    #[derive(Debug, Clone)]
    enum Step {
        Absolute(u64),
        NearMax(u64),
        Ahead(u64),
        Behind(u64),
        FarAhead(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..600u64).prop_map(Step::Absolute),
            any::<u64>().prop_map(Step::Absolute),
            (0..600u64).prop_map(Step::NearMax),
            (0..70u64).prop_map(Step::Ahead),
            (0..300u64).prop_map(Step::Ahead),
            (0..600u64).prop_map(Step::Behind),
            (0..300u64).prop_map(Step::Behind),
            any::<u64>().prop_map(Step::FarAhead),
        ]
    }

    /// Ages (below the newest) and leads (above it) probed after every step.
    const PROBES: [i64; 16] = [
        -2, -1, 0, 1, 2, 63, 64, 65, 127, 128, 191, 192, 254, 255, 256, 257,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Random sequences, checked then recorded when accepted (as `decode` does):
        /// the bitmap accepts and refuses exactly what the slot window does, for the
        /// sequence itself and for probes around the window after each step.
        #[test]
        fn bitmap_equals_the_slot_window(steps in proptest::collection::vec(step(), 1..120)) {
            let mut model = SlotWindow::new();
            let mut window = ReplayProtection::new();
            for step in steps {
                let newest = model.most_recent;
                let sequence = match step {
                    Step::Absolute(s) => s,
                    Step::NearMax(d) => u64::MAX - d,
                    Step::Ahead(d) => newest.saturating_add(d),
                    Step::Behind(d) => newest.saturating_sub(d),
                    Step::FarAhead(d) => newest.saturating_add(d),
                };
                let refused = model.already_received(sequence);
                prop_assert_eq!(window.already_received(sequence), refused, "{}", sequence);
                if !refused {
                    model.advance(sequence);
                    window.advance(sequence);
                }
                prop_assert_eq!(window.most_recent, model.most_recent);
                for probe in PROBES {
                    let at = model.most_recent.saturating_add_signed(-probe);
                    prop_assert_eq!(window.already_received(at), model.already_received(at), "{}", at);
                }
            }
        }
    }

    #[test]
    fn extremes() {
        let mut r = ReplayProtection::new();
        assert!(!r.already_received(0));
        assert!(!r.already_received(u64::MAX));
        r.advance(u64::MAX - 1);
        assert!(r.already_received(u64::MAX - 1));
        assert!(!r.already_received(u64::MAX - 2));
        assert!(!r.already_received(u64::MAX - 256));
        assert!(r.already_received(u64::MAX - 257));
        r.advance(u64::MAX);
        // Past the newest possible sequence, everything is refused.
        assert!((0..300).all(|d| r.already_received(u64::MAX - d)));
        assert!(r.already_received(0));
    }

    /// Each bit position the shift moves, across word boundaries.
    #[test]
    fn every_age_in_the_window_is_remembered() {
        for gap in 1..REPLAY_WINDOW as u64 + 2 {
            let mut r = ReplayProtection::new();
            r.advance(1000);
            r.advance(1000 + gap);
            let inside = gap < REPLAY_WINDOW as u64;
            assert!(r.already_received(1000), "gap {gap}");
            assert_eq!(r.bit(gap as usize), inside, "gap {gap}");
            let once = gap == 1 || gap > REPLAY_WINDOW as u64;
            assert_eq!(r.already_received(1001), once, "gap {gap}");
        }
    }

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
