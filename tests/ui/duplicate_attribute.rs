use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 0..=100, range = 0..=200)]
    health: u8,
}

fn main() {}
