//! A call's data: where it came from ([`Origin`], [`ClientInfo`]), how it ended
//! ([`CallOutcome`]), and the record a callback tracker or `before_send` sees ([`CallRecord`]).
//!
//! Everything here is data used on the calling thread: nothing is serialised or redacted here
//! (that work belongs to the flusher).

use crate::model::cancel::Cancellation;
use crate::model::client::{ClientChannel, LogLevel, ProgressToken};
use crate::model::identity::normalize_identity;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The MCP client that made a call, as it introduced itself: in the `initialize` handshake, or
/// (MCP 2026-07-28) in each request's `_meta`. Its `name/version` is the `client` of the identity
/// its events are sent under, so that every event is attributed to its own client.
///
/// ```
/// let client = mcpeye::ClientInfo::new("claude-desktop", "1.4.2").with_protocol_version("2026-07-28");
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
    ///
    /// ```
    /// let client = mcpeye::ClientInfo::new("claude-desktop", "1.4.2");
    /// assert_eq!((client.name(), client.version()), ("claude-desktop", "1.4.2"));
    /// ```
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
    ///
    /// ```
    /// let client = mcpeye::ClientInfo::new("cursor", "1.2").with_protocol_version("2025-11-25");
    /// assert_eq!(client.protocol_version(), Some("2025-11-25"));
    /// ```
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }

    /// The client's name, as it gave it.
    ///
    /// ```
    /// assert_eq!(mcpeye::ClientInfo::new(" zed ", "0.1").name(), " zed "); // as given; the label trims
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client's version, as it gave it.
    ///
    /// ```
    /// assert_eq!(mcpeye::ClientInfo::new("zed", "0.190.4").version(), "0.190.4");
    /// ```
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The MCP protocol version of the session or request, when known.
    ///
    /// ```
    /// assert_eq!(mcpeye::ClientInfo::new("zed", "0.1").protocol_version(), None);
    /// ```
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// What `identity.client` says on the wire: `name/version`, or `name` when the version is
    /// blank; `None` when the name is blank too.
    ///
    /// ```
    /// assert_eq!(mcpeye::ClientInfo::new("zed", " ").label(), Some("zed"));
    /// assert_eq!(mcpeye::ClientInfo::new(" ", "1.0").label(), None);
    /// ```
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

/// What the serving layer knows of a request besides its tool and arguments: the client that
/// sent it, its `_meta` (progress token, log level, trace context), the transport and its
/// session, the JSON-RPC id, its cancellation signal, and the channel back to the client that a handler's [`Context`](crate::Context)
/// talks through. `Origin::default()` is a call with none of these (a direct `Manifest::call`).
///
/// It is built with the `with_*` methods and read through accessors, so that a new piece of
/// request data is one more pair of methods and no caller's code changes.
///
/// ```
/// use mcpeye::{Cancellation, ClientInfo, Origin, ProgressToken};
/// use std::sync::Arc;
///
/// let cancel = Cancellation::new();
/// let origin = Origin::from_client(Arc::new(ClientInfo::new("inspector", "0.9")))
///     .with_progress_token(ProgressToken::Number(7))
///     .with_cancellation(cancel.clone());
/// assert_eq!(origin.progress_token(), Some(&ProgressToken::Number(7)));
/// assert!(origin.cancellation().is_some() && origin.client().is_some());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Origin {
    /// The client that sent the request.
    pub(crate) client: Option<Arc<ClientInfo>>,
    /// The request's `_meta` object.
    pub(crate) meta: Option<Arc<Map<String, Value>>>,
    /// The MCP session (the `Mcp-Session-Id` of Streamable HTTP, or one id per stdio
    /// connection), when there is one. Sampling keeps or drops a session whole
    /// ([`Config::sample_rate`](crate::Config::sample_rate)); it is the span's `mcp.session.id`.
    pub(crate) session_id: Option<Arc<str>>,
    /// The JSON-RPC request id (the span's `jsonrpc.request.id`).
    pub(crate) request_id: Option<RequestId>,
    /// How the request arrived (the span's `network.transport`, `network.protocol.*`).
    pub(crate) transport: Option<Transport>,
    /// The W3C trace context of the request's `params._meta`: the server span's parent.
    pub(crate) trace_context: Option<TraceContext>,
    /// `_meta.progressToken`: the client wants progress notifications for this request.
    pub(crate) progress_token: Option<ProgressToken>,
    /// The least severe log level the request asks for (`_meta`, MCP 2026-07-28).
    pub(crate) log_level: Option<LogLevel>,
    /// Cancelled when the client cancels the request.
    pub(crate) cancellation: Option<Cancellation>,
    /// The way back to the client (progress, logs, sampling, elicitation).
    pub(crate) channel: Option<Arc<dyn ClientChannel>>,
    /// The intent the client stated in `_meta` (`io.modelcontextprotocol/aiInvocation`
    /// `.invocationReason`, else `.userIntent`), read when the origin was made: the serving
    /// layer may move `_meta` away.
    pub(crate) native_intent: Option<String>,
    /// What `aiInvocation` says beyond the intent and the model (turn, texts), for spans and
    /// the event log.
    pub(crate) invocation: Option<Arc<crate::model::meta::AiInvocation>>,
    /// The model that made the call: from `_meta` (see `model/meta.rs`), or from the opt-in
    /// `llm_model` argument. The span's `gen_ai.request.model`; never sent to the ingest.
    pub(crate) model: Option<Arc<str>>,
    /// The channel, cancellation and `_meta` of an rmcp request, not built yet: most handlers
    /// never ask for their context (see [`resolved`](Self::resolved)).
    #[cfg(feature = "rmcp")]
    pub(crate) deferred: Option<Arc<dyn DeferredParts>>,
    /// The round of a call that may ask the client through `input_required` results (MCP
    /// 2026-07-28): the answers it has, and what earlier rounds left (start, intent).
    pub(crate) asking: Option<Arc<crate::model::ask::Asking>>,
    /// What `identify` reads of the request beyond the above (`_meta`, the HTTP head): made by
    /// the serving layer only when the tracker has an `identify` callback.
    pub(crate) request: Option<Arc<RequestExtra>>,
    /// The user `identify` named when the call began, checking its conversation handle: the
    /// record reuses it rather than asking again.
    pub(crate) identified: Option<Arc<crate::model::identity::CallIdentity>>,
}

impl Origin {
    /// A request with nothing known of it, made at compile time: the calls that need one per
    /// call (`Manifest::call`, the serving layers' origins) start from it rather than build it.
    pub(crate) const NONE: Origin = Origin {
        client: None,
        meta: None,
        session_id: None,
        request_id: None,
        transport: None,
        trace_context: None,
        progress_token: None,
        log_level: None,
        cancellation: None,
        channel: None,
        native_intent: None,
        invocation: None,
        model: None,
        #[cfg(feature = "rmcp")]
        deferred: None,
        asking: None,
        request: None,
        identified: None,
    };
}

impl Default for Origin {
    fn default() -> Self {
        Origin::NONE
    }
}

/// The parts of an [`Origin`] that its serving layer makes only when a handler asks for them
/// (rmcp's channel, cancellation and `_meta`: most handlers never do, and making them costs
/// allocations). The serving layer implements it; the origin only asks.
#[cfg(feature = "rmcp")]
pub(crate) trait DeferredParts: Send + Sync + 'static {
    /// The channel back to the client.
    fn channel(&self) -> Arc<dyn ClientChannel>;
    /// The request's cancellation signal.
    fn cancellation(&self) -> Cancellation;
    /// The request's `_meta`, when it has one.
    fn meta(&self) -> Option<Arc<Map<String, Value>>>;
    /// Whether the request was cancelled, and why, without making the signal.
    fn cancelled(&self) -> Option<Option<String>>;
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Origin")
            .field("client", &self.client)
            .field("meta", &self.meta)
            .field("session_id", &self.session_id)
            .field("request_id", &self.request_id)
            .field("transport", &self.transport)
            .field("trace_context", &self.trace_context)
            .field("progress_token", &self.progress_token)
            .field("log_level", &self.log_level)
            .field("cancellation", &self.cancellation)
            .field("channel", &self.channel.as_ref().map(|_| "…"))
            .field("model", &self.model)
            .finish()
    }
}

impl Origin {
    /// A request from `client`.
    ///
    /// ```
    /// use mcpeye::{ClientInfo, Origin};
    /// use std::sync::Arc;
    ///
    /// let origin = Origin::from_client(Arc::new(ClientInfo::new("claude-code", "2.0.1")));
    /// assert_eq!(origin.client().unwrap().name(), "claude-code");
    /// ```
    pub fn from_client(client: Arc<ClientInfo>) -> Self {
        Origin { client: Some(client), ..Origin::NONE }
    }

    /// With the request's `_meta`; its `progressToken` becomes the progress token.
    ///
    /// ```
    /// use mcpeye::{Origin, ProgressToken};
    ///
    /// let meta = serde_json::json!({"progressToken": "p-1", "acme/tenant": "t-1"});
    /// let origin = Origin::default().with_meta(meta.as_object().unwrap().clone());
    /// assert_eq!(origin.progress_token(), Some(&ProgressToken::String("p-1".into())));
    /// assert_eq!(origin.meta().unwrap()["acme/tenant"], "t-1");
    /// ```
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        if let Some(token) = small_map_get(&meta, "progressToken").and_then(ProgressToken::from_json) {
            self.progress_token = Some(token);
        }
        self.native_intent = crate::model::meta::native_intent(&meta);
        self.invocation = crate::model::meta::invocation(&meta);
        self.model = crate::model::meta::meta_model(&meta);
        self.meta = Some(Arc::new(meta));
        self
    }

    /// The progress token of a request's `_meta` (what [`with_meta`](Self::with_meta) reads).
    #[cfg(feature = "rmcp")]
    pub(crate) fn progress_token_of(meta: &Map<String, Value>) -> Option<ProgressToken> {
        small_map_get(meta, "progressToken").and_then(ProgressToken::from_json)
    }

    /// This origin as a handler's context sees it: with the parts its serving layer deferred
    /// (rmcp's channel, cancellation, `_meta` and the progress token in it) built, once, and
    /// shared by every clone.
    pub(crate) fn resolved(&self) -> Origin {
        #[cfg(feature = "rmcp")]
        if let Some(d) = &self.deferred {
            let meta = d.meta();
            let progress_token =
                self.progress_token.clone().or_else(|| meta.as_deref().and_then(Origin::progress_token_of));
            return Origin {
                client: self.client.clone(),
                meta,
                session_id: self.session_id.clone(),
                request_id: self.request_id.clone(),
                transport: self.transport,
                trace_context: self.trace_context.clone(),
                progress_token,
                log_level: self.log_level,
                cancellation: Some(d.cancellation()),
                channel: Some(d.channel()),
                native_intent: self.native_intent.clone(),
                invocation: self.invocation.clone(),
                model: self.model.clone(),
                deferred: None,
                asking: self.asking.clone(),
                request: self.request.clone(),
                identified: self.identified.clone(),
            };
        }
        self.clone()
    }

    /// Whether the request was cancelled, and why (`Some(None)`: without a reason).
    pub(crate) fn cancelled(&self) -> Option<Option<String>> {
        if let Some(c) = &self.cancellation {
            return c.is_cancelled().then(|| c.reason());
        }
        #[cfg(feature = "rmcp")]
        if let Some(d) = &self.deferred {
            return d.cancelled();
        }
        None
    }

    /// With the transport's session id.
    ///
    /// ```
    /// let origin = mcpeye::Origin::default().with_session_id("3f2a");
    /// assert_eq!(origin.session_id(), Some("3f2a"));
    /// ```
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// With a progress token (`None`: without one, whatever `_meta` said).
    ///
    /// ```
    /// use mcpeye::{Origin, ProgressToken};
    ///
    /// let origin = Origin::default().with_progress_token(ProgressToken::Number(1));
    /// assert_eq!(origin.with_progress_token(None).progress_token(), None);
    /// ```
    pub fn with_progress_token(mut self, token: impl Into<Option<ProgressToken>>) -> Self {
        self.progress_token = token.into();
        self
    }

    /// With the JSON-RPC request id.
    ///
    /// ```
    /// use mcpeye::{Origin, RequestId};
    ///
    /// let origin = Origin::default().with_request_id(7);
    /// assert_eq!(origin.request_id(), Some(&RequestId::Number(7)));
    /// ```
    pub fn with_request_id(mut self, id: impl Into<RequestId>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// With the transport the request arrived on.
    ///
    /// ```
    /// use mcpeye::{Origin, Transport};
    ///
    /// let origin = Origin::default().with_transport(Transport::Stdio);
    /// assert_eq!(origin.transport(), Some(Transport::Stdio));
    /// ```
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// With the W3C trace context of the request (the server span's parent).
    ///
    /// ```
    /// use mcpeye::{Origin, TraceContext};
    ///
    /// let parent = TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    /// let origin = Origin::default().with_trace_context(parent.clone());
    /// assert_eq!(origin.trace_context(), Some(&parent));
    /// ```
    pub fn with_trace_context(mut self, trace_context: TraceContext) -> Self {
        self.trace_context = Some(trace_context);
        self
    }

    /// The client that sent the request.
    ///
    /// ```
    /// assert!(mcpeye::Origin::default().client().is_none());
    /// ```
    pub fn client(&self) -> Option<&Arc<ClientInfo>> {
        self.client.as_ref()
    }

    /// The request's `_meta` object.
    ///
    /// ```
    /// let meta = serde_json::json!({"acme/tenant": "t-1"});
    /// let origin = mcpeye::Origin::default().with_meta(meta.as_object().unwrap().clone());
    /// assert_eq!(origin.meta().unwrap()["acme/tenant"], "t-1");
    /// ```
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_deref()
    }

    /// The MCP session (the `Mcp-Session-Id` of Streamable HTTP, or one id per stdio
    /// connection), when there is one. Sampling keeps or drops a session whole
    /// ([`Config::sample_rate`](crate::Config::sample_rate)); it is the span's `mcp.session.id`.
    ///
    /// ```
    /// assert_eq!(mcpeye::Origin::default().session_id(), None);
    /// ```
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The JSON-RPC request id (the span's `jsonrpc.request.id`).
    ///
    /// ```
    /// assert_eq!(mcpeye::Origin::default().with_request_id("req-9").request_id().unwrap().to_string(), "req-9");
    /// ```
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// How the request arrived (the span's `network.transport`, `network.protocol.*`).
    ///
    /// ```
    /// assert_eq!(mcpeye::Origin::default().transport(), None);
    /// ```
    pub fn transport(&self) -> Option<Transport> {
        self.transport
    }

    /// The W3C trace context of the request's `params._meta`: the server span's parent.
    ///
    /// ```
    /// assert!(mcpeye::Origin::default().trace_context().is_none());
    /// ```
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.trace_context.as_ref()
    }

    /// `_meta.progressToken`: the client wants progress notifications for this request.
    ///
    /// ```
    /// let meta = serde_json::json!({"progressToken": 5});
    /// let origin = mcpeye::Origin::default().with_meta(meta.as_object().unwrap().clone());
    /// assert_eq!(origin.progress_token(), Some(&mcpeye::ProgressToken::Number(5)));
    /// ```
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// The least severe log level the request asks for (`_meta`, MCP 2026-07-28).
    ///
    /// ```
    /// use mcpeye::{LogLevel, Origin};
    ///
    /// assert_eq!(Origin::default().with_log_level(LogLevel::Error).log_level(), Some(LogLevel::Error));
    /// ```
    pub fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }

    /// The signal cancelled when the client cancels the request, when the serving layer gave one.
    ///
    /// ```
    /// use mcpeye::{Cancellation, Origin};
    ///
    /// let signal = Cancellation::new();
    /// let origin = Origin::default().with_cancellation(signal.clone());
    /// signal.cancel();
    /// assert!(origin.cancellation().unwrap().is_cancelled());
    /// ```
    pub fn cancellation(&self) -> Option<&Cancellation> {
        self.cancellation.as_ref()
    }

    /// The way back to the client (progress, logs, sampling, elicitation), when there is one.
    ///
    /// ```
    /// let client = mcpeye::testing::RecordingClient::new();
    /// assert!(client.origin().channel().is_some());
    /// assert!(mcpeye::Origin::default().channel().is_none());
    /// ```
    pub fn channel(&self) -> Option<&Arc<dyn ClientChannel>> {
        self.channel.as_ref()
    }

    /// With the least severe log level the request asks for.
    ///
    /// ```
    /// use mcpeye::{Context, LogLevel, Origin};
    ///
    /// // A request that asks for warnings and worse (its `_meta`, MCP 2026-07-28).
    /// let ctx = Context::for_origin(&Origin::default().with_log_level(LogLevel::Warning));
    /// assert_eq!(ctx.log_level(), Some(LogLevel::Warning));
    /// ```
    pub fn with_log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// With a cancellation signal, cancelled when the client cancels the request.
    ///
    /// ```
    /// use mcpeye::{Cancellation, Context, Origin};
    ///
    /// let signal = Cancellation::new();
    /// let ctx = Context::for_origin(&Origin::default().with_cancellation(signal.clone()));
    /// signal.cancel_with_reason("the user pressed stop");
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// The model that made the call, when the request said (its `_meta`, read by
    /// [`with_meta`](Self::with_meta), or the opt-in `llm_model` argument): see
    /// `docs/attribution.md#model`.
    ///
    /// ```
    /// let meta = serde_json::json!({"io.modelcontextprotocol/aiInvocation": {"model": "claude-opus-4"}});
    /// let origin = mcpeye::Origin::default().with_meta(meta.as_object().unwrap().clone());
    /// assert_eq!(origin.model(), Some("claude-opus-4"));
    /// assert_eq!(origin.with_model("gpt-5").model(), Some("gpt-5"));
    /// ```
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// With the model that made the call.
    ///
    /// ```
    /// let origin = mcpeye::Origin::default().with_model("claude-sonnet-4");
    /// assert_eq!(origin.model(), Some("claude-sonnet-4"));
    /// ```
    pub fn with_model(mut self, model: impl Into<Arc<str>>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// With the channel back to the client.
    ///
    /// ```
    /// use mcpeye::testing::RecordingClient;
    /// use mcpeye::Origin;
    /// use std::sync::Arc;
    ///
    /// let client = RecordingClient::new();
    /// let origin = Origin::default().with_channel(Arc::new(client.clone()));
    /// assert!(origin.channel().is_some());
    /// ```
    pub fn with_channel(mut self, channel: Arc<dyn ClientChannel>) -> Self {
        self.channel = Some(channel);
        self
    }
}

/// A JSON-RPC request id, as the client sent it: kept as is, and written out as text only where
/// it is shown (a span), not on every call.
///
/// ```
/// use mcpeye::RequestId;
/// assert_eq!(RequestId::from(7).to_string(), "7");
/// assert_eq!(RequestId::from("req-1").to_string(), "req-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => fmt::Display::fmt(n, f),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s.into())
    }
}

/// The most keys of a request's `_meta` compared one by one rather than looked up by hash (it
/// usually has one or two).
pub(crate) const SCANNED_META_KEYS: usize = 8;

/// `map.get(key)`, by comparing the keys of a small map rather than hashing `key`.
fn small_map_get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    match map.len() <= SCANNED_META_KEYS {
        true => map.iter().find_map(|(k, v)| (k == key).then_some(v)),
        false => map.get(key),
    }
}

/// The transport a request arrived on.
///
/// ```
/// use mcpeye::{Origin, Transport};
///
/// let origin = Origin::default().with_transport(Transport::Http { version: Some("1.1") });
/// assert_eq!(origin.transport(), Some(Transport::Http { version: Some("1.1") }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Standard input and output (`network.transport = pipe`).
    Stdio,
    /// Streamable HTTP (`network.transport = tcp`, `network.protocol.name = http`).
    Http {
        /// The HTTP version (`"1.1"`, `"2"`), when known.
        version: Option<&'static str>,
    },
}

/// The W3C trace context (`traceparent`, `tracestate`) and baggage a request carried in its
/// `params._meta`, unprefixed as SEP-414 and the OpenTelemetry MCP conventions say. With the
/// `opentelemetry` feature the call's server span is a child of `traceparent`.
///
/// ```
/// let meta = serde_json::json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"});
/// let cx = mcpeye::TraceContext::from_meta(meta.as_object().unwrap()).unwrap();
/// assert_eq!(cx.traceparent.as_deref(), Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
/// assert!(cx.baggage.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceContext {
    /// `traceparent`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub traceparent: Option<String>,
    /// `tracestate`, vendor-specific trace data.
    pub tracestate: Option<String>,
    /// `baggage`, W3C Baggage.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// The trace context of a request's `_meta`; `None` when it has none of the three keys as a
    /// string.
    ///
    /// ```
    /// let meta = serde_json::json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "baggage": "tenant=acme"});
    /// let cx = mcpeye::TraceContext::from_meta(meta.as_object().unwrap()).unwrap();
    /// assert_eq!(cx.baggage.as_deref(), Some("tenant=acme"));
    /// assert!(mcpeye::TraceContext::from_meta(&serde_json::Map::new()).is_none());
    /// ```
    pub fn from_meta(meta: &serde_json::Map<String, Value>) -> Option<Self> {
        let get = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_owned);
        let cx =
            TraceContext { traceparent: get("traceparent"), tracestate: get("tracestate"), baggage: get("baggage") };
        (cx != TraceContext::default()).then_some(cx)
    }

    /// A trace context with this `traceparent` only.
    ///
    /// ```
    /// let cx = mcpeye::TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    /// assert_eq!(cx.tracestate, None);
    /// ```
    pub fn from_traceparent(traceparent: impl Into<String>) -> Self {
        TraceContext { traceparent: Some(traceparent.into()), ..TraceContext::default() }
    }

    /// The value of `traceparent`, `tracestate` or `baggage`.
    ///
    /// ```
    /// let cx = mcpeye::TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    /// assert!(cx.get("traceparent").unwrap().starts_with("00-4bf9"));
    /// assert_eq!(cx.get("baggage"), None);
    /// ```
    pub fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent.as_deref(),
            "tracestate" => self.tracestate.as_deref(),
            "baggage" => self.baggage.as_deref(),
            _ => None,
        }
    }
}

// Defined beside the `_meta` readers (the native intent is one), which the rounds' state uses too.
pub use crate::model::meta::IntentSource;

// Blank checks live with the `_meta` readers, which need them too.
pub(crate) use crate::model::meta::is_blank;

/// How a call ended. A failed call has no result: the two cannot be recorded together.
///
/// On the wire every outcome but `Success` is an error event (`isError: true`) whose
/// `errorMessage` is [`CallRecord::error_message`] (see `docs/wire-format.md#errors`).
///
/// ```
/// use mcpeye::{CallOutcome, CallRecord, Tracker};
///
/// // A call of your own server's, recorded by hand.
/// let tracker = Tracker::from_fn(|record| eprintln!("{}: error {}", record.tool_name, record.is_error()));
/// let outcome = CallOutcome::Success { result: serde_json::json!({"rows": 3}) };
/// tracker.record(CallRecord::new("query", serde_json::json!({"sql": "select 1"}), outcome));
///
/// let failed = CallOutcome::error_with_reason("no such table", "unknown_table");
/// assert!(failed.is_error());
/// assert_eq!(failed.error_type(), Some("unknown_table"));
/// ```
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
        /// Why, as a short low-cardinality code: the handler's [`ToolError`](crate::ToolError)
        /// reason, or mcpeye's own (`invalid_arguments`, `unknown_tool`, `panic`, or a JSON-RPC
        /// error code such as `-32603` for an rmcp tool answering an error). `None` for a plain
        /// tool error (`tool_error` on spans and in [`Stats::error_reasons`](crate::Stats::error_reasons)).
        /// Never sent to the ingest.
        reason: Option<Cow<'static, str>>,
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
    ///
    /// ```
    /// let outcome = mcpeye::CallOutcome::error("the index is offline");
    /// assert_eq!(outcome.error_message(), Some("the index is offline"));
    /// ```
    pub fn error(message: impl Into<String>) -> Self {
        CallOutcome::Error { message: Some(message.into()), reason: None }
    }

    /// A failure with this message and reason code.
    ///
    /// ```
    /// let outcome = mcpeye::CallOutcome::error_with_reason("no such order", "unknown_order");
    /// assert_eq!(outcome.error_type(), Some("unknown_order"));
    /// ```
    pub fn error_with_reason(message: impl Into<String>, reason: impl Into<Cow<'static, str>>) -> Self {
        CallOutcome::Error { message: Some(message.into()), reason: Some(reason.into()) }
    }

    /// The reason code of a failure: its own, or `tool_error` when it has none; `None` for a
    /// success. The value of the span's `error.type` and of [`Stats::error_reasons`](crate::Stats::error_reasons)' keys.
    ///
    /// ```
    /// assert_eq!(mcpeye::CallOutcome::error("boom").error_type(), Some("tool_error"));
    /// ```
    pub fn error_type(&self) -> Option<&str> {
        match self {
            CallOutcome::Success { .. } => None,
            CallOutcome::Error { reason, .. } => Some(reason.as_deref().unwrap_or(TOOL_ERROR)),
            CallOutcome::Cancelled { .. } => Some(CANCELLED),
            CallOutcome::TimedOut { .. } => Some(TIMED_OUT),
        }
    }

    /// A call the client cancelled, with the reason it gave.
    ///
    /// ```
    /// use mcpeye::CallOutcome;
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
    /// use mcpeye::CallOutcome;
    /// let outcome = CallOutcome::timed_out(std::time::Duration::from_millis(5000));
    /// let CallOutcome::TimedOut { message, .. } = outcome else { panic!() };
    /// assert_eq!(message, "the call timed out after 5000 ms and was cancelled");
    /// ```
    pub fn timed_out(after: Duration) -> Self {
        let message = format!("the call timed out after {} ms and was cancelled", after.as_millis());
        CallOutcome::TimedOut { after, message }
    }

    /// Whether the call failed (every outcome but `Success`).
    ///
    /// ```
    /// use mcpeye::CallOutcome;
    ///
    /// assert!(CallOutcome::cancelled(None).is_error());
    /// assert!(!CallOutcome::Success { result: serde_json::json!({}) }.is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        !matches!(self, CallOutcome::Success { .. })
    }

    /// The error's text, when the call failed with one.
    ///
    /// ```
    /// assert_eq!(mcpeye::CallOutcome::Success { result: serde_json::json!({}) }.error_message(), None);
    /// ```
    pub fn error_message(&self) -> Option<&str> {
        match self {
            CallOutcome::Success { .. } => None,
            CallOutcome::Error { message, .. } => message.as_deref(),
            CallOutcome::Cancelled { message } | CallOutcome::TimedOut { message, .. } => Some(message),
        }
    }
}

/// The reason of a failure that names none (the conventions' `error.type` for `isError`).
pub(crate) const TOOL_ERROR: &str = "tool_error";
/// The reason of a call the client cancelled.
pub(crate) const CANCELLED: &str = "cancelled";
/// The reason of a call that ran past its `timeout_ms`.
pub(crate) const TIMED_OUT: &str = "timeout";

/// What a call produced, as the runtime records it (see `docs/wire-format.md#event`). Not yet
/// capped or redacted.
///
/// The dispatcher and the rmcp integration build records themselves; build one with
/// [`CallRecord::new`] to hand a call of your own server to [`Tracker::record`](crate::Tracker::record).
///
/// ```
/// use mcpeye::{CallOutcome, CallRecord};
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
    /// The MCP session of the call, when there is one (sampling keeps a session whole). Never
    /// sent to the ingest. A conversation handle (`docs/attribution.md#conversation`) is the
    /// session of a call that has no transport session.
    pub session_id: Option<Arc<str>>,
    /// The model that made the call, when the request said ([`Origin::model`]). Never sent to
    /// the ingest.
    pub model: Option<Arc<str>>,
    /// Epoch milliseconds at the end of the call.
    pub timestamp_ms: u64,
    /// How long the call took.
    pub duration: Duration,
    /// What the request's `aiInvocation` said beyond the intent and the model (the event log's
    /// `turn`, `userIntent`, `invocationReason`). Never sent to the ingest.
    pub(crate) invocation: Option<Arc<crate::model::meta::AiInvocation>>,
}

impl CallRecord {
    /// A call that ends now, took no measurable time, had no intent and no known client (set the
    /// public fields to change that).
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord, ClientInfo};
    /// use std::sync::Arc;
    ///
    /// let mut record = CallRecord::new("search", serde_json::json!({"q": "mugs"}), CallOutcome::error("offline"));
    /// record.client = Some(Arc::new(ClientInfo::new("my-agent", "0.3")));
    /// record.duration = std::time::Duration::from_millis(40);
    /// ```
    pub fn new(tool_name: impl Into<Cow<'static, str>>, arguments: Value, outcome: CallOutcome) -> Self {
        CallRecord {
            tool_name: tool_name.into(),
            arguments,
            outcome,
            intent: None,
            client: None,
            session_id: None,
            model: None,
            timestamp_ms: now_epoch_ms(),
            duration: Duration::ZERO,
            invocation: None,
        }
    }

    /// Whether the call failed (an error, a cancelled call, a timeout).
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord};
    ///
    /// assert!(CallRecord::new("search", serde_json::json!({}), CallOutcome::timed_out(std::time::Duration::from_secs(5))).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// The result sent to the client, when the call succeeded.
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord};
    ///
    /// let ok = CallOutcome::Success { result: serde_json::json!({"content": []}) };
    /// assert_eq!(CallRecord::new("ping", serde_json::json!({}), ok).result(), Some(&serde_json::json!({"content": []})));
    /// ```
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            CallOutcome::Success { result } => Some(result),
            _ => None,
        }
    }

    /// The error's text, when the call failed with one (what the event's `errorMessage` says).
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord};
    ///
    /// let record = CallRecord::new("ping", serde_json::json!({}), CallOutcome::error("no route"));
    /// assert_eq!(record.error_message(), Some("no route"));
    /// ```
    pub fn error_message(&self) -> Option<&str> {
        self.outcome.error_message()
    }

    /// The reason code of a failure (see [`CallOutcome::error_type`]).
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord};
    ///
    /// let record = CallRecord::new("ping", serde_json::json!({}), CallOutcome::cancelled(Some("user left")));
    /// assert_eq!(record.error_type(), Some("cancelled"));
    /// ```
    pub fn error_type(&self) -> Option<&str> {
        self.outcome.error_type()
    }
}

pub(crate) use crate::model::meta::now_epoch_ms;

/// What a serving layer keeps of a request for `identify` beyond what every call records: its
/// `_meta` and its HTTP head. Made only when the tracker has an `identify` callback, so a server
/// without one never copies them.
#[derive(Debug, Default)]
pub(crate) struct RequestExtra {
    pub(crate) meta: Option<Map<String, Value>>,
    #[cfg(feature = "rmcp")]
    pub(crate) http: Option<http::request::Parts>,
}

#[cfg(feature = "rmcp")]
impl RequestExtra {
    /// What `identify` may read of the request of `context`: copied, as the context's `_meta` is
    /// moved on and its extensions stay with rmcp.
    pub(crate) fn of(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Self {
        let meta = (!context.meta.is_empty()).then(|| context.meta.0 .0.clone());
        RequestExtra { meta, http: context.extensions.get::<http::request::Parts>().cloned() }
    }
}

/// The reason of a call to a tool the manifest does not have (answered as a tool error).
pub(crate) const UNKNOWN_TOOL: &str = "unknown_tool";

#[cfg(test)]
mod tests {
    use super::*;

    /// The progress token is read from a `_meta` of any size (small ones are scanned).
    #[test]
    fn the_progress_token_is_read_from_any_meta() {
        for extra in [0, 1, 7, 8, 20] {
            let mut meta = Map::new();
            for i in 0..extra {
                meta.insert(format!("k{i}"), Value::from(i));
            }
            assert_eq!(Origin::default().with_meta(meta.clone()).progress_token, None, "{extra}");
            meta.insert("progressToken".into(), Value::from(7));
            let origin = Origin::default().with_meta(meta);
            assert_eq!(origin.progress_token, Some(ProgressToken::Number(7)), "{extra}");
        }
    }
}
