//! A manifest's tools mounted into a user's own rmcp server (`mcpeye::rmcp::tool_router`), next to
//! the server's resources and its own rmcp `#[tool]`s: everything is served, and the manifest's
//! calls are recorded once each, with their client.

mod common;

use common::rmcp::*;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, ListResourcesResult, PaginatedRequestParams, Resource,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

/// Look up a city's time zone.
#[mcpeye::tool(read_only)]
fn time_zone(
    /// The city.
    city: String,
) -> String {
    format!("{city}: Europe/Lisbon")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PingArgs {
    /// Anything.
    text: String,
}

#[derive(Clone)]
struct MyServer {
    tool_router: ToolRouter<Self>,
    /// The manifest's: the calls of tools the router does not have go there too.
    tracker: mcpeye::Tracker,
}

#[tool_router]
impl MyServer {
    #[tool(description = "Answer pong.")]
    fn ping(&self, Parameters(PingArgs { text }): Parameters<PingArgs>) -> String {
        format!("pong {text}")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MyServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new("file:///zones.csv", "zones")]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        mcpeye::rmcp::call_tool_with(&self.tool_router, &self.tracker, self, request, context).await
    }
}

#[tokio::test]
async fn a_manifest_mounts_into_a_server_that_serves_the_rest_of_mcp() {
    let (tracker, records) = recording_tracker();
    let manifest =
        Arc::new(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![time_zone]).tracker(tracker.clone()).build());
    let server = MyServer { tool_router: MyServer::tool_router() + mcpeye::rmcp::tool_router(manifest), tracker };
    let client = serve_and_connect(server, "composer", "0.3").await;

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ["mcpeye_request_capability", "ping", "time_zone"]);
    let tz = tools.iter().find(|t| t.name == "time_zone").unwrap();
    assert!(tz.input_schema["properties"]["mcpeyeIntent"].is_object());

    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources[0].uri, "file:///zones.csv");

    let args = serde_json::json!({"city": "Lisbon", "mcpeyeIntent": "planning a call"});
    let out = client.call_tool(call("time_zone", args)).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "Lisbon: Europe/Lisbon");
    let out = client.call_tool(call("ping", serde_json::json!({"text": "x"}))).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "pong x");
    let out =
        client.call_tool(call("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}))).await;
    assert!(out.is_ok());
    let args = serde_json::json!({"mcpeyeIntent": "convert the time"});
    let err = client.call_tool(call("time_convert", args)).await.unwrap_err();
    assert!(matches!(err, rmcp::service::ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS));

    // The manifest's two calls, not the server's own `ping` (not instrumented here).
    let recs = take(&records);
    let seen: Vec<(&str, Option<&str>)> =
        recs.iter().map(|r| (r.tool_name.as_ref(), r.client.as_deref().and_then(|c| c.label()))).collect();
    let composer = Some("composer/0.3");
    assert_eq!(seen, [("time_zone", composer), ("mcpeye_request_capability", composer), ("time_convert", composer)]);
    assert_eq!(recs[0].intent.as_ref().unwrap().0, "planning a call");
    assert_eq!(
        (recs[2].error_type(), recs[2].intent.as_ref().unwrap().0.as_str()),
        (Some("unknown_tool"), "convert the time")
    );
    // The unknown call belongs to the same session as the manifest's calls.
    assert_eq!(recs[2].session_id, recs[0].session_id);
}

#[derive(Clone)]
struct Raw {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Raw {
    /// A result made from its JSON, as a tool of an older rmcp or a proxy would: no `resultType`.
    #[tool(description = "Answer from JSON.")]
    fn raw(&self) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let json = serde_json::json!({"content": [{"type": "text", "text": "raw"}]});
        serde_json::from_value(json).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Raw {}

/// MCP 2026-07-28 requires `resultType` on every result, older versions do not know it: the
/// manifest's calls mounted into a server of one's own, its reserved tool and an instrumented
/// route whose tool made its result without rmcp's constructors answer `"complete"` to a request
/// of 2026-07-28 and leave it out for a handshake-era request, their content unchanged.
#[tokio::test]
async fn results_carry_result_type_in_2026_07_28_only() {
    let (tracker, records) = recording_tracker();
    let manifest =
        Arc::new(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![time_zone]).tracker(tracker.clone()).build());
    let router = mcpeye::rmcp::Instrument::new().tracker(tracker).apply(Raw::tool_router())
        + mcpeye::rmcp::tool_router(manifest);
    let client = serve_and_connect(Raw { tool_router: router }, "eras", "1.0").await;
    let modern = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "eras", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let calls = [
        ("raw", serde_json::json!({}), "raw"),
        ("time_zone", serde_json::json!({"city": "Lisbon"}), "Lisbon: Europe/Lisbon"),
        ("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}), ""),
    ];
    for (tool, args, text) in calls {
        let mut request = call(tool, args.clone());
        request.meta = Some(serde_json::from_value(modern.clone()).unwrap());
        let out = client.call_tool(request).await.unwrap();
        assert_eq!(out.result_type, Some(rmcp::model::ResultType::COMPLETE), "{tool} in 2026-07-28");
        let legacy = client.call_tool(call(tool, args)).await.unwrap();
        assert_eq!(legacy.result_type, None, "{tool} for a handshake-era request");
        assert_eq!(out.content, legacy.content, "{tool}: the same answer in both eras");
        if !text.is_empty() {
            assert_eq!(out.content[0].as_text().unwrap().text, text);
        }
    }
    assert_eq!(take(&records).len(), 6, "each call recorded once");
}
