//! `encode`: writes a value from `&self`, field by field, through an `Encoder`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::gen::{key_order, quantize_const, ErrPath, Gen};
use crate::internals::ast::{is_btree, CollectionKind, FloatTy};
use crate::internals::wire::{slice_elem, Wire};
use crate::plan::FieldPlan;
use crate::run;

const NAMES: [&str; 3] = ["x", "y", "z"];

/// The encode errors of a hash map (set) whose `Ord` calls two distinct keys equal: the
/// decoder would refuse what the sorted order gives as a duplicate.
const ORD_NOT_EQ_MAP: &str = "map keys equal under `Ord` but distinct under `Eq`";
const ORD_NOT_EQ_SET: &str = "set elements equal under `Ord` but distinct under `Eq`";

/// Statements that write every sent field; the fields are bound by name as references.
///
/// Consecutive fields of constant width form runs ([`run`]), written packed when the
/// stream allows it; each field keeps its field-by-field code for the other streams.
pub fn fields(g: &Gen, plans: &[FieldPlan<'_>], base: &ErrPath) -> TokenStream {
    let mut out = TokenStream::new();
    let mut earlier = Vec::new();
    // The open run: its fields and their field-by-field code.
    let mut open: Vec<(run::RunField<'_>, TokenStream)> = Vec::new();
    let mut slots = 0;
    for plan in plans {
        let Some(wire) = &plan.wire else { continue };
        let field = plan.field;
        let path = base.field(&field.name);
        let slow = field_code(g, plan, wire, &path);
        let plain = plan.magic.is_none() && field.attrs.align.is_none();
        let fixed = if plain { run::fixed(wire) } else { None };
        match (&plan.when_fn, fixed) {
            (None, Some(fixed)) => {
                if slots + fixed.slots() > run::MAX_SLOTS {
                    close(g, &mut open, &mut out);
                    slots = 0;
                }
                slots += fixed.slots();
                open.push((
                    run::RunField {
                        binding: field.binding.clone(),
                        ty: field.ty,
                        path,
                        fixed,
                    },
                    slow,
                ));
            }
            (when, fixed) => {
                close(g, &mut open, &mut out);
                slots = 0;
                // A gated field of several values is a run of its own.
                let code = match fixed {
                    Some(fixed) if fixed.slots() > 1 => {
                        let f = run::RunField {
                            binding: field.binding.clone(),
                            ty: field.ty,
                            path,
                            fixed,
                        };
                        run::encode(g, &[f], slow)
                    }
                    _ => slow,
                };
                out.extend(match when {
                    Some(when) => quote!(if Self::#when(#(#earlier),*) { #code }),
                    None => code,
                });
            }
        }
        earlier.push(field.binding.clone());
    }
    close(g, &mut open, &mut out);
    out
}

/// Emits the open run.
fn close(g: &Gen, open: &mut Vec<(run::RunField<'_>, TokenStream)>, out: &mut TokenStream) {
    let fields = core::mem::take(open);
    out.extend(emit(g, fields));
}

/// A run: packed (with its field-by-field fallback) when it has more than one value,
/// else field by field. A run with nested types packs only when they all do; else it
/// falls back to the runs between them.
fn emit(g: &Gen, fields: Vec<(run::RunField<'_>, TokenStream)>) -> TokenStream {
    let slots: usize = fields.iter().map(|(f, _)| f.fixed.slots()).sum();
    if slots <= 1 {
        return fields.into_iter().map(|(_, s)| s).collect();
    }
    let fallback = if fields.iter().any(|(f, _)| f.fixed.nested().is_some()) {
        split(g, fields.clone())
    } else {
        fields.iter().map(|(_, s)| s.clone()).collect()
    };
    let run_fields: Vec<_> = fields.into_iter().map(|(f, _)| f).collect();
    run::encode(g, &run_fields, fallback)
}

/// The runs between a run's nested types, and the nested types field by field.
fn split(g: &Gen, fields: Vec<(run::RunField<'_>, TokenStream)>) -> TokenStream {
    let mut out = TokenStream::new();
    let mut sub = Vec::new();
    for (f, slow) in fields {
        if f.fixed.nested().is_some() {
            out.extend(emit(g, core::mem::take(&mut sub)));
            out.extend(slow);
        } else {
            sub.push((f, slow));
        }
    }
    out.extend(emit(g, sub));
    out
}

/// One field's field-by-field code: check, align, value, traced (without its `when`).
fn field_code(g: &Gen, plan: &FieldPlan<'_>, wire: &Wire, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let field = plan.field;
    let name = &field.name;
    let binding = &field.binding;
    let map_err = path.map_err(g);
    let mut body = TokenStream::new();
    if let Some(magic) = &plan.magic {
        body.extend(quote!(#enc::write_check(__e, #magic) #map_err?;));
    }
    if field.attrs.align.is_some() {
        body.extend(quote!(#enc::align(__e) #map_err?;));
    }
    body.extend(wire_encode(g, wire, quote!(#binding), path));
    g.traced(&quote!(__e), &enc, quote!(Field(#name)), body)
}

/// Statements that write `v` (an expression of type `&T`, evaluated once).
pub fn wire_encode(g: &Gen, wire: &Wire, v: TokenStream, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let map_err = path.map_err(g);
    let apply = path.apply(g);
    match wire {
        Wire::Value(_) => quote!(#enc::write_value(__e, #v) #map_err?;),
        Wire::IntRange { ty, min, max, .. } => {
            let ty = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#enc::write_int::<#ty>(__e, *#v, #min, #max) #map_err?;)
        }
        Wire::IntBits { ty, bits } => {
            let ty = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#enc::write_uint_bits::<#ty>(__e, *#v, #bits) #map_err?;)
        }
        Wire::Quantize {
            float,
            min,
            max,
            res,
            clamp,
        } => {
            let q = quantize_const(g, min, max, res, *clamp);
            let write = match float {
                FloatTy::F32 => quote!(write_compressed_f32),
                FloatTy::F64 => quote!(write_compressed_f64),
            };
            quote!({ #q #enc::#write(__e, *#v, &__Q) #map_err?; })
        }
        Wire::Quat { bits, glam } => {
            let array = match glam {
                Some(_) => quote!(#v.to_array()),
                None => quote!(*#v),
            };
            quote!(#enc::write_quat(__e, #array, #bits) #map_err?;)
        }
        Wire::GlamVec { dims, elem, .. } => {
            let parts = (0..*dims).map(|k| {
                let name = NAMES[k];
                let body = wire_encode(g, elem, quote!(&__c[#k]), &path.field(name));
                g.traced(&quote!(__e), &enc, quote!(Field(#name)), body)
            });
            quote!({ let __c = #v.to_array(); #(#parts)* })
        }
        Wire::Array { elem, .. } => match slice_elem(elem) {
            Some(ty) => {
                quote!(<#ty as #krate::NetSerialize>::encode_slice(&#v[..], __e) #map_err?;)
            }
            None => each(g, elem, quote!(#v.iter()), path),
        },
        Wire::Seq {
            max_len,
            elem,
            kind: CollectionKind::Vec | CollectionKind::BoxSlice,
            ..
        } if slice_elem(elem).is_some() => {
            let ty = slice_elem(elem);
            quote! {
                #enc::write_len(__e, #v.len(), #max_len) #map_err?;
                <#ty as #krate::NetSerialize>::encode_slice(&#v[..], __e) #map_err?;
            }
        }
        Wire::Seq {
            kind: CollectionKind::Set,
            ty,
            max_len,
            elem_ty,
            elem,
        } if !is_btree(ty) => {
            // A hash set goes in increasing order, as a `BTreeSet` does: the same bits
            // whatever its hash seed or history. The length is checked first, so the
            // sort's buffer is bounded by `max_len`.
            let (inner, i) = path.index();
            let unordered = inner.apply(g);
            let items = each(g, elem, quote!(__elements.into_iter()), path);
            let order = sort_order(g, elem_ty);
            quote!({
                #enc::write_len(__e, #v.len(), #max_len) #map_err?;
                let __elements = match #krate::__private::sorted_elements(#v.iter(), #order) {
                    ::core::result::Result::Ok(__sorted) => __sorted,
                    ::core::result::Result::Err(#i) => {
                        return ::core::result::Result::Err(#krate::Error::new(
                            #krate::ErrorKind::Custom(#ORD_NOT_EQ_SET),
                            #enc::bit_position(__e),
                        ) #unordered)
                    }
                };
                #items
            })
        }
        Wire::Seq { max_len, elem, .. } => {
            let items = each(g, elem, quote!(#v.iter()), path);
            quote! {
                #enc::write_len(__e, #v.len(), #max_len) #map_err?;
                #items
            }
        }
        Wire::String { max_len } => {
            quote!(#enc::write_string(__e, ::core::convert::AsRef::<str>::as_ref(#v), #max_len) #map_err?;)
        }
        Wire::Option { inner } => {
            let some = wire_encode(g, inner, quote!(__some), path);
            quote! {
                match #v {
                    ::core::option::Option::Some(__some) => {
                        #enc::write_bool(__e, true) #map_err?;
                        #some
                    }
                    ::core::option::Option::None => {
                        #enc::write_bool(__e, false) #map_err?;
                    }
                }
            }
        }
        Wire::Map {
            ty,
            max_len,
            key_ty,
            key,
            value,
            ..
        } => {
            let (inner, i) = path.index();
            let k = wire_encode(g, key, quote!(__key), &inner.field("key"));
            let val = wire_encode(g, value, quote!(__value), &inner.field("value"));
            let k = g.traced(&quote!(__e), &enc, quote!(Field("key")), k);
            let val = g.traced(&quote!(__e), &enc, quote!(Field("value")), val);
            let body = g.traced(&quote!(__e), &enc, quote!(Index(#i)), quote!(#k #val));
            if is_btree(ty) {
                // A `BTreeMap` iterates in key order already.
                return quote! {
                    #enc::write_len(__e, #v.len(), #max_len) #map_err?;
                    for (#i, (__key, __value)) in #v.iter().enumerate() {
                        #body
                    }
                };
            }
            // A hash map goes in increasing key order, as a `BTreeMap` does: the same
            // bits whatever its hash seed or history. The length is checked first, so
            // the sort's buffer is bounded by `max_len`.
            let unordered = inner.field("key").apply(g);
            let order = sort_order(g, key_ty);
            quote!({
                #enc::write_len(__e, #v.len(), #max_len) #map_err?;
                let __entries = match #krate::__private::sorted_entries(#v.iter(), #order) {
                    ::core::result::Result::Ok(__sorted) => __sorted,
                    ::core::result::Result::Err(#i) => {
                        return ::core::result::Result::Err(#krate::Error::new(
                            #krate::ErrorKind::Custom(#ORD_NOT_EQ_MAP),
                            #enc::bit_position(__e),
                        ) #unordered)
                    }
                };
                for (#i, (__key, __value)) in __entries.into_iter().enumerate() {
                    #body
                }
            })
        }
        Wire::With {
            path: func,
            max_bits,
            ..
        } => quote!({
            // The unified function takes `&mut`: it works on a copy of the field.
            let __start = #enc::bit_position(__e);
            let mut __value = ::core::clone::Clone::clone(#v);
            #func(&mut __NetserWrite(&mut *__e), &mut __value) #map_err?;
            if #enc::bit_position(__e) - __start > (#max_bits) as u64 {
                return ::core::result::Result::Err(#krate::Error::new(
                    #krate::ErrorKind::Custom("a `with` function wrote more than its `max_bits`"),
                    __start,
                ) #apply);
            }
        }),
    }
}

/// The encoder's sort order: `Ord` on `key_ty`, inlined, after a call of `key_order`
/// (which gives the message). At the key type's span too: rustc then reports the
/// missing `Ord` once there, with `key_order`'s message.
fn sort_order(g: &Gen, key_ty: &syn::Type) -> TokenStream {
    let span = key_ty.span();
    let check = key_order(g, key_ty);
    quote_spanned!(span=> {
        let _ = #check;
        |__a: &#key_ty, __b: &#key_ty| ::core::cmp::Ord::cmp(__a, __b)
    })
}

/// A loop writing each element of `iter` (items of type `&T`).
fn each(g: &Gen, elem: &Wire, iter: TokenStream, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let (inner, i) = path.index();
    let x = quote::format_ident!("__x{}", path.depth);
    let body = wire_encode(g, elem, quote!(#x), &inner);
    let body = g.traced(&quote!(__e), &enc, quote!(Index(#i)), body);
    quote! {
        for (#i, #x) in #iter.enumerate() {
            #body
        }
    }
}
