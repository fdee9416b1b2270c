use netser::NetSerialize;

#[derive(NetSerialize)]
struct Packet {
    #[net(max_bytes = 1200)]
    sequence: u16,
}

fn main() {}
