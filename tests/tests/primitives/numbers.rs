//! Ranged and relative integers, raw bits and floats, quantized floats, fixed point and
//! quaternions at their boundaries.

use super::*;

// ---------------------------------------------------------------- ranged integers

#[test]
fn int_min_and_max_round_trip_in_the_minimum_bits() {
    let (bytes, bits) = write_with(|w| {
        w.write_int(-10i32, -10, 10)?;
        w.write_int(10i32, -10, 10)?;
        w.write_int(0u8, 0, u8::MAX)?;
        w.write_int(u8::MAX, 0, u8::MAX)?;
        w.write_int(i64::MIN, i64::MIN, i64::MAX)?;
        w.write_int(i64::MAX, i64::MIN, i64::MAX)?;
        w.write_int(i128::MIN, i128::MIN, i128::MAX)?;
        w.write_int(u128::MAX, 0, u128::MAX)
    });
    assert_eq!(bits, 5 + 5 + 8 + 8 + 64 + 64 + 128 + 128);
    let mut r = ReadStream::new(&bytes);
    assert_eq!(r.read_int(-10i32, 10).unwrap(), -10);
    assert_eq!(r.read_int(-10i32, 10).unwrap(), 10);
    assert_eq!(r.read_int(0u8, u8::MAX).unwrap(), 0);
    assert_eq!(r.read_int(0u8, u8::MAX).unwrap(), u8::MAX);
    assert_eq!(r.read_int(i64::MIN, i64::MAX).unwrap(), i64::MIN);
    assert_eq!(r.read_int(i64::MIN, i64::MAX).unwrap(), i64::MAX);
    assert_eq!(r.read_int(i128::MIN, i128::MAX).unwrap(), i128::MIN);
    assert_eq!(r.read_int(0u128, u128::MAX).unwrap(), u128::MAX);
    assert_eq!(r.bit_position(), bits);
}

#[test]
fn int_with_min_equal_max_takes_no_bits_and_reads_from_an_empty_buffer() {
    let (bytes, bits) = write_with(|w| w.write_int(7u16, 7, 7));
    assert_eq!((bytes.len(), bits), (0, 0));
    let mut r = ReadStream::new(&[]);
    assert_eq!(r.read_int(7u16, 7).unwrap(), 7);
    assert_eq!(r.read_int(-3i128, -3).unwrap(), -3);
    // Still range-checked on write.
    let mut buf = [0u8; 1];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_int(8u16, 7, 7)),
        out_of_range(Num::Uint(8), Num::Uint(7), Num::Uint(7))
    );
}

#[test]
fn int_headroom_is_refused_on_read() {
    // 0..=10 takes 4 bits; 11..=15 are the headroom.
    for offset in 11..16u64 {
        let bytes = craft(&[(offset, 4)]);
        let e = ReadStream::new(&bytes).read_int(0u8, 10).unwrap_err();
        assert_eq!(
            e.kind(),
            &out_of_range(Num::Uint(offset as u128), Num::Uint(0), Num::Uint(10))
        );
        assert_eq!(e.bit(), 0);
    }
    // -10..=10 takes 5 bits: offset 21 would be 11.
    let bytes = craft(&[(0b1, 1), (21, 5)]);
    let mut r = ReadStream::new(&bytes);
    assert!(r.read_bool().unwrap());
    let e = r.read_int(-10i32, 10).unwrap_err();
    assert_eq!(
        e.kind(),
        &out_of_range(Num::Int(11), Num::Int(-10), Num::Int(10))
    );
    assert_eq!(e.bit(), 1);
    // The last value below the headroom is accepted.
    assert_eq!(
        ReadStream::new(&craft(&[(20, 5)]))
            .read_int(-10i32, 10)
            .unwrap(),
        10
    );
    // 128-bit ranges: 0..=2^64 takes 65 bits; 2^64 + 1 is headroom.
    let max = 1u128 << 64;
    let bytes = craft(&[(1, 64), (1, 1)]);
    assert_eq!(
        kind(ReadStream::new(&bytes).read_int(0u128, max)),
        out_of_range(Num::Uint(max + 1), Num::Uint(0), Num::Uint(max))
    );
    let bytes = craft(&[(0, 64), (1, 1)]);
    assert_eq!(ReadStream::new(&bytes).read_int(0u128, max).unwrap(), max);
}

#[test]
fn int_write_out_of_range_writes_nothing() {
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    w.write_bool(true).unwrap();
    let e = w.write_int(11i32, -10, 10).unwrap_err();
    assert_eq!(
        e.kind(),
        &out_of_range(Num::Int(11), Num::Int(-10), Num::Int(10))
    );
    assert_eq!(e.bit(), 1);
    assert_eq!(
        kind(w.write_int(-11i32, -10, 10)),
        out_of_range(Num::Int(-11), Num::Int(-10), Num::Int(10))
    );
    assert_eq!(
        kind(w.write_int(u64::MAX, 0, u64::MAX - 1)),
        out_of_range(
            Num::Uint(u64::MAX as u128),
            Num::Uint(0),
            Num::Uint(u64::MAX as u128 - 1)
        )
    );
    assert_eq!(w.bit_position(), 1, "a refused value writes nothing");
    // The measure stream refuses the same values.
    let mut m = MeasureStream::new();
    assert!(m.write_int(11i32, -10, 10).is_err());
    assert_eq!(m.bits(), 0);
}

#[test]
fn int_inverted_range_is_an_error_both_ways() {
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_int(5i32, 10, 0)),
        ErrorKind::InvalidRange {
            min: Num::Int(10),
            max: Num::Int(0)
        }
    );
    assert_eq!(
        kind(ReadStream::new(&[0xff]).read_int(10i32, 0)),
        ErrorKind::InvalidRange {
            min: Num::Int(10),
            max: Num::Int(0)
        }
    );
}

#[test]
fn int_empty_buffer_and_one_bit_short() {
    assert_eq!(
        kind(ReadStream::new(&[]).read_int(0u32, 10)),
        ErrorKind::EndOfBuffer {
            wanted: 4,
            remaining: 0
        }
    );
    let mut r = ReadStream::new(&[0]);
    r.read_bits(5).unwrap();
    let e = r.read_int(0u32, 10).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 4,
            remaining: 3
        }
    );
    assert_eq!(e.bit(), 5);
    assert_eq!(r.bit_position(), 5, "a failed read consumes nothing");
    // Exactly enough is fine.
    assert_eq!(r.read_int(0u32, 7).unwrap(), 0);
    // A 128-bit read one byte short consumes nothing either.
    let mut r = ReadStream::new(&[0xff; 15]);
    assert_eq!(
        kind(r.read_int(0u128, u128::MAX)),
        ErrorKind::EndOfBuffer {
            wanted: 128,
            remaining: 120
        }
    );
    assert_eq!(r.bit_position(), 0);
}

// ---------------------------------------------------------------- raw bits

#[test]
fn bits_and_uint_bits_bounds() {
    let mut buf = [0u8; 16];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_bits(8, 3)),
        ErrorKind::ValueTooWide { value: 8, bits: 3 }
    );
    assert_eq!(
        kind(w.write_bits(0, 65)),
        ErrorKind::InvalidBitCount {
            bits: 65,
            min: 0,
            max: 64
        }
    );
    assert_eq!(
        kind(w.write_uint_bits(16u8, 4)),
        ErrorKind::ValueTooWide { value: 16, bits: 4 }
    );
    assert_eq!(
        kind(w.write_uint_bits(1u8, 9)),
        ErrorKind::InvalidBitCount {
            bits: 9,
            min: 0,
            max: 8
        }
    );
    // A negative value does not fit in any unsigned bit count.
    assert!(matches!(
        kind(w.write_uint_bits(-1i32, 31)),
        ErrorKind::ValueTooWide { bits: 31, .. }
    ));
    assert_eq!(w.bit_position(), 0);
    w.write_uint_bits(15u8, 4).unwrap();
    w.write_uint_bits(u64::MAX, 64).unwrap();
    w.write_uint_bits(0u32, 0).unwrap();
    let len = w.finish();
    let mut r = ReadStream::new(&buf[..len]);
    assert_eq!(r.read_uint_bits::<u8>(4).unwrap(), 15);
    assert_eq!(r.read_uint_bits::<u64>(64).unwrap(), u64::MAX);
    assert_eq!(r.read_uint_bits::<u32>(0).unwrap(), 0);
    // A signed type cannot be read into its sign bit.
    assert_eq!(
        kind(ReadStream::new(&[0xff]).read_uint_bits::<i8>(8)),
        ErrorKind::InvalidBitCount {
            bits: 8,
            min: 0,
            max: 7
        }
    );
    assert_eq!(
        ReadStream::new(&[0x7f]).read_uint_bits::<i8>(7).unwrap(),
        127
    );
    assert_eq!(
        kind(ReadStream::new(&[0; 9]).read_bits(65)),
        ErrorKind::InvalidBitCount {
            bits: 65,
            min: 0,
            max: 64
        }
    );
}

#[test]
fn bool_and_raw_floats_at_the_end_of_the_buffer() {
    assert_eq!(
        kind(ReadStream::new(&[]).read_bool()),
        ErrorKind::EndOfBuffer {
            wanted: 1,
            remaining: 0
        }
    );
    assert_eq!(
        kind(ReadStream::new(&[0; 3]).read_f32()),
        ErrorKind::EndOfBuffer {
            wanted: 32,
            remaining: 24
        }
    );
    assert_eq!(
        kind(ReadStream::new(&[0; 7]).read_f64()),
        ErrorKind::EndOfBuffer {
            wanted: 64,
            remaining: 56
        }
    );
}

#[test]
fn raw_floats_carry_every_bit_pattern() {
    let f32s = [
        f32::NAN,
        f32::from_bits(0xffc0_1234),
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        f32::MIN_POSITIVE / 2.0,
        f32::MAX,
    ];
    let f64s = [
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::NEG_INFINITY,
        -0.0,
    ];
    let (bytes, bits) = write_with(|w| {
        for v in f32s {
            w.write_f32(v)?;
        }
        for v in f64s {
            w.write_f64(v)?;
        }
        Ok(())
    });
    assert_eq!(bits, 7 * 32 + 3 * 64);
    let mut r = ReadStream::new(&bytes);
    for v in f32s {
        assert_eq!(r.read_f32().unwrap().to_bits(), v.to_bits());
    }
    for v in f64s {
        assert_eq!(r.read_f64().unwrap().to_bits(), v.to_bits());
    }
}

#[test]
fn uint_bits_of_a_signed_type_never_use_the_sign_bit_in_either_direction() {
    // One unified function must behave the same way on both streams: a signed type's
    // `bits` can cover at most its non-negative range, `WIDTH - 1` bits.
    fn serialize<S: Stream>(s: &mut S, v: &mut i8, bits: u32) -> netser::Result<()> {
        s.serialize_uint_bits(v, bits)
    }
    let mut buf = [0u8; 4];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(serialize(&mut w, &mut 5, 8)),
        ErrorKind::InvalidBitCount {
            bits: 8,
            min: 0,
            max: 7
        }
    );
    assert_eq!(
        kind(serialize(&mut ReadStream::new(&[5]), &mut 0, 8)),
        ErrorKind::InvalidBitCount {
            bits: 8,
            min: 0,
            max: 7
        }
    );
    serialize(&mut w, &mut 127, 7).unwrap();
    let len = w.finish();
    let mut back = 0i8;
    serialize(&mut ReadStream::new(&buf[..len]), &mut back, 7).unwrap();
    assert_eq!(back, 127);
}

// ---------------------------------------------------------------- compressed floats

#[test]
fn compressed_float_bounds() {
    let q = Quantize::new(0.0, 10.0, 1.0); // 10 steps, 4 bits: 11..=15 is headroom
    assert_eq!((q.max_integer_value(), q.bits()), (10, 4));
    let (bytes, bits) = write_with(|w| {
        w.write_compressed_f32(0.0, &q)?;
        w.write_compressed_f32(10.0, &q)
    });
    assert_eq!(bits, 8);
    assert_eq!(bytes, [0xa0]); // 0 then 10 in the high nibble
    let mut r = ReadStream::new(&bytes);
    assert_eq!(r.read_compressed_f32(&q).unwrap(), 0.0);
    assert_eq!(r.read_compressed_f32(&q).unwrap(), 10.0);

    // The integer 11 from the headroom is reported as the value it stands for.
    let e = ReadStream::new(&craft(&[(11, 4)]))
        .read_compressed_f32(&q)
        .unwrap_err();
    assert_eq!(e.kind(), &quantized_out_of_range(11.0, 0.0, 10.0, 1.0));
    assert_eq!(
        e.to_string(),
        "value 11 out of range 0..=10 (quantized in steps of 1) at bit 0"
    );
    let e = ReadStream::new(&craft(&[(15, 4)]))
        .read_compressed_f64(&q)
        .unwrap_err();
    assert_eq!(e.kind(), &quantized_out_of_range(15.0, 0.0, 10.0, 1.0));
    assert_eq!(
        kind(ReadStream::new(&[]).read_compressed_f32(&q)),
        ErrorKind::EndOfBuffer {
            wanted: 4,
            remaining: 0
        }
    );
}

#[test]
fn compressed_float_refuses_non_finite_and_out_of_range() {
    let q = Quantize::new(-1.0, 1.0, 0.01);
    let mut buf = [0u8; 16];
    let mut w = WriteStream::new(&mut buf);
    for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert!(matches!(
            kind(w.write_compressed_f32(v, &q)),
            ErrorKind::NotFinite { .. }
        ));
        // Clamping does not make NaN or infinities encodable.
        assert!(matches!(
            kind(w.write_compressed_f32(v, &q.clamping())),
            ErrorKind::NotFinite { .. }
        ));
    }
    assert_eq!(
        kind(w.write_compressed_f32(1.5, &q)),
        quantized_out_of_range(1.5, -1.0, 1.0, 0.01)
    );
    assert_eq!(
        kind(w.write_compressed_f64(-1.25, &q)),
        quantized_out_of_range(-1.25, -1.0, 1.0, 0.01)
    );
    // Beyond what f32 holds: the same kind, with the f64 value as given.
    assert_eq!(
        kind(w.write_compressed_f64(1e300, &q)),
        quantized_out_of_range(1e300, -1.0, 1.0, 0.01)
    );
    assert!(matches!(
        kind(w.write_compressed_f64(f64::NAN, &q.clamping())),
        ErrorKind::NotFinite { .. }
    ));
    assert_eq!(w.bit_position(), 0, "refused values write nothing");
    // Clamping: finite values outside the range go to the ends.
    w.write_compressed_f32(7.0, &q.clamping()).unwrap();
    w.write_compressed_f64(-1e300, &q.clamping()).unwrap();
    let len = w.finish();
    let mut r = ReadStream::new(&buf[..len]);
    assert_eq!(r.read_compressed_f32(&q).unwrap(), 1.0);
    assert_eq!(r.read_compressed_f64(&q).unwrap(), -1.0);
}

/// A quantized float out of range reads the same whichever side refuses it: the real
/// range and step, and the value written or the value the integer read stands for.
#[test]
fn quantized_write_and_read_errors_render_alike() {
    let q = Quantize::new(-180.0, 180.0, 0.1); // 3600 steps in 12 bits
    assert_eq!((q.max_integer_value(), q.bits()), (3600, 12));
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    w.write_bool(true).unwrap();
    let written = w.write_compressed_f32(180.5, &q).unwrap_err();
    // 3605 steps of 0.1 above -180 is 180.5.
    let read = {
        let bytes = craft(&[(1, 1), (3605, 12)]);
        let mut r = ReadStream::new(&bytes);
        r.read_bool().unwrap();
        r.read_compressed_f32(&q).unwrap_err()
    };
    let text = "value 180.5 out of range -180..=180 (quantized in steps of 0.1) at bit 1";
    assert_eq!(written.to_string(), text);
    assert_eq!(read.to_string(), text);
    assert_eq!(written.kind(), read.kind());
    // Below the range: only a write can be (an integer read is never negative).
    assert_eq!(
        w.write_compressed_f32(-200.0, &q).unwrap_err().to_string(),
        "value -200 out of range -180..=180 (quantized in steps of 0.1) at bit 1"
    );
    // The top of the headroom.
    let e = ReadStream::new(&craft(&[(4095, 12)]))
        .read_compressed_f32(&q)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "value 229.5 out of range -180..=180 (quantized in steps of 0.1) at bit 0"
    );
}

#[test]
fn quantize_refuses_invalid_parameters() {
    assert!(Quantize::try_new(1.0, 1.0, 0.1).is_none());
    assert!(Quantize::try_new(2.0, 1.0, 0.1).is_none());
    assert!(Quantize::try_new(0.0, 1.0, 0.0).is_none());
    assert!(Quantize::try_new(0.0, 1.0, -0.1).is_none());
    assert!(Quantize::try_new(f32::NAN, 1.0, 0.1).is_none());
    assert!(Quantize::try_new(0.0, f32::INFINITY, 0.1).is_none());
    assert!(Quantize::try_new(0.0, 1.0, f32::NAN).is_none());
    // max - min overflows float32.
    assert!(Quantize::try_new(-f32::MAX, f32::MAX, 1.0).is_none());
}

#[test]
fn compressed_float_max_never_lands_in_the_headroom() {
    // 9000001 steps (odd, between 2^23 and 2^24, where float32 steps are 1.0): the
    // reference's `floor(f32(scaled + 0.5))` rounds 9000001.5 to the even 9000002, one
    // above the largest integer its reader accepts. netser clamps to the largest.
    let q = Quantize::new(0.0, 9_000_001.0, 1.0);
    assert_eq!((q.max_integer_value(), q.bits()), (9_000_001, 24));
    assert_eq!(q.quantize(9_000_001.0, 0).unwrap(), 9_000_001);
    let (bytes, _) = write_with(|w| w.write_compressed_f32(9_000_001.0, &q));
    assert_eq!(
        ReadStream::new(&bytes).read_compressed_f32(&q).unwrap(),
        9_000_001.0
    );
}

// ---------------------------------------------------------------- fixed point

#[test]
fn fixed_bounds_headroom_and_errors() {
    // Q8.8 in [-100, 100]: raw -25600..=25600, 16 bits.
    let (bytes, bits) = write_with(|w| {
        w.write_fixed(-25600i16, 8, -100, 100)?;
        w.write_fixed(25600i16, 8, -100, 100)
    });
    assert_eq!(bits, 32);
    let mut r = ReadStream::new(&bytes);
    assert_eq!(r.read_fixed(8, -100i16, 100).unwrap(), -25600);
    assert_eq!(r.read_fixed(8, -100i16, 100).unwrap(), 25600);
    // Offset 51201 would be raw 25601.
    assert_eq!(
        kind(ReadStream::new(&craft(&[(51201, 16)])).read_fixed(8, -100i16, 100)),
        out_of_range(Num::Int(25601), Num::Int(-25600), Num::Int(25600))
    );
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_fixed(25601i16, 8, -100, 100)),
        out_of_range(Num::Int(25601), Num::Int(-25600), Num::Int(25600))
    );
    // 200 << 8 does not fit an i16: the format itself is refused.
    assert_eq!(
        kind(w.write_fixed(0i16, 8, -200, 200)),
        ErrorKind::InvalidRange {
            min: Num::Int(-200),
            max: Num::Int(200)
        }
    );
    assert!(matches!(
        kind(ReadStream::new(&[0; 4]).read_fixed(8, -200i16, 200)),
        ErrorKind::InvalidRange { .. }
    ));
    assert_eq!(w.bit_position(), 0);
}

// ---------------------------------------------------------------- int_relative

/// The tier edges of the reference's flag ladder and their bit costs.
const TIER_EDGES: [(u32, u64); 12] = [
    (1, 1),
    (2, 5),
    (6, 5),
    (7, 8),
    (23, 8),
    (24, 13),
    (280, 13),
    (281, 18),
    (4377, 18),
    (4378, 23),
    (69914, 23),
    (69915, 38),
];

#[test]
fn int_relative_tier_edges() {
    for previous in [-1i32, 100, -70_000] {
        for (d, cost) in TIER_EDGES {
            let current = previous + d as i32;
            let (bytes, bits) = write_with(|w| w.write_int_relative(previous, current));
            assert_eq!(bits, cost, "difference {d}");
            let mut m = MeasureStream::new();
            m.write_int_relative(previous, current).unwrap();
            assert_eq!(m.bits(), cost);
            let mut r = ReadStream::new(&bytes);
            assert_eq!(r.read_int_relative(previous).unwrap(), current, "d {d}");
            assert_eq!(r.bit_position(), cost);
        }
    }
}

#[test]
fn int_relative_refuses_headroom_payloads() {
    // (flag index, lowest difference, highest difference, payload bits)
    let tiers = [
        (1u32, 2u64, 6u64, 3u32),
        (2, 7, 23, 5),
        (3, 24, 280, 9),
        (4, 281, 4377, 13),
        (5, 4378, 69914, 17),
    ];
    for (flag, low, high, bits) in tiers {
        let flags: Vec<(u64, u32)> = (0..flag).map(|_| (0, 1)).chain([(1, 1)]).collect();
        for offset in [high - low + 1, (1 << bits) - 1] {
            let mut fields = flags.clone();
            fields.push((offset, bits));
            let e = ReadStream::new(&craft(&fields))
                .read_int_relative(0)
                .unwrap_err();
            assert_eq!(
                e.kind(),
                &out_of_range(
                    Num::Uint((low + offset) as u128),
                    Num::Uint(low as u128),
                    Num::Uint(high as u128)
                ),
                "tier {low}..={high} offset {offset}"
            );
            assert_eq!(e.bit(), flag as u64 + 1, "error points at the payload");
        }
        // The top of the tier is accepted.
        let mut fields = flags.clone();
        fields.push((high - low, bits));
        assert_eq!(
            ReadStream::new(&craft(&fields))
                .read_int_relative(0)
                .unwrap(),
            high as i32
        );
    }
}

#[test]
fn int_relative_ordering() {
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    for (previous, current) in [(5, 5), (5, 4), (i32::MAX, i32::MIN)] {
        assert_eq!(
            kind(w.write_int_relative(previous, current)),
            ErrorKind::NotIncreasing {
                previous: previous as i64,
                current: current as i64
            }
        );
    }
    assert_eq!(w.bit_position(), 0);
    // Raw tier (six zero flags) with a value not above previous.
    let raw = craft(&[(0, 6), (50, 32)]);
    assert_eq!(
        kind(ReadStream::new(&raw).read_int_relative(100)),
        ErrorKind::NotIncreasing {
            previous: 100,
            current: 50
        }
    );
    assert_eq!(
        ReadStream::new(&raw).read_int_relative(49).unwrap(),
        50,
        "the raw tier may carry a small difference"
    );
    // A flag tier that would wrap past i32::MAX is refused (the reference wraps).
    assert!(matches!(
        kind(ReadStream::new(&craft(&[(1, 1)])).read_int_relative(i32::MAX)),
        ErrorKind::NotIncreasing { .. }
    ));
    assert!(matches!(
        kind(ReadStream::new(&craft(&[(0, 1), (1, 1), (4, 3)])).read_int_relative(i32::MAX - 3)),
        ErrorKind::NotIncreasing { .. }
    ));
    // Each flag alone, with nothing after it.
    for flags in 1..=6u32 {
        assert!(matches!(
            kind(ReadStream::new(&craft(&[(0, flags)])).read_int_relative(0)),
            ErrorKind::EndOfBuffer { .. }
        ));
    }
}

// ---------------------------------------------------------------- quaternions

#[test]
fn quaternion_degenerate_input() {
    let mut buf = [0u8; 16];
    let mut w = WriteStream::new(&mut buf);
    for q in [
        [0.0; 4],
        [f32::NAN, 0.0, 0.0, 1.0],
        [0.0, f32::INFINITY, 0.0, 1.0],
        [f32::MAX, f32::MAX, 0.0, 0.0], // length overflows
        [1e-30, 0.0, 0.0, 0.0],         // length underflows to zero
    ] {
        assert_eq!(
            kind(w.write_quat(q, 9)),
            ErrorKind::InvalidQuaternion,
            "{q:?}"
        );
    }
    for bits in [0, 1, 21, 33] {
        assert_eq!(
            kind(w.write_quat([0.0, 0.0, 0.0, 1.0], bits)),
            ErrorKind::InvalidBitCount {
                bits,
                min: 2,
                max: 20
            }
        );
        assert_eq!(
            kind(ReadStream::new(&[0; 16]).read_quat(bits)),
            ErrorKind::InvalidBitCount {
                bits,
                min: 2,
                max: 20
            }
        );
    }
    assert_eq!(w.bit_position(), 0);
}

#[test]
fn quaternion_round_trips_and_normalizes() {
    fn dot(a: [f32; 4], b: [f32; 4]) -> f32 {
        a.iter().zip(&b).map(|(x, y)| x * y).sum()
    }
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let qs = [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, -1.0],
        [h, 0.0, 0.0, h], // a tie between two largest components
        [0.5, -0.5, 0.5, -0.5],
        [2.0, 0.0, 0.0, 0.0], // not unit length: normalized first
    ];
    let (bytes, bits) = write_with(|w| qs.iter().try_for_each(|&q| w.write_quat(q, 12)));
    assert_eq!(bits, 5 * (2 + 3 * 12));
    let mut r = ReadStream::new(&bytes);
    for q in qs {
        let n = dot(q, q).sqrt();
        let unit = q.map(|c| c / n);
        let back = r.read_quat(12).unwrap();
        // q and -q are the same rotation.
        assert!(1.0 - dot(unit, back).abs() < 1e-5, "{q:?} -> {back:?}");
    }
    assert_eq!(
        kind(ReadStream::new(&[0; 4]).read_quat(12)),
        ErrorKind::EndOfBuffer {
            wanted: 38,
            remaining: 32
        }
    );
}

#[test]
fn quaternion_with_no_room_for_its_largest_component_is_refused() {
    // Three components at the extremes would make 1 - a² - b² - c² negative: no writer
    // sends that.
    for largest in 0..4u64 {
        let bytes = craft(&[(largest, 2), (511, 9), (511, 9), (0, 9)]);
        assert_eq!(
            kind(ReadStream::new(&bytes).read_quat(9)),
            ErrorKind::NonCanonicalQuaternion {
                largest: largest as u8
            }
        );
    }
}

#[test]
fn quaternion_extreme_components_at_every_width() {
    // Two equal largest components put a small one exactly at the 1/sqrt(2) bound, the
    // top of its quantized range: it must fit the field at every width.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let qs = [
        [1.0, 0.0, 0.0, 1.0],
        [0.0, -1.0, 1.0, 0.0],
        [h, 0.0, 0.0, -h],
        [-0.5, 0.5, -0.5, 0.5],
    ];
    for bits in 2..=netser::quat::MAX_BITS {
        for q in qs {
            let (bytes, written) = write_with(|w| w.write_quat(q, bits));
            assert_eq!(written, 2 + 3 * bits as u64);
            let back = ReadStream::new(&bytes).read_quat(bits).unwrap();
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            let dot: f32 = q.iter().zip(&back).map(|(a, b)| a / n * b).sum();
            assert!(1.0 - dot.abs() < 0.2, "{bits} bits: {q:?} -> {back:?}");
        }
    }
}
