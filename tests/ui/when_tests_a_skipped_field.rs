use netser::NetSerialize;

#[derive(NetSerialize)]
struct RigidBody {
    position: [f32; 3],
    #[net(skip)]
    at_rest: bool,
    #[net(when = !at_rest)]
    linear_velocity: [f32; 3],
}

fn main() {}
