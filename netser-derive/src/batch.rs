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

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::gen::Gen;
use crate::internals::ast::Field;
use crate::internals::attr::DefaultAttr;
use crate::internals::check;
use crate::plan::Body;
use crate::run::{self, Fixed, Layout, Leaf};

mod decode;
mod encode;

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
                let reads = check::WhenReads::of(&when.value);
                let uses = fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f): &(usize, &BField<'_>)| reads.may_read(&f.field.binding))
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

pub(crate) fn int_ident(ty: crate::internals::ast::IntTy) -> syn::Ident {
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
    let mut items = encode::encode_slice(g, plan);
    let mut inherent = TokenStream::new();
    if let Some(dec) = decode::decode_extend(g, plan) {
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
    let mut items = encode::pack_fixed_column(g, plan);
    items.extend(decode::unpack_fixed_column(g, plan));
    items
}
