//! Fault injection at the ingest: refused connections, silence, 5xx bursts, `Retry-After`,
//! 413, 401/403, dripping and broken answers, overflow, and calls after shutdown.
//!
//! Every test checks the accounting invariant `captured == sent + dropped + pending` (with the
//! reason of each drop), that nothing the bounds allow to keep is lost, and that tool calls
//! never wait on the network: calls go through a real `#[mcpeye::tool]` and complete while the
//! ingest is down or silent. Waits are bounded by a generous hang guard, never asserted as
//! durations (except the documented shutdown bound).

use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{Config, Diagnostic, DiagnosticKind, Manifest, Stats, Tracker};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(60);

/// Record the step of a workflow.
#[mcpeye::tool]
fn step(
    /// Position of the step.
    n: u64,
) -> String {
    format!("step {n} done")
}

fn manifest(tracker: &Tracker) -> Manifest {
    Manifest::builder().tools(mcpeye::tool_defs![step]).tracker(tracker.clone()).build()
}

/// Calls `step` for each `n`, asserting each call answered its own result.
fn calls(m: &Manifest, ns: impl IntoIterator<Item = u64>) {
    for n in ns {
        let out = m.call("step", json!({ "n": n }));
        assert_eq!(out["content"][0]["text"], format!("step {n} done"), "{out}");
    }
}

fn config(url: &str) -> Config {
    Config::new("proj_faults")
        .ingest_url(url)
        .flush_threshold(1)
        .retry_backoff(Duration::from_millis(20), Duration::from_millis(100))
}

type Seen = Arc<Mutex<Vec<Diagnostic>>>;

fn collecting(config: Config) -> (Config, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    (config.on_error(move |d| s.lock().unwrap().push(d.clone())), seen)
}

fn kinds(seen: &Seen) -> Vec<DiagnosticKind> {
    seen.lock().unwrap().iter().map(|d| d.kind).collect()
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

/// The `n` of each event, in the order the ingest accepted them.
fn steps(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["arguments"]["n"].as_u64().expect("an n")).collect()
}

fn assert_unique_ids(events: &[Value]) {
    let ids: HashSet<&str> = events.iter().map(|e| e["callId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), events.len(), "a callId was delivered twice");
}

/// Runs `f` on another thread; fails the test if it has not returned within [`PATIENCE`].
fn within_patience<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(PATIENCE).expect("hung: no answer within the hang guard")
}

/// Polls `done` until it holds; fails after [`PATIENCE`].
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let end = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A loopback address nobody listens on (yet): bound, then released.
fn reserved_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[test]
fn refused_then_recovered_loses_nothing_and_keeps_the_order() {
    let addr = reserved_port();
    let (config, seen) = collecting(config(&format!("http://{addr}")).max_buffer(100));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..40);
    // The flusher has tried and failed at least once: the ingest is really down.
    wait_for("a network diagnostic", || kinds(&seen).contains(&DiagnosticKind::Network));
    calls(&m, 40..80);
    let stats = tracker.stats();
    assert_eq!((stats.captured, stats.sent, stats.dropped.total(), stats.pending), (80, 0, 0, 80));

    let ingest = IngestReceiver::start_on(addr);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed, "{report:?}");
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.pending), (80, 0, 0));
    assert_invariant(&report.stats);
    let events = ingest.events();
    assert_eq!(steps(&events), (0..80).collect::<Vec<_>>());
    assert_unique_ids(&events);
    assert_eq!(kinds(&seen), [DiagnosticKind::Network]);
}

#[test]
fn refused_past_max_buffer_keeps_the_newest_with_one_warning() {
    let addr = reserved_port();
    let (config, seen) = collecting(config(&format!("http://{addr}")).max_buffer(10));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..1);
    wait_for("a network diagnostic", || kinds(&seen).contains(&DiagnosticKind::Network));
    calls(&m, 1..25);
    // Overflow happens when the flusher drains; wait until it has taken everything in.
    wait_for("the overflow", || tracker.stats().dropped.buffer_overflow == 15);

    let ingest = IngestReceiver::start_on(addr);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    let s = report.stats;
    assert_eq!((s.captured, s.sent, s.dropped.buffer_overflow, s.dropped.total(), s.pending), (25, 10, 15, 15, 0));
    assert_invariant(&s);
    assert_eq!(steps(&ingest.events()), (15..25).collect::<Vec<_>>());
    let k = kinds(&seen);
    assert_eq!(k.iter().filter(|k| **k == DiagnosticKind::BufferOverflow).count(), 1, "{k:?}");
}

#[test]
fn calls_return_while_the_ingest_never_answers_and_shutdown_is_bounded() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::stall());
    // The request itself would wait far longer than the hang guard.
    let tracker = Tracker::new(config(&ingest.url()).request_timeout(Duration::from_secs(600))).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..1);
    ingest.wait_for_requests(1, PATIENCE);
    // The flusher is now stuck inside a request that never ends; calls still complete.
    let t = tracker.clone();
    let answered = within_patience(move || {
        let m = manifest(&t);
        calls(&m, 1..501);
        500
    });
    assert_eq!(answered, 500);
    let stats = tracker.stats();
    assert_eq!((stats.captured, stats.sent, stats.pending), (501, 0, 501));
    assert_invariant(&stats);

    // The issue asks for timeout + 1 s; the assertion leaves 5 s so a loaded machine does not
    // trip it (the implementation waits `timeout` plus a 200 ms grace).
    let timeout = Duration::from_millis(500);
    let t = tracker.clone();
    let (report, took) = within_patience(move || {
        let start = Instant::now();
        let report = t.shutdown(timeout);
        (report, start.elapsed())
    });
    assert!(took <= timeout + Duration::from_secs(5), "shutdown took {took:?}");
    assert!(!report.completed);
    assert_eq!(report.stats.sent, 0);
    assert_invariant(&report.stats);

    // Once the connection breaks, the abandoned request settles as unsent: nothing vanishes.
    drop(ingest);
    wait_for("the abandoned request to settle", || tracker.stats().pending == 0);
    let s = tracker.stats();
    assert_eq!((s.captured, s.sent, s.dropped.unsent, s.dropped.total()), (501, 0, 501, 501), "{s:?}");
}

#[test]
fn a_burst_of_server_errors_delays_but_loses_nothing() {
    let ingest = IngestReceiver::start();
    let failures = Arc::new(AtomicUsize::new(0));
    let f = failures.clone();
    // Ten failures of every retryable kind, then a healthy ingest.
    ingest.respond_with(move |_| {
        let i = f.fetch_add(1, Ordering::SeqCst);
        match i {
            0..=9 => [Reply::status(500), Reply::status(502), Reply::status(503), Reply::status(408)][i % 4].clone(),
            _ => Reply::ok(),
        }
    });
    let (config, seen) = collecting(config(&ingest.url()).max_batch_events(7));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..50);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed, "{report:?}");
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.pending), (50, 0, 0));
    assert_invariant(&report.stats);
    let events = ingest.events();
    assert_eq!(steps(&events), (0..50).collect::<Vec<_>>());
    assert_unique_ids(&events);
    assert!(failures.load(Ordering::SeqCst) >= 10);
    assert_eq!(kinds(&seen), [DiagnosticKind::Retrying]);
}

#[test]
fn no_request_before_retry_after_is_due() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(429).retry_after(1), Reply::status(503).retry_after(1), Reply::ok()]);
    let tracker = Tracker::new(config(&ingest.url())).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..3);
    ingest.wait_for_requests(1, PATIENCE);
    // Calls made while the ingest asked to wait are kept and sent after.
    calls(&m, 3..10);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.total()), (10, 0));
    assert_invariant(&report.stats);
    let requests = ingest.requests();
    for pair in requests.windows(2) {
        if matches!(pair[0].status, 429 | 503) {
            let answered = pair[0].answered_at.expect("answered");
            let gap = pair[1].received_at.duration_since(answered);
            assert!(gap >= Duration::from_secs(1), "a request came {gap:?} after a Retry-After of 1 s");
        }
    }
    assert_eq!(steps(&ingest.events()), (0..10).collect::<Vec<_>>());
}

#[test]
fn too_large_splits_then_drops_only_the_single_event_that_never_fits() {
    let ingest = IngestReceiver::start();
    // Batches of more than two events are too large, and so is the event of step 5 alone.
    ingest.respond_with(|r| {
        let events = r.events();
        if events.len() > 2 || events.iter().any(|e| e["arguments"]["n"] == 5) {
            Reply::status(413)
        } else {
            Reply::ok()
        }
    });
    let (config, seen) = collecting(config(&ingest.url()).flush_threshold(1000));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..12);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    let s = report.stats;
    assert_eq!((s.sent, s.dropped.too_large, s.dropped.total(), s.pending), (11, 1, 1, 0));
    assert_invariant(&s);
    let events = ingest.events();
    assert_eq!(steps(&events), [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
    assert_unique_ids(&events);
    assert_eq!(kinds(&seen), [DiagnosticKind::TooLarge]);
}

#[test]
fn forbidden_drops_batches_with_one_diagnostic_naming_the_secret() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::status(403));
    let (config, seen) = collecting(config(&ingest.url()).ingest_secret("sekret-value-9f2c").flush_threshold(1000));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    for round in 0..3 {
        calls(&m, round * 4..round * 4 + 4);
        assert!(tracker.flush(PATIENCE).completed);
    }
    let s = tracker.stats();
    assert_eq!((s.captured, s.sent, s.dropped.rejected, s.dropped.total(), s.pending), (12, 0, 12, 12, 0));
    assert_invariant(&s);
    // Dropped, not retried: one request per batch.
    assert_eq!(ingest.requests().len(), 3);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].kind, DiagnosticKind::Unauthorized);
    assert!(seen[0].message.contains("403") && seen[0].message.contains("secret"), "{}", seen[0].message);
    assert!(!seen[0].message.contains("sekret-value-9f2c"));
}

#[test]
fn a_dripping_answer_times_out_and_the_batch_is_retried() {
    let ingest = IngestReceiver::start();
    // The first answer comes one byte per second: the 1 s request timeout cuts it short.
    ingest.script([Reply::ok().drip()]);
    let tracker = Tracker::new(config(&ingest.url()).request_timeout(Duration::from_secs(1))).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..1);
    ingest.wait_for_requests(1, PATIENCE);
    // Calls do not wait for the slow answer.
    calls(&m, 1..20);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.pending), (20, 0, 0));
    assert_invariant(&report.stats);
    let events = ingest.events();
    assert_eq!(steps(&events), (0..20).collect::<Vec<_>>());
    assert!(!ingest.requests()[0].accepted(), "the dripped answer never completed");
}

#[test]
fn connections_closed_mid_response_are_retried_without_loss() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::ok().close_mid_response(), Reply::status(503).close_mid_response(), Reply::ok()]);
    let tracker = Tracker::new(config(&ingest.url()).flush_threshold(1000).max_batch_events(4)).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..10);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.pending), (10, 0, 0));
    assert_invariant(&report.stats);
    let events = ingest.events();
    assert_eq!(steps(&events), (0..10).collect::<Vec<_>>());
    assert_unique_ids(&events);
    assert_eq!(ingest.requests().len(), 5, "two broken answers, then three batches");
}

#[test]
fn tool_calls_after_shutdown_still_answer_and_are_counted() {
    let ingest = IngestReceiver::start();
    let (config, seen) = collecting(config(&ingest.url()));
    let tracker = Tracker::new(config).unwrap();
    let m = manifest(&tracker);
    calls(&m, 0..3);
    assert!(tracker.shutdown(PATIENCE).completed);
    calls(&m, 3..10);
    let s = tracker.stats();
    assert_eq!((s.captured, s.sent, s.dropped.after_shutdown, s.dropped.total(), s.pending), (10, 3, 7, 7, 0));
    assert_invariant(&s);
    assert_eq!(steps(&ingest.events()), [0, 1, 2]);
    assert_eq!(kinds(&seen), [DiagnosticKind::AfterShutdown]);
}
