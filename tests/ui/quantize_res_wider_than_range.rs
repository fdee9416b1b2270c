use netser::NetSerialize;

#[derive(NetSerialize)]
struct Shot {
    #[net(quantize(-1.0, 1.0, 4.0))]
    angle: f32,
}

fn main() {}
