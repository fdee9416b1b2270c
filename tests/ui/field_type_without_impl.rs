use netser::NetSerialize;

struct Color(u8, u8, u8); // no NetSerialize impl

#[derive(NetSerialize)]
struct Paint {
    color: Color,
    #[net(max_len = 4)]
    palette: Vec<Color>,
}

fn main() {}
