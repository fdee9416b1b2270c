use netser::NetSerialize;

#[derive(NetSerialize)]
struct Player {
    health: u8,
    #[net(skip, range = 0..=10)]
    local_id: u8,
}

fn main() {}
