//! The tracker: the hand-off of call records from the calling thread to the flusher, `init`,
//! and the [`Guard`] that flushes at the end.
//!
//! On the calling thread a tracker only admits a call's record (counted; a full channel drops
//! it before it is made) and `try_send`s it on a bounded channel ([`Pipeline::enqueue`]): no
//! redaction, serialisation, lock or I/O (the call id is drawn on the flusher). The record is made
//! by `record/call.rs`, in a buffer from a pool the flusher refills (no allocation of the calling
//! thread is freed by the flusher).

use crate::config::{Config, ConfigError, IdentifyFn, Resolved};
use crate::flush::event_log::{EventLog, Note, Notes};
use crate::flush::flusher::{Backlog, Control, Flusher, Handoff};
use crate::flush::outbox::Outbox;
use crate::flush::transport::{HttpTransport, IngestTransport};
use crate::model::diagnostics::{DiagnosticKind, Diagnostics};
use crate::model::identity::CallIdentity;
use crate::model::meta::HandleKey;
use crate::model::record::CallRecord;
use crate::model::request::RequestInfo;
use crate::model::stats::{Counters, FlushReport, Method, Stats, Target};
use crate::record::{BufferPool, Queued};
use crate::redact::Redactor;
use crossbeam_channel::{Sender, TrySendError};
use serde_json::Value;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Smallest capacity of the hand-off channel between calling threads and the flusher.
const MIN_CHANNEL_CAPACITY: usize = 1024;

/// Waking the flusher costs the calling thread a futex syscall (several µs, the p99 of a call
/// when it happened every `flush_threshold` calls), so calls only wake it when the channel is
/// this fraction full; otherwise its tick (100 ms) picks the events up and applies the threshold.
const NUDGE_FRACTION: usize = 4;

/// The channel length at which a call nudges the flusher: a quarter of the channel, at most
/// [`NUDGE_MAX`], or the flush threshold if that is larger.
fn nudge_at(flush_threshold: usize, capacity: usize) -> usize {
    flush_threshold.max((capacity / NUDGE_FRACTION).min(NUDGE_MAX)).max(1)
}

/// The most records a burst queues before the flusher is woken: records read back within a few
/// MiB of being written are still in cache (a quarter of a large channel was not), and their
/// buffers come back to the pool while warm. One wake-up per this many calls.
const NUDGE_MAX: usize = 2_000;

/// How long past its timeout a flush or shutdown waits for the flusher's answer (the flusher
/// checks its deadline between steps, so it may answer a little late).
const ANSWER_GRACE: Duration = Duration::from_millis(200);

/// A destination for call records. Cheap to clone; all clones feed the same flusher thread.
///
/// Make one with [`Tracker::new`] (an explicit tracker, e.g. given to a manifest), or let
/// [`init`] install the process-wide one. When the last clone of an explicit tracker is
/// dropped without [`shutdown`](Self::shutdown), its flusher makes a last bounded attempt in
/// the background.
///
/// ```no_run
/// use mcpeye::{Config, Manifest, Tracker};
/// use std::time::Duration;
///
/// # fn main() -> Result<(), mcpeye::ConfigError> {
/// // A manifest that records into a project of its own, not into the process-wide tracker.
/// let tracker = Tracker::new(Config::from_env("proj_billing"))?;
/// let manifest = Manifest::builder().registered().tracker(tracker.clone()).build();
/// manifest.call("refund", serde_json::json!({"order": 7}));
///
/// let report = tracker.shutdown(Duration::from_secs(2)); // at exit
/// assert_eq!(report.stats.captured, 1);
/// # Ok(())
/// # }
/// ```
///
/// Records handed to a function of yours instead (tests, a sink of your own):
///
/// ```
/// use mcpeye::{Manifest, Tracker};
/// use std::sync::{Arc, Mutex};
///
/// let names = Arc::new(Mutex::new(Vec::new()));
/// let seen = names.clone();
/// let tracker = Tracker::from_fn(move |record| seen.lock().unwrap().push(record.tool_name.to_string()));
/// let manifest = Manifest::builder().tracker(tracker).build();
/// manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
/// assert_eq!(*names.lock().unwrap(), ["mcpeye_request_capability"]);
/// ```
#[derive(Clone)]
pub struct Tracker {
    /// Where a call's record goes (read by `record/call.rs` as a call ends).
    pub(crate) inner: Arc<RecordSink>,
}

/// Where a tracker's records go.
pub(crate) enum RecordSink {
    /// To a function of the user's ([`Tracker::from_fn`]), on the calling thread.
    Callback(Callback),
    /// To the flusher, through the hand-off channel.
    Pipeline(Pipeline),
}

/// The function of [`Tracker::from_fn`].
pub(crate) struct Callback(Box<dyn Fn(CallRecord) + Send + Sync>);

impl Callback {
    /// Hands `record` to the function; a panic of it stays here.
    pub(crate) fn hand(&self, record: CallRecord) {
        let _ = catch_unwind(AssertUnwindSafe(|| (self.0)(record)));
    }
}

/// A tracker's hand-off to its flusher thread.
pub(crate) struct Pipeline {
    data: Sender<Queued>,
    control: Sender<Control>,
    shared: Arc<Handoff>,
    identify: Option<Arc<IdentifyFn>>,
    /// The configured key of conversation handles (`Config::conversation_key`).
    handle_key: Option<HandleKey>,
    capture_missing_capabilities: bool,
    /// Caps and redaction of the arguments and results put on spans, when
    /// [`Config::span_content`] is on.
    span_content: Option<Redactor>,
    /// Channel length at which a call wakes the flusher before its next tick.
    nudge_at: usize,
    /// Empty record buffers, recycled by the flusher.
    pub(crate) pool: BufferPool,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.inner {
            RecordSink::Callback(_) => f.write_str("Tracker(callback)"),
            RecordSink::Pipeline(p) => f.debug_struct("Tracker").field("stats", &p.shared.counters.snapshot()).finish(),
        }
    }
}

impl Tracker {
    /// A tracker with its own flusher thread, POSTing to the configured ingest.
    ///
    /// ```no_run
    /// let tracker = mcpeye::Tracker::new(mcpeye::Config::new("proj_demo"))?;
    /// // … give it to a manifest; at the end:
    /// tracker.shutdown(std::time::Duration::from_secs(2));
    /// # Ok::<(), mcpeye::ConfigError>(())
    /// ```
    pub fn new(config: Config) -> Result<Tracker, ConfigError> {
        let resolved = config.resolve()?;
        // Without the `tls` feature ureq has no TLS stack: every POST would fail, so say it now.
        if !cfg!(feature = "tls") && resolved.endpoint.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) {
            return Err(ConfigError::TlsNotBuilt);
        }
        let transport = HttpTransport::new(&resolved, config.connect_timeout, config.request_timeout);
        Tracker::with_transport(config, resolved, Box::new(transport))
    }

    /// A tracker that sends through `transport` (the HTTP one, or the memory sink of tests).
    pub(crate) fn with_transport(
        mut config: Config,
        resolved: Resolved,
        transport: Box<dyn IngestTransport>,
    ) -> Result<Tracker, ConfigError> {
        config.project_id.clone_from(&resolved.project_id);
        let handle_key = config.handle_key()?;
        let diagnostics = Diagnostics::new(config.on_error.clone());
        if resolved.url_defaulted {
            diagnostics.report(DiagnosticKind::DefaultIngestUrl, || {
                format!(
                    "no ingest URL configured; sending to {} (set Config::ingest_url or MCPEYE_INGEST_URL)",
                    crate::contract::DEFAULT_INGEST_URL
                )
            });
        }
        if resolved.insecure {
            diagnostics.report(DiagnosticKind::InsecureIngestUrl, || {
                "the ingest URL is plain http:// to another machine: events and the secret travel unencrypted; \
                 use https://"
                    .to_string()
            });
        }
        let event_log = match config.resolved_event_log_dir() {
            Some(dir) => Some(
                EventLog::open(&dir, config.event_log_max_bytes)
                    .map_err(|e| ConfigError::EventLog(format!("{}: {e}", dir.display())))?,
            ),
            None => None,
        };
        let shared = Arc::new(Handoff {
            counters: Counters::default(),
            diagnostics,
            nudged: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            identify_panicked: AtomicBool::new(false),
            server_version: Default::default(),
            backlog: Backlog::default(),
            notes: Notes::new(event_log.is_some()),
        });
        // The channel only bridges to the next drain; it is not the place where a small
        // `max_buffer` should bite (the flusher's buffer drops the oldest there instead).
        let capacity = config.max_buffer.max(MIN_CHANNEL_CAPACITY);
        let (data_tx, data_rx) = crossbeam_channel::bounded(capacity);
        let (control_tx, control_rx) = crossbeam_channel::bounded(64);
        let outbox = match &config.outbox_dir {
            Some(dir) => Some(
                Outbox::open(dir, config.outbox_max_bytes)
                    .map_err(|e| ConfigError::Outbox(format!("{}: {e}", dir.display())))?,
            ),
            None => None,
        };
        let pool = BufferPool::new();
        let flusher =
            Flusher::new(&config, data_rx, control_rx, shared.clone(), transport, outbox, pool.clone(), event_log);
        let handle = std::thread::Builder::new()
            .name("mcpeye-flusher".into())
            .spawn(move || flusher.run())
            .map_err(|e| ConfigError::FlusherThread(e.to_string()))?;
        Ok(Tracker {
            inner: Arc::new(RecordSink::Pipeline(Pipeline {
                data: data_tx,
                control: control_tx,
                shared,
                identify: config.identify.clone(),
                handle_key,
                capture_missing_capabilities: config.capture_missing_capabilities,
                span_content: config.span_content.then(|| config.redactor()),
                nudge_at: nudge_at(config.flush_threshold, capacity),
                pool,
                flusher: Mutex::new(Some(handle)),
            })),
        })
    }

    /// A tracker that hands every record to `f` on the calling thread (tests, custom sinks).
    /// It has no flusher: `flush` and `shutdown` return at once with empty counters.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel();
    /// let tracker = mcpeye::Tracker::from_fn(move |record| {
    ///     let _ = tx.send(record);
    /// });
    /// mcpeye::Manifest::builder().tracker(tracker).build().call("no_such_tool", serde_json::json!({}));
    /// assert!(rx.recv().unwrap().is_error());
    /// ```
    pub fn from_fn(f: impl Fn(CallRecord) + Send + Sync + 'static) -> Self {
        Tracker { inner: Arc::new(RecordSink::Callback(Callback(Box::new(f)))) }
    }

    /// Sends `version` as the payloads' `serverVersion` unless the configured identity names one
    /// (the first version given is kept): what a server learns from its own MCP server info.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))] // only ManifestServer knows its version
    pub(crate) fn default_server_version(&self, version: &str) {
        if let RecordSink::Pipeline(p) = &*self.inner {
            if p.shared.server_version.get().is_none() {
                let _ = p.shared.server_version.set(version.to_owned());
            }
        }
    }

    /// Whether manifests list and answer the reserved `mcpeye_request_capability` tool
    /// ([`Config::capture_missing_capabilities`]; `true` for [`Tracker::from_fn`]).
    ///
    /// ```
    /// use mcpeye::{testing::MemorySink, Config};
    ///
    /// let (tracker, _sink) = MemorySink::with_config(Config::new("proj").capture_missing_capabilities(false)).unwrap();
    /// assert!(!tracker.capture_missing_capabilities());
    /// ```
    pub fn capture_missing_capabilities(&self) -> bool {
        match &*self.inner {
            RecordSink::Callback(_) => true,
            RecordSink::Pipeline(p) => p.capture_missing_capabilities,
        }
    }

    /// The caps and redaction for arguments and results on spans, when they go there
    /// ([`Config::span_content`]).
    #[cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]
    pub(crate) fn span_content(&self) -> Option<&Redactor> {
        match &*self.inner {
            RecordSink::Callback(_) => None,
            RecordSink::Pipeline(p) => p.span_content.as_ref(),
        }
    }

    /// Counts a round of a call that may ask the client (MCP 2026-07-28): whether it ended
    /// `input_required`, and the elicitation actions it received.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn count_round(&self, input_required: bool, actions: &[crate::ElicitationAction]) {
        let RecordSink::Pipeline(p) = &*self.inner else { return };
        let counters = &p.shared.counters;
        if input_required {
            Counters::add(&counters.input_required, 1);
        }
        for action in actions {
            let counter = match action {
                crate::ElicitationAction::Accept => &counters.elicit_accept,
                crate::ElicitationAction::Decline => &counters.elicit_decline,
                crate::ElicitationAction::Cancel => &counters.elicit_cancel,
            };
            Counters::add(counter, 1);
        }
    }

    /// Counts a request of a method other than `tools/call` ([`Stats::methods`]); nothing of
    /// it is queued for the ingest.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn count_method(&self, method: Method, target: Target<'_>) {
        let RecordSink::Pipeline(p) = &*self.inner else { return };
        p.shared.counters.count_method(method, target);
    }

    /// Counts a request of `method` answered with a JSON-RPC error.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn count_method_error(&self, method: Method) {
        let RecordSink::Pipeline(p) = &*self.inner else { return };
        p.shared.counters.count_method_error(method);
    }

    /// Whether this tracker writes an event log ([`Config::event_log`]): only then are the
    /// requests of other methods and the tool lists noted for it.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn logs(&self) -> bool {
        matches!(&*self.inner, RecordSink::Pipeline(p) if p.shared.notes.on)
    }

    /// Notes, for the event log, the tool list a manifest serves (once per list).
    pub(crate) fn note_tools(&self, list: &Value) {
        if let RecordSink::Pipeline(p) = &*self.inner {
            if p.shared.notes.on {
                p.shared.notes.tools(list);
            }
        }
    }

    /// Notes, for the event log, a request of another method.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn note(&self, note: Note) {
        if let RecordSink::Pipeline(p) = &*self.inner {
            if p.shared.notes.on {
                p.shared.notes.push(note);
            }
        }
    }

    /// Counts a conversation handle minted, and whether the call came with one that was invalid.
    pub(crate) fn count_conversation(&self, invalid: bool) {
        let RecordSink::Pipeline(p) = &*self.inner else { return };
        let counters = &p.shared.counters;
        Counters::add(&counters.conversations_started, 1);
        if invalid {
            Counters::add(&counters.invalid_conversation_handles, 1);
        }
    }

    /// Whether this tracker runs an `identify` callback on each call.
    pub(crate) fn identifies(&self) -> bool {
        matches!(&*self.inner, RecordSink::Pipeline(p) if p.identify.is_some())
    }

    /// Runs `identify` for a call as it begins (its conversation handle is checked against the
    /// user it names); `None` without an `identify` callback.
    pub(crate) fn identify_now(&self, request: RequestInfo<'_>) -> Option<Arc<CallIdentity>> {
        match &*self.inner {
            RecordSink::Pipeline(p) if p.identify.is_some() => {
                let (user_id, user_email) = p.identify(request);
                Some(Arc::new(CallIdentity { user_id, user_email }))
            }
            _ => None,
        }
    }

    /// The key this tracker's conversation handles are tagged under: the configured one, else
    /// the process's.
    pub(crate) fn handle_key(&self) -> HandleKey {
        match &*self.inner {
            RecordSink::Pipeline(Pipeline { handle_key: Some(key), .. }) => *key,
            _ => HandleKey::process(),
        }
    }

    /// The counters now.
    ///
    /// ```
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let stats = tracker.stats();
    /// assert_eq!((stats.captured, stats.dropped.total()), (0, 0));
    /// ```
    pub fn stats(&self) -> Stats {
        match &*self.inner {
            RecordSink::Callback(_) => Stats::default(),
            RecordSink::Pipeline(p) => p.shared.counters.snapshot(),
        }
    }

    /// Sends every event recorded so far, waiting at most `timeout` (plus a short grace) for it.
    /// Backoffs and `Retry-After` that end within the timeout are waited out.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
    /// let report = tracker.flush(Duration::from_secs(5));
    /// assert!(report.completed);
    /// assert_eq!(sink.events().len(), 1);
    /// ```
    pub fn flush(&self, timeout: Duration) -> FlushReport {
        let RecordSink::Pipeline(p) = &*self.inner else {
            return FlushReport { completed: true, stats: Stats::default() };
        };
        if p.shared.closed.load(Ordering::SeqCst) {
            return p.report(p.shared.counters.snapshot().pending == 0);
        }
        let deadline = Instant::now() + timeout;
        let done = p.ask(|reply| Control::Flush { deadline, reply }, deadline);
        p.report(done)
    }

    /// Flushes within `timeout`, then stops the flusher; later records are dropped (counted as
    /// `after_shutdown`). Returns after at most `timeout` plus a short grace even if the ingest
    /// never answers: a request still in flight is then abandoned to the flusher thread, which
    /// finishes on its own (within `request_timeout`) and settles the counters of its events,
    /// reported meanwhile as `pending`. A second call returns the current counters at once.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let report = tracker.shutdown(Duration::from_secs(2));
    /// eprintln!("{report}"); // to stderr: stdout may be a stdio server's protocol
    /// mcpeye::Manifest::builder().tracker(tracker.clone()).build().call("no_such_tool", serde_json::json!({}));
    /// assert_eq!(tracker.stats().dropped.after_shutdown, 1);
    /// ```
    pub fn shutdown(&self, timeout: Duration) -> FlushReport {
        let RecordSink::Pipeline(p) = &*self.inner else {
            return FlushReport { completed: true, stats: Stats::default() };
        };
        if p.shared.closed.swap(true, Ordering::SeqCst) {
            return p.report(p.shared.counters.snapshot().pending == 0);
        }
        let deadline = Instant::now() + timeout;
        let done = p.ask(|reply| Control::Shutdown { deadline, reply }, deadline);
        if done {
            // The flusher answered as its last act, so joining does not wait on the network.
            if let Some(handle) = p.flusher.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = handle.join();
            }
        }
        p.report(done)
    }

    /// The process-wide tracker installed by [`init`], if any: the one calls are recorded into
    /// when their manifest or router was given none.
    ///
    /// ```no_run
    /// let guard = mcpeye::init(mcpeye::Config::from_env("proj_demo"))?;
    /// assert!(mcpeye::Tracker::global().unwrap().same(guard.tracker()));
    /// # Ok::<(), mcpeye::ConfigError>(())
    /// ```
    pub fn global() -> Option<Tracker> {
        global()
    }

    /// Whether two handles feed the same flusher.
    ///
    /// ```
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let (other, _) = mcpeye::testing::MemorySink::new();
    /// assert!(tracker.same(&tracker.clone()));
    /// assert!(!tracker.same(&other));
    /// ```
    pub fn same(&self, other: &Tracker) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Pipeline {
    /// Counts a call captured; false (and counted as dropped) when its record cannot be queued
    /// (shut down, or the channel full: then it is not even flattened).
    pub(crate) fn admit(&self) -> bool {
        let counters = &self.shared.counters;
        Counters::add(&counters.captured, 1);
        if self.shared.closed.load(Ordering::SeqCst) {
            self.after_shutdown();
            return false;
        }
        // The exact test reads the channel's head, written by the flusher: only when the count
        // says the channel may be full.
        let may_be_full = self.data.capacity().is_none_or(|cap| self.shared.backlog.get() >= cap as isize);
        if may_be_full && self.data.is_full() {
            Counters::add(&counters.channel_full, 1);
            return false;
        }
        true
    }

    /// The user of a call, from the `identify` callback.
    fn identify(&self, request: RequestInfo<'_>) -> (Option<String>, Option<String>) {
        match &self.identify {
            None => (None, None),
            Some(f) => match catch_unwind(AssertUnwindSafe(|| f(&request))) {
                Ok(Some(id)) => (id.user_id, id.user_email),
                Ok(None) => (None, None),
                Err(_) => {
                    self.shared.identify_panicked.store(true, Ordering::SeqCst);
                    (None, None)
                }
            },
        }
    }

    /// Hands an admitted record to the flusher.
    pub(crate) fn enqueue(&self, queued: Queued) {
        match self.data.try_send(queued) {
            Ok(()) => {
                if self.shared.backlog.add_one() >= self.nudge_at as isize
                    && !self.shared.nudged.load(Ordering::Relaxed)
                    && !self.shared.nudged.swap(true, Ordering::SeqCst)
                {
                    let _ = self.control.try_send(Control::Nudge);
                }
            }
            Err(TrySendError::Full(_)) => Counters::add(&self.shared.counters.channel_full, 1),
            Err(TrySendError::Disconnected(_)) => self.after_shutdown(),
        }
    }

    fn after_shutdown(&self) {
        Counters::add(&self.shared.counters.after_shutdown, 1);
        // The flusher is gone, so this one report happens here (once per tracker).
        self.shared.diagnostics.report(DiagnosticKind::AfterShutdown, || {
            "a call was recorded after mcpeye shut down; it was dropped".to_string()
        });
    }

    /// Sends a command and waits for the flusher's answer until `deadline` (plus grace).
    fn ask(&self, command: impl FnOnce(Sender<bool>) -> Control, deadline: Instant) -> bool {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let wait_until = deadline + ANSWER_GRACE;
        if self.control.send_deadline(command(reply), wait_until).is_err() {
            return false;
        }
        answer.recv_deadline(wait_until).unwrap_or(false)
    }

    fn report(&self, completed: bool) -> FlushReport {
        FlushReport { completed, stats: self.shared.counters.snapshot() }
    }
}

/// Flushes and stops the tracker installed by [`init`] when dropped (bounded by
/// [`Config::shutdown_timeout`], 2 s by default), and uninstalls it. Keep it alive for as long
/// as the server runs, e.g. `let _guard = mcpeye::init(config)?;` in `main`.
///
/// ```no_run
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let guard = mcpeye::init(mcpeye::Config::from_env("proj_demo"))?;
///     // … serve until asked to stop …
///     eprintln!("captured {} calls", guard.stats().captured);
///     Ok(()) // the guard is dropped here: the last events are sent
/// }
/// ```
#[must_use = "dropping the guard shuts mcpeye down"]
#[derive(Debug)]
pub struct Guard {
    tracker: Tracker,
    shutdown_timeout: Duration,
}

impl Guard {
    /// The tracker this guard controls (the process-wide one).
    ///
    /// ```no_run
    /// let guard = mcpeye::init(mcpeye::Config::from_env("proj_demo"))?;
    /// let manifest = mcpeye::Manifest::builder().registered().tracker(guard.tracker().clone()).build();
    /// # drop(manifest);
    /// # Ok::<(), mcpeye::ConfigError>(())
    /// ```
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }
}

/// The guard is its tracker's: [`Tracker::flush`], [`Tracker::stats`], [`Tracker::shutdown`]
/// (after which dropping the guard only uninstalls the tracker) are called on it directly.
///
/// ```no_run
/// let guard = mcpeye::init(mcpeye::Config::from_env("proj_demo"))?;
/// let report = guard.flush(std::time::Duration::from_secs(2));
/// assert_eq!(report.stats.captured, guard.stats().captured);
/// # Ok::<(), mcpeye::ConfigError>(())
/// ```
impl std::ops::Deref for Guard {
    type Target = Tracker;

    fn deref(&self) -> &Tracker {
        &self.tracker
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.tracker.shutdown(self.shutdown_timeout);
        if let Ok(mut global) = GLOBAL.write() {
            if global.as_ref().is_some_and(|g| g.same(&self.tracker)) {
                *global = None;
            }
        }
    }
}

/// Starts mcpeye for the whole process: checks `config`, starts the flusher thread and
/// installs the tracker that `#[mcpeye::tool]` calls record into. Calling it again replaces
/// the process-wide tracker (each guard still shuts down its own).
///
/// ```no_run
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let _guard = mcpeye::init(mcpeye::Config::from_env("proj_demo"))?;
///     // … run the MCP server; dropping the guard flushes the last events.
///     Ok(())
/// }
/// ```
pub fn init(config: Config) -> Result<Guard, ConfigError> {
    let shutdown_timeout = config.shutdown_timeout;
    let tracker = Tracker::new(config)?;
    set_global(Some(tracker.clone()));
    Ok(Guard { tracker, shutdown_timeout })
}

static GLOBAL: RwLock<Option<Tracker>> = RwLock::new(None);

pub(crate) fn global() -> Option<Tracker> {
    GLOBAL.read().ok().and_then(|g| g.clone())
}

/// Installs (or with `None` removes) the process-wide tracker. [`init`] does this.
pub(crate) fn set_global(t: Option<Tracker>) {
    if let Ok(mut g) = GLOBAL.write() {
        *g = t;
    }
}

/// The tracker a call is recorded into: the one given to the manifest or router (borrowed: no
/// reference count touched on the call path), else the process-wide one from `init`.
pub(crate) fn active_tracker(own: Option<&Tracker>) -> Option<Cow<'_, Tracker>> {
    match own {
        Some(t) => Some(Cow::Borrowed(t)),
        None => global().map(Cow::Owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_nudge_at_a_quarter_of_the_channel_at_most_nudge_max_or_the_threshold() {
        assert_eq!(nudge_at(20, 10_000), 2_000);
        assert_eq!(nudge_at(20, 4_000), 1_000);
        assert_eq!(nudge_at(20, 1024), 256);
        assert_eq!(nudge_at(5_000, 10_000), 5_000);
        assert_eq!(nudge_at(0, 2), 1);
    }

    /// An `https://` ingest is refused by `Tracker::new` (and so by `init`) exactly when no TLS
    /// stack is built; `.ci/run` runs this without the feature too.
    #[test]
    fn https_needs_the_tls_feature() {
        for url in ["https://ingest.invalid", "HTTPS://ingest.invalid/x"] {
            let made = Tracker::new(Config::new("p").ingest_url(url).on_error(|_| {}));
            assert_eq!(made.is_ok(), cfg!(feature = "tls"), "{url}: {made:?}");
            match made {
                Ok(tracker) => {
                    tracker.shutdown(std::time::Duration::ZERO);
                }
                Err(e) => {
                    assert_eq!(e, ConfigError::TlsNotBuilt);
                    assert!(e.to_string().contains("`tls` feature"), "{e}");
                }
            }
        }
        let plain = Tracker::new(Config::new("p").ingest_url("http://127.0.0.1:9").on_error(|_| {})).unwrap();
        plain.shutdown(std::time::Duration::ZERO);
    }
}
