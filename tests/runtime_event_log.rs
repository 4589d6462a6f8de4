//! The local event log (`Config::event_log`, docs/event-log.md) as the flusher writes it: each
//! event exactly as the wire got it (after redaction and `before_send`) with what the wire has
//! no key for (model, client, server version, the tool's descriptor hash), the tool list, the
//! other methods; the client's `aiInvocation` turn and texts, and the intent `infer_intent`
//! gives a call without one, in the log only; an unwritable
//! directory refused by `init`; its counts in `Stats`; and the report read back from two runs
//! of a server whose tool description changed.

mod common;

use common::rmcp::serve_and_connect;
use mcpeye::report::descriptor_hash;
use mcpeye::rmcp::ManifestServer;
use mcpeye::testing::MemorySink;
use mcpeye::{Config, ConfigError, Identity, Manifest, Origin, Tracker};
use mcpeye_report::ReportInput;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);
const AI: &str = "io.modelcontextprotocol/aiInvocation";

mod v1 {
    /// Search the catalogue.
    #[mcpeye::tool]
    pub fn search(
        /// Words to look for.
        query: String,
    ) -> Result<String, String> {
        if query == "fail" {
            Err("the index is rebuilding".to_string())
        } else {
            Ok(format!("3 results for {query}"))
        }
    }
}

mod v2 {
    /// Search the catalogue by free text, names and descriptions.
    #[mcpeye::tool]
    pub fn search(
        /// Words to look for.
        query: String,
    ) -> Result<String, String> {
        super::v1::search(query)
    }
}

/// Export the catalogue as CSV.
#[mcpeye::tool]
fn export() -> String {
    "sku,name".to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpeye-it-event-log-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn lines(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn of_kind<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

fn by(model: &str, reason: &str) -> Origin {
    let meta = json!({AI: {"model": {"name": model}, "invocationReason": {"text": reason}, "turnId": "t1"}});
    Origin::default().with_meta(meta.as_object().cloned().unwrap_or_else(Map::new))
}

fn tracker(dir: &Path, version: &str, config: Config) -> (Tracker, MemorySink) {
    let config = config.event_log(dir).identity(Identity::new().server_version(version).client("it/1.0"));
    MemorySink::with_config(config).unwrap()
}

#[test]
fn the_log_holds_each_event_as_the_wire_got_it_with_the_tool_list_and_what_the_wire_lacks() {
    let dir = temp_dir("wire");
    let (tracker, sink) = tracker(&dir, "1.0", Config::new("p"));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search, export]).tracker(tracker.clone()).build();
    manifest.call_from(
        &by("claude-sonnet-4", "Find mugs for carol@example.com."),
        "search",
        json!({"query": "mug carol@example.com"}),
    );
    manifest.call_from(&by("claude-sonnet-4", "Retry after the error."), "search", json!({"query": "fail"}));
    let report = tracker.shutdown(PATIENCE);
    assert!(report.completed, "{report:?}");

    let lines = lines(&dir);
    assert_eq!(lines[0]["kind"], "log");
    assert!(lines.iter().all(|l| l["v"] == 1), "{lines:?}");
    // The tool list the manifest serves, once, before its calls.
    let tools = of_kind(&lines, "tools");
    assert_eq!(tools.len(), 1, "{lines:?}");
    let listed = manifest.tools_list();
    let search = listed.as_array().unwrap().iter().find(|t| t["name"] == "search").unwrap();
    let names: Vec<&str> = tools[0]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"export") && names.contains(&"search"), "{names:?}");
    assert_eq!(tools[0]["serverVersion"], "1.0");

    // Each call: the wire's event, byte for byte the same JSON, redacted as the wire's.
    let calls = of_kind(&lines, "call");
    let sent = sink.events();
    assert_eq!((calls.len(), sent.len()), (2, 2));
    for (call, event) in calls.iter().zip(&sent) {
        assert_eq!(&call["event"], event);
        assert_eq!(call["callId"], event["callId"]);
        assert_eq!(call["tool"], "search");
        assert_eq!(call["toolHash"], descriptor_hash(search).as_str());
        assert_eq!(call["model"], "claude-sonnet-4");
        assert_eq!(call["serverVersion"], "1.0");
        assert_eq!(call["client"], "it/1.0");
    }
    let first = serde_json::to_string(&calls[0]["event"]).unwrap();
    assert!(!first.contains("carol@example.com") && first.contains("[REDACTED_EMAIL]"), "{first}");
    // The proposal's invocationReason is the call's intent, from the client (native).
    assert_eq!(calls[1]["event"]["intentSource"], "native");
    assert_eq!(calls[1]["event"]["intent"], "Retry after the error.");
    assert_eq!(calls[1]["event"]["isError"], true);

    let stats = tracker.stats();
    assert_eq!((stats.event_log.written, stats.event_log.lost, stats.event_log.failures), (3, 0, 0));
    assert!(stats.to_string().ends_with("; event log: 3 records written, 0 lost"), "{stats}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An origin with the proposal's `aiInvocation` objects: a reason, the user's words, a turn.
fn invoked(reason: Option<&str>, user_intent: &str, turn: &str) -> Origin {
    let mut invocation = json!({"userIntent": {"text": user_intent, "redacted": false}, "turnId": turn});
    if let Some(reason) = reason {
        invocation["invocationReason"] = json!({ "text": reason });
    }
    Origin::default().with_meta(json!({ AI: invocation }).as_object().cloned().unwrap_or_else(Map::new))
}

#[test]
fn the_turn_and_the_texts_the_intent_does_not_hold_go_to_the_log_only_redacted() {
    let dir = temp_dir("invocation");
    let (tracker, sink) = tracker(&dir, "1.0", Config::new("p"));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search]).tracker(tracker.clone()).build();
    let words = "Buy a mug for carol@example.com";
    // The reason is the intent: the user's words go to the log.
    manifest.call_from(&invoked(Some("Find mugs."), words, "t1"), "search", json!({"query": "mug"}));
    // The agent's mcpeyeIntent is the intent: both texts go to the log.
    manifest.call_from(
        &invoked(Some("Check stock."), words, "t1"),
        "search",
        json!({"query": "mug", "mcpeyeIntent": "Checking stock before buying."}),
    );
    // The user's words are the intent: nothing repeated.
    manifest.call_from(&invoked(None, words, "t2"), "search", json!({"query": "mug"}));
    assert!(tracker.shutdown(PATIENCE).completed);

    let lines = lines(&dir);
    let calls = of_kind(&lines, "call");
    let sent = sink.events();
    assert_eq!(calls.len(), 3);
    // The wire: the contract's keys only, the intent as the rule picks it.
    let contract = [
        "callId",
        "toolName",
        "arguments",
        "isError",
        "timestamp",
        "durationMs",
        "result",
        "errorMessage",
        "intent",
        "intentSource",
        "userId",
        "userEmail",
    ];
    for event in &sent {
        assert!(event.as_object().unwrap().keys().all(|k| contract.contains(&k.as_str())), "{event}");
    }
    let intents: Vec<(&str, &str)> =
        sent.iter().map(|e| (e["intent"].as_str().unwrap(), e["intentSource"].as_str().unwrap())).collect();
    assert_eq!(
        intents,
        [
            ("Find mugs.", "native"),
            ("Checking stock before buying.", "mcpeye"),
            ("Buy a mug for [REDACTED_EMAIL]", "native")
        ]
    );
    // The log: the same events, plus the turn and what the intent does not hold, redacted.
    let extra = |c: &Value| {
        (
            c["turn"].as_str().map(str::to_owned),
            c["invocationReason"].as_str().map(str::to_owned),
            c["userIntent"].as_str().map(str::to_owned),
            c["userIntentRedacted"].as_bool(),
        )
    };
    let redacted_words = Some("Buy a mug for [REDACTED_EMAIL]".to_owned());
    assert_eq!(extra(calls[0]), (Some("t1".into()), None, redacted_words.clone(), Some(false)));
    assert_eq!(extra(calls[1]), (Some("t1".into()), Some("Check stock.".into()), redacted_words, Some(false)));
    assert_eq!(extra(calls[2]), (Some("t2".into()), None, None, Some(false)));
    for (call, event) in calls.iter().zip(&sent) {
        assert_eq!(&call["event"], event);
    }
    let text = lines.iter().map(Value::to_string).collect::<String>();
    assert!(!text.contains("carol@example.com"), "{text}");
    // The report groups the calls by turn.
    let mut input = ReportInput::new();
    for l in &lines {
        input.add_value(l);
    }
    let turns = input.report().paths.turns;
    assert_eq!((turns.turns, turns.calls, turns.most_calls), (2, 3, 2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn under_before_send_the_log_keeps_the_turn_not_the_texts_it_could_not_vet() {
    let dir = temp_dir("invocation-before-send");
    let (tracker, sink) = tracker(&dir, "1.0", Config::new("p").before_send(Some));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search]).tracker(tracker.clone()).build();
    manifest.call_from(&invoked(Some("Find mugs."), "a gift", "t7"), "search", json!({"query": "mug"}));
    assert!(tracker.shutdown(PATIENCE).completed);
    let lines = lines(&dir);
    let calls = of_kind(&lines, "call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["turn"], "t7");
    assert!(calls[0].get("userIntent").is_none() && calls[0].get("userIntentRedacted").is_none(), "{}", calls[0]);
    assert_eq!(calls[0]["event"], sink.events()[0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_versions_of_a_server_give_a_report_with_the_description_change() {
    let dir = temp_dir("versions");
    for (version, defs) in
        [("1.0", mcpeye::tool_defs![v1::search, export]), ("2.0", mcpeye::tool_defs![v2::search, export])]
    {
        let (tracker, _sink) = tracker(&dir, version, Config::new("p"));
        let manifest = Manifest::builder().tools(defs).tracker(tracker.clone()).build();
        let origin = by("gpt-5", "Look up mugs.").with_session_id(format!("s-{version}"));
        for query in ["mug", "fail", "mug"] {
            manifest.call_from(&origin, "search", json!({ "query": query }));
        }
        assert!(tracker.shutdown(PATIENCE).completed);
    }
    let mut input = ReportInput::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        input.read_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    let r = input.report();
    assert_eq!(r.overview.calls, 6);
    assert_eq!(r.tools.never_called, ["export"]);
    assert_eq!(r.models.models[0].model, "gpt-5");
    let versions: Vec<(Option<&str>, Option<&str>)> =
        r.versions.tools.iter().map(|v| (v.server_version.as_deref(), v.description.as_deref())).collect();
    assert_eq!(
        versions,
        [
            (Some("1.0"), Some("Search the catalogue.")),
            (Some("2.0"), Some("Search the catalogue by free text, names and descriptions."))
        ],
        "{:?}",
        r.versions
    );
    // Each session: an error, then the same tool again that succeeded.
    assert_eq!((r.paths.conversations, r.paths.recoveries.len()), (2, 1), "{:?}", r.paths);
    assert_eq!((r.paths.recoveries[0].retried, r.paths.recoveries[0].recovered), (2, 2), "{:?}", r.paths);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `infer_intent` makes of the test calls, by their query: the agent's words nowhere else.
fn infer(call: &mcpeye::InferCall<'_>) -> Option<String> {
    // The callback runs on the flusher, never on the calling thread.
    assert_eq!(std::thread::current().name(), Some("mcpeye-flusher"));
    if call.is_error() {
        return Some(format!("tried {} but it failed: {}", call.tool(), call.error()?));
    }
    match call.arguments()["query"].as_str()? {
        "long" => Some("a".repeat(40_000)),
        "panic" => panic!("the user's callback has a bug"),
        "blank" => Some(" \n ".to_string()),
        query => Some(format!("looking for {query}, to mail carol@example.com")),
    }
}

/// The test calls: without an intent (found, redacted, failed, long, panicking, blank), and one
/// with the agent's own.
fn infer_calls(manifest: &Manifest) {
    for query in ["mug ada@example.com", "fail", "long", "panic", "blank"] {
        manifest.call_from(&Origin::default(), "search", json!({ "query": query }));
    }
    manifest.call_from(&Origin::default(), "search", json!({"query": "cup", "mcpeyeIntent": "Checking stock."}));
}

/// A payload's bytes with what differs from run to run (call ids, times) blanked out.
fn same_run(body: &[u8]) -> String {
    let text = String::from_utf8(body.to_vec()).unwrap();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = ["\"callId\":\"", "\"timestamp\":", "\"durationMs\":"]
        .iter()
        .filter_map(|k| rest.find(k).map(|i| (i, k.len())))
        .min()
    {
        let (i, len) = at;
        out.push_str(&rest[..i + len]);
        rest = &rest[i + len..];
        let end = rest.find([',', '"', '}']).unwrap();
        out.push('#');
        rest = &rest[end..];
    }
    out + rest
}

#[test]
fn an_inferred_intent_goes_to_the_log_redacted_and_capped_never_to_the_wire() {
    let dir = temp_dir("inferred");
    let quiet = |c: Config| c.flush_interval(Duration::from_secs(3600)).flush_threshold(1000);
    let (tracker, sink) = tracker(&dir, "1.0", quiet(Config::new("p")).infer_intent(infer));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search]).tracker(tracker.clone()).build();
    infer_calls(&manifest);
    assert!(tracker.shutdown(PATIENCE).completed);

    let lines = lines(&dir);
    let calls = of_kind(&lines, "call");
    assert_eq!(calls.len(), 6);
    let inferred: Vec<Option<&str>> = calls.iter().map(|c| c.get("inferredIntent").and_then(Value::as_str)).collect();
    // What the callback saw was redacted, and what it said is redacted too.
    assert_eq!(inferred[0], Some("looking for mug [REDACTED_EMAIL], to mail [REDACTED_EMAIL]"));
    assert_eq!(inferred[1], Some("tried search but it failed: the index is rebuilding"));
    let long = inferred[2].unwrap();
    assert!(long.len() <= 32_768 && long.ends_with("…[truncated]"), "{}", long.len());
    // A panicking callback, a blank answer, and a call with the agent's intent: none.
    assert_eq!(inferred[3..], [None, None, None]);
    assert_eq!(calls[5]["event"]["intent"], "Checking stock.");
    let stats = tracker.stats();
    assert_eq!((stats.infer_intent_panicked, stats.sent, stats.event_log.lost), (1, 6, 0));
    // The log's events are the wire's, which has no inferred intent.
    let sent = sink.events();
    for (call, event) in calls.iter().zip(&sent) {
        assert_eq!(&call["event"], event);
    }
    let wire = sink.bodies().concat();
    assert!(!String::from_utf8_lossy(&wire).contains("looking for"));
    // The offline report uses them where a call has no intent, marked apart from the agent's.
    let mut input = ReportInput::new();
    for l in &lines {
        input.add_value(l);
    }
    let gap = input.report().intent_gap;
    let search = gap.intents.iter().find(|t| t.tool == "search").expect("search's intents");
    assert_eq!((search.calls, search.with_intent, search.with_inferred), (6, 1, 3), "{search:?}");
    assert!(search.inferred.iter().any(|a| a.ask.starts_with("looking for mug")), "{search:?}");
    assert!(search.intents.iter().all(|a| a.ask == "Checking stock."), "{search:?}");

    // The same calls without the callback: the same payload bytes.
    let plain_dir = temp_dir("inferred-plain");
    let (plain, plain_sink) = self::tracker(&plain_dir, "1.0", quiet(Config::new("p")));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search]).tracker(plain.clone()).build();
    infer_calls(&manifest);
    assert!(plain.shutdown(PATIENCE).completed);
    let bodies = |s: &MemorySink| s.bodies().iter().map(|b| same_run(b)).collect::<Vec<_>>();
    assert_eq!(bodies(&sink), bodies(&plain_sink));
    assert_eq!(bodies(&sink).len(), 1);
    assert!(of_kind(&self::lines(&plain_dir), "call").iter().all(|c| c.get("inferredIntent").is_none()));
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&plain_dir).unwrap();
}

#[test]
fn before_send_and_sampling_keep_events_out_of_the_log_too() {
    let dir = temp_dir("screen");
    let config = Config::new("p").before_send(|e| (e.tool_name != "export").then_some(e));
    let (tracker, sink) = tracker(&dir, "1.0", config);
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![v1::search, export]).tracker(tracker.clone()).build();
    manifest.call_from(&Origin::default(), "export", json!({}));
    manifest.call_from(&Origin::default(), "search", json!({"query": "mug"}));
    assert!(tracker.shutdown(PATIENCE).completed);
    let lines = lines(&dir);
    let calls = of_kind(&lines, "call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["event"], sink.events()[0]);
    assert_eq!(tracker.stats().dropped.before_send, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directory_that_cannot_be_made_is_refused_at_init() {
    let file = temp_dir("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let err = MemorySink::with_config(Config::new("p").event_log(file.join("log"))).unwrap_err();
    assert!(matches!(err, ConfigError::EventLog(_)), "{err:?}");
    assert!(err.to_string().contains("Config::event_log"), "{err}");
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn without_an_event_log_nothing_is_written_or_counted() {
    let (tracker, _sink) = MemorySink::new();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![export]).tracker(tracker.clone()).build();
    manifest.call_from(&Origin::default(), "export", json!({}));
    assert!(tracker.shutdown(PATIENCE).completed);
    assert_eq!(tracker.stats().event_log, mcpeye::EventLogCounts::default());
}

#[tokio::test]
async fn a_manifest_server_logs_its_tool_list_and_the_other_methods_asked_of_it() {
    let dir = temp_dir("methods");
    let (tracker, sink) = tracker(&dir, "3.1", Config::new("p"));
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![export]).tracker(tracker.clone()).build();
    let client = serve_and_connect(ManifestServer::new(Arc::new(manifest)), "lister", "1.0").await;
    client.list_tools(None).await.unwrap();
    assert!(client.read_resource(ReadResourceRequestParams::new("docs://guide")).await.is_err());
    client.cancel().await.unwrap();
    assert!(tracker.shutdown(PATIENCE).completed);
    assert!(sink.events().is_empty());
    let lines = lines(&dir);
    let tools = of_kind(&lines, "tools");
    assert_eq!(tools.len(), 1, "{lines:?}");
    assert_eq!(tools[0]["tools"][0]["name"], "export");
    let methods = of_kind(&lines, "method");
    let seen: Vec<(&str, Option<&str>, bool)> = methods
        .iter()
        .map(|m| (m["method"].as_str().unwrap(), m["target"].as_str(), m["isError"].as_bool().unwrap()))
        .collect();
    assert_eq!(seen, [("tools/list", None, false), ("resources/read", Some("docs://guide"), true)]);
    assert!(methods.iter().all(|m| m["client"] == "lister/1.0" && m["serverVersion"] == "3.1"), "{methods:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
