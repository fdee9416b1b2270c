//! Collections of elements that take no bits are refused at build time: their
//! length alone would decide how many values the decoder builds. The refusal is a
//! constant evaluated where the type is encoded or decoded, so these cases are built,
//! not only checked (the passing case makes trybuild build). Each has a reviewed
//! `.stderr`; regenerate with `TRYBUILD=overwrite` and review the diff.

#[test]
fn zero_bit_collections() {
    let t = trybuild::TestCases::new();
    t.pass("ui-build/collection_figures.rs");
    t.compile_fail("ui-build/zero_bit_*.rs");
}
