//! Sans-IO peers stepped over the [`Simulator`]: [`Pair`] for two sides, [`Star`] for a
//! server and its clients.
//!
//! Every layer of the transport speaks the same four verbs ([`Peer`]), so one harness
//! drives any of them: frame by frame ([`Pair::step`]), or from one wakeup to the next
//! (a peer's timer or a delivery, [`Pair::run_until`]), as quinn-proto's test pair does.
//! Games can test their own network code the same way, deterministically.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use netser::{NetDelta, NetSerialize};

use super::{Simulator, SimulatorConfig};
use crate::connection::Connection;
use crate::netcode::{Client, Server};

/// A sans-IO layer the harness can drive.
///
/// Implemented by [`Connection`] and by the netcode game `Server` and `Client`; a test
/// implements it for its own wrapper (a connection with a snapshot receiver, a peer that
/// records what it saw) in a few lines.
pub trait Peer {
    /// Takes a datagram from `from` at `now`. Returns `false` when the layer refused it
    /// (the harness counts refusals in [`Traffic::refused`]).
    fn handle_datagram(&mut self, now: f64, from: SocketAddr, datagram: &[u8]) -> bool;

    /// The next datagram to send at `now`, and its destination; `None` as the
    /// destination means the other side of a [`Pair`], or the server of a [`Star`].
    fn poll_transmit(&mut self, now: f64) -> Option<(Option<SocketAddr>, &[u8])>;

    /// Runs the peer's timers (resends, keep-alives, timeouts).
    fn handle_timeout(&mut self, now: f64);

    /// When [`handle_timeout`](Self::handle_timeout) next has work, if ever.
    fn poll_timeout(&self) -> Option<f64>;
}

impl<Out: NetSerialize, In: NetSerialize> Peer for Connection<Out, In> {
    fn handle_datagram(&mut self, now: f64, _from: SocketAddr, datagram: &[u8]) -> bool {
        Connection::handle_datagram(self, now, datagram).is_ok()
    }

    fn poll_transmit(&mut self, now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        Connection::poll_transmit(self, now).map(|datagram| (None, datagram))
    }

    fn handle_timeout(&mut self, now: f64) {
        Connection::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        Connection::poll_timeout(self)
    }
}

/// The game server: a datagram is refused when netcode refuses it (its
/// [`refusals`](crate::netcode::NetcodeServer::refusals) grow). The harness gives it the
/// same clock as its clients; it checks connect tokens against the Unix time it was built
/// with, moved on by that clock.
impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + PartialEq + Clone> Peer
    for Server<Out, In, S>
{
    fn handle_datagram(&mut self, now: f64, from: SocketAddr, datagram: &[u8]) -> bool {
        let refused = self.netcode().refusals().total();
        Server::handle_datagram(self, now, from, datagram);
        self.netcode().refusals().total() == refused
    }

    fn poll_transmit(&mut self, _now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        Server::poll_transmit(self).map(|transmit| (Some(transmit.to), transmit.data))
    }

    fn handle_timeout(&mut self, now: f64) {
        Server::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        Server::poll_timeout(self)
    }
}

/// The game client: a datagram is refused when netcode refuses it (its
/// [`refusals`](crate::netcode::NetcodeClient::refusals) grow).
impl<Out: NetSerialize, In: NetSerialize, S: NetDelta + Clone> Peer for Client<Out, In, S> {
    fn handle_datagram(&mut self, now: f64, from: SocketAddr, datagram: &[u8]) -> bool {
        let refused = self.netcode().refusals().total();
        Client::handle_datagram(self, now, from, datagram);
        self.netcode().refusals().total() == refused
    }

    fn poll_transmit(&mut self, _now: f64) -> Option<(Option<SocketAddr>, &[u8])> {
        Client::poll_transmit(self).map(|transmit| (Some(transmit.to), transmit.data))
    }

    fn handle_timeout(&mut self, now: f64) {
        Client::handle_timeout(self, now);
    }

    fn poll_timeout(&self) -> Option<f64> {
        Client::poll_timeout(self)
    }
}

/// What went one way over the simulated network.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    /// Datagrams the sender handed to the network.
    pub datagrams: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Datagrams the receiver refused ([`Peer::handle_datagram`] returned `false`).
    pub refused: u64,
    /// The largest datagram, in bytes (to check an MTU).
    pub largest: usize,
}

impl Traffic {
    fn add(&mut self, len: usize) {
        self.datagrams += 1;
        self.bytes += len as u64;
        self.largest = self.largest.max(len);
    }
}

/// Most datagrams one peer may send in one round: a peer that never runs dry is a bug
/// the harness reports instead of looping forever.
pub const MAX_DATAGRAMS_PER_ROUND: usize = 1 << 16;

/// The shortest jump in time [`Pair::run_until`] and [`Star::run_until`] make, so that a
/// timer that keeps asking for "now" cannot stall them.
pub const MIN_ADVANCE: f64 = 1e-6;

fn local(port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
}

/// Sends everything `peer` has at `now` from `from`. `route` names each destination
/// (`None`: the datagram is dropped, and `route` counts it) and `count` sees each
/// datagram sent.
fn transmit<P: Peer>(
    peer: &mut P,
    now: f64,
    from: SocketAddr,
    net: &mut Simulator<SocketAddr>,
    mut route: impl FnMut(Option<SocketAddr>) -> Option<SocketAddr>,
    mut count: impl FnMut(SocketAddr, usize),
) {
    peer.handle_timeout(now);
    for _ in 0..MAX_DATAGRAMS_PER_ROUND {
        let Some((to, datagram)) = peer.poll_transmit(now) else {
            return;
        };
        if let Some(to) = route(to) {
            count(to, datagram.len());
            net.send(now, from, to, datagram);
        }
    }
    panic!("a peer at {from} never ran out of datagrams to send");
}

/// What [`Pair`] and [`Star`] share for [`run_until`]: a round at the current time, the
/// next wakeup, and the clock.
trait Stepped {
    fn round(&mut self);
    fn poll_timeout(&self) -> Option<f64>;
    fn now_mut(&mut self) -> &mut f64;
}

/// Rounds from one wakeup to the next (never less than [`MIN_ADVANCE`] apart) until
/// `done` holds after a round, or a round at `deadline` has run.
fn run_until<H: Stepped>(h: &mut H, deadline: f64, done: &mut impl FnMut(&mut H) -> bool) -> bool {
    loop {
        h.round();
        if done(h) {
            return true;
        }
        let now = *h.now_mut();
        if now >= deadline {
            return false;
        }
        let next = h
            .poll_timeout()
            .map_or(deadline, |t| t.max(now + MIN_ADVANCE));
        *h.now_mut() = next.min(deadline);
    }
}

/// The earliest of some optional times.
fn earliest(times: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    times.into_iter().flatten().reduce(f64::min)
}

/// Two peers, `a` and `b`, over a [`Simulator`].
///
/// ```
/// use netser_transport::connection::{Connection, ConnectionConfig};
/// use netser_transport::simulator::{Pair, SimulatorConfig};
///
/// let side = || Connection::<u32>::new(0.0, ConnectionConfig::default()).unwrap();
/// let mut pair = Pair::new(side(), side(), SimulatorConfig { latency: 0.05, ..Default::default() });
/// pair.a.send_message(0, &7).unwrap(); // channel 0: reliable-ordered by default
/// let delivered = pair.run_until(1.0, |pair| pair.b.received_messages(0) > 0);
/// assert!(delivered && pair.now >= 0.05);
/// assert_eq!(pair.b.receive_message(0), Some(7));
/// ```
#[derive(Debug)]
pub struct Pair<A, B> {
    /// The first side, at [`Pair::A_ADDR`].
    pub a: A,
    /// The second side, at [`Pair::B_ADDR`].
    pub b: B,
    /// The network between them.
    pub net: Simulator<SocketAddr>,
    /// The time of the last step, in seconds.
    pub now: f64,
    /// Traffic from `a` to `b` (`[0]`) and from `b` to `a` (`[1]`).
    pub traffic: [Traffic; 2],
}

impl<A: Peer, B: Peer> Pair<A, B> {
    /// `a`'s address on the simulated network.
    pub const A_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1));
    /// `b`'s address on the simulated network.
    pub const B_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 2));

    /// `a` and `b` over a network of these conditions, at time 0.
    pub fn new(a: A, b: B, net: SimulatorConfig) -> Self {
        Self {
            a,
            b,
            net: Simulator::new(net),
            now: 0.0,
            traffic: [Traffic::default(); 2],
        }
    }

    /// `a` and `b` over a perfect link (no latency, no loss).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// use netser_transport::simulator::Pair;
    ///
    /// let side = || Connection::<u32>::new(0.0, ConnectionConfig::default()).unwrap();
    /// let mut pair = Pair::lossless(side(), side());
    /// pair.b.send_message(0, &1).unwrap();
    /// pair.step(1.0 / 60.0);
    /// assert_eq!(pair.a.receive_message(0), Some(1));
    /// ```
    pub fn lossless(a: A, b: B) -> Self {
        Self::new(a, b, SimulatorConfig::default())
    }

    /// One round at the current time: both sides run their timers and send, then every
    /// datagram due by now is delivered.
    pub fn round(&mut self) {
        let now = self.now;
        let [ab, ba] = &mut self.traffic;
        let (a, b, net) = (&mut self.a, &mut self.b, &mut self.net);
        transmit(
            a,
            now,
            Self::A_ADDR,
            net,
            |_| Some(Self::B_ADDR),
            |_, len| ab.add(len),
        );
        transmit(
            b,
            now,
            Self::B_ADDR,
            net,
            |_| Some(Self::A_ADDR),
            |_, len| ba.add(len),
        );
        while let Some(delivery) = self.net.receive(now) {
            let accepted = if delivery.to == Self::A_ADDR {
                self.a.handle_datagram(now, delivery.from, &delivery.data)
            } else {
                self.b.handle_datagram(now, delivery.from, &delivery.data)
            };
            if !accepted {
                let direction = usize::from(delivery.to == Self::A_ADDR);
                self.traffic[direction].refused += 1;
            }
        }
    }

    /// One frame: a [`round`](Self::round), then time moves on by `dt`.
    pub fn step(&mut self, dt: f64) {
        self.round();
        self.now += dt;
    }

    /// When something next happens: a side's timer or a delivery.
    pub fn poll_timeout(&self) -> Option<f64> {
        earliest([
            self.a.poll_timeout(),
            self.b.poll_timeout(),
            self.net.next_delivery_time(),
        ])
    }

    /// Runs rounds from one wakeup to the next (never less than [`MIN_ADVANCE`] apart)
    /// until `done` holds after a round, or a round at `deadline` has run. Returns whether
    /// `done` held; `now` is then the time it did, else `deadline`.
    pub fn run_until(&mut self, deadline: f64, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        run_until(self, deadline, &mut done)
    }
}

impl<A: Peer, B: Peer> Stepped for Pair<A, B> {
    fn round(&mut self) {
        Pair::round(self);
    }
    fn poll_timeout(&self) -> Option<f64> {
        Pair::poll_timeout(self)
    }
    fn now_mut(&mut self) -> &mut f64 {
        &mut self.now
    }
}

/// A server and any number of clients over one [`Simulator`]: the server at
/// [`Star::SERVER_ADDR`], client `i` at port `50_000 + i`.
///
/// Datagrams a client sends go to the server; the server's go to the client at their
/// destination (to no one if no client of the star has that address, or none is given:
/// counted in [`Star::misrouted`]).
#[derive(Debug)]
pub struct Star<S, C> {
    /// The server.
    pub server: S,
    /// The clients, in the order they were added.
    pub clients: Vec<C>,
    /// The network.
    pub net: Simulator<SocketAddr>,
    /// The time of the last step, in seconds.
    pub now: f64,
    /// Per client: traffic from the server to it (`[0]`) and from it to the server (`[1]`).
    pub traffic: Vec<[Traffic; 2]>,
    /// Datagrams the server addressed to no client of the star.
    pub misrouted: u64,
}

impl<S: Peer, C: Peer> Star<S, C> {
    /// The server's address on the simulated network.
    pub const SERVER_ADDR: SocketAddr =
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40_000));

    /// Most clients a star holds (their ports run from 50,000 up).
    pub const MAX_CLIENTS: usize = 15_000;

    /// A server alone over a network of these conditions, at time 0.
    pub fn new(server: S, net: SimulatorConfig) -> Self {
        Self {
            server,
            clients: Vec::new(),
            net: Simulator::new(net),
            now: 0.0,
            traffic: Vec::new(),
            misrouted: 0,
        }
    }

    /// The address client `index` has (whether or not it was added yet).
    ///
    /// # Panics
    /// If `index` is not below [`Star::MAX_CLIENTS`].
    pub fn client_addr(index: usize) -> SocketAddr {
        assert!(
            index < Self::MAX_CLIENTS,
            "a star holds at most {} clients",
            Self::MAX_CLIENTS
        );
        local(50_000 + index as u16)
    }

    /// Adds a client; returns its index.
    ///
    /// # Panics
    /// If the star already holds [`Star::MAX_CLIENTS`] clients.
    pub fn add_client(&mut self, client: C) -> usize {
        assert!(
            self.clients.len() < Self::MAX_CLIENTS,
            "a star holds at most {} clients",
            Self::MAX_CLIENTS
        );
        self.clients.push(client);
        self.traffic.push([Traffic::default(); 2]);
        self.clients.len() - 1
    }

    fn client_index(addr: SocketAddr) -> Option<usize> {
        let port = usize::from(addr.port());
        (addr.ip() == Ipv4Addr::LOCALHOST && (50_000..50_000 + Self::MAX_CLIENTS).contains(&port))
            .then(|| port - 50_000)
    }

    /// One round at the current time: every client, then the server, runs its timers
    /// and sends; then every datagram due by now is delivered. The same as
    /// [`transmit_clients`](Self::transmit_clients), [`transmit_server`](Self::transmit_server)
    /// and [`deliver`](Self::deliver) in turn.
    pub fn round(&mut self) {
        self.transmit_clients();
        self.transmit_server();
        self.deliver();
    }

    /// Every client runs its timers and sends, at the current time.
    ///
    /// A test that needs the server to read its clients' datagrams before it sends (a
    /// game's frame: read the inputs, update, send the state) calls this, then
    /// [`deliver`](Self::deliver), then [`transmit_server`](Self::transmit_server) and
    /// [`deliver`](Self::deliver) again.
    pub fn transmit_clients(&mut self) {
        let now = self.now;
        for (i, client) in self.clients.iter_mut().enumerate() {
            let traffic = &mut self.traffic[i][1];
            transmit(
                client,
                now,
                Self::client_addr(i),
                &mut self.net,
                |_| Some(Self::SERVER_ADDR),
                |_, len| traffic.add(len),
            );
        }
    }

    /// The server runs its timers and sends, at the current time.
    pub fn transmit_server(&mut self) {
        let now = self.now;
        let clients = self.clients.len();
        let (traffic, misrouted) = (&mut self.traffic, &mut self.misrouted);
        let route = |to: Option<SocketAddr>| {
            let index = to.and_then(Self::client_index).filter(|&i| i < clients);
            if index.is_none() {
                *misrouted += 1;
            }
            index.map(Self::client_addr)
        };
        let count = |to: SocketAddr, len: usize| {
            if let Some(i) = Self::client_index(to) {
                traffic[i][0].add(len);
            }
        };
        transmit(
            &mut self.server,
            now,
            Self::SERVER_ADDR,
            &mut self.net,
            route,
            count,
        );
    }

    /// Delivers every datagram due by the current time.
    pub fn deliver(&mut self) {
        let now = self.now;
        let clients = self.clients.len();
        while let Some(delivery) = self.net.receive(now) {
            if delivery.to == Self::SERVER_ADDR {
                if !self
                    .server
                    .handle_datagram(now, delivery.from, &delivery.data)
                {
                    if let Some(i) = Self::client_index(delivery.from) {
                        self.traffic[i][1].refused += 1;
                    }
                }
            } else if let Some(i) = Self::client_index(delivery.to).filter(|&i| i < clients) {
                if !self.clients[i].handle_datagram(now, delivery.from, &delivery.data) {
                    self.traffic[i][0].refused += 1;
                }
            }
        }
    }

    /// One frame: a [`round`](Self::round), then time moves on by `dt`.
    pub fn step(&mut self, dt: f64) {
        self.round();
        self.now += dt;
    }

    /// When something next happens: a timer of the server or a client, or a delivery.
    pub fn poll_timeout(&self) -> Option<f64> {
        earliest(
            [self.server.poll_timeout(), self.net.next_delivery_time()]
                .into_iter()
                .chain(self.clients.iter().map(Peer::poll_timeout)),
        )
    }

    /// Runs rounds from one wakeup to the next (never less than [`MIN_ADVANCE`] apart)
    /// until `done` holds after a round, or a round at `deadline` has run. Returns whether
    /// `done` held.
    pub fn run_until(&mut self, deadline: f64, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        run_until(self, deadline, &mut done)
    }
}

impl<S: Peer, C: Peer> Stepped for Star<S, C> {
    fn round(&mut self) {
        Star::round(self);
    }
    fn poll_timeout(&self) -> Option<f64> {
        Star::poll_timeout(self)
    }
    fn now_mut(&mut self) -> &mut f64 {
        &mut self.now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::ConnectionConfig;

    fn side() -> Connection<u32> {
        Connection::new(0.0, ConnectionConfig::default()).unwrap()
    }

    #[test]
    fn a_pair_jumps_to_the_delivery_and_counts_both_ways() {
        let net = SimulatorConfig {
            latency: 0.1,
            ..Default::default()
        };
        let mut pair = Pair::new(side(), side(), net);
        pair.a.send_message(0, &42).unwrap();
        assert!(pair.run_until(5.0, |p| p.b.received_messages(0) == 1));
        // Delivered at the latency, not a frame later: the pair jumped to the delivery.
        assert!((pair.now - 0.1).abs() < 1e-9, "{}", pair.now);
        assert!(pair.traffic[0].datagrams >= 1 && pair.traffic[0].bytes > 0);
        let largest = pair.traffic[0].largest;
        assert!(largest > 0 && largest as u64 <= pair.traffic[0].bytes);
        // `b` acks: once the ack is back, `a` has nothing left to resend.
        pair.run_until(5.0, |p| p.a.stats().smoothed_rtt > 0.0);
        assert!(pair.traffic[1].datagrams >= 1);
        assert_eq!(pair.traffic[0].refused + pair.traffic[1].refused, 0);
    }

    #[test]
    fn refusals_are_counted_on_the_receiving_side() {
        let mut pair = Pair::lossless(side(), side());
        pair.net.send(
            0.0,
            Pair::<Connection<u32>, Connection<u32>>::A_ADDR,
            Pair::<Connection<u32>, Connection<u32>>::B_ADDR,
            b"not a packet",
        );
        pair.round();
        assert_eq!(pair.traffic[0].refused, 1);
        assert_eq!(pair.traffic[1].refused, 0);
    }

    #[test]
    fn run_until_stops_at_the_deadline_when_nothing_happens() {
        let mut pair = Pair::lossless(side(), side());
        assert!(!pair.run_until(3.0, |_| false));
        assert_eq!(pair.now, 3.0);
    }

    #[test]
    fn star_addresses_map_back_to_their_clients() {
        type S = Star<Connection<u32>, Connection<u32>>;
        for i in [0, 1, 999, S::MAX_CLIENTS - 1] {
            assert_eq!(S::client_index(S::client_addr(i)), Some(i));
        }
        assert_eq!(S::client_index(S::SERVER_ADDR), None);
    }

    /// A game server and three game clients: they connect, exchange messages both
    /// ways, and one disconnects while the others stay.
    #[test]
    fn a_star_of_game_clients_connects_exchanges_and_one_leaves() {
        use crate::netcode::{ConnectToken, DefaultChannel, Protocol, ServerEvent, TokenParams};
        use std::time::SystemTime;

        type S = Star<Server<u32>, Client<u32>>;
        let protocol = Protocol::<u32, u32>::new();
        let key = [7; 32];
        let unix_now = SystemTime::now();
        let config = protocol.server_config(key, vec![S::SERVER_ADDR]);
        let server = Server::new(0.0, unix_now, config, &protocol).unwrap();
        let net = SimulatorConfig {
            latency: 0.02,
            ..Default::default()
        };
        let mut star = S::new(server, net);
        for id in 0..3 {
            let params = TokenParams {
                client_id: 100 + id,
                ..protocol.token_params(vec![S::SERVER_ADDR], unix_now)
            };
            let token = ConnectToken::generate(&params, &key).unwrap();
            star.add_client(Client::new(0.0, token, &protocol).unwrap());
        }

        let connected = |star: &mut S| {
            star.server.connected_clients() == 3 && star.clients.iter().all(Client::is_connected)
        };
        assert!(star.run_until(2.0, connected), "at {}", star.now);
        let mut seen = Vec::new();
        while let Some(event) = star.server.poll_event() {
            if let ServerEvent::ClientConnected {
                client_id, addr, ..
            } = event
            {
                assert_eq!(addr, S::client_addr(client_id as usize - 100));
                seen.push(client_id);
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, [100, 101, 102]);

        // Each client says its id; the server answers everyone with the sum.
        let channel = DefaultChannel::ReliableOrdered;
        for client in &mut star.clients {
            let id = client.client_id() as u32;
            client.send_message(channel, &id).unwrap();
        }
        let mut sum = 0;
        let mut heard = 0;
        assert!(star.run_until(star.now + 2.0, |star| {
            for id in 100..103 {
                while let Some(message) = star.server.receive_message(id, channel) {
                    assert_eq!(u64::from(message), id);
                    sum += message;
                    heard += 1;
                }
            }
            heard == 3
        }));
        star.server.broadcast_message(channel, &sum).unwrap();
        let mut answers = [None; 3];
        assert!(star.run_until(star.now + 2.0, |star| {
            for (answer, client) in answers.iter_mut().zip(&mut star.clients) {
                if let Some(message) = client.receive_message(channel) {
                    *answer = Some(message);
                }
            }
            answers.iter().all(Option::is_some)
        }));
        assert_eq!(answers, [Some(303); 3]);

        // Client 1 leaves: the server sees it go and keeps the other two.
        star.clients[1].disconnect();
        let mut gone = None;
        assert!(star.run_until(star.now + 2.0, |star| {
            while let Some(event) = star.server.poll_event() {
                if let ServerEvent::ClientDisconnected {
                    client_id, addr, ..
                } = event
                {
                    gone = Some((client_id, addr));
                }
            }
            gone.is_some()
        }));
        assert_eq!(gone, Some((101, S::client_addr(1))));
        assert_eq!(star.server.client_ids(), [100, 102]);
        assert!(star.clients[1].is_disconnected());
        assert!(star.clients[0].is_connected() && star.clients[2].is_connected());
        // Netcode refuses the redundant handshake and disconnect packets (the server no
        // longer knows client 1's address); the harness counts each refusal once.
        for (i, [down, up]) in star.traffic.iter().enumerate() {
            assert!(down.datagrams > 0 && up.datagrams > 0, "client {i}");
            let refused = star.clients[i].netcode().refusals().total();
            assert_eq!(down.refused, refused, "client {i}");
        }
        let up: u64 = star.traffic.iter().map(|[_, up]| up.refused).sum();
        assert_eq!(up, star.server.netcode().refusals().total());
        assert!(star.traffic[1][1].refused > 0);
        assert_eq!(star.misrouted, 0);
    }
}
