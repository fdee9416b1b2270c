//! Random scripts against a chunk sender and receiver with several chunks in flight:
//! sends, ticks, deliveries in any order, losses, duplicates, mutated, truncated and
//! forged packets, takes. Whatever happens, nothing panics, neither side holds more than
//! `max_chunks_in_flight` chunks, and on an honest link (however lossy and reordered)
//! no slice leaves the receiver's window, chunks arrive in order, intact, once each, and
//! every chunk sent arrives once the link is flushed.

use std::collections::VecDeque;

use netser_transport::chunk::{ChunkConfig, ChunkReceiver, ChunkSender};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Send(u16),
    Tick(u8),
    Deliver {
        to_receiver: bool,
        index: u8,
    },
    Drop {
        to_receiver: bool,
        index: u8,
    },
    Duplicate {
        to_receiver: bool,
        index: u8,
    },
    Mutate {
        to_receiver: bool,
        index: u8,
        offset: u16,
        byte: u8,
    },
    Truncate {
        to_receiver: bool,
        index: u8,
        len: u16,
    },
    Forge {
        to_receiver: bool,
        bytes: Vec<u8>,
    },
    Take,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u16>().prop_map(Op::Send),
        4 => any::<u8>().prop_map(Op::Tick),
        6 => (any::<bool>(), any::<u8>()).prop_map(|(to_receiver, index)| Op::Deliver { to_receiver, index }),
        2 => (any::<bool>(), any::<u8>()).prop_map(|(to_receiver, index)| Op::Drop { to_receiver, index }),
        1 => (any::<bool>(), any::<u8>()).prop_map(|(to_receiver, index)| Op::Duplicate { to_receiver, index }),
        1 => (any::<bool>(), any::<u8>(), any::<u16>(), any::<u8>())
            .prop_map(|(to_receiver, index, offset, byte)| Op::Mutate { to_receiver, index, offset, byte }),
        1 => (any::<bool>(), any::<u8>(), any::<u16>())
            .prop_map(|(to_receiver, index, len)| Op::Truncate { to_receiver, index, len }),
        1 => (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(to_receiver, bytes)| Op::Forge { to_receiver, bytes }),
        2 => Just(Op::Take),
    ]
}

/// Bytes of the `n`th chunk sent, `size` long.
fn pattern(n: u32, size: usize) -> Vec<u8> {
    (0..size).map(|i| (i as u32 * 7 + n) as u8).collect()
}

/// Takes every chunk ready; on an honest link, checks each is the next one, intact.
fn take(receiver: &mut ChunkReceiver, sent: &[Vec<u8>], taken: &mut usize, hostile: bool) {
    while let Some(chunk) = receiver.take_chunk() {
        if !hostile {
            assert_eq!(usize::from(chunk.id), *taken, "in order, once each");
            assert_eq!(chunk.data, sent[*taken], "intact");
        }
        *taken += 1;
    }
}

fn run(k: usize, slice: usize, hostile: bool, ops: &[Op]) {
    let config = ChunkConfig {
        slice_size: slice,
        max_slices: 6,
        max_chunks_in_flight: k,
        max_queued_chunks: 4,
        bandwidth: 50_000.0,
        ..ChunkConfig::default()
    };
    let max = config.max_chunk_size();
    let mut sender = ChunkSender::new(config.clone()).unwrap();
    let mut receiver = ChunkReceiver::new(config).unwrap();
    let mut wire: [VecDeque<Vec<u8>>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut sent: Vec<Vec<u8>> = Vec::new();
    let mut taken = 0usize;
    let mut now = 0.0;
    let pick =
        |q: &VecDeque<Vec<u8>>, index: u8| (!q.is_empty()).then(|| usize::from(index) % q.len());
    for op in ops {
        let q = |to_receiver: &bool| usize::from(!*to_receiver);
        match op {
            Op::Send(size) => {
                let data = pattern(sent.len() as u32, usize::from(*size) % max + 1);
                if sender.send(data.clone()).is_ok() {
                    sent.push(data);
                }
            }
            Op::Tick(ms) => {
                now += f64::from(*ms) / 1000.0;
                while let Some(p) = sender.poll_packet(now) {
                    wire[0].push_back(p.to_vec());
                }
                while let Some(a) = receiver.poll_ack(now) {
                    wire[1].push_back(a.to_vec());
                }
            }
            Op::Deliver { to_receiver, index } => {
                let q = q(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = wire[q].remove(i).unwrap();
                    // Packets held back without limit may come after the chunks they
                    // belong to are forgotten: refused, and counted, as stale.
                    let _ = if q == 0 {
                        receiver.receive_slice(now, &p)
                    } else {
                        sender.receive_ack(now, &p)
                    };
                }
            }
            Op::Drop { to_receiver, index } => {
                let q = q(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    wire[q].remove(i);
                }
            }
            Op::Duplicate { to_receiver, index } => {
                let q = q(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let copy = wire[q][i].clone();
                    wire[q].push_back(copy);
                }
            }
            Op::Mutate {
                to_receiver,
                index,
                offset,
                byte,
            } if hostile => {
                let q = q(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = &mut wire[q][i];
                    if !p.is_empty() {
                        let at = usize::from(*offset) % p.len();
                        p[at] = *byte;
                    }
                }
            }
            Op::Truncate {
                to_receiver,
                index,
                len,
            } if hostile => {
                let q = q(to_receiver);
                if let Some(i) = pick(&wire[q], *index) {
                    let p = &mut wire[q][i];
                    if !p.is_empty() {
                        p.truncate(usize::from(*len) % p.len());
                    }
                }
            }
            Op::Forge { to_receiver, bytes } if hostile => {
                let _ = if *to_receiver {
                    receiver.receive_slice(now, bytes)
                } else {
                    sender.receive_ack(now, bytes)
                };
            }
            Op::Take => take(&mut receiver, &sent, &mut taken, hostile),
            _ => {}
        }
        assert!(receiver.chunks_held() <= k);
        assert!(sender.chunks_in_flight() <= k);
        assert!(sender.queued_chunks() <= 4);
        if !hostile {
            // An honest sender never leaves the receiver's window, nor changes a count;
            // the only refusals are of packets older than what either side remembers.
            let (r, s) = (&receiver.stats().rejected, &sender.stats().rejected);
            assert_eq!(r.total(), r.unexpected_chunk, "{r:?}");
            assert_eq!(s.total(), s.ack_chunk_mismatch, "{s:?}");
        }
    }
    if hostile {
        return;
    }
    // An honest link, flushed until quiet: every chunk sent arrives.
    for _ in 0..10_000 {
        if taken == sent.len() && sender.is_idle() {
            break;
        }
        now += 0.05;
        while let Some(p) = sender.poll_packet(now) {
            receiver.receive_slice(now, p).unwrap();
        }
        while let Some(p) = wire[0].pop_front() {
            let _ = receiver.receive_slice(now, &p);
        }
        take(&mut receiver, &sent, &mut taken, hostile);
        while let Some(a) = receiver.poll_ack(now) {
            sender.receive_ack(now, a).unwrap();
        }
        while let Some(a) = wire[1].pop_front() {
            let _ = sender.receive_ack(now, &a);
        }
    }
    assert_eq!(
        taken,
        sent.len(),
        "every chunk arrives once the link is flushed"
    );
    assert!(sender.is_idle());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn honest_links_deliver_in_order(
        k in 2usize..8,
        slice in 1usize..16,
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        run(k, slice, false, &ops);
    }

    #[test]
    fn hostile_links_never_break_the_bounds(
        k in 2usize..8,
        slice in 1usize..16,
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        run(k, slice, true, &ops);
    }
}
