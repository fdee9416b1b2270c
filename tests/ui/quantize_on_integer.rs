use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(quantize(0.0, 100.0, 1.0))]
    health: u8,
}

fn main() {}
