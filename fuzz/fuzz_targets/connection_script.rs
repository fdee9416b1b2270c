//! Scripts of sends (messages, aligned text, blocks), takes, pumps, ticks, deliveries,
//! losses, duplicates, corruptions, truncations, mutations, raw forgeries and arbitrary
//! payloads behind a valid header, against two connections with every channel kind.
#![no_main]

use netser_tests::adversarial::connection::{run_connection_script, ConnectionScript};

libfuzzer_sys::fuzz_target!(|script: ConnectionScript| {
    let _ = run_connection_script(&script);
});
