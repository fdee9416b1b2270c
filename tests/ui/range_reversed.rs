use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 100..=0)]
    health: u8,
}

fn main() {}
