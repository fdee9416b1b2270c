//! Scripts of chunk sends, ticks, slice and ack deliveries, losses, duplicates,
//! mutations, truncations, forgeries, takes and cancels against a chunk sender and
//! receiver.
#![no_main]

use netser_tests::adversarial::script::{run_chunk_script, ChunkScript};

libfuzzer_sys::fuzz_target!(|script: ChunkScript| {
    run_chunk_script(&script);
});
