//! A hostile ingest against a backlog: what the delivery promises (every captured call ends up
//! sent, dropped for a counted reason, or pending; shutdown is bounded; an outbox keeps events)
//! under a slow ingest at shutdown, an ingest down through a burst, and many clients at once.
//!
//! Asserts are on counts and on what the ingest received; durations only bound waits against a
//! hang. The SIGKILL under a slow ingest is in `outbox_kill.rs`.

use mcpeye::testing::{IngestReceiver, MemorySink, Reply};
use mcpeye::{CallOutcome, CallRecord, ClientInfo, Config, Diagnostic, DiagnosticKind, Stats, Tracker};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(60);

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcpeye-backlog-{}-{name}", std::process::id()));
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

fn call_from(i: usize, client: &Arc<ClientInfo>) -> CallRecord {
    let mut record = call(i);
    record.client = Some(client.clone());
    record
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

fn index(e: &Value) -> usize {
    e["arguments"]["i"].as_u64().unwrap() as usize
}

type Seen = Arc<Mutex<Vec<Diagnostic>>>;

fn collecting(config: Config) -> (Config, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    (config.on_error(move |d| s.lock().unwrap().push(d.clone())), seen)
}

fn message(seen: &Seen, kind: DiagnosticKind) -> Option<String> {
    seen.lock().unwrap().iter().find(|d| d.kind == kind).map(|d| d.message.clone())
}

/// Waits (bounded) until `f` holds.
fn wait_for(what: &str, f: impl Fn() -> bool) {
    let end = Instant::now() + PATIENCE;
    while !f() {
        assert!(Instant::now() < end, "hung waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A loopback port with nothing listening: connections are refused until a receiver takes it.
fn reserved_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// 20 000 calls, an ingest that takes 200 ms per POST, then `shutdown(2 s)`: the flusher hears
/// the shutdown while a backlog waits, stops sending, counts every event it did not deliver as
/// `unsent` and says how many; the report is the truth (what it calls sent, the ingest has).
#[test]
fn a_shutdown_behind_a_slow_ingest_counts_and_tells_every_undelivered_event() {
    const CALLS: usize = 20_000;
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::ok().delay(Duration::from_millis(200)));
    let (config, seen) = collecting(Config::new("proj").ingest_url(ingest.url()));
    let tracker = Tracker::new(config).unwrap();
    for i in 0..CALLS {
        tracker.record(call(i));
    }
    ingest.wait_for_requests(1, PATIENCE);
    let report = tracker.shutdown(Duration::from_secs(2));
    let requests_at_return = ingest.requests().len();
    assert!(!report.completed, "{report:?}");
    assert_invariant(&report.stats);
    assert!(report.stats.dropped.unsent > 0, "{report:?}");
    // Pending only in what a sender thread holds: one identity, one chain of at most 4 batches
    // (the one in flight, and the ones it will hand back unsent).
    assert!(report.stats.pending <= 2_000, "{report:?}");

    // The request in flight ends, and its events are settled: then nothing is pending.
    wait_for("the batch in flight to settle", || tracker.stats().pending == 0);
    let stats = tracker.stats();
    assert_invariant(&stats);
    assert_eq!(stats.captured, CALLS as u64);
    assert_eq!(stats.sent + stats.dropped.total(), CALLS as u64, "every call is sent or counted: {stats:?}");
    // The counters say what the ingest got, each event once.
    let events = ingest.events();
    assert_eq!(events.len() as u64, stats.sent);
    assert_eq!(events.iter().map(index).collect::<HashSet<_>>().len(), events.len());
    // No POST after the shutdown but the one in flight when it returned (a chain stops there).
    assert!(ingest.requests().len() <= requests_at_return + 1);
    // The diagnostic tells the count when the flusher gave up, and how many were still in a
    // request then: those are counted when it ends, possibly before the report is read.
    let said = message(&seen, DiagnosticKind::ShutdownTimeout).expect("a ShutdownTimeout diagnostic");
    let counts: Vec<u64> = said.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).take(2).collect();
    let (told, in_flight) = (counts[0], counts.get(1).copied().filter(|_| said.contains("in flight")).unwrap_or(0));
    let unsent = report.stats.dropped.unsent;
    assert!(told <= unsent && unsent <= told + in_flight, "the count is told: {said} ({report:?})");
    assert!(stats.dropped.unsent <= told + in_flight, "the count is told: {said} ({stats:?})");
}

/// The same with an outbox: what was not delivered, the records still in the hand-off channel
/// included, is on disk at shutdown, and the next start delivers it; with what the first run
/// sent, every call arrives, and only the batch in flight at the shutdown may come twice (with
/// its `callId`).
#[test]
fn a_shutdown_behind_a_slow_ingest_keeps_everything_in_the_outbox() {
    const CALLS: usize = 20_000;
    let dir = TempDir::new("slow-shutdown");
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::ok().delay(Duration::from_millis(200)));
    // A channel as large as the burst: no call is dropped at the hand-off.
    let config = Config::new("proj").ingest_url(ingest.url()).outbox_dir(&dir.0).max_buffer(CALLS).on_error(|_| {});
    let tracker = Tracker::new(config).unwrap();
    for i in 0..CALLS {
        tracker.record(call(i));
    }
    let report = tracker.shutdown(Duration::from_secs(2));
    assert_invariant(&report.stats);
    assert_eq!(report.stats.dropped.total(), 0, "kept, not dropped: {report:?}");
    // Everything pending is on disk; the batch in flight at the return may be counted sent a
    // moment before the outbox settles it, so the disk may hold up to one batch more.
    let extra = report.stats.on_disk.checked_sub(report.stats.pending).expect("everything pending is on disk");
    assert!(extra <= 500, "at most the batch in flight is on disk and not pending: {report:?}");
    wait_for("the batch in flight to end", || ingest.requests().iter().all(|r| r.answered_at.is_some()));

    let (next, sink) = MemorySink::with_config(Config::new("proj").outbox_dir(&dir.0)).unwrap();
    assert!(next.flush(PATIENCE).completed);
    let all: Vec<Value> = ingest.events().into_iter().chain(sink.events()).collect();
    let mut ids: HashMap<usize, HashSet<String>> = HashMap::new();
    for e in &all {
        ids.entry(index(e)).or_default().insert(e["callId"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), CALLS, "every call delivered");
    assert!(ids.values().all(|set| set.len() == 1), "a copy carries its original's callId");
    assert!(all.len() - CALLS <= 500, "at most the batch in flight twice: {} copies", all.len() - CALLS);
    let second: Vec<usize> = sink.events().iter().map(index).collect();
    assert!(second.windows(2).all(|w| w[0] < w[1]), "the next start sends in call order");
}

/// An ingest down for a 30 000-call burst, with an outbox: memory holds `max_buffer`, the
/// outbox the rest; when the ingest is back, all 30 000 arrive, in order, each once.
#[test]
fn an_outage_through_a_burst_delivers_everything_in_order_once_back() {
    const CALLS: usize = 30_000;
    let dir = TempDir::new("outage");
    let addr = reserved_port();
    let config = Config::new("proj")
        .ingest_url(format!("http://{addr}"))
        .outbox_dir(&dir.0)
        .retry_backoff(Duration::from_millis(20), Duration::from_millis(200))
        .on_error(|_| {});
    let tracker = Tracker::new(config).unwrap();
    // In steps the channel holds: the hand-off is not what this test is about.
    for start in (0..CALLS).step_by(5_000) {
        for i in start..start + 5_000 {
            tracker.record(call(i));
        }
        wait_for("the outbox to take the step", || tracker.stats().on_disk as usize >= start + 5_000);
    }
    let stats = tracker.stats();
    assert_eq!((stats.sent, stats.dropped.total(), stats.pending), (0, 0, CALLS as u64), "{stats:?}");

    let ingest = IngestReceiver::start_on(addr);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed, "{report:?}");
    assert_eq!((report.stats.sent, report.stats.dropped.total(), report.stats.on_disk), (CALLS as u64, 0, 0));
    let events = ingest.events();
    assert_eq!(events.iter().map(index).collect::<Vec<_>>(), (0..CALLS).collect::<Vec<_>>(), "in order, once");
    let ids: HashSet<&str> = events.iter().map(|e| e["callId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), CALLS);
    tracker.shutdown(PATIENCE);
}

/// 200 clients × 10 calls against an ingest that takes 40 ms per POST and serves requests
/// concurrently: one payload per client on the wire, several POSTs at once (never more than the
/// flusher's bound), each client's events in order, every event delivered once.
#[test]
fn many_identities_are_sent_concurrently_each_in_its_own_payload() {
    const CLIENTS: usize = 200;
    const PER_CLIENT: usize = 10;
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::ok().delay(Duration::from_millis(40)));
    let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    let clients: Vec<Arc<ClientInfo>> =
        (0..CLIENTS).map(|c| Arc::new(ClientInfo::new(format!("client-{c}"), "1.0"))).collect();
    for round in 0..PER_CLIENT {
        for (c, client) in clients.iter().enumerate() {
            tracker.record(call_from(c * PER_CLIENT + round, client));
        }
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed, "{report:?}");
    assert_eq!(report.stats.sent, (CLIENTS * PER_CLIENT) as u64);

    let requests = ingest.requests();
    let mut by_client: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for r in &requests {
        let payload = r.json().unwrap();
        let name = payload["identity"]["client"].as_str().unwrap_or_default().to_owned();
        for e in payload["events"].as_array().unwrap() {
            // Each payload names the client of every event it carries.
            let c: usize = name.trim_start_matches("client-").split('/').next().unwrap().parse().unwrap();
            assert_eq!(index(e) / PER_CLIENT, c, "{name}");
            by_client.entry(name.clone()).or_default().push(index(e));
        }
    }
    assert_eq!(by_client.len(), CLIENTS);
    for (client, got) in &by_client {
        assert_eq!(got.len(), PER_CLIENT, "{client}");
        assert!(got.windows(2).all(|w| w[0] < w[1]), "{client} in order: {got:?}");
    }
    // Requests overlapped, and never more than the bound.
    let most = requests
        .iter()
        .map(|r| {
            requests.iter().filter(|o| o.received_at <= r.received_at && o.answered_at > Some(r.received_at)).count()
        })
        .max()
        .unwrap();
    assert!(most > 1, "the POSTs of distinct clients overlap");
    assert!(most <= 8, "at most the flusher's senders at once: {most}");
}

/// Drops are told with their count: a rejected batch, and the buffer overflowing without an
/// outbox, say how many events they cost.
#[test]
fn every_drop_diagnostic_carries_its_count() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::status(422));
    let (config, seen) =
        collecting(Config::new("proj").ingest_url(ingest.url()).flush_threshold(7).max_batch_events(7));
    let tracker = Tracker::new(config).unwrap();
    for i in 0..7 {
        tracker.record(call(i));
    }
    let report = tracker.flush(PATIENCE);
    assert_eq!(report.stats.dropped.rejected, 7, "{report:?}");
    let said = message(&seen, DiagnosticKind::Rejected).expect("a Rejected diagnostic");
    assert!(said.contains("refused 7 event(s)"), "{said}");
    tracker.shutdown(PATIENCE);

    let addr = reserved_port();
    let (config, seen) = collecting(
        Config::new("proj")
            .ingest_url(format!("http://{addr}"))
            .max_buffer(5)
            .retry_backoff(Duration::from_secs(30), Duration::from_secs(30)),
    );
    let tracker = Tracker::new(config).unwrap();
    for i in 0..12 {
        tracker.record(call(i));
    }
    wait_for("the overflow", || tracker.stats().dropped.buffer_overflow > 0);
    let said = message(&seen, DiagnosticKind::BufferOverflow).expect("a BufferOverflow diagnostic");
    let counted = tracker.stats().dropped.buffer_overflow;
    assert!(said.contains("dropped the ") && said.chars().any(|c| c.is_ascii_digit()), "{said}");
    assert!(counted >= 1);
    let report = tracker.shutdown(Duration::from_millis(100));
    assert_invariant(&report.stats);
    // What was neither sent nor dropped for overflow is counted unsent, and told.
    assert_eq!(report.stats.dropped.buffer_overflow + report.stats.dropped.unsent + report.stats.pending, 12);
    let said = message(&seen, DiagnosticKind::ShutdownTimeout).expect("a ShutdownTimeout diagnostic");
    assert!(said.contains(&format!("{} event(s)", report.stats.dropped.unsent)), "{said}");
}
