//! The connection's running counts against what they sum up, and the paths that skip
//! work when there is none, over a bad network: every answer equals what the full
//! walk gives.

mod support;

use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::simulator::{Simulator, SimulatorConfig};
use support::{bytes, Msg};

const FRAME: f64 = 1.0 / 60.0;

/// Every kind of channel, the unreliable ones with short receive queues so that a
/// receiver that skips frames drops messages.
fn config() -> ConnectionConfig {
    let mut config = ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::reliable_unordered(),
        ChannelConfig {
            receive_queue_size: 4,
            ..ChannelConfig::new(ChannelKind::UnreliableSequenced)
        },
        ChannelConfig {
            receive_queue_size: 2,
            ..ChannelConfig::new(ChannelKind::Unreliable)
        },
    ]);
    // One block waits for the user at a time: the others wait in the block receiver.
    config.max_received_blocks = 1;
    config
}

/// The sum the server charged before the connection kept the count.
fn walked(connection: &Connection<Msg>) -> u64 {
    (0..4u8)
        .map(|channel| {
            let c = connection.channel_counters(channel).unwrap();
            c.messages_received
                + c.duplicates_dropped
                + c.stale_dropped
                + c.receive_queue_full_dropped
        })
        .sum()
}

/// Runs `a` sending to `b` for `frames`, `b` polling its channels on some frames only;
/// checks after each datagram that `b`'s count equals the walk. Returns what `b` took
/// from each channel.
fn run(net: SimulatorConfig, frames: u32) -> (Connection<Msg>, [Vec<Msg>; 4]) {
    let config = config();
    let mut a: Connection<Msg> = Connection::new(0.0, config.clone()).unwrap();
    let mut b: Connection<Msg> = Connection::new(0.0, config).unwrap();
    let mut sim: Simulator = Simulator::new(net);
    let mut received: [Vec<Msg>; 4] = Default::default();
    for frame in 0..frames {
        let now = f64::from(frame) * FRAME;
        if frame < frames - 600 {
            let value = frame;
            a.send_message(0, &Msg::Small(value)).unwrap();
            if frame % 7 == 0 {
                a.send_message(1, &Msg::Small(value)).unwrap();
            }
            if frame % 50 == 3 {
                // Blocks on each reliable channel, three in a row on the ordered one.
                for k in 0..3 {
                    a.send_message(0, &Msg::Bytes(bytes(frame + k, 3000)))
                        .unwrap();
                }
                a.send_message(1, &Msg::Bytes(bytes(frame, 2000))).unwrap();
            }
            a.send_message(2, &Msg::Small(value)).unwrap();
            a.send_message(3, &Msg::Small(value)).unwrap();
            a.send_message(3, &Msg::Small(value)).unwrap();
        }
        for (side, from, to) in [(&mut a, 1, 2), (&mut b, 2, 1)] {
            side.handle_timeout(now);
            while let Some(datagram) = side.poll_transmit(now) {
                sim.send(now, from, to, datagram);
            }
        }
        while let Some(delivery) = sim.receive(now) {
            let side = if delivery.to == 1 { &mut a } else { &mut b };
            let _ = side.handle_datagram(now, &delivery.data);
            assert_eq!(b.counters().messages_decoded, walked(&b), "frame {frame}");
        }
        // The game skips a frame now and then, and a stretch after each burst of
        // blocks: queues fill, the blocks complete while one waits for the game.
        if frame % 5 != 2 && !(3..40).contains(&(frame % 50)) {
            for (channel, out) in received.iter_mut().enumerate() {
                out.extend(std::iter::from_fn(|| b.receive_message(channel as u8)));
            }
        }
    }
    (b, received)
}

#[test]
fn the_count_of_messages_decoded_is_the_walk_of_every_channels_counters() {
    let net = SimulatorConfig {
        latency: 0.05,
        jitter: 0.03,
        loss: 0.2,
        duplicate: 0.2,
        reorder: 0.2,
        seed: 31,
        ..Default::default()
    };
    let (b, received) = run(net, 1800);
    let counter = |channel: u8| *b.channel_counters(channel).unwrap();
    // Each kind of decode the count sums up happened.
    assert!(counter(0).duplicates_dropped > 0);
    assert!(counter(2).stale_dropped > 0);
    assert!(counter(3).receive_queue_full_dropped > 0);
    assert!(b.counters().messages_decoded > 2000);
    // Every reliable message arrived, blocks in order with the rest, though only one
    // completed block waits for the game at a time.
    let expected: Vec<Msg> = (0..1200u32)
        .flat_map(|frame| {
            let blocks = if frame % 50 == 3 { 0..3 } else { 0..0 };
            std::iter::once(Msg::Small(frame))
                .chain(blocks.map(move |k| Msg::Bytes(bytes(frame + k, 3000))))
        })
        .collect();
    let first_difference = received[0].iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(
        (received[0].len(), first_difference),
        (expected.len(), None),
        "the ordered channel's deliveries"
    );
    assert_eq!(counter(0).blocks_delivered, 72);
    assert_eq!(counter(1).blocks_delivered, 24);
    assert_eq!(received[1].len(), 1200usize.div_ceil(7) + 24);
}

/// A lossless run: the game takes every message it is counted as delivered, and the
/// count is the walk.
#[test]
fn without_loss_the_count_is_the_walk_too() {
    let (b, received) = run(SimulatorConfig::default(), 900);
    let counter = |channel: u8| *b.channel_counters(channel).unwrap();
    for channel in 0..4u8 {
        assert_eq!(
            counter(channel).messages_delivered,
            received[usize::from(channel)].len() as u64
        );
    }
    // Channel 3 gets two messages a frame and holds two: a skipped frame overflows it.
    assert!(counter(3).receive_queue_full_dropped > 0);
    assert_eq!(b.counters().messages_decoded, walked(&b));
}
