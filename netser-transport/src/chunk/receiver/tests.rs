//! The chunk receiver's unit tests: reassembly and acks, malformed and forged slices,
//! memory bounds, and ids that go back and forth.

use super::*;

fn config() -> ChunkConfig {
    ChunkConfig {
        slice_size: 4,
        max_slices: 10,
        ..ChunkConfig::default()
    }
}

fn slice(chunk_id: u16, slice_id: u16, slice_count: u16, data: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 64];
    let len = SlicePacket {
        chunk_id,
        slice_id,
        slice_count,
        data,
    }
    .encode(&mut buf)
    .unwrap();
    buf.truncate(len);
    buf
}

#[test]
fn reassembles_out_of_order_with_duplicates() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    let parts: [&[u8]; 3] = [&[1, 2, 3, 4], &[5, 6, 7, 8], &[9]];
    for i in [2u16, 0, 2, 1, 0] {
        r.receive_slice(0.0, &slice(0, i, 3, parts[usize::from(i)]))
            .unwrap();
    }
    assert_eq!(r.stats().slices_received, 3);
    assert_eq!(r.stats().duplicate_slices, 2);
    assert_eq!(r.progress().unwrap().chunk_size, Some(9));
    assert_eq!(r.take_chunk().unwrap().data, (1..=9).collect::<Vec<u8>>());
}

#[test]
fn acks_follow_the_bitfield_and_respect_the_interval() {
    let mut r = ChunkReceiver::new(ChunkConfig {
        ack_interval: 0.05,
        ..config()
    })
    .unwrap();
    r.receive_slice(0.0, &slice(0, 9, 10, &[1])).unwrap();
    assert_eq!(r.poll_ack(0.0), Some(&[0xc2, 0, 0, 10, 0, 0, 0b10][..]));
    r.receive_slice(0.01, &slice(0, 0, 10, &[1; 4])).unwrap();
    assert_eq!(r.poll_ack(0.04), None);
    assert_eq!(r.next_ack_time(), Some(0.05));
    assert_eq!(r.poll_ack(0.05), Some(&[0xc2, 0, 0, 10, 0, 1, 0b10][..]));
    assert_eq!(r.next_ack_time(), None);
    assert_eq!(r.stats().acks_sent, 2);
}

#[test]
fn completed_chunk_waits_and_the_next_is_dropped_until_taken() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 1, &[7])).unwrap();
    assert!(r.is_ready());
    // Chunk 1 arrives early: dropped, not rejected.
    r.receive_slice(0.0, &slice(1, 0, 1, &[8])).unwrap();
    assert_eq!(r.stats().discarded_while_ready, 1);
    // Chunk 0 again: re-acked in full.
    let _ = r.poll_ack(0.0);
    r.receive_slice(0.0, &slice(0, 0, 1, &[7])).unwrap();
    assert_eq!(r.poll_ack(0.0), Some(&[0xc2, 0, 0, 1, 0, 1][..]));
    assert_eq!(r.take_chunk().unwrap().data, [7]);
    // After taking: chunk 0 is the previous one and still gets a full ack.
    r.receive_slice(0.0, &slice(0, 0, 1, &[7])).unwrap();
    assert_eq!(r.stats().stale_slices, 1);
    assert_eq!(r.poll_ack(0.0), Some(&[0xc2, 0, 0, 1, 0, 1][..]));
    r.receive_slice(0.0, &slice(1, 0, 1, &[8])).unwrap();
    assert_eq!(
        r.take_chunk().unwrap(),
        ReceivedChunk {
            id: 1,
            data: vec![8]
        }
    );
    assert_eq!(r.stats().rejected.total(), 0);
}

#[test]
fn full_ack_of_the_previous_chunk_masks_padding() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    for i in 0..10 {
        r.receive_slice(0.0, &slice(0, i, 10, &[i as u8; 4]))
            .unwrap();
    }
    let _ = r.poll_ack(0.0);
    r.take_chunk().unwrap();
    r.receive_slice(0.0, &slice(0, 3, 10, &[3; 4])).unwrap();
    let ack = r.poll_ack(0.0).unwrap().to_vec();
    assert_eq!(ack, [0xc2, 0, 0, 10, 0, 0xff, 0b11]);
    assert!(AckPacket::decode(&ack, &config()).is_ok());
}

#[test]
fn a_newer_chunk_replaces_a_cancelled_one() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 2, &[1; 4])).unwrap();
    r.receive_slice(0.0, &slice(2, 0, 1, &[9, 9])).unwrap();
    assert_eq!(r.stats().abandoned_chunks, 1);
    assert_eq!(
        r.take_chunk().unwrap(),
        ReceivedChunk {
            id: 2,
            data: vec![9, 9]
        }
    );
    // Late slices of the cancelled chunk are older: refused.
    assert_eq!(
        r.receive_slice(0.0, &slice(0, 1, 2, &[1])),
        Err(ChunkPacketError::UnexpectedChunk {
            expected: 3,
            found: 0
        })
    );
}

#[test]
fn malformed_slices_change_nothing() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 3, &[1; 4])).unwrap();
    let before = r.progress();
    let bad: [Vec<u8>; 6] = [
        vec![0xc1, 0, 0, 3, 0, 3, 0, 1, 1, 1, 1], // slice id out of range
        vec![0xc1, 0, 0, 0, 0, 3, 0, 1, 1, 1, 1, 1], // longer than a slice
        vec![0xc1, 0, 0, 2, 0, 3, 0, 5, 0, 1, 1, 1, 1, 1], // last slice too big
        vec![0xc1, 0, 0, 2, 0, 3, 0, 0, 0],       // last slice empty
        slice(0, 1, 4, &[1; 4]),                  // count changed
        vec![0xc1, 0, 0, 0, 0, 11, 0, 1, 1, 1, 1], // count above max
    ];
    for packet in &bad {
        assert!(r.receive_slice(0.0, packet).is_err());
    }
    assert_eq!(r.progress(), before);
    let rejected = &r.stats().rejected;
    assert_eq!(rejected.total(), 6);
    assert_eq!(
        (
            rejected.slice_id_out_of_range,
            rejected.slice_too_long,
            rejected.last_slice_size,
            rejected.slice_count_changed,
            rejected.slice_count_out_of_range
        ),
        (1, 1, 2, 1, 1)
    );
}

/// A defect once: slice 0 of a 255-slice chunk, then slice 0 of a 256-slice chunk
/// (the next id) grew the buffer to 2 x 255 KiB by amortized growth.
#[test]
fn a_bigger_next_chunk_allocates_exactly_its_size() {
    let mut r = ChunkReceiver::new(ChunkConfig::default()).unwrap();
    let mut first = vec![0xc1, 0, 0, 0, 0, 0xff, 0];
    first.extend_from_slice(&[7; 1024]);
    let mut second = vec![0xc1, 1, 0, 0, 0, 0, 1];
    second.extend_from_slice(&[8; 1024]);
    assert_eq!((first.len(), second.len()), (1031, 1031));
    r.receive_slice(0.0, &first).unwrap();
    assert_eq!(r.cur.data.capacity(), 255 * 1024);
    r.receive_slice(0.0, &second).unwrap();
    assert_eq!(r.stats().abandoned_chunks, 1);
    assert_eq!(r.cur.data.capacity(), 256 * 1024);
    // Every size in turn, growing and shrinking: never past the bound.
    let bound = ChunkConfig::default().slice_size * ChunkConfig::default().max_slices;
    for (i, count) in [1u16, 256, 2, 255, 256, 128, 256].into_iter().enumerate() {
        let id = 2 + i as u16;
        let mut packet = vec![
            0xc1,
            id as u8,
            (id >> 8) as u8,
            0,
            0,
            count as u8,
            (count >> 8) as u8,
        ];
        packet.extend_from_slice(&[1; 1024]);
        if count == 1 {
            packet = vec![0xc1, id as u8, 0, 0, 0, 1, 0, 1, 0, 1];
        }
        r.receive_slice(0.0, &packet).unwrap();
        let _ = r.take_chunk();
        assert!(
            r.cur.data.capacity() <= bound,
            "{} > {bound}",
            r.cur.data.capacity()
        );
    }
}

/// Found by the soak harness (seed 16860533148717494462): one slice with a corrupted
/// (or forged) chunk id far ahead moved the receiver to that id, and every genuine
/// slice of the chunk being sent was refused from then on, forever.
#[test]
fn a_forged_newer_chunk_id_does_not_wedge_the_transfer() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 3, &[1; 4])).unwrap();
    // A bit flip: chunk 256 instead of 0.
    r.receive_slice(0.0, &slice(256, 1, 3, &[2; 4])).unwrap();
    assert_eq!(r.progress().unwrap().chunk_id, 256);
    // The sender keeps resending chunk 0: refused at first...
    for _ in 0..RETURN_AFTER_REFUSED_SLICES {
        assert!(r.receive_slice(0.0, &slice(0, 1, 3, &[2; 4])).is_err());
    }
    // ...then the receiver goes back to it and the transfer completes.
    for i in 0..3 {
        let data: &[u8] = if i == 2 { &[3] } else { &[i as u8 + 1; 4] };
        r.receive_slice(0.1, &slice(0, i, 3, data)).unwrap();
    }
    assert_eq!(r.stats().returned_to_older_chunk, 1);
    let chunk = r.take_chunk().unwrap();
    assert_eq!((chunk.id, chunk.data), (0, vec![1, 1, 1, 1, 2, 2, 2, 2, 3]));
    // A genuine cancel still works: late copies of the cancelled chunk stop coming.
    r.receive_slice(0.2, &slice(1, 0, 2, &[5; 4])).unwrap();
    r.receive_slice(0.2, &slice(2, 0, 1, &[6])).unwrap();
    assert!(r.receive_slice(0.2, &slice(1, 1, 2, &[5])).is_err());
    assert_eq!(r.take_chunk().unwrap().id, 2);
}

/// Found by the soak harness (seed 14462984021383109814): a slice whose slice count
/// was corrupted started the chunk, and every genuine slice was refused from then on.
#[test]
fn a_corrupted_slice_count_does_not_wedge_the_transfer() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    // Slice 0 of a 3-slice chunk, its count flipped to 7.
    r.receive_slice(0.0, &slice(0, 0, 7, &[9; 4])).unwrap();
    for _ in 0..RETURN_AFTER_REFUSED_SLICES {
        assert!(r.receive_slice(0.0, &slice(0, 1, 3, &[2; 4])).is_err());
    }
    for i in 0..3 {
        let data: &[u8] = if i == 2 { &[3] } else { &[i as u8 + 1; 4] };
        r.receive_slice(0.1, &slice(0, i, 3, data)).unwrap();
    }
    assert_eq!(r.stats().returned_to_older_chunk, 1);
    assert_eq!(r.take_chunk().unwrap().data, [1, 1, 1, 1, 2, 2, 2, 2, 3]);
}

#[test]
fn memory_is_bounded_by_the_config() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 10, &[1; 4])).unwrap();
    assert!(r.cur.data.capacity() <= 40);
    assert_eq!(r.cur.received.len(), 2);
    assert_eq!(r.packet.len(), ACK_HEADER_BYTES + 2);
}

/// A forged chunk id half the id space ahead made the chunk before the one taken
/// last look newer than the current one: its late slices started it again and it was
/// delivered twice (the soak's seed 12020394332970524897).
#[test]
fn a_forged_far_id_never_brings_back_a_delivered_chunk() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    for id in 0..2u16 {
        r.receive_slice(0.0, &slice(id, 0, 1, &[id as u8])).unwrap();
        assert_eq!(r.take_chunk().unwrap().id, id);
    }
    // Forged: 1 + 32768 is "newer" than chunk 1 (taken last) and than chunk 2
    // (expected), and chunk 0 is "newer" than it.
    r.receive_slice(0.1, &slice(32769, 0, 2, &[9; 4])).unwrap();
    assert!(sequence_greater_than(0, 32769));
    // A late copy of chunk 0, delivered already, must not start it again.
    assert_eq!(
        r.receive_slice(0.2, &slice(0, 0, 1, &[0])),
        Err(ChunkPacketError::UnexpectedChunk {
            expected: 32769,
            found: 0
        })
    );
    assert!(r.take_chunk().is_none());
    // The genuine next chunk still gets through once the forgery is given up.
    for _ in 0..=RETURN_AFTER_REFUSED_SLICES {
        let _ = r.receive_slice(0.3, &slice(2, 0, 1, &[2]));
    }
    assert_eq!(r.take_chunk().map(|c| c.id), Some(2));
}

/// A receiver that delivered chunk 0, then a single-slice chunk `ahead` (a forged or
/// corrupted one) that completed at once and that the user took.
fn taken_ahead(ahead: u16) -> ChunkReceiver {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 1, &[0])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 0);
    r.receive_slice(0.1, &slice(ahead, 0, 1, &[9])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, ahead);
    r
}

/// One forged single-slice chunk ahead, completed and taken, made the genuine chunk
/// it skipped look delivered already: the sender resent it forever and the receiver
/// refused it forever (the soak's seed 9511384658205421211).
#[test]
fn a_forged_chunk_taken_ahead_does_not_wedge_the_genuine_one() {
    let mut r = taken_ahead(40);
    // The genuine chunk 1 keeps coming, resent every 0.1 s: refused for 30 s.
    let mut t = 0.2;
    while t < 0.2 + RETURN_AFTER_SECONDS - 0.05 {
        assert_eq!(
            r.receive_slice(t, &slice(1, 0, 2, &[1; 4])),
            Err(ChunkPacketError::UnexpectedChunk {
                expected: 41,
                found: 1
            })
        );
        t += 0.1;
    }
    // Then the receiver goes back to it, and it completes once.
    t += 0.1;
    r.receive_slice(t, &slice(1, 0, 2, &[1; 4])).unwrap();
    r.receive_slice(t, &slice(1, 1, 2, &[2; 4])).unwrap();
    let chunk = r.take_chunk().unwrap();
    assert_eq!((chunk.id, chunk.data), (1, [[1; 4], [2; 4]].concat()));
    assert_eq!(r.stats().returned_to_older_chunk, 1);
    // Its late copies are answered with a full ack, never delivered again.
    let _ = r.poll_ack(t);
    r.receive_slice(t + 1.0, &slice(1, 0, 2, &[1; 4])).unwrap();
    assert!(r.take_chunk().is_none());
    assert_eq!(r.poll_ack(t + 1.0), Some(&[0xc2, 1, 0, 2, 0, 0b11][..]));
    r.receive_slice(t + 1.0, &slice(2, 0, 1, &[2])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 2);
}

/// The sender counts the slices acked before a forged jump as delivered and resends
/// only the others; going back resumes the chunk with the slices it had (the soak's
/// seed 1889406478765593997: restarted from scratch, the chunk could never complete,
/// while the sender, its last slices acked, moved on).
#[test]
fn going_back_resumes_the_chunk_where_the_jump_left_it() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(0, 0, 3, &[1; 4])).unwrap();
    r.receive_slice(0.0, &slice(0, 1, 3, &[2; 4])).unwrap();
    assert_eq!(r.poll_ack(0.0), Some(&[0xc2, 0, 0, 3, 0, 0b011][..]));
    // A forged single-slice chunk 7 completes at once and is taken.
    r.receive_slice(0.1, &slice(7, 0, 1, &[9])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 7);
    assert_eq!(r.stats().abandoned_chunks, 1);
    // The sender resends slice 2 only: refused for 30 s, then gone back to.
    let mut t = 0.2;
    let chunk = loop {
        let _ = r.receive_slice(t, &slice(0, 2, 3, &[3, 3]));
        if let Some(chunk) = r.take_chunk() {
            break chunk;
        }
        t += 0.5;
        assert!(t < 0.2 + RETURN_AFTER_SECONDS + 1.0, "never went back");
    };
    assert_eq!(chunk.id, 0);
    assert_eq!(chunk.data, [&[1; 4][..], &[2; 4], &[3, 3]].concat());
    assert_eq!(r.stats().returned_to_older_chunk, 1);
    // In order again: the next chunk is 1 (7 was delivered ahead, displaced).
    r.receive_slice(t, &slice(1, 0, 1, &[4])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 1);
}

/// A genuine jump (the sender cancelled chunk 1 for chunk 2): the late copies of
/// chunk 1, however many, arrive within the network's delay and never bring it back.
#[test]
fn late_copies_of_a_cancelled_chunk_do_not_bring_it_back() {
    let mut r = ChunkReceiver::new(config()).unwrap();
    r.receive_slice(0.0, &slice(1, 0, 2, &[1; 4])).unwrap();
    r.receive_slice(0.1, &slice(2, 0, 1, &[2])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 2);
    // 14 s of late copies, 100 of them.
    for k in 0..100 {
        let t = 0.2 + f64::from(k) * 0.14;
        assert!(r.receive_slice(t, &slice(1, 1, 2, &[1; 4])).is_err());
    }
    assert!(r.take_chunk().is_none());
    assert_eq!(r.stats().returned_to_older_chunk, 0);
    // Chunk 3 completes in order: chunk 1 is settled as skipped for good.
    r.receive_slice(20.0, &slice(3, 0, 1, &[3])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 3);
    for k in 0..40 {
        assert!(r
            .receive_slice(20.0 + f64::from(k), &slice(1, 1, 2, &[1; 4]))
            .is_err());
    }
    assert!(r.take_chunk().is_none());
}

/// A corrupted slice completed chunk 2 ahead of the genuine chunk 1 (the soak's seed
/// 14465046122894463137): once the receiver goes back to chunk 1, the genuine chunk
/// 2 gets a full ack instead of completing under id 2 a second time.
#[test]
fn after_going_back_an_id_completed_ahead_is_acked_not_received_again() {
    let mut r = taken_ahead(2);
    let mut t = 0.2;
    while r.take_chunk().is_none() {
        let _ = r.receive_slice(t, &slice(1, 0, 1, &[1]));
        t += 0.5;
        assert!(t < 0.2 + RETURN_AFTER_SECONDS + 1.0, "never went back");
    }
    let _ = r.poll_ack(t);
    // The genuine chunk 2 (two slices): answered with a full ack of its own count.
    r.receive_slice(t + 1.0, &slice(2, 1, 2, &[2; 4])).unwrap();
    assert!(r.take_chunk().is_none());
    assert_eq!(r.poll_ack(t + 1.0), Some(&[0xc2, 2, 0, 2, 0, 0b11][..]));
    assert_eq!(r.stats().displaced_slices, 1);
    // The next chunk is 3.
    r.receive_slice(t + 1.0, &slice(3, 0, 1, &[3])).unwrap();
    assert_eq!(r.take_chunk().unwrap().id, 3);
    // Past the window: chunk 2's late slices are old now, refused.
    assert!(r.receive_slice(t + 2.0, &slice(2, 0, 2, &[2; 4])).is_err());
}

/// The count of acks owed that several chunks in flight keep up to date equals a pass
/// over the window and the chunks taken, through random slices (of chunks in, before
/// and past the window, with changed slice counts), acks polled at random times and
/// chunks taken, with chunk ids that wrap.
#[test]
fn the_window_count_of_acks_owed_equals_a_pass_over_its_chunks() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for in_flight in [2usize, 3, 8] {
        let mut r = ChunkReceiver::new(ChunkConfig {
            first_chunk_id: 65530,
            max_chunks_in_flight: in_flight,
            max_bytes_in_flight: 4 * 40,
            ack_interval: 0.02,
            ..config()
        })
        .unwrap();
        let (mut now, mut polled, mut owed_seen, mut taken) = (0.0, 0, 0, 0);
        for _ in 0..20_000 {
            let roll = next();
            now += (roll % 4) as f64 * 0.01;
            match roll >> 8 & 7 {
                0..=4 => {
                    let window = r.window.as_ref().unwrap();
                    let ahead = (roll >> 16) as u16 % (in_flight as u16 * 2 + 2);
                    let id = window.base().wrapping_add(ahead).wrapping_sub(2);
                    let count = if (roll >> 32) % 50 == 0 { 9 } else { 3 };
                    let slice_id = (roll >> 40) as u16 % count;
                    let len = if slice_id + 1 == count { 2 } else { 4 };
                    let _ = r.receive_slice(now, &slice(id, slice_id, count, &[7; 4][..len]));
                }
                5 | 6 => {
                    while r.poll_ack(now).is_some() {
                        polled += 1;
                    }
                }
                _ => {
                    taken += usize::from(r.take_chunk().is_some());
                }
            }
            let window = r.window.as_ref().unwrap();
            assert_eq!(window.acks_owed(), window.count_acks_owed());
            owed_seen += usize::from(window.acks_owed() > 1);
            assert_eq!(r.next_ack_time().is_some(), window.count_acks_owed() > 0);
        }
        assert!(
            polled > 1000 && taken > 100 && owed_seen > 100,
            "{polled} {taken} {owed_seen}"
        );
    }
}
