//! What every code generator shares: the runtime's path, the type's name, and the
//! error path of the value being generated.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Settings for one derive.
pub struct Gen {
    /// `::netser`, or the `#[net(crate = "...")]` path.
    pub krate: TokenStream,
    /// The type's name, for error paths (`Snapshot` in `Snapshot.entities[3].health`).
    pub type_name: String,
}

/// The error path from the type's root to the value being generated, innermost last.
#[derive(Clone, Default)]
pub struct ErrPath {
    /// `.in_field("x")` / `.at_index(__i0)` calls, outermost first.
    segments: Vec<TokenStream>,
    /// Loop nesting depth, to name index variables.
    pub depth: usize,
}

impl ErrPath {
    /// The path with a field (or variant) segment added.
    pub fn field(&self, name: &str) -> ErrPath {
        let mut p = self.clone();
        p.segments.push(quote!(.in_field(#name)));
        p
    }

    /// The path with an index segment added; returns the index variable to bind.
    pub fn index(&self) -> (ErrPath, syn::Ident) {
        let mut p = self.clone();
        let i = format_ident!("__i{}", self.depth);
        p.segments.push(quote!(.at_index(#i)));
        p.depth += 1;
        (p, i)
    }

    /// `.map_err(...)` that adds this path (innermost first) and the type name.
    pub fn map_err(&self, g: &Gen) -> TokenStream {
        let krate = &g.krate;
        let apply = self.apply(g);
        quote!(.map_err(|__err: #krate::Error| __err #apply))
    }

    /// The method calls that add this path and the type name to an `Error` value.
    pub fn apply(&self, g: &Gen) -> TokenStream {
        let segs = self.segments.iter().rev();
        let name = &g.type_name;
        quote!(#(#segs)* .in_type(#name))
    }
}

impl Gen {
    /// A trace segment entered on `stream` (`__e` or `__d`) around some code.
    pub fn traced(
        &self,
        stream: &TokenStream,
        trait_: &TokenStream,
        segment: TokenStream,
        body: TokenStream,
    ) -> TokenStream {
        let krate = &self.krate;
        quote! {
            #krate::__private::Tracer::enter(#trait_::tracer(#stream), #krate::__private::Segment::#segment);
            #body
            #krate::__private::Tracer::exit(#trait_::tracer(#stream));
        }
    }
}
