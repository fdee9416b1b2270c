//! Decodes the representative derived types (floats, enums, options, nested bounded
//! collections, strings, maps, sets) and framed packets from raw bytes; whatever decodes
//! must encode to the same bits and decode to the same value.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netser_tests::adversarial::decode::decode_derived(data);
});
