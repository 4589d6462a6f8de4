//! The `tracing` feature: one span per call, target `mcpeye`, level INFO, named `tools/call`
//! with the conventions' attributes as fields, plus `otel.name` (`tools/call {tool}`),
//! `otel.kind` and `otel.status_code` that `tracing-opentelemetry` maps onto the span it exports.

use super::{network, Content, Ending, Request, METHOD};
use crate::model::record::RequestId;
use tracing::field::Empty;
use tracing::Span;

pub(super) fn start(request: &Request<'_>) -> Option<Span> {
    let span = tracing::info_span!(
        target: "mcpeye",
        "tools/call",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = METHOD,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = &**request.tool,
        jsonrpc.request.id = Empty,
        mcp.session.id = Empty,
        gen_ai.request.model = Empty,
        mcp.protocol.version = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        network.protocol.version = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
    );
    if span.is_disabled() {
        return None;
    }
    span.record("otel.name", &*request.span_name());
    let origin = request.origin;
    if let Some(id) = &origin.request_id {
        match id {
            RequestId::String(s) => span.record("jsonrpc.request.id", &**s),
            RequestId::Number(n) => span.record("jsonrpc.request.id", n.to_string().as_str()),
        };
    }
    if let Some(session) = &origin.session_id {
        span.record("mcp.session.id", &**session);
    }
    if let Some(model) = &origin.model {
        span.record("gen_ai.request.model", &**model);
    }
    if let Some(version) = request.protocol_version() {
        span.record("mcp.protocol.version", version);
    }
    let (transport, protocol, protocol_version) = network(origin.transport);
    for (field, value) in [
        ("network.transport", transport),
        ("network.protocol.name", protocol),
        ("network.protocol.version", protocol_version),
    ] {
        if let Some(v) = value {
            span.record(field, v);
        }
    }
    Some(span)
}

pub(super) fn end(span: &Span, ending: &Ending, content: Option<&Content>) {
    if let Some(code) = &ending.rpc_status {
        span.record("rpc.response.status_code", code.as_str());
    }
    if let Some(error_type) = &ending.error_type {
        span.record("error.type", &**error_type);
        span.record("otel.status_code", "ERROR");
        if let Some(description) = &ending.description {
            span.record("otel.status_description", description.as_str());
        }
    }
    if let Some(content) = content {
        span.record("gen_ai.tool.call.arguments", content.arguments.as_str());
        if let Some(result) = &content.result {
            span.record("gen_ai.tool.call.result", result.as_str());
        }
    }
}
