//! Every expression the user wrote in an attribute becomes one typed `const` item,
//! referenced by encode, decode, the bounds and the hash. A mistake in it (a wrong
//! type, an empty range from constants) is then reported once, at the user's tokens,
//! instead of once per generated use.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::internals::wire::Wire;
use crate::plan::Body;

/// The hoisted `const` items.
#[derive(Default)]
pub struct Hoist {
    /// The items, emitted next to the impl.
    pub items: TokenStream,
    count: usize,
}

fn span_of(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

impl Hoist {
    /// Replaces `value` by a new `const` of type `ty` whose body is `body(value)`.
    fn constant(
        &mut self,
        ty: TokenStream,
        value: &mut TokenStream,
        body: impl FnOnce(&TokenStream) -> TokenStream,
    ) {
        let span = span_of(value);
        let name = format_ident!("__NETSER_C{}", self.count);
        self.count += 1;
        let body = body(value);
        self.items
            .extend(quote_spanned!(span=> const #name: #ty = #body;));
        *value = quote!(#name);
    }

    /// Hoists every field's expressions.
    pub fn bodies(&mut self, bodies: &mut [Body<'_>], krate: &TokenStream) {
        for plan in bodies.iter_mut().flat_map(|b| b.fields.iter_mut()) {
            if let Some(magic) = &mut plan.magic {
                self.constant(quote!(u32), magic, |v| quote!(#v));
            }
            if let Some(wire) = &mut plan.wire {
                self.wire(wire, krate);
            }
        }
    }

    fn wire(&mut self, wire: &mut Wire, krate: &TokenStream) {
        match wire {
            Wire::Value(_) => {}
            Wire::IntRange { ty, min, max, .. } => {
                let t = syn::Ident::new(ty.name(), Span::call_site());
                self.constant(quote!(#t), min, |v| quote!(#v));
                let lo = min.clone();
                self.constant(quote!(#t), max, |v| {
                    let span = span_of(v);
                    quote_spanned! {span=> {
                        let max: #t = #v;
                        ::core::assert!(#lo <= max, "netser: this `range` is empty or reversed");
                        max
                    }}
                });
            }
            Wire::IntBits { ty, bits } => {
                let width = ty.width();
                self.constant(quote!(u32), bits, |v| {
                    let span = span_of(v);
                    quote_spanned! {span=> {
                        let bits: u32 = #v;
                        ::core::assert!(bits >= 1 && bits <= #width, "netser: `bits` must be between 1 and the integer's width");
                        bits
                    }}
                });
            }
            Wire::Quantize { min, max, res, .. } => {
                for p in [&mut *min, &mut *max, &mut *res] {
                    self.constant(quote!(f32), p, |v| quote!(#v));
                }
                let (lo, hi, r) = (min.clone(), max.clone(), res.clone());
                // One const checks everything, so one mistake gives one error.
                let mut q = quote!(());
                self.constant(quote!(#krate::Quantize), &mut q, |_| {
                    quote!({
                        match #krate::Quantize::try_new(#lo, #hi, #r) {
                            ::core::option::Option::None => ::core::panic!("netser: `quantize` needs finite min < max and res > 0"),
                            ::core::option::Option::Some(q) => {
                                ::core::assert!(#r <= #hi - #lo, "netser: the `quantize` resolution is wider than its range");
                                ::core::assert!((#hi - #lo) / #r <= 4_294_967_040.0, "netser: this `quantize` needs more than 32 bits; raise res or narrow the range");
                                q
                            }
                        }
                    })
                });
                // Encode and decode rebuild the quantization from the checked const.
                *min = quote!(#q.min());
                *max = quote!(#q.max());
                *res = quote!(#q.res());
            }
            Wire::Quat { bits, .. } => self.constant(quote!(u32), bits, |v| {
                let span = span_of(v);
                quote_spanned! {span=> {
                    let bits: u32 = #v;
                    ::core::assert!(bits >= 2 && bits <= 32, "netser: `quat(bits = N)` needs 2 <= N <= 32");
                    bits
                }}
            }),
            Wire::GlamVec { elem, .. } | Wire::Array { elem, .. } => self.wire(elem, krate),
            Wire::Seq { max_len, elem, .. } => {
                self.max_len(max_len);
                self.wire(elem, krate);
            }
            Wire::String { max_len } => self.max_len(max_len),
            Wire::Option { inner } => self.wire(inner, krate),
            Wire::Map {
                max_len,
                key,
                value,
                ..
            } => {
                self.max_len(max_len);
                self.wire(key, krate);
                self.wire(value, krate);
            }
            Wire::With { max_bits, .. } => self.constant(quote!(u64), max_bits, |v| quote!(#v)),
        }
    }

    fn max_len(&mut self, max_len: &mut TokenStream) {
        self.constant(quote!(usize), max_len, |v| {
            let span = span_of(v);
            quote_spanned! {span=> {
                let max_len: usize = #v;
                ::core::assert!(max_len >= 1, "netser: `max_len` must be at least 1");
                max_len
            }}
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_numbered_and_replace_the_expression() {
        let mut h = Hoist::default();
        let mut a = quote!(MAX_PLAYERS);
        let mut b = quote!(3);
        h.constant(quote!(u8), &mut a, |v| quote!(#v));
        h.constant(quote!(u8), &mut b, |v| quote!(#v));
        assert_eq!(a.to_string(), "__NETSER_C0");
        assert_eq!(b.to_string(), "__NETSER_C1");
        let items = h.items.to_string();
        assert!(
            items.contains("const __NETSER_C0 : u8 = MAX_PLAYERS ;"),
            "{items}"
        );
    }
}
