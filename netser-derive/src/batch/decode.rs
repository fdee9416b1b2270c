//! The batch decode: `decode_extend` (blocks peeked, checked and converted by columns,
//! then consumed and built) and `unpack_fixed_column` for a struct packed into its
//! parents' runs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{default_expr, int_ident, Plan};

mod pairs;
mod stretch;
use crate::gen::Gen;
use crate::internals::ast::IntTy;
use crate::run::{Layout, Leaf};

impl Plan<'_> {
    /// The type of slot `s`'s raw column `__r<s>`: its wire bits in the narrowest type
    /// that converts well (the value itself for bools and raw floats).
    pub(super) fn raw_ty(&self, s: usize) -> TokenStream {
        match &self.slots[s].leaf {
            Leaf::Bool => quote!(bool),
            Leaf::F32 => quote!(f32),
            Leaf::F64 => quote!(f64),
            Leaf::Int { ty, .. } | Leaf::Bits { ty, .. } => raw_int(*ty),
            Leaf::Quantize { .. } => quote!(u32),
            Leaf::Quat { .. } | Leaf::Nested(_) => quote!(u64),
        }
    }

    /// Slot `s`'s raw column value from its wire bits `bits` (a `u64` below `2^width`).
    pub(super) fn raw_value(&self, s: usize, bits: TokenStream) -> TokenStream {
        match &self.slots[s].leaf {
            Leaf::Bool => quote!((#bits != 0)),
            Leaf::F32 => quote!(f32::from_bits(#bits as u32)),
            Leaf::F64 => quote!(f64::from_bits(#bits)),
            Leaf::Int { ty, .. } | Leaf::Bits { ty, .. } => {
                let t = raw_int(*ty);
                quote!((#bits as #t))
            }
            Leaf::Quantize { .. } => quote!((#bits as u32)),
            Leaf::Quat { .. } | Leaf::Nested(_) => bits,
        }
    }

    /// Slot `s`'s values from its raw column `__r<s>` (`let __v<s>`, or `let __n<s>` the
    /// lane function of a nested type, leaving with `bail` when it does not unpack).
    pub(super) fn dec_column(
        &self,
        g: &Gen,
        s: usize,
        act: &TokenStream,
        bail: &TokenStream,
    ) -> TokenStream {
        let krate = &g.krate;
        let batch = quote!(#krate::__private::batch);
        let slot = &self.slots[s];
        let (r, v) = (format_ident!("__r{}", s), format_ident!("__v{}", s));
        match &slot.leaf {
            Leaf::Bool | Leaf::F32 | Leaf::F64 => quote!(let #v = #r;),
            Leaf::Int { ty, min, max } => {
                let t = int_ident(*ty);
                quote! {
                    let mut #v: [#t; __N] = [0; __N];
                    __ok &= #batch::int_from_column::<#t, _, __N>(&#r, #min, #max, #act, &mut #v);
                }
            }
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                quote! {
                    let mut #v: [#t; __N] = [0; __N];
                    __ok &= #batch::bits_from_column::<#t, _, __N>(&#r, #bits, &mut #v);
                }
            }
            Leaf::Quantize {
                min,
                max,
                res,
                clamp,
            } => {
                let q = crate::gen::quantize_const(g, min, max, res, *clamp);
                quote! {
                    let mut #v = [0f32; __N];
                    __ok &= {
                        #q
                        __Q.dequantize_column_at(__level, &#r, #act, &mut #v)
                    };
                }
            }
            Leaf::Quat { bits, .. } => quote! {
                let mut #v = [[0f32; 4]; __N];
                __ok &= {
                    const __QF: #krate::__private::QuatFormat = #krate::__private::QuatFormat::new(#bits);
                    __QF.unpack_column(&#r, #act, &mut #v)
                };
            },
            Leaf::Nested(ty) => {
                let n = format_ident!("__n{}", s);
                quote! {
                    let ::core::option::Option::Some(#n) =
                        <#ty as #krate::NetSerialize>::unpack_fixed_column::<__N>(#r, *#act, __level)
                    else {
                        #bail
                    };
                }
            }
        }
    }

    /// Slot `s`'s value at lane `__k` (nested: its lane function `__n<s>` called).
    pub(super) fn lane_value(&self, s: usize) -> TokenStream {
        let slot = &self.slots[s];
        let v = format_ident!("__v{}", s);
        match &slot.leaf {
            Leaf::Nested(_) => {
                let n = format_ident!("__n{}", s);
                quote!(#n(__k))
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
                Some(_) if column_default(f) => value,
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

    /// The value columns of gated fields whose default [`column_default`] gives by
    /// columns, set to that default where the gate is off (a vectorized select, so
    /// [`Plan::construct`] builds the element without a branch).
    pub(super) fn gated_defaults(&self) -> TokenStream {
        let mut out = TokenStream::new();
        for f in &self.fields {
            let (Some(j), true) = (f.gate, column_default(f)) else {
                continue;
            };
            let gi = format_ident!("__g{}", j);
            for s in f.slots.clone() {
                let v = format_ident!("__v{}", s);
                out.extend(quote! {
                    let mut #v = #v;
                    for __k in 0..__N {
                        // An unconditional store of a select: LLVM vectorizes it.
                        #v[__k] = if #gi[__k] {
                            #v[__k]
                        } else {
                            ::core::default::Default::default()
                        };
                    }
                });
            }
        }
        out
    }
}

/// Whether field `f`'s value when its gate is off (`Default::default()` by default) is
/// each of its slots' `Default::default()`: a number or bool, or an array of them, with
/// no `default = expr` (so evaluating it by columns, once per lane, changes nothing).
fn column_default(f: &super::BField<'_>) -> bool {
    let by_trait = match &f.field.attrs.default {
        Some(d) => matches!(d.value, crate::internals::attr::DefaultAttr::Trait),
        None => true,
    };
    let leaf = matches!(
        f.fixed.leaf,
        Leaf::Bool
            | Leaf::F32
            | Leaf::F64
            | Leaf::Int { .. }
            | Leaf::Bits { .. }
            | Leaf::Quantize { .. }
    );
    by_trait && leaf && matches!(f.fixed.layout, Layout::Whole | Layout::Array(_))
}

/// The raw column type of an integer of type `ty`: the unsigned type of its width (its
/// wire bits fit), `u64` above 32 bits.
fn raw_int(ty: IntTy) -> TokenStream {
    match ty {
        IntTy::U8 | IntTy::I8 => quote!(u8),
        IntTy::U16 | IntTy::I16 => quote!(u16),
        IntTy::U32 | IntTy::I32 => quote!(u32),
        _ => quote!(u64),
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
        let ty = plan.raw_ty(s);
        let value = plan.raw_value(
            s,
            quote!((__raw[__k].checked_shr(#o as u32).unwrap_or(0) & #krate::__private::run::mask(#w))),
        );
        // A loop, not `array::from_fn`: that is not always inlined (the baseline build).
        quote! {
            let mut #r = [<#ty as ::core::default::Default>::default(); __N];
            for __k in 0..__N {
                #r[__k] = #value;
            }
        }
    });
    let bail = quote!(return ::core::option::Option::None;);
    let values: TokenStream = (0..plan.slots.len())
        .map(|s| plan.dec_column(g, s, &act, &bail))
        .collect();
    let value = plan.construct();
    let defaults = plan.gated_defaults();
    quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline(always)]
        fn unpack_fixed_column<const __N: usize>(
            __raw: [u64; __N],
            __act: [bool; __N],
            __level: #krate::__private::batch::SimdLevel,
        ) -> ::core::option::Option<impl ::core::ops::Fn(usize) -> Self> {
            let __act = &__act;
            #widths
            #(#raws)*
            let mut __ok = true;
            #values
            if !__ok {
                return ::core::option::Option::None;
            }
            #defaults
            ::core::option::Option::Some(move |__k: usize| #value)
        }
    }
}

/// The value a gate's condition sees for field `f` while the block is parsed (only
/// fields whose value is their raw column, possibly offset: bools, integers, raw
/// floats), or `None`.
fn parse_value(g: &Gen, plan: &Plan<'_>, f: usize) -> Option<TokenStream> {
    let r = format_ident!("__r{}", plan.fields[f].slots.start);
    parse_value_of(g, plan, f, quote!(#r[__k]), |j| {
        let gi = format_ident!("__g{}", j);
        quote!(#gi[__k])
    })
}

/// [`parse_value`] as pass 1 sees it: the field's raw value in its local `__e<slot>`,
/// an earlier gate's verdict in its local `__on<gate>`.
fn parse_value_local(g: &Gen, plan: &Plan<'_>, f: usize) -> Option<TokenStream> {
    let e = format_ident!("__e{}", plan.fields[f].slots.start);
    parse_value_of(g, plan, f, quote!(#e), |j| {
        let on = format_ident!("__on{}", j);
        quote!(#on)
    })
}

/// [`parse_value`] of the raw value `raw` (an expression of the slot's raw type), with
/// `gate(j)` the expression of gate `j`'s verdict.
fn parse_value_of(
    g: &Gen,
    plan: &Plan<'_>,
    f: usize,
    raw: TokenStream,
    gate: impl Fn(usize) -> TokenStream,
) -> Option<TokenStream> {
    let krate = &g.krate;
    let field = &plan.fields[f];
    if !matches!(field.fixed.layout, Layout::Whole) {
        return None;
    }
    let s = field.slots.start;
    let value = match &plan.slots[s].leaf {
        Leaf::Bool | Leaf::F32 | Leaf::F64 => raw,
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
            let on = gate(j);
            let default = default_expr(field.field);
            quote!(if #on { #value } else { #default })
        }
        None => value,
    })
}

/// `decode_extend`: blocks peeked from the input, checked and converted by columns,
/// consumed and built when all of it is good. `None` when a gate names a field whose
/// value the parse cannot see cheaply.
///
/// Full blocks (all but the last) have their own copy of the code, with every lane
/// active and every loop of constant length.
pub(super) fn decode_extend(g: &Gen, plan: &Plan<'_>) -> Option<TokenStream> {
    let krate = &g.krate;
    let batch = quote!(#krate::__private::batch);
    let dec = quote!(#krate::Decoder);
    let nested = plan.nested_pack(g);
    let stretches = stretch::stretches(plan);
    let stretch::Parse {
        consts,
        element_bits,
        parse,
        loads,
        early_split,
        split,
        gate_columns,
        first_gate,
        fold,
    } = stretch::parse(g, plan, &stretches)?;
    let raws = (0..plan.slots.len()).map(|s| {
        let r = format_ident!("__r{}", s);
        let ty = plan.raw_ty(s);
        quote!(let mut #r = [<#ty as ::core::default::Default>::default(); __N];)
    });
    let raws = quote!(#(#raws)*);
    let gate_ids: Vec<_> = (0..plan.gates.len())
        .map(|j| format_ident!("__g{}", j))
        .collect();
    let saved: Vec<_> = (0..plan.gates.len())
        .map(|j| format_ident!("__gs{}", j))
        .collect();
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
    let value = plan.construct();
    let defaults = plan.gated_defaults();
    let pairs = first_gate.and_then(|gate| pairs::pairs(plan, &stretches, fold, &gate));
    let pairs::Mode {
        state: pairs_state,
        chosen: pairs_mode,
        verdict: pairs_verdict,
    } = pairs::mode(pairs.is_some());
    let pairs = pairs.unwrap_or_default();
    let pass1_full = pass1(g, true, &pairs_mode, &pairs, &parse);
    let pass1_partial = pass1(g, false, &pairs_mode, &pairs, &parse);
    // The rest of a block whose pass 1 has run: checked and converted by columns,
    // consumed, and built. A full block runs the next full block's pass 1 before it
    // builds its elements: pass 2 loads the columns pass 1 stored element by element as
    // vectors, which waits until those stores reach the cache, and the build's work
    // covers that wait (`__ready`: the next block's pass 1 has run).
    let block = |full: bool| {
        let (count, lanes, ahead, lane_live) = if full {
            (
                quote!(__N),
                quote!([true; __N]),
                quote! {
                    #pairs_verdict
                    __ready = __len - __at - __n >= __N && #pass1_full;
                },
                quote!(|_: usize| true),
            )
        } else {
            (
                quote!(__n),
                quote!(#batch::live(__n)),
                TokenStream::new(),
                quote!(|__k: usize| __k < __n),
            )
        };
        quote! {
            '__block: {
                // Pass 2: the gates' fields and the gates by columns (pass 1 kept them
                // in locals), then every other field split from its column of windows.
                #early_split
                let __lane_live = #lane_live;
                #(#gate_columns)*
                #split
                if __bits > #dec::bits_remaining(__d) {
                    break '__block false;
                }
                let __live: [bool; __N] = #lanes;
                let mut __ok = true;
                #values
                if !__ok {
                    break '__block false;
                }
                #nested_values
                #defaults
                #dec::skip_bits(__d, __bits)?;
                #(let #saved = #gate_ids;)*
                #ahead
                {
                    #(let #gate_ids = #saved;)*
                    #batch::push_block(__out, #count, |__k| #value);
                }
                true
            }
        }
    };
    let (full, partial) = (block(true), block(false));
    Some(quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline]
        fn decode_extend<__D: #dec>(
            __d: &mut __D,
            __len: usize,
            __out: &mut __netser_alloc::vec::Vec<Self>,
        ) -> #krate::Result<()> {
            const __N: usize = #batch::BLOCK;
            #consts
            const __ELEMENT_BITS: u64 = #element_bits;
            const __WB: usize = #batch::window_bytes(__ELEMENT_BITS);
            if !(<__D as #dec>::PACKS_RUNS #nested && __ELEMENT_BITS <= #batch::MAX_ELEMENT_BITS) {
                return #batch::decode_each(__d, 0, __len, __out);
            }
            // The blocks, compiled for the CPU's vector instructions when it has them
            // (the closure is inlined into `simd`'s dispatch).
            #batch::simd_with(#[inline(always)] |__level| {
                // The columns, zeroed once: a short block's lanes past its end keep the
                // last block's values, which only inactive lanes read.
                #loads
                #raws
                #(let mut #gate_ids = [false; __N];)*
                #pairs_state
                let mut __bits = 0u64;
                let mut __ready = false;
                let mut __at = 0usize;
                while __at < __len {
                    let __n = ::core::cmp::min(__len - __at, __N);
                    if !__ready {
                        __ready = if __n == __N { #pass1_full } else { #pass1_partial };
                    }
                    let __done = __ready && if __n == __N { #full } else { #partial };
                    if !__done {
                        __ready = false;
                        #batch::decode_each(__d, __at, __n, __out)?;
                    }
                    __at += __n;
                }
                ::core::result::Result::Ok(())
            })
        }
    })
}

/// Pass 1 of a block at the stream's position: the bit positions (the gates decide
/// them) and each element's windows, stored by columns (the gates and their fields
/// only in locals: pass 2 finds their columns); `__bits` becomes the block's length.
/// `false` when the input cannot be peeked.
fn pass1(
    g: &Gen,
    full: bool,
    pairs_mode: &TokenStream,
    pairs: &TokenStream,
    parse: &TokenStream,
) -> TokenStream {
    let krate = &g.krate;
    let (batch, dec) = (quote!(#krate::__private::batch), quote!(#krate::Decoder));
    let full_pairs = if full {
        pairs_mode.clone()
    } else {
        quote!(false)
    };
    let stop = if full {
        TokenStream::new()
    } else {
        quote!(if __k == __n {
            break;
        })
    };
    quote! {
        '__pass1: {
            let ::core::option::Option::Some((__input, __start)) = #dec::peek_input(__d)
            else {
                break '__pass1 false;
            };
            let __copy: [u8; __WB];
            let __bytes: &[u8; __WB] = match #batch::window::<__WB>(__input, __start) {
                ::core::option::Option::Some(__w) => __w,
                ::core::option::Option::None => {
                    __copy = #batch::window_copy::<__WB>(__input, __start);
                    &__copy
                }
            };
            let mut __p = #batch::Peek::new(__bytes, __start);
            if #full_pairs {
                #pairs
            } else {
                for __k in 0..__N {
                    #stop
                    #parse
                }
            }
            __bits = __p.position() - (__start & 7);
            true
        }
    }
}
