//! chunk (work in progress).
