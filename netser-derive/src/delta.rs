//! `#[net(delta)]`: the `NetDelta` impl, from the same wire forms as encode and decode.
//!
//! Every wire form gives five pieces, all against a baseline value `b` of the same
//! field (expressions of type `&T`): whether the value is unchanged (`same`, a `bool`
//! expression that may use `?`), its delta writer and reader (changed bit included),
//! what an unchanged delta decodes to, and its worst case in bits. The runtime's
//! `netser::delta` holds the encodings; this module only wires fields to them.

use proc_macro2::TokenStream;
use quote::quote;

use crate::bounds;
use crate::decode;
use crate::encode;
use crate::gen::{ErrPath, Gen};
use crate::internals::ast::CollectionKind;
use crate::internals::wire::Wire;

mod items;

pub use items::{bounds, enum_items, struct_items, VariantParts};

/// How one value goes in a delta.
struct Delta<'w> {
    wire: &'w Wire,
    /// `#[net(absolute)]`, or a form with no relative encoding: `1` + absolute.
    absolute: bool,
}

impl<'w> Delta<'w> {
    fn of(wire: &'w Wire, absolute: bool) -> Self {
        let absolute = absolute
            || matches!(
                wire,
                Wire::String { .. }
                    | Wire::Map { .. }
                    | Wire::With { .. }
                    | Wire::Seq {
                        kind: CollectionKind::Set,
                        ..
                    }
            );
        Delta { wire, absolute }
    }

    fn elem(&self, elem: &'w Wire) -> Delta<'w> {
        Delta::of(elem, false)
    }
}

fn rt(g: &Gen) -> TokenStream {
    let krate = &g.krate;
    quote!(#krate::__private::delta)
}

fn result_ty(g: &Gen, t: TokenStream) -> TokenStream {
    let krate = &g.krate;
    quote!(#krate::Result<#t>)
}

/// `same` as a `Result<bool>` closure call: an error counts as "changed".
fn same_ok(g: &Gen, d: &Delta<'_>, v: &TokenStream, b: &TokenStream) -> TokenStream {
    let same = same(g, d, v, b);
    let r = result_ty(g, quote!(bool));
    quote!(
        ::core::matches!((|| -> #r { ::core::result::Result::Ok(#same) })(), ::core::result::Result::Ok(true))
    )
}

/// A `bool` expression: whether `v` is unchanged against `b` (`?` propagates the
/// value's bound errors).
fn same(g: &Gen, d: &Delta<'_>, v: &TokenStream, b: &TokenStream) -> TokenStream {
    let krate = &g.krate;
    let rt = rt(g);
    let private = quote!(#krate::__private::delta_seq);
    if d.absolute {
        let wv = encode::wire_encode(g, d.wire, v.clone(), &ErrPath::default());
        let wb = encode::wire_encode(g, d.wire, b.clone(), &ErrPath::default());
        let r = result_ty(g, quote!(()));
        return quote!(#private::same_encoding(
            |__e: &mut #private::BitVec| -> #r { #wv ::core::result::Result::Ok(()) },
            |__e: &mut #private::BitVec| -> #r { #wb ::core::result::Result::Ok(()) },
        )?);
    }
    match d.wire {
        Wire::Value(ty) => quote!(<#ty as #krate::NetDelta>::is_unchanged(#v, #b)?),
        Wire::IntRange { ty, min, max, .. } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::int_unchanged_from::<#t>(*#v, *#b, #min, #max, 0)?)
        }
        Wire::IntBits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::int_unchanged_from::<#t>(*#v, *#b, 0, <#t>::MAX >> (<#t>::BITS - #bits), 0)?)
        }
        Wire::Quantize {
            min,
            max,
            res,
            clamp,
            ..
        } => {
            let q = crate::gen::quantize_const(g, min, max, res, *clamp);
            quote!({ #q #rt::quantized_unchanged_from(*#v, *#b, &__Q, 0)? })
        }
        Wire::Quat { bits, glam } => {
            let (av, ab) = quat_arrays(glam.is_some(), v, b);
            quote!(#rt::quat_unchanged_from(#av, #ab, #bits, 0)?)
        }
        Wire::GlamVec { dims, elem, .. } => {
            let parts =
                (0..*dims).map(|k| same(g, &d.elem(elem), &quote!(&__cv[#k]), &quote!(&__cb[#k])));
            quote!({
                let __cv = #v.to_array();
                let __cb = #b.to_array();
                true #(&& #parts)*
            })
        }
        Wire::Array { elem, .. } | Wire::Seq { elem, .. } => {
            let max_len = max_len_of(d.wire);
            let s = same(g, &d.elem(elem), &quote!(__v), &quote!(__b));
            let r = result_ty(g, quote!(bool));
            quote!(#private::unchanged_from(&#v[..], &#b[..], #max_len, |__v, __b| -> #r {
                ::core::result::Result::Ok(#s)
            })?)
        }
        Wire::Option { inner } => {
            let s = same(g, &d.elem(inner), &quote!(__v), &quote!(__b));
            quote!(match (#v, #b) {
                (::core::option::Option::None, ::core::option::Option::None) => true,
                (::core::option::Option::Some(__v), ::core::option::Option::Some(__b)) => #s,
                _ => false,
            })
        }
        Wire::String { .. } | Wire::Map { .. } | Wire::With { .. } => {
            unreachable!("sent absolute")
        }
    }
}

fn quat_arrays(glam: bool, v: &TokenStream, b: &TokenStream) -> (TokenStream, TokenStream) {
    if glam {
        (quote!(#v.to_array()), quote!(#b.to_array()))
    } else {
        (quote!(*#v), quote!(*#b))
    }
}

/// `Some(max_len)` of a `Vec` or `Box<[T]>`, `None` of an array.
fn max_len_of(wire: &Wire) -> TokenStream {
    match wire {
        Wire::Seq { max_len, .. } => quote!(::core::option::Option::Some(#max_len)),
        _ => quote!(::core::option::Option::None),
    }
}

/// Statements writing the delta of `v` against `b` (changed bit included) to `__e`.
fn write(g: &Gen, d: &Delta<'_>, v: &TokenStream, b: &TokenStream, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let rt = rt(g);
    let map_err = path.map_err(g);
    if d.absolute {
        let same = same_ok(g, d, v, b);
        let abs = encode::wire_encode(g, d.wire, v.clone(), path);
        return quote!(if #same {
            #enc::write_bool(__e, false) #map_err?;
        } else {
            #enc::write_bool(__e, true) #map_err?;
            #abs
        });
    }
    match d.wire {
        Wire::Value(ty) => quote!(<#ty as #krate::NetDelta>::encode_delta(#v, #b, __e) #map_err?;),
        Wire::IntRange { ty, min, max, .. } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::write_int_delta::<_, #t>(__e, *#v, *#b, #min, #max) #map_err?;)
        }
        Wire::IntBits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::write_int_delta::<_, #t>(__e, *#v, *#b, 0, <#t>::MAX >> (<#t>::BITS - #bits)) #map_err?;)
        }
        Wire::Quantize {
            min,
            max,
            res,
            clamp,
            ..
        } => {
            let q = crate::gen::quantize_const(g, min, max, res, *clamp);
            quote!({ #q #rt::write_quantized_delta(__e, *#v, *#b, &__Q) #map_err?; })
        }
        Wire::Quat { bits, glam } => {
            let (av, ab) = quat_arrays(glam.is_some(), v, b);
            quote!(#rt::write_quat_delta(__e, #av, #ab, #bits) #map_err?;)
        }
        Wire::GlamVec { dims, elem, .. } => {
            let same = same_ok(g, d, v, b);
            let names = ["x", "y", "z"];
            let parts = (0..*dims).map(|k| {
                write(
                    g,
                    &d.elem(elem),
                    &quote!(&__cv[#k]),
                    &quote!(&__cb[#k]),
                    &path.field(names[k]),
                )
            });
            quote!(if #same {
                #enc::write_bool(__e, false) #map_err?;
            } else {
                #enc::write_bool(__e, true) #map_err?;
                let __cv = #v.to_array();
                let __cb = #b.to_array();
                #(#parts)*
            })
        }
        Wire::Array { elem_ty, elem, .. } | Wire::Seq { elem_ty, elem, .. } => {
            let private = quote!(#krate::__private::delta_seq);
            let ed = d.elem(elem);
            let s = same(g, &ed, &quote!(__v), &quote!(__b));
            let changed = changed_write(g, &ed, &quote!(__v), &quote!(__b));
            let abs = encode::wire_encode(g, elem, quote!(__v), &ErrPath::default());
            let max_len = max_len_of(d.wire);
            let rb = result_ty(g, quote!(bool));
            let r = result_ty(g, quote!(()));
            quote!(#private::write(__e, &#v[..], &#b[..], #max_len, #private::Elements {
                same: |__v: &#elem_ty, __b: &#elem_ty| -> #rb { ::core::result::Result::Ok(#s) },
                changed: |__e: &mut __E, __v: &#elem_ty, __b: &#elem_ty| -> #r { #changed ::core::result::Result::Ok(()) },
                absolute: |__e: &mut __E, __v: &#elem_ty| -> #r { #abs ::core::result::Result::Ok(()) },
            }) #map_err?;)
        }
        Wire::Option { inner } => {
            let same = same_ok(g, d, v, b);
            let id = d.elem(inner);
            let abs = encode::wire_encode(g, inner, quote!(__v), path);
            let delta = write(g, &id, &quote!(__v), &quote!(__b), path);
            quote!(if #same {
                #enc::write_bool(__e, false) #map_err?;
            } else {
                #enc::write_bool(__e, true) #map_err?;
                match (#v, #b) {
                    (::core::option::Option::Some(__v), ::core::option::Option::None) => { #abs }
                    (::core::option::Option::None, _) => {
                        #enc::write_bool(__e, false) #map_err?;
                    }
                    (::core::option::Option::Some(__v), ::core::option::Option::Some(__b)) => {
                        #enc::write_bool(__e, true) #map_err?;
                        #delta
                    }
                }
            })
        }
        Wire::String { .. } | Wire::Map { .. } | Wire::With { .. } => {
            unreachable!("sent absolute")
        }
    }
}

/// A collection element known to have changed: a nested type's changes without its
/// leading bit, any other form's whole delta.
fn changed_write(g: &Gen, d: &Delta<'_>, v: &TokenStream, b: &TokenStream) -> TokenStream {
    let krate = &g.krate;
    match d.wire {
        Wire::Value(ty) if !d.absolute => {
            quote!(<#ty as #krate::NetDelta>::encode_changed(#v, #b, __e)?;)
        }
        _ => write(g, d, v, b, &ErrPath::default()),
    }
}

fn changed_read(g: &Gen, d: &Delta<'_>, b: &TokenStream) -> TokenStream {
    let krate = &g.krate;
    match d.wire {
        Wire::Value(ty) if !d.absolute => {
            quote!(<#ty as #krate::NetDelta>::decode_changed(#b, __d)?)
        }
        _ => read(g, d, b, &ErrPath::default()),
    }
}

/// An expression reading the delta against `b` from `__d`.
fn read(g: &Gen, d: &Delta<'_>, b: &TokenStream, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let dec = quote!(#krate::Decoder);
    let rt = rt(g);
    let map_err = path.map_err(g);
    if d.absolute {
        let abs = decode::wire_decode(g, d.wire, path);
        let unchanged = unchanged(g, d, b, path);
        return quote!(if #dec::read_bool(__d) #map_err? { #abs } else { #unchanged });
    }
    match d.wire {
        Wire::Value(ty) => quote!(<#ty as #krate::NetDelta>::decode_delta(#b, __d) #map_err?),
        Wire::IntRange { ty, min, max, .. } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::read_int_delta::<_, #t>(__d, *#b, #min, #max) #map_err?)
        }
        Wire::IntBits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::read_int_delta::<_, #t>(__d, *#b, 0, <#t>::MAX >> (<#t>::BITS - #bits)) #map_err?)
        }
        Wire::Quantize {
            min,
            max,
            res,
            clamp,
            ..
        } => {
            let q = crate::gen::quantize_const(g, min, max, res, *clamp);
            quote!({ #q #rt::read_quantized_delta(__d, *#b, &__Q) #map_err? })
        }
        Wire::Quat { bits, glam } => {
            let ab = if glam.is_some() {
                quote!(#b.to_array())
            } else {
                quote!(*#b)
            };
            let q = quote!(#rt::read_quat_delta(__d, #ab, #bits) #map_err?);
            match glam {
                Some(ty) => quote!(<#ty>::from_array(#q)),
                None => q,
            }
        }
        Wire::GlamVec { ty, dims, elem } => {
            let names = ["x", "y", "z"];
            let parts = (0..*dims)
                .map(|k| read(g, &d.elem(elem), &quote!(&__cb[#k]), &path.field(names[k])));
            let unchanged = unchanged(g, d, b, path);
            quote!(if #dec::read_bool(__d) #map_err? {
                let __cb = #b.to_array();
                <#ty>::from_array([#(#parts),*])
            } else {
                #unchanged
            })
        }
        Wire::Array { len, elem_ty, elem } => {
            let items = read_items(g, d, elem_ty, elem, b, path);
            let apply = path.apply(g);
            quote!({
                let __items = #items;
                match <[#elem_ty; #len] as ::core::convert::TryFrom<_>>::try_from(__items) {
                    ::core::result::Result::Ok(__arr) => __arr,
                    ::core::result::Result::Err(_) => {
                        return ::core::result::Result::Err(#krate::Error::new(
                            #krate::ErrorKind::Custom("array length"),
                            #dec::bit_position(__d),
                        ) #apply)
                    }
                }
            })
        }
        Wire::Seq {
            kind,
            elem_ty,
            elem,
            ..
        } => {
            let items = read_items(g, d, elem_ty, elem, b, path);
            if *kind == CollectionKind::BoxSlice {
                quote!(#items.into_boxed_slice())
            } else {
                items
            }
        }
        Wire::Option { inner } => {
            let id = d.elem(inner);
            let abs = decode::wire_decode(g, inner, path);
            let delta = read(g, &id, &quote!(__b), path);
            let unchanged = unchanged(g, d, b, path);
            quote!(if #dec::read_bool(__d) #map_err? {
                match #b {
                    ::core::option::Option::None => ::core::option::Option::Some(#abs),
                    ::core::option::Option::Some(__b) => {
                        if #dec::read_bool(__d) #map_err? {
                            ::core::option::Option::Some(#delta)
                        } else {
                            ::core::option::Option::None
                        }
                    }
                }
            } else {
                #unchanged
            })
        }
        Wire::String { .. } | Wire::Map { .. } | Wire::With { .. } => {
            unreachable!("sent absolute")
        }
    }
}

/// The `Vec` of a collection's elements read against `b`.
fn read_items(
    g: &Gen,
    d: &Delta<'_>,
    elem_ty: &syn::Type,
    elem: &Wire,
    b: &TokenStream,
    path: &ErrPath,
) -> TokenStream {
    let krate = &g.krate;
    let private = quote!(#krate::__private::delta_seq);
    let map_err = path.map_err(g);
    let ed = d.elem(elem);
    let unchanged = unchanged(g, &ed, &quote!(__b), &ErrPath::default());
    let changed = changed_read(g, &ed, &quote!(__b));
    let abs = decode::wire_decode(g, elem, &ErrPath::default());
    let min_bits = bounds::wire_bits(g, elem).0;
    let max_len = max_len_of(d.wire);
    let r = result_ty(g, quote!(#elem_ty));
    quote!(#private::read(
        __d,
        &#b[..],
        #max_len,
        #min_bits,
        |__b: &#elem_ty| -> #r { ::core::result::Result::Ok(#unchanged) },
        |__d: &mut __D, __b: &#elem_ty| -> #r { ::core::result::Result::Ok(#changed) },
        |__d: &mut __D| -> #r { ::core::result::Result::Ok(#abs) },
    ) #map_err?)
}

/// An expression: what an unchanged delta against `b` decodes to.
fn unchanged(g: &Gen, d: &Delta<'_>, b: &TokenStream, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let rt = rt(g);
    let map_err = path.map_err(g);
    let private = quote!(#krate::__private::delta_seq);
    if d.absolute {
        let wb = encode::wire_encode(g, d.wire, b.clone(), &ErrPath::default());
        let rd = decode::wire_decode(g, d.wire, &ErrPath::default());
        let r = result_ty(g, quote!(()));
        return quote!(#private::reencode(
            |__e: &mut #private::BitVec| -> #r { #wb ::core::result::Result::Ok(()) },
            |__d| ::core::result::Result::Ok(#rd),
        ) #map_err?);
    }
    match d.wire {
        Wire::Value(ty) => quote!(<#ty as #krate::NetDelta>::decode_unchanged(#b) #map_err?),
        Wire::IntRange { ty, min, max, .. } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::int_unchanged::<#t>(*#b, #min, #max, 0) #map_err?)
        }
        Wire::IntBits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#rt::int_unchanged::<#t>(*#b, 0, <#t>::MAX >> (<#t>::BITS - #bits), 0) #map_err?)
        }
        Wire::Quantize {
            min,
            max,
            res,
            clamp,
            ..
        } => {
            let q = crate::gen::quantize_const(g, min, max, res, *clamp);
            quote!({ #q #rt::quantized_unchanged(*#b, &__Q, 0) #map_err? })
        }
        Wire::Quat { bits, glam } => {
            let ab = if glam.is_some() {
                quote!(#b.to_array())
            } else {
                quote!(*#b)
            };
            let q = quote!(#rt::quat_unchanged(#ab, #bits, 0) #map_err?);
            match glam {
                Some(ty) => quote!(<#ty>::from_array(#q)),
                None => q,
            }
        }
        Wire::GlamVec { ty, dims, elem } => {
            let names = ["x", "y", "z"];
            let parts = (0..*dims)
                .map(|k| unchanged(g, &d.elem(elem), &quote!(&__cb[#k]), &path.field(names[k])));
            quote!({
                let __cb = #b.to_array();
                <#ty>::from_array([#(#parts),*])
            })
        }
        Wire::Array { len, elem_ty, elem } => {
            let items = unchanged_items(g, d, elem_ty, elem, b, path);
            let apply = path.apply(g);
            quote!(match <[#elem_ty; #len] as ::core::convert::TryFrom<_>>::try_from(#items) {
                ::core::result::Result::Ok(__arr) => __arr,
                ::core::result::Result::Err(_) => {
                    return ::core::result::Result::Err(#krate::Error::new(
                        #krate::ErrorKind::Custom("array length"),
                        0,
                    ) #apply)
                }
            })
        }
        Wire::Seq {
            kind,
            elem_ty,
            elem,
            ..
        } => {
            let items = unchanged_items(g, d, elem_ty, elem, b, path);
            if *kind == CollectionKind::BoxSlice {
                quote!(#items.into_boxed_slice())
            } else {
                items
            }
        }
        Wire::Option { inner } => {
            let u = unchanged(g, &d.elem(inner), &quote!(__b), path);
            quote!(match #b {
                ::core::option::Option::None => ::core::option::Option::None,
                ::core::option::Option::Some(__b) => ::core::option::Option::Some(#u),
            })
        }
        Wire::String { .. } | Wire::Map { .. } | Wire::With { .. } => {
            unreachable!("sent absolute")
        }
    }
}

/// The `Vec` of a collection's elements, each unchanged.
fn unchanged_items(
    g: &Gen,
    d: &Delta<'_>,
    elem_ty: &syn::Type,
    elem: &Wire,
    b: &TokenStream,
    path: &ErrPath,
) -> TokenStream {
    let krate = &g.krate;
    let private = quote!(#krate::__private::delta_seq);
    let map_err = path.map_err(g);
    let u = unchanged(g, &d.elem(elem), &quote!(__b), &ErrPath::default());
    let max_len = max_len_of(d.wire);
    let r = result_ty(g, quote!(#elem_ty));
    quote!(#private::unchanged_all(&#b[..], #max_len, 0, |__b: &#elem_ty| -> #r {
        ::core::result::Result::Ok(#u)
    }) #map_err?)
}

/// The worst case of a delta, in bits, as a `u64` const expression.
fn max_bits(g: &Gen, d: &Delta<'_>) -> TokenStream {
    let krate = &g.krate;
    let rt = rt(g);
    let abs = bounds::wire_bits(g, d.wire).1;
    if d.absolute {
        return quote!((#abs).saturating_add(1));
    }
    match d.wire {
        Wire::Value(ty) => quote!(<#ty as #krate::NetDelta>::MAX_DELTA_BITS),
        Wire::IntRange { .. } | Wire::IntBits { .. } | Wire::Quantize { .. } => {
            quote!(#rt::level_delta_max_bits((#abs) as u32))
        }
        Wire::Quat { bits, .. } => quote!(#rt::quat_delta_max_bits(#bits)),
        Wire::GlamVec { dims, elem, .. } => {
            let e = max_bits(g, &d.elem(elem));
            let n = *dims as u64;
            quote!((#e).saturating_mul(#n).saturating_add(1))
        }
        Wire::Array { len, elem, .. } => {
            let c = changed_max(g, &d.elem(elem));
            quote!(((#len) as u64).saturating_mul((#c).saturating_add(1)).saturating_add(2))
        }
        Wire::Seq { max_len, elem, .. } => {
            let ed = d.elem(elem);
            let c = changed_max(g, &ed);
            let a = bounds::wire_bits(g, elem).1;
            let len_bits = quote!({
                let __n: usize = #max_len;
                (usize::BITS - __n.leading_zeros()) as u64
            });
            let per = bounds::const_max(c, a);
            quote!(((#max_len) as u64).saturating_mul((#per).saturating_add(1)).saturating_add(#len_bits).saturating_add(2))
        }
        Wire::Option { inner } => {
            let id = d.elem(inner);
            let a = bounds::wire_bits(g, inner).1;
            let dm = max_bits(g, &id);
            let m = bounds::const_max(a, quote!((#dm).saturating_add(1)));
            quote!((#m).saturating_add(1))
        }
        Wire::String { .. } | Wire::Map { .. } | Wire::With { .. } => {
            unreachable!("sent absolute")
        }
    }
}

fn changed_max(g: &Gen, d: &Delta<'_>) -> TokenStream {
    let krate = &g.krate;
    match d.wire {
        Wire::Value(ty) if !d.absolute => quote!(<#ty as #krate::NetDelta>::MAX_CHANGED_BITS),
        _ => max_bits(g, d),
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    fn expand(input: proc_macro2::TokenStream) -> String {
        crate::expand::derive(&syn::parse2(input).unwrap()).to_string()
    }

    #[test]
    fn delta_adds_the_impl_and_only_then() {
        let with = expand(quote!(
            #[net(delta)]
            struct S {
                #[net(range = 0..=9)]
                a: u8,
            }
        ));
        assert!(with.contains("NetDelta for S"), "{with}");
        assert!(with.contains("write_int_delta"), "{with}");
        let without = expand(quote!(
            struct S {
                a: u8,
            }
        ));
        assert!(!without.contains("NetDelta"), "{without}");
    }

    #[test]
    fn nested_types_are_asserted_unless_absolute() {
        let out = expand(quote!(
            #[net(delta)]
            struct S {
                inner: Inner,
                #[net(absolute)]
                other: Other,
                #[net(max_len = 4)]
                list: Vec<Item>,
            }
        ));
        assert!(out.contains("< Inner as :: netser :: NetDelta >"), "{out}");
        assert!(out.contains("< Item as :: netser :: NetDelta >"), "{out}");
        assert!(!out.contains("< Other as :: netser :: NetDelta >"), "{out}");
        assert!(out.contains("same_encoding"), "{out}");
    }

    #[test]
    fn strings_and_maps_go_absolute() {
        let out = expand(quote!(
            #[net(delta)]
            struct S {
                #[net(max_len = 8)]
                name: String,
            }
        ));
        assert!(out.contains("reencode"), "{out}");
    }
}
