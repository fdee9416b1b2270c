use netser::NetSerialize;

#[derive(NetSerialize)]
struct Inventory {
    items: Vec<u16>,
}

fn main() {}
