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
///
/// ```
/// use netser::trace::{Segment, Trace, TraceValue, Tracer};
/// let mut t = Trace::new();
/// t.enter(Segment::Field("players"));
/// t.enter(Segment::Index(2));
/// t.value(0, 7, TraceValue::Uint(99));
/// assert_eq!(t.entries()[0].path, "players[2]");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// A named field.
    Field(&'static str),
    /// An element of an array or collection.
    Index(usize),
    /// An enum variant.
    Variant(&'static str),
}

/// A primitive's value, as a tracer sees it; [`Display`](core::fmt::Display) gives the
/// text a [`Trace`] records.
///
/// ```
/// use netser::trace::TraceValue;
/// assert_eq!(TraceValue::Uint(7).to_string(), "7");
/// assert_eq!(TraceValue::Str("gg").to_string(), "\"gg\"");
/// assert_eq!(TraceValue::Bytes(&[0xca, 0xfe]).to_string(), "0xcafe");
/// assert_eq!(TraceValue::Check(1).to_string(), "check 0x00000001");
/// ```
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
///
/// ```
/// use netser::trace::{TraceValue, Tracer};
/// use netser::{Encoder, WriteStream};
///
/// /// Remembers the widest primitive.
/// #[derive(Default)]
/// struct Widest(u64);
/// impl Tracer for Widest {
///     fn value(&mut self, start: u64, end: u64, _: TraceValue<'_>) {
///         self.0 = self.0.max(end - start);
///     }
///     fn is_recording(&self) -> bool { true }
/// }
///
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::with_tracer(&mut buf, Widest::default());
/// w.write_bool(true)?;
/// w.write_int(9u16, 0, 1000)?;
/// assert_eq!(w.into_tracer().0, 10);
/// # Ok::<(), netser::Error>(())
/// ```
pub trait Tracer {
    /// Entering a field, element or variant: hand-written code calls it around a field
    /// so that traces (and layouts) show the field's path.
    ///
    /// ```
    /// use netser::trace::{Segment, Trace, Tracer};
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    /// w.tracer().enter(Segment::Field("health"));
    /// w.write_int(99u8, 0, 100)?;
    /// w.tracer().exit();
    /// w.write_bool(true)?;
    /// let trace = w.into_tracer();
    /// assert_eq!(trace.entries()[0].path, "health");
    /// assert_eq!(trace.entries()[1].path, "");
    /// # Ok::<(), netser::Error>(())
    /// ```
    #[inline(always)]
    fn enter(&mut self, segment: Segment) {
        let _ = segment;
    }
    /// Leaving the innermost segment (see [`enter`](Self::enter)).
    ///
    /// ```
    /// use netser::trace::{Segment, Trace, TraceValue, Tracer};
    /// let mut t = Trace::new();
    /// t.enter(Segment::Variant("Hit"));
    /// t.enter(Segment::Field("damage"));
    /// t.exit();
    /// t.value(0, 1, TraceValue::Bool(true));
    /// assert_eq!(t.entries()[0].path, "Hit");
    /// ```
    #[inline(always)]
    fn exit(&mut self) {}
    /// A primitive took bits `start..end`.
    ///
    /// ```
    /// use netser::trace::{Trace, TraceValue, Tracer};
    /// let mut t = Trace::new();
    /// t.value(8, 15, TraceValue::Int(-3));
    /// assert_eq!((t.entries()[0].start, t.entries()[0].bits), (8, 7));
    /// assert_eq!(t.entries()[0].value, "-3");
    /// ```
    #[inline(always)]
    fn value(&mut self, start: u64, end: u64, value: TraceValue<'_>) {
        let _ = (start, end, value);
    }
    /// Whether this tracer records anything (lets callers skip formatting work).
    ///
    /// ```
    /// use netser::trace::{NoTrace, Trace, Tracer};
    /// assert!(!NoTrace.is_recording());
    /// assert!(Trace::new().is_recording());
    /// ```
    #[inline(always)]
    fn is_recording(&self) -> bool {
        false
    }
    /// Whether this tracer ignores every event, so that derived code may skip them
    /// (it then packs runs of fixed-width fields into few writes).
    #[doc(hidden)]
    const IGNORES_EVENTS: bool = false;
}

/// The tracer that records nothing, at no cost: the default of every stream.
///
/// ```
/// use netser::trace::NoTrace;
/// use netser::WriteStream;
/// let mut buf = [0u8; 4];
/// // `WriteStream::new(buf)` is `WriteStream::with_tracer(buf, NoTrace)`.
/// let w: WriteStream<'_, NoTrace> = WriteStream::new(&mut buf);
/// assert_eq!(w.finish(), 0);
/// ```
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
///
/// ```
/// let layout = netser::trace::layout(&(300u16, false))?;
/// let e = &layout.entries()[1];
/// assert_eq!((e.path.as_str(), e.start, e.bits, e.value.as_str()), ("", 16, 1, "false"));
/// # Ok::<(), netser::Error>(())
/// ```
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

/// A recording tracer: the bit layout of everything a stream wrote or read. Its
/// [`Display`](core::fmt::Display) prints a table.
///
/// ```
/// use netser::trace::Trace;
/// use netser::{NetSerialize, ReadStream};
///
/// #[derive(NetSerialize)]
/// struct Shot { #[net(range = 0..=100)] damage: u8, critical: bool }
///
/// let bytes = Shot { damage: 40, critical: true }.to_vec()?;
/// let mut r = ReadStream::with_tracer(&bytes, Trace::new());
/// Shot::decode(&mut r)?;
/// let trace = r.into_tracer();
/// assert_eq!(
///     trace.to_string(),
///     "   bit  bits  field                            value\n     0     7  damage                           40\n     7     1  critical                         true\n"
/// );
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    stack: Vec<Segment>,
    entries: Vec<TraceEntry>,
}

impl Trace {
    /// An empty trace.
    ///
    /// ```
    /// let t = netser::trace::Trace::new();
    /// assert!(t.entries().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The recorded entries, in stream order.
    ///
    /// ```
    /// let layout = netser::trace::layout(&[1u8, 2, 3])?;
    /// let starts: Vec<u64> = layout.entries().iter().map(|e| e.start).collect();
    /// assert_eq!(starts, [0, 8, 16]);
    /// assert_eq!(layout.entries()[2].path, "[2]");
    /// # Ok::<(), netser::Error>(())
    /// ```
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
