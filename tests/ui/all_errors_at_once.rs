use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    #[net(rnage = 0..=100)]
    health: u8,
    #[net(bits = 0)]
    team: u8,
    name: String,
    #[net(quantize(1.0, -1.0, 0.01))]
    aim: f32,
}

// The stub impl keeps uses of the type quiet: no cascade below.
fn send(p: &Player) -> netser::Result<Vec<u8>> {
    netser::NetSerialize::to_vec(p)
}

fn main() {}
