use netser::NetSerialize;

const Z: u8 = 0;

#[derive(NetSerialize)]
struct Lobby {
    #[net(range = 0..Z)]
    players: u8,
}

fn main() {}
