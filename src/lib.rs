#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// README shows a user's whole `src/main.rs`, its `#[cfg(test)]` module included; the doctest
// checks that it compiles, `cargo test` in the user's crate runs it.
#![allow(clippy::test_attr_in_doctest)]

pub use mcpeye_macros::{tool, tool_defs, tools};

// Writing tools and serving them.
pub use mcpeye_runtime::{
    Annotations, Args, ArgsError, CallError, ErrorReason, Icon, Manifest, ManifestBuilder, ManifestError,
    ManifestProblem, State, ToolError,
};
// What a tool returns.
pub use mcpeye_runtime::{CallToolResult, Content, EmbeddedResource, ResourceBody, ResourceLink, ToolValue};
// A tool's request context: progress, logs, cancellation, sampling, elicitation.
pub use mcpeye_runtime::{
    Cancellation, Cancelled, ClientChannel, ClientError, ClientFuture, Context, ElicitationAction, ElicitationRequest,
    ElicitationResponse, LogLevel, ProgressToken, Root, SamplingRequest, SamplingResponse,
};
// What a call records, and what the serving layer knows of its request.
pub use mcpeye_runtime::{
    CallOutcome, CallRecord, ClientInfo, IntentSource, Origin, RequestId, TraceContext, Transport,
};
// Configuring and running the pipeline.
pub use mcpeye_runtime::{contract, redact, schema};
// What the tool list costs a model (feature `tokens`) and the Intent Gap of captured events.
pub use mcpeye_runtime::report;
pub use mcpeye_runtime::{
    init, BeforeSendFn, CallIdentity, Config, ConfigError, Diagnostic, DiagnosticKind, Dropped, Elicitations, Event,
    EventLogCounts, FlushReport, Guard, Identity, IdentityValue, InferCall, InferIntentFn, MethodCount, Stats, Tracker,
};
// Attribution: the request `identify` sees, the model and the conversation of each call
// (docs/attribution.md).
pub use mcpeye_runtime::{
    ModelArgument, RequestInfo, CONVERSATION_KEY_ENV, CONVERSATION_PARAM_DESCRIPTION, CONVERSATION_PARAM_NAME,
    MODEL_PARAM_DESCRIPTION, MODEL_PARAM_NAME,
};

/// Tools written by hand, without `#[mcpeye::tool]`: what the macro generates for each function,
/// for a tool whose schema or handler is made at run time. A [`ToolDef`](handwritten::ToolDef)
/// names the tool, its input schema and its [`Handler`](handwritten::Handler); the handler reads
/// its arguments with [`parse_args`](handwritten::parse_args) (the same argument errors as a
/// generated tool) and its state through the [`Invocation`](handwritten::Invocation).
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
/// fn echo_schema() -> schemars::Schema {
///     schemars::schema_for!(EchoArgs)
/// }
///
/// static ECHO: ToolDef = ToolDef::new("echo", "Echo text.", echo_schema, Handler::Sync(echo));
///
/// let manifest = Manifest::builder().tools([&ECHO]).build();
/// let out = manifest.call("echo", serde_json::json!({"text": "hi"}));
/// assert_eq!(out["content"][0]["text"], "hi");
/// ```
pub mod handwritten {
    pub use mcpeye_runtime::{
        parse_args, AsyncHandler, BoxFuture, Handler, Invocation, StateDecl, SyncHandler, Tool, ToolDef,
        OUTPUT_SCHEMA_PATH,
    };
}

#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub use mcpeye_runtime::rmcp;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use mcpeye_runtime::testing;

// Named after the version: `mcpeye-macros` (pinned with `=`) emits `::mcpeye::__private_X_Y_Z`,
// so a macro and a runtime of different versions cannot compile together.
#[doc(hidden)]
pub use mcpeye_runtime::__private as __private_0_1_0;
