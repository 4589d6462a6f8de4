//! Procedural macros of mcpeye. Use them through the `mcpeye` crate, which documents them.
//!
//! Structure (as in thiserror and tracing-attributes): `parse` reads the attribute and the
//! signature into a model, `check` validates it against the MCP contract collecting every
//! problem, `expand` generates code; on error the function is still emitted unchanged so that
//! one mistake does not cascade into unrelated errors.
#![forbid(unsafe_code)]
mod check;
mod errors;
mod expand;
mod parse;
mod tools;

use proc_macro::TokenStream;
use quote::{format_ident, quote};

/// The runtime module that generated code names, `::mcpeye::__private_X_Y_Z` after this crate's
/// version. The facade pins this crate with `=` and exports the module under the same name, so
/// a macro of another version fails to compile instead of emitting paths the runtime lacks.
fn private_path() -> proc_macro2::TokenStream {
    let module = format_ident!("__private_{}", env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_"));
    quote!(::mcpeye::#module)
}

/// Turns a function into an MCP tool, registered for `mcpeye::tools!()`.
///
/// The function is kept as written (call it directly in tests). Its doc comment is the tool's
/// description; each parameter is a property of the input schema, described by its own `///`
/// doc, except `mcpeye::State<T>` parameters (application state, not in the schema) and one
/// `mcpeye::Context` parameter (the request context: progress, logs, cancellation, sampling,
/// elicitation; not in the schema, sync and async tools). Instead of
/// documented parameters, one `mcpeye::Args<T>` parameter takes the whole arguments object as
/// `T: Deserialize + JsonSchema`. `#[serde(…)]` and `#[schemars(…)]` attributes on a parameter
/// apply to its property. The return value may be `()`, `String`, any `Serialize` type,
/// `mcpeye::CallToolResult`, or a `Result` of those with `E: Display` (`Err` is `isError`); an
/// object type that is also `JsonSchema` gives the tool an `outputSchema`.
///
/// Keys: `name = "…"` (tool name, default the function's name), `title = "…"`,
/// `description = "…"` (instead of the doc comment), `read_only`, `destructive`, `idempotent`,
/// `open_world` (MCP annotation hints; `= false` states the hint false), `intent = false` (no
/// `mcpeyeIntent` property for this tool), `timeout_ms = N` (an async call still running after
/// `N` ms is cancelled and recorded as a timeout), `icon = "https://…"` or `icon(src = "…",
/// mime_type = "…", sizes = "…", theme = "light"|"dark")` (repeatable), `output_schema = false`
/// (no `outputSchema`), `normalize_schema = false` (the input schema as generated, `$schema` and
/// `$defs` kept).
///
/// Contract problems (missing docs, invalid or reserved names, borrowed or generic parameters,
/// unparseable or exponential `pattern`s, …) are compile errors, all reported together.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool_impl(attr.into(), item.into()).into()
}

fn tool_impl(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let mut errors = errors::Errors::default();
    let parsed_attr = parse::parse_attr(attr, &mut errors);
    let item_fn = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(f)) => f,
        Ok(other) => {
            errors.push(syn::Error::new(
                item_kind_span(&other),
                "#[mcpeye::tool] goes on a function: put it on the `fn` that implements the tool (for a whole-object \
                 argument, take this type as `mcpeye::Args<T>` in that function)",
            ));
            let errs = errors.to_compile_error();
            return quote!(#item #errs);
        }
        Err(e) => {
            // Not parseable as an item: leave it to rustc, which reports it better.
            let _ = e;
            return item;
        }
    };
    let tool = parse::parse_fn(item_fn, &mut errors);
    check::check(&parsed_attr, &tool, &mut errors);
    if errors.is_empty() {
        expand::expand(&parsed_attr, &tool)
    } else {
        let errs = errors.to_compile_error();
        let fallback = expand::fallback(&parsed_attr, &tool);
        quote!(#errs #fallback)
    }
}

fn item_kind_span(item: &syn::Item) -> proc_macro2::Span {
    use syn::spanned::Spanned;
    match item {
        syn::Item::Struct(s) => s.struct_token.span,
        syn::Item::Enum(e) => e.enum_token.span,
        syn::Item::Const(c) => c.const_token.span,
        syn::Item::Static(s) => s.static_token.span,
        syn::Item::Impl(i) => i.impl_token.span,
        syn::Item::Mod(m) => m.mod_token.span,
        syn::Item::Trait(t) => t.trait_token.span,
        syn::Item::Type(t) => t.type_token.span,
        syn::Item::Union(u) => u.union_token.span,
        syn::Item::Use(u) => u.use_token.span,
        other => other.span(),
    }
}

/// Builds a manifest: `tools!()` of every registered tool, `tools![a, b::c]` of exactly these.
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    tools::tools(input.into()).into()
}

/// The definitions of the listed tools as an array, for `Manifest::builder().tools(…)`.
#[proc_macro]
pub fn tool_defs(input: TokenStream) -> TokenStream {
    tools::tool_defs(input.into()).into()
}
