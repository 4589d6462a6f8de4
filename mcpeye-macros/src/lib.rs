//! Procedural macros of mcpeye. Use them through the `mcpeye` crate.
use proc_macro::TokenStream;

/// Turns a function into an MCP tool.
#[proc_macro_attribute]
pub fn tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Builds a manifest.
#[proc_macro]
pub fn tools(_input: TokenStream) -> TokenStream {
    "::mcpeye::Manifest::builder().registered().build()".parse().unwrap()
}
