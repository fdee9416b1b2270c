//! Every schema mistake is a compile error that underlines the offending tokens and
//! says how to fix it. Each case in `tests/ui/` has its reviewed `.stderr`.
//! Regenerate after a compiler upgrade with `TRYBUILD=overwrite` and review the diff.

#[test]
fn schema_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
