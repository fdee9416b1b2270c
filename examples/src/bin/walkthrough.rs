//! The serialization walkthrough: one packet, its bytes, and which value went to which
//! bits.
//!
//! `cargo run -p netser-examples --bin walkthrough`
//!
//! It derives `NetSerialize` for a small snapshot, encodes it, prints the bytes, the bit
//! layout (from `netser::trace`) and each field's bits as they sit in the stream, then
//! shows the framing (protocol id + CRC32) refusing a flipped bit and the encoder refusing
//! a value outside its declared range.

use std::f32::consts::FRAC_1_SQRT_2;

use netser::framing::{read_packet, write_packet};
use netser::NetSerialize;

/// One rigid body, as the articles send it: a quantized position, a smallest-three
/// orientation, and velocity only when the body is moving.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
struct Body {
    /// 0..=63 needs 6 bits.
    #[net(range = 0..=63)]
    id: u8,
    /// Each axis in [-256, 256] at 1/64 m is 15 bits instead of 32.
    #[net(quantize(min = -256.0, max = 256.0, res = 0.015625))]
    position: [f32; 3],
    /// Smallest three: 2 bits for the largest component's index, 3 x 9 bits for the rest.
    #[net(quat(bits = 9))]
    orientation: [f32; 4],
    at_rest: bool,
    /// Only written when `at_rest` is false.
    #[net(when = !at_rest, quantize(min = -32.0, max = 32.0, res = 0.0625))]
    velocity: [f32; 3],
}

/// What the server sends each tick.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(max_bytes = 256)]
struct Snapshot {
    #[net(range = 0..=65535)]
    tick: u32,
    /// A length prefix of 0..=8 (4 bits), then the bodies.
    #[net(max_len = 8)]
    bodies: Vec<Body>,
}

fn main() -> Result<(), netser::Error> {
    let snapshot = Snapshot {
        tick: 1234,
        bodies: vec![
            Body {
                id: 7,
                position: [10.5, -3.25, 1.0],
                orientation: [0.0, 0.0, 0.0, 1.0],
                at_rest: true,
                velocity: [0.0; 3],
            },
            Body {
                id: 8,
                position: [-100.0, 0.0, 42.125],
                orientation: [0.0, FRAC_1_SQRT_2, 0.0, FRAC_1_SQRT_2], // 90 degrees about y
                at_rest: false,
                velocity: [1.5, 0.0, -2.0],
            },
        ],
    };

    // 1. Bounds known at compile time.
    println!(
        "Snapshot: at most {} bits ({} bytes); schema hash {:#018x}",
        Snapshot::MAX_BITS,
        Snapshot::MAX_BYTES,
        Snapshot::SCHEMA_HASH
    );

    // 2. The bytes. The same data as plain f32s and u32s would take
    //    4 + 2 * (1 + 12 + 16 + 1 + 12) = 88 bytes.
    let bytes = snapshot.to_vec()?;
    println!(
        "\nencoded: {} bytes (as plain f32/u32 fields: 88 bytes)",
        bytes.len()
    );
    for row in bytes.chunks(16) {
        let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
        println!("  {}", hex.join(" "));
    }

    // 3. The bit layout: offset, width, field path and value of every primitive.
    let layout = netser::trace::layout(&snapshot)?;
    println!("\nbit layout:\n{layout}");

    // 4. Each field's bits, read back from the bytes. Bits are packed least significant
    //    first: stream bit n is bit (n % 8) of byte n / 8. Printed most significant first,
    //    so they read as the number that was written.
    println!("the same fields, as bits in the stream:");
    for entry in layout.entries() {
        let bits: String = (entry.start..entry.start + entry.bits)
            .rev()
            .map(|n| {
                if bytes[(n / 8) as usize] >> (n % 8) & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        let path = if entry.path.is_empty() {
            "."
        } else {
            &entry.path
        };
        println!("  {path:<28} {bits}");
    }

    // 5. Decoding gives the quantized values back.
    let back = Snapshot::decode_from_slice(&bytes)?;
    println!(
        "\ndecoded body 8: position {:?}, velocity {:?}",
        back.bodies[1].position, back.bodies[1].velocity
    );
    assert_eq!(back.bodies[0].id, 7);
    assert_eq!(back.bodies[1].position, [-100.0, 0.0, 42.125]);

    // 6. Framed as a packet: protocol id and CRC32 first. A peer built from a different
    //    schema, or one bit flipped on the way, is refused with a typed error.
    let protocol_id = Snapshot::SCHEMA_HASH;
    let mut packet = [0u8; 300];
    let len = write_packet(protocol_id, &mut packet, &snapshot)?;
    println!("\nframed packet: {len} bytes (CRC32 in front, a 32-bit end-of-packet check after)");
    packet[10] ^= 0x04;
    match read_packet::<Snapshot>(protocol_id, &packet[..len]) {
        Ok(_) => unreachable!("a flipped bit must fail the CRC"),
        Err(e) => println!("one bit flipped:  {e}"),
    }

    // 7. Writing a value outside its declared range is an error too, naming the field.
    let mut bad = snapshot.clone();
    bad.bodies[1].id = 64;
    match bad.to_vec() {
        Ok(_) => unreachable!("64 is outside 0..=63"),
        Err(e) => println!("id = 64 on write: {e}"),
    }
    Ok(())
}
