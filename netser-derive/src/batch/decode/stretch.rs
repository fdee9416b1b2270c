//! The stretches of decode's parse: where each element's fields lie from the
//! positions pass 1 finds, what pass 1 loads and stores per element, and how pass 2
//! splits the fields' columns from those loads.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{parse_value, parse_value_local, Plan};
use crate::gen::Gen;

/// A stretch of the parse: slots at constant offsets from where it starts, read by one
/// `Peek::loads` (one base and phase per element): ungated fields, then optionally one
/// gated field, whose gate decides where the next stretch starts.
pub(super) struct Stretch {
    /// Its slots, in wire order.
    pub(super) slots: Vec<usize>,
    /// The gate of the last field, and how many slots come before it.
    pub(super) gate: Option<(usize, usize)>,
}

/// The stretches: runs of ungated fields, each closed by the next gated field.
pub(super) fn stretches(plan: &Plan<'_>) -> Vec<Stretch> {
    let mut out: Vec<Stretch> = Vec::new();
    for field in &plan.fields {
        let open = match out.last_mut() {
            Some(last) if last.gate.is_none() => last,
            _ => {
                out.push(Stretch {
                    slots: Vec::new(),
                    gate: None,
                });
                out.last_mut().expect("just pushed")
            }
        };
        if let Some(j) = field.gate {
            open.gate = Some((j, open.slots.len()));
        }
        open.slots.extend(field.slots.clone());
    }
    out
}

/// The code the stretches generate, by where `decode_extend` puts it.
pub(super) struct Parse {
    /// Every width, split and load offset, as `const` items: each slot's width
    /// (`__W`), each stretch's split (`__S`), the split its loads and picks go by with
    /// its load offsets and their indices (`__P`, `__L`, `__O`, `__M`; for a stretch that
    /// reads the trailing one, both layouts and their union), and each gate's head
    /// (`__H`, the bits before the gated field).
    pub(super) consts: TokenStream,
    /// The bits of an element with every gate on (a `u64` expression of the consts).
    pub(super) element_bits: TokenStream,
    /// Pass 1's step for one element at `__p`: its loads stored by columns, its gates
    /// evaluated in locals, and the position moved past it.
    pub(super) parse: TokenStream,
    /// The window columns, one `[[u64; __N]; loads]` per stretch, but none for a
    /// trailing stretch that the loads of the one before it read (`fold`).
    pub(super) loads: TokenStream,
    /// Pass 2's split of the fields the gates read (pass 1 kept them in locals).
    pub(super) early_split: TokenStream,
    /// Pass 2's split of every other field.
    pub(super) split: TokenStream,
    /// Pass 2's gate columns, one per gate.
    pub(super) gate_columns: Vec<TokenStream>,
    /// The first stretch's gate from one element's loads `__l` (for the pairs).
    pub(super) first_gate: Option<TokenStream>,
    /// Whether the trailing stretch is read by the loads of the one before it.
    pub(super) fold: bool,
}

/// The parse and splits of `stretches`, or `None` when a gate names a field whose
/// value the parse cannot see cheaply.
pub(super) fn parse(g: &Gen, plan: &Plan<'_>, stretches: &[Stretch]) -> Option<Parse> {
    let krate = &g.krate;
    let batch = quote!(#krate::__private::batch);
    // Constant widths and splits: every offset, shift and mask of the parse folds.
    let mut consts = TokenStream::new();
    for (s, slot) in plan.slots.iter().enumerate() {
        let w = crate::run::width(g, &plan.fields[slot.field].fixed);
        let wi = format_ident!("__W{}", s);
        consts.extend(quote!(const #wi: u32 = #w;));
    }
    // Slots a gate's condition reads: split while the block is parsed (the gate decides
    // where the next stretch starts); every other slot is split after the parse.
    let mut early = vec![false; plan.slots.len()];
    for gate in &plan.gates {
        for &f in &gate.uses {
            early[plan.fields[f].slots.start] = true;
        }
    }
    let mut element_bits = quote!(0u64);
    let mut parse = TokenStream::new();
    let mut early_split = TokenStream::new();
    let mut gate_columns = Vec::new();
    let mut first_gate = None;
    let mut loads = TokenStream::new();
    let mut split = TokenStream::new();
    // A trailing stretch (ungated fields after the last gated one) starts at one of two
    // constant offsets from the stretch before it, as that stretch's gate decides: that
    // stretch's loads read it at both (the union of the two layouts' windows, usually
    // the same loads), so it costs no base, load or store of its own per element, and
    // pass 2 picks each of its fields at both places and selects by the gate.
    let fold = stretches.len() >= 2 && stretches.last().is_some_and(|t| t.gate.is_none());
    let trailing = stretches.len() - 1;
    for (i, st) in stretches.iter().enumerate() {
        let (si, li, oi, ci) = (
            format_ident!("__S{}", i),
            format_ident!("__L{}", i),
            format_ident!("__O{}", i),
            format_ident!("__c{}", i),
        );
        let m = st.slots.len();
        let ws = st.slots.iter().map(|s| format_ident!("__W{}", s));
        consts.extend(quote!(const #si: #batch::Split<#m> = #batch::Split::new([#(#ws),*]);));
        element_bits.extend(quote!(+ #si.bits() as u64));
        if fold && i == trailing {
            parse.extend(quote!(__p.skip(&#si);));
            continue;
        }
        // The split the loads and picks go by (`#pi`), and the map from its load indices
        // to the loads made (`#mi`).
        let (pi, mi) = (format_ident!("__P{}", i), format_ident!("__M{}", i));
        if fold && i + 1 == trailing {
            let t = &stretches[trailing];
            let head = st.gate.map_or(m, |(_, head)| head);
            let on = st
                .slots
                .iter()
                .chain(&t.slots)
                .map(|s| format_ident!("__W{}", s));
            let off = st.slots[..head]
                .iter()
                .chain(&t.slots)
                .map(|s| format_ident!("__W{}", s));
            let (mon, moff) = (m + t.slots.len(), head + t.slots.len());
            let (fi, lf, of, mf) = (
                format_ident!("__F{}", i),
                format_ident!("__LF{}", i),
                format_ident!("__OF{}", i),
                format_ident!("__MF{}", i),
            );
            let (ln, on_offsets) = (format_ident!("__LN{}", i), format_ident!("__ON{}", i));
            consts.extend(quote! {
                // Both layouts: the gated field present (`#pi`) or not (`#fi`).
                const #pi: #batch::Split<#mon> = #batch::Split::new([#(#on),*]);
                const #fi: #batch::Split<#moff> = #batch::Split::new([#(#off),*]);
                const #ln: usize = #pi.loads();
                const #on_offsets: [usize; #ln] = #pi.load_offsets();
                const #lf: usize = #fi.loads();
                const #of: [usize; #lf] = #fi.load_offsets();
                const #li: usize = #batch::union_len(&#on_offsets, &#of);
                const #oi: [usize; #li] = #batch::union_offsets(&#on_offsets, &#of);
                const #mi: [usize; #ln] = #batch::load_indices(&#on_offsets, &#oi);
                const #mf: [usize; #lf] = #batch::load_indices(&#of, &#oi);
            });
            let Some((j, _)) = st.gate else {
                unreachable!("every stretch but the last is closed by a gate")
            };
            let gi = format_ident!("__g{}", j);
            for (k, &s) in t.slots.iter().enumerate() {
                let r = format_ident!("__r{}", s);
                let (jn, jf) = (m + k, head + k);
                let value = plan.raw_value(s, quote!(__bits));
                split.extend(quote! {
                    for __k in 0..__N {
                        let __present = #pi.pick(
                            #jn,
                            #ci[const { #mi[#pi.lo_load(#jn)] }][__k],
                            #ci[const { #mi[#pi.hi_load(#jn)] }][__k],
                        );
                        let __absent = #fi.pick(
                            #jf,
                            #ci[const { #mf[#fi.lo_load(#jf)] }][__k],
                            #ci[const { #mf[#fi.hi_load(#jf)] }][__k],
                        );
                        let __bits = if #gi[__k] { __present } else { __absent };
                        #r[__k] = #value;
                    }
                });
            }
        } else {
            consts.extend(quote! {
                const #pi: #batch::Split<#m> = #si;
                const #li: usize = #si.loads();
                const #oi: [usize; #li] = #si.load_offsets();
                const #mi: [usize; #li] = #batch::load_indices(&#oi, &#oi);
            });
        }
        loads.extend(quote!(let mut #ci = [[0u64; __N]; #li];));
        let mut picks = Vec::new();
        // Field `j`'s bits from this element's loads (pass 1) or from the columns.
        let from_loads = |j: usize| {
            quote!(#pi.pick(
                #j,
                __l[const { #mi[#pi.lo_load(#j)] }],
                __l[const { #mi[#pi.hi_load(#j)] }],
            ))
        };
        let from_columns = |j: usize| {
            quote!(#pi.pick(
                #j,
                #ci[const { #mi[#pi.lo_load(#j)] }][__k],
                #ci[const { #mi[#pi.hi_load(#j)] }][__k],
            ))
        };
        for (j, &s) in st.slots.iter().enumerate() {
            let r = format_ident!("__r{}", s);
            let column = plan.raw_value(s, from_columns(j));
            let column = quote! {
                for __k in 0..__N {
                    #r[__k] = #column;
                }
            };
            if early[s] {
                // Pass 1 keeps it in a local for the gate; pass 2 splits its column
                // (fewer stores in pass 1, whose stores share the ports with the build).
                let e = format_ident!("__e{}", s);
                let value = plan.raw_value(s, from_loads(j));
                picks.push(quote!(let #e = #value;));
                early_split.extend(column);
            } else {
                // Constant shifts and masks over a column of words: vector instructions.
                split.extend(column);
            }
        }
        parse.extend(quote! {
            let __l = __p.loads(&#oi);
            for __j in 0..#li {
                #ci[__j][__k] = __l[__j];
            }
            #(#picks)*
        });
        match st.gate {
            None => parse.extend(quote!(__p.skip(&#si);)),
            Some((j, head)) => {
                let gate = &plan.gates[j];
                let args = gate
                    .uses
                    .iter()
                    .map(|&f| parse_value_local(g, plan, f).map(|v| quote!(&#v)))
                    .collect::<Option<Vec<_>>>()?;
                let columns = gate
                    .uses
                    .iter()
                    .map(|&f| parse_value(g, plan, f).map(|v| quote!(&#v)))
                    .collect::<Option<Vec<_>>>()?;
                let (gi, on, reduced) = (
                    format_ident!("__g{}", j),
                    format_ident!("__on{}", j),
                    &gate.reduced,
                );
                let hi = format_ident!("__H{}", i);
                let head_ws = st.slots[..head].iter().map(|s| format_ident!("__W{}", s));
                consts.extend(quote!(const #hi: u32 = 0 #(+ #head_ws)*;));
                if i == 0 {
                    // The first gate from one element's loads, for the pairs.
                    first_gate = Some(quote! {
                        #(#picks)*
                        Self::#reduced(#(#args),*)
                    });
                }
                parse.extend(quote! {
                    let #on = Self::#reduced(#(#args),*);
                    __p.skip_if(&#si, #hi, #on);
                });
                // Pass 2: the gate's column, from its fields' columns (lanes past a
                // short block's end off: gated columns take the gates as lanes).
                gate_columns.push(quote! {
                    for __k in 0..__N {
                        #gi[__k] = __lane_live(__k) && Self::#reduced(#(#columns),*);
                    }
                });
            }
        }
    }
    Some(Parse {
        consts,
        element_bits,
        parse,
        loads,
        early_split,
        split,
        gate_columns,
        first_gate,
        fold,
    })
}
