//! No type of the UDP layer that holds a key prints it with `{:?}` or `{:#?}`: the
//! server's private key, the challenge key it draws at start, and the session keys of the
//! connect token a client holds. Each type is formatted while it holds its keys (a
//! server with a client connected) and the output is searched for every key it is known
//! to hold, as a list of numbers (Debug of a byte array, compact or pretty) and as hex,
//! and for any key-shaped run of bytes (the keys the test cannot see, such as the
//! challenge key).

mod netcode_support;

use netcode_support::{protocol, token, udp_connect};
use netser_transport::netcode::Key;
use netser_transport::udp::{UdpClient, UdpClientConfig, UdpServer, UdpServerConfig};

type Server = UdpServer<u32, u32>;
type Client = UdpClient<u32, u32>;

/// A private key whose bytes are all distinct and none of them 0 or 255, so that a match
/// is not a coincidence of padding.
const PRIVATE_KEY: Key = {
    let mut key = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        key[i] = 101 + i as u8 * 3;
        i += 1;
    }
    key
};

/// Every run of numbers in `text` (decimal, in order), split wherever something other
/// than separators (commas, spaces, newlines) comes between two numbers.
fn number_runs(text: &str) -> Vec<Vec<u64>> {
    let mut runs = vec![Vec::new()];
    let mut number: Option<u64> = None;
    let mut broken = false;
    for c in text.chars() {
        if let Some(d) = c.to_digit(10) {
            if broken {
                runs.push(Vec::new());
                broken = false;
            }
            number = Some(
                number
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(d.into()),
            );
            continue;
        }
        if let Some(n) = number.take() {
            runs.last_mut().unwrap().push(n);
        }
        if !matches!(c, ',' | ' ' | '\n') {
            broken = true;
        }
    }
    if let Some(n) = number {
        runs.last_mut().unwrap().push(n);
    }
    runs
}

/// Asserts that `text` shows neither `key` (as numbers or hex, any 8 bytes of it) nor
/// any run of 16 or more byte-sized numbers or 32 or more hex digits, the shape of a
/// key the test does not know.
fn assert_no_key(what: &str, text: &str, keys: &[Key]) {
    let runs = number_runs(text);
    for key in keys {
        for window in key.windows(8) {
            let window: Vec<u64> = window.iter().map(|&b| u64::from(b)).collect();
            for run in &runs {
                assert!(
                    !run.windows(8).any(|w| w == window.as_slice()),
                    "{what} prints key bytes {window:?}: {text}"
                );
            }
            let hex: String = window.iter().map(|b| format!("{b:02x}")).collect();
            assert!(
                !text.to_ascii_lowercase().contains(&hex),
                "{what} prints key bytes as hex {hex}: {text}"
            );
        }
    }
    for run in &runs {
        let bytes = run.split(|&n| n > 255).map(<[u64]>::len).max().unwrap_or(0);
        assert!(
            bytes < 16,
            "{what} prints a run of {bytes} byte values, the shape of a key: {text}"
        );
    }
    let mut hex_run = 0;
    for c in text.chars() {
        hex_run = if c.is_ascii_hexdigit() {
            hex_run + 1
        } else {
            0
        };
        assert!(hex_run < 32, "{what} prints a long hex string: {text}");
    }
}

/// `{:?}` and `{:#?}` of `value`, checked.
fn check(what: &str, value: &impl std::fmt::Debug, keys: &[Key]) {
    assert_no_key(what, &format!("{value:?}"), keys);
    assert_no_key(what, &format!("{value:#?}"), keys);
}

#[test]
fn the_checker_finds_keys_in_debug_output() {
    // The search itself must be able to fail: a derived Debug of a key is caught.
    #[derive(Debug)]
    struct Leaky {
        #[allow(dead_code)]
        key: Key,
    }
    let leaky = Leaky { key: PRIVATE_KEY };
    for text in [format!("{leaky:?}"), format!("{leaky:#?}")] {
        let caught = std::panic::catch_unwind(|| assert_no_key("leaky", &text, &[PRIVATE_KEY]));
        assert!(caught.is_err(), "not caught: {text}");
        let unknown = std::panic::catch_unwind(|| assert_no_key("leaky", &text, &[]));
        assert!(unknown.is_err(), "key shape not caught: {text}");
    }
    let hex: String = PRIVATE_KEY.iter().map(|b| format!("{b:02X}")).collect();
    let caught = std::panic::catch_unwind(|| assert_no_key("hex", &hex, &[PRIVATE_KEY]));
    assert!(caught.is_err());
}

#[test]
fn udp_server_config_debug_hides_the_private_key() {
    let config = UdpServerConfig::new(PRIVATE_KEY);
    check("UdpServerConfig", &config, &[PRIVATE_KEY]);
    let text = format!("{config:?}");
    assert!(text.contains("max_clients"), "{text}");
    assert!(text.contains("layout"), "{text}");
}

#[test]
fn udp_server_and_client_debug_hide_every_key() {
    let config = UdpServerConfig::new(PRIVATE_KEY);
    let mut server: Server = UdpServer::bind("127.0.0.1:0", &protocol(), config).unwrap();
    check("UdpServer (no clients)", &server, &[PRIVATE_KEY]);

    let token = token(&PRIVATE_KEY, server.local_addr(), 7);
    let session_keys = [
        PRIVATE_KEY,
        *token.client_to_server_key(),
        *token.server_to_client_key(),
    ];
    let mut client: Client =
        UdpClient::connect(token, &protocol(), UdpClientConfig::default()).unwrap();
    check("UdpClient (connecting)", &client, &session_keys);

    udp_connect(&mut server, &mut client);
    check("UdpServer (a client connected)", &server, &session_keys);
    check("UdpClient (connected)", &client, &session_keys);
    let text = format!("{server:?}");
    assert!(text.contains("local_addr"), "{text}");
    assert!(text.contains("connected_clients: 1"), "{text}");
    let text = format!("{client:?}");
    assert!(text.contains("client_id: 7"), "{text}");
}
