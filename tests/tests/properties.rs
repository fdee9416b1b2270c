//! Property tests of the bit layer: random schemas (lists of primitives with random
//! parameters) filled with random values.
//!
//! * `read(write(x)) == x` for every field, floats by bit pattern, compressed floats and
//!   quaternions equal to what quantizing and dequantizing gives;
//! * the measure stream counts exactly the bits the write stream writes;
//! * random bytes, truncated packets and packets with a flipped bit never make a read
//!   panic (they may fail, with a typed error); a truncated packet fails at the end.
//!
//! Case counts are modest so the file runs in a few seconds in debug; set
//! `NETSER_PROPTEST_CASES` for a longer run.

use netser::{Decoder, Encoder, ErrorKind, MeasureStream, Quantize, ReadStream, WriteStream};
use proptest::prelude::*;

/// One field of a random schema, with its parameters and the value to write.
#[derive(Debug, Clone)]
enum Field {
    Bits {
        bits: u32,
        value: u64,
    },
    UintBits {
        bits: u32,
        value: u64,
    },
    Bool(bool),
    Int {
        min: i64,
        max: i64,
        value: i64,
    },
    Int128 {
        min: i128,
        max: i128,
        value: i128,
    },
    Fixed {
        fraction_bits: u32,
        min_units: i32,
        max_units: i32,
        raw: i32,
    },
    F32(u32),
    F64(u64),
    Compressed {
        q: Quantize,
        value: f32,
    },
    Quat {
        bits: u32,
        q: [f32; 4],
    },
    Align,
    Bytes(Vec<u8>),
    Str {
        max_len: usize,
        value: String,
    },
    WStr {
        max_units: usize,
        value: String,
    },
    Relative {
        previous: i32,
        current: i32,
    },
    Check(u32),
    Tag {
        variants: u32,
        tag: u32,
    },
    Seq {
        max_len: usize,
        values: Vec<u16>,
    },
    Subset {
        items: Vec<Option<u8>>,
    },
}

/// A value as read back, comparable with what was written.
#[derive(Debug, Clone, PartialEq)]
enum Read {
    Unit,
    U64(u64),
    I128(i128),
    Bool(bool),
    Bits32(u32),
    Bits64(u64),
    Quat([u32; 4]),
    Bytes(Vec<u8>),
    Str(String),
    Seq(Vec<u16>),
    Subset(Vec<Option<u8>>),
}

fn cases() -> u32 {
    std::env::var("NETSER_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// A value in `min..=max`, often at an edge.
fn i64_in(min: i64, max: i64) -> impl Strategy<Value = i64> {
    prop_oneof![Just(min), Just(max), min..=max]
}

fn compressed_field() -> impl Strategy<Value = Field> {
    (
        -1000.0f32..1000.0,
        prop_oneof![0.001f32..1.0, 1.0f32..5000.0, 5000.0f32..1e7],
        prop_oneof![
            Just(0.001f32),
            Just(0.01),
            Just(0.1),
            Just(1.0),
            0.0001f32..10.0
        ],
    )
        .prop_filter_map("valid quantization", |(min, span, res)| {
            Quantize::try_new(min, min + span, res)
        })
        .prop_flat_map(|q| {
            let (lo, hi) = (q.min(), q.max());
            // Values out of range are legal with clamping.
            prop_oneof![Just(lo), Just(hi), lo..=hi, (lo - 100.0)..(hi + 100.0)].prop_map(
                move |value| Field::Compressed {
                    q: q.clamping(),
                    value,
                },
            )
        })
}

fn quat_field() -> impl Strategy<Value = Field> {
    // Two equal largest components put a small one exactly on its bound.
    let tie = (0usize..4, 1usize..4, any::<bool>()).prop_map(|(i, k, neg)| {
        let mut q = [0.0f32; 4];
        q[i] = 1.0;
        q[(i + k) % 4] = if neg { -1.0 } else { 1.0 };
        q
    });
    let q = prop_oneof![
        3 => prop::array::uniform4(-1.0f32..1.0),
        1 => tie,
    ];
    (2u32..=netser::quat::MAX_BITS, q)
        .prop_filter("not degenerate", |(_, q)| {
            q.iter().map(|c| c * c).sum::<f32>() > 1e-6
        })
        .prop_map(|(bits, q)| Field::Quat { bits, q })
}

fn field() -> impl Strategy<Value = Field> {
    let bits = (0u32..=64, any::<u64>()).prop_map(|(bits, v)| Field::Bits {
        bits,
        value: if bits == 64 { v } else { v & ((1 << bits) - 1) },
    });
    let uint_bits = (0u32..=64, any::<u64>()).prop_map(|(bits, v)| Field::UintBits {
        bits,
        value: if bits == 64 { v } else { v & ((1 << bits) - 1) },
    });
    let int = (
        any::<i64>(),
        prop_oneof![0u64..=16, 0u64..=100_000, any::<u64>()],
    )
        .prop_flat_map(|(min, span)| {
            let max = min.saturating_add_unsigned(span);
            i64_in(min, max).prop_map(move |value| Field::Int { min, max, value })
        });
    let int128 = (any::<i128>(), prop_oneof![0u128..=1 << 70, any::<u128>()]).prop_flat_map(
        |(min, span)| {
            let max = min.saturating_add_unsigned(span);
            prop_oneof![Just(min), Just(max), min..=max].prop_map(move |value| Field::Int128 {
                min,
                max,
                value,
            })
        },
    );
    let fixed = (0u32..=16, -1000i32..=1000, 0i32..=1000).prop_flat_map(|(fb, lo, span)| {
        let hi = (lo + span).min(1000);
        let (min, max) = (lo << fb, hi << fb);
        prop_oneof![Just(min), Just(max), min..=max].prop_map(move |raw| Field::Fixed {
            fraction_bits: fb,
            min_units: lo,
            max_units: hi,
            raw,
        })
    });
    let compressed = compressed_field();
    let quat = quat_field();
    let text = |max: usize| {
        prop::collection::vec(any::<char>().prop_filter("no NUL", |&c| c != '\0'), 0..=max)
            .prop_map(|cs| cs.into_iter().collect::<String>())
    };
    let string = (0usize..=40, text(12)).prop_map(|(max_len, s)| {
        let mut value = String::new();
        for c in s.chars() {
            if value.len() + c.len_utf8() > max_len {
                break;
            }
            value.push(c);
        }
        Field::Str { max_len, value }
    });
    let wstring = (0usize..=20, text(10)).prop_map(|(max_units, s)| {
        let mut value = String::new();
        for c in s.chars() {
            if value.encode_utf16().count() + c.len_utf16() > max_units {
                break;
            }
            value.push(c);
        }
        Field::WStr { max_units, value }
    });
    let relative = (
        i32::MIN..i32::MAX,
        prop_oneof![
            1u32..=7,
            1u32..=300,
            1u32..=70_000,
            Just(69_914u32),
            Just(69_915u32),
            any::<u32>()
        ],
    )
        .prop_filter_map("increasing", |(previous, d)| {
            let current = previous.checked_add_unsigned(d)?;
            (current > previous).then_some(Field::Relative { previous, current })
        });
    let tag = (1u32..=1000)
        .prop_flat_map(|variants| (0..variants).prop_map(move |tag| Field::Tag { variants, tag }));
    let seq = (0usize..=20).prop_flat_map(|max_len| {
        prop::collection::vec(any::<u16>(), 0..=max_len)
            .prop_map(move |values| Field::Seq { max_len, values })
    });
    let subset = prop::collection::vec(
        prop_oneof![3 => Just(None), 1 => any::<u8>().prop_map(Some)],
        0..=200,
    )
    .prop_map(|items| Field::Subset { items });

    prop_oneof![
        bits,
        uint_bits,
        any::<bool>().prop_map(Field::Bool),
        int,
        int128,
        fixed,
        any::<u32>().prop_map(Field::F32),
        any::<u64>().prop_map(Field::F64),
        compressed,
        quat,
        Just(Field::Align),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Field::Bytes),
        string,
        wstring,
        relative,
        any::<u32>().prop_map(Field::Check),
        tag,
        seq,
        subset,
    ]
}

fn schema() -> impl Strategy<Value = Vec<Field>> {
    prop::collection::vec(field(), 0..24)
}

fn write_field<E: Encoder>(e: &mut E, f: &Field) -> netser::Result<()> {
    match f {
        Field::Bits { bits, value } => e.write_bits(*value, *bits),
        Field::UintBits { bits, value } => e.write_uint_bits(*value, *bits),
        Field::Bool(v) => e.write_bool(*v),
        Field::Int { min, max, value } => e.write_int(*value, *min, *max),
        Field::Int128 { min, max, value } => e.write_int(*value, *min, *max),
        Field::Fixed {
            fraction_bits,
            min_units,
            max_units,
            raw,
        } => e.write_fixed(*raw, *fraction_bits, *min_units, *max_units),
        Field::F32(bits) => e.write_f32(f32::from_bits(*bits)),
        Field::F64(bits) => e.write_f64(f64::from_bits(*bits)),
        Field::Compressed { q, value } => e.write_compressed_f32(*value, q),
        Field::Quat { bits, q } => e.write_quat(*q, *bits),
        Field::Align => e.align(),
        Field::Bytes(data) => e.write_bytes(data),
        Field::Str { max_len, value } => e.write_string(value, *max_len),
        Field::WStr { max_units, value } => e.write_wstring(value, *max_units),
        Field::Relative { previous, current } => e.write_int_relative(*previous, *current),
        Field::Check(magic) => e.write_check(*magic),
        Field::Tag { variants, tag } => e.write_tag(*tag, *variants),
        Field::Seq { max_len, values } => e.write_seq(values, *max_len),
        Field::Subset { items } => e.write_subset(
            items.len(),
            |i| items[i].is_some(),
            |e, i| e.write_int(items[i].unwrap_or_default(), 0, u8::MAX),
        ),
    }
}

fn read_field<D: Decoder>(d: &mut D, f: &Field) -> netser::Result<Read> {
    Ok(match f {
        Field::Bits { bits, .. } => Read::U64(d.read_bits(*bits)?),
        Field::UintBits { bits, .. } => Read::U64(d.read_uint_bits(*bits)?),
        Field::Bool(_) => Read::Bool(d.read_bool()?),
        Field::Int { min, max, .. } => Read::I128(d.read_int(*min, *max)? as i128),
        Field::Int128 { min, max, .. } => Read::I128(d.read_int(*min, *max)?),
        Field::Fixed {
            fraction_bits,
            min_units,
            max_units,
            ..
        } => Read::I128(d.read_fixed(*fraction_bits, *min_units, *max_units)? as i128),
        Field::F32(_) => Read::Bits32(d.read_f32()?.to_bits()),
        Field::F64(_) => Read::Bits64(d.read_f64()?.to_bits()),
        Field::Compressed { q, .. } => Read::Bits32(d.read_compressed_f32(q)?.to_bits()),
        Field::Quat { bits, .. } => Read::Quat(d.read_quat(*bits)?.map(f32::to_bits)),
        Field::Align => {
            d.align()?;
            Read::Unit
        }
        Field::Bytes(data) => {
            let mut out = vec![0u8; data.len()];
            d.read_bytes(&mut out)?;
            Read::Bytes(out)
        }
        Field::Str { max_len, .. } => Read::Str(d.read_string(*max_len)?),
        Field::WStr { max_units, .. } => Read::Str(d.read_wstring(*max_units)?),
        Field::Relative { previous, .. } => Read::I128(d.read_int_relative(*previous)? as i128),
        Field::Check(magic) => {
            d.read_check(*magic)?;
            Read::Unit
        }
        Field::Tag { variants, .. } => Read::U64(d.read_tag(*variants)? as u64),
        Field::Seq { max_len, .. } => Read::Seq(d.read_seq(*max_len)?),
        Field::Subset { items } => {
            let mut out = vec![None; items.len()];
            d.read_subset(items.len(), |d, i| {
                out[i] = Some(d.read_int(0, u8::MAX)?);
                Ok(())
            })?;
            Read::Subset(out)
        }
    })
}

/// What a correct reader returns for a field.
fn expected(f: &Field) -> Read {
    match f {
        Field::Bits { value, .. } | Field::UintBits { value, .. } => Read::U64(*value),
        Field::Bool(v) => Read::Bool(*v),
        Field::Int { value, .. } => Read::I128(*value as i128),
        Field::Int128 { value, .. } => Read::I128(*value),
        Field::Fixed { raw, .. } => Read::I128(*raw as i128),
        Field::F32(bits) => Read::Bits32(*bits),
        Field::F64(bits) => Read::Bits64(*bits),
        Field::Compressed { q, value } => Read::Bits32(
            q.dequantize(q.quantize(*value, 0).expect("finite"))
                .to_bits(),
        ),
        Field::Quat { bits, q } => {
            let (largest, small) = netser::quat::pack(*q, *bits, 0).expect("packable");
            let back = netser::quat::unpack(largest, small, *bits, 0).expect("unpackable");
            Read::Quat(back.map(f32::to_bits))
        }
        Field::Align | Field::Check(_) => Read::Unit,
        Field::Bytes(data) => Read::Bytes(data.clone()),
        Field::Str { value, .. } | Field::WStr { value, .. } => Read::Str(value.clone()),
        Field::Relative { current, .. } => Read::I128(*current as i128),
        Field::Tag { tag, .. } => Read::U64(*tag as u64),
        Field::Seq { values, .. } => Read::Seq(values.clone()),
        Field::Subset { items } => Read::Subset(items.clone()),
    }
}

/// Measures then writes `schema` into a buffer of exactly the measured size.
fn encode(schema: &[Field]) -> (Vec<u8>, u64) {
    let mut m = MeasureStream::new();
    for (i, f) in schema.iter().enumerate() {
        write_field(&mut m, f).unwrap_or_else(|e| panic!("measure field {i} {f:?}: {e}"));
    }
    let mut buf = vec![0u8; m.bytes() as usize];
    let mut w = WriteStream::new(&mut buf);
    for (i, f) in schema.iter().enumerate() {
        let before = w.bit_position();
        write_field(&mut w, f).unwrap_or_else(|e| panic!("write field {i} {f:?}: {e}"));
        // Per field too: measuring the field alone from the same position agrees.
        let mut alone = MeasureStream::new();
        alone.write_bits(0, (before % 8) as u32).unwrap();
        write_field(&mut alone, f).unwrap();
        assert_eq!(
            alone.bits() - before % 8,
            w.bit_position() - before,
            "{f:?}"
        );
    }
    let bits = w.bit_position();
    let len = w.finish();
    assert_eq!(bits, m.bits(), "measure == bits written");
    assert_eq!(len, buf.len());
    (buf, bits)
}

/// Reads the whole schema; stops at the first error. Must never panic.
fn read_all(schema: &[Field], bytes: &[u8]) -> netser::Result<Vec<Read>> {
    let mut r = ReadStream::new(bytes);
    let mut out = Vec::with_capacity(schema.len());
    for f in schema {
        out.push(read_field(&mut r, f)?);
        assert!(r.bit_position() <= bytes.len() as u64 * 8);
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        // Integration tests have no lib.rs for proptest to find a regressions folder by.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn read_of_write_is_identity_and_measure_is_exact(schema in schema()) {
        let (bytes, bits) = encode(&schema);
        let mut r = ReadStream::new(&bytes);
        for (i, f) in schema.iter().enumerate() {
            let got = read_field(&mut r, f);
            prop_assert_eq!(got, Ok(expected(f)), "field {} {:?}", i, f);
        }
        prop_assert_eq!(r.bit_position(), bits);
    }

    #[test]
    fn compressed_floats_and_quats_land_close(field in prop_oneof![compressed_field(), quat_field()]) {
        // Not just consistent with the oracle: close to the (clamped) value sent.
        if let Field::Compressed { q, value } = field {
            let (bytes, _) = encode(std::slice::from_ref(&field));
            let got = ReadStream::new(&bytes).read_compressed_f32(&q).unwrap();
            let target = value.clamp(q.min(), q.max());
            let step = (q.max() - q.min()) / q.max_integer_value() as f32;
            let scale = q.min().abs() + q.max().abs() + (q.max() - q.min());
            let tolerance = step / 2.0 + 16.0 * f32::EPSILON * scale;
            prop_assert!(
                (got - target).abs() <= tolerance,
                "{} -> {} (step {}, tolerance {})", value, got, step, tolerance
            );
            prop_assert!(got >= q.min() && got <= q.max(), "{} outside the range", got);
        }
        if let Field::Quat { bits, q } = field {
            // Same rotation (q and -q are one rotation), to the precision of the bits.
            let (bytes, _) = encode(std::slice::from_ref(&field));
            let got = ReadStream::new(&bytes).read_quat(bits).unwrap();
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            let dot: f32 = q.iter().zip(&got).map(|(a, b)| a / n * b).sum();
            let step = std::f32::consts::SQRT_2 / ((1u64 << bits) - 1) as f32;
            let tolerance = 2.0 * step * step + 1e-5;
            prop_assert!(1.0 - dot.abs() <= tolerance, "{:?} -> {:?} ({} bits)", q, got, bits);
        }
    }

    #[test]
    fn truncated_packets_fail_at_the_end_and_never_panic(
        schema in schema(),
        cut in any::<prop::sample::Index>(),
    ) {
        let (bytes, bits) = encode(&schema);
        prop_assume!(!bytes.is_empty());
        let len = cut.index(bytes.len());
        // Fewer bytes than the writer produced: the valid prefix reads as written and
        // the first field that needs a missing bit reports the end of the buffer.
        let e = read_all(&schema, &bytes[..len]).expect_err("truncated packet read whole");
        prop_assert!(
            matches!(e.kind(), ErrorKind::EndOfBuffer { .. }),
            "cut to {} of {} bytes ({} bits): {}", len, bytes.len(), bits, e
        );
        prop_assert!(e.bit() <= bits);
    }

    #[test]
    fn flipped_bits_never_panic(
        schema in schema(),
        flip in any::<prop::sample::Index>(),
    ) {
        let (mut bytes, bits) = encode(&schema);
        prop_assume!(bits > 0);
        let bit = flip.index(bits as usize);
        bytes[bit / 8] ^= 1 << (bit % 8);
        // Any outcome but a panic: a flipped value may still be in range.
        let _ = read_all(&schema, &bytes);
    }

    #[test]
    fn random_bytes_never_panic(
        schema in schema(),
        bytes in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        let _ = read_all(&schema, &bytes);
    }

    #[test]
    fn random_bytes_under_huge_bounds_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        // Length fields of 64 bits: whatever they claim, nothing panics or over-allocates.
        let mut r = ReadStream::new(&bytes);
        let _ = r.clone().read_string(usize::MAX);
        let _ = r.clone().read_wstring(usize::MAX);
        let _ = r.clone().read_seq::<u64>(usize::MAX);
        let _ = r.clone().read_subset(i32::MAX as usize, |d, _| d.read_bool().map(drop));
        let _ = r.read_int(i128::MIN, i128::MAX);
    }
}
