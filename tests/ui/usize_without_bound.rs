use netser::NetSerialize;

#[derive(NetSerialize)]
struct Cursor {
    index: usize,
}

fn main() {}
