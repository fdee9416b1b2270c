//! bincode 2.0.1 with its standard configuration (little endian, varint integers) on the
//! shared `f32` struct.

use crate::model::Snapshot;
use crate::Contender;

/// bincode encoding into a reused buffer.
pub struct BincodeCodec {
    input: Snapshot,
    buf: Vec<u8>,
    len: usize,
    output: Option<Snapshot>,
}

impl BincodeCodec {
    /// A codec that encodes `input`.
    pub fn new(input: &Snapshot) -> Self {
        // Generous: 4 + 9 bytes of header, then at most 2 + 12 + 16 + 1 + 12 + 1 + 3 bytes
        // per entity with varint ids.
        let capacity = 16 + input.entities.len() * 64;
        BincodeCodec {
            input: input.clone(),
            buf: vec![0; capacity],
            len: 0,
            output: None,
        }
    }
}

impl Contender for BincodeCodec {
    fn name(&self) -> &'static str {
        "bincode"
    }

    fn encode(&mut self) -> usize {
        self.len =
            bincode::encode_into_slice(&self.input, &mut self.buf, bincode::config::standard())
                .expect("the buffer holds the snapshot");
        self.len
    }

    fn decode(&mut self) {
        let (value, read): (Snapshot, usize) =
            bincode::decode_from_slice(&self.buf[..self.len], bincode::config::standard())
                .expect("bincode reads what it wrote");
        debug_assert_eq!(read, self.len);
        self.output = Some(value);
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
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
        let mut c = BincodeCodec::new(&s);
        assert_eq!(c.encode(), 5 + 1 + ids + 64 * (40 + 5));
        c.decode();
        assert_eq!(c.decoded(), Some(s));
    }
}
