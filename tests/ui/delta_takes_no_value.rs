// `delta` is a flag, and `absolute` a field attribute.
use netser::NetSerialize;

#[derive(NetSerialize)]
#[net(delta = true)]
struct Player {
    #[net(range = 0..=100)]
    health: u8,
}

#[derive(NetSerialize)]
#[net(absolute)]
struct Other {
    #[net(delta)]
    health: u8,
}

fn main() {}
