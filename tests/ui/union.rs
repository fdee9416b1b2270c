use netser::NetSerialize;

#[derive(NetSerialize)]
union Bits {
    i: u32,
    f: f32,
}

fn main() {}
