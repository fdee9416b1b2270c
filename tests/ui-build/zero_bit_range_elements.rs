// Refused: a list of `range = 0..=0` values is only a length: 2 bytes would build
// 4096 of them.
use netser::NetSerialize;

#[derive(NetSerialize)]
struct Zeros {
    #[net(max_len = 4096, range = 0..=0)]
    values: Vec<u64>,
}

fn main() {
    let _ = Zeros::decode_from_slice(&[0xff; 2]);
}
