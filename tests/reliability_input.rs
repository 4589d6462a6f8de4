//! Bad input to the dispatcher and to the MCP session: every bad call is a clear tool error
//! with exactly one recorded event, never a panic, and never echoes the offending value in the
//! result text or the recorded `errorMessage`; garbage JSON-RPC lines to a manifest served by
//! rmcp get a valid JSON-RPC error or nothing.

use mcpeye::contract::{markers, MAX_TEXT_BYTES, RESERVED_TOOL_NAME, TRUNCATED_SUFFIX};
use mcpeye::testing::MemorySink;
use mcpeye::{CallOutcome, CallRecord, Config, Manifest, Tracker};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(60);

/// A value that must never be echoed back.
const MARK: &str = "Zq7-never-echo-41";

/// Look products up by free text.
#[mcpeye::tool(read_only)]
fn search(
    /// Words to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
) -> String {
    format!("{} result(s) for a {}-byte query", limit.unwrap_or(3), query.len())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    /// Street and number.
    street: String,
    /// Postal code.
    zip: u32,
}

/// Save a contact.
#[mcpeye::tool]
fn save_contact(
    /// The contact's name.
    name: String,
    /// Where they live.
    address: Address,
    /// Labels.
    tags: Vec<String>,
) -> String {
    format!("saved {} ({} tags, zip {})", name.len(), tags.len(), address.zip + address.street.len() as u32)
}

/// Store any JSON document.
#[mcpeye::tool]
fn store(
    /// The document.
    doc: Value,
) -> String {
    format!("stored a {}", if doc.is_object() { "object" } else { "value" })
}

type Records = Arc<Mutex<Vec<CallRecord>>>;

fn manifest_with(tracker: Tracker) -> Manifest {
    Manifest::builder().tools(mcpeye::tool_defs![search, save_contact, store]).tracker(tracker).build()
}

fn recording() -> (Manifest, Records) {
    let records: Records = Arc::default();
    let r = records.clone();
    (manifest_with(Tracker::from_fn(move |rec| r.lock().unwrap().push(rec))), records)
}

/// `depth` arrays around `leaf`, built without recursion.
fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
}

/// `{key: value}` (`json!` would serialise `value`, recursively).
fn obj(key: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    Value::Object(m)
}

/// The nesting depth of a value (root = 0), without recursion.
fn depth_of(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn text_of(out: &Value) -> String {
    out["content"].as_array().expect("content").iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// Calls `tool` with `args`, expects a tool error that says something, exactly one error record,
/// and `secret` neither in the answer nor in the record's message. Returns the answer's text.
fn expect_tool_error(m: &Manifest, records: &Records, tool: &str, args: Value, secret: &str) -> String {
    let out = m.call(tool, args);
    assert_eq!(out["isError"], true, "{tool}: {out}");
    let text = text_of(&out);
    assert!(!text.trim().is_empty(), "{tool}: an error must say why");
    assert!(!text.contains(secret), "{tool}: the answer echoes the value: {text}");
    let mut recs = std::mem::take(&mut *records.lock().unwrap());
    assert_eq!(recs.len(), 1, "{tool}: exactly one record per call");
    let rec = recs.pop().unwrap();
    assert!(rec.is_error() && rec.result().is_none());
    let msg = rec.error_message().expect("an errorMessage");
    assert!(!msg.contains(secret), "{tool}: the record echoes the value: {msg}");
    assert!(rec.arguments.is_object());
    mcpeye::testing::drop_deep(rec.arguments);
    text
}

#[test]
fn non_object_arguments_are_a_tool_error() {
    let (m, records) = recording();
    for args in [json!([MARK]), json!(MARK), json!(918_273_645), json!(true), json!([{"query": MARK}])] {
        let secret = if args.is_number() { "918273645" } else { MARK };
        let text = expect_tool_error(&m, &records, "search", args, secret);
        assert!(text.contains("object"), "{text}");
    }
    // MCP lets a client omit `arguments`: `null` is `{}`, so only the missing field is reported.
    let text = expect_tool_error(&m, &records, "search", Value::Null, MARK);
    assert!(text.contains("query"), "{text}");
}

#[test]
fn wrong_types_are_named_by_path_without_the_value() {
    let (m, records) = recording();
    let text = expect_tool_error(&m, &records, "search", json!({"query": 918_273_645}), "918273645");
    assert!(text.contains("query"), "{text}");
    let text = expect_tool_error(&m, &records, "search", json!({"query": "ok", "limit": MARK}), MARK);
    assert!(text.contains("limit"), "{text}");
    expect_tool_error(&m, &records, "search", json!({"query": "ok", "limit": -5}), "-5");
    let args = json!({"name": MARK, "address": {"street": 918_273_645, "zip": MARK}, "tags": [MARK, 1]});
    let text = expect_tool_error(&m, &records, "save_contact", args, MARK);
    assert!(text.contains("address") && text.contains("zip"), "{text}");
    assert!(!text.contains("918273645"), "{text}");
}

#[test]
fn missing_and_unknown_fields_are_a_tool_error() {
    let (m, records) = recording();
    let text = expect_tool_error(&m, &records, "search", json!({}), MARK);
    assert!(text.contains("query"), "{text}");
    let text = expect_tool_error(&m, &records, "save_contact", json!({"name": MARK}), MARK);
    assert!(text.contains("address") && text.contains("tags"), "{text}");
    expect_tool_error(&m, &records, "search", json!({"query": "ok", "colour": MARK}), MARK);
    let args = json!({"name": "a", "address": {"street": "s", "zip": 1}, "tags": [], "extra": [MARK]});
    expect_tool_error(&m, &records, "save_contact", args, MARK);
}

#[test]
fn nesting_ten_thousand_deep_is_refused_without_recursion() {
    let (m, records) = recording();
    // A `Value` parameter would deserialise this recursively; the dispatcher refuses it first.
    let args = obj("doc", nested(10_000, json!(MARK)));
    let text = expect_tool_error(&m, &records, "store", args, MARK);
    assert!(text.contains("deep"), "{text}");
    expect_tool_error(&m, &records, "search", obj("query", nested(10_000, json!(MARK))), MARK);
    // Exactly what serde_json accepts from text (128 levels with the root) still reaches the tool.
    let ok = m.call("store", obj("doc", nested(126, json!(1))));
    assert_eq!(ok["isError"], Value::Null, "{ok}");
    let too_deep = m.call("store", obj("doc", nested(127, json!(1))));
    assert_eq!(too_deep["isError"], true, "{too_deep}");
    let text = r#"{"doc":"#.to_owned() + &"[".repeat(126) + &"]".repeat(126) + "}";
    let parsed: Value = serde_json::from_str(&text).expect("serde_json parses 127 levels");
    assert_eq!(m.call("store", parsed)["isError"], Value::Null);
    for r in std::mem::take(&mut *records.lock().unwrap()) {
        mcpeye::testing::drop_deep(r.arguments);
    }
}

#[test]
fn deep_values_reach_the_wire_capped_with_redaction_on_or_off() {
    for redact in [true, false] {
        let (tracker, sink) = MemorySink::with_config(Config::new("p").redact(redact)).unwrap();
        let m = manifest_with(tracker.clone());
        m.call("store", obj("doc", nested(10_000, json!(MARK))));
        // A tool may also return a deep value: the recorded result is capped the same way.
        let result = obj("structuredContent", nested(10_000, json!(1)));
        let mut record = CallRecord::new("deep_result", json!({}), CallOutcome::Success { result });
        record.timestamp_ms = 0;
        tracker.record(record);
        let report = tracker.flush(PATIENCE);
        assert!(report.completed, "redact={redact}: {report:?}");
        assert_eq!((report.stats.sent, report.stats.dropped.total()), (2, 0), "redact={redact}");
        let events = sink.events();
        let args = &events[0]["arguments"];
        assert!(depth_of(args) <= 64, "redact={redact}");
        assert!(args.to_string().contains(markers::TOO_DEEP), "redact={redact}: {args}");
        assert!(!args.to_string().contains(MARK));
        assert!(events[1]["result"].to_string().contains(markers::TOO_DEEP), "redact={redact}");
    }
}

#[test]
fn a_ten_megabyte_string_is_handled_and_capped() {
    let (m, records) = recording();
    let big = MARK.repeat(10 * 1024 * 1024 / MARK.len());
    expect_tool_error(&m, &records, "search", json!({"query": "ok", "limit": big.clone()}), MARK);
    // Where a string is expected it is valid; on the wire it becomes the truncation marker.
    let (tracker, sink) = MemorySink::new();
    let m = manifest_with(tracker.clone());
    let out = m.call("search", json!({ "query": big }));
    assert_eq!(out["isError"], Value::Null, "{}", text_of(&out));
    assert!(tracker.flush(PATIENCE).completed);
    let event = &sink.events()[0];
    assert_eq!(event["arguments"]["[truncated]"], true, "the 10 MB argument is not capped");
    assert!(sink.bodies()[0].len() < 4096);
}

#[test]
fn odd_intents_never_fail_the_call() {
    let (tracker, sink) = MemorySink::new();
    let m = manifest_with(tracker.clone());
    let long = "why ".repeat(256 * 1024);
    for intent in [json!(42), json!("   \n\t "), json!(long), json!({"nested": MARK}), Value::Null] {
        let out = m.call("search", json!({"query": "mug", "mcpeyeIntent": intent}));
        assert_eq!(out["isError"], Value::Null, "{out}");
    }
    assert!(tracker.flush(PATIENCE).completed);
    let events = sink.events();
    assert_eq!(events.len(), 5);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["arguments"], json!({"query": "mug"}), "the intent is stripped from event {i}");
    }
    let with_intent: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e.get("intent").is_some()).map(|(i, _)| i).collect();
    assert_eq!(with_intent, [2], "only the string intent counts");
    let intent = events[2]["intent"].as_str().unwrap();
    assert_eq!(intent.len(), MAX_TEXT_BYTES);
    assert!(intent.ends_with(TRUNCATED_SUFFIX));
    assert!(!sink.bodies().iter().any(|b| String::from_utf8_lossy(b).contains(MARK)));
}

#[test]
fn unknown_tools_are_recorded_once_with_a_bounded_name() {
    let (m, records) = recording();
    let text = expect_tool_error(&m, &records, "nope", json!({"query": MARK}), MARK);
    assert!(text.contains("unknown tool") && text.contains("tools/list"), "{text}");
    let long = "x".repeat(1024 * 1024);
    let out = m.call(&long, json!({}));
    assert_eq!(out["isError"], true);
    assert!(text_of(&out).len() < 1024, "the answer repeats a 1 MB name");
    let rec = records.lock().unwrap().pop().unwrap();
    assert_eq!(rec.tool_name.chars().count(), 128);
    assert!(rec.error_message().unwrap().len() < 1024);
    // `try_call` answers with an `Err` (a JSON-RPC error) and records the call all the same.
    assert!(m.try_call("nope", json!({"mcpeyeIntent": "why"})).is_err());
    let recs = std::mem::take(&mut *records.lock().unwrap());
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].error_message(), Some("unknown tool `nope`"));
    assert_eq!(recs[0].intent.as_ref().map(|(i, _)| i.as_str()), Some("why"));
}

#[test]
fn the_reserved_tool_needs_a_capability() {
    let (m, records) = recording();
    for args in [
        json!({}),
        json!({"context": MARK}),
        json!({"capability": "   "}),
        json!({"capability": 918_273_645}),
        json!([MARK]),
    ] {
        let secret = if args.to_string().contains("918273645") { "918273645" } else { MARK };
        let text = expect_tool_error(&m, &records, RESERVED_TOOL_NAME, args, secret);
        assert!(text.contains("capability") || text.contains("object"), "{text}");
    }
}

/// A reply line must be one JSON-RPC 2.0 response: an id, and a result or a well-formed error.
fn assert_json_rpc(reply: &str) -> Value {
    let msg: Value = serde_json::from_str(reply).unwrap_or_else(|e| panic!("non-JSON reply {reply:?}: {e}"));
    let obj = msg.as_object().expect("an object");
    assert_eq!(obj.get("jsonrpc"), Some(&json!("2.0")), "{reply}");
    // rmcp 3.11 leaves the id out (JSON-RPC says null) of the error for a line it cannot read
    // as a message.
    let id = obj.get("id").unwrap_or(&Value::Null);
    assert!(id.is_null() || id.is_string() || id.is_number(), "{reply}");
    assert!(obj.contains_key("id") || obj.contains_key("error"), "a result without an id: {reply}");
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64() && e["message"].is_string(), "{reply}");
        }
        _ => panic!("neither result nor error exactly once: {reply}"),
    }
    msg
}

/// `lines` written to a manifest served by rmcp's line transport (the one `stdio()` uses) over
/// an in-process pipe, each followed by a newline; returns every line the server wrote until it
/// answered the request with id `last_id`.
async fn exchange(lines: Vec<String>, last_id: u64) -> Vec<String> {
    use rmcp::ServiceExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (m, _) = recording();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = mcpeye::rmcp::ManifestServer::new(Arc::new(m)).serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client_io);
    // Written concurrently with the reading below: a 2 MB line does not fit the pipe.
    tokio::spawn(async move {
        for line in lines {
            write.write_all(line.as_bytes()).await.unwrap();
            write.write_all(b"\n").await.unwrap();
        }
        write.flush().await.unwrap();
        write // dropping the writer would close the server's input
    });
    let mut replies = Vec::new();
    let mut read = tokio::io::BufReader::new(read).lines();
    let done = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = read.next_line().await.unwrap() {
            let last = assert_json_rpc(&line)["id"] == last_id;
            replies.push(line);
            if last {
                return;
            }
        }
        panic!("the server closed the pipe");
    });
    done.await.unwrap_or_else(|_| panic!("no answer to request {last_id}"));
    replies
}

fn rpc_line(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A handshake-era `initialize` with id `id`, and the `initialized` notification.
fn handshake(id: u64) -> Vec<String> {
    let params =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    vec![rpc_line(id, "initialize", params), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into()]
}

/// Served through rmcp, a session that receives garbage answers each line with a JSON-RPC 2.0
/// error or nothing, and keeps serving.
#[tokio::test]
async fn garbage_json_rpc_lines_get_an_error_or_nothing() {
    let deep_text = "[".repeat(10_000) + &"]".repeat(10_000);
    let deep_params = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"#.to_owned() + &"[".repeat(5000);
    let huge = "x".repeat(2 * 1024 * 1024);
    let garbage: Vec<String> = vec![
        "".into(),
        "   ".into(),
        "{".into(),
        "}".into(),
        "null".into(),
        "[]".into(),
        "[1,2]".into(),
        r#""text""#.into(),
        "123".into(),
        "NaN".into(),
        "1e999".into(),
        "\u{0}\u{1}".into(),
        "\u{feff}{}".into(),
        "{}".into(),
        r#"{"jsonrpc":"2.0"}"#.into(),
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.into(),
        r#"{"id":{},"method":"ping"}"#.into(),
        r#"{"id":[1],"method":"ping"}"#.into(),
        r#"{"id":true,"method":"ping"}"#.into(),
        r#"{"id":null,"method":"ping"}"#.into(),
        r#"{"id":1.5,"method":"ping"}"#.into(),
        r#"{"id":1,"method":5}"#.into(),
        r#"{"id":1,"method":null}"#.into(),
        r#"{"id":1,"method":"tools/call"}"#.into(),
        r#"{"id":1,"method":"tools/call","params":"x"}"#.into(),
        r#"{"id":1,"method":"tools/call","params":{"name":5}}"#.into(),
        r#"{"id":1,"method":"tools/call","params":{"name":"search","arguments":"x"}}"#.into(),
        r#"{"id":1,"method":"tools/call","params":{"name":"search","arguments":[1]}}"#.into(),
        r#"{"id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":{"a":1}}}}"#.into(),
        r#"{"id":1,"method":"tools/call","params":{"name":"nope"}}"#.into(),
        r#"{"id":1,"method":"initialize","params":{"protocolVersion":5,"clientInfo":"x"}}"#.into(),
        r#"{"id":1,"method":"initialize","params":[1]}"#.into(),
        r#"{"id":1,"method":"tools/list","params":{"cursor":{}}}"#.into(),
        r#"{"id":1,"method":"ping"} trailing"#.into(),
        r#"{"id":1,"method":"ping","id":2}"#.into(),
        r#"{"id":1,"result":{}}"#.into(),
        r#"{"id":1,"error":{"code":1}}"#.into(),
        r#"{"method":"notifications/anything","params":{"x":1}}"#.into(),
        "{\"id\":1,\"method\":\"\u{fffd}\u{202e}\"}".into(),
        deep_text,
        deep_params,
        huge,
    ];
    let mut lines = handshake(100);
    lines.extend(garbage);
    // Still serving afterwards.
    lines.push(rpc_line(101, "ping", json!({})));
    lines.push(rpc_line(102, "tools/call", json!({"name": "search", "arguments": {"query": "mugs"}})));
    let replies = exchange(lines, 102).await;
    let by_id = |id: u64| {
        let found = replies.iter().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|m| m["id"] == id);
        found.unwrap_or_else(|| panic!("no reply to {id}: {replies:#?}"))
    };
    assert!(by_id(100)["result"]["serverInfo"].is_object());
    assert_eq!(by_id(101)["result"], json!({}));
    assert_eq!(by_id(102)["result"]["content"][0]["text"], "3 result(s) for a 4-byte query");
}

/// A tool error reached through rmcp does not echo the offending values.
#[tokio::test]
async fn session_tool_errors_do_not_echo_values() {
    let mut lines = handshake(1);
    let bad_search = json!({"query": 918_273_645, "limit": MARK});
    let bad_contact = json!({"name": MARK, "address": MARK, "tags": [MARK]});
    lines.push(rpc_line(2, "tools/call", json!({"name": "search", "arguments": bad_search})));
    lines.push(rpc_line(3, "tools/call", json!({"name": "save_contact", "arguments": bad_contact})));
    let replies = exchange(lines, 3).await;
    assert_eq!(replies.len(), 3, "{replies:#?}");
    for reply in &replies[1..] {
        let msg: Value = serde_json::from_str(reply).unwrap();
        assert_eq!(msg["result"]["isError"], true, "{reply}");
        assert!(!reply.contains(MARK) && !reply.contains("918273645"), "{reply}");
    }
}
