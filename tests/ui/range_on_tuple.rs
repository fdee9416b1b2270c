use netser::NetSerialize;

#[derive(NetSerialize)]
struct Cell {
    #[net(range = 0..=63)]
    pos: (u8, u8),
}

fn main() {}
