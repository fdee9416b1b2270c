//! What the fuzz targets (`fuzz/`), the corpus replay and the proptest scripts share:
//! representative derived types, decode round-trip targets, structured scripts against
//! the transport, and the seed corpora generated from the real writers.

pub mod corpus;
pub mod decode;
pub mod script;
pub mod types;
