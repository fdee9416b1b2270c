//! Tracing a stream: which value went to which bits.
//!
//! Every stream carries a [`Tracer`]. The default, [`NoTrace`], does nothing and compiles
//! away. A [`Trace`] records one [`TraceEntry`] per primitive, with the field path that
//! derived code (or hand-written code, through [`Tracer::enter`]/[`Tracer::exit`]) pushes
//! around each field. Comparing the trace of a write with the trace of a read shows where
//! the two desynchronise; [`layout`] prints the bit layout of any value.
//!
//! ```
//! use netser::{trace::Trace, Encoder, WriteStream};
//! let mut buf = [0u8; 16];
//! let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
//! w.write_int(7u32, 0, 100)?;
//! w.write_bool(true)?;
//! let trace = w.into_tracer();
//! assert_eq!(trace.entries()[0].bits, 7);
//! assert_eq!(trace.entries()[1].start, 7);
//! assert_eq!(trace.entries()[1].value, "true");
//! # Ok::<(), netser::Error>(())
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// One step of a field path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// A named field.
    Field(&'static str),
    /// An element of an array or collection.
    Index(usize),
    /// An enum variant.
    Variant(&'static str),
}

/// A primitive's value, as a tracer sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum TraceValue<'a> {
    /// Raw bits.
    Bits(u64),
    /// An unsigned integer.
    Uint(u128),
    /// A signed integer.
    Int(i128),
    /// A bool.
    Bool(bool),
    /// A float32 (raw or compressed).
    F32(f32),
    /// A float64.
    F64(f64),
    /// A string.
    Str(&'a str),
    /// A byte run.
    Bytes(&'a [u8]),
    /// A collection length.
    Len(usize),
    /// An enum tag.
    Tag(u32),
    /// A serialize check's magic value.
    Check(u32),
    /// A quaternion.
    Quat([f32; 4]),
    /// Alignment padding.
    Align,
}

impl fmt::Display for TraceValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceValue::Bits(v) => write!(f, "{v:#x}"),
            TraceValue::Uint(v) => write!(f, "{v}"),
            TraceValue::Int(v) => write!(f, "{v}"),
            TraceValue::Bool(v) => write!(f, "{v}"),
            TraceValue::F32(v) => write!(f, "{v:?}"),
            TraceValue::F64(v) => write!(f, "{v:?}"),
            TraceValue::Str(s) => write!(f, "{s:?}"),
            TraceValue::Bytes(b) => {
                f.write_str("0x")?;
                for byte in b.iter() {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
            TraceValue::Len(n) => write!(f, "len {n}"),
            TraceValue::Tag(t) => write!(f, "tag {t}"),
            TraceValue::Check(m) => write!(f, "check {m:#010x}"),
            TraceValue::Quat(q) => write!(f, "quat {q:?}"),
            TraceValue::Align => f.write_str("align"),
        }
    }
}

/// Receives a stream's events. All methods default to doing nothing.
pub trait Tracer {
    /// Entering a field, element or variant.
    #[inline(always)]
    fn enter(&mut self, segment: Segment) {
        let _ = segment;
    }
    /// Leaving the innermost segment.
    #[inline(always)]
    fn exit(&mut self) {}
    /// A primitive took bits `start..end`.
    #[inline(always)]
    fn value(&mut self, start: u64, end: u64, value: TraceValue<'_>) {
        let _ = (start, end, value);
    }
    /// Whether this tracer records anything (lets callers skip formatting work).
    #[inline(always)]
    fn is_recording(&self) -> bool {
        false
    }
    /// Whether this tracer ignores every event, so that derived code may skip them
    /// (it then packs runs of fixed-width fields into few writes).
    #[doc(hidden)]
    const IGNORES_EVENTS: bool = false;
}

/// The tracer that records nothing, at no cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoTrace;

impl Tracer for NoTrace {
    const IGNORES_EVENTS: bool = true;
}

impl<T: Tracer + ?Sized> Tracer for &mut T {
    #[inline(always)]
    fn enter(&mut self, segment: Segment) {
        (**self).enter(segment)
    }
    #[inline(always)]
    fn exit(&mut self) {
        (**self).exit()
    }
    #[inline(always)]
    fn value(&mut self, start: u64, end: u64, value: TraceValue<'_>) {
        (**self).value(start, end, value)
    }
    #[inline(always)]
    fn is_recording(&self) -> bool {
        (**self).is_recording()
    }
    const IGNORES_EVENTS: bool = T::IGNORES_EVENTS;
}

/// One recorded primitive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// Field path, e.g. `entities[3].health` (empty at the top level).
    pub path: String,
    /// First bit.
    pub start: u64,
    /// Number of bits.
    pub bits: u64,
    /// The value, formatted.
    pub value: String,
}

/// A recording tracer: the bit layout of everything a stream wrote or read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    stack: Vec<Segment>,
    entries: Vec<TraceEntry>,
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The recorded entries, in stream order.
    pub fn entries(&self) -> &[TraceEntry] {
        &self.entries
    }

    /// The first entry where `self` and `other` differ (path, position, width or value),
    /// by index: the place where a write and a read desynchronised.
    ///
    /// ```
    /// use netser::trace::{Trace, Tracer, TraceValue};
    /// let mut a = Trace::new();
    /// let mut b = Trace::new();
    /// a.value(0, 3, TraceValue::Uint(5));
    /// b.value(0, 4, TraceValue::Uint(5));
    /// assert_eq!(a.first_difference(&b), Some(0));
    /// ```
    pub fn first_difference(&self, other: &Trace) -> Option<usize> {
        let n = self.entries.len().min(other.entries.len());
        (0..n)
            .find(|&i| self.entries[i] != other.entries[i])
            .or((self.entries.len() != other.entries.len()).then_some(n))
    }

    fn path(&self) -> String {
        use core::fmt::Write;
        let mut out = String::new();
        for seg in &self.stack {
            match seg {
                Segment::Field(name) | Segment::Variant(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Segment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }
}

impl Tracer for Trace {
    fn enter(&mut self, segment: Segment) {
        self.stack.push(segment);
    }
    fn exit(&mut self) {
        self.stack.pop();
    }
    fn value(&mut self, start: u64, end: u64, value: TraceValue<'_>) {
        let path = self.path();
        self.entries.push(TraceEntry {
            path,
            start,
            bits: end - start,
            value: value.to_string(),
        });
    }
    fn is_recording(&self) -> bool {
        true
    }
}

/// Prints as a table: bit offset, width, path and value, one primitive per line.
impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:>6} {:>5}  {:<32} value", "bit", "bits", "field")?;
        for e in &self.entries {
            let path = if e.path.is_empty() {
                "."
            } else {
                e.path.as_str()
            };
            writeln!(f, "{:>6} {:>5}  {:<32} {}", e.start, e.bits, path, e.value)?;
        }
        Ok(())
    }
}

/// The bit layout of `value` as its encoder writes it: a [`Trace`] of a
/// [`MeasureStream`](crate::MeasureStream), so no buffer is needed.
///
/// # Errors
/// Whatever encoding `value` returns (an out-of-range field, say).
///
/// ```
/// let layout = netser::trace::layout(&(7u8, true))?;
/// assert_eq!(layout.entries().len(), 2);
/// println!("{layout}");
/// # Ok::<(), netser::Error>(())
/// ```
pub fn layout<T: crate::NetSerialize>(value: &T) -> crate::Result<Trace> {
    let mut m = crate::MeasureStream::with_tracer(Trace::new());
    value.encode(&mut m)?;
    Ok(m.into_tracer())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_nest_and_unwind() {
        let mut t = Trace::new();
        t.enter(Segment::Field("entities"));
        t.enter(Segment::Index(3));
        t.enter(Segment::Field("health"));
        t.value(10, 17, TraceValue::Uint(99));
        t.exit();
        t.exit();
        t.exit();
        t.value(17, 18, TraceValue::Bool(false));
        assert_eq!(t.entries()[0].path, "entities[3].health");
        assert_eq!(t.entries()[0].bits, 7);
        assert_eq!(t.entries()[1].path, "");
    }

    #[test]
    fn difference_in_length() {
        let mut a = Trace::new();
        a.value(0, 1, TraceValue::Bool(true));
        let b = Trace::new();
        assert_eq!(a.first_difference(&b), Some(0));
        assert_eq!(a.first_difference(&a.clone()), None);
    }
}
