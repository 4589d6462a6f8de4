//! The `tracing` feature with a real `tracing-subscriber` registry: one span per call, target
//! `mcpeye`, with the conventions' fields and the `otel.*` fields `tracing-opentelemetry` reads;
//! the handler's own spans are its children.

use mcpeye::{ClientInfo, Origin, ToolError, Transport};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Clone, Default)]
struct Captured {
    name: String,
    target: String,
    parent: Option<String>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(u64, Captured)>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut c = Captured {
            name: attrs.metadata().name().to_owned(),
            target: attrs.metadata().target().to_owned(),
            parent: ctx.span(id).and_then(|s| s.parent()).map(|p| p.name().to_owned()),
            ..Captured::default()
        };
        attrs.record(&mut Fields(&mut c.fields));
        self.0.lock().unwrap().push((id.into_u64(), c));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, c)) = spans.iter_mut().rev().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut c.fields));
        }
    }
}

/// Search the catalogue.
#[mcpeye::tool]
fn traced_search(
    /// Words to look for.
    query: String,
) -> Result<String, ToolError> {
    let _inner = tracing::info_span!("query the index").entered();
    if query == "nothing" {
        return Err(ToolError::new("no_results", "nothing matches"));
    }
    Ok(format!("found {query}"))
}

/// tracing caches each callsite's interest process-wide: a test that calls a tool with no
/// subscriber while another installs one can leave that cache saying "never" for the other. The
/// tests of this file run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn captured(f: impl FnOnce()) -> Vec<Captured> {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    tracing::subscriber::with_default(subscriber, f);
    let spans = capture.0.lock().unwrap();
    spans.iter().map(|(_, c)| c.clone()).collect()
}

#[test]
fn a_call_is_one_span_with_the_conventions_fields() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![traced_search]).build();
    let origin = Origin::from_client(Arc::new(ClientInfo::new("cursor", "1.0").with_protocol_version("2025-06-18")))
        .with_request_id("42")
        .with_session_id("s-1")
        .with_transport(Transport::Http { version: Some("1.1") });
    let spans = captured(|| {
        manifest.call_from(&origin, "traced_search", json!({"query": "mugs"}));
        manifest.call("traced_search", json!({"query": "nothing"}));
    });
    let calls: Vec<&Captured> = spans.iter().filter(|s| s.name == "tools/call").collect();
    assert_eq!(calls.len(), 2, "{spans:?}");
    let ok = &calls[0];
    assert_eq!(ok.target, "mcpeye");
    for (k, v) in [
        ("otel.name", "tools/call traced_search"),
        ("otel.kind", "server"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "traced_search"),
        ("jsonrpc.request.id", "42"),
        ("mcp.session.id", "s-1"),
        ("mcp.protocol.version", "2025-06-18"),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
        ("network.protocol.version", "1.1"),
    ] {
        assert_eq!(ok.fields.get(k).map(String::as_str), Some(v), "{k}: {:?}", ok.fields);
    }
    assert!(!ok.fields.contains_key("error.type") && !ok.fields.contains_key("otel.status_code"));
    let failed = &calls[1];
    assert_eq!(failed.fields.get("error.type").map(String::as_str), Some("no_results"));
    assert_eq!(failed.fields.get("otel.status_code").map(String::as_str), Some("ERROR"));
    // The handler's span is a child of the call's.
    let inner: Vec<&Captured> = spans.iter().filter(|s| s.name == "query the index").collect();
    assert_eq!(inner.len(), 2);
    assert!(inner.iter().all(|s| s.parent.as_deref() == Some("tools/call")));
}

#[test]
fn without_a_subscriber_nothing_is_made() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![traced_search]).build();
    let answer = manifest.call("traced_search", json!({"query": "quiet"}));
    assert_eq!(answer["content"][0]["text"], "found quiet");
}

/// The call's model and conversation handle are the span's `gen_ai.request.model` and
/// `mcp.session.id` (docs/attribution.md), whether `_meta` or the opt-in arguments said them.
#[test]
fn the_model_and_the_conversation_are_span_fields() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = mcpeye::Manifest::builder()
        .tools(mcpeye::tool_defs![traced_search])
        .model_argument(mcpeye::ModelArgument::EveryTool)
        .conversations(true)
        .build();
    let meta = json!({"io.modelcontextprotocol/aiInvocation": {"model": "claude-opus-4"}});
    let origin = Origin::default().with_meta(meta.as_object().unwrap().clone());
    let mut handle = String::new();
    let spans = captured(|| {
        let first = manifest.call_from(&origin, "traced_search", json!({"query": "mugs"}));
        handle = first["content"][1]["text"].as_str().unwrap().trim_start_matches("conversation: ").to_owned();
        manifest.call("traced_search", json!({"query": "cups", "llm_model": "gpt-5", "mcpeyeConversation": handle}));
    });
    let calls: Vec<&Captured> = spans.iter().filter(|s| s.name == "tools/call").collect();
    assert_eq!(calls[0].fields.get("gen_ai.request.model").map(String::as_str), Some("claude-opus-4"));
    assert_eq!(calls[0].fields.get("mcp.session.id"), Some(&handle));
    assert_eq!(calls[1].fields.get("gen_ai.request.model").map(String::as_str), Some("gpt-5"));
    assert_eq!(calls[1].fields.get("mcp.session.id"), Some(&handle));
}

/// A handler of its own with a resource and a prompt, observed (`mcpeye::rmcp::observe`).
struct Reading;

impl rmcp::ServerHandler for Reading {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        let capabilities = rmcp::model::ServerCapabilities::builder().enable_resources().enable_prompts().build();
        rmcp::model::ServerConfig::new(capabilities)
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        let _inner = tracing::info_span!("load resource").entered();
        if request.uri == "docs://broken" {
            return Err(rmcp::ErrorData::internal_error("disk gone", None));
        }
        let text = rmcp::model::ResourceContents::text("hello", request.uri);
        Ok(rmcp::model::ReadResourceResult::new(vec![text]).into())
    }

    async fn get_prompt(
        &self,
        _request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        let message = rmcp::model::PromptMessage::new_text(rmcp::model::Role::User, "Review this.");
        Ok(rmcp::model::GetPromptResult::new(vec![message]).into())
    }
}

/// `resources/read` and `prompts/get` through an observed handler are `tracing` spans named
/// after their method, with `mcp.resource.uri` or `gen_ai.prompt.name`, the handler's spans
/// their children, and a server-side error's `error.type` and ERROR status.
#[test]
fn reads_and_prompts_are_spans_with_the_conventions_fields() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    use rmcp::ServiceExt;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let spans = captured(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let (server_io, client_io) = tokio::io::duplex(64 * 1024);
            tokio::spawn(async move {
                if let Ok(running) = mcpeye::rmcp::observe(Reading).serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            let client = ().serve(client_io).await.unwrap();
            client.read_resource(ReadResourceRequestParams::new("docs://guide")).await.unwrap();
            assert!(client.read_resource(ReadResourceRequestParams::new("docs://broken")).await.is_err());
            client.get_prompt(GetPromptRequestParams::new("review")).await.unwrap();
            // A request of MCP 2026-07-28 names its client and version in its `_meta`.
            let meta = serde_json::json!({
                "io.modelcontextprotocol/clientInfo": {"name": "meta-reader", "version": "2.0"},
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            let modern =
                ReadResourceRequestParams::new("docs://modern").with_meta(serde_json::from_value(meta).unwrap());
            client.read_resource(modern).await.unwrap();
            client.cancel().await.unwrap();
        });
    });
    let reads: Vec<&Captured> = spans.iter().filter(|s| s.name == "resources/read").collect();
    assert_eq!(reads.len(), 3, "{spans:?}");
    let modern = reads.iter().find(|s| s.fields.get("mcp.resource.uri").map(String::as_str) == Some("docs://modern"));
    let modern = modern.expect("the modern read's span");
    assert_eq!(modern.fields.get("mcp.protocol.version").map(String::as_str), Some("2026-07-28"));
    assert!(!modern.fields.contains_key("mcp.session.id"), "MCP 2026-07-28 has no sessions: {:?}", modern.fields);
    let ok = reads.iter().find(|s| s.fields.get("mcp.resource.uri").map(String::as_str) == Some("docs://guide"));
    let ok = ok.expect("the read's span");
    assert_eq!(ok.target, "mcpeye");
    for (k, v) in [
        ("otel.name", "resources/read"),
        ("otel.kind", "server"),
        ("mcp.method.name", "resources/read"),
        ("network.transport", "pipe"),
    ] {
        assert_eq!(ok.fields.get(k).map(String::as_str), Some(v), "{k}: {:?}", ok.fields);
    }
    assert!(ok.fields.contains_key("mcp.session.id") && ok.fields.contains_key("jsonrpc.request.id"));
    assert!(!ok.fields.contains_key("error.type"));
    let broken = reads.iter().find(|s| s.fields.get("mcp.resource.uri").map(String::as_str) == Some("docs://broken"));
    let broken = broken.expect("the failed read's span");
    assert_eq!(broken.fields.get("error.type").map(String::as_str), Some("-32603"));
    assert_eq!(broken.fields.get("otel.status_code").map(String::as_str), Some("ERROR"));
    assert_eq!(broken.fields.get("otel.status_description").map(String::as_str), Some("disk gone"));
    let inner: Vec<&Captured> = spans.iter().filter(|s| s.name == "load resource").collect();
    assert_eq!(inner.len(), 3);
    assert!(inner.iter().all(|s| s.parent.as_deref() == Some("resources/read")), "{inner:?}");
    let prompt = spans.iter().find(|s| s.name == "prompts/get").expect("the prompt's span");
    assert_eq!(prompt.fields.get("gen_ai.prompt.name").map(String::as_str), Some("review"));
    assert_eq!(prompt.fields.get("otel.name").map(String::as_str), Some("prompts/get review"));
}

/// `ManifestServer`'s `tools/list`, and a resource asked of a server that has none, are spans
/// of the same shape: the one recording both serving paths share.
#[test]
fn a_manifest_servers_lists_and_reads_are_spans() {
    use rmcp::model::ReadResourceRequestParams;
    use rmcp::ServiceExt;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![traced_search]).build();
    let spans = captured(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let (server_io, client_io) = tokio::io::duplex(64 * 1024);
            let server = mcpeye::rmcp::ManifestServer::new(Arc::new(manifest));
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            let client = ().serve(client_io).await.unwrap();
            client.list_tools(None).await.unwrap();
            assert!(client.read_resource(ReadResourceRequestParams::new("docs://none")).await.is_err());
            client.cancel().await.unwrap();
        });
    });
    let list = spans.iter().find(|s| s.name == "tools/list").expect("the list's span");
    assert_eq!(list.fields.get("mcp.method.name").map(String::as_str), Some("tools/list"));
    assert!(list.fields.contains_key("mcp.session.id"));
    let read = spans.iter().find(|s| s.name == "resources/read").expect("the read's span");
    assert_eq!(read.fields.get("mcp.resource.uri").map(String::as_str), Some("docs://none"));
    // rmcp's answer for a method the server does not serve: -32601, a client-side error.
    assert_eq!(read.fields.get("rpc.response.status_code").map(String::as_str), Some("-32601"));
    assert!(!read.fields.contains_key("error.type"));
}
