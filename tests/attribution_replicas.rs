//! Conversation handles across the replicas of a stateless server (docs/attribution.md#conversation):
//! two `examples/http_server --stateless` processes sharing `MCPEYE_CONVERSATION_KEY`, and one
//! MCP 2026-07-28 client whose calls alternate between them, as a load balancer would send them.
//! A handle minted by one replica is valid on the other and on a replica started after it (a
//! restart), so the conversation stays whole; a replica with its own key starts a new one.
//! The client is plain JSON-RPC over HTTP (no handshake in this era), so nothing is installed.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::path::PathBuf;

const KEY: &str = "4f1c2e9a7b3d5f60a8c4e2b19d7f3a5c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f";

/// A replica with its own `before_send` log of each event's session.
struct Replica {
    server: HttpServer,
    log: PathBuf,
}

fn replica(ingest: &IngestReceiver, name: &str, key: Option<&str>) -> Replica {
    let log = std::env::temp_dir().join(format!("mcpeye-replica-{name}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let log_text = log.to_string_lossy().into_owned();
    let mut env = vec![("MCPEYE_DEMO_ATTRIBUTION", "1"), ("MCPEYE_DEMO_ATTRIBUTION_LOG", log_text.as_str())];
    if let Some(key) = key {
        env.push(("MCPEYE_CONVERSATION_KEY", key));
    }
    let server = HttpServer::start_example_with("http_server", ingest, &["--stateless"], &env);
    Replica { server, log }
}

impl Replica {
    /// Stops the replica (SIGTERM delivers its events) and gives the session of each event it
    /// made, in order.
    fn stop(self) -> Vec<Value> {
        assert!(self.server.terminate().success());
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let _ = std::fs::remove_file(&self.log);
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["session"].clone()).collect()
    }
}

/// One `tools/call` of MCP 2026-07-28 (its `_meta` says the era and the client): the text items
/// of the result.
fn call(url: &str, id: u64, arguments: Value) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "get_forecast",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "balanced-agent", "version": "1.0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }});
    let response = ureq::post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "get_forecast")
        .send_json(&body)
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let answer: Value = response.into_body().read_json().expect("a JSON answer");
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer}");
    let items = result["content"].as_array().unwrap_or_else(|| panic!("no content: {answer}"));
    items.iter().filter_map(|c| c["text"].as_str().map(str::to_owned)).collect()
}

fn handle_of(texts: &[String]) -> Option<String> {
    texts.iter().find_map(|t| t.strip_prefix("conversation: ").map(str::to_owned))
}

#[test]
fn a_conversation_stays_whole_across_replicas_sharing_the_key_and_a_restart() {
    let ingest = IngestReceiver::start();
    let (a, b) = (replica(&ingest, "a", Some(KEY)), replica(&ingest, "b", Some(KEY)));

    let first = call(&a.server.url, 1, json!({"city": "Oslo", "days": 1}));
    let handle = handle_of(&first).unwrap_or_else(|| panic!("a handle handed out: {first:?}"));
    // Alternating, as a round-robin balancer: each call brings the handle back.
    for i in 2..=7u64 {
        let url = if i % 2 == 0 { &b.server.url } else { &a.server.url };
        let texts = call(url, i, json!({"city": "Rome", "days": 1, "mcpeyeConversation": handle}));
        assert_eq!(texts.len(), 1, "call {i}: the handle is valid here, none handed out: {texts:?}");
        assert!(texts[0].starts_with("Forecast for Rome"), "{texts:?}");
    }
    // A restart: a new process with the same key.
    let a_sessions = a.stop();
    let restarted = replica(&ingest, "a2", Some(KEY));
    let texts = call(&restarted.server.url, 8, json!({"city": "Lima", "days": 1, "mcpeyeConversation": handle}));
    assert_eq!(texts.len(), 1, "valid after a restart: {texts:?}");
    // A replica with a key of its own does not know the handle: a new conversation there.
    let stranger = replica(&ingest, "c", None);
    let texts = call(&stranger.server.url, 9, json!({"city": "Kyiv", "days": 1, "mcpeyeConversation": handle}));
    let other = handle_of(&texts).unwrap_or_else(|| panic!("a new handle: {texts:?}"));
    assert_ne!(other, handle);

    // Every event of the conversation, on whichever replica, has its handle as its session.
    let in_conversation: Vec<Value> = [a_sessions, b.stop(), restarted.stop()].concat();
    assert_eq!(in_conversation.len(), 8, "{in_conversation:?}");
    assert!(in_conversation.iter().all(|s| s == &json!(handle)), "{in_conversation:?}");
    assert_eq!(stranger.stop(), [json!(other)]);
    // The handle never reaches the ingest.
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), 9, "{events:#?}");
    assert!(events.iter().all(|e| e["arguments"].get("mcpeyeConversation").is_none()), "{events:#?}");
}
