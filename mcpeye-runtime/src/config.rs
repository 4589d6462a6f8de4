//! [`Config`]: what a tracker needs to know, and the checks `init` runs on it.

use crate::contract::{DEFAULT_INGEST_URL, ENV_INGEST_SECRET, ENV_INGEST_URL};
use crate::diagnostics::Diagnostic;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Longest identity value kept, in characters (CONTRACT.md §2).
const MAX_IDENTITY_CHARS: usize = 256;

/// The per-call identity callback: given the tool name and the call's arguments (without
/// `mcpeyeIntent`, before redaction), says who made the call.
pub type IdentifyFn = dyn Fn(&str, &Value) -> Option<CallIdentity> + Send + Sync;

/// Receives every problem the runtime reports (see [`Config::on_error`]).
pub type OnErrorFn = dyn Fn(&Diagnostic) + Send + Sync;

/// Configuration of a tracker. Start with [`Config::new`] (or [`Config::from_env`]) and chain
/// the options; every option has a default.
///
/// ```
/// use std::time::Duration;
/// let config = mcpeye_runtime::Config::new("proj_demo")
///     .ingest_url("https://mcpeye.example.com")
///     .ingest_secret("s3cr3t")
///     .identity(mcpeye_runtime::Identity::new().server_version("1.2.3"))
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
    pub(crate) denylist_fields: Vec<String>,
    pub(crate) identity: Identity,
    pub(crate) identify: Option<Arc<IdentifyFn>>,
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
}

impl Config {
    /// A configuration for this mcpeye project, with every default:
    ///
    /// | option | default |
    /// |---|---|
    /// | [`ingest_url`](Self::ingest_url) | `http://localhost:3001` (said once in the diagnostics) |
    /// | [`ingest_secret`](Self::ingest_secret) | none |
    /// | [`redact`](Self::redact) | `true` |
    /// | [`denylist_fields`](Self::denylist_fields) | none beyond the built-in list |
    /// | [`identity`](Self::identity) / [`identify`](Self::identify) | none |
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
    ///
    /// `Config::new` does not read the environment; [`Config::from_env`] does.
    pub fn new(project_id: impl Into<String>) -> Self {
        Config {
            project_id: project_id.into(),
            ingest_url: None,
            ingest_secret: None,
            use_env: false,
            redact: true,
            denylist_fields: Vec::new(),
            identity: Identity::default(),
            identify: None,
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
        }
    }

    /// Like [`Config::new`], but when no URL or secret is set explicitly, `init` takes them from
    /// the `MCPEYE_INGEST_URL` and `MCPEYE_INGEST_SECRET` environment variables.
    pub fn from_env(project_id: impl Into<String>) -> Self {
        Config { use_env: true, ..Config::new(project_id) }
    }

    /// Base URL of the self-hosted ingest API; events go to `{url}/ingest`. A trailing `/` is
    /// trimmed and a URL already ending in `/ingest` is used as is.
    pub fn ingest_url(mut self, url: impl Into<String>) -> Self {
        self.ingest_url = Some(url.into());
        self
    }

    /// Secret sent in the `x-mcpeye-secret` header (not sent when empty). Never shown by `Debug`.
    pub fn ingest_secret(mut self, secret: impl Into<String>) -> Self {
        self.ingest_secret = Some(secret.into());
        self
    }

    /// Redaction of secrets and personal data in arguments, results, errors and intents
    /// (default `true`). The size caps apply either way.
    pub fn redact(mut self, on: bool) -> Self {
        self.redact = on;
        self
    }

    /// Extra field names whose values are always replaced by `[REDACTED_FIELD]`, added to the
    /// built-in list (`password`, `token`, `apiKey`, …); compared case-insensitively.
    pub fn denylist_fields<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.denylist_fields.extend(fields.into_iter().map(Into::into));
        self
    }

    /// The identity sent with every payload (user, client, server version).
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = identity;
        self
    }

    /// A callback naming the user of each call (`userId` / `userEmail` of the event). It gets the
    /// tool name and the call's arguments and runs on the calling thread, so keep it cheap. Its
    /// values are trimmed, blank ones dropped, cut to 256 characters, and not redacted. A
    /// callback that panics gives the call no identity (reported once in the diagnostics).
    ///
    /// ```
    /// let config = mcpeye_runtime::Config::new("proj").identify(|_tool, args| {
    ///     Some(mcpeye_runtime::CallIdentity::new().user_id(args.get("account")?.clone()))
    /// });
    /// # drop(config);
    /// ```
    pub fn identify(mut self, f: impl Fn(&str, &Value) -> Option<CallIdentity> + Send + Sync + 'static) -> Self {
        self.identify = Some(Arc::new(f));
        self
    }

    /// Longest time an event waits in the buffer before it is sent (default 5 s).
    pub fn flush_interval(mut self, interval: Duration) -> Self {
        self.flush_interval = interval;
        self
    }

    /// Number of buffered events that triggers a send without waiting for the interval
    /// (default 20). The flusher checks it on its 100 ms tick, so calls never pay a thread
    /// wake-up for it; a hand-off channel a quarter full wakes the flusher at once.
    pub fn flush_threshold(mut self, events: usize) -> Self {
        self.flush_threshold = events;
        self
    }

    /// Most events kept waiting for the ingest (default 10 000); beyond it the oldest are
    /// dropped, with one warning. The hand-off channel from the calling threads to the flusher
    /// holds as many again (at least 1024); when it is full, new events are dropped.
    pub fn max_buffer(mut self, events: usize) -> Self {
        self.max_buffer = events;
        self
    }

    /// Most events in one POST (default 500).
    pub fn max_batch_events(mut self, events: usize) -> Self {
        self.max_batch_events = events;
        self
    }

    /// Most bytes of JSON body in one POST (default 1 MiB). A single event larger than this is
    /// still sent, alone.
    pub fn max_batch_bytes(mut self, bytes: usize) -> Self {
        self.max_batch_bytes = bytes;
        self
    }

    /// Whether manifests list and answer the reserved `mcpeye_request_capability` tool
    /// (default `true`).
    pub fn capture_missing_capabilities(mut self, on: bool) -> Self {
        self.capture_missing_capabilities = on;
        self
    }

    /// Timeout for connecting to the ingest (default 5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Timeout for a whole POST, from connecting to reading the answer (default 10 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long dropping the [`Guard`](crate::Guard) waits for the final flush (default 2 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Backoff between retries of a failed POST: `initial`, doubled at each consecutive
    /// failure up to `max`, with jitter (defaults 1 s and 30 s). A `Retry-After` from the
    /// ingest takes precedence (capped at 60 s).
    pub fn retry_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.retry_initial_backoff = initial;
        self.retry_max_backoff = max;
        self
    }

    /// Receives each kind of problem once per tracker (default: one `[mcpeye] …` line on
    /// stderr; never stdout). A panicking callback is ignored. Counts of every dropped event
    /// are in [`Stats`](crate::Stats).
    pub fn on_error(mut self, f: impl Fn(&Diagnostic) + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(f));
        self
    }

    /// Checks the configuration and resolves the URL, secret and defaults.
    pub(crate) fn resolve(&self) -> Result<Resolved, ConfigError> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    pub(crate) fn resolve_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<Resolved, ConfigError> {
        if self.project_id.trim().is_empty() {
            return Err(ConfigError::EmptyProjectId);
        }
        let env = |name: &str| if self.use_env { env(name).filter(|v| !v.trim().is_empty()) } else { None };
        let (url, url_defaulted) = match self.ingest_url.clone().or_else(|| env(ENV_INGEST_URL)) {
            Some(url) => (url, false),
            None => (DEFAULT_INGEST_URL.to_string(), true),
        };
        let (endpoint, insecure) = resolve_endpoint(&url)?;
        let secret = self.ingest_secret.clone().or_else(|| env(ENV_INGEST_SECRET)).filter(|s| !s.is_empty());
        if let Some(s) = &secret {
            if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
                return Err(ConfigError::InvalidSecret);
            }
        }
        let positive = [
            ("flush_threshold", self.flush_threshold),
            ("max_buffer", self.max_buffer),
            ("max_batch_events", self.max_batch_events),
            ("max_batch_bytes", self.max_batch_bytes),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(ConfigError::InvalidOption { option: name, reason: "must be at least 1" });
            }
        }
        let durations = [
            ("flush_interval", self.flush_interval),
            ("connect_timeout", self.connect_timeout),
            ("request_timeout", self.request_timeout),
        ];
        for (name, d) in durations {
            if d.is_zero() {
                return Err(ConfigError::InvalidOption { option: name, reason: "must be longer than zero" });
            }
        }
        Ok(Resolved { endpoint, secret, url_defaulted, insecure })
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
            .field("denylist_fields", &self.denylist_fields)
            .field("identity", &self.identity)
            .field("identify", &self.identify.as_ref().map(|_| "Fn"))
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
            .finish()
    }
}

/// What `resolve` worked out of a [`Config`].
#[derive(Clone)]
pub(crate) struct Resolved {
    /// The full `…/ingest` URL.
    pub endpoint: String,
    /// A non-empty secret.
    pub secret: Option<String>,
    /// No URL was configured: the default is used.
    pub url_defaulted: bool,
    /// Plain `http://` to a host that is not loopback.
    pub insecure: bool,
}

impl fmt::Debug for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolved")
            .field("endpoint", &self.endpoint)
            .field("secret", &self.secret.as_ref().map(|_| "***"))
            .field("url_defaulted", &self.url_defaulted)
            .field("insecure", &self.insecure)
            .finish()
    }
}

/// `{url}/ingest`, with trailing slashes trimmed and `/ingest` not doubled; and whether the URL
/// sends in clear text off this machine.
fn resolve_endpoint(url: &str) -> Result<(String, bool), ConfigError> {
    let trimmed = url.trim().trim_end_matches('/');
    let invalid = |reason: &'static str| ConfigError::InvalidIngestUrl { reason };
    let uri: ureq::http::Uri = trimmed.parse().map_err(|_| invalid("it is not a valid URL"))?;
    let scheme = uri.scheme_str().ok_or_else(|| invalid("it has no scheme (write http:// or https://)"))?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(invalid("its scheme is neither http nor https"));
    }
    let host = uri.host().filter(|h| !h.is_empty()).ok_or_else(|| invalid("it names no host"))?;
    if uri.query().is_some() {
        return Err(invalid("it has a query string (give the base URL of the ingest API)"));
    }
    // Credentials in the URL would travel into error texts and `Debug`; the secret has its own header.
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(invalid("it carries credentials (user:password@); put the secret in Config::ingest_secret"));
    }
    let endpoint = if trimmed.ends_with("/ingest") { trimmed.to_string() } else { format!("{trimmed}/ingest") };
    let insecure = scheme.eq_ignore_ascii_case("http") && !is_loopback(host);
    Ok((endpoint, insecure))
}

/// The URL with any `user:password@` replaced, for display (such URLs are refused by `init`).
fn without_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    match url[start..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(false)
}

/// Why `init` (or [`Tracker::new`](crate::Tracker::new)) refused a [`Config`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The project id is empty or blank.
    EmptyProjectId,
    /// The ingest URL cannot be used.
    InvalidIngestUrl {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The secret contains control characters and cannot be sent in a header.
    InvalidSecret,
    /// A numeric or duration option is out of range.
    InvalidOption {
        /// The option's name (its `Config` method).
        option: &'static str,
        /// What it must be.
        reason: &'static str,
    },
    /// The flusher thread could not be started.
    FlusherThread(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::EmptyProjectId => {
                f.write_str("mcpeye: the project id is empty; pass your project's id to Config::new(\"…\")")
            }
            ConfigError::InvalidIngestUrl { reason } => write!(
                f,
                "mcpeye: the ingest URL cannot be used: {reason}; set Config::ingest_url (or {ENV_INGEST_URL}) \
                 to the base URL of your ingest API, e.g. https://mcpeye.example.com"
            ),
            ConfigError::InvalidSecret => write!(
                f,
                "mcpeye: the ingest secret contains control characters; check Config::ingest_secret \
                 (or {ENV_INGEST_SECRET}) for a stray newline"
            ),
            ConfigError::InvalidOption { option, reason } => {
                write!(f, "mcpeye: Config::{option} {reason}")
            }
            ConfigError::FlusherThread(e) => write!(f, "mcpeye: could not start the flusher thread: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A value usable as an identity field: strings, integers, floats, booleans and JSON scalars.
/// Numbers are written as strings (the ingest requires strings); `null`, arrays and objects
/// give no value.
pub trait IdentityValue {
    /// The value as a string, or `None` for no value.
    fn into_identity_string(self) -> Option<String>;
}

impl IdentityValue for String {
    fn into_identity_string(self) -> Option<String> {
        Some(self)
    }
}
impl IdentityValue for &str {
    fn into_identity_string(self) -> Option<String> {
        Some(self.to_string())
    }
}
impl IdentityValue for &String {
    fn into_identity_string(self) -> Option<String> {
        Some(self.clone())
    }
}
impl IdentityValue for Value {
    fn into_identity_string(self) -> Option<String> {
        match self {
            Value::String(s) => Some(s),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        }
    }
}
impl IdentityValue for &Value {
    fn into_identity_string(self) -> Option<String> {
        self.clone().into_identity_string()
    }
}
impl<T: IdentityValue> IdentityValue for Option<T> {
    fn into_identity_string(self) -> Option<String> {
        self.and_then(IdentityValue::into_identity_string)
    }
}
macro_rules! identity_via_display {
    ($($t:ty),*) => {$(
        impl IdentityValue for $t {
            fn into_identity_string(self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}
identity_via_display!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool);
impl IdentityValue for f64 {
    fn into_identity_string(self) -> Option<String> {
        self.is_finite().then(|| serde_json::Number::from_f64(self).map(|n| n.to_string())).flatten()
    }
}
impl IdentityValue for f32 {
    fn into_identity_string(self) -> Option<String> {
        f64::from(self).into_identity_string()
    }
}

/// Trims, drops blanks, cuts to 256 characters (CONTRACT.md §2).
pub(crate) fn normalize_identity(v: impl IdentityValue) -> Option<String> {
    let s = v.into_identity_string()?;
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    Some(match t.char_indices().nth(MAX_IDENTITY_CHARS) {
        Some((cut, _)) => t[..cut].to_string(),
        None if t.len() == s.len() => s,
        None => t.to_string(),
    })
}

/// The identity sent with every payload (`identity` on the wire). Values are trimmed; blank
/// ones are left out.
///
/// ```
/// let identity = mcpeye_runtime::Identity::new().user_id(42).server_version("1.2.3");
/// # drop(identity);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub(crate) user_id: Option<String>,
    pub(crate) user_email: Option<String>,
    pub(crate) client: Option<String>,
    pub(crate) server_version: Option<String>,
}

impl Identity {
    /// No identity.
    pub fn new() -> Self {
        Identity::default()
    }
    /// The user (`userId`); numbers are written as strings.
    pub fn user_id(mut self, v: impl IdentityValue) -> Self {
        self.user_id = normalize_identity(v);
        self
    }
    /// The user's e-mail (`userEmail`; not redacted).
    pub fn user_email(mut self, v: impl IdentityValue) -> Self {
        self.user_email = normalize_identity(v);
        self
    }
    /// The MCP client (`client`), e.g. `claude-desktop/1.0`.
    pub fn client(mut self, v: impl IdentityValue) -> Self {
        self.client = normalize_identity(v);
        self
    }
    /// The version of this server (`serverVersion`).
    pub fn server_version(mut self, v: impl IdentityValue) -> Self {
        self.server_version = normalize_identity(v);
        self
    }
}

/// Who made one call, as returned by a [`Config::identify`] callback.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallIdentity {
    pub(crate) user_id: Option<String>,
    pub(crate) user_email: Option<String>,
}

impl CallIdentity {
    /// No identity.
    pub fn new() -> Self {
        CallIdentity::default()
    }
    /// The user (`userId`); numbers are written as strings.
    pub fn user_id(mut self, v: impl IdentityValue) -> Self {
        self.user_id = normalize_identity(v);
        self
    }
    /// The user's e-mail (`userEmail`; not redacted).
    pub fn user_email(mut self, v: impl IdentityValue) -> Self {
        self.user_email = normalize_identity(v);
        self
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn credentials_in_the_url_are_refused_and_never_shown() {
        let err = resolve_endpoint("https://user:hunter2@ingest.example").unwrap_err();
        assert!(err.to_string().contains("ingest_secret"), "{err}");
        let shown = format!("{:?}", Config::new("p").ingest_url("https://user:hunter2@ingest.example/x"));
        assert!(!shown.contains("hunter2") && shown.contains("https://***@ingest.example/x"), "{shown}");
        assert_eq!(without_userinfo("http://127.0.0.1:3001/a@b"), "http://127.0.0.1:3001/a@b");
    }

    use super::*;

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
