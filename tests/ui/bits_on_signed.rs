use netser::NetSerialize;

#[derive(NetSerialize)]
struct Offset {
    #[net(bits = 4)]
    dx: i8,
}

fn main() {}
