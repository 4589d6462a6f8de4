//! The way back to the client: the [`ClientChannel`] a handler's [`Context`](crate::Context)
//! talks through (progress, logs, sampling, elicitation), with the requests and answers it
//! carries, the request's log level and progress token. Without a channel (a direct
//! `Manifest::call`) nothing is sent and nothing asked.

use crate::model::result::Content;
use serde_json::{Map, Value};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// The severity of a log message sent to the client (`notifications/message`), from `debug` to
/// `emergency` (RFC 5424, as MCP defines it). Ordered: `Debug < Info < … < Emergency`.
///
/// ```
/// use mcpeye::{Context, LogLevel};
///
/// /// Import rows, telling the client about the ones skipped.
/// #[mcpeye::tool]
/// fn import(
///     /// The rows, one per line.
///     rows: String,
///     ctx: Context,
/// ) -> usize {
///     let (good, bad): (Vec<&str>, Vec<&str>) = rows.lines().partition(|r| r.contains(','));
///     if ctx.log_enabled(LogLevel::Warning) {
///         ctx.log(LogLevel::Warning, format!("{} rows skipped", bad.len()));
///     }
///     good.len()
/// }
/// # fn main() {
/// # assert_eq!(mcpeye::tools![import].call("import", serde_json::json!({"rows": "a,b\nc"}))["content"][0]["text"], "1");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, from the least to the most severe.
    ///
    /// ```
    /// let names: Vec<&str> = mcpeye::LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    /// assert_eq!(names[0], "debug");
    /// ```
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The MCP spelling: `"debug"`, `"info"`, …
    ///
    /// ```
    /// assert_eq!(mcpeye::LogLevel::Warning.as_str(), "warning");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level of an MCP spelling, `None` for anything else.
    ///
    /// ```
    /// use mcpeye::LogLevel;
    /// assert_eq!(LogLevel::parse("warning"), Some(LogLevel::Warning));
    /// assert!(LogLevel::Warning > LogLevel::Info);
    /// ```
    pub fn parse(s: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `progressToken` a client put in a request's `_meta`: progress notifications for the
/// request carry it back.
///
/// ```
/// use mcpeye::ProgressToken;
///
/// let token = ProgressToken::from_json(&serde_json::json!("upload-7")).unwrap();
/// assert_eq!(token, ProgressToken::String("upload-7".into()));
/// assert_eq!(ProgressToken::Number(3).to_json(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// An integer token.
    Number(i64),
}

impl ProgressToken {
    /// The token of a `_meta.progressToken` JSON value (a string or an integer).
    ///
    /// ```
    /// use mcpeye::ProgressToken;
    ///
    /// assert_eq!(ProgressToken::from_json(&serde_json::json!(12)), Some(ProgressToken::Number(12)));
    /// assert_eq!(ProgressToken::from_json(&serde_json::json!(1.5)), None);
    /// ```
    pub fn from_json(value: &Value) -> Option<ProgressToken> {
        match value {
            Value::String(s) => Some(ProgressToken::String(s.clone())),
            Value::Number(n) => n.as_i64().map(ProgressToken::Number),
            _ => None,
        }
    }

    /// The token as JSON.
    ///
    /// ```
    /// assert_eq!(mcpeye::ProgressToken::String("t".into()).to_json(), "t");
    /// ```
    pub fn to_json(&self) -> Value {
        match self {
            ProgressToken::String(s) => Value::String(s.clone()),
            ProgressToken::Number(n) => Value::from(*n),
        }
    }
}

/// A future answered by the client ([`ClientChannel::create_message`], [`ClientChannel::elicit`]).
///
/// ```
/// use mcpeye::{ClientError, ClientFuture};
///
/// let answer: ClientFuture = Box::pin(async { Err(ClientError::Cancelled) });
/// # drop(answer);
/// ```
pub type ClientFuture = Pin<Box<dyn Future<Output = Result<Value, ClientError>> + Send + 'static>>;

/// How a serving layer talks back to the client of one request. `mcpeye::rmcp` implements it
/// over rmcp's peer; `mcpeye::testing::RecordingClient` records what a handler sent, for tests.
///
/// The [`Context`](crate::Context) applies the MCP rules before calling it (progress only with a token, log
/// messages filtered by level), so an implementation only delivers.
///
/// A channel over a transport of your own, given to the calls through their
/// [`Origin`](crate::Origin):
///
/// ```
/// use mcpeye::{ClientChannel, ClientError, ClientFuture, Context, LogLevel, Origin, ProgressToken};
/// use std::sync::Arc;
///
/// /// Sends notifications down a pipe of the server's own; asks nothing of the client.
/// struct Pipe(std::sync::mpsc::Sender<serde_json::Value>);
///
/// impl ClientChannel for Pipe {
///     fn progress(&self, token: &ProgressToken, progress: f64, total: Option<f64>, _message: Option<&str>) {
///         let params = serde_json::json!({"progressToken": token.to_json(), "progress": progress, "total": total});
///         let _ = self.0.send(serde_json::json!({"method": "notifications/progress", "params": params}));
///     }
///     fn log(&self, level: LogLevel, _logger: Option<&str>, data: serde_json::Value) {
///         let params = serde_json::json!({"level": level.as_str(), "data": data});
///         let _ = self.0.send(serde_json::json!({"method": "notifications/message", "params": params}));
///     }
///     fn create_message(&self, _params: serde_json::Value) -> ClientFuture {
///         Box::pin(async { Err(ClientError::Unsupported("no sampling over this pipe".into())) })
///     }
///     fn elicit(&self, _params: serde_json::Value) -> ClientFuture {
///         Box::pin(async { Err(ClientError::Unsupported("no elicitation over this pipe".into())) })
///     }
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let origin = Origin::default().with_channel(Arc::new(Pipe(tx)));
/// let ctx = Context::for_origin(&origin);
/// ctx.log(LogLevel::Info, "indexing");
/// assert_eq!(rx.recv().unwrap()["params"]["data"], "indexing");
/// ```
pub trait ClientChannel: Send + Sync {
    /// Sends `notifications/progress` for `token`.
    ///
    /// ```
    /// use mcpeye::{testing::RecordingClient, ClientChannel, ProgressToken};
    /// let client = RecordingClient::new(); // a channel that records what it is asked to send
    /// ClientChannel::progress(&client, &ProgressToken::Number(7), 1.0, Some(4.0), Some("1 of 4"));
    /// assert_eq!(client.progress(), [(1.0, Some(4.0))]);
    /// ```
    fn progress(&self, token: &ProgressToken, progress: f64, total: Option<f64>, message: Option<&str>);

    /// Sends `notifications/message` at `level`, from `logger` when given.
    ///
    /// ```
    /// use mcpeye::{testing::RecordingClient, ClientChannel, LogLevel};
    /// let client = RecordingClient::new(); // a channel that records what it is asked to send
    /// client.log(LogLevel::Warning, Some("db"), serde_json::json!("slow query"));
    /// assert_eq!(client.logs(), [(LogLevel::Warning, serde_json::json!("slow query"))]);
    /// ```
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value);

    /// The least severe level the client asked for with `logging/setLevel` in this session, if
    /// it did. `None` lets every level through.
    ///
    /// ```
    /// use mcpeye::{testing::RecordingClient, ClientChannel, LogLevel};
    /// assert_eq!(RecordingClient::new().session_log_level(), None);
    /// let client = RecordingClient::new().with_session_log_level(LogLevel::Error);
    /// assert_eq!(client.session_log_level(), Some(LogLevel::Error));
    /// ```
    fn session_log_level(&self) -> Option<LogLevel> {
        None
    }

    /// Sends `sampling/createMessage` with these `params` and resolves to the client's result.
    ///
    /// ```
    /// use mcpeye::{testing::{block_on, RecordingClient}, ClientChannel, SamplingRequest};
    /// let client = RecordingClient::new().with_sampling_text("42");
    /// let result = block_on(client.create_message(SamplingRequest::new(10).user("?").to_params()))?;
    /// assert_eq!(result["content"]["text"], "42");
    /// # Ok::<(), mcpeye::ClientError>(())
    /// ```
    fn create_message(&self, params: Value) -> ClientFuture;

    /// Sends `elicitation/create` with these `params` and resolves to the client's result.
    ///
    /// ```
    /// use mcpeye::{testing::{block_on, RecordingClient}, ClientChannel, ClientError};
    /// let client = RecordingClient::new(); // no elicitation answer scripted
    /// let answer = block_on(client.elicit(serde_json::json!({"message": "Which account?"})));
    /// assert!(matches!(answer, Err(ClientError::Unsupported(_))));
    /// ```
    fn elicit(&self, params: Value) -> ClientFuture;

    /// Sends `roots/list` and resolves to the client's result. The default answers
    /// [`ClientError::Unsupported`].
    ///
    /// ```
    /// use mcpeye::{testing::{block_on, RecordingClient}, ClientChannel};
    /// let client = RecordingClient::new().with_roots(["file:///home/ada/project"]);
    /// let result = block_on(client.list_roots())?;
    /// assert_eq!(result["roots"][0]["uri"], "file:///home/ada/project");
    /// # Ok::<(), mcpeye::ClientError>(())
    /// ```
    fn list_roots(&self) -> ClientFuture {
        Box::pin(std::future::ready(Err(ClientError::Unsupported("this channel cannot ask for roots".to_owned()))))
    }
}

/// Why a request to the client (sampling, elicitation) got no answer.
///
/// ```
/// use mcpeye::{ClientError, Context, SamplingRequest};
///
/// /// Summarise with the client's model when it can, else say why not.
/// async fn summary(ctx: Context, text: String) -> String {
///     match ctx.create_message(SamplingRequest::new(100).user(format!("Summarise: {text}"))).await {
///         Ok(answer) => answer.text().unwrap_or_default(),
///         Err(ClientError::NoClient | ClientError::Unsupported(_)) => text.chars().take(80).collect(),
///         Err(e) => format!("no summary: {e}"),
///     }
/// }
///
/// // Called directly, not served: there is no client to ask.
/// let short = mcpeye::testing::block_on(summary(Context::default(), "a long text".into()));
/// assert_eq!(short, "a long text");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientError {
    /// There is no client to ask: the tool was called directly (`Manifest::call`), not served.
    NoClient,
    /// The client did not declare the capability (`sampling`, `elicitation` or its URL mode), or
    /// the protocol version forbids requests to the client (MCP 2026-07-28).
    Unsupported(String),
    /// The client answered with a JSON-RPC error.
    Rejected {
        /// The JSON-RPC error code.
        code: i64,
        /// The error message.
        message: String,
    },
    /// The call was cancelled while waiting for the answer.
    Cancelled,
    /// The request could not be sent, or its answer could not be read.
    Failed(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::NoClient => f.write_str("no MCP client to ask: the tool was called directly, not served"),
            ClientError::Unsupported(why) => write!(f, "the client cannot answer this request: {why}"),
            ClientError::Rejected { code, message } => write!(f, "the client refused the request ({code}): {message}"),
            ClientError::Cancelled => f.write_str("the call was cancelled while waiting for the client"),
            ClientError::Failed(why) => write!(f, "the request to the client failed: {why}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// A `sampling/createMessage` request: ask the client's model for a completion.
///
/// ```
/// use mcpeye::SamplingRequest;
/// let request = SamplingRequest::new(100).user("Summarise: …").system_prompt("Be brief.");
/// assert_eq!(request.to_params()["messages"][0]["content"]["text"], "Summarise: …");
/// assert_eq!(request.to_params()["maxTokens"], 100);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    params: Map<String, Value>,
    key: Option<String>,
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens, with no message yet.
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(200);
    /// assert_eq!(request.to_params()["messages"], serde_json::json!([]));
    /// ```
    pub fn new(max_tokens: u32) -> Self {
        let mut params = Map::new();
        params.insert("messages".into(), Value::Array(Vec::new()));
        params.insert("maxTokens".into(), Value::from(max_tokens));
        SamplingRequest { params, key: None }
    }

    /// Adds a message from `role` (`"user"` or `"assistant"`) with this content.
    ///
    /// ```
    /// use mcpeye::{Content, SamplingRequest};
    ///
    /// let request = SamplingRequest::new(100).message("user", Content::image([0x89, b'P'], "image/png"));
    /// assert_eq!(request.to_params()["messages"][0]["content"]["type"], "image");
    /// ```
    pub fn message(mut self, role: &str, content: Content) -> Self {
        let mut m = Map::new();
        m.insert("role".into(), Value::String(role.to_owned()));
        m.insert("content".into(), content.into_json());
        if let Some(Value::Array(messages)) = self.params.get_mut("messages") {
            messages.push(Value::Object(m));
        }
        self
    }

    /// Adds a user message with this text.
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).user("Translate: bonjour");
    /// assert_eq!(request.to_params()["messages"][0]["role"], "user");
    /// ```
    pub fn user(self, text: impl Into<String>) -> Self {
        self.message("user", Content::text(text))
    }

    /// Adds an assistant message with this text.
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).user("2 + 2?").assistant("4").user("And times 3?");
    /// assert_eq!(request.to_params()["messages"][1]["role"], "assistant");
    /// ```
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.message("assistant", Content::text(text))
    }

    /// Sets `systemPrompt`.
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).system_prompt("Answer in one word.");
    /// assert_eq!(request.to_params()["systemPrompt"], "Answer in one word.");
    /// ```
    pub fn system_prompt(self, prompt: impl Into<String>) -> Self {
        self.param("systemPrompt", Value::String(prompt.into()))
    }

    /// Sets `temperature`.
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).temperature(0.2);
    /// assert_eq!(request.to_params()["temperature"], 0.2);
    /// ```
    pub fn temperature(self, temperature: f64) -> Self {
        self.param("temperature", Value::from(temperature))
    }

    /// Adds a model name to `modelPreferences.hints` (the client may map it to a model of its own).
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).model_hint("claude-haiku");
    /// assert_eq!(request.to_params()["modelPreferences"]["hints"][0]["name"], "claude-haiku");
    /// ```
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        let prefs = self.params.entry("modelPreferences").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(prefs) = prefs {
            let hints = prefs.entry("hints").or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(hints) = hints {
                let mut hint = Map::new();
                hint.insert("name".into(), Value::String(name.into()));
                hints.push(Value::Object(hint));
            }
        }
        self
    }

    /// Sets any other parameter of the request (`stopSequences`, `includeContext`, `metadata`…).
    ///
    /// ```
    /// let request = mcpeye::SamplingRequest::new(100).param("stopSequences", serde_json::json!(["\n\n"]));
    /// assert_eq!(request.to_params()["stopSequences"][0], "\n\n");
    /// ```
    pub fn param(mut self, key: impl Into<String>, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// Names the question in an `input_required` result (MCP 2026-07-28), where the client
    /// answers under the same key; by default it is `sample-N`, `N` counting the handler's
    /// questions. Ignored by older clients, which are asked directly.
    ///
    /// ```
    /// use mcpeye::SamplingRequest;
    /// let request = SamplingRequest::new(50).user("Capital of France?").key("capital");
    /// assert_eq!(request.key_name(), Some("capital"));
    /// ```
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key set with [`key`](Self::key).
    ///
    /// ```
    /// assert_eq!(mcpeye::SamplingRequest::new(10).key_name(), None);
    /// ```
    pub fn key_name(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The `params` object of the request.
    ///
    /// ```
    /// let params = mcpeye::SamplingRequest::new(100).user("hi").to_params();
    /// assert_eq!(params["maxTokens"], 100);
    /// ```
    pub fn to_params(&self) -> Value {
        Value::Object(self.params.clone())
    }
}

/// The client's answer to a [`SamplingRequest`].
///
/// ```
/// use mcpeye::SamplingResponse;
///
/// let result = serde_json::json!({
///     "role": "assistant",
///     "content": {"type": "text", "text": "Paris"},
///     "model": "claude-sonnet",
///     "stopReason": "endTurn"
/// });
/// let answer = SamplingResponse::from_json(&result).unwrap();
/// assert_eq!(answer.text().as_deref(), Some("Paris"));
/// assert_eq!(answer.model, "claude-sonnet");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingResponse {
    /// `"assistant"` (or `"user"`).
    pub role: String,
    /// What the model produced (one item, or several in MCP 2025-11-25).
    pub content: Vec<Content>,
    /// The model that answered, as the client names it.
    pub model: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, …), when the client says.
    pub stop_reason: Option<String>,
}

impl SamplingResponse {
    /// Reads a `CreateMessageResult`.
    ///
    /// ```
    /// use mcpeye::{ClientError, SamplingResponse};
    ///
    /// assert!(matches!(SamplingResponse::from_json(&serde_json::json!({"role": "assistant"})), Err(ClientError::Failed(_))));
    /// ```
    pub fn from_json(value: &Value) -> Result<Self, ClientError> {
        let bad = || ClientError::Failed("the client's sampling result is not a CreateMessageResult".to_owned());
        let obj = value.as_object().ok_or_else(bad)?;
        let content = match obj.get("content") {
            Some(Value::Array(items)) => items.iter().map(Content::from_json).collect::<Option<Vec<_>>>(),
            Some(item) => Content::from_json(item).map(|c| vec![c]),
            None => None,
        }
        .ok_or_else(bad)?;
        let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(SamplingResponse {
            role: text("role").unwrap_or_else(|| "assistant".to_owned()),
            content,
            model: text("model").unwrap_or_default(),
            stop_reason: text("stopReason"),
        })
    }

    /// The text of the text items, joined with `"\n"`; `None` when there is none.
    ///
    /// ```
    /// let result = serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "model": "m"});
    /// assert_eq!(mcpeye::SamplingResponse::from_json(&result).unwrap().text().as_deref(), Some("a\nb"));
    /// ```
    pub fn text(&self) -> Option<String> {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    }
}

/// An `elicitation/create` request: ask the user, through the client, to fill a form or to
/// visit a URL.
///
/// ```
/// use mcpeye::ElicitationRequest;
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {"email": {"type": "string", "description": "Where to send the receipt"}},
///     "required": ["email"]
/// });
/// let form = ElicitationRequest::form("Where should the receipt go?", schema);
/// assert_eq!(form.to_params()["mode"], "form");
/// let url = ElicitationRequest::url("Sign in to continue", "https://example.com/login", "login-42");
/// assert_eq!(url.to_params()["elicitationId"], "login-42");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    params: Map<String, Value>,
    key: Option<String>,
}

impl ElicitationRequest {
    /// A form (`mode: "form"`): `requested_schema` is a flat object schema of primitive
    /// properties (strings, numbers, booleans, enums), as MCP restricts it.
    ///
    /// ```
    /// use mcpeye::ElicitationRequest;
    ///
    /// let schema = serde_json::json!({"type": "object", "properties": {"agree": {"type": "boolean", "description": "Accept the terms"}}});
    /// let form = ElicitationRequest::form("Do you accept the terms?", schema);
    /// assert!(!form.is_url());
    /// ```
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        let mut params = Map::new();
        params.insert("mode".into(), Value::String("form".into()));
        params.insert("message".into(), Value::String(message.into()));
        params.insert("requestedSchema".into(), requested_schema);
        ElicitationRequest { params, key: None }
    }

    /// A form whose schema is generated from `T` (a struct of primitive fields deriving
    /// `JsonSchema`; its field docs become the descriptions the user reads). Read the answer
    /// with [`ElicitationResponse::parse`].
    ///
    /// ```
    /// use mcpeye::{Context, ElicitationRequest};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Shipping {
    ///     /// Street and number.
    ///     street: String,
    ///     /// Postal code.
    ///     zip: String,
    /// }
    ///
    /// async fn ask_address(ctx: &Context) -> Option<Shipping> {
    ///     let answer = ctx.elicit(ElicitationRequest::form_for::<Shipping>("Where should we ship?")).await.ok()?;
    ///     answer.parse::<Shipping>().ok().flatten()
    /// }
    /// assert!(mcpeye::testing::block_on(ask_address(&Context::default())).is_none()); // no client here
    /// ```
    pub fn form_for<T: schemars::JsonSchema>(message: impl Into<String>) -> Self {
        let schema = crate::schema::normalize(crate::schema::generate::<T>());
        ElicitationRequest::form(message, schema)
    }

    /// A URL (`mode: "url"`): the user is sent to `url`, outside the client (a sign-in, a
    /// payment); `elicitation_id` names this request.
    ///
    /// ```
    /// let request = mcpeye::ElicitationRequest::url("Connect your bank", "https://bank.example/oauth", "bank-7");
    /// assert!(request.is_url());
    /// assert_eq!(request.to_params()["url"], "https://bank.example/oauth");
    /// ```
    pub fn url(message: impl Into<String>, url: impl Into<String>, elicitation_id: impl Into<String>) -> Self {
        let mut params = Map::new();
        params.insert("mode".into(), Value::String("url".into()));
        params.insert("message".into(), Value::String(message.into()));
        params.insert("url".into(), Value::String(url.into()));
        params.insert("elicitationId".into(), Value::String(elicitation_id.into()));
        ElicitationRequest { params, key: None }
    }

    /// Names the question in an `input_required` result (MCP 2026-07-28), where the client
    /// answers under the same key; by default it is `elicit-N`, `N` counting the handler's
    /// questions. Ignored by older clients, which are asked directly.
    ///
    /// ```
    /// use mcpeye::ElicitationRequest;
    /// let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
    /// let form = ElicitationRequest::form("What is your name?", schema).key("user_name");
    /// assert_eq!(form.key_name(), Some("user_name"));
    /// ```
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key set with [`key`](Self::key).
    ///
    /// ```
    /// assert_eq!(mcpeye::ElicitationRequest::url("Sign in", "https://example.com", "e1").key_name(), None);
    /// ```
    pub fn key_name(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Whether this is a URL request.
    ///
    /// ```
    /// assert!(!mcpeye::ElicitationRequest::form("Name?", serde_json::json!({"type": "object"})).is_url());
    /// ```
    pub fn is_url(&self) -> bool {
        self.params.get("mode").and_then(Value::as_str) == Some("url")
    }

    /// The `params` object of the request.
    ///
    /// ```
    /// let params = mcpeye::ElicitationRequest::form("Name?", serde_json::json!({"type": "object"})).to_params();
    /// assert_eq!(params["message"], "Name?");
    /// ```
    pub fn to_params(&self) -> Value {
        Value::Object(self.params.clone())
    }
}

/// What the user did with an [`ElicitationRequest`].
///
/// ```
/// use mcpeye::ElicitationAction;
///
/// fn said(action: ElicitationAction) -> &'static str {
///     match action {
///         ElicitationAction::Accept => "yes",
///         ElicitationAction::Decline => "no",
///         ElicitationAction::Cancel => "nothing",
///     }
/// }
/// assert_eq!(said(ElicitationAction::parse("decline").unwrap()), "no");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElicitationAction {
    /// The user submitted the form (or completed the URL flow).
    Accept,
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl ElicitationAction {
    /// The MCP spelling: `"accept"`, `"decline"` or `"cancel"`.
    ///
    /// ```
    /// assert_eq!(mcpeye::ElicitationAction::Accept.as_str(), "accept");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }

    /// The action of an MCP spelling, `None` for anything else.
    ///
    /// ```
    /// use mcpeye::ElicitationAction;
    /// assert_eq!(ElicitationAction::parse("decline"), Some(ElicitationAction::Decline));
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        [ElicitationAction::Accept, ElicitationAction::Decline, ElicitationAction::Cancel]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

/// A root the client exposes (`roots/list`): a `file://` URI, with a name when the client gives one.
///
/// ```
/// use mcpeye::Root;
/// let roots = Root::list_from_json(&serde_json::json!({"roots": [{"uri": "file:///repo"}]})).unwrap();
/// assert_eq!((roots[0].uri.as_str(), roots[0].name.as_deref()), ("file:///repo", None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI (`file:///…`).
    pub uri: String,
    /// Its name, when the client gives one.
    pub name: Option<String>,
}

impl Root {
    /// Reads a `ListRootsResult`.
    ///
    /// ```
    /// use mcpeye::Root;
    /// let roots = Root::list_from_json(&serde_json::json!({"roots": [{"uri": "file:///src", "name": "src"}]})).unwrap();
    /// assert_eq!(roots[0].uri, "file:///src");
    /// ```
    pub fn list_from_json(value: &Value) -> Result<Vec<Root>, ClientError> {
        let bad = || ClientError::Failed("the client's roots result is not a ListRootsResult".to_owned());
        let roots = value.get("roots").and_then(Value::as_array).ok_or_else(bad)?;
        roots
            .iter()
            .map(|r| {
                let uri = r.get("uri").and_then(Value::as_str).ok_or_else(bad)?.to_owned();
                Ok(Root { uri, name: r.get("name").and_then(Value::as_str).map(str::to_owned) })
            })
            .collect()
    }
}

/// The client's answer to an [`ElicitationRequest`].
///
/// ```
/// use mcpeye::{ElicitationAction, ElicitationResponse};
///
/// #[derive(serde::Deserialize)]
/// struct Name {
///     name: String,
/// }
///
/// let answer = ElicitationResponse::from_json(&serde_json::json!({"action": "accept", "content": {"name": "Ada"}})).unwrap();
/// assert_eq!(answer.action, ElicitationAction::Accept);
/// assert_eq!(answer.parse::<Name>().unwrap().unwrap().name, "Ada");
///
/// let declined = ElicitationResponse::from_json(&serde_json::json!({"action": "decline"})).unwrap();
/// assert!(declined.parse::<Name>().unwrap().is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationResponse {
    /// What the user did.
    pub action: ElicitationAction,
    /// The form's values, when the user accepted a form.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationResponse {
    /// Reads an `ElicitResult`.
    ///
    /// ```
    /// use mcpeye::{ElicitationAction, ElicitationResponse};
    ///
    /// let answer = ElicitationResponse::from_json(&serde_json::json!({"action": "cancel"})).unwrap();
    /// assert_eq!(answer.action, ElicitationAction::Cancel);
    /// ```
    pub fn from_json(value: &Value) -> Result<Self, ClientError> {
        let bad = || ClientError::Failed("the client's elicitation result is not an ElicitResult".to_owned());
        let action = match value.get("action").and_then(Value::as_str) {
            Some("accept") => ElicitationAction::Accept,
            Some("decline") => ElicitationAction::Decline,
            Some("cancel") => ElicitationAction::Cancel,
            _ => return Err(bad()),
        };
        let content = match value.get("content") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(bad()),
        };
        Ok(ElicitationResponse { action, content })
    }

    /// The accepted values read into `T`; `Ok(None)` when the user did not accept.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Choice {
    ///     plan: String,
    /// }
    ///
    /// let answer = mcpeye::ElicitationResponse::from_json(&serde_json::json!({"action": "accept", "content": {"plan": "pro"}})).unwrap();
    /// assert_eq!(answer.parse::<Choice>().unwrap().map(|c| c.plan).as_deref(), Some("pro"));
    /// ```
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        match (&self.action, &self.content) {
            (ElicitationAction::Accept, Some(m)) => T::deserialize(Value::Object(m.clone())).map(Some),
            (ElicitationAction::Accept, None) => T::deserialize(Value::Object(Map::new())).map(Some),
            _ => Ok(None),
        }
    }
}

/// Whether a client that declared `elicitation` as `declared` can answer a form (or a URL, `url`).
pub(crate) fn elicitation_supported(declared: Option<&Value>, url: bool) -> Result<(), ClientError> {
    let Some(elicitation) = declared else {
        return Err(ClientError::Unsupported("the client did not declare the `elicitation` capability".to_owned()));
    };
    // A client that names neither mode supports forms (MCP 2025-06-18).
    let modes = |m: &str| elicitation.get(m).is_some_and(|v| !v.is_null());
    if url && !modes("url") {
        return Err(ClientError::Unsupported(
            "the client does not support URL elicitation (`elicitation.url`)".to_owned(),
        ));
    }
    if !url && modes("url") && !modes("form") {
        return Err(ClientError::Unsupported(
            "the client does not support form elicitation (`elicitation.form`)".to_owned(),
        ));
    }
    Ok(())
}
