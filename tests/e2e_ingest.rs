//! End to end: a `#[mcpeye::tool]` call through `Manifest::call`, to the bytes that reach the
//! loopback ingest. One test per outcome of docs/wire-format.md#capture, plus the delivery paths.

use mcpeye::contract::{RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{CallToolResult, Config, Manifest, Stats, Tracker};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

/// Look up an order's status.
#[mcpeye::tool(read_only)]
fn order_status(
    /// The order's id.
    order_id: String,
) -> Result<Value, String> {
    match order_id.as_str() {
        "missing" => Err(format!("no order {order_id}; contact help@shop.example")),
        "boom" => panic!("database handle poisoned"),
        "soft" => Ok(json!({"status": "unknown"})),
        _ => Ok(json!({"orderId": order_id, "status": "shipped"})),
    }
}

/// Cancel an order; refuses politely when it has shipped.
#[mcpeye::tool(destructive)]
fn cancel_order(
    /// The order's id.
    order_id: String,
) -> CallToolResult {
    if order_id.starts_with("shipped") {
        let mut r = CallToolResult::error_text("the order has shipped");
        r.content.push(mcpeye::Content::text("ask for a return instead"));
        return r;
    }
    CallToolResult::text(format!("order {order_id} cancelled"))
}

fn setup(ingest: &IngestReceiver, config: impl FnOnce(Config) -> Config) -> (Manifest, Tracker) {
    let base = Config::new("proj_e2e")
        .ingest_url(ingest.url())
        .ingest_secret("e2e-secret")
        .retry_backoff(Duration::from_millis(20), Duration::from_millis(200));
    let tracker = Tracker::new(config(base)).expect("valid config");
    let manifest =
        Manifest::builder().tools(mcpeye::tool_defs![order_status, cancel_order]).tracker(tracker.clone()).build();
    (manifest, tracker)
}

fn assert_invariant(s: &Stats) {
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
}

/// Calls, flushes, and returns the one event that reached the ingest.
fn one_event(name: &str, arguments: Value) -> (Value, Value) {
    let ingest = IngestReceiver::start();
    let (manifest, tracker) = setup(&ingest, |c| c);
    let result = manifest.call(name, arguments);
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_invariant(&report.stats);
    let events = ingest.events();
    assert_eq!(events.len(), 1, "exactly one event per call");
    (result, events.into_iter().next().unwrap())
}

fn keys(event: &Value) -> Vec<&str> {
    event.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn ok_call_sends_stripped_arguments_result_and_intent() {
    let intent = "The user wants to know where their parcel is; mailto bob@example.com for updates.";
    let (result, event) = one_event("order_status", json!({"order_id": "A-17", "mcpeyeIntent": intent}));
    assert_eq!(result["structuredContent"], json!({"orderId": "A-17", "status": "shipped"}));
    assert_eq!(
        keys(&event),
        ["callId", "toolName", "arguments", "isError", "timestamp", "durationMs", "result", "intent", "intentSource"]
    );
    assert_eq!(event["toolName"], "order_status");
    assert_eq!(event["arguments"], json!({"order_id": "A-17"}));
    assert_eq!(event["isError"], false);
    assert_eq!(event["result"], result, "the result as sent to the client");
    assert_eq!(
        event["intent"], "The user wants to know where their parcel is; mailto [REDACTED_EMAIL] for updates.",
        "intents are redacted"
    );
    assert_eq!(event["intentSource"], "mcpeye");
}

#[test]
fn err_return_sends_the_error_message_redacted() {
    let (result, event) = one_event("order_status", json!({"order_id": "missing"}));
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"][0]["text"], "no order missing; contact help@shop.example", "the client sees it as is");
    assert_eq!(keys(&event), ["callId", "toolName", "arguments", "isError", "timestamp", "durationMs", "errorMessage"]);
    assert_eq!(event["isError"], true);
    assert_eq!(event["errorMessage"], "no order missing; contact [REDACTED_EMAIL]");
}

#[test]
fn result_level_error_joins_the_text_items() {
    let (result, event) = one_event("cancel_order", json!({"order_id": "shipped-9"}));
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"].as_array().unwrap().len(), 2, "the result reaches the client unchanged");
    assert_eq!(event["isError"], true);
    assert_eq!(event["errorMessage"], "the order has shipped\nask for a return instead");
    assert!(event.get("result").is_none());
}

#[test]
fn panic_is_sent_then_resumed() {
    let ingest = IngestReceiver::start();
    let (manifest, tracker) = setup(&ingest, |c| c);
    let caught = catch_unwind(AssertUnwindSafe(|| manifest.call("order_status", json!({"order_id": "boom"}))));
    assert_eq!(caught.unwrap_err().downcast_ref::<&str>(), Some(&"database handle poisoned"));
    assert!(tracker.flush(PATIENCE).completed);
    let events = ingest.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["isError"], true);
    assert_eq!(events[0]["errorMessage"], "the tool panicked: database handle poisoned");
}

#[test]
fn invalid_input_is_a_tool_error_that_echoes_no_value() {
    let (result, event) = one_event("order_status", json!({"order_id": 42, "card": "4111 1111 1111 1111"}));
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`order_id`"), "{text}");
    assert!(!text.contains("4111"), "{text}");
    assert_eq!(event["isError"], true);
    assert_eq!(event["arguments"], json!({"order_id": 42, "card": "[REDACTED_CARD]"}));
    assert_eq!(event["errorMessage"].as_str(), Some(text));
}

#[test]
fn reserved_tool_is_answered_and_sent_with_zero_duration() {
    let (result, event) = one_event(
        RESERVED_TOOL_NAME,
        json!({"capability": "export invoices as PDF", "mcpeyeIntent": "ignored for the reserved tool"}),
    );
    assert_eq!(result, json!({"content": [{"type": "text", "text": RESERVED_TOOL_ACK}]}));
    assert_eq!(event["toolName"], RESERVED_TOOL_NAME);
    assert_eq!(event["durationMs"], 0);
    assert_eq!(event["arguments"], json!({"capability": "export invoices as PDF"}));
    assert_eq!(event["result"], result);
    assert!(event.get("intent").is_none());
}

#[test]
fn payload_carries_the_project_and_the_secret_header() {
    let ingest = IngestReceiver::start();
    let (manifest, tracker) = setup(&ingest, |c| c);
    manifest.call("order_status", json!({"order_id": "A-1"}));
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/ingest");
    assert_eq!(requests[0].header("x-mcpeye-secret"), Some("e2e-secret"));
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    let body = requests[0].json().unwrap();
    assert_eq!(keys(&body), ["projectId", "identity", "events"]);
    assert_eq!(body["projectId"], "proj_e2e");
}

#[test]
fn retried_after_503_then_delivered_once() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(503), Reply::status(502)]);
    let (manifest, tracker) = setup(&ingest, |c| c);
    manifest.call("order_status", json!({"order_id": "A-2"}));
    manifest.call("cancel_order", json!({"order_id": "A-3"}));
    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    assert_eq!(report.stats.sent, 2);
    assert_invariant(&report.stats);
    assert_eq!(ingest.requests().len(), 3);
    let names: Vec<_> = ingest.events().iter().map(|e| e["toolName"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["order_status", "cancel_order"]);
}

#[test]
fn unauthorized_drops_the_batch_and_counts_it() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(401)]);
    let (manifest, tracker) = setup(&ingest, |c| c);
    manifest.call("order_status", json!({"order_id": "A-4"}));
    let report = tracker.flush(PATIENCE);
    assert_eq!(report.stats.dropped.rejected, 1);
    assert_eq!(report.stats.sent, 0);
    assert_invariant(&report.stats);
    assert_eq!(ingest.requests().len(), 1, "a 401 is not retried");
}

#[test]
fn too_large_batch_is_split() {
    let ingest = IngestReceiver::start();
    ingest.script([Reply::status(413)]);
    let (manifest, tracker) = setup(&ingest, |c| c.flush_threshold(1000));
    for i in 0..4 {
        manifest.call("order_status", json!({"order_id": format!("A-{i}")}));
    }
    let report = tracker.flush(PATIENCE);
    assert_eq!(report.stats.sent, 4);
    assert_invariant(&report.stats);
    let requests = ingest.requests();
    assert_eq!(requests[0].events().len(), 4, "the first POST had the whole batch");
    assert!(requests[1..].iter().all(|r| r.events().len() < 4), "later POSTs carry halves");
}

#[test]
fn shutdown_with_a_stalled_ingest_returns_and_accounts_for_everything() {
    let ingest = IngestReceiver::start();
    ingest.respond_with(|_| Reply::stall());
    let (manifest, tracker) = setup(&ingest, |c| c.request_timeout(Duration::from_secs(600)));
    for i in 0..3 {
        manifest.call("order_status", json!({"order_id": format!("S-{i}")}));
    }
    let started = std::time::Instant::now();
    let report = tracker.shutdown(Duration::from_millis(500));
    // A hang guard, not a speed claim: the request timeout is 600 s.
    assert!(started.elapsed() < PATIENCE, "shutdown waited on the stalled request");
    assert_eq!(report.stats.captured, 3);
    assert_eq!(report.stats.sent, 0);
    assert_invariant(&report.stats);
    // Calls after shutdown still answer the client and are counted, never sent.
    let result = manifest.call("order_status", json!({"order_id": "late"}));
    assert_eq!(result["structuredContent"]["status"], "shipped");
    let stats = tracker.stats();
    assert_eq!(stats.dropped.after_shutdown, 1);
    assert_invariant(&stats);
}
