use netser::NetSerialize;

#[derive(NetSerialize)]
struct Shot {
    #[net(clamp)]
    angle: f32,
}

fn main() {}
