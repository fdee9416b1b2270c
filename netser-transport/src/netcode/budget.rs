//! What one connected client may make the server do: token buckets of datagrams, bytes
//! and messages per client slot, checked before a datagram is decrypted.
//!
//! A client holding a valid connect token can send as fast as its link allows. Without a
//! bound, every one of its datagrams costs the server a decryption and a decode, and the
//! other clients' datagrams wait behind them in the socket. [`ClientBudgets`] refuses a
//! connected client's datagram before any of that work once one of its buckets is empty;
//! a refused datagram is never acked, so a well-behaved reliable sender slows down by
//! itself and resends, and nothing it sent is lost.
//!
//! A datagram is charged to the connected client whose address it comes from before it is
//! authenticated (that is what makes a refusal cheap). Someone who can send from that
//! address (on the client's path, or behind its NAT) can spend its budget, as they could
//! already drop its packets; with a [`DisconnectPolicy`] they can also have it
//! disconnected, which is worth weighing before turning one on.

use core::fmt;

/// How much one connected client may make the server do: three token buckets (datagrams,
/// bytes, messages), each refilled at its rate up to its burst, and whether a client that
/// keeps sending past them is disconnected.
///
/// Over any interval of `t` seconds a client gets at most `burst + rate * t` of each, so
/// one server tick handles at most a burst of a client's datagrams however fast it sends.
/// The defaults leave room for what the default
/// [`ConnectionConfig`](crate::connection::ConnectionConfig) can send (256 kB/s of
/// messages and 125 kB/s of block slices, a whole 256 KiB block sent at once with
/// `initial_burst`, a tick rate up to 1 kHz) several times over, so a normal game never
/// meets them; a game that knows its traffic lowers them.
///
/// ```
/// use netser_transport::netcode::{BudgetConfig, DisconnectPolicy};
/// let config = BudgetConfig {
///     datagrams_per_second: 240.0,
///     disconnect: Some(DisconnectPolicy { refused: 600, window: 1.0 }),
///     ..BudgetConfig::default()
/// };
/// assert_eq!(config.validate(), Ok(()));
/// assert_eq!(BudgetConfig::default().disconnect, None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetConfig {
    /// Datagrams per second one client's bucket refills by (default 2000). Finite and
    /// above 0; otherwise [`BudgetConfigError::DatagramsPerSecond`].
    pub datagrams_per_second: f64,
    /// Most datagrams one client may send at once (default 512: a block's 256 slices
    /// with their acks and messages). At least 1; otherwise
    /// [`BudgetConfigError::DatagramBurst`].
    pub datagram_burst: u32,
    /// Bytes per second, counted as they arrive, encryption included (default 2 MiB).
    /// Finite and above 0; otherwise [`BudgetConfigError::BytesPerSecond`].
    pub bytes_per_second: f64,
    /// Most bytes one client may send at once (default 1 MiB). At least one packet,
    /// [`MAX_PACKET_BYTES`](super::MAX_PACKET_BYTES), so the largest packet can pass;
    /// otherwise [`BudgetConfigError::ByteBurst`].
    pub byte_burst: usize,
    /// Messages per second decoded from one client, on all channels, duplicates
    /// included (default 16384). Messages are counted after the datagram that carried
    /// them is decoded, so a client may overdraw by one datagram's messages; its next
    /// datagrams wait until the bucket is positive again. Finite and above 0; otherwise
    /// [`BudgetConfigError::MessagesPerSecond`].
    pub messages_per_second: f64,
    /// Most messages one client may send at once (default 16384). At least 1; otherwise
    /// [`BudgetConfigError::MessageBurst`].
    pub message_burst: u32,
    /// When a client that keeps sending past its budget is disconnected, for a reason
    /// of its own (`DisconnectReason::OverBudget`). `None` (the default): never; its
    /// extra datagrams are refused and counted.
    pub disconnect: Option<DisconnectPolicy>,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            datagrams_per_second: 2000.0,
            datagram_burst: 512,
            bytes_per_second: 2.0 * 1024.0 * 1024.0,
            byte_burst: 1024 * 1024,
            messages_per_second: 16384.0,
            message_burst: 16384,
            disconnect: None,
        }
    }
}

/// When [`ClientBudgets`] disconnects a client: once `refused` of its datagrams were
/// refused within `window` seconds. A legitimate burst past the budget is refused a few
/// datagrams, which its reliable channels resend; a flood is refused thousands a second.
///
/// ```
/// use netser_transport::netcode::DisconnectPolicy;
/// let policy = DisconnectPolicy::default();
/// assert_eq!((policy.refused, policy.window), (1000, 1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DisconnectPolicy {
    /// Refused datagrams that disconnect the client (default 1000). At least 1;
    /// otherwise [`BudgetConfigError::DisconnectRefused`].
    pub refused: u64,
    /// Seconds the refusals are counted over (default 1). Finite and above 0;
    /// otherwise [`BudgetConfigError::DisconnectWindow`].
    pub window: f64,
}

impl Default for DisconnectPolicy {
    fn default() -> Self {
        Self {
            refused: 1000,
            window: 1.0,
        }
    }
}

/// A [`BudgetConfig`] setting out of its bounds, from [`BudgetConfig::validate`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum BudgetConfigError {
    /// `datagrams_per_second` (the value) is not finite and above 0.
    DatagramsPerSecond(f64),
    /// `datagram_burst` is 0: no datagram would ever pass.
    DatagramBurst,
    /// `bytes_per_second` (the value) is not finite and above 0.
    BytesPerSecond(f64),
    /// `byte_burst` (the value) is below one packet.
    ByteBurst(usize),
    /// `messages_per_second` (the value) is not finite and above 0.
    MessagesPerSecond(f64),
    /// `message_burst` is 0: no message would ever pass.
    MessageBurst,
    /// `disconnect.refused` is 0: every client would be disconnected.
    DisconnectRefused,
    /// `disconnect.window` (the value) is not finite and above 0.
    DisconnectWindow(f64),
}

impl fmt::Display for BudgetConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DatagramsPerSecond(v) => {
                write!(
                    f,
                    "datagrams_per_second is {v}; it must be finite and above 0"
                )
            }
            Self::DatagramBurst => write!(f, "datagram_burst is 0; it must be at least 1"),
            Self::BytesPerSecond(v) => {
                write!(f, "bytes_per_second is {v}; it must be finite and above 0")
            }
            Self::ByteBurst(v) => write!(
                f,
                "byte_burst is {v}; it must be at least one packet ({} bytes)",
                super::MAX_PACKET_BYTES
            ),
            Self::MessagesPerSecond(v) => {
                write!(
                    f,
                    "messages_per_second is {v}; it must be finite and above 0"
                )
            }
            Self::MessageBurst => write!(f, "message_burst is 0; it must be at least 1"),
            Self::DisconnectRefused => {
                write!(f, "disconnect.refused is 0; it must be at least 1")
            }
            Self::DisconnectWindow(v) => {
                write!(f, "disconnect.window is {v}; it must be finite and above 0")
            }
        }
    }
}

impl std::error::Error for BudgetConfigError {}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

impl BudgetConfig {
    /// Checks every setting against its documented bounds.
    ///
    /// # Errors
    /// The first setting out of its bounds, as a [`BudgetConfigError`].
    ///
    /// ```
    /// use netser_transport::netcode::{BudgetConfig, BudgetConfigError};
    /// let none = BudgetConfig { datagram_burst: 0, ..BudgetConfig::default() };
    /// assert_eq!(none.validate(), Err(BudgetConfigError::DatagramBurst));
    /// ```
    pub fn validate(&self) -> Result<(), BudgetConfigError> {
        if !positive(self.datagrams_per_second) {
            return Err(BudgetConfigError::DatagramsPerSecond(
                self.datagrams_per_second,
            ));
        }
        if self.datagram_burst == 0 {
            return Err(BudgetConfigError::DatagramBurst);
        }
        if !positive(self.bytes_per_second) {
            return Err(BudgetConfigError::BytesPerSecond(self.bytes_per_second));
        }
        if self.byte_burst < super::MAX_PACKET_BYTES {
            return Err(BudgetConfigError::ByteBurst(self.byte_burst));
        }
        if !positive(self.messages_per_second) {
            return Err(BudgetConfigError::MessagesPerSecond(
                self.messages_per_second,
            ));
        }
        if self.message_burst == 0 {
            return Err(BudgetConfigError::MessageBurst);
        }
        if let Some(policy) = self.disconnect {
            if policy.refused == 0 {
                return Err(BudgetConfigError::DisconnectRefused);
            }
            if !positive(policy.window) {
                return Err(BudgetConfigError::DisconnectWindow(policy.window));
            }
        }
        Ok(())
    }
}

/// Which bucket refused a datagram.
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverBudget {
    /// The client sent more datagrams than its budget.
    Datagrams,
    /// The client sent more bytes than its budget.
    Bytes,
    /// The client sent more messages than its budget.
    Messages,
}

/// What [`ClientBudgets::admit`] decided about a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Within budget: decrypt and decode it (it was charged).
    Admitted,
    /// Over budget: drop it unread, unacked (counted).
    Refused(OverBudget),
    /// Over budget, and the client crossed its [`DisconnectPolicy`]: drop it and
    /// disconnect the client (counted; reported once per session).
    Disconnect(OverBudget),
}

/// What [`ClientBudgets`] refused, in total or for one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetCounters {
    /// Datagrams admitted.
    pub admitted: u64,
    /// Datagrams refused because the datagram bucket was empty.
    pub refused_datagrams: u64,
    /// Datagrams refused because the byte bucket could not pay for them.
    pub refused_bytes: u64,
    /// Datagrams refused because the message bucket was overdrawn.
    pub refused_messages: u64,
    /// Bytes of the datagrams refused, for any reason.
    pub bytes_refused: u64,
    /// Messages decoded from the client (what the message bucket was charged).
    pub messages: u64,
    /// Clients disconnected by their [`DisconnectPolicy`].
    pub disconnected: u64,
}

impl BudgetCounters {
    /// Datagrams refused, for any reason.
    ///
    /// ```
    /// use netser_transport::netcode::BudgetCounters;
    /// let counters = BudgetCounters { refused_datagrams: 2, refused_bytes: 1, ..Default::default() };
    /// assert_eq!(counters.refused(), 3);
    /// ```
    pub fn refused(&self) -> u64 {
        self.refused_datagrams + self.refused_bytes + self.refused_messages
    }

    fn refuse(&mut self, why: OverBudget, bytes: usize) {
        match why {
            OverBudget::Datagrams => self.refused_datagrams += 1,
            OverBudget::Bytes => self.refused_bytes += 1,
            OverBudget::Messages => self.refused_messages += 1,
        }
        self.bytes_refused += bytes as u64;
    }
}

/// Tokens a bucket may lack and still pay, so a client sending exactly at its rate is not
/// refused through floating-point rounding of the refill.
const ROUNDING: f64 = 1e-6;

/// A bucket of `tokens` refilled at `rate` a second up to `burst`; it may go below zero
/// when charged after the fact (messages).
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    rate: f64,
    burst: f64,
}

impl Bucket {
    fn full(rate: f64, burst: f64) -> Self {
        Self {
            tokens: burst,
            rate,
            burst,
        }
    }

    fn refill(&mut self, elapsed: f64) {
        self.tokens = (self.tokens + self.rate * elapsed).min(self.burst);
    }
}

/// One connected client's buckets and counters.
#[derive(Debug, Clone)]
struct ClientBudget {
    datagrams: Bucket,
    bytes: Bucket,
    messages: Bucket,
    /// The last time the buckets were refilled; time never goes back here.
    last: f64,
    /// Refusals counted toward the disconnect policy since `window_start`.
    window_refused: u64,
    window_start: f64,
    disconnected: bool,
    counters: BudgetCounters,
}

impl ClientBudget {
    fn new(config: &BudgetConfig, now: f64) -> Self {
        Self {
            datagrams: Bucket::full(config.datagrams_per_second, config.datagram_burst.into()),
            bytes: Bucket::full(config.bytes_per_second, config.byte_burst as f64),
            messages: Bucket::full(config.messages_per_second, config.message_burst.into()),
            last: now,
            window_refused: 0,
            window_start: now,
            disconnected: false,
            counters: BudgetCounters::default(),
        }
    }

    fn refill(&mut self, now: f64) {
        let elapsed = now - self.last;
        // Not `!(elapsed > 0)`: a NaN `now` must not refill either.
        if elapsed > 0.0 {
            self.datagrams.refill(elapsed);
            self.bytes.refill(elapsed);
            self.messages.refill(elapsed);
            self.last = now;
        }
    }
}

/// The budgets of a server's client slots: what each connected client may make the
/// server do per second and per tick (see [`BudgetConfig`]), with what was refused.
///
/// Call [`start`](Self::start) when a client takes a slot, [`admit`](Self::admit) for
/// each datagram from a connected client before decrypting it (a refused one costs only
/// this check), and [`charge_messages`](Self::charge_messages) with the messages its
/// payload carried. A refused datagram takes no tokens, so a flood past the budget
/// leaves the client exactly its budget. Memory: one small record per slot, fixed at
/// [`new`](Self::new).
///
/// ```
/// use netser_transport::netcode::{Admission, BudgetConfig, ClientBudgets, OverBudget};
/// let config = BudgetConfig { datagrams_per_second: 10.0, datagram_burst: 2, ..BudgetConfig::default() };
/// let mut budgets = ClientBudgets::new(config, 4).unwrap();
/// budgets.start(0, 100.0);
/// assert_eq!(budgets.admit(0, 100.0, 1200), Admission::Admitted);
/// assert_eq!(budgets.admit(0, 100.0, 1200), Admission::Admitted);
/// assert_eq!(budgets.admit(0, 100.0, 1200), Admission::Refused(OverBudget::Datagrams));
/// // A tenth of a second later, one more datagram's worth has come back.
/// assert_eq!(budgets.admit(0, 100.1, 1200), Admission::Admitted);
/// assert_eq!(budgets.counters().refused(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct ClientBudgets {
    config: BudgetConfig,
    slots: Vec<Option<ClientBudget>>,
    counters: BudgetCounters,
}

impl ClientBudgets {
    /// Budgets for `slots` client slots, none started.
    ///
    /// # Errors
    /// [`BudgetConfigError`] if `config` does not validate.
    pub fn new(config: BudgetConfig, slots: usize) -> Result<Self, BudgetConfigError> {
        config.validate()?;
        Ok(Self {
            config,
            slots: (0..slots).map(|_| None).collect(),
            counters: BudgetCounters::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &BudgetConfig {
        &self.config
    }

    /// Replaces the settings; every started client starts again with full buckets.
    ///
    /// # Errors
    /// [`BudgetConfigError`] if `config` does not validate; nothing changes.
    pub fn set_config(&mut self, config: BudgetConfig) -> Result<(), BudgetConfigError> {
        config.validate()?;
        for budget in self.slots.iter_mut().flatten() {
            let counters = budget.counters;
            *budget = ClientBudget::new(&config, budget.last);
            budget.counters = counters;
        }
        self.config = config;
        Ok(())
    }

    /// A client took `slot` at `now`: full buckets and fresh counters. A slot out of
    /// range is ignored.
    pub fn start(&mut self, slot: usize, now: f64) {
        if let Some(entry) = self.slots.get_mut(slot) {
            *entry = Some(ClientBudget::new(&self.config, now));
        }
    }

    /// The client of `slot` left; its counters go (the totals keep them).
    pub fn stop(&mut self, slot: usize) {
        if let Some(entry) = self.slots.get_mut(slot) {
            *entry = None;
        }
    }

    /// Decides about a datagram of `bytes` bytes from the client of `slot` at `now`,
    /// and charges it if admitted. A slot not started (no client) is admitted: the
    /// layer that knows the slot refuses what does not belong to it.
    pub fn admit(&mut self, slot: usize, now: f64, bytes: usize) -> Admission {
        let Some(Some(budget)) = self.slots.get_mut(slot) else {
            return Admission::Admitted;
        };
        budget.refill(now);
        let why = if budget.datagrams.tokens < 1.0 - ROUNDING {
            Some(OverBudget::Datagrams)
        } else if budget.bytes.tokens < bytes as f64 - ROUNDING {
            Some(OverBudget::Bytes)
        } else if budget.messages.tokens <= 0.0 {
            Some(OverBudget::Messages)
        } else {
            None
        };
        let Some(why) = why else {
            budget.datagrams.tokens -= 1.0;
            budget.bytes.tokens -= bytes as f64;
            budget.counters.admitted += 1;
            self.counters.admitted += 1;
            return Admission::Admitted;
        };
        budget.counters.refuse(why, bytes);
        self.counters.refuse(why, bytes);
        let Some(policy) = self.config.disconnect else {
            return Admission::Refused(why);
        };
        // Not `!(now - start < window)`: a NaN `now` keeps the window.
        if now - budget.window_start >= policy.window {
            budget.window_start = now;
            budget.window_refused = 0;
        }
        budget.window_refused += 1;
        if budget.window_refused >= policy.refused && !budget.disconnected {
            budget.disconnected = true;
            budget.counters.disconnected += 1;
            self.counters.disconnected += 1;
            return Admission::Disconnect(why);
        }
        Admission::Refused(why)
    }

    /// Charges the client of `slot` for `messages` decoded from an admitted datagram.
    /// The bucket may go below zero; the client's next datagrams are refused until it
    /// is positive again.
    pub fn charge_messages(&mut self, slot: usize, messages: u64) {
        if let Some(Some(budget)) = self.slots.get_mut(slot) {
            budget.messages.tokens -= messages as f64;
            budget.counters.messages += messages;
            self.counters.messages += messages;
        }
    }

    /// What was admitted and refused, all clients since the budgets were made.
    pub fn counters(&self) -> &BudgetCounters {
        &self.counters
    }

    /// What was admitted and refused for the client of `slot` in its session, if one
    /// is started there.
    pub fn client_counters(&self, slot: usize) -> Option<&BudgetCounters> {
        Some(&self.slots.get(slot)?.as_ref()?.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets(config: BudgetConfig) -> ClientBudgets {
        let mut budgets = ClientBudgets::new(config, 2).unwrap();
        budgets.start(0, 10.0);
        budgets
    }

    /// Over any interval a client gets its burst plus the rate, however fast it sends.
    #[test]
    fn a_flood_gets_exactly_its_burst_and_rate() {
        let mut b = budgets(BudgetConfig {
            datagrams_per_second: 100.0,
            datagram_burst: 20,
            ..BudgetConfig::default()
        });
        let mut admitted = 0;
        // 10,000 datagrams a second for 2 s, a tick of 1 ms.
        for i in 0..20_000 {
            let now = 10.0 + f64::from(i) * 1e-4;
            if b.admit(0, now, 100) == Admission::Admitted {
                admitted += 1;
            }
        }
        // 20 at once, then 100 a second over 2 s (less a rounding datagram).
        assert!((219..=220).contains(&admitted), "{admitted}");
        assert_eq!(b.counters().admitted, admitted);
        assert_eq!(b.counters().refused_datagrams, 20_000 - admitted);
        assert_eq!(b.counters().bytes_refused, (20_000 - admitted) * 100);
        assert_eq!(b.client_counters(0), Some(b.counters()));
    }

    /// Large datagrams run out of bytes before they run out of datagrams.
    #[test]
    fn bytes_bound_large_datagrams() {
        let mut b = budgets(BudgetConfig {
            bytes_per_second: 12_000.0,
            byte_burst: 3 * 1200,
            ..BudgetConfig::default()
        });
        for _ in 0..3 {
            assert_eq!(b.admit(0, 10.0, 1200), Admission::Admitted);
        }
        assert_eq!(
            b.admit(0, 10.0, 1200),
            Admission::Refused(OverBudget::Bytes)
        );
        // A small one still fits what is left.
        assert_eq!(b.admit(0, 10.0, 0), Admission::Admitted);
        assert_eq!(
            b.admit(0, 10.05, 1200),
            Admission::Refused(OverBudget::Bytes)
        );
        assert_eq!(b.admit(0, 10.11, 1200), Admission::Admitted);
        assert_eq!(b.counters().refused_bytes, 2);
    }

    /// Messages are charged after decoding; an overdrawn bucket refuses until it is
    /// positive again.
    #[test]
    fn messages_overdraw_then_wait() {
        let mut b = budgets(BudgetConfig {
            messages_per_second: 100.0,
            message_burst: 10,
            ..BudgetConfig::default()
        });
        assert_eq!(b.admit(0, 10.0, 100), Admission::Admitted);
        b.charge_messages(0, 30); // 10 - 30 = -20
        assert_eq!(
            b.admit(0, 10.0, 100),
            Admission::Refused(OverBudget::Messages)
        );
        assert_eq!(
            b.admit(0, 10.2, 100),
            Admission::Refused(OverBudget::Messages)
        ); // exactly 0
        assert_eq!(b.admit(0, 10.21, 100), Admission::Admitted);
        assert_eq!(b.counters().messages, 30);
        assert_eq!(b.counters().refused_messages, 2);
    }

    /// Tokens refill up to the burst and no further, however long the client was quiet.
    #[test]
    fn an_idle_client_saves_up_its_burst_only() {
        let mut b = budgets(BudgetConfig {
            datagrams_per_second: 100.0,
            datagram_burst: 5,
            ..BudgetConfig::default()
        });
        let admitted = (0..50)
            .filter(|_| b.admit(0, 1000.0, 10) == Admission::Admitted)
            .count();
        assert_eq!(admitted, 5);
    }

    /// Time that goes back (or is not a number) refills nothing.
    #[test]
    fn time_going_back_refills_nothing() {
        let mut b = budgets(BudgetConfig {
            datagram_burst: 1,
            ..BudgetConfig::default()
        });
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        assert!(matches!(b.admit(0, 5.0, 10), Admission::Refused(_)));
        assert!(matches!(b.admit(0, f64::NAN, 10), Admission::Refused(_)));
        assert_eq!(b.admit(0, 10.01, 10), Admission::Admitted);
    }

    /// With a policy, the client is disconnected once, when its refusals within the
    /// window reach the threshold; refusals spread over windows do not add up.
    #[test]
    fn the_policy_disconnects_once_past_its_threshold() {
        let mut b = budgets(BudgetConfig {
            datagrams_per_second: 0.5,
            datagram_burst: 1,
            disconnect: Some(DisconnectPolicy {
                refused: 3,
                window: 1.0,
            }),
            ..BudgetConfig::default()
        });
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        // Two refusals in each of two windows: below the threshold.
        for now in [10.1, 10.2, 11.15, 11.2] {
            assert!(
                matches!(b.admit(0, now, 10), Admission::Refused(_)),
                "{now}"
            );
        }
        assert_eq!(b.admit(0, 12.2, 10), Admission::Admitted);
        let verdicts: Vec<_> = (0..5).map(|_| b.admit(0, 12.3, 10)).collect();
        assert_eq!(
            verdicts,
            [
                Admission::Refused(OverBudget::Datagrams),
                Admission::Refused(OverBudget::Datagrams),
                Admission::Disconnect(OverBudget::Datagrams),
                Admission::Refused(OverBudget::Datagrams),
                Admission::Refused(OverBudget::Datagrams),
            ]
        );
        assert_eq!(b.counters().disconnected, 1);
        // A new session in the slot starts afresh.
        b.start(0, 20.0);
        assert_eq!(b.client_counters(0), Some(&BudgetCounters::default()));
        assert_eq!(b.counters().disconnected, 1);
    }

    /// Clients do not share buckets; slots not started and out of range are admitted
    /// and uncounted (the netcode layer refuses those).
    #[test]
    fn clients_have_their_own_buckets() {
        let mut b = budgets(BudgetConfig {
            datagram_burst: 1,
            ..BudgetConfig::default()
        });
        b.start(1, 10.0);
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        assert!(matches!(b.admit(0, 10.0, 10), Admission::Refused(_)));
        assert_eq!(b.admit(1, 10.0, 10), Admission::Admitted);
        b.stop(1);
        assert_eq!(b.client_counters(1), None);
        for _ in 0..3 {
            assert_eq!(b.admit(1, 10.0, 10), Admission::Admitted);
            assert_eq!(b.admit(7, 10.0, 10), Admission::Admitted);
        }
        b.charge_messages(7, 5);
        assert_eq!(b.counters().admitted, 2);
        assert_eq!(b.counters().messages, 0);
    }

    /// A new configuration refills every client's buckets and keeps its counters.
    #[test]
    fn set_config_refills_and_keeps_counters() {
        let mut b = budgets(BudgetConfig {
            datagram_burst: 1,
            ..BudgetConfig::default()
        });
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        assert!(matches!(b.admit(0, 10.0, 10), Admission::Refused(_)));
        let bad = BudgetConfig {
            bytes_per_second: f64::INFINITY,
            ..BudgetConfig::default()
        };
        assert_eq!(
            b.set_config(bad),
            Err(BudgetConfigError::BytesPerSecond(f64::INFINITY))
        );
        b.set_config(BudgetConfig {
            datagram_burst: 2,
            ..BudgetConfig::default()
        })
        .unwrap();
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        assert_eq!(b.admit(0, 10.0, 10), Admission::Admitted);
        assert_eq!(b.client_counters(0).unwrap().admitted, 3);
        assert_eq!(b.client_counters(0).unwrap().refused(), 1);
    }

    /// Every setting out of its bounds is refused by name; the defaults validate.
    #[test]
    fn validate_names_each_setting() {
        let d = BudgetConfig::default;
        assert_eq!(d().validate(), Ok(()));
        let cases = [
            (
                BudgetConfig {
                    datagrams_per_second: 0.0,
                    ..d()
                },
                BudgetConfigError::DatagramsPerSecond(0.0),
            ),
            (
                BudgetConfig {
                    datagram_burst: 0,
                    ..d()
                },
                BudgetConfigError::DatagramBurst,
            ),
            (
                BudgetConfig {
                    bytes_per_second: -1.0,
                    ..d()
                },
                BudgetConfigError::BytesPerSecond(-1.0),
            ),
            (
                BudgetConfig {
                    byte_burst: super::super::MAX_PACKET_BYTES - 1,
                    ..d()
                },
                BudgetConfigError::ByteBurst(super::super::MAX_PACKET_BYTES - 1),
            ),
            (
                BudgetConfig {
                    messages_per_second: f64::INFINITY,
                    ..d()
                },
                BudgetConfigError::MessagesPerSecond(f64::INFINITY),
            ),
            (
                BudgetConfig {
                    message_burst: 0,
                    ..d()
                },
                BudgetConfigError::MessageBurst,
            ),
            (
                BudgetConfig {
                    disconnect: Some(DisconnectPolicy {
                        refused: 0,
                        window: 1.0,
                    }),
                    ..d()
                },
                BudgetConfigError::DisconnectRefused,
            ),
            (
                BudgetConfig {
                    disconnect: Some(DisconnectPolicy {
                        refused: 1,
                        window: 0.0,
                    }),
                    ..d()
                },
                BudgetConfigError::DisconnectWindow(0.0),
            ),
        ];
        for (config, error) in cases {
            assert_eq!(config.validate(), Err(error));
            assert!(ClientBudgets::new(config, 1).is_err());
            assert!(!error.to_string().is_empty());
        }
        // NaN is refused too (it compares unequal, so not through the table).
        let nan = BudgetConfig {
            datagrams_per_second: f64::NAN,
            ..d()
        };
        assert!(matches!(
            nan.validate(),
            Err(BudgetConfigError::DatagramsPerSecond(_))
        ));
    }

    /// The defaults leave a default connection's whole send budget room several times
    /// over: a block sent at once with `initial_burst`, at the chunk's and messages'
    /// bandwidth.
    #[test]
    fn the_defaults_pass_a_block_burst() {
        let connection = crate::connection::ConnectionConfig::default();
        let config = BudgetConfig::default();
        let slices = connection
            .max_block_size
            .div_ceil(connection.chunk.slice_size);
        assert!(config.datagram_burst as usize >= 2 * slices);
        assert!(config.byte_burst >= 2 * (connection.max_block_size + slices * 64));
        let per_second = connection.bandwidth + connection.chunk.bandwidth;
        assert!(config.bytes_per_second >= 4.0 * per_second);
    }
}
