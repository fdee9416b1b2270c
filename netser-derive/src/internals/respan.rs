//! Moving generated tokens to a span of the user's input, so that a diagnostic on them
//! underlines the user's type or attribute instead of the derive.

use proc_macro2::TokenStream;

/// `tokens` with every token (and group) moved to `span`.
pub fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}
