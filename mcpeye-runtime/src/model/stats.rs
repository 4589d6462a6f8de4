//! Counters of a tracker: every captured event ends up sent, dropped (for one reason), sampled
//! out, or is still pending, so `captured == sent + dropped.total() + sampled_out + pending` at
//! all times.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

/// Distinct (tool, reason) pairs counted before further ones are folded into `_OTHER`: tool
/// names of unknown tools are the agent's.
const MAX_ERROR_KEYS: usize = 1024;

/// Failed calls by tool, then by reason.
type ErrorReasons = BTreeMap<String, BTreeMap<String, u64>>;

/// The fold of (tool, reason) pairs past [`MAX_ERROR_KEYS`].
const OTHER: &str = "_OTHER";

/// Why events were dropped, by reason.
///
/// ```
/// use mcpeye::{testing::MemorySink, Config, Manifest};
/// use std::time::Duration;
///
/// let (tracker, _sink) = MemorySink::with_config(Config::new("proj").before_send(|_| None)).unwrap();
/// Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
/// let report = tracker.flush(Duration::from_secs(5));
/// assert_eq!(report.stats.dropped.before_send, 1);
/// assert_eq!(report.stats.dropped.total(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dropped {
    /// The hand-off channel was full (calls came faster than the flusher took them).
    pub channel_full: u64,
    /// More than `max_buffer` events waited; the oldest were dropped.
    pub buffer_overflow: u64,
    /// The ingest refused the batch with a 4xx other than 408, 413 and 429.
    pub rejected: u64,
    /// A single event was still too large for the ingest (413).
    pub too_large: u64,
    /// The event broke the payload rules (docs/wire-format.md#payload) and was never sent.
    pub invalid: u64,
    /// Recorded after the tracker shut down.
    pub after_shutdown: u64,
    /// Still unsent when a shutdown's timeout ran out (without an outbox; with one they stay
    /// pending, kept on disk for the next start).
    pub unsent: u64,
    /// Dropped by [`Config::before_send`](crate::Config::before_send) (it returned `None`).
    pub before_send: u64,
    /// Dropped because [`Config::before_send`](crate::Config::before_send) panicked.
    pub before_send_panicked: u64,
    /// The undelivered events outgrew `Config::outbox_max_bytes`; the oldest were dropped.
    pub outbox_overflow: u64,
}

impl Dropped {
    /// All dropped events.
    ///
    /// ```
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let dropped = tracker.shutdown(std::time::Duration::from_secs(1)).dropped();
    /// if dropped.total() > 0 {
    ///     eprintln!("{} analytics events lost: {dropped:?}", dropped.total());
    /// }
    /// ```
    pub fn total(&self) -> u64 {
        self.channel_full
            + self.buffer_overflow
            + self.rejected
            + self.too_large
            + self.invalid
            + self.after_shutdown
            + self.unsent
            + self.before_send
            + self.before_send_panicked
            + self.outbox_overflow
    }
}

/// A snapshot of a tracker's counters: `captured == sent + dropped.total() + sampled_out + pending`.
///
/// ```
/// use mcpeye::Manifest;
/// use std::time::Duration;
///
/// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
/// Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
/// tracker.flush(Duration::from_secs(5));
/// let stats = tracker.stats();
/// assert_eq!((stats.captured, stats.sent), (1, 1));
/// assert_eq!(stats.captured, stats.sent + stats.dropped.total() + stats.sampled_out + stats.pending);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Calls handed to the tracker, plus the events a previous process left in the outbox
    /// (`recovered`).
    pub captured: u64,
    /// Of `captured`, the events read back from the outbox at start, to be sent again.
    pub recovered: u64,
    /// Events the ingest accepted (2xx).
    pub sent: u64,
    /// Events given up, by reason.
    pub dropped: Dropped,
    /// Events not sent because their session was sampled out ([`Config::sample_rate`](crate::Config::sample_rate)).
    pub sampled_out: u64,
    /// Events neither sent nor dropped yet (queued, buffered, or in a request in flight).
    pub pending: u64,
    /// Events the outbox ([`Config::outbox_dir`](crate::Config::outbox_dir)) holds on disk, as of
    /// its last write: after a shutdown, the pending events the next start will send.
    pub on_disk: u64,
    /// Failed calls by tool, then by reason ([`CallOutcome::error_type`](crate::CallOutcome::error_type):
    /// a [`ToolError`](crate::ToolError) reason, mcpeye's own, or `tool_error`), counted as the
    /// flusher takes them (sampled-out ones included). Past 1024 distinct pairs, further ones
    /// are counted under `_OTHER` / `_OTHER`.
    pub error_reasons: BTreeMap<String, BTreeMap<String, u64>>,
    /// Rounds of calls answered `input_required` (MCP 2026-07-28): each asked the client a
    /// question and was not recorded, the round that ends the call is. A call the client
    /// abandons mid-way is counted here, and never in `captured`.
    pub input_required: u64,
    /// What users did with the elicitations answered in `input_required` rounds.
    pub elicitations: Elicitations,
    /// Calls by the model that made them (`docs/attribution.md#model`), counted as the flusher
    /// takes them (sampled-out ones included); calls of no known model are not counted. Past
    /// 256 distinct models, further ones are counted under `_OTHER`.
    pub calls_by_model: BTreeMap<String, u64>,
    /// Conversation handles minted (`docs/attribution.md#conversation`).
    pub conversations_started: u64,
    /// Conversation arguments that were not a handle this process minted: ignored (the call
    /// started a new conversation), never an error to the agent.
    pub invalid_conversation_handles: u64,
    /// Requests of the methods other than `tools/call` that mcpeye sees (`tools/list`,
    /// `resources/list`, `resources/templates/list`, `resources/read`, `prompts/list`,
    /// `prompts/get`, `completion/complete`), by method (`docs/attribution.md#methods`). They
    /// never reach the ingest: these counts and the spans are all that is kept of them.
    pub methods: BTreeMap<String, MethodCount>,
    /// `resources/read` requests by URI, answered or not. Past 256 distinct URIs, further ones
    /// are counted under `_OTHER`.
    pub resources_read: BTreeMap<String, u64>,
    /// `prompts/get` requests by prompt name, answered or not. Past 256 distinct names, further
    /// ones are counted under `_OTHER`.
    pub prompts_got: BTreeMap<String, u64>,
    /// The local event log ([`Config::event_log`](crate::Config::event_log)): its records
    /// written, lost and the I/O errors met. All zero without one.
    pub event_log: EventLogCounts,
    /// Calls for which the [`Config::infer_intent`](crate::Config::infer_intent) callback
    /// panicked: they have no inferred intent, and are sent and logged all the same.
    pub infer_intent_panicked: u64,
}

/// What became of the event log's records ([`Stats::event_log`]). A record lost to the log is
/// not lost to the ingest: the log is a copy.
///
/// ```
/// let stats = mcpeye::Tracker::from_fn(|_| {}).stats();
/// assert_eq!(stats.event_log, mcpeye::EventLogCounts::default());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventLogCounts {
    /// Records (calls, method requests, tool lists) written to disk.
    pub written: u64,
    /// Records that could not be written (an I/O error) or encoded, and requests of other
    /// methods not noted because 10 000 were already waiting for the flusher.
    pub lost: u64,
    /// I/O errors met (a write, a directory listing, a removal).
    pub failures: u64,
}

/// The requests of one method ([`Stats::methods`]).
///
/// ```
/// let stats = mcpeye::Tracker::from_fn(|_| {}).stats();
/// assert_eq!(stats.methods.get("resources/read"), None);
/// assert_eq!(mcpeye::MethodCount::default().requests, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodCount {
    /// Requests received.
    pub requests: u64,
    /// Of those, the ones answered with a JSON-RPC error.
    pub errors: u64,
}

/// A method mcpeye records besides `tools/call`: its counts and span, never an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) enum Method {
    ToolsList,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    CompletionComplete,
}

#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
impl Method {
    /// `mcp.method.name`: the JSON-RPC method.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::ToolsList => "tools/list",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
        }
    }
}

/// What a method request is about, as the conventions name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) enum Target<'a> {
    None,
    /// `mcp.resource.uri`: the resource read, or the template a completion is for.
    Resource(&'a str),
    /// `gen_ai.prompt.name`: the prompt got, or the prompt a completion is for.
    Prompt(&'a str),
}

/// Elicitation answers by action (MCP 2026-07-28 rounds).
///
/// ```
/// let stats = mcpeye::Tracker::from_fn(|_| {}).stats();
/// assert_eq!(stats.elicitations, mcpeye::Elicitations::default());
/// assert_eq!(stats.input_required, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Elicitations {
    /// The user submitted the form (or completed the URL flow).
    pub accept: u64,
    /// The user declined.
    pub decline: u64,
    /// The user dismissed the request.
    pub cancel: u64,
}

impl Dropped {
    /// Each reason with its count, those above zero only, in the order of the fields.
    fn reasons(&self) -> impl Iterator<Item = (&'static str, u64)> {
        [
            ("channel_full", self.channel_full),
            ("buffer_overflow", self.buffer_overflow),
            ("rejected", self.rejected),
            ("too_large", self.too_large),
            ("invalid", self.invalid),
            ("after_shutdown", self.after_shutdown),
            ("unsent", self.unsent),
            ("before_send", self.before_send),
            ("before_send_panicked", self.before_send_panicked),
            ("outbox_overflow", self.outbox_overflow),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
    }
}

/// One line for a log or an exit report: what became of the events.
///
/// ```
/// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
/// let report = tracker.shutdown(std::time::Duration::from_secs(1));
/// assert_eq!(
///     report.stats.to_string(),
///     "captured 0, sent 0, dropped 0, sampled out 0, pending 0 (on disk 0)"
/// );
/// ```
impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "captured {}, sent {}, dropped {}", self.captured, self.sent, self.dropped.total())?;
        let mut reasons = self.dropped.reasons().peekable();
        if reasons.peek().is_some() {
            f.write_str(" (")?;
            for (i, (reason, n)) in reasons.enumerate() {
                write!(f, "{}{reason} {n}", if i > 0 { ", " } else { "" })?;
            }
            f.write_str(")")?;
        }
        write!(f, ", sampled out {}, pending {} (on disk {})", self.sampled_out, self.pending, self.on_disk)?;
        // Only with an event log: a tracker without one says nothing of it.
        let log = &self.event_log;
        if log.written + log.lost > 0 {
            write!(f, "; event log: {} records written, {} lost", log.written, log.lost)?;
        }
        Ok(())
    }
}

/// What a flush or a shutdown achieved.
///
/// ```
/// use std::time::Duration;
///
/// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
/// let report = tracker.flush(Duration::from_secs(2));
/// if !report.completed {
///     eprintln!("{} events still pending", report.stats.pending);
/// }
/// eprintln!("{report}"); // one line: delivered or not, and the counters
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlushReport {
    /// Every event recorded before the call was sent or dropped within the timeout.
    pub completed: bool,
    /// The tracker's counters when the call returned.
    pub stats: Stats,
}

/// The report a server prints when it exits (to stderr: stdout is a stdio server's protocol).
///
/// ```
/// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
/// let report = tracker.shutdown(std::time::Duration::from_secs(1));
/// assert!(report.to_string().starts_with("delivered everything: captured 0, sent 0"));
/// eprintln!("{report}");
/// ```
impl std::fmt::Display for FlushReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outcome = if self.completed { "delivered everything" } else { "not everything was delivered" };
        write!(f, "{outcome}: {}", self.stats)
    }
}

impl FlushReport {
    /// Events sent so far.
    ///
    /// ```
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
    /// assert_eq!(tracker.flush(std::time::Duration::from_secs(5)).sent(), 1);
    /// ```
    pub fn sent(&self) -> u64 {
        self.stats.sent
    }
    /// Events dropped so far, by reason.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").before_send(|_| None);
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::with_config(config).unwrap();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
    /// assert_eq!(tracker.flush(std::time::Duration::from_secs(5)).dropped().before_send, 1);
    /// ```
    pub fn dropped(&self) -> Dropped {
        self.stats.dropped
    }
    /// Events sampled out so far.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").sample_rate(0.0);
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::with_config(config).unwrap();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
    /// assert_eq!(tracker.flush(std::time::Duration::from_secs(5)).sampled_out(), 1);
    /// ```
    pub fn sampled_out(&self) -> u64 {
        self.stats.sampled_out
    }
    /// Events still pending (e.g. in a request abandoned at shutdown).
    ///
    /// ```
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let report = tracker.flush(std::time::Duration::from_secs(2));
    /// if report.pending() > 0 {
    ///     eprintln!("{} events not sent yet", report.pending());
    /// }
    /// ```
    pub fn pending(&self) -> u64 {
        self.stats.pending
    }
}

/// The live counters, shared by the calling threads and the flusher.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub captured: AtomicU64,
    pub sent: AtomicU64,
    pub channel_full: AtomicU64,
    pub buffer_overflow: AtomicU64,
    pub rejected: AtomicU64,
    pub too_large: AtomicU64,
    pub invalid: AtomicU64,
    pub after_shutdown: AtomicU64,
    pub unsent: AtomicU64,
    pub before_send: AtomicU64,
    pub before_send_panicked: AtomicU64,
    pub sampled_out: AtomicU64,
    /// Failed calls by tool and reason, with the number of distinct pairs.
    pub error_reasons: Mutex<(ErrorReasons, usize)>,
    pub outbox_overflow: AtomicU64,
    pub recovered: AtomicU64,
    /// A gauge, set by the flusher: events in the outbox.
    pub on_disk: AtomicU64,
    pub input_required: AtomicU64,
    pub elicit_accept: AtomicU64,
    pub elicit_decline: AtomicU64,
    pub elicit_cancel: AtomicU64,
    /// Calls by model, with the number of distinct models.
    pub calls_by_model: Mutex<BTreeMap<String, u64>>,
    pub conversations_started: AtomicU64,
    pub invalid_conversation_handles: AtomicU64,
    /// Requests of other methods, and what was read.
    pub methods: Mutex<MethodCounters>,
    /// Gauges, set by the flusher: the event log's written, lost and failures.
    pub log_written: AtomicU64,
    pub log_lost: AtomicU64,
    pub log_failures: AtomicU64,
    pub infer_intent_panicked: AtomicU64,
}

/// [`Stats::methods`], [`Stats::resources_read`] and [`Stats::prompts_got`], live.
#[derive(Debug, Default)]
pub(crate) struct MethodCounters {
    methods: BTreeMap<String, MethodCount>,
    resources_read: BTreeMap<String, u64>,
    prompts_got: BTreeMap<String, u64>,
}

/// Distinct resource URIs, and prompt names, counted before further ones are folded into
/// `_OTHER`: both are the client's to send.
const MAX_READ_KEYS: usize = 256;

/// The entry of `method`, made on its first request.
fn method_count(methods: &mut BTreeMap<String, MethodCount>, method: Method) -> Option<&mut MethodCount> {
    // Looked up first: the key is allocated once per method, not per request.
    if !methods.contains_key(method.as_str()) {
        methods.insert(method.as_str().to_owned(), MethodCount::default());
    }
    methods.get_mut(method.as_str())
}

/// Counts one more of `key` in `map`, folding new keys past `max` into `_OTHER`.
fn count_key(map: &mut BTreeMap<String, u64>, key: &str, max: usize) {
    if let Some(n) = map.get_mut(key) {
        *n += 1;
        return;
    }
    let key = if map.len() < max { key } else { OTHER };
    *map.entry(key.to_owned()).or_default() += 1;
}

/// Distinct models counted before further ones are folded into `_OTHER`: model names are the
/// clients' to choose.
const MAX_MODEL_KEYS: usize = 256;

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, SeqCst);
    }

    /// Sets a gauge.
    pub(crate) fn set(gauge: &AtomicU64, n: usize) {
        gauge.store(n as u64, SeqCst);
    }

    /// Counts one failed call of `tool` for `reason`.
    pub(crate) fn count_error(&self, tool: &str, reason: &str) {
        let mut guard = self.error_reasons.lock().unwrap_or_else(|e| e.into_inner());
        let (map, keys) = &mut *guard;
        let known = map.get(tool).is_some_and(|r| r.contains_key(reason));
        let (tool, reason) = if known || *keys < MAX_ERROR_KEYS { (tool, reason) } else { (OTHER, OTHER) };
        let by_reason = map.entry(tool.to_owned()).or_default();
        if !by_reason.contains_key(reason) {
            *keys += 1;
        }
        *by_reason.entry(reason.to_owned()).or_default() += 1;
    }

    /// Counts one call of `model`.
    pub(crate) fn count_model(&self, model: &str) {
        let mut map = self.calls_by_model.lock().unwrap_or_else(|e| e.into_inner());
        count_key(&mut map, model, MAX_MODEL_KEYS);
    }

    /// Counts one request of `method` about `target`, as it arrives (the target is read where
    /// it is, never copied for later).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn count_method(&self, method: Method, target: Target<'_>) {
        let mut guard = self.methods.lock().unwrap_or_else(|e| e.into_inner());
        let counters = &mut *guard;
        if let Some(count) = method_count(&mut counters.methods, method) {
            count.requests += 1;
        }
        match (method, target) {
            (Method::ResourcesRead, Target::Resource(uri)) => {
                count_key(&mut counters.resources_read, uri, MAX_READ_KEYS)
            }
            (Method::PromptsGet, Target::Prompt(name)) => count_key(&mut counters.prompts_got, name, MAX_READ_KEYS),
            _ => {}
        }
    }

    /// Counts a request of `method` answered with a JSON-RPC error.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn count_method_error(&self, method: Method) {
        let mut guard = self.methods.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = method_count(&mut guard.methods, method) {
            count.errors += 1;
        }
    }

    pub(crate) fn snapshot(&self) -> Stats {
        // Outcomes are read before `captured`: an event is counted captured before it can be
        // sent or dropped, so this order never yields a negative pending.
        let sent = self.sent.load(SeqCst);
        let dropped = Dropped {
            channel_full: self.channel_full.load(SeqCst),
            buffer_overflow: self.buffer_overflow.load(SeqCst),
            rejected: self.rejected.load(SeqCst),
            too_large: self.too_large.load(SeqCst),
            invalid: self.invalid.load(SeqCst),
            after_shutdown: self.after_shutdown.load(SeqCst),
            unsent: self.unsent.load(SeqCst),
            before_send: self.before_send.load(SeqCst),
            before_send_panicked: self.before_send_panicked.load(SeqCst),
            outbox_overflow: self.outbox_overflow.load(SeqCst),
        };
        let sampled_out = self.sampled_out.load(SeqCst);
        let captured = self.captured.load(SeqCst);
        let recovered = self.recovered.load(SeqCst);
        let pending = captured.saturating_sub(sent + dropped.total() + sampled_out);
        let error_reasons = self.error_reasons.lock().unwrap_or_else(|e| e.into_inner()).0.clone();
        let elicitations = Elicitations {
            accept: self.elicit_accept.load(SeqCst),
            decline: self.elicit_decline.load(SeqCst),
            cancel: self.elicit_cancel.load(SeqCst),
        };
        let input_required = self.input_required.load(SeqCst);
        let calls_by_model = self.calls_by_model.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (methods, resources_read, prompts_got) = {
            let m = self.methods.lock().unwrap_or_else(|e| e.into_inner());
            (m.methods.clone(), m.resources_read.clone(), m.prompts_got.clone())
        };
        Stats {
            captured,
            recovered,
            sent,
            dropped,
            sampled_out,
            pending,
            on_disk: self.on_disk.load(SeqCst),
            error_reasons,
            input_required,
            elicitations,
            calls_by_model,
            conversations_started: self.conversations_started.load(SeqCst),
            invalid_conversation_handles: self.invalid_conversation_handles.load(SeqCst),
            methods,
            resources_read,
            prompts_got,
            event_log: EventLogCounts {
                written: self.log_written.load(SeqCst),
                lost: self.log_lost.load(SeqCst),
                failures: self.log_failures.load(SeqCst),
            },
            infer_intent_panicked: self.infer_intent_panicked.load(SeqCst),
        }
    }
}
