use netser::NetSerialize;

#[derive(NetSerialize)]
struct Health(#[net(range = 0..=100)] u8);

#[derive(NetSerialize)]
struct Player {
    #[net(range = 0..=100)]
    health: Health,
}

fn main() {}
