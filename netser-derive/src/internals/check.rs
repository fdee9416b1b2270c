//! One function per rule a schema must follow. Each reports to the [`Ctxt`] and
//! carries on, so every mistake of a type is reported in the same compile.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Expr;

use super::ast::{Container, Data, Field, IntTy};
use super::attr::{QuantizeAttr, RangeAttr, Set};
use super::ctxt::Ctxt;

/// The largest `delta / res` that fits a 32-bit integer in float32 (as the runtime).
const MAX_QUANTIZE_VALUES: f32 = 4_294_967_040.0;

/// Runs every container-level and cross-attribute rule.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_max_bytes(cx, cont);
    check_absolute_needs_delta(cx, cont);
    match &cont.data {
        Data::Struct(_, fields) => check_fields(cx, fields),
        Data::Enum(variants) => {
            for v in variants {
                check_fields(cx, &v.fields)
            }
        }
    }
}

fn check_fields(cx: &Ctxt, fields: &[Field<'_>]) {
    for field in fields {
        check_one_size_attribute(cx, field);
        check_skip_sends_nothing(cx, field);
        check_with_encodes_itself(cx, field);
        check_default_needs_absence(cx, field);
        check_clamp_needs_quantize(cx, field);
        check_max_bits_needs_with(cx, field);
        check_magic_fits_u32(cx, field);
    }
    check_when_has_earlier_field(cx, fields);
    check_when_tests_earlier_fields(cx, fields);
}

/// `absolute` says how a field goes in a delta: only a `#[net(delta)]` type has one, and
/// a skipped field is never sent at all.
fn check_absolute_needs_delta(cx: &Ctxt, cont: &Container<'_>) {
    let fields: Vec<&Field<'_>> = match &cont.data {
        Data::Struct(_, fields) => fields.iter().collect(),
        Data::Enum(variants) => variants.iter().flat_map(|v| &v.fields).collect(),
    };
    for field in fields {
        let Some(absolute) = &field.attrs.absolute else {
            continue;
        };
        if cont.attrs.delta.is_none() {
            cx.error_spanned_by(
                &absolute.tokens,
                format!(
                    "`absolute` says how a field goes in a delta encoding, which `{}` does not have; add `#[net(delta)]` to the type, or remove `absolute`",
                    cont.ident
                ),
            );
        } else if field.attrs.skip.is_some() {
            cx.error_spanned_by(
                &absolute.tokens,
                "`absolute` conflicts with `skip`: a skipped field is never sent; keep one of them",
            );
        }
    }
}

/// `max_bytes = 0` can never hold; a negative or non-integer literal is a typo.
fn check_max_bytes(cx: &Ctxt, cont: &Container<'_>) {
    if let Some(m) = &cont.attrs.max_bytes {
        if let Some(v) = lit_int(&m.value) {
            if v <= 0 {
                cx.error_spanned_by(
                    &m.value,
                    "`max_bytes` must be at least 1; a packet budget is typically 1200",
                );
            }
        }
    }
}

/// `range`, `bits`, `quantize` and `quat` each decide the size of the same value:
/// at most one can apply. Reported at the second one.
fn check_one_size_attribute(cx: &Ctxt, field: &Field<'_>) {
    let a = &field.attrs;
    let present: Vec<(&str, &TokenStream)> = [
        ("range", a.range.as_ref().map(|s| &s.tokens)),
        ("bits", a.bits.as_ref().map(|s| &s.tokens)),
        ("quantize", a.quantize.as_ref().map(|s| &s.tokens)),
        ("quat", a.quat.as_ref().map(|s| &s.tokens)),
    ]
    .into_iter()
    .filter_map(|(n, t)| t.map(|t| (n, t)))
    .collect();
    if let [(first, _), rest @ ..] = present.as_slice() {
        for (name, tokens) in rest {
            let how = if (*first, *name) == ("range", "bits") {
                "both set how many bits the integer takes; keep `range = A..=B` (it also checks the bounds) or `bits = N`".to_string()
            } else {
                format!(
                    "both set how the value is encoded; keep only one of `{first}` and `{name}`"
                )
            };
            cx.error_spanned_by(*tokens, format!("`{name}` conflicts with `{first}`: {how}"));
        }
    }
}

/// A skipped field is not on the wire, so attributes about its encoding mean nothing.
fn check_skip_sends_nothing(cx: &Ctxt, field: &Field<'_>) {
    let a = &field.attrs;
    if a.skip.is_none() {
        return;
    }
    for (name, tokens) in encoding_attrs(field)
        .into_iter()
        .chain(a.when.as_ref().map(|s| ("when", &s.tokens)))
    {
        cx.error_spanned_by(
            tokens,
            format!("`{name}` conflicts with `skip`: a skipped field is never sent; remove `{name}` or `skip`"),
        );
    }
}

fn encoding_attrs<'f>(field: &'f Field<'_>) -> Vec<(&'static str, &'f TokenStream)> {
    let a = &field.attrs;
    [
        ("range", a.range.as_ref().map(|s| &s.tokens)),
        ("bits", a.bits.as_ref().map(|s| &s.tokens)),
        ("quantize", a.quantize.as_ref().map(|s| &s.tokens)),
        ("quat", a.quat.as_ref().map(|s| &s.tokens)),
        ("clamp", a.clamp.as_ref().map(|s| &s.tokens)),
        ("max_len", a.max_len.as_ref().map(|s| &s.tokens)),
        ("with", a.with.as_ref().map(|s| &s.tokens)),
        ("align", a.align.as_ref().map(|s| &s.tokens)),
        ("check", a.check.as_ref().map(|s| &s.tokens)),
    ]
    .into_iter()
    .filter_map(|(n, t)| t.map(|t| (n, t)))
    .collect()
}

/// `with` hands the whole field to a function: size attributes would be ignored.
fn check_with_encodes_itself(cx: &Ctxt, field: &Field<'_>) {
    if field.attrs.with.is_none() || field.attrs.skip.is_some() {
        return;
    }
    for (name, tokens) in encoding_attrs(field) {
        if matches!(
            name,
            "range" | "bits" | "quantize" | "quat" | "clamp" | "max_len"
        ) {
            cx.error_spanned_by(
                tokens,
                format!("`{name}` conflicts with `with`: the `with` function encodes the field itself; apply the bound inside it"),
            );
        }
    }
}

/// `default` says what an absent field decodes to: only skipped and `when` fields are absent.
fn check_default_needs_absence(cx: &Ctxt, field: &Field<'_>) {
    let a = &field.attrs;
    if let Some(d) = &a.default {
        if a.skip.is_none() && a.when.is_none() {
            cx.error_spanned_by(
                &d.tokens,
                "`default` applies only to fields that can be absent: add `skip` or `when = ...`, or remove `default`",
            );
        }
    }
}

/// `clamp` changes how a quantized float handles out-of-range values.
fn check_clamp_needs_quantize(cx: &Ctxt, field: &Field<'_>) {
    let a = &field.attrs;
    if let Some(c) = &a.clamp {
        if a.quantize.is_none() {
            cx.error_spanned_by(
                &c.tokens,
                "`clamp` applies to quantized floats: add `quantize(min, max, res)` or remove `clamp`",
            );
        }
    }
}

/// `max_bits` bounds what a `with` function writes; alone it would be ignored.
fn check_max_bits_needs_with(cx: &Ctxt, field: &Field<'_>) {
    let a = &field.attrs;
    if let Some(m) = &a.max_bits {
        if a.with.is_none() {
            cx.error_spanned_by(
                &m.tokens,
                "`max_bits` bounds a `with` function's output: add `with = path` or remove `max_bits`",
            );
        }
    }
}

/// The serialize check is a 32-bit magic value.
fn check_magic_fits_u32(cx: &Ctxt, field: &Field<'_>) {
    if let Some(c) = &field.attrs.check {
        if let Some(v) = lit_int(&c.value) {
            if !(0..=u32::MAX as i128).contains(&v) {
                cx.error_spanned_by(
                    &c.value,
                    "`check` takes a 32-bit magic value such as `check = 0x5EC7_10A1`",
                );
            }
        }
    }
}

/// `when` tests fields decoded before this one; the first field sent has none.
fn check_when_has_earlier_field(cx: &Ctxt, fields: &[Field<'_>]) {
    let first_sent = fields.iter().find(|f| f.attrs.skip.is_none());
    if let Some(field) = first_sent {
        if let Some(when) = &field.attrs.when {
            cx.error_spanned_by(
                &when.tokens,
                format!(
                    "`when` on `{}`, the first field sent: the condition can only test fields sent before it; move the field after the one it depends on",
                    field.name
                ),
            );
        }
    }
}

/// `when` tests fields the decoder already has: those sent before this one. A name
/// of this field, a later one or a skipped one would otherwise be a bare "cannot
/// find value".
fn check_when_tests_earlier_fields(cx: &Ctxt, fields: &[Field<'_>]) {
    for (i, field) in fields.iter().enumerate() {
        let Some(when) = &field.attrs.when else {
            continue;
        };
        let first_sent =
            field.attrs.skip.is_none() && fields[..i].iter().all(|f| f.attrs.skip.is_some());
        if first_sent {
            continue; // reported by `check_when_has_earlier_field`
        }
        for ident in WhenReads::of(&when.value).paths {
            let Some(j) = fields.iter().position(|f| f.binding == *ident) else {
                continue;
            };
            let why = if fields[j].attrs.skip.is_some() {
                format!("`{ident}` is skipped, so the decoder never has it")
            } else if j == i {
                format!("`{ident}` is this field itself")
            } else if j > i {
                format!(
                    "`{ident}` comes after it; move `{}` after `{ident}`",
                    field.name
                )
            } else {
                continue;
            };
            cx.error_spanned_by(
                ident,
                format!("`when` can only test fields sent before this one; {why}"),
            );
        }
    }
}

/// The fields a `when` condition may read, found by walking the parsed expression.
pub struct WhenReads<'e> {
    /// The single-segment paths of the expression, outside macro calls: `at_rest` in
    /// `!*at_rest`, `mode` in `*mode == Mode::Idle`; not `Mode::Idle`, a method name or
    /// the member of a field access.
    pub paths: Vec<&'e syn::Ident>,
    /// Every identifier in the input of a macro call (`matches!(mode, Mode::Idle)`):
    /// a macro's input is not Rust syntax the derive can parse, so each of them may be a
    /// read.
    pub in_macros: Vec<syn::Ident>,
}

impl<'e> WhenReads<'e> {
    /// The reads of `cond`.
    pub fn of(cond: &'e Expr) -> Self {
        let mut reads = WhenReads {
            paths: Vec::new(),
            in_macros: Vec::new(),
        };
        syn::visit::Visit::visit_expr(&mut reads, cond);
        reads
    }

    /// Whether the condition may read a field bound as `binding`.
    pub fn may_read(&self, binding: &syn::Ident) -> bool {
        self.paths.contains(&binding) || self.in_macros.contains(binding)
    }
}

impl<'e> syn::visit::Visit<'e> for WhenReads<'e> {
    fn visit_expr_path(&mut self, e: &'e syn::ExprPath) {
        if e.qself.is_none() {
            if let Some(ident) = e.path.get_ident() {
                self.paths.push(ident);
            }
        }
        syn::visit::visit_expr_path(self, e);
    }

    fn visit_macro(&mut self, m: &'e syn::Macro) {
        fn idents(tokens: TokenStream, out: &mut Vec<syn::Ident>) {
            for tt in tokens {
                match tt {
                    proc_macro2::TokenTree::Ident(i) => out.push(i),
                    proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
                    _ => {}
                }
            }
        }
        idents(m.tokens.clone(), &mut self.in_macros);
    }
}

/// The integer value of a literal such as `7`, `-3`, `(0x10)` or `100u8`.
pub fn lit_int(expr: &Expr) -> Option<i128> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i128>().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => lit_int(expr).and_then(i128::checked_neg),
        Expr::Paren(p) => lit_int(&p.expr),
        Expr::Group(g) => lit_int(&g.expr),
        _ => None,
    }
}

/// The value of a float (or integer) literal such as `-1.5`, `0.01` or `2`.
pub fn lit_float(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<f64>().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => lit_float(expr).map(|v| -v),
        Expr::Paren(p) => lit_float(&p.expr),
        Expr::Group(g) => lit_float(&g.expr),
        _ => None,
    }
}

fn int_literal(value: i128, span: Span) -> TokenStream {
    let mut lit = Literal::u128_unsuffixed(value.unsigned_abs());
    lit.set_span(span);
    if value < 0 {
        quote_spanned!(span=> (-#lit))
    } else {
        quote_spanned!(span=> #lit)
    }
}

fn show_range(r: &RangeAttr) -> String {
    let op = if r.inclusive { "..=" } else { ".." };
    format!(
        "{}{op}{}",
        r.start.to_token_stream().to_string().replace(' ', ""),
        r.end.to_token_stream().to_string().replace(' ', "")
    )
}

/// A range must hold at least one value and fit its integer type. Literal bounds are
/// checked here; other bounds by a generated `const` assertion (see `hoist.rs`).
/// Returns the inclusive `(min, max)` tokens, except that `max` is the excluded end
/// when the third value is set (a non-literal `A..B`: subtracting one before the
/// range is known not to be empty could overflow).
pub fn range(
    cx: &Ctxt,
    set: &Set<RangeAttr>,
    int: IntTy,
) -> Option<(TokenStream, TokenStream, bool)> {
    let r = &set.value;
    let start = lit_int(&r.start);
    let end = lit_int(&r.end);
    let max_incl = end.map(|e| if r.inclusive { e } else { e - 1 });
    let shown = show_range(r);
    let mut ok = true;
    if let (Some(lo), Some(hi)) = (start, max_incl) {
        if lo > hi {
            ok = false;
            let advice = if !r.inclusive && start == end {
                format!("range `{shown}` is empty: no value can be sent; write `{lo}..={lo}` for a single value or widen it")
            } else if r.inclusive {
                format!(
                    "range `{shown}` is reversed: the minimum comes first; write `{}..={}`",
                    end.unwrap_or(0),
                    lo
                )
            } else {
                format!(
                    "range `{shown}` is empty: its end is not above its start; write `{}..{}`",
                    end.unwrap_or(0),
                    lo + 1
                )
            };
            cx.error_spanned_by(&set.tokens, advice);
        }
    }
    let (tmin, tmax) = int.bounds();
    let fits_lo = start.is_none_or(|lo| lo >= tmin && tmax.is_none_or(|m| lo <= m));
    let fits_hi = max_incl.is_none_or(|hi| hi >= tmin && tmax.is_none_or(|m| hi <= m));
    if ok && (!fits_lo || !fits_hi) {
        ok = false;
        let type_range = match tmax {
            Some(m) => format!("{tmin}..={m}"),
            None => format!("{tmin}..={}", u128::MAX),
        };
        cx.error_spanned_by(
            if fits_lo { &r.end } else { &r.start },
            format!(
                "range `{shown}` is wider than `{}` ({type_range}); narrow the range or use a wider type",
                int.name()
            ),
        );
    }
    if !ok {
        return None;
    }
    let min = match start {
        Some(v) => int_literal(v, r.start.span()),
        None => user_expr(&r.start),
    };
    let (max, end_excluded) = match (max_incl, r.inclusive) {
        (Some(v), _) => (int_literal(v, r.end.span()), false),
        (None, inclusive) => (user_expr(&r.end), !inclusive),
    };
    Some((min, max, end_excluded))
}

/// `bits = N` must be between 1 and the type's width.
pub fn bits(cx: &Ctxt, set: &Set<Expr>, int: IntTy) -> Option<TokenStream> {
    let width = int.width();
    match lit_int(&set.value) {
        Some(0) => {
            cx.error_spanned_by(
                &set.value,
                format!(
                    "`bits = 0` sends nothing; use 1..={width} for `{}`",
                    int.name()
                ),
            );
            None
        }
        Some(n) if n < 0 || n > width as i128 => {
            cx.error_spanned_by(
                &set.value,
                format!(
                    "`bits = {n}` is wider than `{}` ({width} bits); use 1..={width} or a wider type",
                    int.name()
                ),
            );
            None
        }
        _ => Some(user_expr(&set.value)),
    }
}

/// `quat(bits = N)`: bits per smallest-three component, 2..=20 (`netser::quat::MAX_BITS`:
/// above 20 bits a decoded quaternion no longer encodes back to the same bits).
pub fn quat_bits(cx: &Ctxt, set: &Set<Expr>) -> Option<TokenStream> {
    match lit_int(&set.value) {
        Some(n) if !(2..=20).contains(&n) => {
            cx.error_spanned_by(
                &set.value,
                format!("`quat(bits = {n})`: the bits per component must be 2..=20 (9 to 12 is typical)"),
            );
            None
        }
        _ => Some(user_expr(&set.value)),
    }
}

/// `max_len = N` must allow at least one element.
pub fn max_len(cx: &Ctxt, set: &Set<Expr>) -> Option<TokenStream> {
    match lit_int(&set.value) {
        Some(n) if n <= 0 => {
            cx.error_spanned_by(
                &set.value,
                "`max_len = 0` allows only empty collections; raise it or remove the field",
            );
            None
        }
        _ => Some(user_expr(&set.value)),
    }
}

/// Quantization parameters must give `min < max`, `0 < res <= max - min`, and at most 32
/// bits. Checked here when literal; by `Quantize::new` and a generated assertion otherwise.
pub fn quantize(
    cx: &Ctxt,
    set: &Set<QuantizeAttr>,
) -> Option<(TokenStream, TokenStream, TokenStream)> {
    let q = &set.value;
    let (min, max, res) = (lit_float(&q.min), lit_float(&q.max), lit_float(&q.res));
    let mut ok = true;
    if let (Some(lo), Some(hi)) = (min, max) {
        if lo >= hi {
            ok = false;
            cx.error_spanned_by(
                &q.max,
                format!(
                    "quantize needs min < max, but min = {lo} and max = {hi}; swap or widen them"
                ),
            );
        }
    }
    if let Some(r) = res {
        if r <= 0.0 {
            ok = false;
            cx.error_spanned_by(
                &q.res,
                format!(
                    "quantize needs a resolution above zero, not {r}; for example `res = 0.01`"
                ),
            );
        }
    }
    if let (true, Some(lo), Some(hi), Some(r)) = (ok, min, max, res) {
        let (lo, hi, r) = (lo as f32, hi as f32, r as f32);
        let delta = hi - lo;
        let values = delta / r;
        if r > delta {
            ok = false;
            cx.error_spanned_by(
                &q.res,
                format!("quantize resolution {r} is wider than the range {lo}..={hi} ({delta} wide): every value would round to an end; use a smaller `res`"),
            );
        } else if values > MAX_QUANTIZE_VALUES {
            ok = false;
            let bits = 64 - (values.ceil() as u64).leading_zeros();
            cx.error_spanned_by(
                &q.res,
                format!("quantize({lo}, {hi}, {r}) needs {bits} bits but at most 32 are allowed; raise `res` or narrow the range"),
            );
        }
    }
    ok.then(|| (user_expr(&q.min), user_expr(&q.max), user_expr(&q.res)))
}

/// Tokens for an expression the user wrote, re-emitted at its own span.
/// Callers parenthesize where precedence matters; no parentheses here, so that
/// `unused_parens` never fires on the user's tokens.
pub fn user_expr(expr: &Expr) -> TokenStream {
    let span = expr.span();
    quote_spanned!(span=> #expr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn reads(cond: Expr) -> (Vec<String>, Vec<String>) {
        let r = WhenReads::of(&cond);
        let paths = r.paths.iter().map(|i| i.to_string()).collect();
        (paths, r.in_macros.iter().map(|i| i.to_string()).collect())
    }

    #[test]
    fn when_reads_paths_not_members_methods_or_variants() {
        let (paths, in_macros) = reads(syn::parse_quote!(
            *mode == Mode::Idle && other.on && speed.abs() > LIMIT
        ));
        assert_eq!(paths, ["mode", "other", "speed", "LIMIT"]);
        assert!(in_macros.is_empty());
    }

    #[test]
    fn when_reads_every_identifier_of_a_macro_input() {
        let cond: Expr = syn::parse_quote!(!at_rest && matches!(mode, Mode::Move { .. }));
        let (paths, in_macros) = reads(cond.clone());
        assert_eq!(paths, ["at_rest"]);
        assert_eq!(in_macros, ["mode", "Mode", "Move"]);
        let r = WhenReads::of(&cond);
        assert!(r.may_read(&syn::parse_quote!(mode)));
        assert!(r.may_read(&syn::parse_quote!(at_rest)));
        assert!(!r.may_read(&syn::parse_quote!(speed)));
    }

    #[test]
    fn literals() {
        assert_eq!(lit_int(&syn::parse_quote!(-(5))), Some(-5));
        assert_eq!(lit_int(&syn::parse_quote!(0x10u8)), Some(16));
        assert_eq!(lit_int(&syn::parse_quote!(MAX)), None);
        assert_eq!(lit_float(&syn::parse_quote!(-1.5)), Some(-1.5));
        assert_eq!(lit_float(&syn::parse_quote!(2)), Some(2.0));
    }

    fn range_errors(written: TokenStream, int: IntTy) -> Vec<String> {
        let meta: syn::MetaNameValue = syn::parse2(quote!(range = #written)).unwrap();
        let syn::Expr::Range(r) = meta.value.clone() else {
            panic!()
        };
        let set = Set {
            tokens: meta.to_token_stream(),
            value: RangeAttr {
                start: *r.start.unwrap(),
                end: *r.end.unwrap(),
                inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
            },
        };
        let cx = Ctxt::new();
        let _ = range(&cx, &set, int);
        cx.check()
            .err()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn range_rules() {
        assert!(range_errors(quote!(0..=100), IntTy::U8).is_empty());
        assert!(range_errors(quote!(0..256), IntTy::U8).is_empty());
        assert!(range_errors(quote!(-128..=127), IntTy::I8).is_empty());
        assert!(range_errors(quote!(3..=3), IntTy::U8).is_empty());
        assert!(range_errors(quote!(0..=MAX), IntTy::U8).is_empty());
        assert!(range_errors(quote!(100..=0), IntTy::U8)[0].contains("reversed"));
        assert!(range_errors(quote!(5..5), IntTy::U8)[0].contains("empty"));
        assert!(range_errors(quote!(0..=256), IntTy::U8)[0].contains("wider than `u8`"));
        assert!(range_errors(quote!(-1..=10), IntTy::U32)[0].contains("wider than `u32`"));
    }
}
