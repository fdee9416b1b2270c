//! The UDP layer's clock: monotonic seconds, as the `f64` every sans-IO layer takes as
//! `now`.

use std::time::{Duration, Instant};

/// A monotonic clock giving seconds since it was created as `f64`.
///
/// The layers below the UDP driver never read a clock; they take `now` from this (or from
/// the game's own clock: see [`UdpServer::receive_at`](super::UdpServer::receive_at)).
/// It never jumps back when the system clock is adjusted; Unix time is read only where
/// connect tokens are checked, once, by the server when it starts.
///
/// ```
/// use netser_transport::udp::Clock;
/// let clock = Clock::new();
/// let a = clock.now();
/// let b = clock.now();
/// assert!(a >= 0.0 && a < 60.0 && b >= a);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock starting at zero now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    /// Seconds since the clock was created; never decreases.
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
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
