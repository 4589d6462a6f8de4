#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// README shows a user's whole `src/main.rs`, its `#[cfg(test)]` module included; the doctest
// checks that it compiles, `cargo test` in the user's crate runs it.
#![allow(clippy::test_attr_in_doctest)]

pub use mcpeye_macros::{tool, tool_defs, tools};

// Writing tools and serving them.
pub use mcpeye_runtime::{
    parse_args, Annotations, Args, ArgsError, AsyncHandler, BoxFuture, CallError, ErrorReason, Handler, Icon,
    Invocation, Manifest, ManifestBuilder, ManifestError, ManifestProblem, State, StateDecl, SyncHandler, Tool,
    ToolDef, ToolError, OUTPUT_SCHEMA_PATH,
};
// What a tool returns.
pub use mcpeye_runtime::{CallToolResult, Content, EmbeddedResource, ResourceBody, ResourceLink, ToolValue};
// A tool's request context: progress, logs, cancellation, sampling, elicitation.
pub use mcpeye_runtime::{
    Cancellation, Cancelled, ClientChannel, ClientError, ClientFuture, Context, ElicitationAction, ElicitationRequest,
    ElicitationResponse, LogLevel, ProgressToken, SamplingRequest, SamplingResponse,
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
    EventLogCounts, FlushReport, Guard, Identity, IdentityValue, MethodCount, Stats, Tracker,
};
// Attribution: the request `identify` sees, the model and the conversation of each call
// (docs/attribution.md).
pub use mcpeye_runtime::{
    ModelArgument, RequestInfo, CONVERSATION_KEY_ENV, CONVERSATION_PARAM_DESCRIPTION, CONVERSATION_PARAM_NAME,
    MODEL_PARAM_DESCRIPTION, MODEL_PARAM_NAME,
};

#[cfg(feature = "rmcp")]
pub use mcpeye_runtime::rmcp;
#[cfg(feature = "testing")]
pub use mcpeye_runtime::testing;

// Named after the version: `mcpeye-macros` (pinned with `=`) emits `::mcpeye::__private_X_Y_Z`,
// so a macro and a runtime of different versions cannot compile together.
#[doc(hidden)]
pub use mcpeye_runtime::__private as __private_0_1_0;
