//! The `NetDelta` impl's items: each body's fields wired to their delta pieces, for a
//! struct and for an enum's variants, and the bounds on nested types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{max_bits, read, same, unchanged, write, Delta};
use crate::bounds;
use crate::decode;
use crate::encode;
use crate::gen::{ErrPath, Gen};
use crate::internals::ast::Field;
use crate::internals::attr::DefaultAttr;
use crate::internals::wire::Wire;
use crate::plan::{Body, FieldPlan};

/// Every type whose own `NetDelta` impl a delta uses, once each.
pub fn nested_types(bodies: &[Body<'_>]) -> Vec<syn::Type> {
    fn walk(d: &Delta<'_>, seen: &mut Vec<String>, out: &mut Vec<syn::Type>) {
        if d.absolute {
            return;
        }
        match d.wire {
            Wire::Value(ty) => {
                let key = quote!(#ty).to_string();
                if !seen.contains(&key) {
                    seen.push(key);
                    out.push(ty.clone());
                }
            }
            Wire::GlamVec { elem, .. } | Wire::Array { elem, .. } | Wire::Seq { elem, .. } => {
                walk(&d.elem(elem), seen, out)
            }
            Wire::Option { inner } => walk(&d.elem(inner), seen, out),
            _ => {}
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for plan in bodies.iter().flat_map(|b| &b.fields) {
        if let Some(wire) = &plan.wire {
            walk(
                &Delta::of(wire, plan.field.attrs.absolute.is_some()),
                &mut seen,
                &mut out,
            );
        }
    }
    out
}

/// The baseline's binding of a field.
fn base_binding(field: &Field<'_>) -> syn::Ident {
    format_ident!("__b_{}", field.binding.to_string().trim_start_matches("r#"))
}

/// `Self { a: __b_a, .. }` binding the baseline's sent fields.
fn base_pattern(path: &TokenStream, body: &Body<'_>) -> TokenStream {
    use crate::internals::ast::Style;
    match body.style {
        Style::Unit => quote!(#path),
        Style::Named => {
            let parts = body.fields.iter().filter(|f| f.wire.is_some()).map(|f| {
                let m = &f.field.member;
                let b = base_binding(f.field);
                quote!(#m: #b)
            });
            quote!(#path { #(#parts,)* .. })
        }
        Style::Tuple => {
            let parts = body.fields.iter().map(|f| {
                if f.wire.is_some() {
                    let b = base_binding(f.field);
                    quote!(#b)
                } else {
                    quote!(_)
                }
            });
            quote!(#path ( #(#parts),* ))
        }
    }
}

fn default_of(field: &Field<'_>) -> TokenStream {
    match &field.attrs.default {
        Some(d) => match &d.value {
            DefaultAttr::Trait => quote!(::core::default::Default::default()),
            DefaultAttr::Expr(e) => crate::internals::check::user_expr(e),
        },
        None => quote!(::core::default::Default::default()),
    }
}

/// The pieces of one body (a struct or a variant).
pub struct BodyDelta {
    /// Statements returning `Ok(false)` at the first changed field (value and baseline
    /// bound by the patterns).
    pub same: TokenStream,
    /// Statements writing each field's delta.
    pub write: TokenStream,
    /// Statements binding each field's local from its delta.
    pub read: TokenStream,
    /// Statements binding each field's local as unchanged.
    pub unchanged: TokenStream,
    /// The fields' worst case.
    pub max: TokenStream,
    /// The baseline's pattern.
    pub base_pat: TokenStream,
}

/// The delta pieces of a body; `path` is `Self` or `Self::Variant`.
pub fn body(g: &Gen, body: &Body<'_>, path: &TokenStream, base: &ErrPath) -> BodyDelta {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let dec = quote!(#krate::Decoder);
    let mut out = BodyDelta {
        same: TokenStream::new(),
        write: TokenStream::new(),
        read: TokenStream::new(),
        unchanged: TokenStream::new(),
        max: quote!(0u64),
        base_pat: base_pattern(path, body),
    };
    // The sent fields before each one, as the value's, the baseline's and the decoded
    // locals, for `when` conditions.
    let mut earlier_v = Vec::new();
    let mut earlier_b = Vec::new();
    let mut earlier_l = Vec::new();
    for plan in &body.fields {
        let FieldPlan { field, wire, .. } = plan;
        let local = decode::local(field);
        let ty = field.ty;
        let Some(wire) = wire else {
            let default = default_of(field);
            out.read.extend(quote!(let #local: #ty = #default;));
            out.unchanged.extend(quote!(let #local: #ty = #default;));
            continue;
        };
        let d = Delta::of(wire, field.attrs.absolute.is_some());
        let name = &field.name;
        let fpath = base.field(name);
        let map_err = fpath.map_err(g);
        let v = {
            let b = &field.binding;
            quote!(#b)
        };
        let b = {
            let b = base_binding(field);
            quote!(#b)
        };
        let s = same(g, &d, &v, &b);
        let s = quote!((|| -> #krate::Result<bool> { ::core::result::Result::Ok(#s) })() #map_err?);
        let mut w = write(g, &d, &v, &b, &fpath);
        let mut r = read(g, &d, &b, &fpath);
        let u = unchanged(g, &d, &b, &fpath);
        let mut m = max_bits(g, &d);
        if let Some(magic) = &plan.magic {
            w = quote!(#enc::write_check(__e, #magic) #map_err?; #w);
            r = quote!({ #dec::read_check(__d, #magic) #map_err?; #r });
            m = quote!((#m).saturating_add(32));
        }
        let w = g.traced(&quote!(__e), &enc, quote!(Field(#name)), w);
        let r = quote! {{
            #krate::__private::Tracer::enter(#dec::tracer(__d), #krate::__private::Segment::Field(#name));
            let __v: #ty = #r;
            #krate::__private::Tracer::exit(#dec::tracer(__d));
            __v
        }};
        match &plan.when_fn {
            None => {
                out.same
                    .extend(quote!(if !#s { return ::core::result::Result::Ok(false); }));
                out.write.extend(w);
                out.read.extend(quote!(let #local: #ty = #r;));
                out.unchanged.extend(quote!(let #local: #ty = #u;));
                let total = &out.max;
                out.max = quote!((#total).saturating_add(#m));
            }
            Some(when) => {
                // Sent when the condition holds; against a baseline whose condition did
                // not hold (its field was absent), absolute.
                let default = default_of(field);
                let abs_w = encode::wire_encode(g, wire, v.clone(), &fpath);
                let abs_r = decode::wire_decode(g, wire, &fpath);
                let cv = quote!(Self::#when(#(#earlier_v),*));
                let cb = quote!(Self::#when(#(#earlier_b),*));
                let cl = quote!(Self::#when(#(&#earlier_l),*));
                out.same.extend(quote! {
                    let __cv = #cv;
                    if __cv != #cb || (__cv && !#s) {
                        return ::core::result::Result::Ok(false);
                    }
                });
                out.write.extend(quote! {
                    if #cv {
                        if #cb { #w } else { #abs_w }
                    }
                });
                out.read.extend(quote! {
                    let #local: #ty = if #cl {
                        if #cb { #r } else { #abs_r }
                    } else {
                        #default
                    };
                });
                out.unchanged.extend(quote! {
                    let #local: #ty = if #cl { #u } else { #default };
                });
                let a = bounds::wire_bits(g, wire).1;
                let mm = bounds::const_max(m, a);
                let total = &out.max;
                out.max = quote!((#total).saturating_add(#mm));
            }
        }
        earlier_v.push(v);
        earlier_b.push(b);
        earlier_l.push(local);
    }
    out
}

/// The items of a struct's `NetDelta` impl.
pub fn struct_items(
    g: &Gen,
    b: &Body<'_>,
    value_pat: &TokenStream,
    construct: &TokenStream,
) -> TokenStream {
    let krate = &g.krate;
    let root = ErrPath::default();
    let type_err = root.map_err(g);
    let enc = quote!(#krate::Encoder);
    let dec = quote!(#krate::Decoder);
    let BodyDelta {
        same,
        write,
        read,
        unchanged,
        max,
        base_pat,
    } = body(g, b, &quote!(Self), &root);
    quote! {
        const MAX_DELTA_BITS: u64 = (#max).saturating_add(1);
        const MAX_CHANGED_BITS: u64 = #max;

        #[inline]
        fn encode_delta<__E: #enc>(&self, __baseline: &Self, __e: &mut __E) -> #krate::Result<()> {
            if ::core::matches!(#krate::NetDelta::is_unchanged(self, __baseline), ::core::result::Result::Ok(true)) {
                #enc::write_bool(__e, false) #type_err
            } else {
                #enc::write_bool(__e, true) #type_err?;
                #krate::NetDelta::encode_changed(self, __baseline, __e)
            }
        }

        #[inline]
        fn decode_delta<__D: #dec>(__baseline: &Self, __d: &mut __D) -> #krate::Result<Self> {
            if #dec::read_bool(__d) #type_err? {
                <Self as #krate::NetDelta>::decode_changed(__baseline, __d)
            } else {
                <Self as #krate::NetDelta>::decode_unchanged(__baseline)
            }
        }

        #[allow(unused_variables)]
        fn is_unchanged(&self, __baseline: &Self) -> #krate::Result<bool> {
            let #value_pat = self;
            let #base_pat = __baseline;
            #same
            ::core::result::Result::Ok(true)
        }

        #[allow(unused_variables)]
        fn decode_unchanged(__baseline: &Self) -> #krate::Result<Self> {
            let #base_pat = __baseline;
            #unchanged
            ::core::result::Result::Ok(#construct)
        }

        #[allow(unused_variables)]
        fn encode_changed<__E: #enc>(&self, __baseline: &Self, __e: &mut __E) -> #krate::Result<()> {
            let #value_pat = self;
            let #base_pat = __baseline;
            #write
            ::core::result::Result::Ok(())
        }

        #[allow(unused_variables)]
        fn decode_changed<__D: #dec>(__baseline: &Self, __d: &mut __D) -> #krate::Result<Self> {
            let #base_pat = __baseline;
            #read
            ::core::result::Result::Ok(#construct)
        }
    }
}

/// A variant of an enum: its body, the pattern binding its sent fields, and the
/// expression building it from the decoded locals.
pub struct VariantParts<'a, 'b> {
    /// The variant.
    pub body: &'a Body<'b>,
    /// `Self::V { a, b, .. }`.
    pub pat: TokenStream,
    /// `Self::V { a: __f_a, .. }`.
    pub construct: TokenStream,
}

/// The items of an enum's `NetDelta` impl: `0` unchanged; `1` then `0` and the variant's
/// fields' deltas when the variant is the baseline's, or `1` and the value absolute
/// (tag and fields) when it is not.
pub fn enum_items(g: &Gen, variants: &[VariantParts<'_, '_>]) -> TokenStream {
    let krate = &g.krate;
    let root = ErrPath::default();
    let type_err = root.map_err(g);
    let enc = quote!(#krate::Encoder);
    let dec = quote!(#krate::Decoder);
    let mut same_arms = TokenStream::new();
    let mut write_arms = TokenStream::new();
    let mut read_arms = TokenStream::new();
    let mut unchanged_arms = TokenStream::new();
    let mut max = quote!(0u64);
    for v in variants {
        let name = v.body.variant.expect("a variant").to_string();
        let variant = v.body.variant;
        let base = root.field(&name);
        let parts = body(g, v.body, &quote!(Self::#variant), &base);
        let (pat, construct, base_pat) = (&v.pat, &v.construct, &parts.base_pat);
        let BodyDelta {
            same,
            write,
            read,
            unchanged,
            max: m,
            ..
        } = parts;
        same_arms.extend(quote!((#pat, #base_pat) => { #same ::core::result::Result::Ok(true) }));
        let write = g.traced(&quote!(__e), &enc, quote!(Variant(#name)), write);
        write_arms.extend(quote!((#pat, #base_pat) => {
            #enc::write_bool(__e, false) #type_err?;
            #write
        }));
        read_arms.extend(quote!(#base_pat => {
            #krate::__private::Tracer::enter(#dec::tracer(__d), #krate::__private::Segment::Variant(#name));
            #read
            #krate::__private::Tracer::exit(#dec::tracer(__d));
            ::core::result::Result::Ok(#construct)
        }));
        unchanged_arms.extend(quote!(#base_pat => {
            #unchanged
            ::core::result::Result::Ok(#construct)
        }));
        max = bounds::const_max(max, m);
    }
    let changed = bounds::const_max(max, quote!(<Self as #krate::NetSerialize>::MAX_BITS));
    quote! {
        const MAX_DELTA_BITS: u64 = (#changed).saturating_add(2);
        const MAX_CHANGED_BITS: u64 = (#changed).saturating_add(1);

        #[inline]
        fn encode_delta<__E: #enc>(&self, __baseline: &Self, __e: &mut __E) -> #krate::Result<()> {
            if ::core::matches!(#krate::NetDelta::is_unchanged(self, __baseline), ::core::result::Result::Ok(true)) {
                #enc::write_bool(__e, false) #type_err
            } else {
                #enc::write_bool(__e, true) #type_err?;
                #krate::NetDelta::encode_changed(self, __baseline, __e)
            }
        }

        #[inline]
        fn decode_delta<__D: #dec>(__baseline: &Self, __d: &mut __D) -> #krate::Result<Self> {
            if #dec::read_bool(__d) #type_err? {
                <Self as #krate::NetDelta>::decode_changed(__baseline, __d)
            } else {
                <Self as #krate::NetDelta>::decode_unchanged(__baseline)
            }
        }

        #[allow(unused_variables, unreachable_patterns)]
        fn is_unchanged(&self, __baseline: &Self) -> #krate::Result<bool> {
            match (self, __baseline) {
                #same_arms
                _ => {
                    // Another variant: changed (the value's bounds are checked when it
                    // is written).
                    ::core::result::Result::Ok(false)
                }
            }
        }

        #[allow(unused_variables)]
        fn decode_unchanged(__baseline: &Self) -> #krate::Result<Self> {
            match __baseline {
                #unchanged_arms
            }
        }

        #[allow(unused_variables, unreachable_patterns)]
        fn encode_changed<__E: #enc>(&self, __baseline: &Self, __e: &mut __E) -> #krate::Result<()> {
            match (self, __baseline) {
                #write_arms
                _ => {
                    #enc::write_bool(__e, true) #type_err?;
                    #krate::NetSerialize::encode(self, __e)?;
                }
            }
            ::core::result::Result::Ok(())
        }

        #[allow(unused_variables)]
        fn decode_changed<__D: #dec>(__baseline: &Self, __d: &mut __D) -> #krate::Result<Self> {
            if #dec::read_bool(__d) #type_err? {
                return <Self as #krate::NetSerialize>::decode(__d);
            }
            match __baseline {
                #read_arms
            }
        }
    }
}

/// Asserts, at each nested type's span, that it implements `NetDelta` (one error there,
/// with the trait's message), and bounds the ones naming a generic parameter.
pub fn bounds(
    g: &Gen,
    bodies: &[Body<'_>],
    generics: &syn::Generics,
    where_clause: &mut syn::WhereClause,
    mentions: impl Fn(&TokenStream) -> bool,
) -> TokenStream {
    let mut asserts = TokenStream::new();
    for ty in nested_types(bodies) {
        let span = ty.span();
        let krate = crate::internals::respan::respan(g.krate.clone(), span);
        if mentions(&quote!(#ty)) {
            let p = quote_spanned!(span=> #ty: #krate::NetDelta);
            where_clause.predicates.push(syn::parse_quote!(#p));
        } else {
            let p = quote_spanned!(span=> for<'__netser> #ty: #krate::NetDelta);
            where_clause.predicates.push(syn::parse_quote!(#p));
            asserts.extend(quote_spanned! {span=>
                const _: fn() = || {
                    let _: u64 = <#ty as #krate::NetDelta>::MAX_DELTA_BITS;
                };
            });
        }
    }
    let _ = generics;
    asserts
}
