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
    /// The field being hoisted, as it appears in the constants' names (`players`,
    /// `Move_0` for a variant's field).
    field: String,
}

fn span_of(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

/// Whether `tokens` are the name of a constant [`Hoist`] made (and so checked).
pub fn is_hoisted(tokens: &TokenStream) -> bool {
    let mut iter = tokens.clone().into_iter();
    match (iter.next(), iter.next()) {
        (Some(proc_macro2::TokenTree::Ident(i)), None) => i.to_string().starts_with("__NETSER_"),
        _ => false,
    }
}

impl Hoist {
    /// Replaces `value` by a new `const` of type `ty` whose body is `body(value)`. The
    /// constant is named after the field and `role` (`__NETSER_players_RANGE_END_1`),
    /// as rustc may show its name in an error; the number keeps names unique.
    fn constant(
        &mut self,
        role: &str,
        ty: TokenStream,
        value: &mut TokenStream,
        body: impl FnOnce(&TokenStream) -> TokenStream,
    ) {
        let span = span_of(value);
        let name = format_ident!("__NETSER_{}_{}_{}", self.field, role, self.count);
        self.count += 1;
        let body = body(value);
        self.items
            .extend(quote_spanned!(span=> const #name: #ty = #body;));
        *value = quote!(#name);
    }

    /// Hoists every field's expressions; `type_name` is the deriving type's name, for
    /// messages (`netser: `Lobby.players`: ...`).
    pub fn bodies(&mut self, bodies: &mut [Body<'_>], krate: &TokenStream, type_name: &str) {
        for body in bodies.iter_mut() {
            let variant = body.variant.map(|v| v.to_string());
            for plan in body.fields.iter_mut() {
                let name = &plan.field.name;
                let (field, ident_part) = match &variant {
                    Some(v) => (
                        format!("netser: `{type_name}::{v}.{name}`: "),
                        format!("{v}_{name}"),
                    ),
                    None => (format!("netser: `{type_name}.{name}`: "), name.clone()),
                };
                self.field = ident_part;
                if let Some(magic) = &mut plan.magic {
                    self.constant("CHECK", quote!(u32), magic, |v| quote!(#v));
                }
                if let Some(wire) = &mut plan.wire {
                    self.wire(wire, krate, &field);
                }
            }
        }
    }

    /// A bound of the field's integer type `ty`: another integer type is reported by
    /// `RangeBound`'s message, at the user's tokens, and not as a bare E0308. `check`
    /// runs on the converted `bound` before it is the constant's value.
    fn int_bound(
        &mut self,
        role: &str,
        ty: &TokenStream,
        value: &mut TokenStream,
        krate: &TokenStream,
        check: TokenStream,
    ) {
        self.constant(role, ty.clone(), value, |v| {
            let span = span_of(v);
            quote_spanned! {span=> {
                let bound = #v;
                #krate::__private::range_bound::<#ty, _>(&bound);
                #[allow(clippy::unnecessary_cast)]
                let bound = bound as #ty;
                #check
                bound
            }}
        });
    }

    fn wire(&mut self, wire: &mut Wire, krate: &TokenStream, field: &str) {
        let msg = quote!(#krate::__private::Msg::new().str(#field));
        match wire {
            Wire::Value(_) => {}
            Wire::IntRange {
                ty,
                min,
                max,
                end_excluded,
            } => {
                let t = syn::Ident::new(ty.name(), Span::call_site());
                let t = quote!(#t);
                let shown = if ty.signed() {
                    quote!(int)
                } else {
                    quote!(uint)
                };
                let wide = if ty.signed() {
                    quote!(i128)
                } else {
                    quote!(u128)
                };
                self.int_bound("RANGE_START", &t, min, krate, quote!());
                let lo = min.clone();
                let span = span_of(max);
                // An excluded end is checked before one is subtracted from it, which
                // would overflow for an end at the type's minimum.
                let (empty, end_is, advice, to_inclusive) = if *end_excluded {
                    (
                        quote!(#lo >= bound),
                        " and its end, excluded, ",
                        "; the end must be above the minimum (write `..=` to include it)",
                        quote!(let bound = bound - 1;),
                    )
                } else {
                    (
                        quote!(#lo > bound),
                        " and its largest ",
                        "; the minimum comes first",
                        quote!(),
                    )
                };
                let check = quote_spanned! {span=>
                    if #empty {
                        let m = #msg
                            .str("this `range` is empty or reversed: its smallest value is ")
                            .#shown(#lo as #wide)
                            .str(#end_is)
                            .#shown(bound as #wide)
                            .str(#advice);
                        ::core::panic!("{}", m.as_str());
                    }
                    #to_inclusive
                };
                *end_excluded = false;
                self.int_bound("RANGE_END", &t, max, krate, check);
            }
            Wire::IntBits { ty, bits } => {
                let width = ty.width();
                self.constant("BITS", quote!(u32), bits, |v| {
                    let span = span_of(v);
                    quote_spanned! {span=> {
                        let bits: u32 = #v;
                        if bits < 1 || bits > #width {
                            let m = #msg
                                .str("`bits` must be between 1 and the integer's width, ")
                                .uint(#width as u128)
                                .str(", but it is ")
                                .uint(bits as u128);
                            ::core::panic!("{}", m.as_str());
                        }
                        bits
                    }}
                });
            }
            Wire::Quantize { min, max, res, .. } => {
                let span = span_of(max);
                for (role, p) in [
                    ("QUANTIZE_MIN", &mut *min),
                    ("QUANTIZE_MAX", &mut *max),
                    ("QUANTIZE_RES", &mut *res),
                ] {
                    self.constant(role, quote!(f32), p, |v| quote!(#v));
                }
                let (lo, hi, r) = (min.clone(), max.clone(), res.clone());
                // One const checks everything, so one mistake gives one error, and the
                // message carries the values the constants have.
                let mut q = quote!(());
                self.constant("QUANTIZE", quote!(#krate::Quantize), &mut q, |_| {
                    quote_spanned!(span=> {
                        let (min, max, res): (f32, f32, f32) = (#lo, #hi, #r);
                        let values = #msg
                            .str("`quantize(min = ")
                            .float(min)
                            .str(", max = ")
                            .float(max)
                            .str(", res = ")
                            .float(res)
                            .str(")` ");
                        if !(min.is_finite() && max.is_finite() && res.is_finite()) {
                            ::core::panic!("{}", values.str("needs finite min, max and res").as_str());
                        }
                        if !(min < max) {
                            ::core::panic!("{}", values.str("needs min < max; swap or widen them").as_str());
                        }
                        if !(res > 0.0) {
                            ::core::panic!("{}", values.str("needs a resolution above zero; for example `res = 0.01`").as_str());
                        }
                        if !(res <= max - min) {
                            ::core::panic!("{}", values.str("has a resolution wider than its range: every value would round to an end; use a smaller `res`").as_str());
                        }
                        if !((max - min) / res <= 4_294_967_040.0) {
                            ::core::panic!("{}", values.str("needs more than 32 bits; raise `res` or narrow the range").as_str());
                        }
                        match #krate::Quantize::try_new(min, max, res) {
                            ::core::option::Option::Some(q) => q,
                            ::core::option::Option::None => ::core::panic!("{}", values.str("is not a valid quantization").as_str()),
                        }
                    })
                });
                // Encode and decode rebuild the quantization from the checked const.
                *min = quote!(#q.min());
                *max = quote!(#q.max());
                *res = quote!(#q.res());
            }
            Wire::Quat { bits, .. } => self.constant("QUAT_BITS", quote!(u32), bits, |v| {
                let span = span_of(v);
                quote_spanned! {span=> {
                    let bits: u32 = #v;
                    // 20 is netser::quat::MAX_BITS.
                    if bits < 2 || bits > 20 {
                        let m = #msg
                            .str("`quat(bits = N)` needs 2 <= N <= 20, but N is ")
                            .uint(bits as u128);
                        ::core::panic!("{}", m.as_str());
                    }
                    bits
                }}
            }),
            Wire::GlamVec { elem, .. } | Wire::Array { elem, .. } => self.wire(elem, krate, field),
            Wire::Seq { max_len, elem, .. } => {
                self.max_len(max_len, &msg);
                self.wire(elem, krate, field);
            }
            Wire::String { max_len } => self.max_len(max_len, &msg),
            Wire::Option { inner } => self.wire(inner, krate, field),
            Wire::Map {
                max_len,
                key,
                value,
                ..
            } => {
                self.max_len(max_len, &msg);
                self.wire(key, krate, field);
                self.wire(value, krate, field);
            }
            Wire::With { max_bits, .. } => {
                self.constant("MAX_BITS", quote!(u64), max_bits, |v| quote!(#v))
            }
        }
    }

    fn max_len(&mut self, max_len: &mut TokenStream, msg: &TokenStream) {
        self.constant("MAX_LEN", quote!(usize), max_len, |v| {
            let span = span_of(v);
            quote_spanned! {span=> {
                let max_len: usize = #v;
                if max_len < 1 {
                    ::core::panic!("{}", #msg.str("`max_len` must be at least 1").as_str());
                }
                max_len
            }}
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_named_numbered_and_replace_the_expression() {
        let mut h = Hoist::default();
        let mut a = quote!(MAX_PLAYERS);
        let mut b = quote!(3);
        h.field = "players".to_owned();
        h.constant("RANGE_START", quote!(u8), &mut a, |v| quote!(#v));
        h.constant("RANGE_END", quote!(u8), &mut b, |v| quote!(#v));
        assert_eq!(a.to_string(), "__NETSER_players_RANGE_START_0");
        assert!(is_hoisted(&a));
        assert!(!is_hoisted(&quote!(MAX_PLAYERS)));
        assert_eq!(b.to_string(), "__NETSER_players_RANGE_END_1");
        let items = h.items.to_string();
        assert!(
            items.contains("const __NETSER_players_RANGE_START_0 : u8 = MAX_PLAYERS ;"),
            "{items}"
        );
    }
}
