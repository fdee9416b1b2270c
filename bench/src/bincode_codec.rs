//! bincode 2.0.1 with its standard configuration (little endian, varint integers) on the
//! shared `f32` struct.

use crate::model::Snapshot;
use crate::{Contender, Rotation};

/// bincode encoding into a reused buffer.
pub struct BincodeCodec {
    rotation: Rotation<Snapshot>,
    buf: Vec<u8>,
    output: Option<Snapshot>,
}

/// `s` into `buf` with the standard configuration; the length written.
fn write(s: &Snapshot, buf: &mut [u8]) -> usize {
    bincode::encode_into_slice(s, buf, bincode::config::standard())
        .expect("the buffer holds the snapshot")
}

impl BincodeCodec {
    /// A codec that encodes `snapshots` in turn.
    ///
    /// # Panics
    /// If `snapshots` is empty.
    pub fn new(snapshots: &[Snapshot]) -> Self {
        // Generous: 4 + 9 bytes of header, then at most 2 + 12 + 16 + 1 + 12 + 1 + 3 bytes
        // per entity with varint ids.
        let most = snapshots
            .iter()
            .map(|s| s.entities.len())
            .max()
            .unwrap_or(0);
        let mut buf = vec![0; 16 + most * 64];
        let rotation = Rotation::new(snapshots.to_vec(), |s| {
            let len = write(s, &mut buf);
            buf[..len].to_vec()
        });
        BincodeCodec {
            rotation,
            buf,
            output: None,
        }
    }
}

impl Contender for BincodeCodec {
    fn name(&self) -> &'static str {
        "bincode"
    }

    fn encode(&mut self) -> usize {
        write(self.rotation.next_input(), &mut self.buf)
    }

    fn decode(&mut self) {
        let frame = self.rotation.next_frame();
        let (value, read): (Snapshot, usize) =
            bincode::decode_from_slice(frame, bincode::config::standard())
                .expect("bincode reads what it wrote");
        debug_assert_eq!(read, frame.len());
        self.output = Some(value);
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        self.output.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;

    #[test]
    fn size_is_what_the_standard_config_promises() {
        // tick 90_210 > 65_535: varint tag + 4 bytes; length 64: 1 byte; per entity a
        // varint id (1 byte below 251, else 3), 12 + 16 + 12 float bytes, 5 one-byte
        // fields (at_rest, health, 3 flags).
        let s = Workload::new(64, false).snapshot();
        let ids: usize = s
            .entities
            .iter()
            .map(|e| if e.id < 251 { 1 } else { 3 })
            .sum();
        let mut c = BincodeCodec::new(std::slice::from_ref(&s));
        assert_eq!(c.encode(), 5 + 1 + ids + 64 * (40 + 5));
        c.decode();
        assert_eq!(c.decoded(), Some(s));
    }
}
