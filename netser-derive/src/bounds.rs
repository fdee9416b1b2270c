//! `MIN_BITS` / `MAX_BITS`: the fewest and most bits a value can take, and
//! `MAX_HEAP_BYTES`, the most memory decoding it allocates, as `const` expressions built
//! from the same wire forms as encode and decode.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::gen::Gen;
use crate::internals::ast::{CollectionKind, IntTy};
use crate::internals::wire::Wire;
use crate::plan::FieldPlan;

/// `(min, max)` bits of a list of fields, in order.
pub fn fields(g: &Gen, plans: &[FieldPlan<'_>]) -> (TokenStream, TokenStream) {
    let mut min = quote!(0u64);
    let mut max = quote!(0u64);
    for plan in plans {
        let Some(wire) = &plan.wire else { continue };
        let attrs = &plan.field.attrs;
        let (mut lo, mut hi) = wire_bits(g, wire);
        if attrs.check.is_some() {
            lo = quote!((#lo).saturating_add(32));
            hi = quote!((#hi).saturating_add(32));
        }
        if attrs.align.is_some() {
            hi = quote!((#hi).saturating_add(7));
        }
        if attrs.when.is_some() {
            lo = quote!(0u64);
        }
        min = quote!((#min).saturating_add(#lo));
        max = quote!((#max).saturating_add(#hi));
    }
    (min, max)
}

/// `bits_required(0, n)` for a `usize` bound, as a `u64` const expression.
fn len_bits(max_len: &TokenStream) -> TokenStream {
    quote!({
        let __n: usize = #max_len;
        (usize::BITS - __n.leading_zeros()) as u64
    })
}

/// The bits of `min..=max` of an integer type, computed as the runtime does: the offset
/// in the unsigned domain of the type's width.
fn range_bits(ty: IntTy, min: &TokenStream, max: &TokenStream) -> TokenStream {
    let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
    let u = syn::Ident::new(
        match ty {
            IntTy::I8 => "u8",
            IntTy::I16 => "u16",
            IntTy::I32 => "u32",
            IntTy::I64 => "u64",
            IntTy::I128 => "u128",
            IntTy::Isize => "usize",
            other => other.name(),
        },
        proc_macro2::Span::call_site(),
    );
    quote!({
        let __lo: #t = #min;
        let __hi: #t = #max;
        if __hi <= __lo {
            0u64
        } else {
            (128 - (__hi.wrapping_sub(__lo) as #u as u128).leading_zeros()) as u64
        }
    })
}

/// `(min, max)` bits of one value.
pub fn wire_bits(g: &Gen, wire: &Wire) -> (TokenStream, TokenStream) {
    let krate = &g.krate;
    let ns = quote!(#krate::NetSerialize);
    match wire {
        Wire::Value(ty) => (
            quote!(<#ty as #ns>::MIN_BITS),
            quote!(<#ty as #ns>::MAX_BITS),
        ),
        Wire::IntRange { ty, min, max, .. } => {
            let b = range_bits(*ty, min, max);
            (b.clone(), b)
        }
        Wire::IntBits { bits, .. } => {
            let b = quote!(((#bits) as u64));
            (b.clone(), b)
        }
        Wire::Quantize { min, max, res, .. } => {
            let b = quote!((#krate::Quantize::new(#min, #max, #res).bits() as u64));
            (b.clone(), b)
        }
        Wire::Quat { bits, .. } => {
            let b = quote!(#krate::__private::quat_bits(#bits));
            (b.clone(), b)
        }
        Wire::GlamVec { dims, elem, .. } => {
            let (lo, hi) = wire_bits(g, elem);
            let n = *dims as u64;
            (
                quote!((#lo).saturating_mul(#n)),
                quote!((#hi).saturating_mul(#n)),
            )
        }
        Wire::Array { len, elem, .. } => {
            let (lo, hi) = wire_bits(g, elem);
            (
                quote!((#lo).saturating_mul((#len) as u64)),
                quote!((#hi).saturating_mul((#len) as u64)),
            )
        }
        Wire::Seq { max_len, elem, .. } => {
            let lb = len_bits(max_len);
            let (_, hi) = wire_bits(g, elem);
            (
                lb.clone(),
                quote!((#lb).saturating_add((#hi).saturating_mul((#max_len) as u64))),
            )
        }
        Wire::String { max_len } => {
            // Length, then padding to a byte boundary (up to 7 bits), then the bytes.
            let lb = len_bits(max_len);
            (
                lb.clone(),
                quote!((#lb).saturating_add(7).saturating_add(((#max_len) as u64).saturating_mul(8))),
            )
        }
        Wire::Option { inner } => {
            let (_, hi) = wire_bits(g, inner);
            (quote!(1u64), quote!((#hi).saturating_add(1)))
        }
        Wire::Map {
            max_len,
            key,
            value,
            ..
        } => {
            let lb = len_bits(max_len);
            let (_, khi) = wire_bits(g, key);
            let (_, vhi) = wire_bits(g, value);
            (
                lb.clone(),
                quote!((#lb).saturating_add((#khi).saturating_add(#vhi).saturating_mul((#max_len) as u64))),
            )
        }
        Wire::With { max_bits, .. } => (quote!(0u64), quote!(((#max_bits) as u64))),
    }
}

/// The smaller of two `u64` const expressions.
pub fn const_min(a: TokenStream, b: TokenStream) -> TokenStream {
    quote!({
        let __a: u64 = #a;
        let __b: u64 = #b;
        if __a < __b { __a } else { __b }
    })
}

/// The larger of two `u64` const expressions.
pub fn const_max(a: TokenStream, b: TokenStream) -> TokenStream {
    quote!({
        let __a: u64 = #a;
        let __b: u64 = #b;
        if __a > __b { __a } else { __b }
    })
}

/// The `max_bytes` budget check, as the body of an associated `const ()`: a compile
/// error naming the type, its worst case and the budget when the worst case is over.
pub fn max_bytes_check(g: &Gen, limit: &TokenStream, span: proc_macro2::Span) -> TokenStream {
    let krate = &g.krate;
    let prefix = format!("`{}` can take up to ", g.type_name);
    let prefix = syn::LitByteStr::new(prefix.as_bytes(), span);
    quote::quote_spanned! {span=>
        {
            const fn __put(buf: &mut [u8; 320], mut at: usize, s: &[u8]) -> usize {
                let mut i = 0;
                while i < s.len() && at < buf.len() {
                    buf[at] = s[i];
                    at += 1;
                    i += 1;
                }
                at
            }
            const fn __put_u64(buf: &mut [u8; 320], at: usize, mut v: u64) -> usize {
                let mut digits = [0u8; 20];
                let mut n = 0;
                loop {
                    digits[n] = b'0' + (v % 10) as u8;
                    n += 1;
                    v /= 10;
                    if v == 0 {
                        break;
                    }
                }
                let mut out = [0u8; 20];
                let mut i = 0;
                while i < n {
                    out[i] = digits[n - 1 - i];
                    i += 1;
                }
                __put(buf, at, out.split_at(n).0)
            }
            let __max_bits: u64 = <Self as #krate::NetSerialize>::MAX_BITS;
            let __limit: u64 = (#limit) as u64;
            if __max_bits > __limit.saturating_mul(8) {
                let mut buf = [0u8; 320];
                let mut at = __put(&mut buf, 0, #prefix);
                at = __put_u64(&mut buf, at, __max_bits.div_ceil(8));
                at = __put(&mut buf, at, b" bytes (");
                at = __put_u64(&mut buf, at, __max_bits);
                at = __put(&mut buf, at, b" bits) on the wire, more than its `max_bytes = ");
                at = __put_u64(&mut buf, at, __limit);
                at = __put(&mut buf, at, b"`; lower a `max_len`, range or quantization, or raise `max_bytes`");
                match ::core::str::from_utf8(buf.split_at(at).0) {
                    ::core::result::Result::Ok(msg) => ::core::panic!("{}", msg),
                    ::core::result::Result::Err(_) => ::core::panic!("max_bytes exceeded"),
                }
            }
        }
    }
}

/// `MAX_HEAP_BYTES` of a list of fields: the sum of each sent field's heap figure.
/// Collections of zero-bit elements (or map entries) are a compile error here: their
/// length alone would decide how many values are built, so a few bytes of input could
/// build `max_len` of them.
pub fn heap_fields(g: &Gen, plans: &[FieldPlan<'_>]) -> TokenStream {
    let mut sum = quote!(0u64);
    for plan in plans {
        let Some(wire) = &plan.wire else { continue };
        let span = plan.field.original.ty.span();
        let message = format!(
            "`{}.{}` is a collection of elements that take no bits: its length alone would \
             make the decoder build up to `max_len` of them from a few bytes; give the \
             elements a wire form of at least one bit, or send the count as an integer",
            g.type_name, plan.field.name
        );
        let h = heap(g, wire, &message, span);
        sum = quote!((#sum).saturating_add(#h));
    }
    sum
}

/// The most heap bytes decoding one value of this wire form allocates at once (and so
/// the most the decoded value owns).
fn heap(g: &Gen, wire: &Wire, zero_bits: &str, span: proc_macro2::Span) -> TokenStream {
    let krate = &g.krate;
    let ns = quote!(#krate::NetSerialize);
    let size = |ty: &syn::Type| quote!((::core::mem::size_of::<#ty>() as u64));
    let refuse_zero_bits = |elem_max_bits: TokenStream| {
        quote_spanned! {span=>
            if #elem_max_bits == 0 {
                ::core::panic!("{}", #zero_bits);
            }
        }
    };
    match wire {
        Wire::Value(ty) => quote!(<#ty as #ns>::MAX_HEAP_BYTES),
        Wire::IntRange { .. }
        | Wire::IntBits { .. }
        | Wire::Quantize { .. }
        | Wire::Quat { .. }
        | Wire::GlamVec { .. } => quote!(0u64),
        // `with` functions decode into `Default::default()`; what they allocate is
        // theirs to bound (documented on the attribute).
        Wire::With { .. } => quote!(0u64),
        Wire::String { max_len } => quote!(((#max_len) as u64)),
        Wire::Option { inner } => heap(g, inner, zero_bits, span),
        // Arrays are built in a vector of exactly `len`, then moved out.
        Wire::Array { len, elem_ty, elem } => {
            let h = heap(g, elem, zero_bits, span);
            let s = size(elem_ty);
            quote!(((#len) as u64).saturating_mul((#s).saturating_add(#h)))
        }
        Wire::Seq {
            kind,
            max_len,
            elem_ty,
            elem,
            ..
        } => {
            let check = refuse_zero_bits(wire_bits(g, elem).1);
            let h = heap(g, elem, zero_bits, span);
            let s = size(elem_ty);
            let total = match kind {
                // Reserved once, never more than the length read: no amortized growth.
                CollectionKind::Vec | CollectionKind::BoxSlice => {
                    quote!(((#max_len) as u64).saturating_mul((#s).saturating_add(#h)))
                }
                CollectionKind::Set => quote!(
                    #krate::__private::table_heap_bytes((#max_len) as u64, #s)
                        .saturating_add(((#max_len) as u64).saturating_mul(#h))
                ),
            };
            quote!({
                #check
                #total
            })
        }
        Wire::Map {
            max_len,
            key_ty,
            key,
            value_ty,
            value,
            ..
        } => {
            let (_, kb) = wire_bits(g, key);
            let (_, vb) = wire_bits(g, value);
            let check = refuse_zero_bits(quote!((#kb).saturating_add(#vb)));
            let kh = heap(g, key, zero_bits, span);
            let vh = heap(g, value, zero_bits, span);
            let entry = quote!(::core::mem::size_of::<(#key_ty, #value_ty)>() as u64);
            quote!({
                #check
                #krate::__private::table_heap_bytes((#max_len) as u64, #entry)
                    .saturating_add(((#max_len) as u64).saturating_mul((#kh).saturating_add(#vh)))
            })
        }
    }
}

/// `MAX_HEAP_BYTES` of a struct (one body) or an enum (the largest variant).
pub fn heap_bodies(g: &Gen, bodies: &[crate::plan::Body<'_>]) -> TokenStream {
    let mut max = quote!(0u64);
    for body in bodies {
        max = const_max(max, heap_fields(g, &body.fields));
    }
    max
}
