//! Scripts of sends, deliveries, losses, duplicates, corruptions, truncations, forged
//! and injected datagrams, ticks and resets against two endpoints with fragmentation.
#![no_main]

use netser_tests::adversarial::script::{run_endpoint_script, EndpointScript};

libfuzzer_sys::fuzz_target!(|script: EndpointScript| {
    run_endpoint_script(&script);
});
