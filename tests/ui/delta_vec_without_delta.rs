// The elements of a delta type's collection go relative to the baseline's elements
// through their own `NetDelta`: the error is at the element type.
use netser::NetSerialize;

#[derive(NetSerialize)]
struct Entity {
    #[net(range = 0..=1023)]
    id: u16,
}

#[derive(NetSerialize)]
#[net(delta)]
struct World {
    #[net(max_len = 64)]
    entities: Vec<Entity>,
}

fn main() {}
