// A skipped field is never sent, so it has no delta encoding to choose.
use netser::NetSerialize;

#[derive(NetSerialize)]
#[net(delta)]
struct Player {
    #[net(range = 0..=100)]
    health: u8,
    #[net(skip, absolute)]
    cache: u32,
}

fn main() {}
