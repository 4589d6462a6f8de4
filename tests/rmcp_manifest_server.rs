//! Path 1: a mcpeye `Manifest` served by rmcp (`ManifestServer`), driven by rmcp's own client
//! over an in-process duplex transport.

mod common;

use common::rmcp::*;
use mcpeye::contract::{INTENT_PARAM_NAME, RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
use mcpeye::rmcp::ManifestServer;
use mcpeye::{ArgsError, IntentSource, Manifest};
use mcpeye_runtime::__private::{Annotations, CallToolResult, Handler, Invocation, ToolDef};
use rmcp::model::{ClientConfig, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

// What `#[mcpeye::tool]` generates, written by hand (the macro is built in parallel).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

fn echo(inv: &Invocation<'_>, args: &mut Value) -> Result<CallToolResult, ArgsError> {
    assert!(args.get(INTENT_PARAM_NAME).is_none(), "the handler saw the intent: {args}");
    let a: EchoArgs = mcpeye_runtime::__private::parse_args(inv, args)?;
    Ok(match a.text.as_str() {
        "fail" => CallToolResult::error_text("the warehouse is closed"),
        "panic" => panic!("the echo broke on {}", a.text),
        t => CallToolResult::text(t),
    })
}

static ECHO: ToolDef = ToolDef {
    rust_path: "rmcp_manifest_server::echo",
    file: file!(),
    line: line!(),
    annotations: Annotations::NONE,
    ..ToolDef::new("echo", "Echo text.", mcpeye_runtime::__private::generate_schema::<EchoArgs>, Handler::Sync(echo))
};

fn later(inv: &Invocation<'_>, args: &mut Value) -> Result<mcpeye_runtime::BoxFuture, ArgsError> {
    let a: EchoArgs = mcpeye_runtime::__private::parse_args(inv, args)?;
    Ok(Box::pin(async move {
        tokio::task::yield_now().await;
        match a.text.as_str() {
            "panic" => panic!("the later echo broke"),
            t => CallToolResult::text(t),
        }
    }))
}

static LATER: ToolDef = ToolDef {
    rust_path: "rmcp_manifest_server::later",
    file: file!(),
    line: line!(),
    annotations: Annotations::NONE,
    ..ToolDef::new(
        "later",
        "Echo text, later.",
        mcpeye_runtime::__private::generate_schema::<EchoArgs>,
        Handler::Async(later),
    )
};

async fn connect() -> (RunningService<RoleClient, ClientConfig>, Records) {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools([&ECHO]).tracker(tracker).build();
    let server = ManifestServer::new(Arc::new(manifest)).with_server_info("demo-server", "1.0.0");
    (serve_and_connect(server, "test-client", "2.5.0").await, records)
}

#[tokio::test]
async fn initialize_answers_the_configured_server_info() {
    let (client, _) = connect().await;
    let info = client.peer_info().expect("the server answered initialize");
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("demo-server"));
    assert!(info.capabilities.tools.is_some());
}

#[tokio::test]
async fn tools_are_listed_with_the_intent_and_the_reserved_tool() {
    let (client, _) = connect().await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["echo", RESERVED_TOOL_NAME]);
    let props = tools[0].input_schema["properties"].as_object().unwrap();
    assert!(props.contains_key("text"));
    assert_eq!(props[INTENT_PARAM_NAME]["type"], "string");
    assert!(tools[1].input_schema["properties"].get(INTENT_PARAM_NAME).is_none());
}

#[tokio::test]
async fn a_call_strips_and_records_the_intent() {
    let (client, records) = connect().await;
    let out = client.call_tool(call("echo", json!({"text": "hi", INTENT_PARAM_NAME: "check the echo"}))).await.unwrap();
    assert_eq!(out.is_error, None);
    assert_eq!(out.content[0].as_text().unwrap().text, "hi");
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].tool_name, "echo");
    assert_eq!(recs[0].arguments, json!({"text": "hi"}));
    assert_eq!(recs[0].intent, Some(("check the echo".to_owned(), IntentSource::Mcpeye)));
    assert_eq!(recs[0].result(), Some(&json!({"content": [{"type": "text", "text": "hi"}]})));
    assert!(!recs[0].is_error());
}

#[tokio::test]
async fn the_reserved_tool_is_answered_with_the_ack() {
    let (client, records) = connect().await;
    let out = client.call_tool(call(RESERVED_TOOL_NAME, json!({"capability": "export as CSV"}))).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, RESERVED_TOOL_ACK);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].tool_name, RESERVED_TOOL_NAME);
    assert_eq!(recs[0].duration, Duration::ZERO);
    assert_eq!(recs[0].intent, None);
    assert_eq!(recs[0].arguments, json!({"capability": "export as CSV"}));
}

#[tokio::test]
async fn an_error_result_is_recorded_as_an_error() {
    let (client, records) = connect().await;
    let out = client.call_tool(call("echo", json!({"text": "fail"}))).await.unwrap();
    assert_eq!(out.is_error, Some(true));
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert!(recs[0].is_error());
    assert_eq!(recs[0].result(), None);
    assert_eq!(recs[0].error_message(), Some("the warehouse is closed"));
}

#[tokio::test]
async fn an_unknown_tool_is_an_invalid_params_error() {
    let (client, records) = connect().await;
    let err = client.call_tool(call("nope", json!({"q": "x", "mcpeyeIntent": "refund the order"}))).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("unknown tool `nope`"), "{}", e.message);
    // Recorded once, with its intent and client: a made-up tool name is what the Intent Gap lists.
    let recs = take(&records);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0].tool_name, "nope");
    assert_eq!(recs[0].error_type(), Some("unknown_tool"));
    assert_eq!(recs[0].error_message(), Some("unknown tool `nope`"));
    assert_eq!(recs[0].intent.as_ref().map(|(i, _)| i.as_str()), Some("refund the order"));
    assert_eq!(recs[0].arguments, json!({}), "the arguments of a tool the server does not have are not kept");
    assert!(recs[0].client.is_some());
}

/// A tool that panics is recorded as a panic and answered with an internal error (-32603), sync
/// or async, in both eras: the client is never left waiting, and the panic's message stays on
/// the server.
#[tokio::test]
async fn a_panicking_tool_is_recorded_and_answered_with_an_error() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools([&ECHO, &LATER]).tracker(tracker).build();
    let client = serve_and_connect(ManifestServer::new(Arc::new(manifest)), "test-client", "2.5.0").await;
    let modern = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-agent", "version": "7.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for (tool, era) in [("echo", None), ("later", None), ("later", Some(modern.clone()))] {
        let mut request = call(tool, json!({"text": "panic", INTENT_PARAM_NAME: "break it"}));
        request.meta = era.clone().map(|m| serde_json::from_value(m).unwrap());
        let answer = tokio::time::timeout(Duration::from_secs(10), client.call_tool(request)).await;
        let err = answer.expect("the call is answered").unwrap_err();
        let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{tool} {era:?}");
        assert!(e.message.contains("panicked") && !e.message.contains("broke"), "{}", e.message);
        let recs = take(&records);
        assert_eq!(recs.len(), 1, "{recs:?}");
        assert_eq!(recs[0].error_type(), Some("panic"));
        assert!(recs[0].error_message().unwrap().contains("broke"), "{:?}", recs[0]);
        assert_eq!(recs[0].intent.as_ref().map(|(i, _)| i.as_str()), Some("break it"));
    }
    // The server still serves.
    let out = client.call_tool(call("later", json!({"text": "after"}))).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "after");
}

/// The server info's version is the payloads' `serverVersion` unless the identity sets one.
#[tokio::test]
async fn the_server_info_version_is_the_server_version_unless_configured() {
    for (configured, expected) in [(None, "1.4.0"), (Some("9.9.9"), "9.9.9")] {
        let mut config = mcpeye::Config::new("p");
        if let Some(v) = configured {
            config = config.identity(mcpeye::Identity::new().server_version(v));
        }
        let (tracker, sink) = mcpeye::testing::MemorySink::with_config(config).unwrap();
        let manifest = Manifest::builder().tools([&ECHO]).tracker(tracker.clone()).build();
        let server = ManifestServer::new(Arc::new(manifest)).with_server_info("demo-server", "1.4.0");
        let client = serve_and_connect(server, "test-client", "2.5.0").await;
        client.call_tool(call("echo", json!({"text": "hi"}))).await.unwrap();
        assert!(tracker.flush(Duration::from_secs(5)).completed);
        let payloads = sink.payloads();
        assert_eq!(payloads.len(), 1);
        assert_eq!(payloads[0]["identity"]["serverVersion"], expected, "{:#}", payloads[0]);
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stock {
    /// The product's SKU.
    sku: String,
    /// Units in stock.
    count: u32,
}

/// Count the stock of a product.
#[mcpeye::tool(read_only)]
fn stock(
    /// The product's SKU.
    sku: String,
) -> Stock {
    Stock { sku, count: 3 }
}

/// `outputSchema` came with MCP 2025-06-18: clients of an earlier protocol are not sent it.
#[tokio::test]
async fn output_schemas_go_only_to_clients_whose_protocol_has_them() {
    use rmcp::model::{ClientCapabilities, Implementation, ProtocolVersion};
    let manifest = Arc::new(Manifest::builder().tools(mcpeye::tool_defs![stock]).build());
    for (version, listed) in [
        (ProtocolVersion::V_2024_11_05, false),
        (ProtocolVersion::V_2025_03_26, false),
        (ProtocolVersion::V_2025_06_18, true),
        (ProtocolVersion::V_2025_11_25, true),
    ] {
        let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("old-client", "1"))
            .with_protocol_version(version.clone());
        let client = serve_and_connect_with(ManifestServer::new(manifest.clone()), config).await;
        let tools = client.list_all_tools().await.unwrap();
        let tool = tools.iter().find(|t| t.name == "stock").unwrap();
        assert_eq!(tool.output_schema.is_some(), listed, "{version:?}: {tool:?}");
        if listed {
            assert_eq!(tool.output_schema.as_ref().unwrap()["properties"]["count"]["type"], "integer");
        }
        // The call answers the same either way.
        let out = client.call_tool(call("stock", json!({"sku": "MUG"}))).await.unwrap();
        assert_eq!(out.structured_content.unwrap()["count"], 3, "{version:?}");
    }
}
