use netser::NetSerialize;

#[derive(NetSerialize)]
struct Door {
    id: u16,
    #[net(when = open)]
    open: bool,
}

fn main() {}
