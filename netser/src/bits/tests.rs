//! The bit layer's unit tests: fixed examples, then every buffer length, bit offset and
//! width against a bit-by-bit model.

use super::*;

/// `e` is a full buffer: `wanted` bits asked for, `remaining` left.
#[track_caller]
fn assert_full(e: &Error, wanted: u64, remaining: u64, place: &str) {
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull { wanted, remaining },
        "{place}"
    );
}

#[test]
fn article_example_bytes() {
    let mut buf = [0u8; 5];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(5, 3).unwrap();
    w.write_bits(1000, 10).unwrap();
    w.write_bits(0xABCDEF, 24).unwrap();
    assert_eq!(w.bits_written(), 37);
    assert_eq!(w.finish(), 5);
    assert_eq!(buf, [0x45, 0xff, 0xbd, 0x79, 0x15]);
}

#[test]
fn writer_refuses_past_end_and_keeps_state() {
    let mut buf = [0u8; 1];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(0x7f, 7).unwrap();
    let e = w.write_bits(3, 2).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull {
            wanted: 2,
            remaining: 1
        }
    );
    assert_eq!(e.bit(), 7);
    w.write_bits(1, 1).unwrap();
    assert_eq!(w.finish(), 1);
    assert_eq!(buf, [0xff]);
}

#[test]
fn writer_refuses_too_wide_values() {
    let mut buf = [0u8; 8];
    let mut w = BitWriter::new(&mut buf);
    assert_eq!(
        w.write_bits(8, 3).unwrap_err().kind(),
        &ErrorKind::ValueTooWide { value: 8, bits: 3 }
    );
    assert_eq!(
        w.write_bits(1, 0).unwrap_err().kind(),
        &ErrorKind::ValueTooWide { value: 1, bits: 0 }
    );
    assert_eq!(
        w.write_bits(0, 65).unwrap_err().kind(),
        &ErrorKind::InvalidBitCount {
            bits: 65,
            min: 0,
            max: 64
        }
    );
    w.write_bits(u64::MAX, 64).unwrap();
    assert_eq!(w.finish(), 8);
    assert_eq!(buf, [0xff; 8]);
}

#[test]
fn masks_table_is_the_low_bits() {
    for n in 0..=64u32 {
        assert_eq!(MASKS[n as usize], low_mask(n), "{n}");
    }
}

#[test]
fn writer_refuses_widths_whose_low_byte_is_a_valid_width() {
    // The common write indexes `MASKS` by the width's low byte: a width above 64 must
    // still be refused, at every offset in the word and with room to spare.
    for lead in 0..64u32 {
        for bits in [65, 255, 256, 256 + 5, 256 + 63, 256 + 64, 512 + 1, u32::MAX] {
            let mut buf = [0xAAu8; 64];
            let mut w = BitWriter::new(&mut buf);
            w.write_bits(0, lead).unwrap();
            let e = w.write_bits(1, bits).unwrap_err();
            assert_eq!(
                e.kind(),
                &ErrorKind::InvalidBitCount {
                    bits,
                    min: 0,
                    max: 64
                },
                "{lead} {bits}"
            );
            assert_eq!((e.bit(), w.bits_written()), (lead as u64, lead as u64));
            // Nothing written: the next write lands where it would have.
            w.write_bits(0b101, 3).unwrap();
            let len = w.finish();
            assert_eq!(len, (lead as usize + 3).div_ceil(8));
            assert_eq!(model_read(&buf, lead as usize, 3), 0b101, "{lead} {bits}");
            assert!(buf[len..].iter().all(|&b| b == 0xAA), "{lead} {bits}");
        }
    }
}

#[test]
fn reader_refuses_past_end_never_zeros() {
    let mut r = BitReader::new(&[]);
    assert_eq!(r.read_bits(0).unwrap(), 0);
    assert_eq!(
        r.read_bits(1).unwrap_err().kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 1,
            remaining: 0
        }
    );
    let mut r = BitReader::new(&[0xff, 0x01]);
    assert_eq!(r.read_bits(9).unwrap(), 0x1ff);
    let e = r.read_bits(8).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 8,
            remaining: 7
        }
    );
    assert_eq!(e.bit(), 9);
    assert_eq!(r.read_bits(7).unwrap(), 0);
}

#[test]
fn odd_lengths_round_trip_every_width() {
    // Buffers of every length around word boundaries, every width 1..=64.
    for len in 0..=27usize {
        let mut buf = alloc::vec![0u8; len];
        let cap = len as u64 * 8;
        let mut w = BitWriter::new(&mut buf);
        let mut written = alloc::vec::Vec::new();
        let mut width = 1u32;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        loop {
            if w.bits_written() + width as u64 > cap {
                break;
            }
            x = x.rotate_left(13).wrapping_mul(0x2545_F491_4F6C_DD1D);
            let v = x & low_mask(width);
            w.write_bits(v, width).unwrap();
            written.push((v, width));
            width = width % 64 + 1;
        }
        let n = w.finish();
        let mut r = BitReader::new(&buf[..n]);
        for &(v, bits) in &written {
            assert_eq!(r.read_bits(bits).unwrap(), v, "len {len} width {bits}");
        }
    }
}

#[test]
fn bytes_round_trip_at_every_offset() {
    for lead in 0..70u32 {
        for count in [0usize, 1, 7, 15, 16, 17, 40] {
            let data: alloc::vec::Vec<u8> = (0..count as u8)
                .map(|i| i.wrapping_mul(37) ^ 0xA5)
                .collect();
            let mut buf = [0u8; 128];
            let mut w = BitWriter::new(&mut buf);
            w.write_bits((1u64 << lead.min(63)) - 1, lead.min(63))
                .unwrap();
            w.write_bytes(&data).unwrap();
            w.write_bits(0b101, 3).unwrap();
            let n = w.finish();
            let mut r = BitReader::new(&buf[..n]);
            assert_eq!(
                r.read_bits(lead.min(63)).unwrap(),
                (1u64 << lead.min(63)) - 1
            );
            let mut out = alloc::vec![0u8; count];
            r.read_bytes(&mut out).unwrap();
            assert_eq!(out, data, "lead {lead} count {count}");
            assert_eq!(r.read_bits(3).unwrap(), 0b101);
        }
    }
}

#[test]
fn reader_refuses_non_zero_padding() {
    let mut r = BitReader::new(&[0b0000_0101]);
    assert_eq!(r.read_bits(1).unwrap(), 1);
    let e = r.align().unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NonZeroPadding { found: 0b10 });
    assert_eq!(e.bit(), 1);
}

#[test]
fn read_bytes_refuses_count_beyond_remaining() {
    let mut r = BitReader::new(&[1, 2, 3]);
    let mut out = [0u8; 4];
    assert_eq!(
        r.read_bytes(&mut out).unwrap_err().kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 32,
            remaining: 24
        }
    );
}

#[test]
fn words_are_checked_once_and_all_or_nothing() {
    let mut buf = [0u8; 16];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(0b101, 3).unwrap();
    // 64 + 62 bits do not fit in the 125 left: nothing is written.
    let e = w.write_words(&[u64::MAX], 1, 62).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull {
            wanted: 126,
            remaining: 125
        }
    );
    assert_eq!((e.bit(), w.bits_written()), (3, 3));
    w.write_words(&[0x0123_4567_89AB_CDEF], 0x2A, 61).unwrap();
    assert_eq!(w.bits_available(), 0);
    let n = w.finish();
    let mut r = BitReader::new(&buf[..n]);
    assert_eq!(r.read_bits(3).unwrap(), 0b101);
    let mut words = [0u64; 1];
    assert_eq!(r.read_words(&mut words, 61).unwrap(), 0x2A);
    assert_eq!(words, [0x0123_4567_89AB_CDEF]);
    // Past the end: refused, nothing consumed.
    let mut r = BitReader::new(&buf[..n]);
    r.read_bits(3).unwrap();
    let e = r.read_words(&mut words, 62).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 126,
            remaining: 125
        }
    );
    assert_eq!(r.bits_read(), 3);
}

#[test]
fn bits_required_edges() {
    assert_eq!(bits_required(0, 0), 0);
    assert_eq!(bits_required(0, 1), 1);
    assert_eq!(bits_required(0, 255), 8);
    assert_eq!(bits_required(0, 256), 9);
    assert_eq!(bits_required_i64(-100, 100), 8);
    assert_eq!(bits_required_u128(0, 1 << 64), 65);
}

// ------------------------------------------------- every length, offset and width

use alloc::vec::Vec;

/// The stream a list of `(value, bits)` writes, one bit at a time, LSB-first.
fn model_bytes(ops: &[(u64, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0usize;
    for &(value, bits) in ops {
        for i in 0..bits {
            if at.is_multiple_of(8) {
                out.push(0);
            }
            if value >> i & 1 == 1 {
                out[at / 8] |= 1 << (at % 8);
            }
            at += 1;
        }
    }
    out
}

/// Bits `start..start + bits` of `data`, one bit at a time.
fn model_read(data: &[u8], start: usize, bits: u32) -> u64 {
    (0..bits as usize).fold(0, |acc, i| {
        let at = start + i;
        acc | ((data[at / 8] >> (at % 8)) as u64 & 1) << i
    })
}

/// A value of exactly `bits` bits (its top bit set) with mixed lower bits.
fn value_of(bits: u32, salt: u64) -> u64 {
    if bits == 0 {
        return 0;
    }
    let mixed = (salt ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (mixed & low_mask(bits)) | 1 << (bits - 1)
}

/// Writes `lead` bits in chunks whose widths cycle, so the word fills at every offset.
fn write_lead(w: &mut BitWriter<'_>, lead: u32, ops: &mut Vec<(u64, u32)>) {
    let mut left = lead;
    for (i, chunk) in [7u32, 64, 1, 13, 33, 5].iter().cycle().enumerate() {
        if left == 0 {
            break;
        }
        let bits = (*chunk).min(left);
        let v = value_of(bits, i as u64);
        w.write_bits(v, bits).unwrap();
        ops.push((v, bits));
        left -= bits;
    }
}

/// Buffer lengths around one, two and three words, and the bits that go first.
fn lengths_and_leads() -> impl Iterator<Item = (usize, u32)> {
    (0..=25usize).flat_map(|len| (0..=(len as u32 * 8).min(100)).map(move |lead| (len, lead)))
}

#[test]
fn writer_every_length_offset_and_width() {
    for (len, lead) in lengths_and_leads() {
        let cap = len as u64 * 8;
        for bits in 0..=64u32 {
            // A dirty buffer: the packet overwrites it and nothing after it is touched.
            let mut buf = alloc::vec![0xA5u8; len];
            let mut w = BitWriter::new(&mut buf);
            let mut ops = Vec::new();
            write_lead(&mut w, lead, &mut ops);
            assert_eq!(w.bits_available(), cap - lead as u64);
            let v = value_of(bits, lead as u64);
            let at = format!("len {len} lead {lead} bits {bits}");
            // Too wide, or more than 64 bits: refused whatever the room, nothing written.
            if bits < 64 {
                let e = w.write_bits(v | 1 << bits, bits).unwrap_err();
                let value = (v | 1 << bits) as u128;
                assert_eq!(e.kind(), &ErrorKind::ValueTooWide { value, bits }, "{at}");
                assert_eq!((e.bit(), w.bits_written()), (lead as u64, lead as u64));
            }
            let e = w.write_bits(0, bits + 65).unwrap_err();
            assert_eq!(
                e.kind(),
                &ErrorKind::InvalidBitCount {
                    bits: bits + 65,
                    min: 0,
                    max: 64
                }
            );
            assert_eq!(w.bits_written(), lead as u64, "{at}");
            if lead as u64 + bits as u64 <= cap {
                w.write_bits(v, bits).unwrap();
                ops.push((v, bits));
            } else {
                let e = w.write_bits(v, bits).unwrap_err();
                assert_full(&e, bits as u64, cap - lead as u64, &at);
                assert_eq!((e.bit(), w.bits_written()), (lead as u64, lead as u64));
            }
            let n = w.finish();
            let expected = model_bytes(&ops);
            assert_eq!(&buf[..n], &expected[..], "{at}");
            assert!(
                buf[n..].iter().all(|&b| b == 0xA5),
                "{at}: bytes after the packet"
            );
            let mut r = BitReader::new(&buf[..n]);
            for &(v, bits) in &ops {
                assert_eq!(r.read_bits(bits).unwrap(), v, "{at}");
            }
        }
    }
}

#[test]
fn bounded_writes_and_align_every_length_and_offset() {
    for (len, lead) in lengths_and_leads() {
        let cap = len as u64 * 8;
        for bits in [0u32, 1, 8, 31, 57, 63, 64] {
            let mut buf = alloc::vec![0xA5u8; len];
            let mut w = BitWriter::new(&mut buf);
            let mut ops = Vec::new();
            write_lead(&mut w, lead, &mut ops);
            let v = value_of(bits, 7);
            match w.write_bits_bounded(v, bits) {
                Ok(()) => ops.push((v, bits)),
                Err(e) => {
                    assert!(lead as u64 + bits as u64 > cap);
                    assert_full(&e, bits as u64, cap - lead as u64, "");
                    assert_eq!(w.bits_written(), lead as u64);
                }
            }
            // Padding always fits: the capacity is whole bytes.
            let pad = w.align_bits();
            w.align().unwrap();
            ops.push((0, pad));
            assert_eq!(w.bits_written() % 8, 0);
            let n = w.finish();
            assert_eq!(
                &buf[..n],
                &model_bytes(&ops)[..],
                "len {len} lead {lead} bits {bits}"
            );
            assert!(buf[n..].iter().all(|&b| b == 0xA5));
        }
    }
}

#[test]
fn reader_every_length_offset_and_width() {
    let data: Vec<u8> = (0..25u32).map(|i| (i * 0x9D + 0x3B) as u8).collect();
    for len in 0..=data.len() {
        let packet = &data[..len];
        let cap = len as u64 * 8;
        for start in 0..=cap as u32 {
            for bits in 0..=64u32 {
                let mut r = BitReader::new(packet);
                // Reach `start` in chunks, so reads begin at every bit of a window.
                let mut at = 0u32;
                for chunk in [7u32, 64, 1, 13, 33, 5].iter().cycle() {
                    let step = (*chunk).min(start - at);
                    if step == 0 {
                        break;
                    }
                    let want = model_read(packet, at as usize, step);
                    assert_eq!(r.read_bits(step).unwrap(), want);
                    at += step;
                }
                let place = format!("len {len} start {start} bits {bits}");
                let e = r.read_bits(bits + 65).unwrap_err();
                assert_eq!(
                    e.kind(),
                    &ErrorKind::InvalidBitCount {
                        bits: bits + 65,
                        min: 0,
                        max: 64
                    }
                );
                if start as u64 + bits as u64 <= cap {
                    let want = model_read(packet, start as usize, bits);
                    assert_eq!(r.read_bits(bits).unwrap(), want, "{place}");
                    assert_eq!(r.bits_read(), start as u64 + bits as u64);
                } else {
                    let e = r.read_bits(bits).unwrap_err();
                    let (wanted, remaining) = (bits as u64, cap - start as u64);
                    assert_eq!(
                        e.kind(),
                        &ErrorKind::EndOfBuffer { wanted, remaining },
                        "{place}"
                    );
                    assert_eq!((e.bit(), r.bits_read()), (start as u64, start as u64));
                }
            }
        }
    }
}

#[test]
fn bytes_every_length_offset_and_count() {
    for (len, lead) in lengths_and_leads() {
        let cap = len as u64 * 8;
        for count in 0..=len {
            let data: Vec<u8> = (0..count as u8)
                .map(|i| i.wrapping_mul(37) ^ 0x5A)
                .collect();
            let mut buf = alloc::vec![0xA5u8; len];
            let mut w = BitWriter::new(&mut buf);
            let mut ops = Vec::new();
            write_lead(&mut w, lead, &mut ops);
            let pad = w.align_bits();
            let need = pad as u64 + count as u64 * 8;
            let place = format!("len {len} lead {lead} count {count}");
            match w.write_bytes(&data) {
                Ok(()) => {
                    assert!(lead as u64 + need <= cap, "{place}");
                    ops.push((0, pad));
                    ops.extend(data.iter().map(|&b| (b as u64, 8)));
                }
                Err(e) => {
                    assert!(lead as u64 + need > cap, "{place}");
                    assert_full(&e, need, cap - lead as u64, &place);
                    assert_eq!(w.bits_written(), lead as u64, "{place}");
                }
            }
            // The writer goes on after the run (the partial word it keeps is right).
            if w.bits_available() >= 3 {
                w.write_bits(0b101, 3).unwrap();
                ops.push((0b101, 3));
            }
            let n = w.finish();
            assert_eq!(&buf[..n], &model_bytes(&ops)[..], "{place}");
            assert!(
                buf[n..].iter().all(|&b| b == 0xA5),
                "{place}: bytes after the packet"
            );
            if len <= 16 && lead as u64 + need <= cap {
                let mut r = BitReader::new(&buf[..n]);
                for &(v, bits) in &ops[..ops.len() - count - 1] {
                    assert_eq!(r.read_bits(bits).unwrap(), v);
                }
                let mut out = alloc::vec![0u8; count];
                r.read_bytes(&mut out).unwrap();
                assert_eq!(out, data, "{place}");
            }
        }
    }
}

#[test]
fn words_every_length_and_offset() {
    for (len, lead) in lengths_and_leads() {
        let cap = len as u64 * 8;
        for (words, last_bits) in [(0usize, 0u32), (0, 1), (1, 0), (1, 17), (2, 63), (3, 5)] {
            let word_values: Vec<u64> = (0..words as u64).map(|i| value_of(64, i)).collect();
            let last = value_of(last_bits, 9);
            let mut buf = alloc::vec![0xA5u8; len];
            let mut w = BitWriter::new(&mut buf);
            let mut ops = Vec::new();
            write_lead(&mut w, lead, &mut ops);
            let need = words as u64 * 64 + last_bits as u64;
            let place = format!("len {len} lead {lead} words {words} last {last_bits}");
            let fits = lead as u64 + need <= cap;
            match w.write_words(&word_values, last, last_bits) {
                Ok(()) => {
                    assert!(fits, "{place}");
                    ops.extend(word_values.iter().map(|&v| (v, 64)));
                    ops.push((last, last_bits));
                }
                Err(e) => {
                    assert!(!fits, "{place}");
                    assert_full(&e, need, cap - lead as u64, &place);
                    assert_eq!(w.bits_written(), lead as u64);
                }
            }
            // Single writes after the run still find the limit right.
            while w.bits_available() > 0 {
                let bits = w.bits_available().min(11) as u32;
                w.write_bits(value_of(bits, 3), bits).unwrap();
                ops.push((value_of(bits, 3), bits));
            }
            assert!(w.write_bits(1, 1).is_err());
            let n = w.finish();
            assert_eq!(n, len);
            assert_eq!(&buf[..n], &model_bytes(&ops)[..], "{place}");
            // Read back as a run after the lead.
            let mut r = BitReader::new(&buf[..n]);
            let mut skipped = 0;
            for &(v, bits) in &ops {
                if skipped == lead {
                    break;
                }
                assert_eq!(r.read_bits(bits).unwrap(), v);
                skipped += bits;
            }
            let mut got = alloc::vec![0u64; words];
            match r.read_words(&mut got, last_bits) {
                Ok(l) => {
                    assert!(fits, "{place}");
                    assert_eq!((got, l), (word_values, last), "{place}");
                }
                Err(e) => {
                    assert!(!fits, "{place}");
                    let remaining = cap - lead as u64;
                    assert_eq!(
                        e.kind(),
                        &ErrorKind::EndOfBuffer {
                            wanted: need,
                            remaining
                        }
                    );
                    assert_eq!(r.bits_read(), lead as u64);
                }
            }
        }
    }
}

// ------------------------------------------------- any sequence of every kind of write

/// One write of any kind; the widths are taken modulo what each kind accepts.
#[derive(Debug, Clone)]
enum Op {
    Bits(u64, u32),
    Bounded(u64, u32),
    Words(Vec<u64>, u64, u32),
    Bytes(Vec<u8>),
    Align,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        // Most values fit their width (the fast and the word-filling paths); the rest
        // are any value, mostly too wide.
        3 => (any::<u64>(), 0..=64u32).prop_map(|(v, b)| Op::Bits(v & low_mask(b), b)),
        1 => (any::<u64>(), 0..=70u32).prop_map(|(v, b)| Op::Bits(v, b)),
        2 => (any::<u64>(), 0..=64u32).prop_map(|(v, b)| Op::Bounded(v & low_mask(b), b)),
        1 => (proptest::collection::vec(any::<u64>(), 0..3), any::<u64>(), 0..64u32)
            .prop_map(|(w, l, b)| Op::Words(w, l & low_mask(b), b)),
        1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(Op::Bytes),
        1 => Just(Op::Align),
    ]
}

proptest::proptest! {
    /// Whatever mix of writes, the writer's fast path (which trusts a limit the other
    /// writes leave behind) and every other path give the model's bytes; a refused
    /// write changes nothing; nothing after the packet is touched.
    #[test]
    fn any_sequence_of_writes_matches_the_model(
        len in 0..48usize,
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let mut buf = alloc::vec![0xA5u8; len];
        let cap = len as u64 * 8;
        let mut w = BitWriter::new(&mut buf);
        let mut model: Vec<(u64, u32)> = Vec::new();
        let mut at = 0u64;
        for op in &ops {
            let (result, wrote): (Result<()>, Vec<(u64, u32)>) = match op {
                Op::Bits(v, b) => (w.write_bits(*v, *b), alloc::vec![(*v, *b)]),
                Op::Bounded(v, b) => (w.write_bits_bounded(*v, *b), alloc::vec![(*v, *b)]),
                Op::Words(words, last, b) => {
                    let mut all: Vec<(u64, u32)> = words.iter().map(|&x| (x, 64)).collect();
                    all.push((*last, *b));
                    (w.write_words(words, *last, *b), all)
                }
                Op::Bytes(data) => {
                    let pad = ((8 - at % 8) % 8) as u32;
                    let mut all = alloc::vec![(0, pad)];
                    all.extend(data.iter().map(|&x| (x as u64, 8)));
                    (w.write_bytes(data), all)
                }
                Op::Align => (w.align(), alloc::vec![(0, ((8 - at % 8) % 8) as u32)]),
            };
            let need: u64 = wrote.iter().map(|&(_, b)| b as u64).sum();
            let valid = wrote.iter().all(|&(v, b)| b <= 64 && v.checked_shr(b).unwrap_or(0) == 0);
            match result {
                Ok(()) => {
                    proptest::prop_assert!(valid && at + need <= cap);
                    model.extend(wrote);
                    at += need;
                }
                Err(e) => {
                    proptest::prop_assert!(!valid || at + need > cap);
                    proptest::prop_assert_eq!(e.bit(), at);
                }
            }
            proptest::prop_assert_eq!(w.bits_written(), at);
        }
        let n = w.finish();
        proptest::prop_assert_eq!(&buf[..n], &model_bytes(&model)[..]);
        proptest::prop_assert!(buf[n..].iter().all(|&b| b == 0xA5));
    }
}

#[test]
fn aligned_words_equal_the_same_bits_written_one_by_one() {
    for (len, lead) in lengths_and_leads() {
        let cap = len as u64 * 8;
        for (count, width) in [(0usize, 0u32), (1, 1), (1, 63), (2, 64), (3, 40), (5, 29)] {
            let fields: Vec<(u64, u32)> = (0..count as u64)
                .map(|i| (value_of(width, i + 5), width))
                .collect();
            let need: u64 = fields.iter().map(|&(_, b)| b as u64).sum();
            let place = format!("len {len} lead {lead} fields {count} x {width}");
            // One by one.
            let mut a = alloc::vec![0xA5u8; len];
            let mut wa = BitWriter::new(&mut a);
            let mut ops = Vec::new();
            write_lead(&mut wa, lead, &mut ops);
            let one_by_one = fields.iter().try_for_each(|&(v, b)| wa.write_bits(v, b));
            // The stream's own words, begun with the pending bits.
            let mut b = alloc::vec![0xA5u8; len];
            let mut wb = BitWriter::new(&mut b);
            write_lead(&mut wb, lead, &mut Vec::new());
            let (mut acc, mut used) = wb.pending();
            let mut words = Vec::new();
            for &(v, bits) in &fields {
                acc |= v << used;
                if used + bits >= 64 {
                    words.push(acc);
                    acc = (v >> 1) >> (63 - used);
                }
                used = (used + bits) & 63;
            }
            let fits = lead as u64 + need <= cap;
            match wb.write_aligned_words(&words, acc, used) {
                Ok(()) => {
                    assert!(fits && one_by_one.is_ok(), "{place}");
                    assert_eq!(wb.bits_written(), wa.bits_written(), "{place}");
                }
                Err(e) => {
                    assert!(!fits, "{place}");
                    assert_full(&e, need, cap - lead as u64, &place);
                    // Nothing written: the writer goes on from the lead.
                    assert_eq!(wb.bits_written(), lead as u64, "{place}");
                    continue;
                }
            }
            // Both go on alike, and leave the same bytes (and the bytes after the packet
            // untouched).
            wa.write_bits(1, 1).ok();
            wb.write_bits(1, 1).ok();
            let (na, nb) = (wa.finish(), wb.finish());
            assert_eq!(na, nb, "{place}");
            assert_eq!(a, b, "{place}");
        }
    }
}
