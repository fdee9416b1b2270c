//! The resolved wire form of each field: the field's type shape combined with its
//! attributes. Encode, decode, the size bounds and the schema hash are all generated
//! from this one tree, so the four can never disagree.

use proc_macro2::TokenStream;
use quote::{quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Expr, Type};

use super::ast::{shape, CollectionKind, Field, FloatTy, GlamTy, IntTy, Shape};
use super::attr::{QuantizeAttr, Set};
use super::check;
use super::ctxt::Ctxt;

/// How one value goes on the wire.
// A handful per field, alive for one macro call: boxing the big variants buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Wire {
    /// Through the type's own `NetSerialize` impl.
    Value(Type),
    /// An integer in `min..=max` (both expressions of the integer's type).
    IntRange {
        /// The integer type.
        ty: IntTy,
        /// Inclusive minimum, spanned at the user's tokens.
        min: TokenStream,
        /// Inclusive maximum, spanned at the user's tokens; the range's excluded end
        /// while `end_excluded` is set (a non-literal `A..B`), until `hoist` checks the
        /// range is not empty and subtracts one.
        max: TokenStream,
        /// `max` is still the excluded end of `A..B`.
        end_excluded: bool,
    },
    /// An unsigned integer in `bits` bits.
    IntBits {
        /// The integer type.
        ty: IntTy,
        /// The bit count expression (`u32`).
        bits: TokenStream,
    },
    /// A compressed float.
    Quantize {
        /// `f32` or `f64`.
        float: FloatTy,
        /// `min`, `max`, `res` as `f32` expressions.
        min: TokenStream,
        /// see `min`
        max: TokenStream,
        /// see `min`
        res: TokenStream,
        /// Out-of-range values clamp instead of failing.
        clamp: bool,
    },
    /// A smallest-three quaternion: `[f32; 4]`, or glam's `Quat` when `glam` is set.
    Quat {
        /// Bits per component (`u32` expression).
        bits: TokenStream,
        /// The glam type, converted with `to_array`/`from_array`.
        glam: Option<Type>,
    },
    /// glam's `Vec2`/`Vec3`, component by component.
    GlamVec {
        /// The field's type, for `from_array`.
        ty: Type,
        /// 2 or 3.
        dims: usize,
        /// The component encoding.
        elem: Box<Wire>,
    },
    /// `[T; N]` with an attribute reaching its elements.
    Array {
        /// `N` as written.
        len: Expr,
        /// `T`.
        elem_ty: Type,
        /// The element encoding.
        elem: Box<Wire>,
    },
    /// `Vec<T>`, `Box<[T]>` or a set: a bounded length, then the elements.
    Seq {
        /// Which collection.
        kind: CollectionKind,
        /// The field (or element) type, to build the collection.
        ty: Type,
        /// `max_len` (`usize` expression).
        max_len: TokenStream,
        /// `T`.
        elem_ty: Type,
        /// The element encoding.
        elem: Box<Wire>,
    },
    /// `String`: a bounded byte length, then the bytes.
    String {
        /// `max_len` in bytes (`usize` expression).
        max_len: TokenStream,
    },
    /// `Option<T>` with an attribute reaching `T`: a presence bit, then `T`.
    Option {
        /// The inner encoding.
        inner: Box<Wire>,
    },
    /// A map: a bounded length, then key and value pairs.
    Map {
        /// The map type, to build it.
        ty: Type,
        /// `max_len` (`usize` expression).
        max_len: TokenStream,
        /// Key type.
        key_ty: Type,
        /// Key encoding.
        key: Box<Wire>,
        /// Value type.
        value_ty: Type,
        /// Value encoding.
        value: Box<Wire>,
    },
    /// `with = path`: a hand-written unified serialize function.
    With {
        /// The field's type (`Clone` to encode, `Default` to decode into).
        ty: Type,
        /// The function.
        path: syn::Path,
        /// Upper bound of its size in bits (`u64` expression).
        max_bits: TokenStream,
    },
}

impl Wire {
    /// Whether this is the plain `NetSerialize` encoding of the type.
    pub fn is_value(&self) -> bool {
        matches!(self, Wire::Value(_))
    }
}

/// The element-wise attribute of a field: the one that applies at its leaves.
enum Leaf<'f> {
    None,
    Range(&'f Set<super::attr::RangeAttr>),
    Bits(&'f Set<Expr>),
    Quantize(&'f Set<QuantizeAttr>, bool),
    Quat(&'f Set<Expr>),
}

impl Leaf<'_> {
    fn tokens(&self) -> TokenStream {
        match self {
            Leaf::None => TokenStream::new(),
            Leaf::Range(s) => s.tokens.clone(),
            Leaf::Bits(s) | Leaf::Quat(s) => s.tokens.clone(),
            Leaf::Quantize(s, _) => s.tokens.clone(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Leaf::None => "",
            Leaf::Range(_) => "range",
            Leaf::Bits(_) => "bits",
            Leaf::Quantize(..) => "quantize",
            Leaf::Quat(_) => "quat",
        }
    }
}

struct Resolver<'c, 'f> {
    cx: &'c Ctxt,
    /// The field's whole type: a misplaced `quat` is reported against it.
    top: &'f Type,
    leaf: Leaf<'f>,
    max_len: Option<TokenStream>,
    /// A leaf or `max_len` error was reported: report it once per field.
    leaf_reported: bool,
    leaf_used: bool,
    max_len_used: bool,
    /// Resolving a map's key, which takes no attributes.
    in_key: bool,
}

/// Resolves the wire form of a field that is sent (not skipped), reporting every
/// attribute that does not fit its type. `None` when an error was reported.
pub fn resolve(cx: &Ctxt, field: &Field<'_>) -> Option<Wire> {
    let attrs = &field.attrs;
    if let Some(with) = &attrs.with {
        let max_bits = match &attrs.max_bits {
            Some(m) => {
                let v = &m.value;
                quote_spanned!(v.span()=> #v)
            }
            None => {
                cx.error_spanned_by(
                    &with.tokens,
                    "`with` needs an upper bound of the bits the function writes, so the type's worst case stays known: add `max_bits = N`",
                );
                return None;
            }
        };
        return Some(Wire::With {
            ty: field.ty.clone(),
            path: with.value.clone(),
            max_bits,
        });
    }
    // With conflicting leaf attributes check.rs has already reported; pick the first.
    let leaf = if let Some(r) = &attrs.range {
        Leaf::Range(r)
    } else if let Some(b) = &attrs.bits {
        Leaf::Bits(b)
    } else if let Some(q) = &attrs.quantize {
        Leaf::Quantize(q, q.value.clamp || attrs.clamp.is_some())
    } else if let Some(q) = &attrs.quat {
        Leaf::Quat(q)
    } else {
        Leaf::None
    };
    let max_len = attrs.max_len.as_ref().and_then(|m| check::max_len(cx, m));
    let max_len_failed = attrs.max_len.is_some() && max_len.is_none();
    let ty = &field.original.ty;
    let mut r = Resolver {
        cx,
        top: ty,
        leaf,
        max_len,
        leaf_reported: false,
        leaf_used: false,
        max_len_used: max_len_failed,
        in_key: false,
    };
    let errors_before = cx.has_errors();
    let wire = r.resolve(ty);
    if !matches!(r.leaf, Leaf::None) && !r.leaf_used && !r.leaf_reported {
        r.misfit(ty);
    }
    if let (Some(m), false) = (&attrs.max_len, r.max_len_used) {
        cx.error_spanned_by(
            &m.tokens,
            format!(
                "`max_len` applies to `Vec`, `String`, `Box<[T]>`, maps and sets (and to them inside arrays and options); `{}` has no collection to bound; remove it",
                type_name(ty)
            ),
        );
        return None;
    }
    if r.leaf_reported || (!errors_before && cx.has_errors()) {
        return None;
    }
    wire
}

/// A type as a user would write it (`[f32; 4]`, `Vec<u8>`), for messages.
pub fn type_name(ty: &Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(' ', "")
        .replace(',', ", ")
        .replace(';', "; ")
        .replace("dyn", "dyn ")
        .replace("&mut", "&mut ")
}

impl Resolver<'_, '_> {
    /// Reports the field's leaf attribute as not fitting `ty`.
    fn misfit(&mut self, ty: &Type) {
        if self.leaf_reported {
            return;
        }
        // A quaternion is a whole array: name the field's type, not its elements'.
        let ty = if matches!(self.leaf, Leaf::Quat(_)) {
            self.top
        } else {
            ty
        };
        self.leaf_reported = true;
        let name = self.leaf.name();
        let fits = match self.leaf {
            Leaf::Range(_) => "integer types",
            Leaf::Bits(_) => "unsigned integer types",
            Leaf::Quantize(..) => {
                if cfg!(feature = "glam") {
                    "f32, f64 and glam's Vec2/Vec3"
                } else {
                    "f32 and f64"
                }
            }
            Leaf::Quat(_) => {
                if cfg!(feature = "glam") {
                    "quaternions: `[f32; 4]` or glam's `Quat`"
                } else {
                    "quaternions: `[f32; 4]` as [x, y, z, w]"
                }
            }
            Leaf::None => return,
        };
        let instead = match (&self.leaf, shape(ty)) {
            (_, Shape::Int(i)) if i.signed() => "; for an integer use `range = A..=B`",
            (_, Shape::Int(_)) => "; for an integer use `range = A..=B` or `bits = N`",
            (_, Shape::Float(_)) => "; for a float use `quantize(min, max, res)`",
            (Leaf::Quat(_), _) => "; a quaternion is `[f32; 4]` in the order [x, y, z, w]",
            (Leaf::Quantize(..), Shape::Array(..)) => "",
            (_, Shape::Other) if matches!(ty, Type::Tuple(t) if !t.elems.is_empty()) => {
                "; a tuple's elements take no attributes: use a struct with annotated fields, or `with`"
            }
            (_, Shape::Other) => {
                "; a nested type is sent by its own `NetSerialize` impl, so put attributes on its fields"
            }
            _ => "",
        };
        self.cx.error_spanned_by(
            self.leaf.tokens(),
            format!(
                "`{name}` applies to {fits} (and element-wise to them inside arrays, `Vec`s, `Box<[T]>`s, sets, `Option`s and map values), not to `{}`{instead}",
                type_name(ty)
            ),
        );
    }

    fn take_max_len(&mut self, ty: &Type) -> Option<TokenStream> {
        match &self.max_len {
            Some(m) => {
                self.max_len_used = true;
                Some(m.clone())
            }
            None => {
                if !self.max_len_used {
                    self.max_len_used = true;
                    self.cx.error_spanned_by(
                        ty,
                        format!(
                            "`{}` is unbounded: a collection on the wire needs a maximum length; add `#[net(max_len = N)]`",
                            type_name(ty)
                        ),
                    );
                }
                None
            }
        }
    }

    fn resolve(&mut self, ty: &Type) -> Option<Wire> {
        match shape(ty) {
            Shape::Int(int) => match &self.leaf {
                Leaf::None if matches!(int, IntTy::Usize | IntTy::Isize) => {
                    self.leaf_reported = true;
                    let instead = if self.in_key {
                        ", and a map's key takes no attributes (`range` and `bits` apply to its values); use a fixed-width key type such as `u32`, or send the field with `with`"
                    } else if int.signed() {
                        "; add `#[net(range = A..=B)]` or use a fixed-width integer"
                    } else {
                        "; add `#[net(range = A..=B)]` or `#[net(bits = N)]` or use a fixed-width integer"
                    };
                    self.cx.error_spanned_by(
                        ty,
                        format!(
                            "`{}` has no fixed width on the wire (it depends on the platform){instead}",
                            int.name()
                        ),
                    );
                    None
                }
                Leaf::None => Some(Wire::Value(ty.clone())),
                Leaf::Range(r) => {
                    self.leaf_used = true;
                    let (min, max, end_excluded) = check::range(self.cx, r, int)?;
                    Some(Wire::IntRange {
                        ty: int,
                        min,
                        max,
                        end_excluded,
                    })
                }
                Leaf::Bits(b) => {
                    self.leaf_used = true;
                    if int.signed() {
                        self.cx.error_spanned_by(
                            &b.tokens,
                            format!(
                                "`bits` applies to unsigned integers; `{}` is signed: use `range = A..=B` to send it in fewer bits",
                                int.name()
                            ),
                        );
                        self.leaf_reported = true;
                        return None;
                    }
                    let bits = check::bits(self.cx, b, int)?;
                    Some(Wire::IntBits { ty: int, bits })
                }
                _ => {
                    self.misfit(ty);
                    None
                }
            },
            Shape::Float(float) => match &self.leaf {
                Leaf::None => Some(Wire::Value(ty.clone())),
                Leaf::Quantize(q, clamp) => {
                    self.leaf_used = true;
                    let clamp = *clamp;
                    let (min, max, res) = check::quantize(self.cx, q)?;
                    Some(Wire::Quantize {
                        float,
                        min,
                        max,
                        res,
                        clamp,
                    })
                }
                _ => {
                    self.misfit(ty);
                    None
                }
            },
            Shape::Bool => match self.leaf {
                Leaf::None => Some(Wire::Value(ty.clone())),
                _ => {
                    self.misfit(ty);
                    None
                }
            },
            Shape::String => {
                if !matches!(self.leaf, Leaf::None) {
                    self.misfit(ty);
                }
                let max_len = self.take_max_len(ty)?;
                Some(Wire::String { max_len })
            }
            Shape::Array(elem_ty, len) => {
                if let Leaf::Quat(q) = &self.leaf {
                    let is_f32 = matches!(shape(elem_ty), Shape::Float(FloatTy::F32));
                    if is_f32 && check::lit_int(len) == Some(4) {
                        self.leaf_used = true;
                        let bits = check::quat_bits(self.cx, q)?;
                        return Some(Wire::Quat { bits, glam: None });
                    }
                }
                // Arrays are always looped over here, even when their elements use their
                // own impls, so that traces and errors name each element's index.
                let elem = self.resolve(elem_ty)?;
                Some(Wire::Array {
                    len: len.clone(),
                    elem_ty: elem_ty.clone(),
                    elem: Box::new(elem),
                })
            }
            Shape::Seq(kind, elem_ty) => {
                let max_len = self.take_max_len(ty);
                let elem = self.resolve(elem_ty)?;
                Some(Wire::Seq {
                    kind,
                    ty: ty.clone(),
                    max_len: max_len?,
                    elem_ty: elem_ty.clone(),
                    elem: Box::new(elem),
                })
            }
            Shape::Option(inner_ty) => {
                let inner = self.resolve(inner_ty)?;
                if inner.is_value() {
                    return Some(Wire::Value(ty.clone()));
                }
                Some(Wire::Option {
                    inner: Box::new(inner),
                })
            }
            Shape::Map(key_ty, value_ty) => {
                let max_len = self.take_max_len(ty);
                // Element-wise attributes reach the values; keys keep their own encoding
                // (bounded by the same `max_len` if they are strings or collections).
                let leaf = core::mem::replace(&mut self.leaf, Leaf::None);
                let in_key = core::mem::replace(&mut self.in_key, true);
                let key = self.resolve(key_ty);
                self.in_key = in_key;
                self.leaf = leaf;
                let value = self.resolve(value_ty)?;
                Some(Wire::Map {
                    ty: ty.clone(),
                    max_len: max_len?,
                    key_ty: key_ty.clone(),
                    key: Box::new(key?),
                    value_ty: value_ty.clone(),
                    value: Box::new(value),
                })
            }
            Shape::Glam(glam) => match (&self.leaf, glam) {
                (Leaf::None, _) => Some(Wire::Value(ty.clone())),
                (Leaf::Quat(q), GlamTy::Quat) => {
                    self.leaf_used = true;
                    let bits = check::quat_bits(self.cx, q)?;
                    Some(Wire::Quat {
                        bits,
                        glam: Some(ty.clone()),
                    })
                }
                (Leaf::Quantize(q, clamp), GlamTy::Vec2 | GlamTy::Vec3) => {
                    self.leaf_used = true;
                    let clamp = *clamp;
                    let (min, max, res) = check::quantize(self.cx, q)?;
                    Some(Wire::GlamVec {
                        ty: ty.clone(),
                        dims: if glam == GlamTy::Vec2 { 2 } else { 3 },
                        elem: Box::new(Wire::Quantize {
                            float: FloatTy::F32,
                            min,
                            max,
                            res,
                            clamp,
                        }),
                    })
                }
                _ => {
                    self.misfit(ty);
                    None
                }
            },
            Shape::Other => match self.leaf {
                Leaf::None => Some(Wire::Value(ty.clone())),
                _ => {
                    self.misfit(ty);
                    None
                }
            },
        }
    }
}

/// The element type of a collection whose elements go through their own impl's
/// `encode_slice` / `decode_extend` (a type of the user's: a derived struct may batch
/// them), with each element's index on its trace path and error, as the loop gives.
pub fn slice_elem(elem: &Wire) -> Option<&syn::Type> {
    match elem {
        Wire::Value(ty) if matches!(shape(ty), Shape::Other) => Some(ty),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internals::ast::Container;
    use quote::quote;

    fn errors_of(input: TokenStream) -> Vec<String> {
        match resolve_first(input) {
            Ok(_) => Vec::new(),
            Err(e) => e,
        }
    }

    fn resolve_first(input: TokenStream) -> Result<Option<Wire>, Vec<String>> {
        let input: syn::DeriveInput = syn::parse2(input).unwrap();
        let cx = Ctxt::new();
        let c = Container::from_ast(&cx, &input).unwrap();
        let wire = resolve(&cx, c.all_fields().next().unwrap());
        match cx.check() {
            Ok(()) => Ok(wire),
            Err(e) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn plain_types_use_their_own_impl() {
        let wire = resolve_first(quote!(
            struct S {
                a: Option<u8>,
            }
        ))
        .unwrap();
        assert!(wire.unwrap().is_value());
        let wire = resolve_first(quote!(
            struct S {
                a: [Option<u8>; 3],
            }
        ))
        .unwrap();
        let Some(Wire::Array { elem, .. }) = wire else {
            panic!("not an array")
        };
        assert!(elem.is_value());
    }

    #[test]
    fn range_reaches_through_containers() {
        let wire = resolve_first(quote!(
            struct S {
                #[net(range = 0..=9, max_len = 4)]
                a: Vec<[Option<u8>; 2]>,
            }
        ))
        .unwrap()
        .unwrap();
        let Wire::Seq { elem, .. } = wire else {
            panic!("not a seq")
        };
        let Wire::Array { elem, .. } = *elem else {
            panic!("not an array")
        };
        let Wire::Option { inner } = *elem else {
            panic!("not an option")
        };
        assert!(matches!(*inner, Wire::IntRange { ty: IntTy::U8, .. }));
    }

    #[test]
    fn unbounded_vec_is_an_error() {
        let errors = errors_of(quote!(
            struct S {
                a: Vec<u8>,
            }
        ));
        assert!(errors[0].contains("unbounded"), "{errors:?}");
    }

    #[test]
    fn quantize_on_int_is_an_error() {
        let errors = errors_of(quote!(
            struct S {
                #[net(quantize(0.0, 1.0, 0.1))]
                a: u8,
            }
        ));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("not to `u8`"), "{errors:?}");
    }

    #[test]
    fn quat_needs_four_f32() {
        let errors = errors_of(quote!(
            struct S {
                #[net(quat(bits = 9))]
                a: [f32; 3],
            }
        ));
        assert!(
            errors[0].contains("`quat` applies to quaternions"),
            "{errors:?}"
        );
        let ok = resolve_first(quote!(
            struct S {
                #[net(quat(bits = 9))]
                a: [f32; 4],
            }
        ))
        .unwrap();
        assert!(matches!(ok, Some(Wire::Quat { glam: None, .. })));
    }
}
