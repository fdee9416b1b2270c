//! Conformance with the C `reliable` library (reliable.c, the reference of the packet
//! endpoint): replays the two `reliable` scenarios of `tests/data/netcode_vectors.json` (see
//! `tests/data/netcode_vectors.md`) op by op on a pair of netser endpoints configured as the
//! C ones were. Every datagram the C endpoint wrote is written byte for byte by ours from
//! the same payload and ack state; every datagram the C endpoint received is read by ours
//! with the same delivered packets and the same ack state after; the acks are reported in
//! the same order, and the counters with a netser equivalent are equal. The scenarios cross
//! the 16-bit sequence wrap, lose, reorder and duplicate packets, and reassemble fragments
//! arriving in reverse order.

use netser_transport::endpoint::{Config, Endpoint};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("data/netcode_vectors.json")).expect("JSON")
}

fn hex(value: &Value) -> Vec<u8> {
    let text = value.as_str().expect("a hex string");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}

fn num(value: &Value) -> u64 {
    value.as_u64().expect("an unsigned integer")
}

fn config(c: &Value) -> Config {
    let size = |key: &str| num(&c[key]) as usize;
    Config {
        max_packet_size: size("max_packet_size"),
        fragment_above: size("fragment_above"),
        fragment_size: size("fragment_size"),
        max_fragments: size("max_fragments"),
        sent_packets_buffer_size: size("sent_packets_buffer_size"),
        received_packets_buffer_size: size("received_packets_buffer_size"),
        fragment_reassembly_buffer_size: size("fragment_reassembly_buffer_size"),
        ..Config::default()
    }
}

fn ack_state(value: &Value) -> (u16, u32) {
    (num(&value["ack"]) as u16, num(&value["ack_bits"]) as u32)
}

/// What one scenario exercised, to show nothing was skipped.
#[derive(Debug, Default, PartialEq)]
struct Covered {
    datagrams_written: usize,
    datagrams_read: usize,
    packets_delivered: usize,
    ack_reports: usize,
    counter_checks: usize,
}

fn replay(scenario: &Value) -> Covered {
    let name = scenario["name"].as_str().unwrap();
    let config = config(&scenario["config"]);
    let mut a = Endpoint::new(0.0, config.clone()).unwrap();
    let mut b = Endpoint::new(0.0, config).unwrap();
    let mut covered = Covered::default();
    let mut now = 0.0;
    for (i, op) in scenario["ops"].as_array().unwrap().iter().enumerate() {
        now += 0.001;
        let at = format!("{name} ops[{i}]");
        let endpoint = match op["endpoint"].as_str().unwrap() {
            "a" => &mut a,
            "b" => &mut b,
            other => panic!("{at}: endpoint {other}"),
        };
        match op["op"].as_str().unwrap() {
            "warmup" => {
                for _ in 0..num(&op["count"]) {
                    endpoint.send_packet(now, &[0]).unwrap();
                    while endpoint.poll_transmit().is_some() {}
                }
                assert_eq!(
                    u64::from(endpoint.next_sequence()),
                    num(&op["next_sequence_after"]),
                    "{at}"
                );
            }
            "send" => {
                let payload = hex(&op["payload_hex"]);
                assert_eq!(payload.len() as u64, num(&op["payload_bytes"]));
                assert_eq!(
                    endpoint.ack_state(),
                    ack_state(&op["ack_state_before"]),
                    "{at}"
                );
                let sequence = endpoint.send_packet(now, &payload).unwrap();
                assert_eq!(u64::from(sequence), num(&op["sequence"]), "{at}");
                let mut written = Vec::new();
                while let Some(transmit) = endpoint.poll_transmit() {
                    assert_eq!(transmit.sequence, sequence);
                    written.push(transmit.data.to_vec());
                }
                let expected: Vec<Vec<u8>> = op["datagrams"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| hex(&d["hex"]))
                    .collect();
                assert_eq!(written.len(), expected.len(), "{at}: datagram count");
                for (k, (ours, theirs)) in written.iter().zip(&expected).enumerate() {
                    assert_eq!(ours, theirs, "{at}: datagram {k}");
                }
                covered.datagrams_written += written.len();
            }
            "receive" => {
                let datagram = hex(&op["datagram_hex"]);
                let expected = op["processed"].as_array().unwrap();
                let delivered = endpoint
                    .handle_datagram(now, &datagram)
                    .map(|r| r.map(|p| (p.sequence, p.payload.to_vec())));
                match expected.as_slice() {
                    [] => assert!(
                        matches!(delivered, Ok(None) | Err(_)),
                        "{at}: delivered {delivered:?}, the C endpoint nothing"
                    ),
                    [packet] => {
                        let (sequence, payload) = delivered
                            .unwrap_or_else(|e| panic!("{at}: {e:?}"))
                            .unwrap_or_else(|| panic!("{at}: nothing delivered"));
                        assert_eq!(u64::from(sequence), num(&packet["sequence"]), "{at}");
                        assert_eq!(payload.len() as u64, num(&packet["payload_bytes"]));
                        assert_eq!(payload, hex(&packet["payload_hex"]), "{at}");
                        covered.packets_delivered += 1;
                    }
                    more => panic!("{at}: {} packets from one datagram", more.len()),
                }
                assert_eq!(
                    endpoint.ack_state(),
                    ack_state(&op["ack_state_after"]),
                    "{at}"
                );
                covered.datagrams_read += 1;
            }
            "get_acks" => {
                let expected: Vec<u16> = op["acks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| num(s) as u16)
                    .collect();
                assert_eq!(endpoint.acks(), expected, "{at}");
                if op["clear"] == true {
                    endpoint.clear_acks();
                }
                covered.ack_reports += 1;
            }
            "counters" => {
                let c = &op["counters"];
                let ours = endpoint.counters();
                // The C endpoint counts a packet received before its stale and duplicate
                // checks; ours counts what it delivers and each drop by reason.
                let received = ours.packets_received + ours.drops.stale + ours.drops.duplicate;
                let pairs = [
                    ("num_packets_sent", ours.packets_sent),
                    ("num_packets_received", received),
                    ("num_packets_acked", ours.packets_acked),
                    ("num_packets_stale", ours.drops.stale),
                    (
                        "num_packets_too_large_to_send",
                        ours.packets_too_large_to_send,
                    ),
                    ("num_packets_too_large_to_receive", ours.drops.too_large),
                    ("num_fragments_sent", ours.fragments_sent),
                    ("num_packets_duplicate", ours.drops.duplicate),
                ];
                for (key, value) in pairs {
                    assert_eq!(value, num(&c[key]), "{at}: {key}");
                }
                covered.counter_checks += 1;
            }
            other => panic!("{at}: op {other}"),
        }
    }
    covered
}

#[test]
fn both_c_reliable_scenarios_replay_byte_for_byte() {
    let v = vectors();
    let scenarios = v["reliable"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    let covered: Vec<Covered> = scenarios.iter().map(replay).collect();
    let expect = |written, read| Covered {
        datagrams_written: written,
        datagrams_read: read,
        packets_delivered: 12,
        ack_reports: 3,
        counter_checks: 2,
    };
    assert_eq!(covered, [expect(33, 31), expect(50, 48)]);
}
