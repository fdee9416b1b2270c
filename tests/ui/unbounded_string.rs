use netser::NetSerialize;

#[derive(NetSerialize)]
struct Chat {
    text: String,
}

fn main() {}
