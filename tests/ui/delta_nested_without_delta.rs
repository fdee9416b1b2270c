// A delta type sends a nested type through the nested type's own `NetDelta`: one
// without it is one error at the field's type, saying how to give it one or opt out.
use netser::NetSerialize;

#[derive(NetSerialize)]
struct Inventory {
    #[net(range = 0..=99)]
    potions: u8,
}

#[derive(NetSerialize)]
#[net(delta)]
struct Player {
    #[net(range = 0..=100)]
    health: u8,
    inventory: Inventory,
}

fn main() {}
