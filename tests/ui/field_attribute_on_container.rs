use netser::NetSerialize;

#[derive(NetSerialize)]
#[net(range = 0..=10)]
struct Packet {
    sequence: u16,
}

fn main() {}
