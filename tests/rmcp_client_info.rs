//! The client's `initialize` `clientInfo` becomes the `client` of the identity sent with the
//! events, in both rmcp paths (observed in the payloads of an in-memory tracker).

mod common;

use common::rmcp::*;
use mcpeye::testing::MemorySink;
use mcpeye::{Manifest, Tracker};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Echo text back.
#[mcpeye::tool]
fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text.
    text: String,
}

#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Plain {
    #[tool(description = "Echo text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

/// Connects a client called `agent-x` `4.2`, calls `echo` twice, and returns the identities of
/// the payloads sent.
async fn identities_after_calls<S: ServerHandler>(server: S, tracker: &Tracker, sink: &MemorySink) -> Vec<Value> {
    let client = serve_and_connect(server, "agent-x", "4.2").await;
    for _ in 0..2 {
        client.call_tool(call("echo", serde_json::json!({"text": "hi"}))).await.unwrap();
    }
    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let payloads = sink.payloads();
    assert!(!payloads.is_empty());
    payloads.into_iter().map(|p| p["identity"].clone()).collect()
}

#[tokio::test]
async fn manifest_server_hands_the_client_info_to_the_tracker() {
    let (tracker, sink) = MemorySink::new();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let server = mcpeye::rmcp::ManifestServer::new(Arc::new(manifest));
    for identity in identities_after_calls(server, &tracker, &sink).await {
        assert_eq!(identity["client"], "agent-x/4.2", "{identity}");
    }
    assert_eq!(sink.events().len(), 2);
}

#[tokio::test]
async fn instrumented_router_hands_the_client_info_to_the_tracker() {
    let (tracker, sink) = MemorySink::new();
    let server = Plain { tool_router: mcpeye::rmcp::instrument_with(Plain::tool_router(), tracker.clone()) };
    for identity in identities_after_calls(server, &tracker, &sink).await {
        assert_eq!(identity["client"], "agent-x/4.2", "{identity}");
    }
    assert_eq!(sink.events().len(), 2);
}
