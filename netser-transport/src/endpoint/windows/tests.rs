//! The windows' unit tests: loss and bandwidth by hand, the values copied into the
//! windows against their slots, and the running totals against a pass over the windows.

use super::*;
use crate::endpoint::header::{FragmentHeader, PacketHeader};
use crate::endpoint::stats::{reference, settle_time, Stats};
use crate::endpoint::{Config, Endpoint};

fn sent_window(acked: impl Fn(u16) -> bool) -> SentWindow {
    let mut sent = SentWindow::new(8);
    // Sequences 0..8, one every 0.1 s, 100 bytes.
    for sequence in 0..8u16 {
        sent.insert(sequence, f64::from(sequence) * 0.1, 100);
    }
    for sequence in (0..8u16).filter(|&s| acked(s)) {
        sent.ack(sequence, 1.0).unwrap();
    }
    sent
}

#[test]
fn loss_counts_acked_packets_and_the_unacked_ones_old_enough() {
    let mut sent = sent_window(|s| s % 2 == 1);
    // At 0.75 with 0.3 s to settle: 0..=4 are old enough (0, 2 and 4 lost),
    // 1, 3, 5 and 7 acked; 6 is still in flight.
    sent.settle(0.75, 0.3);
    assert_eq!(sent.packet_loss(), Some(3.0 / 7.0));
    // Long after: every even packet lost.
    sent.settle(10.0, 0.3);
    assert_eq!(sent.packet_loss(), Some(0.5));
    // The settle time grows back: the boundary moves back too.
    sent.settle(0.75, 0.3);
    assert_eq!(sent.packet_loss(), Some(3.0 / 7.0));
    // Nothing acked and nothing old enough: not yet known.
    let mut fresh = sent_window(|_| false);
    fresh.settle(0.75, 1.0);
    assert_eq!(fresh.packet_loss(), None);
    fresh.settle(1.65, 1.0);
    assert_eq!(fresh.packet_loss(), Some(1.0));
    let mut empty = SentWindow::new(8);
    empty.settle(5.0, 1.0);
    assert_eq!(empty.packet_loss(), None);
}

#[test]
fn bandwidth_from_two_packets_on() {
    let mut sent = sent_window(|s| s % 2 == 1);
    // 8 packets over 0.7 s: 7 x 100 bytes per 0.7 s = 8 kbps exactly.
    let all = sent.sent_kbps().unwrap();
    assert!((all - 8.0).abs() < 1e-9, "{all}");
    // Acked only (1, 3, 5, 7 of 0..8), all settled: 300 bytes before the last
    // over 0.7 s.
    sent.settle(10.0, 0.3);
    let acked = sent.acked_kbps().unwrap();
    assert!((acked - 2.4 / 0.7).abs() < 1e-9, "{acked}");
    // Nothing settled yet: from the first acked (1, at 0.1) to the newest (7).
    sent.settle(0.0, 0.3);
    let early = sent.acked_kbps().unwrap();
    assert!((early - 2.4 / 0.6).abs() < 1e-9, "{early}");
    let mut one = SentWindow::new(8);
    one.insert(0, 0.5, 100);
    assert_eq!(one.sent_kbps(), None);
    let mut received = ReceivedWindow::new(8);
    assert_eq!(received.received_kbps(), None);
    // Arrivals out of order: 3 at 1.0, then 1 at 1.5, then 2 at 1.5 (the newest at
    // the latest time is left out).
    received.insert(3, 1.0, 100).unwrap();
    received.insert(1, 1.5, 50).unwrap();
    assert_eq!(received.received_kbps(), Some(100.0 * 8.0 / 1000.0 / 0.5));
    received.insert(2, 1.5, 7).unwrap();
    assert_eq!(received.received_kbps(), Some(150.0 * 8.0 / 1000.0 / 0.5));
    assert_eq!(received.insert(200, 2.0, 1).map(|_| ()), Ok(()));
    assert_eq!(received.received_kbps(), None, "alone in its window");
}

/// A window moved by a fragment past the packet that arrived last: the latest is
/// found again among the older arrivals with newer sequences.
#[test]
fn the_latest_arrival_leaving_first_is_found_again() {
    let mut received = ReceivedWindow::new(8);
    received.insert(10, 1.0, 100).unwrap();
    received.insert(4, 2.0, 100).unwrap(); // arrives last, oldest sequence
    received.advance(12); // 4 leaves (window 5..=12); 10 stays
    assert_eq!(received.latest.map(|latest| latest.sequence), Some(10));
    assert_eq!(received.received_kbps(), None, "one packet left");
    received.insert(11, 3.0, 100).unwrap();
    assert_eq!(received.received_kbps(), Some(0.8 / 2.0));
}

fn assert_agree(endpoint: &mut Endpoint, now: f64, context: &str) {
    endpoint.handle_timeout(now);
    // `has_rtt` reads the update's flag for what the counters say.
    assert_eq!(
        endpoint.has_rtt(),
        endpoint.counters().packets_acked > 0,
        "{context}"
    );
    let fast = endpoint.measure(now);
    let settle = settle_time(&endpoint.stats, endpoint.update.has_rtt);
    let slow = reference::measure(
        endpoint.sent.packets(),
        endpoint.received.packets(),
        now,
        settle,
    );
    assert_eq!(fast, slow, "{context}");
    // The RTT summary against a plain pass over the same samples.
    let samples: Vec<f64> = endpoint.rtt_history.samples().collect();
    let mut expected = Stats::default();
    if !samples.is_empty() {
        let n = samples.len() as f64;
        expected.rtt_min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        expected.rtt_max = samples.iter().copied().fold(0.0, f64::max);
        expected.rtt_avg = samples.iter().sum::<f64>() / n;
        expected.jitter_avg_vs_min_rtt = expected.rtt_avg - expected.rtt_min;
        expected.jitter_max_vs_min_rtt = expected.rtt_max - expected.rtt_min;
        let variance = samples
            .iter()
            .map(|s| (s - expected.rtt_avg).powi(2))
            .sum::<f64>()
            / n;
        expected.jitter_stddev_vs_avg_rtt = variance.sqrt();
    }
    let stats = endpoint.stats();
    assert_eq!(stats.rtt_min, expected.rtt_min, "{context}");
    assert_eq!(stats.rtt_max, expected.rtt_max, "{context}");
    for (fast, slow) in [
        (stats.rtt_avg, expected.rtt_avg),
        (stats.jitter_avg_vs_min_rtt, expected.jitter_avg_vs_min_rtt),
        (stats.jitter_max_vs_min_rtt, expected.jitter_max_vs_min_rtt),
        (
            stats.jitter_stddev_vs_avg_rtt,
            expected.jitter_stddev_vs_avg_rtt,
        ),
    ] {
        assert!((fast - slow).abs() < 1e-9, "{context}: {fast} vs {slow}");
    }
}

/// The running totals against the plain definitions over random traffic: loss,
/// reordering, duplicates, fragments, bursts at one instant, pauses, a clock that
/// sometimes reads earlier than before, forged sequence jumps past the window and
/// first fragments that move it; small windows so packets leave them and the
/// sequence wraps.
#[test]
fn running_totals_equal_a_pass_over_the_windows_under_random_traffic() {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (round, window) in [16usize, 64, 256].into_iter().enumerate() {
        let config = Config {
            sent_packets_buffer_size: window,
            received_packets_buffer_size: window.max(32),
            rtt_history_size: 1 + window / 2,
            fragment_above: 200,
            fragment_size: 200,
            max_fragments: 8,
            max_packet_size: 1600,
            ..Config::default()
        };
        let mut sides = [
            Endpoint::new(0.0, config.clone()).unwrap(),
            Endpoint::new(0.0, config.clone()).unwrap(),
        ];
        let mut in_flight: Vec<(f64, usize, Vec<u8>)> = Vec::new();
        let mut now = 0.0f64;
        for step in 0..30_000u32 {
            let roll = next();
            now += match roll % 20 {
                0 => 0.0,
                1 => 1.5,
                _ => (roll >> 8) as f64 % 30.0 / 1000.0,
            };
            let from = (roll >> 20) as usize % 2;
            // Sometimes a clock that reads a little earlier than before.
            let at = if roll % 97 == 0 { now - 0.2 } else { now };
            if (roll >> 24) % 4 != 0 {
                let len = [0, 10, 150, 700][(roll >> 28) as usize % 4];
                sides[from].send_packet(at, &vec![step as u8; len]).unwrap();
                while let Some(transmit) = sides[from].poll_transmit() {
                    let fate = next() % 100;
                    if fate < 20 {
                        continue; // lost
                    }
                    let delay = 0.05 + (fate % 7) as f64 * 0.01;
                    in_flight.push((now + delay, 1 - from, transmit.data.to_vec()));
                    if fate > 95 {
                        in_flight.push((now + delay * 2.0, 1 - from, transmit.data.to_vec()));
                    }
                }
            }
            if roll % 501 == 0 {
                // A forged packet far ahead, or the first fragment of one.
                // Ahead of what side 0 sends next by up to twice the window.
                let ahead = (next() % (2 * window as u64)) as u16;
                let sequence = sides[0].next_sequence().wrapping_add(ahead);
                let (header, len) = PacketHeader {
                    sequence,
                    ack: 0,
                    ack_bits: 0,
                }
                .encode();
                let datagram = if roll % 2 == 0 {
                    header[..len].to_vec()
                } else {
                    let mut datagram = FragmentHeader {
                        sequence,
                        fragment_id: 0,
                        num_fragments: 2,
                    }
                    .encode()
                    .to_vec();
                    datagram.extend_from_slice(&header[..len]);
                    datagram.extend_from_slice(&[0; 200]);
                    datagram
                };
                let _ = sides[1].handle_datagram(at, &datagram);
            }
            let mut i = 0;
            while i < in_flight.len() {
                if in_flight[i].0 <= now {
                    let (_, to, datagram) = in_flight.swap_remove(i);
                    let _ = sides[to].handle_datagram(at, &datagram);
                } else {
                    i += 1;
                }
            }
            for side in &mut sides {
                side.drain_acks().for_each(drop);
            }
            if roll % 3 == 0 {
                for (index, side) in sides.iter_mut().enumerate() {
                    assert_agree(
                        side,
                        at,
                        &format!("window {window}, step {step}, side {index}"),
                    );
                }
            }
        }
        let counters = sides[0].counters();
        assert!(counters.packets_acked > 1000, "round {round}: {counters:?}");
    }
}

fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The values the sent window copies out of its slots (the oldest and latest times,
/// the newest acked packet, the packets at the settle boundary) against a pass over the
/// slots after every step, and its loss and bandwidth against the plain definitions
/// after every settle: random sends (at one instant, after pauses, on a clock that
/// sometimes reads earlier), acks of packets in, before and past the window, and settle
/// times that shrink and grow, in windows small enough that packets leave them on every
/// send and the sequence wraps.
#[test]
fn sent_window_copies_equal_its_slots_under_random_sends_acks_and_settles() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for capacity in [1usize, 2, 8, 64] {
        let mut sent = SentWindow::new(capacity);
        let (mut now, mut sequence, mut inserted, mut measured) = (0.0f64, 0u16, 0u32, 0u32);
        let mut newest_acks = 0u32;
        for _ in 0..150_000 {
            let roll = next();
            now += match roll % 16 {
                0 => 0.0,
                1 => 2.0,
                _ => (roll >> 8) as f64 % 40.0 / 1000.0,
            };
            match (roll >> 16) % 8 {
                0..=3 => {
                    let at = if roll.is_multiple_of(61) {
                        now - 0.3
                    } else {
                        now
                    };
                    sent.insert(sequence, at, (roll >> 24) as u32 % 1500);
                    sequence = sequence.wrapping_add(1);
                    inserted += 1;
                }
                4 | 5 => {
                    let back = (roll >> 24) as u16 % (capacity as u16 + 4);
                    let acked = sequence.wrapping_sub(back).wrapping_add(2);
                    // The answer from the slot, before the ack (the newest packet's
                    // ack takes it from the copies in the window).
                    let expected = sent
                        .packets()
                        .get(acked)
                        .filter(|packet| !packet.acked)
                        .map(|packet| (now - packet.time).max(0.0));
                    newest_acks +=
                        u32::from(expected.is_some() && acked == sequence.wrapping_sub(1));
                    assert_eq!(sent.ack(acked, now), expected);
                    if let Some(packet) = sent.packets().get(acked) {
                        assert!(packet.acked, "{acked} stays in the window, acked");
                    }
                }
                _ => {
                    let settle = [0.0, 0.05, 0.2, 1.0][(roll >> 24) as usize % 4];
                    sent.settle(now, settle);
                    let packets = sent.packets();
                    assert_eq!(
                        sent.packet_loss(),
                        reference::packet_loss(packets, now, settle)
                    );
                    let expected =
                        reference::measure(packets, &SequenceBuffer::new(1), now, settle);
                    assert_eq!(sent.sent_kbps(), expected.sent_kbps);
                    assert_eq!(sent.acked_kbps(), expected.acked_kbps);
                    measured += u32::from(expected.acked_kbps.is_some());
                }
            }
            sent.assert_consistent();
        }
        assert!(inserted > 65536, "the sequence wraps");
        assert!(newest_acks > 200, "capacity {capacity}: {newest_acks}");
        if capacity > 1 {
            assert!(measured > 5000, "capacity {capacity}: {measured}");
        }
    }
}

/// The same for the received window (its first in-order packet and its latest arrival):
/// packets in order, late, lost, far ahead, and windows moved by first fragments.
#[test]
fn received_window_copies_equal_its_slots_under_random_arrivals() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for capacity in [1usize, 4, 32, 256] {
        let mut received = ReceivedWindow::new(capacity);
        let (mut now, mut sequence, mut measured) = (0.0f64, 65000u16, 0u32);
        for _ in 0..100_000 {
            let roll = next();
            now += match roll % 16 {
                0 | 1 => 0.0,
                2 => 1.5,
                _ => (roll >> 8) as f64 % 30.0 / 1000.0,
            };
            let at = if roll.is_multiple_of(53) {
                now - 0.2
            } else {
                now
            };
            sequence = match (roll >> 16) % 10 {
                0 => sequence.wrapping_sub((roll >> 24) as u16 % (2 * capacity as u16 + 2)),
                1 => sequence.wrapping_add((roll >> 24) as u16 % (3 * capacity as u16 + 2)),
                _ => sequence.wrapping_add(1),
            };
            if (roll >> 40).is_multiple_of(7) {
                received.advance(sequence);
            } else if !received.contains(sequence) {
                let _ = received.insert(sequence, at, (roll >> 48) as u32 % 1500);
            }
            received.assert_consistent();
            let all: Vec<_> = received
                .packets()
                .iter()
                .map(|(s, p)| (s, p.time, p.bytes, true))
                .collect();
            let expected = reference::bandwidth_kbps(&all);
            assert_eq!(received.received_kbps(), expected);
            measured += u32::from(expected.is_some());
        }
        if capacity > 1 {
            assert!(measured > 10_000, "capacity {capacity}: {measured}");
        }
    }
}
