//! Raw datagrams, plaintext packets sealed with the right key, public connect tokens and
//! private connect tokens (plaintext sealed with the server's key, or as sent) to the
//! netcode readers and to a server's connection request handling.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netser_tests::adversarial::netcode::netcode_packets(data);
});
