//! The batch path over collections of a struct whose every field is of constant width
//! (a leaf of [`run`], optionally under a `when` gate): `encode_slice` and
//! `decode_extend` overrides that go by blocks of `netser::batch::BLOCK` elements,
//! converting each field as a column (`quantize_column`, `pack_column`, branch-free
//! integer checks) and packing every element's bits into 64-bit words written with one
//! call; and `pack_fixed_column` / `unpack_fixed_column` for a struct packed into its
//! parent's runs, so the parent's columns reach into it.
//!
//! Every block is all or nothing: when a column does not settle a value (an error, or a
//! rare value the kernels leave to the scalar path), or the room or the input is short,
//! the block goes element by element through `encode` / `decode`, which give exactly the
//! bytes, values and errors (index, field path, bit) of the path without batches. A
//! stream with a tracer, or a measure, never takes the batch path.

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};

use crate::gen::Gen;
use crate::internals::ast::Field;
use crate::internals::attr::DefaultAttr;
use crate::internals::check;
use crate::plan::run::{self, Fixed, Layout, Leaf};
use crate::plan::Body;

/// A field of the batch.
struct BField<'a> {
    field: &'a Field<'a>,
    fixed: Fixed<'a>,
    /// Its gate's index, when it has a `when`.
    gate: Option<usize>,
    /// Its slots' indices.
    slots: core::ops::Range<usize>,
}

/// A `when` gate.
struct Gate {
    /// The associated fn taking every earlier field.
    when_fn: syn::Ident,
    /// The same condition taking only the fields it names (for decode).
    reduced: syn::Ident,
    /// Indices of the fields it names.
    uses: Vec<usize>,
    /// The condition.
    cond: TokenStream,
}

/// One leaf value of one field.
struct Slot<'a> {
    field: usize,
    leaf: Leaf<'a>,
    /// The leaf's place in an element bound to `__x` (a `&Self`).
    access: TokenStream,
    gate: Option<usize>,
}

/// The struct's batch plan.
pub struct Plan<'a> {
    fields: Vec<BField<'a>>,
    gates: Vec<Gate>,
    slots: Vec<Slot<'a>>,
}

/// The batch plan of a struct whose sent fields are all of constant width, with no
/// check, alignment or skipped field (gates allowed), else `None`.
pub fn plan<'a>(body: &'a Body<'a>) -> Option<Plan<'a>> {
    if body.variant.is_some() || body.fields.is_empty() {
        return None;
    }
    let mut fields = Vec::new();
    let mut gates = Vec::new();
    let mut slots = Vec::new();
    for plan in &body.fields {
        let field = plan.field;
        if plan.magic.is_some() || field.attrs.align.is_some() {
            return None;
        }
        let fixed = run::fixed(plan.wire.as_ref()?)?;
        let gate = match (&plan.when_fn, &field.attrs.when) {
            (Some(when_fn), Some(when)) => {
                let cond = check::user_expr(&when.value);
                let mut names = Vec::new();
                idents(cond.clone(), &mut names);
                let uses = fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f): &(usize, &BField<'_>)| {
                        names.contains(&f.field.binding.to_string())
                    })
                    .map(|(i, _)| i)
                    .collect();
                gates.push(Gate {
                    when_fn: when_fn.clone(),
                    reduced: format_ident!("{}_batch", when_fn),
                    uses,
                    cond,
                });
                Some(gates.len() - 1)
            }
            _ => None,
        };
        let member = &field.member;
        let start = slots.len();
        for k in 0..fixed.slots() {
            let access = match fixed.layout {
                Layout::Whole => quote!(__x.#member),
                Layout::Array(_) => quote!(__x.#member[#k]),
                Layout::Glam { .. } => quote!(__x.#member.to_array()[#k]),
            };
            slots.push(Slot {
                field: fields.len(),
                leaf: fixed.leaf.clone(),
                access,
                gate,
            });
        }
        fields.push(BField {
            field,
            fixed,
            gate,
            slots: start..slots.len(),
        });
    }
    Some(Plan {
        fields,
        gates,
        slots,
    })
}

/// Every identifier in `tokens` (the fields a condition may name).
fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

fn int_ident(ty: crate::internals::ast::IntTy) -> syn::Ident {
    syn::Ident::new(ty.name(), proc_macro2::Span::call_site())
}

impl Plan<'_> {
    /// `let __w<s>: u32 = ...;` for every slot, and `__o<s>` offsets (ungated layout).
    fn widths(&self, g: &Gen) -> TokenStream {
        let mut out = quote!(let __o0: u64 = 0;);
        for (s, slot) in self.slots.iter().enumerate() {
            let w = run::width(g, &self.fields[slot.field].fixed);
            let (wi, oi, next) = (
                format_ident!("__w{}", s),
                format_ident!("__o{}", s),
                format_ident!("__o{}", s + 1),
            );
            out.extend(quote! {
                let #wi: u32 = #w;
                let #next: u64 = #oi + #wi as u64;
            });
        }
        out
    }

    /// `&& <T>::PACKED_BITS != 0` for every nested type.
    fn nested_pack(&self, g: &Gen) -> TokenStream {
        let krate = &g.krate;
        self.slots
            .iter()
            .filter_map(|s| match s.leaf {
                Leaf::Nested(ty) => {
                    Some(quote!(&& <#ty as #krate::NetSerialize>::PACKED_BITS != 0))
                }
                _ => None,
            })
            .collect()
    }

    fn has_gates(&self) -> bool {
        !self.gates.is_empty()
    }

    /// The active lanes of slot `s`: its gate's, else `all`.
    fn active(&self, s: usize, all: &TokenStream) -> TokenStream {
        match self.slots[s].gate {
            Some(j) => {
                let gi = format_ident!("__g{}", j);
                quote!(&#gi)
            }
            None => all.clone(),
        }
    }

    /// `let __c<s>: [u64; __N]`: slot `s`'s wire integers for the elements `__it(k)`,
    /// with `__ok` cleared when a lane is not settled.
    fn enc_column(&self, g: &Gen, s: usize, act: &TokenStream) -> TokenStream {
        let krate = &g.krate;
        let batch = quote!(#krate::batch);
        let slot = &self.slots[s];
        let access = &slot.access;
        let c = format_ident!("__c{}", s);
        let gather = |ty: TokenStream, value: TokenStream| quote!(let __v: [#ty; __N] = ::core::array::from_fn(|__k| { let __x = __it(__k); #value }););
        let lanes = |e: TokenStream| quote!(let #c: [u64; __N] = ::core::array::from_fn(|__k| { let __x = __it(__k); #e }););
        match &slot.leaf {
            Leaf::Bool => lanes(quote!((#access) as u64)),
            Leaf::F32 => lanes(quote!(f32::to_bits(#access) as u64)),
            Leaf::F64 => lanes(quote!(f64::to_bits(#access))),
            Leaf::Int { ty, min, max } => {
                let t = int_ident(*ty);
                let v = gather(quote!(#t), access.clone());
                quote!(let #c: [u64; __N] = {
                    #v
                    let mut __o = [0u64; __N];
                    __ok &= #batch::int_column::<#t, __N>(&__v, #min, #max, #act, &mut __o);
                    __o
                };)
            }
            Leaf::Bits { ty, bits } => {
                let t = int_ident(*ty);
                let v = gather(quote!(#t), access.clone());
                quote!(let #c: [u64; __N] = {
                    #v
                    let mut __o = [0u64; __N];
                    __ok &= #batch::bits_column::<#t, __N>(&__v, #bits, #act, &mut __o);
                    __o
                };)
            }
            Leaf::Quantize {
                min,
                max,
                res,
                clamp,
            } => {
                let q = crate::encode::quantize_const(g, min, max, res, *clamp);
                let v = gather(quote!(f32), access.clone());
                quote!(let #c: [u64; __N] = {
                    #q
                    #v
                    let mut __i = [0u32; __N];
                    __ok &= __Q.quantize_column(&__v, #act, &mut __i);
                    #batch::widen(&__i)
                };)
            }
            Leaf::Quat { bits, glam } => {
                let value = match glam {
                    Some(_) => quote!(#access.to_array()),
                    None => access.clone(),
                };
                let v = gather(quote!([f32; 4]), value);
                quote!(let #c: [u64; __N] = {
                    const __QF: #krate::quat::QuatFormat = #krate::quat::QuatFormat::new(#bits);
                    #v
                    let mut __o = [0u64; __N];
                    __ok &= __QF.pack_column(&__v, #act, &mut __o);
                    __o
                };)
            }
            Leaf::Nested(ty) => quote!(let #c: [u64; __N] = {
                let mut __o = [0u64; __N];
                __ok &= <#ty as #krate::NetSerialize>::pack_fixed_column::<__N>(
                    |__k| { let __x = __it(__k); &#access },
                    #act,
                    &mut __o,
                );
                __o
            };),
        }
    }

    /// Slot `s`'s values from its raw column `__r<s>` (`let __v<s>`, or `let __n<s>` an
    /// iterator for a nested type, leaving with `bail` when it does not unpack).
    fn dec_column(&self, g: &Gen, s: usize, act: &TokenStream, bail: &TokenStream) -> TokenStream {
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
    fn lane_value(&self, s: usize) -> TokenStream {
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
    fn construct(&self) -> TokenStream {
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
    fn lanes(&self, len: TokenStream) -> (TokenStream, TokenStream) {
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

/// A field's value when its gate is off (as the field-by-field decode builds it).
fn default_expr(field: &Field<'_>) -> TokenStream {
    match &field.attrs.default {
        Some(d) => match &d.value {
            DefaultAttr::Trait => quote!(::core::default::Default::default()),
            DefaultAttr::Expr(e) => check::user_expr(e),
        },
        None => quote!(::core::default::Default::default()),
    }
}

/// The impl items (overrides of the hidden hooks) and the inherent items (the gates'
/// reduced conditions) for a struct that is not generic.
pub fn items(g: &Gen, plan: &Plan<'_>) -> (TokenStream, TokenStream) {
    let mut items = encode_slice(g, plan);
    let mut inherent = TokenStream::new();
    if let Some(dec) = decode_extend(g, plan) {
        items.extend(dec);
        for gate in &plan.gates {
            let params = gate.uses.iter().map(|&f| {
                let field = plan.fields[f].field;
                let (b, ty) = (&field.binding, field.ty);
                quote!(#b: &#ty)
            });
            let (name, cond) = (&gate.reduced, &gate.cond);
            inherent.extend(quote! {
                #[inline(always)]
                fn #name(#(#params),*) -> bool {
                    #cond
                }
            });
        }
    }
    (items, inherent)
}

/// `pack_fixed_column` and `unpack_fixed_column` of a struct packed into its parents'
/// runs (no gates).
pub fn column_items(g: &Gen, plan: &Plan<'_>) -> TokenStream {
    if plan.has_gates() {
        return TokenStream::new();
    }
    let krate = &g.krate;
    let widths = plan.widths(g);
    let act = quote!(__act);
    let columns: TokenStream = (0..plan.slots.len())
        .map(|s| plan.enc_column(g, s, &act))
        .collect();
    let parts = (0..plan.slots.len()).map(|s| {
        let (c, o) = (format_ident!("__c{}", s), format_ident!("__o{}", s));
        quote!(| #c[__k].checked_shl(#o as u32).unwrap_or(0))
    });
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
        fn pack_fixed_column<'__a, const __N: usize>(
            __get: impl ::core::ops::Fn(usize) -> &'__a Self,
            __act: &[bool; __N],
            __out: &mut [u64; __N],
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

/// `encode_slice`: blocks converted by columns, then packed.
fn encode_slice(g: &Gen, plan: &Plan<'_>) -> TokenStream {
    let krate = &g.krate;
    let batch = quote!(#krate::batch);
    let enc = quote!(#krate::Encoder);
    let ns = quote!(#krate::NetSerialize);
    let widths = plan.widths(g);
    let nested = plan.nested_pack(g);
    let all = quote!(&__all);
    let mut columns = TokenStream::new();
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
        for s in field.slots.clone() {
            let act = plan.active(s, &all);
            columns.extend(plan.enc_column(g, s, &act));
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
    // The pack phase: segments of ungated slots, and each gated field on its own.
    let mut pack = TokenStream::new();
    let mut segment = Vec::new();
    let pair = |s: usize| {
        let (c, w) = (format_ident!("__c{}", s), format_ident!("__w{}", s));
        quote!((#c[__k], #w))
    };
    for field in &plan.fields {
        match field.gate {
            None => segment.extend(field.slots.clone().map(pair)),
            Some(j) => {
                if !segment.is_empty() {
                    pack.extend(quote!(__sink.push_run([#(#segment),*]);));
                    segment.clear();
                }
                let gi = format_ident!("__g{}", j);
                let pairs = field.slots.clone().map(pair);
                pack.extend(quote!(if #gi[__k] { __sink.push_run([#(#pairs),*]); }));
            }
        }
    }
    if !segment.is_empty() {
        pack.extend(quote!(__sink.push_run([#(#segment),*]);));
    }
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
            #widths
            let __all = [true; __N];
            let mut __at = 0usize;
            for __block in __items.chunks(__N) {
                let __n = __block.len();
                let ::core::option::Option::Some(__last) = __block.last() else {
                    break;
                };
                // Lanes past the end repeat the last element: same verdicts, no mask.
                let __els: [&Self; __N] = ::core::array::from_fn(|__k| match __block.get(__k) {
                    ::core::option::Option::Some(__x) => __x,
                    ::core::option::Option::None => __last,
                });
                let __it = |__k: usize| __els[__k];
                let mut __ok = true;
                #columns
                let mut __bits: u64 = __n as u64 * (0u64 #(+ #ungated as u64)*);
                #(#gated)*
                if __ok && #enc::bits_available(__e) >= __bits {
                    let mut __sink = #batch::Sink::<{ #batch::SINK_WORDS }>::new();
                    // `0..__N` with a break: the columns' indices need no bounds check.
                    for __k in 0..__N {
                        if __k == __n {
                            break;
                        }
                        #pack
                        __sink.spill(__e)?;
                    }
                    __sink.write(__e)?;
                } else {
                    #batch::encode_each(__block, __at, __e)?;
                }
                __at += __n;
            }
            ::core::result::Result::Ok(())
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
fn decode_extend(g: &Gen, plan: &Plan<'_>) -> Option<TokenStream> {
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
