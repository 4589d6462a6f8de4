//! Tools that ask, in both eras, with one handler: a `#[mcpeye::tool]` that elicits and samples
//! through its `Context` answers an MCP 2026-07-28 request with `input_required` rounds (driven
//! by rmcp's own client, and by hand to tamper with the state) and a handshake-era request with
//! server-to-client requests; every logical call is one record, one event at the ingest.
#![allow(deprecated)] // rmcp deprecates MCP sampling ahead of SEP-2577

mod common;

use common::rmcp::*;
use mcpeye::rmcp::ManifestServer;
use mcpeye::testing::IngestReceiver;
use mcpeye::{CallOutcome, ClientError, Config, Context, ElicitationRequest, Manifest, SamplingRequest, Tracker};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputResponses,
    ListRootsResult,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

/// Books a table: asks the user for a name, then the model for a greeting.
#[mcpeye::tool]
async fn book(
    /// How many people.
    people: u32,
    ctx: Context,
) -> Result<String, ClientError> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let who = ctx.elicit(ElicitationRequest::form("Whose name is the booking under?", schema).key("name")).await?;
    let name = who.content.as_ref().and_then(|c| c["name"].as_str()).unwrap_or("nobody").to_owned();
    let greeting = ctx.create_message(SamplingRequest::new(20).user(format!("Greet {name}"))).await?;
    Ok(format!("{people} for {name}: {}", greeting.text().unwrap_or_default()))
}

/// Asks for the client's roots and the user's approval in one round.
#[mcpeye::tool]
async fn scan(ctx: Context) -> Result<String, ClientError> {
    let approve = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let (roots, approval) = tokio::join!(ctx.list_roots(), ctx.elicit(ElicitationRequest::form("Scan?", approve)));
    Ok(format!("{} root(s), {}", roots?.len(), approval?.action.as_str()))
}

/// Answers every question it is asked, counting them.
#[derive(Clone, Default)]
struct Answering {
    elicitations: Arc<AtomicUsize>,
    samplings: Arc<AtomicUsize>,
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_elicitation().enable_sampling().enable_roots().build();
        ClientConfig::new(capabilities, Implementation::new("asking-client", "1.0"))
    }

    async fn create_elicitation(
        &self,
        _: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicitations.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }

    async fn create_message(
        &self,
        _: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.samplings.fetch_add(1, Ordering::SeqCst);
        let result = json!({"role": "assistant", "content": {"type": "text", "text": "Welcome, Ada!"}, "model": "m"});
        Ok(serde_json::from_value(result).unwrap())
    }

    async fn list_roots(&self, _: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///src", "name": "src"}]})).unwrap())
    }
}

/// `_meta` of an MCP 2026-07-28 request from a client that can answer everything.
fn modern(mut request: CallToolRequestParams, capabilities: Value) -> CallToolRequestParams {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-agent", "version": "7.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    });
    request.meta = Some(serde_json::from_value(meta).unwrap());
    request
}

fn everything() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

async fn connect(manifest: Manifest, handler: Answering) -> RunningService<RoleClient, Answering> {
    let server = ManifestServer::new(Arc::new(manifest));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    handler.serve(client_io).await.expect("the client connects")
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default()
}

#[tokio::test]
async fn one_handler_asks_in_both_eras_and_each_call_is_one_record() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![book, scan]).tracker(tracker).build();
    let handler = Answering::default();
    let client = connect(manifest, handler.clone()).await;
    let args = json!({"people": 2, "mcpeyeIntent": "book dinner for two"});

    // MCP 2026-07-28: rmcp's client drives the rounds (elicitation, then sampling), answering each.
    let out = client.call_tool(modern(call("book", args.clone()), everything())).await.unwrap();
    assert_eq!(text(&out), "2 for Ada: Welcome, Ada!");
    let recs = take(&records);
    assert_eq!(recs.len(), 1, "three rounds, one record");
    assert_eq!(recs[0].intent.as_ref().map(|(t, _)| t.as_str()), Some("book dinner for two"));
    assert_eq!(recs[0].arguments, json!({"people": 2}));
    assert!(matches!(&recs[0].outcome, CallOutcome::Success { .. }));
    assert_eq!(recs[0].client.as_deref().and_then(|c| c.label()), Some("modern-agent/7.0"));

    // Two questions of one round: one retry.
    let out = client.call_tool(modern(call("scan", json!({})), everything())).await.unwrap();
    assert_eq!(text(&out), "1 root(s), accept");
    assert_eq!(take(&records).len(), 1);

    // The handshake era: the same handler asks with server-to-client requests.
    let (elicited, sampled) = (handler.elicitations.load(Ordering::SeqCst), handler.samplings.load(Ordering::SeqCst));
    let out = client.call_tool(call("book", args)).await.unwrap();
    assert_eq!(text(&out), "2 for Ada: Welcome, Ada!");
    assert_eq!(handler.elicitations.load(Ordering::SeqCst), elicited + 1);
    assert_eq!(handler.samplings.load(Ordering::SeqCst), sampled + 1);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].client.as_deref().and_then(|c| c.label()), Some("asking-client/1.0"));
}

fn responses(value: Value) -> InputResponses {
    serde_json::from_value(value).unwrap()
}

#[tokio::test]
async fn the_state_is_bound_to_its_call_and_refused_when_tampered_with() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![book]).tracker(tracker).build();
    let client = connect(manifest, Answering::default()).await;
    let request = modern(call("book", json!({"people": 4})), everything());

    let CallToolResponse::InputRequired(first) = client.call_tool_once(request.clone()).await.unwrap() else {
        panic!("the first round asks")
    };
    let asked = first.input_requests.as_ref().unwrap();
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["name"]);
    let state = first.request_state.clone().expect("a state");
    assert!(take(&records).is_empty(), "a round that asks is not recorded");

    let answered = |state: String| {
        request
            .clone()
            .with_input_responses(responses(json!({"name": {"action": "accept", "content": {"name": "Bo"}}})))
            .with_request_state(state)
    };
    // Tampered with, or replayed for another call (other arguments): an invalid-params error.
    let tampered = client.call_tool_once(answered(format!("{state}x"))).await.unwrap_err();
    assert!(tampered.to_string().contains("requestState"), "{tampered}");
    let mut other = answered(state.clone());
    other.arguments = Some(json!({"people": 40}).as_object().cloned().unwrap());
    assert!(client.call_tool_once(other).await.is_err());

    // The genuine retry: the name is answered, the model is asked next; the state changes.
    let CallToolResponse::InputRequired(second) = client.call_tool_once(answered(state.clone())).await.unwrap() else {
        panic!("the second round asks the model")
    };
    let asked = second.input_requests.as_ref().unwrap();
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["sample-1"]);
    let second_state = second.request_state.clone().unwrap();
    assert_ne!(second_state, state);

    // The last round carries only its own answer: the name travels in the state.
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "Hi Bo"}, "model": "m"});
    let last =
        request.clone().with_input_responses(responses(json!({"sample-1": sampled}))).with_request_state(second_state);
    let CallToolResponse::Complete(done) = client.call_tool_once(last).await.unwrap() else { panic!("complete") };
    assert_eq!(text(&done), "4 for Bo: Hi Bo");
    assert_eq!(take(&records).len(), 1);
}

#[tokio::test]
async fn an_undeclared_capability_is_not_asked() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![book]).tracker(tracker).build();
    let client = connect(manifest, Answering::default()).await;
    let request = modern(call("book", json!({"people": 1})), json!({"sampling": {}}));
    let CallToolResponse::Complete(out) = client.call_tool_once(request).await.unwrap() else {
        panic!("nothing can be asked: the handler's error is the answer")
    };
    assert_eq!(out.is_error, Some(true));
    assert!(text(&out).contains("`elicitation`"), "{}", text(&out));
    assert_eq!(take(&records).len(), 1);
}

fn pipeline(ingest: &IngestReceiver) -> (Manifest, Tracker) {
    let config = Config::new("proj_rounds").ingest_url(ingest.url()).ingest_secret("s");
    let tracker = Tracker::new(config).expect("valid config");
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![book]).tracker(tracker.clone()).build();
    (manifest, tracker)
}

/// Every round at a loopback ingest: one event for the whole call, timed from the first round,
/// with the first round's intent; the rounds and the user's action are counted.
#[tokio::test]
async fn the_rounds_of_a_call_are_one_event_at_the_ingest() {
    let ingest = IngestReceiver::start();
    let (manifest, tracker) = pipeline(&ingest);
    let client = connect(manifest, Answering::default()).await;
    let request = modern(call("book", json!({"people": 3, "mcpeyeIntent": "a table for three"})), everything());

    let CallToolResponse::InputRequired(first) = client.call_tool_once(request.clone()).await.unwrap() else {
        panic!("asks")
    };
    // Time between the rounds belongs to the call.
    tokio::time::sleep(Duration::from_millis(120)).await;
    let named = json!({"name": {"action": "accept", "content": {"name": "Cy"}}});
    let retry = request.clone().with_input_responses(responses(named)).with_request_state(first.request_state.unwrap());
    let CallToolResponse::InputRequired(second) = client.call_tool_once(retry).await.unwrap() else { panic!("asks") };
    let sampled = json!({"sample-1": {"role": "assistant", "content": {"type": "text", "text": "Hey"}, "model": "m"}});
    let last = request.with_input_responses(responses(sampled)).with_request_state(second.request_state.unwrap());
    client.call_tool_once(last).await.unwrap();

    // A call abandoned after its first round: counted, never an event.
    let abandoned = modern(call("book", json!({"people": 9})), everything());
    assert!(matches!(client.call_tool_once(abandoned).await.unwrap(), CallToolResponse::InputRequired(_)));

    let report = tracker.flush(PATIENCE);
    assert!(report.completed);
    let events = ingest.events();
    assert_eq!(events.len(), 1, "one event per logical call: {events:?}");
    let event = &events[0];
    assert_eq!(event["toolName"], "book");
    assert_eq!(event["intent"], "a table for three");
    assert_eq!(event["result"]["content"][0]["text"], "3 for Cy: Hey");
    assert!(event["durationMs"].as_u64().unwrap() >= 120, "timed from the first round: {event}");
    let stats = report.stats;
    assert_eq!(stats.captured, 1);
    assert_eq!(stats.input_required, 3, "two rounds of the booking, one of the abandoned call");
    assert_eq!(stats.elicitations.accept, 1);
    assert_eq!(stats.elicitations.decline + stats.elicitations.cancel, 0);
}

/// An rmcp tool (no mcpeye in it) that asks through rmcp's own `input_required` results, with a
/// state of its own, under `instrument`.
#[derive(Clone)]
struct Plain {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

#[rmcp::tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for Plain {}

fn plain_router() -> rmcp::handler::server::router::tool::ToolRouter<Plain> {
    use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
    use rmcp::model::{CallToolResult, ContentBlock, InputRequiredResult, Tool};
    let schema = json!({"type": "object", "properties": {"item": {"type": "string"}}});
    let tool = Tool::new("confirm", "Asks the user to confirm", schema.as_object().cloned().unwrap());
    let route = ToolRoute::new_dyn(tool, |ctx: rmcp::handler::server::tool::ToolCallContext<'_, Plain>| {
        let answered = ctx.input_responses.as_ref().and_then(|r| r.get("ok")).cloned();
        let response = match answered {
            Some(answer) => CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(format!(
                "{} with the tool's state {:?}",
                answer["action"].as_str().unwrap_or_default(),
                ctx.request_state.as_deref()
            ))])),
            None => {
                let asks = json!({"ok": {"method": "elicitation/create", "params": {
                    "message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}
                }}});
                let asks = serde_json::from_value(asks).unwrap();
                CallToolResponse::InputRequired(InputRequiredResult::new(Some(asks), Some("tool-state-1".to_owned())))
            }
        };
        Box::pin(std::future::ready(Ok(response)))
    });
    ToolRouter::new().with_route(route)
}

/// Under `instrument`, the rounds of an rmcp tool that asks by itself are one event too: its own
/// state travels inside mcpeye's sealed one, and it gets it back as it sent it.
#[tokio::test]
async fn an_instrumented_rmcp_tool_that_asks_is_one_event() {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(Config::new("proj_plain").ingest_url(ingest.url()).ingest_secret("s")).unwrap();
    let server = Plain { tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(plain_router()) };
    let client = serve_and_connect(server, "plain-client", "1.0").await;
    let request = modern(call("confirm", json!({"item": "x", "mcpeyeIntent": "delete the draft"})), everything());

    let CallToolResponse::InputRequired(first) = client.call_tool_once(request.clone()).await.unwrap() else {
        panic!("the tool asks")
    };
    let state = first.request_state.unwrap();
    assert_ne!(state, "tool-state-1", "the tool's state is wrapped");
    tokio::time::sleep(Duration::from_millis(80)).await;
    let answer = responses(json!({"ok": {"action": "accept", "content": {}}}));
    let tampered = request.clone().with_input_responses(answer.clone()).with_request_state(format!("{state}!"));
    assert!(client.call_tool_once(tampered).await.is_err());
    let retry = request.with_input_responses(answer).with_request_state(state);
    let CallToolResponse::Complete(done) = client.call_tool_once(retry).await.unwrap() else { panic!("complete") };
    assert_eq!(text(&done), "accept with the tool's state Some(\"tool-state-1\")");

    let report = tracker.flush(PATIENCE);
    let events = ingest.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["toolName"], "confirm");
    assert_eq!(events[0]["intent"], "delete the draft");
    assert!(events[0]["durationMs"].as_u64().unwrap() >= 80, "{}", events[0]);
    assert_eq!(report.stats.input_required, 1);
}
