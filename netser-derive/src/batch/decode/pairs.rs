//! Decode's pass 1 by pairs: for a struct with one gate, the starts of a block's
//! elements found two at a time without a branch on a gate (for gates the branch
//! predictor cannot learn).

use proc_macro2::TokenStream;
use quote::quote;

use super::stretch::Stretch;
use super::Plan;

/// Pass 1 of a full block by pairs, for a struct with one gate, closing its first
/// stretch (optionally followed by a trailing stretch): each step finds two elements'
/// starts and gates without a branch on a gate, the second element's gate read at both
/// of its possible starts while the first one's resolves. A branch on each gate costs a
/// misprediction on gates the predictor cannot learn (about 20 cycles); the chain
/// through a load costs about 7 cycles an element this way, against about 3 for the
/// branch on predictable gates, so the caller takes this only for a block following
/// two whose gates differ. The gates' loads are the elements' windows (the second
/// element's selected by the first one's gate), stored by columns as pass 1's are.
/// `gate` evaluates the first stretch's gate from one element's loads `__l`, as pass 1
/// does. `None` for other structs.
pub(super) fn pairs(
    plan: &Plan<'_>,
    stretches: &[Stretch],
    fold: bool,
    gate: &TokenStream,
) -> Option<TokenStream> {
    let [first, rest @ ..] = stretches else {
        return None;
    };
    first.gate?;
    if plan.gates.len() != 1 || !(rest.is_empty() || rest.len() == 1 && fold) {
        return None;
    }
    let trailing = if rest.is_empty() {
        quote!(0u32)
    } else {
        quote!(__S1.bits())
    };
    Some(quote! {
        const { assert!(__N % 2 == 0, "a block is whole pairs") };
        // The element's bits with the gate off, and the gated field's.
        const __OFF: usize = (__H0 + #trailing) as usize;
        const __GB: usize = (__S0.bits() - __H0) as usize;
        let __gate = |__l: &[u64; __L0]| -> bool { #gate };
        let mut __starts = [0usize; __N];
        let mut __ons = [false; __N];
        let mut __at = __p.position() as usize;
        let mut __k = 0;
        while __k < __N {
            let __l = __p.loads_at(__at, &__O0);
            let __on = __gate(&__l);
            let __next = __at + __OFF;
            let __absent = __p.loads_at(__next, &__O0);
            let __present = __p.loads_at(__next + __GB, &__O0);
            let __second = __next + ::core::hint::select_unpredictable(__on, __GB, 0);
            let __on2 = ::core::hint::select_unpredictable(
                __on,
                __gate(&__present),
                __gate(&__absent),
            );
            // The windows are the gates' loads: the first element's, and the second's
            // at the start its gate chose.
            for __j in 0..__L0 {
                __c0[__j][__k] = __l[__j];
                __c0[__j][__k + 1] =
                    ::core::hint::select_unpredictable(__on, __present[__j], __absent[__j]);
            }
            __starts[__k] = __at;
            __ons[__k] = __on;
            __starts[__k + 1] = __second;
            __ons[__k + 1] = __on2;
            __at = __second + __OFF + ::core::hint::select_unpredictable(__on2, __GB, 0);
            __k += 2;
        }
        // The chain the branches would have walked (a wrong start would mostly send the
        // block to the element-by-element path, silently slower).
        if cfg!(debug_assertions) {
            for __k in 0..__N {
                let __l = __p.loads_at(__starts[__k], &__O0);
                assert_eq!(__ons[__k], __gate(&__l), "element {}'s gate", __k);
                for __j in 0..__L0 {
                    assert_eq!(__c0[__j][__k], __l[__j], "element {}'s windows", __k);
                }
                assert_eq!(
                    __starts.get(__k + 1).copied().unwrap_or(__at),
                    __starts[__k] + __OFF + if __ons[__k] { __GB } else { 0 },
                    "element {}'s end",
                    __k
                );
            }
        }
        __p.seek(__at);
    })
}

/// How the block loop chooses the pairs.
pub(super) struct Mode {
    /// The loop's state, declared before it.
    pub(super) state: TokenStream,
    /// Whether the next full block's pass 1 goes by pairs (`false` without pairs).
    pub(super) chosen: TokenStream,
    /// What a checked full block leaves for the next one's choice.
    pub(super) verdict: TokenStream,
}

/// The loop's choice of the pairs, for a struct that has them (`with`) or not.
pub(super) fn mode(with: bool) -> Mode {
    if !with {
        return Mode {
            state: TokenStream::new(),
            chosen: quote!(false),
            verdict: TokenStream::new(),
        };
    }
    Mode {
        state: quote! {
            // Whether the next full block's pass 1 goes by pairs, and the last
            // block's gates (`u32::MAX`: none yet).
            let mut __pairs = false;
            let mut __last_mask = u32::MAX;
        },
        chosen: quote!(__pairs),
        verdict: quote! {
            // Gates that repeat the last block's are ones the branch predictor
            // learns; others go by pairs (the gate column pass 2 has just found).
            let mut __mask = 0u32;
            for __k in 0..__N {
                __mask |= (__g0[__k] as u32) << __k;
            }
            __pairs = __mask != __last_mask && __last_mask != u32::MAX;
            __last_mask = __mask;
        },
    }
}
