//! Every primitive at every boundary: min, max, the first value of the headroom
//! (hand-crafted bits), empty buffers, one bit short, non-zero padding, bad UTF-8 and
//! UTF-16, NUL, lengths over the bound, non-finite floats, degenerate quaternions,
//! the `int_relative` tiers at each edge, and write errors (out of range, too long,
//! past the end of the buffer) with the details they report.
//!
//! The numbers (ranged and relative integers, raw bits and floats, quantized floats,
//! fixed point, quaternions) are in `numbers`, the rest (bytes, strings, tags, the
//! buffer's end) in `buffers`.

use netser::bits::BitWriter;
use netser::{
    Decoder, Encoder, ErrorKind, MeasureStream, Num, Quantize, ReadStream, Stream, WriteStream,
};

/// Hand-crafts a packet from `(value, bits)` fields, LSB-first like the streams.
fn craft(fields: &[(u64, u32)]) -> Vec<u8> {
    let mut buf = vec![0u8; 64];
    let mut w = BitWriter::new(&mut buf);
    for &(value, bits) in fields {
        w.write_bits(value, bits).expect("crafted field fits");
    }
    let len = w.finish();
    buf.truncate(len);
    buf
}

/// Writes with `f` into a fresh buffer; returns the bytes and the bits written.
fn write_with(f: impl FnOnce(&mut WriteStream<'_>) -> netser::Result<()>) -> (Vec<u8>, u64) {
    let mut buf = vec![0u8; 256];
    let mut w = WriteStream::new(&mut buf);
    f(&mut w).expect("write");
    let bits = w.bit_position();
    let len = w.finish();
    buf.truncate(len);
    (buf, bits)
}

fn kind(r: netser::Result<impl std::fmt::Debug>) -> ErrorKind {
    r.expect_err("expected an error").kind().clone()
}

fn out_of_range(value: Num, min: Num, max: Num) -> ErrorKind {
    ErrorKind::OutOfRange { value, min, max }
}

fn quantized_out_of_range(value: f64, min: f64, max: f64, step: f64) -> ErrorKind {
    ErrorKind::QuantizedOutOfRange {
        value,
        min,
        max,
        step,
    }
}

mod buffers;
mod numbers;
