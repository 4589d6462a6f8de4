//! The `tracing` feature: one span per call, target `mcpeye`, level INFO, named `tools/call`
//! with the conventions' attributes as fields, plus `otel.name` (`tools/call {tool}`),
//! `otel.kind` and `otel.status_code` that `tracing-opentelemetry` maps onto the span it exports.

use super::{network, MethodRequest, Request, SpanContent, SpanEnding, METHOD};
use crate::model::record::{Origin, RequestId};
use crate::model::stats::{Method, Target};
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
        mcpeye.turn.id = Empty,
        mcpeye.user_intent.redacted = Empty,
        mcpeye.invocation_reason = Empty,
        mcpeye.user_intent = Empty,
    );
    if span.is_disabled() {
        return None;
    }
    span.record("otel.name", &*request.span_name());
    record_origin(&span, request.origin, request.protocol_version());
    Some(span)
}

/// The fields every server span takes from its request's origin.
fn record_origin(span: &Span, origin: &Origin, protocol_version: Option<&str>) {
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
    if let Some(invocation) = &origin.invocation {
        if let Some(turn) = &invocation.turn {
            span.record(super::TURN_ID, &**turn);
        }
        if let Some(redacted) = invocation.user_intent_redacted {
            span.record(super::USER_INTENT_REDACTED, redacted);
        }
    }
    if let Some(version) = protocol_version {
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
}

pub(super) fn end(span: &Span, ending: &SpanEnding, content: Option<&SpanContent>) {
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
        if let Some(reason) = &content.invocation_reason {
            span.record(super::INVOCATION_REASON, reason.as_str());
        }
        if let Some(user_intent) = &content.user_intent {
            span.record(super::USER_INTENT, user_intent.as_str());
        }
    }
}

/// The span of a request of another method, named after it (a `tracing` span's name is a
/// literal of its call site, so one per method).
macro_rules! method_span {
    ($name:literal) => {
        tracing::info_span!(
            target: "mcpeye",
            $name,
            otel.name = $name,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = $name,
            mcp.resource.uri = Empty,
            gen_ai.prompt.name = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            gen_ai.request.model = Empty,
            mcp.protocol.version = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            network.protocol.version = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            mcpeye.turn.id = Empty,
            mcpeye.user_intent.redacted = Empty,
        )
    };
}

pub(super) fn start_method(request: &MethodRequest<'_>) -> Option<Span> {
    let span = match request.method {
        Method::ToolsList => method_span!("tools/list"),
        Method::ResourcesList => method_span!("resources/list"),
        Method::ResourceTemplatesList => method_span!("resources/templates/list"),
        Method::ResourcesRead => method_span!("resources/read"),
        Method::PromptsList => method_span!("prompts/list"),
        Method::PromptsGet => method_span!("prompts/get"),
        Method::CompletionComplete => method_span!("completion/complete"),
    };
    if span.is_disabled() {
        return None;
    }
    match request.target {
        Target::Resource(uri) => span.record("mcp.resource.uri", uri),
        Target::Prompt(name) => span.record("gen_ai.prompt.name", name),
        Target::None => &span,
    };
    let origin = request.origin;
    record_origin(&span, origin, origin.client.as_deref().and_then(|c| c.protocol_version()));
    Some(span)
}

/// Ends a method's span: `prompt` renames an answered `prompts/get` to `prompts/get {name}`.
pub(super) fn end_method(span: &Span, method: Method, prompt: Option<&str>, ending: &SpanEnding) {
    if let Some(prompt) = prompt.filter(|_| ending.rpc_status.is_none()) {
        span.record("otel.name", format!("{} {prompt}", method.as_str()).as_str());
    }
    end(span, ending, None);
}
