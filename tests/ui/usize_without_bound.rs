use netser_derive::NetSerialize;

#[derive(NetSerialize)]
struct Cursor {
    index: usize,
}

fn main() {}
