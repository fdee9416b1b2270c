//! The connection packet's payload (after the endpoint header), bit by bit:
//!
//! ```text
//! repeated per channel with messages:
//!   1                         more: a channel entry follows
//!   channel index             bits_required(0, channels - 1) bits (none with one channel)
//!   message count - 1         bits_required(0, max_messages_per_packet - 1) bits
//!   per message:
//!     message id              reliable and sequenced channels: 16 bits for the first,
//!                             then relative to the previous id (1..23 bits)
//!     block flag              reliable channels: 1 bit
//!     message | chunk id      the message's own encoding | 16 bits (block)
//! 0                           no more channels
//! optionally (an ack delay to report):
//!   0 1                       an ack delay follows
//!   ack delay                 16 bits, in units of 100 us (saturating)
//! optionally:
//!   1                         a section of the layer above follows (a snapshot)
//!   section                   its own bits (see the snapshot module)
//! zero padding to the byte
//! ```
//! An empty payload is a packet that only carries acks (with no delay to report). A
//! packet without an ack delay or a section is bit for bit what it was before either
//! existed: `0 1` after the last channel was a set padding bit, refused.

use netser::{Decoder, Encoder, NetSerialize, ReadStream};

use super::channels::Channel;
use super::error::ReceiveError;
use crate::channel::wire::read_id_relative;
use crate::channel::{ChannelConfig, ChannelId};
use crate::chunk::ChunkId;

/// Bits of a reported ack delay with its two flags (`0 1`).
pub(crate) const ACK_DELAY_BITS: u64 = 2 + 16;

/// Units of a reported ack delay per second (100 us each).
const ACK_DELAY_UNITS_PER_SECOND: f64 = 10_000.0;

/// An ack delay in the units of the wire, rounded down (so it never overstates the
/// delay) and saturated at the field's largest value (6.5535 s).
pub(crate) fn ack_delay_units(seconds: f64) -> u16 {
    // `as` saturates, and maps NaN to 0.
    (seconds * ACK_DELAY_UNITS_PER_SECOND) as u16
}

/// Seconds of an ack delay read from the wire.
pub(crate) fn ack_delay_seconds(units: u16) -> f64 {
    f64::from(units) / ACK_DELAY_UNITS_PER_SECOND
}

/// Bits of a channel index among `channels`.
fn index_bits(channels: usize) -> u32 {
    usize::BITS - (channels - 1).leading_zeros()
}

/// Bits of a message count for a channel.
fn count_bits(config: &ChannelConfig) -> u32 {
    usize::BITS - (config.max_messages_per_packet - 1).leading_zeros()
}

/// Bits of a channel entry before its messages: the `more` flag, index and count.
pub(crate) fn entry_overhead(channels: usize, config: &ChannelConfig) -> u64 {
    1 + u64::from(index_bits(channels)) + u64::from(count_bits(config))
}

/// The largest message (in bits) a channel can put in one packet of `payload_bits`,
/// beside a reported ack delay.
pub(crate) fn max_message_bits(payload_bits: u64, channels: usize, config: &ChannelConfig) -> u64 {
    let mut bits = payload_bits - 1 - ACK_DELAY_BITS - entry_overhead(channels, config);
    if config.kind.has_ids() {
        bits -= 16;
    }
    if config.kind.is_reliable() {
        bits -= 1;
    }
    bits
}

/// A message read from a packet, not yet handed to its channel.
#[derive(Debug)]
pub(crate) struct Incoming<In> {
    pub channel: usize,
    pub id: u16,
    pub item: IncomingItem<In>,
}

#[derive(Debug)]
pub(crate) enum IncomingItem<In> {
    Message(In),
    Block(ChunkId),
}

/// What a packet carries besides its messages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Parsed {
    /// The bit where the section of the layer above begins, if the packet has one.
    pub section: Option<u64>,
    /// How long the peer held the newest ack of the packet's header, seconds (0 when
    /// it reports none).
    pub ack_delay: f64,
}

/// Reads every message of `payload` into `out` without touching any channel, so a
/// packet that fails anywhere delivers nothing.
pub(crate) fn parse<In: NetSerialize>(
    payload: &[u8],
    channels: &[Channel<In>],
    out: &mut Vec<Incoming<In>>,
) -> Result<Parsed, ReceiveError> {
    out.clear();
    let mut parsed = Parsed::default();
    if payload.is_empty() {
        return Ok(parsed);
    }
    let mut r = ReadStream::new(payload);
    let index_bits = index_bits(channels.len());
    let mut seen = 0u64; // a bit per channel (at most 64)
    while r.read_bool().map_err(ReceiveError::Malformed)? {
        let index = r.read_bits(index_bits).map_err(ReceiveError::Malformed)? as usize;
        let Some(config) = channels.get(index).map(|channel| &channel.config) else {
            return Err(ReceiveError::UnknownChannel {
                channel: index as u8,
            });
        };
        let channel = ChannelId(index as u8);
        if seen & (1 << index) != 0 {
            return Err(ReceiveError::RepeatedChannel { channel });
        }
        seen |= 1 << index;
        let count = 1 + r
            .read_bits(count_bits(config))
            .map_err(ReceiveError::Malformed)? as usize;
        if count > config.max_messages_per_packet {
            return Err(ReceiveError::Malformed(netser::Error::new(
                netser::ErrorKind::LengthTooLong {
                    len: count as u64,
                    max: config.max_messages_per_packet as u64,
                },
                r.bit_position(),
            )));
        }
        let mut previous: Option<u16> = None;
        for _ in 0..count {
            let id = if config.kind.has_ids() {
                let id = match previous {
                    None => r.read_bits(16).map(|id| id as u16),
                    Some(p) => read_id_relative(&mut r, p),
                }
                .map_err(ReceiveError::Malformed)?;
                previous = Some(id);
                id
            } else {
                0
            };
            let block =
                config.kind.is_reliable() && r.read_bool().map_err(ReceiveError::Malformed)?;
            let item = if block {
                IncomingItem::Block(r.read_bits(16).map_err(ReceiveError::Malformed)? as ChunkId)
            } else {
                IncomingItem::Message(In::decode(&mut r).map_err(ReceiveError::Malformed)?)
            };
            if !channels[index].can_accept(id, count) {
                return Err(ReceiveError::ReceiveQueueFull { channel });
            }
            out.push(Incoming {
                channel: index,
                id,
                item,
            });
        }
    }
    // After the last channel: `1` starts the section of the layer above; `0 1` an ack
    // delay, then `1` and the section or the padding; else the zero padding.
    let mut rest = r.bits_remaining();
    if rest > 0 && r.read_bool().map_err(ReceiveError::Malformed)? {
        parsed.section = Some(r.bit_position());
        return Ok(parsed);
    }
    if rest > 1 && r.read_bool().map_err(ReceiveError::Malformed)? {
        let units = r.read_bits(16).map_err(ReceiveError::Malformed)? as u16;
        parsed.ack_delay = ack_delay_seconds(units);
        rest = r.bits_remaining();
        if rest > 0 && r.read_bool().map_err(ReceiveError::Malformed)? {
            parsed.section = Some(r.bit_position());
            return Ok(parsed);
        }
    }
    // The padding, from the first `0` read above: at most 8 bits (the flag and 7), all
    // zero.
    let left = r.bits_remaining();
    if rest > 8 || r.read_bits(left as u32).map_err(ReceiveError::Malformed)? != 0 {
        return Err(ReceiveError::TrailingBits);
    }
    Ok(parsed)
}

/// Writes the channel entries of `plan` (channel indices with their selections made),
/// then the ack delay if it is not 0 (in the wire's units), then the section of the
/// layer above, if any (its bytes and length in bits).
#[allow(clippy::too_many_arguments)]
pub(crate) fn write<E: Encoder, In: NetSerialize>(
    e: &mut E,
    now: f64,
    packet_sequence: u16,
    channels: &mut [Channel<In>],
    plan: &[(usize, usize)],
    ack_delay: u16,
    section: Option<(&[u8], u64)>,
) -> netser::Result<()> {
    let index_bits = index_bits(channels.len());
    for &(index, count) in plan {
        let channel = &mut channels[index];
        e.write_bool(true)?;
        e.write_bits(index as u64, index_bits)?;
        e.write_bits(count as u64 - 1, count_bits(&channel.config))?;
        channel.write(e, now, packet_sequence)?;
    }
    e.write_bool(false)?;
    if ack_delay > 0 {
        e.write_bool(false)?;
        e.write_bool(true)?;
        e.write_bits(u64::from(ack_delay), 16)?;
    }
    if let Some((bytes, bits)) = section {
        e.write_bool(true)?;
        crate::channel::wire::copy_bits(e, bytes, bits)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netser::WriteStream;

    /// A payload with no channel entries: the tail alone.
    fn channels() -> Vec<Channel<u8>> {
        vec![Channel::new(
            &ChannelConfig::reliable_ordered(),
            1,
            8000,
            256,
        )]
    }

    fn tail(ack_delay: u16, section: Option<(&[u8], u64)>) -> Vec<u8> {
        let mut buf = [0u8; 16];
        let mut w = WriteStream::new(&mut buf);
        write(&mut w, 0.0, 0, &mut channels(), &[], ack_delay, section).unwrap();
        let len = w.finish();
        buf[..len].to_vec()
    }

    fn read(payload: &[u8]) -> Result<Parsed, ReceiveError> {
        parse(payload, &channels(), &mut Vec::new())
    }

    #[test]
    fn ack_delay_and_section_read_back() {
        let plain = read(&tail(0, None)).unwrap();
        assert_eq!(plain, Parsed::default());
        let delayed = read(&tail(500, None)).unwrap();
        assert_eq!((delayed.section, delayed.ack_delay), (None, 0.05));
        // `0` end, `0 1` and 16 bits: the section flag at bit 19, the section at 20.
        let both = read(&tail(500, Some((&[0b101], 3)))).unwrap();
        assert_eq!((both.section, both.ack_delay), (Some(20), 0.05));
        let section = read(&tail(0, Some((&[0b101], 3)))).unwrap();
        assert_eq!((section.section, section.ack_delay), (Some(2), 0.0));
        assert_eq!(tail(0, None), [0], "no delay: the padding as before");
    }

    #[test]
    fn a_cut_delay_or_set_padding_is_refused() {
        // `0 1` then 6 bits: the delay is cut short.
        assert!(matches!(
            read(&[0b0000_0100]),
            Err(ReceiveError::Malformed(_))
        ));
        // `0 0` then a set bit.
        assert_eq!(read(&[0b0000_1000]), Err(ReceiveError::TrailingBits));
        // After a delay, more than a byte of padding.
        let mut long = tail(500, None);
        long.push(0);
        assert_eq!(read(&long), Err(ReceiveError::TrailingBits));
    }

    #[test]
    fn ack_delay_units_round_down_and_saturate() {
        assert_eq!(ack_delay_units(0.049_99), 499);
        assert_eq!(ack_delay_units(0.000_09), 0);
        assert_eq!(ack_delay_units(1e9), u16::MAX);
        assert_eq!(ack_delay_units(f64::NAN), 0);
        assert_eq!(ack_delay_units(-1.0), 0);
        assert_eq!(ack_delay_seconds(u16::MAX), 6.5535);
    }
}
