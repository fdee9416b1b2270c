//! Shared code of the netser examples: the demo game's protocol and world ([`game`]).
//!
//! The programs are in `src/bin/`: `demo` (the README's main command), `server` and
//! `client` (the same game in two terminals), `walkthrough` (one packet's bytes and bits),
//! `sim_demo` (a client and a server over the seeded simulator, no sockets), `load` (how
//! many clients one server core holds, against renet with `--compare-renet`; run it with
//! `--release`), `match_server` (one match that handles SIGTERM the way an orchestrator
//! expects) and `chunk_figures` (the chunk transfer's times against the bandwidth-limited
//! ideal).

pub mod game;
