use netser::NetSerialize;

#[derive(NetSerialize)]
enum Nothing {}

fn main() {}
