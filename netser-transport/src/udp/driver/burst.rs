//! Consecutive datagrams to one address, gathered to leave in one system call with
//! Linux's UDP generic segmentation offload (a `sendmsg` with a `UDP_SEGMENT` control
//! message: the kernel cuts the buffer into datagrams of the segment size, the last one
//! possibly shorter). A burst starts with a datagram to the address the previous one
//! went to, no longer than it; so the first datagram to an address leaves at once, and
//! a server's one snapshot per client per tick never waits.

use std::io;
use std::net::{SocketAddr, UdpSocket};

/// Most datagrams in one segmented send (the kernel's limit is 64 on older kernels).
const MAX_SEGMENTS: usize = 64;
/// Largest datagram gathered: it fits the path MTU of any IPv6 link (1280 bytes,
/// less the IPv6 and UDP headers), so a segmented send is never refused for its size
/// (which would turn segmentation off).
const MAX_SEGMENT: usize = 1232;
/// Most bytes in one segmented send: one UDP datagram's worth.
const MAX_BYTES: usize = super::MAX_UDP_PAYLOAD;

/// The datagrams gathered, and where the last one handed to the kernel went.
pub(super) struct Burst {
    /// Off where the platform has no segmentation offload, or its kernel refused it.
    enabled: bool,
    /// Where the last datagram handed to the kernel went, and its length.
    last: Option<(SocketAddr, usize)>,
    to: Option<SocketAddr>,
    segment: usize,
    count: usize,
    bytes: Vec<u8>,
    /// A datagram shorter than the segment joined: it must be the last.
    closed: bool,
}

impl Burst {
    pub(super) fn new() -> Self {
        Self {
            enabled: cfg!(target_os = "linux"),
            last: None,
            to: None,
            segment: 0,
            count: 0,
            bytes: Vec::new(),
            closed: false,
        }
    }

    /// Datagrams gathered.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// Whether a datagram of `len` bytes to `to` would join (or start) a burst.
    pub(super) fn joins(&self, to: SocketAddr, len: usize) -> bool {
        if !self.enabled || len == 0 {
            return false;
        }
        if self.count == 0 {
            matches!(self.last, Some((addr, seg)) if addr == to && len <= seg && seg <= MAX_SEGMENT)
        } else {
            self.to == Some(to)
                && !self.closed
                && len <= self.segment
                && self.count < MAX_SEGMENTS
                && self.bytes.len() + len <= MAX_BYTES
        }
    }

    /// Gathers `datagram` if it can join (or start) a burst to `to`.
    pub(super) fn push(&mut self, to: SocketAddr, datagram: &[u8]) -> bool {
        let len = datagram.len();
        if !self.joins(to, len) {
            return false;
        }
        if self.count == 0 {
            self.to = Some(to);
            self.segment = self.last.map_or(len, |(_, seg)| seg);
        }
        self.bytes.extend_from_slice(datagram);
        self.count += 1;
        self.closed = len < self.segment;
        true
    }

    /// The burst's address, segment size and datagrams, if any are gathered.
    pub(super) fn pending(&self) -> Option<(SocketAddr, usize, usize)> {
        match self.to {
            Some(to) if self.count > 0 => Some((to, self.segment, self.count)),
            _ => None,
        }
    }

    /// The gathered bytes; the burst is empty afterwards.
    pub(super) fn take(&mut self) -> Vec<u8> {
        self.count = 0;
        self.closed = false;
        self.to = None;
        std::mem::take(&mut self.bytes)
    }

    /// Returns the buffer [`take`](Self::take) gave, for its capacity.
    pub(super) fn give_back(&mut self, mut bytes: Vec<u8>) {
        bytes.clear();
        self.bytes = bytes;
    }

    /// A datagram of `len` bytes went to `to`.
    pub(super) fn sent(&mut self, to: SocketAddr, len: usize) {
        self.last = Some((to, len));
    }

    pub(super) fn disable(&mut self) {
        self.enabled = false;
    }
}

/// One `sendmsg` of `bytes` to `to`, cut by the kernel into datagrams of `segment`
/// bytes.
#[cfg(target_os = "linux")]
pub(super) fn send_segmented(
    socket: &UdpSocket,
    to: SocketAddr,
    bytes: &[u8],
    segment: usize,
) -> io::Result<()> {
    let segment =
        u16::try_from(segment).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let (control, len) = segment_control(segment);
    let addr = socket2::SockAddr::from(to);
    let buffers = [io::IoSlice::new(bytes)];
    let message = socket2::MsgHdr::new()
        .with_addr(&addr)
        .with_buffers(&buffers)
        .with_control(&control[..len]);
    socket2::SockRef::from(socket).sendmsg(&message, 0)?;
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(super) fn send_segmented(
    _socket: &UdpSocket,
    _to: SocketAddr,
    _bytes: &[u8],
    _segment: usize,
) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// A `UDP_SEGMENT` control message carrying `segment`, laid out as Linux's
/// `struct cmsghdr` (a `size_t` length, an `int` level, an `int` type, the data
/// aligned to `size_t`), and its length (`CMSG_SPACE`).
#[cfg(target_os = "linux")]
pub(super) fn segment_control(segment: u16) -> ([u8; 32], usize) {
    const SOL_UDP: i32 = 17;
    const UDP_SEGMENT: i32 = 103;
    const WORD: usize = core::mem::size_of::<usize>();
    let header = (WORD + 8).next_multiple_of(WORD);
    let mut control = [0u8; 32];
    control[..WORD].copy_from_slice(&(header + 2).to_ne_bytes());
    control[WORD..WORD + 4].copy_from_slice(&SOL_UDP.to_ne_bytes());
    control[WORD + 4..WORD + 8].copy_from_slice(&UDP_SEGMENT.to_ne_bytes());
    control[header..header + 2].copy_from_slice(&segment.to_ne_bytes());
    (control, header + 2usize.next_multiple_of(WORD))
}

/// Errors by which a kernel says it cannot segment (no checksum offload on the
/// device, an old kernel, a segment over the path MTU): Linux's EIO, EINVAL,
/// ENOPROTOOPT and EOPNOTSUPP.
pub(super) fn is_refusal(e: &io::Error) -> bool {
    cfg!(target_os = "linux") && matches!(e.raw_os_error(), Some(5 | 22 | 92 | 95))
}
