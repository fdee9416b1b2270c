use netser::NetSerialize;

#[derive(NetSerialize)]
#[net(max_bytes = 1200)]
struct Snapshot {
    #[net(max_len = 1000)]
    names: Vec<u16>,
}

fn main() {}
