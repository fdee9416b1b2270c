use std::collections::{HashMap, HashSet};

use netser::NetSerialize;

// Hash + Eq, enough for a `HashMap`, but no `Ord`: hash maps and sets go on the wire in
// increasing key order. One error per field, at the key type, with what to add.
#[derive(NetSerialize, PartialEq, Eq, Hash)]
struct Cell {
    x: i16,
    y: i16,
}

#[derive(NetSerialize)]
struct Board {
    #[net(max_len = 64)]
    owners: HashMap<Cell, u8>,
    #[net(max_len = 64)]
    blocked: HashSet<Cell>,
}

fn main() {}
