//! What a compressed float decodes to encodes again to the same integer: every integer
//! of hundreds of quantizations, the top step above all (once a defect), through the
//! `Quantize` arithmetic, the streams and a derived field.

use netser::{Decoder, Encoder, NetSerialize, Quantize, ReadStream, WriteStream};

/// Range ends and resolutions mixing exact and inexact float32 values, so that
/// `max - min` rounds up, down or not at all.
const MINS: [f32; 12] = [
    -2048.0, -1000.0, -180.0, -100.0, -64.0, -10.0, -3.3, -1.0, -0.3, 0.0, 0.1, 7.7,
];
const MAXS: [f32; 12] = [
    0.1, 0.2, 0.7, 1.0, 3.3, 10.0, 64.0, 77.7, 100.0, 180.0, 360.0, 512.0,
];
const RESS: [f32; 8] = [1.0, 0.5, 0.3, 0.1, 0.05, 0.02, 0.01, 0.001];

/// Largest top integer checked exhaustively here (debug builds): 2^17.
const MAX_STEPS: u32 = 1 << 17;

/// Every quantization of the grid with at most `MAX_STEPS` steps.
fn grid() -> Vec<Quantize> {
    let mut out = Vec::new();
    for min in MINS {
        for max in MAXS {
            for res in RESS {
                if let Some(q) = Quantize::try_new(min, max, res) {
                    if q.max_integer_value() <= MAX_STEPS {
                        out.push(q);
                    }
                }
            }
        }
    }
    out
}

/// The first integer of `q` that does not decode to a value encoding back to it.
fn first_failure(q: &Quantize) -> Option<(u32, f32, String)> {
    (0..=q.max_integer_value()).find_map(|i| {
        let v = q.dequantize(i);
        match q.quantize(v, 0) {
            Ok(j) if j == i => None,
            Ok(j) => Some((i, v, format!("encodes to {j}"))),
            Err(e) => Some((i, v, e.to_string())),
        }
    })
}

#[test]
fn every_integer_of_every_grid_quantization_encodes_back_to_itself() {
    let grid = grid();
    let above = grid.iter().filter(|q| q.top() > q.max()).count();
    // The grid is large and holds many quantizations whose top step decodes above max.
    assert!(grid.len() >= 600, "{} quantizations", grid.len());
    assert!(above >= 80, "{above} with the top step above max");
    for q in &grid {
        assert!(q.round_trips(), "{q:?}");
        if let Some((i, v, why)) = first_failure(q) {
            panic!(
                "[{}, {}] at {}: integer {i} decodes to {v:?}, which {why}",
                q.min(),
                q.max(),
                q.res()
            );
        }
    }
}

#[test]
fn top_steps_above_max_encode_back() {
    for (min, max, res) in [
        (-1.0, 0.1, 0.001),
        (-1.0, 0.7, 0.001),
        (-3.3, 1.0, 0.001),
        (-180.0, 0.1, 0.001),
        (-10.0, 3.3, 0.001),
    ] {
        let q = Quantize::new(min, max, res);
        let top = q.dequantize(q.max_integer_value());
        assert!(top > max, "[{min}, {max}]: the top step decodes to {top}");
        assert_eq!(top, q.top());
        assert_eq!(q.quantize(top, 0).unwrap(), q.max_integer_value());
        // The next float above the top step is still refused.
        let above = f32::from_bits(top.to_bits() + 1);
        assert!(q.quantize(above, 0).is_err(), "{above} accepted");
        assert_eq!(
            q.clamping().quantize(above, 0).unwrap(),
            q.max_integer_value()
        );
    }
}

#[test]
fn the_top_step_bytes_decode_and_encode_to_the_same_bytes() {
    // `4c 04`: integer 1100 in 11 bits, the top step of [-1, 0.1] at 0.001.
    let q = Quantize::new(-1.0, 0.1, 0.001);
    assert_eq!((q.max_integer_value(), q.bits()), (1100, 11));
    let mut r = ReadStream::new(&[0x4c, 0x04]);
    let v = r.read_compressed_f32(&q).unwrap();
    assert_eq!(v, 0.100000024);
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    w.write_compressed_f32(v, &q).unwrap();
    assert_eq!(w.bit_position(), 11);
    let len = w.finish();
    assert_eq!(&buf[..len], &[0x4c, 0x04]);
    // As an f64 field too.
    let mut r = ReadStream::new(&[0x4c, 0x04]);
    let v = r.read_compressed_f64(&q).unwrap();
    let mut w = WriteStream::new(&mut buf);
    w.write_compressed_f64(v, &q).unwrap();
    let len = w.finish();
    assert_eq!(&buf[..len], &[0x4c, 0x04]);
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Level {
    #[net(quantize(min = -1.0, max = 0.1, res = 0.001))]
    level: f32,
}

#[test]
fn a_derived_field_round_trips_its_top_step() {
    let decoded = Level::decode_from_slice(&[0x4c, 0x04]).unwrap();
    assert_eq!(decoded.level, 0.100000024);
    let mut buf = [0u8; 8];
    let len = decoded.encode_to_slice(&mut buf).unwrap();
    assert_eq!(&buf[..len], &[0x4c, 0x04]);
}

#[test]
fn round_trips_is_false_where_integers_alias() {
    // 0.00005 is below float32's spacing at 1001 (0.000061): integers share values.
    let q = Quantize::new(1000.0, 1001.0, 0.00005);
    assert!(!q.round_trips());
    let aliased = (0..q.max_integer_value()).any(|i| q.dequantize(i) == q.dequantize(i + 1));
    assert!(aliased);
    assert!(first_failure(&q).is_some());
    // More than 2^20 steps is outside the proved condition even when it holds.
    assert!(!Quantize::new(0.0, 2048.0, 0.001).round_trips());
    assert!(Quantize::new(0.0, 512.0, 0.001).round_trips());
}
