use netser::NetSerialize;

const MAX_PLAYERS: u8 = 0;
const MIN_PLAYERS: u8 = 2;

#[derive(NetSerialize)]
struct Lobby {
    #[net(range = MIN_PLAYERS..=MAX_PLAYERS)]
    players: u8,
}

fn main() {}
