use netser::NetSerialize;

// A `Vec` inside a tuple is not a field the derive can bound with `max_len`.
#[derive(NetSerialize)]
struct Pair {
    item: (u8, Vec<u8>),
}

fn main() {}
