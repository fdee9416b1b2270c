//! The checked model: each field paired with its resolved wire form.

use crate::internals::ast::{Container, Data, Field, Style};
use crate::internals::ctxt::Ctxt;
use crate::internals::wire::{self, Wire};

/// A field and how it goes on the wire (`None`: skipped, never sent).
pub struct FieldPlan<'a> {
    /// The field.
    pub field: &'a Field<'a>,
    /// Its wire form.
    pub wire: Option<Wire>,
    /// The serialize check's magic value (`u32`), when it has one.
    pub magic: Option<proc_macro2::TokenStream>,
    /// The associated fn evaluating its `when` condition, when it has one.
    pub when_fn: Option<syn::Ident>,
}

/// A struct body or one enum variant.
pub struct Body<'a> {
    /// The variant's name (`None` for a struct).
    pub variant: Option<&'a syn::Ident>,
    /// How the fields are written.
    pub style: Style,
    /// The fields in order.
    pub fields: Vec<FieldPlan<'a>>,
}

fn plan_fields<'a>(cx: &Ctxt, fields: &'a [Field<'a>]) -> Vec<FieldPlan<'a>> {
    fields
        .iter()
        .map(|field| FieldPlan {
            field,
            wire: if field.attrs.skip.is_some() {
                None
            } else {
                wire::resolve(cx, field)
            },
            magic: field
                .attrs
                .check
                .as_ref()
                .map(|c| crate::internals::check::user_expr(&c.value)),
            when_fn: None,
        })
        .collect()
}

/// Resolves every field; errors go to `cx`.
pub fn plan<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<Body<'a>> {
    match &cont.data {
        Data::Struct(style, fields) => vec![Body {
            variant: None,
            style: *style,
            fields: plan_fields(cx, fields),
        }],
        Data::Enum(variants) => variants
            .iter()
            .map(|v| Body {
                variant: Some(v.ident),
                style: v.style,
                fields: plan_fields(cx, &v.fields),
            })
            .collect(),
    }
}
