use netser::NetSerialize;

#[derive(NetSerialize)]
struct RigidBody {
    #[net(when = !at_rest)]
    linear_velocity: [f32; 3],
    at_rest: bool,
}

fn main() {}
