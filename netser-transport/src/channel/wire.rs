//! Bits on the wire shared by the channels: messages stored as encoded bits, and message
//! ids after the first in a packet written relative to the previous one.

use std::sync::Arc;

use netser::trace::NoTrace;
use netser::{Decoder, Encoder, MeasureStream, NetSerialize, ReadStream, Result};

/// A message encoded at send: its bytes and its exact length in bits, as written from
/// bit 0.
///
/// # Messages with alignment
///
/// netser's `align` (a `#[net(align)]` field, a `String`, a byte array) pads to the next
/// byte boundary of the *packet's* position, and the receiver decodes each message in
/// place, so such a message's bits depend on where it lands. Copying the bits encoded
/// from bit 0 to an unaligned position would put the padding in the wrong place (the
/// reader refuses it or reads other bits). So the first alignment's position is noted
/// at send ([`align_at`](Self::align_at)) and [`write`](Self::write) redoes that one
/// alignment in the packet. Why that is exactly what an in-place encoder writes, and
/// why no other message needs it:
///
/// An encoding is a run of primitives; only an alignment (`align`, or `bytes` which
/// aligns first) looks at the position, and only at it modulo 8. Say the encoding
/// started at offset `s` runs `p` bits before its first alignment (`p` does not depend on
/// `s`: nothing before looked at the position). That alignment pads
/// `pad(s + p) = (8 - (s + p) % 8) % 8` bits, after which the position is a multiple of
/// 8 whatever `s` was, so everything after it (later alignments included) writes the
/// same bits, `r` of them, for every `s`. Hence:
/// - no alignment runs: the bits, and the size, are the same at every offset;
/// - one runs: the size `p + pad(s + p) + r` takes 8 different values as `s` goes over
///   0..=7 (`pad` is a bijection of the residues), and the bits at offset `s` are the
///   `p` bits before the alignment, `pad(s + p)` zeros, then the `r` bits that follow
///   the alignment in the encoding from bit 0.
///
/// So a message's encoding depends on its start offset exactly when its measured size
/// differs for some start offset in 0..=7 (already for offsets 0 and 1), exactly when an
/// alignment runs; such a message is written as the prefix, an alignment in the
/// packet, and the rest, and every other message is copied bit for bit, no bit added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EncodedMessage {
    pub bytes: MessageBytes,
    /// Bits written from bit 0.
    pub bits: u64,
    /// Bits before the first alignment, if the encoding has one.
    pub align_at: Option<u64>,
}

/// Bytes that fit in a [`MessageBytes`] without an allocation (the size of the shared
/// case's pointer and length, less the length and the tag).
const INLINE_BYTES: usize = 22;

/// Heap bytes a stored message holds beside its own bytes (the shared allocation's two
/// reference counts).
pub(crate) const MESSAGE_HEAP_OVERHEAD: usize = 2 * core::mem::size_of::<usize>();

/// A message's encoded bytes: a small message (most game events) in place, with no
/// allocation; a larger one in one shared allocation, so that a message broadcast to
/// many connections is stored once and each queue holds a reference to it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum MessageBytes {
    Inline { len: u8, data: [u8; INLINE_BYTES] },
    Shared(Arc<[u8]>),
}

impl MessageBytes {
    /// `len` zero bytes handed to `fill`.
    fn encode(len: usize, fill: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<Self> {
        if len <= INLINE_BYTES {
            let mut data = [0; INLINE_BYTES];
            fill(&mut data[..len])?;
            Ok(Self::Inline {
                len: len as u8,
                data,
            })
        } else {
            let mut shared: Arc<[u8]> = core::iter::repeat_n(0, len).collect();
            fill(Arc::get_mut(&mut shared).expect("not shared yet"))?;
            Ok(Self::Shared(shared))
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Self::Inline { len, data } => &data[..usize::from(*len)],
            Self::Shared(shared) => shared,
        }
    }

    /// The bytes as a vector of their own (a copy).
    pub fn into_vec(self) -> Vec<u8> {
        self.as_slice().to_vec()
    }
}

impl core::ops::Deref for MessageBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl core::fmt::Debug for MessageBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Zero bits from `position` to the next byte boundary.
fn padding(position: u64) -> u64 {
    (8 - position % 8) % 8
}

impl EncodedMessage {
    /// Measures and encodes `message`, noting its first alignment.
    pub fn encode<M: NetSerialize>(message: &M) -> Result<Self> {
        let mut probe = AlignProbe::default();
        message.encode(&mut probe)?;
        let bits = probe.measure.bits();
        let bytes = MessageBytes::encode(bits.div_ceil(8) as usize, |out| {
            message.encode_to_slice(out).map(|_| ())
        })?;
        Ok(Self {
            bytes,
            bits,
            align_at: probe.align_at,
        })
    }

    /// Bits the message takes when written at `position` of a packet.
    pub fn bits_at(&self, position: u64) -> u64 {
        match self.align_at {
            None => self.bits,
            Some(p) => p + padding(position + p) + (self.bits - p - padding(p)),
        }
    }

    /// The most bits the message takes at any position (its size at the worst offset).
    pub fn max_bits(&self) -> u64 {
        match self.align_at {
            None => self.bits,
            Some(p) => p + 7 + (self.bits - p - padding(p)),
        }
    }

    /// Writes the message into `e` at its position, exactly as `message.encode(e)`
    /// would have there (see the [type docs](Self)).
    pub fn write<E: Encoder>(&self, e: &mut E) -> Result<()> {
        match self.align_at {
            None => copy_bits(e, &self.bytes, self.bits),
            Some(p) => {
                copy_bits(e, &self.bytes, p)?;
                e.align()?;
                let rest = (p + padding(p)) / 8;
                copy_bits(e, &self.bytes[rest as usize..], self.bits - rest * 8)
            }
        }
    }
}

/// Writes the first `bits` bits of `bytes` into `e`, 64 at a time (the stream's first 64
/// bits are its first 8 bytes read little-endian).
///
/// # Errors
/// `EndOfBuffer` if `bytes` holds fewer than `bits` bits; the encoder's errors.
pub(crate) fn copy_bits<E: Encoder>(e: &mut E, bytes: &[u8], bits: u64) -> Result<()> {
    if bits > bytes.len() as u64 * 8 {
        // Not enough bits: the reader says so, once past the end.
        let mut r = ReadStream::new(bytes);
        r.read_bits(r.bits_remaining() as u32 % 64)?;
        while r.bits_remaining() > 0 {
            r.read_bits(64)?;
        }
        return r.read_bits(1).map(drop);
    }
    if E::PACKS_RUNS {
        // A stream that writes whole words and traces nothing: shift the words straight
        // into its buffer, one store each, instead of a checked write per word.
        if let Some((buf, pending, used)) = e.lend_words() {
            if let Some((total, last)) = shift_words_into(buf, pending, used, bytes, bits) {
                return e.take_lent_words(total, last);
            }
        }
    }
    let whole = (bits / 64) as usize;
    let (words, _) = bytes.as_chunks::<8>();
    for word in &words[..whole] {
        e.write_bits(u64::from_le_bytes(*word), 64)?;
    }
    let rest = (bits % 64) as u32;
    if rest > 0 {
        let tail = &bytes[whole * 8..];
        let mut last = [0u8; 8];
        let n = tail.len().min(8);
        last[..n].copy_from_slice(&tail[..n]);
        e.write_bits(u64::from_le_bytes(last) & (u64::MAX >> (64 - rest)), rest)?;
    }
    Ok(())
}

/// Stores the stream words made of `pending` (its low `used` bits) followed by the
/// first `bits` bits of `bytes` into `buf` (lent from the word holding the pending
/// bits), and returns the stream's length counted from that word and its new pending
/// bits; `None`, with nothing stored, when they do not fit. Only whole words are
/// stored, so the bytes past the last bit stay as they were. `bits` is at most
/// `8 * bytes.len()`.
#[inline]
fn shift_words_into(
    buf: &mut [u8],
    pending: u64,
    used: u32,
    bytes: &[u8],
    bits: u64,
) -> Option<(u64, u64)> {
    let total = u64::from(used) + bits;
    if total > buf.len() as u64 * 8 {
        return None;
    }
    // The high bits of a source word that spill into the next stream word (none when
    // `used` is 0, without a shift by 64).
    let spill = |w: u64| (w >> 1) >> (63 - used);
    let whole_out = (total / 64) as usize;
    let (out, _) = buf.as_chunks_mut::<8>();
    let out = &mut out[..whole_out];
    let full = (bits / 64) as usize;
    let (src, _) = bytes.as_chunks::<8>();
    let mut carry = pending;
    // Stream word k holds source word k shifted up by `used`; `full <= whole_out`.
    for (dst, word) in out[..full].iter_mut().zip(&src[..full]) {
        let w = u64::from_le_bytes(*word);
        *dst = (carry | w << used).to_le_bytes();
        carry = spill(w);
    }
    let rest = (bits % 64) as u32;
    if rest == 0 {
        return Some((total, carry));
    }
    let tail = &bytes[full * 8..];
    let mut last = [0u8; 8];
    let n = tail.len().min(8);
    last[..n].copy_from_slice(&tail[..n]);
    let w = u64::from_le_bytes(last) & (u64::MAX >> (64 - rest));
    let word = carry | w << used;
    match out.get_mut(full) {
        // The tail fills stream word `full`: its spill is the pending bits.
        Some(dst) => {
            *dst = word.to_le_bytes();
            Some((total, spill(w)))
        }
        None => Some((total, word)),
    }
}

/// A measure stream that notes where the first alignment happens: the only primitives
/// that look at the position are `write_align` and `write_bytes` (which aligns first).
#[derive(Debug, Default)]
struct AlignProbe {
    measure: MeasureStream,
    align_at: Option<u64>,
}

impl AlignProbe {
    fn note_align(&mut self) {
        if self.align_at.is_none() {
            self.align_at = Some(self.measure.bits());
        }
    }
}

impl Encoder for AlignProbe {
    type Tracer = NoTrace;
    #[inline(always)]
    fn put_bits(&mut self, value: u64, bits: u32) -> Result<()> {
        self.measure.put_bits(value, bits)
    }
    #[inline(always)]
    fn put_bits_bounded(&mut self, value: u64, bits: u32) -> Result<()> {
        self.measure.put_bits_bounded(value, bits)
    }
    fn write_align(&mut self) -> Result<()> {
        self.note_align();
        self.measure.write_align()
    }
    fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        self.note_align();
        self.measure.write_bytes(data)
    }
    #[inline(always)]
    fn bit_position(&self) -> u64 {
        self.measure.bit_position()
    }
    #[inline(always)]
    fn bits_available(&self) -> u64 {
        self.measure.bits_available()
    }
    fn tracer(&mut self) -> &mut NoTrace {
        self.measure.tracer()
    }
}

/// `current` as the difference from `previous` (message ids increase within a packet,
/// modulo 2^16), with the flag ladder of `write_int_relative`.
pub(crate) fn write_id_relative<E: Encoder>(e: &mut E, previous: u16, current: u16) -> Result<()> {
    let d = current.wrapping_sub(previous);
    e.write_int_relative(0, i32::from(d))
}

/// Reads an id written by [`write_id_relative`].
pub(crate) fn read_id_relative<D: Decoder>(d: &mut D, previous: u16) -> Result<u16> {
    let difference = d.read_int_relative(0)?;
    Ok(previous.wrapping_add(difference as u16))
}

/// Bits [`write_id_relative`] takes.
pub(crate) fn id_relative_bits(previous: u16, current: u16) -> u64 {
    let d = u32::from(current.wrapping_sub(previous));
    // The flag ladder of `write_int_relative` (1, 5, 8, 13, 18, 23 bits; ids differ by
    // less than 2^16, so the 38-bit raw form never occurs).
    match d {
        1 => 1,
        2..=6 => 5,
        7..=23 => 8,
        24..=280 => 13,
        281..=4377 => 18,
        _ => 23,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netser::{MeasureStream, WriteStream};

    /// The 64-bit copy writes what a bit-by-bit copy does, at every offset and length,
    /// and refuses a length beyond the bytes.
    #[test]
    fn copy_bits_equals_a_bit_by_bit_copy() {
        use netser::WriteStream;
        let bytes: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for offset in 0..9u32 {
            for bits in [0u64, 1, 7, 63, 64, 65, 127, 128, 200, 320] {
                let mut fast = [0u8; 64];
                let mut slow = [0u8; 64];
                let mut w = WriteStream::new(&mut fast);
                w.write_bits(0, offset).unwrap();
                copy_bits(&mut w, &bytes, bits).unwrap();
                let fast_len = w.finish();
                let mut w = WriteStream::new(&mut slow);
                w.write_bits(0, offset).unwrap();
                let mut r = ReadStream::new(&bytes);
                for _ in 0..bits {
                    w.write_bits(r.read_bits(1).unwrap(), 1).unwrap();
                }
                let slow_len = w.finish();
                assert_eq!(
                    fast[..fast_len],
                    slow[..slow_len],
                    "offset {offset}, {bits} bits"
                );
            }
        }
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        assert!(copy_bits(&mut w, &bytes, 321).is_err());
    }

    fn zeros(w: &mut WriteStream<'_>, bits: u32) -> Result<()> {
        (0..bits).try_for_each(|_| w.write_bits(0, 1))
    }

    /// `bits` bits of `bytes` written one at a time after `offset` zero bits, into a
    /// buffer of `room` bytes; the written bytes, or `None` when they do not fit.
    fn bit_by_bit(bytes: &[u8], offset: u32, bits: u64, room: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0xa5u8; room];
        let mut w = WriteStream::new(&mut buf);
        zeros(&mut w, offset).ok()?;
        let mut r = ReadStream::new(bytes);
        for _ in 0..bits {
            w.write_bits(r.read_bits(1).unwrap(), 1).ok()?;
        }
        w.write_bits(1, 1).ok()?; // a bit after the copy lands right after it
        let len = w.finish();
        Some(buf[..len].to_vec())
    }

    proptest::proptest! {
        /// At random offsets, lengths and buffer sizes (a full buffer included), the
        /// word copy writes what a bit-by-bit copy does, or fails when that one does.
        #[test]
        fn copy_bits_at_any_offset_equals_a_bit_by_bit_copy(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
            offset in 0u32..200,
            cut in 0u64..700,
            room in 0usize..120,
        ) {
            let bits = cut.min(bytes.len() as u64 * 8);
            let expected = bit_by_bit(&bytes, offset, bits, room);
            let mut buf = vec![0xa5u8; room];
            let mut w = WriteStream::new(&mut buf);
            let written = zeros(&mut w, offset)
                .and_then(|()| copy_bits(&mut w, &bytes, bits))
                .and_then(|()| w.write_bits(1, 1));
            let len = w.finish();
            let got = written.ok().map(|()| buf[..len].to_vec());
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn relative_bits_match_the_stream() {
        for d in [1u16, 2, 6, 7, 23, 24, 280, 281, 4377, 4378, 65535] {
            let mut m = MeasureStream::new();
            write_id_relative(&mut m, 65530, 65530u16.wrapping_add(d)).unwrap();
            assert_eq!(
                m.bits(),
                id_relative_bits(65530, 65530u16.wrapping_add(d)),
                "d={d}"
            );
            let mut buf = [0u8; 8];
            let mut w = WriteStream::new(&mut buf);
            write_id_relative(&mut w, 65530, 65530u16.wrapping_add(d)).unwrap();
            w.finish();
            let mut r = ReadStream::new(&buf);
            assert_eq!(
                read_id_relative(&mut r, 65530).unwrap(),
                65530u16.wrapping_add(d)
            );
        }
    }

    #[test]
    fn stored_bits_copy_exactly() {
        let message = (0x1234_5678u32, 0x9u8, true);
        let stored = EncodedMessage::encode(&message).unwrap();
        assert_eq!(stored.bits, 41);
        let mut buf = [0u8; 8];
        let mut w = WriteStream::new(&mut buf);
        w.write_bits(1, 3).unwrap();
        stored.write(&mut w).unwrap();
        w.finish();
        let mut r = ReadStream::new(&buf);
        assert_eq!(r.read_bits(3).unwrap(), 1);
        assert_eq!(<(u32, u8, bool)>::decode(&mut r).unwrap(), message);
    }

    /// A message with a string, a bytes field and an aligned field, after odd bits.
    #[derive(netser::NetSerialize, Debug, Clone, PartialEq)]
    enum Aligned {
        Chat {
            #[net(range = 0..=5)]
            from: u8,
            #[net(max_len = 64)]
            text: String,
        },
        Pair {
            flag: bool,
            #[net(align)]
            value: u16,
            #[net(max_len = 8)]
            tail: Vec<u8>,
        },
        Plain(#[net(range = 0..=100)] u8),
    }

    fn samples() -> Vec<Aligned> {
        vec![
            Aligned::Chat {
                from: 3,
                text: "hello, world".into(),
            },
            Aligned::Chat {
                from: 0,
                text: String::new(),
            },
            Aligned::Pair {
                flag: true,
                value: 0xbeef,
                tail: vec![1, 2, 3],
            },
            Aligned::Plain(77),
        ]
    }

    /// Size from the measure stream at `offset`: a prefix of `offset` bits first.
    fn measured_at<M: NetSerialize>(message: &M, offset: u64) -> u64 {
        let mut m = MeasureStream::new();
        m.write_bits(0, offset as u32).unwrap();
        message.encode(&mut m).unwrap();
        m.bits() - offset
    }

    #[test]
    fn written_at_any_offset_as_an_in_place_encoder_writes() {
        for message in samples() {
            let stored = EncodedMessage::encode(&message).unwrap();
            for offset in 0..24u64 {
                let prefix = 0x5a5a5a & ((1 << offset) - 1);
                let mut expected = [0u8; 64];
                let mut w = WriteStream::new(&mut expected);
                w.write_bits(prefix, offset as u32).unwrap();
                message.encode(&mut w).unwrap();
                let expected_bits = w.bit_position();
                w.finish();
                let mut got = [0u8; 64];
                let mut w = WriteStream::new(&mut got);
                w.write_bits(prefix, offset as u32).unwrap();
                stored.write(&mut w).unwrap();
                assert_eq!(w.bit_position(), expected_bits, "{message:?} at {offset}");
                w.finish();
                assert_eq!(got, expected, "{message:?} at {offset}");
                assert_eq!(stored.bits_at(offset), expected_bits - offset);
                assert_eq!(stored.bits_at(offset), measured_at(&message, offset));
                assert!(stored.bits_at(offset) <= stored.max_bits());
                let mut r = ReadStream::new(&got);
                assert_eq!(r.read_bits(offset as u32).unwrap(), prefix);
                assert_eq!(Aligned::decode(&mut r).unwrap(), message);
            }
        }
    }

    #[test]
    fn an_alignment_is_noted_exactly_when_the_size_depends_on_the_offset() {
        for message in samples() {
            let stored = EncodedMessage::encode(&message).unwrap();
            let sizes: Vec<u64> = (0..8).map(|s| measured_at(&message, s)).collect();
            let varies = sizes.iter().any(|&size| size != sizes[0]);
            assert_eq!(stored.align_at.is_some(), varies, "{message:?}: {sizes:?}");
            assert_eq!(stored.max_bits(), *sizes.iter().max().unwrap());
            assert_eq!(stored.bits, sizes[0]);
            if varies {
                // All eight differ: the first alignment's padding takes every value.
                let mut sorted = sizes.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), 8, "{message:?}: {sizes:?}");
            }
        }
        // A `Plain` message has none: copied bit for bit, its measured size everywhere.
        let plain = EncodedMessage::encode(&Aligned::Plain(5)).unwrap();
        assert_eq!(plain.align_at, None);
        assert_eq!(plain.bits, 2 + 7);
        assert_eq!(plain.max_bits(), 9);
    }
}
