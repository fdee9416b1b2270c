use netser::NetSerialize;

#[derive(NetSerialize)]
struct Shot {
    #[net(quantize(min = -1.0, max = 1.0, resolution = 0.01))]
    angle: f32,
}

fn main() {}
