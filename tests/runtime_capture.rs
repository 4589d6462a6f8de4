//! What an event holds, seen through the in-memory sink: per-call identity from the `identify`
//! callback, optional keys, and the static identity.

use mcpeye::testing::MemorySink;
use mcpeye::{
    CallIdentity, CallOutcome, CallRecord, ClientInfo, Config, Diagnostic, DiagnosticKind, Identity, IntentSource,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

fn call(tool: &str, arguments: Value) -> CallRecord {
    let result = json!({"content": [{"type": "text", "text": "ok"}]});
    let mut record = CallRecord::new(tool.to_string(), arguments, CallOutcome::Success { result });
    record.timestamp_ms = 1_796_032_847_292;
    record.duration = Duration::from_millis(12);
    record
}

#[test]
fn the_memory_sink_sees_the_wire_event() {
    let (tracker, sink) = MemorySink::new();
    let mut failed = call("search", json!({"q": "x"}));
    failed.outcome = CallOutcome::error("boom");
    failed.intent = Some(("  why  ".into(), IntentSource::Native));
    tracker.record(failed);
    assert!(tracker.flush(PATIENCE).completed);
    let events = sink.events();
    assert_eq!(events.len(), 1);
    let e = &events[0];
    let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "callId",
            "toolName",
            "arguments",
            "isError",
            "timestamp",
            "durationMs",
            "errorMessage",
            "intent",
            "intentSource"
        ]
    );
    assert_eq!(e["intent"], "  why  ");
    assert_eq!(e["intentSource"], "native");
    assert_eq!(e["timestamp"], 1_796_032_847_292u64);
    assert_eq!(e["durationMs"], 12);
    let id = e["callId"].as_str().unwrap();
    let parsed = uuid::Uuid::parse_str(id).unwrap();
    assert_eq!(parsed.get_version_num(), 4);
    assert_eq!(id, parsed.hyphenated().to_string());
    assert_eq!(sink.payloads()[0]["projectId"], "test-project");
}

#[test]
fn identify_gives_each_call_its_user() {
    let config = Config::new("proj").identify(|r| {
        let (tool, args) = (r.tool_name(), r.arguments());
        if tool == "anonymous" {
            return None;
        }
        Some(CallIdentity::new().user_id(args.get("account").cloned()).user_email(format!("  {tool}@example.com  ")))
    });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    tracker.record(call("orders", json!({"account": 42})));
    tracker.record(call("anonymous", json!({"account": 7})));
    tracker.record(call("blank", json!({"account": "   "})));
    tracker.record(call("long", json!({"account": "x".repeat(300)})));
    assert!(tracker.flush(PATIENCE).completed);
    let events = sink.events();
    assert_eq!(events[0]["userId"], "42");
    assert_eq!(events[0]["userEmail"], "orders@example.com");
    assert!(events[1].get("userId").is_none() && events[1].get("userEmail").is_none());
    assert!(events[2].get("userId").is_none());
    assert_eq!(events[3]["userId"].as_str().unwrap().len(), 256);
}

#[test]
fn a_panicking_identify_gives_no_identity_and_one_diagnostic() {
    let seen: Arc<Mutex<Vec<Diagnostic>>> = Arc::default();
    let s = seen.clone();
    let config = Config::new("proj")
        .identify(
            |r| if r.tool_name() == "bad" { panic!("identify bug") } else { Some(CallIdentity::new().user_id(1)) },
        )
        .on_error(move |d| s.lock().unwrap().push(d.clone()));
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    tracker.record(call("bad", json!({})));
    tracker.record(call("bad", json!({})));
    tracker.record(call("good", json!({})));
    assert!(tracker.flush(PATIENCE).completed);
    let events = sink.events();
    assert_eq!(events.len(), 3);
    assert!(events[0].get("userId").is_none() && events[1].get("userId").is_none());
    assert_eq!(events[2]["userId"], "1");
    let kinds: Vec<DiagnosticKind> = seen.lock().unwrap().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::IdentifyPanicked]);
}

#[test]
fn a_panicking_on_error_is_swallowed() {
    let config = Config::new("proj").on_error(|_| panic!("on_error bug"));
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    tracker.record(call("", json!({})));
    tracker.record(call("fine", json!({})));
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!((report.stats.sent, report.stats.dropped.invalid), (1, 1));
    assert_eq!(sink.events().len(), 1);
}

#[test]
fn static_identity_fills_what_the_client_does_not_say() {
    let config = Config::new("proj").identity(Identity::new().user_email("ops@example.com").client("mine/2"));
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    // The call's own client wins over the configured one; a call without one keeps the configured.
    let mut from_claude = call("a", json!({}));
    from_claude.client = Some(Arc::new(ClientInfo::new("claude-desktop", "1.0")));
    tracker.record(from_claude);
    tracker.record(call("b", json!({})));
    assert!(tracker.flush(PATIENCE).completed);
    // One payload per identity, sent side by side: they may arrive in either order.
    let mut identities: Vec<Value> = sink.payloads().iter().map(|p| p["identity"].clone()).collect();
    identities.sort_by_key(|i| i["client"].as_str().map(str::to_owned));
    assert_eq!(
        identities,
        [
            json!({"userEmail": "ops@example.com", "client": "claude-desktop/1.0"}),
            json!({"userEmail": "ops@example.com", "client": "mine/2"})
        ]
    );

    let (tracker, sink) = MemorySink::new();
    let mut from_cursor = call("a", json!({}));
    from_cursor.client = Some(Arc::new(ClientInfo::new("cursor", "")));
    tracker.record(from_cursor);
    assert!(tracker.flush(PATIENCE).completed);
    assert_eq!(sink.payloads()[0]["identity"], json!({"client": "cursor"}));
}

/// Calls of three clients (and some with none) interleaved: every payload names one client and
/// holds only that client's events, and none is lost or duplicated.
#[test]
fn every_event_is_sent_under_its_own_clients_identity() {
    let config = Config::new("proj").identity(Identity::new().server_version("9")).max_batch_events(7);
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    let clients: Vec<Option<Arc<ClientInfo>>> = vec![
        Some(Arc::new(ClientInfo::new("alpha", "1"))),
        Some(Arc::new(ClientInfo::new("beta", "2").with_protocol_version("2026-07-28"))),
        None,
        Some(Arc::new(ClientInfo::new("gamma", ""))),
    ];
    let labels = ["alpha/1", "beta/2", "", "gamma"];
    for i in 0..200 {
        let k = (i * 7 + i / 3) % clients.len();
        // The tool name says which client called: the wire event itself carries no client.
        let mut record = call(&format!("t_{}", if labels[k].is_empty() { "none" } else { labels[k] }), json!({}));
        record.client = clients[k].clone();
        tracker.record(record);
    }
    assert!(tracker.flush(PATIENCE).completed);
    let mut per_client = std::collections::BTreeMap::<String, usize>::new();
    for payload in sink.payloads() {
        assert_eq!(payload["identity"]["serverVersion"], "9");
        let client = payload["identity"]["client"].as_str().unwrap_or("none").to_owned();
        let events = payload["events"].as_array().unwrap();
        assert!(!events.is_empty() && events.len() <= 7);
        for e in events {
            assert_eq!(e["toolName"], format!("t_{client}"), "an event under another client's identity");
        }
        *per_client.entry(client).or_default() += events.len();
    }
    let expected = (0..200).fold(std::collections::BTreeMap::<String, usize>::new(), |mut m, i| {
        let k = (i * 7 + i / 3) % clients.len();
        *m.entry(if labels[k].is_empty() { "none".to_owned() } else { labels[k].to_owned() }).or_default() += 1;
        m
    });
    assert_eq!(per_client, expected);
    assert_eq!(tracker.stats().sent, 200);
}

#[test]
fn capture_missing_capabilities_follows_the_config() {
    let (tracker, _) = MemorySink::new();
    assert!(tracker.capture_missing_capabilities());
    let (tracker, _) = MemorySink::with_config(Config::new("p").capture_missing_capabilities(false)).unwrap();
    assert!(!tracker.capture_missing_capabilities());
}

#[test]
fn start_up_diagnostics_name_the_default_url_and_clear_text() {
    let collect = |config: Config| {
        let seen: Arc<Mutex<Vec<Diagnostic>>> = Arc::default();
        let s = seen.clone();
        let tracker = mcpeye::Tracker::new(config.on_error(move |d| s.lock().unwrap().push(d.clone()))).unwrap();
        tracker.shutdown(Duration::ZERO);
        let kinds: Vec<DiagnosticKind> = seen.lock().unwrap().iter().map(|d| d.kind).collect();
        (kinds, seen)
    };
    let (kinds, seen) = collect(Config::new("p"));
    assert_eq!(kinds, [DiagnosticKind::DefaultIngestUrl]);
    assert!(seen.lock().unwrap()[0].message.contains("http://localhost:3001"));
    let (kinds, _) = collect(Config::new("p").ingest_url("http://mcpeye.example.com/"));
    assert_eq!(kinds, [DiagnosticKind::InsecureIngestUrl]);
    let (kinds, _) = collect(Config::new("p").ingest_url("https://mcpeye.example.com/"));
    assert!(kinds.is_empty());
}
