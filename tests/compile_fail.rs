//! The compile-time contract of `#[mcpeye::tool]` and `mcpeye::tools!`: each case in `trybuild/`
//! must fail with exactly the diagnostics in its `.stderr`; the cases in `trybuild/pass/` must
//! compile and run.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("trybuild/*.rs");
    t.pass("trybuild/pass/*.rs");
}
