use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 0..=100, bits = 7)]
    health: u8,
}

fn main() {}
