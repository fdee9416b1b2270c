//! `#[derive(NetSerialize)]`: the wire layout of a game type, written once as
//! attributes, turned into `encode` (from `&T`), `decode` (into a fresh `T`), exact
//! `MIN_BITS` / `MAX_BITS` constants and a `SCHEMA_HASH`, all from one parsed
//! description of the type. Use it through `netser` (its default `derive` feature).
//!
//! ```
//! use netser::NetSerialize;
//!
//! #[derive(NetSerialize, Debug, PartialEq)]
//! struct PlayerState {
//!     #[net(range = 0..=100)]                // 7 bits
//!     health: u8,
//!     #[net(quantize(-512.0, 512.0, 0.01))]  // 17 bits per component
//!     position: [f32; 3],
//!     #[net(max_len = 16)]                   // 5-bit length, then bytes
//!     name: String,
//! }
//!
//! let p = PlayerState { health: 99, position: [1.0, 2.0, 3.0], name: "ada".into() };
//! let bytes = p.to_vec()?;
//! assert_eq!(PlayerState::decode_from_slice(&bytes)?, p);
//! assert_eq!(PlayerState::MIN_BITS, 7 + 3 * 17 + 5);
//! # Ok::<(), netser::Error>(())
//! ```
//!
//! Every `#[net(...)]` attribute, with an example each, the rules the derive checks
//! and the errors it reports are documented in `netser`'s `attributes` module
//! (`netser::attributes`, in the docs `cargo doc -p netser --open` builds, or that
//! `cargo doc` builds for a crate that depends on `netser`), and summarised on the
//! derive macro.

mod batch;
mod bounds;
mod decode;
mod delta;
mod encode;
mod expand;
mod gen;
mod hoist;
mod internals;
mod plan;
mod run;
mod schema;

use proc_macro::TokenStream;

/// Derives `netser::NetSerialize`: the type's wire layout, from its fields and their
/// `#[net(...)]` attributes; with `#[net(delta)]`, `netser::NetDelta` too (the value
/// relative to a baseline value).
///
/// Field attributes: `range = A..=B` (integers), `bits = N` (unsigned integers),
/// `quantize(min, max, res)` and `clamp` (floats), `quat(bits = N)` (quaternions),
/// `align`, `max_len = N` (collections and strings; required on them), `skip` and
/// `default = expr`, `with = path, max_bits = N`, `when = expr`, `check = 0x...`,
/// `absolute` (in a delta type: sent whole when changed).
/// Container attributes: `max_bytes = N`, `crate = "path"`, `delta`. Each is documented with an
/// example on `netser`'s `attributes` page.
///
/// ```
/// use netser::NetSerialize;
///
/// #[derive(NetSerialize, Debug, PartialEq)]
/// #[net(max_bytes = 64)]
/// enum Event {
///     Join { #[net(max_len = 16)] name: String },
///     Hit { #[net(range = 0..=100)] damage: u8, #[net(quantize(0.0, 1.0, 0.01))] falloff: f32 },
///     Leave,
/// }
///
/// let hit = Event::Hit { damage: 30, falloff: 0.5 };
/// let bytes = hit.to_vec()?;
/// assert_eq!(bytes.len(), 2); // a 2-bit tag, 7 bits, 7 bits
/// assert_eq!(Event::decode_from_slice(&bytes)?, hit);
/// assert!(Event::Hit { damage: 101, falloff: 0.5 }.to_vec().is_err());
/// # Ok::<(), netser::Error>(())
/// ```
#[proc_macro_derive(NetSerialize, attributes(net))]
pub fn derive_net_serialize(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
