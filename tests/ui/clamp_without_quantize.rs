use netser_derive::NetSerialize;

#[derive(NetSerialize)]
struct Shot {
    #[net(clamp)]
    angle: f32,
}

fn main() {}
