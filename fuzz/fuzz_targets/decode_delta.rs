//! Decodes a baseline (absolute) and a delta against it, of the derived delta types
//! (the articles' cube, a scene of cubes, a player with every field kind, an enum);
//! whatever decodes must re-encode within `MAX_DELTA_BITS` and decode to what absolute
//! decoding gives.
#![no_main]

#[path = "../../tests/tests/delta/types.rs"]
#[allow(dead_code)]
mod types;

#[path = "../../tests/tests/delta/fuzz_target.rs"]
#[allow(dead_code)]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = target::decode_delta(data);
});
