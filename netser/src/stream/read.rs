//! [`ReadStream`]: the [`Decoder`] that unpacks bits from a byte slice.

use crate::bits::BitReader;
use crate::error::Result;
use crate::stream::Decoder;
use crate::trace::{NoTrace, TraceValue, Tracer};

/// The read stream: unpacks bits from any byte slice, checking every value.
///
/// ```
/// use netser::{Decoder, ReadStream};
/// let mut r = ReadStream::new(&[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// assert_eq!(r.read_bits(3)?, 5);
/// assert_eq!(r.read_int(0u32, 1023)?, 1000);
/// assert_eq!(r.read_bits(24)?, 0xABCDEF);
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReadStream<'a, T: Tracer = NoTrace> {
    bits: BitReader<'a>,
    tracer: T,
}

impl<'a> ReadStream<'a> {
    /// A read stream over `bytes`.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let r = ReadStream::new(&[0, 0]);
    /// assert_eq!(r.bits_remaining(), 16);
    /// ```
    pub fn new(bytes: &'a [u8]) -> Self {
        ReadStream {
            bits: BitReader::new(bytes),
            tracer: NoTrace,
        }
    }
}

impl<'a, T: Tracer> ReadStream<'a, T> {
    /// A read stream over `bytes` that reports to `tracer`.
    ///
    /// ```
    /// use netser::{trace::Trace, Decoder, ReadStream};
    /// let mut r = ReadStream::with_tracer(&[0b1011], Trace::new());
    /// assert_eq!(r.read_int(0u8, 7)?, 3);
    /// assert!(r.read_bool()?);
    /// let trace = r.into_tracer();
    /// assert_eq!(trace.entries().len(), 2);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn with_tracer(bytes: &'a [u8], tracer: T) -> Self {
        ReadStream {
            bits: BitReader::new(bytes),
            tracer,
        }
    }

    /// Bytes touched so far: `ceil(bits read / 8)`.
    ///
    /// ```
    /// use netser::{Decoder, ReadStream};
    /// let mut r = ReadStream::new(&[0xff, 0xff, 0xff]);
    /// r.read_bits(9)?;
    /// assert_eq!(r.bytes_read(), 2);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn bytes_read(&self) -> usize {
        self.bits.bits_read().div_ceil(8) as usize
    }

    /// The whole input.
    ///
    /// ```
    /// use netser::ReadStream;
    /// let packet = [1u8, 2, 3];
    /// assert_eq!(ReadStream::new(&packet).input(), &packet);
    /// ```
    pub fn input(&self) -> &'a [u8] {
        self.bits.bytes()
    }

    /// Returns the tracer.
    ///
    /// ```
    /// use netser::{trace::Trace, Decoder, ReadStream};
    /// let mut r = ReadStream::with_tracer(&[1], Trace::new());
    /// r.read_bool()?;
    /// assert_eq!(r.into_tracer().entries().len(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn into_tracer(self) -> T {
        self.tracer
    }
}

impl<T: Tracer> Decoder for ReadStream<'_, T> {
    type Tracer = T;
    const PACKS_RUNS: bool = T::IGNORES_EVENTS;
    #[inline(always)]
    fn get_bits(&mut self, bits: u32) -> Result<u64> {
        self.bits.read_bits(bits)
    }
    #[inline(always)]
    fn get_words(&mut self, words: &mut [u64], last_bits: u32) -> Result<u64> {
        self.bits.read_words(words, last_bits)
    }
    #[inline(always)]
    fn skip_bits(&mut self, bits: u64) -> Result<()> {
        self.bits.skip(bits)
    }
    #[inline(always)]
    fn peek_input(&self) -> Option<(&[u8], u64)> {
        Some((self.bits.bytes(), self.bits.bits_read()))
    }
    #[inline]
    fn read_align(&mut self) -> Result<()> {
        self.bits.align()
    }
    #[inline]
    fn read_bytes(&mut self, out: &mut [u8]) -> Result<()> {
        let start = self.bits.bits_read();
        self.bits.read_bytes(out)?;
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.bits.bits_read(), TraceValue::Bytes(out));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.bits.bits_read()
    }
    #[inline(always)]
    fn bits_remaining(&self) -> u64 {
        self.bits.bits_remaining()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}
