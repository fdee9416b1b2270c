//! The one clock of the transport: seconds since the Unix epoch, as the `f64` every
//! sans-IO layer takes as `now`, and monotonic.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A monotonic clock giving seconds since the Unix epoch as `f64`.
///
/// The layers below the UDP driver never read a clock; they take `now` from this. It
/// reads the wall clock once, when created, and then adds a monotonic [`Instant`]'s
/// elapsed time, so it is on the same scale as connect tokens' creation and expiry
/// times (Unix seconds) yet never jumps back when the system clock is adjusted. At
/// today's Unix time an `f64` resolves a quarter of a microsecond.
///
/// ```
/// use netser_transport::udp::Clock;
/// let clock = Clock::new();
/// let a = clock.now();
/// let b = clock.now();
/// assert!(a > 1.6e9 && b >= a); // after September 2020
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    start_unix: f64,
}

impl Clock {
    /// A clock reading the current Unix time (0.0 if the system clock is before 1970).
    pub fn new() -> Self {
        let start_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self {
            start: Instant::now(),
            start_unix,
        }
    }

    /// Seconds since the Unix epoch; never decreases.
    pub fn now(&self) -> f64 {
        self.start_unix + self.start.elapsed().as_secs_f64()
    }

    /// How long from now until `at` (a time read from this clock), zero if it has passed.
    ///
    /// ```
    /// use netser_transport::udp::Clock;
    /// let clock = Clock::new();
    /// assert_eq!(clock.until(0.0), std::time::Duration::ZERO);
    /// assert!(clock.until(clock.now() + 10.0) > std::time::Duration::from_secs(9));
    /// ```
    pub fn until(&self, at: f64) -> Duration {
        let left = at - self.now();
        if left.is_finite() && left > 0.0 {
            Duration::from_secs_f64(left.min(1.0e9))
        } else {
            Duration::ZERO
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
