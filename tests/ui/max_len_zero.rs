use netser::NetSerialize;

#[derive(NetSerialize)]
struct Chat {
    #[net(max_len = 0)]
    text: String,
}

fn main() {}
