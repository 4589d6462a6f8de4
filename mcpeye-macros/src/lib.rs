//! Procedural macros of mcpeye. Use them through the `mcpeye` crate, which documents them.
//!
//! Structure (as in thiserror and tracing-attributes): `parse` reads the attribute and the
//! signature into a model, `check` validates it against the MCP contract collecting every
//! problem, `expand` generates code; on error the function is still emitted unchanged so that
//! one mistake does not cascade into unrelated errors.
#![deny(missing_docs)]
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
///
/// ```
/// use mcpeye::{Args, CallToolResult, Context, LogLevel, Manifest, State};
///
/// struct Prices {
///     cents_per_unit: u32,
/// }
///
/// /// Quote the price of an order.
/// #[mcpeye::tool(read_only, title = "Quote")]
/// fn quote(
///     /// How many units.
///     units: u32,
///     prices: State<Prices>,
/// ) -> String {
///     format!("{} cents", units * prices.cents_per_unit)
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Order {
///     /// Product identifier.
///     sku: String,
///     /// How many units.
///     units: u32,
/// }
///
/// /// Place an order.
/// #[mcpeye::tool(name = "place_order", destructive, timeout_ms = 5_000)]
/// async fn place(Args(order): Args<Order>, ctx: Context) -> Result<CallToolResult, String> {
///     if order.units == 0 {
///         return Err("order at least one unit".into());
///     }
///     ctx.log(LogLevel::Info, format!("ordering {}", order.sku));
///     Ok(CallToolResult::text(format!("ordered {} × {}", order.units, order.sku)))
/// }
///
/// fn main() {
///     // The function stays an ordinary function.
///     assert_eq!(quote(2, State(std::sync::Arc::new(Prices { cents_per_unit: 150 }))), "300 cents");
///
///     let manifest = Manifest::builder()
///         .tools(mcpeye::tool_defs![quote, place])
///         .state(Prices { cents_per_unit: 150 })
///         .build();
///     let answer = manifest.call("quote", serde_json::json!({"units": 3, "mcpeyeIntent": "Price check."}));
///     assert_eq!(answer["content"][0]["text"], "450 cents");
///
///     let answer = mcpeye::testing::block_on(manifest.call_async("place_order", serde_json::json!({"sku": "mug", "units": 0})));
///     assert_eq!(answer["isError"], true);
/// }
/// ```
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
///
/// Either way the manifest also holds the reserved tool, and building it panics at start-up
/// listing every problem (a tool that needs state, for one: register that with
/// `Manifest::builder()` and `tool_defs!` instead). The listed form checks at compile time
/// that each path is a tool and that no name is listed twice.
///
/// ```
/// mod billing {
///     /// Refund an order.
///     #[mcpeye::tool(destructive)]
///     pub fn refund(
///         /// Order number.
///         order: u64,
///     ) -> String {
///         format!("refunded order {order}")
///     }
/// }
///
/// /// Say hello.
/// #[mcpeye::tool]
/// fn hello() -> String {
///     "hello".into()
/// }
///
/// fn main() {
///     // Exactly these two tools, and the reserved one.
///     let manifest = mcpeye::tools![hello, billing::refund];
///     assert_eq!(manifest.call("refund", serde_json::json!({"order": 7}))["content"][0]["text"], "refunded order 7");
///     assert!(manifest.has_tool("hello"));
///
///     // Every `#[mcpeye::tool]` linked into the program.
///     let all = mcpeye::tools!();
///     assert!(all.has_tool("hello") && all.has_tool("refund"));
/// }
/// ```
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    tools::tools(input.into()).into()
}

/// The definitions of the listed tools as an array, for `Manifest::builder().tools(…)`: what
/// `tools!` builds from, for a manifest that also takes state or other settings.
///
/// ```
/// use mcpeye::{Manifest, State};
///
/// /// Count the visits so far.
/// #[mcpeye::tool]
/// fn visits(counter: State<std::sync::atomic::AtomicU64>) -> u64 {
///     counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
/// }
///
/// fn main() {
///     let manifest = Manifest::builder()
///         .tools(mcpeye::tool_defs![visits])
///         .state(std::sync::atomic::AtomicU64::new(0))
///         .capture_missing_capabilities(false)
///         .build();
///     manifest.call("visits", serde_json::json!({}));
///     assert_eq!(manifest.call("visits", serde_json::json!({}))["content"][0]["text"], "2");
/// }
/// ```
#[proc_macro]
pub fn tool_defs(input: TokenStream) -> TokenStream {
    tools::tool_defs(input.into()).into()
}
