//! Delivery to the ingest through a real HTTP exchange with the loopback receiver: batching,
//! headers, and the retry policy of docs/wire-format.md#delivery-and-retry.

use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{CallOutcome, CallRecord, Config, Diagnostic, DiagnosticKind, Stats, Tracker};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

fn call(tool: &str) -> CallRecord {
    let result = json!({"content": [{"type": "text", "text": "ok"}]});
    let mut record =
        CallRecord::new(tool.to_string(), json!({"q": "weather in Paris"}), CallOutcome::Success { result });
    record.duration = Duration::from_millis(1);
    record
}

fn config(ingest: &IngestReceiver) -> Config {
    Config::new("proj_test")
        .ingest_url(ingest.url())
        .flush_threshold(1000)
        .retry_backoff(Duration::from_millis(20), Duration::from_millis(100))
}

fn collect_diagnostics(config: Config) -> (Config, Arc<Mutex<Vec<Diagnostic>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (config.on_error(move |d| s.lock().unwrap().push(d.clone())), seen)
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

fn tool_names(events: &[serde_json::Value]) -> Vec<String> {
    events.iter().map(|e| e["toolName"].as_str().unwrap().to_string()).collect()
}

#[test]
fn events_reach_the_ingest_with_the_contract_headers() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).ingest_secret("s3cr3t")).unwrap();
    tracker.record(call("a"));
    tracker.record(call("b"));
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.pending), (2, 0));
    assert_invariant(&report.stats);

    let requests = ingest.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/ingest"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("x-mcpeye-secret"), Some("s3cr3t"));
    assert_eq!(tool_names(&r.events()), ["a", "b"]);
    assert_eq!(r.json().unwrap()["projectId"], "proj_test");
}

#[test]
fn no_secret_header_without_a_secret() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).ingest_secret("")).unwrap();
    tracker.record(call("a"));
    assert!(tracker.flush(PATIENCE).completed);
    assert_eq!(ingest.requests()[0].header("x-mcpeye-secret"), None);
}

#[test]
fn the_threshold_sends_without_a_flush() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).flush_threshold(3).flush_interval(Duration::from_secs(3600))).unwrap();
    for i in 0..3 {
        tracker.record(call(&format!("t{i}")));
    }
    assert_eq!(ingest.wait_for_events(3, PATIENCE).len(), 3);
}

#[test]
fn the_interval_sends_a_lone_event() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).flush_interval(Duration::from_millis(200))).unwrap();
    tracker.record(call("lonely"));
    assert_eq!(tool_names(&ingest.wait_for_events(1, PATIENCE)), ["lonely"]);
}

#[test]
fn batches_respect_event_and_byte_bounds() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).max_batch_events(3)).unwrap();
    for i in 0..7 {
        tracker.record(call(&format!("t{i}")));
    }
    assert!(tracker.flush(PATIENCE).completed);
    let sizes: Vec<usize> = ingest.requests().iter().map(|r| r.events().len()).collect();
    assert_eq!(sizes, [3, 3, 1]);

    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(&ingest).max_batch_bytes(600)).unwrap();
    for i in 0..6 {
        tracker.record(call(&format!("t{i}")));
    }
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    assert!(requests.len() > 1);
    for r in &requests {
        assert!(r.body.len() <= 600 || r.events().len() == 1, "{} bytes", r.body.len());
    }
    assert_eq!(tool_names(&ingest.events()), ["t0", "t1", "t2", "t3", "t4", "t5"]);
}

#[test]
fn server_errors_are_retried_until_success() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(503), Reply::status(500), Reply::status(408), Reply::ok()]);
    let (config, diagnostics) = collect_diagnostics(config(&ingest));
    let tracker = Tracker::new(config).unwrap();
    tracker.record(call("a"));
    tracker.record(call("b"));
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.total()), (2, 0));
    let requests = ingest.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [503, 500, 408, 200]);
    // The same events each time.
    assert!(requests.iter().all(|r| r.body == requests[0].body));
    let kinds: Vec<DiagnosticKind> = diagnostics.lock().unwrap().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::Retrying]);
}

#[test]
fn retry_after_is_honoured() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(429).retry_after(1), Reply::ok()]);
    let tracker = Tracker::new(config(&ingest)).unwrap();
    tracker.record(call("a"));
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    assert_eq!(requests.len(), 2);
    let answered = requests[0].answered_at.expect("the 429 was answered");
    let gap = requests[1].received_at.duration_since(answered);
    assert!(gap >= Duration::from_secs(1), "retried {gap:?} after a Retry-After of 1 s");
}

#[test]
fn network_errors_are_retried() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::ok().close_mid_response(), Reply::ok()]);
    let tracker = Tracker::new(config(&ingest)).unwrap();
    tracker.record(call("a"));
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!(report.stats.sent, 1);
    assert_eq!(ingest.requests().len(), 2);
    assert_eq!(tool_names(&ingest.events()), ["a"]);
}

#[test]
fn too_large_batches_are_split_in_halves() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(413)]);
    let tracker = Tracker::new(config(&ingest)).unwrap();
    for i in 0..4 {
        tracker.record(call(&format!("t{i}")));
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.total()), (4, 0));
    let sizes: Vec<usize> = ingest.requests().iter().map(|r| r.events().len()).collect();
    assert_eq!(sizes[0], 4);
    assert!(sizes[1..].iter().all(|n| *n <= 2), "{sizes:?}");
    assert_eq!(tool_names(&ingest.events()), ["t0", "t1", "t2", "t3"]);
    let ids: BTreeSet<String> = ingest.events().iter().map(|e| e["callId"].to_string()).collect();
    assert_eq!(ids.len(), 4);
}

#[test]
fn a_single_event_still_too_large_is_dropped_and_counted() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|r| {
        if r.events().iter().any(|e| e["toolName"] == "huge") {
            Reply::status(413)
        } else {
            Reply::ok()
        }
    });
    let (config, diagnostics) = collect_diagnostics(config(&ingest));
    let tracker = Tracker::new(config).unwrap();
    for name in ["a", "huge", "b", "c"] {
        tracker.record(call(name));
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!(report.stats.sent, 3);
    assert_eq!(report.stats.dropped.too_large, 1);
    assert_eq!(report.stats.dropped.total(), 1);
    assert_invariant(&report.stats);
    assert_eq!(tool_names(&ingest.events()), ["a", "b", "c"]);
    let kinds: Vec<DiagnosticKind> = diagnostics.lock().unwrap().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::TooLarge]);
}

#[test]
fn unauthorized_batches_are_dropped_with_one_diagnostic_naming_the_secret() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::status(401));
    let (config, diagnostics) = collect_diagnostics(config(&ingest).ingest_secret("wrong-secret-value"));
    let tracker = Tracker::new(config).unwrap();
    for round in 0..2 {
        for i in 0..3 {
            tracker.record(call(&format!("r{round}t{i}")));
        }
        assert!(tracker.flush(PATIENCE).completed);
    }
    let stats = tracker.stats();
    assert_eq!((stats.sent, stats.dropped.rejected, stats.pending), (0, 6, 0));
    assert_invariant(&stats);
    // Dropped, not retried: one request per batch.
    assert_eq!(ingest.requests().len(), 2);
    let diagnostics = diagnostics.lock().unwrap();
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].kind, DiagnosticKind::Unauthorized);
    assert!(diagnostics[0].message.contains("secret"), "{}", diagnostics[0].message);
    assert!(!diagnostics[0].message.contains("wrong-secret-value"));
}

#[test]
fn other_client_errors_are_dropped_not_retried() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(400), Reply::status(422)]);
    let (config, diagnostics) = collect_diagnostics(config(&ingest));
    let tracker = Tracker::new(config).unwrap();
    tracker.record(call("a"));
    assert!(tracker.flush(PATIENCE).completed);
    tracker.record(call("b"));
    assert!(tracker.flush(PATIENCE).completed);
    assert_eq!(tracker.stats().dropped.rejected, 2);
    assert_eq!(ingest.requests().len(), 2);
    let kinds: Vec<DiagnosticKind> = diagnostics.lock().unwrap().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::Rejected]);
}

#[test]
fn the_calls_client_reaches_the_identity() {
    let ingest = IngestReceiver::start();
    let tracker =
        Tracker::new(config(&ingest).identity(mcpeye::Identity::new().server_version(2).user_id(42))).unwrap();
    let mut record = call("a");
    record.client = Some(std::sync::Arc::new(mcpeye::ClientInfo::new("claude-desktop", "1.0")));
    tracker.record(record);
    assert!(tracker.flush(PATIENCE).completed);
    let body = String::from_utf8(ingest.requests()[0].body.clone()).unwrap();
    assert!(
        body.starts_with(
            r#"{"projectId":"proj_test","identity":{"userId":"42","client":"claude-desktop/1.0","serverVersion":"2"},"events":["#
        ),
        "{body}"
    );
}
