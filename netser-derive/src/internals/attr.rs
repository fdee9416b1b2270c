//! `#[net(...)]` attributes parsed into typed values.
//!
//! Each key keeps the tokens it was written with, so a later error (a duplicate, a
//! conflict, a key on a type it does not fit) underlines exactly what the user wrote.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Expr, Meta, Token};

use super::ctxt::Ctxt;

/// Every key accepted on a field (or an enum variant's field).
pub const FIELD_KEYS: &[&str] = &[
    "range", "bits", "quantize", "clamp", "quat", "align", "max_len", "skip", "default", "with",
    "max_bits", "when", "check", "absolute",
];

/// Every key accepted on the struct or enum itself.
pub const CONTAINER_KEYS: &[&str] = &["max_bytes", "crate", "delta"];

/// One attribute value, with the key and the whole `key = value` tokens for spans.
pub struct Set<T> {
    /// `key = value` or `key(...)` as written.
    pub tokens: TokenStream,
    /// The typed value.
    pub value: T,
}

/// A slot for one key: reports a second use of the key at that second use.
pub struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    set: Option<Set<T>>,
}

impl<'c, T> Attr<'c, T> {
    fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr {
            cx,
            name,
            set: None,
        }
    }

    fn set(&mut self, meta: &Meta, value: T) {
        if self.set.is_some() {
            self.cx.error_spanned_by(
                meta.path(),
                format!(
                    "duplicate `net` attribute `{}`; keep only one of them",
                    self.name
                ),
            );
        } else {
            self.set = Some(Set {
                tokens: meta.to_token_stream(),
                value,
            });
        }
    }

    fn get(self) -> Option<Set<T>> {
        self.set
    }
}

/// `range = A..=B` or `range = A..B`, both bounds required.
pub struct RangeAttr {
    /// Lower bound as written.
    pub start: Expr,
    /// Upper bound as written.
    pub end: Expr,
    /// `..=` (true) or `..` (false).
    pub inclusive: bool,
}

/// `quantize(min, max, res)`, positional or named, optionally with `clamp` inside.
pub struct QuantizeAttr {
    /// Lowest value.
    pub min: Expr,
    /// Highest value.
    pub max: Expr,
    /// Resolution: the step between two representable values.
    pub res: Expr,
    /// `clamp` written inside the parentheses.
    pub clamp: bool,
}

/// What a skipped or absent field decodes to.
pub enum DefaultAttr {
    /// Bare `default`: `Default::default()`.
    Trait,
    /// `default = expr`.
    Expr(Expr),
}

/// Every `#[net(...)]` key that can appear on a field.
pub struct FieldAttrs {
    /// `range = A..=B`
    pub range: Option<Set<RangeAttr>>,
    /// `bits = N`
    pub bits: Option<Set<Expr>>,
    /// `quantize(min, max, res)`
    pub quantize: Option<Set<QuantizeAttr>>,
    /// `clamp`
    pub clamp: Option<Set<()>>,
    /// `quat(bits = N)`: the bits per smallest-three component.
    pub quat: Option<Set<Expr>>,
    /// `align`
    pub align: Option<Set<()>>,
    /// `max_len = N`
    pub max_len: Option<Set<Expr>>,
    /// `skip`
    pub skip: Option<Set<()>>,
    /// `default` or `default = expr`
    pub default: Option<Set<DefaultAttr>>,
    /// `with = path`
    pub with: Option<Set<syn::Path>>,
    /// `max_bits = N` (for `with`)
    pub max_bits: Option<Set<Expr>>,
    /// `when = expr`
    pub when: Option<Set<Expr>>,
    /// `check = 0x...`
    pub check: Option<Set<Expr>>,
    /// `absolute`: in a delta type, sent whole whenever it changed.
    pub absolute: Option<Set<()>>,
}

/// Every `#[net(...)]` key that can appear on the struct or enum.
pub struct ContainerAttrs {
    /// `max_bytes = N`
    pub max_bytes: Option<Set<Expr>>,
    /// `crate = "path"`
    pub crate_path: Option<Set<syn::Path>>,
    /// `delta`: also implement `NetDelta`.
    pub delta: Option<Set<()>>,
}

/// The `#[net(...)]` lists among `attrs`, each split into its `key = value` items.
/// A list that is not valid syntax is reported and skipped.
fn net_metas(cx: &Ctxt, attrs: &[syn::Attribute]) -> Vec<Meta> {
    let mut metas = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("net") {
            continue;
        }
        match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(list) => metas.extend(list),
            Err(err) => cx.syn_error(err),
        }
    }
    metas
}

fn key_of(meta: &Meta) -> String {
    meta.path()
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_else(|| meta.path().to_token_stream().to_string().replace(' ', ""))
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `key` without underscores or dashes, lowercase: `Max_Length` and `maxlength` compare equal.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// How far `unknown` is from the known key `k`, when it is close enough to be a typo
/// or a spelled-out form (`max_length` for `max_len`, `quantization` for `quantize`).
fn closeness(unknown: &str, k: &str) -> Option<usize> {
    let d = edit_distance(unknown, k);
    if d <= 2.max(k.len() / 3) && d < k.len() {
        return Some(d);
    }
    // A longer spelling that starts with the key, or with all but the key's last letter
    // (`quantization` for `quantize`): ranked after the typos.
    let (u, n) = (normalized(unknown), normalized(k));
    let stem = &n[..n.len() - 1];
    (n.len() >= 4
        && (u.starts_with(&n) || u.starts_with(stem) || n.starts_with(&u) && u.len() >= 4))
        .then_some(d + 8)
}

/// The closest known key, when it is close enough to be a typo.
pub fn suggest(unknown: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .filter_map(|k| closeness(unknown, k).map(|d| (d, *k)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn unknown_key(cx: &Ctxt, meta: &Meta, key: &str, known: &[&'static str], other: &[&str]) {
    let mut msg = format!("unknown `net` attribute `{key}`");
    if other.contains(&key) {
        if known == CONTAINER_KEYS {
            msg = format!(
                "`{key}` is a field attribute; put it on a field, not on the struct or enum"
            );
        } else {
            msg = format!(
                "`{key}` is a container attribute; put it on the struct or enum, not on a field"
            );
        }
    } else if let Some(s) = suggest(key, known) {
        msg.push_str(&format!("; did you mean `{s}`?"));
    } else {
        msg.push_str(&format!("; expected one of: {}", known.join(", ")));
    }
    cx.error_spanned_by(meta.path(), msg);
}

fn expect_path(cx: &Ctxt, meta: &Meta, example: &str) -> bool {
    match meta {
        Meta::Path(_) => true,
        _ => {
            cx.error_spanned_by(
                meta,
                format!(
                    "`{}` takes no value; write `#[net({example})]`",
                    key_of(meta)
                ),
            );
            false
        }
    }
}

fn expect_value<'m>(cx: &Ctxt, meta: &'m Meta, example: &str) -> Option<&'m Expr> {
    match meta {
        Meta::NameValue(nv) => Some(&nv.value),
        _ => {
            cx.error_spanned_by(
                meta,
                format!(
                    "`{}` needs a value; write `#[net({example})]`",
                    key_of(meta)
                ),
            );
            None
        }
    }
}

fn strip_parens(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(p) => strip_parens(&p.expr),
        Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

fn parse_range(cx: &Ctxt, meta: &Meta) -> Option<RangeAttr> {
    let value = expect_value(cx, meta, "range = 0..=100")?;
    let Expr::Range(r) = strip_parens(value) else {
        cx.error_spanned_by(
            value,
            "`range` expects a range such as `0..=100` or `-8..8`",
        );
        return None;
    };
    let (Some(start), Some(end)) = (&r.start, &r.end) else {
        cx.error_spanned_by(
            r,
            "`range` needs both bounds, such as `0..=100`: the wire needs a lowest and a highest value",
        );
        return None;
    };
    Some(RangeAttr {
        start: (**start).clone(),
        end: (**end).clone(),
        inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
    })
}

fn parse_quantize(cx: &Ctxt, meta: &Meta) -> Option<QuantizeAttr> {
    let Meta::List(list) = meta else {
        cx.error_spanned_by(
            meta,
            "`quantize` needs its parameters: write `quantize(min = -1.0, max = 1.0, res = 0.01)` or `quantize(-1.0, 1.0, 0.01)`",
        );
        return None;
    };
    let items = match list.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
        Ok(items) => items,
        Err(err) => {
            cx.syn_error(err);
            return None;
        }
    };
    let names = ["min", "max", "res"];
    let mut slots: [Option<Expr>; 3] = [None, None, None];
    let mut clamp = false;
    let mut ok = true;
    for item in items {
        match &item {
            Expr::Assign(assign) => {
                let name = match &*assign.left {
                    Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                    _ => None,
                };
                match name
                    .as_deref()
                    .and_then(|n| names.iter().position(|k| *k == n))
                {
                    Some(index) if slots[index].is_none() => {
                        slots[index] = Some((*assign.right).clone())
                    }
                    Some(index) => {
                        cx.error_spanned_by(
                            &assign.left,
                            format!("duplicate quantize parameter `{}`", names[index]),
                        );
                        ok = false;
                    }
                    None => {
                        let written = assign.left.to_token_stream().to_string();
                        let hint = suggest(&written, &["min", "max", "res"])
                            .map(|s| format!("; did you mean `{s}`?"))
                            .unwrap_or_else(|| "; expected `min`, `max` or `res`".into());
                        cx.error_spanned_by(
                            &assign.left,
                            format!("unknown quantize parameter `{written}`{hint}"),
                        );
                        ok = false;
                    }
                }
            }
            Expr::Path(p) if p.path.is_ident("clamp") => clamp = true,
            _ => {
                // Positional parameters fill the slots not named, in the order min, max, res.
                match slots.iter().position(|s| s.is_none()) {
                    Some(index) => slots[index] = Some(item.clone()),
                    None => {
                        cx.error_spanned_by(
                            &item,
                            "too many quantize parameters; expected `quantize(min, max, res)`",
                        );
                        ok = false;
                    }
                }
            }
        }
    }
    let [min, max, res] = slots;
    match (min, max, res) {
        (Some(min), Some(max), Some(res)) if ok => Some(QuantizeAttr {
            min,
            max,
            res,
            clamp,
        }),
        (min, max, res) => {
            if ok {
                let missing: Vec<&str> = [min.is_none(), max.is_none(), res.is_none()]
                    .iter()
                    .zip(names)
                    .filter(|(m, _)| **m)
                    .map(|(_, n)| n)
                    .collect();
                cx.error_spanned_by(
                    meta,
                    format!(
                        "`quantize` is missing {}; write `quantize(min = -1.0, max = 1.0, res = 0.01)`",
                        missing.join(" and ")
                    ),
                );
            }
            None
        }
    }
}

fn parse_quat(cx: &Ctxt, meta: &Meta) -> Option<Expr> {
    let Meta::List(list) = meta else {
        cx.error_spanned_by(
            meta,
            "`quat` needs the bits per component: write `quat(bits = 9)`",
        );
        return None;
    };
    let items = match list.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
        Ok(items) => items,
        Err(err) => {
            cx.syn_error(err);
            return None;
        }
    };
    let mut bits = None;
    for item in items {
        let value = match &item {
            Expr::Assign(a) if matches!(&*a.left, Expr::Path(p) if p.path.is_ident("bits")) => {
                (*a.right).clone()
            }
            Expr::Assign(a) => {
                cx.error_spanned_by(&a.left, "unknown quat parameter; expected `quat(bits = N)`");
                continue;
            }
            other => other.clone(),
        };
        if bits.is_some() {
            cx.error_spanned_by(&item, "`quat` takes one parameter: `quat(bits = N)`");
        } else {
            bits = Some(value);
        }
    }
    if bits.is_none() {
        cx.error_spanned_by(
            meta,
            "`quat` needs the bits per component: write `quat(bits = 9)`",
        );
    }
    bits
}

impl FieldAttrs {
    /// Parses every `#[net(...)]` key of a field; errors go to `cx`.
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> FieldAttrs {
        let mut range = Attr::none(cx, "range");
        let mut bits = Attr::none(cx, "bits");
        let mut quantize = Attr::none(cx, "quantize");
        let mut clamp = Attr::none(cx, "clamp");
        let mut quat = Attr::none(cx, "quat");
        let mut align = Attr::none(cx, "align");
        let mut max_len = Attr::none(cx, "max_len");
        let mut skip = Attr::none(cx, "skip");
        let mut default = Attr::none(cx, "default");
        let mut with = Attr::none(cx, "with");
        let mut max_bits = Attr::none(cx, "max_bits");
        let mut when = Attr::none(cx, "when");
        let mut check = Attr::none(cx, "check");
        let mut absolute = Attr::none(cx, "absolute");
        for meta in net_metas(cx, attrs) {
            match key_of(&meta).as_str() {
                "range" => {
                    if let Some(v) = parse_range(cx, &meta) {
                        range.set(&meta, v)
                    }
                }
                "bits" => {
                    if let Some(v) = expect_value(cx, &meta, "bits = 7") {
                        bits.set(&meta, v.clone())
                    }
                }
                "quantize" => {
                    if let Some(v) = parse_quantize(cx, &meta) {
                        quantize.set(&meta, v)
                    }
                }
                "clamp" => {
                    if expect_path(cx, &meta, "clamp") {
                        clamp.set(&meta, ())
                    }
                }
                "quat" => {
                    if let Some(v) = parse_quat(cx, &meta) {
                        quat.set(&meta, v)
                    }
                }
                "align" => {
                    if expect_path(cx, &meta, "align") {
                        align.set(&meta, ())
                    }
                }
                "max_len" => {
                    if let Some(v) = expect_value(cx, &meta, "max_len = 32") {
                        max_len.set(&meta, v.clone())
                    }
                }
                "skip" => {
                    if expect_path(cx, &meta, "skip") {
                        skip.set(&meta, ())
                    }
                }
                "default" => match &meta {
                    Meta::Path(_) => default.set(&meta, DefaultAttr::Trait),
                    Meta::NameValue(nv) => default.set(&meta, DefaultAttr::Expr(nv.value.clone())),
                    Meta::List(_) => cx.error_spanned_by(
                        &meta,
                        "write `default` (uses `Default::default()`) or `default = expr`",
                    ),
                },
                "with" => {
                    if let Some(v) = expect_value(cx, &meta, "with = path::to::serialize_fn") {
                        match strip_parens(v) {
                            Expr::Path(p) => with.set(&meta, p.path.clone()),
                            other => cx.error_spanned_by(
                                other,
                                "`with` expects the path of a function, such as `with = my_mod::serialize_health`",
                            ),
                        }
                    }
                }
                "max_bits" => {
                    if let Some(v) = expect_value(cx, &meta, "max_bits = 40") {
                        max_bits.set(&meta, v.clone())
                    }
                }
                "when" => {
                    if let Some(v) = expect_value(cx, &meta, "when = !at_rest") {
                        when.set(&meta, v.clone())
                    }
                }
                "check" => {
                    if let Some(v) = expect_value(cx, &meta, "check = 0x12345678") {
                        check.set(&meta, v.clone())
                    }
                }
                "absolute" => {
                    if expect_path(cx, &meta, "absolute") {
                        absolute.set(&meta, ())
                    }
                }
                other => unknown_key(cx, &meta, other, FIELD_KEYS, CONTAINER_KEYS),
            }
        }
        FieldAttrs {
            range: range.get(),
            bits: bits.get(),
            quantize: quantize.get(),
            clamp: clamp.get(),
            quat: quat.get(),
            align: align.get(),
            max_len: max_len.get(),
            skip: skip.get(),
            default: default.get(),
            with: with.get(),
            max_bits: max_bits.get(),
            when: when.get(),
            check: check.get(),
            absolute: absolute.get(),
        }
    }
}

impl ContainerAttrs {
    /// Parses every `#[net(...)]` key of the struct or enum; errors go to `cx`.
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> ContainerAttrs {
        let mut max_bytes = Attr::none(cx, "max_bytes");
        let mut crate_path = Attr::none(cx, "crate");
        let mut delta = Attr::none(cx, "delta");
        for meta in net_metas(cx, attrs) {
            match key_of(&meta).as_str() {
                "max_bytes" => {
                    if let Some(v) = expect_value(cx, &meta, "max_bytes = 1200") {
                        max_bytes.set(&meta, v.clone())
                    }
                }
                "crate" => {
                    if let Some(v) = expect_value(cx, &meta, "crate = \"my_crate::netser\"") {
                        let parsed = match strip_parens(v) {
                            Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => s.parse::<syn::Path>().ok(),
                            _ => None,
                        };
                        match parsed {
                            Some(path) => crate_path.set(&meta, path),
                            None => cx.error_spanned_by(
                                v,
                                "`crate` expects a path in a string, such as `crate = \"my_crate::netser\"`",
                            ),
                        }
                    }
                }
                "delta" => {
                    if expect_path(cx, &meta, "delta") {
                        delta.set(&meta, ())
                    }
                }
                other => unknown_key(cx, &meta, other, CONTAINER_KEYS, FIELD_KEYS),
            }
        }
        ContainerAttrs {
            max_bytes: max_bytes.get(),
            crate_path: crate_path.get(),
            delta: delta.get(),
        }
    }
}

/// Reports any `#[net(...)]` on an enum variant itself: none are defined there.
pub fn reject_variant_attrs(cx: &Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs {
        if attr.path().is_ident("net") {
            cx.error_spanned_by(
                attr,
                "`net` attributes go on the enum or on a variant's fields, not on the variant itself",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(attrs: TokenStream) -> (FieldAttrs, Vec<String>) {
        let item: syn::Field = syn::parse::Parser::parse2(syn::Field::parse_named, attrs).unwrap();
        let cx = Ctxt::new();
        let parsed = FieldAttrs::from_ast(&cx, &item.attrs);
        let errors = match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (parsed, errors)
    }

    #[test]
    fn suggests_close_keys_only() {
        assert_eq!(suggest("quantise", FIELD_KEYS), Some("quantize"));
        assert_eq!(suggest("rnage", FIELD_KEYS), Some("range"));
        assert_eq!(suggest("maxlen", FIELD_KEYS), Some("max_len"));
        assert_eq!(suggest("zzzzzzzz", FIELD_KEYS), None);
        assert_eq!(suggest("max", FIELD_KEYS), None);
    }

    #[test]
    fn suggests_the_key_a_longer_spelling_starts_with() {
        assert_eq!(suggest("max_length", FIELD_KEYS), Some("max_len"));
        assert_eq!(suggest("maxLength", FIELD_KEYS), Some("max_len"));
        assert_eq!(suggest("quantization", FIELD_KEYS), Some("quantize"));
        assert_eq!(suggest("aligned", FIELD_KEYS), Some("align"));
        assert_eq!(suggest("max_byte_count", CONTAINER_KEYS), Some("max_bytes"));
        assert_eq!(suggest("skipped", FIELD_KEYS), Some("skip"));
    }

    #[test]
    fn parses_range_and_quantize() {
        let (attrs, errors) = field(quote::quote! {
            #[net(range = -5..10, quantize(min = -1.0, 1.0, res = 0.5, clamp))] x: i8
        });
        assert!(errors.is_empty(), "{errors:?}");
        let range = attrs.range.unwrap().value;
        assert!(!range.inclusive);
        let q = attrs.quantize.unwrap().value;
        assert!(q.clamp);
        assert_eq!(q.max.to_token_stream().to_string(), "1.0");
    }

    #[test]
    fn reports_every_error_of_a_field() {
        let (_, errors) = field(quote::quote! {
            #[net(rnage = 0..=1, bits = 3, bits = 4, quantize(1.0))] x: u8
        });
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("did you mean `range`"));
        assert!(errors[1].contains("duplicate `net` attribute `bits`"));
        assert!(errors[2].contains("missing max and res"));
    }

    #[test]
    fn parses_absolute_and_refuses_a_value() {
        let (attrs, errors) = field(quote::quote! { #[net(absolute)] x: u8 });
        assert!(errors.is_empty() && attrs.absolute.is_some(), "{errors:?}");
        let (_, errors) = field(quote::quote! { #[net(absolute = true)] x: u8 });
        assert!(errors[0].contains("takes no value"), "{errors:?}");
        let (_, errors) = field(quote::quote! { #[net(absolut)] x: u8 });
        assert!(errors[0].contains("did you mean `absolute`"), "{errors:?}");
        let (_, errors) = field(quote::quote! { #[net(delta)] x: u8 });
        assert!(errors[0].contains("container attribute"), "{errors:?}");
    }

    #[test]
    fn container_key_on_field_says_where_it_goes() {
        let (_, errors) = field(quote::quote! { #[net(max_bytes = 4)] x: u8 });
        assert!(errors[0].contains("container attribute"), "{errors:?}");
    }
}
