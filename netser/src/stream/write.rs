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
    pub fn new(buf: &'a mut [u8]) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer: NoTrace,
        }
    }
}

impl<'a, T: Tracer> WriteStream<'a, T> {
    /// A write stream over `buf` that reports to `tracer` (see [`crate::trace`]).
    pub fn with_tracer(buf: &'a mut [u8], tracer: T) -> Self {
        WriteStream {
            bits: BitWriter::new(buf),
            tracer,
        }
    }

    /// Flushes and returns the packet length in bytes, `ceil(bits / 8)`.
    pub fn finish(mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the length so far, keeping the stream open.
    pub fn flush(&mut self) -> usize {
        self.bits.flush()
    }

    /// Flushes and returns the tracer.
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
