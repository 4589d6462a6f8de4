//! The outbox in one process (`Config::outbox_dir`): what a tracker could not deliver before it
//! shut down is sent by the next tracker on the same directory, with the same bytes (so the
//! same `callId`); the byte bound drops the oldest, counted; the counters keep
//! `captured == sent + dropped + pending`. The process killed mid-stream is `outbox_kill.rs`.

use mcpeye::testing::{IngestReceiver, MemorySink, Reply};
use mcpeye::{CallOutcome, CallRecord, Config, ConfigError, DiagnosticKind, Stats, Tracker};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcpeye-outbox-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn call(i: usize) -> CallRecord {
    CallRecord::new("search", json!({"i": i}), CallOutcome::Success { result: json!({"content": []}) })
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.pending, "{s:?}");
}

fn ids(events: &[Value]) -> Vec<(i64, String)> {
    events.iter().map(|e| (e["arguments"]["i"].as_i64().unwrap(), e["callId"].as_str().unwrap().to_owned())).collect()
}

/// Waits (bounded) until `f` holds.
fn wait_until(f: impl Fn() -> bool) -> bool {
    let end = Instant::now() + PATIENCE;
    while !f() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[test]
fn what_one_tracker_could_not_deliver_the_next_one_sends_with_the_same_call_ids() {
    let dir = TempDir::new("handover");
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::status(503));
    let config = Config::new("proj").ingest_url(ingest.url()).outbox_dir(&dir.0).flush_threshold(5).on_error(|_| {});
    let first = Tracker::new(config).unwrap();
    for i in 0..40 {
        first.record(call(i));
    }
    // The ingest saw them (and refused them): they were encoded, so written to the outbox.
    assert!(wait_until(|| ingest.requests().iter().map(|r| r.events().len()).max().unwrap_or(0) >= 5));
    let report = first.shutdown(Duration::from_millis(200));
    assert!(!report.completed);
    assert_eq!((report.stats.captured, report.stats.sent, report.stats.pending), (40, 0, 40), "{report:?}");
    assert_eq!(report.stats.dropped.total(), 0, "kept on disk, not dropped: {report:?}");
    let refused: Vec<(i64, String)> = ingest.requests().iter().flat_map(|r| ids(&r.events())).collect();

    let (second, sink) = MemorySink::with_config(Config::new("proj").outbox_dir(&dir.0)).unwrap();
    assert!(second.flush(PATIENCE).completed);
    let stats = second.stats();
    assert_eq!((stats.captured, stats.recovered, stats.sent, stats.pending), (40, 40, 40, 0), "{stats:?}");
    assert_invariant(&stats);
    let delivered = ids(&sink.events());
    assert_eq!(delivered.iter().map(|(i, _)| *i).collect::<Vec<_>>(), (0..40).collect::<Vec<_>>(), "in call order");
    // Each event was sent again byte for byte: its callId is the one the refused attempt carried.
    for (i, id) in &refused {
        assert!(delivered.contains(&(*i, id.clone())), "event {i} changed its callId");
    }
    second.shutdown(PATIENCE);

    // Delivered and settled: a third start finds nothing.
    let (third, sink) = MemorySink::with_config(Config::new("proj").outbox_dir(&dir.0)).unwrap();
    third.record(call(99));
    assert!(third.flush(PATIENCE).completed);
    assert_eq!(ids(&sink.events()).len(), 1);
    assert_eq!(third.stats().recovered, 0);
}

#[test]
fn the_byte_bound_drops_the_oldest_counted_with_its_own_reason() {
    let dir = TempDir::new("bound");
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::status(503));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let config = Config::new("proj")
        .ingest_url(ingest.url())
        .outbox_dir(&dir.0)
        .outbox_max_bytes(4 * 1024)
        .on_error(move |d| s.lock().unwrap().push(d.kind));
    let tracker = Tracker::new(config).unwrap();
    for i in 0..200 {
        tracker.record(call(i));
    }
    assert!(wait_until(|| tracker.stats().dropped.outbox_overflow > 0));
    let report = tracker.shutdown(Duration::from_millis(200));
    let s = report.stats;
    assert_invariant(&s);
    assert_eq!(s.dropped.total(), s.dropped.outbox_overflow, "{s:?}");
    assert!(s.pending > 0 && s.pending < 200, "{s:?}");
    assert!(seen.lock().unwrap().contains(&DiagnosticKind::OutboxOverflow));

    // What the bound kept are the newest, and all of them come back.
    let (next, sink) = MemorySink::with_config(Config::new("proj").outbox_dir(&dir.0)).unwrap();
    assert!(next.flush(PATIENCE).completed);
    let back: Vec<i64> = ids(&sink.events()).into_iter().map(|(i, _)| i).collect();
    assert_eq!(back.len() as u64, s.pending);
    assert_eq!(back.last(), Some(&199));
    assert!(back.windows(2).all(|w| w[0] + 1 == w[1]), "a contiguous run of the newest: {back:?}");
}

#[test]
fn the_invariant_holds_while_events_flow_through_the_outbox() {
    let dir = TempDir::new("flow");
    let (tracker, sink) = MemorySink::with_config(
        Config::new("proj").outbox_dir(&dir.0).flush_threshold(7).max_buffer(50).on_error(|_| {}),
    )
    .unwrap();
    for i in 0..500 {
        tracker.record(call(i));
        if i % 50 == 0 {
            assert_invariant(&tracker.stats());
        }
    }
    let report = tracker.shutdown(PATIENCE);
    assert!(report.completed);
    assert_invariant(&report.stats);
    assert_eq!(report.stats.sent + report.stats.dropped.total(), 500, "{report:?}");
    assert_eq!(sink.events().len() as u64, report.stats.sent);
    // Everything settled: the log is back to its header.
    let log = std::fs::metadata(dir.0.join("outbox-0.log")).unwrap().len();
    assert!(log <= 8, "{log} bytes left");
}

#[test]
fn a_directory_that_cannot_be_used_is_a_config_error() {
    let dir = TempDir::new("file");
    std::fs::create_dir_all(&dir.0).unwrap();
    let file = dir.0.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let err = Tracker::new(Config::new("proj").outbox_dir(&file)).unwrap_err();
    assert!(matches!(err, ConfigError::Outbox(_)), "{err:?}");
    assert!(err.to_string().contains("Config::outbox_dir"), "{err}");
    let err = Tracker::new(Config::new("proj").outbox_dir(&dir.0).outbox_max_bytes(0)).unwrap_err();
    assert!(err.to_string().contains("outbox_max_bytes"), "{err}");
}
