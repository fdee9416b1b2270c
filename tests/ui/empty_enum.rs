use netser_derive::NetSerialize;

#[derive(NetSerialize)]
enum Nothing {}

fn main() {}
