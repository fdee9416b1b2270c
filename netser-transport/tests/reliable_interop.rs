//! Interop with the reference `reliable` crate (a faithful port of the C library):
//! a netser endpoint and a `reliable` endpoint talk through the simulator both ways,
//! with fragmented packets and across the sequence wrap, and each side's acks and
//! delivered payloads are checked exactly; and fed the same datagrams, the two write
//! the same bytes.

use std::collections::{BTreeSet, HashMap};

use netser_transport::endpoint::header::{PacketHeader, FRAGMENT_HEADER_BYTES};
use netser_transport::endpoint::{Config, Endpoint};
use netser_transport::simulator::{Simulator, SimulatorConfig};

const NETSER: u32 = 0;
const RELIABLE: u32 = 1;
const MAX_PACKET_SIZE: usize = 16 * 1024;

fn netser_config() -> Config {
    // `reliable`'s defaults: 16 fragments of 1024 bytes, 16 KiB packets.
    Config {
        max_packet_size: MAX_PACKET_SIZE,
        max_fragments: 16,
        ..Config::default()
    }
}

fn reliable_config(name: &str) -> reliable::Config {
    reliable::Config {
        name: name.to_string(),
        ..reliable::Config::default()
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The payload a side sends with `sequence`: its size and bytes follow from the sequence
/// and a per-run `salt`, so the receiver checks it with no side channel.
fn payload(sequence: u16, size: usize, salt: u8) -> Vec<u8> {
    let mut data = vec![0u8; size];
    data[..2].copy_from_slice(&sequence.to_le_bytes());
    for (i, byte) in data.iter_mut().enumerate().skip(2) {
        *byte = (i as u16)
            .wrapping_mul(sequence | 1)
            .wrapping_add(u16::from(salt)) as u8;
    }
    data
}

fn check_payload(sequence: u16, data: &[u8], salt: u8) {
    assert!(data.len() >= 2, "payload of {} bytes", data.len());
    assert_eq!(
        data,
        payload(sequence, data.len(), salt),
        "payload of {sequence}"
    );
}

/// The packet header a datagram carries (fragment 0 carries it after the fragment
/// header); `None` for other fragments.
fn header_of(datagram: &[u8]) -> Option<PacketHeader> {
    if datagram[0] & 1 == 0 {
        PacketHeader::read(datagram).ok().map(|(header, _)| header)
    } else if datagram[3] == 0 {
        PacketHeader::read(&datagram[FRAGMENT_HEADER_BYTES..])
            .ok()
            .map(|(header, _)| header)
    } else {
        None
    }
}

/// An absolute packet number from a 16-bit sequence, taking the one nearest `reference`.
fn unwrap(reference: u64, sequence: u16) -> u64 {
    let difference = netser_transport::sequence::sequence_difference(sequence, reference as u16);
    (reference as i64 + i64::from(difference)).max(0) as u64
}

/// What one side saw, in absolute packet numbers (each side sends packet `n` in frame
/// `n`): the packets it delivered, the acks it reported, and the acks it should have
/// reported, from the headers of the packets it accepted.
#[derive(Default)]
struct Side {
    delivered: BTreeSet<u64>,
    newest_delivered: u64,
    acks: Vec<u64>,
    expected_acks: BTreeSet<u64>,
    /// Headers from fragment 0s, by sequence, for packets that complete later.
    fragment_headers: HashMap<u16, PacketHeader>,
    /// Packets this side has sent.
    sent: u64,
}

impl Side {
    fn on_datagram(&mut self, datagram: &[u8]) {
        if datagram[0] & 1 == 1 && datagram.len() > 3 && datagram[3] == 0 {
            if let Some(header) = header_of(datagram) {
                self.fragment_headers.insert(header.sequence, header);
            }
        }
    }

    fn on_delivered(&mut self, sequence: u16, datagram: &[u8]) {
        let number = unwrap(self.newest_delivered, sequence);
        assert!(self.delivered.insert(number), "{number} delivered twice");
        self.newest_delivered = self.newest_delivered.max(number);
        let header = if datagram[0] & 1 == 0 {
            header_of(datagram).unwrap()
        } else {
            self.fragment_headers[&sequence]
        };
        assert_eq!(header.sequence, sequence);
        // Every ack bit for a packet this side sent and still tracks (the last 256) is
        // an ack it must report, once.
        for back in 0..32u16 {
            if header.ack_bits & (1 << back) != 0 {
                let acked = unwrap(self.sent.saturating_sub(1), header.ack.wrapping_sub(back));
                if acked < self.sent && acked + 256 >= self.sent {
                    self.expected_acks.insert(acked);
                }
            }
        }
    }

    fn on_acks(&mut self, acks: impl Iterator<Item = u16>) {
        let reference = self.sent.saturating_sub(1);
        self.acks.extend(acks.map(|ack| unwrap(reference, ack)));
    }
}

struct Run {
    frames: u32,
    link: SimulatorConfig,
    /// Largest payload; sizes are random in 2..=max_size.
    max_size: usize,
    seed: u64,
}

/// Runs netser against `reliable` through the simulator and checks both sides exactly.
fn run(run: Run) -> (Side, Side) {
    let mut rng = Rng(run.seed | 1);
    let mut sim: Simulator<u32> = Simulator::new(run.link);
    let mut ours = Endpoint::new(0.0, netser_config()).unwrap();
    let mut theirs = reliable::Endpoint::new(reliable_config("reliable"), 0.0);
    let (mut our_side, mut their_side) = (Side::default(), Side::default());
    const OUR_SALT: u8 = 0x5A;
    const THEIR_SALT: u8 = 0xA5;
    let dt = 1.0 / 60.0;
    for frame in 0..run.frames {
        let now = f64::from(frame) * dt;
        theirs.update(now);

        // Send one packet each, of a random size (some fragmented).
        let size = 2 + rng.below(run.max_size as u64 - 1) as usize;
        let sequence = ours.next_sequence();
        assert_eq!(
            ours.send_packet(now, &payload(sequence, size, OUR_SALT)),
            Ok(sequence)
        );
        while let Some(transmit) = ours.poll_transmit() {
            sim.send(now, NETSER, RELIABLE, transmit.data);
        }
        our_side.sent += 1;

        let size = 2 + rng.below(run.max_size as u64 - 1) as usize;
        let sequence = theirs.next_packet_sequence();
        let data = payload(sequence, size, THEIR_SALT);
        theirs.send_packet(&data, |_, datagram| {
            sim.send(now, RELIABLE, NETSER, datagram)
        });
        their_side.sent += 1;

        // Deliver everything due.
        while let Some(delivery) = sim.receive(now) {
            if delivery.to == NETSER {
                our_side.on_datagram(&delivery.data);
                if let Ok(Some(packet)) = ours.handle_datagram(now, &delivery.data) {
                    check_payload(packet.sequence, packet.payload, THEIR_SALT);
                    let sequence = packet.sequence;
                    our_side.on_delivered(sequence, &delivery.data);
                }
                our_side.on_acks(ours.drain_acks());
            } else {
                their_side.on_datagram(&delivery.data);
                let mut delivered = None;
                theirs.receive_packet(&delivery.data, |sequence, data| {
                    check_payload(sequence, data, OUR_SALT);
                    delivered = Some(sequence);
                    true
                });
                if let Some(sequence) = delivered {
                    their_side.on_delivered(sequence, &delivery.data);
                }
                their_side.on_acks(theirs.drain_acks());
            }
        }
        ours.handle_timeout(now);
    }
    for (side, name) in [(&our_side, "netser"), (&their_side, "reliable")] {
        let acked: BTreeSet<u64> = side.acks.iter().copied().collect();
        assert_eq!(acked.len(), side.acks.len(), "{name} reported an ack twice");
        assert_eq!(acked, side.expected_acks, "{name}'s acks");
    }
    // No ack for a packet the other side did not deliver.
    let ours_acked: BTreeSet<u64> = our_side.acks.iter().copied().collect();
    let theirs_acked: BTreeSet<u64> = their_side.acks.iter().copied().collect();
    assert!(ours_acked.is_subset(&their_side.delivered));
    assert!(theirs_acked.is_subset(&our_side.delivered));
    // On a link that does not corrupt bytes, netser drops only what is legitimately
    // redundant: duplicates and packets that arrive too late.
    let drops = ours.counters().drops;
    assert_eq!(
        drops.total(),
        drops.duplicate + drops.duplicate_fragment + drops.stale,
        "{drops:?}"
    );
    (our_side, their_side)
}

#[test]
fn clean_link_every_packet_is_delivered_and_acked_both_ways() {
    let (ours, theirs) = run(Run {
        frames: 600,
        link: SimulatorConfig {
            latency: 0.03,
            ..SimulatorConfig::default()
        },
        max_size: 3000,
        seed: 1,
    });
    assert_eq!(
        ours.delivered.len(),
        600 - 2,
        "all but the packets still in flight"
    );
    assert_eq!(theirs.delivered.len(), 600 - 2);
    // Everything older than the last round trip is acked.
    assert!(ours.acks.len() >= 590 && theirs.acks.len() >= 590);
}

#[test]
fn lossy_link_with_fragments_duplicates_and_reordering() {
    let (ours, theirs) = run(Run {
        frames: 1500,
        link: SimulatorConfig {
            latency: 0.1,
            jitter: 0.05,
            loss: 0.1,
            duplicate: 0.1,
            reorder: 0.1,
            seed: 42,
            ..SimulatorConfig::default()
        },
        max_size: MAX_PACKET_SIZE,
        seed: 2,
    });
    // With up to 16 fragments at 10% loss, many big packets are lost; the small ones and
    // some big ones get through, both ways.
    assert!(ours.delivered.len() > 300 && theirs.delivered.len() > 300);
    assert!(!ours.acks.is_empty() && !theirs.acks.is_empty());
}

#[test]
fn across_the_sequence_wrap() {
    // 66000 packets each way take both sequences past 65535 -> 0, with fragments.
    let (ours, theirs) = run(Run {
        frames: 66_000,
        link: SimulatorConfig {
            loss: 0.02,
            seed: 7,
            ..SimulatorConfig::default()
        },
        max_size: 1500,
        seed: 3,
    });
    for side in [&ours, &theirs] {
        // Packets on both sides of the wrap arrived (numbers are absolute here).
        assert!(side.delivered.range(65_000..65_536).count() > 400);
        assert!(side.delivered.range(65_536..66_000).count() > 400);
        assert!(side.acks.len() > 60_000);
    }
}

/// Fed the same datagrams at the same times, a netser endpoint and a `reliable` endpoint
/// write the same bytes: packet headers (every ack/ack_bits compression case) and
/// fragments, through holes, duplicates, partial fragmented packets and the wrap.
#[test]
fn byte_for_byte_the_same_datagrams() {
    let mut rng = Rng(0xB17E);
    let mut peer = reliable::Endpoint::new(reliable_config("peer"), 0.0);
    let mut ours = Endpoint::new(0.0, netser_config()).unwrap();
    let mut theirs = reliable::Endpoint::new(reliable_config("reference"), 0.0);
    let mut compared = 0usize;
    let mut fragments_compared = 0usize;
    let mut header_lengths = BTreeSet::new();
    let mut held: Vec<Vec<u8>> = Vec::new();
    for frame in 0..67_000u32 {
        let now = f64::from(frame) * 0.01;
        // The peer's packets reach both with the same loss, duplication and partial
        // delivery of fragments; bursts of loss now and then.
        let size = if rng.below(10) == 0 {
            1025 + rng.below(4000) as usize
        } else {
            1 + rng.below(200) as usize
        };
        // The peer sends two packets a frame for a while (then ours does), so the ack
        // runs ahead of the sequence and back: both ack encodings occur.
        let peer_sends = if (30_000..30_500).contains(&frame) {
            2
        } else {
            1
        };
        let mut datagrams = std::mem::take(&mut held);
        for _ in 0..peer_sends {
            peer.send_packet(&vec![9u8; size], |_, datagram| {
                datagrams.push(datagram.to_vec())
            });
        }
        let burst = frame % 1000 < 40;
        for datagram in datagrams {
            // Lossy in the second half of every thousand frames, clean in the first.
            let lossy = frame % 1000 >= 500;
            if burst || (lossy && rng.below(5) == 0) {
                continue;
            }
            if lossy && rng.below(20) == 0 {
                held.push(datagram); // arrives a frame late, after newer packets
                continue;
            }
            let copies = if rng.below(20) == 0 { 2 } else { 1 };
            for _ in 0..copies {
                let _ = ours.handle_datagram(now, &datagram);
                theirs.receive_packet(&datagram, |_, _| true);
            }
        }
        // Both send the same payload.
        let size = if rng.below(8) == 0 {
            1025 + rng.below(MAX_PACKET_SIZE as u64 - 1025) as usize
        } else {
            1 + rng.below(1024) as usize
        };
        let our_sends = if (40_000..40_500).contains(&frame) {
            2
        } else {
            1
        };
        for _ in 0..our_sends {
            let data: Vec<u8> = (0..size).map(|i| (i as u8) ^ (frame as u8)).collect();
            let mut reference = Vec::new();
            theirs.send_packet(&data, |_, datagram| reference.push(datagram.to_vec()));
            ours.send_packet(now, &data).unwrap();
            let mine: Vec<Vec<u8>> =
                std::iter::from_fn(|| ours.poll_transmit().map(|t| t.data.to_vec())).collect();
            assert_eq!(mine, reference, "frame {frame}");
            compared += mine.len();
            if mine.len() > 1 {
                fragments_compared += mine.len();
            } else {
                header_lengths.insert(PacketHeader::read(&mine[0]).unwrap().1);
            }
        }
        theirs.clear_acks();
        ours.clear_acks();
    }
    assert!(compared > 67_000 && fragments_compared > 10_000);
    // Every header length from 4 to 9 bytes occurred.
    assert_eq!(header_lengths, (4..=9).collect());
    assert_eq!(ours.next_sequence(), (67_500 % 65536) as u16);
}
