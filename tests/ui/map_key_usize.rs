use std::collections::HashMap;

use netser::NetSerialize;

#[derive(NetSerialize)]
struct Scores {
    #[net(max_len = 16, range = 0..=1000)]
    by_player: HashMap<usize, u16>,
}

fn main() {}
