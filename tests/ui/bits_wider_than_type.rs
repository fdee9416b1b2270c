use netser::NetSerialize;

#[derive(NetSerialize)]
struct Flags {
    #[net(bits = 9)]
    mask: u8,
}

fn main() {}
