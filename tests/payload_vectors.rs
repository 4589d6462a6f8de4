//! Our bytes against the payloads the Python SDK sent for the same calls
//! (`tests/vectors/payload_examples.json`): the same calls go through a tracker to the
//! loopback ingest, and the received body must equal the vector's byte for byte once the
//! measured fields (`callId`, `timestamp`, `durationMs`) are taken from ours and the `null`
//! members of the Python results (an artefact of its MCP types, not the contract) are removed.
//! The trackers run with `redact_credentials(false)`, the switch for the siblings' bytes.

use mcpeye::contract::{RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
use mcpeye::testing::IngestReceiver;
use mcpeye::{CallIdentity, CallOutcome, CallRecord, Config, Identity, IntentSource};
use serde_json::{json, Value};
use std::time::Duration;

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/payload_examples.json");
const PATIENCE: Duration = Duration::from_secs(30);

fn scenario(name: &str) -> Value {
    let text = std::fs::read_to_string(VECTORS).unwrap_or_else(|e| {
        panic!("cannot read the test vector {VECTORS}: {e}; see tests/vectors/README.md for where it comes from")
    });
    let all: Vec<Value> = serde_json::from_str(&text).unwrap();
    all.into_iter().find(|s| s["scenario"] == name).unwrap_or_else(|| panic!("no scenario {name}"))
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

fn ok(tool: &str, arguments: Value, result: Value, intent: Option<&str>) -> CallRecord {
    let mut record = CallRecord::new(tool.to_string(), arguments, CallOutcome::Success { result });
    record.intent = intent.map(|i| (i.to_string(), IntentSource::Mcpeye));
    record.duration = Duration::from_millis(3);
    record
}

fn failed(tool: &str, arguments: Value, message: &str) -> CallRecord {
    let mut record = ok(tool, arguments, Value::Null, None);
    record.outcome = CallOutcome::error(message);
    record
}

/// Removes `null` members of objects, recursively.
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, m| !m.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// Sends `records` in one payload and compares what the ingest received with the scenario.
fn check(name: &str, config: Config, records: Vec<CallRecord>) {
    let vector = scenario(name);
    let ingest = IngestReceiver::start();
    // The siblings' bytes: without the credential layer beyond the contract (it would make
    // scenario B's `token=sk-…` a `[REDACTED_URL_CREDENTIAL]`).
    let tracker = mcpeye::Tracker::new(config.ingest_url(ingest.url()).redact_credentials(false)).unwrap();
    for r in records {
        tracker.record(r);
    }
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    assert_eq!(requests.len(), 1, "one payload");
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", vector["path"].as_str().unwrap()));

    // Headers of the contract: content-type always, the secret only when the vector has one.
    let vector_header = |h: &str| {
        vector["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0].as_str().unwrap().eq_ignore_ascii_case(h))
            .map(|p| p[1].as_str().unwrap())
    };
    for h in ["content-type", "x-mcpeye-secret"] {
        assert_eq!(request.header(h), vector_header(h), "header {h}");
    }

    let ours_text = String::from_utf8(request.body.clone()).expect("UTF-8 body");
    let ours: Value = serde_json::from_str(&ours_text).unwrap();
    let mut expected: Value = serde_json::from_str(vector["body_text"].as_str().unwrap()).unwrap();
    strip_nulls(&mut expected);
    let (ours_events, expected_events) =
        (ours["events"].as_array().unwrap(), expected["events"].as_array_mut().unwrap());
    assert_eq!(ours_events.len(), expected_events.len());
    for (o, e) in ours_events.iter().zip(expected_events.iter_mut()) {
        let id = o["callId"].as_str().expect("callId is a string");
        let uuid = uuid::Uuid::parse_str(id).expect("callId is a UUID");
        assert_eq!((uuid.get_version_num(), uuid.hyphenated().to_string()), (4, id.to_string()));
        assert!(o["timestamp"].is_u64() && o["durationMs"].is_u64());
        for k in ["callId", "timestamp", "durationMs"] {
            e[k] = o[k].clone();
        }
    }
    // Byte equality: same keys in the same order, same types and values, compact UTF-8.
    assert_eq!(ours_text, serde_json::to_string(&expected).unwrap());
}

#[test]
fn scenario_a_low_level_server_with_identity_and_secret() {
    let config = Config::new("proj_demo")
        .ingest_secret("s3cr3t-ingest")
        .identity(Identity::new().client("claude-desktop/1.0").server_version("1.2.3"))
        .identify(|_| Some(CallIdentity::new().user_id(42).user_email("carol@example.com")));
    let mut capability = ok(
        RESERVED_TOOL_NAME,
        json!({"capability": "export the report as a PDF", "context": "monthly report for erin@example.com"}),
        json!({"content": [{"type": "text", "text": RESERVED_TOOL_ACK}]}),
        None,
    );
    capability.duration = Duration::ZERO;
    check(
        "A_track_lowlevel_server",
        config,
        vec![
            ok(
                "search_orders",
                json!({"email": "dave@example.com", "limit": 5, "password": "hunter2"}),
                text_result("2 orders for dave@example.com"),
                Some(
                    "The user wants to review their recent orders to find a missing package; wanted to export as CSV \
                     but no export tool exists.",
                ),
            ),
            failed("flaky", json!({}), "rate limited; retry with key sk-ABCDEFGHIJKLMNOP1234"),
            failed("explode", json!({}), "db connection failed for admin@example.com"),
            capability,
        ],
    );
}

#[test]
fn scenario_b_wrapped_tools_without_identity_or_secret() {
    check(
        "B_wrap_tool",
        Config::new("proj_wrap"),
        vec![
            ok(
                "search",
                json!({"q": "weather in Paris"}),
                json!({"content": [{"type": "text", "text": "ok"}], "hits": 3}),
                Some("Planning a trip."),
            ),
            failed("failing", json!({"id": 7}), "not found\ntry support@example.com"),
            failed("boom", json!({}), "kaboom token=sk-live1234567890abcdef"),
        ],
    );
}
