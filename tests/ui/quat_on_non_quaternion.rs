use netser::NetSerialize;

#[derive(NetSerialize)]
struct Body {
    #[net(quat(bits = 9))]
    orientation: [f32; 3],
}

fn main() {}
