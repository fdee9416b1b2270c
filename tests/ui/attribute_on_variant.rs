use netser::NetSerialize;

#[derive(NetSerialize)]
enum Packet {
    #[net(skip)]
    Ping,
    Pong,
}

fn main() {}
