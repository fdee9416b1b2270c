// Collections of elements that take bits build and run, and `MAX_HEAP_BYTES` counts
// `max_len` elements, each its size and its own heap. (Being a passing case, it also
// makes trybuild build these cases rather than only check them: the zero-bit refusal
// is evaluated where the type is decoded, which `cargo check` does not reach.)
use netser::NetSerialize;

#[derive(NetSerialize, Debug, PartialEq, Clone)]
struct Maybe {
    #[net(max_len = 8)]
    bytes: Vec<u8>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct List {
    #[net(max_len = 100)]
    items: Vec<Maybe>,
}

fn main() {
    let size = std::mem::size_of::<Maybe>() as u64;
    assert_eq!(Maybe::MAX_HEAP_BYTES, 8);
    assert_eq!(List::MAX_HEAP_BYTES, 100 * (size + 8));
    let list = List { items: vec![Maybe { bytes: vec![] }; 3] };
    assert_eq!(List::decode_from_slice(&list.to_vec().unwrap()).unwrap(), list);
}
