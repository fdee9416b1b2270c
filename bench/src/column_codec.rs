//! An experiment, not a peer: the same bits as netser's derive, written by hand the way
//! a batch path would: each block of entities is converted column by column (every `x`,
//! then every `y`, ...) with netser's column functions, then packed per entity. Its
//! distance to `netser-lean` is what converting by columns gains; the tests prove the
//! bytes are identical.

use core::array::from_fn;

use netser::batch::{Sink, SINK_WORDS};
use netser::bits::{BitReader, BitWriter};
use netser::quat::QuatFormat;
use netser::{Error, ErrorKind, Quantize, Result};

use crate::lean_codec;
use crate::model::{Entity, Position, Snapshot, MAX_ENTITIES, QUAT_BITS};

const POS_XY: Quantize = Quantize::new(-2048.0, 2048.0, 0.01);
const POS_Z: Quantize = Quantize::new(0.0, 512.0, 0.01);
const VELOCITY: Quantize = Quantize::new(-64.0, 64.0, 0.01);
const QUAT: QuatFormat = QuatFormat::new(QUAT_BITS);

/// Entities per block.
const N: usize = 16;

fn too_long(len: usize) -> Error {
    Error::new(
        ErrorKind::LengthTooLong {
            len: len as u64,
            max: MAX_ENTITIES as u64,
        },
        32,
    )
}

/// Encodes `s` into `buf`; returns the length in bytes.
///
/// # Errors
/// As netser's derived encode: a value out of its bounds, a full buffer.
pub fn encode(s: &Snapshot, buf: &mut [u8]) -> Result<usize> {
    let mut w = BitWriter::new(buf);
    let len = s.entities.len();
    if len > MAX_ENTITIES {
        return Err(too_long(len));
    }
    w.write_bits(s.tick as u64 | (len as u64) << 32, 41)?;
    // The block's words, made once (every block overwrites what it reads).
    let mut sink = Sink::<SINK_WORDS>::new();
    // Compiled for the CPU's vector instructions, as the derive's batch path is.
    netser::batch::simd(
        #[inline(always)]
        || -> Result<()> {
            for block in s.entities.chunks(N) {
                // A full block indexes without clamping; the last one repeats its last
                // entity.
                let done = match <&[Entity; N]>::try_from(block) {
                    Ok(full) => encode_block(full, |i| &full[i], &mut sink, &mut w)?,
                    Err(_) => {
                        encode_block(block, |i| &block[i.min(block.len() - 1)], &mut sink, &mut w)?
                    }
                };
                if !done {
                    for e in block {
                        lean_codec::encode_entity(e, &mut w)?;
                    }
                }
            }
            Ok(())
        },
    )?;
    Ok(w.finish())
}

#[inline(always)]
fn column(q: &Quantize, f: impl Fn(usize) -> f32, active: &[bool; N], ok: &mut bool) -> [u32; N] {
    let mut out = [0u32; N];
    *ok &= q.quantize_column(&from_fn(f), active, &mut out);
    out
}

/// Writes a block by columns; `false` (nothing written) when a value needs the scalar
/// path or the room is short (the scalar path names the error).
#[inline(always)]
fn encode_block<'a>(
    block: &'a [Entity],
    at: impl Fn(usize) -> &'a Entity + Copy,
    sink: &mut Sink<SINK_WORDS>,
    w: &mut BitWriter<'_>,
) -> Result<bool> {
    let n = block.len();
    let live: [bool; N] = from_fn(|i| i < n);
    let moving: [bool; N] = from_fn(|i| i < n && !at(i).at_rest);
    let mut ok = true;
    let x = column(&POS_XY, |i| at(i).position.x, &live, &mut ok);
    let y = column(&POS_XY, |i| at(i).position.y, &live, &mut ok);
    let z = column(&POS_Z, |i| at(i).position.z, &live, &mut ok);
    let vx = column(&VELOCITY, |i| at(i).velocity[0], &moving, &mut ok);
    let vy = column(&VELOCITY, |i| at(i).velocity[1], &moving, &mut ok);
    let vz = column(&VELOCITY, |i| at(i).velocity[2], &moving, &mut ok);
    let mut quat = [0u64; N];
    ok &= QUAT.pack_column(&from_fn(|i| at(i).orientation), &live, &mut quat);
    let mut bits = 0;
    for e in block {
        ok &= (e.id <= 4095) & (e.health <= 100);
        bits += if e.at_rest { 109 } else { 151 };
    }
    if !ok || w.bits_available() < bits {
        return Ok(false);
    }
    // Each entity's 151 bits at most, composed at constant shifts by columns: id 12 |
    // x 19 | y 19 | z 16 | quaternion 32 | at_rest 1 (99 bits), then the velocity
    // 3 x 14 when moving, then health 7 | three flags.
    let mut rows = [[0u64; N]; 3];
    for i in 0..N {
        let e = at(i);
        let head = e.id as u128
            | (x[i] as u128) << 12
            | (y[i] as u128) << 31
            | (z[i] as u128) << 50
            | (quat[i] as u128) << 66
            | (e.at_rest as u128) << 98;
        let flags = e.health as u64
            | (e.on_ground as u64) << 7
            | (e.crouching as u64) << 8
            | (e.firing as u64) << 9;
        let v = vx[i] as u64 | (vy[i] as u64) << 14 | (vz[i] as u64) << 28;
        let tail = if moving[i] { v | flags << 42 } else { flags };
        rows[0][i] = head as u64;
        rows[1][i] = (head >> 64) as u64 | tail << 35;
        rows[2][i] = tail >> 29;
    }
    let mut pos = sink.begin_bits(w);
    for i in 0..n.min(N) {
        let len = if moving[i] { 151 } else { 109 };
        pos = sink.put::<3>(pos, [rows[0][i], rows[1][i], rows[2][i]], len, 151);
    }
    sink.write_bits(pos, w)?;
    Ok(true)
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
        return Err(too_long(len));
    }
    let mut entities = Vec::with_capacity(len);
    let mut left = len;
    // Compiled for the CPU's vector instructions, as the derive's batch path is.
    let settled = netser::batch::simd(
        #[inline(always)]
        || {
            while left > 0 {
                let n = left.min(N);
                decode_block(n, &mut r, &mut entities)?;
                left -= n;
            }
            Ok::<(), netser::Error>(())
        },
    );
    if settled.is_err() {
        // The scalar path names the error (this experiment does not rewind: it decodes
        // the packet again from the start).
        return lean_codec::decode(bytes);
    }
    Ok(Snapshot {
        tick: head as u32,
        entities,
    })
}

#[inline(always)]
fn decode_block(n: usize, r: &mut BitReader<'_>, out: &mut Vec<Entity>) -> Result<()> {
    let mut head = [0u128; N];
    let mut tail = [0u64; N];
    let mut moving = [false; N];
    let live: [bool; N] = from_fn(|i| i < n);
    for i in 0..n {
        let lo = r.read_bits(64)?;
        let hi = r.read_bits(35)?;
        head[i] = lo as u128 | (hi as u128) << 64;
        moving[i] = hi >> 34 == 0;
        tail[i] = r.read_bits(if moving[i] { 52 } else { 10 })?;
    }
    let field = |v: u128, at: u32, bits: u32| ((v >> at) as u32) & ((1u32 << bits) - 1);
    let mut ok = true;
    let mut column = |q: &Quantize, ints: [u32; N], active: &[bool; N]| {
        let mut out = [0f32; N];
        ok &= q.dequantize_column(&ints, active, &mut out);
        out
    };
    let x = column(&POS_XY, head.map(|h| field(h, 12, 19)), &live);
    let y = column(&POS_XY, head.map(|h| field(h, 31, 19)), &live);
    let z = column(&POS_Z, head.map(|h| field(h, 50, 16)), &live);
    let vx = column(&VELOCITY, tail.map(|t| (t & 0x3fff) as u32), &moving);
    let vy = column(&VELOCITY, tail.map(|t| (t >> 14 & 0x3fff) as u32), &moving);
    let vz = column(&VELOCITY, tail.map(|t| (t >> 28 & 0x3fff) as u32), &moving);
    let mut quat = [[0f32; 4]; N];
    ok &= QUAT.unpack_column(&head.map(|h| (h >> 66) as u64), &live, &mut quat);
    let health: [u8; N] = from_fn(|i| {
        let t = if moving[i] { tail[i] >> 42 } else { tail[i] };
        (t & 0x7f) as u8
    });
    let flags: [u64; N] = from_fn(|i| {
        if moving[i] {
            tail[i] >> 49
        } else {
            tail[i] >> 7
        }
    });
    for &h in &health[..n] {
        ok &= h <= 100;
    }
    if !ok {
        return Err(Error::new(ErrorKind::Custom("not canonical"), 0));
    }
    out.extend((0..n).map(|i| Entity {
        id: (head[i] & 0xfff) as u16,
        position: Position {
            x: x[i],
            y: y[i],
            z: z[i],
        },
        orientation: quat[i],
        at_rest: !moving[i],
        velocity: if moving[i] {
            [vx[i], vy[i], vz[i]]
        } else {
            [0.0; 3]
        },
        health: health[i],
        on_ground: flags[i] & 1 == 1,
        crouching: flags[i] >> 1 & 1 == 1,
        firing: flags[i] >> 2 & 1 == 1,
    }));
    Ok(())
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
