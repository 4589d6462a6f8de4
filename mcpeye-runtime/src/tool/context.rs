//! The request context of a tool: a [`Context`] parameter gives a handler the client, the
//! request's `_meta`, progress, logging, cancellation, and (served by rmcp) sampling and
//! elicitation. What it sends goes through the [`ClientChannel`] of the request's
//! [`Origin`]; without one (a direct `Manifest::call`) it sends nothing and asks nothing.

use crate::model::ask::{self, Asking, Lookup};
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
/// use mcpeye::{Context, LogLevel};
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
///
/// As a parameter of a tool, tested with that client:
///
/// ```
/// use mcpeye::testing::RecordingClient;
/// use mcpeye::{Context, LogLevel};
///
/// /// Count the lines of a text, reporting progress.
/// #[mcpeye::tool]
/// fn count_lines(
///     /// The text.
///     text: String,
///     ctx: Context,
/// ) -> usize {
///     let lines: Vec<&str> = text.lines().collect();
///     for i in 0..lines.len() {
///         ctx.progress((i + 1) as f64, Some(lines.len() as f64));
///     }
///     ctx.log(LogLevel::Info, format!("{} lines counted", lines.len()));
///     lines.len()
/// }
///
/// # fn main() {
/// let client = RecordingClient::new();
/// let manifest = mcpeye::tools![count_lines];
/// manifest.call_from(&client.origin(), "count_lines", serde_json::json!({"text": "a\nb"}));
/// assert_eq!(client.progress(), [(1.0, Some(2.0)), (2.0, Some(2.0))]);
/// assert_eq!(client.logs(), [(LogLevel::Info, serde_json::json!("2 lines counted"))]);
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Context {
    inner: Arc<CallContext>,
}

#[derive(Default)]
struct CallContext {
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
        Context { inner: Arc::new(CallContext { tool, origin, cancellation }) }
    }

    /// The context of a call from `origin`, as a test or a serving layer of its own would make
    /// it for calling a handler directly.
    ///
    /// ```
    /// use mcpeye::{ClientInfo, Context, Origin};
    /// use std::sync::Arc;
    ///
    /// let origin = Origin::from_client(Arc::new(ClientInfo::new("claude-code", "2.0.1"))).with_session_id("s-9");
    /// let ctx = Context::for_origin(&origin);
    /// assert_eq!(ctx.client().unwrap().name(), "claude-code");
    /// assert_eq!(ctx.session_id(), Some("s-9"));
    /// ```
    pub fn for_origin(origin: &Origin) -> Self {
        let origin = origin.resolved();
        let cancellation = origin.cancellation.clone().unwrap_or_default();
        Context::new(Cow::Borrowed(""), origin, cancellation)
    }

    /// The name of the tool called (empty for a context made with [`for_origin`](Self::for_origin)).
    ///
    /// ```
    /// /// Tell which tool this is.
    /// #[mcpeye::tool(name = "whoami")]
    /// fn which(ctx: mcpeye::Context) -> String {
    ///     ctx.tool_name().to_owned()
    /// }
    /// # fn main() {
    /// assert_eq!(mcpeye::tools![which].call("whoami", serde_json::json!({}))["content"][0]["text"], "whoami");
    /// # }
    /// ```
    pub fn tool_name(&self) -> &str {
        &self.inner.tool
    }

    /// The client that made the call, as it introduced itself, when the serving layer knows it.
    ///
    /// ```
    /// fn greeting(ctx: &mcpeye::Context) -> String {
    ///     match ctx.client() {
    ///         Some(client) => format!("hello, {} {} user", client.name(), client.version()),
    ///         None => "hello".to_owned(),
    ///     }
    /// }
    /// assert_eq!(greeting(&mcpeye::Context::default()), "hello");
    /// ```
    pub fn client(&self) -> Option<&ClientInfo> {
        self.inner.origin.client.as_deref()
    }

    /// The MCP protocol version of the call (negotiated in `initialize`, or stated in the
    /// request's `_meta`), when known.
    ///
    /// ```
    /// use mcpeye::{ClientInfo, Context, Origin};
    /// use std::sync::Arc;
    ///
    /// let client = ClientInfo::new("inspector", "0.9").with_protocol_version("2025-11-25");
    /// let ctx = Context::for_origin(&Origin::from_client(Arc::new(client)));
    /// assert_eq!(ctx.protocol_version(), Some("2025-11-25"));
    /// ```
    pub fn protocol_version(&self) -> Option<&str> {
        self.client().and_then(ClientInfo::protocol_version)
    }

    /// The request's `_meta` object, when it has one.
    ///
    /// ```
    /// use mcpeye::{Context, Origin};
    ///
    /// let meta = serde_json::json!({"com.example/tenant": "acme"});
    /// let ctx = Context::for_origin(&Origin::default().with_meta(meta.as_object().unwrap().clone()));
    /// assert_eq!(ctx.meta().unwrap()["com.example/tenant"], "acme");
    /// ```
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.inner.origin.meta.as_deref()
    }

    /// The transport's session id (Streamable HTTP's `Mcp-Session-Id`), when there is one.
    ///
    /// ```
    /// use mcpeye::{Context, Origin};
    ///
    /// let ctx = Context::for_origin(&Origin::default().with_session_id("3f2a"));
    /// assert_eq!(ctx.session_id(), Some("3f2a"));
    /// ```
    pub fn session_id(&self) -> Option<&str> {
        self.inner.origin.session_id.as_deref()
    }

    /// The request's progress token, when the client asked for progress.
    ///
    /// ```
    /// use mcpeye::{Context, Origin, ProgressToken};
    ///
    /// let ctx = Context::for_origin(&Origin::default().with_progress_token(ProgressToken::Number(7)));
    /// assert_eq!(ctx.progress_token(), Some(&ProgressToken::Number(7)));
    /// ```
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.inner.origin.progress_token.as_ref()
    }

    /// Reports progress (`notifications/progress`): `progress` so far, out of `total` when
    /// known. Sent only when the client gave a progress token; it should increase at each call.
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// let ctx = Context::for_origin(&client.origin());
    /// ctx.progress(1.0, Some(4.0));
    /// ctx.progress(2.0, None);
    /// assert_eq!(client.progress(), [(1.0, Some(4.0)), (2.0, None)]);
    /// ```
    pub fn progress(&self, progress: f64, total: Option<f64>) {
        self.send_progress(progress, total, None);
    }

    /// Like [`progress`](Self::progress), with a message for the user.
    ///
    /// ```
    /// use mcpeye::testing::{RecordingClient, Sent};
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// Context::for_origin(&client.origin()).progress_with_message(3.0, Some(10.0), "indexing page 3");
    /// assert!(matches!(&client.sent()[0], Sent::Progress { message: Some(m), .. } if m == "indexing page 3"));
    /// ```
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
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::{Context, LogLevel};
    ///
    /// let client = RecordingClient::new().with_session_log_level(LogLevel::Warning);
    /// assert_eq!(Context::for_origin(&client.origin()).log_level(), Some(LogLevel::Warning));
    /// ```
    pub fn log_level(&self) -> Option<LogLevel> {
        let origin = &self.inner.origin;
        origin.log_level.or_else(|| origin.channel.as_ref().and_then(|c| c.session_log_level()))
    }

    /// Whether a message at `level` would be sent.
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::{Context, LogLevel};
    ///
    /// let client = RecordingClient::new().with_session_log_level(LogLevel::Info);
    /// let ctx = Context::for_origin(&client.origin());
    /// if ctx.log_enabled(LogLevel::Debug) {
    ///     unreachable!("not built: below the session's level");
    /// }
    /// assert!(ctx.log_enabled(LogLevel::Error));
    /// ```
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
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::{Context, LogLevel};
    ///
    /// let client = RecordingClient::new();
    /// let ctx = Context::for_origin(&client.origin());
    /// ctx.log(LogLevel::Notice, serde_json::json!({"skipped": 2, "reason": "empty rows"}));
    /// assert_eq!(client.logs()[0].1["skipped"], 2);
    /// ```
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.send_log(level, None, data.into());
    }

    /// Like [`log`](Self::log), naming the `logger` it comes from.
    ///
    /// ```
    /// use mcpeye::testing::{RecordingClient, Sent};
    /// use mcpeye::{Context, LogLevel};
    ///
    /// let client = RecordingClient::new();
    /// Context::for_origin(&client.origin()).log_from(LogLevel::Error, "billing", "card declined");
    /// assert!(matches!(&client.sent()[0], Sent::Log { logger: Some(l), .. } if l == "billing"));
    /// ```
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
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// let ctx = Context::for_origin(&client.origin());
    /// assert!(!ctx.is_cancelled());
    /// client.cancel(); // as `notifications/cancelled` would
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// A future that completes when the call is cancelled (`'static`, `Send`: move it into a
    /// spawned task). An async handler is dropped at its next `.await` when its call is
    /// cancelled, so it only needs this for work it spawned.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// let ctx = Context::for_origin(&client.origin());
    /// let stop = ctx.cancelled(); // e.g. moved into a spawned task that ends when the call does
    /// client.cancel();
    /// block_on(stop);
    /// ```
    pub fn cancelled(&self) -> Cancelled {
        self.inner.cancellation.cancelled()
    }

    /// The round of a call that asks through `input_required` results (MCP 2026-07-28): 1 for
    /// the first request, 2 for the first retry, …, its state verified; `None` in older eras
    /// (and for a direct call), where questions are sent to the client within one request.
    ///
    /// ```
    /// assert_eq!(mcpeye::Context::default().round(), None);
    /// ```
    pub fn round(&self) -> Option<u32> {
        self.inner.origin.asking.as_ref().map(|a| a.round)
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// How it asks depends on the client's era; the handler's code is the same in both:
    /// - up to MCP 2025-11-25, the request is sent to the client and awaited;
    /// - in MCP 2026-07-28 the call answers `resultType: "input_required"` with the question
    ///   (servers cannot send requests there): the handler is stopped at this `.await`, the
    ///   client retries the call with the answer, and the handler runs again from the start,
    ///   this time getting the answer here. Questions asked together (`join!`) go in one round;
    ///   code before the first question runs once per round, so keep it free of side effects.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::{Context, SamplingRequest};
    ///
    /// /// Name a colour.
    /// #[mcpeye::tool]
    /// async fn name_colour(
    ///     /// The colour, as `#rrggbb`.
    ///     hex: String,
    ///     ctx: Context,
    /// ) -> Result<String, String> {
    ///     let ask = SamplingRequest::new(20).user(format!("Give {hex} a one-word name."));
    ///     let answer = ctx.create_message(ask).await.map_err(|e| e.to_string())?;
    ///     Ok(answer.text().unwrap_or_default())
    /// }
    ///
    /// # fn main() {
    /// let client = RecordingClient::new().with_sampling_text("Teal");
    /// let manifest = mcpeye::tools![name_colour];
    /// let out = block_on(manifest.call_async_from(&client.origin(), "name_colour", serde_json::json!({"hex": "#008080"})));
    /// assert_eq!(out["content"][0]["text"], "Teal");
    /// # }
    /// ```
    pub async fn create_message(&self, request: SamplingRequest) -> Result<SamplingResponse, ClientError> {
        if let Some(asking) = &self.inner.origin.asking {
            if asking.capability("sampling").is_none() {
                return Err(ClientError::Unsupported(
                    "the client did not declare the `sampling` capability".to_owned(),
                ));
            }
            let valid = |v: &Value| SamplingResponse::from_json(v).is_ok();
            let answer = ask_round(asking, request.key_name(), ask::SAMPLE, request.to_params(), valid).await;
            return SamplingResponse::from_json(&answer);
        }
        let channel = self.inner.origin.channel.clone().ok_or(ClientError::NoClient)?;
        let result = channel.create_message(request.to_params()).await?;
        SamplingResponse::from_json(&result)
    }

    /// Asks the user for input through the client (`elicitation/create`, form or URL mode).
    /// In MCP 2026-07-28, through an `input_required` result, as
    /// [`create_message`](Self::create_message) says.
    ///
    /// ```
    /// use mcpeye::{ClientError, Context, ElicitationAction, ElicitationRequest};
    ///
    /// // The same code for every client: asked directly, or answered on the call's retry.
    /// async fn rename(ctx: Context) -> Result<String, ClientError> {
    ///     let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
    ///     let answer = ctx.elicit(ElicitationRequest::form("New name?", schema).key("name")).await?;
    ///     Ok(match answer.action {
    ///         ElicitationAction::Accept => format!("renamed to {:?}", answer.content),
    ///         _ => "left as it was".to_owned(),
    ///     })
    /// }
    /// ```
    pub async fn elicit(&self, request: ElicitationRequest) -> Result<ElicitationResponse, ClientError> {
        if let Some(asking) = &self.inner.origin.asking {
            elicitation_supported(asking.capability("elicitation"), request.is_url())?;
            let valid = |v: &Value| ElicitationResponse::from_json(v).is_ok();
            let answer = ask_round(asking, request.key_name(), ask::ELICIT, request.to_params(), valid).await;
            return ElicitationResponse::from_json(&answer);
        }
        let channel = self.inner.origin.channel.clone().ok_or(ClientError::NoClient)?;
        let result = channel.elicit(request.to_params()).await?;
        ElicitationResponse::from_json(&result)
    }

    /// Asks the client for its roots (`roots/list`). In MCP 2026-07-28, through an
    /// `input_required` result (key `roots-N`), as [`create_message`](Self::create_message) says.
    ///
    /// ```
    /// use mcpeye::{ClientError, Context};
    ///
    /// async fn workspace(ctx: Context) -> Result<String, ClientError> {
    ///     let roots = ctx.list_roots().await?;
    ///     Ok(roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(", "))
    /// }
    /// ```
    pub async fn list_roots(&self) -> Result<Vec<Root>, ClientError> {
        if let Some(asking) = &self.inner.origin.asking {
            if asking.capability("roots").is_none() {
                return Err(ClientError::Unsupported("the client did not declare the `roots` capability".to_owned()));
            }
            let valid = |v: &Value| Root::list_from_json(v).is_ok();
            let answer = ask_round(asking, None, ask::ROOTS, Value::Object(Map::new()), valid).await;
            return Root::list_from_json(&answer);
        }
        let channel = self.inner.origin.channel.clone().ok_or(ClientError::NoClient)?;
        let result = channel.list_roots().await?;
        Root::list_from_json(&result)
    }
}

/// A question of an MCP 2026-07-28 round: its answer, or (none yet) a wait that never ends,
/// at which the serving layer stops the handler and answers `input_required`.
async fn ask_round(
    asking: &Asking,
    key: Option<&str>,
    method: &'static str,
    params: Value,
    valid: impl Fn(&Value) -> bool,
) -> Value {
    let (key, lookup) = asking.ask(key, method, params, valid);
    match lookup {
        Lookup::Answered(answer) => {
            let action = answer.get("action").and_then(Value::as_str).filter(|_| method == ask::ELICIT);
            ask::span_event("mcpeye.input.answered", method, &key, asking.round, action);
            answer
        }
        Lookup::Unanswered => {
            ask::span_event("mcpeye.input.asked", method, &key, asking.round, None);
            std::future::pending().await
        }
    }
}
