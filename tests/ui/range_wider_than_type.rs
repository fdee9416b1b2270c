use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = -1..=300)]
    health: u16,
}

fn main() {}
