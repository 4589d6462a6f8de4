//! The one capture point: a call in flight ([`InFlight`]) becomes exactly one [`CallRecord`],
//! handed to the tracker that [`active_tracker`] chooses.
//!
//! Everything here runs on the calling thread, so a record is only moved, never serialised
//! or redacted: that work belongs to the flusher.

use crate::config::normalize_identity;
use crate::delivery::tracker::{self, Tracker};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The MCP client that made a call, as it introduced itself: in the `initialize` handshake, or
/// (MCP 2026-07-28) in each request's `_meta`. Its `name/version` is the `client` of the identity
/// its events are sent under, so that every event is attributed to its own client.
///
/// ```
/// let client = mcpeye_runtime::ClientInfo::new("claude-desktop", "1.4.2").with_protocol_version("2026-07-28");
/// assert_eq!(client.label(), Some("claude-desktop/1.4.2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientInfo {
    name: String,
    version: String,
    protocol_version: Option<String>,
    /// `name/version` (or `name` with a blank version), trimmed and cut as identities are.
    label: Option<String>,
}

impl ClientInfo {
    /// A client from its `clientInfo` name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let (name, version) = (name.into(), version.into());
        let (n, v) = (name.trim(), version.trim());
        let label = match (n.is_empty(), v.is_empty()) {
            (true, _) => None,
            (false, true) => normalize_identity(n),
            (false, false) => normalize_identity(format!("{n}/{v}")),
        };
        ClientInfo { name, version, protocol_version: None, label }
    }

    /// The protocol version the client negotiated (or states in each request).
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }

    /// The client's name, as it gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client's version, as it gave it.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The MCP protocol version of the session or request, when known.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// What `identity.client` says on the wire: `name/version`, or `name` when the version is
    /// blank; `None` when the name is blank too.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

/// What the serving layer knows of a request besides its tool and arguments: today, the client
/// that sent it. `Origin::default()` is a call with no known client (a direct `Manifest::call`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Origin {
    /// The client that sent the request.
    pub client: Option<Arc<ClientInfo>>,
}

impl Origin {
    /// A request from `client`.
    pub fn from_client(client: Arc<ClientInfo>) -> Self {
        Origin { client: Some(client) }
    }
}

/// Where a call's intent came from (`intentSource` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentSource {
    /// From the `mcpeyeIntent` argument injected by mcpeye.
    Mcpeye,
    /// Harvested from a host-specific field.
    Native,
}

impl IntentSource {
    /// The wire spelling: `"mcpeye"` or `"native"`.
    pub fn as_str(self) -> &'static str {
        match self {
            IntentSource::Mcpeye => "mcpeye",
            IntentSource::Native => "native",
        }
    }
}

/// How a call ended. A failed call has no result: the two cannot be recorded together.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The call succeeded; `result` is the result as sent to the client.
    Success {
        /// The `CallToolResult` JSON the client received.
        result: Value,
    },
    /// The call failed: the handler returned `Err` or panicked, the input was invalid, the tool
    /// is unknown, or the result carried `isError: true`.
    Error {
        /// The error's text (for a result-level error, its text items joined with `"\n"`),
        /// when there is one.
        message: Option<String>,
    },
}

impl CallOutcome {
    /// A failure with this message.
    pub fn error(message: impl Into<String>) -> Self {
        CallOutcome::Error { message: Some(message.into()) }
    }
}

/// What a call produced, as the runtime records it (see `docs/wire-format.md#event`). Not yet
/// capped or redacted.
///
/// The dispatcher and the rmcp integration build records themselves; build one with
/// [`CallRecord::new`] to hand a call of your own server to [`Tracker::record`].
///
/// ```
/// use mcpeye_runtime::{CallOutcome, CallRecord};
/// let record = CallRecord::new("search", serde_json::json!({"q": "rust"}), CallOutcome::error("timed out"));
/// assert!(record.is_error());
/// assert_eq!(record.result(), None);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallRecord {
    /// The tool's registered name.
    pub tool_name: Cow<'static, str>,
    /// The arguments without `mcpeyeIntent`; `{}` when the call's arguments were not an object.
    pub arguments: Value,
    /// How the call ended.
    pub outcome: CallOutcome,
    /// The agent's stated intent, untrimmed, and where it came from.
    pub intent: Option<(String, IntentSource)>,
    /// The client that made the call, when the serving layer knows it. Its events are sent under
    /// its own identity; the configured [`Identity`](crate::Identity) fills what it does not say.
    pub client: Option<Arc<ClientInfo>>,
    /// Epoch milliseconds at the end of the call.
    pub timestamp_ms: u64,
    /// How long the call took.
    pub duration: Duration,
}

impl CallRecord {
    /// A call that ends now, took no measurable time, had no intent and no known client (set the
    /// public fields to change that).
    pub fn new(tool_name: impl Into<Cow<'static, str>>, arguments: Value, outcome: CallOutcome) -> Self {
        InFlight::start(tool_name.into(), arguments, None).into_record(outcome, Duration::ZERO)
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, CallOutcome::Error { .. })
    }

    /// The result sent to the client, when the call succeeded.
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            CallOutcome::Success { result } => Some(result),
            CallOutcome::Error { .. } => None,
        }
    }

    /// The error's text, when the call failed with one.
    pub fn error_message(&self) -> Option<&str> {
        match &self.outcome {
            CallOutcome::Error { message } => message.as_deref(),
            CallOutcome::Success { .. } => None,
        }
    }
}

/// One call between its start and its outcome: everything its record needs but the outcome.
/// Every [`CallRecord`] is built by [`InFlight::into_record`].
pub(crate) struct InFlight {
    pub(crate) tool_name: Cow<'static, str>,
    /// The arguments as the handler sees them (the intent already taken out).
    pub(crate) arguments: Value,
    pub(crate) intent: Option<(String, IntentSource)>,
    pub(crate) client: Option<Arc<ClientInfo>>,
    pub(crate) started: Instant,
}

impl InFlight {
    pub(crate) fn start(
        tool_name: Cow<'static, str>,
        arguments: Value,
        intent: Option<(String, IntentSource)>,
    ) -> Self {
        InFlight { tool_name, arguments, intent, client: None, started: Instant::now() }
    }

    /// The record of this call, ended now after `duration`.
    pub(crate) fn into_record(self, outcome: CallOutcome, duration: Duration) -> CallRecord {
        CallRecord {
            tool_name: self.tool_name,
            arguments: self.arguments,
            outcome,
            intent: self.intent,
            client: self.client,
            timestamp_ms: now_epoch_ms(),
            duration,
        }
    }

    /// Records the outcome into `tracker` (nothing when there is none), timed from the start.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))] // the dispatcher times its calls itself
    pub(crate) fn finish(self, tracker: Option<&Tracker>, outcome: CallOutcome) {
        let duration = self.started.elapsed();
        self.finish_after(tracker, outcome, duration);
    }

    /// Like [`finish`](Self::finish), with the duration given (the reserved tool records 0).
    pub(crate) fn finish_after(self, tracker: Option<&Tracker>, outcome: CallOutcome, duration: Duration) {
        if let Some(tracker) = tracker {
            tracker.record(self.into_record(outcome, duration));
        }
    }
}

/// The tracker a call is recorded into: the one given to the manifest or router (borrowed: no
/// reference count touched on the call path), else the process-wide one from `init`.
pub(crate) fn active_tracker(own: Option<&Tracker>) -> Option<Cow<'_, Tracker>> {
    match own {
        Some(t) => Some(Cow::Borrowed(t)),
        None => tracker::global().map(Cow::Owned),
    }
}

/// Milliseconds since the Unix epoch now (0 if the clock is before 1970).
pub(crate) fn now_epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
