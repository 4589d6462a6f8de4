//! What `#[mcpeye::tool]` generates for each handler: a static [`ToolDef`], registered in the
//! process-wide inventory and reachable by path through the [`Tool`] trait.

use crate::model::cancel::Cancellation;
use crate::model::record::Origin;
use crate::model::result::CallToolResult;
use crate::record::TrackedCall;
use crate::tool::context::Context;
use serde_json::Value;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// MCP tool annotations (hints to clients; `None` means not stated).
///
/// Written by `#[mcpeye::tool(read_only, destructive = false, …)]`; read them back from the
/// manifest:
///
/// ```
/// /// Look up an order.
/// #[mcpeye::tool(read_only, open_world = false)]
/// fn order(
///     /// Order number.
///     id: u64,
/// ) -> String {
///     format!("order {id}")
/// }
///
/// # fn main() {
/// let manifest = mcpeye::tools![order];
/// let hints = manifest.tool("order").unwrap().annotations;
/// assert_eq!((hints.read_only, hints.open_world, hints.destructive), (Some(true), Some(false), None));
/// assert_eq!(manifest.tools_list()[0]["annotations"]["readOnlyHint"], true);
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool interacts with an open world of external entities.
    pub open_world: Option<bool>,
}

impl Annotations {
    /// No annotation stated.
    ///
    /// ```
    /// let hints = mcpeye::Annotations { destructive: Some(true), ..mcpeye::Annotations::NONE };
    /// assert_eq!(hints.read_only, None);
    /// ```
    pub const NONE: Annotations =
        Annotations { read_only: None, destructive: None, idempotent: None, open_world: None };

    /// Whether no hint is stated.
    ///
    /// ```
    /// use mcpeye::Annotations;
    ///
    /// assert!(Annotations::NONE.is_empty());
    /// assert!(!Annotations { read_only: Some(true), ..Annotations::NONE }.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        *self == Annotations::NONE
    }
}

/// A future returned by an async tool handler.
///
/// ```
/// use mcpeye::handwritten::{BoxFuture, Handler, Invocation};
/// use mcpeye::{ArgsError, CallToolResult};
/// fn later(_: &Invocation<'_>, _: &mut serde_json::Value) -> Result<BoxFuture, ArgsError> {
///     Ok(Box::pin(async { CallToolResult::text("done") }))
/// }
/// let _handler = Handler::Async(later);
/// ```
pub type BoxFuture = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'static>>;

/// The arguments of a call could not be read into the tool's parameters.
///
/// The answer of such a call is a tool error that says so; a handler written by hand returns it
/// from [`parse_args`]:
///
/// ```
/// /// Repeat a word.
/// #[mcpeye::tool]
/// fn repeat(
///     /// The word.
///     word: String,
///     /// How many times.
///     times: u8,
/// ) -> String {
///     word.repeat(times.into())
/// }
///
/// # fn main() {
/// let answer = mcpeye::tools![repeat].call("repeat", serde_json::json!({"word": "ha", "times": -1}));
/// assert_eq!(answer["isError"], true);
/// assert!(answer["content"][0]["text"].as_str().unwrap().contains("`times`"));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    /// One line per problem, each naming a JSON path; never the offending value.
    pub problems: Vec<String>,
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid arguments: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for ArgsError {}

/// How a tool is run. Generated code deserialises and fetches state before returning, so a
/// returned `Err` always means the call never reached the handler.
///
/// `#[mcpeye::tool]` writes it; write one by hand for a tool made at run time (see
/// [`ToolDef::new`]).
///
/// ```
/// use mcpeye::handwritten::{Handler, Invocation};
/// use mcpeye::{ArgsError, CallToolResult};
/// fn ping(_: &Invocation<'_>, _: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
///     Ok(CallToolResult::text("pong"))
/// }
/// assert!(matches!(Handler::Sync(ping), Handler::Sync(_)));
/// ```
#[derive(Clone, Copy)]
pub enum Handler {
    /// A plain `fn`.
    Sync(SyncHandler),
    /// An `async fn`: the future runs the handler.
    Async(AsyncHandler),
}

/// A plain `fn` tool, as generated: parse the arguments, fetch state, run. [`parse_args`] may
/// take the arguments (leaving `null`) when the call's record has its own copy.
///
/// ```
/// use mcpeye::handwritten::{Invocation, SyncHandler};
/// use mcpeye::{ArgsError, CallToolResult};
/// fn ping(_: &Invocation<'_>, _: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
///     Ok(CallToolResult::text("pong"))
/// }
/// let _handler: SyncHandler = ping;
/// ```
pub type SyncHandler = fn(&Invocation<'_>, &mut Value) -> Result<CallToolResult, ArgsError>;

/// An `async fn` tool, as generated: parse the arguments and fetch state, then return the future.
///
/// ```
/// use mcpeye::handwritten::{AsyncHandler, BoxFuture, Invocation};
/// use mcpeye::{ArgsError, CallToolResult};
/// fn later(_: &Invocation<'_>, _: &mut serde_json::Value) -> Result<BoxFuture, ArgsError> {
///     Ok(Box::pin(async { CallToolResult::text("done") }))
/// }
/// let _handler: AsyncHandler = later;
/// ```
pub type AsyncHandler = fn(&Invocation<'_>, &mut Value) -> Result<BoxFuture, ArgsError>;

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Handler::Sync(_) => "Handler::Sync",
            Handler::Async(_) => "Handler::Async",
        })
    }
}

/// A state type a tool needs (a `State<T>` parameter): the manifest refuses to build when one
/// is not registered.
///
/// ```
/// use mcpeye::handwritten::StateDecl;
/// struct Db;
/// let decl = StateDecl { type_id: std::any::TypeId::of::<Db>, type_name: std::any::type_name::<Db> };
/// assert!((decl.type_name)().ends_with("Db"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StateDecl {
    /// `TypeId::of::<T>`.
    pub type_id: fn() -> TypeId,
    /// `std::any::type_name::<T>`, for error messages.
    pub type_name: fn() -> &'static str,
}

/// An icon of a tool (MCP 2025-11-25), for clients that show one: `icon = "https://…"` or
/// `icon(src = "…", mime_type = "…", sizes = "48x48", theme = "dark")` in the attribute.
///
/// ```
/// /// Convert an amount between currencies.
/// #[mcpeye::tool(icon(src = "https://example.com/fx.png", mime_type = "image/png", sizes = "48x48"))]
/// fn convert(
///     /// Amount in cents.
///     cents: u64,
/// ) -> u64 {
///     cents
/// }
///
/// # fn main() {
/// let manifest = mcpeye::tools![convert];
/// assert_eq!(manifest.tool("convert").unwrap().icons[0].sizes, ["48x48"]);
/// assert_eq!(manifest.tools_list()[0]["icons"][0]["src"], "https://example.com/fx.png");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Icon {
    /// An `https://` URL or a `data:image/…` URI.
    pub src: &'static str,
    /// Its MIME type, when stated.
    pub mime_type: Option<&'static str>,
    /// Its sizes (`"48x48"`, `"any"`…), when stated.
    pub sizes: &'static [&'static str],
    /// `light` or `dark`: the theme it is drawn for, when it is for one only.
    pub theme: Option<&'static str>,
}

/// Everything the manifest knows about one `#[mcpeye::tool]` function.
///
/// Made by the macro, read back from the manifest; written by hand with [`ToolDef::new`] for a
/// tool made at run time.
///
/// ```
/// /// Look up an order.
/// #[mcpeye::tool(title = "Order lookup", timeout_ms = 2_000)]
/// async fn order(
///     /// Order number.
///     id: u64,
/// ) -> String {
///     format!("order {id}")
/// }
///
/// # fn main() {
/// let manifest = mcpeye::tools![order];
/// let def = manifest.tool("order").unwrap();
/// assert_eq!((def.name, def.title, def.description), ("order", Some("Order lookup"), "Look up an order."));
/// assert_eq!(def.timeout, Some(std::time::Duration::from_secs(2)));
/// # }
/// ```
#[derive(Debug)]
pub struct ToolDef {
    /// The tool's name (`name = "…"`, or the function's name).
    pub name: &'static str,
    /// `module_path!()` and the function's name, for error messages.
    pub rust_path: &'static str,
    /// Source file of the function.
    pub file: &'static str,
    /// Source line of the function.
    pub line: u32,
    /// `title = "…"`.
    pub title: Option<&'static str>,
    /// The description (doc comment or `description = "…"`).
    pub description: &'static str,
    /// MCP annotations.
    pub annotations: Annotations,
    /// Whether `mcpeyeIntent` is injected and stripped (`intent = false` turns it off).
    pub intent: bool,
    /// Generates the input schema of the arguments type (schemars output, not normalised).
    pub input_schema: fn() -> schemars::Schema,
    /// Whether the input schema is normalised into the shape every client accepts (`true`), or
    /// served as generated, `$schema` and `$defs` kept (`normalize_schema = false`).
    pub normalize_schema: bool,
    /// Generates the output schema of the handler's result: the schema of a returned
    /// `Serialize + JsonSchema` type (or the `T` of `Result<T, E>`). It becomes the tool's
    /// `outputSchema` when its root is an object; `None` (or `output_schema = false`) gives none.
    pub output_schema: fn() -> Option<schemars::Schema>,
    /// `timeout_ms`: an async call still running after this long is cancelled and answered with
    /// a tool error (recorded as a timeout).
    pub timeout: Option<Duration>,
    /// `icon = …`: the tool's icons.
    pub icons: &'static [Icon],
    /// State types the handler needs.
    pub states: &'static [StateDecl],
    /// Runs the tool.
    pub handler: Handler,
}

impl ToolDef {
    /// A definition with the defaults of `#[mcpeye::tool]` for everything but these (no title,
    /// annotations, timeout, icons or output schema; the intent on; the schema normalised), for
    /// definitions written by hand. Set the other fields with struct update syntax:
    /// `ToolDef { title: Some("Echo"), ..ToolDef::new("echo", "Echo text.", schema, handler) }`.
    ///
    /// ```
    /// use mcpeye::handwritten::{parse_args, Handler, Invocation, ToolDef};
    /// use mcpeye::{ArgsError, CallToolResult, Manifest};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct EchoArgs {
    ///     /// Text to echo.
    ///     text: String,
    /// }
    ///
    /// fn echo(inv: &Invocation<'_>, args: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
    ///     let a: EchoArgs = parse_args(inv, args)?;
    ///     Ok(CallToolResult::text(a.text))
    /// }
    ///
    /// static ECHO: ToolDef = ToolDef {
    ///     title: Some("Echo"),
    ///     ..ToolDef::new("echo", "Echoes the text back.", mcpeye::schema::generate::<EchoArgs>, Handler::Sync(echo))
    /// };
    /// let manifest = Manifest::builder().tools([&ECHO]).build();
    /// let answer = manifest.call("echo", serde_json::json!({"text": "hi"}));
    /// assert_eq!(answer["content"][0]["text"], "hi");
    /// ```
    pub const fn new(
        name: &'static str,
        description: &'static str,
        input_schema: fn() -> schemars::Schema,
        handler: Handler,
    ) -> ToolDef {
        ToolDef {
            name,
            rust_path: name,
            file: "",
            line: 0,
            title: None,
            description,
            annotations: Annotations::NONE,
            intent: true,
            input_schema,
            normalize_schema: true,
            output_schema: no_output_schema,
            timeout: None,
            icons: &[],
            states: &[],
            handler,
        }
    }

    /// `path:line` of the function, for error messages.
    ///
    /// ```
    /// /// Say hello.
    /// #[mcpeye::tool]
    /// fn hello() -> String {
    ///     "hello".into()
    /// }
    /// # fn main() {
    /// let def = mcpeye::tools![hello].tool("hello").unwrap();
    /// assert!(def.location().contains(".rs:")); // `path::hello (file.rs:LINE)`, for error messages
    /// # }
    /// ```
    pub fn location(&self) -> String {
        format!("{} ({}:{})", self.rust_path, self.file, self.line)
    }
}

fn no_output_schema() -> Option<schemars::Schema> {
    None
}

inventory::collect!(&'static ToolDef);

/// Every tool registered by `#[mcpeye::tool]` in the crates linked into this program.
pub fn registered() -> impl Iterator<Item = &'static ToolDef> {
    inventory::iter::<&'static ToolDef>.into_iter().copied()
}

/// Implemented by the marker type `#[mcpeye::tool]` puts next to each function (same name, in
/// the type namespace), so that `mcpeye::tools![path::to::function]` can find its definition.
///
/// ```
/// use mcpeye::handwritten::Tool;
///
/// /// Ping.
/// #[mcpeye::tool(name = "ping")]
/// fn ping_tool() -> String {
///     "pong".into()
/// }
///
/// # fn main() {
/// assert_eq!(<ping_tool as Tool>::NAME, "ping");
/// assert_eq!(<ping_tool as Tool>::DEF.description, "Ping.");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an mcpeye tool",
    label = "not a function marked `#[mcpeye::tool]`",
    note = "`tools![…]` takes paths to functions that carry `#[mcpeye::tool]`"
)]
pub trait Tool {
    /// The tool's registered name, usable in `const` contexts.
    const NAME: &'static str;
    /// The tool's definition.
    const DEF: &'static ToolDef;
}

/// Application state given to tools through `State<T>` parameters, registered on the manifest
/// builder with [`crate::ManifestBuilder::state`]. Not part of the input schema.
///
/// ```
/// use mcpeye::State;
/// use std::sync::Arc;
/// let s = State(Arc::new(5u32));
/// assert_eq!(*s + 1, 6);
/// ```
pub struct State<T: ?Sized>(
    /// The registered value.
    pub Arc<T>,
);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// Values registered as state, by type.
#[derive(Clone, Default)]
pub(crate) struct StateMap(pub(crate) HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

/// What a generated handler receives besides the arguments: the manifest's state and the
/// request's context (see [`ToolDef::new`] for a handler written by hand).
///
/// ```
/// use mcpeye::handwritten::Invocation;
/// use mcpeye::{ArgsError, CallToolResult};
/// fn who(inv: &Invocation<'_>, _: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
///     let ctx = inv.context();
///     Ok(CallToolResult::text(ctx.client().and_then(|c| c.label()).unwrap_or("nobody").to_owned()))
/// }
/// # let _ = who;
/// ```
pub struct Invocation<'a> {
    pub(crate) states: &'a StateMap,
    /// The tool's normalised input schema, used to describe invalid arguments.
    pub(crate) schema: &'a Value,
    pub(crate) tool: &'static str,
    pub(crate) origin: &'a Origin,
    /// The call's own signal (the origin's, or a child of it that the tool's timeout cancels).
    pub(crate) cancellation: Option<&'a Cancellation>,
    /// The call's record, started with the arguments flattened: [`parse_args`] may take them.
    pub(crate) recorded: Option<&'a TrackedCall>,
}

impl Invocation<'_> {
    /// The [`Context`] of this call, for a `Context` parameter.
    ///
    /// ```
    /// use mcpeye::handwritten::Invocation;
    /// use mcpeye::{ArgsError, CallToolResult, LogLevel};
    ///
    /// fn slow(inv: &Invocation<'_>, _: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
    ///     let ctx = inv.context();
    ///     ctx.log(LogLevel::Info, "starting");
    ///     Ok(CallToolResult::text(if ctx.is_cancelled() { "stopped" } else { "done" }))
    /// }
    /// # let _ = slow;
    /// ```
    pub fn context(&self) -> Context {
        let origin = self.origin.resolved();
        let cancellation = self.cancellation.or(origin.cancellation.as_ref()).cloned().unwrap_or_default();
        Context::new(std::borrow::Cow::Borrowed(self.tool), origin, cancellation)
    }

    /// The registered state of type `T`. The manifest checks at build time that every state a
    /// tool needs is registered, so generated code never sees `None` from a built manifest.
    ///
    /// ```
    /// use mcpeye::handwritten::Invocation;
    /// use mcpeye::{ArgsError, CallToolResult};
    ///
    /// struct Prices {
    ///     cents: u64,
    /// }
    ///
    /// fn price(inv: &Invocation<'_>, _: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
    ///     let prices = inv.state::<Prices>()?;
    ///     Ok(CallToolResult::text(format!("{} cents", prices.cents)))
    /// }
    /// # let _ = price;
    /// ```
    pub fn state<T: Any + Send + Sync>(&self) -> Result<State<T>, ArgsError> {
        self.states.0.get(&TypeId::of::<T>()).and_then(|a| a.clone().downcast::<T>().ok()).map(State).ok_or_else(|| {
            ArgsError {
                problems: vec![format!("the server has no state of type `{}` registered", std::any::type_name::<T>())],
            }
        })
    }
}

/// Deserialises a call's arguments (already without `mcpeyeIntent`) into the generated
/// argument struct. On failure the problems are described from the schema, by JSON path,
/// without echoing any value (serde's own messages quote the input).
///
/// When the call's record already has its own copy of the arguments, they are taken (`args`
/// is left `null`) and their strings move into the parameters instead of being copied. See
/// [`ToolDef::new`] for a handler that uses it.
///
/// ```
/// use mcpeye::handwritten::{parse_args, Invocation};
/// use mcpeye::{ArgsError, CallToolResult};
/// #[derive(serde::Deserialize)]
/// struct Query {
///     q: String,
/// }
/// fn search(inv: &Invocation<'_>, args: &mut serde_json::Value) -> Result<CallToolResult, ArgsError> {
///     let Query { q } = parse_args(inv, args)?;
///     Ok(CallToolResult::text(format!("results for {q}")))
/// }
/// # let _ = search;
/// ```
pub fn parse_args<T: serde::de::DeserializeOwned>(inv: &Invocation<'_>, args: &mut Value) -> Result<T, ArgsError> {
    // A unit struct's schema is `{}`, but serde reads unit structs only from `null`.
    let empty = matches!(&*args, Value::Object(m) if m.is_empty());
    let Some(recorded) = inv.recorded else {
        let parsed = T::deserialize(&*args).or_else(|e| match empty {
            true => T::deserialize(&Value::Null).map_err(|_| e),
            false => Err(e),
        });
        return parsed.map_err(|_| args_error(inv, args));
    };
    let parsed = T::deserialize(std::mem::take(args)).or_else(|e| match empty {
        true => T::deserialize(Value::Null).map_err(|_| e),
        false => Err(e),
    });
    // Described from the record's copy: the value itself was taken (a rare path).
    parsed.map_err(|_| args_error(inv, &recorded.recorded_arguments()))
}

fn args_error(inv: &Invocation<'_>, args: &Value) -> ArgsError {
    let mut problems = crate::schema::args::describe_argument_errors(inv.schema, args);
    if problems.is_empty() {
        problems.push("the arguments do not match the tool's input schema".to_owned());
    }
    ArgsError { problems }
}

/// A type usable as a documented tool parameter: it must deserialise from JSON and describe
/// itself as JSON Schema. The generated code only assumes it (under a binder, so never checked
/// where declared); a type without it is the one error of the expansion's own check, spanned on
/// the type.
pub trait ToolParam: serde::de::DeserializeOwned + schemars::JsonSchema {}
impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolParam for T {}

/// The whole arguments object given as one struct deriving `Deserialize` and `JsonSchema`:
/// `fn tool(Args(q): Args<Query>)`. Field docs become property descriptions.
///
/// ```
/// use mcpeye::Args;
/// let Args(n) = Args(3);
/// assert_eq!(n, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Args<T>(
    /// The arguments object, read into `T`.
    pub T,
);

impl<T> Deref for Args<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
