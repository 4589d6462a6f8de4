//! The call's telemetry on the calling thread: one server span per `tools/call` and the
//! `mcp.server.operation.duration` histogram, following the OpenTelemetry semantic conventions
//! for MCP (`open-telemetry/semantic-conventions-genai` at commit
//! `5c50d346f1c9e8f745889f7777a412991564b334`: `docs/gen-ai/mcp.md`, `model/mcp/*.yaml`).
//!
//! [`MethodSpan`] is the same for the other methods mcpeye sees (`resources/read`,
//! `prompts/get`, `completion/complete`, the lists): a span and a metric point, no event.
//!
//! [`CallSpan`] is what a [`TrackedCall`](crate::record::TrackedCall) carries: started with the call,
//! current while the handler runs (so the handler's own spans are its children), ended with the
//! outcome. A call that nothing observes (neither feature, or no subscriber or provider that
//! would see it) has none.

// Without either feature only the no-op shell of `CallSpan` is used.
#![cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]

#[cfg(feature = "opentelemetry")]
mod otel;
#[cfg(feature = "tracing")]
mod tracing;

use crate::model::meta::AiInvocation;
use crate::model::record::{CallOutcome, Origin, Transport};
use crate::model::stats::{Method, Target};
use crate::redact::Redactor;
use serde_json::Value;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// `mcp.method.name` of every span mcpeye makes.
const METHOD: &str = "tools/call";

/// Span attributes of the request's `_meta` `aiInvocation` (the MCP proposal for AI invocation
/// metadata; the conventions have no name for them): its `turnId` and `userIntent.redacted` on
/// every span, its texts with the opt-in content only (they are the user's words).
#[cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]
const TURN_ID: &str = "mcpeye.turn.id";
#[cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]
const USER_INTENT_REDACTED: &str = "mcpeye.user_intent.redacted";
#[cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]
const INVOCATION_REASON: &str = "mcpeye.invocation_reason";
#[cfg_attr(not(any(feature = "opentelemetry", feature = "tracing")), allow(dead_code))]
const USER_INTENT: &str = "mcpeye.user_intent";

/// Whether calls make spans and metrics (the features being compiled in). Off only in the
/// benchmark that compares a call with and without the hooks in one run.
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the telemetry hooks off or on at run time (benchmarks only; not public API).
#[doc(hidden)]
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Makes the next call take its tracer and histogram from the global providers again
/// (benchmarks that switch providers in one process; not public API).
#[doc(hidden)]
pub fn reset() {
    #[cfg(feature = "opentelemetry")]
    otel::reset();
}

/// Whether a span of either kind (`otel`, `tracing` fields, each behind its feature) is open.
macro_rules! any_open {
    ($span:expr) => {{
        #[allow(unused_mut)]
        let mut open = false;
        #[cfg(feature = "opentelemetry")]
        {
            open |= $span.otel.is_some();
        }
        #[cfg(feature = "tracing")]
        {
            open |= $span.tracing.is_some();
        }
        open
    }};
}

/// The span(s) of one call: an OpenTelemetry span, a `tracing` span or both.
pub(crate) struct CallSpan {
    #[cfg(feature = "opentelemetry")]
    otel: Option<otel::OtelCall>,
    #[cfg(feature = "tracing")]
    tracing: Option<::tracing::Span>,
}

/// The guards of [`CallSpan::enter`]; the `tracing` span is exited before the OpenTelemetry
/// context is detached, as in [`CallSpan::in_scope`].
#[derive(Default)]
pub(crate) struct Entered<'a> {
    #[cfg(feature = "tracing")]
    _tracing: Option<::tracing::span::Entered<'a>>,
    #[cfg(feature = "opentelemetry")]
    _otel: Option<::opentelemetry::ContextGuard>,
    #[cfg(not(feature = "tracing"))]
    _span: std::marker::PhantomData<&'a ()>,
}

/// What the conventions record of a request, read once at the start of a call.
struct Request<'a> {
    tool: &'a Cow<'static, str>,
    /// False for a tool the server does not have: its name is the agent's, so it is kept off
    /// span names and metric attributes.
    known: bool,
    origin: &'a Origin,
}

impl Request<'_> {
    /// `{mcp.method.name} {target}`, or the method alone without a low-cardinality target.
    fn span_name(&self) -> Cow<'static, str> {
        match self.known {
            true => Cow::Owned(format!("{METHOD} {}", self.tool)),
            false => Cow::Borrowed(METHOD),
        }
    }

    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn protocol_version(&self) -> Option<&str> {
        self.origin.client.as_deref().and_then(|c| c.protocol_version())
    }
}

/// `network.transport`, `network.protocol.name`, `network.protocol.version` of a transport.
fn network(transport: Option<Transport>) -> (Option<&'static str>, Option<&'static str>, Option<&'static str>) {
    match transport {
        Some(Transport::Stdio) => (Some("pipe"), None, None),
        Some(Transport::Http { version }) => (Some("tcp"), Some("http"), version),
        None => (None, None, None),
    }
}

/// How a call ended, as the conventions record it.
struct SpanEnding {
    /// `error.type`: the reason, `tool_error`, or a server-side JSON-RPC code.
    error_type: Option<Cow<'static, str>>,
    /// `rpc.response.status_code`: the JSON-RPC error code the request was answered with.
    rpc_status: Option<String>,
    /// The span status description (the JSON-RPC error's message, redacted).
    description: Option<String>,
}

/// JSON-RPC codes that say the caller sent a request the server could not serve: on a server
/// span they are not errors (`mcp.server.status.attributes` of `model/mcp/common.yaml`).
fn is_client_side(code: i64) -> bool {
    matches!(code, -32700 | -32600 | -32601 | -32602 | -32002)
}

impl SpanEnding {
    fn of(outcome: &CallOutcome, rpc_code: Option<i64>) -> Self {
        match (outcome, rpc_code) {
            (_, Some(code)) => SpanEnding {
                error_type: (!is_client_side(code)).then(|| Cow::Owned(code.to_string())),
                rpc_status: Some(code.to_string()),
                description: outcome_message(outcome),
            },
            (CallOutcome::Success { .. }, None) => SpanEnding { error_type: None, rpc_status: None, description: None },
            // Errors, cancelled and timed-out calls: `error.type` is the reason.
            (_, None) => SpanEnding {
                error_type: outcome.error_type().map(|t| Cow::Owned(t.to_owned())),
                rpc_status: None,
                description: None,
            },
        }
    }
}

impl SpanEnding {
    /// How a request of another method ended: answered, or the JSON-RPC error it got.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    fn of_rpc(error: Option<(i64, &str)>) -> Self {
        match error {
            None => SpanEnding { error_type: None, rpc_status: None, description: None },
            Some((code, message)) => {
                let server_side = !is_client_side(code);
                SpanEnding {
                    error_type: server_side.then(|| Cow::Owned(code.to_string())),
                    rpc_status: Some(code.to_string()),
                    description: server_side.then(|| redacted_message(message)),
                }
            }
        }
    }
}

/// Longest status description kept (it is a message, not a payload).
const MAX_DESCRIPTION_BYTES: usize = 1024;

fn outcome_message(outcome: &CallOutcome) -> Option<String> {
    outcome.error_message().map(redacted_message)
}

/// A status description: the message redacted, cut at [`MAX_DESCRIPTION_BYTES`].
fn redacted_message(message: &str) -> String {
    let redacted = crate::redact::redact_string(message);
    crate::redact::cut_at_char_boundary(&redacted, MAX_DESCRIPTION_BYTES).to_owned()
}

/// The opt-in `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`, as compact JSON after
/// the tracker's caps and redaction ([`Config::span_content`](crate::Config::span_content)),
/// and the client's `aiInvocation` texts, capped and redacted like an intent.
struct SpanContent {
    arguments: String,
    result: Option<String>,
    invocation_reason: Option<String>,
    user_intent: Option<String>,
}

impl SpanContent {
    fn of(
        arguments: &Value,
        outcome: &CallOutcome,
        invocation: Option<&AiInvocation>,
        redactor: Option<&Redactor>,
    ) -> Option<Self> {
        let redactor = redactor?;
        let json = |v: &Value| redactor.value(v.clone()).to_string();
        let result = match outcome {
            CallOutcome::Success { result } if !result.is_null() => Some(json(result)),
            _ => None,
        };
        let text = |t: Option<&String>| t.map(|t| redactor.text(t.clone()));
        Some(SpanContent {
            arguments: json(arguments),
            result,
            invocation_reason: text(invocation.and_then(|i| i.reason.as_ref())),
            user_intent: text(invocation.and_then(|i| i.user_intent.as_ref())),
        })
    }
}

impl CallSpan {
    /// Starts the span(s) of a `tools/call` of `tool` from `origin`; `known` is false for a tool
    /// the server does not have. `None` when nothing observes the call (no `tracing` subscriber
    /// at INFO, and OpenTelemetry known to be a no-op for a call without a parent in `_meta`):
    /// the call then pays for no telemetry until it ends.
    #[allow(unused_variables, clippy::ptr_arg)] // the `Cow` is cloned, free when borrowed
    pub(crate) fn start(tool: &Cow<'static, str>, known: bool, origin: &Origin) -> Option<Self> {
        if !ENABLED.load(Ordering::Relaxed) {
            return None;
        }
        #[allow(unused)]
        let request = Request { tool, known, origin };
        #[cfg(feature = "opentelemetry")]
        let quiet = otel::QUIET_IN.load(Ordering::Relaxed) == otel::GENERATION.load(Ordering::Acquire).wrapping_add(1);
        let span = CallSpan {
            #[cfg(feature = "opentelemetry")]
            otel: match quiet && origin.trace_context.is_none() {
                true => None,
                false => otel::OtelCall::start(&request),
            },
            // The level test the span's macro makes first, made before calling it.
            #[cfg(feature = "tracing")]
            tracing: match ::tracing::level_enabled!(::tracing::Level::INFO) {
                true => tracing::start(&request),
                false => None,
            },
        };
        any_open!(span).then_some(span)
    }

    /// Runs `f` with the span(s) current: spans the handler makes are children of the call's.
    pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        #[cfg(feature = "opentelemetry")]
        let _otel = self.otel.as_ref().and_then(|o| o.attach());
        #[cfg(feature = "tracing")]
        let _tracing = self.tracing.as_ref().map(|s| s.enter());
        f()
    }

    /// The span(s) current until the guard is dropped, as [`in_scope`](Self::in_scope) makes them
    /// (for a call whose closure would otherwise have to capture a large value by move).
    pub(crate) fn enter(&self) -> Entered<'_> {
        // Attached, then entered, as `in_scope` does (fields are built in the order written).
        Entered {
            #[cfg(feature = "opentelemetry")]
            _otel: self.otel.as_ref().and_then(|o| o.attach()),
            #[cfg(feature = "tracing")]
            _tracing: self.tracing.as_ref().map(|s| s.enter()),
            #[cfg(not(feature = "tracing"))]
            _span: std::marker::PhantomData,
        }
    }

    /// `future` with the span(s) of `span` current at each poll (see [`in_scope`](Self::in_scope)).
    #[allow(unused_variables)]
    pub(crate) fn instrument<F: Future + Unpin>(span: Option<&CallSpan>, future: F) -> SpanScoped<F> {
        SpanScoped {
            future,
            #[cfg(feature = "opentelemetry")]
            otel: span.and_then(|s| s.otel.as_ref()).and_then(|o| o.context()),
            #[cfg(feature = "tracing")]
            tracing: span.and_then(|s| s.tracing.clone()),
        }
    }

    /// Ends the span(s) and records the duration histogram: `outcome` and the JSON-RPC error code
    /// the request was answered with, if any, give `error.type`, `rpc.response.status_code`
    /// and the status; arguments and results go on the span when `span_content` is given.
    #[allow(unused_variables)]
    pub(crate) fn end(
        self,
        (arguments, invocation): (&Value, Option<&AiInvocation>),
        outcome: &CallOutcome,
        rpc_code: Option<i64>,
        duration: Duration,
        span_content: Option<&Redactor>,
    ) {
        #[cfg(any(feature = "opentelemetry", feature = "tracing"))]
        {
            let ending = SpanEnding::of(outcome, rpc_code);
            #[allow(unused_mut)]
            let mut wants_content = false;
            #[cfg(feature = "opentelemetry")]
            {
                wants_content |= self.otel.as_ref().is_some_and(|o| o.is_recording());
            }
            #[cfg(feature = "tracing")]
            {
                wants_content |= self.tracing.is_some();
            }
            let content =
                if wants_content { SpanContent::of(arguments, outcome, invocation, span_content) } else { None };
            #[cfg(feature = "opentelemetry")]
            if let Some(o) = self.otel {
                o.end(&ending, content.as_ref(), duration);
            }
            #[cfg(feature = "tracing")]
            if let Some(s) = self.tracing {
                tracing::end(&s, &ending, content.as_ref());
            }
        }
    }
}

/// What the conventions record of a request of another method than `tools/call`.
pub(crate) struct MethodRequest<'a> {
    method: Method,
    target: Target<'a>,
    origin: &'a Origin,
}

/// The span(s) of a request of another method than `tools/call` (`resources/read`,
/// `prompts/get`, `completion/complete`, the lists): named after the method (`prompts/get
/// {name}` once a prompt is answered), with `mcp.resource.uri` or `gen_ai.prompt.name`, and a
/// point of the duration histogram.
#[derive(Default)]
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) struct MethodSpan {
    #[cfg(feature = "opentelemetry")]
    otel: Option<otel::OtelMethod>,
    #[cfg(feature = "tracing")]
    tracing: Option<(::tracing::Span, Method, Option<String>)>,
}

#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
impl MethodSpan {
    /// Whether a request could make a span or a metric point: false without the features, with
    /// the hooks off, or once the OpenTelemetry providers are known to be no-ops and no
    /// `tracing` subscriber wants mcpeye's spans. The caller then builds no origin at all.
    pub(crate) fn wanted() -> bool {
        if !ENABLED.load(Ordering::Relaxed) {
            return false;
        }
        #[allow(unused_mut)]
        let mut wanted = false;
        #[cfg(feature = "opentelemetry")]
        {
            wanted |= otel::may_observe();
        }
        #[cfg(feature = "tracing")]
        {
            wanted |= ::tracing::enabled!(target: "mcpeye", ::tracing::Level::INFO);
        }
        wanted
    }

    /// Starts the span(s) of a request of `method` about `target` from `origin`.
    #[allow(unused_variables)]
    pub(crate) fn start(method: Method, target: Target<'_>, origin: &Origin) -> Self {
        if !ENABLED.load(Ordering::Relaxed) {
            return MethodSpan::default();
        }
        #[allow(unused)]
        let request = MethodRequest { method, target, origin };
        MethodSpan {
            #[cfg(feature = "opentelemetry")]
            otel: otel::OtelMethod::start(&request),
            #[cfg(feature = "tracing")]
            tracing: tracing::start_method(&request).map(|span| {
                let prompt = match target {
                    Target::Prompt(name) => Some(name.to_owned()),
                    _ => None,
                };
                (span, method, prompt)
            }),
        }
    }

    /// Whether a span is open.
    pub(crate) fn is_observed(&self) -> bool {
        any_open!(self)
    }

    /// The span(s) current until the guard is dropped: the handler's own spans are children.
    pub(crate) fn enter(&self) -> Entered<'_> {
        if !self.is_observed() {
            return Entered::default();
        }
        Entered {
            #[cfg(feature = "opentelemetry")]
            _otel: self.otel.as_ref().and_then(|o| o.attach()),
            #[cfg(feature = "tracing")]
            _tracing: self.tracing.as_ref().map(|(s, _, _)| s.enter()),
            #[cfg(not(feature = "tracing"))]
            _span: std::marker::PhantomData,
        }
    }

    /// Ends the span(s) and records the duration histogram; `error` is the JSON-RPC error code
    /// and message the request was answered with, if any.
    #[allow(unused_variables)]
    pub(crate) fn end(self, error: Option<(i64, &str)>, duration: Duration) {
        #[cfg(any(feature = "opentelemetry", feature = "tracing"))]
        if self.is_observed() {
            let ending = SpanEnding::of_rpc(error);
            #[cfg(feature = "opentelemetry")]
            if let Some(o) = self.otel {
                o.end(&ending, duration);
            }
            #[cfg(feature = "tracing")]
            if let Some((span, method, prompt)) = self.tracing {
                tracing::end_method(&span, method, prompt.as_deref(), &ending);
            }
        }
    }
}

/// A future polled with the call's span(s) current.
pub(crate) struct SpanScoped<F> {
    future: F,
    #[cfg(feature = "opentelemetry")]
    otel: Option<::opentelemetry::Context>,
    #[cfg(feature = "tracing")]
    tracing: Option<::tracing::Span>,
}

impl<F: Future + Unpin> Future for SpanScoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        #[cfg(feature = "opentelemetry")]
        let _otel = this.otel.clone().map(|c| c.attach());
        #[cfg(feature = "tracing")]
        let _tracing = this.tracing.as_ref().map(|s| s.enter());
        Pin::new(&mut this.future).poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the hooks off no span starts, whatever the origin.
    #[test]
    fn a_call_with_the_hooks_off_has_no_span() {
        set_enabled(false);
        let origin = Origin::default();
        let started = CallSpan::start(&Cow::Borrowed("t"), true, &origin).is_some();
        set_enabled(true);
        assert!(!started);
    }
}
