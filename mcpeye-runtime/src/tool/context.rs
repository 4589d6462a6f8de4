//! The request context of a tool: a [`Context`] parameter gives a handler the client, the
//! request's `_meta`, progress, logging, cancellation, and (served by rmcp) sampling and
//! elicitation. What it sends goes through the [`ClientChannel`] of the request's
//! [`Origin`]; without one (a direct `Manifest::call`) it sends nothing and asks nothing.

use crate::model::cancel::{Cancellation, Cancelled};
use crate::model::client::*;
use crate::model::record::{ClientInfo, Origin};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The first protocol version without the `initialize` handshake (ISO dates compare as strings).
const MODERN_PROTOCOL: &str = "2026-07-28";

/// The request context of a tool call: take it as a parameter of a `#[mcpeye::tool]` function
/// (sync or async; it is not part of the input schema).
///
/// ```
/// use mcpeye_runtime::{Context, LogLevel};
///
/// // What a handler does with it (here called directly, with no client).
/// fn import(rows: Vec<String>, ctx: Context) -> String {
///     for (i, _row) in rows.iter().enumerate() {
///         if ctx.is_cancelled() {
///             return format!("stopped after {i} rows");
///         }
///         ctx.progress(i as f64 + 1.0, Some(rows.len() as f64));
///     }
///     ctx.log(LogLevel::Info, format!("imported {} rows", rows.len()));
///     "done".to_owned()
/// }
/// assert_eq!(import(vec!["a".into()], Context::default()), "done");
/// ```
///
/// Without a client (a direct `Manifest::call`, a unit test) nothing is sent and requests to
/// the client fail with [`ClientError::NoClient`]; `mcpeye::testing::RecordingClient` records
/// what a handler sent.
#[derive(Clone, Default)]
pub struct Context {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    tool: Cow<'static, str>,
    origin: Origin,
    cancellation: Cancellation,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("tool", &self.inner.tool)
            .field("client", &self.client().and_then(ClientInfo::label))
            .field("session_id", &self.session_id())
            .field("progress_token", &self.progress_token())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The context of a call of `tool` from `origin`, cancelled with `cancellation` (the
    /// origin's own, or one that also ends with the tool's timeout).
    pub(crate) fn new(tool: Cow<'static, str>, origin: Origin, cancellation: Cancellation) -> Self {
        Context { inner: Arc::new(Inner { tool, origin, cancellation }) }
    }

    /// The context of a call from `origin`, as a test or a serving layer of its own would make
    /// it for calling a handler directly.
    pub fn for_origin(origin: &Origin) -> Self {
        let origin = origin.resolved();
        let cancellation = origin.cancellation.clone().unwrap_or_default();
        Context::new(Cow::Borrowed(""), origin, cancellation)
    }

    /// The name of the tool called (empty for a context made with [`for_origin`](Self::for_origin)).
    pub fn tool_name(&self) -> &str {
        &self.inner.tool
    }

    /// The client that made the call, as it introduced itself, when the serving layer knows it.
    pub fn client(&self) -> Option<&ClientInfo> {
        self.inner.origin.client.as_deref()
    }

    /// The MCP protocol version of the call (negotiated in `initialize`, or stated in the
    /// request's `_meta`), when known.
    pub fn protocol_version(&self) -> Option<&str> {
        self.client().and_then(ClientInfo::protocol_version)
    }

    /// The request's `_meta` object, when it has one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.inner.origin.meta.as_deref()
    }

    /// The transport's session id (Streamable HTTP's `Mcp-Session-Id`), when there is one.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.origin.session_id.as_deref()
    }

    /// The request's progress token, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.inner.origin.progress_token.as_ref()
    }

    /// Reports progress (`notifications/progress`): `progress` so far, out of `total` when
    /// known. Sent only when the client gave a progress token; it should increase at each call.
    pub fn progress(&self, progress: f64, total: Option<f64>) {
        self.send_progress(progress, total, None);
    }

    /// Like [`progress`](Self::progress), with a message for the user.
    pub fn progress_with_message(&self, progress: f64, total: Option<f64>, message: impl AsRef<str>) {
        self.send_progress(progress, total, Some(message.as_ref()));
    }

    fn send_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let origin = &self.inner.origin;
        if let (Some(channel), Some(token)) = (&origin.channel, &origin.progress_token) {
            channel.progress(token, progress, total, message);
        }
    }

    /// The least severe level sent to the client: the request's own (`_meta`, MCP 2026-07-28),
    /// else the session's (`logging/setLevel`); `None` when the client set neither (every level
    /// is sent, except in MCP 2026-07-28, where a request that names no level gets no log
    /// messages).
    pub fn log_level(&self) -> Option<LogLevel> {
        let origin = &self.inner.origin;
        origin.log_level.or_else(|| origin.channel.as_ref().and_then(|c| c.session_log_level()))
    }

    /// Whether a message at `level` would be sent.
    pub fn log_enabled(&self, level: LogLevel) -> bool {
        self.inner.origin.channel.is_some()
            && match self.log_level() {
                Some(min) => level >= min,
                // MCP 2026-07-28 has no `logging/setLevel`: a request asks for logs in its `_meta`.
                None => self.protocol_version().is_none_or(|v| v < MODERN_PROTOCOL),
            }
    }

    /// Sends a log message to the client (`notifications/message`), unless the client asked for
    /// more severe levels only. `data` is any JSON: a string, or an object of details.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.send_log(level, None, data.into());
    }

    /// Like [`log`](Self::log), naming the `logger` it comes from.
    pub fn log_from(&self, level: LogLevel, logger: &str, data: impl Into<Value>) {
        self.send_log(level, Some(logger), data.into());
    }

    fn send_log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if self.log_enabled(level) {
            if let Some(channel) = &self.inner.origin.channel {
                channel.log(level, logger, data);
            }
        }
    }

    /// Whether the call was cancelled: by the client (`notifications/cancelled`) or by the
    /// tool's `timeout_ms`. A long synchronous handler should check it and stop early.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// A future that completes when the call is cancelled (`'static`, `Send`: move it into a
    /// spawned task). An async handler is dropped at its next `.await` when its call is
    /// cancelled, so it only needs this for work it spawned.
    pub fn cancelled(&self) -> Cancelled {
        self.inner.cancellation.cancelled()
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub async fn create_message(&self, request: SamplingRequest) -> Result<SamplingResponse, ClientError> {
        let channel = self.inner.origin.channel.clone().ok_or(ClientError::NoClient)?;
        let result = channel.create_message(request.to_params()).await?;
        SamplingResponse::from_json(&result)
    }

    /// Asks the user for input through the client (`elicitation/create`, form or URL mode).
    pub async fn elicit(&self, request: ElicitationRequest) -> Result<ElicitationResponse, ClientError> {
        let channel = self.inner.origin.channel.clone().ok_or(ClientError::NoClient)?;
        let result = channel.elicit(request.to_params()).await?;
        ElicitationResponse::from_json(&result)
    }
}
