use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 5..5)]
    lives: u8,
}

fn main() {}
