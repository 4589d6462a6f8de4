//! Shutdown, the guard, back-pressure and the counters: bounded waits against a stalled ingest,
//! events after shutdown, buffer overflow, a full hand-off channel.

use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{CallOutcome, CallRecord, Config, Stats, Tracker};
use serde_json::json;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

fn call(tool: &str) -> CallRecord {
    let mut record =
        CallRecord::new(tool.to_string(), json!({"id": 7}), CallOutcome::Error { message: None, reason: None });
    record.duration = Duration::from_millis(1);
    record
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

/// Runs `f` on another thread; fails the test if it has not returned within [`PATIENCE`].
fn within_patience<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(PATIENCE).expect("hung: no answer within the hang guard")
}

/// Waits (bounded) until the tracker has nothing pending.
fn settle(tracker: &Tracker) -> Stats {
    let end = Instant::now() + PATIENCE;
    loop {
        let stats = tracker.stats();
        if stats.pending == 0 || Instant::now() > end {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn shutdown_returns_while_the_ingest_never_answers() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::stall());
    // The request itself would wait far longer than the hang guard.
    let config =
        Config::new("proj").ingest_url(ingest.url()).flush_threshold(1).request_timeout(Duration::from_secs(600));
    let tracker = Tracker::new(config).unwrap();
    for i in 0..3 {
        tracker.record(call(&format!("t{i}")));
    }
    ingest.wait_for_requests(1, PATIENCE);

    let t = tracker.clone();
    let report = within_patience(move || t.shutdown(Duration::from_millis(300)));
    assert!(!report.completed);
    assert!(report.stats.pending > 0, "{report:?}");
    assert_eq!(report.stats.sent, 0);
    assert_invariant(&report.stats);

    // Once the connection breaks, the abandoned flusher settles its events as unsent.
    drop(ingest);
    let stats = settle(&tracker);
    assert_eq!((stats.pending, stats.sent, stats.dropped.unsent), (0, 0, 3), "{stats:?}");
    assert_invariant(&stats);
}

#[test]
fn a_dripping_answer_does_not_hold_shutdown() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::ok().drip());
    let config =
        Config::new("proj").ingest_url(ingest.url()).flush_threshold(1).request_timeout(Duration::from_secs(600));
    let tracker = Tracker::new(config).unwrap();
    tracker.record(call("a"));
    ingest.wait_for_requests(1, PATIENCE);
    let report = within_patience(move || tracker.shutdown(Duration::from_millis(300)));
    assert!(!report.completed);
    assert_eq!(report.stats.pending, 1);
}

#[test]
fn events_after_shutdown_are_counted_not_sent() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    tracker.record(call("before"));
    let report = tracker.shutdown(PATIENCE);
    assert!(report.completed);
    assert_eq!(report.stats.sent, 1);
    for _ in 0..5 {
        tracker.record(call("after"));
    }
    let again = tracker.shutdown(PATIENCE);
    assert!(again.completed);
    let stats = tracker.stats();
    assert_eq!((stats.captured, stats.sent, stats.dropped.after_shutdown, stats.pending), (6, 1, 5, 0));
    assert_invariant(&stats);
    assert_eq!(tracker.flush(PATIENCE).stats, stats);
    let names: Vec<String> = ingest.events().iter().map(|e| e["toolName"].as_str().unwrap().into()).collect();
    assert_eq!(names, ["before"]);
}

#[test]
fn buffer_overflow_drops_the_oldest() {
    let ingest = IngestReceiver::start();
    // The first attempt is told to wait a second; meanwhile the buffer overflows.
    ingest.script([Reply::status(503).retry_after(1)]);
    let config = Config::new("proj").ingest_url(ingest.url()).flush_threshold(1).max_buffer(5);
    let tracker = Tracker::new(config).unwrap();
    tracker.record(call("t0"));
    ingest.wait_for_requests(1, PATIENCE);
    for i in 1..=20 {
        tracker.record(call(&format!("t{i}")));
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!(report.stats.dropped.buffer_overflow, 16);
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.pending), (5, 16, 0));
    assert_invariant(&report.stats);
    let names: Vec<String> = ingest.events().iter().map(|e| e["toolName"].as_str().unwrap().into()).collect();
    assert_eq!(names, ["t16", "t17", "t18", "t19", "t20"]);
}

#[test]
fn a_full_channel_drops_new_events_without_blocking() {
    let ingest = IngestReceiver::start();
    // `before_send` runs on the flusher: holding the first event there keeps the channel undrained.
    let (entered_tx, entered) = mpsc::channel::<()>();
    let (release, released) = mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(Some((entered_tx, released)));
    let config = Config::new("proj").ingest_url(ingest.url()).flush_threshold(1).max_buffer(5).before_send(move |e| {
        if let Some((entered, released)) = gate.lock().unwrap().take() {
            let _ = entered.send(());
            let _ = released.recv_timeout(PATIENCE);
        }
        Some(e)
    });
    let tracker = Tracker::new(config).unwrap();
    tracker.record(call("first"));
    entered.recv_timeout(PATIENCE).expect("the flusher took the first event");
    for i in 0..1034 {
        tracker.record(call(&format!("t{i}")));
    }
    let stats = tracker.stats();
    assert_eq!(stats.captured, 1035);
    assert_eq!(stats.dropped.channel_full, 10);
    assert_eq!(stats.pending, 1025);
    assert_invariant(&stats);
    release.send(()).unwrap();
    let report = within_patience(move || tracker.shutdown(PATIENCE));
    assert!(report.completed, "{report:?}");
    assert_invariant(&report.stats);
    // The buffer keeps the newest `max_buffer`: the rest is counted, not lost silently.
    assert_eq!(report.stats.sent + report.stats.dropped.buffer_overflow, 1025, "{report:?}");
}

#[test]
fn the_guard_installs_flushes_and_uninstalls_the_global_tracker() {
    let ingest = IngestReceiver::start();
    let guard = mcpeye::init(Config::new("proj").ingest_url(ingest.url())).unwrap();
    let global = mcpeye::Tracker::global().expect("installed");
    assert!(global.same(guard.tracker()));
    global.record(call("via-global"));
    drop(global);
    let ours = guard.tracker().clone();
    drop(guard);
    // Other tests may install their own meanwhile; ours must be gone.
    assert!(mcpeye::Tracker::global().is_none_or(|g| !g.same(&ours)));
    assert_eq!(ours.stats().sent, 1);
    let names: Vec<String> = ingest.events().iter().map(|e| e["toolName"].as_str().unwrap().into()).collect();
    assert_eq!(names, ["via-global"]);
}

#[test]
fn init_refuses_a_bad_config_with_a_fix() {
    let err = mcpeye::init(Config::new("")).unwrap_err();
    assert_eq!(err, mcpeye::ConfigError::EmptyProjectId);
    let err = mcpeye::init(Config::new("p").ingest_url("localhost:3001")).unwrap_err();
    assert!(err.to_string().contains("ingest_url"), "{err}");
}

#[test]
fn dropping_every_handle_still_sends_what_was_recorded() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    tracker.record(call("last-words"));
    drop(tracker);
    assert_eq!(ingest.wait_for_events(1, PATIENCE).len(), 1);
}

#[test]
fn the_secret_never_shows_in_debug_output() {
    let ingest = IngestReceiver::start();
    let config = Config::new("proj").ingest_url(ingest.url()).ingest_secret("top-secret-42");
    assert!(!format!("{config:?}").contains("top-secret-42"));
    let guard = mcpeye::init(config).unwrap();
    assert!(!format!("{guard:?}").contains("top-secret-42"));
    assert!(!format!("{:?}", guard.tracker()).contains("top-secret-42"));
}
