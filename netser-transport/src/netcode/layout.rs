//! The two byte layouts netcode 1.02 is written in: the standard's, and `renetcode`'s.

use std::net::{Ipv6Addr, SocketAddr};

use super::{MAX_PAYLOAD_BYTES, RENETCODE_MAX_PAYLOAD_BYTES};

/// Which layout of netcode 1.02 a side writes and reads.
///
/// [`Layout::Standard`], the default, is the netcode standard's (STANDARD.md of the C
/// reference, which yojimbo and the netcode libraries of other languages follow).
/// [`Layout::Renetcode`] is the layout of the `renetcode` 2.x crate, which departs from the
/// standard in three places:
///
/// | | standard | `renetcode` |
/// |---|---|---|
/// | connect token | fields, zero-padded to 2048 bytes | a copy of the client id first, then the fields, unpadded |
/// | IPv6 address in a token | eight 16-bit groups, each little-endian | the 16 bytes in network order |
/// | largest payload | 1200 bytes | 1300 bytes |
/// | sequence 0 | one byte | no byte (netser writes one byte in both layouts) |
///
/// Both sides must use the same layout: set [`ServerConfig::layout`](super::ServerConfig)
/// on the server, and [`TokenParams::layout`](super::TokenParams) on the backend (or
/// [`ConnectToken::from_bytes_with`](super::ConnectToken::from_bytes_with) when a client
/// reads a token's bytes); a client takes its layout from its token. A mismatch is refused
/// with an error that names the layout wherever the bytes show it: a token read in the
/// other layout ([`TokenError::LayoutMismatch`](super::TokenError::LayoutMismatch)), a
/// private token whose IPv6 addresses only match in the other layout, or an authenticated
/// packet in a form only `renetcode` writes
/// ([`DisconnectReason::LayoutMismatch`](super::DisconnectReason::LayoutMismatch),
/// [`Refusal::LayoutMismatch`](super::Refusal::LayoutMismatch)).
///
/// ```
/// use netser_transport::netcode::Layout;
/// assert_eq!(Layout::default(), Layout::Standard);
/// assert_eq!(Layout::Standard.max_payload_bytes(), 1200);
/// assert_eq!(Layout::Renetcode.max_payload_bytes(), 1300);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The netcode standard's layout (the C reference's).
    #[default]
    Standard,
    /// The `renetcode` 2.x crate's layout.
    Renetcode,
}

impl Layout {
    /// The largest payload a payload packet carries in this layout.
    pub const fn max_payload_bytes(self) -> usize {
        match self {
            Layout::Standard => MAX_PAYLOAD_BYTES,
            Layout::Renetcode => RENETCODE_MAX_PAYLOAD_BYTES,
        }
    }

    /// The other layout (what a mismatch is reported as).
    pub(crate) const fn other(self) -> Layout {
        match self {
            Layout::Standard => Layout::Renetcode,
            Layout::Renetcode => Layout::Standard,
        }
    }

    /// The 16 bytes of an IPv6 address as this layout writes them.
    pub(crate) fn ipv6_bytes(self, ip: &Ipv6Addr) -> [u8; 16] {
        match self {
            Layout::Standard => {
                let mut bytes = [0u8; 16];
                for (chunk, group) in bytes.chunks_exact_mut(2).zip(ip.segments()) {
                    chunk.copy_from_slice(&group.to_le_bytes());
                }
                bytes
            }
            Layout::Renetcode => ip.octets(),
        }
    }

    /// The IPv6 address of 16 bytes written in this layout.
    pub(crate) fn ipv6_from(self, bytes: [u8; 16]) -> Ipv6Addr {
        match self {
            Layout::Standard => {
                let mut groups = [0u16; 8];
                for (group, chunk) in groups.iter_mut().zip(bytes.chunks_exact(2)) {
                    *group = u16::from_le_bytes([chunk[0], chunk[1]]);
                }
                Ipv6Addr::from(groups)
            }
            Layout::Renetcode => Ipv6Addr::from(bytes),
        }
    }

    /// `address` as the other layout would have read the same bytes (IPv4 addresses are
    /// the same in both).
    pub(crate) fn misread(self, address: SocketAddr) -> SocketAddr {
        match address {
            SocketAddr::V4(_) => address,
            SocketAddr::V6(v6) => {
                let bytes = self.ipv6_bytes(v6.ip());
                SocketAddr::new(self.other().ipv6_from(bytes).into(), v6.port())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_groups() {
        let ip: Ipv6Addr = "::1".parse().unwrap();
        let mut standard = [0u8; 16];
        standard[14] = 1;
        assert_eq!(Layout::Standard.ipv6_bytes(&ip), standard);
        assert_eq!(Layout::Renetcode.ipv6_bytes(&ip)[15], 1);
        for layout in [Layout::Standard, Layout::Renetcode] {
            let ip: Ipv6Addr = "2001:db8::1234:5678".parse().unwrap();
            assert_eq!(layout.ipv6_from(layout.ipv6_bytes(&ip)), ip);
        }
        // `[::1]` in one layout is `[::100]` in the other.
        let misread = Layout::Standard.misread("[::1]:5".parse().unwrap());
        assert_eq!(misread, "[::100]:5".parse::<SocketAddr>().unwrap());
    }
}
