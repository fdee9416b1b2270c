//! Scripts of frames, time steps, deliveries, losses, replays from any address,
//! mutations, garbage, packets sealed with real and wrong keys, requests with every kind
//! of token, an attacker's handshakes, payloads, disconnects and reconnects against a
//! netcode server and two clients.
#![no_main]

use netser_tests::adversarial::handshake::{run_handshake_script, HandshakeScript};

libfuzzer_sys::fuzz_target!(|script: HandshakeScript| {
    let _ = run_handshake_script(&script);
});
