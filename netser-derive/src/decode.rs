//! `decode`: reads a fresh value, field by field, through a `Decoder`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::bounds;
use crate::gen::{self, ErrPath, Gen};
use crate::internals::ast::{is_btree, shape, CollectionKind, FloatTy, Shape};
use crate::internals::attr::DefaultAttr;
use crate::internals::wire::{slice_elem, Wire};
use crate::plan::FieldPlan;
use crate::run;

const NAMES: [&str; 3] = ["x", "y", "z"];

/// Statements that read every field into `__f_<binding>` locals.
///
/// Consecutive fields of constant width form runs ([`run`]), read packed when the
/// stream allows it; each field keeps its field-by-field read for the other streams.
pub fn fields(g: &Gen, plans: &[FieldPlan<'_>], base: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let dec = quote!(#krate::Decoder);
    let mut out = TokenStream::new();
    let mut earlier = Vec::new();
    // The open run: its fields and their field-by-field reads.
    let mut open: Vec<(run::RunField<'_>, TokenStream)> = Vec::new();
    let mut slots = 0;
    for plan in plans {
        let field = plan.field;
        let local = local(field);
        let ty = field.ty;
        let default = match &field.attrs.default {
            Some(d) => match &d.value {
                DefaultAttr::Trait => quote!(::core::default::Default::default()),
                DefaultAttr::Expr(e) => crate::internals::check::user_expr(e),
            },
            None => quote!(::core::default::Default::default()),
        };
        let Some(wire) = &plan.wire else {
            close(g, &mut open, &mut out);
            slots = 0;
            out.extend(quote!(let #local: #ty = #default;));
            continue;
        };
        let name = &field.name;
        let path = base.field(name);
        let map_err = path.map_err(g);
        let mut prefix = TokenStream::new();
        if let Some(magic) = &plan.magic {
            prefix.extend(quote!(#dec::read_check(__d, #magic) #map_err?;));
        }
        if field.attrs.align.is_some() {
            prefix.extend(quote!(#dec::align(__d) #map_err?;));
        }
        // Nested types are read through their own impl: packed into the parent's run,
        // the benchmark's decode takes more instructions (BENCHMARKS.md, "Nested
        // structs"), while encode, which packs them, takes fewer.
        let fixed = if prefix.is_empty() {
            run::fixed(wire).filter(|f| f.nested().is_none())
        } else {
            None
        };
        let value = wire_decode(g, wire, &path);
        let read = quote! {{
            #krate::__private::Tracer::enter(#dec::tracer(__d), #krate::__private::Segment::Field(#name));
            #prefix
            let __v: #ty = #value;
            #krate::__private::Tracer::exit(#dec::tracer(__d));
            __v
        }};
        let run_field = |fixed| run::RunField {
            binding: local.clone(),
            ty,
            path: path.clone(),
            fixed,
        };
        match (&plan.when_fn, fixed) {
            (None, Some(fixed)) => {
                if slots + fixed.slots() > run::MAX_SLOTS {
                    close(g, &mut open, &mut out);
                    slots = 0;
                }
                slots += fixed.slots();
                open.push((run_field(fixed), read));
            }
            (when, fixed) => {
                close(g, &mut open, &mut out);
                slots = 0;
                // A gated field of several values is a run of its own.
                let read = match fixed {
                    Some(fixed) if fixed.slots() > 1 => run::decode(g, &[run_field(fixed)], read),
                    _ => read,
                };
                out.extend(match when {
                    Some(when) => {
                        quote!(let #local: #ty = if Self::#when(#(&#earlier),*) { #read } else { #default };)
                    }
                    None => quote!(let #local: #ty = #read;),
                });
            }
        }
        earlier.push(local);
    }
    close(g, &mut open, &mut out);
    out
}

/// Emits the open run.
fn close(g: &Gen, open: &mut Vec<(run::RunField<'_>, TokenStream)>, out: &mut TokenStream) {
    let fields = core::mem::take(open);
    out.extend(emit(g, fields));
}

/// Statements binding a run's locals: packed (with its field-by-field fallback) when it
/// has more than one value, else field by field.
fn emit(g: &Gen, fields: Vec<(run::RunField<'_>, TokenStream)>) -> TokenStream {
    let slots: usize = fields.iter().map(|(f, _)| f.fixed.slots()).sum();
    if slots <= 1 {
        return fields
            .into_iter()
            .map(|(f, read)| {
                let local = &f.binding;
                let ty = f.ty;
                quote!(let #local: #ty = #read;)
            })
            .collect();
    }
    let locals: Vec<_> = fields.iter().map(|(f, _)| f.binding.clone()).collect();
    let tys: Vec<_> = fields.iter().map(|(f, _)| f.ty).collect();
    let reads = fields.iter().map(|(_, r)| r);
    let fallback = quote!((#(#reads),*));
    let run_fields: Vec<_> = fields.into_iter().map(|(f, _)| f).collect();
    let value = run::decode(g, &run_fields, fallback);
    if locals.len() == 1 {
        quote!(let #(#locals)*: #(#tys)* = #value;)
    } else {
        quote!(let (#(#locals),*): (#(#tys),*) = #value;)
    }
}

/// The local a field is decoded into.
pub fn local(field: &crate::internals::ast::Field<'_>) -> syn::Ident {
    format_ident!("__f_{}", field.binding.to_string().trim_start_matches("r#"))
}

/// An expression that reads one value (with `?` returning errors).
pub fn wire_decode(g: &Gen, wire: &Wire, path: &ErrPath) -> TokenStream {
    let krate = &g.krate;
    let dec = quote!(#krate::Decoder);
    let map_err = path.map_err(g);
    let apply = path.apply(g);
    match wire {
        Wire::Value(ty) => quote!(#dec::read_value::<#ty>(__d) #map_err?),
        Wire::IntRange { ty, min, max, .. } => {
            let ty = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#dec::read_int::<#ty>(__d, #min, #max) #map_err?)
        }
        Wire::IntBits { ty, bits } => {
            let ty = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#dec::read_uint_bits::<#ty>(__d, #bits) #map_err?)
        }
        Wire::Quantize {
            float,
            min,
            max,
            res,
            clamp,
        } => {
            let q = gen::quantize_const(g, min, max, res, *clamp);
            let read = match float {
                FloatTy::F32 => quote!(read_compressed_f32),
                FloatTy::F64 => quote!(read_compressed_f64),
            };
            quote!({ #q #dec::#read(__d, &__Q) #map_err? })
        }
        Wire::Quat { bits, glam } => {
            let read = quote!(#dec::read_quat(__d, #bits) #map_err?);
            match glam {
                Some(ty) => quote!(<#ty>::from_array(#read)),
                None => read,
            }
        }
        Wire::GlamVec { ty, dims, elem } => {
            let parts = (0..*dims).map(|k| {
                let name = NAMES[k];
                let value = wire_decode(g, elem, &path.field(name));
                traced(g, quote!(Field(#name)), value)
            });
            quote!(<#ty>::from_array([#(#parts),*]))
        }
        Wire::Array { len, elem_ty, elem } => {
            let (inner, i) = path.index();
            let value = traced(g, quote!(Index(#i)), wire_decode(g, elem, &inner));
            match fallback(elem) {
                // Filled with placeholders first: arrays cannot be built from a fallible
                // loop without `unsafe`, and a placeholder costs one store.
                Some(fallback) => quote!({
                    let mut __arr: [#elem_ty; #len] = ::core::array::from_fn(|_| #fallback);
                    for (#i, __slot) in __arr.iter_mut().enumerate() {
                        *__slot = #value;
                    }
                    __arr
                }),
                // No placeholder for an arbitrary type: collect, then convert (the
                // length is exact, so the conversion cannot fail).
                None => {
                    let fill = match slice_elem(elem) {
                        Some(ty) => quote!(
                            <#ty as #krate::NetSerialize>::decode_extend(__d, #len, &mut __vec) #map_err?;
                        ),
                        None => quote!(for #i in 0..#len {
                            __vec.push(#value);
                        }),
                    };
                    quote!({
                        let mut __vec: __netser_alloc::vec::Vec<#elem_ty> =
                            __netser_alloc::vec::Vec::with_capacity(#len);
                        #fill
                        match <[#elem_ty; #len] as ::core::convert::TryFrom<_>>::try_from(__vec) {
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
            }
        }
        Wire::Seq {
            kind,
            ty,
            max_len,
            elem_ty,
            elem,
        } => {
            let (inner, i) = path.index();
            let value = traced(g, quote!(Index(#i)), wire_decode(g, elem, &inner));
            let inner_err = inner.apply(g);
            let elem_min = bounds::wire_bits(g, elem).0;
            let len = quote!(let __len = #dec::read_len(__d, #max_len) #map_err?;);
            // Reserve no more than the input can hold: a forged length costs nothing.
            let reserve = quote! {
                let __min_bits: u64 = #elem_min;
                let __cap = if __min_bits == 0 {
                    __len
                } else {
                    ::core::cmp::min(__len as u64, #dec::bits_remaining(__d) / __min_bits) as usize
                };
            };
            match kind {
                CollectionKind::Vec | CollectionKind::BoxSlice => {
                    let finish = if *kind == CollectionKind::BoxSlice {
                        quote!(__vec.into_boxed_slice())
                    } else {
                        quote!(__vec)
                    };
                    let fill = match slice_elem(elem) {
                        Some(ty) => quote!(
                            <#ty as #krate::NetSerialize>::decode_extend(__d, __len, &mut __vec) #map_err?;
                        ),
                        None => quote!(for #i in 0..__len {
                            __vec.push(#value);
                        }),
                    };
                    quote!({
                        #len
                        #reserve
                        let mut __vec: __netser_alloc::vec::Vec<#elem_ty> = __netser_alloc::vec::Vec::with_capacity(__cap);
                        #fill
                        #finish
                    })
                }
                CollectionKind::Set if is_btree(ty) => {
                    // An ordered set is written in order: any other order would decode
                    // to a value that encodes to other bits.
                    quote!({
                        #len
                        let mut __set: #ty = ::core::default::Default::default();
                        for #i in 0..__len {
                            let __bit = #dec::bit_position(__d);
                            let __item: #elem_ty = #value;
                            if __set.last().is_some_and(|__last| __item < *__last) {
                                return ::core::result::Result::Err(#krate::Error::new(
                                    #krate::ErrorKind::Custom(#SET_ORDER),
                                    __bit,
                                ) #inner_err);
                            }
                            if !__set.insert(__item) {
                                return ::core::result::Result::Err(#krate::Error::new(
                                    #krate::ErrorKind::Custom(#SET_DUPLICATE),
                                    __bit,
                                ) #inner_err);
                            }
                        }
                        __set
                    })
                }
                CollectionKind::Set => {
                    // A hash set is written in increasing order too, and refused in any
                    // other order with the same errors at the same bits as a `BTreeSet`.
                    // It has no last element to compare with: the element before waits
                    // aside (with its bit and index) until the next one is checked.
                    let check = previous_check(g, &inner, quote!(__item), SET_ORDER, SET_DUPLICATE);
                    let order = gen::key_order(g, elem_ty);
                    let insert = quote!(if !__set.insert(__last) {
                        return ::core::result::Result::Err(#krate::Error::new(
                            #krate::ErrorKind::Custom(#SET_DUPLICATE),
                            __bit,
                        ) #inner_err);
                    });
                    quote!({
                        #len
                        let mut __set: #ty = ::core::default::Default::default();
                        let __order = #order;
                        let mut __previous: ::core::option::Option<(u64, usize, #elem_ty)> =
                            ::core::option::Option::None;
                        for #i in 0..__len {
                            let __bit = #dec::bit_position(__d);
                            let __item: #elem_ty = #value;
                            #check
                            if let ::core::option::Option::Some((__bit, #i, __last)) =
                                __previous.replace((__bit, #i, __item))
                            {
                                #insert
                            }
                        }
                        if let ::core::option::Option::Some((__bit, #i, __last)) = __previous {
                            #insert
                        }
                        __set
                    })
                }
            }
        }
        Wire::String { max_len } => quote!(#dec::read_string(__d, #max_len) #map_err?),
        Wire::Option { inner } => {
            let value = wire_decode(g, inner, path);
            quote!(if #dec::read_bool(__d) #map_err? {
                ::core::option::Option::Some(#value)
            } else {
                ::core::option::Option::None
            })
        }
        Wire::Map {
            ty,
            max_len,
            key_ty,
            key,
            value_ty,
            value,
        } => {
            let (inner, i) = path.index();
            let inner_err = inner.field("key").apply(g);
            let k = traced(
                g,
                quote!(Field("key")),
                wire_decode(g, key, &inner.field("key")),
            );
            let v = traced(
                g,
                quote!(Field("value")),
                wire_decode(g, value, &inner.field("value")),
            );
            let entry = traced(
                g,
                quote!(Index(#i)),
                quote!({
                    let __bit = #dec::bit_position(__d);
                    let __key: #key_ty = #k;
                    let __value: #value_ty = #v;
                    (__bit, __key, __value)
                }),
            );
            if is_btree(ty) {
                // An ordered map is written in key order: any other order would decode
                // to a value that encodes to other bits.
                return quote!({
                    let __len = #dec::read_len(__d, #max_len) #map_err?;
                    let mut __map: #ty = ::core::default::Default::default();
                    for #i in 0..__len {
                        let (__bit, __key, __value) = #entry;
                        if __map.last_key_value().is_some_and(|(__last, _)| __key < *__last) {
                            return ::core::result::Result::Err(#krate::Error::new(
                                #krate::ErrorKind::Custom(#MAP_ORDER),
                                __bit,
                            ) #inner_err);
                        }
                        if __map.insert(__key, __value).is_some() {
                            return ::core::result::Result::Err(#krate::Error::new(
                                #krate::ErrorKind::Custom(#MAP_DUPLICATE),
                                __bit,
                            ) #inner_err);
                        }
                    }
                    __map
                });
            }
            // A hash map is written in increasing key order too, and refused in any other
            // order with the same errors at the same bits as a `BTreeMap`. It has no last
            // key to compare with: the entry before waits aside (with its bit and index)
            // until the next one is checked.
            let check = previous_check(
                g,
                &inner.field("key"),
                quote!(__key),
                MAP_ORDER,
                MAP_DUPLICATE,
            );
            let order = gen::key_order(g, key_ty);
            let insert = quote!(if __map.insert(__last, __last_value).is_some() {
                return ::core::result::Result::Err(#krate::Error::new(
                    #krate::ErrorKind::Custom(#MAP_DUPLICATE),
                    __bit,
                ) #inner_err);
            });
            quote!({
                let __len = #dec::read_len(__d, #max_len) #map_err?;
                let mut __map: #ty = ::core::default::Default::default();
                let __order = #order;
                let mut __previous: ::core::option::Option<(u64, usize, #key_ty, #value_ty)> =
                    ::core::option::Option::None;
                for #i in 0..__len {
                    let (__bit, __key, __value) = #entry;
                    #check
                    if let ::core::option::Option::Some((__bit, #i, __last, __last_value)) =
                        __previous.replace((__bit, #i, __key, __value))
                    {
                        #insert
                    }
                }
                if let ::core::option::Option::Some((__bit, #i, __last, __last_value)) = __previous {
                    #insert
                }
                __map
            })
        }
        Wire::With {
            ty,
            path: func,
            max_bits,
        } => quote!({
            let __start = #dec::bit_position(__d);
            let mut __value: #ty = ::core::default::Default::default();
            #func(&mut __NetserRead(&mut *__d), &mut __value) #map_err?;
            if #dec::bit_position(__d) - __start > (#max_bits) as u64 {
                return ::core::result::Result::Err(#krate::Error::new(
                    #krate::ErrorKind::Custom("a `with` function read more than its `max_bits`"),
                    __start,
                ) #apply);
            }
            __value
        }),
    }
}

const MAP_ORDER: &str = "map keys not in increasing order";
const MAP_DUPLICATE: &str = "duplicate key in a map";
const SET_ORDER: &str = "set elements not in increasing order";
const SET_DUPLICATE: &str = "duplicate element in a set";

/// A hash map's (set's) check of the key (element) just read, `item`, against the one
/// before, waiting in `__previous` as its third member, in the order `__order`: below it
/// is out of order, equal to it a duplicate, at the item's `__bit` with `path`.
fn previous_check(
    g: &Gen,
    path: &ErrPath,
    item: TokenStream,
    order: &str,
    duplicate: &str,
) -> TokenStream {
    let krate = &g.krate;
    let err = path.apply(g);
    quote! {
        if let ::core::option::Option::Some(__previous) = &__previous {
            let __refused = match __order(&#item, &__previous.2) {
                ::core::cmp::Ordering::Less => ::core::option::Option::Some(#order),
                ::core::cmp::Ordering::Equal => ::core::option::Option::Some(#duplicate),
                ::core::cmp::Ordering::Greater => ::core::option::Option::None,
            };
            if let ::core::option::Option::Some(__kind) = __refused {
                return ::core::result::Result::Err(#krate::Error::new(
                    #krate::ErrorKind::Custom(__kind),
                    __bit,
                ) #err);
            }
        }
    }
}

fn traced(g: &Gen, segment: TokenStream, value: TokenStream) -> TokenStream {
    let krate = &g.krate;
    let dec = quote!(#krate::Decoder);
    quote!({
        #krate::__private::Tracer::enter(#dec::tracer(__d), #krate::__private::Segment::#segment);
        let __v = #value;
        #krate::__private::Tracer::exit(#dec::tracer(__d));
        __v
    })
}

/// A placeholder of the wire's type, overwritten before anyone sees it; `None` for a
/// type the derive knows nothing about.
fn fallback(wire: &Wire) -> Option<TokenStream> {
    Some(match wire {
        Wire::Value(ty) => match shape(ty) {
            Shape::Int(_) => quote!(0),
            Shape::Float(_) => quote!(0.0),
            Shape::Bool => quote!(false),
            Shape::Option(_) => quote!(::core::option::Option::None),
            _ => return None,
        },
        Wire::IntRange { .. } | Wire::IntBits { .. } => quote!(0),
        Wire::Quantize { .. } => quote!(0.0),
        Wire::Quat { glam: None, .. } => quote!([0.0; 4]),
        Wire::Quat { glam: Some(ty), .. } => quote!(<#ty>::from_array([0.0, 0.0, 0.0, 1.0])),
        Wire::GlamVec { ty, dims, .. } => quote!(<#ty>::from_array([0.0; #dims])),
        Wire::Array { elem, .. } => {
            let inner = fallback(elem)?;
            quote!(::core::array::from_fn(|_| #inner))
        }
        Wire::Option { .. } => quote!(::core::option::Option::None),
        Wire::Seq { .. } | Wire::String { .. } | Wire::Map { .. } => {
            quote!(::core::default::Default::default())
        }
        Wire::With { .. } => return None,
    })
}
