// `absolute` says how a field goes in a delta: a type without `#[net(delta)]` has none.
use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(absolute, range = 0..=100)]
    health: u8,
}

fn main() {}
