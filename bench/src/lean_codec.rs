//! An experiment, not a peer: the same bits as netser's derive, written through netser's
//! public `BitWriter`/`BitReader` with each run of fields coalesced into one 64-bit write
//! (5 writes per moving entity instead of 17) and one range check per quantized value.
//! Its distance to `netser` is what a derive that coalesces fixed-width runs, and leaner
//! primitives, would gain; the tests prove the bytes are identical.

use netser::bits::{BitReader, BitWriter};
use netser::{Error, ErrorKind, Num, Quantize, Result};

use crate::model::{Entity, Position, Snapshot, MAX_ENTITIES, QUAT_BITS};

const POS_XY: Quantize = Quantize::new(-2048.0, 2048.0, 0.01);
const POS_Z: Quantize = Quantize::new(0.0, 512.0, 0.01);
const VELOCITY: Quantize = Quantize::new(-64.0, 64.0, 0.01);

fn out_of_range(value: u128, max: u128, bit: u64) -> Error {
    let kind = ErrorKind::OutOfRange {
        value: Num::Uint(value),
        min: Num::Uint(0),
        max: Num::Uint(max),
    };
    Error::new(kind, bit)
}

/// `Quantize::quantize` for in-range values, with the same float32 steps, behind a
/// single comparison (which NaN fails too).
#[inline(always)]
fn quantize(q: &Quantize, value: f32, bit: u64) -> Result<u64> {
    if !(value >= q.min() && value <= q.max()) {
        return q.quantize(value, bit).map(u64::from); // the typed error
    }
    let n = (value - q.min()) / (q.max() - q.min());
    let scaled = n * q.max_integer_value() as f32;
    Ok(((scaled + 0.5) as u32).min(q.max_integer_value()) as u64)
}

#[inline(always)]
fn dequantize(q: &Quantize, integer: u64, bit: u64) -> Result<f32> {
    if integer > q.max_integer_value() as u64 {
        return Err(out_of_range(
            integer as u128,
            q.max_integer_value() as u128,
            bit,
        ));
    }
    Ok(q.dequantize(integer as u32))
}

/// One entity, field by field as the runs go (also the column experiment's scalar path).
///
/// # Errors
/// A value out of its bounds, a full buffer.
pub fn encode_entity(e: &Entity, w: &mut BitWriter<'_>) -> Result<()> {
    let bit = w.bits_written();
    if e.id > 4095 {
        return Err(out_of_range(e.id as u128, 4095, bit));
    }
    if e.health > 100 {
        return Err(out_of_range(e.health as u128, 100, bit));
    }
    // id 12 | x 19 | y 19
    let x = quantize(&POS_XY, e.position.x, bit)?;
    let y = quantize(&POS_XY, e.position.y, bit)?;
    w.write_bits(e.id as u64 | x << 12 | y << 31, 50)?;
    // z 16 | largest 2 | three 10-bit components | at_rest 1
    let z = quantize(&POS_Z, e.position.z, bit)?;
    let (largest, [a, b, c]) = netser::quat::pack(e.orientation, QUAT_BITS, bit)?;
    let run = z
        | (largest as u64) << 16
        | (a as u64) << 18
        | (b as u64) << 28
        | (c as u64) << 38
        | (e.at_rest as u64) << 48;
    w.write_bits(run, 49)?;
    if !e.at_rest {
        let [vx, vy, vz] = e.velocity;
        let v = quantize(&VELOCITY, vx, bit)?
            | quantize(&VELOCITY, vy, bit)? << 14
            | quantize(&VELOCITY, vz, bit)? << 28;
        w.write_bits(v, 42)?;
    }
    let tail = e.health as u64
        | (e.on_ground as u64) << 7
        | (e.crouching as u64) << 8
        | (e.firing as u64) << 9;
    w.write_bits(tail, 10)
}

fn decode_entity(r: &mut BitReader<'_>) -> Result<Entity> {
    let bit = r.bits_read();
    let run = r.read_bits(50)?;
    let id = (run & 0xFFF) as u16;
    let x = dequantize(&POS_XY, run >> 12 & 0x7_FFFF, bit)?;
    let y = dequantize(&POS_XY, run >> 31 & 0x7_FFFF, bit)?;
    let run = r.read_bits(49)?;
    let z = dequantize(&POS_Z, run & 0xFFFF, bit)?;
    let small = [run >> 18 & 0x3FF, run >> 28 & 0x3FF, run >> 38 & 0x3FF].map(|c| c as u32);
    let orientation = netser::quat::unpack((run >> 16 & 3) as u32, small, QUAT_BITS, bit)?;
    let at_rest = run >> 48 & 1 == 1;
    let mut velocity = [0.0; 3];
    if !at_rest {
        let v = r.read_bits(42)?;
        for (k, out) in velocity.iter_mut().enumerate() {
            *out = dequantize(&VELOCITY, v >> (14 * k) & 0x3FFF, bit)?;
        }
    }
    let tail = r.read_bits(10)?;
    let health = (tail & 0x7F) as u8;
    if health > 100 {
        return Err(out_of_range(health as u128, 100, bit));
    }
    Ok(Entity {
        id,
        position: Position { x, y, z },
        orientation,
        at_rest,
        velocity,
        health,
        on_ground: tail >> 7 & 1 == 1,
        crouching: tail >> 8 & 1 == 1,
        firing: tail >> 9 & 1 == 1,
    })
}

/// Encodes `s` into `buf`; returns the length in bytes.
///
/// # Errors
/// As netser's derived encode: a value out of its bounds, a full buffer.
pub fn encode(s: &Snapshot, buf: &mut [u8]) -> Result<usize> {
    let mut w = BitWriter::new(buf);
    let len = s.entities.len();
    if len > MAX_ENTITIES {
        return Err(Error::new(
            ErrorKind::LengthTooLong {
                len: len as u64,
                max: MAX_ENTITIES as u64,
            },
            32,
        ));
    }
    w.write_bits(s.tick as u64 | (len as u64) << 32, 41)?;
    for e in &s.entities {
        encode_entity(e, &mut w)?;
    }
    Ok(w.finish())
}

/// Decodes a snapshot.
///
/// # Errors
/// As netser's derived decode: truncated input, a value out of its bounds.
pub fn decode(bytes: &[u8]) -> Result<Snapshot> {
    let mut r = BitReader::new(bytes);
    let head = r.read_bits(41)?;
    let len = (head >> 32) as usize;
    if len > MAX_ENTITIES {
        return Err(Error::new(
            ErrorKind::LengthTooLong {
                len: len as u64,
                max: MAX_ENTITIES as u64,
            },
            32,
        ));
    }
    let mut entities = Vec::with_capacity(len);
    for _ in 0..len {
        entities.push(decode_entity(&mut r)?);
    }
    Ok(Snapshot {
        tick: head as u32,
        entities,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment_checks;

    #[test]
    fn same_bytes_and_values_as_the_derive() {
        experiment_checks::same_bytes_and_values_as_the_derive(encode, decode);
    }

    #[test]
    fn bad_input_is_refused_like_the_derive() {
        experiment_checks::bad_input_is_refused_like_the_derive(encode, decode);
    }
}
