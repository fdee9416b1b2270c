//! endpoint (work in progress).
