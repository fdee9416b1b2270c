use netser::NetSerialize;

use netser::{Result, Stream};

fn serialize_health<S: Stream>(s: &mut S, v: &mut u8) -> Result<()> {
    s.serialize_int(v, 0, 100)
}

#[derive(NetSerialize)]
struct Player {
    #[net(with = serialize_health)]
    health: u8,
}

fn main() {}
