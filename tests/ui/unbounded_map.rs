use netser::NetSerialize;

#[derive(NetSerialize)]
struct Scores {
    by_player: std::collections::BTreeMap<u8, u16>,
}

fn main() {}
