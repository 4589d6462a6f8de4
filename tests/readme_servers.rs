//! README's "Serve it" servers are `examples/readme_stdio.rs` and `examples/readme_http.rs`
//! verbatim, and those build. The blocks are not doctests: their rmcp transports, tokio signals
//! and sockets would be dev-dependencies of this package, and so compiled for the quickstart too
//! (examples/servers/Cargo.toml says why); `scripts/readme_verbatim.sh` also runs them.

mod common;

use common::interop::example;

/// The first ```rust block after `heading` in README.md.
fn readme_block(heading: &str) -> String {
    let readme = include_str!("../README.md");
    let after = &readme[readme.find(heading).unwrap_or_else(|| panic!("README has no {heading:?}"))..];
    let start = after.find("```rust").expect("a rust block") + "```rust".len();
    let body = &after[start..];
    let body = &body[body.find('\n').expect("a fence line") + 1..];
    body[..body.find("```").expect("a closing fence")].to_owned()
}

#[test]
fn readme_servers_are_the_examples_verbatim_and_build() {
    for (heading, file, name) in [
        ("### Over stdio", include_str!("../examples/readme_stdio.rs"), "readme_stdio"),
        ("### Over Streamable HTTP", include_str!("../examples/readme_http.rs"), "readme_http"),
    ] {
        assert_eq!(readme_block(heading), file, "README's {heading:?} block differs from examples/{name}.rs");
        assert!(example(name).exists());
    }
}
