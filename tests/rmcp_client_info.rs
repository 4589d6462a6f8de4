//! Every call is attributed to the client that made it, in both rmcp paths: its session's
//! `initialize` `clientInfo`, or the request's `_meta` (MCP 2026-07-28); concurrent sessions of
//! different clients are never mixed up (observed in the payloads of an in-memory tracker).

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
    let server =
        Plain { tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Plain::tool_router()) };
    for identity in identities_after_calls(server, &tracker, &sink).await {
        assert_eq!(identity["client"], "agent-x/4.2", "{identity}");
    }
    assert_eq!(sink.events().len(), 2);
}

/// Three clients connected at once, each calling `echo` with its own name as the text: every
/// payload names one client and carries only that client's calls, and each client's count is
/// exact.
async fn assert_concurrent_clients_kept_apart<S: ServerHandler + Clone>(
    server: S,
    tracker: &Tracker,
    sink: &MemorySink,
) {
    const CALLS: usize = 60;
    let names = ["alpha", "beta", "gamma"];
    let mut clients = Vec::new();
    for name in names {
        clients.push(serve_and_connect(server.clone(), name, "1.0").await);
    }
    let calls = |i: usize| {
        let client = &clients[i];
        async move {
            for _ in 0..CALLS {
                let text = serde_json::json!({"text": names[i]});
                client.call_tool(call("echo", text)).await.unwrap();
            }
        }
    };
    tokio::join!(calls(0), calls(1), calls(2));
    assert!(tracker.flush(Duration::from_secs(10)).completed);
    let mut per_client = std::collections::BTreeMap::<String, usize>::new();
    for payload in sink.payloads() {
        let client = payload["identity"]["client"].as_str().expect("every payload names its client").to_owned();
        for event in payload["events"].as_array().unwrap() {
            assert_eq!(format!("{}/1.0", event["arguments"]["text"].as_str().unwrap()), client, "{payload}");
            *per_client.entry(client.clone()).or_default() += 1;
        }
    }
    let expected: std::collections::BTreeMap<String, usize> =
        names.iter().map(|n| (format!("{n}/1.0"), CALLS)).collect();
    assert_eq!(per_client, expected);
}

#[tokio::test]
async fn manifest_server_keeps_concurrent_clients_apart() {
    let (tracker, sink) = MemorySink::new();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let server = mcpeye::rmcp::ManifestServer::new(Arc::new(manifest));
    assert_concurrent_clients_kept_apart(server, &tracker, &sink).await;
}

#[tokio::test]
async fn instrumented_router_keeps_concurrent_clients_apart() {
    let (tracker, sink) = MemorySink::new();
    let server =
        Plain { tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Plain::tool_router()) };
    assert_concurrent_clients_kept_apart(server, &tracker, &sink).await;
}

/// MCP 2026-07-28: a request introduces its client in `_meta`; that client is the call's, even
/// on a connection whose handshake named another.
#[tokio::test]
async fn the_client_in_a_requests_meta_is_the_calls_client() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![echo]).tracker(tracker.clone()).build();
    let client = serve_and_connect(mcpeye::rmcp::ManifestServer::new(Arc::new(manifest)), "agent-x", "4.2").await;
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-agent", "version": "7.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut request = call("echo", serde_json::json!({"text": "hi"}));
    request.meta = Some(serde_json::from_value(meta).unwrap());
    client.call_tool(request).await.unwrap();
    client.call_tool(call("echo", serde_json::json!({"text": "hi"}))).await.unwrap();
    let recs = take(&records);
    let seen: Vec<(&str, Option<&str>)> = recs
        .iter()
        .map(|r| {
            let c = r.client.as_deref().expect("a client");
            (c.label().unwrap(), c.protocol_version())
        })
        .collect();
    assert_eq!(seen[0], ("modern-agent/7.0", Some("2026-07-28")));
    assert_eq!(seen[1].0, "agent-x/4.2");
}
