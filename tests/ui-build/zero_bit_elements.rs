// Refused: elements that take no bits would let a few bytes of length prefixes build
// `max_len` values each (here 255 x 255 slots of 1 KiB from 256 bytes).
use netser::NetSerialize;

#[derive(NetSerialize)]
struct CachedSlot {
    #[net(skip, default = [0; 1024])]
    cache: [u8; 1024],
}

#[derive(NetSerialize)]
#[net(max_bytes = 1200)]
struct Rows {
    #[net(max_len = 255)]
    rows: Vec<Vec<CachedSlot>>,
}

fn main() {
    let _ = Rows::decode_from_slice(&[0xff; 256]);
}
