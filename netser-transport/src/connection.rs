//! A connection to one peer: the packet [`endpoint`](crate::endpoint), the message
//! [`channel`](crate::channel)s and the block path ([`chunk`](crate::chunk)), behind one
//! sans-IO interface of typed messages in and opaque datagrams out.
//!
//! `Connection<Out, In>` sends messages of type `Out` and receives `In` (a client sends
//! its `ClientMessage` and receives `ServerMessage`s; `Connection<M>` is the symmetric
//! case). Messages are values of types implementing [`netser::NetSerialize`], usually a
//! derived enum. Each message is measured and encoded when it is sent, so a value out of
//! its declared bounds, or an unreliable message too large for a packet, is an error at
//! [`send_message`](Connection::send_message), never a surprise later. The receiver
//! decodes each message in place in the packet; the sender copies the stored bits there,
//! and for a message with an alignment (a `String`, bytes, a `#[net(align)]` field) puts
//! its padding where it lands, so any message type works on any channel.
//!
//! The run loop, once per frame (here over the seeded simulator):
//!
//! ```
//! use netser_transport::connection::{Connection, ConnectionConfig};
//! use netser_transport::simulator::{Simulator, SimulatorConfig};
//!
//! // Channel 0 is reliable-ordered, channel 1 unreliable (the default configuration).
//! let mut net: Simulator = Simulator::new(SimulatorConfig { latency: 0.05, loss: 0.2, seed: 7, ..Default::default() });
//! let mut client: Connection<u32> = Connection::new(0.0, ConnectionConfig::default())?;
//! let mut server: Connection<u32> = Connection::new(0.0, ConnectionConfig::default())?;
//! for event in 0..100u32 {
//!     client.send_message(0, &event)?;
//! }
//! let mut received = Vec::new();
//! let mut now = 0.0;
//! while received.len() < 100 {
//!     for (side, from, to) in [(&mut client, 1, 2), (&mut server, 2, 1)] {
//!         side.handle_timeout(now);
//!         while let Some(datagram) = side.poll_transmit(now) {
//!             net.send(now, from, to, datagram);
//!         }
//!     }
//!     while let Some(delivery) = net.receive(now) {
//!         let side = if delivery.to == 1 { &mut client } else { &mut server };
//!         let _ = side.handle_datagram(now, &delivery.data); // drops are counted
//!     }
//!     while let Some(event) = server.receive_message(0) {
//!         received.push(event);
//!     }
//!     now += 1.0 / 60.0;
//! }
//! assert_eq!(received, (0..100).collect::<Vec<u32>>()); // in order, over 20% loss
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Datagrams are of three kinds, told apart by their first byte: connection packets
//! (the endpoint's header, whose first byte has its top two bits clear, then the
//! channels' messages), slices (`0xc1`) and slice acks (`0xc2`) of blocks. See WIRE.md
//! for the bits.

mod acks;
mod activity;
mod build;
mod channels;
mod config;
mod error;
mod packet;
pub(crate) use packet::ACK_DELAY_BITS;
pub(crate) mod section;

pub use config::{
    ConfigError, ConnectionConfig, DEFAULT_ACK_DELAY, DEFAULT_BLOCKS_IN_FLIGHT,
    DEFAULT_BYTES_IN_FLIGHT, DEFAULT_MAX_BLOCK_SIZE, DEFAULT_MTU, MAX_CHANNELS,
};
pub use error::{ConnectionCounters, ReceiveError, SendError};
pub use section::{ReceivedSection, SectionError};

use std::collections::VecDeque;
use std::marker::PhantomData;

use netser::{NetSerialize, ReadStream};

use crate::channel::reliable::{BlockState, Payload, ResendTiming};
use crate::channel::wire::EncodedMessage;
use crate::channel::{ChannelCounters, ChannelId};
use crate::chunk::{
    ChunkError, ChunkReceiver, ChunkSender, ReceivedChunk, ACK_PACKET_TYPE, SLICE_PACKET_TYPE,
};
use crate::endpoint::{Endpoint, Stats};
use channels::{Channel, Receiver};

/// Bytes charged per datagram for the IP and UDP headers.
const UDP_IP_HEADER_BYTES: usize = 28;
use acks::{AckReport, AcksOwed};
use packet::Incoming;

/// A connection to one peer. See the [module docs](self).
#[derive(Debug)]
pub struct Connection<Out, In = Out> {
    config: ConnectionConfig,
    endpoint: Endpoint,
    chunk_sender: ChunkSender,
    chunk_receiver: ChunkReceiver,
    /// Whether the block receiver may owe slice acks: set by every slice handed to it
    /// (the only way it comes to owe one), cleared once it owes none. Asking it walks
    /// its blocks in flight; a connection that receives no blocks never does.
    slice_acks_owed: bool,
    /// The latest time `poll_transmit` was called at: the block receiver's clock, which
    /// every poll moved before polls skipped it, is at least this.
    transmit_time: f64,
    channels: Vec<Channel<In>>,
    /// Which channels may have anything queued or received.
    activity: activity::Activity,
    received_blocks: VecDeque<ReceivedChunk>,
    counters: ConnectionCounters,
    /// Acks owed: packets with messages arrived since we last sent a packet.
    acks_owed: AcksOwed,
    /// Whether the peer still needs the delay of the newest ack (see `AckReport`).
    ack_report: AckReport,
    /// The channel that packs first in the next packet.
    rotation: usize,
    /// Scratch: the channel plan, a datagram copied out, messages being parsed. (The
    /// packet is built in the endpoint's outgoing queue.)
    plan: Vec<(usize, usize)>,
    datagram: Vec<u8>,
    incoming: Vec<Incoming<In>>,
    /// Packets that carried a section from the layer above, and those of them acked
    /// since that layer last asked (see `section.rs`).
    sections: section::SectionAcks,
    /// Bytes the next packets may take (token bucket; may go below zero by one packet).
    budget: f64,
    budget_time: f64,
    time: f64,
    _out: PhantomData<fn(&Out)>,
}

impl<Out: NetSerialize, In: NetSerialize> Connection<Out, In> {
    /// A connection at time `now` (seconds).
    ///
    /// # Errors
    /// [`ConfigError`] if the configuration does not [validate](ConnectionConfig::validate).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let connection: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert!(connection.poll_timeout().is_none());
    /// ```
    pub fn new(now: f64, config: ConnectionConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        let endpoint =
            Endpoint::new(now, config.endpoint.clone()).map_err(ConfigError::Endpoint)?;
        let chunk_sender = ChunkSender::new(config.chunk.clone()).map_err(ConfigError::Chunk)?;
        let chunk_receiver =
            ChunkReceiver::new(config.chunk.clone()).map_err(ConfigError::Chunk)?;
        let sent_packets = config.endpoint.sent_packets_buffer_size;
        let payload_bits = config.packet_payload_bytes() as u64 * 8;
        let channels: Vec<Channel<In>> = config
            .channels
            .iter()
            .map(|channel| Channel::new(channel, config.channels.len(), payload_bits, sent_packets))
            .collect();
        Ok(Self {
            endpoint,
            chunk_sender,
            chunk_receiver,
            slice_acks_owed: false,
            transmit_time: f64::NEG_INFINITY,
            plan: Vec::with_capacity(channels.len()),
            activity: activity::Activity::new(&channels),
            channels,
            received_blocks: VecDeque::new(),
            counters: ConnectionCounters::default(),
            acks_owed: AcksOwed::default(),
            ack_report: AckReport::default(),
            rotation: 0,
            datagram: Vec::new(),
            incoming: Vec::new(),
            sections: section::SectionAcks::new(sent_packets),
            budget: config.bandwidth * config.budget_window,
            budget_time: now,
            time: now,
            config,
            _out: PhantomData,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    /// The largest message, in encoded bits, that `channel` sends in one packet; larger
    /// ones go as blocks on reliable channels and are refused on unreliable ones. A
    /// message with an alignment (a `String`, bytes, a `#[net(align)]` field) counts its
    /// size at the worst bit offset, at most 7 bits more than measured: it is written in
    /// place, its padding where it lands in the packet (see WIRE.md, section 5).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let connection: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// // 1191 payload bytes, minus the framing of one reliable entry of 1 message and
    /// // room for an ack delay (18 bits).
    /// assert_eq!(connection.max_message_bits(0), Some(1191 * 8 - 1 - 18 - 10 - 16 - 1));
    /// ```
    pub fn max_message_bits(&self, channel: impl Into<ChannelId>) -> Option<u64> {
        self.channels
            .get(usize::from(channel.into().0))
            .map(|channel| channel.max_message_bits)
    }

    /// Queues `message` on `channel`. It is measured and encoded now; the bits are kept
    /// until sent (unreliable) or acked (reliable). A reliable message larger than
    /// [`max_message_bits`](Self::max_message_bits) goes as a block, in order with the
    /// channel's other messages.
    ///
    /// # Errors
    /// [`SendError`]: an unknown channel, a full send queue or block queue, a value
    /// outside its bounds, an unreliable message too large for a packet, a block larger
    /// than `max_block_size`. Nothing is queued then.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig, SendError};
    /// let mut connection: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// connection.send_message(0, &7).unwrap();
    /// assert!(matches!(connection.send_message(9, &7), Err(SendError::InvalidChannel { .. })));
    /// ```
    pub fn send_message(
        &mut self,
        channel: impl Into<ChannelId>,
        message: &Out,
    ) -> Result<(), SendError> {
        let channel = channel.into();
        // Checked before encoding, so a full queue costs no encode.
        self.check_room(channel)?;
        let encoded = EncodedMessage::encode(message).map_err(SendError::Encode)?;
        self.send_encoded(channel, encoded)
    }

    /// The index of `channel` if its send queue has room.
    fn check_room(&self, channel: ChannelId) -> Result<usize, SendError> {
        let index = usize::from(channel.0);
        let Some(state) = self.channels.get(index) else {
            return Err(SendError::InvalidChannel { channel });
        };
        if state.is_full() {
            return Err(SendError::SendQueueFull {
                channel,
                capacity: state.config.send_queue_size,
            });
        }
        Ok(index)
    }

    /// [`send_message`](Self::send_message) for a message already encoded, so that a
    /// server broadcasting one snapshot to many clients encodes it once.
    pub(crate) fn send_encoded(
        &mut self,
        channel: ChannelId,
        encoded: EncodedMessage,
    ) -> Result<(), SendError> {
        let index = self.check_room(channel)?;
        // An idle reliable sender catches up with the acks it was spared first.
        self.activity.on_send(index, &mut self.channels[index]);
        let state = &mut self.channels[index];
        // A message with alignment is sized at its worst offset (at most 7 bits more than
        // from bit 0), so it fits a packet wherever it lands.
        if !state.is_block(&encoded) {
            state.push_message(encoded);
        } else if let channels::Sender::Reliable(sender) = &mut state.sender {
            let size = encoded.bytes.len();
            let max = self.config.max_block_size;
            if size > max {
                return Err(SendError::BlockTooLarge { channel, size, max });
            }
            let chunk = self
                .chunk_sender
                .send(encoded.bytes.into_vec())
                .map_err(|error| match error {
                    ChunkError::QueueFull { capacity } => SendError::BlockQueueFull { capacity },
                    // Sizes were checked against the chunk limits by the config.
                    _ => SendError::BlockTooLarge { channel, size, max },
                })?;
            sender.push(Payload::Block(chunk));
            self.activity.on_block(index);
            state.counters.blocks_sent += 1;
        } else {
            return Err(SendError::MessageTooLarge {
                channel,
                bits: encoded.max_bits(),
                max_bits: state.max_message_bits,
            });
        }
        state.counters.messages_sent += 1;
        Ok(())
    }

    /// The next message received on `channel`, if any (in order on a reliable-ordered
    /// channel). `None` also for an unknown channel.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut connection: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert_eq!(connection.receive_message(0), None);
    /// ```
    pub fn receive_message(&mut self, channel: impl Into<ChannelId>) -> Option<In> {
        let index = usize::from(channel.into().0);
        // Never set for a channel that holds nothing (nor for an unknown one).
        if !self.activity.may_have_received(index) {
            return None;
        }
        let state = self.channels.get_mut(index)?;
        let counters = &mut state.counters;
        let message = match &mut state.receiver {
            Receiver::Unreliable(receiver) => receiver.next(),
            Receiver::Reliable(receiver) => {
                let blocks = &mut self.received_blocks;
                let held = blocks.len();
                let message = receiver.next(|chunk| take_block(blocks, chunk, counters));
                // Blocks complete only as slices arrive, which refill then: there is
                // room for more only once one is taken.
                if self.received_blocks.len() < held {
                    self.refill_blocks();
                }
                message
            }
        };
        let state = &mut self.channels[index];
        if message.is_some() {
            state.counters.messages_delivered += 1;
        }
        self.activity.note_received(index, state.received());
        message
    }

    /// Moves completed blocks out of the chunk receiver while there is room.
    fn refill_blocks(&mut self) {
        while self.received_blocks.len() < self.config.max_received_blocks {
            match self.chunk_receiver.take_chunk() {
                Some(chunk) => self.received_blocks.push_back(chunk),
                None => break,
            }
        }
    }

    /// Takes in a datagram received at `now`: a connection packet, a slice or a slice ack.
    ///
    /// # Errors
    /// A [`ReceiveError`] saying why the datagram was dropped (counted in
    /// [`counters`](Self::counters)). A dropped packet delivers no message and acks
    /// nothing.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig, ReceiveError};
    /// let config = ConnectionConfig::default();
    /// let mut a: Connection<u16> = Connection::new(0.0, config.clone()).unwrap();
    /// let mut b: Connection<u16> = Connection::new(0.0, config).unwrap();
    /// a.send_message(0, &500).unwrap();
    /// let datagram = a.poll_transmit(0.0).unwrap().to_vec();
    /// b.handle_datagram(0.05, &datagram).unwrap();
    /// assert_eq!(b.receive_message(0), Some(500));
    /// // The same datagram again: the endpoint refuses the duplicate.
    /// assert!(matches!(b.handle_datagram(0.06, &datagram), Err(ReceiveError::Endpoint(_))));
    /// assert_eq!(b.counters().endpoint_drops, 1);
    /// ```
    pub fn handle_datagram(&mut self, now: f64, bytes: &[u8]) -> Result<(), ReceiveError> {
        self.handle_datagram_with(now, bytes, |_| false)
    }

    /// [`handle_datagram`](Self::handle_datagram) for a connection that carries
    /// sections of a layer above (snapshots): `on_section` is handed the section of a
    /// packet that has one, before the packet is acked, and returns whether it takes it.
    /// A refused section drops the whole packet, unacked (as reliable.c's
    /// `process_packet_function`), so an ack always means the layer above took it.
    /// `on_section` may see the same packet twice (a duplicate the endpoint then
    /// refuses): taking a section must not depend on seeing it once.
    ///
    /// # Errors
    /// As [`handle_datagram`](Self::handle_datagram), and
    /// [`ReceiveError::SectionRefused`] when `on_section` returns `false`.
    ///
    /// ```
    /// use netser::Decoder;
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default();
    /// let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
    /// let mut b: Connection<u8> = Connection::new(0.0, config).unwrap();
    /// a.send_section(0.0, &[0b1011], 4).unwrap();
    /// let datagram = a.poll_transmit(0.0).unwrap().to_vec();
    /// let mut seen = Vec::new();
    /// b.handle_datagram_with(0.05, &datagram, |section| {
    ///     seen.push(section.reader().read_bits(4).unwrap());
    ///     true
    /// })
    /// .unwrap();
    /// assert_eq!(seen, [0b1011]);
    /// ```
    pub fn handle_datagram_with(
        &mut self,
        now: f64,
        bytes: &[u8],
        mut on_section: impl FnMut(ReceivedSection<'_>) -> bool,
    ) -> Result<(), ReceiveError> {
        self.time = now;
        self.counters.datagrams_received += 1;
        let result = self.process_datagram(now, bytes, &mut on_section);
        if let Err(error) = &result {
            error.count(&mut self.counters);
        }
        result
    }

    fn process_datagram(
        &mut self,
        now: f64,
        bytes: &[u8],
        on_section: &mut dyn FnMut(ReceivedSection<'_>) -> bool,
    ) -> Result<(), ReceiveError> {
        match bytes.first() {
            Some(&SLICE_PACKET_TYPE) => {
                self.slice_acks_owed = true;
                self.chunk_receiver
                    .receive_slice(now, bytes)
                    .map_err(ReceiveError::Block)?;
                self.refill_blocks();
                return Ok(());
            }
            Some(&ACK_PACKET_TYPE) => {
                return self
                    .chunk_sender
                    .receive_ack(now, bytes)
                    .map_err(ReceiveError::Block);
            }
            _ => {}
        }
        // A whole packet is parsed (and its section handed up) before the endpoint sees
        // it, so that a packet we cannot take is never acked (the peer resends its
        // messages, and its snapshot layer never takes a refused snapshot for received).
        let mut ack_header = None;
        let parsed_early = match bytes.first() {
            Some(prefix) if prefix & 1 == 0 => {
                match crate::endpoint::header::PacketHeader::read(bytes) {
                    Ok((header, header_len)) => {
                        ack_header = Some(header.ack);
                        let payload = &bytes[header_len..];
                        let parsed = packet::parse(payload, &self.channels, &mut self.incoming)?;
                        section::hand_up(header.sequence, payload, parsed.section, on_section)?;
                        Some(parsed)
                    }
                    Err(_) => None, // the endpoint reports it
                }
            }
            _ => None,
        };
        let ack_delay = parsed_early.map_or(0.0, |parsed| parsed.ack_delay);
        let received = self
            .endpoint
            .handle_datagram_with_ack_delay(now, bytes, ack_delay)
            .map_err(ReceiveError::Endpoint)?;
        let taken = received.is_some();
        if let Some(received) = received {
            let sequence = received.sequence;
            let had_section = match parsed_early {
                Some(parsed) => parsed.section.is_some(),
                None => {
                    // A reassembled packet: already recorded as received by the endpoint,
                    // so a refused section can no longer hold back its ack (the
                    // connection never fragments its own packets; only a peer with a
                    // larger `endpoint.max_packet_size` sends these).
                    let start =
                        packet::parse(received.payload, &self.channels, &mut self.incoming)?
                            .section;
                    section::hand_up(received.sequence, received.payload, start, on_section)?;
                    start.is_some()
                }
            };
            self.counters.packets_received += 1;
            if !self.incoming.is_empty() || had_section {
                self.owe_ack(now, sequence);
            }
            self.deliver_incoming();
        }
        self.process_acks();
        // The peer's newest ack tells the reliable senders which messages it missed,
        // before the ack of a later packet would (a reassembled packet's header is not
        // at hand: it only delays that news to the next packet).
        if let (true, Some(ack)) = (taken, ack_header) {
            self.on_ack_header(now, ack);
        }
        Ok(())
    }

    /// Hands parsed messages to their channels.
    fn deliver_incoming(&mut self) {
        for Incoming { channel, id, item } in self.incoming.drain(..) {
            self.activity.on_receive(channel);
            if self.channels[channel].accept(id, item) {
                self.counters.messages_decoded += 1;
            }
        }
    }

    /// The next datagram to send at `now`, each at most `mtu` bytes: slice acks, then
    /// slices of the blocks in flight, then a packet of messages (it carries every ack
    /// owed), or of acks only when an ack has waited
    /// [`ack_delay`](ConnectionConfig::ack_delay) for a packet to carry it. Call until
    /// `None` once per frame after [`handle_timeout`](Self::handle_timeout).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// for value in 0..3 {
    ///     a.send_message(0, &value).unwrap();
    /// }
    /// let datagram = a.poll_transmit(0.0).unwrap();
    /// assert!(datagram.len() <= 1200); // all three in one packet
    /// assert!(a.poll_transmit(0.0).is_none()); // resent only after the resend delay
    /// assert!(a.poll_transmit(0.1).is_some());
    /// ```
    pub fn poll_transmit(&mut self, now: f64) -> Option<&[u8]> {
        self.time = now;
        self.transmit_time = self.transmit_time.max(now);
        if self.slice_acks_owed {
            if let Some(ack) = self.chunk_receiver.poll_ack(now) {
                self.datagram.clear();
                self.datagram.extend_from_slice(ack);
                self.counters.slice_acks_sent += 1;
                return Some(&self.datagram);
            }
            // None now: owed but not yet allowed (the ack interval), or none owed.
            self.slice_acks_owed = self.chunk_receiver.next_ack_time().is_some();
        }
        if let Some(slice) = self.chunk_sender.poll_packet(now) {
            self.datagram.clear();
            self.datagram.extend_from_slice(slice);
            self.counters.slices_sent += 1;
            return Some(&self.datagram);
        }
        if self.endpoint.pending_transmits() == 0 && !self.build_packet(now) {
            return None;
        }
        self.endpoint.poll_transmit().map(|transmit| transmit.data)
    }

    /// Packs a packet and hands it to the endpoint; `false` when there is nothing to send.
    fn build_packet(&mut self, now: f64) -> bool {
        self.build_packet_with(now, None).is_some()
    }

    fn refill_budget(&mut self, now: f64) {
        let elapsed = (now - self.budget_time).max(0.0);
        self.budget_time = self.budget_time.max(now);
        let cap = (self.config.bandwidth * self.config.budget_window).max(self.config.mtu as f64);
        self.budget = (self.budget + elapsed * self.config.bandwidth).min(cap);
    }

    /// When the budget is positive again (now if it is).
    fn budget_time(&self) -> f64 {
        if self.budget > 0.0 {
            self.time
        } else {
            self.budget_time + (-self.budget) / self.config.bandwidth + 1e-9
        }
    }

    /// Advances time: recomputes the endpoint's estimates and feeds them to the reliable
    /// channels (resends from the retransmission timeout and acks of later packets) and
    /// to the block sender (slice resends from the RTO), and releases the blocks the
    /// peer now holds whole. Call once per frame.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// a.handle_timeout(1.0 / 60.0);
    /// assert_eq!(a.rtt(), 0.0); // nothing acked yet
    /// ```
    pub fn handle_timeout(&mut self, now: f64) {
        self.time = now;
        self.endpoint.handle_timeout(now);
        let stats = self.endpoint.stats();
        let has_rtt = self.endpoint.has_rtt();
        // The block sender waits `chunk.resend_rtt_factor` x the RTO between two sends of
        // a slice: the RTO follows the path within a few samples and allows for the
        // peer's ack delay.
        self.chunk_sender.set_rtt(has_rtt.then_some(stats.rto));
        let completed = self.chunk_sender.last_completed().map(|(chunk, _)| chunk);
        let timing = has_rtt.then(|| ResendTiming::from_stats(stats));
        // Only reliable channels with messages queued or blocks held are told; the
        // others take `timing` when given a message.
        self.activity.timing = timing;
        for index in activity::bits(self.activity.reliable_busy()) {
            let holds_blocks = self.channels[index].update(timing, completed);
            self.activity.note_blocks(index, holds_blocks);
        }
    }

    /// When the connection next has something to send (a message due, a resend, a
    /// slice, an ack), if anything; `time` of the last call if it has something now.
    /// A sans-IO driver sleeps until then or until a datagram arrives.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert_eq!(a.poll_timeout(), None);
    /// a.send_message(0, &1).unwrap();
    /// assert_eq!(a.poll_timeout(), Some(0.0));
    /// while a.poll_transmit(0.0).is_some() {}
    /// assert_eq!(a.poll_timeout(), Some(0.1)); // the resend, unless acked before
    /// ```
    pub fn poll_timeout(&self) -> Option<f64> {
        let mut wakeup: Option<f64> = None;
        let mut at = |t: f64| wakeup = Some(wakeup.map_or(t, |w: f64| w.min(t)));
        if let Some(deadline) = self.ack_deadline() {
            at(deadline.max(self.time));
        }
        let budget = self.budget_time();
        for index in activity::bits(self.activity.queued()) {
            if let Some(t) = self.channels[index].next_due_time(self.time, budget) {
                at(t);
            }
        }
        if let Some(t) = self.chunk_sender.next_send_time() {
            at(t);
        }
        if let Some(t) = self
            .slice_acks_owed
            .then(|| self.chunk_receiver.next_ack_time())
            .flatten()
        {
            at(t.max(self.transmit_time));
        }
        wakeup
    }

    /// The most heap bytes this connection holds, with every queue full: the endpoint
    /// ([`endpoint::Config::memory_bound`](crate::endpoint::Config::memory_bound), its
    /// bounded ack list and one outgoing packet), each channel's send queue full of the
    /// largest messages that fit a packet and its sent-packet map full, each receive
    /// queue full, the block sender's queue (at `max_block_size`) and the blocks in
    /// flight, the blocks being received, and the received blocks waiting (at
    /// `max_block_size`), and the scratch buffers. Blocks in flight: at most
    /// `chunk.max_chunks_in_flight` of them, within the larger of
    /// `chunk.max_bytes_in_flight` and one block (a larger block goes alone), with their
    /// per-chunk and per-slice state. Blocks being received: with one in flight, two
    /// blocks of `chunk.max_chunk_size()` (the chunk receiver may hold a partial block
    /// a forged slice moved it away from); with more, at most as many as in flight,
    /// within `chunk.max_bytes_in_flight` plus one such block (the oldest is always
    /// accepted), each with its bitfield and state. Heap
    /// memory owned by received messages (a `Vec` or `String` field) comes on top,
    /// bounded by the message type's declared limits. A bound larger than `usize::MAX`
    /// (from huge queue settings) is reported as `usize::MAX`.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let connection: Connection<u32> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// // About 9 MiB, half of it blocks: 256 KiB in flight each way (and one more
    /// // block on the receiving side), 8 queued and 8 received blocks of 256 KiB.
    /// assert!(connection.memory_bound() < 10 * 1024 * 1024);
    /// ```
    pub fn memory_bound(&self) -> usize {
        // Saturating throughout: `chunk.max_queued_chunks` and `max_received_blocks` have
        // no upper bound, and a bound too large to count is still a bound that says "too
        // much" rather than a panic.
        let config = &self.config;
        let endpoint = config
            .endpoint
            .memory_bound()
            .saturating_add(
                config
                    .endpoint
                    .sent_packets_buffer_size
                    .saturating_mul(core::mem::size_of::<u16>()),
            )
            .saturating_add(config.mtu);
        let mut incoming: usize = 0;
        // The channels themselves, then what each holds.
        let mut channels = self
            .channels
            .len()
            .saturating_mul(core::mem::size_of::<Channel<In>>());
        for channel in &self.channels {
            channels = channels.saturating_add(channel.memory_bound());
            incoming = incoming.saturating_add(channel.incoming_bytes());
        }
        let chunk = &config.chunk;
        let in_flight = chunk.max_chunks_in_flight;
        let max_chunk = chunk.max_chunk_size();
        // The sender: the blocks within the bytes limit, or one larger block alone, and
        // never more than `in_flight` blocks (each counted at whole slices).
        let sent_bytes = chunk
            .max_bytes_in_flight
            .max(max_chunk)
            .min(in_flight.saturating_mul(max_chunk));
        // Its per-slice state: each block's slices, the last one partial.
        let sent_slices = (sent_bytes / chunk.slice_size.max(1))
            .saturating_add(in_flight)
            .min(in_flight.saturating_mul(chunk.max_slices));
        let received_bytes = if in_flight == 1 {
            max_chunk.saturating_mul(2)
        } else {
            chunk
                .max_bytes_in_flight
                .saturating_add(max_chunk)
                .min(in_flight.saturating_mul(max_chunk))
        };
        let blocks = config
            .chunk
            .max_queued_chunks
            .saturating_mul(config.max_block_size)
            .saturating_add(sent_bytes)
            .saturating_add(received_bytes)
            .saturating_add(
                chunk
                    .max_slices
                    .div_ceil(8)
                    .saturating_mul(in_flight.max(2)),
            )
            .saturating_add(sent_slices.saturating_mul(crate::chunk::PER_SLICE_STATE_BYTES))
            .saturating_add(
                (crate::chunk::SENDER_PER_CHUNK_STATE_BYTES
                    + crate::chunk::RECEIVER_PER_CHUNK_STATE_BYTES)
                    .saturating_mul(in_flight),
            )
            .saturating_add(
                config
                    .max_received_blocks
                    .saturating_mul(config.max_block_size),
            );
        let sections = section::SectionAcks::heap_bytes(config.endpoint.sent_packets_buffer_size);
        // The first term: the room a packet is built in, in the endpoint's outgoing
        // queue (its header goes in the queue's per-packet share above).
        let scratch = config
            .packet_payload_bytes()
            .max(config.endpoint.max_packet_size)
            .saturating_add(sections)
            .saturating_add(config.mtu)
            .saturating_add(incoming)
            .saturating_add(config.channels.len() * core::mem::size_of::<(usize, usize)>());
        endpoint
            .saturating_add(channels)
            .saturating_add(blocks)
            .saturating_add(scratch)
    }

    /// The endpoint's estimates: RTT, jitter, packet loss, bandwidth (recomputed by
    /// [`handle_timeout`](Self::handle_timeout)).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// // Nothing sent yet: loss and bandwidth are not known, not zero.
    /// assert_eq!(a.stats().packet_loss, None);
    /// assert_eq!(a.stats().sent_kbps, None);
    /// ```
    pub fn stats(&self) -> &Stats {
        self.endpoint.stats()
    }

    /// The round-trip time of the network path, seconds, smoothed (RFC 6298); 0 until
    /// the first ack. The time the peer held each ack is reported with it and taken
    /// off (see [`Stats`]), so with acks riding on the peer's packets this is the
    /// path's round trip, not the path's plus the peer's send interval.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default();
    /// let mut a: Connection<u8> = Connection::new(0.0, config.clone()).unwrap();
    /// let mut b: Connection<u8> = Connection::new(0.0, config).unwrap();
    /// a.send_message(0, &1).unwrap();
    /// let datagram = a.poll_transmit(0.0).unwrap().to_vec();
    /// b.handle_datagram(0.05, &datagram).unwrap(); // 50 ms one way
    /// assert!(b.poll_transmit(0.05).is_none()); // the ack waits for a packet of b's
    /// let ack = b.poll_transmit(0.1).unwrap().to_vec(); // none came: acks only, 50 ms late
    /// a.handle_datagram(0.15, &ack).unwrap();
    /// assert!((a.rtt() - 0.1).abs() < 1e-9); // 150 ms less the 50 ms b held the ack
    /// ```
    pub fn rtt(&self) -> f64 {
        self.endpoint.stats().rtt
    }

    /// What the connection has done.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let mut a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// a.send_message(1, &9).unwrap();
    /// while a.poll_transmit(0.0).is_some() {}
    /// assert_eq!(a.counters().packets_sent, 1);
    /// assert_eq!(a.channel_counters(1).unwrap().messages_sent, 1);
    /// ```
    pub fn counters(&self) -> &ConnectionCounters {
        &self.counters
    }

    /// What `channel` has done; `None` for an unknown channel.
    pub fn channel_counters(&self, channel: impl Into<ChannelId>) -> Option<&ChannelCounters> {
        self.channels
            .get(usize::from(channel.into().0))
            .map(|channel| &channel.counters)
    }

    /// The packet endpoint (its counters, drop reasons, memory).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Progress of the block being sent (slices acked of the oldest in flight), if any.
    pub fn block_send_progress(&self) -> Option<crate::chunk::SendProgress> {
        self.chunk_sender.progress()
    }

    /// Progress of the block being received (the oldest with a slice received), if any.
    pub fn block_receive_progress(&self) -> Option<crate::chunk::ReceiveProgress> {
        self.chunk_receiver.progress()
    }

    /// The block sender's counters: slices sent and resent, acks, blocks completed, the
    /// most blocks in flight at once, acks refused by reason.
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert_eq!(a.block_sender_stats().chunks_completed, 0);
    /// ```
    pub fn block_sender_stats(&self) -> &crate::chunk::ChunkSenderStats {
        self.chunk_sender.stats()
    }

    /// The block receiver's counters: slices received, duplicates, slices dropped while
    /// completed blocks wait, blocks completed, slices refused by reason (a slice of a
    /// block past the blocks in flight among them).
    ///
    /// ```
    /// use netser_transport::connection::{Connection, ConnectionConfig};
    /// let a: Connection<u8> = Connection::new(0.0, ConnectionConfig::default()).unwrap();
    /// assert_eq!(a.block_receiver_stats().rejected.chunk_beyond_window, 0);
    /// ```
    pub fn block_receiver_stats(&self) -> &crate::chunk::ChunkReceiverStats {
        self.chunk_receiver.stats()
    }

    /// Messages on `channel` not yet acked (reliable) or not yet sent (unreliable).
    pub fn queued_messages(&self, channel: impl Into<ChannelId>) -> usize {
        self.channels
            .get(usize::from(channel.into().0))
            .map_or(0, Channel::queued)
    }

    /// Messages received on `channel` and not yet taken.
    pub fn received_messages(&self, channel: impl Into<ChannelId>) -> usize {
        self.channels
            .get(usize::from(channel.into().0))
            .map_or(0, Channel::received)
    }
}

/// Finds a block's bytes and decodes them.
fn take_block<In: NetSerialize>(
    blocks: &mut VecDeque<ReceivedChunk>,
    chunk: u16,
    counters: &mut ChannelCounters,
) -> BlockState<In> {
    let Some(position) = blocks.iter().position(|block| block.id == chunk) else {
        return BlockState::Pending;
    };
    let block = blocks.remove(position).expect("position is in range");
    let mut r = ReadStream::new(&block.data);
    match In::decode(&mut r) {
        Ok(message) if r.bytes_read() == block.data.len() => {
            counters.blocks_delivered += 1;
            BlockState::Ready(message)
        }
        _ => {
            counters.blocks_failed_decode += 1;
            BlockState::Failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulator::{Simulator, SimulatorConfig};

    #[derive(netser::NetSerialize, Debug, Clone, PartialEq)]
    struct Block(#[net(max_len = 20_000)] Vec<u8>);

    /// The flag that lets a connection skip its block receiver is never clear while the
    /// receiver owes a slice ack, over loss, duplicates and reordering, blocks in both
    /// directions; and every block arrives (the acks went).
    #[test]
    fn slice_acks_are_skipped_only_when_none_is_owed() {
        let net = SimulatorConfig {
            latency: 0.04,
            jitter: 0.02,
            loss: 0.3,
            duplicate: 0.1,
            reorder: 0.2,
            seed: 5,
            ..Default::default()
        };
        let mut sim: Simulator = Simulator::new(net);
        let config = ConnectionConfig::default();
        let mut a: Connection<Block> = Connection::new(0.0, config.clone()).unwrap();
        let mut b: Connection<Block> = Connection::new(0.0, config).unwrap();
        let block = |i: u32| Block(vec![i as u8; 2000 + (i % 100) as usize * 300]);
        let mut got = (Vec::new(), Vec::new());
        for frame in 0..3000u32 {
            let now = f64::from(frame) / 60.0;
            if frame < 1200 && frame % 40 == 0 {
                a.send_message(0, &block(frame / 40)).unwrap();
                b.send_message(0, &block(frame / 40 + 100)).unwrap();
            }
            for (side, from, to) in [(&mut a, 1, 2), (&mut b, 2, 1)] {
                side.handle_timeout(now);
                while let Some(datagram) = side.poll_transmit(now) {
                    sim.send(now, from, to, datagram);
                }
                assert!(
                    side.slice_acks_owed || side.chunk_receiver.next_ack_time().is_none(),
                    "frame {frame}"
                );
            }
            while let Some(delivery) = sim.receive(now) {
                let side = if delivery.to == 1 { &mut a } else { &mut b };
                let _ = side.handle_datagram(now, &delivery.data);
                assert!(side.slice_acks_owed || side.chunk_receiver.next_ack_time().is_none());
            }
            got.0.extend(std::iter::from_fn(|| a.receive_message(0)));
            got.1.extend(std::iter::from_fn(|| b.receive_message(0)));
        }
        assert_eq!(got.1, (0..30).map(block).collect::<Vec<_>>());
        assert_eq!(got.0, (100..130).map(block).collect::<Vec<_>>());
        assert!(a.counters().slice_acks_sent > 0 && b.counters().slice_acks_sent > 0);
    }

    /// Huge queue settings pass validation (they allocate nothing up front) and
    /// overflowed `memory_bound`; it now saturates.
    #[test]
    fn memory_bound_saturates_on_huge_queues() {
        let mut config = ConnectionConfig::default();
        config.chunk.max_queued_chunks = usize::MAX;
        let connection: Connection<u32> = Connection::new(0.0, config.clone()).unwrap();
        assert_eq!(connection.memory_bound(), usize::MAX);
        config.chunk.max_queued_chunks = 8;
        config.max_received_blocks = usize::MAX;
        let connection: Connection<u32> = Connection::new(0.0, config).unwrap();
        assert_eq!(connection.memory_bound(), usize::MAX);
    }
}
