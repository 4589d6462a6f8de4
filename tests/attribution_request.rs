//! What `identify` sees of each call, in process, on every serving path: `ManifestServer`, an
//! `instrument`ed rmcp router, a manifest's `tool_router` inside a user's handler, a tool the
//! router does not have (`call_tool_with`), and `Manifest::call_from`. The HTTP head is seen
//! over real HTTP only (`tests/attribution_users.rs`, through the official Python client).

mod common;

use common::rmcp::*;
use mcpeye::testing::MemorySink;
use mcpeye::{CallIdentity, Config, Manifest, Origin, Tracker};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);
const USER_KEY: &str = "acme.example/user";

/// Echo the text.
#[mcpeye::tool]
fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
    tracker: Tracker,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[tool_router]
impl Plain {
    #[tool(description = "Echo the text.")]
    fn echo(&self, Parameters(t): Parameters<Text>) -> String {
        t.text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        mcpeye::rmcp::call_tool_with(&self.tool_router, &self.tracker, self, request, context).await
    }
}

/// What `identify` was shown of one call.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    tool: String,
    arguments: Value,
    client: Option<String>,
    has_session: bool,
    user_in_meta: Option<String>,
}

/// A tracker into memory whose `identify` notes what it sees and names the user `_meta` gives.
fn identifying_tracker() -> (Tracker, MemorySink, Arc<Mutex<Vec<Seen>>>) {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let s = seen.clone();
    let config = Config::new("proj").identify(move |r| {
        let user = r.meta().and_then(|m| m.get(USER_KEY)).and_then(Value::as_str).map(str::to_owned);
        s.lock().unwrap().push(Seen {
            tool: r.tool_name().to_owned(),
            arguments: r.arguments().clone(),
            client: r.client().map(|c| c.name().to_owned()),
            has_session: r.session_id().is_some(),
            user_in_meta: user.clone(),
        });
        user.map(|u| CallIdentity::new().user_id(u))
    });
    let (tracker, sink) = MemorySink::with_config(config).unwrap();
    (tracker, sink, seen)
}

fn with_user(mut request: CallToolRequestParams, user: &str) -> CallToolRequestParams {
    request.meta = Some(serde_json::from_value(json!({USER_KEY: user})).unwrap());
    request
}

fn users(tracker: &Tracker, sink: &MemorySink) -> Vec<(String, Option<String>)> {
    assert!(tracker.flush(PATIENCE).completed);
    sink.events()
        .iter()
        .map(|e| (e["toolName"].as_str().unwrap().to_owned(), e["userId"].as_str().map(str::to_owned)))
        .collect()
}

fn expect_seen(seen: &Mutex<Vec<Seen>>, tool: &str, arguments: Value, user: &str) {
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        seen,
        [Seen {
            tool: tool.to_owned(),
            arguments,
            client: Some("agent-x".to_owned()),
            has_session: true,
            user_in_meta: Some(user.to_owned()),
        }]
    );
}

#[tokio::test]
async fn manifest_server_shows_identify_the_request() {
    let (tracker, sink, seen) = identifying_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let client = serve_and_connect(mcpeye::rmcp::ManifestServer::new(Arc::new(manifest)), "agent-x", "1.0").await;
    let request = with_user(call("echo", json!({"text": "hi", "mcpeyeIntent": "say hi"})), "u-1");
    client.call_tool(request).await.unwrap();
    // The intent is the call's, not an argument: identify sees the arguments the tool got.
    expect_seen(&seen, "echo", json!({"text": "hi"}), "u-1");
    assert_eq!(users(&tracker, &sink), [("echo".to_owned(), Some("u-1".to_owned()))]);
}

#[tokio::test]
async fn an_instrumented_router_shows_identify_the_request() {
    let (tracker, sink, seen) = identifying_tracker();
    let router = mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Plain::tool_router());
    let server = Plain { tool_router: router, tracker: tracker.clone() };
    let client = serve_and_connect(server, "agent-x", "1.0").await;
    client.call_tool(with_user(call("echo", json!({"text": "hi", "mcpeyeIntent": "say hi"})), "u-2")).await.unwrap();
    expect_seen(&seen, "echo", json!({"text": "hi"}), "u-2");
    // A tool the router does not have is recorded once, with its user.
    let err = client.call_tool(with_user(call("nope", json!({"mcpeyeIntent": "guess"})), "u-3")).await;
    assert!(err.is_err());
    let unknown = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(unknown.len(), 1);
    assert_eq!((unknown[0].tool.as_str(), unknown[0].user_in_meta.as_deref()), ("nope", Some("u-3")));
    assert_eq!(
        users(&tracker, &sink),
        [("echo".to_owned(), Some("u-2".to_owned())), ("nope".to_owned(), Some("u-3".to_owned()))]
    );
}

#[tokio::test]
async fn a_manifest_tool_router_shows_identify_the_request() {
    let (tracker, sink, seen) = identifying_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let router = mcpeye::rmcp::tool_router(Arc::new(manifest));
    let server = Plain { tool_router: router, tracker: tracker.clone() };
    let client = serve_and_connect(server, "agent-x", "1.0").await;
    client.call_tool(with_user(call("echo", json!({"text": "yo", "mcpeyeIntent": "greet"})), "u-4")).await.unwrap();
    expect_seen(&seen, "echo", json!({"text": "yo"}), "u-4");
    assert_eq!(users(&tracker, &sink), [("echo".to_owned(), Some("u-4".to_owned()))]);
}

#[test]
fn manifest_call_from_shows_identify_the_origin() {
    let (tracker, sink, seen) = identifying_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let mut meta = Map::new();
    meta.insert(USER_KEY.to_owned(), json!("u-5"));
    let origin = Origin::default().with_meta(meta).with_session_id("s-1");
    manifest.call_from(&origin, "echo", json!({"text": "a", "mcpeyeIntent": "x"}));
    let got = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        got,
        [Seen {
            tool: "echo".to_owned(),
            arguments: json!({"text": "a"}),
            client: None,
            has_session: true,
            user_in_meta: Some("u-5".to_owned()),
        }]
    );
    assert_eq!(users(&tracker, &sink), [("echo".to_owned(), Some("u-5".to_owned()))]);
}

#[tokio::test]
async fn a_tracker_without_identify_beside_one_with_it_records_no_user() {
    // Two servers in one process: only the one whose tracker identifies names users.
    let (with, with_sink, _seen) = identifying_tracker();
    let (without, without_sink) = MemorySink::new();
    let m1 = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(with.clone()).build();
    let m2 = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(without.clone()).build();
    let c1 = serve_and_connect(mcpeye::rmcp::ManifestServer::new(Arc::new(m1)), "agent-x", "1.0").await;
    let c2 = serve_and_connect(mcpeye::rmcp::ManifestServer::new(Arc::new(m2)), "agent-x", "1.0").await;
    c1.call_tool(with_user(call("echo", json!({"text": "1"})), "u-6")).await.unwrap();
    c2.call_tool(with_user(call("echo", json!({"text": "2"})), "u-7")).await.unwrap();
    assert_eq!(users(&with, &with_sink), [("echo".to_owned(), Some("u-6".to_owned()))]);
    assert_eq!(users(&without, &without_sink), [("echo".to_owned(), None)]);
}
