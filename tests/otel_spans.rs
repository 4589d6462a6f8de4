//! The `opentelemetry` feature with the real SDK and its in-memory exporters: one SERVER span
//! per `tools/call`, named and attributed as the MCP semantic conventions say (pinned commit in
//! the README), parented to the `traceparent` of the request's `_meta`, with `error.type` and an
//! ERROR status on failures, and the `mcp.server.operation.duration` histogram.
//!
//! The global providers are installed once for this test binary, before any call (mcpeye takes
//! its tracer and histogram from them at the first call); each test tells its spans apart by tool
//! name or trace id.

mod common;

use common::rmcp::{call, serve_and_connect};
use mcpeye::rmcp::ManifestServer;
use mcpeye::testing::MemorySink;
use mcpeye::{ClientInfo, Config, Origin, ToolError, TraceContext, Transport};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceContextExt, TraceId, Tracer};
use opentelemetry::{global, KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use std::sync::{Arc, OnceLock};

struct Otel {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        global::set_tracer_provider(SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build());
        let metrics = InMemoryMetricExporter::default();
        let meter_provider =
            SdkMeterProvider::builder().with_reader(PeriodicReader::builder(metrics.clone()).build()).build();
        global::set_meter_provider(meter_provider.clone());
        Otel { spans, metrics, meter_provider }
    })
}

fn spans_named(name: &str) -> Vec<SpanData> {
    otel().spans.get_finished_spans().unwrap().into_iter().filter(|s| s.name == name).collect()
}

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

fn string(span: &SpanData, key: &str) -> Option<String> {
    attr(span, key).map(|v| v.as_str().into_owned())
}

/// Get the forecast.
#[mcpeye::tool]
fn otel_forecast(
    /// The city.
    city: String,
) -> String {
    // The handler's own span is a child of the call's.
    global::tracer("handler").in_span("load forecast", |_| format!("sunny in {city}"))
}

/// Look a product up.
#[mcpeye::tool]
fn otel_lookup(
    /// The product.
    product: String,
) -> Result<String, ToolError> {
    Err(ToolError::new("unknown_product", format!("no product {product}")))
}

/// Fail plainly.
#[mcpeye::tool]
fn otel_plain(
    /// A contact.
    email: String,
) -> Result<String, String> {
    Err(format!("could not reach {email}"))
}

/// Ask the user to confirm (MCP 2026-07-28: through an `input_required` round).
#[mcpeye::tool]
async fn otel_confirm(ctx: mcpeye::Context) -> Result<String, mcpeye::ClientError> {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let answer = ctx.elicit(mcpeye::ElicitationRequest::form("Sure?", schema).key("sure")).await?;
    Ok(answer.action.as_str().to_owned())
}

fn manifest() -> mcpeye::Manifest {
    mcpeye::Manifest::builder().tools(mcpeye::tool_defs![otel_forecast, otel_lookup, otel_plain, otel_confirm]).build()
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn a_call_is_one_server_span_parented_to_the_traceparent_of_its_meta() {
    otel();
    let origin = Origin::from_client(Arc::new(ClientInfo::new("claude", "1.0").with_protocol_version("2025-11-25")))
        .with_session_id("191c4850af6c49e08843a3f6c80e5046")
        .with_request_id("7")
        .with_transport(Transport::Stdio)
        .with_trace_context(TraceContext::from_traceparent(TRACEPARENT));
    let answer = manifest().call_from(&origin, "otel_forecast", json!({"city": "Lisbon"}));
    assert_eq!(answer["content"][0]["text"], "sunny in Lisbon");

    let trace_id = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let spans: Vec<SpanData> = otel()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace_id && s.span_kind == SpanKind::Server)
        .collect();
    assert_eq!(spans.len(), 1, "one server span per call");
    let span = &spans[0];
    assert_eq!(span.name, "tools/call otel_forecast");
    assert_eq!(span.parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
    assert!(span.parent_span_is_remote);
    assert_eq!(span.status, Status::Unset);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "otel_forecast"),
        ("jsonrpc.request.id", "7"),
        ("mcp.session.id", "191c4850af6c49e08843a3f6c80e5046"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
    ] {
        assert_eq!(string(span, key).as_deref(), Some(value), "{key}");
    }
    for absent in ["error.type", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "network.protocol.name"] {
        assert!(attr(span, absent).is_none(), "{absent}");
    }
    // The handler's span nests under the call's.
    let child =
        spans_named("load forecast").into_iter().find(|s| s.span_context.trace_id() == span.span_context.trace_id());
    assert_eq!(child.expect("the handler's span").parent_span_id, span.span_context.span_id());
}

#[test]
fn failures_set_error_type_and_an_error_status() {
    otel();
    let m = manifest();
    m.call("otel_lookup", json!({"product": "mug"}));
    m.call("otel_plain", json!({"email": "a@b.com"}));
    m.call("otel_plain", json!({"email": 3}));
    let lookup = &spans_named("tools/call otel_lookup")[0];
    assert_eq!(string(lookup, "error.type").as_deref(), Some("unknown_product"));
    assert!(matches!(lookup.status, Status::Error { .. }));
    let plain = spans_named("tools/call otel_plain");
    let types: Vec<String> = plain.iter().filter_map(|s| string(s, "error.type")).collect();
    assert_eq!(types.len(), 2);
    assert!(types.contains(&"tool_error".to_owned()) && types.contains(&"invalid_arguments".to_owned()), "{types:?}");
    // No error message on the span unless content is opted in.
    for s in &plain {
        assert!(!format!("{:?}", s.status).contains("a@b.com"), "{:?}", s.status);
    }
}

#[test]
fn without_meta_the_span_is_a_child_of_the_ambient_context() {
    otel();
    let tracer = global::tracer("host");
    let outer = tracer.start("host request");
    let cx = opentelemetry::Context::current_with_span(outer);
    let trace_id = cx.span().span_context().trace_id();
    {
        let _g = cx.clone().attach();
        manifest().call("otel_forecast", json!({"city": "Ambient"}));
    }
    let span = spans_named("tools/call otel_forecast").into_iter().find(|s| s.span_context.trace_id() == trace_id);
    assert_eq!(span.expect("a span in the host's trace").parent_span_id, cx.span().span_context().span_id());
}

#[test]
fn with_meta_and_an_ambient_context_the_ambient_one_is_linked() {
    otel();
    let outer = global::tracer("host").start("http request");
    let cx = opentelemetry::Context::current_with_span(outer);
    let origin = Origin::default()
        .with_trace_context(TraceContext::from_traceparent("00-11111111111111111111111111111111-2222222222222222-01"));
    {
        let _g = cx.clone().attach();
        manifest().call_from(&origin, "otel_forecast", json!({"city": "Linked"}));
    }
    let span = spans_named("tools/call otel_forecast")
        .into_iter()
        .find(|s| s.span_context.trace_id() == TraceId::from_hex("11111111111111111111111111111111").unwrap())
        .expect("the span joins the agent's trace");
    let links: Vec<_> = span.links.iter().map(|l| l.span_context.span_id()).collect();
    assert_eq!(links, [cx.span().span_context().span_id()]);
}

#[test]
fn arguments_and_results_go_on_spans_only_when_opted_in_and_redacted() {
    otel();
    let (tracker, _sink) = MemorySink::with_config(Config::new("p").span_content(true)).unwrap();
    let m = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![otel_forecast]).tracker(tracker).build();
    let origin = Origin::default().with_request_id("content-1");
    m.call_from(&origin, "otel_forecast", json!({"city": "mail a@b.com"}));
    let span = spans_named("tools/call otel_forecast")
        .into_iter()
        .find(|s| string(s, "jsonrpc.request.id").as_deref() == Some("content-1"))
        .unwrap();
    assert_eq!(string(&span, "gen_ai.tool.call.arguments").as_deref(), Some(r#"{"city":"mail [REDACTED_EMAIL]"}"#));
    let result = string(&span, "gen_ai.tool.call.result").unwrap();
    assert!(result.contains("sunny in mail [REDACTED_EMAIL]") && !result.contains("a@b.com"), "{result}");
}

#[test]
fn the_duration_histogram_follows_the_conventions() {
    let o = otel();
    manifest().call("otel_lookup", json!({"product": "histogram"}));
    o.meter_provider.force_flush().unwrap();
    let exported = o.metrics.get_finished_metrics().unwrap();
    let metric = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .filter(|sm| sm.scope().name() == "mcpeye")
        .flat_map(|sm| sm.metrics())
        .find(|m| m.name() == "mcp.server.operation.duration")
        .expect("the histogram");
    assert_eq!(metric.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else { panic!("an f64 histogram") };
    let point = h
        .data_points()
        .find(|p| p.attributes().any(|kv| *kv == KeyValue::new("gen_ai.tool.name", "otel_lookup")))
        .expect("a point for the tool");
    let bounds: Vec<f64> = point.bounds().collect();
    assert_eq!(bounds, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]);
    assert!(point.count() >= 1);
    let attrs: Vec<(String, String)> =
        point.attributes().map(|kv| (kv.key.to_string(), kv.value.as_str().into_owned())).collect();
    for expected in [
        ("mcp.method.name", "tools/call"),
        ("error.type", "unknown_product"),
        ("gen_ai.operation.name", "execute_tool"),
    ] {
        assert!(attrs.contains(&(expected.0.to_owned(), expected.1.to_owned())), "{attrs:?}");
    }
}

#[tokio::test]
async fn served_by_rmcp_the_meta_traceparent_parents_the_span_and_unknown_tools_are_not_errors() {
    otel();
    let server = ManifestServer::new(Arc::new(manifest()));
    let client = serve_and_connect(server, "otel-client", "2.0").await;
    let mut request = call("otel_forecast", json!({"city": "Porto"}));
    request.meta = Some(
        serde_json::from_value(json!({"traceparent": "00-33333333333333333333333333333333-4444444444444444-01"}))
            .unwrap(),
    );
    client.call_tool(request).await.unwrap();
    let unknown = client.call_tool(call("no_such_tool", json!({}))).await;
    assert!(unknown.is_err());
    client.cancel().await.unwrap();

    let span = spans_named("tools/call otel_forecast")
        .into_iter()
        .find(|s| s.span_context.trace_id() == TraceId::from_hex("33333333333333333333333333333333").unwrap())
        .expect("the span joins the client's trace");
    assert_eq!(span.parent_span_id, SpanId::from_hex("4444444444444444").unwrap());
    assert_eq!(string(&span, "network.transport").as_deref(), Some("pipe"));
    assert!(string(&span, "jsonrpc.request.id").is_some());
    assert!(string(&span, "mcp.session.id").is_some(), "a stdio-like session has an id");
    assert!(string(&span, "mcp.protocol.version").is_some());
    // An unknown tool is JSON-RPC -32602: a client-side error, so no error.type on a server span.
    let unknown = spans_named("tools/call")
        .into_iter()
        .find(|s| string(s, "gen_ai.tool.name").as_deref() == Some("no_such_tool"))
        .expect("a span for the unknown tool");
    assert_eq!(string(&unknown, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert!(attr(&unknown, "error.type").is_none());
    assert_eq!(unknown.status, Status::Unset);
}

/// The rounds of a call that asks are on its spans: the round that asks ends its span with a
/// `mcpeye.input.asked` event (a call abandoned there leaves exactly that), and the round that
/// gets the answer has `mcpeye.input.answered` with the user's action.
#[tokio::test]
async fn input_required_rounds_and_elicitation_actions_are_span_events() {
    otel();
    let server = ManifestServer::new(Arc::new(manifest()));
    let client = serve_and_connect(server, "otel-client", "2.0").await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let mut request = call("otel_confirm", json!({}));
    request.meta = Some(serde_json::from_value(meta).unwrap());
    let rmcp::model::CallToolResponse::InputRequired(asked) = client.call_tool_once(request.clone()).await.unwrap()
    else {
        panic!("the first round asks")
    };
    let answers = serde_json::from_value(json!({"sure": {"action": "decline"}})).unwrap();
    let retry = request.with_input_responses(answers).with_request_state(asked.request_state.unwrap());
    client.call_tool_once(retry).await.unwrap();
    client.cancel().await.unwrap();

    let spans = spans_named("tools/call otel_confirm");
    assert_eq!(spans.len(), 2, "one span per round");
    let event = |name: &str| {
        spans.iter().flat_map(|s| s.events.iter()).find(|e| e.name == name).cloned().unwrap_or_else(|| panic!("{name}"))
    };
    let value = |e: &opentelemetry::trace::Event, key: &str| {
        e.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.as_str().into_owned())
    };
    let asked = event("mcpeye.input.asked");
    assert_eq!(value(&asked, "mcpeye.input.key").as_deref(), Some("sure"));
    assert_eq!(value(&asked, "mcpeye.round").as_deref(), Some("1"));
    let answered = event("mcpeye.input.answered");
    assert_eq!(value(&answered, "mcpeye.elicitation.action").as_deref(), Some("decline"));
    assert_eq!(value(&answered, "mcpeye.round").as_deref(), Some("2"));
}

/// `aiInvocation`'s turn and `redacted` flag go on every span; its texts only with the opt-in
/// content, redacted (docs/opentelemetry.md).
#[test]
fn the_turn_of_the_meta_is_on_the_span_and_its_texts_only_with_span_content() {
    otel();
    let invocation = json!({"io.modelcontextprotocol/aiInvocation": {
        "turnId": "turn-9",
        "invocationReason": {"text": "Check the weather for bob@example.com."},
        "userIntent": {"text": "Will it rain?", "redacted": true}
    }});
    let meta = invocation.as_object().unwrap().clone();
    let (tracker, _sink) = MemorySink::with_config(Config::new("p").span_content(true)).unwrap();
    let with_content = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![otel_forecast]).tracker(tracker).build();
    with_content.call_from(
        &Origin::default().with_request_id("turn-content").with_meta(meta.clone()),
        "otel_forecast",
        json!({"city": "Porto"}),
    );
    manifest().call_from(
        &Origin::default().with_request_id("turn-plain").with_meta(meta),
        "otel_forecast",
        json!({"city": "Porto"}),
    );
    let span = |id: &str| {
        spans_named("tools/call otel_forecast")
            .into_iter()
            .find(|s| string(s, "jsonrpc.request.id").as_deref() == Some(id))
            .unwrap()
    };
    let (content, plain) = (span("turn-content"), span("turn-plain"));
    for s in [&content, &plain] {
        assert_eq!(string(s, "mcpeye.turn.id").as_deref(), Some("turn-9"));
        assert_eq!(attr(s, "mcpeye.user_intent.redacted"), Some(&OtelValue::Bool(true)));
    }
    assert_eq!(
        string(&content, "mcpeye.invocation_reason").as_deref(),
        Some("Check the weather for [REDACTED_EMAIL].")
    );
    assert_eq!(string(&content, "mcpeye.user_intent").as_deref(), Some("Will it rain?"));
    assert!(attr(&plain, "mcpeye.invocation_reason").is_none() && attr(&plain, "mcpeye.user_intent").is_none());
}

/// The call's model is the server span's `gen_ai.request.model` (docs/attribution.md).
#[test]
fn the_model_of_the_meta_is_the_spans_request_model() {
    otel();
    let meta = json!({
        "traceparent": "00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "io.modelcontextprotocol/aiInvocation": {"model": "claude-opus-4"}
    });
    let origin = Origin::default().with_meta(meta.as_object().unwrap().clone());
    let origin = origin.clone().with_trace_context(TraceContext::from_meta(meta.as_object().unwrap()).unwrap());
    manifest().call_from(&origin, "otel_forecast", json!({"city": "Porto"}));
    let trace_id = TraceId::from_hex("5bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let span = otel()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .find(|s| s.span_context.trace_id() == trace_id && s.span_kind == SpanKind::Server)
        .expect("the call's span");
    assert_eq!(string(&span, "gen_ai.request.model").as_deref(), Some("claude-opus-4"));
}

/// A handler of its own with a resource, a prompt and a completion that fails on the server's
/// side, observed (`mcpeye::rmcp::observe`).
struct Reading;

impl rmcp::ServerHandler for Reading {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        let capabilities =
            rmcp::model::ServerCapabilities::builder().enable_resources().enable_prompts().enable_completions().build();
        rmcp::model::ServerConfig::new(capabilities)
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        // The handler's own span is a child of the request's.
        let _inner = global::tracer("handler").start("load resource");
        let text = rmcp::model::ResourceContents::text("hello", request.uri);
        Ok(rmcp::model::ReadResourceResult::new(vec![text]).into())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        if request.name != "otel_review" {
            return Err(rmcp::ErrorData::invalid_params("no such prompt", None));
        }
        let message = rmcp::model::PromptMessage::new_text(rmcp::model::Role::User, "Review this.");
        Ok(rmcp::model::GetPromptResult::new(vec![message]).into())
    }

    async fn complete(
        &self,
        _request: rmcp::model::CompleteRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::internal_error("the index is down", None))
    }
}

/// `resources/read`, `prompts/get` and `completion/complete` are SERVER spans per the
/// conventions: `mcp.method.name`, `mcp.resource.uri`, `gen_ai.prompt.name`, parented to the
/// request's `_meta` trace context, with the session; a server-side error sets `error.type` and
/// an ERROR status, a client-side one only `rpc.response.status_code`; and a histogram point.
#[tokio::test]
async fn reads_prompts_and_completions_are_server_spans_with_the_conventions_attributes() {
    use rmcp::model::{
        ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams, Reference,
    };
    let o = otel();
    let client = serve_and_connect(mcpeye::rmcp::observe(Reading), "otel-reader", "1.0").await;
    let meta = json!({"traceparent": "00-66666666666666666666666666666666-7777777777777777-01"});
    let read = ReadResourceRequestParams::new("docs://otel-guide").with_meta(serde_json::from_value(meta).unwrap());
    client.read_resource(read).await.unwrap();
    client.get_prompt(GetPromptRequestParams::new("otel_review")).await.unwrap();
    assert!(client.get_prompt(GetPromptRequestParams::new("otel_unknown")).await.is_err());
    let complete = CompleteRequestParams::new(Reference::for_prompt("otel_review"), ArgumentInfo::new("a", "b"));
    assert!(client.complete(complete).await.is_err());
    client.cancel().await.unwrap();

    let read = spans_named("resources/read")
        .into_iter()
        .find(|s| string(s, "mcp.resource.uri").as_deref() == Some("docs://otel-guide"))
        .expect("a span for the read");
    assert_eq!(read.span_kind, SpanKind::Server);
    assert_eq!(read.span_context.trace_id(), TraceId::from_hex("66666666666666666666666666666666").unwrap());
    assert_eq!(read.parent_span_id, SpanId::from_hex("7777777777777777").unwrap());
    assert_eq!(string(&read, "mcp.method.name").as_deref(), Some("resources/read"));
    assert!(string(&read, "mcp.session.id").is_some(), "a stdio-like session has an id");
    assert!(string(&read, "jsonrpc.request.id").is_some());
    assert_eq!(string(&read, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(read.status, Status::Unset);
    let inner = spans_named("load resource");
    assert!(inner.iter().any(|s| s.parent_span_id == read.span_context.span_id()), "the handler's span is a child");

    let prompt = spans_named("prompts/get otel_review").pop().expect("an answered prompt names its span");
    assert_eq!(string(&prompt, "gen_ai.prompt.name").as_deref(), Some("otel_review"));
    assert_eq!(string(&prompt, "mcp.method.name").as_deref(), Some("prompts/get"));
    // A prompt the server does not have: the method alone names the span, a client-side error.
    let unknown = spans_named("prompts/get")
        .into_iter()
        .find(|s| string(s, "gen_ai.prompt.name").as_deref() == Some("otel_unknown"))
        .expect("a span for the unknown prompt");
    assert_eq!(string(&unknown, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert!(attr(&unknown, "error.type").is_none());
    assert_eq!(unknown.status, Status::Unset);

    let failed = spans_named("completion/complete").pop().expect("a span for the completion");
    assert_eq!(string(&failed, "gen_ai.prompt.name").as_deref(), Some("otel_review"));
    assert_eq!(string(&failed, "error.type").as_deref(), Some("-32603"));
    assert_eq!(string(&failed, "rpc.response.status_code").as_deref(), Some("-32603"));
    assert_eq!(failed.status, Status::error("the index is down"));

    o.meter_provider.force_flush().unwrap();
    let exported = o.metrics.get_finished_metrics().unwrap();
    let points: Vec<Vec<(String, String)>> = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .filter(|sm| sm.scope().name() == "mcpeye")
        .flat_map(|sm| sm.metrics())
        .filter(|m| m.name() == "mcp.server.operation.duration")
        .flat_map(|m| match m.data() {
            AggregatedMetrics::F64(MetricData::Histogram(h)) => h
                .data_points()
                .map(|p| p.attributes().map(|kv| (kv.key.to_string(), kv.value.as_str().into_owned())).collect())
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    let has = |pairs: &[(&str, &str)]| {
        points.iter().any(|p| pairs.iter().all(|(k, v)| p.contains(&((*k).to_owned(), (*v).to_owned()))))
    };
    assert!(has(&[("mcp.method.name", "prompts/get"), ("gen_ai.prompt.name", "otel_review")]), "{points:?}");
    assert!(has(&[("mcp.method.name", "resources/read")]), "{points:?}");
    assert!(has(&[("mcp.method.name", "completion/complete"), ("error.type", "-32603")]), "{points:?}");
    // The URI is the client's, unbounded: never a metric attribute.
    assert!(points.iter().flatten().all(|(k, _)| k != "mcp.resource.uri"));
}
