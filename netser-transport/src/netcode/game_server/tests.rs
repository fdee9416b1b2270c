use super::*;
use crate::netcode::{
    generate_key, BudgetConfig, Client, ClientState, ConnectToken, DisconnectPolicy, PayloadError,
    TokenParams,
};

const CLIENT_ADDR: &str = "127.0.0.1:50000";
const SERVER_ADDR: &str = "127.0.0.1:40000";

/// A server whose event queue holds `capacity` events, with client 9 connected.
fn connected_server(capacity: usize) -> Server<u8> {
    let key = generate_key().unwrap();
    let server_addr: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let client_addr: SocketAddr = CLIENT_ADDR.parse().unwrap();
    let unix = std::time::SystemTime::now();
    let protocol = Protocol::<u8, u8>::new();
    let config = protocol.server_config(key, vec![server_addr]);
    let mut server: Server<u8> = Server::new(0.0, unix, config, &protocol).unwrap();
    server.events = EventQueue::new(capacity);
    let params = TokenParams {
        client_id: 9,
        ..protocol.token_params(vec![server_addr], unix)
    };
    let token = ConnectToken::generate(&params, &key).unwrap();
    let mut client: Client<u8> = Client::new(0.0, token, &protocol).unwrap();
    let mut t = 0.0;
    while server.connected_clients() == 0 && t < 5.0 {
        client.handle_timeout(t);
        while let Some(transmit) = client.poll_transmit() {
            server.handle_datagram(t, client_addr, transmit.data);
        }
        server.handle_timeout(t);
        while let Some(transmit) = server.poll_transmit() {
            client.handle_datagram(t, server_addr, transmit.data);
        }
        t += 0.02;
    }
    assert!(server.is_connected(9));
    server
}

/// An unpolled server keeps at most its bound of events and counts the rest.
#[test]
fn events_past_the_bound_are_dropped_and_counted() {
    let mut server = connected_server(1);
    assert!(server.disconnect(9));
    assert_eq!(server.dropped_events(), 1);
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::ClientConnected {
            client_id: 9,
            addr: CLIENT_ADDR.parse().unwrap(),
            user_data: Box::new([0; USER_DATA_BYTES]),
        })
    );
    assert_eq!(server.poll_event(), None);
}

/// A client whose connect event was dropped gets no disconnect event either (counted
/// as dropped too): the game never sees a disconnect for a client it never saw.
#[test]
fn no_disconnect_event_without_its_connect() {
    let mut server = connected_server(0);
    assert_eq!(server.dropped_events(), 1);
    assert!(server.disconnect(9));
    assert_eq!(server.dropped_events(), 2);
    assert_eq!(server.poll_event(), None);
}

/// A server and a client connected to it through a perfect link, the client's token
/// kept for a second session, and the time reached.
struct Link {
    server: Server<u8>,
    client: Client<u8>,
    token: ConnectToken,
    protocol: Protocol<u8, u8>,
    t: f64,
}

impl Link {
    fn connected() -> Link {
        let key = generate_key().unwrap();
        let server_addr: SocketAddr = SERVER_ADDR.parse().unwrap();
        let unix = std::time::SystemTime::now();
        let protocol = Protocol::<u8, u8>::new();
        let config = protocol.server_config(key, vec![server_addr]);
        let server: Server<u8> = Server::new(0.0, unix, config, &protocol).unwrap();
        let params = TokenParams {
            client_id: 9,
            ..protocol.token_params(vec![server_addr], unix)
        };
        let token = ConnectToken::generate(&params, &key).unwrap();
        let client: Client<u8> = Client::new(0.0, token.clone(), &protocol).unwrap();
        let mut link = Link {
            server,
            client,
            token,
            protocol,
            t: 0.0,
        };
        link.run_until(|link| link.server.is_connected(9) && link.client.is_connected());
        assert!(link.server.is_connected(9));
        while link.server.poll_event().is_some() {}
        link
    }

    /// Runs both sides every 20 ms until `done`, for at most 5 s.
    fn run_until(&mut self, done: impl Fn(&Link) -> bool) {
        let server_addr: SocketAddr = SERVER_ADDR.parse().unwrap();
        let client_addr: SocketAddr = CLIENT_ADDR.parse().unwrap();
        let end = self.t + 5.0;
        while !done(self) && self.t < end {
            self.client.handle_timeout(self.t);
            while let Some(transmit) = self.client.poll_transmit() {
                self.server
                    .handle_datagram(self.t, client_addr, transmit.data);
            }
            self.server.handle_timeout(self.t);
            while let Some(transmit) = self.server.poll_transmit() {
                self.client
                    .handle_datagram(self.t, server_addr, transmit.data);
            }
            self.t += 0.02;
        }
    }

    /// The client's next `count` datagrams, each carrying one new reliable message
    /// (`first`, `first + 1`, ...), not delivered.
    fn client_datagrams(&mut self, first: u8, count: u8) -> Vec<Vec<u8>> {
        let mut datagrams = Vec::new();
        for i in 0..count {
            self.client
                .send_message(DefaultChannel::ReliableOrdered, &(first + i))
                .unwrap();
            // 1 ms apart: well inside the resend delay, so each carries its message only.
            self.t += 0.001;
            self.client.handle_timeout(self.t);
            while let Some(transmit) = self.client.poll_transmit() {
                datagrams.push(transmit.data.to_vec());
            }
        }
        datagrams
    }
}

use crate::netcode::DefaultChannel;

/// Past its datagram burst a client's datagrams are refused before netcode reads them
/// (its refusal counters do not move, not even for the replays among them) and their
/// messages never arrive; the budget counts them.
#[test]
fn datagrams_past_the_budget_are_refused_before_decryption() {
    let mut link = Link::connected();
    let budget = BudgetConfig {
        datagram_burst: 3,
        datagrams_per_second: 0.001,
        ..BudgetConfig::default()
    };
    link.server.set_budget_config(budget).unwrap();
    let datagrams = link.client_datagrams(0, 8);
    assert_eq!(datagrams.len(), 8);
    let client_addr: SocketAddr = CLIENT_ADDR.parse().unwrap();
    let refusals = link.server.netcode().refusals().total();
    let admitted = link.server.budgets().counters().admitted;
    for datagram in &datagrams {
        link.server.handle_datagram(link.t, client_addr, datagram);
    }
    // Replays of an admitted datagram would be refused by netcode as replayed.
    for _ in 0..4 {
        link.server
            .handle_datagram(link.t, client_addr, &datagrams[0]);
    }
    let counters = *link.server.budgets().counters();
    assert_eq!(counters.admitted - admitted, 3);
    assert_eq!(counters.refused_datagrams, 9);
    assert_eq!(counters.refused(), 9);
    let slot = link.server.netcode().client_slot(9).unwrap();
    assert_eq!(
        link.server
            .budgets()
            .client_counters(slot)
            .unwrap()
            .refused(),
        9
    );
    assert_eq!(link.server.netcode().refusals().total(), refusals);
    let mut received = Vec::new();
    while let Some(m) = link
        .server
        .receive_message(9, DefaultChannel::ReliableOrdered)
    {
        received.push(m);
    }
    assert_eq!(received, [0, 1, 2]);
    assert_eq!(counters.messages, 3);
    assert!(link.server.is_connected(9));
}

/// With a disconnect policy, a client refused `refused` times within the window is
/// disconnected for its own reason (the client sees the standard's server disconnect),
/// and its connect token is denied from then on: it cannot come back with fresh budgets.
#[test]
fn a_client_past_the_policy_is_disconnected_over_budget() {
    let mut link = Link::connected();
    let budget = BudgetConfig {
        datagram_burst: 1,
        datagrams_per_second: 0.001,
        disconnect: Some(DisconnectPolicy {
            refused: 5,
            window: 1.0,
        }),
        ..BudgetConfig::default()
    };
    link.server.set_budget_config(budget).unwrap();
    let datagrams = link.client_datagrams(0, 6);
    let client_addr: SocketAddr = CLIENT_ADDR.parse().unwrap();
    for datagram in &datagrams[..5] {
        link.server.handle_datagram(link.t, client_addr, datagram);
    }
    assert!(link.server.is_connected(9), "1 admitted, 4 refused");
    link.server
        .handle_datagram(link.t, client_addr, &datagrams[5]);
    assert!(!link.server.is_connected(9));
    assert_eq!(link.server.budgets().counters().disconnected, 1);
    assert!(matches!(
        link.server.poll_event(),
        Some(ServerEvent::ClientDisconnected {
            client_id: 9,
            reason: DisconnectReason::OverBudget,
            ..
        })
    ));
    link.run_until(|link| link.client.is_disconnected());
    assert_eq!(
        link.client.state(),
        ClientState::Disconnected(DisconnectReason::DisconnectedByServer)
    );

    // The same token again, from the same address: denied at once.
    link.client = Client::new(link.t, link.token.clone(), &link.protocol).unwrap();
    link.run_until(|link| link.client.is_disconnected() || link.server.is_connected(9));
    assert!(!link.server.is_connected(9));
    assert_eq!(
        link.client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectionDenied)
    );
    assert!(link.server.netcode().denied_banned_tokens() >= 1);
    assert_eq!(link.server.poll_event(), None);
}

/// A client the game disconnects (not over budget) may come back with its token: only
/// the budget's disconnect bans it.
#[test]
fn a_token_disconnected_by_the_game_can_connect_again() {
    let mut link = Link::connected();
    assert!(link.server.disconnect(9));
    link.run_until(|link| link.client.is_disconnected());
    link.client = Client::new(link.t, link.token.clone(), &link.protocol).unwrap();
    link.run_until(|link| link.server.is_connected(9));
    assert!(link.server.is_connected(9));
    assert_eq!(link.server.netcode().denied_banned_tokens(), 0);
}

/// The game server sends by slot: a slot that does not hold the client is refused as an
/// unknown client, and nothing is queued; the right slot queues one datagram.
#[test]
fn a_payload_sent_by_slot_goes_only_to_the_client_in_that_slot() {
    let mut server = connected_server(8);
    while server.poll_transmit().is_some() {}
    let slot = server.netcode.client_slot(9).unwrap();
    let unknown = Err(PayloadError::UnknownClient { client_id: 9 });
    assert_eq!(server.netcode.send_payload_at(slot + 1, 9, b"x"), unknown);
    assert_eq!(
        server.netcode.send_payload_at(slot, 10, b"x"),
        Err(PayloadError::UnknownClient { client_id: 10 })
    );
    assert_eq!(server.netcode.send_payload_at(usize::MAX, 9, b"x"), unknown);
    assert!(server.poll_transmit().is_none());
    assert_eq!(server.netcode.send_payload_at(slot, 9, b"x"), Ok(()));
    let sent = server.poll_transmit().map(|t| t.to);
    assert_eq!(sent, Some(CLIENT_ADDR.parse().unwrap()));
}

/// Messages read by slot are those `receive_message` reads, in its order: a slot that
/// does not hold the client, or another id, reads nothing and takes nothing; a client
/// that disconnected is read from its closing connection, its slot freed.
#[test]
fn messages_read_by_slot_are_those_read_by_id() {
    let mut link = Link::connected();
    let client_addr: SocketAddr = CLIENT_ADDR.parse().unwrap();
    let slots: Vec<_> = link.server.netcode.client_slots().collect();
    let slot = link.server.netcode.client_slot(9).unwrap();
    assert_eq!(slots, [(slot, 9)]);
    let channel = ChannelId::from(DefaultChannel::ReliableOrdered);
    for datagram in link.client_datagrams(1, 4) {
        link.server.handle_datagram(link.t, client_addr, &datagram);
    }
    assert!(link.server.connection_at(slot, 9).is_some());
    assert!(link.server.connection_at(slot, 10).is_none());
    assert!(link.server.connection_at(slot + 1, 9).is_none());
    assert_eq!(link.server.receive_message_at(slot + 1, 9, channel), None);
    assert_eq!(link.server.receive_message_at(slot, 10, channel), None);
    assert_eq!(link.server.receive_message_at(usize::MAX, 9, channel), None);
    assert_eq!(link.server.receive_message_at(slot, 9, channel), Some(1));
    assert_eq!(link.server.receive_message(9, channel), Some(2));
    assert_eq!(link.server.receive_message_at(slot, 9, channel), Some(3));
    assert!(link.server.disconnect(9));
    assert!(link.server.connection_at(slot, 9).is_none());
    assert_eq!(link.server.receive_message_at(slot, 9, channel), Some(4));
    assert_eq!(link.server.receive_message_at(slot, 9, channel), None);
    assert_eq!(link.server.receive_message(9, channel), None);
}
