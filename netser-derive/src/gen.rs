//! What every code generator shares: the runtime's path, the type's name, the error
//! path of the value being generated, and the constants and calls that encode, decode
//! and the other generators all emit (a `Quantize` constant, a key order).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::internals::respan::respan;

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

/// The order of the keys of type `key_ty` of a hash map (set) on the wire, as a
/// function: netser's `key_order`, whose bound (`Ord`, through `MapKey`) carries the
/// message a key type without `Ord` gets. All of it at the key type's span, so that
/// message points there, once: encode and decode give the same diagnostic.
pub fn key_order(g: &Gen, key_ty: &syn::Type) -> TokenStream {
    let span = key_ty.span();
    let krate = respan(g.krate.clone(), span);
    quote_spanned!(span=> #krate::__private::key_order::<#key_ty>())
}

/// `const __Q: Quantize = ...;` for a quantized float.
pub fn quantize_const(
    g: &Gen,
    min: &TokenStream,
    max: &TokenStream,
    res: &TokenStream,
    clamp: bool,
) -> TokenStream {
    let krate = &g.krate;
    let clamping = if clamp {
        quote!(.clamping())
    } else {
        TokenStream::new()
    };
    quote!(const __Q: #krate::Quantize = #krate::Quantize::new(#min, #max, #res) #clamping;)
}
