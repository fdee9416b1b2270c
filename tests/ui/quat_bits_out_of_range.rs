use netser::NetSerialize;

#[derive(NetSerialize)]
struct Body {
    #[net(quat(bits = 40))]
    orientation: [f32; 4],
}

fn main() {}
