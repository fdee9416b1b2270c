use netser::NetSerialize;

#[derive(NetSerialize)]
struct Flags {
    #[net(bits = 0)]
    mask: u32,
}

fn main() {}
