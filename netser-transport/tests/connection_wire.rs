//! Pins the connection packet layout of WIRE.md section 5: real datagrams from a
//! connection, read back field by field by an annotator written from the document (not
//! from the connection's code), snapshot-tested. A change to the wire shows up here.

use std::fmt::Write as _;

use netser::{Decoder, NetSerialize, ReadStream};
use netser_transport::channel::{ChannelConfig, ChannelKind};
use netser_transport::connection::{Connection, ConnectionConfig};
use netser_transport::endpoint::header::PacketHeader;

#[derive(NetSerialize, Debug, Clone, PartialEq)]
enum Msg {
    Ping(#[net(range = 0..=15)] u8),
    Blob(#[net(max_len = 4000)] Vec<u8>),
}

/// Channel kinds in configuration order: (has ids, reliable, count bits).
const CHANNELS: [(&str, bool, bool, u32); 3] = [
    ("reliable-ordered", true, true, 8),
    ("unreliable-sequenced", true, false, 8),
    ("unreliable", false, false, 8),
];

fn config() -> ConnectionConfig {
    ConnectionConfig::with_channels(vec![
        ChannelConfig::reliable_ordered(),
        ChannelConfig::new(ChannelKind::UnreliableSequenced),
        ChannelConfig::new(ChannelKind::Unreliable),
    ])
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a connection packet as WIRE.md section 5 describes it.
fn annotate(datagram: &[u8]) -> String {
    let mut out = String::new();
    let (header, len) = PacketHeader::read(datagram).unwrap();
    writeln!(
        out,
        "datagram ({} bytes): {}",
        datagram.len(),
        hex(datagram)
    )
    .unwrap();
    writeln!(
        out,
        "endpoint header ({len} bytes): {} = sequence {}, ack {}, ack_bits {:#010x}",
        hex(&datagram[..len]),
        header.sequence,
        header.ack,
        header.ack_bits
    )
    .unwrap();
    let payload = &datagram[len..];
    writeln!(out, "payload ({} bytes):", payload.len()).unwrap();
    if payload.is_empty() {
        writeln!(out, "  (empty: a packet of acks only)").unwrap();
        return out;
    }
    let mut r = ReadStream::new(payload);
    let field = |r: &mut ReadStream<'_>, name: &str, bits: u32, out: &mut String| -> u64 {
        let at = r.bit_position();
        let value = r.read_bits(bits).unwrap();
        writeln!(out, "  bit {at:>3} +{bits:<2} {name} = {value}").unwrap();
        value
    };
    loop {
        if field(&mut r, "more channels", 1, &mut out) == 0 {
            break;
        }
        let index = field(&mut r, "channel index", 2, &mut out) as usize;
        let (kind, has_ids, reliable, count_bits) = CHANNELS[index];
        writeln!(out, "    ({kind})").unwrap();
        let count = field(&mut r, "message count - 1", count_bits, &mut out) + 1;
        let mut previous = None;
        for _ in 0..count {
            if has_ids {
                let id = match previous {
                    None => field(&mut r, "message id", 16, &mut out) as i32,
                    Some(p) => {
                        let at = r.bit_position();
                        let id = r.read_int_relative(p).unwrap();
                        let bits = r.bit_position() - at;
                        writeln!(
                            out,
                            "  bit {at:>3} +{bits:<2} message id, relative to {p} = {id}"
                        )
                        .unwrap();
                        id
                    }
                };
                previous = Some(id);
            }
            let block = reliable && field(&mut r, "block flag", 1, &mut out) == 1;
            if block {
                field(&mut r, "chunk id", 16, &mut out);
            } else {
                let at = r.bit_position();
                let message = Msg::decode(&mut r).unwrap();
                let bits = r.bit_position() - at;
                writeln!(out, "  bit {at:>3} +{bits:<2} message = {message:?}").unwrap();
            }
        }
    }
    // No section in these packets: its flag is 0, then `1` if an ack delay follows.
    if r.bits_remaining() > 1 {
        assert_eq!(field(&mut r, "section follows", 1, &mut out), 0);
        if field(&mut r, "ack delay follows", 1, &mut out) == 1 {
            field(&mut r, "ack delay (units of 100 us)", 16, &mut out);
        }
    }
    let rest = r.bits_remaining() as u32;
    field(&mut r, "zero padding", rest, &mut out);
    out
}

#[test]
fn connection_packet_layout() {
    let mut a: Connection<Msg> = Connection::new(0.0, config()).unwrap();
    let mut b: Connection<Msg> = Connection::new(0.0, config()).unwrap();
    for value in [1, 2, 3] {
        a.send_message(0, &Msg::Ping(value)).unwrap();
    }
    // Larger than one packet: a block on the reliable channel, in order after Ping(3).
    a.send_message(0, &Msg::Blob(vec![0xab; 3000])).unwrap();
    a.send_message(1, &Msg::Ping(9)).unwrap();
    a.send_message(2, &Msg::Ping(5)).unwrap();

    let mut datagrams = Vec::new();
    while let Some(datagram) = a.poll_transmit(0.0) {
        datagrams.push(datagram.to_vec());
    }
    // Three slices of the block first, then the packet.
    assert_eq!(datagrams.len(), 4);
    let mut report = String::new();
    for slice in &datagrams[..3] {
        writeln!(
            report,
            "slice datagram ({} bytes), header: {}",
            slice.len(),
            hex(&slice[..slice.len().min(9)])
        )
        .unwrap();
    }
    report.push_str(&annotate(&datagrams[3]));

    // The peer receives the packet and, with nothing of its own to send within its ack
    // delay (50 ms), answers with a packet of acks only that says how long it waited.
    b.handle_datagram(0.05, &datagrams[3]).unwrap();
    assert!(b.poll_transmit(0.05).is_none());
    let ack = b.poll_transmit(0.1).unwrap().to_vec();
    report.push_str("\nacks only, 50 ms later:\n");
    report.push_str(&annotate(&ack));

    // After the resend delay, without acks, the reliable messages go again (ids 0..=3).
    a.send_message(1, &Msg::Ping(10)).unwrap();
    let resend = loop {
        let datagram = a.poll_transmit(0.2).unwrap().to_vec();
        if datagram[0] != 0xc1 {
            break datagram;
        }
    };
    report.push_str("\nresent after 0.1 s, with a new sequenced message:\n");
    report.push_str(&annotate(&resend));
    insta::assert_snapshot!(report);
}
