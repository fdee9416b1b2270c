//! The socket driver: a non-blocking `std::net::UdpSocket`, a bounded send queue, the
//! optional simulators, and a counted reason for every dropped datagram. On Linux,
//! consecutive datagrams to one address leave in one system call (UDP generic
//! segmentation offload, [`burst`]), datagrams to different addresses leave together
//! (`sendmmsg`, [`batch`]), datagrams are read many a call (`recvmmsg`, [`recv`]), the
//! kernel's own drops are counted (`SO_RXQ_OVFL`), and a flooding peer can be isolated
//! on a socket of its own ([`isolate`]); elsewhere, and where the kernel refuses them,
//! one `send_to` or `recv_from` each.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::clock::Clock;
use crate::simulator::{Simulator, SimulatorConfig, SimulatorStats};

/// Largest payload of one UDP datagram over IPv4 (65,535 - 8 UDP - 20 IP header bytes).
///
/// ```
/// assert_eq!(netser_transport::udp::MAX_UDP_PAYLOAD, 65_507);
/// ```
pub const MAX_UDP_PAYLOAD: usize = 65_507;

/// Longest [`UdpConfig::linger`]: 10 s, so that dropping a driver never blocks longer.
///
/// ```
/// assert_eq!(netser_transport::udp::MAX_LINGER.as_secs(), 10);
/// ```
pub const MAX_LINGER: Duration = Duration::from_secs(10);

/// Settings of a [`UdpDriver`]; the default suits a game server sending 256 KiB blocks.
///
/// ```
/// use netser_transport::simulator::SimulatorConfig;
/// use netser_transport::udp::UdpConfig;
/// let lossy = UdpConfig {
///     send_simulator: Some(SimulatorConfig { latency: 0.05, loss: 0.05, seed: 1, ..Default::default() }),
///     ..UdpConfig::default()
/// };
/// assert_eq!(lossy.socket_buffer_size, 1 << 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UdpConfig {
    /// Bytes requested for the kernel's receive and send buffers (`SO_RCVBUF`,
    /// `SO_SNDBUF`). The chunk article asks for at least twice the largest block, so that
    /// a burst of slices is not dropped by the kernel; the default, 1 MiB, is four times
    /// a 256 KiB block. The kernel may grant less (Linux caps it at
    /// `net.core.rmem_max` / `wmem_max`): the driver logs a warning and reports what it
    /// got in [`UdpDriver::buffer_sizes`].
    pub socket_buffer_size: usize,
    /// Largest datagram accepted, in either direction (default 1500, an Ethernet MTU;
    /// at most [`MAX_UDP_PAYLOAD`]). A larger one is dropped and counted.
    pub max_datagram_size: usize,
    /// Most datagrams read from the socket by one [`UdpDriver::receive`] call, so one
    /// frame's work is bounded under a flood; the rest wait in the kernel for the next
    /// frame (default 4096). Exact whether they are read one a system call or, on
    /// Linux, up to 32.
    pub max_receive_per_poll: usize,
    /// Most datagrams held while the kernel's send buffer is full (default 4096); beyond
    /// it datagrams are dropped and counted ([`DropReason::SendQueueFull`]).
    pub max_send_queue: usize,
    /// Conditions applied to every datagram sent (loss, latency, jitter, ...), through a
    /// seeded [`Simulator`] between the driver and the socket. `None` (the default) sends
    /// straight away.
    pub send_simulator: Option<SimulatorConfig>,
    /// Conditions applied to every datagram received, the same way.
    pub receive_simulator: Option<SimulatorConfig>,
    /// Time every system call into [`UdpStats::syscall_nanos`] (default off: it reads
    /// the clock twice per call). For profiling how a server's time splits between the
    /// socket and the protocol.
    pub measure_syscalls: bool,
    /// How long dropping the driver may wait to send what it still holds: datagrams the
    /// send simulator delays and datagrams waiting for room in the kernel's buffer
    /// (default 1 s, at most [`MAX_LINGER`]; zero drops them). Like a socket's
    /// `SO_LINGER`: a disconnect sent just before the drop still leaves. Without a
    /// send simulator and with room in the kernel's buffer nothing is held and the drop
    /// does not wait. See [`UdpDriver::flush_all`].
    pub linger: Duration,
}

impl Default for UdpConfig {
    fn default() -> Self {
        Self {
            socket_buffer_size: 1 << 20,
            max_datagram_size: 1500,
            max_receive_per_poll: 4096,
            max_send_queue: 4096,
            send_simulator: None,
            receive_simulator: None,
            measure_syscalls: false,
            linger: Duration::from_secs(1),
        }
    }
}

impl UdpConfig {
    /// Checks the bounds a [`UdpServer`](super::UdpServer) or
    /// [`UdpClient`](super::UdpClient) needs: `max_datagram_size` from one netcode
    /// packet ([`MAX_PACKET_BYTES`](crate::netcode::MAX_PACKET_BYTES)) to
    /// [`MAX_UDP_PAYLOAD`], at least one datagram read per poll, and a `linger` of at
    /// most [`MAX_LINGER`]. (A [`UdpDriver`] on its own clamps instead, as
    /// [`UdpDriver::config`] says.)
    ///
    /// # Errors
    /// The first setting out of its bounds, as a [`UdpConfigError`].
    ///
    /// ```
    /// use netser_transport::udp::{UdpConfig, UdpConfigError};
    /// assert_eq!(UdpConfig::default().validate(), Ok(()));
    /// let tiny = UdpConfig { max_datagram_size: 512, ..UdpConfig::default() };
    /// assert_eq!(tiny.validate(), Err(UdpConfigError::MaxDatagramSize(512)));
    /// ```
    pub fn validate(&self) -> Result<(), UdpConfigError> {
        let datagram = crate::netcode::MAX_PACKET_BYTES..=MAX_UDP_PAYLOAD;
        if !datagram.contains(&self.max_datagram_size) {
            return Err(UdpConfigError::MaxDatagramSize(self.max_datagram_size));
        }
        if self.max_receive_per_poll == 0 {
            return Err(UdpConfigError::MaxReceivePerPoll);
        }
        if self.linger > MAX_LINGER {
            return Err(UdpConfigError::Linger(self.linger));
        }
        Ok(())
    }
}

/// A [`UdpConfig`] setting out of its bounds, from [`UdpConfig::validate`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UdpConfigError {
    /// `max_datagram_size` (the value) is below one netcode packet or above
    /// [`MAX_UDP_PAYLOAD`]: every packet would be dropped, or no socket could carry it.
    MaxDatagramSize(usize),
    /// `max_receive_per_poll` is 0: nothing would ever be read.
    MaxReceivePerPoll,
    /// `linger` (the value) is above [`MAX_LINGER`].
    Linger(Duration),
}

impl fmt::Display for UdpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaxDatagramSize(n) => write!(
                f,
                "max_datagram_size is {n}; it must be {} to {MAX_UDP_PAYLOAD}",
                crate::netcode::MAX_PACKET_BYTES
            ),
            Self::MaxReceivePerPoll => f.write_str("max_receive_per_poll must be at least 1"),
            Self::Linger(d) => write!(f, "linger is {d:?}; it must be at most {MAX_LINGER:?}"),
        }
    }
}

impl std::error::Error for UdpConfigError {}

/// Why the driver dropped a datagram. Each reason has its counter in [`UdpStats`].
///
/// New variants may be added in later versions, so a match outside this crate needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// A datagram larger than [`UdpConfig::max_datagram_size`] was given to send.
    SendOversize {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The kernel's send buffer was full and so was the driver's queue.
    SendQueueFull,
    /// The operating system refused the datagram (unreachable, no route, ...).
    SendError(io::ErrorKind),
    /// A received datagram was larger than [`UdpConfig::max_datagram_size`].
    ReceiveOversize,
    /// The operating system reported an error while receiving (on Windows, an ICMP port
    /// unreachable from an earlier send shows up here as `ConnectionReset`).
    ReceiveError(io::ErrorKind),
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SendOversize { len, max } => {
                write!(f, "datagram of {len} bytes is over the {max}-byte limit")
            }
            Self::SendQueueFull => f.write_str("socket send buffer and send queue are full"),
            Self::SendError(kind) => write!(f, "send failed: {kind}"),
            Self::ReceiveOversize => f.write_str("received datagram over the size limit"),
            Self::ReceiveError(kind) => write!(f, "receive failed: {kind}"),
        }
    }
}

impl std::error::Error for DropReason {}

/// What a [`UdpDriver`] did: datagrams and bytes each way, and every drop by reason.
///
/// Losses added on purpose by the simulators are counted in their own
/// [`SimulatorStats`] ([`UdpDriver::send_simulator_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UdpStats {
    /// Datagrams handed to the kernel.
    pub datagrams_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Datagrams read from the kernel (before the receive simulator, if any).
    pub datagrams_received: u64,
    /// Their bytes.
    pub bytes_received: u64,
    /// Times the kernel's send buffer was full and a datagram waited in the queue.
    pub send_would_block: u64,
    /// Dropped: too large to send ([`DropReason::SendOversize`]).
    pub dropped_send_oversize: u64,
    /// Dropped: send queue full ([`DropReason::SendQueueFull`]).
    pub dropped_send_queue_full: u64,
    /// Dropped: refused by the operating system ([`DropReason::SendError`]).
    pub dropped_send_error: u64,
    /// Dropped: received datagram too large ([`DropReason::ReceiveOversize`]).
    pub dropped_receive_oversize: u64,
    /// Receive errors reported by the operating system ([`DropReason::ReceiveError`]).
    pub receive_errors: u64,
    /// Datagrams the kernel dropped for the socket before the driver read them (its
    /// receive buffer was full: the driver did not read fast enough, or a flood filled
    /// it), as Linux reports them with each datagram (`SO_RXQ_OVFL`); learnt with the
    /// next datagram read. Always 0 where the platform does not tell.
    pub receive_buffer_drops: u64,
    /// The same for the sockets of isolated peers ([`UdpDriver::isolate`]): their
    /// datagrams the kernel dropped in their own buffers.
    pub isolated_drops: u64,
    /// Times a peer was isolated ([`UdpDriver::isolate`]).
    pub isolations: u64,
    /// System calls made (`send_to`, a burst's `sendmsg`, a batch's `sendmmsg`,
    /// `recv_from`, `recvmsg` and a batch's `recvmmsg`, including the one that finds
    /// nothing waiting), counted when [`UdpConfig::measure_syscalls`] is on.
    pub syscalls: u64,
    /// Nanoseconds spent in them, when [`UdpConfig::measure_syscalls`] is on.
    pub syscall_nanos: u64,
}

/// A non-blocking UDP socket that receives datagrams and sends queued ones, with its
/// clock; see the [module docs](crate::udp) for the run loop.
///
/// The driver knows nothing about what the datagrams contain: the sans-IO layers above
/// it turn them into connections, messages and blocks.
///
/// Dropping the driver sends what it still holds (simulated delays, a full kernel
/// buffer) for at most [`UdpConfig::linger`]; see [`UdpDriver::flush_all`].
pub struct UdpDriver {
    socket: UdpSocket,
    local_addr: SocketAddr,
    clock: Clock,
    config: UdpConfig,
    /// The buffers datagrams are read into; see [`recv`].
    rx: recv::Receiver,
    /// Datagrams the kernel could not take yet, oldest first; at most `max_send_queue`.
    send_queue: VecDeque<(SocketAddr, Vec<u8>)>,
    send_sim: Option<Simulator<SocketAddr>>,
    receive_sim: Option<Simulator<SocketAddr>>,
    buffer_sizes: (usize, usize),
    stats: UdpStats,
    /// Datagrams to one address waiting to leave together; see [`burst`].
    burst: burst::Burst,
    /// Datagrams to different addresses waiting to leave together; see [`batch`]. They
    /// leave before the burst.
    batch: batch::Batch,
    /// Peers whose datagrams arrive on a socket of their own (at most
    /// [`MAX_ISOLATED_PEERS`]).
    isolated: Vec<isolate::Isolated>,
    /// The kernel's drop count for the shared socket as last reported, if it reports it.
    drops: Option<u32>,
}

impl UdpDriver {
    /// Binds a socket to `addr` (`"0.0.0.0:40000"`, `"127.0.0.1:0"` for any free port)
    /// and sets it up as [`UdpDriver::from_socket`] does.
    ///
    /// # Errors
    ///
    /// The operating system's error if the address cannot be bound or the socket cannot
    /// be made non-blocking.
    ///
    /// ```
    /// use netser_transport::udp::{UdpConfig, UdpDriver};
    /// let driver = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// assert!(driver.local_addr().port() != 0);
    /// ```
    pub fn bind(addr: impl ToSocketAddrs, config: UdpConfig) -> io::Result<Self> {
        Self::from_socket(UdpSocket::bind(addr)?, config)
    }

    /// Wraps a socket the caller created (bound to the address they chose, with options
    /// of their own): makes it non-blocking and asks for [`UdpConfig::socket_buffer_size`]
    /// bytes of kernel buffers each way.
    ///
    /// # Errors
    ///
    /// The operating system's error if the socket has no local address or cannot be
    /// made non-blocking. A smaller buffer than asked is not an error: it is logged and
    /// reported by [`UdpDriver::buffer_sizes`].
    ///
    /// ```
    /// use netser_transport::udp::{UdpConfig, UdpDriver};
    /// let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    /// let driver = UdpDriver::from_socket(socket, UdpConfig::default()).unwrap();
    /// assert!(driver.buffer_sizes().0 > 0);
    /// ```
    pub fn from_socket(socket: UdpSocket, config: UdpConfig) -> io::Result<Self> {
        socket.set_nonblocking(true)?;
        let local_addr = socket.local_addr()?;
        let buffer_sizes = size_buffers(&socket, config.socket_buffer_size);
        let drops = sys::count_drops(&socket).ok().map(|()| 0);
        let max = config.max_datagram_size.clamp(1, MAX_UDP_PAYLOAD);
        let config = UdpConfig {
            max_datagram_size: max,
            linger: config.linger.min(MAX_LINGER),
            ..config
        };
        Ok(Self {
            socket,
            local_addr,
            clock: Clock::new(),
            rx: recv::Receiver::new(max, config.max_receive_per_poll),
            send_queue: VecDeque::new(),
            send_sim: config.send_simulator.clone().map(Simulator::new),
            receive_sim: config.receive_simulator.clone().map(Simulator::new),
            config,
            buffer_sizes,
            stats: UdpStats::default(),
            burst: burst::Burst::new(),
            batch: batch::Batch::new(),
            isolated: Vec::new(),
            drops,
        })
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Seconds on the driver's monotonic [`Clock`] (since it was created): the `now` to give
    /// every sans-IO layer.
    pub fn now(&self) -> f64 {
        self.clock.now()
    }

    /// The driver's clock, to share with code that needs the same time base.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The settings in force (with `max_datagram_size` clamped to `1..=MAX_UDP_PAYLOAD`
    /// and `linger` to at most [`MAX_LINGER`]).
    pub fn config(&self) -> &UdpConfig {
        &self.config
    }

    /// The kernel's receive and send buffer sizes as it reports them (Linux reports
    /// twice the bytes it grants for data, the rest being its bookkeeping).
    pub fn buffer_sizes(&self) -> (usize, usize) {
        self.buffer_sizes
    }

    /// The socket, for options the driver does not set (TTL, DSCP, ...). Reading or
    /// writing datagrams on it directly bypasses the driver's counters.
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// Counters of datagrams, bytes and drops so far.
    pub fn stats(&self) -> &UdpStats {
        &self.stats
    }

    /// What the send simulator did (sent, lost, delayed...), if there is one.
    pub fn send_simulator_stats(&self) -> Option<&SimulatorStats> {
        self.send_sim.as_ref().map(Simulator::stats)
    }

    /// What the receive simulator did, if there is one.
    pub fn receive_simulator_stats(&self) -> Option<&SimulatorStats> {
        self.receive_sim.as_ref().map(Simulator::stats)
    }

    /// Datagrams waiting for room in the kernel's send buffer.
    pub fn queued(&self) -> usize {
        self.send_queue.len()
    }

    /// Datagrams sent but not yet handed to the kernel: held by the send simulator
    /// (until their delivery time), waiting in the send queue, or gathered to leave
    /// together at the next [`flush`](Self::flush) (on Linux: a burst to one address, a
    /// batch to several).
    pub fn held(&self) -> usize {
        self.send_queue.len()
            + self.send_sim.as_ref().map_or(0, Simulator::in_flight)
            + self.burst.len()
            + self.batch.len()
    }

    /// Flushes until the driver holds nothing more to send ([`held`](Self::held) is 0),
    /// sleeping until each datagram the send simulator delays is due and retrying a full
    /// kernel buffer every millisecond, for at most `timeout` (`Duration::MAX`: no
    /// limit). For a sender about to go away, so that what it promised leaves: dropping
    /// the driver calls it with [`UdpConfig::linger`]. Returns whether everything left;
    /// what the simulator loses on purpose counts as gone, in its stats.
    ///
    /// ```
    /// use std::time::Duration;
    /// use netser_transport::simulator::SimulatorConfig;
    /// use netser_transport::udp::{UdpConfig, UdpDriver};
    /// let slow = UdpConfig {
    ///     send_simulator: Some(SimulatorConfig { latency: 0.02, ..Default::default() }),
    ///     ..UdpConfig::default()
    /// };
    /// let mut a = UdpDriver::bind("127.0.0.1:0", slow).unwrap();
    /// let b = UdpDriver::bind("127.0.0.1:0", UdpConfig::default()).unwrap();
    /// a.send(b.local_addr(), b"bye").unwrap();
    /// assert_eq!(a.held(), 1); // 20 ms in the simulator
    /// assert!(a.flush_all(Duration::from_secs(1)));
    /// assert_eq!(a.held(), 0);
    /// assert_eq!(a.stats().datagrams_sent, 1);
    /// ```
    pub fn flush_all(&mut self, timeout: Duration) -> bool {
        // `Instant + Duration::MAX` panics; `None` is a deadline never reached.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            self.flush();
            if self.held() == 0 {
                return true;
            }
            let now = Instant::now();
            let left = match deadline {
                Some(d) if now >= d => return false,
                Some(d) => d - now,
                None => Duration::MAX,
            };
            // Until the next simulated delivery; a millisecond when the kernel is full.
            let mut wait = Duration::from_millis(1);
            if self.send_queue.is_empty() {
                if let Some(due) = self
                    .send_sim
                    .as_ref()
                    .and_then(Simulator::next_delivery_time)
                {
                    let secs = (due - self.clock.now()).clamp(0.0, MAX_LINGER.as_secs_f64());
                    wait = Duration::from_secs_f64(secs);
                }
            }
            std::thread::sleep(wait.min(left));
        }
    }

    /// Earliest time (on [`UdpDriver::now`]'s clock) a simulator holds a datagram for;
    /// `None` without simulators or when they are empty. A loop that sleeps between
    /// frames should wake by then.
    pub fn poll_timeout(&self) -> Option<f64> {
        let a = self
            .send_sim
            .as_ref()
            .and_then(Simulator::next_delivery_time);
        let b = self
            .receive_sim
            .as_ref()
            .and_then(Simulator::next_delivery_time);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends one datagram to `to`: straight to the kernel, or into the send queue if the
    /// kernel's buffer is full (retried by [`UdpDriver::flush`]), or into the send
    /// simulator if there is one (released by `flush` at its delivery time).
    ///
    /// On Linux, datagrams wait to leave together at the next `flush`: a datagram to
    /// the address the previous one went to, and no longer than it, joins a burst that
    /// leaves in one segmented send (a block's slices cost one call per 64 instead of
    /// one each); the others gather in a batch that leaves in one `sendmmsg` (a server's
    /// snapshots to its clients, 64 a call). A full batch leaves at once. A kernel that
    /// refuses either (no segmentation offload, no `sendmmsg`) gets one `send_to` per
    /// datagram from then on; elsewhere every datagram leaves at once.
    ///
    /// # Errors
    ///
    /// The [`DropReason`] when the datagram was dropped: over the size limit, queue full,
    /// or refused by the operating system. Each is also counted in [`UdpStats`] and
    /// logged at debug level, so a caller may ignore the result. A datagram that joined
    /// a burst or a batch is counted when it leaves (a refusal then, such as an
    /// unreachable address, is counted the same way, not returned).
    pub fn send(&mut self, to: SocketAddr, datagram: &[u8]) -> Result<(), DropReason> {
        if datagram.len() > self.config.max_datagram_size {
            self.stats.dropped_send_oversize += 1;
            let reason = DropReason::SendOversize {
                len: datagram.len(),
                max: self.config.max_datagram_size,
            };
            return Err(self.dropped(to, reason, self.stats.dropped_send_oversize));
        }
        if let Some(sim) = &mut self.send_sim {
            sim.send(self.clock.now(), self.local_addr, to, datagram);
            return Ok(());
        }
        if self.send_queue.is_empty() && self.burst.push(to, datagram) {
            return Ok(());
        }
        self.send_burst();
        if !self.send_queue.is_empty() {
            return self.enqueue(to, datagram.to_vec());
        }
        if self.batch.push(to, datagram) {
            // The next datagram to `to` may start a burst: it leaves after this batch.
            self.burst.sent(to, datagram.len());
            if self.batch.is_full() {
                self.send_batch();
            }
            return Ok(());
        }
        self.send_now(to, datagram)
    }

    /// Hands one datagram to the kernel, or to the send queue if its buffer is full.
    fn send_now(&mut self, to: SocketAddr, datagram: &[u8]) -> Result<(), DropReason> {
        let timer = self.start_timer();
        let result = self.socket.send_to(datagram, to);
        self.stop_timer(timer);
        match result {
            Ok(_) => {
                self.count_sent(datagram.len());
                self.burst.sent(to, datagram.len());
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.stats.send_would_block += 1;
                self.enqueue(to, datagram.to_vec())
            }
            Err(e) => {
                self.stats.dropped_send_error += 1;
                let reason = DropReason::SendError(e.kind());
                Err(self.dropped(to, reason, self.stats.dropped_send_error))
            }
        }
    }

    /// Hands the kernel what is due: datagrams the send simulator releases now, then the
    /// send queue, oldest first, until the kernel's buffer is full again. Call once per
    /// frame after sending.
    pub fn flush(&mut self) {
        self.send_batch();
        self.send_burst();
        if let Some(sim) = &mut self.send_sim {
            let now = self.clock.now();
            let mut due = Vec::new();
            while let Some(delivery) = sim.receive(now) {
                due.push(delivery);
            }
            for delivery in due {
                if self.send_queue.is_empty() {
                    self.send_queue.push_back((delivery.to, delivery.data));
                    self.drain_queue();
                } else {
                    let _ = self.enqueue(delivery.to, delivery.data);
                }
            }
        }
        self.drain_queue();
    }

    /// Hands the kernel the burst gathered so far: one datagram as usual, several in one
    /// segmented send; on a refusal of segmentation, one by one, and never again.
    fn send_burst(&mut self) {
        let Some((to, segment, count)) = self.burst.pending() else {
            return;
        };
        // The batch gathered before the burst leaves first.
        self.send_batch();
        let bytes = self.burst.take();
        if count > 1 && self.send_queue.is_empty() {
            let timer = self.start_timer();
            let result = burst::send_segmented(&self.socket, to, &bytes, segment);
            self.stop_timer(timer);
            match result {
                Ok(()) => {
                    self.stats.datagrams_sent += count as u64;
                    self.stats.bytes_sent += bytes.len() as u64;
                    let last = bytes.len() - (count - 1) * segment;
                    self.burst.sent(to, last);
                    self.burst.give_back(bytes);
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.send_would_block += 1;
                    for datagram in bytes.chunks(segment) {
                        // Counted and logged by `enqueue` when the queue is full.
                        let _ = self.enqueue(to, datagram.to_vec());
                    }
                    self.burst.give_back(bytes);
                    return;
                }
                Err(e) if burst::is_refusal(&e) => {
                    warn!(local = %self.local_addr, %e,
                        "udp: the kernel refused a segmented send; one datagram per call from now on");
                    self.burst.disable();
                }
                // Anything else: each datagram's own send says what it is, and counts it.
                Err(_) => {}
            }
        }
        for datagram in bytes.chunks(segment) {
            let _ = if self.send_queue.is_empty() {
                self.send_now(to, datagram)
            } else {
                self.enqueue(to, datagram.to_vec())
            };
        }
        self.burst.give_back(bytes);
    }

    fn drain_queue(&mut self) {
        while let Some((to, datagram)) = self.send_queue.front() {
            let (to, len) = (*to, datagram.len());
            let timer = self.start_timer();
            let result = self.socket.send_to(datagram, to);
            self.stop_timer(timer);
            match result {
                Ok(_) => {
                    self.send_queue.pop_front();
                    self.count_sent(len);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.send_would_block += 1;
                    break;
                }
                Err(e) => {
                    self.send_queue.pop_front();
                    self.stats.dropped_send_error += 1;
                    let count = self.stats.dropped_send_error;
                    self.dropped(to, DropReason::SendError(e.kind()), count);
                }
            }
        }
    }

    fn enqueue(&mut self, to: SocketAddr, datagram: Vec<u8>) -> Result<(), DropReason> {
        if self.send_queue.len() >= self.config.max_send_queue {
            self.stats.dropped_send_queue_full += 1;
            let count = self.stats.dropped_send_queue_full;
            return Err(self.dropped(to, DropReason::SendQueueFull, count));
        }
        self.send_queue.push_back((to, datagram));
        Ok(())
    }

    fn start_timer(&self) -> Option<std::time::Instant> {
        self.config.measure_syscalls.then(std::time::Instant::now)
    }

    fn stop_timer(&mut self, timer: Option<std::time::Instant>) {
        if let Some(start) = timer {
            self.stats.syscalls += 1;
            self.stats.syscall_nanos += start.elapsed().as_nanos() as u64;
        }
    }

    fn count_sent(&mut self, len: usize) {
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += len as u64;
    }

    /// Logs one dropped datagram at debug level with its reason and the reason's count.
    fn dropped(&self, peer: SocketAddr, reason: DropReason, count: u64) -> DropReason {
        debug!(local = %self.local_addr, %peer, %reason, count, "udp: datagram dropped");
        reason
    }
}

impl Drop for UdpDriver {
    /// Sends what is still held for at most [`UdpConfig::linger`]; what is left after it
    /// is logged with its count (the driver and its counters go away with it).
    fn drop(&mut self) {
        if self.held() > 0 && !self.flush_all(self.config.linger) {
            debug!(
                local = %self.local_addr,
                held = self.held(),
                linger = ?self.config.linger,
                "udp: driver dropped with datagrams still held; they are lost"
            );
        }
    }
}

impl fmt::Debug for UdpDriver {
    // Summaries only: the receive buffer and queued datagrams are bytes of other layers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpDriver")
            .field("local_addr", &self.local_addr)
            .field("config", &self.config)
            .field("buffer_sizes", &self.buffer_sizes)
            .field("queued", &self.send_queue.len())
            .field("held", &self.held())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Asks for `size` bytes of kernel buffer each way; returns what the kernel reports.
fn size_buffers(socket: &UdpSocket, size: usize) -> (usize, usize) {
    let sock = socket2::SockRef::from(socket);
    if let Err(e) = sock.set_recv_buffer_size(size) {
        warn!(%e, size, "udp: cannot set the socket receive buffer size");
    }
    if let Err(e) = sock.set_send_buffer_size(size) {
        warn!(%e, size, "udp: cannot set the socket send buffer size");
    }
    let recv = sock.recv_buffer_size().unwrap_or(0);
    let send = sock.send_buffer_size().unwrap_or(0);
    if recv < size || send < size {
        warn!(
            requested = size,
            recv,
            send,
            "udp: the kernel granted smaller socket buffers than asked \
             (raise net.core.rmem_max / wmem_max); large blocks may lose slices"
        );
    }
    (recv, send)
}

mod batch;
mod burst;
mod isolate;
mod recv;
mod sys;

pub use isolate::{ISOLATED_READS_PER_POLL, ISOLATED_READS_PER_SECOND, MAX_ISOLATED_PEERS};

#[cfg(test)]
mod tests;
