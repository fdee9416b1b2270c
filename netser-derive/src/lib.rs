//! `#[derive(NetSerialize)]` for netser (work in progress).
