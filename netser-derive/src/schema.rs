//! `SCHEMA_HASH`: a fingerprint of the wire layout, from the same wire forms as
//! encode and decode. See the repository's `WIRE.md`, section 2.5, for the exact definition.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use crate::gen::Gen;
use crate::internals::ast::{CollectionKind, FloatTy, IntTy};
use crate::internals::wire::Wire;
use crate::plan::FieldPlan;

/// Builds the hash of a type as a chain of `combine` calls.
pub struct Hasher<'g> {
    g: &'g Gen,
    steps: Vec<TokenStream>,
}

impl<'g> Hasher<'g> {
    /// An empty chain.
    pub fn new(g: &'g Gen) -> Self {
        Hasher {
            g,
            steps: Vec::new(),
        }
    }

    /// Mixes in a piece of layout text.
    pub fn text(&mut self, s: &str) {
        let krate = &self.g.krate;
        let lit = syn::LitByteStr::new(s.as_bytes(), proc_macro2::Span::call_site());
        self.steps.push(quote!(#krate::__private::fnv1a(#lit)));
    }

    /// Mixes in a `u64` const expression.
    pub fn value(&mut self, v: TokenStream) {
        self.steps.push(quote!(((#v) as u64)));
    }

    /// Mixes in an integer bound of any width (128-bit values in two halves; signed
    /// values sign-extended).
    fn int(&mut self, ty: IntTy, v: &TokenStream) {
        let t = syn::Ident::new(ty.name(), proc_macro2::Span::call_site());
        // Typed first: `(-3) as u128` would infer the literal as `u128`.
        self.steps
            .push(quote!({ let __v: #t = #v; __v as u128 as u64 }));
        self.steps
            .push(quote!({ let __v: #t = #v; ((__v as u128) >> 64) as u64 }));
    }

    /// The hash as a `u64` const expression.
    pub fn finish(self) -> TokenStream {
        let krate = &self.g.krate;
        let steps = self.steps;
        quote!({
            let mut __h: u64 = #krate::__private::fnv1a(b"netser-derive/1");
            #( __h = #krate::__private::combine(__h, #steps); )*
            __h
        })
    }

    /// Mixes in every sent field, in order.
    pub fn fields(&mut self, plans: &[FieldPlan<'_>]) {
        for plan in plans {
            let Some(wire) = &plan.wire else { continue };
            let attrs = &plan.field.attrs;
            self.text(&format!("field {}", plan.field.name));
            if let Some(magic) = &plan.magic {
                self.text("check");
                self.value(magic.clone());
            }
            if attrs.align.is_some() {
                self.text("align");
            }
            if let Some(w) = &attrs.when {
                // The condition decides presence: a different condition is a different layout.
                self.text(&format!("when {}", w.value.to_token_stream()));
            }
            self.wire(wire);
        }
    }

    /// Mixes in one wire form.
    pub fn wire(&mut self, wire: &Wire) {
        let krate = self.g.krate.clone();
        match wire {
            Wire::Value(ty) => self.value(quote!(<#ty as #krate::NetSerialize>::SCHEMA_HASH)),
            Wire::IntRange { ty, min, max, .. } => {
                self.text(&format!("range {}", ty.name()));
                self.int(*ty, min);
                self.int(*ty, max);
            }
            Wire::IntBits { ty, bits } => {
                self.text(&format!("bits {}", ty.name()));
                self.value(bits.clone());
            }
            Wire::Quantize {
                float,
                min,
                max,
                res,
                ..
            } => {
                self.text(match float {
                    FloatTy::F32 => "quantize f32",
                    FloatTy::F64 => "quantize f64",
                });
                for p in [min, max, res] {
                    self.value(quote!(::core::primitive::f32::to_bits(#p)));
                }
            }
            Wire::Quat { bits, .. } => {
                self.text("quat");
                self.value(bits.clone());
            }
            Wire::GlamVec { dims, elem, .. } => {
                self.text(&format!("vec{dims}"));
                self.wire(elem);
            }
            Wire::Array { len, elem, .. } => {
                self.text("[T; N]");
                self.value(quote!((#len) as u64));
                self.wire(elem);
            }
            Wire::Seq {
                kind,
                max_len,
                elem,
                ..
            } => {
                self.text(if *kind == CollectionKind::Set {
                    "set"
                } else {
                    "seq"
                });
                self.value(max_len.clone());
                self.wire(elem);
            }
            Wire::String { max_len } => {
                self.text("string");
                self.value(max_len.clone());
            }
            Wire::Option { inner } => {
                self.text("Option");
                self.wire(inner);
            }
            Wire::Map {
                max_len,
                key,
                value,
                ..
            } => {
                self.text("map");
                self.value(max_len.clone());
                self.wire(key);
                self.wire(value);
            }
            Wire::With { path, max_bits, .. } => {
                self.text(&format!(
                    "with {}",
                    path.to_token_stream().to_string().replace(' ', "")
                ));
                self.value(max_bits.clone());
            }
        }
    }
}
