//! What the fuzz targets (`fuzz/`), the corpus replay and the proptest scripts share:
//! representative derived types, decode round-trip targets, structured scripts against
//! the transport, and the seed corpora generated from the real writers.

pub mod connection;
pub mod corpus;
pub mod decode;
pub mod handshake;
pub mod netcode;
pub mod script;
pub mod script_bytes;
pub mod types;
