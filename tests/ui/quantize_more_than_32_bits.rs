use netser::NetSerialize;

#[derive(NetSerialize)]
struct World {
    #[net(quantize(-100000.0, 100000.0, 0.00001))]
    x: f64,
}

fn main() {}
