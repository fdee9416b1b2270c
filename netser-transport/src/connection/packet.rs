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
//! optionally:
//!   1                         a section of the layer above follows (a snapshot)
//!   section                   its own bits (see the snapshot module)
//! zero padding to the byte
//! ```
//! An empty payload is a packet that only carries acks. A packet without a section is
//! bit for bit what it was before sections existed.

use netser::{Decoder, Encoder, NetSerialize, ReadStream};

use super::error::ReceiveError;
use super::{Receiver, Sender};
use crate::channel::wire::read_id_relative;
use crate::channel::{ChannelConfig, ChannelId};
use crate::chunk::ChunkId;

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

/// The largest message (in bits) a channel can put in one packet of `payload_bits`.
pub(crate) fn max_message_bits(payload_bits: u64, channels: usize, config: &ChannelConfig) -> u64 {
    let mut bits = payload_bits - 1 - entry_overhead(channels, config);
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

/// Reads every message of `payload` into `out` without touching any channel, so a
/// packet that fails anywhere delivers nothing. Returns the bit where the section of the
/// layer above begins, if the packet has one.
pub(crate) fn parse<In: NetSerialize>(
    payload: &[u8],
    configs: &[ChannelConfig],
    receivers: &[Receiver<In>],
    out: &mut Vec<Incoming<In>>,
) -> Result<Option<u64>, ReceiveError> {
    out.clear();
    if payload.is_empty() {
        return Ok(None);
    }
    let mut r = ReadStream::new(payload);
    let index_bits = index_bits(configs.len());
    let mut seen = 0u64; // a bit per channel (at most 64)
    while r.read_bool().map_err(ReceiveError::Malformed)? {
        let index = r.read_bits(index_bits).map_err(ReceiveError::Malformed)? as usize;
        let Some(config) = configs.get(index) else {
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
            if let Receiver::Reliable(receiver) = &receivers[index] {
                if !receiver.can_accept(id, count) {
                    return Err(ReceiveError::ReceiveQueueFull { channel });
                }
            }
            out.push(Incoming {
                channel: index,
                id,
                item,
            });
        }
    }
    // A `1` after the last channel starts the section of the layer above; otherwise
    // what is left is the zero padding.
    if r.bits_remaining() > 0 && r.read_bool().map_err(ReceiveError::Malformed)? {
        return Ok(Some(r.bit_position()));
    }
    let rest = r.bits_remaining();
    if rest >= 8 || r.read_bits(rest as u32).map_err(ReceiveError::Malformed)? != 0 {
        return Err(ReceiveError::TrailingBits);
    }
    Ok(None)
}

/// Writes the channel entries of `plan` (channel indices with their selections made),
/// then the section of the layer above, if any (its bytes and length in bits).
pub(crate) fn write<E: Encoder>(
    e: &mut E,
    now: f64,
    packet_sequence: u16,
    configs: &[ChannelConfig],
    senders: &mut [Sender],
    plan: &[(usize, usize)],
    section: Option<(&[u8], u64)>,
) -> netser::Result<()> {
    let index_bits = index_bits(configs.len());
    for &(index, count) in plan {
        e.write_bool(true)?;
        e.write_bits(index as u64, index_bits)?;
        e.write_bits(count as u64 - 1, count_bits(&configs[index]))?;
        match &mut senders[index] {
            Sender::Reliable(sender) => sender.write(e, now, packet_sequence)?,
            Sender::Unreliable(sender) => sender.write(e)?,
        }
    }
    e.write_bool(false)?;
    if let Some((bytes, bits)) = section {
        e.write_bool(true)?;
        super::section::copy_bits(e, bytes, bits)?;
    }
    Ok(())
}
