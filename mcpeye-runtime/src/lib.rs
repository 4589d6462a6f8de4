//! Runtime of [mcpeye](https://github.com/mcpeye/mcpeye-rs): the manifest and dispatcher behind
//! `#[mcpeye::tool]`, call capture, redaction, and the flusher that ships events to the
//! self-hosted mcpeye ingest API.
//!
//! Users depend on the `mcpeye` facade crate, which re-exports this one.
#![warn(missing_docs)]

pub mod capture;
pub mod config;
pub mod contract;
pub mod diagnostics;
pub mod dispatch;
mod event;
mod flusher;
pub mod manifest;
pub mod redact;
pub mod result;
#[cfg(feature = "rmcp")]
pub mod rmcp;
pub mod schema;
pub mod server;
pub mod stats;
pub mod testing;
pub mod tool;
pub mod tracker;
mod transport;

pub use capture::{CallRecord, IntentSource};
pub use config::{CallIdentity, Config, ConfigError, Identity, IdentityValue};
pub use diagnostics::{Diagnostic, DiagnosticKind};
pub use dispatch::{take_intent, CallError};
pub use manifest::{Manifest, ManifestBuilder, ManifestError};
pub use result::{CallToolResult, Content, ToolValue};
pub use stats::{Dropped, FlushReport, Stats};
pub use tool::{Annotations, Args, ArgsError, State, Tool, ToolDef};
pub use tracker::{init, Guard, Tracker};

/// Items used by code that `#[mcpeye::tool]` and `mcpeye::tools!` generate. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::manifest::{Manifest, ManifestBuilder};
    pub use crate::result::kind::{probe, ResultKind, ValueKind};
    pub use crate::result::{CallToolResult, ToolValue};
    pub use crate::schema::generate as generate_schema;
    pub use crate::tool::{
        assert_param, parse_args, Annotations, Args, ArgsError, BoxFuture, Handler, Invocation, State, StateDecl, Tool,
        ToolDef, ToolParam,
    };
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
