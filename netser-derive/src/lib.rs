//! `#[derive(NetSerialize)]` for netser (docs: see the crate docs of `netser`).

mod bounds;
mod decode;
mod encode;
mod expand;
mod gen;
mod hoist;
mod internals;
mod plan;
mod schema;

use proc_macro::TokenStream;

/// Derives `netser::NetSerialize`. See the crate documentation.
#[proc_macro_derive(NetSerialize, attributes(net))]
pub fn derive_net_serialize(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
