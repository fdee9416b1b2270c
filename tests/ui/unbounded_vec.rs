use netser_derive::NetSerialize;

#[derive(NetSerialize)]
struct Inventory {
    items: Vec<u16>,
}

fn main() {}
