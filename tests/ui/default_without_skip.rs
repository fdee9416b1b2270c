use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(default = 100)]
    health: u8,
}

fn main() {}
