//! The batch encode: `encode_slice` (blocks converted by columns, then packed) and
//! `pack_fixed_column` for a struct packed into its parents' runs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{int_ident, Plan};
use crate::gen::Gen;
use crate::run::Leaf;

impl Plan<'_> {
    /// `let __c<s>: [u64; __N]` (`[u32; __N]` for a quantized slot): slot `s`'s wire integers for the elements `__it(k)`,
    /// with `__ok` cleared when a lane is not settled. Not for bools and integers.
    pub(super) fn enc_column(&self, g: &Gen, s: usize, act: &TokenStream) -> TokenStream {
        let krate = &g.krate;
        let slot = &self.slots[s];
        let access = &slot.access;
        let c = format_ident!("__c{}", s);
        let gather = |ty: TokenStream, value: TokenStream| quote!(let __v: [#ty; __N] = ::core::array::from_fn(|__k| { let __x = __it(__k); #value }););
        let lanes = |e: TokenStream| quote!(let #c: [u64; __N] = ::core::array::from_fn(|__k| { let __x = __it(__k); #e }););
        match &slot.leaf {
            Leaf::Bool => lanes(quote!((#access) as u64)),
            Leaf::F32 => lanes(quote!(f32::to_bits(#access) as u64)),
            Leaf::F64 => lanes(quote!(f64::to_bits(#access))),
            Leaf::Quantize {
                min,
                max,
                res,
                clamp,
            } => {
                let q = crate::gen::quantize_const(g, min, max, res, *clamp);
                let v = gather(quote!(f32), access.clone());
                // Kept as `u32`: the packing widens it where it loads it.
                quote!(let #c: [u32; __N] = {
                    #q
                    #v
                    let mut __i = [0u32; __N];
                    __ok &= __Q.quantize_column(&__v, #act, &mut __i);
                    __i
                };)
            }
            Leaf::Quat { bits, glam } => {
                let value = match glam {
                    Some(_) => quote!(#access.to_array()),
                    None => access.clone(),
                };
                // Read in the elements (a copied column is read back by wider loads
                // than its stores, which then wait for the stores to complete).
                quote!(let #c: [u64; __N] = {
                    const __QF: #krate::__private::QuatFormat = #krate::__private::QuatFormat::new(#bits);
                    let mut __o = [0u64; __N];
                    __ok &= __QF.pack_column_with::<__N>(
                        __level,
                        |__k| -> [f32; 4] { let __x = __it(__k); #value },
                        #act,
                        &mut __o,
                    );
                    __o
                };)
            }
            // Integers are read in place where they are packed (`pair`, `pack_fixed_column`).
            Leaf::Int { .. } | Leaf::Bits { .. } => unreachable!("integers have no column"),
            Leaf::Nested(ty) => quote!(let #c: [u64; __N] = {
                let mut __o = [0u64; __N];
                __ok &= <#ty as #krate::NetSerialize>::pack_fixed_column::<__N>(
                    |__k| { let __x = __it(__k); &#access },
                    #act,
                    &mut __o,
                    __level,
                );
                __o
            };),
        }
    }
}

/// `pack_fixed_column`: the struct's wire bits for a column of elements.
pub(super) fn pack_fixed_column(g: &Gen, plan: &Plan<'_>) -> TokenStream {
    let krate = &g.krate;
    let batch = quote!(#krate::__private::batch);
    let widths = plan.widths(g);
    let act = quote!(__act);
    // Integers are read and checked in place in the packing loop (a gathered column,
    // written by scalar stores and read back by vector loads, waits for the stores);
    // only the range's or the width's validity is checked once here.
    let columns: TokenStream = (0..plan.slots.len())
        .map(|s| match &plan.slots[s].leaf {
            Leaf::Int { min, max, .. } => quote!(__ok &= #min <= #max;),
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                quote!(__ok &= #batch::bits_valid::<#t>(#bits);)
            }
            _ => plan.enc_column(g, s, &act),
        })
        .collect();
    let parts = (0..plan.slots.len()).map(|s| {
        let (c, o) = (format_ident!("__c{}", s), format_ident!("__o{}", s));
        let access = &plan.slots[s].access;
        let lane = match &plan.slots[s].leaf {
            Leaf::Int { ty, min, max } => {
                let t = int_ident(*ty);
                quote!({
                    let __x = __it(__k);
                    #batch::int_lane::<#t>(#access, #min, #max, #act[__k], &mut __ok)
                })
            }
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                quote!({
                    let __x = __it(__k);
                    #batch::bits_lane::<#t>(#access, #bits, #act[__k], &mut __ok)
                })
            }
            _ => quote!((#c[__k] as u64)),
        };
        quote!(| #lane.checked_shl(#o as u32).unwrap_or(0))
    });
    quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline(always)]
        fn pack_fixed_column<'__a, const __N: usize>(
            __get: impl ::core::ops::Fn(usize) -> &'__a Self,
            __act: &[bool; __N],
            __out: &mut [u64; __N],
            __level: #krate::__private::batch::SimdLevel,
        ) -> bool
        where
            Self: '__a,
        {
            let __it = &__get;
            let mut __ok = true;
            #widths
            #columns
            for __k in 0..__N {
                __out[__k] = 0u64 #(#parts)*;
            }
            __ok
        }
    }
}

/// Most bits a leaf sends, from its type alone.
fn bound_bits(leaf: &Leaf<'_>) -> u32 {
    match leaf {
        Leaf::Bool => 1,
        Leaf::F32 | Leaf::Quantize { .. } => 32,
        Leaf::Int { ty, .. } | Leaf::Bits { ty, .. } => ty.width().min(64),
        Leaf::Quat { .. } => 62,
        Leaf::F64 | Leaf::Nested(_) => 64,
    }
}

/// One put of an element: ungated slots, then optionally a gated field and the ungated
/// slots after it.
#[derive(Default)]
struct Piece {
    prefix: Vec<usize>,
    /// The gate, its field's slots and the ungated slots after it.
    gated: Option<(usize, Vec<usize>, Vec<usize>)>,
}

/// `encode_slice`: blocks converted by columns, then packed.
pub(super) fn encode_slice(g: &Gen, plan: &Plan<'_>) -> TokenStream {
    let krate = &g.krate;
    let batch = quote!(#krate::__private::batch);
    let enc = quote!(#krate::Encoder);
    let ns = quote!(#krate::NetSerialize);
    let widths = plan.widths(g);
    let nested = plan.nested_pack(g);
    let all = quote!(&__all);
    let mut columns = TokenStream::new();
    // In the AVX-512 build, the bools are gathered by their own loop before the columns
    // are converted: read in place in the compose loop, their byte inserts sit on its
    // critical path there; in the other builds that loop costs more than it saves
    // (BENCHMARKS.md, "The bools gathered by a loop of their own").
    let mut bools = TokenStream::new();
    for (s, slot) in plan.slots.iter().enumerate() {
        if matches!(slot.leaf, Leaf::Bool) {
            let b = format_ident!("__b{}", s);
            let access = &slot.access;
            bools.extend(quote! {
                let mut #b = [0u8; __N];
                if __bool_pass {
                    for __k in 0..__N {
                        let __x = __it(__k);
                        #b[__k] = (#access) as u8;
                    }
                }
            });
        }
    }
    for (f, field) in plan.fields.iter().enumerate() {
        if let Some(j) = field.gate {
            let gi = format_ident!("__g{}", j);
            let when_fn = &plan.gates[j].when_fn;
            let earlier = plan.fields[..f].iter().map(|e| {
                let m = &e.field.member;
                quote!(&__x.#m)
            });
            columns.extend(quote! {
                let #gi: [bool; __N] = ::core::array::from_fn(|__k| {
                    let __x = __it(__k);
                    Self::#when_fn(#(#earlier),*)
                });
            });
        }
        // Bools and integers have no column here: the packing reads them in place (see
        // `pair`), and checks the integers there.
        for s in field.slots.clone() {
            match &plan.slots[s].leaf {
                Leaf::Bool => {}
                Leaf::Int { min, max, .. } => columns.extend(quote!(__ok &= #min <= #max;)),
                Leaf::Bits { ty, bits } => {
                    let t = int_ident(*ty);
                    columns.extend(quote!(__ok &= #batch::bits_valid::<#t>(#bits);));
                }
                _ => {
                    let act = plan.active(s, &all);
                    columns.extend(plan.enc_column(g, s, &act));
                }
            }
        }
    }
    // Bits: the ungated slots for every element, each gate's slots where it is on.
    let ungated = plan
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.gate.is_none())
        .map(|(s, _)| format_ident!("__w{}", s));
    let gated = plan.gates.iter().enumerate().map(|(j, _)| {
        let gi = format_ident!("__g{}", j);
        let ws = plan
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.gate == Some(j))
            .map(|(s, _)| format_ident!("__w{}", s));
        quote!(__bits += (0u64 #(+ #ws as u64)*) * #batch::count(&#gi, __n);)
    });
    // The pack phase: each element's bits in as few puts as its gates allow. A piece is
    // the ungated slots up to a gate (at constant offsets), then that gated field and
    // the ungated segment after it: both candidates (gate on, gate off) are packed at
    // compile-time shifts and one is selected, so the piece is one put. A later gate
    // starts a new piece (its offset depends on the earlier gates).
    let pair = |s: &usize| {
        let (c, w) = (format_ident!("__c{}", s), format_ident!("__w{}", s));
        let access = &plan.slots[*s].access;
        let act = plan.active(*s, &all);
        match &plan.slots[*s].leaf {
            // Bools come from their columns (`bools`) or in place; integers are read where they
            // are packed (no column), and their checks clear `__go` (the packing runs
            // before the puts).
            Leaf::Bool => {
                let b = format_ident!("__b{}", s);
                quote!((
                    if __bool_pass {
                        #b[__k] as u64
                    } else {
                        let __x = __it(__k);
                        (#access) as u64
                    },
                    #w
                ))
            }
            Leaf::Int { ty, min, max } => {
                let t = int_ident(*ty);
                quote!((
                    {
                        let __x = __it(__k);
                        #batch::int_lane::<#t>(#access, #min, #max, (#act)[__k], &mut __go)
                    },
                    #w
                ))
            }
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                quote!((
                    {
                        let __x = __it(__k);
                        #batch::bits_lane::<#t>(#access, #bits, (#act)[__k], &mut __go)
                    },
                    #w
                ))
            }
            _ => quote!((#c[__k] as u64, #w)),
        }
    };
    let zero = |_: &usize| quote!((0u64, 0u32));
    let width = |s: &usize| {
        let w = format_ident!("__w{}", s);
        quote!(+ #w)
    };
    let mut groups: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
    for field in &plan.fields {
        match (field.gate, groups.last_mut()) {
            (None, Some((None, segment))) => segment.extend(field.slots.clone()),
            (gate, _) => groups.push((gate, field.slots.clone().collect())),
        }
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut cur = Piece::default();
    for (gate, slots) in groups {
        match (gate, &mut cur.gated) {
            (None, None) => cur.prefix.extend(slots),
            (None, Some((_, _, then))) => then.extend(slots),
            (Some(j), None) => cur.gated = Some((j, slots, Vec::new())),
            (Some(j), Some(_)) => pieces.push(core::mem::replace(
                &mut cur,
                Piece {
                    prefix: Vec::new(),
                    gated: Some((j, slots, Vec::new())),
                },
            )),
        }
    }
    pieces.push(cur);
    // Each piece's words are composed by columns (a loop over the block's lanes with
    // constant shifts, which the compiler vectorizes, into `__r<p>[word][lane]`), then
    // put element by element, its length selected by its gate.
    let run = quote!(#krate::__private::run);
    let mut compose = TokenStream::new();
    let mut rows = TokenStream::new();
    let mut put = TokenStream::new();
    let mut fits = TokenStream::new();
    for (p, piece) in pieces.iter().enumerate() {
        let r = format_ident!("__r{}", p);
        let (gated, then): (&[usize], &[usize]) = match &piece.gated {
            Some((_, gated, then)) => (gated, then),
            None => (&[], &[]),
        };
        let all: Vec<usize> = piece
            .prefix
            .iter()
            .chain(gated)
            .chain(then)
            .copied()
            .collect();
        // Words of the piece: a bound from the leaves' types (the widths are known only
        // when the struct is compiled; `fits` checks the bound then).
        let bound: u32 = all.iter().map(|&s| bound_bits(&plan.slots[s].leaf)).sum();
        let words = bound.div_ceil(64) as usize;
        let on = all.iter().map(pair);
        let max = all.iter().map(width);
        let off = piece.prefix.iter().chain(then).map(width);
        let (word, len) = match &piece.gated {
            None => (
                quote!(let (__s, _) = #run::pack_candidate([#(#on),*]);),
                quote!(0u32 #(#max)*),
            ),
            Some((j, ..)) => {
                let gi = format_ident!("__g{}", j);
                let off_pairs = piece
                    .prefix
                    .iter()
                    .map(pair)
                    .chain(gated.iter().map(zero))
                    .chain(then.iter().map(pair));
                (
                    quote!(
                        // The gated slots' lanes where the gate is off hold anything
                        // (the columns leave them unspecified): that candidate is
                        // dropped.
                        let (__a, _) = #run::pack_candidate([#(#on),*]);
                        let (__b, _) = #run::pack_candidate([#(#off_pairs),*]);
                        let __s = #batch::select(#gi[__k], __a, __b);
                    ),
                    quote!(#batch::select_len(#gi[__k], 0u32 #(#max)*, 0u32 #(#off)*)),
                )
            }
        };
        let max = all.iter().map(width);
        // A gated piece's length, selected in the vectorized loop.
        let len = match &piece.gated {
            None => len,
            Some(_) => {
                let l = format_ident!("__l{}", p);
                rows.extend(quote!(let mut #l = [0u32; __N];));
                compose.extend(quote!(#l[__k] = #len;));
                quote!(#l[__k])
            }
        };
        compose.extend(quote!({
            #word
            // Only the words that may hold bits (the put reads no other).
            for __j in 0..#words {
                if (__j as u32) * 64 < 0u32 #(#max)* {
                    #r[__j][__k] = __s[__j];
                }
            }
        }));
        let max = all.iter().map(width);
        // The put's last store (the word after the piece's) is its carry alone.
        let m = words;
        rows.extend(quote!(let mut #r = [[0u64; __N]; #m];));
        put.extend(quote!(
            __pos = __to.put::<#m>(__pos, ::core::array::from_fn(|__j| #r[__j][__k]), #len, 0u32 #(#max)*);
        ));
        let max = all.iter().map(width);
        fits.extend(quote!(|| 0u32 #(#max)* > 64 * #words as u32));
    }
    let block = quote! {
        let mut __ok = true;
        #bools
        #columns
        let mut __bits: u64 = __n as u64 * (0u64 #(+ #ungated as u64)*);
        #(#gated)*
        // The words are composed before the integers' verdicts are known (they are
        // checked where they are read): a candidate with a bad value is never put.
        let mut __go = __ok && #enc::bits_available(__e) >= __bits;
        if __go {
            for __k in 0..__N {
                #compose
            }
        }
        if __go {
            // Stored in place in the stream's buffer when it lends it with room past
            // the block; else in the sink's words, then written.
            let __lent = #enc::lend_words(__e)
                .and_then(|__l| #batch::Direct::begin(__l, __bits, <Self as #ns>::MAX_BITS));
            if let ::core::option::Option::Some((mut __d, mut __pos)) = __lent {
                let __to = &mut __d;
                // `0..__N` with a break: the columns' indices need no bounds check.
                for __k in 0..__N {
                    if __k == __n {
                        break;
                    }
                    #put
                }
                let (__len, __last) = __d.finish(__pos);
                #enc::take_lent_words(__e, __len, __last)?;
            } else {
                let mut __pos = __sink.begin(__e);
                let __to = &mut __sink;
                for __k in 0..__N {
                    if __k == __n {
                        break;
                    }
                    #put
                    if !const { #batch::Sink::<{ #batch::SINK_WORDS }>::holds(<Self as #ns>::MAX_BITS) } {
                        __pos = __to.spill(__pos, __e)?;
                    }
                }
                __sink.write(__pos, __e)?;
            }
        } else {
            #batch::encode_each(__block, __at, __e)?;
        }
    };
    quote! {
        #[allow(unused_variables, unused_mut, clippy::let_unit_value)]
        #[inline]
        fn encode_slice<__E: #enc>(__items: &[Self], __e: &mut __E) -> #krate::Result<()> {
            if !(<__E as #enc>::PACKS_RUNS #nested)
                || <Self as #ns>::MAX_BITS > #batch::MAX_ELEMENT_BITS
            {
                return #batch::encode_each(__items, 0, __e);
            }
            const __N: usize = #batch::BLOCK;
            // The blocks, compiled for the CPU's vector instructions when it has them
            // (the closure is inlined into `simd`'s dispatch).
            #batch::simd_with(#[inline(always)] |__level| {
            let __bool_pass = __level == #batch::SimdLevel::Avx512;
            // The widths inside the closure: what it captures, its vector builds read
            // through pointers, and they must be constants there.
            #widths
            if false #fits {
                return #batch::encode_each(__items, 0, __e);
            }
            let __all = [true; __N];
            let mut __at = 0usize;
            // Made once: every block overwrites what it reads of them.
            let mut __sink = #batch::Sink::<{ #batch::SINK_WORDS }>::new();
            #rows
            for __block in __items.chunks(__N) {
                let __n = __block.len();
                let ::core::option::Option::Some(__last) = __block.last() else {
                    break;
                };
                // The block's columns and packing, generated twice (the same tokens, so
                // a compile error in them is reported once): a full block is indexed
                // directly; in a short one, lanes past the end repeat the last element
                // (same verdicts, no mask).
                match <&[Self; __N]>::try_from(__block) {
                    ::core::result::Result::Ok(__full) => {
                        let __it = |__k: usize| -> &Self { &__full[__k] };
                        #block
                    }
                    ::core::result::Result::Err(_) => {
                        let __it = |__k: usize| -> &Self { __block.get(__k).unwrap_or(__last) };
                        #block
                    }
                }
                __at += __n;
            }
            ::core::result::Result::Ok(())
            })
        }
    }
}
