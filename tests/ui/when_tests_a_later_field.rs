use netser::NetSerialize;

#[derive(NetSerialize)]
struct RigidBody {
    position: [f32; 3],
    #[net(when = !at_rest)]
    linear_velocity: [f32; 3],
    at_rest: bool,
}

fn main() {}
