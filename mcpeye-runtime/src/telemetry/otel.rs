//! The `opentelemetry` feature: a SERVER span per call and the `mcp.server.operation.duration`
//! histogram, through the OpenTelemetry API and the host's global tracer and meter providers.

use super::{network, MethodRequest, Request, SpanContent, SpanEnding, METHOD};
use crate::model::record::Origin;
use crate::model::record::{ClientInfo, Transport};
use crate::model::stats::Target;
use opentelemetry::metrics::{Histogram, MeterProvider};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{
    Link, Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId,
    TraceState, Tracer as _,
};
use opentelemetry::{global, Context, InstrumentationScope, KeyValue};
use std::borrow::Cow;
use std::cell::Cell;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The bucket boundaries the conventions give the duration histogram, in seconds.
const DURATION_BUCKETS: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The tracer and histogram, taken from the global providers at the first call: install the
/// providers before serving (instruments are not re-created per call, which would cost more
/// than the call itself with an SDK).
struct Instruments {
    tracer: global::BoxedTracer,
    duration: Histogram<f64>,
    /// What the first span showed of the tracer ([`TracerKind`]).
    tracer_kind: AtomicU8,
    /// The meter provider is the API's no-op (or another that can hold no state): the
    /// histogram records nothing, so its attributes are not built.
    meter_is_noop: bool,
    /// The [`GENERATION`] they were made in.
    generation: usize,
}

/// Whether the tracer makes spans, learnt from the first span built outside a suppressed
/// context: a no-op tracer (the API's default when the host installs none) hands back its
/// parent's span context and records nothing, where an SDK makes a new span id even for a
/// span it does not sample. Once known to be a no-op, a call skips the span entirely and pays
/// only for its metric point (and for the parent of a request with trace context in `_meta`,
/// which handlers still see as current).
#[derive(Clone, Copy, PartialEq)]
#[repr(u8)]
enum TracerKind {
    Unknown = 0,
    Noop = 1,
    Spans = 2,
}

/// Bumped by [`reset`]: instruments made before it are not handed out again.
pub(super) static GENERATION: AtomicUsize = AtomicUsize::new(0);

/// `generation + 1` once the instruments of [`GENERATION`] `generation` are known to make no
/// span and keep no metric point (a no-op tracer and meter provider), else 0: a call without a
/// parent in `_meta` then skips OpenTelemetry without taking its instruments.
pub(super) static QUIET_IN: AtomicUsize = AtomicUsize::new(0);

/// The instruments of a generation, made once and leaked (a call in flight during a [`reset`]
/// keeps using the ones it took).
static SHARED: Mutex<Option<(usize, &'static Instruments)>> = Mutex::new(None);

thread_local! {
    /// This thread's copy of [`SHARED`]: every call reads it and one atomic, no lock.
    static CACHED: Cell<Option<(usize, &'static Instruments)>> = const { Cell::new(None) };
}

fn instruments() -> &'static Instruments {
    let generation = GENERATION.load(Ordering::Acquire);
    match CACHED.try_with(Cell::get) {
        Ok(Some((made_in, instruments))) if made_in == generation => instruments,
        _ => {
            let instruments = shared(generation);
            // A thread being torn down has no cache: it takes the shared ones each time.
            let _ = CACHED.try_with(|cached| cached.set(Some((generation, instruments))));
            instruments
        }
    }
}

/// The instruments of `generation`, made by the first thread that asks.
#[cold]
fn shared(generation: usize) -> &'static Instruments {
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    match *shared {
        Some((made_in, instruments)) if made_in == generation => instruments,
        _ => {
            let instruments: &'static Instruments = Box::leak(Box::new(make_instruments(generation)));
            *shared = Some((generation, instruments));
            instruments
        }
    }
}

/// Forgets the instruments, so that the next call takes them from the global providers again
/// (the old ones are leaked: for benchmarks that switch providers within one process).
pub(super) fn reset() {
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    *shared = None;
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

fn make_instruments(generation: usize) -> Instruments {
    let scope = InstrumentationScope::builder("mcpeye").with_version(env!("CARGO_PKG_VERSION")).build();
    let meter_provider = global::meter_provider();
    let meter_is_noop = keeps_nothing(&*meter_provider);
    let duration = meter_provider
        .meter_with_scope(scope.clone())
        .f64_histogram("mcp.server.operation.duration")
        .with_unit("s")
        .with_description(
            "MCP request or notification duration as observed on the receiver from the time it was received \
             until the result or ack is sent.",
        )
        .with_boundaries(DURATION_BUCKETS.to_vec())
        .build();
    Instruments {
        tracer: global::tracer_with_scope(scope),
        duration,
        tracer_kind: AtomicU8::new(TracerKind::Unknown as u8),
        meter_is_noop,
        generation,
    }
}

/// Whether a meter provider has nowhere to keep a measurement. The API gives no way to ask
/// whether a provider records; its no-op is of zero size, where an SDK's holds its pipelines.
fn keeps_nothing(provider: &(dyn MeterProvider + Send + Sync)) -> bool {
    std::mem::size_of_val(provider) == 0
}

/// One call's span, in the context it is current in, and what its metric point needs.
pub(super) struct OtelCall {
    /// The context in which the span is current; `None` when there is nothing to propagate (a
    /// no-op provider and no parent): then only the metric is recorded.
    cx: Option<Context>,
    recording: bool,
    /// `gen_ai.tool.name` of a known tool.
    tool: Option<Cow<'static, str>>,
    client: Option<Arc<ClientInfo>>,
    transport: Option<Transport>,
}

/// Most attributes a metric point has: `common_attributes` and the outcome's two.
const MAX_METRIC_ATTRIBUTES: usize = 9;

impl OtelCall {
    pub(super) fn start(request: &Request<'_>) -> Option<OtelCall> {
        let instruments = instruments();
        let kind = instruments.tracer_kind.load(Ordering::Relaxed);
        // With a no-op tracer there is no span to make: only a parent from `_meta` is made
        // current, as a no-op span would have carried it.
        let noop_parent = match kind == TracerKind::Noop as u8 {
            true if request.origin.trace_context.is_none() => None,
            true => Some(parent(request.origin).0).filter(|parent| parent.span().span_context().is_valid()),
            false => None,
        };
        // Nothing to propagate and no metric to record: nothing to do at the end either.
        if kind == TracerKind::Noop as u8 && noop_parent.is_none() && instruments.meter_is_noop {
            QUIET_IN.store(instruments.generation.wrapping_add(1), Ordering::Relaxed);
            return None;
        }
        let mut call = OtelCall {
            cx: None,
            recording: false,
            tool: request.known.then(|| request.tool.clone()),
            client: request.origin.client.clone(),
            transport: request.origin.transport,
        };
        if kind == TracerKind::Noop as u8 {
            call.cx = noop_parent;
            return Some(call);
        }
        // Named without the tool first: with a no-op provider nothing else is paid for.
        let (cx, recording) = server_span(instruments, kind, METHOD, request.origin);
        call.recording = recording;
        call.cx = cx;
        if let Some(cx) = call.cx.as_ref().filter(|_| recording) {
            let span = cx.span();
            span.update_name(request.span_name());
            let mut attributes = Vec::with_capacity(MAX_METRIC_ATTRIBUTES + 4);
            call.common_attributes(&mut attributes);
            if !request.known {
                attributes.push(KeyValue::new("gen_ai.tool.name", request.tool.to_string()));
            }
            request_attributes(request.origin, &mut attributes);
            span.set_attributes(attributes);
        }
        Some(call)
    }

    /// The attributes the span and the metric share (`model/mcp/common.yaml`,
    /// `mcp.common.attributes`), before the outcome's.
    fn common_attributes(&self, attributes: &mut impl Extend<KeyValue>) {
        attributes
            .extend([KeyValue::new("mcp.method.name", METHOD), KeyValue::new("gen_ai.operation.name", "execute_tool")]);
        if let Some(tool) = &self.tool {
            attributes.extend([KeyValue::new("gen_ai.tool.name", tool.clone())]);
        }
        connection_attributes(self.client.as_deref(), self.transport, attributes);
    }

    pub(super) fn is_recording(&self) -> bool {
        self.recording
    }

    /// The context in which the call's span is current, if it has one to propagate.
    pub(super) fn context(&self) -> Option<Context> {
        self.cx.clone()
    }

    pub(super) fn attach(&self) -> Option<opentelemetry::ContextGuard> {
        self.cx.clone().map(Context::attach)
    }

    pub(super) fn end(self, ending: &SpanEnding, content: Option<&SpanContent>, duration: Duration) {
        let instruments = instruments();
        if !instruments.meter_is_noop {
            let mut attributes = metric_attributes();
            self.common_attributes(&mut attributes);
            if let Some(code) = &ending.rpc_status {
                attributes.extend([KeyValue::new("rpc.response.status_code", code.clone())]);
            }
            if let Some(error_type) = &ending.error_type {
                attributes.extend([KeyValue::new("error.type", error_type.clone())]);
            }
            instruments.duration.record(duration.as_secs_f64(), &attributes);
        }
        let Some(cx) = self.cx.as_ref().filter(|_| self.recording) else { return };
        let span = cx.span();
        if let Some(code) = &ending.rpc_status {
            span.set_attribute(KeyValue::new("rpc.response.status_code", code.clone()));
        }
        if let Some(error_type) = &ending.error_type {
            span.set_attribute(KeyValue::new("error.type", error_type.clone()));
            let description = ending.description.clone().map(Cow::Owned).unwrap_or_default();
            span.set_status(Status::Error { description });
        }
        if let Some(content) = content {
            span.set_attribute(KeyValue::new("gen_ai.tool.call.arguments", content.arguments.clone()));
            if let Some(result) = &content.result {
                span.set_attribute(KeyValue::new("gen_ai.tool.call.result", result.clone()));
            }
            if let Some(reason) = &content.invocation_reason {
                span.set_attribute(KeyValue::new(super::INVOCATION_REASON, reason.clone()));
            }
            if let Some(user_intent) = &content.user_intent {
                span.set_attribute(KeyValue::new(super::USER_INTENT, user_intent.clone()));
            }
        }
        span.end();
    }
}

/// `mcp.protocol.version` and the `network.*` attributes of a request's client and transport.
fn connection_attributes(
    client: Option<&ClientInfo>,
    transport: Option<Transport>,
    attributes: &mut impl Extend<KeyValue>,
) {
    if let Some(version) = client.and_then(ClientInfo::protocol_version) {
        let version = match known_protocol_version(version) {
            Some(known) => KeyValue::new("mcp.protocol.version", known),
            None => KeyValue::new("mcp.protocol.version", version.to_owned()),
        };
        attributes.extend([version]);
    }
    let (transport, protocol, protocol_version) = network(transport);
    let network = [
        ("network.transport", transport),
        ("network.protocol.name", protocol),
        ("network.protocol.version", protocol_version),
    ];
    attributes.extend(network.into_iter().filter_map(|(k, v)| Some(KeyValue::new(k, v?))));
}

/// A SERVER span named `name` in the request's parent context (learning on the way whether
/// the tracer is a no-op), and whether it records; the context is `None` when there is nothing
/// to propagate.
fn server_span(instruments: &Instruments, kind: u8, name: &'static str, origin: &Origin) -> (Option<Context>, bool) {
    let (parent, link) = parent(origin);
    let mut builder = SpanBuilder::from_name(name).with_kind(SpanKind::Server);
    if let Some(link) = link {
        builder = builder.with_links(vec![link]);
    }
    let span = instruments.tracer.build_with_context(builder, &parent);
    let recording = span.is_recording();
    if kind == TracerKind::Unknown as u8 && !parent.is_telemetry_suppressed() {
        let noop = !recording && span.span_context() == parent.span().span_context();
        let learnt = if noop { TracerKind::Noop } else { TracerKind::Spans };
        instruments.tracer_kind.store(learnt as u8, Ordering::Relaxed);
    }
    let propagates = recording || span.span_context().is_valid();
    (propagates.then(|| parent.with_span(span)), recording)
}

/// The request attributes every server span has beyond the shared ones: its id, session and
/// model (span attributes only: their values are unbounded).
fn request_attributes(origin: &Origin, attributes: &mut Vec<KeyValue>) {
    if let Some(id) = &origin.request_id {
        attributes.push(KeyValue::new("jsonrpc.request.id", id.to_string()));
    }
    if let Some(session) = &origin.session_id {
        attributes.push(KeyValue::new("mcp.session.id", session.clone()));
    }
    if let Some(model) = &origin.model {
        attributes.push(KeyValue::new("gen_ai.request.model", model.clone()));
    }
    if let Some(invocation) = &origin.invocation {
        if let Some(turn) = &invocation.turn {
            attributes.push(KeyValue::new(super::TURN_ID, turn.clone()));
        }
        if let Some(redacted) = invocation.user_intent_redacted {
            attributes.push(KeyValue::new(super::USER_INTENT_REDACTED, redacted));
        }
    }
}

/// Whether a request could make a span or a metric point: not once the tracer is known to be
/// a no-op and the meter provider keeps nothing.
pub(super) fn may_observe() -> bool {
    let instruments = instruments();
    !(instruments.tracer_kind.load(Ordering::Relaxed) == TracerKind::Noop as u8 && instruments.meter_is_noop)
}

/// The span of a request of another method than `tools/call` (`resources/read`,
/// `prompts/get`…), and what its metric point needs.
pub(super) struct OtelMethod {
    cx: Option<Context>,
    recording: bool,
    method: &'static str,
    /// `gen_ai.prompt.name`: on the metric only once the prompt was answered (a name the server
    /// does not have is the client's, unbounded).
    prompt: Option<String>,
    client: Option<Arc<ClientInfo>>,
    transport: Option<Transport>,
}

impl OtelMethod {
    pub(super) fn start(request: &MethodRequest<'_>) -> Option<OtelMethod> {
        let instruments = instruments();
        let kind = instruments.tracer_kind.load(Ordering::Relaxed);
        let noop = kind == TracerKind::Noop as u8;
        if noop && instruments.meter_is_noop {
            return None;
        }
        let method = request.method.as_str();
        let mut call = OtelMethod {
            cx: None,
            recording: false,
            method,
            prompt: match request.target {
                Target::Prompt(name) => Some(name.to_owned()),
                _ => None,
            },
            client: request.origin.client.clone(),
            transport: request.origin.transport,
        };
        if noop {
            return Some(call);
        }
        let (cx, recording) = server_span(instruments, kind, method, request.origin);
        call.cx = cx;
        call.recording = recording;
        if let Some(cx) = call.cx.as_ref().filter(|_| recording) {
            let mut attributes = Vec::with_capacity(MAX_METRIC_ATTRIBUTES + 4);
            attributes.push(KeyValue::new("mcp.method.name", method));
            match request.target {
                Target::Prompt(name) => attributes.push(KeyValue::new("gen_ai.prompt.name", name.to_owned())),
                Target::Resource(uri) => attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned())),
                Target::None => {}
            }
            connection_attributes(call.client.as_deref(), call.transport, &mut attributes);
            request_attributes(request.origin, &mut attributes);
            cx.span().set_attributes(attributes);
        }
        Some(call)
    }

    pub(super) fn attach(&self) -> Option<opentelemetry::ContextGuard> {
        self.cx.clone().map(Context::attach)
    }

    /// Ends the span and records the metric point; `answered` is false for a JSON-RPC error.
    pub(super) fn end(self, ending: &SpanEnding, duration: Duration) {
        let answered = ending.rpc_status.is_none();
        let instruments = instruments();
        if !instruments.meter_is_noop {
            let mut attributes = metric_attributes();
            attributes.extend([KeyValue::new("mcp.method.name", self.method)]);
            if let Some(prompt) = self.prompt.as_ref().filter(|_| answered) {
                attributes.extend([KeyValue::new("gen_ai.prompt.name", prompt.clone())]);
            }
            connection_attributes(self.client.as_deref(), self.transport, &mut attributes);
            end_attributes(ending, &mut attributes);
            instruments.duration.record(duration.as_secs_f64(), &attributes);
        }
        let Some(cx) = self.cx.as_ref().filter(|_| self.recording) else { return };
        let span = cx.span();
        if let Some(prompt) = self.prompt.as_ref().filter(|_| answered) {
            span.update_name(format!("{} {prompt}", self.method));
        }
        let mut attributes = Vec::new();
        end_attributes(ending, &mut attributes);
        span.set_attributes(attributes);
        if ending.error_type.is_some() {
            let description = ending.description.clone().map(Cow::Owned).unwrap_or_default();
            span.set_status(Status::Error { description });
        }
        span.end();
    }
}

/// `rpc.response.status_code` and `error.type` of how a request ended.
fn end_attributes(ending: &SpanEnding, attributes: &mut impl Extend<KeyValue>) {
    if let Some(code) = &ending.rpc_status {
        attributes.extend([KeyValue::new("rpc.response.status_code", code.clone())]);
    }
    if let Some(error_type) = &ending.error_type {
        attributes.extend([KeyValue::new("error.type", error_type.clone())]);
    }
}

/// The protocol versions MCP has published, as static strings: an attribute that names one
/// costs no allocation.
fn known_protocol_version(version: &str) -> Option<&'static str> {
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"].into_iter().find(|v| *v == version)
}

/// A metric point's attributes: one allocation, made only when the meter provider keeps
/// measurements (recording one costs far more).
fn metric_attributes() -> Vec<KeyValue> {
    Vec::with_capacity(MAX_METRIC_ATTRIBUTES)
}

/// The server span's parent: the trace context of the request's `_meta` (through the host's
/// propagator, else read as W3C Trace Context), with a link to the ambient context when there
/// is one; else the ambient context.
fn parent(origin: &Origin) -> (Context, Option<Link>) {
    let current = Context::current();
    let Some(meta) = &origin.trace_context else { return (current, None) };
    let mut cx = global::get_text_map_propagator(|p| p.extract_with_context(&current, &MetaExtractor(meta)));
    if !cx.span().span_context().is_remote() {
        // No propagator installed (the API's default is a no-op): W3C Trace Context, which is
        // what SEP-414 names.
        match meta.traceparent.as_deref().and_then(|tp| parse_traceparent(tp, meta.tracestate.as_deref())) {
            Some(remote) => cx = current.with_remote_span_context(remote),
            None => return (current, None),
        }
    }
    let ambient = current.span().span_context().clone();
    let link = ambient.is_valid().then(|| Link::with_context(ambient));
    (cx, link)
}

struct MetaExtractor<'a>(&'a crate::model::record::TraceContext);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)
    }

    fn keys(&self) -> Vec<&str> {
        ["traceparent", "tracestate", "baggage"].into_iter().filter(|k| self.0.get(k).is_some()).collect()
    }
}

/// A W3C `traceparent` (`version-traceid-parentid-flags`) as a remote span context; `None` when
/// it is malformed or names the invalid all-zero ids. Read byte by byte at fixed offsets: the
/// header has one layout, and this runs on every request that carries one.
fn parse_traceparent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
    let b = traceparent.trim().as_bytes();
    // 2 + 1 + 32 + 1 + 16 + 1 + 2 bytes; later versions may append `-` and more fields.
    const LEN: usize = 55;
    if b.len() < LEN || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return None;
    }
    let version = lower_hex(&b[..2])?;
    // Version 00 has exactly four fields; `ff` is invalid (W3C, "Versioning").
    if version == 0xff || (b.len() > LEN && (version == 0 || b[LEN] != b'-')) {
        return None;
    }
    let trace_id = TraceId::from(lower_hex(&b[3..35])?);
    let span_id = SpanId::from(u64::try_from(lower_hex(&b[36..52])?).ok()?);
    let flags = u8::try_from(lower_hex(&b[53..55])?).ok()?;
    let state = tracestate.and_then(|s| s.parse::<TraceState>().ok()).unwrap_or_default();
    let cx = SpanContext::new(trace_id, span_id, TraceFlags::new(flags & 1), true, state);
    cx.is_valid().then_some(cx)
}

/// The value of at most 32 lowercase hex digits (the only case W3C Trace Context allows).
fn lower_hex(digits: &[u8]) -> Option<u128> {
    digits.iter().try_fold(0u128, |value, &d| {
        let nibble = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(value << 4 | u128::from(nibble))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_meter_provider_without_state_is_taken_for_a_no_op() {
        assert!(keeps_nothing(&opentelemetry::metrics::noop::NoopMeterProvider::new()));
        struct CountingMeterProvider(std::sync::atomic::AtomicU64);
        impl MeterProvider for CountingMeterProvider {
            fn meter_with_scope(&self, scope: InstrumentationScope) -> opentelemetry::metrics::Meter {
                self.0.fetch_add(1, Ordering::Relaxed);
                opentelemetry::metrics::noop::NoopMeterProvider::new().meter_with_scope(scope)
            }
        }
        assert!(!keeps_nothing(&CountingMeterProvider(Default::default())));
    }

    #[test]
    fn traceparents_are_read_as_w3c_says() {
        let cx =
            parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("rojo=00f067aa0ba902b7"))
                .unwrap();
        assert_eq!(cx.trace_id(), TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap());
        assert_eq!(cx.span_id(), SpanId::from_hex("00f067aa0ba902b7").unwrap());
        assert!(cx.is_sampled() && cx.is_remote());
        assert_eq!(cx.trace_state().get("rojo"), Some("00f067aa0ba902b7"));
        assert!(!parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", None)
            .unwrap()
            .is_sampled());
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad, None).is_none(), "{bad}");
        }
        assert!(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", None).is_some());
    }
}
