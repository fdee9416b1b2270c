use netser::NetSerialize;

#[derive(NetSerialize)]
struct Shot {
    #[net(quantise(-1.0, 1.0, 0.01))]
    angle: f32,
}

fn main() {}
