use netser::NetSerialize;

// The bounds are `i32` constants; the fields are `i16` and, in a variant, `u64`.
const MIN_OFFSET: i32 = -100;
const MAX_OFFSET: i32 = 100;
const MAX_SCORE: u32 = 1_000_000;

#[derive(NetSerialize)]
enum Event {
    Nudge {
        #[net(range = MIN_OFFSET..MAX_OFFSET)]
        offset: i16,
    },
    Score(#[net(range = 0..=MAX_SCORE)] u64),
}

fn main() {}
