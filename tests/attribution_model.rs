//! The model and the conversation of each call (docs/attribution.md), on both serving paths
//! (`ManifestServer` and an `instrument`ed rmcp router) and through `Manifest::call_from`: the
//! model from each `_meta` key and from the opt-in `llm_model` argument (stripped before the
//! handler), on the span-facing record, `before_send`'s event, `Stats` and the Intent Gap; the
//! opt-in conversation handle minted, handed out, stripped when it comes back, and made the
//! call's session (`Context::session_id`, the record, sampling).

mod common;

use common::rmcp::*;
use mcpeye::report::IntentGap;
use mcpeye::testing::MemorySink;
use mcpeye::{Config, Context, Event, Manifest, ModelArgument, Origin};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Say which session the call is in, and the text.
#[mcpeye::tool]
fn whereami(
    ctx: Context,
    /// The text.
    text: String,
) -> String {
    format!("{}|{text}", ctx.session_id().unwrap_or("-"))
}

#[derive(Clone)]
struct Keys {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Keys {
    /// Answers the names of the arguments it was given, sorted.
    #[tool(description = "Name the arguments it was given.")]
    fn keys(&self, Parameters(args): Parameters<Map<String, Value>>) -> String {
        let mut keys: Vec<&str> = args.keys().map(String::as_str).collect();
        keys.sort();
        keys.join(",")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Keys {}

fn meta(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

const AI: &str = "io.modelcontextprotocol/aiInvocation";
const CODEX: &str = "x-codex-turn-metadata";

/// The `_meta` of a 2026-07-28 request (no session), with `extra` keys.
fn modern_meta(extra: Value) -> Map<String, Value> {
    let mut m = meta(json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-agent", "version": "7.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }));
    m.extend(meta(extra));
    m
}

fn text_of(result: &CallToolResult) -> Vec<String> {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

#[test]
fn manifest_call_reads_the_model_from_each_meta_key() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![whereami]).tracker(tracker).build();
    for (m, want) in [
        (json!({AI: {"model": "claude-opus-4", "userIntent": "x"}}), Some("claude-opus-4")),
        (json!({CODEX: {"model": "gpt-5-codex"}}), Some("gpt-5-codex")),
        (json!({CODEX: "{\"model\":\"gpt-5\"}"}), Some("gpt-5")),
        (json!({}), None),
    ] {
        let origin = Origin::default().with_meta(meta(m.clone()));
        manifest.call_from(&origin, "whereami", json!({"text": "a"}));
        let r = take(&records).pop().unwrap();
        assert_eq!(r.model.as_deref(), want, "{m}");
    }
}

#[test]
fn the_llm_model_argument_is_advertised_stripped_and_recorded() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder()
        .tools(mcpeye::tool_defs![whereami])
        .model_argument(ModelArgument::EveryTool)
        .tracker(tracker)
        .build();
    let list = manifest.tools_list();
    assert!(list[0]["inputSchema"]["properties"]["llm_model"].is_object());
    assert!(list[1]["inputSchema"]["properties"]["llm_model"].is_object(), "the reserved tool has it too");
    let out = manifest.call("whereami", json!({"text": "a", "llm_model": "gpt-4o"}));
    assert_eq!(out["content"][0]["text"], "-|a");
    let r = take(&records).pop().unwrap();
    assert_eq!(r.model.as_deref(), Some("gpt-4o"));
    assert_eq!(r.arguments, json!({"text": "a"}), "the handler's arguments have no llm_model");
    manifest.call("mcpeye_request_capability", json!({"capability": "CSV", "llm_model": "gpt-4o"}));
    let r = take(&records).pop().unwrap();
    assert_eq!((r.model.as_deref(), &r.arguments), (Some("gpt-4o"), &json!({"capability": "CSV"})));
    // `_meta` wins over the argument.
    let origin = Origin::default().with_meta(meta(json!({AI: {"model": "from-meta"}})));
    manifest.call_from(&origin, "whereami", json!({"text": "a", "llm_model": "from-arg"}));
    assert_eq!(take(&records).pop().unwrap().model.as_deref(), Some("from-meta"));
    // Off (the default): nothing advertised, nothing stripped.
    let plain = Manifest::builder().tools(mcpeye::tool_defs![whereami]).build();
    assert!(plain.tools_list()[0]["inputSchema"]["properties"].get("llm_model").is_none());
}

#[test]
fn the_model_reaches_before_send_stats_and_the_intent_gap() {
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let keep = events.clone();
    let config = Config::new("p").before_send(move |e| {
        keep.lock().unwrap().push(e.clone());
        Some(e)
    });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![whereami]).tracker(tracker.clone()).build();
    let by = |model: &str| Origin::default().with_meta(meta(json!({AI: {"model": model}})));
    manifest.call_from(&by("claude"), "whereami", json!({"text": "a"}));
    manifest.call_from(&by("claude"), "mcpeye_request_capability", json!({"capability": "Export as CSV"}));
    manifest.call_from(&by("gpt"), "mcpeye_request_capability", json!({"capability": "Send e-mail"}));
    manifest.call("whereami", json!({"text": "b"}));
    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let stats = tracker.stats();
    assert_eq!(stats.calls_by_model.get("claude"), Some(&2));
    assert_eq!(stats.calls_by_model.get("gpt"), Some(&1));
    assert_eq!(stats.calls_by_model.values().sum::<u64>(), 3);
    let events = events.lock().unwrap();
    let models: Vec<Option<&str>> = events.iter().map(Event::model).collect();
    assert_eq!(models, [Some("claude"), Some("claude"), Some("gpt"), None]);
    // The wire has no key for it.
    assert!(sink.bodies().iter().all(|b| !String::from_utf8_lossy(b).contains("claude")));
    let gap = IntentGap::from_attributed_events(events.iter());
    let claude = gap.models.iter().find(|m| m.model == "claude").unwrap();
    assert_eq!((claude.calls, claude.capability_requests[0].capability.as_str()), (2, "Export as CSV"));
    let gpt = gap.models.iter().find(|m| m.model == "gpt").unwrap();
    assert_eq!(gpt.capability_requests[0].capability, "Send e-mail");
    assert!(gap.to_string().contains("Models, most calls first"));
    // From wire events, as before: no model section.
    assert!(IntentGap::from_events(&sink.events()).models.is_empty());
}

#[test]
fn a_conversation_handle_is_minted_handed_out_and_becomes_the_session() {
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let keep = events.clone();
    let config = Config::new("p").sample_rate(0.5).before_send(move |e| {
        keep.lock().unwrap().push(e.clone());
        Some(e)
    });
    let (tracker, _sink) = MemorySink::with_config(config).unwrap();
    let manifest =
        Manifest::builder().tools(mcpeye::tool_defs![whereami]).conversations(true).tracker(tracker.clone()).build();
    let list = manifest.tools_list();
    assert!(list[0]["inputSchema"]["properties"]["mcpeyeConversation"].is_object());
    assert!(list[1]["inputSchema"]["properties"].get("mcpeyeConversation").is_none(), "not on the reserved tool");

    // Many conversations of three calls each: each is kept or sampled out whole.
    let mut handles = Vec::new();
    for i in 0..40 {
        let first = manifest.call("whereami", json!({"text": format!("c{i}")}));
        let content = first["content"].as_array().unwrap();
        assert_eq!(content.len(), 2, "the handler's item and the handle");
        let handle = content[1]["text"].as_str().unwrap().strip_prefix("conversation: ").unwrap().to_owned();
        assert_eq!(content[0]["text"], format!("{handle}|c{i}"), "the first call is in its conversation already");
        assert!(handle.starts_with("cv_"));
        for _ in 0..2 {
            let next = manifest.call("whereami", json!({"text": "n", "mcpeyeConversation": handle}));
            let content = next["content"].as_array().unwrap();
            assert_eq!(content.len(), 1, "a handle that comes back is not handed out again");
            assert_eq!(content[0]["text"], format!("{handle}|n"), "Context::session_id is the handle");
        }
        handles.push(handle);
    }
    assert_eq!(handles.iter().collect::<std::collections::HashSet<_>>().len(), 40);

    // A made-up handle is ignored (counted), never an error: the call starts a conversation.
    let forged = manifest.call("whereami", json!({"text": "f", "mcpeyeConversation": "cv_00000000000000000000000"}));
    assert_eq!(forged["isError"], Value::Null);
    assert_eq!(forged["content"].as_array().unwrap().len(), 2);

    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let stats = tracker.stats();
    assert_eq!((stats.conversations_started, stats.invalid_conversation_handles), (41, 1));
    let events = events.lock().unwrap();
    // Session-consistent sampling: a conversation's three calls are all kept, or none is.
    let kept: Vec<&Event> =
        events.iter().filter(|e| e.session_id().is_some_and(|s| handles.iter().any(|h| h == s))).collect();
    for h in &handles {
        let n = kept.iter().filter(|e| e.session_id() == Some(h.as_str())).count();
        assert!(n == 0 || n == 3, "{h}: {n}");
    }
    assert!(!kept.is_empty() && kept.len() < 120, "{}", kept.len());
    assert!(kept.iter().all(|e| e.arguments.get("mcpeyeConversation").is_none()));
    let gap = IntentGap::from_attributed_events(kept.iter().copied());
    assert_eq!(gap.conversations.len(), kept.len() / 3);
    assert_eq!(gap.conversations[0].journey, ["whereami", "whereami", "whereami"]);
}

#[test]
fn a_transport_session_wins_over_a_handle() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![whereami]).conversations(true).tracker(tracker).build();
    let origin = Origin::default().with_session_id("stdio-1");
    let out = manifest.call_from(&origin, "whereami", json!({"text": "a", "mcpeyeConversation": "cv_x"}));
    assert_eq!(out["content"].as_array().unwrap().len(), 1, "no handle handed out");
    assert_eq!(out["content"][0]["text"], "stdio-1|a");
    let r = take(&records).pop().unwrap();
    assert_eq!((r.session_id.as_deref(), &r.arguments), (Some("stdio-1"), &json!({"text": "a"})));
}

#[tokio::test]
async fn manifest_server_reads_the_model_and_hands_out_handles() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder()
        .tools(mcpeye::tool_defs![whereami])
        .model_argument(ModelArgument::EveryTool)
        .conversations(true)
        .tracker(tracker)
        .build();
    let client = serve_and_connect(mcpeye::rmcp::ManifestServer::new(Arc::new(manifest)), "agent-x", "4.2").await;
    // The model from `_meta`, in a handshake-era session (its session wins: no handle).
    let mut request = call("whereami", json!({"text": "a"}));
    request.meta = Some(serde_json::from_value(json!({AI: {"model": "claude-sonnet-4"}})).unwrap());
    let out = client.call_tool(request).await.unwrap();
    assert_eq!(text_of(&out).len(), 1);
    let r = take(&records).pop().unwrap();
    assert_eq!(r.model.as_deref(), Some("claude-sonnet-4"));
    // A 2026-07-28 request has no session: a handle is minted and comes back.
    let mut request = call("whereami", json!({"text": "b", "llm_model": "gpt-5"}));
    request.meta = Some(serde_json::from_value(Value::Object(modern_meta(json!({}))).clone()).unwrap());
    let texts = text_of(&client.call_tool(request).await.unwrap());
    assert_eq!(texts.len(), 2, "{texts:?}");
    let handle = texts[1].strip_prefix("conversation: ").unwrap().to_owned();
    let r = take(&records).pop().unwrap();
    assert_eq!((r.model.as_deref(), r.session_id.as_deref()), (Some("gpt-5"), Some(handle.as_str())));
    let mut request = call("whereami", json!({"text": "c", "mcpeyeConversation": handle}));
    request.meta =
        Some(serde_json::from_value(Value::Object(modern_meta(json!({CODEX: {"model": "codex"}})))).unwrap());
    let texts = text_of(&client.call_tool(request).await.unwrap());
    assert_eq!(texts, [format!("{handle}|c")]);
    let r = take(&records).pop().unwrap();
    assert_eq!((r.model.as_deref(), r.session_id.as_deref()), (Some("codex"), Some(handle.as_str())));
    assert_eq!(r.arguments, json!({"text": "c"}));
    // A tool the server does not have, called in the conversation: recorded in it.
    let mut request = call("no_such_tool", json!({"mcpeyeConversation": handle, "mcpeyeIntent": "guess"}));
    request.meta = Some(serde_json::from_value(Value::Object(modern_meta(json!({})))).unwrap());
    assert!(client.call_tool(request).await.is_err());
    let r = take(&records).pop().unwrap();
    assert_eq!((r.tool_name.as_ref(), r.session_id.as_deref()), ("no_such_tool", Some(handle.as_str())));
}

#[tokio::test]
async fn an_instrumented_router_reads_the_model_and_hands_out_handles() {
    let (tracker, records) = recording_tracker();
    let router = mcpeye::rmcp::Instrument::new()
        .tracker(tracker)
        .model_argument(ModelArgument::EveryTool)
        .conversations(true)
        .apply(Keys::tool_router());
    let schema = &router.get("keys").unwrap().input_schema;
    assert!(schema["properties"]["llm_model"].is_object() && schema["properties"]["mcpeyeConversation"].is_object());
    let client = serve_and_connect(Keys { tool_router: router }, "agent-x", "4.2").await;
    let mut request = call("keys", json!({"a": 1}));
    request.meta = Some(serde_json::from_value(json!({AI: {"model": "claude-haiku"}})).unwrap());
    assert_eq!(text_of(&client.call_tool(request).await.unwrap()), ["a"]);
    assert_eq!(take(&records).pop().unwrap().model.as_deref(), Some("claude-haiku"));

    let mut request = call("keys", json!({"a": 1, "llm_model": "gpt-5"}));
    request.meta = Some(serde_json::from_value(Value::Object(modern_meta(json!({})))).unwrap());
    let texts = text_of(&client.call_tool(request).await.unwrap());
    assert_eq!(texts[0], "a", "the tool never sees llm_model");
    let handle = texts[1].strip_prefix("conversation: ").unwrap().to_owned();
    let r = take(&records).pop().unwrap();
    assert_eq!((r.model.as_deref(), r.session_id.as_deref()), (Some("gpt-5"), Some(handle.as_str())));

    let mut request = call("keys", json!({"a": 1, "mcpeyeConversation": handle}));
    request.meta = Some(serde_json::from_value(Value::Object(modern_meta(json!({})))).unwrap());
    assert_eq!(text_of(&client.call_tool(request).await.unwrap()), ["a"], "the tool never sees the handle");
    let r = take(&records).pop().unwrap();
    assert_eq!(r.session_id.as_deref(), Some(handle.as_str()));
}

/// The handle a call brings to the reserved tool is taken out of its arguments (it never reaches
/// the ingest) on both serving paths; a valid one keeps the capability request in its
/// conversation, and none is minted for it.
#[tokio::test]
async fn a_handle_given_to_the_reserved_tool_is_taken_out() {
    let (tracker, sink) = MemorySink::new();
    let manifest =
        Manifest::builder().tools(mcpeye::tool_defs![whereami]).conversations(true).tracker(tracker.clone()).build();
    let first = manifest.call("whereami", json!({"text": "a"}));
    let handle = first["content"][1]["text"].as_str().unwrap().strip_prefix("conversation: ").unwrap().to_owned();
    for given in [json!(handle), json!("cv_made_up")] {
        let out = manifest.call("mcpeye_request_capability", json!({"capability": "CSV", "mcpeyeConversation": given}));
        assert_eq!(out["content"].as_array().unwrap().len(), 1, "no handle minted for a capability request");
    }
    let router =
        mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).conversations(true).apply(Keys::tool_router());
    let client = serve_and_connect(Keys { tool_router: router }, "agent-x", "4.2").await;
    let mut request = call("mcpeye_request_capability", json!({"capability": "PDF", "mcpeyeConversation": handle}));
    request.meta = Some(serde_json::from_value(Value::Object(modern_meta(json!({})))).unwrap());
    assert_eq!(text_of(&client.call_tool(request).await.unwrap()).len(), 1);

    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let events = sink.events();
    let reserved: Vec<&Value> = events.iter().filter(|e| e["toolName"] == "mcpeye_request_capability").collect();
    assert_eq!(reserved.len(), 3, "{events:#?}");
    for e in reserved {
        assert_eq!(e["arguments"].get("mcpeyeConversation"), None, "{e}");
    }
}

/// With `identify`, a handle is bound to the user it was minted for: another user who brings it
/// starts a conversation of their own (counted as an invalid handle), never joins the first.
#[test]
fn a_handle_minted_for_one_user_is_not_valid_for_another() {
    let config = Config::new("p").identify(|request| {
        let user = request.meta()?.get("acme/user")?.as_str()?.to_owned();
        Some(mcpeye::CallIdentity::new().user_id(user))
    });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    let manifest =
        Manifest::builder().tools(mcpeye::tool_defs![whereami]).conversations(true).tracker(tracker.clone()).build();
    let as_user = |user: &str| Origin::default().with_meta(meta(json!({"acme/user": user})));
    let first = manifest.call_from(&as_user("alice"), "whereami", json!({"text": "a"}));
    let alice = first["content"][1]["text"].as_str().unwrap().strip_prefix("conversation: ").unwrap().to_owned();

    let again = manifest.call_from(&as_user("alice"), "whereami", json!({"text": "b", "mcpeyeConversation": alice}));
    assert_eq!(again["content"].as_array().unwrap().len(), 1);
    assert_eq!(again["content"][0]["text"], format!("{alice}|b"), "alice's own handle is valid for her");

    let stolen = manifest.call_from(&as_user("bob"), "whereami", json!({"text": "c", "mcpeyeConversation": alice}));
    let content = stolen["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "bob gets a conversation of his own");
    let bob = content[1]["text"].as_str().unwrap().strip_prefix("conversation: ").unwrap();
    assert_ne!(bob, alice);
    assert_eq!(content[0]["text"], format!("{bob}|c"));

    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let stats = tracker.stats();
    assert_eq!((stats.conversations_started, stats.invalid_conversation_handles), (2, 1));
    // `identify` ran once per call, and its user is each event's.
    let events = sink.events();
    let users: Vec<&str> = events.iter().map(|e| e["userId"].as_str().unwrap()).collect();
    assert_eq!(users, ["alice", "alice", "bob"]);
}

/// With the same `Config::conversation_key`, a handle minted by one tracker (one replica, or this
/// process before a restart) is valid on another; with keys drawn per process it is not.
#[test]
fn a_configured_key_makes_a_handle_valid_on_every_replica() {
    const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
    let replica = |config: Config| {
        let (tracker, _sink) = MemorySink::with_config(config).unwrap();
        Manifest::builder().tools(mcpeye::tool_defs![whereami]).conversations(true).tracker(tracker).build()
    };
    let (a, b) = (replica(Config::new("p").conversation_key(KEY)), replica(Config::new("p").conversation_key(KEY)));
    let first = a.call("whereami", json!({"text": "a"}));
    let handle = first["content"][1]["text"].as_str().unwrap().strip_prefix("conversation: ").unwrap().to_owned();
    let on_b = b.call("whereami", json!({"text": "b", "mcpeyeConversation": handle}));
    assert_eq!(on_b["content"].as_array().unwrap().len(), 1);
    assert_eq!(on_b["content"][0]["text"], format!("{handle}|b"), "the other replica continues the conversation");

    let other_key = replica(Config::new("p").conversation_key([7u8; 32]));
    let refused = other_key.call("whereami", json!({"text": "c", "mcpeyeConversation": handle}));
    assert_eq!(refused["content"].as_array().unwrap().len(), 2, "a replica with another key starts a new one");

    let short = MemorySink::with_config(Config::new("p").conversation_key(b"too short")).unwrap_err();
    assert!(short.to_string().contains("at least 32 bytes"), "{short}");
}
