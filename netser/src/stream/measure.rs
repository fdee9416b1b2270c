//! [`MeasureStream`]: the [`Encoder`] that counts bits without writing them.

use crate::bits::BitCounter;
use crate::error::{Error, ErrorKind, Result};
use crate::stream::Encoder;
use crate::trace::{NoTrace, TraceValue, Tracer};

/// The measure stream: counts the bits a value would take, exactly, without writing.
///
/// Unlike the reference (which charges 7 bits for every align), it knows the position,
/// so alignment is counted exactly and `bits()` equals what a write stream writes.
///
/// ```
/// use netser::{Encoder, MeasureStream};
/// let mut m = MeasureStream::new();
/// m.write_bits(0xff, 8)?;
/// m.align()?;
/// m.write_bits(0xff, 8)?;
/// assert_eq!(m.bits(), 16); // the reference's MeasureStream says 23
/// # Ok::<(), netser::Error>(())
/// ```
#[derive(Debug, Default, Clone)]
pub struct MeasureStream<T: Tracer = NoTrace> {
    counter: BitCounter,
    tracer: T,
}

impl MeasureStream {
    /// An empty measure stream.
    ///
    /// ```
    /// use netser::MeasureStream;
    /// assert_eq!(MeasureStream::new().bits(), 0);
    /// ```
    pub fn new() -> Self {
        MeasureStream {
            counter: BitCounter::default(),
            tracer: NoTrace,
        }
    }
}

impl<T: Tracer> MeasureStream<T> {
    /// A measure stream that reports to `tracer`.
    ///
    /// ```
    /// use netser::{trace::Trace, Encoder, MeasureStream};
    /// let mut m = MeasureStream::with_tracer(Trace::new());
    /// m.write_int(-3i8, -8, 7)?;
    /// let trace = m.into_tracer();
    /// assert_eq!((trace.entries()[0].start, trace.entries()[0].bits), (0, 4));
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn with_tracer(tracer: T) -> Self {
        MeasureStream {
            counter: BitCounter::default(),
            tracer,
        }
    }

    /// Bits counted so far.
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_int(50u8, 0, 100)?;
    /// m.write_string("gg", 31)?; // 5 bits of length, 4 of padding, 16 of bytes
    /// assert_eq!(m.bits(), 7 + 5 + 4 + 16);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn bits(&self) -> u64 {
        self.counter.bits()
    }

    /// Bytes a write stream would produce: `ceil(bits / 8)`.
    ///
    /// ```
    /// use netser::{Encoder, MeasureStream};
    /// let mut m = MeasureStream::new();
    /// m.write_bits(0, 9)?;
    /// assert_eq!(m.bytes(), 2);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn bytes(&self) -> u64 {
        self.counter.bits().div_ceil(8)
    }

    /// Returns the tracer.
    ///
    /// ```
    /// use netser::{trace::Trace, Encoder, MeasureStream};
    /// let mut m = MeasureStream::with_tracer(Trace::new());
    /// m.write_bool(true)?;
    /// assert_eq!(m.into_tracer().entries().len(), 1);
    /// # Ok::<(), netser::Error>(())
    /// ```
    pub fn into_tracer(self) -> T {
        self.tracer
    }
}

impl<T: Tracer> Encoder for MeasureStream<T> {
    type Tracer = T;
    #[inline(always)]
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        // Same contract as the writer, so measuring finds every error writing would.
        if bits > 64 {
            return Err(Error::new(
                ErrorKind::InvalidBitCount {
                    bits,
                    min: 0,
                    max: 64,
                },
                self.counter.bits(),
            ));
        }
        if bits < 64 && value >> bits != 0 {
            return Err(Error::new(
                ErrorKind::ValueTooWide {
                    value: value as u128,
                    bits,
                },
                self.counter.bits(),
            ));
        }
        self.counter.add(bits as u64);
        Ok(())
    }
    #[inline(always)]
    fn put_bits_bounded(&mut self, _: u64, bits: u32) -> Result<()> {
        self.counter.add(bits as u64);
        Ok(())
    }
    #[inline(always)]
    fn write_align(&mut self) -> Result<()> {
        self.counter.align();
        Ok(())
    }
    #[inline]
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let start = self.counter.bits();
        self.counter.align();
        self.counter.add(data.len() as u64 * 8);
        if self.tracer.is_recording() {
            self.tracer
                .value(start, self.counter.bits(), TraceValue::Bytes(data));
        }
        Ok(())
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.counter.bits()
    }
    #[inline(always)]
    fn bits_available(&self) -> u64 {
        u64::MAX - self.counter.bits()
    }
    #[inline(always)]
    fn tracer(&mut self) -> &mut T {
        &mut self.tracer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WriteStream;

    #[test]
    fn measure_counts_what_write_writes() {
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        let mut m = MeasureStream::new();
        fn ops<E: Encoder>(e: &mut E) -> Result<()> {
            e.write_bits(3, 2)?;
            e.write_string("abc", 10)?;
            e.write_quat([0.0, 0.0, 0.0, 1.0], 9)?;
            e.write_int_relative(5, 300)?;
            e.write_subset(100, |i| i % 40 == 0, |e, i| e.write_int(i as u32, 0, 99))?;
            e.align()
        }
        ops(&mut w).unwrap();
        ops(&mut m).unwrap();
        assert_eq!(w.bit_position(), m.bits());
    }
}
