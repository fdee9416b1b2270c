//! The README's main command (work in progress).
fn main() {}
