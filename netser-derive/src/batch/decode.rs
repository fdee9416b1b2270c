//! The batch decode: `decode_extend` (blocks peeked, checked and converted by columns,
//! then consumed and built) and `unpack_fixed_column` for a struct packed into its
//! parents' runs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{default_expr, int_ident, Plan};
use crate::gen::Gen;
use crate::plan::run::{Layout, Leaf};

impl Plan<'_> {
    /// Slot `s`'s values from its raw column `__r<s>` (`let __v<s>`, or `let __n<s>` an
    /// iterator for a nested type, leaving with `bail` when it does not unpack).
    pub(super) fn dec_column(
        &self,
        g: &Gen,
        s: usize,
        act: &TokenStream,
        bail: &TokenStream,
    ) -> TokenStream {
        let krate = &g.krate;
        let batch = quote!(#krate::batch);
        let slot = &self.slots[s];
        let (r, v) = (format_ident!("__r{}", s), format_ident!("__v{}", s));
        match &slot.leaf {
            Leaf::Bool => quote!(let #v: [bool; __N] = ::core::array::from_fn(|__k| #r[__k] != 0);),
            Leaf::F32 => {
                quote!(let #v: [f32; __N] = ::core::array::from_fn(|__k| f32::from_bits(#r[__k] as u32));)
            }
            Leaf::F64 => {
                quote!(let #v: [f64; __N] = ::core::array::from_fn(|__k| f64::from_bits(#r[__k]));)
            }
            Leaf::Int { ty, min, max } => {
                let t = int_ident(*ty);
                quote! {
                    let mut #v: [#t; __N] = [0; __N];
                    __ok &= #batch::int_from_column::<#t, __N>(&#r, #min, #max, #act, &mut #v);
                }
            }
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                quote! {
                    let mut #v: [#t; __N] = [0; __N];
                    __ok &= #batch::bits_from_column::<#t, __N>(&#r, #bits, &mut #v);
                }
            }
            Leaf::Quantize {
                min,
                max,
                res,
                clamp,
            } => {
                let q = crate::encode::quantize_const(g, min, max, res, *clamp);
                quote! {
                    let mut #v = [0f32; __N];
                    __ok &= {
                        #q
                        __Q.dequantize_column(&#batch::narrow(&#r), #act, &mut #v)
                    };
                }
            }
            Leaf::Quat { bits, .. } => quote! {
                let mut #v = [[0f32; 4]; __N];
                __ok &= {
                    const __QF: #krate::quat::QuatFormat = #krate::quat::QuatFormat::new(#bits);
                    __QF.unpack_column(&#r, #act, &mut #v)
                };
            },
            Leaf::Nested(ty) => {
                let n = format_ident!("__n{}", s);
                quote! {
                    let ::core::option::Option::Some(#n) =
                        <#ty as #krate::NetSerialize>::unpack_fixed_column::<__N>(#r, *#act)
                    else {
                        #bail
                    };
                }
            }
        }
    }

    /// Slot `s`'s value at lane `__k` (nested: the iterator's item `__n<s>`).
    pub(super) fn lane_value(&self, s: usize) -> TokenStream {
        let slot = &self.slots[s];
        let v = format_ident!("__v{}", s);
        match &slot.leaf {
            Leaf::Nested(_) => {
                let n = format_ident!("__n{}", s);
                quote!(#n)
            }
            Leaf::Quat { glam: Some(ty), .. } => quote!(<#ty>::from_array(#v[__k])),
            _ => quote!(#v[__k]),
        }
    }

    /// `Self { member: value, ... }` at lane `__k`.
    pub(super) fn construct(&self) -> TokenStream {
        let members = self.fields.iter().map(|f| &f.field.member);
        let values = self.fields.iter().map(|f| {
            let parts: Vec<_> = f.slots.clone().map(|s| self.lane_value(s)).collect();
            let value = match f.fixed.layout {
                Layout::Whole => parts.into_iter().next().unwrap_or_default(),
                Layout::Array(_) => quote!([#(#parts),*]),
                Layout::Glam { ty, .. } => quote!(<#ty>::from_array([#(#parts),*])),
            };
            match f.gate {
                Some(j) => {
                    let gi = format_ident!("__g{}", j);
                    let default = default_expr(f.field);
                    quote!(if #gi[__k] { #value } else { #default })
                }
                None => value,
            }
        });
        quote!(Self { #(#members: #values),* })
    }

    /// `(iterator, pattern)`: `0..len` zipped with every nested slot's iterator.
    pub(super) fn lanes(&self, len: TokenStream) -> (TokenStream, TokenStream) {
        let mut iter = quote!((0..#len));
        let mut pat = quote!(__k);
        for (s, slot) in self.slots.iter().enumerate() {
            if let Leaf::Nested(_) = slot.leaf {
                let n = format_ident!("__n{}", s);
                iter = quote!(::core::iter::Iterator::zip(#iter, #n));
                pat = quote!((#pat, #n));
            }
        }
        (iter, pat)
    }
}

/// `unpack_fixed_column`: a column of elements from their wire bits.
pub(super) fn unpack_fixed_column(g: &Gen, plan: &Plan<'_>) -> TokenStream {
    let krate = &g.krate;
    let widths = plan.widths(g);
    let act = quote!(__act);
    let raws = (0..plan.slots.len()).map(|s| {
        let (r, o, w) = (
            format_ident!("__r{}", s),
            format_ident!("__o{}", s),
            format_ident!("__w{}", s),
        );
        quote!(let #r: [u64; __N] = ::core::array::from_fn(|__k| {
            __raw[__k].checked_shr(#o as u32).unwrap_or(0) & #krate::bits::run::mask(#w)
        });)
    });
    let bail = quote!(return ::core::option::Option::None;);
    let values: TokenStream = (0..plan.slots.len())
        .map(|s| plan.dec_column(g, s, &act, &bail))
        .collect();
    let (iter, pat) = plan.lanes(quote!(__N));
    let value = plan.construct();
    quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline(always)]
        fn unpack_fixed_column<const __N: usize>(
            __raw: [u64; __N],
            __act: [bool; __N],
        ) -> ::core::option::Option<impl ::core::iter::Iterator<Item = Self>> {
            let __act = &__act;
            #widths
            #(#raws)*
            let mut __ok = true;
            #values
            if !__ok {
                return ::core::option::Option::None;
            }
            ::core::option::Option::Some(::core::iter::Iterator::map(#iter, move |#pat| #value))
        }
    }
}

/// The value a gate's condition sees for field `f` while the block is parsed (only
/// fields whose value is their raw bits, possibly offset: bools, integers, raw floats),
/// or `None`.
fn parse_value(g: &Gen, plan: &Plan<'_>, f: usize) -> Option<TokenStream> {
    let krate = &g.krate;
    let field = &plan.fields[f];
    if !matches!(field.fixed.layout, Layout::Whole) {
        return None;
    }
    let s = field.slots.start;
    let r = format_ident!("__r{}", s);
    let raw = quote!(#r[__k]);
    let value = match &plan.slots[s].leaf {
        Leaf::Bool => quote!((#raw != 0)),
        Leaf::F32 => quote!(f32::from_bits(#raw as u32)),
        Leaf::F64 => quote!(f64::from_bits(#raw)),
        Leaf::Int { ty, min, .. } => {
            let t = int_ident(*ty);
            quote!(<#t as #krate::RangedInt>::from_offset(#min, #raw as u128))
        }
        Leaf::Bits { ty, .. } => {
            let t = int_ident(*ty);
            quote!(<#t as #krate::RangedInt>::from_offset(0, #raw as u128))
        }
        _ => return None,
    };
    Some(match field.gate {
        Some(j) => {
            let gi = format_ident!("__g{}", j);
            let default = default_expr(field.field);
            quote!(if #gi[__k] { #value } else { #default })
        }
        None => value,
    })
}

/// `decode_extend`: blocks peeked from the input, checked and converted by columns,
/// consumed and built when all of it is good. `None` when a gate names a field whose
/// value the parse cannot see cheaply.
pub(super) fn decode_extend(g: &Gen, plan: &Plan<'_>) -> Option<TokenStream> {
    let krate = &g.krate;
    let batch = quote!(#krate::batch);
    let dec = quote!(#krate::Decoder);
    let widths = plan.widths(g);
    let nested = plan.nested_pack(g);
    let raws = (0..plan.slots.len()).map(|s| {
        let r = format_ident!("__r{}", s);
        quote!(let mut #r = [0u64; __N];)
    });
    let gates = (0..plan.gates.len()).map(|j| {
        let gi = format_ident!("__g{}", j);
        quote!(let mut #gi = [false; __N];)
    });
    let mut parse = TokenStream::new();
    // Runs of ungated slots are taken together, as the pack phase writes them.
    let take_run = |slots: &[usize]| {
        let ws = slots.iter().map(|s| format_ident!("__w{}", s));
        let rs = slots.iter().map(|s| format_ident!("__r{}", s));
        let ks = 0..slots.len();
        quote! {
            let __t = __p.take_run([#(#ws),*]);
            #(#rs[__k] = __t[#ks];)*
        }
    };
    let mut segment: Vec<usize> = Vec::new();
    for field in &plan.fields {
        if field.gate.is_none() {
            segment.extend(field.slots.clone());
            continue;
        }
        if !segment.is_empty() {
            parse.extend(take_run(&segment));
            segment.clear();
        }
        let slots: Vec<usize> = field.slots.clone().collect();
        let takes = take_run(&slots);
        match field.gate {
            None => parse.extend(takes),
            Some(j) => {
                let gate = &plan.gates[j];
                let args = gate
                    .uses
                    .iter()
                    .map(|&f| parse_value(g, plan, f).map(|v| quote!(&#v)))
                    .collect::<Option<Vec<_>>>()?;
                let (gi, reduced) = (format_ident!("__g{}", j), &gate.reduced);
                parse.extend(quote! {
                    let __on = Self::#reduced(#(#args),*);
                    #gi[__k] = __on;
                    if __on {
                        #takes
                    }
                });
            }
        }
    }
    if !segment.is_empty() {
        parse.extend(take_run(&segment));
    }
    let live = quote!(&__live);
    let bail = quote!(break '__block false;);
    let values: TokenStream = (0..plan.slots.len())
        .filter(|&s| !matches!(plan.slots[s].leaf, Leaf::Nested(_)))
        .map(|s| plan.dec_column(g, s, &plan.active(s, &live), &bail))
        .collect();
    let nested_values: TokenStream = (0..plan.slots.len())
        .filter(|&s| matches!(plan.slots[s].leaf, Leaf::Nested(_)))
        .map(|s| plan.dec_column(g, s, &plan.active(s, &live), &bail))
        .collect();
    let (iter, pat) = plan.lanes(quote!(__n));
    let value = plan.construct();
    Some(quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline]
        fn decode_extend<__D: #dec>(
            __d: &mut __D,
            __len: usize,
            __out: &mut __netser_alloc::vec::Vec<Self>,
        ) -> #krate::Result<()> {
            if !(<__D as #dec>::PACKS_RUNS #nested) {
                return #batch::decode_each(__d, 0, __len, __out);
            }
            const __N: usize = #batch::BLOCK;
            #widths
            let mut __at = 0usize;
            while __at < __len {
                let __n = ::core::cmp::min(__len - __at, __N);
                let __done = '__block: {
                    let ::core::option::Option::Some((__input, __start)) = #dec::peek_input(__d)
                    else {
                        break '__block false;
                    };
                    let mut __p = #batch::Peek::new(__input, __start);
                    let __live: [bool; __N] = #batch::live(__n);
                    #(#raws)*
                    #(#gates)*
                    for __k in 0..__N {
                        if __k == __n {
                            break;
                        }
                        #parse
                    }
                    let __bits = __p.position() - __start;
                    if __bits > #dec::bits_remaining(__d) {
                        break '__block false;
                    }
                    let mut __ok = true;
                    #values
                    if !__ok {
                        break '__block false;
                    }
                    #nested_values
                    #batch::skip(__d, __bits)?;
                    __out.extend(::core::iter::Iterator::map(#iter, move |#pat| #value));
                    true
                };
                if !__done {
                    #batch::decode_each(__d, __at, __n, __out)?;
                }
                __at += __n;
            }
            ::core::result::Result::Ok(())
        }
    })
}
