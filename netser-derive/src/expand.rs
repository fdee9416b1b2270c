//! Ties the pipeline together: parse, check, resolve, then generate the impl (or,
//! on error, the errors plus a stub impl so that no cascade of errors follows).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::batch;
use crate::bounds;
use crate::gen::{ErrPath, Gen};
use crate::hoist::Hoist;
use crate::internals::ast::{Container, Style};
use crate::internals::check;
use crate::internals::ctxt::Ctxt;
use crate::internals::respan::respan;
use crate::internals::wire::Wire;
use crate::plan::{self, Body};
use crate::run;
use crate::schema::Hasher;
use crate::{decode, encode};

/// Expands `#[derive(NetSerialize)]` on `input`.
pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    let bodies = cont.as_ref().map(|c| {
        check::check(&cx, c);
        plan::plan(&cx, c)
    });
    let krate = krate(cont.as_ref());
    match (cx.check(), &cont, bodies) {
        (Ok(()), Some(cont), Some(bodies)) => generate(cont, bodies, krate),
        (Err(errors), _, _) => {
            let errors = errors.to_compile_error();
            let stub = stub(input, &krate);
            quote!(#errors #stub)
        }
        (Ok(()), _, _) => unreachable!("no container without an error"),
    }
}

fn krate(cont: Option<&Container<'_>>) -> TokenStream {
    match cont.and_then(|c| c.attrs.crate_path.as_ref()) {
        Some(set) => {
            let path = &set.value;
            quote!(#path)
        }
        None => quote!(::netser),
    }
}

/// The type's generics with a `NetSerialize` bound on every type parameter.
fn bounded_generics(generics: &syn::Generics, krate: &TokenStream) -> syn::Generics {
    let mut generics = generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#krate::NetSerialize));
    }
    generics
}

/// Thiserror's fallback: the impl exists, so uses of the type raise no further errors.
fn stub(input: &syn::DeriveInput, krate: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let generics = bounded_generics(&input.generics, krate);
    let (impl_g, ty_g, where_g) = generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_g #krate::NetSerialize for #ident #ty_g #where_g {
            const MIN_BITS: u64 = 0;
            const MAX_BITS: u64 = 0;
            const MAX_HEAP_BYTES: u64 = 0;
            const SCHEMA_HASH: u64 = 0;
            fn encode<__E: #krate::Encoder>(&self, _: &mut __E) -> #krate::Result<()> {
                ::core::unreachable!()
            }
            fn decode<__D: #krate::Decoder>(_: &mut __D) -> #krate::Result<Self> {
                ::core::unreachable!()
            }
        }
    }
}

/// The pattern binding a body's sent fields by name (`Self { a, b, .. }`).
fn pattern(path: &TokenStream, body: &Body<'_>) -> TokenStream {
    match body.style {
        Style::Unit => quote!(#path),
        Style::Named => {
            let names = body
                .fields
                .iter()
                .filter(|f| f.wire.is_some())
                .map(|f| &f.field.binding);
            quote!(#path { #(#names,)* .. })
        }
        Style::Tuple => {
            let parts = body.fields.iter().map(|f| {
                if f.wire.is_some() {
                    let b = &f.field.binding;
                    quote!(#b)
                } else {
                    quote!(_)
                }
            });
            quote!(#path ( #(#parts),* ))
        }
    }
}

/// `Self { a: __f_a, ... }` from the decoded locals.
fn construct(path: &TokenStream, body: &Body<'_>) -> TokenStream {
    let locals = body.fields.iter().map(|f| decode::local(f.field));
    match body.style {
        Style::Unit => quote!(#path),
        Style::Named => {
            let members = body.fields.iter().map(|f| &f.field.member);
            quote!(#path { #(#members: #locals),* })
        }
        Style::Tuple => quote!(#path ( #(#locals),* )),
    }
}

/// Bits of an enum tag for `n` variants: `bits_required(0, n - 1)`.
fn tag_bits(n: usize) -> u64 {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as u64
    }
}

fn generate(cont: &Container<'_>, mut bodies: Vec<Body<'_>>, krate: TokenStream) -> TokenStream {
    let g = Gen {
        krate: krate.clone(),
        type_name: cont.ident.to_string(),
    };
    let ident = cont.ident;
    let mut generics = bounded_generics(cont.generics, &krate);
    // Each nested type must implement the trait. A type that names one of the type's
    // generic parameters is bounded in the where clause at the field's type. A concrete
    // type is asserted by a const item at the field's type: one error there, with the
    // trait's message. Its where-clause bound is higher-ranked (`for<'__netser>`), which
    // rustc does not check at the definition, so an unsatisfied one adds no second
    // error and no feature-gate note (#48214); the body relies on it, so no error per use
    // follows either.
    let mut impl_asserts = TokenStream::new();
    let where_clause = generics.make_where_clause();
    for ty in nested_types(&bodies) {
        // All of it at the type's span (the runtime path too), so rustc can point there.
        let span = ty.span();
        let krate = respan(krate.clone(), span);
        if mentions_generics(&quote!(#ty), cont.generics) {
            let p = quote_spanned!(span=> #ty: #krate::NetSerialize);
            where_clause.predicates.push(syn::parse_quote!(#p));
        } else {
            let p = quote_spanned!(span=> for<'__netser> #ty: #krate::NetSerialize);
            where_clause.predicates.push(syn::parse_quote!(#p));
            impl_asserts.extend(quote_spanned! {span=>
                const _: fn() = || {
                    let _: u64 = <#ty as #krate::NetSerialize>::MIN_BITS;
                };
            });
        }
    }
    let (impl_g, ty_g, where_g) = generics.split_for_impl();
    let enc = quote!(#krate::Encoder);
    let dec = quote!(#krate::Decoder);
    let root = ErrPath::default();
    let type_err = root.map_err(&g);
    let type_apply = root.apply(&g);
    let is_enum = bodies.first().is_some_and(|b| b.variant.is_some());

    let mut hoist = Hoist::default();
    hoist.bodies(&mut bodies, &krate, &g.type_name);
    let when_fns = when_fns(&mut bodies);
    let bodies = &bodies;

    let heap = bounds::heap_bodies(&g, bodies);
    let mut packed = TokenStream::new();
    let mut batch_inherent = TokenStream::new();
    let (encode_body, decode_body, min_bits, max_bits, hash) = if !is_enum {
        let body = &bodies[0];
        let pat = pattern(&quote!(Self), body);
        let fields = encode::fields(&g, &body.fields, &root);
        let encode_body = quote! {
            let #pat = self;
            #fields
            ::core::result::Result::Ok(())
        };
        let fields = decode::fields(&g, &body.fields, &root);
        let value = construct(&quote!(Self), body);
        let decode_body = quote! {
            #fields
            ::core::result::Result::Ok(#value)
        };
        let (min, max) = bounds::fields(&g, &body.fields);
        let mut h = Hasher::new(&g);
        h.text("struct");
        h.fields(&body.fields);
        packed = packed_items(&g, body);
        if cont.generics.params.is_empty() {
            if let Some(plan) = batch::plan(body) {
                if !packed.is_empty() {
                    packed.extend(batch::column_items(&g, &plan));
                }
                let (items, inherent) = batch::items(&g, &plan);
                packed.extend(items);
                batch_inherent = inherent;
            }
        }
        (encode_body, decode_body, min, max, h.finish())
    } else {
        let n = bodies.len();
        let n32 = n as u32;
        let tag = tag_bits(n);
        let mut encode_arms = Vec::new();
        let mut decode_arms = Vec::new();
        let mut min = None;
        let mut max = None;
        let mut h = Hasher::new(&g);
        h.text(&format!("enum {n}"));
        for (index, body) in bodies.iter().enumerate() {
            let variant = body.variant.expect("enum variant");
            let name = variant.to_string();
            let path = quote!(Self::#variant);
            let base = root.field(&name);
            let index = index as u32;

            let pat = pattern(&path, body);
            let fields = encode::fields(&g, &body.fields, &base);
            let fields = g.traced(&quote!(__e), &enc, quote!(Variant(#name)), fields);
            encode_arms.push(quote! {
                #pat => {
                    #enc::write_tag(__e, #index, #n32) #type_err?;
                    #fields
                }
            });

            let fields = decode::fields(&g, &body.fields, &base);
            let value = construct(&path, body);
            decode_arms.push(quote! {
                #index => {
                    #krate::__private::Tracer::enter(#dec::tracer(__d), #krate::__private::Segment::Variant(#name));
                    #fields
                    #krate::__private::Tracer::exit(#dec::tracer(__d));
                    ::core::result::Result::Ok(#value)
                }
            });

            let (lo, hi) = bounds::fields(&g, &body.fields);
            min = Some(match min {
                None => lo,
                Some(m) => bounds::const_min(m, lo),
            });
            max = Some(match max {
                None => hi,
                Some(m) => bounds::const_max(m, hi),
            });
            h.text(&format!("variant {name}"));
            h.fields(&body.fields);
        }
        let encode_body = quote! {
            match self {
                #(#encode_arms)*
            }
            ::core::result::Result::Ok(())
        };
        let decode_body = quote! {
            let __bit = #dec::bit_position(__d);
            let __tag = #dec::read_tag(__d, #n32) #type_err?;
            match __tag {
                #(#decode_arms)*
                _ => ::core::result::Result::Err(#krate::Error::new(
                    #krate::ErrorKind::UnknownTag { tag: __tag as u64, variants: #n32 as u64 },
                    __bit,
                ) #type_apply),
            }
        };
        let min = min.unwrap_or(quote!(0u64));
        let max = max.unwrap_or(quote!(0u64));
        (
            encode_body,
            decode_body,
            quote!((#tag as u64).saturating_add(#min)),
            quote!((#tag as u64).saturating_add(#max)),
            h.finish(),
        )
    };

    // `max_bytes`: an associated const that fails to evaluate when over budget. It is
    // used by encode (so generic types are checked for each instance) and, for
    // non-generic types, forced right here.
    let mut budget = TokenStream::new();
    let mut budget_use = TokenStream::new();
    let mut budget_force = TokenStream::new();
    if let Some(m) = &cont.attrs.max_bytes {
        let span = m.value.span();
        let limit = check::user_expr(&m.value);
        let value = bounds::max_bytes_check(&g, &limit, span);
        budget = quote_spanned! {span=>
            const __NETSER_MAX_BYTES: () = #value;
        };
        budget_use = quote!(let () = Self::__NETSER_MAX_BYTES;);
        if cont.generics.params.is_empty() {
            budget_force = quote!(const _: () = #ident::__NETSER_MAX_BYTES;);
        }
    }
    // Evaluated wherever the type is encoded or decoded: a refused collection of zero-bit
    // elements is a build error there (not at the definition: no cascade of errors
    // when a field's type lacks its impl).
    budget_use.extend(quote!(let _: u64 = <Self as #krate::NetSerialize>::MAX_HEAP_BYTES;));
    let inherent = if budget.is_empty() && when_fns.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            #[doc(hidden)]
            #[allow(non_snake_case, unused_variables, clippy::all)]
            impl #impl_g #ident #ty_g #where_g {
                #budget
                #(#when_fns)*
            }
            #budget_force
        }
    };
    if !batch_inherent.is_empty() {
        batch_inherent = quote! {
            #[doc(hidden)]
            #[allow(non_snake_case, unused_variables, clippy::all)]
            impl #ident {
                #batch_inherent
            }
        };
    }
    let delta_impl = if cont.attrs.delta.is_some() {
        delta_impl(cont, bodies, &g, &krate)
    } else {
        TokenStream::new()
    };
    let assertions = hoist.items;
    let adapters = if bodies
        .iter()
        .flat_map(|b| &b.fields)
        .any(|f| matches!(f.wire, Some(Wire::With { .. })))
    {
        with_adapters(&krate)
    } else {
        TokenStream::new()
    };

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, unused_lifetimes, clippy::all)]
        const _: () = {
            extern crate alloc as __netser_alloc;
            #adapters
            #impl_asserts
            #assertions
            #inherent
            #batch_inherent

            #[automatically_derived]
            impl #impl_g #krate::NetSerialize for #ident #ty_g #where_g {
                const MIN_BITS: u64 = #min_bits;
                const MAX_BITS: u64 = #max_bits;
                const MAX_HEAP_BYTES: u64 = #heap;
                const SCHEMA_HASH: u64 = #hash;

                #[allow(unused_variables, clippy::let_unit_value)]
                #[inline]
                fn encode<__E: #krate::Encoder>(&self, __e: &mut __E) -> #krate::Result<()> {
                    #budget_use
                    #encode_body
                }

                #[allow(unused_variables, clippy::let_unit_value)]
                #[inline]
                fn decode<__D: #krate::Decoder>(__d: &mut __D) -> #krate::Result<Self> {
                    #budget_use
                    #decode_body
                }

                #packed
            }

            #delta_impl
        };
    }
}

/// The `NetDelta` impl of a `#[net(delta)]` type, with its own bounds: every nested
/// type sent relatively implements `NetDelta` (one error at its type otherwise).
fn delta_impl(
    cont: &Container<'_>,
    bodies: &[Body<'_>],
    g: &Gen,
    krate: &TokenStream,
) -> TokenStream {
    let ident = cont.ident;
    let mut generics = bounded_generics(cont.generics, krate);
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#krate::NetDelta));
    }
    let mut where_clause = generics.make_where_clause().clone();
    // The `NetSerialize` bounds of the nested types, as the absolute impl has them.
    for ty in nested_types(bodies) {
        let span = ty.span();
        let k = respan(krate.clone(), span);
        if mentions_generics(&quote!(#ty), cont.generics) {
            where_clause
                .predicates
                .push(syn::parse_quote!(#ty: #k::NetSerialize));
        }
    }
    let asserts = crate::delta::bounds(g, bodies, cont.generics, &mut where_clause, |t| {
        mentions_generics(t, cont.generics)
    });
    let (impl_g, ty_g, _) = generics.split_for_impl();
    let items = if bodies.first().is_some_and(|b| b.variant.is_some()) {
        let variants: Vec<_> = bodies
            .iter()
            .map(|body| {
                let variant = body.variant.expect("a variant");
                let path = quote!(Self::#variant);
                crate::delta::VariantParts {
                    body,
                    pat: pattern(&path, body),
                    construct: construct(&path, body),
                }
            })
            .collect();
        crate::delta::enum_items(g, &variants)
    } else {
        let body = &bodies[0];
        crate::delta::struct_items(
            g,
            body,
            &pattern(&quote!(Self), body),
            &construct(&quote!(Self), body),
        )
    };
    quote! {
        #asserts

        #[automatically_derived]
        impl #impl_g #krate::NetDelta for #ident #ty_g #where_clause {
            #items
        }
    }
}

/// `PACKED_BITS` and `pack_fixed` for a struct whose sent fields are all
/// of constant width, with no check, alignment, condition or skipped field: a parent
/// struct then packs it into its own runs (when it is 1..=64 bits wide).
fn packed_items(g: &Gen, body: &Body<'_>) -> TokenStream {
    let root = ErrPath::default();
    let mut fields = Vec::new();
    for plan in &body.fields {
        let field = plan.field;
        let plain = plan.magic.is_none() && field.attrs.align.is_none() && plan.when_fn.is_none();
        let Some(fixed) = plan.wire.as_ref().filter(|_| plain).and_then(run::fixed) else {
            return TokenStream::new();
        };
        fields.push(run::RunField {
            binding: field.binding.clone(),
            ty: field.ty,
            path: root.field(&field.name),
            fixed,
        });
    }
    if fields.is_empty() {
        return TokenStream::new();
    }
    let krate = &g.krate;
    let bits = run::packed_bits(g, &fields);
    let pat = pattern(&quote!(Self), body);
    let pack = run::pack(g, &fields);
    quote! {
        const PACKED_BITS: u32 = #bits;

        #[allow(unused_variables, clippy::let_unit_value)]
        #[inline(always)]
        fn pack_fixed(&self, __bit: u64) -> #krate::Result<u64> {
            let #pat = self;
            #pack
        }

    }
}

/// Whether `tokens` name one of `generics`' parameters (or `Self`), so that they
/// cannot be written outside the impl.
fn mentions_generics(tokens: &TokenStream, generics: &syn::Generics) -> bool {
    let mut names: Vec<String> = vec!["Self".to_owned()];
    for param in &generics.params {
        names.push(match param {
            syn::GenericParam::Type(t) => t.ident.to_string(),
            syn::GenericParam::Const(c) => c.ident.to_string(),
            syn::GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
        });
    }
    fn walk(tokens: &TokenStream, names: &[String]) -> bool {
        tokens.clone().into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
            proc_macro2::TokenTree::Group(g) => walk(&g.stream(), names),
            _ => false,
        })
    }
    walk(tokens, &names)
}

/// Every type sent through its own impl, once each, in order of appearance.
fn nested_types(bodies: &[Body<'_>]) -> Vec<syn::Type> {
    fn walk(wire: &Wire, seen: &mut Vec<String>, out: &mut Vec<syn::Type>) {
        match wire {
            Wire::Value(ty) => {
                let key = quote!(#ty).to_string();
                if !seen.contains(&key) {
                    seen.push(key);
                    out.push(ty.clone());
                }
            }
            Wire::GlamVec { elem, .. } | Wire::Array { elem, .. } | Wire::Seq { elem, .. } => {
                walk(elem, seen, out)
            }
            Wire::Option { inner } => walk(inner, seen, out),
            Wire::Map { key, value, .. } => {
                walk(key, seen, out);
                walk(value, seen, out);
            }
            Wire::IntRange { .. }
            | Wire::IntBits { .. }
            | Wire::Quantize { .. }
            | Wire::Quat { .. }
            | Wire::String { .. }
            | Wire::With { .. } => {}
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for wire in bodies
        .iter()
        .flat_map(|b| &b.fields)
        .filter_map(|f| f.wire.as_ref())
    {
        walk(wire, &mut seen, &mut out);
    }
    out
}

/// One associated fn per `when` condition, taking the fields sent before it by
/// reference: encode and decode both call it, so the condition is type-checked once.
fn when_fns(bodies: &mut [Body<'_>]) -> Vec<TokenStream> {
    let mut fns = Vec::new();
    for body in bodies.iter_mut() {
        let mut params = Vec::new();
        for plan in body.fields.iter_mut() {
            if let (Some(when), Some(_)) = (&plan.field.attrs.when, &plan.wire) {
                let name = quote::format_ident!("__netser_when_{}", fns.len());
                let cond = check::user_expr(&when.value);
                fns.push(quote! {
                    #[inline(always)]
                    fn #name(#(#params),*) -> bool {
                        #cond
                    }
                });
                plan.when_fn = Some(name);
            }
            if plan.wire.is_some() {
                let binding = &plan.field.binding;
                let ty = plan.field.ty;
                params.push(quote!(#binding: &#ty));
            }
        }
    }
    fns
}

/// Streams over the derive's encoder and decoder, for `with` functions written
/// against the articles' unified [`Stream`](netser::Stream).
fn with_adapters(krate: &TokenStream) -> TokenStream {
    quote! {
        struct __NetserWrite<'a, E>(&'a mut E);
        impl<E: #krate::Encoder> #krate::Stream for __NetserWrite<'_, E> {
            const IS_WRITING: bool = true;
            type Encoder = E;
            type Decoder = #krate::Never;
            #[inline(always)]
            fn direction(&mut self) -> #krate::Direction<&mut E, &mut #krate::Never> {
                #krate::Direction::Write(&mut *self.0)
            }
            #[inline(always)]
            fn bits_processed(&self) -> u64 {
                #krate::Encoder::bit_position(&*self.0)
            }
        }
        struct __NetserRead<'a, D>(&'a mut D);
        impl<D: #krate::Decoder> #krate::Stream for __NetserRead<'_, D> {
            const IS_WRITING: bool = false;
            type Encoder = #krate::Never;
            type Decoder = D;
            #[inline(always)]
            fn direction(&mut self) -> #krate::Direction<&mut #krate::Never, &mut D> {
                #krate::Direction::Read(&mut *self.0)
            }
            #[inline(always)]
            fn bits_processed(&self) -> u64 {
                #krate::Decoder::bit_position(&*self.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_bits_match_bits_required() {
        assert_eq!(tag_bits(1), 0);
        assert_eq!(tag_bits(2), 1);
        assert_eq!(tag_bits(3), 2);
        assert_eq!(tag_bits(4), 2);
        assert_eq!(tag_bits(5), 3);
        assert_eq!(tag_bits(256), 8);
    }

    fn expand(input: TokenStream) -> String {
        derive(&syn::parse2(input).unwrap()).to_string()
    }

    #[test]
    fn errors_come_with_a_stub_impl() {
        let out = expand(quote!(
            struct S {
                #[net(rnage = 0..=1)]
                a: u8,
                b: Vec<u8>,
            }
        ));
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }

    #[test]
    fn crate_path_is_used() {
        let out = expand(quote!(
            #[net(crate = "my::net")]
            struct S {
                a: u8,
            }
        ));
        assert!(out.contains("my :: net :: NetSerialize"), "{out}");
        assert!(!out.contains(":: netser ::"), "{out}");
    }

    #[test]
    fn unions_are_rejected() {
        let out = expand(quote!(union U { a: u8 }));
        assert!(out.contains("cannot be derived for a union"), "{out}");
    }
}
