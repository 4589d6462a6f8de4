//! Problems the runtime reports: once per kind and tracker, to the `on_error` callback or to
//! stderr (never stdout: stdio MCP servers speak their protocol there).

use std::fmt;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Receives every problem the runtime reports (see [`Config::on_error`](crate::Config::on_error)).
pub type OnErrorFn = dyn Fn(&Diagnostic) + Send + Sync;

/// The kind of a [`Diagnostic`]. Each kind is reported at most once per tracker; the counters
/// of [`Stats`](crate::Stats) keep the totals.
///
/// ```
/// use mcpeye::{Config, DiagnosticKind};
///
/// let config = Config::from_env("proj").on_error(|d| match d.kind {
///     DiagnosticKind::Unauthorized => eprintln!("check MCPEYE_INGEST_SECRET: {d}"),
///     _ => eprintln!("{d}"),
/// });
/// # drop(config);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// No ingest URL was configured: events go to `http://localhost:3001`.
    DefaultIngestUrl,
    /// The ingest URL is plain `http://` to another machine: events travel unencrypted.
    InsecureIngestUrl,
    /// The ingest could not be reached (connection, timeout, TLS); the batch is retried.
    Network,
    /// The ingest answered 408, 429 or 5xx; the batch is retried.
    Retrying,
    /// The ingest answered 401 or 403: the secret is likely wrong; the batch is dropped.
    Unauthorized,
    /// The ingest answered another 4xx (or a redirect); the batch is dropped.
    Rejected,
    /// One event alone was too large for the ingest (413) and was dropped.
    TooLarge,
    /// An event broke the payload rules (e.g. an empty tool name) and was dropped.
    Invalid,
    /// Calls came faster than the flusher could take them; events were dropped.
    ChannelFull,
    /// More than `max_buffer` events waited for the ingest; the oldest were dropped.
    BufferOverflow,
    /// Calls were recorded after the tracker shut down; they were dropped.
    AfterShutdown,
    /// Events could not be sent before a shutdown's timeout.
    ShutdownTimeout,
    /// The `identify` callback panicked; those calls carry no identity.
    IdentifyPanicked,
    /// The `before_send` callback panicked; those events were dropped.
    BeforeSendPanicked,
    /// The outbox could not be written; events are kept in memory only meanwhile.
    Outbox,
    /// The undelivered events outgrew `Config::outbox_max_bytes`; the oldest were dropped.
    OutboxOverflow,
    /// The local event log could not be written; those records are missing from it (the
    /// ingest still gets the events).
    EventLog,
    /// The `infer_intent` callback panicked; those calls have no inferred intent (their events
    /// are sent and logged as they are).
    InferIntentPanicked,
}

/// One problem, as handed to [`Config::on_error`](crate::Config::on_error). Messages never hold
/// the ingest secret or a tool's input.
///
/// ```
/// use mcpeye::{Config, Diagnostic};
/// use std::sync::{Arc, Mutex};
///
/// let seen: Arc<Mutex<Vec<Diagnostic>>> = Arc::default();
/// let sink = seen.clone();
/// let config = Config::new("proj").on_error(move |d| sink.lock().unwrap().push(d.clone()));
/// # drop(config);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of problem it is.
    pub kind: DiagnosticKind,
    /// A sentence saying what happened and what to do.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[mcpeye] {}", self.message)
    }
}

/// Reports each kind once, to the configured sink.
pub(crate) struct Diagnostics {
    sink: Option<Arc<OnErrorFn>>,
    seen: AtomicU64,
}

impl Diagnostics {
    pub(crate) fn new(sink: Option<Arc<OnErrorFn>>) -> Self {
        Diagnostics { sink, seen: AtomicU64::new(0) }
    }

    /// Reports `kind` unless it was already reported; `message` is only built when needed.
    pub(crate) fn report(&self, kind: DiagnosticKind, message: impl FnOnce() -> String) {
        let bit = 1u64 << (kind as u32);
        if self.seen.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return;
        }
        let diagnostic = Diagnostic { kind, message: message() };
        match &self.sink {
            // A panicking callback must not take the flusher (or a tool call) down with it.
            Some(sink) => {
                let _ = catch_unwind(AssertUnwindSafe(|| sink(&diagnostic)));
            }
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{diagnostic}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn each_kind_is_reported_once_and_a_panicking_sink_is_contained() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let d = Diagnostics::new(Some(Arc::new(move |d: &Diagnostic| {
            s.lock().unwrap().push(d.kind);
            panic!("sink failure");
        })));
        d.report(DiagnosticKind::Network, || "a".into());
        d.report(DiagnosticKind::Network, || unreachable!("built only once"));
        d.report(DiagnosticKind::Rejected, || "b".into());
        assert_eq!(*seen.lock().unwrap(), vec![DiagnosticKind::Network, DiagnosticKind::Rejected]);
    }
}
