//! The compile errors of `#[tool]` and `#[check]`, with their spans.

#[test]
fn compile_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
