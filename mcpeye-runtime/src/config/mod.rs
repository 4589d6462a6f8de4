//! [`Config`]: what a tracker needs to know, as a builder with a default for every option.

mod error;
mod resolve;

pub use crate::model::identity::{CallIdentity, Identity, IdentityValue};
pub use crate::model::request::IdentifyFn;
pub use error::ConfigError;
use resolve::without_userinfo;
pub(crate) use resolve::Resolved;

use crate::model::diagnostics::{Diagnostic, OnErrorFn};
use crate::model::event::{BeforeSendFn, Event};
use crate::model::inferred::{InferCall, InferIntentFn};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Configuration of a tracker. Start with [`Config::new`] (or [`Config::from_env`]) and chain
/// the options; every option has a default.
///
/// ```
/// use std::time::Duration;
/// let config = mcpeye::Config::new("proj_demo")
///     .ingest_url("https://mcpeye.example.com")
///     .ingest_secret("s3cr3t")
///     .identity(mcpeye::Identity::new().server_version("1.2.3"))
///     .flush_interval(Duration::from_secs(2));
/// // The secret never shows in debug output.
/// assert!(!format!("{config:?}").contains("s3cr3t"));
/// ```
#[derive(Clone)]
pub struct Config {
    pub(crate) project_id: String,
    pub(crate) ingest_url: Option<String>,
    pub(crate) ingest_secret: Option<String>,
    pub(crate) use_env: bool,
    pub(crate) redact: bool,
    pub(crate) redact_credentials: bool,
    pub(crate) luhn_cards: bool,
    pub(crate) denylist_fields: Vec<String>,
    pub(crate) identity: Identity,
    pub(crate) identify: Option<Arc<IdentifyFn>>,
    pub(crate) conversation_key: Option<Arc<[u8]>>,
    pub(crate) flush_interval: Duration,
    pub(crate) flush_threshold: usize,
    pub(crate) max_buffer: usize,
    pub(crate) max_batch_events: usize,
    pub(crate) max_batch_bytes: usize,
    pub(crate) capture_missing_capabilities: bool,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) retry_initial_backoff: Duration,
    pub(crate) retry_max_backoff: Duration,
    pub(crate) on_error: Option<Arc<OnErrorFn>>,
    pub(crate) sample_rate: f64,
    pub(crate) before_send: Option<Arc<BeforeSendFn>>,
    pub(crate) infer_intent: Option<Arc<InferIntentFn>>,
    pub(crate) span_content: bool,
    pub(crate) outbox_dir: Option<PathBuf>,
    pub(crate) outbox_max_bytes: u64,
    pub(crate) event_log_dir: Option<PathBuf>,
    pub(crate) event_log_max_bytes: u64,
}

impl Config {
    /// A configuration for this mcpeye project, with every default:
    ///
    /// | option | default |
    /// |---|---|
    /// | [`ingest_url`](Self::ingest_url) | `http://localhost:3001` (said once in the diagnostics) |
    /// | [`ingest_secret`](Self::ingest_secret) | none |
    /// | [`redact`](Self::redact) | `true` |
    /// | [`redact_credentials`](Self::redact_credentials) | `true` |
    /// | [`luhn_cards`](Self::luhn_cards) | `false` |
    /// | [`denylist_fields`](Self::denylist_fields) | none beyond the built-in list |
    /// | [`identity`](Self::identity) / [`identify`](Self::identify) | none |
    /// | [`conversation_key`](Self::conversation_key) | drawn per process |
    /// | [`flush_interval`](Self::flush_interval) | 5 s |
    /// | [`flush_threshold`](Self::flush_threshold) | 20 events |
    /// | [`max_buffer`](Self::max_buffer) | 10 000 events |
    /// | [`max_batch_events`](Self::max_batch_events) | 500 events per POST |
    /// | [`max_batch_bytes`](Self::max_batch_bytes) | 1 MiB per POST |
    /// | [`capture_missing_capabilities`](Self::capture_missing_capabilities) | `true` |
    /// | [`connect_timeout`](Self::connect_timeout) | 5 s |
    /// | [`request_timeout`](Self::request_timeout) | 10 s |
    /// | [`shutdown_timeout`](Self::shutdown_timeout) | 2 s |
    /// | [`retry_backoff`](Self::retry_backoff) | 1 s doubling up to 30 s |
    /// | [`on_error`](Self::on_error) | one `[mcpeye] …` line on stderr per kind of problem |
    /// | [`sample_rate`](Self::sample_rate) | `1.0` (every session) |
    /// | [`before_send`](Self::before_send) | none |
    /// | [`infer_intent`](Self::infer_intent) | none |
    /// | [`span_content`](Self::span_content) | `false` |
    /// | [`outbox_dir`](Self::outbox_dir) | none: undelivered events live in memory only |
    /// | [`outbox_max_bytes`](Self::outbox_max_bytes) | 64 MiB |
    /// | [`event_log`](Self::event_log) | none: no local event log |
    /// | [`event_log_max_bytes`](Self::event_log_max_bytes) | 64 MiB |
    ///
    /// `Config::new` does not read the environment; [`Config::from_env`] does.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj_demo");
    /// assert!(format!("{config:?}").contains("flush_threshold: 20"));
    /// ```
    pub fn new(project_id: impl Into<String>) -> Self {
        Config {
            project_id: project_id.into(),
            ingest_url: None,
            ingest_secret: None,
            use_env: false,
            redact: true,
            redact_credentials: true,
            luhn_cards: false,
            denylist_fields: Vec::new(),
            identity: Identity::default(),
            identify: None,
            conversation_key: None,
            flush_interval: Duration::from_secs(5),
            flush_threshold: 20,
            max_buffer: 10_000,
            max_batch_events: 500,
            max_batch_bytes: 1024 * 1024,
            capture_missing_capabilities: true,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(2),
            retry_initial_backoff: Duration::from_secs(1),
            retry_max_backoff: Duration::from_secs(30),
            on_error: None,
            sample_rate: 1.0,
            before_send: None,
            infer_intent: None,
            span_content: false,
            outbox_dir: None,
            outbox_max_bytes: 64 * 1024 * 1024,
            event_log_dir: None,
            event_log_max_bytes: 64 * 1024 * 1024,
        }
    }

    /// Like [`Config::new`], configured by the environment too: `init` takes the project from
    /// `MCPEYE_PROJECT_ID` when it is set (`project_id` is then only the default, so that each
    /// deployment of one binary names its own project), and the URL and secret from
    /// `MCPEYE_INGEST_URL` and `MCPEYE_INGEST_SECRET` unless they are set in code, and the
    /// [event log](Self::event_log)'s directory from `MCPEYE_EVENT_LOG_DIR` unless set in code.
    /// Blank variables count as unset.
    ///
    /// ```
    /// // With MCPEYE_PROJECT_ID=proj_prod in the environment, events go to `proj_prod`.
    /// let config = mcpeye::Config::from_env("proj_dev");
    /// # drop(config);
    /// ```
    pub fn from_env(project_id: impl Into<String>) -> Self {
        Config { use_env: true, ..Config::new(project_id) }
    }

    /// Base URL of the self-hosted ingest API; events go to `{url}/ingest`. A trailing `/` is
    /// trimmed and a URL already ending in `/ingest` is used as is.
    ///
    /// ```
    /// // Events are POSTed to https://ingest.example.com/ingest.
    /// let config = mcpeye::Config::new("proj").ingest_url("https://ingest.example.com/");
    /// # drop(config);
    /// ```
    pub fn ingest_url(mut self, url: impl Into<String>) -> Self {
        self.ingest_url = Some(url.into());
        self
    }

    /// Secret sent in the `x-mcpeye-secret` header (not sent when empty). Never shown by `Debug`.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").ingest_secret("s3cret-value");
    /// assert!(!format!("{config:?}").contains("s3cret-value"));
    /// ```
    pub fn ingest_secret(mut self, secret: impl Into<String>) -> Self {
        self.ingest_secret = Some(secret.into());
        self
    }

    /// Redaction of secrets and personal data in arguments, results, errors and intents
    /// (default `true`). The size caps apply either way.
    ///
    /// ```
    /// // Only for data known to hold no secrets: nothing is redacted, the size caps still apply.
    /// let config = mcpeye::Config::new("proj").redact(false);
    /// # drop(config);
    /// ```
    pub fn redact(mut self, on: bool) -> Self {
        self.redact = on;
        self
    }

    /// The credential layer beyond the contract (default `true`, docs/wire-format.md#credentials):
    /// URL userinfo and credential-named parameters, vendor token formats (Stripe, Slack,
    /// Google, GitHub, GitLab, Hugging Face, npm, Twilio, …), PEM private keys, base64 runs of 512
    /// characters or more, and high-entropy values under key-like names. `false` leaves exactly
    /// the sibling SDKs' redaction, for events byte-identical to theirs. Nothing is redacted
    /// when [`redact`](Self::redact) is `false`.
    ///
    /// ```
    /// let siblings_only = mcpeye::Config::new("proj").redact_credentials(false);
    /// # drop(siblings_only);
    /// ```
    pub fn redact_credentials(mut self, on: bool) -> Self {
        self.redact_credentials = on;
        self
    }

    /// Card-like digit runs redacted only when they pass the Luhn check (default `false`: the
    /// contract's pattern redacts any 13 to 16 digits, order numbers and timestamps included).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").luhn_cards(true);
    /// # drop(config);
    /// ```
    pub fn luhn_cards(mut self, on: bool) -> Self {
        self.luhn_cards = on;
        self
    }

    /// The redaction step these options make (the flusher's and the spans').
    pub(crate) fn redactor(&self) -> crate::redact::Redactor {
        crate::redact::Redactor::new(self.redact, &self.denylist_fields)
            .credentials(self.redact_credentials)
            .luhn_cards(self.luhn_cards)
    }

    /// Extra field names whose values are always replaced by `[REDACTED_FIELD]`, added to the
    /// built-in list (`password`, `token`, `apiKey`, …); compared case-insensitively.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").denylist_fields(["iban", "dateOfBirth"]);
    /// # drop(config);
    /// ```
    pub fn denylist_fields<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.denylist_fields.extend(fields.into_iter().map(Into::into));
        self
    }

    /// The identity sent with every payload (user, client, server version).
    ///
    /// ```
    /// let identity = mcpeye::Identity::new().client("my-agent/0.3").server_version("1.2.3");
    /// let config = mcpeye::Config::new("proj").identity(identity);
    /// # drop(config);
    /// ```
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = identity;
        self
    }

    /// A callback naming the user of each call (`userId` / `userEmail` of the event). It gets the
    /// call's [`RequestInfo`](crate::RequestInfo): the tool name, the arguments, the client, the
    /// session, the request's `_meta` and, over Streamable HTTP, the HTTP request's head with its
    /// extensions (what an auth layer put there). It runs on the calling thread, so keep it
    /// cheap. Its values are trimmed, blank ones dropped, cut to 256 characters, and not
    /// redacted. A callback that panics gives the call no identity (reported once in the
    /// diagnostics). See docs/attribution.md.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").identify(|request| {
    ///     Some(mcpeye::CallIdentity::new().user_id(request.arguments().get("account")?.clone()))
    /// });
    /// # drop(config);
    /// ```
    pub fn identify(
        mut self,
        f: impl Fn(&crate::RequestInfo<'_>) -> Option<CallIdentity> + Send + Sync + 'static,
    ) -> Self {
        self.identify = Some(Arc::new(f));
        self
    }

    /// The secret that conversation handles are tagged under (at least 32 bytes of
    /// high-entropy material; docs/attribution.md#conversation). Give every replica of a
    /// stateless server the same one: a handle minted by one replica is then valid on the
    /// others and after a restart, so a load-balanced deployment keeps its conversations whole.
    /// Without it the key is [`CONVERSATION_KEY_ENV`](crate::CONVERSATION_KEY_ENV)'s (under
    /// [`from_env`](Self::from_env)), else drawn per process. A shorter key is refused by `init`.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").conversation_key(*b"0123456789abcdef0123456789abcdef");
    /// // The key never shows in debug output.
    /// assert!(!format!("{config:?}").contains("0123456789abcdef"));
    /// ```
    pub fn conversation_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.conversation_key = Some(Arc::from(key.as_ref()));
        self
    }

    /// Longest time an event waits in the buffer before it is sent (default 5 s).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").flush_interval(std::time::Duration::from_secs(1));
    /// # drop(config);
    /// ```
    pub fn flush_interval(mut self, interval: Duration) -> Self {
        self.flush_interval = interval;
        self
    }

    /// Number of buffered events that triggers a send without waiting for the interval
    /// (default 20). The flusher checks it on its 100 ms tick, so calls never pay a thread
    /// wake-up for it; a hand-off channel a quarter full wakes the flusher at once. Once a round
    /// has sent, it goes on only while a full batch ([`max_batch_events`](Self::max_batch_events),
    /// or [`max_buffer`](Self::max_buffer) events if fewer) is buffered; the rest goes on the next
    /// tick.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").flush_threshold(100);
    /// # drop(config);
    /// ```
    pub fn flush_threshold(mut self, events: usize) -> Self {
        self.flush_threshold = events;
        self
    }

    /// Most events kept in memory waiting for the ingest (default 10 000); beyond it the oldest
    /// are dropped, with one warning, or, with an [`outbox_dir`](Self::outbox_dir), wait on disk. The hand-off channel from the calling threads to the flusher
    /// holds as many again (at least 1024); when it is full, new events are dropped.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").max_buffer(50_000);
    /// # drop(config);
    /// ```
    pub fn max_buffer(mut self, events: usize) -> Self {
        self.max_buffer = events;
        self
    }

    /// Most events in one POST (default 500).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").max_batch_events(100);
    /// # drop(config);
    /// ```
    pub fn max_batch_events(mut self, events: usize) -> Self {
        self.max_batch_events = events;
        self
    }

    /// Most bytes of JSON body in one POST (default 1 MiB). A single event larger than this is
    /// still sent, alone.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").max_batch_bytes(256 * 1024);
    /// # drop(config);
    /// ```
    pub fn max_batch_bytes(mut self, bytes: usize) -> Self {
        self.max_batch_bytes = bytes;
        self
    }

    /// Whether manifests list and answer the reserved `mcpeye_request_capability` tool
    /// (default `true`).
    ///
    /// ```
    /// // Manifests then list only the server's own tools.
    /// let config = mcpeye::Config::new("proj").capture_missing_capabilities(false);
    /// # drop(config);
    /// ```
    pub fn capture_missing_capabilities(mut self, on: bool) -> Self {
        self.capture_missing_capabilities = on;
        self
    }

    /// Timeout for connecting to the ingest (default 5 s).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").connect_timeout(std::time::Duration::from_secs(2));
    /// # drop(config);
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Timeout for a whole POST, from connecting to reading the answer (default 10 s).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").request_timeout(std::time::Duration::from_secs(30));
    /// # drop(config);
    /// ```
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long dropping the [`Guard`](crate::Guard) waits for the final flush (default 2 s).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").shutdown_timeout(std::time::Duration::from_millis(500));
    /// # drop(config);
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Backoff between retries of a failed POST: `initial`, doubled at each consecutive
    /// failure up to `max`, with jitter (defaults 1 s and 30 s). A `Retry-After` from the
    /// ingest takes precedence (capped at 60 s).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let config = mcpeye::Config::new("proj").retry_backoff(Duration::from_millis(200), Duration::from_secs(10));
    /// # drop(config);
    /// ```
    pub fn retry_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.retry_initial_backoff = initial;
        self.retry_max_backoff = max;
        self
    }

    /// Receives each kind of problem once per tracker (default: one `[mcpeye] …` line on
    /// stderr; never stdout). A panicking callback is ignored. Counts of every dropped event
    /// are in [`Stats`](crate::Stats).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").on_error(|d| match d.kind {
    ///     mcpeye::DiagnosticKind::Unauthorized => eprintln!("check MCPEYE_INGEST_SECRET: {d}"),
    ///     _ => eprintln!("{d}"),
    /// });
    /// # drop(config);
    /// ```
    pub fn on_error(mut self, f: impl Fn(&Diagnostic) + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(f));
        self
    }
}

impl Config {
    /// The share of sessions whose events are sent, from `0.0` to `1.0` (default `1.0`).
    ///
    /// The decision is made per MCP session (the `Mcp-Session-Id` of Streamable HTTP, or the
    /// stdio connection), so a session is kept or dropped whole; a call with no session (a
    /// direct `Manifest::call`, MCP 2026-07-28 without sessions) is its own. It hashes the
    /// session id, so every replica of a server decides the same for the same session. Calls of
    /// the reserved `mcpeye_request_capability` tool are always kept: they are the Intent Gap.
    /// Sampled-out events are counted in [`Stats::sampled_out`](crate::Stats::sampled_out). Spans
    /// and metrics are not sampled here (the host's OpenTelemetry sampler decides).
    ///
    /// A rate outside `0.0..=1.0` (or NaN) is a [`ConfigError`] from `init`.
    ///
    /// ```
    /// // Send the events of one session in ten.
    /// let config = mcpeye::Config::new("proj").sample_rate(0.1);
    /// # drop(config);
    /// ```
    pub fn sample_rate(mut self, rate: f64) -> Self {
        self.sample_rate = rate;
        self
    }

    /// A callback that sees each event on the flusher thread, after the size caps and redaction,
    /// and returns it (edited or not) to send it, or `None` to drop it. It runs after sampling;
    /// what it returns is sent as it is, with the caps applied again. Dropped events are counted
    /// in [`Dropped::before_send`](crate::Dropped::before_send). It fails closed: if it panics,
    /// the event is dropped ([`Dropped::before_send_panicked`](crate::Dropped::before_send_panicked))
    /// and one diagnostic is reported.
    ///
    /// Drop a tool's events entirely, hash the user id, strip a field:
    ///
    /// ```
    /// use std::hash::{Hash, Hasher};
    ///
    /// let config = mcpeye::Config::new("proj").before_send(|mut event| {
    ///     if event.tool_name == "internal_healthcheck" {
    ///         return None; // never sent
    ///     }
    ///     if let Some(user) = &event.user_id {
    ///         let mut h = std::collections::hash_map::DefaultHasher::new();
    ///         user.hash(&mut h);
    ///         event.user_id = Some(format!("{:016x}", h.finish()));
    ///     }
    ///     if let Some(args) = event.arguments.as_object_mut() {
    ///         args.remove("address");
    ///     }
    ///     Some(event)
    /// });
    /// # drop(config);
    /// ```
    pub fn before_send(mut self, f: impl Fn(Event) -> Option<Event> + Send + Sync + 'static) -> Self {
        self.before_send = Some(Arc::new(f));
        self
    }

    /// A callback that infers the intent of a call whose agent gave none, for the
    /// [event log](Self::event_log) (a line's `inferredIntent`, docs/event-log.md) and so for
    /// `mcpeye report`, which can tell it from an intent the agent gave. It never reaches the
    /// wire: the events sent, their `intent` included, are the same bytes with or without it.
    ///
    /// It runs on the flusher thread, never on the calling thread, and only with an event log
    /// (without one its answer would have nowhere to go): once per call that has no intent,
    /// after sampling, the caps, redaction and `before_send`. It sees the event as sent, as
    /// an [`InferCall`]: the tool, the redacted arguments, the error or the result's size. What
    /// it returns is capped and redacted as an agent's intent is; `None`, or a blank text, leaves
    /// the call without one. A callback that panics gives that call no inferred intent and the
    /// flusher goes on: counted in [`Stats::infer_intent_panicked`](crate::Stats::infer_intent_panicked),
    /// reported once ([`DiagnosticKind::InferIntentPanicked`](crate::DiagnosticKind::InferIntentPanicked)).
    /// The call's span has ended by the time the flusher sees its event, so spans do not carry
    /// it. Keep it quick (events wait behind it); without it the flusher does nothing more.
    ///
    /// ```
    /// use mcpeye::InferCall;
    ///
    /// fn infer(call: &InferCall<'_>) -> Option<String> {
    ///     match (call.tool(), call.is_error()) {
    ///         ("search", false) => {
    ///             let query = call.arguments().get("query")?.as_str()?;
    ///             Some(format!("looking for products matching {query:?}"))
    ///         }
    ///         (tool, true) => Some(format!("tried {tool}, which failed: {}", call.error()?)),
    ///         _ => None,
    ///     }
    /// }
    ///
    /// let config = mcpeye::Config::from_env("proj").event_log("/var/log/my-server/mcpeye").infer_intent(infer);
    /// # drop(config);
    /// ```
    pub fn infer_intent(mut self, f: impl Fn(&InferCall<'_>) -> Option<String> + Send + Sync + 'static) -> Self {
        self.infer_intent = Some(Arc::new(f));
        self
    }

    /// Whether spans carry the call's arguments (`gen_ai.tool.call.arguments`) and result
    /// (`gen_ai.tool.call.result`), as compact JSON after this tracker's caps and redaction
    /// (default `false`: the conventions make them opt-in, as they may hold sensitive data).
    /// Only with the `opentelemetry` or `tracing` feature; the redaction runs on the calling
    /// thread, for recorded spans only.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").span_content(true);
    /// # drop(config);
    /// ```
    pub fn span_content(mut self, on: bool) -> Self {
        self.span_content = on;
        self
    }

    /// Keeps undelivered events on disk in `dir` (created if needed), so that they survive the
    /// process being killed and are sent at its next start. Off by default.
    ///
    /// The flusher appends each event to a log in `dir` as it takes it off the hand-off channel,
    /// before the event can be sent, and settles it once it is delivered or dropped; at start,
    /// what a previous process left there is sent first (counted in `captured` and
    /// [`Stats::recovered`](crate::Stats::recovered)). Tool calls never wait on the disk: they
    /// still only hand their record to the channel.
    ///
    /// - **At least once**: only a batch in flight at a kill may be sent again at the next
    ///   start, with the same `callId`, so the ingest (or a report) can tell the copy.
    /// - **Window of loss**: a call whose record the flusher has not taken off the channel yet
    ///   is lost with the process. The flusher drains to disk every 100 ms (sooner when a quarter
    ///   of the channel fills) whatever the ingest does: its POSTs run on other threads.
    /// - **Bounded**: memory holds [`max_buffer`](Self::max_buffer) events, the outbox the
    ///   rest, up to [`outbox_max_bytes`](Self::outbox_max_bytes) of undelivered events; beyond
    ///   it the oldest are dropped and counted (`outbox_overflow`). A torn last record (the
    ///   process killed mid-write) is skipped when the log is read back.
    /// - A process being killed loses nothing the flusher wrote; a power loss or kernel crash
    ///   may (nothing is `fsync`ed). Several processes may share `dir`: each takes its own slot,
    ///   and adopts the slots of processes that are gone.
    ///
    /// `init` fails with [`ConfigError::Outbox`](crate::ConfigError::Outbox) if `dir` cannot be
    /// created or written.
    ///
    /// ```no_run
    /// let config = mcpeye::Config::from_env("proj_demo").outbox_dir("/var/lib/my-server/mcpeye-outbox");
    /// let _guard = mcpeye::init(config)?;
    /// # Ok::<(), mcpeye::ConfigError>(())
    /// ```
    pub fn outbox_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.outbox_dir = Some(dir.into());
        self
    }

    /// Most bytes of undelivered events the outbox keeps (default 64 MiB); beyond it the oldest
    /// are dropped (counted as `outbox_overflow`). An event larger than the bound on its own is
    /// still kept, alone. The log on disk stays within about twice this size.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").outbox_dir("outbox").outbox_max_bytes(16 << 20);
    /// # drop(config);
    /// ```
    pub fn outbox_max_bytes(mut self, bytes: u64) -> Self {
        self.outbox_max_bytes = bytes;
        self
    }

    /// Keeps a local event log in `dir` (opt-in; under [`Config::from_env`], also
    /// `MCPEYE_EVENT_LOG_DIR`): every event as the ingest gets it, after the same caps and
    /// redaction, with what the wire has no key for (session, conversation, turn, model,
    /// client, server version, a hash of the tool's descriptor), the other methods' requests,
    /// and the tool list whenever it changes. `mcpeye report DIR/*.jsonl` turns it into a
    /// report. The flusher writes it, never the calling thread; it keeps at most
    /// [`event_log_max_bytes`](Self::event_log_max_bytes), in files rotated by size, the
    /// oldest removed first. Its format is in docs/event-log.md.
    ///
    /// ```
    /// let config = mcpeye::Config::from_env("proj_demo").event_log("/var/log/my-server/mcpeye");
    /// # drop(config);
    /// ```
    pub fn event_log(mut self, dir: impl Into<PathBuf>) -> Self {
        self.event_log_dir = Some(dir.into());
        self
    }

    /// Most bytes the [event log](Self::event_log) keeps on disk (default 64 MiB): a file is
    /// rotated at a quarter of it, and the oldest files are removed beyond it.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").event_log("logs").event_log_max_bytes(8 << 20);
    /// # drop(config);
    /// ```
    pub fn event_log_max_bytes(mut self, bytes: u64) -> Self {
        self.event_log_max_bytes = bytes;
        self
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("project_id", &self.project_id)
            .field("ingest_url", &self.ingest_url.as_deref().map(without_userinfo))
            .field("ingest_secret", &self.ingest_secret.as_ref().map(|_| "***"))
            .field("from_env", &self.use_env)
            .field("redact", &self.redact)
            .field("redact_credentials", &self.redact_credentials)
            .field("luhn_cards", &self.luhn_cards)
            .field("denylist_fields", &self.denylist_fields)
            .field("identity", &self.identity)
            .field("identify", &self.identify.as_ref().map(|_| "Fn"))
            .field("conversation_key", &self.conversation_key.as_ref().map(|_| "***"))
            .field("flush_interval", &self.flush_interval)
            .field("flush_threshold", &self.flush_threshold)
            .field("max_buffer", &self.max_buffer)
            .field("max_batch_events", &self.max_batch_events)
            .field("max_batch_bytes", &self.max_batch_bytes)
            .field("capture_missing_capabilities", &self.capture_missing_capabilities)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("retry_backoff", &(self.retry_initial_backoff, self.retry_max_backoff))
            .field("on_error", &self.on_error.as_ref().map(|_| "Fn"))
            .field("sample_rate", &self.sample_rate)
            .field("before_send", &self.before_send.as_ref().map(|_| "Fn"))
            .field("infer_intent", &self.infer_intent.as_ref().map(|_| "Fn"))
            .field("span_content", &self.span_content)
            .field("outbox_dir", &self.outbox_dir)
            .field("outbox_max_bytes", &self.outbox_max_bytes)
            .field("event_log", &self.event_log_dir)
            .field("event_log_max_bytes", &self.event_log_max_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::resolve::{resolve_endpoint, ENV_EVENT_LOG_DIR};
    use super::*;
    use crate::contract::{ENV_INGEST_SECRET, ENV_INGEST_URL, ENV_PROJECT_ID};
    use crate::model::identity::normalize_identity;

    #[test]
    fn credentials_in_the_url_are_refused_and_never_shown() {
        let err = resolve_endpoint("https://user:hunter2@ingest.example").unwrap_err();
        assert!(err.to_string().contains("ingest_secret"), "{err}");
        let shown = format!("{:?}", Config::new("p").ingest_url("https://user:hunter2@ingest.example/x"));
        assert!(!shown.contains("hunter2") && shown.contains("https://***@ingest.example/x"), "{shown}");
        assert_eq!(without_userinfo("http://127.0.0.1:3001/a@b"), "http://127.0.0.1:3001/a@b");
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn endpoint_is_trimmed_and_not_doubled() {
        let ep = |u: &str| Config::new("p").ingest_url(u).resolve_with(|_| None).unwrap().endpoint;
        assert_eq!(ep("https://x.example/"), "https://x.example/ingest");
        assert_eq!(ep("https://x.example//"), "https://x.example/ingest");
        assert_eq!(ep("https://x.example/api/ingest/"), "https://x.example/api/ingest");
        assert_eq!(ep("http://127.0.0.1:3001"), "http://127.0.0.1:3001/ingest");
    }

    #[test]
    fn the_environment_names_the_project_under_from_env_only() {
        let env = env_of(&[(ENV_PROJECT_ID, "proj_env")]);
        assert_eq!(Config::from_env("proj_code").resolve_with(&env).unwrap().project_id, "proj_env");
        assert_eq!(Config::from_env("").resolve_with(&env).unwrap().project_id, "proj_env");
        assert_eq!(Config::new("proj_code").resolve_with(&env).unwrap().project_id, "proj_code");
        let blank = env_of(&[(ENV_PROJECT_ID, "  ")]);
        assert_eq!(Config::from_env("proj_code").resolve_with(&blank).unwrap().project_id, "proj_code");
        assert_eq!(Config::from_env(" ").resolve_with(&blank).unwrap_err(), ConfigError::EmptyProjectId);
    }

    #[test]
    fn default_url_and_env_fallbacks() {
        let env = env_of(&[(ENV_INGEST_URL, "https://env.example"), (ENV_INGEST_SECRET, "envsecret")]);
        let r = Config::new("p").resolve_with(&env).unwrap();
        assert_eq!(r.endpoint, "http://localhost:3001/ingest");
        assert!(r.url_defaulted && r.secret.is_none() && !r.insecure);
        let r = Config::from_env("p").resolve_with(&env).unwrap();
        assert_eq!(r.endpoint, "https://env.example/ingest");
        assert_eq!(r.secret.as_deref(), Some("envsecret"));
        assert!(!r.url_defaulted);
        let r =
            Config::from_env("p").ingest_url("https://own.example").ingest_secret("own").resolve_with(&env).unwrap();
        assert_eq!((r.endpoint.as_str(), r.secret.as_deref()), ("https://own.example/ingest", Some("own")));
    }

    #[test]
    fn the_event_log_directory_comes_from_code_or_from_env() {
        let env = env_of(&[(ENV_EVENT_LOG_DIR, "/tmp/from-env")]);
        let dir = |c: Config| c.event_log_dir_with(&env);
        assert_eq!(dir(Config::new("p")), None);
        assert_eq!(dir(Config::from_env("p")), Some(PathBuf::from("/tmp/from-env")));
        assert_eq!(dir(Config::from_env("p").event_log("/own")), Some(PathBuf::from("/own")));
        assert_eq!(dir(Config::new("p").event_log("/own")), Some(PathBuf::from("/own")));
        let blank = env_of(&[(ENV_EVENT_LOG_DIR, " ")]);
        assert_eq!(Config::from_env("p").event_log_dir_with(&blank), None);
        let err = Config::new("p").event_log("/own").event_log_max_bytes(0).resolve_with(|_| None).unwrap_err();
        assert!(err.to_string().contains("event_log_max_bytes"), "{err}");
    }

    #[test]
    fn bad_configs_are_refused_with_a_fix() {
        let err = Config::new("  ").resolve_with(|_| None).unwrap_err();
        assert_eq!(err, ConfigError::EmptyProjectId);
        assert!(err.to_string().contains("Config::new"));
        for url in ["localhost:3001", "ftp://x.example", "http://", "not a url", "https://x.example?a=1"] {
            let err = Config::new("p").ingest_url(url).resolve_with(|_| None).unwrap_err();
            assert!(matches!(err, ConfigError::InvalidIngestUrl { .. }), "{url}: {err:?}");
            assert!(err.to_string().contains("ingest_url"));
        }
        let err = Config::new("p").max_batch_events(0).resolve_with(|_| None).unwrap_err();
        assert!(err.to_string().contains("max_batch_events"));
        assert_eq!(
            Config::new("p").ingest_secret("a\nb").resolve_with(|_| None).unwrap_err(),
            ConfigError::InvalidSecret
        );
    }

    #[test]
    fn plain_http_off_machine_is_flagged() {
        let insecure = |u: &str| Config::new("p").ingest_url(u).resolve_with(|_| None).unwrap().insecure;
        assert!(insecure("http://mcpeye.example.com"));
        assert!(!insecure("https://mcpeye.example.com"));
        assert!(!insecure("http://localhost:3001"));
        assert!(!insecure("http://127.0.0.1:9"));
        assert!(!insecure("http://[::1]:9"));
    }

    #[test]
    fn secret_is_never_in_debug() {
        let c = Config::new("p").ingest_secret("hunter2-secret");
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("hunter2") && dbg.contains("***"), "{dbg}");
    }

    #[test]
    fn identity_values_are_coerced_and_cut() {
        assert_eq!(normalize_identity(42u64).as_deref(), Some("42"));
        assert_eq!(normalize_identity(serde_json::json!(7.5)).as_deref(), Some("7.5"));
        assert_eq!(normalize_identity(serde_json::json!(" carol ")).as_deref(), Some("carol"));
        assert_eq!(normalize_identity("   "), None);
        assert_eq!(normalize_identity(serde_json::json!(null)), None);
        assert_eq!(normalize_identity(serde_json::json!({"a": 1})), None);
        assert_eq!(normalize_identity(f64::NAN), None);
        let long = "é".repeat(300);
        assert_eq!(normalize_identity(long.as_str()).unwrap().chars().count(), 256);
    }
}
