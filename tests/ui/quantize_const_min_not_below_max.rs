use netser::NetSerialize;

const MIN_YAW: f32 = 180.0;
const MAX_YAW: f32 = -180.0;

#[derive(NetSerialize)]
struct Aim {
    #[net(quantize(min = MIN_YAW, max = MAX_YAW, res = 0.1))]
    yaw: f32,
}

fn main() {}
