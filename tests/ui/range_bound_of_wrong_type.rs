use netser::NetSerialize;

const MAX_HEALTH: u32 = 100;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 0..=MAX_HEALTH)]
    health: u8,
}

fn main() {}
