use netser::NetSerialize;

struct Color(u8, u8, u8); // no NetSerialize impl

// In a generic type, a concrete field type without an impl is still one error at it.
#[derive(NetSerialize)]
struct Tagged<T> {
    value: T,
    color: Color,
}

fn main() {}
