//! Runtime of [mcpeye](https://github.com/mcpeye/mcpeye-rs): the manifest and dispatcher behind
//! `#[mcpeye::tool]`, call capture, redaction, and the flusher that ships events to the
//! self-hosted mcpeye ingest API.
//!
//! Users depend on the `mcpeye` facade crate, which re-exports the items listed here.
//!
//! The source is a stack, each folder using only those below it, read bottom up in the order a
//! call's data is made:
//!
//! - `contract` (the rules shared with the macros), `json/` (JSON text and the flat form),
//!   `schema/` and `redact/`: nothing of MCP;
//! - `model/`: the call's data (origin, client, outcome, record, result, event, identity);
//! - `config/`, then `telemetry/` (the call's span);
//! - `record/`: a call in flight and the record that crosses to the flusher thread;
//! - `flush/`: the flusher thread (screen, encode, outbox, transport);
//! - `tracker.rs`: the handle a call is recorded into;
//! - `tool/` (definitions, context, manifest), then `dispatch.rs` (route, strip the intent, run);
//! - `rmcp/`, `report/` and `testing/` on top.
//!
//! See `docs/wire-format.md` for what reaches the ingest.
#![deny(missing_docs)]
// `forbid` once the last blocks are gone; until then each module that keeps one allows it where
// it is declared, with a `SAFETY:` comment per block and its saving in BENCHMARKS.md.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod config;
pub mod contract;
mod dispatch;
mod flush;
mod json;
mod model;
mod record;
pub mod redact;
pub mod report;
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub mod rmcp;
pub mod schema;
mod telemetry;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
mod tool;
mod tracker;

pub use config::{CallIdentity, Config, ConfigError, Identity, IdentityValue};
/// The calls of a server in another process, for `mcpeye proxy`: not a stable API.
#[doc(hidden)]
pub use dispatch::forwarded;
pub use dispatch::CallError;
pub use model::cancel::{Cancellation, Cancelled};
pub use model::client::{
    ClientChannel, ClientError, ClientFuture, ElicitationAction, ElicitationRequest, ElicitationResponse, LogLevel,
    ProgressToken, Root, SamplingRequest, SamplingResponse,
};
pub use model::diagnostics::{Diagnostic, DiagnosticKind};
pub use model::event::{BeforeSendFn, Event};
pub use model::inferred::{InferCall, InferIntentFn};
pub use model::meta::{
    ModelArgument, CONVERSATION_KEY_ENV, CONVERSATION_PARAM_DESCRIPTION, CONVERSATION_PARAM_NAME,
    MODEL_PARAM_DESCRIPTION, MODEL_PARAM_NAME,
};
pub use model::record::{
    CallOutcome, CallRecord, ClientInfo, IntentSource, Origin, RequestId, TraceContext, Transport,
};
pub use model::request::RequestInfo;
pub use model::result::{
    CallToolResult, Content, EmbeddedResource, ErrorReason, ResourceBody, ResourceLink, ToolError, ToolValue,
};
pub use model::stats::{Dropped, Elicitations, EventLogCounts, FlushReport, MethodCount, Stats};
pub use tool::context::Context;
pub use tool::def::{
    parse_args, Annotations, Args, ArgsError, AsyncHandler, BoxFuture, Handler, Icon, Invocation, State, StateDecl,
    SyncHandler, Tool, ToolDef,
};
pub use tool::manifest::{Manifest, ManifestBuilder, ManifestError, ManifestProblem, OUTPUT_SCHEMA_PATH};
pub use tracker::{init, Guard, Tracker};

/// Items used by code that `#[mcpeye::tool]` and `mcpeye::tools!` generate. Not public API: the
/// facade re-exports it under a name that carries its version, so that a macro of another
/// version cannot compile against it.
#[doc(hidden)]
pub mod __private {
    pub use crate::model::result::kind::{probe, ResultKind, ValueKind};
    pub use crate::model::result::output::{OutputNone, OutputSchema, OutputValueNone, OutputValueSchema, Returns};
    pub use crate::model::result::{CallToolResult, ToolValue};
    pub use crate::schema::args::describe_argument_errors;
    pub use crate::schema::generate as generate_schema;
    pub use crate::schema::generate_args as generate_args_schema;
    pub use crate::schema::generate_args_as_is as generate_args_schema_as_is;
    pub use crate::schema::generate_as_is as generate_schema_as_is;
    pub use crate::schema::{ParamDeserialize, ParamSchema};
    pub use crate::telemetry::{reset as reset_telemetry, set_enabled as set_telemetry_enabled};
    pub use crate::tool::def::{
        parse_args, Annotations, Args, ArgsError, BoxFuture, Handler, Icon, Invocation, State, StateDecl, Tool,
        ToolDef, ToolParam,
    };
    pub use crate::tool::manifest::{Manifest, ManifestBuilder};
    pub use ::core::time::Duration;
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    /// `a == b`, usable in `const` (duplicate-name checks of `tools![…]`).
    pub const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}
