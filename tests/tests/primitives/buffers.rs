//! Padding, bytes, strings, tags and checks, and every primitive at the buffer's end.

use super::*;

// ---------------------------------------------------------------- align and bytes

#[test]
fn align_refuses_non_zero_padding() {
    let (bytes, _) = write_with(|w| {
        w.write_bits(1, 3)?;
        w.align()?;
        w.write_bits(0xab, 8)
    });
    assert_eq!(bytes, [0x01, 0xab]);
    let mut r = ReadStream::new(&bytes);
    r.read_bits(3).unwrap();
    r.align().unwrap();
    assert_eq!(r.read_bits(8).unwrap(), 0xab);

    for bad in [0x09u8, 0x81, 0xf9] {
        let bytes = [bad, 0xab];
        let mut r = ReadStream::new(&bytes);
        assert_eq!(r.read_bits(3).unwrap(), 1);
        let e = r.align().unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::NonZeroPadding { found: bad >> 3 });
        assert_eq!(e.bit(), 3);
    }
    // Aligned already: nothing is read, even at the very end.
    let mut r = ReadStream::new(&[0xff]);
    r.read_bits(8).unwrap();
    r.align().unwrap();
    assert_eq!(r.bit_position(), 8);
}

#[test]
fn bytes_bounds() {
    let (bytes, bits) = write_with(|w| {
        w.write_bool(true)?;
        w.write_bytes(&[])?;
        w.write_bytes(&[1, 2, 3])
    });
    // The empty run still aligns.
    assert_eq!((bits, bytes.as_slice()), (32, [1u8, 1, 2, 3].as_slice()));
    let mut r = ReadStream::new(&bytes);
    assert!(r.read_bool().unwrap());
    r.read_bytes(&mut []).unwrap();
    assert_eq!(r.bit_position(), 8);
    let mut out = [0u8; 3];
    r.read_bytes(&mut out).unwrap();
    assert_eq!(out, [1, 2, 3]);

    // Non-zero padding before the bytes.
    let mut r = ReadStream::new(&[0x03, 1, 2, 3]);
    r.read_bool().unwrap();
    assert_eq!(
        kind(r.read_bytes(&mut out)),
        ErrorKind::NonZeroPadding { found: 1 }
    );
    // One byte short: padding + count is checked up front.
    let mut r = ReadStream::new(&[0x01, 1, 2]);
    r.read_bool().unwrap();
    let e = r.read_bytes(&mut out).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 7 + 24,
            remaining: 23
        }
    );
    assert_eq!(e.bit(), 1);
    assert_eq!(r.bit_position(), 1);
}

// ---------------------------------------------------------------- strings

#[test]
fn string_bounds() {
    // max_len 7: 3 bits of length.
    let (bytes, bits) = write_with(|w| {
        w.write_string("", 7)?;
        w.write_string("abcdefg", 7)
    });
    assert_eq!(bits, 3 + 5 + 3 + 5 + 56);
    let mut r = ReadStream::new(&bytes);
    assert_eq!(r.read_string(7).unwrap(), "");
    assert_eq!(r.read_string(7).unwrap(), "abcdefg");

    // max_len 0: no length bits, still aligned, reads "" from an empty buffer.
    assert_eq!(ReadStream::new(&[]).read_string(0).unwrap(), "");

    let mut buf = [0u8; 32];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_string("abcdefgh", 7)),
        ErrorKind::LengthTooLong { len: 8, max: 7 }
    );
    assert_eq!(
        kind(w.write_string("ab\0c", 7)),
        ErrorKind::NulInString { position: 2 }
    );
    assert_eq!(w.bit_position(), 0);
}

#[test]
fn string_read_refusals() {
    // Length in the headroom: max_len 10 takes 4 bits, 11 is refused.
    assert_eq!(
        kind(ReadStream::new(&craft(&[(11, 4)])).read_string(10)),
        ErrorKind::LengthTooLong { len: 11, max: 10 }
    );
    // NUL inside the payload.
    let nul = craft(&[(3, 3), (0, 5), (b'a' as u64, 8), (0, 8), (b'b' as u64, 8)]);
    assert_eq!(
        kind(ReadStream::new(&nul).read_string(7)),
        ErrorKind::NulInString { position: 1 }
    );
    // Non-zero padding after the length.
    assert_eq!(
        kind(ReadStream::new(&craft(&[(1, 3), (1, 5), (b'a' as u64, 8)])).read_string(7)),
        ErrorKind::NonZeroPadding { found: 1 }
    );
    // The payload runs past the end: checked up front, padding included.
    let e = ReadStream::new(&craft(&[(3, 3), (0, 5), (b'a' as u64, 8)]))
        .read_string(7)
        .unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::EndOfBuffer {
            wanted: 5 + 24,
            remaining: 13
        }
    );
    assert_eq!(e.bit(), 3);
    // Strict UTF-8: invalid byte, overlong, surrogate, above U+10FFFF, truncated,
    // stray continuation; `valid_up_to` says where it broke.
    let bad: [(&[u8], usize); 7] = [
        (&[b'a', 0xff], 1),
        (&[0xc0, 0x80], 0),
        (&[0xe0, 0x80, 0x80], 0),
        (&[b'x', 0xed, 0xa0, 0x80], 1),
        (&[0xf4, 0x90, 0x80, 0x80], 0),
        (&[b'a', b'b', 0xe2, 0x82], 2),
        (&[0x80], 0),
    ];
    for (payload, valid_up_to) in bad {
        let mut fields = vec![(payload.len() as u64, 3), (0, 5)];
        fields.extend(payload.iter().map(|&b| (b as u64, 8)));
        let e = ReadStream::new(&craft(&fields)).read_string(7).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::InvalidUtf8 { valid_up_to },
            "payload {payload:02x?}"
        );
    }
}

#[test]
fn string_lengths_near_usize_max_are_refused_without_allocating() {
    // A huge declared bound lets a 64-bit length through; the bytes are not there.
    let e = ReadStream::new(&[0xff; 9])
        .read_string(usize::MAX)
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }), "{e}");
    let e = ReadStream::new(&craft(&[(1 << 61, 64)]))
        .read_string(usize::MAX)
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }), "{e}");
    let e = ReadStream::new(&[0xff; 9])
        .read_wstring(usize::MAX)
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }), "{e}");
    let e = ReadStream::new(&craft(&[(1 << 59, 64)]))
        .read_wstring(usize::MAX)
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }), "{e}");
    let e = ReadStream::new(&[0xff; 9])
        .read_seq::<u8>(usize::MAX)
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }), "{e}");
}

#[test]
fn wstring_bounds_and_refusals() {
    // An astral character is a surrogate pair: two units toward the bound.
    let (bytes, bits) = write_with(|w| w.write_wstring("A\u{1F600}", 3));
    assert_eq!(bits, 2 + 3 * 32);
    assert_eq!(
        ReadStream::new(&bytes).read_wstring(3).unwrap(),
        "A\u{1F600}"
    );
    let mut buf = [0u8; 64];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_wstring("\u{1F600}\u{1F600}", 3)),
        ErrorKind::LengthTooLong { len: 4, max: 3 }
    );
    assert_eq!(
        kind(w.write_wstring("a\0", 3)),
        ErrorKind::NulInString { position: 1 }
    );

    // max_units 3: 2 bits of count, then 32-bit groups.
    let read = |units: &[u64]| {
        let mut fields = vec![(units.len() as u64, 2)];
        fields.extend(units.iter().map(|&u| (u, 32)));
        ReadStream::new(&craft(&fields)).read_wstring(3)
    };
    assert_eq!(read(&[0x41, 0xd83d, 0xde00]).unwrap(), "A\u{1F600}");
    assert_eq!(
        kind(read(&[0x41, 0x1_0000])),
        ErrorKind::InvalidUtf16 { unit: 0x1_0000 }
    );
    assert_eq!(kind(read(&[0x41, 0])), ErrorKind::InvalidUtf16 { unit: 0 });
    // High surrogate followed by a non-surrogate, low surrogate alone, high surrogate last.
    assert!(matches!(
        kind(read(&[0xd83d, 0x41])),
        ErrorKind::InvalidUtf16 { unit: 0xd83d }
    ));
    assert!(matches!(
        kind(read(&[0xde00, 0x41])),
        ErrorKind::InvalidUtf16 { unit: 0xde00 }
    ));
    assert!(matches!(
        kind(read(&[0x41, 0xd83d])),
        ErrorKind::InvalidUtf16 { unit: 0xd83d }
    ));
    // Count in the headroom (max_units 2 takes 2 bits; 3 is refused).
    assert_eq!(
        kind(ReadStream::new(&craft(&[(3, 2)])).read_wstring(2)),
        ErrorKind::LengthTooLong { len: 3, max: 2 }
    );
    // Units missing.
    assert_eq!(
        kind(ReadStream::new(&craft(&[(2, 2), (0x41, 32)])).read_wstring(3)),
        ErrorKind::EndOfBuffer {
            wanted: 64,
            remaining: 38
        }
    );
}

// ---------------------------------------------------------------- tags and checks

#[test]
fn tags_and_checks() {
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_tag(3, 3)),
        ErrorKind::UnknownTag {
            tag: 3,
            variants: 3
        }
    );
    w.write_tag(2, 3).unwrap();
    w.write_check(0xdead_beef).unwrap();
    assert_eq!(w.bit_position(), 2 + 32);
    let len = w.finish();
    let mut r = ReadStream::new(&buf[..len]);
    assert_eq!(r.read_tag(3).unwrap(), 2);
    assert_eq!(
        kind(r.clone().read_check(0x1234_5678)),
        ErrorKind::CheckMismatch {
            expected: 0x1234_5678,
            found: 0xdead_beef
        }
    );
    r.read_check(0xdead_beef).unwrap();
    // 3 in the 2-bit tag of a 3-variant enum.
    assert_eq!(
        kind(ReadStream::new(&[3]).read_tag(3)),
        ErrorKind::UnknownTag {
            tag: 3,
            variants: 3
        }
    );
}

// ---------------------------------------------------------------- writing past the end

#[test]
fn writing_past_the_end_reports_wanted_remaining_and_bit() {
    let mut buf = [0u8; 2];
    let mut w = WriteStream::new(&mut buf);
    w.write_bits(0x1f, 5).unwrap();
    let e = w.write_int(4000u32, 0, 4095).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull {
            wanted: 12,
            remaining: 11
        }
    );
    assert_eq!(e.bit(), 5);
    assert_eq!(
        e.to_string(),
        "buffer full: wanted 12 bits, room for 11 at bit 5"
    );
    // Nothing was written: the stream is still usable up to the last bit.
    w.write_int(2000u32, 0, 2047).unwrap();
    assert_eq!(w.bit_position(), 16);
    assert_eq!(
        kind(w.write_bool(true)),
        ErrorKind::BufferFull {
            wanted: 1,
            remaining: 0
        }
    );
    w.write_int(9u8, 9, 9).unwrap(); // zero bits still fit
    assert_eq!(w.finish(), 2);
    // 2000 = 0b111_1101_0000: its low 3 bits (0) fill byte 0, the other 8 (0xfa) byte 1.
    assert_eq!(buf, [0x1f, 0xfa]);
}

type WriteOp = Box<dyn Fn(&mut WriteStream<'_>) -> netser::Result<()>>;

#[test]
fn every_primitive_refuses_to_write_past_the_end() {
    let mut empty: [u8; 0] = [];
    let mut w = WriteStream::new(&mut empty);
    assert_eq!(
        kind(w.write_bool(false)),
        ErrorKind::BufferFull {
            wanted: 1,
            remaining: 0
        }
    );

    let mut buf = [0u8; 4];
    let full = |w: &mut WriteStream<'_>| {
        w.write_bits(0, 1).unwrap();
    };
    let cases: Vec<(&str, WriteOp, u64)> = vec![
        ("f64", Box::new(|w| w.write_f64(1.0)), 64),
        ("u128", Box::new(|w| w.write_int(1u128, 0, u128::MAX)), 128),
        (
            "uint_bits 128",
            Box::new(|w| w.write_uint_bits(1u128, 128)),
            128,
        ),
        ("bytes", Box::new(|w| w.write_bytes(&[1, 2, 3, 4])), 7 + 32),
        (
            "quat",
            Box::new(|w| w.write_quat([0.0, 0.0, 0.0, 1.0], 11)),
            35,
        ),
        (
            "int_relative raw",
            Box::new(|w| w.write_int_relative(0, 1 << 20)),
            38,
        ),
        ("check", Box::new(|w| w.write_check(1)), 32),
    ];
    for (name, write, wanted) in cases {
        let mut w = WriteStream::new(&mut buf);
        full(&mut w);
        let e = write(&mut w).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::BufferFull {
                wanted,
                remaining: 31
            },
            "{name}"
        );
        assert_eq!(e.bit(), 1, "{name}");
        assert_eq!(w.bit_position(), 1, "{name}: nothing written");
    }

    // Multi-part values: the error comes from the part that did not fit, and names it.
    let mut w = WriteStream::new(&mut buf);
    full(&mut w);
    let e = w.write_string("hello", 15).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BufferFull { .. }), "{e}");
    let mut w = WriteStream::new(&mut buf);
    full(&mut w);
    let e = w.write_wstring("a", 1).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull {
            wanted: 32,
            remaining: 30
        }
    );
    assert_eq!(e.bit(), 2);
}

// ---------------------------------------------------------------- one bit short, everywhere

type Prim = (
    &'static str,
    fn(&mut WriteStream<'_>) -> netser::Result<()>,
    fn(&mut ReadStream<'_>) -> netser::Result<()>,
);

/// Each primitive with a valid value, and its reader.
fn primitives() -> Vec<Prim> {
    vec![
        ("bool", |w| w.write_bool(true), |r| r.read_bool().map(drop)),
        (
            "bits 13",
            |w| w.write_bits(0x1abc, 13),
            |r| r.read_bits(13).map(drop),
        ),
        (
            "bits 64",
            |w| w.write_bits(u64::MAX, 64),
            |r| r.read_bits(64).map(drop),
        ),
        (
            "int -1000..=1000",
            |w| w.write_int(-999i32, -1000, 1000),
            |r| r.read_int(-1000i32, 1000).map(drop),
        ),
        (
            "u128 full",
            |w| w.write_int(u128::MAX - 1, 0, u128::MAX),
            |r| r.read_int(0u128, u128::MAX).map(drop),
        ),
        (
            "i128 100 bits",
            |w| w.write_int(5i128, 0, (1 << 100) - 1),
            |r| r.read_int(0i128, (1 << 100) - 1).map(drop),
        ),
        (
            "uint_bits 70",
            |w| w.write_uint_bits(3u128 << 68, 70),
            |r| r.read_uint_bits::<u128>(70).map(drop),
        ),
        ("f32", |w| w.write_f32(1.5), |r| r.read_f32().map(drop)),
        ("f64", |w| w.write_f64(-2.5), |r| r.read_f64().map(drop)),
        (
            "compressed",
            |w| w.write_compressed_f32(3.25, &Quantize::new(-10.0, 10.0, 0.001)),
            |r| {
                r.read_compressed_f32(&Quantize::new(-10.0, 10.0, 0.001))
                    .map(drop)
            },
        ),
        (
            "fixed",
            |w| w.write_fixed(-300i32, 8, -100, 100),
            |r| r.read_fixed(8, -100i32, 100).map(drop),
        ),
        (
            "quat",
            |w| w.write_quat([0.5, 0.5, -0.5, 0.5], 10),
            |r| r.read_quat(10).map(drop),
        ),
        (
            "check",
            |w| w.write_check(0x0bad_cafe),
            |r| r.read_check(0x0bad_cafe),
        ),
        ("tag", |w| w.write_tag(40, 41), |r| r.read_tag(41).map(drop)),
        (
            "relative +1",
            |w| w.write_int_relative(10, 11),
            |r| r.read_int_relative(10).map(drop),
        ),
        (
            "relative +300",
            |w| w.write_int_relative(10, 310),
            |r| r.read_int_relative(10).map(drop),
        ),
        (
            "relative raw",
            |w| w.write_int_relative(10, 1 << 30),
            |r| r.read_int_relative(10).map(drop),
        ),
        (
            "wstring",
            |w| w.write_wstring("hé\u{1F600}", 7),
            |r| r.read_wstring(7).map(drop),
        ),
    ]
}

#[test]
fn every_primitive_fails_one_bit_short_and_succeeds_with_exactly_enough() {
    for (name, write, read) in primitives() {
        let width = {
            let mut buf = vec![0u8; 64];
            let mut w = WriteStream::new(&mut buf);
            write(&mut w).unwrap();
            w.bit_position()
        };
        // A prefix that makes the value end one bit into a byte, so that dropping that
        // byte leaves the value exactly one bit short.
        let prefix = (1 + 8 - width % 8) % 8;
        let mut buf = vec![0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        w.write_bits(0, prefix as u32).unwrap();
        write(&mut w).unwrap();
        let total = w.bit_position();
        assert_eq!(total % 8, 1, "{name}");
        let len = w.finish();

        let mut r = ReadStream::new(&buf[..len]);
        r.read_bits(prefix as u32).unwrap();
        read(&mut r).unwrap_or_else(|e| panic!("{name} with exactly enough bits: {e}"));

        let short = &buf[..len - 1];
        let mut r = ReadStream::new(short);
        r.read_bits(prefix as u32).unwrap();
        let e = read(&mut r).unwrap_err();
        match e.kind() {
            ErrorKind::EndOfBuffer { wanted, remaining } => {
                assert!(wanted > remaining, "{name}: {e}");
                assert!(e.bit() >= prefix && e.bit() < total, "{name}: {e}");
            }
            other => panic!("{name}: expected end of buffer, got {other:?}"),
        }
        // Single-part primitives say exactly what they missed: one bit.
        if !name.starts_with("relative") && name != "wstring" {
            assert_eq!(
                e.kind(),
                &ErrorKind::EndOfBuffer {
                    wanted: width,
                    remaining: width - 1
                },
                "{name}"
            );
            assert_eq!(e.bit(), prefix, "{name}");
        }
    }
}

// ---------------------------------------------------------------- sequences and options

#[test]
fn seq_and_option_bounds() {
    // max_len 5: 3 bits of length; 6 and 7 are the headroom.
    assert_eq!(
        kind(ReadStream::new(&craft(&[(6, 3)])).read_seq::<u8>(5)),
        ErrorKind::LengthTooLong { len: 6, max: 5 }
    );
    let mut buf = [0u8; 16];
    let mut w = WriteStream::new(&mut buf);
    assert_eq!(
        kind(w.write_seq(&[1u8; 6], 5)),
        ErrorKind::LengthTooLong { len: 6, max: 5 }
    );
    w.write_seq(&[1u8, 2, 3, 4, 5], 5).unwrap();
    w.write_option(Some(&7u8)).unwrap();
    w.write_option::<u8>(None).unwrap();
    assert_eq!(w.bit_position(), 3 + 40 + 9 + 1);
    let len = w.finish();
    let mut r = ReadStream::new(&buf[..len]);
    assert_eq!(r.read_seq::<u8>(5).unwrap(), [1, 2, 3, 4, 5]);
    assert_eq!(r.read_option::<u8>().unwrap(), Some(7));
    assert_eq!(r.read_option::<u8>().unwrap(), None);
    // An element that fails reports its index.
    let e = ReadStream::new(&craft(&[(2, 3), (1, 8)]))
        .read_seq::<u8>(5)
        .unwrap_err();
    assert_eq!(e.path(), "[1]");
    assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { .. }));
}
