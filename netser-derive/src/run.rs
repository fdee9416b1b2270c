//! Fixed-width runs: consecutive fields whose every bit count is a compile-time
//! constant (bools, ranged and bit-counted integers, quantized `f32`s, quaternions of
//! up to 20 bits per component, raw floats, and arrays and glam vectors of them).
//!
//! For a stream without a tracer ([`netser::Encoder::PACKS_RUNS`]), a run is written
//! after one room check as a few packed 64-bit writes, and read after one check of the
//! bits remaining as a few 64-bit reads; every value is still checked, each at the bit
//! where its field starts, so errors name the same field and bit as field by field.
//! When the room is short, or a tracer listens, the run goes field by field, so a
//! short buffer reports the very field that did not fit.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Type;

use crate::gen::{ErrPath, Gen};
use crate::internals::ast::{shape, FloatTy, IntTy, Shape};
use crate::internals::check::lit_int;
use crate::internals::wire::Wire;

/// Most values one run packs: longer runs are split (the packing unrolls).
pub const MAX_SLOTS: usize = 32;

/// A value of constant width.
#[derive(Clone)]
pub enum Leaf<'w> {
    Bool,
    F32,
    F64,
    /// An integer in `min..=max` (plain integers are their type's full range).
    Int {
        ty: IntTy,
        min: TokenStream,
        max: TokenStream,
    },
    /// An unsigned integer in `bits` bits.
    Bits {
        ty: IntTy,
        bits: &'w TokenStream,
    },
    /// A quantized `f32`.
    Quantize {
        min: &'w TokenStream,
        max: &'w TokenStream,
        res: &'w TokenStream,
        clamp: bool,
    },
    /// A nested type through its own impl, packable when its `PACKED_BITS` is non-zero
    /// (known only when the parent is compiled: the run checks it).
    Nested(&'w Type),
    /// A smallest-three quaternion with a literal bit count of at most 20.
    Quat {
        bits: &'w TokenStream,
        glam: Option<&'w Type>,
    },
}

/// How a field holds its leaves.
#[derive(Clone)]
pub enum Layout<'w> {
    /// The field is one leaf.
    Whole,
    /// `[T; n]`, element by element.
    Array(usize),
    /// glam's `Vec2`/`Vec3`, component by component.
    Glam { ty: &'w Type, dims: usize },
}

/// A field of constant width.
#[derive(Clone)]
pub struct Fixed<'w> {
    /// Its leaf (each element's, for arrays and vectors).
    pub leaf: Leaf<'w>,
    /// The leaf's wire form, for its width.
    pub leaf_wire: &'w Wire,
    /// How the field holds its leaves.
    pub layout: Layout<'w>,
}

impl<'w> Fixed<'w> {
    /// The nested type, when the leaf is one.
    pub fn nested(&self) -> Option<&'w Type> {
        match self.leaf {
            Leaf::Nested(ty) => Some(ty),
            _ => None,
        }
    }

    /// Values the field packs.
    pub fn slots(&self) -> usize {
        match self.layout {
            Layout::Whole => 1,
            Layout::Array(n) => n,
            Layout::Glam { dims, .. } => dims,
        }
    }
}

fn leaf(wire: &Wire) -> Option<Leaf<'_>> {
    Some(match wire {
        Wire::Value(ty) => match shape(ty) {
            Shape::Bool => Leaf::Bool,
            Shape::Float(FloatTy::F32) => Leaf::F32,
            Shape::Float(FloatTy::F64) => Leaf::F64,
            Shape::Int(int) if int.width() <= 64 => {
                let t = syn::Ident::new(int.name(), proc_macro2::Span::call_site());
                Leaf::Int {
                    ty: int,
                    min: quote!(#t::MIN),
                    max: quote!(#t::MAX),
                }
            }
            Shape::Other => Leaf::Nested(ty),
            _ => return None,
        },
        Wire::IntRange { ty, min, max, .. } if ty.width() <= 64 => Leaf::Int {
            ty: *ty,
            min: min.clone(),
            max: max.clone(),
        },
        Wire::IntBits { ty, bits } if ty.width() <= 64 => Leaf::Bits { ty: *ty, bits },
        Wire::Quantize {
            float: FloatTy::F32,
            min,
            max,
            res,
            clamp,
        } => Leaf::Quantize {
            min,
            max,
            res,
            clamp: *clamp,
        },
        Wire::Quat { bits, glam } => {
            let lit = syn::parse2::<syn::Expr>(bits.clone())
                .ok()
                .and_then(|e| lit_int(&e));
            // A constant the derive hoisted is checked to be in 2..=20 where it is
            // defined (a build error otherwise), as a literal is here.
            let hoisted = crate::hoist::is_hoisted(bits);
            if !(matches!(lit, Some(2..=20)) || hoisted) {
                return None;
            }
            Leaf::Quat {
                bits,
                glam: glam.as_ref(),
            }
        }
        _ => return None,
    })
}

/// The field's constant-width form, if it has one.
pub fn fixed(wire: &Wire) -> Option<Fixed<'_>> {
    match wire {
        Wire::Array { len, elem, .. } => {
            let n = usize::try_from(lit_int(len)?).ok()?;
            if n == 0 || n > MAX_SLOTS {
                return None;
            }
            Some(Fixed {
                leaf: leaf(elem)?,
                leaf_wire: elem,
                layout: Layout::Array(n),
            })
        }
        Wire::GlamVec { ty, dims, elem } => Some(Fixed {
            leaf: leaf(elem)?,
            leaf_wire: elem,
            layout: Layout::Glam { ty, dims: *dims },
        }),
        _ => Some(Fixed {
            leaf: leaf(wire)?,
            leaf_wire: wire,
            layout: Layout::Whole,
        }),
    }
}

const NAMES: [&str; 3] = ["x", "y", "z"];

/// One packed value: how to reach it and where its errors point.
pub struct Slot {
    /// Statements binding the index variable its error path names (for elements).
    pub bind: TokenStream,
    /// The error path.
    pub path: ErrPath,
}

/// The slots of a field, with `path` its error path.
pub fn slots(fixed: &Fixed<'_>, path: &ErrPath) -> Vec<Slot> {
    match fixed.layout {
        Layout::Whole => vec![Slot {
            bind: TokenStream::new(),
            path: path.clone(),
        }],
        Layout::Array(n) => {
            let (inner, i) = path.index();
            (0..n)
                .map(|k| Slot {
                    bind: quote!(let #i: usize = #k;),
                    path: inner.clone(),
                })
                .collect()
        }
        Layout::Glam { dims, .. } => (0..dims)
            .map(|k| Slot {
                bind: TokenStream::new(),
                path: path.field(NAMES[k]),
            })
            .collect(),
    }
}

/// The leaf's width in bits, a `u32` constant.
pub fn width(g: &Gen, fixed: &Fixed<'_>) -> TokenStream {
    if let Some(ty) = fixed.nested() {
        let krate = &g.krate;
        return quote!(const { <#ty as #krate::NetSerialize>::PACKED_BITS });
    }
    let (_, max) = crate::bounds::wire_bits(g, fixed.leaf_wire);
    quote!(const { (#max) as u32 })
}

fn q_const(g: &Gen, leaf: &Leaf<'_>) -> TokenStream {
    match leaf {
        Leaf::Quantize {
            min,
            max,
            res,
            clamp,
        } => crate::gen::quantize_const(g, min, max, res, *clamp),
        _ => TokenStream::new(),
    }
}

/// An expression of type `Result<u64>`: the wire integer of `v` (a `&T`), with the
/// checks of its primitive, errors at `bit`.
pub fn encode_leaf(g: &Gen, leaf: &Leaf<'_>, v: TokenStream, bit: TokenStream) -> TokenStream {
    let krate = &g.krate;
    let run = quote!(#krate::__private::run);
    let ok = |e: TokenStream| quote!(::core::result::Result::<u64, #krate::Error>::Ok(#e));
    match leaf {
        Leaf::Bool => ok(quote!(*#v as u64)),
        Leaf::F32 => ok(quote!(f32::to_bits(*#v) as u64)),
        Leaf::F64 => ok(quote!(f64::to_bits(*#v))),
        Leaf::Int { ty, min, max } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#run::int::<#t>(*#v, #min, #max, #bit))
        }
        Leaf::Bits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#run::uint_bits::<#t>(*#v, #bits, #bit))
        }
        Leaf::Quantize { .. } => {
            let q = q_const(g, leaf);
            quote!({ #q #run::quantize(*#v, &__Q, #bit) })
        }
        Leaf::Nested(ty) => quote!(<#ty as #krate::NetSerialize>::pack_fixed(#v, #bit)),
        Leaf::Quat { bits, glam } => {
            let array = match glam {
                Some(_) => quote!(#v.to_array()),
                None => quote!(*#v),
            };
            quote!({
                const __QF: #krate::__private::QuatFormat = #krate::__private::QuatFormat::new(#bits);
                #run::quat(#array, &__QF, #bit)
            })
        }
    }
}

/// An expression of type `Result<T>`: the value of the wire integer `raw`, with the
/// checks of its primitive, errors at `bit`.
pub fn decode_leaf(g: &Gen, leaf: &Leaf<'_>, raw: TokenStream, bit: TokenStream) -> TokenStream {
    let krate = &g.krate;
    let run = quote!(#krate::__private::run);
    let ok = |e: TokenStream| quote!(#krate::Result::Ok(#e));
    match leaf {
        Leaf::Bool => ok(quote!(#raw != 0)),
        Leaf::F32 => ok(quote!(f32::from_bits(#raw as u32))),
        Leaf::F64 => ok(quote!(f64::from_bits(#raw))),
        Leaf::Int { ty, min, max } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#run::int_from::<#t>(#raw, #min, #max, #bit))
        }
        Leaf::Bits { ty, bits } => {
            let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
            quote!(#run::uint_bits_from::<#t>(#raw, #bits, #bit))
        }
        Leaf::Quantize { .. } => {
            let q = q_const(g, leaf);
            quote!({ #q #run::dequantize(#raw, &__Q, #bit) })
        }
        // Decode keeps nested types out of its runs (see `decode::fields`), so this is
        // never generated; an error, not a panic, all the same.
        Leaf::Nested(_) => quote!(#krate::Result::Err(#krate::Error::new(
            #krate::ErrorKind::Custom("a nested type in a packed read"),
            #bit,
        ))),
        Leaf::Quat { bits, glam } => {
            let read = quote!({
                const __QF: #krate::__private::QuatFormat = #krate::__private::QuatFormat::new(#bits);
                #run::quat_from(#raw, &__QF, #bit)
            });
            match glam {
                Some(ty) => quote!(#read.map(<#ty>::from_array)),
                None => read,
            }
        }
    }
}

/// A field of a run: its binding (encode) or local (decode), type, and form.
#[derive(Clone)]
pub struct RunField<'w> {
    /// `&T` binding (encode).
    pub binding: syn::Ident,
    /// The field's type.
    pub ty: &'w Type,
    /// Its error path.
    pub path: ErrPath,
    /// Its constant-width form.
    pub fixed: Fixed<'w>,
}

/// Widths (`let __w<s>`) and offsets (`let __o<s>`) of every slot, and the run's total.
fn layout(g: &Gen, fields: &[RunField<'_>]) -> (TokenStream, Vec<syn::Ident>, Vec<syn::Ident>) {
    let mut out = quote!(let __o0: u64 = 0;);
    let mut widths = Vec::new();
    let mut offsets = Vec::new();
    let mut s = 0usize;
    for f in fields {
        let w = width(g, &f.fixed);
        for _ in 0..f.fixed.slots() {
            let wi = format_ident!("__w{}", s);
            let oi = format_ident!("__o{}", s);
            let next = format_ident!("__o{}", s + 1);
            out.extend(quote! {
                let #wi: u32 = #w;
                let #next: u64 = #oi + #wi as u64;
            });
            widths.push(wi);
            offsets.push(oi);
            s += 1;
        }
    }
    offsets.push(format_ident!("__o{}", s));
    (out, widths, offsets)
}

/// `&& <T>::PACKED_BITS != 0` for each nested type of the run: constants, so the
/// packed path of a run whose nested type does not pack compiles away.
fn nested_pack(g: &Gen, fields: &[RunField<'_>]) -> TokenStream {
    let krate = &g.krate;
    fields
        .iter()
        .filter_map(|f| f.fixed.nested())
        .map(|ty| quote!(&& <#ty as #krate::NetSerialize>::PACKED_BITS != 0))
        .collect()
}

/// Statements computing `__v<s>: u64`, every slot's wire integer, errors at `__bit`
/// plus the slot's offset; returns them with the `(value, width)` pairs.
fn encode_values(
    g: &Gen,
    fields: &[RunField<'_>],
    offsets: &[syn::Ident],
) -> (TokenStream, Vec<(syn::Ident, usize)>) {
    let mut values = TokenStream::new();
    let mut out = Vec::new();
    let mut s = 0usize;
    for f in fields {
        let binding = &f.binding;
        let (prelude, access): (TokenStream, Box<dyn Fn(usize) -> TokenStream>) =
            match f.fixed.layout {
                Layout::Whole => (TokenStream::new(), Box::new(move |_| quote!(#binding))),
                Layout::Array(_) => (
                    TokenStream::new(),
                    Box::new(move |k| quote!((&#binding[#k]))),
                ),
                Layout::Glam { .. } => {
                    let c = format_ident!("__c{}", s);
                    (
                        quote!(let #c = #binding.to_array();),
                        Box::new(move |k| quote!((&#c[#k]))),
                    )
                }
            };
        values.extend(prelude);
        for (k, slot) in slots(&f.fixed, &f.path).into_iter().enumerate() {
            let v = format_ident!("__v{}", s);
            let bit = &offsets[s];
            let conv = encode_leaf(g, &f.fixed.leaf, access(k), quote!(__bit + #bit));
            let map_err = slot.path.map_err(g);
            let bind = slot.bind;
            values.extend(quote!(let #v: u64 = { #bind #conv #map_err? };));
            out.push((v, s));
            s += 1;
        }
    }
    (values, out)
}

/// An expression per field: its value from `__raw[s]` (or `raw(s)`), checked, errors at
/// `__bit` plus the slot's offset.
fn decode_values(
    g: &Gen,
    fields: &[RunField<'_>],
    offsets: &[syn::Ident],
    raw: &dyn Fn(usize) -> TokenStream,
) -> Vec<TokenStream> {
    let mut values = Vec::new();
    let mut s = 0usize;
    for f in fields {
        let mut parts = Vec::new();
        for slot in slots(&f.fixed, &f.path) {
            let bit = &offsets[s];
            let conv = decode_leaf(g, &f.fixed.leaf, raw(s), quote!(__bit + #bit));
            let map_err = slot.path.map_err(g);
            let bind = slot.bind;
            parts.push(quote!({ #bind #conv #map_err? }));
            s += 1;
        }
        values.push(match f.fixed.layout {
            Layout::Whole => parts.pop().expect("one slot"),
            Layout::Array(_) => quote!([#(#parts),*]),
            Layout::Glam { ty, .. } => quote!(<#ty>::from_array([#(#parts),*])),
        });
    }
    values
}

/// Statements writing a run: packed when the stream allows it and the room is there,
/// else `slow` (the fields one by one).
pub fn encode(g: &Gen, fields: &[RunField<'_>], slow: TokenStream) -> TokenStream {
    let krate = &g.krate;
    let enc = quote!(#krate::Encoder);
    let (layout, widths, offsets) = layout(g, fields);
    let total = offsets.last().expect("a run has slots");
    let (values, slots) = encode_values(g, fields, &offsets);
    let pairs = slots.iter().map(|(v, s)| {
        let w = &widths[*s];
        quote!((#v, #w))
    });
    let nested = nested_pack(g, fields);
    let first_err = fields[0].path.map_err(g);
    quote!({
        #layout
        if <__E as #enc>::PACKS_RUNS #nested && #enc::bits_available(__e) >= #total {
            let __bit = #enc::bit_position(__e);
            #values
            #krate::__private::run::put(__e, [#(#pairs),*]) #first_err?;
        } else {
            #slow
        }
    })
}

/// An expression reading a run into a tuple of its fields' values (the value itself
/// for a run of one field): packed when the stream allows it and the bits are there,
/// else `slow` (a tuple of the fields' reads, in order).
pub fn decode(g: &Gen, fields: &[RunField<'_>], slow: TokenStream) -> TokenStream {
    let krate = &g.krate;
    let dec = quote!(#krate::Decoder);
    let (layout, widths, offsets) = layout(g, fields);
    let total = offsets.last().expect("a run has slots");
    let mut values = decode_values(g, fields, &offsets, &|s| quote!(__raw[#s]));
    let first_err = fields[0].path.map_err(g);
    let n = widths.len();
    let fast = if values.len() == 1 {
        values.pop().expect("one field")
    } else {
        quote!((#(#values),*))
    };
    let nested = nested_pack(g, fields);
    quote!({
        #layout
        if <__D as #dec>::PACKS_RUNS #nested && #dec::bits_remaining(__d) >= #total {
            let __bit = #dec::bit_position(__d);
            let __raw: [u64; #n] = #krate::__private::run::get(__d, [#(#widths),*]) #first_err?;
            #fast
        } else {
            #slow
        }
    })
}

/// `PACKED_BITS` of a struct whose fields all form one run: its width when it is
/// 1..=64 bits and its nested types pack, else 0.
pub fn packed_bits(g: &Gen, fields: &[RunField<'_>]) -> TokenStream {
    let (layout, _, offsets) = layout(g, fields);
    let total = offsets.last().expect("a run has slots");
    let nested = nested_pack(g, fields);
    quote!({
        #layout
        if true #nested && #total >= 1 && #total <= 64 {
            #total as u32
        } else {
            0
        }
    })
}

/// The body of `pack_fixed` (fields bound as references, `__bit` the start): every
/// value checked, then shifted into one integer.
pub fn pack(g: &Gen, fields: &[RunField<'_>]) -> TokenStream {
    let krate = &g.krate;
    let (layout, _, offsets) = layout(g, fields);
    let (values, slots) = encode_values(g, fields, &offsets);
    let parts = slots.iter().map(|(v, s)| {
        let o = &offsets[*s];
        quote!(| #v.checked_shl(#o as u32).unwrap_or(0))
    });
    quote! {
        #layout
        #values
        #krate::Result::Ok(0u64 #(#parts)*)
    }
}
