//! Shared code of the netser examples: the demo game's protocol and world ([`game`]).
//!
//! The programs are in `src/bin/`: `demo` (the README's main command), `server` and
//! `client` (the same game in two terminals), `walkthrough` (one packet's bytes and bits).

pub mod game;
