use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(range = 0..=100)]
    speed: f32,
}

fn main() {}
