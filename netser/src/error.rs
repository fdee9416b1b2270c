//! Typed errors: what was expected, what was found, at which bit, in which field.
//!
//! An [`Error`] is one pointer wide so that `Result<(), Error>` stays cheap on the hot
//! path; the details live in a box that is only allocated when something goes wrong.
//!
//! ```
//! use netser::{ErrorKind, NetSerialize};
//!
//! #[derive(NetSerialize, Debug)]
//! struct Input { #[net(range = -1..=1)] steer: i8, #[net(bits = 4)] buttons: u8 }
//!
//! // Writing out of bounds is an error, like reading: nothing is clamped silently.
//! let e = Input { steer: 2, buttons: 0 }.to_vec().unwrap_err();
//! assert_eq!(e.to_string(), "Input.steer: value 2 out of range -1..=1 at bit 0");
//! // A packet cut short says how many bits were missing, where, in which field.
//! let e = Input::decode_from_slice(&[]).unwrap_err();
//! assert!(matches!(e.kind(), ErrorKind::EndOfBuffer { wanted: 2, remaining: 0 }));
//! assert_eq!(e.path(), "Input.steer");
//! ```

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// `Result` with netser's [`Error`].
///
/// ```
/// fn health(bytes: &[u8]) -> netser::Result<u8> {
///     use netser::Decoder;
///     netser::ReadStream::new(bytes).read_int(0u8, 100)
/// }
/// assert_eq!(health(&[99])?, 99);
/// assert!(health(&[101]).is_err());
/// # Ok::<(), netser::Error>(())
/// ```
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// A number in an error message: integers of any width, or a float.
///
/// ```
/// use netser::Num;
/// assert_eq!(Num::Int(-5).to_string(), "-5");
/// assert_eq!(Num::Uint(u128::MAX).to_string(), "340282366920938463463374607431768211455");
/// assert_eq!(Num::Float(0.5).to_string(), "0.5");
/// ```
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
///
/// ```
/// use netser::{Decoder, ErrorKind, Num, ReadStream};
/// // 7 bits hold 0..=127; the range 0..=100 refuses the headroom above it.
/// let e = ReadStream::new(&[127]).read_int(0u8, 100).unwrap_err();
/// assert_eq!(
///     e.kind(),
///     &ErrorKind::OutOfRange { value: Num::Uint(127), min: Num::Uint(0), max: Num::Uint(100) }
/// );
/// match e.kind() {
///     ErrorKind::EndOfBuffer { .. } | ErrorKind::CrcMismatch { .. } => { /* drop the packet */ }
///     other => println!("a peer sent a bad value: {other}"),
/// }
/// ```
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
    /// A bit count outside what the call takes, `min..=max`: 0 to 64 for raw bits, up to
    /// the type's width for `uint_bits` (its width less the sign bit for a signed type),
    /// 2 to 20 per component for a quaternion.
    InvalidBitCount {
        /// The bit count asked for.
        bits: u32,
        /// The fewest bits the call takes.
        min: u32,
        /// The most bits the call takes.
        max: u32,
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
    /// A quantized float outside its range, in real units on write and on read: on
    /// write, the value given; on read, the value the integer read from the headroom
    /// above the range stands for (`min + integer * step`). Build it with
    /// [`ErrorKind::quantized_write`] or [`ErrorKind::quantized_read`].
    QuantizedOutOfRange {
        /// The value written, or the value read.
        value: f64,
        /// The quantization's minimum.
        min: f64,
        /// The quantization's maximum.
        max: f64,
        /// The distance between two values on the wire: `res`, or a little less when
        /// `res` does not divide the range.
        step: f64,
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
    /// A packet shorter than the smallest packet that can be valid: the 4-byte CRC32,
    /// the smallest value of the packet's type and the 4-byte end-of-packet check. A
    /// truncated packet, seen before its CRC32 is computed.
    PacketTooShort {
        /// The packet length in bytes.
        len: usize,
        /// The smallest valid length in bytes.
        min: usize,
    },
    /// Bytes left over after a complete packet was read.
    TrailingBytes {
        /// How many bytes were not consumed.
        count: usize,
    },
    /// A delta read that leads outside its field's range: the baseline's integer level
    /// (a ranged integer's offset from its minimum, a quantized float's integer, a
    /// smallest-three component) plus the delta read is below 0 or above `max`.
    DeltaOutOfRange {
        /// The baseline's level.
        baseline: u128,
        /// The delta read.
        delta: i128,
        /// The highest level of the field.
        max: u128,
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
            InvalidBitCount { bits, min, max } => {
                write!(f, "invalid bit count {bits}, expected {min}..={max}")
            }
            ValueTooWide { value, bits } => write!(f, "value {value} does not fit in {bits} bits"),
            OutOfRange { value, min, max } => {
                write!(f, "value {value} out of range {min}..={max}")
            }
            QuantizedOutOfRange {
                value,
                min,
                max,
                step,
            } => write!(
                f,
                "value {value} out of range {min}..={max} (quantized in steps of {step})"
            ),
            InvalidRange { min, max } => {
                write!(f, "invalid range {min}..={max}: its minimum is above its maximum")
            }
            NotFinite { value } => write!(f, "value {value} is not finite"),
            NonZeroPadding { found } => write!(f, "non-zero alignment padding {found:#04x}"),
            LengthTooLong { len, max } => {
                write!(f, "length {len} exceeds the declared max_len {max}")
            }
            InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 after {valid_up_to} valid bytes")
            }
            NulInString { position } => write!(f, "NUL byte in string at byte {position}"),
            InvalidUtf16 { unit } => write!(f, "invalid UTF-16 unit {unit:#x}"),
            UnknownTag { tag, variants: 0 } => write!(f, "unknown tag {tag}: the enum has no variants"),
            UnknownTag { tag, variants } => write!(
                f,
                "unknown tag {tag}, expected 0..={} ({variants} variants)",
                variants - 1
            ),
            CheckMismatch { expected, found } => {
                if *expected == crate::schema::END_OF_PACKET {
                    write!(
                        f,
                        "end-of-packet check failed: expected {expected:#010x}, found {found:#010x}; \
                         the packet was read as another type than it was written as, or the two \
                         sides disagree on the schema (compare their SCHEMA_HASH; use it as the \
                         protocol id to refuse such packets up front)"
                    )
                } else {
                    write!(
                        f,
                        "serialize check failed: expected {expected:#010x}, found {found:#010x}; \
                         reading went out of step with writing before this point: the packet \
                         type or its schema differs between the two sides, or a hand-written \
                         serialize function reads differently from how it writes"
                    )
                }
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
                 (corrupted, truncated, or sent with another protocol id)"
            ),
            PacketTooShort { len, min } => {
                write!(
                    f,
                    "packet of {len} bytes is shorter than the smallest valid packet, {min} bytes \
                     (CRC32 header, data and end-of-packet check): truncated"
                )
            }
            TrailingBytes { count } => write!(f, "{count} trailing bytes after the packet"),
            DeltaOutOfRange {
                baseline,
                delta,
                max,
            } => write!(
                f,
                "delta {delta:+} from level {baseline} leads outside the levels 0..={max}"
            ),
            Custom(msg) => f.write_str(msg),
        }
    }
}

impl ErrorKind {
    /// Whether the error's bit offset tells the user anything: not for a verdict on the
    /// whole packet (its CRC32, its length).
    fn has_bit_offset(&self) -> bool {
        !matches!(
            self,
            ErrorKind::CrcMismatch { .. } | ErrorKind::PacketTooShort { .. }
        )
    }
}

/// `v` rounded to `f32` precision and printed as `f32` prints it, so that quantization
/// parameters (all `f32`) read as they were written.
pub(crate) fn shortest(v: f64) -> f64 {
    let single = v as f32;
    // `f32` to `f64` keeps the binary value (0.1f32 is 0.10000000149...); go through the
    // shortest decimal that `f32` round-trips instead.
    let mut buf = alloc::string::String::new();
    let _ = fmt::write(&mut buf, format_args!("{single}"));
    buf.parse().unwrap_or(v)
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
    ///
    /// ```
    /// use netser::{Error, ErrorKind};
    /// // A hand-written decoder refusing a value of its own.
    /// let e = Error::new(ErrorKind::Custom("team id reserved"), 12);
    /// assert_eq!(e.to_string(), "team id reserved at bit 12");
    /// ```
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
    ///
    /// ```
    /// use netser::{Decoder, ErrorKind, ReadStream};
    /// let e = ReadStream::new(&[]).read_bool().unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::EndOfBuffer { wanted: 1, remaining: 0 });
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The bit offset in the stream where the failing operation started.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0xff]);
    /// r.read_bits(6)?;
    /// let e = r.read_bits(4).unwrap_err(); // the read started at bit 6
    /// assert_eq!(e.bit(), 6);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn bit(&self) -> u64 {
        self.0.bit
    }

    /// Adds a field name to the path (call from the inside out).
    ///
    /// ```
    /// use netser::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::Custom("bad"), 0).in_field("health");
    /// assert_eq!(e.path(), "health");
    /// ```
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.0.path.push(PathSegment::Field(name));
        self
    }

    /// Adds an element index to the path (call from the inside out).
    ///
    /// ```
    /// use netser::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::Custom("bad"), 0).at_index(3).in_field("players");
    /// assert_eq!(e.path(), "players[3]");
    /// ```
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push(PathSegment::Index(index));
        self
    }

    /// Names the type at the root of the path; the outermost call wins.
    ///
    /// ```
    /// use netser::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::Custom("bad"), 0).in_field("x").in_type("Snapshot");
    /// assert_eq!(e.to_string(), "Snapshot.x: bad at bit 0");
    /// ```
    #[cold]
    pub fn in_type(mut self, name: &'static str) -> Self {
        self.0.type_name = Some(name);
        self
    }

    /// The path to the failing value, e.g. `Snapshot.entities[3].health`; empty when the
    /// error came from a bare primitive.
    ///
    /// ```
    /// use netser::NetSerialize;
    /// #[derive(NetSerialize)]
    /// struct Player { #[net(range = 0..=100)] health: u8 }
    /// #[derive(NetSerialize)]
    /// struct Snapshot { #[net(max_len = 8)] players: Vec<Player> }
    ///
    /// let bad = Snapshot { players: vec![Player { health: 50 }, Player { health: 150 }] };
    /// let e = bad.to_vec().unwrap_err();
    /// assert_eq!(e.path(), "Snapshot.players[1].health");
    /// ```
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
        if self.0.kind.has_bit_offset() {
            write!(f, "{} at bit {}", self.0.kind, self.0.bit)
        } else {
            write!(f, "{}", self.0.kind)
        }
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

    /// The messages that name a range say which end is wrong, in inclusive notation.
    #[test]
    fn range_messages_read_as_ranges() {
        let tag = ErrorKind::UnknownTag {
            tag: 5,
            variants: 3,
        };
        assert_eq!(
            tag.to_string(),
            "unknown tag 5, expected 0..=2 (3 variants)"
        );
        let none = ErrorKind::UnknownTag {
            tag: 0,
            variants: 0,
        };
        assert_eq!(none.to_string(), "unknown tag 0: the enum has no variants");
        let long = ErrorKind::LengthTooLong { len: 5, max: 2 };
        assert_eq!(long.to_string(), "length 5 exceeds the declared max_len 2");
        let bits = ErrorKind::InvalidBitCount {
            bits: 9,
            min: 0,
            max: 8,
        };
        assert_eq!(bits.to_string(), "invalid bit count 9, expected 0..=8");
    }

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
    fn quantized_floats_out_of_range_read_the_same_on_write_and_read() {
        let q = crate::Quantize::new(-1.0, 1.0, 0.01);
        assert_eq!(q.max_integer_value(), 200);
        let write = Error::new(ErrorKind::quantized_write(1.5, &q), 0).in_field("aim");
        assert_eq!(
            write.to_string(),
            "aim: value 1.5 out of range -1..=1 (quantized in steps of 0.01) at bit 0"
        );
        // 8 bits carry up to 255: 201..=255 are headroom above the range.
        let read = Error::new(ErrorKind::quantized_read(255, &q), 16).in_field("aim");
        assert_eq!(
            read.to_string(),
            "aim: value 1.55 out of range -1..=1 (quantized in steps of 0.01) at bit 16"
        );
        // A resolution that does not divide the range: the step on the wire is smaller.
        let q = crate::Quantize::new(0.0, 1.0, 0.3);
        assert_eq!(q.max_integer_value(), 4);
        assert_eq!(
            ErrorKind::quantized_read(5, &q).to_string(),
            "value 1.25 out of range 0..=1 (quantized in steps of 0.25)"
        );
        // An f64 value keeps its digits.
        assert_eq!(
            ErrorKind::quantized_write(1.000_000_000_1, &q).to_string(),
            "value 1.0000000001 out of range 0..=1 (quantized in steps of 0.25)"
        );
    }

    #[test]
    fn a_serialize_check_says_the_sides_are_out_of_step() {
        let e = Error::new(
            ErrorKind::CheckMismatch {
                expected: 0x5EC7_10A1,
                found: 0,
            },
            40,
        )
        .in_field("b")
        .in_type("Sections");
        let m = e.to_string();
        assert!(
            m.starts_with(
                "Sections.b: serialize check failed: expected 0x5ec710a1, found 0x00000000; "
            ),
            "{m}"
        );
        assert!(m.contains("the packet type or its schema differs"), "{m}");
        assert!(m.ends_with(" at bit 40"), "{m}");
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
