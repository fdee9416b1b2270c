//! Fixed-seed snapshots: the same entities for every serializer and every run.

use crate::model::{Entity, Position, Snapshot, MAX_HEALTH, WORLD_HALF_EXTENT, WORLD_HEIGHT};

/// SplitMix64: tiny, fast and good enough to scatter entities; fixed seed, so every run
/// measures the same bytes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from 24 bits so that every value is an exact `f32`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        (lo + (hi - lo) * self.unit()).clamp(lo, hi)
    }

    /// A fair coin.
    pub fn bool(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }
}

/// Snapshots a random-rest timing loop cycles through (see [`Rest::Random`]): 64, where
/// 8 and 16 still let the branch predictor of the machine in BENCHMARKS.md learn the
/// coins (netser's decode took 1.8 us instead of 2.8).
pub const RANDOM_VARIANTS: usize = 64;

/// Which entities are at rest (velocity zero, gated off by their `at_rest` bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// None: every entity moves.
    None,
    /// Every other entity: a pattern a branch predictor learns.
    Alternate,
    /// Each entity by a fair coin (fixed seeds): a pattern no predictor learns, so code
    /// that branches on the gate pays its mispredictions here. The timing loops cycle
    /// through [`RANDOM_VARIANTS`] snapshots whose coins differ: a predictor learns the
    /// coins of one snapshot decoded again and again (and of up to 16 such snapshots,
    /// measured), which no game's snapshots repeat.
    Random,
}

/// The workload: how many entities, and which of them are at rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// Entities in the snapshot.
    pub entities: usize,
    /// Which entities are at rest.
    pub rest: Rest,
}

impl Workload {
    /// The workloads measured: 64 and 256 entities, all moving or every other one at
    /// rest, and 256 entities at rest at random.
    pub const ALL: [Workload; 5] = [
        Workload::new(64, false),
        Workload::new(64, true),
        Workload::new(256, false),
        Workload::new(256, true),
        Workload::random_rest(256),
    ];

    /// A workload: all moving, or every other entity at rest.
    pub const fn new(entities: usize, half_at_rest: bool) -> Self {
        let rest = if half_at_rest {
            Rest::Alternate
        } else {
            Rest::None
        };
        Workload { entities, rest }
    }

    /// A workload whose entities are each at rest by a fair coin.
    pub const fn random_rest(entities: usize) -> Self {
        Workload {
            entities,
            rest: Rest::Random,
        }
    }

    /// A short label, e.g. `256 moving`, `256 half-rest` or `256 random-rest`.
    pub fn label(&self) -> String {
        let kind = match self.rest {
            Rest::None => "moving",
            Rest::Alternate => "half-rest",
            Rest::Random => "random-rest",
        };
        format!("{} {}", self.entities, kind)
    }

    /// The snapshot, the same on every call and every machine (the sizes in the report
    /// are its sizes).
    pub fn snapshot(&self) -> Snapshot {
        self.variant(0)
    }

    /// The snapshots a timing loop cycles through: [`Workload::snapshot`] alone, or for
    /// random rest, it and `RANDOM_VARIANTS - 1` more with the coins drawn again (the
    /// same entities otherwise).
    ///
    /// ```
    /// use netser_bench::{Workload, RANDOM_VARIANTS};
    /// assert_eq!(Workload::new(64, true).snapshots().len(), 1);
    /// let random = Workload::random_rest(256).snapshots();
    /// assert_eq!(random.len(), RANDOM_VARIANTS);
    /// assert_eq!(random[0], Workload::random_rest(256).snapshot());
    /// ```
    pub fn snapshots(&self) -> Vec<Snapshot> {
        match self.rest {
            Rest::Random => (0..RANDOM_VARIANTS).map(|v| self.variant(v)).collect(),
            Rest::None | Rest::Alternate => vec![self.snapshot()],
        }
    }

    /// The snapshot whose coins come from seed variant `v` (0: [`Workload::snapshot`]).
    fn variant(&self, v: usize) -> Snapshot {
        let mut rng = Rng::new(0x6E65_7473_6572 ^ self.entities as u64);
        // The coins come from a generator of their own, so the other workloads' entities
        // stay what they were before this one was added.
        let mut coin = Rng::new(0x7265_7374 ^ self.entities as u64 ^ (v as u64) << 32);
        let entities = (0..self.entities)
            .map(|i| {
                let at_rest = match self.rest {
                    Rest::None => false,
                    Rest::Alternate => i % 2 == 1,
                    Rest::Random => coin.bool(),
                };
                entity(&mut rng, i, at_rest)
            })
            .collect();
        Snapshot {
            tick: 90_210,
            entities,
        }
    }
}

fn entity(rng: &mut Rng, index: usize, at_rest: bool) -> Entity {
    let position = Position {
        x: rng.range(-WORLD_HALF_EXTENT, WORLD_HALF_EXTENT),
        y: rng.range(-WORLD_HALF_EXTENT, WORLD_HALF_EXTENT),
        z: rng.range(0.0, WORLD_HEIGHT / 4.0),
    };
    let orientation = unit_quaternion(rng);
    let velocity = if at_rest {
        [0.0; 3]
    } else {
        [
            rng.range(-12.0, 12.0),
            rng.range(-12.0, 12.0),
            rng.range(-3.0, 3.0),
        ]
    };
    Entity {
        // Distinct ids (37 is prime to 4096), not simply 0..n.
        id: ((index * 37 + 11) % 4096) as u16,
        position,
        orientation,
        at_rest,
        velocity,
        health: (rng.next_u64() % (MAX_HEALTH as u64 + 1)) as u8,
        on_ground: rng.bool(),
        crouching: rng.bool(),
        firing: rng.bool(),
    }
}

/// A random unit quaternion (components uniform in a cube, then normalized).
fn unit_quaternion(rng: &mut Rng) -> [f32; 4] {
    loop {
        let q = [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ];
        let len = q.iter().map(|c| c * c).sum::<f32>().sqrt();
        if len > 0.1 {
            return q.map(|c| c / len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_fixed_and_sized() {
        for w in Workload::ALL {
            let s = w.snapshot();
            assert_eq!(s, w.snapshot());
            assert_eq!(s.entities.len(), w.entities);
            let resting = s.entities.iter().filter(|e| e.at_rest).count();
            match w.rest {
                Rest::None => assert_eq!(resting, 0),
                Rest::Alternate => assert_eq!(resting, w.entities / 2),
                // A fair coin: 128 +- 3 standard deviations (8) of 256.
                Rest::Random => assert!((104..=152).contains(&resting), "{resting}"),
            }
        }
        // Not alternating: some two neighbours agree.
        let random = Workload::random_rest(256).snapshot().entities;
        assert!(random.windows(2).any(|p| p[0].at_rest == p[1].at_rest));
        assert_ne!(
            Workload::new(64, false).snapshot().entities[0],
            Workload::new(64, false).snapshot().entities[1]
        );
    }

    #[test]
    fn values_stay_in_the_declared_world() {
        let s = Workload::new(256, true).snapshot();
        let mut ids: Vec<u16> = s.entities.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 256);
        for e in &s.entities {
            assert!(e.position.x.abs() <= WORLD_HALF_EXTENT);
            assert!((0.0..=WORLD_HEIGHT).contains(&e.position.z));
            let len2: f32 = e.orientation.iter().map(|c| c * c).sum();
            assert!((len2 - 1.0).abs() < 1e-4);
            assert!(e.health <= MAX_HEALTH);
            assert_eq!(e.at_rest, e.velocity == [0.0; 3]);
        }
    }

    #[test]
    fn rng_unit_is_in_range() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
