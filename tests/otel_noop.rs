//! The `opentelemetry` feature in a host that installs no provider (the API's no-ops): mcpeye
//! learns from the first call that the tracer makes no spans and then skips the span and the
//! metric's attributes, yet a handler still runs inside the agent's trace when the request's
//! `_meta` carries a `traceparent`, on the first call and on every later one, sync and async.
//!
//! Its own test binary: the other OpenTelemetry tests install the SDK process-wide.

use mcpeye::{Origin, TraceContext};
use opentelemetry::trace::{SpanId, TraceContextExt, TraceId};
use serde_json::json;

/// What the handler saw as the current trace: `trace-span`, or `none`.
fn current_trace() -> String {
    let cx = opentelemetry::Context::current();
    let span = cx.span();
    let sc = span.span_context();
    match sc.is_valid() {
        true => format!("{}-{}", sc.trace_id(), sc.span_id()),
        false => "none".to_owned(),
    }
}

/// Report the current trace.
#[mcpeye::tool]
fn noop_sync_trace() -> String {
    current_trace()
}

/// Report the current trace, asynchronously.
#[mcpeye::tool]
async fn noop_async_trace() -> String {
    current_trace()
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn with_no_provider_the_meta_traceparent_is_still_current_in_the_handler() {
    let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![noop_sync_trace, noop_async_trace]).build();
    let traced = Origin::default().with_trace_context(TraceContext::from_traceparent(TRACEPARENT));
    let plain = Origin::default();
    let expected = format!(
        "{}-{}",
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    let text = |answer: serde_json::Value| answer["content"][0]["text"].as_str().unwrap().to_owned();
    // The first call teaches mcpeye that the tracer is a no-op; the later ones take the short
    // path. Both must look the same to the handler.
    for round in 0..3 {
        for tool in ["noop_sync_trace", "noop_async_trace"] {
            let call = |origin: &Origin| match tool {
                "noop_sync_trace" => manifest.call_from(origin, tool, json!({})),
                _ => mcpeye::testing::block_on(manifest.call_async_from(origin, tool, json!({}))),
            };
            assert_eq!(text(call(&traced)), expected, "{tool}, round {round}, with traceparent");
            assert_eq!(text(call(&plain)), "none", "{tool}, round {round}, without");
        }
    }
    // Outside a call nothing stays attached.
    assert_eq!(current_trace(), "none");
}
