//! The typed description of the input: a container with its fields, each field
//! remembering its `syn::Field` for spans, and the syntactic shape of its type.

use proc_macro2::{Ident, Span};
use syn::{Expr, GenericArgument, PathArguments, Type};

use super::attr::{self, ContainerAttrs, FieldAttrs};
use super::ctxt::Ctxt;

/// The struct or enum being derived.
pub struct Container<'a> {
    /// The type's name.
    pub ident: &'a Ident,
    /// Its generics, as written.
    pub generics: &'a syn::Generics,
    /// Container attributes.
    pub attrs: ContainerAttrs,
    /// Fields or variants.
    pub data: Data<'a>,
}

/// Struct or enum body.
pub enum Data<'a> {
    /// A struct: its style and fields.
    Struct(Style, Vec<Field<'a>>),
    /// An enum: its variants in declaration order (the order of the tags).
    Enum(Vec<Variant<'a>>),
}

/// How the fields are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `{ a: T }`
    Named,
    /// `(T)`
    Tuple,
    /// no fields
    Unit,
}

/// One enum variant.
pub struct Variant<'a> {
    /// The variant's name.
    pub ident: &'a Ident,
    /// How its fields are written.
    pub style: Style,
    /// Its fields.
    pub fields: Vec<Field<'a>>,
}

/// One field and everything said about it.
pub struct Field<'a> {
    /// `self.<member>`.
    pub member: syn::Member,
    /// The local name the field is bound to in generated code and in `when`
    /// expressions: the field's own name, or `_0`, `_1`... for tuple fields.
    pub binding: Ident,
    /// The path segment shown in errors and layouts (`health`, `0`).
    pub name: String,
    /// The field's type as written.
    pub ty: &'a Type,
    /// Its `#[net(...)]` attributes.
    pub attrs: FieldAttrs,
    /// The field as written, for spans.
    pub original: &'a syn::Field,
}

impl<'a> Container<'a> {
    /// Builds the description, reporting unions and bad attributes to `cx`.
    pub fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Container<'a>> {
        let attrs = ContainerAttrs::from_ast(cx, &input.attrs);
        let data = match &input.data {
            syn::Data::Struct(s) => {
                let (style, fields) = fields_from_ast(cx, &s.fields);
                Data::Struct(style, fields)
            }
            syn::Data::Enum(e) => {
                if e.variants.is_empty() {
                    cx.error_spanned_by(
                        &input.ident,
                        "NetSerialize cannot be derived for an enum with no variants: no value of it can ever be sent; add a variant or use `()`",
                    );
                }
                Data::Enum(
                    e.variants
                        .iter()
                        .map(|v| {
                            attr::reject_variant_attrs(cx, &v.attrs);
                            let (style, fields) = fields_from_ast(cx, &v.fields);
                            Variant {
                                ident: &v.ident,
                                style,
                                fields,
                            }
                        })
                        .collect(),
                )
            }
            syn::Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "NetSerialize cannot be derived for a union: the wire cannot tell which field is live; use an enum",
                );
                return None;
            }
        };
        Some(Container {
            ident: &input.ident,
            generics: &input.generics,
            attrs,
            data,
        })
    }

    /// Every field, of the struct or of all variants.
    #[cfg(test)]
    pub fn all_fields(&self) -> Box<dyn Iterator<Item = &Field<'a>> + '_> {
        match &self.data {
            Data::Struct(_, fields) => Box::new(fields.iter()),
            Data::Enum(variants) => Box::new(variants.iter().flat_map(|v| v.fields.iter())),
        }
    }
}

fn fields_from_ast<'a>(cx: &Ctxt, fields: &'a syn::Fields) -> (Style, Vec<Field<'a>>) {
    let style = match fields {
        syn::Fields::Named(_) => Style::Named,
        syn::Fields::Unnamed(_) => Style::Tuple,
        syn::Fields::Unit => Style::Unit,
    };
    let fields = fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let (member, binding, name) = match &field.ident {
                Some(ident) => (
                    syn::Member::Named(ident.clone()),
                    ident.clone(),
                    ident.to_string().trim_start_matches("r#").to_string(),
                ),
                None => (
                    syn::Member::Unnamed(syn::Index {
                        index: i as u32,
                        span: Span::call_site(),
                    }),
                    Ident::new(&format!("_{i}"), Span::call_site()),
                    i.to_string(),
                ),
            };
            Field {
                member,
                binding,
                name,
                ty: &field.ty,
                attrs: FieldAttrs::from_ast(cx, &field.attrs),
                original: field,
            }
        })
        .collect();
    (style, fields)
}

/// An integer primitive.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntTy {
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `u128`
    U128,
    /// `usize` (sent as 64 bits at most)
    Usize,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `i128`
    I128,
    /// `isize`
    Isize,
}

impl IntTy {
    fn from_ident(name: &str) -> Option<IntTy> {
        Some(match name {
            "u8" => IntTy::U8,
            "u16" => IntTy::U16,
            "u32" => IntTy::U32,
            "u64" => IntTy::U64,
            "u128" => IntTy::U128,
            "usize" => IntTy::Usize,
            "i8" => IntTy::I8,
            "i16" => IntTy::I16,
            "i32" => IntTy::I32,
            "i64" => IntTy::I64,
            "i128" => IntTy::I128,
            "isize" => IntTy::Isize,
            _ => return None,
        })
    }

    /// The type's name.
    pub fn name(self) -> &'static str {
        match self {
            IntTy::U8 => "u8",
            IntTy::U16 => "u16",
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::U128 => "u128",
            IntTy::Usize => "usize",
            IntTy::I8 => "i8",
            IntTy::I16 => "i16",
            IntTy::I32 => "i32",
            IntTy::I64 => "i64",
            IntTy::I128 => "i128",
            IntTy::Isize => "isize",
        }
    }

    /// Width in bits (usize and isize count as 64: the wire does not depend on the host).
    pub fn width(self) -> u32 {
        match self {
            IntTy::U8 | IntTy::I8 => 8,
            IntTy::U16 | IntTy::I16 => 16,
            IntTy::U32 | IntTy::I32 => 32,
            IntTy::U64 | IntTy::I64 | IntTy::Usize | IntTy::Isize => 64,
            IntTy::U128 | IntTy::I128 => 128,
        }
    }

    /// Whether the type is signed.
    pub fn signed(self) -> bool {
        matches!(
            self,
            IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::I64 | IntTy::I128 | IntTy::Isize
        )
    }

    /// Smallest and largest value, when they fit an `i128` (all but `u128::MAX`).
    pub fn bounds(self) -> (i128, Option<i128>) {
        let w = self.width();
        if self.signed() {
            let max = if w == 128 {
                i128::MAX
            } else {
                (1i128 << (w - 1)) - 1
            };
            (-max - 1, Some(max))
        } else if w == 128 {
            (0, None)
        } else {
            (0, Some((1i128 << w) - 1))
        }
    }
}

/// `f32` or `f64`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FloatTy {
    /// `f32`
    F32,
    /// `f64`
    F64,
}

/// glam types that attributes can reach inside.
#[cfg_attr(not(feature = "glam"), allow(dead_code))]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GlamTy {
    /// `Vec2`: two f32 components.
    Vec2,
    /// `Vec3`: three f32 components.
    Vec3,
    /// `Quat`: a unit quaternion.
    Quat,
}

/// Which map or set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CollectionKind {
    /// `Vec<T>`
    Vec,
    /// `Box<[T]>`
    BoxSlice,
    /// `HashSet<T>` / `BTreeSet<T>`
    Set,
}

/// The syntactic shape of a field type: what the derive knows how to look inside.
pub enum Shape<'a> {
    /// An integer primitive.
    Int(IntTy),
    /// `f32` / `f64`.
    Float(FloatTy),
    /// `bool`
    Bool,
    /// `String`
    String,
    /// `[T; N]`
    Array(&'a Type, &'a Expr),
    /// `Vec<T>`, `Box<[T]>`, sets.
    Seq(CollectionKind, &'a Type),
    /// `Option<T>`
    Option(&'a Type),
    /// `HashMap<K, V>` / `BTreeMap<K, V>`
    Map(&'a Type, &'a Type),
    /// glam's `Vec2`, `Vec3`, `Quat` (with the `glam` feature).
    #[cfg_attr(not(feature = "glam"), allow(dead_code))]
    Glam(GlamTy),
    /// Anything else: a type with its own `NetSerialize` impl.
    Other,
}

fn type_args(args: &PathArguments) -> Vec<&Type> {
    match args {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A `BTreeMap` / `BTreeSet` (by the last path segment, as the shape is classified).
pub fn is_btree(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "BTreeMap" || s.ident == "BTreeSet"),
        _ => false,
    }
}

/// Classifies a type by its syntax (the derive cannot see through type aliases).
pub fn shape(ty: &Type) -> Shape<'_> {
    match ty {
        Type::Group(g) => shape(&g.elem),
        Type::Paren(p) => shape(&p.elem),
        Type::Array(a) => Shape::Array(&a.elem, &a.len),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return Shape::Other;
            };
            let name = last.ident.to_string();
            let args = type_args(&last.arguments);
            if p.path.segments.len() == 1 && args.is_empty() {
                if let Some(int) = IntTy::from_ident(&name) {
                    return Shape::Int(int);
                }
                match name.as_str() {
                    "f32" => return Shape::Float(FloatTy::F32),
                    "f64" => return Shape::Float(FloatTy::F64),
                    "bool" => return Shape::Bool,
                    _ => {}
                }
            }
            match (name.as_str(), args.as_slice()) {
                ("String", []) => Shape::String,
                ("Vec", [t]) => Shape::Seq(CollectionKind::Vec, t),
                ("Option", [t]) => Shape::Option(t),
                ("HashSet" | "BTreeSet", [t, ..]) => Shape::Seq(CollectionKind::Set, t),
                ("HashMap" | "BTreeMap", [k, v, ..]) => Shape::Map(k, v),
                ("Box", [Type::Slice(s)]) => Shape::Seq(CollectionKind::BoxSlice, &s.elem),
                #[cfg(feature = "glam")]
                ("Vec2", []) => Shape::Glam(GlamTy::Vec2),
                #[cfg(feature = "glam")]
                ("Vec3", []) => Shape::Glam(GlamTy::Vec3),
                #[cfg(feature = "glam")]
                ("Quat", []) => Shape::Glam(GlamTy::Quat),
                _ => Shape::Other,
            }
        }
        _ => Shape::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(ty: &str) -> &'static str {
        let ty: Type = syn::parse_str(ty).unwrap();
        match shape(&ty) {
            Shape::Int(_) => "int",
            Shape::Float(_) => "float",
            Shape::Bool => "bool",
            Shape::String => "string",
            Shape::Array(..) => "array",
            Shape::Seq(CollectionKind::Vec, _) => "vec",
            Shape::Seq(CollectionKind::BoxSlice, _) => "box slice",
            Shape::Seq(CollectionKind::Set, _) => "set",
            Shape::Option(_) => "option",
            Shape::Map(..) => "map",
            Shape::Glam(_) => "glam",
            Shape::Other => "other",
        }
    }

    #[test]
    fn classifies_by_syntax() {
        assert_eq!(classify("u16"), "int");
        assert_eq!(classify("f64"), "float");
        assert_eq!(classify("[f32; 4]"), "array");
        assert_eq!(classify("std::vec::Vec<u8>"), "vec");
        assert_eq!(classify("Box<[u8]>"), "box slice");
        assert_eq!(classify("Box<u8>"), "other");
        assert_eq!(classify("BTreeMap<u8, String>"), "map");
        assert_eq!(classify("HashSet<u8>"), "set");
        assert_eq!(classify("Option<u8>"), "option");
        assert_eq!(classify("my::u8"), "other");
        assert_eq!(classify("Player<T>"), "other");
    }

    #[test]
    fn int_bounds() {
        assert_eq!(IntTy::I8.bounds(), (-128, Some(127)));
        assert_eq!(IntTy::U16.bounds(), (0, Some(65535)));
        assert_eq!(IntTy::U128.bounds(), (0, None));
        assert_eq!(IntTy::I128.bounds().0, i128::MIN);
    }
}
