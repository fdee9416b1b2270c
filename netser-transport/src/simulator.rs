//! A seeded, sans-IO network simulator: latency, jitter, loss, duplicates, reordering,
//! corruption, truncation, a bandwidth cap and a bound on queued packets.
//!
//! The articles test every layer "under terrible network conditions"; this is the network
//! those tests run on. It never reads a clock: the caller passes `now` (seconds) to
//! [`Simulator::send`] and [`Simulator::receive`], and can jump time straight to
//! [`Simulator::next_delivery_time`]. Its randomness comes from a small PRNG in this file,
//! seeded by [`SimulatorConfig::seed`], so the same seed and the same sequence of calls give
//! exactly the same run, and a failing soak test can be replayed.
//!
//! [`Pair`] and [`Star`] step sans-IO peers (any layer: they all speak [`Peer`]'s verbs)
//! over it, frame by frame or from one wakeup to the next.
//!
//! ```
//! use netser_transport::simulator::{Simulator, SimulatorConfig};
//!
//! let mut sim: Simulator = Simulator::new(SimulatorConfig {
//!     latency: 0.050,
//!     jitter: 0.010,
//!     loss: 0.05,
//!     seed: 42,
//!     ..SimulatorConfig::default()
//! });
//! let mut now = 0.0;
//! for i in 0..100u8 {
//!     sim.send(now, 1, 2, &[i]);
//!     now += 0.001;
//! }
//! let mut received = 0;
//! while let Some(at) = sim.next_delivery_time() {
//!     now = at;
//!     while let Some(delivery) = sim.receive(now) {
//!         assert_eq!((delivery.from, delivery.to), (1, 2));
//!         received += 1;
//!     }
//! }
//! assert_eq!(received + sim.stats().lost, 100);
//! ```

mod harness;

pub use harness::{Pair, Peer, Star, Traffic, MAX_DATAGRAMS_PER_ROUND, MIN_ADVANCE};

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Network conditions for a [`Simulator`]; the default is a perfect link.
///
/// Probabilities outside `0..=1` are clamped and NaN counts as 0; negative or NaN
/// latency and jitter count as 0, so no configuration can make the simulator panic.
///
/// ```
/// use netser_transport::simulator::SimulatorConfig;
/// let terrible = SimulatorConfig {
///     latency: 1.0,
///     jitter: 0.5,
///     loss: 0.9,
///     duplicate: 0.1,
///     reorder: 0.1,
///     seed: 7,
///     ..SimulatorConfig::default()
/// };
/// assert_eq!(terrible.max_in_flight, 4096);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatorConfig {
    /// One-way latency in seconds.
    pub latency: f64,
    /// Seconds added to the latency, uniformly in `-jitter..=jitter` (the total delay
    /// never goes below zero).
    pub jitter: f64,
    /// Probability that a packet is dropped.
    pub loss: f64,
    /// Probability that a packet is delivered twice; the copy gets its own delay.
    pub duplicate: f64,
    /// Probability that a packet gets an extra delay, uniformly up to
    /// `2 * (latency + jitter)` (at least 10 ms), so later packets overtake it.
    pub reorder: f64,
    /// Probability that one random bit of a delivered copy is flipped.
    pub corrupt: f64,
    /// Probability that a delivered copy is cut to a random shorter length.
    pub truncate: f64,
    /// Cap in bytes per second for each direction (`from -> to`); packets beyond it are
    /// dropped. A token bucket holding up to [`BANDWIDTH_BURST`] seconds of traffic.
    pub bandwidth: Option<f64>,
    /// Most packets queued at once (the memory bound); packets beyond it are dropped.
    pub max_in_flight: usize,
    /// Seed of the random stream, read by [`Simulator::new`].
    pub seed: u64,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        Self {
            latency: 0.0,
            jitter: 0.0,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            corrupt: 0.0,
            truncate: 0.0,
            bandwidth: None,
            max_in_flight: 4096,
            seed: 0,
        }
    }
}

/// Seconds of traffic a direction's bandwidth bucket can save up for a burst.
///
/// ```
/// assert_eq!(netser_transport::simulator::BANDWIDTH_BURST, 0.1);
/// ```
pub const BANDWIDTH_BURST: f64 = 0.1;

/// Most directions whose bandwidth use is remembered; the stalest is forgotten first, so
/// the simulator's memory stays bounded however many addresses the caller invents.
const MAX_DIRECTIONS: usize = 1024;

/// Smallest span of the extra reordering delay, so reordering still happens on a link
/// with no latency.
const MIN_REORDER_SPAN: f64 = 0.010;

/// Counters of what happened to the packets sent through a [`Simulator`].
///
/// ```
/// use netser_transport::simulator::{Simulator, SimulatorConfig};
/// let mut sim: Simulator = Simulator::new(SimulatorConfig { loss: 1.0, ..Default::default() });
/// sim.send(0.0, 1, 2, b"gone");
/// assert_eq!((sim.stats().sent, sim.stats().lost), (1, 1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimulatorStats {
    /// Packets passed to [`Simulator::send`].
    pub sent: u64,
    /// Copies handed out by [`Simulator::receive`].
    pub delivered: u64,
    /// Packets dropped by the loss probability.
    pub lost: u64,
    /// Extra copies queued by the duplicate probability.
    pub duplicated: u64,
    /// Copies with a flipped bit.
    pub corrupted: u64,
    /// Copies cut short.
    pub truncated: u64,
    /// Packets dropped because their direction was over its bandwidth cap.
    pub over_bandwidth: u64,
    /// Copies dropped because `max_in_flight` packets were already queued.
    pub over_capacity: u64,
}

/// One packet coming out of the simulator.
///
/// ```
/// use netser_transport::simulator::{Simulator, SimulatorConfig};
/// let mut sim: Simulator<u8> = Simulator::new(SimulatorConfig::default());
/// sim.send(1.5, 3, 4, b"hi");
/// let d = sim.receive(1.5).unwrap();
/// assert_eq!((d.from, d.to, d.data.as_slice(), d.sent_at), (3, 4, &b"hi"[..], 1.5));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery<A> {
    /// Sender address.
    pub from: A,
    /// Receiver address.
    pub to: A,
    /// The bytes, possibly corrupted or truncated.
    pub data: Vec<u8>,
    /// The `now` given to [`Simulator::send`].
    pub sent_at: f64,
}

/// The seeded network: packets go in with [`send`](Simulator::send) and come out at
/// their delivery time with [`receive`](Simulator::receive).
///
/// `A` is whatever the caller uses as an address (a peer index, a `SocketAddr`...).
///
/// ```
/// use netser_transport::simulator::{Simulator, SimulatorConfig};
/// let mut sim: Simulator = Simulator::new(SimulatorConfig { latency: 0.1, ..Default::default() });
/// sim.send(0.0, 1, 2, b"ping");
/// assert!(sim.receive(0.05).is_none()); // still in flight
/// assert_eq!(sim.next_delivery_time(), Some(0.1));
/// assert_eq!(sim.receive(0.1).unwrap().data, b"ping");
/// ```
#[derive(Debug, Clone)]
pub struct Simulator<A: Copy + Eq = u32> {
    config: SimulatorConfig,
    rng: SplitMix64,
    queue: BinaryHeap<Queued<A>>,
    /// Breaks delivery-time ties in send order.
    counter: u64,
    directions: Vec<Direction<A>>,
    stats: SimulatorStats,
}

impl<A: Copy + Eq> Simulator<A> {
    /// A simulator with these conditions, its random stream seeded by `config.seed`.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let sim: Simulator<u16> = Simulator::new(SimulatorConfig::default());
    /// assert_eq!(sim.next_delivery_time(), None);
    /// ```
    pub fn new(config: SimulatorConfig) -> Self {
        Self {
            rng: SplitMix64::new(config.seed),
            config,
            queue: BinaryHeap::new(),
            counter: 0,
            directions: Vec::new(),
            stats: SimulatorStats::default(),
        }
    }

    /// The current conditions.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let sim: Simulator = Simulator::new(SimulatorConfig { seed: 9, ..Default::default() });
    /// assert_eq!(sim.config().seed, 9);
    /// ```
    pub fn config(&self) -> &SimulatorConfig {
        &self.config
    }

    /// Changes the conditions for packets sent from now on; packets already queued keep
    /// their delivery time. The random stream carries on (the new seed is not read), so a
    /// run that changes conditions midway is still reproducible.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig::default());
    /// sim.set_config(SimulatorConfig { loss: 1.0, ..Default::default() });
    /// sim.send(0.0, 1, 2, b"x");
    /// assert!(sim.receive(1.0).is_none());
    /// ```
    pub fn set_config(&mut self, config: SimulatorConfig) {
        self.config = config;
    }

    /// Puts a packet on the network at time `now`.
    ///
    /// Every random decision is drawn whatever the probabilities, in a fixed order, so
    /// the run depends only on the seed and the calls.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig { duplicate: 1.0, ..Default::default() });
    /// sim.send(0.0, 1, 2, b"twice");
    /// assert!(sim.receive(0.0).is_some() && sim.receive(0.0).is_some());
    /// assert!(sim.receive(0.0).is_none());
    /// ```
    pub fn send(&mut self, now: f64, from: A, to: A, packet: &[u8]) {
        self.stats.sent += 1;
        if !self.take_bandwidth(now, from, to, packet.len()) {
            self.stats.over_bandwidth += 1;
            return;
        }
        let lost = self.rng.chance(self.config.loss);
        let duplicated = self.rng.chance(self.config.duplicate);
        if lost {
            self.stats.lost += 1;
            return;
        }
        self.enqueue(now, from, to, packet);
        if duplicated {
            self.stats.duplicated += 1;
            self.enqueue(now, from, to, packet);
        }
    }

    /// Pops one packet whose delivery time is `<= now` (earliest first; ties in send
    /// order), or `None` when nothing is due yet.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig::default());
    /// sim.send(0.0, 1, 2, b"a");
    /// sim.send(0.0, 1, 2, b"b");
    /// assert_eq!(sim.receive(0.0).unwrap().data, b"a");
    /// assert_eq!(sim.receive(0.0).unwrap().data, b"b");
    /// ```
    pub fn receive(&mut self, now: f64) -> Option<Delivery<A>> {
        let due = self
            .queue
            .peek()
            .is_some_and(|q| q.deliver_at.total_cmp(&now).is_le());
        if !due {
            return None;
        }
        let queued = self.queue.pop()?;
        self.stats.delivered += 1;
        Some(queued.delivery)
    }

    /// Earliest pending delivery time, for jumping time forward in tests.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig { latency: 0.25, ..Default::default() });
    /// sim.send(1.0, 1, 2, b"x");
    /// assert_eq!(sim.next_delivery_time(), Some(1.25));
    /// ```
    pub fn next_delivery_time(&self) -> Option<f64> {
        self.queue.peek().map(|q| q.deliver_at)
    }

    /// Number of copies queued (never more than `max_in_flight`).
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig { latency: 1.0, ..Default::default() });
    /// sim.send(0.0, 1, 2, b"x");
    /// assert_eq!(sim.in_flight(), 1);
    /// ```
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// What happened so far: sent, delivered, lost, duplicated, corrupted, truncated,
    /// dropped over bandwidth, dropped over capacity.
    ///
    /// ```
    /// use netser_transport::simulator::{Simulator, SimulatorConfig};
    /// let mut sim: Simulator = Simulator::new(SimulatorConfig::default());
    /// sim.send(0.0, 1, 2, b"x");
    /// let _ = sim.receive(0.0);
    /// assert_eq!(sim.stats().delivered, 1);
    /// ```
    pub fn stats(&self) -> &SimulatorStats {
        &self.stats
    }

    /// Applies delay, reordering, corruption and truncation to one copy and queues it.
    fn enqueue(&mut self, now: f64, from: A, to: A, packet: &[u8]) {
        let latency = non_negative(self.config.latency);
        let jitter = non_negative(self.config.jitter);
        let jitter_offset = self.rng.range(-jitter, jitter);
        let reordered = self.rng.chance(self.config.reorder);
        let reorder_delay = self
            .rng
            .range(0.0, (2.0 * (latency + jitter)).max(MIN_REORDER_SPAN));
        let corrupted = self.rng.chance(self.config.corrupt);
        let flip_at = self.rng.next_u64();
        let truncated = self.rng.chance(self.config.truncate);
        let cut_to = self.rng.next_u64();

        if self.queue.len() >= self.config.max_in_flight {
            self.stats.over_capacity += 1;
            return;
        }
        let mut delay = (latency + jitter_offset).max(0.0);
        if reordered {
            delay += reorder_delay;
        }
        let mut data = packet.to_vec();
        if corrupted && !data.is_empty() {
            let bit = flip_at % (data.len() as u64 * 8);
            data[(bit / 8) as usize] ^= 1 << (bit % 8);
            self.stats.corrupted += 1;
        }
        if truncated && !data.is_empty() {
            data.truncate((cut_to % data.len() as u64) as usize);
            self.stats.truncated += 1;
        }
        self.counter += 1;
        self.queue.push(Queued {
            deliver_at: now + delay,
            counter: self.counter,
            delivery: Delivery {
                from,
                to,
                data,
                sent_at: now,
            },
        });
    }

    /// Token bucket per direction: refills at the cap, holds [`BANDWIDTH_BURST`] seconds,
    /// and lets a packet through while the balance is not negative (so a packet larger
    /// than the bucket still passes on an idle link, and the average stays at the cap).
    fn take_bandwidth(&mut self, now: f64, from: A, to: A, len: usize) -> bool {
        let Some(cap) = self.config.bandwidth else {
            return true;
        };
        let cap = non_negative(cap);
        let burst = cap * BANDWIDTH_BURST;
        let index = match self
            .directions
            .iter()
            .position(|d| d.from == from && d.to == to)
        {
            Some(index) => index,
            None => {
                let fresh = Direction {
                    from,
                    to,
                    tokens: burst,
                    updated: now,
                };
                if self.directions.len() < MAX_DIRECTIONS {
                    self.directions.push(fresh);
                    self.directions.len() - 1
                } else {
                    let stalest = self
                        .directions
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1.updated.total_cmp(&b.1.updated))
                        .map_or(0, |(i, _)| i);
                    self.directions[stalest] = fresh;
                    stalest
                }
            }
        };
        let direction = &mut self.directions[index];
        let elapsed = non_negative(now - direction.updated);
        direction.tokens = (direction.tokens + elapsed * cap).min(burst);
        direction.updated = direction.updated.max(now);
        if direction.tokens < 0.0 {
            return false;
        }
        direction.tokens -= len as f64;
        true
    }
}

/// `x` if it is a positive number, else 0 (NaN included).
fn non_negative(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

#[derive(Debug, Clone)]
struct Direction<A> {
    from: A,
    to: A,
    tokens: f64,
    updated: f64,
}

#[derive(Debug, Clone)]
struct Queued<A> {
    deliver_at: f64,
    counter: u64,
    delivery: Delivery<A>,
}

impl<A> PartialEq for Queued<A> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl<A> Eq for Queued<A> {}

impl<A> PartialOrd for Queued<A> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<A> Ord for Queued<A> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest delivery first and,
    /// among equal times, the one sent first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .deliver_at
            .total_cmp(&self.deliver_at)
            .then_with(|| other.counter.cmp(&self.counter))
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and every seed (0 included) gives a
/// good stream, which is all a test network needs.
#[derive(Debug, Clone)]
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` from the top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[low, high)` (or `low` when the span is empty).
    fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// True with probability `p` (clamped to `0..=1`; NaN is 0). Always draws.
    fn chance(&mut self, p: f64) -> bool {
        let draw = self.unit();
        p > 0.0 && draw < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(sim: &mut Simulator, mut now: f64) -> Vec<(f64, Delivery<u32>)> {
        let mut out = Vec::new();
        while let Some(at) = sim.next_delivery_time() {
            now = now.max(at);
            while let Some(d) = sim.receive(now) {
                out.push((now, d));
            }
        }
        out
    }

    fn numbered(i: u32) -> [u8; 4] {
        i.to_le_bytes()
    }

    #[test]
    fn perfect_link_delivers_everything_in_order_after_latency() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: 0.1,
            ..Default::default()
        });
        for i in 0..100 {
            sim.send(f64::from(i) * 0.01, 1, 2, &numbered(i));
        }
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 100);
        for (i, (at, d)) in out.iter().enumerate() {
            assert_eq!(d.data, numbered(i as u32));
            assert!((at - d.sent_at - 0.1).abs() < 1e-9);
        }
        assert_eq!(sim.stats().delivered, 100);
    }

    #[test]
    fn nothing_is_delivered_early() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: 0.2,
            jitter: 0.05,
            seed: 3,
            ..Default::default()
        });
        for i in 0..200 {
            sim.send(0.0, 1, 2, &numbered(i));
        }
        assert!(sim.receive(0.149).is_none());
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 200);
        for (at, _) in &out {
            assert!((0.15..=0.25).contains(at), "delivered at {at}");
        }
        // Jitter really spreads the deliveries.
        let first = out.first().map(|o| o.0).unwrap_or_default();
        let last = out.last().map(|o| o.0).unwrap_or_default();
        assert!(last - first > 0.05, "spread {}", last - first);
    }

    #[test]
    fn loss_rate_within_tolerance() {
        let mut sim = Simulator::new(SimulatorConfig {
            loss: 0.25,
            seed: 11,
            max_in_flight: 100_000,
            ..Default::default()
        });
        let n = 20_000;
        for i in 0..n {
            sim.send(0.0, 1, 2, &numbered(i));
        }
        let delivered = drain(&mut sim, 0.0).len() as f64;
        let rate = 1.0 - delivered / f64::from(n);
        assert!((rate - 0.25).abs() < 0.02, "loss rate {rate}");
        assert_eq!(sim.stats().lost + sim.stats().delivered, u64::from(n));
    }

    #[test]
    fn duplicates_arrive_twice() {
        let mut sim = Simulator::new(SimulatorConfig {
            duplicate: 1.0,
            latency: 0.05,
            jitter: 0.02,
            seed: 5,
            ..Default::default()
        });
        for i in 0..50 {
            sim.send(0.0, 1, 2, &numbered(i));
        }
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 100);
        for i in 0..50 {
            let copies = out.iter().filter(|(_, d)| d.data == numbered(i)).count();
            assert_eq!(copies, 2);
        }
        assert_eq!(sim.stats().duplicated, 50);
    }

    #[test]
    fn partial_duplicate_rate() {
        let mut sim = Simulator::new(SimulatorConfig {
            duplicate: 0.1,
            seed: 21,
            max_in_flight: 100_000,
            ..Default::default()
        });
        for i in 0..10_000 {
            sim.send(0.0, 1, 2, &numbered(i));
        }
        let extra = drain(&mut sim, 0.0).len() - 10_000;
        assert!((800..1200).contains(&extra), "duplicates {extra}");
    }

    #[test]
    fn reordering_lets_later_packets_overtake() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: 0.05,
            reorder: 0.2,
            seed: 8,
            ..Default::default()
        });
        for i in 0..1000 {
            sim.send(f64::from(i) * 0.001, 1, 2, &numbered(i));
        }
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 1000);
        let order: Vec<u32> = out
            .iter()
            .map(|(_, d)| u32::from_le_bytes(d.data[..4].try_into().unwrap()))
            .collect();
        let inversions = order.windows(2).filter(|w| w[0] > w[1]).count();
        assert!(inversions > 50, "inversions {inversions}");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn no_reordering_without_reorder_or_jitter() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: 0.05,
            loss: 0.3,
            seed: 8,
            ..Default::default()
        });
        for i in 0..1000 {
            sim.send(f64::from(i) * 0.001, 1, 2, &numbered(i));
        }
        let order: Vec<u32> = drain(&mut sim, 0.0)
            .iter()
            .map(|(_, d)| u32::from_le_bytes(d.data[..4].try_into().unwrap()))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn corruption_flips_exactly_one_bit() {
        let mut sim = Simulator::new(SimulatorConfig {
            corrupt: 1.0,
            seed: 13,
            ..Default::default()
        });
        let packet = [0x5au8; 32];
        for _ in 0..100 {
            sim.send(0.0, 1, 2, &packet);
        }
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 100);
        for (_, d) in &out {
            assert_eq!(d.data.len(), 32);
            let flipped: u32 = d
                .data
                .iter()
                .zip(&packet)
                .map(|(a, b)| (a ^ b).count_ones())
                .sum();
            assert_eq!(flipped, 1);
        }
        assert_eq!(sim.stats().corrupted, 100);
    }

    #[test]
    fn truncation_cuts_packets_short() {
        let mut sim = Simulator::new(SimulatorConfig {
            truncate: 1.0,
            seed: 17,
            ..Default::default()
        });
        let packet: Vec<u8> = (0..64).collect();
        for _ in 0..200 {
            sim.send(0.0, 1, 2, &packet);
        }
        sim.send(0.0, 1, 2, &[]); // nothing to cut: delivered as is
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 201);
        let mut lengths = std::collections::BTreeSet::new();
        for (_, d) in &out[..200] {
            assert!(d.data.len() < 64);
            assert_eq!(d.data[..], packet[..d.data.len()]);
            lengths.insert(d.data.len());
        }
        assert!(
            lengths.len() > 30,
            "only {} distinct lengths",
            lengths.len()
        );
        assert!(out[200].1.data.is_empty());
        assert_eq!(sim.stats().truncated, 200);
    }

    #[test]
    fn bandwidth_cap_drops_the_excess() {
        // 10 kB/s, 100-byte packets offered at 1000 per second (100 kB/s) for 10 s:
        // about a tenth gets through (plus the initial burst of 1 kB).
        let mut sim = Simulator::new(SimulatorConfig {
            bandwidth: Some(10_000.0),
            ..Default::default()
        });
        let packet = [0u8; 100];
        for i in 0..10_000 {
            sim.send(f64::from(i) * 0.001, 1, 2, &packet);
        }
        let delivered = drain(&mut sim, 0.0).len();
        assert!((990..=1020).contains(&delivered), "delivered {delivered}");
        assert_eq!(sim.stats().over_bandwidth as usize, 10_000 - delivered);
    }

    #[test]
    fn bandwidth_is_per_direction() {
        let mut sim = Simulator::new(SimulatorConfig {
            bandwidth: Some(1000.0),
            ..Default::default()
        });
        // Each direction's first packet passes on an idle link even when larger than the
        // bucket; the second in the same instant does not.
        sim.send(0.0, 1, 2, &[0; 500]);
        sim.send(0.0, 2, 1, &[0; 500]);
        sim.send(0.0, 1, 2, &[0; 500]);
        assert_eq!(drain(&mut sim, 0.0).len(), 2);
        assert_eq!(sim.stats().over_bandwidth, 1);
        // After the debt is paid back (0.4 s) a packet passes again.
        sim.send(0.45, 1, 2, &[0; 10]);
        assert_eq!(drain(&mut sim, 0.45).len(), 1);
    }

    #[test]
    fn under_the_cap_nothing_is_dropped() {
        let mut sim = Simulator::new(SimulatorConfig {
            bandwidth: Some(100_000.0),
            ..Default::default()
        });
        for i in 0..1000 {
            sim.send(f64::from(i) * 0.01, 1, 2, &[0; 900]);
        }
        assert_eq!(drain(&mut sim, 0.0).len(), 1000);
    }

    #[test]
    fn queue_is_bounded() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: 10.0,
            duplicate: 0.5,
            max_in_flight: 64,
            seed: 2,
            ..Default::default()
        });
        for i in 0..10_000 {
            sim.send(0.0, 1, 2, &numbered(i));
            assert!(sim.in_flight() <= 64);
        }
        assert_eq!(sim.in_flight(), 64);
        let s = sim.stats().clone();
        assert_eq!(s.over_capacity, 10_000 + s.duplicated - 64);
        // The queue holds the first packets sent; nothing later got in.
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 64);
        assert!(out
            .iter()
            .all(|(_, d)| u32::from_le_bytes(d.data[..4].try_into().unwrap()) < 64));
    }

    #[test]
    fn zero_capacity_drops_everything() {
        let mut sim = Simulator::new(SimulatorConfig {
            max_in_flight: 0,
            ..Default::default()
        });
        sim.send(0.0, 1, 2, b"x");
        assert!(sim.receive(100.0).is_none());
        assert_eq!(sim.stats().over_capacity, 1);
    }

    fn terrible(seed: u64) -> SimulatorConfig {
        SimulatorConfig {
            latency: 0.3,
            jitter: 0.2,
            loss: 0.3,
            duplicate: 0.2,
            reorder: 0.2,
            corrupt: 0.1,
            truncate: 0.1,
            bandwidth: Some(12_000.0),
            max_in_flight: 100,
            seed,
        }
    }

    fn run(seed: u64) -> (Vec<(f64, Delivery<u32>)>, SimulatorStats) {
        let mut sim = Simulator::new(terrible(seed));
        let mut out = Vec::new();
        for i in 0..5000u32 {
            let now = f64::from(i) * 0.002;
            let len = (i % 200) as usize;
            sim.send(now, i % 3, (i + 1) % 3, &vec![i as u8; len]);
            while let Some(d) = sim.receive(now) {
                out.push((now, d));
            }
        }
        out.extend(drain(&mut sim, 10.0));
        (out, sim.stats().clone())
    }

    #[test]
    fn same_seed_same_run() {
        let a = run(1234);
        let b = run(1234);
        assert_eq!(a, b);
        let c = run(1235);
        assert_ne!(a.0, c.0);
    }

    #[test]
    fn stats_account_for_every_packet() {
        let (out, s) = run(99);
        assert_eq!(s.sent, 5000);
        assert_eq!(s.delivered as usize, out.len());
        // Every packet and extra copy was delivered or dropped for a counted reason
        // (duplicates are only made of packets that were not lost).
        assert!(
            s.lost > 0 && s.duplicated > 0 && s.over_bandwidth > 0 && s.over_capacity > 0,
            "{s:?}"
        );
        assert_eq!(
            s.sent + s.duplicated,
            s.delivered + s.lost + s.over_bandwidth + s.over_capacity
        );
    }

    #[test]
    fn bad_config_values_do_not_panic() {
        let mut sim = Simulator::new(SimulatorConfig {
            latency: f64::NAN,
            jitter: -1.0,
            loss: f64::NAN,
            duplicate: 2.0,
            reorder: -0.5,
            corrupt: f64::INFINITY,
            truncate: 0.0,
            bandwidth: Some(f64::NAN),
            max_in_flight: 10,
            seed: 0,
        });
        for _ in 0..5 {
            sim.send(0.0, 1, 2, b"abc");
        }
        // Bandwidth NaN counts as 0 bytes/s: only the first packet (idle link) passes,
        // and it is duplicated (p = 2 clamps to 1) and corrupted.
        let out = drain(&mut sim, 0.0);
        assert_eq!(out.len(), 2);
        assert_eq!(sim.stats().over_bandwidth, 4);
        assert_eq!(sim.stats().corrupted, 2);
    }
}
