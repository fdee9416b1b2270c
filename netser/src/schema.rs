//! Schema hashes: a 64-bit fingerprint of a type's wire layout, computed at compile time.
//!
//! The derive hashes each field's name, type, bounds and quantization, in order, and
//! combines the hashes of nested types, so any change to the layout changes the hash.
//! Used as the framing protocol id, a client built from another schema is rejected at
//! the CRC check instead of desynchronising.
//!
//! ```
//! use netser::NetSerialize;
//!
//! mod v1 {
//!     #[derive(netser::NetSerialize)]
//!     pub struct Input { #[net(bits = 6)] pub buttons: u8 }
//! }
//! mod v2 {
//!     #[derive(netser::NetSerialize)]
//!     pub struct Input { #[net(bits = 7)] pub buttons: u8 } // one more button
//! }
//! assert_ne!(v1::Input::SCHEMA_HASH, v2::Input::SCHEMA_HASH);
//!
//! // As the protocol id, the hash makes a v1 client's packets fail a v2 server's CRC.
//! use netser::framing::{read_packet, write_packet};
//! let mut buf = [0u8; 16];
//! let len = write_packet(v1::Input::SCHEMA_HASH, &mut buf, &v1::Input { buttons: 3 })?;
//! assert!(read_packet::<v2::Input>(v2::Input::SCHEMA_HASH, &buf[..len]).is_err());
//! # Ok::<(), netser::Error>(())
//! ```

/// FNV-1a 64 of `bytes`, usable in `const` items.
///
/// ```
/// const H: u64 = netser::schema::fnv1a(b"PlayerInput");
/// assert_ne!(H, netser::schema::fnv1a(b"PlayerInput2"));
/// assert_eq!(netser::schema::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
/// ```
pub const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// Combines two hashes, order-sensitively (`combine(a, b) != combine(b, a)` in general).
///
/// ```
/// use netser::schema::{combine, fnv1a};
/// let (a, b) = (fnv1a(b"x"), fnv1a(b"y"));
/// assert_ne!(combine(a, b), combine(b, a));
/// ```
pub const fn combine(a: u64, b: u64) -> u64 {
    // splitmix64's finalizer over a rotated mix: cheap, order-sensitive, well spread.
    let mut z = a.rotate_left(5) ^ b.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A 32-bit serialize-check magic value derived from a section name.
///
/// ```
/// const END: u32 = netser::schema::magic("end of packet");
/// assert_eq!(END, netser::framing::END_OF_PACKET);
/// ```
pub const fn magic(name: &str) -> u32 {
    let h = fnv1a(name.as_bytes());
    (h ^ (h >> 32)) as u32
}

/// The magic value of the end-of-packet check, public as
/// [`framing::END_OF_PACKET`](crate::framing::END_OF_PACKET). Defined here, below both
/// `framing`, which writes and reads it, and `error`, whose message for a failed check
/// names it, so that neither of the two imports the other.
pub(crate) const END_OF_PACKET: u32 = magic("end of packet");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_value() {
        // FNV-1a 64 of "a" is a published test value.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
