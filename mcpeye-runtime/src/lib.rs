//! Runtime of [mcpeye](https://github.com/mcpeye/mcpeye-rs): the manifest and dispatcher behind
//! `#[mcpeye::tool]`, call capture, redaction, and the flusher that ships events to the
//! self-hosted mcpeye ingest API.
//!
//! Users depend on the `mcpeye` facade crate, which re-exports the items listed here.
//!
//! The source follows one call: `capture/` runs on the calling thread (route, strip the
//! intent, run the handler, build one record); `delivery/` runs on the flusher thread (cap,
//! redact, encode, batch, send). See `docs/wire-format.md` for what reaches the ingest.
#![warn(missing_docs)]

mod capture;
mod config;
pub mod contract;
mod delivery;
pub mod report;
#[cfg(feature = "rmcp")]
pub mod rmcp;
#[cfg(feature = "testing")]
pub mod testing;

pub use capture::cancel::{Cancellation, Cancelled};
pub use capture::context::{
    ClientChannel, ClientError, ClientFuture, Context, ElicitationAction, ElicitationRequest, ElicitationResponse,
    LogLevel, ProgressToken, Root, SamplingRequest, SamplingResponse,
};
pub use capture::dispatch::CallError;
pub use capture::manifest::{Manifest, ManifestBuilder, ManifestError, ManifestProblem, OUTPUT_SCHEMA_PATH};
pub use capture::record::{
    CallOutcome, CallRecord, ClientInfo, IntentSource, Origin, RequestId, TraceContext, Transport,
};
pub use capture::result::{
    CallToolResult, Content, EmbeddedResource, ErrorReason, ResourceBody, ResourceLink, ToolError, ToolValue,
};
pub use capture::tool::{Annotations, Args, ArgsError, Icon, State, Tool, ToolDef};
pub use config::{CallIdentity, Config, ConfigError, Identity, IdentityValue};
pub use delivery::before_send::{BeforeSendFn, Event};
pub use delivery::diagnostics::{Diagnostic, DiagnosticKind};
pub use delivery::stats::{Dropped, Elicitations, FlushReport, Stats};
pub use delivery::tracker::{init, Guard, Tracker};

/// Redaction and size caps, as the flusher applies them to every event (public so that a
/// server can redact its own logs the same way).
pub mod redact {
    pub use crate::delivery::redact::{
        cap_value, compact_json_len, cut_at_char_boundary, redact_string, redact_string_unfiltered, redact_value,
        to_value_or_marker, truncated_marker, unserializable_marker, Redactor,
    };
}

/// JSON Schema generation and the client-safe shape of `inputSchema`: what `#[mcpeye::tool]`
/// generates, usable on hand-written schemas too.
pub mod schema {
    pub use crate::capture::schema::{
        generate, generate_as_is, inject_intent, is_valid_property_name, is_valid_tool_name, normalize, validate,
        validate_as_is, SchemaProblem, MAX_DESCRIPTION_CHARS, MAX_SCHEMA_BYTES,
    };
}

/// Items used by code that `#[mcpeye::tool]` and `mcpeye::tools!` generate. Not public API: the
/// facade re-exports it under a name that carries its version, so that a macro of another
/// version cannot compile against it.
#[doc(hidden)]
pub mod __private {
    pub use crate::capture::manifest::{Manifest, ManifestBuilder};
    pub use crate::capture::result::kind::{probe, ResultKind, ValueKind};
    pub use crate::capture::result::output::{OutputNone, OutputSchema, OutputValueNone, OutputValueSchema, Returns};
    pub use crate::capture::result::{CallToolResult, ToolValue};
    pub use crate::capture::schema::describe_argument_errors;
    pub use crate::capture::schema::generate as generate_schema;
    pub use crate::capture::schema::generate_as_is as generate_schema_as_is;
    pub use crate::capture::telemetry::{reset as reset_telemetry, set_enabled as set_telemetry_enabled};
    pub use crate::capture::tool::{
        assert_param, parse_args, Annotations, Args, ArgsError, BoxFuture, Handler, Icon, Invocation, State, StateDecl,
        Tool, ToolDef, ToolParam,
    };
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
