//! Path 2: an ordinary rmcp server (rmcp's own `#[tool_router]`/`#[tool]` macros) instrumented
//! with one call, driven by rmcp's client over an in-process duplex transport.

mod common;

use common::rmcp::*;
use mcpeye::contract::{INTENT_PARAM_NAME, RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
use mcpeye::{IntentSource, Tracker};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock, ErrorCode, JsonObject,
};
use rmcp::service::{RequestContext, RoleClient, RunningService, ServiceError};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use std::time::Duration;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    query: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// The note.
    text: String,
    /// This tool takes an intent of its own: mcpeye must leave it alone.
    #[serde(rename = "mcpeyeIntent")]
    mcpeye_intent: Option<String>,
}

/// A server as its author wrote it; only `new` mentions mcpeye.
#[derive(Clone)]
struct Shop {
    tool_router: ToolRouter<Self>,
    tracker: Tracker,
}

#[tool_router]
impl Shop {
    fn new(tracker: Tracker) -> Self {
        Self {
            tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Self::tool_router()),
            tracker,
        }
    }

    // `deny_unknown_fields`: an intent reaching this tool would fail its call.
    #[tool(description = "Search the catalogue.")]
    fn search(&self, Parameters(args): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        match args.query.as_str() {
            "outage" => Err(ErrorData::internal_error("the catalogue is down", None)),
            "soft" => Ok(CallToolResult::error(vec![ContentBlock::text("no stock"), ContentBlock::text("try later")])),
            "boom" => panic!("search exploded"),
            q => Ok(CallToolResult::success(vec![ContentBlock::text(format!("found {q}"))])),
        }
    }

    /// Takes any object: its schema has no `properties` of its own.
    #[tool(description = "Echo the argument names.")]
    fn keys(&self, Parameters(args): Parameters<JsonObject>) -> String {
        assert!(!args.contains_key(INTENT_PARAM_NAME), "the tool saw the intent");
        args.keys().cloned().collect::<Vec<_>>().join(",")
    }

    #[tool(description = "Ping the shop.")]
    async fn ping(&self) -> String {
        "pong".to_owned()
    }

    #[tool(description = "Keep a note.")]
    fn note(&self, Parameters(args): Parameters<NoteArgs>) -> String {
        format!("{}|{}", args.text, args.mcpeye_intent.unwrap_or_default())
    }
}

// `call_tool` written out, for the calls of tools the router does not have to be recorded too.
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Shop {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        mcpeye::rmcp::call_tool_with(&self.tool_router, &self.tracker, self, request, context).await
    }
}

async fn connect() -> (RunningService<RoleClient, ClientConfig>, Records) {
    let (tracker, records) = recording_tracker();
    (serve_and_connect(Shop::new(tracker), "test-client", "2.5.0").await, records)
}

fn text(r: &CallToolResult) -> &str {
    &r.content[0].as_text().expect("a text item").text
}

#[tokio::test]
async fn schemas_gain_the_intent_and_the_reserved_tool_is_listed() {
    let (client, _) = connect().await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["keys", RESERVED_TOOL_NAME, "note", "ping", "search"]);
    let tool = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
    for name in ["search", "keys", "ping"] {
        let intent = &tool(name).input_schema["properties"][INTENT_PARAM_NAME];
        assert_eq!(intent["type"], "string", "{name}");
        assert_eq!(intent["description"], mcpeye::contract::INTENT_PARAM_DESCRIPTION, "{name}");
    }
    assert!(tool("search").input_schema["properties"]["query"].is_object(), "the tool's own properties stay");
    assert_eq!(tool("search").description.as_deref(), Some("Search the catalogue."));
    // A tool that declares `mcpeyeIntent` owns it: its own description stays.
    let own = &tool("note").input_schema["properties"][INTENT_PARAM_NAME];
    assert_ne!(own["description"], mcpeye::contract::INTENT_PARAM_DESCRIPTION);
    let reserved = tool(RESERVED_TOOL_NAME);
    assert_eq!(reserved.description.as_deref(), Some(mcpeye::contract::RESERVED_TOOL_DESCRIPTION));
    assert_eq!(reserved.input_schema["required"], json!(["capability"]));
    assert!(reserved.input_schema["properties"].get(INTENT_PARAM_NAME).is_none());
}

#[tokio::test]
async fn the_intent_is_stripped_before_the_tool_and_recorded() {
    let (client, records) = connect().await;
    let out =
        client.call_tool(call("search", json!({"query": "lamps", INTENT_PARAM_NAME: " find a lamp "}))).await.unwrap();
    assert_ne!(out.is_error, Some(true), "{out:?}");
    assert_eq!(text(&out), "found lamps");
    let out = client.call_tool(call("keys", json!({"a": 1, INTENT_PARAM_NAME: "list keys"}))).await.unwrap();
    assert_eq!(text(&out), "a");
    let out = client.call_tool(call("ping", json!({INTENT_PARAM_NAME: ""}))).await.unwrap();
    assert_eq!(text(&out), "pong");
    let recs = take(&records);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0].tool_name, "search");
    assert_eq!(recs[0].arguments, json!({"query": "lamps"}));
    assert_eq!(recs[0].intent, Some((" find a lamp ".to_owned(), IntentSource::Mcpeye)));
    // As sent: rmcp's `CallToolResult::success` says `isError: false`.
    assert_eq!(
        recs[0].result(),
        Some(&json!({"content": [{"type": "text", "text": "found lamps"}], "isError": false}))
    );
    assert!(!recs[0].is_error());
    assert_eq!(recs[1].intent, Some(("list keys".to_owned(), IntentSource::Mcpeye)));
    assert_eq!(recs[2].intent, None, "a blank intent is dropped");
    assert_eq!(recs[2].arguments, json!({}));
}

#[tokio::test]
async fn a_tool_that_declares_the_intent_receives_it() {
    let (client, records) = connect().await;
    let out = client.call_tool(call("note", json!({"text": "hi", INTENT_PARAM_NAME: "mine"}))).await.unwrap();
    assert_eq!(text(&out), "hi|mine");
    let recs = take(&records);
    assert_eq!(recs[0].intent, None);
    assert_eq!(recs[0].arguments, json!({"text": "hi", INTENT_PARAM_NAME: "mine"}));
}

#[tokio::test]
async fn the_reserved_tool_is_answered_locally_with_the_ack() {
    let (client, records) = connect().await;
    let args = json!({"capability": "export as CSV", "context": "monthly report", INTENT_PARAM_NAME: "x"});
    let out = client.call_tool(call(RESERVED_TOOL_NAME, args)).await.unwrap();
    assert_ne!(out.is_error, Some(true));
    assert_eq!(text(&out), RESERVED_TOOL_ACK);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].tool_name, RESERVED_TOOL_NAME);
    assert_eq!(recs[0].duration, Duration::ZERO);
    assert_eq!(recs[0].intent, None);
    assert_eq!(recs[0].arguments, json!({"capability": "export as CSV", "context": "monthly report"}));
    assert_eq!(recs[0].result(), Some(&json!({"content": [{"type": "text", "text": RESERVED_TOOL_ACK}]})));
}

/// `Instrument::feedback(true)`: the feedback tool is listed after the router's tools, answered
/// locally with its acknowledgement (never by a route of the router), recorded like the reserved
/// tool; invalid arguments are an error result, recorded as such.
#[tokio::test]
async fn the_feedback_tool_is_listed_answered_and_recorded_when_on() {
    use mcpeye::contract::{FEEDBACK_TOOL_ACK, FEEDBACK_TOOL_NAME};
    let (tracker, records) = recording_tracker();
    let tool_router =
        mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).feedback(true).apply(Shop::tool_router());
    let client = serve_and_connect(Shop { tool_router, tracker }, "test-client", "2.5.0").await;
    let tools = client.list_all_tools().await.unwrap();
    let feedback = tools.iter().find(|t| t.name == FEEDBACK_TOOL_NAME).expect("listed");
    assert_eq!(feedback.description.as_deref(), Some(mcpeye::contract::FEEDBACK_TOOL_DESCRIPTION));
    assert_eq!(feedback.input_schema["required"], json!(["category", "text"]));
    assert!(feedback.input_schema["properties"].get(INTENT_PARAM_NAME).is_none());

    let args = json!({"category": "missing_capability", "text": "no way to export as CSV", "task_completed": false});
    let out = client.call_tool(call(FEEDBACK_TOOL_NAME, args.clone())).await.unwrap();
    assert_ne!(out.is_error, Some(true));
    assert_eq!(text(&out), FEEDBACK_TOOL_ACK);
    let bad = client.call_tool(call(FEEDBACK_TOOL_NAME, json!({"category": "rant", "text": "x"}))).await.unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("`category`"), "{}", text(&bad));
    let recs = take(&records);
    assert_eq!(recs.len(), 2);
    assert_eq!(
        (recs[0].tool_name.as_ref(), recs[0].duration, &recs[0].intent),
        (FEEDBACK_TOOL_NAME, Duration::ZERO, &None)
    );
    assert_eq!(recs[0].arguments, args);
    assert_eq!(recs[0].result(), Some(&json!({"content": [{"type": "text", "text": FEEDBACK_TOOL_ACK}]})));
    assert_eq!((recs[1].tool_name.as_ref(), recs[1].is_error()), (FEEDBACK_TOOL_NAME, true));

    // Off by default.
    let (client, _) = connect().await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n == FEEDBACK_TOOL_NAME), "{names:?}");
}

#[tokio::test]
async fn errors_are_recorded_as_errors() {
    let (client, records) = connect().await;
    let out = client.call_tool(call("search", json!({"query": "soft"}))).await.unwrap();
    assert_eq!(out.is_error, Some(true));
    assert_eq!(text(&out), "no stock", "the result reaches the client unchanged");
    let err = client.call_tool(call("search", json!({"query": "outage"}))).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    // rmcp turns argument errors into error results; they are recorded as errors too.
    let out = client.call_tool(call("search", json!({"query": 5}))).await.unwrap();
    assert_eq!(out.is_error, Some(true));
    let recs = take(&records);
    assert_eq!(recs.len(), 3);
    assert!(recs.iter().all(|r| r.is_error() && r.result().is_none()));
    assert_eq!(recs[0].error_message(), Some("no stock\ntry later"));
    assert_eq!(recs[1].error_message(), Some("the catalogue is down"));
    assert!(recs[2].error_message().unwrap().starts_with("failed to deserialize parameters"));
}

/// A tool that panics is recorded as a panic and answered with an internal error (-32603), with a
/// tracker and without one: the client is never left waiting, and the panic's message stays on
/// the server.
#[tokio::test]
async fn a_panicking_tool_is_recorded_and_answered_with_an_error() {
    let (client, records) = connect().await;
    let out = tokio::time::timeout(Duration::from_secs(10), client.call_tool(call("search", json!({"query": "boom"}))))
        .await
        .expect("the call is answered")
        .unwrap_err();
    let ServiceError::McpError(e) = out else { panic!("expected a JSON-RPC error, got {out:?}") };
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(e.message.contains("panicked") && !e.message.contains("exploded"), "{}", e.message);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].error_type(), Some("panic"));
    assert_eq!(recs[0].error_message(), Some("the tool panicked: search exploded"));
    assert_eq!(text(&client.call_tool(call("ping", json!({}))).await.unwrap()), "pong", "the server still serves");

    // No tracker at all (none given, none installed): nothing recorded, the call still answered.
    let untracked = Shop { tool_router: mcpeye::rmcp::instrument(Shop::tool_router()), tracker: recording_tracker().0 };
    let client = serve_and_connect(untracked, "test-client", "2.5.0").await;
    let out = tokio::time::timeout(Duration::from_secs(10), client.call_tool(call("search", json!({"query": "boom"}))))
        .await
        .expect("the call is answered")
        .unwrap_err();
    assert!(matches!(out, ServiceError::McpError(ref e) if e.code == ErrorCode::INTERNAL_ERROR), "{out:?}");
}

#[tokio::test]
async fn an_unknown_tool_is_answered_by_rmcp_and_recorded_once() {
    let (client, records) = connect().await;
    let err = client.call_tool(call("nope", json!({"q": 1, "mcpeyeIntent": "refund the order"}))).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(e.message, "tool not found", "rmcp's own answer");
    let recs = take(&records);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!((recs[0].tool_name.as_ref(), recs[0].error_type()), ("nope", Some("unknown_tool")));
    assert_eq!(recs[0].intent, Some(("refund the order".into(), IntentSource::Mcpeye)));
    assert_eq!(recs[0].arguments, json!({}));
    assert_eq!(recs[0].client.as_ref().map(|c| c.name()), Some("test-client"));
    // A known tool is recorded by its route alone, not a second time.
    client.call_tool(call("search", json!({"query": "mug"}))).await.unwrap();
    assert_eq!(take(&records).len(), 1);
}

#[test]
fn disabled_routes_stay_disabled() {
    let router = Shop::tool_router().with_disabled("ping");
    let router = mcpeye::rmcp::Instrument::new().tracker(Tracker::from_fn(|_| {})).apply(router);
    assert!(router.is_disabled("ping"));
    assert!(router.list_all().iter().all(|t| t.name != "ping"));
    assert!(router.has_route(RESERVED_TOOL_NAME));
}

#[tokio::test]
async fn another_intent_description_is_applied_and_the_intent_still_stripped() {
    const SHORT: &str = "Why the user needs this call; name any capability the tools lack.";
    let (tracker, records) = recording_tracker();
    let router =
        mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).intent_description(SHORT).apply(Shop::tool_router());
    for name in ["search", "keys", "ping"] {
        let intent = &router.get(name).unwrap().input_schema["properties"][INTENT_PARAM_NAME];
        assert_eq!(intent["description"], SHORT, "{name}");
    }
    // A tool that declares `mcpeyeIntent` keeps its own description; the reserved tool is there.
    assert_ne!(router.get("note").unwrap().input_schema["properties"][INTENT_PARAM_NAME]["description"], SHORT);
    assert!(router.has_route(RESERVED_TOOL_NAME));
    let client = serve_and_connect(Shop { tool_router: router, tracker }, "test-client", "2.5.0").await;
    let out = client.call_tool(call("search", json!({"query": "lamps", INTENT_PARAM_NAME: "a lamp"}))).await.unwrap();
    assert_eq!(text(&out), "found lamps");
    let recs = take(&records);
    assert_eq!(recs[0].intent, Some(("a lamp".to_owned(), IntentSource::Mcpeye)));
}

#[test]
fn a_blank_or_overlong_intent_description_is_refused_with_its_rule() {
    for (description, rule) in [("  ", "missing-description"), (&*"word ".repeat(2_000), "description-too-long")] {
        let Err(err) = mcpeye::rmcp::Instrument::new()
            .tracker(Tracker::from_fn(|_| {}))
            .intent_description(description.to_owned())
            .try_apply(Shop::tool_router())
        else {
            panic!("{rule}: refused")
        };
        assert_eq!(err.problems.len(), 1);
        assert_eq!(err.problems[0].rule, rule);
        assert_eq!(err.problems[0].location, "Instrument::intent_description");
        assert!(err.to_string().contains("intent_description"), "{err}");
    }
}
