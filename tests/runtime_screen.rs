//! What leaves the flusher: `before_send` edits or drops events (and a panicking one drops the
//! event, counted, with one diagnostic), sampling keeps sessions whole and never the Intent Gap
//! out, and every captured event stays accounted for:
//! `captured == sent + dropped.total() + sampled_out + pending`.

use mcpeye::testing::MemorySink;
use mcpeye::{
    CallIdentity, CallOutcome, CallRecord, Config, Diagnostic, DiagnosticKind, ErrorReason, Stats, ToolError,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

fn ok(tool: &str, arguments: Value) -> CallRecord {
    CallRecord::new(tool.to_string(), arguments, CallOutcome::Success { result: json!({"content": []}) })
}

fn in_session(mut record: CallRecord, session: &str) -> CallRecord {
    record.session_id = Some(Arc::from(session));
    record
}

#[test]
fn before_send_edits_and_drops_events_after_redaction() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = seen.clone();
    let config = Config::new("test-project")
        .identify(|r| Some(CallIdentity::new().user_id(r.arguments().get("account")?.clone())))
        .before_send(move |mut event| {
            // It sees what the ingest would: redacted arguments, the error's reason.
            saw.lock().unwrap().push((event.arguments.clone(), event.outcome.error_type().map(str::to_owned)));
            if event.tool_name == "internal_healthcheck" {
                return None;
            }
            if let Some(user) = &event.user_id {
                event.user_id = Some(format!("hashed-{}", user.len()));
            }
            if let Some(args) = event.arguments.as_object_mut() {
                args.remove("address");
            }
            Some(event)
        });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    tracker.record(ok("search", json!({"account": "carol", "q": "mail a@b.com", "address": "1 Main St"})));
    tracker.record(ok("internal_healthcheck", json!({})));
    let mut failed = ok("refund", json!({"account": "dave"}));
    failed.outcome = CallOutcome::error_with_reason("no order", "unknown_order");
    tracker.record(failed);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);

    let events = sink.events();
    assert_eq!(events.iter().map(|e| e["toolName"].as_str().unwrap()).collect::<Vec<_>>(), ["search", "refund"]);
    assert_eq!(events[0]["arguments"], json!({"account": "carol", "q": "mail [REDACTED_EMAIL]"}));
    assert_eq!(events[0]["userId"], "hashed-5");
    // The reason reached before_send but not the wire: the payload keeps the contract's keys.
    assert_eq!(events[1]["errorMessage"], "no order");
    assert!(!events[1].to_string().contains("unknown_order"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0["q"], "mail [REDACTED_EMAIL]");
    assert_eq!(seen[2].1.as_deref(), Some("unknown_order"));

    let s = report.stats;
    assert_eq!((s.captured, s.sent, s.dropped.before_send, s.dropped.total()), (3, 2, 1, 1), "{s:?}");
    assert_invariant(&s);
}

/// `before_send` calls a cancelled or timed-out call failed, as the wire does (`isError: true`).
#[test]
fn before_send_sees_cancelled_and_timed_out_calls_as_failed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = seen.clone();
    let config = Config::new("test-project").before_send(move |event| {
        saw.lock().unwrap().push((event.tool_name.to_string(), event.is_error()));
        Some(event)
    });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    let outcomes = [
        ("fine", CallOutcome::Success { result: json!({"content": []}) }),
        ("failed", CallOutcome::error("boom")),
        ("cancelled", CallOutcome::cancelled(Some("user pressed stop"))),
        ("timed_out", CallOutcome::timed_out(Duration::from_millis(50))),
    ];
    for (tool, outcome) in outcomes {
        tracker.record(CallRecord::new(tool, json!({}), outcome));
    }
    assert!(tracker.flush(PATIENCE).completed);

    let on_wire: BTreeMap<String, bool> = sink
        .events()
        .iter()
        .map(|e| (e["toolName"].as_str().unwrap().to_owned(), e["isError"].as_bool().unwrap()))
        .collect();
    let seen: BTreeMap<String, bool> = seen.lock().unwrap().iter().cloned().collect();
    let expected: BTreeMap<String, bool> =
        [("fine", false), ("failed", true), ("cancelled", true), ("timed_out", true)]
            .into_iter()
            .map(|(t, e)| (t.to_owned(), e))
            .collect();
    assert_eq!(seen, expected);
    assert_eq!(on_wire, expected);
}

#[test]
fn a_panicking_before_send_drops_only_that_event_with_one_diagnostic() {
    let diagnostics = Arc::new(Mutex::new(Vec::<Diagnostic>::new()));
    let sink_d = diagnostics.clone();
    let config = Config::new("test-project")
        .on_error(move |d| sink_d.lock().unwrap().push(d.clone()))
        .before_send(|event| if event.tool_name.starts_with("boom") { panic!("before_send bug") } else { Some(event) });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    for tool in ["boom1", "fine", "boom2"] {
        tracker.record(ok(tool, json!({})));
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!(sink.events().len(), 1);
    assert_eq!(sink.events()[0]["toolName"], "fine");
    let s = report.stats;
    assert_eq!((s.sent, s.dropped.before_send_panicked, s.dropped.before_send), (1, 2, 0), "{s:?}");
    assert_invariant(&s);
    let kinds: Vec<DiagnosticKind> = diagnostics.lock().unwrap().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::BeforeSendPanicked]);
}

#[test]
fn sampling_keeps_whole_sessions_and_every_capability_request() {
    let (tracker, sink) = MemorySink::with_config(Config::new("test-project").sample_rate(0.3)).unwrap();
    let sessions: Vec<String> = (0..200).map(|i| format!("{i:032x}")).collect();
    for round in 0..5 {
        for s in &sessions {
            tracker.record(in_session(ok("search", json!({"session": s, "round": round})), s));
        }
    }
    for s in &sessions {
        let ask = ok("mcpeye_request_capability", json!({"capability": "export to PDF", "session": s}));
        tracker.record(in_session(ask, s));
    }
    for _ in 0..100 {
        tracker.record(ok("search", json!({"session": null})));
    }
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    let s = report.stats;
    assert_invariant(&s);
    assert_eq!(s.captured, 200 * 6 + 100);
    assert_eq!(s.sent + s.sampled_out, s.captured);

    let events = sink.events();
    // Every capability request arrives, whatever its session.
    assert_eq!(events.iter().filter(|e| e["toolName"] == "mcpeye_request_capability").count(), 200);
    // A session's calls are all there or all gone.
    let mut per_session: BTreeMap<String, usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e["toolName"] == "search") {
        if let Some(s) = e["arguments"]["session"].as_str() {
            *per_session.entry(s.to_owned()).or_default() += 1;
        }
    }
    assert!(per_session.values().all(|&n| n == 5), "{per_session:?}");
    let kept = per_session.len();
    assert!((30..=90).contains(&kept), "kept {kept} of 200 sessions at 0.3");
    // The same sessions are kept by another tracker (another replica).
    let (again, sink2) = MemorySink::with_config(Config::new("test-project").sample_rate(0.3)).unwrap();
    for s in &sessions {
        again.record(in_session(ok("search", json!({"session": s})), s));
    }
    again.flush(PATIENCE);
    let kept_again: BTreeSet<String> =
        sink2.events().iter().map(|e| e["arguments"]["session"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kept_again, per_session.keys().cloned().collect());
}

#[test]
fn sample_rate_out_of_range_is_a_config_error() {
    for rate in [-0.1, 1.5, f64::NAN] {
        let err = MemorySink::with_config(Config::new("p").sample_rate(rate)).unwrap_err();
        assert!(err.to_string().contains("sample_rate"), "{err}");
    }
}

#[derive(Debug)]
enum ShopError {
    OutOfStock(String),
    NeedsPermission,
}

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShopError::OutOfStock(item) => write!(f, "{item} is out of stock"),
            ShopError::NeedsPermission => f.write_str("ask the user first"),
        }
    }
}

impl ErrorReason for ShopError {
    fn reason(&self) -> &'static str {
        match self {
            ShopError::OutOfStock(_) => "out_of_stock",
            ShopError::NeedsPermission => "needs_user_permission",
        }
    }
}

/// Buy an item.
#[mcpeye::tool]
fn buy(
    /// The item.
    item: String,
) -> Result<String, ShopError> {
    match item.as_str() {
        "mug" => Err(ShopError::OutOfStock(item)),
        "knife" => Err(ShopError::NeedsPermission),
        _ => Ok(format!("bought {item}")),
    }
}

/// Look a product up.
#[mcpeye::tool]
fn lookup(
    /// The product.
    product: String,
) -> Result<String, ToolError> {
    Err(ToolError::new("unknown_product", format!("no product {product:?}")))
}

/// Fail plainly.
#[mcpeye::tool]
fn plain() -> Result<String, String> {
    Err("plain failure".into())
}

#[test]
fn error_reasons_are_counted_per_tool_and_never_sent() {
    let (tracker, sink) = MemorySink::new();
    let manifest =
        mcpeye::Manifest::builder().tools(mcpeye::tool_defs![buy, lookup, plain]).tracker(tracker.clone()).build();
    let answer = manifest.call("buy", json!({"item": "mug"}));
    assert_eq!(answer, json!({"content": [{"type": "text", "text": "mug is out of stock"}], "isError": true}));
    manifest.call("buy", json!({"item": "mug"}));
    manifest.call("buy", json!({"item": "knife"}));
    manifest.call("buy", json!({"item": "pen"}));
    manifest.call("buy", json!({"item": 3}));
    manifest.call("lookup", json!({"product": "x"}));
    manifest.call("plain", json!({}));
    manifest.call("nope", json!({}));
    let report = tracker.flush(PATIENCE);
    let reasons = &report.stats.error_reasons;
    let count = |tool: &str, reason: &str| reasons.get(tool).and_then(|r| r.get(reason)).copied();
    assert_eq!(count("buy", "out_of_stock"), Some(2));
    assert_eq!(count("buy", "needs_user_permission"), Some(1));
    assert_eq!(count("buy", "invalid_arguments"), Some(1));
    assert_eq!(count("lookup", "unknown_product"), Some(1));
    assert_eq!(count("plain", "tool_error"), Some(1));
    assert_eq!(count("nope", "unknown_tool"), Some(1));
    assert_eq!(reasons.values().map(|r| r.values().sum::<u64>()).sum::<u64>(), 7, "{reasons:?}");
    // The payload carries the message only, as docs/wire-format.md says.
    let events = sink.events();
    assert_eq!(events[0]["errorMessage"], "mug is out of stock");
    for e in &events {
        for reason in ["out_of_stock", "needs_user_permission", "unknown_product", "tool_error", "invalid_arguments"] {
            assert!(!e.to_string().contains(reason), "{e}");
        }
    }
}
