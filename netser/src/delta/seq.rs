//! Collections relative to the baseline's collection (derived code and the array impl
//! only): a "changed" bit; then, when changed, the length (not for arrays), the indices of
//! the changed elements among those the baseline has too
//! ([`Encoder::write_subset`]: a bit per index, or each index relative to the previous
//! changed one, whichever is shorter), each followed by its changes against the
//! baseline's element at that index; then the elements past the baseline's length,
//! absolute. And the generic "absolute when changed" form of fields without a relative
//! encoding.

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};
use crate::stream::{decode_element, encode_element, Decoder, Encoder, MeasureStream, ReadStream};

/// How a collection's elements go relative to their baselines: closures over the
/// element's own encodings.
pub struct Elements<S, C, A> {
    /// `is_unchanged(value, baseline)`; an error counts as "changed" (writing it then
    /// reports the error at its bit).
    pub same: S,
    /// Writes an element known to differ from its baseline.
    pub changed: C,
    /// Writes an element absolutely.
    pub absolute: A,
}

/// The collection's bounds: `Some(max_len)` for a `Vec` or `Box<[T]>`, whose length is
/// sent; `None` for an array, whose length is the type's.
fn check_len(len: usize, max_len: Option<usize>, bit: u64) -> Result<()> {
    match max_len {
        Some(max) if len > max => Err(Error::new(
            ErrorKind::LengthTooLong {
                len: len as u64,
                max: max as u64,
            },
            bit,
        )),
        _ => Ok(()),
    }
}

/// Which of the elements both have changed; `None` when the whole collection is
/// unchanged (same length, every element unchanged).
fn changes<T>(
    value: &[T],
    baseline: &[T],
    same: &impl Fn(&T, &T) -> Result<bool>,
) -> Option<Vec<bool>> {
    let common = value.len().min(baseline.len());
    let flags: Vec<bool> = (0..common)
        .map(|i| !matches!(same(&value[i], &baseline[i]), Ok(true)))
        .collect();
    if value.len() == baseline.len() && !flags.iter().any(|&c| c) {
        None
    } else {
        Some(flags)
    }
}

/// Whether a collection is unchanged: its length within `max_len`, the baseline's
/// length, and every element unchanged.
///
/// # Errors
/// [`ErrorKind::LengthTooLong`], or an element's error with its index.
pub fn unchanged_from<T>(
    value: &[T],
    baseline: &[T],
    max_len: Option<usize>,
    same: impl Fn(&T, &T) -> Result<bool>,
) -> Result<bool> {
    check_len(value.len(), max_len, 0)?;
    if value.len() != baseline.len() {
        return Ok(false);
    }
    for (i, (v, b)) in value.iter().zip(baseline).enumerate() {
        if !same(v, b).map_err(|e| e.at_index(i))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Writes `value` relative to `baseline` (changed bit included).
///
/// # Errors
/// [`ErrorKind::LengthTooLong`], or an element's error with its index.
pub fn write<E, T, S, C, A>(
    e: &mut E,
    value: &[T],
    baseline: &[T],
    max_len: Option<usize>,
    mut elements: Elements<S, C, A>,
) -> Result<()>
where
    E: Encoder,
    S: Fn(&T, &T) -> Result<bool>,
    C: FnMut(&mut E, &T, &T) -> Result<()>,
    A: FnMut(&mut E, &T) -> Result<()>,
{
    check_len(value.len(), max_len, e.bit_position())?;
    let Some(flags) = changes(value, baseline, &elements.same) else {
        return e.write_bool(false);
    };
    e.write_bool(true)?;
    if let Some(max) = max_len {
        e.write_len(value.len(), max)?;
    }
    let changed = &mut elements.changed;
    e.write_subset(
        flags.len(),
        |i| flags[i],
        |e, i| changed(e, &value[i], &baseline[i]),
    )?;
    for (i, v) in value.iter().enumerate().skip(flags.len()) {
        encode_element(e, i, |e| (elements.absolute)(e, v))?;
    }
    Ok(())
}

/// Reads what [`write`] wrote against `baseline`. It builds at most `max_len` elements
/// (an array: the baseline's length), reserving no more than the baseline's length plus
/// what the input left can hold at `min_bits` per element.
///
/// # Errors
/// As the absolute decoding: [`ErrorKind::LengthTooLong`], an element's error with its
/// index, or the input running out.
#[allow(clippy::too_many_arguments)]
pub fn read<D: Decoder, T>(
    d: &mut D,
    baseline: &[T],
    max_len: Option<usize>,
    min_bits: u64,
    unchanged: impl Fn(&T) -> Result<T>,
    mut changed: impl FnMut(&mut D, &T) -> Result<T>,
    mut absolute: impl FnMut(&mut D) -> Result<T>,
) -> Result<Vec<T>> {
    let start = d.bit_position();
    if !d.read_bool()? {
        return unchanged_all(baseline, max_len, start, &unchanged);
    }
    let len = match max_len {
        Some(max) => d.read_len(max)?,
        None => baseline.len(),
    };
    let common = len.min(baseline.len());
    let fresh = len - common;
    let cap = common
        + fresh.min(match min_bits {
            0 => fresh,
            per => (d.bits_remaining() / per).min(usize::MAX as u64) as usize,
        });
    let mut out: Vec<T> = Vec::with_capacity(cap);
    d.read_subset(common, |d, i| {
        fill_unchanged(&mut out, baseline, i, &unchanged)?;
        out.push(changed(d, &baseline[i])?);
        Ok(())
    })?;
    fill_unchanged(&mut out, baseline, common, &unchanged)?;
    for i in common..len {
        out.push(decode_element(d, i, &mut absolute)?);
    }
    Ok(out)
}

/// Pushes the unchanged elements from `out.len()` up to `end`.
fn fill_unchanged<T>(
    out: &mut Vec<T>,
    baseline: &[T],
    end: usize,
    unchanged: &impl Fn(&T) -> Result<T>,
) -> Result<()> {
    let from = out.len();
    for (j, b) in baseline.iter().enumerate().take(end).skip(from) {
        out.push(unchanged(b).map_err(|e| e.at_index(j))?);
    }
    Ok(())
}

/// What an unchanged collection decodes to: each element unchanged.
///
/// # Errors
/// [`ErrorKind::LengthTooLong`] for a baseline above `max_len`, or an element's error.
pub fn unchanged_all<T>(
    baseline: &[T],
    max_len: Option<usize>,
    bit: u64,
    unchanged: impl Fn(&T) -> Result<T>,
) -> Result<Vec<T>> {
    check_len(baseline.len(), max_len, bit)?;
    baseline
        .iter()
        .enumerate()
        .map(|(i, b)| unchanged(b).map_err(|e| e.at_index(i)))
        .collect()
}

/// A write stream into a growing buffer: the absolute encoding of a field sent whole
/// when it changed, to compare it with the baseline's and to decode the baseline's.
#[derive(Default)]
pub struct BitVec {
    bytes: Vec<u8>,
    bits: u64,
    tracer: crate::trace::NoTrace,
}

impl BitVec {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Encoder for BitVec {
    type Tracer = crate::trace::NoTrace;
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        MeasureStream::new().put_bits(value, bits)?;
        for k in 0..bits {
            let at = self.bits + k as u64;
            if at.is_multiple_of(8) {
                self.bytes.push(0);
            }
            self.bytes[(at / 8) as usize] |= (((value >> k) & 1) as u8) << (at % 8);
        }
        self.bits += bits as u64;
        Ok(())
    }
    fn write_align(&mut self) -> Result<()> {
        self.bits = self.bits.div_ceil(8) * 8;
        Ok(())
    }
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        self.write_align()?;
        self.bytes.extend_from_slice(data);
        self.bits += data.len() as u64 * 8;
        Ok(())
    }
    fn bit_position(&self) -> u64 {
        self.bits
    }
    fn bits_available(&self) -> u64 {
        u64::MAX - self.bits
    }
    fn tracer(&mut self) -> &mut Self::Tracer {
        &mut self.tracer
    }
}

/// Whether two values have the same absolute encoding (for fields sent absolute when
/// changed: strings, maps, sets, `with`, `#[net(absolute)]`).
///
/// # Errors
/// The value's encoding error; a baseline that does not encode counts as changed.
pub fn same_encoding(
    value: impl FnOnce(&mut BitVec) -> Result<()>,
    baseline: impl FnOnce(&mut BitVec) -> Result<()>,
) -> Result<bool> {
    let mut v = BitVec::new();
    value(&mut v)?;
    let mut b = BitVec::new();
    Ok(baseline(&mut b).is_ok() && v.bits == b.bits && v.bytes == b.bytes)
}

/// What an unchanged absolute field decodes to: the baseline, encoded and decoded.
///
/// # Errors
/// The baseline's encoding or decoding error.
pub fn reencode<T>(
    write: impl FnOnce(&mut BitVec) -> Result<()>,
    read: impl FnOnce(&mut ReadStream<'_>) -> Result<T>,
) -> Result<T> {
    let mut w = BitVec::new();
    write(&mut w)?;
    read(&mut ReadStream::new(&w.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WriteStream;

    #[test]
    fn bit_vec_writes_what_write_stream_writes() {
        fn ops<E: Encoder>(e: &mut E) -> Result<()> {
            e.write_bits(3, 2)?;
            e.write_string("abc", 10)?;
            e.write_quat([0.0, 0.0, 0.0, 1.0], 9)?;
            e.write_int(70_000u32, 0, 1 << 20)?;
            e.write_bits(u64::MAX, 64)
        }
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        ops(&mut w).unwrap();
        let len = w.finish();
        let mut v = BitVec::new();
        ops(&mut v).unwrap();
        assert_eq!(v.bytes, &buf[..len]);
    }
}
