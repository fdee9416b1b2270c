//! The AEADs of netcode (RustCrypto's `chacha20poly1305`) and the operating system's
//! randomness (`getrandom`); nothing cryptographic is written here, only how netcode builds
//! nonces and where the tag sits.

use chacha20poly1305::aead::inout::InOutBuf;
use chacha20poly1305::{AeadInOut, ChaCha20Poly1305, KeyInit, Nonce, Tag, XChaCha20Poly1305};

use super::MAC_BYTES;

/// A 32-byte ChaCha20-Poly1305 key: the private key shared by the backend and the
/// dedicated servers, or one of the per-client keys of a connect token.
pub type Key = [u8; 32];

/// A key held inside a type: compared and copied as the bytes, never printed. Every key a
/// netcode type stores is one, so a derived `Debug` cannot show a key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SecretKey(pub(crate) Key);

impl core::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// The operating system could not provide random bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomError(pub getrandom::Error);

impl core::fmt::Display for RandomError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The cause is `source()`, as for the crate's other wrapping errors.
        f.write_str("the operating system's random number generator failed")
    }
}

impl std::error::Error for RandomError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// `N` random bytes from the operating system (keys, nonces).
///
/// # Errors
/// [`RandomError`] if the operating system's generator fails (practically never).
///
/// ```
/// let a: [u8; 16] = netser_transport::netcode::random_bytes().unwrap();
/// let b: [u8; 16] = netser_transport::netcode::random_bytes().unwrap();
/// assert_ne!(a, b);
/// ```
pub fn random_bytes<const N: usize>() -> Result<[u8; N], RandomError> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(RandomError)?;
    Ok(bytes)
}

/// A new random private key for a backend and its dedicated servers.
///
/// # Errors
/// [`RandomError`] if the operating system's generator fails.
///
/// ```
/// let key = netser_transport::netcode::generate_key().unwrap();
/// assert_eq!(key.len(), 32);
/// ```
pub fn generate_key() -> Result<Key, RandomError> {
    random_bytes()
}

/// The 96-bit nonce of a packet or challenge token: four zero bytes, then the sequence
/// little-endian.
fn sequence_nonce(sequence: u64) -> Nonce {
    let mut nonce = [0u8; 12];
    nonce[4..].copy_from_slice(&sequence.to_le_bytes());
    Nonce::from(nonce)
}

/// Encrypts `buffer[..len - 16]` in place and writes the tag into the last 16 bytes.
/// `buffer` must be at least 16 bytes (callers size it).
pub(crate) fn encrypt(buffer: &mut [u8], sequence: u64, key: &Key, aad: &[u8]) {
    let (text, tag_out) = buffer.split_at_mut(buffer.len() - MAC_BYTES);
    // The AEAD value only holds the key: building it per packet is a 32-byte copy (the
    // per-message work, the ChaCha20 state for the nonce and the Poly1305 key, is
    // inherent to the construction).
    let tag = ChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(&sequence_nonce(sequence), aad, text.into())
        // Only fails for texts beyond 256 GiB.
        .unwrap_or_default();
    tag_out.copy_from_slice(&tag);
}

/// Encrypts `plain` into `out[..len - 16]` and writes the tag into the last 16 bytes:
/// [`encrypt`] without copying `plain` in first. `out` is `plain.len() + 16` bytes
/// (callers size it; otherwise `out` is left as it was, a packet that does not
/// authenticate).
pub(crate) fn encrypt_from(plain: &[u8], out: &mut [u8], sequence: u64, key: &Key, aad: &[u8]) {
    let (text, tag_out) = out.split_at_mut(out.len().saturating_sub(MAC_BYTES));
    let Ok(buffer) = InOutBuf::new(plain, text) else {
        return;
    };
    let tag = ChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(&sequence_nonce(sequence), aad, buffer)
        .unwrap_or_default();
    tag_out.copy_from_slice(&tag);
}

/// The tag in the last [`MAC_BYTES`] of `buffer` (callers size it).
fn tag_of(tag: &[u8]) -> Tag {
    Tag::try_from(tag).unwrap_or_default()
}

/// Checks the tag in the last 16 bytes and decrypts the rest in place; `false` (and the
/// buffer unspecified) if it does not authenticate. `buffer` must be at least 16 bytes.
#[must_use]
pub(crate) fn decrypt(buffer: &mut [u8], sequence: u64, key: &Key, aad: &[u8]) -> bool {
    let (text, tag) = buffer.split_at_mut(buffer.len() - MAC_BYTES);
    let tag = tag_of(tag);
    ChaCha20Poly1305::new(key.into())
        .decrypt_inout_detached(&sequence_nonce(sequence), aad, text.into(), &tag)
        .is_ok()
}

/// [`encrypt`] with XChaCha20-Poly1305 and a 24-byte nonce (private connect tokens).
pub(crate) fn encrypt_xnonce(buffer: &mut [u8], nonce: &[u8; 24], key: &Key, aad: &[u8]) {
    let (text, tag_out) = buffer.split_at_mut(buffer.len() - MAC_BYTES);
    let tag = XChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(nonce.into(), aad, text.into())
        .unwrap_or_default();
    tag_out.copy_from_slice(&tag);
}

/// [`decrypt`] with XChaCha20-Poly1305 and a 24-byte nonce (private connect tokens).
#[must_use]
pub(crate) fn decrypt_xnonce(buffer: &mut [u8], nonce: &[u8; 24], key: &Key, aad: &[u8]) -> bool {
    let (text, tag) = buffer.split_at_mut(buffer.len() - MAC_BYTES);
    let tag = tag_of(tag);
    XChaCha20Poly1305::new(key.into())
        .decrypt_inout_detached(nonce.into(), aad, text.into(), &tag)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_error_has_the_os_error_as_source() {
        let inner = getrandom::Error::UNSUPPORTED;
        crate::assert_source(&RandomError(inner), &inner);
    }

    #[test]
    fn round_trip_and_tamper() {
        let key = [7u8; 32];
        let mut buffer = [0u8; 40];
        buffer[..24].copy_from_slice(b"twenty-four bytes of txt");
        encrypt(&mut buffer, 9, &key, b"aad");
        assert_ne!(&buffer[..24], b"twenty-four bytes of txt");
        let mut copy = buffer;
        assert!(decrypt(&mut copy, 9, &key, b"aad"));
        assert_eq!(&copy[..24], b"twenty-four bytes of txt");
        for wrong in [(10, &b"aad"[..]), (9, &b"aae"[..])] {
            let mut copy = buffer;
            assert!(!decrypt(&mut copy, wrong.0, &key, wrong.1));
        }
        let mut flipped = buffer;
        flipped[3] ^= 1;
        assert!(!decrypt(&mut flipped, 9, &key, b"aad"));
    }

    /// Sealing from another buffer writes the same bytes as sealing in place.
    #[test]
    fn encrypt_from_equals_encrypt_in_place() {
        let key = [3u8; 32];
        for len in [0usize, 1, 40, 63, 64, 65, 1100] {
            let plain: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut in_place = plain.clone();
            in_place.extend_from_slice(&[0; MAC_BYTES]);
            encrypt(&mut in_place, 77, &key, b"aad");
            let mut from = vec![0xAA; len + MAC_BYTES];
            encrypt_from(&plain, &mut from, 77, &key, b"aad");
            assert_eq!(from, in_place, "len {len}");
        }
    }

    #[test]
    fn xnonce_round_trip() {
        let key = [1u8; 32];
        let nonce = [2u8; 24];
        let mut buffer = [5u8; 64];
        encrypt_xnonce(&mut buffer, &nonce, &key, b"x");
        assert!(decrypt_xnonce(&mut buffer, &nonce, &key, b"x"));
        assert_eq!(buffer[..48], [5u8; 48]);
    }
}
