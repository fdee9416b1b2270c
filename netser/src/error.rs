//! Typed errors: what was expected, what was found, at which bit, in which field.
//!
//! An [`Error`] is one pointer wide so that `Result<(), Error>` stays cheap on the hot
//! path; the details live in a box that is only allocated when something goes wrong.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// `Result` with netser's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// A number in an error message: integers of any width, or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A signed integer (every signed width fits).
    Int(i128),
    /// An unsigned integer (every unsigned width fits).
    Uint(u128),
    /// A floating-point value.
    Float(f64),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(v) => write!(f, "{v}"),
            Num::Uint(v) => write!(f, "{v}"),
            Num::Float(v) => write!(f, "{v}"),
        }
    }
}

/// What went wrong. Every variant carries the expected and the found values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A read needed more bits than the packet has left.
    EndOfBuffer {
        /// Bits the operation needed.
        wanted: u64,
        /// Bits that were left.
        remaining: u64,
    },
    /// A write needed more room than the buffer has left.
    BufferFull {
        /// Bits the operation needed.
        wanted: u64,
        /// Bits of room that were left.
        remaining: u64,
    },
    /// A raw bit count outside 0..=64.
    InvalidBitCount {
        /// The bit count asked for.
        bits: u32,
    },
    /// A value does not fit in the number of bits it is written with.
    ValueTooWide {
        /// The value.
        value: u128,
        /// The number of bits it had to fit in.
        bits: u32,
    },
    /// A value outside its declared range (on write), or an offset read from the
    /// headroom above the range (on read).
    OutOfRange {
        /// The value written, or `min + offset` read.
        value: Num,
        /// The declared minimum.
        min: Num,
        /// The declared maximum.
        max: Num,
    },
    /// A range whose minimum is above its maximum.
    InvalidRange {
        /// The declared minimum.
        min: Num,
        /// The declared maximum.
        max: Num,
    },
    /// NaN or an infinity where only finite values can be encoded.
    NotFinite {
        /// The value.
        value: f64,
    },
    /// Alignment padding that is not all zeros.
    NonZeroPadding {
        /// The padding bits that were read.
        found: u8,
    },
    /// A collection or string longer than its declared maximum.
    LengthTooLong {
        /// The length written or read.
        len: u64,
        /// The declared maximum.
        max: u64,
    },
    /// String bytes that are not valid UTF-8.
    InvalidUtf8 {
        /// Length of the valid prefix, in bytes.
        valid_up_to: usize,
    },
    /// A NUL byte in a string (the reference C++ library cannot carry one).
    NulInString {
        /// Byte position of the NUL.
        position: usize,
    },
    /// Invalid UTF-16 in a wide string (unpaired surrogate, zero, or a unit above 0xFFFF).
    InvalidUtf16 {
        /// The offending 32-bit group.
        unit: u32,
    },
    /// An enum tag that names no variant.
    UnknownTag {
        /// The tag read.
        tag: u64,
        /// The number of variants.
        variants: u64,
    },
    /// A serialize check (magic value between sections) did not match.
    CheckMismatch {
        /// The magic value expected.
        expected: u32,
        /// The value found.
        found: u32,
    },
    /// An `int_relative` whose current value is not greater than the previous one.
    NotIncreasing {
        /// The previous value.
        previous: i64,
        /// The current value.
        current: i64,
    },
    /// A quaternion that cannot be encoded (zero length or non-finite components).
    InvalidQuaternion,
    /// A smallest-three quaternion read whose omitted component would not be the one the
    /// writer omits (it is not the largest, or its square is not left by the other three).
    NonCanonicalQuaternion {
        /// The index of the omitted component read.
        largest: u8,
    },
    /// The packet's CRC32 (computed with the protocol id as an unsent prefix) did not
    /// match: the packet was corrupted, or sent by a peer with another protocol id.
    CrcMismatch {
        /// The CRC32 computed here.
        expected: u32,
        /// The CRC32 in the packet.
        found: u32,
    },
    /// A packet shorter than its header.
    PacketTooShort {
        /// The packet length in bytes.
        len: usize,
        /// The minimum length.
        min: usize,
    },
    /// Bytes left over after a complete packet was read.
    TrailingBytes {
        /// How many bytes were not consumed.
        count: usize,
    },
    /// An error raised by hand-written serialization code.
    Custom(&'static str),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            EndOfBuffer { wanted, remaining } => {
                write!(f, "end of buffer: wanted {wanted} bits, {remaining} left")
            }
            BufferFull { wanted, remaining } => {
                write!(f, "buffer full: wanted {wanted} bits, room for {remaining}")
            }
            InvalidBitCount { bits } => write!(f, "invalid bit count {bits}, expected 0..=64"),
            ValueTooWide { value, bits } => write!(f, "value {value} does not fit in {bits} bits"),
            OutOfRange { value, min, max } => {
                write!(f, "value {value} out of range {min}..={max}")
            }
            InvalidRange { min, max } => write!(f, "invalid range {min}..={max}"),
            NotFinite { value } => write!(f, "value {value} is not finite"),
            NonZeroPadding { found } => write!(f, "non-zero alignment padding {found:#04x}"),
            LengthTooLong { len, max } => write!(f, "length {len} exceeds maximum {max}"),
            InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 after {valid_up_to} valid bytes")
            }
            NulInString { position } => write!(f, "NUL byte in string at byte {position}"),
            InvalidUtf16 { unit } => write!(f, "invalid UTF-16 unit {unit:#x}"),
            UnknownTag { tag, variants } => {
                write!(f, "unknown tag {tag}, expected 0..{variants}")
            }
            CheckMismatch { expected, found } => {
                write!(
                    f,
                    "serialize check failed: expected {expected:#010x}, found {found:#010x}"
                )
            }
            NotIncreasing { previous, current } => {
                write!(
                    f,
                    "relative int {current} is not greater than previous {previous}"
                )
            }
            InvalidQuaternion => write!(f, "quaternion is zero-length or not finite"),
            NonCanonicalQuaternion { largest } => write!(
                f,
                "quaternion's omitted component {largest} is not its largest (not a writer's encoding)"
            ),
            CrcMismatch { expected, found } => write!(
                f,
                "CRC32 mismatch: computed {expected:#010x}, packet has {found:#010x} \
                 (corrupted, or sent with another protocol id)"
            ),
            PacketTooShort { len, min } => {
                write!(
                    f,
                    "packet of {len} bytes is shorter than the {min}-byte header"
                )
            }
            TrailingBytes { count } => write!(f, "{count} trailing bytes after the packet"),
            Custom(msg) => f.write_str(msg),
        }
    }
}

/// One step of the path to the value that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PathSegment {
    Field(&'static str),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq)]
struct ErrorInner {
    kind: ErrorKind,
    bit: u64,
    type_name: Option<&'static str>,
    // Innermost segment first: segments are pushed as the error propagates outward.
    path: Vec<PathSegment>,
}

/// A serialization error: its [`ErrorKind`], the bit offset where it happened and, for
/// derived or annotated code, the path of the field (`Snapshot.entities[3].health`).
///
/// ```
/// use netser::{Error, ErrorKind, Num};
/// let e = Error::new(
///     ErrorKind::OutOfRange { value: Num::Int(150), min: Num::Int(0), max: Num::Int(100) },
///     1234,
/// )
/// .in_field("health")
/// .at_index(3)
/// .in_field("entities")
/// .in_type("Snapshot");
/// assert_eq!(e.path(), "Snapshot.entities[3].health");
/// assert_eq!(e.to_string(), "Snapshot.entities[3].health: value 150 out of range 0..=100 at bit 1234");
/// ```
#[derive(Clone, PartialEq)]
pub struct Error(Box<ErrorInner>);

impl Error {
    /// An error of `kind` at bit offset `bit`.
    #[cold]
    pub fn new(kind: ErrorKind, bit: u64) -> Self {
        Error(Box::new(ErrorInner {
            kind,
            bit,
            type_name: None,
            path: Vec::new(),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The bit offset in the stream where the failing operation started.
    pub fn bit(&self) -> u64 {
        self.0.bit
    }

    /// Adds a field name to the path (call from the inside out).
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.0.path.push(PathSegment::Field(name));
        self
    }

    /// Adds an element index to the path (call from the inside out).
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push(PathSegment::Index(index));
        self
    }

    /// Names the type at the root of the path; the outermost call wins.
    #[cold]
    pub fn in_type(mut self, name: &'static str) -> Self {
        self.0.type_name = Some(name);
        self
    }

    /// The path to the failing value, e.g. `Snapshot.entities[3].health`; empty when the
    /// error came from a bare primitive.
    pub fn path(&self) -> String {
        use core::fmt::Write;
        let mut out = String::new();
        if let Some(t) = self.0.type_name {
            out.push_str(t);
        }
        for seg in self.0.path.iter().rev() {
            match seg {
                PathSegment::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                PathSegment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if !path.is_empty() {
            write!(f, "{path}: ")?;
        }
        write!(f, "{} at bit {}", self.0.kind, self.0.bit)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("bit", &self.0.bit)
            .field("path", &self.path())
            .finish()
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn error_is_one_pointer() {
        assert_eq!(core::mem::size_of::<Error>(), core::mem::size_of::<usize>());
        assert_eq!(
            core::mem::size_of::<Result<()>>(),
            core::mem::size_of::<usize>()
        );
    }

    #[test]
    fn path_without_type_or_fields() {
        let e = Error::new(
            ErrorKind::EndOfBuffer {
                wanted: 8,
                remaining: 3,
            },
            5,
        );
        assert_eq!(e.path(), "");
        assert_eq!(
            e.to_string(),
            "end of buffer: wanted 8 bits, 3 left at bit 5"
        );
    }

    #[test]
    fn outermost_type_name_wins() {
        let e = Error::new(ErrorKind::Custom("x"), 0)
            .in_field("a")
            .in_type("Inner")
            .in_field("b");
        let e = e.in_type("Outer");
        assert_eq!(e.path(), "Outer.b.a");
    }

    #[test]
    fn index_at_root() {
        let e = Error::new(ErrorKind::Custom("x"), 0).at_index(2);
        assert_eq!(e.path(), "[2]");
    }
}
