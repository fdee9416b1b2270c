use netser::NetSerialize;

#[derive(NetSerialize)]
struct Chat {
    #[net(max_length = 140)]
    text: String,
}

fn main() {}
