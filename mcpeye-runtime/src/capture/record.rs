//! The one capture point: a call in flight ([`InFlight`]) becomes exactly one [`CallRecord`],
//! handed to the tracker that [`active_tracker`] chooses.
//!
//! Everything here runs on the calling thread, so a record is only moved, never serialised
//! or redacted: that work belongs to the flusher.

use crate::capture::cancel::Cancellation;
use crate::capture::context::{ClientChannel, LogLevel, ProgressToken};
use crate::config::normalize_identity;
use crate::delivery::tracker::{self, Tracker};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
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

/// What the serving layer knows of a request besides its tool and arguments: the client that
/// sent it, its `_meta` (progress token, log level), the transport's session, its cancellation
/// signal, and the channel back to the client that a handler's [`Context`](crate::Context)
/// talks through. `Origin::default()` is a call with none of these (a direct `Manifest::call`).
///
/// ```
/// use mcpeye_runtime::{Cancellation, ClientInfo, Origin, ProgressToken};
/// use std::sync::Arc;
///
/// let cancel = Cancellation::new();
/// let origin = Origin::from_client(Arc::new(ClientInfo::new("inspector", "0.9")))
///     .with_progress_token(ProgressToken::Number(7))
///     .with_cancellation(cancel.clone());
/// assert_eq!(origin.progress_token, Some(ProgressToken::Number(7)));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Origin {
    /// The client that sent the request.
    pub client: Option<Arc<ClientInfo>>,
    /// The request's `_meta` object.
    pub meta: Option<Arc<Map<String, Value>>>,
    /// The transport's session id (Streamable HTTP's `Mcp-Session-Id`).
    pub session_id: Option<Arc<str>>,
    /// `_meta.progressToken`: the client wants progress notifications for this request.
    pub progress_token: Option<ProgressToken>,
    /// The least severe log level the request asks for (`_meta`, MCP 2026-07-28).
    pub log_level: Option<LogLevel>,
    /// Cancelled when the client cancels the request.
    pub cancellation: Option<Cancellation>,
    /// The way back to the client (progress, logs, sampling, elicitation).
    pub channel: Option<Arc<dyn ClientChannel>>,
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Origin")
            .field("client", &self.client)
            .field("meta", &self.meta)
            .field("session_id", &self.session_id)
            .field("progress_token", &self.progress_token)
            .field("log_level", &self.log_level)
            .field("cancellation", &self.cancellation)
            .field("channel", &self.channel.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Origin {
    /// A request from `client`.
    pub fn from_client(client: Arc<ClientInfo>) -> Self {
        Origin { client: Some(client), ..Origin::default() }
    }

    /// With the request's `_meta`; its `progressToken` becomes the progress token.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        if let Some(token) = meta.get("progressToken").and_then(ProgressToken::from_json) {
            self.progress_token = Some(token);
        }
        self.meta = Some(Arc::new(meta));
        self
    }

    /// With the transport's session id.
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// With a progress token.
    pub fn with_progress_token(mut self, token: ProgressToken) -> Self {
        self.progress_token = Some(token);
        self
    }

    /// With the least severe log level the request asks for.
    pub fn with_log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// With a cancellation signal, cancelled when the client cancels the request.
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// With the channel back to the client.
    pub fn with_channel(mut self, channel: Arc<dyn ClientChannel>) -> Self {
        self.channel = Some(channel);
        self
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
///
/// On the wire every outcome but `Success` is an error event (`isError: true`) whose
/// `errorMessage` is [`CallRecord::error_message`] (see `docs/wire-format.md#errors`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The call succeeded; `result` is the result as sent to the client.
    Success {
        /// The `CallToolResult` JSON the client received (binary payloads replaced by the
        /// truncation marker, see `docs/wire-format.md#caps`).
        result: Value,
    },
    /// The call failed: the handler returned `Err` or panicked, the input was invalid, the tool
    /// is unknown, or the result carried `isError: true`.
    Error {
        /// The error's text (for a result-level error, its text items joined with `"\n"`),
        /// when there is one.
        message: Option<String>,
    },
    /// The client cancelled the call (`notifications/cancelled`) before it ended.
    Cancelled {
        /// What is recorded as the error message: says the client cancelled, and why when it said.
        message: String,
    },
    /// The tool ran past its `timeout_ms` and was cancelled.
    TimedOut {
        /// The timeout that ran out.
        after: Duration,
        /// What is recorded as the error message: says the call timed out, and after how long.
        message: String,
    },
}

impl CallOutcome {
    /// A failure with this message.
    pub fn error(message: impl Into<String>) -> Self {
        CallOutcome::Error { message: Some(message.into()) }
    }

    /// A call the client cancelled, with the reason it gave.
    ///
    /// ```
    /// use mcpeye_runtime::CallOutcome;
    /// let CallOutcome::Cancelled { message } = CallOutcome::cancelled(Some("user pressed stop")) else { panic!() };
    /// assert_eq!(message, "the client cancelled the call: user pressed stop");
    /// ```
    pub fn cancelled(reason: Option<&str>) -> Self {
        let message = match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => format!("the client cancelled the call: {r}"),
            None => "the client cancelled the call".to_owned(),
        };
        CallOutcome::Cancelled { message }
    }

    /// A call that ran past its timeout.
    ///
    /// ```
    /// use mcpeye_runtime::CallOutcome;
    /// let outcome = CallOutcome::timed_out(std::time::Duration::from_millis(5000));
    /// let CallOutcome::TimedOut { message, .. } = outcome else { panic!() };
    /// assert_eq!(message, "the call timed out after 5000 ms and was cancelled");
    /// ```
    pub fn timed_out(after: Duration) -> Self {
        let message = format!("the call timed out after {} ms and was cancelled", after.as_millis());
        CallOutcome::TimedOut { after, message }
    }

    /// Whether the call failed (every outcome but `Success`).
    pub fn is_error(&self) -> bool {
        !matches!(self, CallOutcome::Success { .. })
    }

    /// The error's text, when the call failed with one.
    pub fn error_message(&self) -> Option<&str> {
        match self {
            CallOutcome::Success { .. } => None,
            CallOutcome::Error { message } => message.as_deref(),
            CallOutcome::Cancelled { message } | CallOutcome::TimedOut { message, .. } => Some(message),
        }
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

    /// Whether the call failed (an error, a cancelled call, a timeout).
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// The result sent to the client, when the call succeeded.
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            CallOutcome::Success { result } => Some(result),
            _ => None,
        }
    }

    /// The error's text, when the call failed with one (what the event's `errorMessage` says).
    pub fn error_message(&self) -> Option<&str> {
        self.outcome.error_message()
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
