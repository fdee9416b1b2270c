//! Decodes quantized floats and smallest-three quaternions from raw bytes; whatever
//! decodes must encode to the same bits and decode to the same value.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netser_tests::adversarial::decode::decode_numeric(data);
});
