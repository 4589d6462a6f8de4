//! Every method a client sends, recorded: `resources/read`, `prompts/get`,
//! `completion/complete` and the lists are counted in `Stats` and summarised by the Intent Gap,
//! on both serving paths (`ManifestServer`, and a user's own handler through `rmcp::observe`),
//! through rmcp's own client. The handler's answers are unchanged, and the ingest receives the
//! tool calls only.

mod common;

use common::rmcp::*;
use mcpeye::report::IntentGap;
use mcpeye::rmcp::ManifestServer;
use mcpeye::testing::MemorySink;
use mcpeye::{MethodCount, Stats};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionInfo, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourcesResult, PaginatedRequestParams, Prompt,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Look up a city's time zone.
#[mcpeye::tool(read_only)]
fn zone_of(
    /// The city.
    city: String,
) -> String {
    format!("{city}: Europe/Lisbon")
}

/// A server of its own: resources, prompts and completion are its; the tools are a manifest's.
#[derive(Clone)]
struct Library {
    tool_router: ToolRouter<Self>,
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .enable_completions()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new("docs://guide", "guide")]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match request.uri.as_str() {
            "docs://guide" | "docs://faq" => {
                let text = ResourceContents::text(format!("the text of {}", request.uri), request.uri);
                Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![text])))
            }
            other => Err(ErrorData::resource_not_found(format!("no resource {other}"), None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new("review", Some("Review a text."), None)]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "review" {
            return Err(ErrorData::invalid_params(format!("no prompt {}", request.name), None));
        }
        let message = PromptMessage::new_text(Role::User, "Review this.");
        Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![message])))
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Ok(CompleteResult::new(CompletionInfo::new(vec!["Lisbon".into(), "Porto".into()]).unwrap()))
    }
}

fn method(stats: &Stats, name: &str) -> (u64, u64) {
    stats.methods.get(name).map_or((0, 0), |c: &MethodCount| (c.requests, c.errors))
}

fn error_code(e: ServiceError) -> ErrorCode {
    match e {
        ServiceError::McpError(e) => e.code,
        other => panic!("a JSON-RPC error, not {other}"),
    }
}

#[tokio::test]
async fn a_users_own_handler_observed_counts_what_agents_read_and_answers_unchanged() {
    let (tracker, sink) = MemorySink::new();
    let manifest =
        Arc::new(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![zone_of]).tracker(tracker.clone()).build());
    let server = Library { tool_router: mcpeye::rmcp::tool_router(manifest) };
    let observed = mcpeye::rmcp::observe(server).with_tracker(tracker.clone());
    let client = serve_and_connect(observed, "reader", "1.0").await;

    let tools = client.list_tools(None).await.unwrap();
    assert!(tools.tools.iter().any(|t| t.name == "zone_of"));
    assert_eq!(client.list_resources(None).await.unwrap().resources[0].uri, "docs://guide");
    let guide = client.read_resource(ReadResourceRequestParams::new("docs://guide")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&guide.contents[0]).unwrap()["text"],
        "the text of docs://guide",
        "the handler's answer, as it gave it"
    );
    client.read_resource(ReadResourceRequestParams::new("docs://faq")).await.unwrap();
    let missing = client.read_resource(ReadResourceRequestParams::new("docs://missing")).await.unwrap_err();
    assert_eq!(error_code(missing), ErrorCode::RESOURCE_NOT_FOUND, "the handler's error, as it gave it");
    assert_eq!(client.list_prompts(None).await.unwrap().prompts[0].name, "review");
    let prompt = client.get_prompt(GetPromptRequestParams::new("review")).await.unwrap();
    assert_eq!(prompt.messages.len(), 1);
    client.get_prompt(GetPromptRequestParams::new("review")).await.unwrap();
    let no_prompt = client.get_prompt(GetPromptRequestParams::new("summarise")).await.unwrap_err();
    assert_eq!(error_code(no_prompt), ErrorCode::INVALID_PARAMS);
    let completion = client
        .complete(CompleteRequestParams::new(Reference::for_prompt("review"), ArgumentInfo::new("city", "L")))
        .await
        .unwrap();
    assert_eq!(completion.completion.values, ["Lisbon", "Porto"]);
    client.call_tool(call("zone_of", json!({"city": "Lisbon"}))).await.unwrap();
    client.cancel().await.unwrap();

    tracker.flush(Duration::from_secs(5));
    let stats = tracker.stats();
    assert_eq!(method(&stats, "tools/list"), (1, 0));
    assert_eq!(method(&stats, "resources/list"), (1, 0));
    assert_eq!(method(&stats, "resources/read"), (3, 1));
    assert_eq!(method(&stats, "prompts/list"), (1, 0));
    assert_eq!(method(&stats, "prompts/get"), (3, 1));
    assert_eq!(method(&stats, "completion/complete"), (1, 0));
    assert!(!stats.methods.contains_key("tools/call"), "calls are `captured`, not a method count");
    let read: Vec<(&str, u64)> = stats.resources_read.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(read, [("docs://faq", 1), ("docs://guide", 1), ("docs://missing", 1)]);
    let got: Vec<(&str, u64)> = stats.prompts_got.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(got, [("review", 2), ("summarise", 1)]);

    // The ingest receives the tool call, and nothing of the other methods.
    assert_eq!(stats.captured, 1);
    let events = sink.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["toolName"], "zone_of");

    let gap = IntentGap::from_events(&events).with_reads(&stats);
    let reads = gap.reads.as_ref().unwrap();
    assert_eq!(reads.prompts[0].name, "review");
    assert_eq!(reads.prompts[0].count, 2);
    assert_eq!(reads.resources.len(), 3);
    let shown = gap.to_string();
    assert!(shown.contains("What agents read") && shown.contains("docs://guide"), "{shown}");
}

#[tokio::test]
async fn an_unobserved_handler_records_nothing_of_its_reads() {
    let (tracker, sink) = MemorySink::new();
    let manifest =
        Arc::new(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![zone_of]).tracker(tracker.clone()).build());
    let client = serve_and_connect(Library { tool_router: mcpeye::rmcp::tool_router(manifest) }, "plain", "1.0").await;
    client.read_resource(ReadResourceRequestParams::new("docs://guide")).await.unwrap();
    client.cancel().await.unwrap();
    tracker.flush(Duration::from_secs(5));
    assert!(tracker.stats().methods.is_empty() && tracker.stats().resources_read.is_empty());
    assert!(sink.events().is_empty());
}

#[tokio::test]
async fn a_manifest_server_counts_its_lists_and_what_agents_asked_of_it() {
    let (tracker, sink) = MemorySink::new();
    let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![zone_of]).tracker(tracker.clone()).build();
    let client = serve_and_connect(ManifestServer::new(Arc::new(manifest)), "lister", "1.0").await;
    let tools = client.list_tools(None).await.unwrap();
    assert!(tools.tools.iter().any(|t| t.name == "zone_of"));
    // A manifest serves no resources or prompts: answered as rmcp answers them, and counted.
    let read = client.read_resource(ReadResourceRequestParams::new("docs://guide")).await.unwrap_err();
    assert_eq!(error_code(read), ErrorCode::METHOD_NOT_FOUND);
    let prompt = client.get_prompt(GetPromptRequestParams::new("review")).await.unwrap_err();
    assert_eq!(error_code(prompt), ErrorCode::METHOD_NOT_FOUND);
    let listed = client.list_resources(None).await.unwrap_err();
    assert_eq!(error_code(listed), ErrorCode::METHOD_NOT_FOUND);
    client.cancel().await.unwrap();

    tracker.flush(Duration::from_secs(5));
    let stats = tracker.stats();
    assert_eq!(method(&stats, "tools/list"), (1, 0));
    assert_eq!(method(&stats, "resources/read"), (1, 1));
    assert_eq!(method(&stats, "prompts/get"), (1, 1));
    assert_eq!(method(&stats, "resources/list"), (1, 1));
    assert_eq!(stats.resources_read.get("docs://guide"), Some(&1));
    assert_eq!(stats.prompts_got.get("review"), Some(&1));
    assert_eq!(stats.captured, 0);
    assert!(sink.events().is_empty(), "no event for methods other than tools/call");
}
