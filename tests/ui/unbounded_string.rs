use netser_derive::NetSerialize;

#[derive(NetSerialize)]
struct Chat {
    text: String,
}

fn main() {}
