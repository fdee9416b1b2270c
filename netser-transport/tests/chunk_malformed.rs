//! Every malformed or out-of-place chunk packet is refused with a typed, counted reason and
//! changes nothing; random bytes never panic and never grow memory.

use netser_transport::chunk::{
    AckPacket, ChunkConfig, ChunkPacketError, ChunkReceiver, ChunkSender, SlicePacket,
};
use proptest::prelude::*;

fn config() -> ChunkConfig {
    ChunkConfig {
        slice_size: 8,
        max_slices: 16,
        ..ChunkConfig::default()
    }
}

fn slice(chunk_id: u16, slice_id: u16, slice_count: u16, data: &[u8]) -> Vec<u8> {
    let packet = SlicePacket {
        chunk_id,
        slice_id,
        slice_count,
        data,
    };
    let mut buf = vec![0u8; packet.encoded_len()];
    packet.encode(&mut buf).unwrap();
    buf
}

/// Raw slice header: type, chunk id, slice id, slice count.
fn header(chunk_id: u16, slice_id: u16, slice_count: u16) -> Vec<u8> {
    let mut out = vec![0xc1];
    out.extend(chunk_id.to_le_bytes());
    out.extend(slice_id.to_le_bytes());
    out.extend(slice_count.to_le_bytes());
    out
}

/// A receiver holding slice 0 of a 3-slice chunk 0.
fn receiving() -> ChunkReceiver {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 3, &[1; 8])).unwrap();
    r
}

fn refused(r: &mut ChunkReceiver, packet: &[u8]) -> ChunkPacketError {
    let before = r.progress();
    let error = r.receive_slice(1.0, packet).unwrap_err();
    assert_eq!(
        r.progress(),
        before,
        "a refused packet changed the receiver"
    );
    error
}

#[test]
fn slice_id_out_of_range() {
    let mut r = receiving();
    let mut packet = header(0, 3, 3);
    packet.extend([0; 8]);
    assert_eq!(
        refused(&mut r, &packet),
        ChunkPacketError::SliceIdOutOfRange {
            slice_id: 3,
            slice_count: 3
        }
    );
    assert_eq!(r.stats().rejected.slice_id_out_of_range, 1);
}

#[test]
fn slice_count_that_changes_within_a_chunk() {
    let mut r = receiving();
    assert_eq!(
        refused(&mut r, &slice(0, 1, 4, &[2; 8])),
        ChunkPacketError::SliceCountChanged {
            expected: 3,
            found: 4
        }
    );
    assert_eq!(r.stats().rejected.slice_count_changed, 1);
}

#[test]
fn slice_count_out_of_range() {
    let mut r = receiving();
    let mut packet = header(0, 0, 17);
    packet.extend([0; 8]);
    assert_eq!(
        refused(&mut r, &packet),
        ChunkPacketError::SliceCountOutOfRange {
            slice_count: 17,
            max_slices: 16
        }
    );
    assert_eq!(
        refused(&mut r, &header(0, 0, 0)),
        ChunkPacketError::SliceCountOutOfRange {
            slice_count: 0,
            max_slices: 16
        }
    );
    assert_eq!(r.stats().rejected.slice_count_out_of_range, 2);
}

#[test]
fn slice_data_longer_than_a_slice() {
    let mut r = receiving();
    let mut packet = header(0, 1, 3);
    packet.extend([0; 9]);
    assert_eq!(
        refused(&mut r, &packet),
        ChunkPacketError::SliceTooLong {
            bytes: 9,
            expected: 8
        }
    );
    // The last slice carrying more than its size field says.
    let mut last = header(0, 2, 3);
    last.extend(3u16.to_le_bytes());
    last.extend([0; 4]);
    assert_eq!(
        refused(&mut r, &last),
        ChunkPacketError::SliceTooLong {
            bytes: 4,
            expected: 3
        }
    );
    assert_eq!(r.stats().rejected.slice_too_long, 2);
}

#[test]
fn last_slice_of_impossible_size() {
    let mut r = receiving();
    for size in [0u16, 9, u16::MAX] {
        let mut last = header(0, 2, 3);
        last.extend(size.to_le_bytes());
        last.extend(vec![0; usize::from(size).min(100)]);
        assert_eq!(
            refused(&mut r, &last),
            ChunkPacketError::LastSliceSize {
                bytes: usize::from(size),
                slice_size: 8
            }
        );
    }
    assert_eq!(r.stats().rejected.last_slice_size, 3);
}

#[test]
fn truncated_slices() {
    let mut r = receiving();
    let full = slice(0, 1, 3, &[5; 8]);
    for cut in 0..full.len() {
        assert!(matches!(
            refused(&mut r, &full[..cut]),
            ChunkPacketError::Truncated { .. }
        ));
    }
    assert_eq!(r.stats().rejected.truncated, full.len() as u64);
}

#[test]
fn chunk_id_that_is_not_the_current_one() {
    let mut r = ChunkReceiver::new(ChunkConfig {
        first_chunk_id: 10,
        ..config()
    })
    .unwrap();
    r.receive_slice(0.0, &slice(10, 0, 2, &[1; 8])).unwrap();
    // Older chunks (the sender never goes back) are refused, across the wrap too.
    for old in [9u16, 0, 65535, 10u16.wrapping_sub(32767)] {
        assert_eq!(
            refused(&mut r, &slice(old, 0, 2, &[1; 8])),
            ChunkPacketError::UnexpectedChunk {
                expected: 10,
                found: old
            }
        );
    }
    assert_eq!(r.stats().rejected.unexpected_chunk, 4);
}

#[test]
fn wrong_packet_type() {
    let mut r = receiving();
    let mut ack = vec![0xc2, 0, 0, 3, 0, 1];
    assert_eq!(
        refused(&mut r, &ack),
        ChunkPacketError::WrongPacketType {
            expected: 0xc1,
            found: 0xc2
        }
    );
    let mut sender = ChunkSender::new(config()).unwrap();
    sender.send(vec![0u8; 24]).unwrap();
    ack[0] = 0xc1;
    assert!(matches!(
        sender.receive_ack(0.0, &ack),
        Err(ChunkPacketError::WrongPacketType { .. })
    ));
    assert_eq!(sender.stats().rejected.wrong_packet_type, 1);
}

#[test]
fn ack_for_a_different_chunk() {
    let mut sender = ChunkSender::new(config()).unwrap();
    let id = sender.send(vec![0u8; 24]).unwrap();
    for other in [id + 1, id.wrapping_sub(1), 40_000] {
        assert_eq!(
            sender.receive_ack(0.0, &[0xc2, other as u8, (other >> 8) as u8, 3, 0, 0b111]),
            Err(ChunkPacketError::AckChunkMismatch {
                expected: Some(id),
                found: other
            })
        );
    }
    assert_eq!(sender.stats().rejected.ack_chunk_mismatch, 3);
    assert_eq!(sender.progress().unwrap().slices_acked, 0);
}

#[test]
fn malformed_acks() {
    let mut sender = ChunkSender::new(config()).unwrap();
    sender.send(vec![0u8; 24]).unwrap();
    let cases: [(&[u8], ChunkPacketError); 5] = [
        (
            &[0xc2, 0, 0, 3],
            ChunkPacketError::Truncated {
                needed: 5,
                found: 4,
            },
        ),
        (
            &[0xc2, 0, 0, 3, 0],
            ChunkPacketError::AckLength {
                expected: 6,
                found: 5,
            },
        ),
        (
            &[0xc2, 0, 0, 3, 0, 0b111, 0],
            ChunkPacketError::AckLength {
                expected: 6,
                found: 7,
            },
        ),
        (
            &[0xc2, 0, 0, 3, 0, 0b1111],
            ChunkPacketError::AckPaddingBits,
        ),
        (
            &[0xc2, 0, 0, 4, 0, 0b1111],
            ChunkPacketError::SliceCountChanged {
                expected: 3,
                found: 4,
            },
        ),
    ];
    for (packet, error) in cases {
        assert_eq!(sender.receive_ack(0.0, packet), Err(error));
    }
    let r = &sender.stats().rejected;
    assert_eq!(
        (
            r.truncated,
            r.ack_length,
            r.ack_padding_bits,
            r.slice_count_changed
        ),
        (1, 2, 1, 1)
    );
    assert_eq!(sender.progress().unwrap().slices_acked, 0);
    // And the real ack still works afterwards.
    sender.receive_ack(0.0, &[0xc2, 0, 0, 3, 0, 0b111]).unwrap();
    assert!(sender.is_idle());
}

#[test]
fn decoders_agree_with_the_packet_layout() {
    let config = config();
    let bytes = slice(0xbeef, 2, 3, &[9, 8, 7]);
    assert_eq!(bytes, [0xc1, 0xef, 0xbe, 2, 0, 3, 0, 3, 0, 9, 8, 7]);
    let ack = AckPacket::decode(&[0xc2, 0xef, 0xbe, 3, 0, 0b101], &config).unwrap();
    assert_eq!((ack.chunk_id, ack.slice_count), (0xbeef, 3));
    assert!(ack.is_received(0) && !ack.is_received(1) && ack.is_received(2));
}

proptest! {
    #[test]
    fn random_slices_never_panic_or_grow(
        packets in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..64),
        typed in any::<bool>(),
    ) {
        let mut r = ChunkReceiver::new(config()).unwrap();
        let mut accepted = 0u64;
        for mut p in packets {
            if typed && !p.is_empty() {
                p[0] = 0xc1; // get past the type byte more often
                if p.len() > 6 { p[5] = (p[5] % 17).max(1); p[6] = 0; p[4] = 0; }
            }
            if r.receive_slice(0.0, &p).is_ok() { accepted += 1; }
            while r.poll_ack(0.0).is_some() {}
            if let Some(chunk) = r.take_chunk() {
                prop_assert!(chunk.data.len() <= 8 * 16);
            }
            if let Some(progress) = r.progress() {
                prop_assert!(progress.bytes_received <= 8 * 16);
            }
        }
        let s = r.stats();
        prop_assert_eq!(
            accepted,
            s.slices_received + s.duplicate_slices + s.stale_slices + s.discarded_while_ready
        );
    }

    #[test]
    fn random_acks_never_panic(
        packets in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..12), 0..64),
    ) {
        let mut sender = ChunkSender::new(config()).unwrap();
        sender.send(vec![1u8; 100]).unwrap();
        let mut refused = 0u64;
        for mut p in packets {
            if !p.is_empty() { p[0] = 0xc2; }
            if sender.receive_ack(0.0, &p).is_err() { refused += 1; }
            while sender.poll_packet(0.0).is_some() {}
        }
        prop_assert_eq!(refused, sender.stats().rejected.total());
    }
}
