//! [`RecordingClient`]: an MCP client for tests, that records what handlers send through their
//! [`Context`](crate::Context) and answers sampling and elicitation as scripted.

use crate::model::cancel::Cancellation;
use crate::model::client::{ClientChannel, ClientError, ClientFuture, LogLevel, ProgressToken};
use crate::model::record::{ClientInfo, Origin};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex};

/// What a handler sent to the [`RecordingClient`], in order.
///
/// ```
/// use mcpeye::testing::{RecordingClient, Sent};
/// use mcpeye::{Context, LogLevel};
///
/// let client = RecordingClient::new();
/// let ctx = Context::for_origin(&client.origin());
/// ctx.log_from(LogLevel::Error, "db", "connection lost");
/// let sent = client.sent();
/// assert!(matches!(&sent[0], Sent::Log { level: LogLevel::Error, logger: Some(l), .. } if l == "db"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Sent {
    /// `notifications/progress`.
    Progress {
        /// The progress so far.
        progress: f64,
        /// The total, when given.
        total: Option<f64>,
        /// The message, when given.
        message: Option<String>,
    },
    /// `notifications/message` (only what passed the log level).
    Log {
        /// Its level.
        level: LogLevel,
        /// Its logger, when given.
        logger: Option<String>,
        /// Its data.
        data: Value,
    },
    /// `sampling/createMessage`, with its params.
    Sampling(Value),
    /// `elicitation/create`, with its params.
    Elicitation(Value),
    /// `roots/list`.
    Roots,
}

type ReplyFn = Arc<dyn Fn(&Value) -> Result<Value, ClientError> + Send + Sync>;

#[derive(Default)]
struct ClientState {
    sent: Mutex<Vec<Sent>>,
    sampling: Mutex<Option<ReplyFn>>,
    elicitation: Mutex<Option<ReplyFn>>,
    roots: Mutex<Option<ReplyFn>>,
    session_level: Mutex<Option<LogLevel>>,
    cancellation: Cancellation,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A client for unit tests of handlers that take a [`Context`](crate::Context): call the tool
/// through the manifest with [`origin`](Self::origin), then read what the handler sent.
///
/// ```
/// use mcpeye::testing::{RecordingClient, Sent};
/// use mcpeye::{Context, LogLevel};
///
/// let client = RecordingClient::new().with_session_log_level(LogLevel::Info);
/// // In a test: `manifest.call_from(&client.origin(), "import", args)`; here, the context itself.
/// let ctx = Context::for_origin(&client.origin());
/// ctx.progress(1.0, Some(2.0));
/// ctx.log(LogLevel::Debug, "filtered out: below the session's level");
/// ctx.log(LogLevel::Warning, "row 2 skipped");
/// assert_eq!(client.progress(), [(1.0, Some(2.0))]);
/// assert_eq!(client.logs(), [(LogLevel::Warning, serde_json::json!("row 2 skipped"))]);
/// ```
#[derive(Clone, Default)]
pub struct RecordingClient {
    state: Arc<ClientState>,
}

impl fmt::Debug for RecordingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingClient").field("sent", &self.sent()).finish_non_exhaustive()
    }
}

impl RecordingClient {
    /// A client that records everything, declares no sampling or elicitation answer, and sets no
    /// log level.
    ///
    /// ```
    /// let client = mcpeye::testing::RecordingClient::new();
    /// assert!(client.sent().is_empty());
    /// ```
    pub fn new() -> Self {
        RecordingClient::default()
    }

    /// Answers `sampling/createMessage` with what `answer` returns for the request's params (a
    /// `CreateMessageResult`, or an error). Without it, sampling is unsupported.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::{ClientError, Context, SamplingRequest};
    ///
    /// let client = RecordingClient::new().with_sampling(|params| {
    ///     if params["maxTokens"].as_u64() > Some(1000) {
    ///         return Err(ClientError::Rejected { code: -1, message: "too long".into() });
    ///     }
    ///     Ok(serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}))
    /// });
    /// let ctx = Context::for_origin(&client.origin());
    /// assert!(block_on(ctx.create_message(SamplingRequest::new(5000).user("…"))).is_err());
    /// ```
    pub fn with_sampling(self, answer: impl Fn(&Value) -> Result<Value, ClientError> + Send + Sync + 'static) -> Self {
        *lock(&self.state.sampling) = Some(Arc::new(answer));
        self
    }

    /// Answers every `sampling/createMessage` with this text, from model `test-model`.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::{Context, SamplingRequest};
    ///
    /// let client = RecordingClient::new().with_sampling_text("42");
    /// let answer = block_on(Context::for_origin(&client.origin()).create_message(SamplingRequest::new(10).user("?"))).unwrap();
    /// assert_eq!((answer.text().as_deref(), answer.model.as_str()), (Some("42"), "test-model"));
    /// ```
    pub fn with_sampling_text(self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.with_sampling(move |_| {
            Ok(serde_json::json!({
                "role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"
            }))
        })
    }

    /// Answers `elicitation/create` with what `answer` returns for the request's params (an
    /// `ElicitResult`, or an error). Without it, elicitation is unsupported.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::{Context, ElicitationAction, ElicitationRequest};
    ///
    /// let client = RecordingClient::new().with_elicitation(|_| Ok(serde_json::json!({"action": "decline"})));
    /// let ask = ElicitationRequest::form("Proceed?", serde_json::json!({"type": "object", "properties": {}}));
    /// let answer = block_on(Context::for_origin(&client.origin()).elicit(ask)).unwrap();
    /// assert_eq!(answer.action, ElicitationAction::Decline);
    /// ```
    pub fn with_elicitation(
        self,
        answer: impl Fn(&Value) -> Result<Value, ClientError> + Send + Sync + 'static,
    ) -> Self {
        *lock(&self.state.elicitation) = Some(Arc::new(answer));
        self
    }

    /// Answers `roots/list` with these roots (`file://` URIs). Without it, roots are unsupported.
    ///
    /// ```
    /// use mcpeye::testing::{block_on, RecordingClient};
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new().with_roots(["file:///repo"]);
    /// let roots = block_on(Context::for_origin(&client.origin()).list_roots()).unwrap();
    /// assert_eq!(roots[0].uri, "file:///repo");
    /// ```
    pub fn with_roots<I: IntoIterator<Item = S>, S: Into<String>>(self, uris: I) -> Self {
        let roots: Vec<Value> = uris.into_iter().map(|u| serde_json::json!({"uri": u.into()})).collect();
        let result = serde_json::json!({"roots": roots});
        *lock(&self.state.roots) = Some(Arc::new(move |_| Ok(result.clone())));
        self
    }

    /// Behaves as a session whose client sent `logging/setLevel` with `level`.
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::{Context, LogLevel};
    ///
    /// let client = RecordingClient::new().with_session_log_level(LogLevel::Error);
    /// Context::for_origin(&client.origin()).log(LogLevel::Info, "not sent");
    /// assert!(client.logs().is_empty());
    /// ```
    pub fn with_session_log_level(self, level: LogLevel) -> Self {
        *lock(&self.state.session_level) = Some(level);
        self
    }

    /// The origin of a request from this client: client `mcpeye-testing/0`, progress token
    /// `"test"`, this client's cancellation signal, and this client as the channel back.
    ///
    /// ```
    /// /// Echo, logging what it does.
    /// #[mcpeye::tool]
    /// fn echo(
    ///     /// The text.
    ///     text: String,
    ///     ctx: mcpeye::Context,
    /// ) -> String {
    ///     ctx.log(mcpeye::LogLevel::Debug, "echoing");
    ///     text
    /// }
    /// # fn main() {
    /// let client = mcpeye::testing::RecordingClient::new();
    /// mcpeye::tools![echo].call_from(&client.origin(), "echo", serde_json::json!({"text": "hi"}));
    /// assert_eq!(client.logs().len(), 1);
    /// # }
    /// ```
    pub fn origin(&self) -> Origin {
        Origin::from_client(Arc::new(ClientInfo::new("mcpeye-testing", "0")))
            .with_progress_token(ProgressToken::String("test".into()))
            .with_cancellation(self.state.cancellation.clone())
            .with_channel(Arc::new(self.clone()))
    }

    /// Cancels the requests made with [`origin`](Self::origin), as `notifications/cancelled` would.
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// let ctx = Context::for_origin(&client.origin());
    /// client.cancel();
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn cancel(&self) {
        self.state.cancellation.cancel_with_reason("cancelled by the test");
    }

    /// Everything sent, in order.
    ///
    /// ```
    /// use mcpeye::testing::{RecordingClient, Sent};
    /// use mcpeye::Context;
    ///
    /// let client = RecordingClient::new();
    /// Context::for_origin(&client.origin()).progress(1.0, None);
    /// assert!(matches!(client.sent()[..], [Sent::Progress { progress, .. }] if progress == 1.0));
    /// ```
    pub fn sent(&self) -> Vec<Sent> {
        lock(&self.state.sent).clone()
    }

    /// The progress notifications: `(progress, total)`.
    ///
    /// ```
    /// let client = mcpeye::testing::RecordingClient::new();
    /// mcpeye::Context::for_origin(&client.origin()).progress(3.0, Some(3.0));
    /// assert_eq!(client.progress(), [(3.0, Some(3.0))]);
    /// ```
    pub fn progress(&self) -> Vec<(f64, Option<f64>)> {
        let pick = |s: Sent| match s {
            Sent::Progress { progress, total, .. } => Some((progress, total)),
            _ => None,
        };
        self.sent().into_iter().filter_map(pick).collect()
    }

    /// The log messages that passed the level: `(level, data)`.
    ///
    /// ```
    /// use mcpeye::LogLevel;
    ///
    /// let client = mcpeye::testing::RecordingClient::new();
    /// mcpeye::Context::for_origin(&client.origin()).log(LogLevel::Error, "disk full");
    /// assert_eq!(client.logs(), [(LogLevel::Error, serde_json::json!("disk full"))]);
    /// ```
    pub fn logs(&self) -> Vec<(LogLevel, Value)> {
        let pick = |s: Sent| match s {
            Sent::Log { level, data, .. } => Some((level, data)),
            _ => None,
        };
        self.sent().into_iter().filter_map(pick).collect()
    }

    fn push(&self, sent: Sent) {
        lock(&self.state.sent).push(sent);
    }

    fn ask(&self, answer: &Mutex<Option<ReplyFn>>, params: &Value, what: &str) -> ClientFuture {
        let answer = lock(answer).clone();
        let result = match answer {
            Some(answer) => answer(params),
            None => Err(ClientError::Unsupported(format!("the recording client has no {what} answer"))),
        };
        Box::pin(std::future::ready(result))
    }
}

impl ClientChannel for RecordingClient {
    fn progress(&self, _token: &ProgressToken, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.push(Sent::Progress { progress, total, message: message.map(str::to_owned) });
    }

    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        self.push(Sent::Log { level, logger: logger.map(str::to_owned), data });
    }

    fn session_log_level(&self) -> Option<LogLevel> {
        *lock(&self.state.session_level)
    }

    fn create_message(&self, params: Value) -> ClientFuture {
        self.push(Sent::Sampling(params.clone()));
        self.ask(&self.state.sampling, &params, "sampling")
    }

    fn elicit(&self, params: Value) -> ClientFuture {
        self.push(Sent::Elicitation(params.clone()));
        self.ask(&self.state.elicitation, &params, "elicitation")
    }

    fn list_roots(&self) -> ClientFuture {
        self.push(Sent::Roots);
        self.ask(&self.state.roots, &Value::Null, "roots")
    }
}
