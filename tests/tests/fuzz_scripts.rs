//! The fuzz targets driven by proptest, so `cargo test` explores new inputs on every
//! run: random bytes for the decode targets, and random scripts (read from random bytes
//! by the same `Arbitrary` derive the fuzzer uses) against the endpoint and the chunks.
//! `PROPTEST_CASES` raises the count.

use arbitrary::{Arbitrary, Unstructured};
use netser::NetSerialize;
use netser_tests::adversarial::decode::{decode_derived, decode_numeric, round_trip};
use netser_tests::adversarial::script::{
    run_chunk_script, run_endpoint_script, ChunkScript, EndpointScript,
};
use netser_tests::adversarial::types::Snapshot;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn decode_derived_from_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        decode_derived(&data);
    }

    #[test]
    fn decode_numeric_from_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..40)) {
        decode_numeric(&data);
    }

    /// A real encoding with one byte changed: decodes deep into the schema.
    #[test]
    fn decode_derived_from_mutated_encodings(n in 0u16..9, at in any::<usize>(), byte in any::<u8>()) {
        let seeds = netser_tests::adversarial::corpus::seeds("decode_derived");
        let mut data = seeds[usize::from(n) % seeds.len()].1.clone();
        let i = at % data.len();
        data[i] = byte;
        decode_derived(&data);
        let _ = round_trip::<Snapshot>(&data[1..]);
        prop_assert!(Snapshot::MAX_HEAP_BYTES > 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn endpoint_scripts(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        if let Ok(script) = EndpointScript::arbitrary_take_rest(Unstructured::new(&data)) {
            run_endpoint_script(&script);
        }
    }

    #[test]
    fn chunk_scripts(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        if let Ok(script) = ChunkScript::arbitrary_take_rest(Unstructured::new(&data)) {
            run_chunk_script(&script);
        }
    }
}
