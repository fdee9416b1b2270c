//! simulator (work in progress).
