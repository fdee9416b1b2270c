use netser::NetSerialize;

#[derive(NetSerialize)]
struct Chat {
    #[net(max_len = 8)]
    channel: u8,
}

fn main() {}
