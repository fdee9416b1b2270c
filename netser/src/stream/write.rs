//! [`WriteStream`]: the [`Encoder`] that packs bits into a caller's buffer.

use crate::bits::BitWriter;
use crate::error::Result;
use crate::stream::Encoder;
use crate::trace::{NoTrace, TraceValue, Tracer};

/// The write stream: packs bits into a caller's buffer, with no allocation.
///
/// ```
/// use netser::{Encoder, WriteStream};
/// let mut buf = [0u8; 8];
/// let mut w = WriteStream::new(&mut buf);
/// w.write_bits(5, 3)?;
/// w.write_bits(1000, 10)?;
/// w.write_bits(0xABCDEF, 24)?;
/// let len = w.finish();
/// assert_eq!(&buf[..len], &[0x45, 0xff, 0xbd, 0x79, 0x15]);
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug)]
pub struct WriteStream<'a, T: Tracer = NoTrace> {
    bits: BitWriter<'a>,
    tracer: T,
}

impl<'a> WriteStream<'a> {
    /// A write stream over `buf`.
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let w = WriteStream::new(&mut buf);
    /// assert_eq!(w.bits_available(), 128);
    /// ```
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer: NoTrace,
        }
    }
}

impl<'a, T: Tracer> WriteStream<'a, T> {
    /// A write stream over `buf` that reports to `tracer` (see [`crate::trace`]).
    ///
    /// ```
    /// use netser::{trace::Trace, Encoder, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    /// w.write_int(3u8, 0, 7)?;
    /// w.write_bool(true)?;
    /// let trace = w.into_tracer();
    /// assert_eq!(trace.entries().len(), 2);
    /// assert_eq!((trace.entries()[1].start, trace.entries()[1].bits), (3, 1));
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn with_tracer(buf: &'a mut [u8], tracer: T) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer,
        }
    }

    /// Flushes and returns the packet length in bytes, `ceil(bits / 8)`.
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_int(300u16, 0, 1000)?; // 10 bits
    /// assert_eq!(w.finish(), 2);
    /// assert_eq!(&buf[..2], &300u16.to_le_bytes());
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn finish(mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the length so far, keeping the stream open.
    ///
    /// ```
    /// use netser::{Encoder, WriteStream};
    /// let mut buf = [0u8; 16];
    /// let mut w = WriteStream::new(&mut buf);
    /// w.write_bool(true)?;
    /// assert_eq!(w.flush(), 1);
    /// w.write_bits(0xff, 8)?;
    /// assert_eq!(w.finish(), 2);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn flush(&mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the tracer.
    ///
    /// ```
    /// use netser::{trace::Trace, Encoder, WriteStream};
    /// let mut buf = [0u8; 4];
    /// let mut w = WriteStream::with_tracer(&mut buf, Trace::new());
    /// w.write_bool(false)?;
    /// assert_eq!(w.into_tracer().entries().len(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn into_tracer(mut self) -> T {
        self.bits.flush();
        self.tracer
    }
}

impl<T: Tracer> Encoder for WriteStream<'_, T> {
    type Tracer = T;
    const PACKS_RUNS: bool = T::IGNORES_EVENTS;
    #[inline(always)]
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        self.bits.write_bits(value, bits)
    }
    #[inline(always)]
    fn put_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        self.bits.write_bits_bounded(value, bits)
    }
    #[inline(always)]
    fn put_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        self.bits.write_words(words, last, last_bits)
    }
    #[inline(always)]
    fn pending_bits(&self) -> Option<(u64, u32)> {
        Some(self.bits.pending())
    }
    #[inline(always)]
    fn put_aligned_words(&mut self, words: &[u64], last: u64, last_bits: u32) -> Result<()> {
        self.bits.write_aligned_words(words, last, last_bits)
    }
    #[inline(always)]
    fn lend_words(&mut self) -> Option<(&mut [u8], u64, u32)> {
        Some(self.bits.lend_words())
    }
    #[inline(always)]
    fn take_lent_words(&mut self, bits: u64, last: u64) -> Result<()> {
        self.bits.take_lent_words(bits, last)
    }
    #[inline]
    fn write_align(&mut self) -> Result<()> {
        self.bits.align()
    }
    #[inline]
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let start = self.bits.bits_written();
        self.bits.write_bytes(data)?;
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.bits.bits_written(), TraceValue::Bytes(data));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.bits.bits_written()
    }
    #[inline(always)]
    fn bits_available(&self) -> u64 {
        self.bits.bits_available()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}
