//! The event [`Config::before_send`](crate::Config::before_send) sees and may edit: a record
//! after the caps and redaction, as it will be sent.

use crate::model::record::{CallOutcome, ClientInfo, IntentSource};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// The callback of [`Config::before_send`](crate::Config::before_send).
///
/// ```
/// use mcpeye::{BeforeSendFn, Event};
///
/// fn strip_emails(mut event: Event) -> Option<Event> {
///     event.user_email = None;
///     Some(event)
/// }
/// let callback: &BeforeSendFn = &strip_emails;
/// # let _ = callback;
/// let config = mcpeye::Config::new("proj").before_send(strip_emails);
/// # drop(config);
/// ```
pub type BeforeSendFn = dyn Fn(Event) -> Option<Event> + Send + Sync;

/// One event as it will be sent, after the size caps and redaction: what
/// [`Config::before_send`](crate::Config::before_send) sees and may edit. Its fields are the
/// event of `docs/wire-format.md#event` (the call id is drawn when it is encoded), plus what
/// is never sent: the error's reason, the client (which identity the event is sent under) and
/// the session.
///
/// ```
/// use mcpeye::{testing::MemorySink, Config, Manifest};
/// use std::time::Duration;
///
/// let config = Config::new("proj").before_send(|mut event| {
///     event.user_id = Some("anonymous".into());
///     (!event.is_error()).then_some(event) // failures stay on the server
/// });
/// let (tracker, sink) = MemorySink::with_config(config).unwrap();
/// let manifest = Manifest::builder().tracker(tracker.clone()).build();
/// manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
/// manifest.call("no_such_tool", serde_json::json!({}));
/// tracker.flush(Duration::from_secs(5));
///
/// let events = sink.events();
/// assert_eq!(events.len(), 1);
/// assert_eq!(events[0]["userId"], "anonymous");
/// assert_eq!(tracker.stats().dropped.before_send, 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Event {
    /// `toolName`.
    pub tool_name: Cow<'static, str>,
    /// `arguments` (sent as `{}` unless an object).
    pub arguments: Value,
    /// `isError` with `result`, or `errorMessage`; the error's reason code
    /// ([`CallOutcome::error_type`]) is not sent.
    pub outcome: CallOutcome,
    /// `intent` and `intentSource`.
    pub intent: Option<(String, IntentSource)>,
    /// `userId`.
    pub user_id: Option<String>,
    /// `userEmail`.
    pub user_email: Option<String>,
    /// `timestamp`: epoch milliseconds at the end of the call.
    pub timestamp_ms: u64,
    /// `durationMs`.
    pub duration_ms: u64,
    /// The client that made the call: the event is sent in the payload of its identity.
    pub client: Option<Arc<ClientInfo>>,
    /// The MCP session of the call, when there is one (or its conversation handle:
    /// `docs/attribution.md#conversation`).
    pub session_id: Option<Arc<str>>,
    /// The model that made the call, when the request said (`docs/attribution.md#model`). Never
    /// sent: the wire has no key for it.
    pub model: Option<Arc<str>>,
}

impl Event {
    /// Whether the call failed: an error, a cancelled call or a timeout, the events the wire
    /// sends with `isError: true` ([`CallOutcome::is_error`], the one predicate for both).
    ///
    /// ```
    /// use mcpeye::Event;
    /// # fn check(event: &Event) {
    /// assert_eq!(event.is_error(), event.outcome.is_error());
    /// # }
    /// ```
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// The model that made the call, when the request said: `_meta`
    /// `io.modelcontextprotocol/aiInvocation.model` (or `x-codex-turn-metadata.model`), or the
    /// opt-in `llm_model` argument.
    ///
    /// ```
    /// use mcpeye::Event;
    /// # fn check(event: &Event) {
    /// let per_model = event.model().unwrap_or("(unknown)");
    /// # }
    /// ```
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The call's session or conversation, when it has one.
    ///
    /// ```
    /// use mcpeye::Event;
    /// # fn check(event: &Event) {
    /// assert_eq!(event.session_id(), event.session_id.as_deref());
    /// # }
    /// ```
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}
