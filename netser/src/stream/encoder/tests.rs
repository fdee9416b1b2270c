//! The encoder's own tests; every primitive is tested through the streams in
//! `tests/tests/primitives`.

use super::*;
use crate::trace::Trace;
use crate::WriteStream;

#[test]
fn a_string_that_does_not_fit_writes_nothing() {
    let mut buf = [0u8; 4];
    let mut w = WriteStream::new(&mut buf);
    w.write_bits(1, 3).unwrap();
    let e = w.write_string("hello", 15).unwrap_err();
    // 4 bits of length, 1 of padding, 40 of bytes, with 29 bits of room.
    assert_eq!(
        e.kind(),
        &ErrorKind::BufferFull {
            wanted: 45,
            remaining: 29
        }
    );
    assert_eq!(w.bit_position(), 3);
    w.write_string("hi", 15).unwrap();
    assert_eq!(w.bit_position(), 24);
}

#[test]
fn the_trace_path_unwinds_when_an_element_fails() {
    let mut buf = [0u8; 16];
    let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    // 128 bits of room: the length (4 bits) and three u32s fit, the fourth does not.
    let items = [7u32; 5];
    let e = w.write_seq(&items, 8).unwrap_err();
    assert_eq!(e.path(), "[3]");
    w.write_bool(true).unwrap();
    let trace = w.into_tracer();
    assert_eq!(trace.entries().last().unwrap().path, "");
}
