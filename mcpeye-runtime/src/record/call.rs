//! A call from its start to its end ([`TrackedCall`]): every way in (`Manifest::call` and its siblings,
//! `ManifestServer`, `instrument`'s routes, unknown tools, [`Tracker::record`]) begins a call with
//! [`TrackedCall::begin`] and ends it with [`TrackedCall::end`] or [`TrackedCall::end_with`], and a `TrackedCall` is the one
//! thing that becomes a [`Queued`] record.

use super::queued::{field, flat_arguments, flat_text, put_prefix, text, Field, Outcome, Queued, FLAT_VALUE_BUDGET};
use crate::json::flat::flatten_map;
use crate::json::flat::{to_value, Flat};
use crate::model::identity::CallIdentity;
use crate::model::meta::AiInvocation;
use crate::model::record::{now_epoch_ms, CallOutcome, CallRecord, ClientInfo, IntentSource, Origin};
use crate::model::request::RequestInfo;
use crate::telemetry::CallSpan;
use crate::tracker::{Pipeline, RecordSink, Tracker};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A call's arguments as its way in has them.
pub(crate) enum Arguments<'a> {
    /// Held by the call for its handler (a manifest's tool, the reserved tool, an unknown tool):
    /// the record flattens them as the call begins when it can, and the handler may then take
    /// them; otherwise the record takes them at the end, as the handler left them.
    Owned(Value),
    /// The tool's own (an rmcp route takes them when it runs): the record copies them now
    /// (`None`, as MCP allows, is `{}`).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    Borrowed(Option<&'a Map<String, Value>>),
}

/// One call from its start to its end: the arguments without the intent and the attribution
/// arguments, where it came from, its timing and span, and its record's values as far as they are
/// known. Every [`Queued`] record and every [`CallRecord`] a callback tracker gets is made from one.
pub(crate) struct TrackedCall {
    tool_name: Cow<'static, str>,
    /// The arguments the handler reads ([`Arguments::Owned`]); `Null` for a tool that holds its own.
    pub(crate) arguments: Value,
    pub(crate) intent: Option<(String, IntentSource)>,
    client: Option<Arc<ClientInfo>>,
    session_id: Option<Arc<str>>,
    /// The model that made the call ([`Origin::model`]).
    model: Option<Arc<str>>,
    /// What the request's `aiInvocation` said beyond the intent ([`Origin::invocation`]).
    invocation: Option<Arc<AiInvocation>>,
    timing: Timing,
    /// The call's span(s), when something observes it (see [`CallSpan::start`]); made current
    /// around the handler by each way in.
    pub(crate) span: Option<CallSpan>,
    /// The user `identify` named as the call began.
    identified: Option<Arc<CallIdentity>>,
    /// The record's buffer, its arguments flattened as the call began (a pipeline's record whose
    /// span does not read them); `None`: the record takes [`arguments`](Self::arguments) at the end.
    flat: Option<FlatArguments>,
}

/// The start of a record's buffer: the model and `aiInvocation` (see `put_prefix`), then the
/// arguments.
struct FlatArguments {
    bytes: Vec<u8>,
    arguments: Field,
    model_len: u8,
    invocation_len: u16,
}

/// When a call happened.
enum Timing {
    /// Timed from this instant to its end.
    Clock(Instant),
    /// Given: the reserved tool's `durationMs` is 0 (docs/wire-format.md#reserved-tool); a record
    /// made by hand brings its own end and duration.
    Given { timestamp_ms: Option<u64>, duration: Duration },
}

impl TrackedCall {
    /// Begins a call of `tool_name` (`known`: false for a tool the server does not have, whose
    /// span then names no tool) from `origin`, to be recorded into `tracker`: its span starts,
    /// `identify` runs (unless it ran for the call's conversation already), and a pipeline's
    /// record flattens the arguments now.
    pub(crate) fn begin(
        tracker: Option<&Tracker>,
        tool_name: Cow<'static, str>,
        known: bool,
        arguments: Arguments<'_>,
        intent: Option<(String, IntentSource)>,
        origin: &Origin,
    ) -> TrackedCall {
        let span = CallSpan::start(&tool_name, known, origin);
        let mut call = TrackedCall {
            tool_name,
            arguments: Value::Null,
            intent,
            client: origin.client.clone(),
            session_id: origin.session_id.clone(),
            model: origin.model.clone(),
            invocation: origin.invocation.clone(),
            timing: Timing::Clock(Instant::now()),
            span,
            identified: origin.identified.clone(),
            flat: None,
        };
        if let Some(asking) = &origin.asking {
            call.continue_from(asking);
        }
        let Some(tracker) = tracker else {
            if let Arguments::Owned(v) = arguments {
                call.arguments = v;
            }
            return call;
        };
        let pipeline = match &*tracker.inner {
            RecordSink::Pipeline(p) if !call.span_reads_values(tracker) => Some(p),
            _ => None,
        };
        // `identify` runs unless it ran already (for the call's conversation handle, see
        // `dispatch::attribute`).
        let identifies = call.identified.is_none() && tracker.identifies();
        match arguments {
            Arguments::Owned(v) => {
                call.arguments = v;
                if identifies {
                    call.identify(tracker, origin, None);
                }
                if let (Some(p), Value::Object(map)) = (pipeline, &call.arguments) {
                    call.flat = FlatArguments::of(&call, p, map, false);
                }
            }
            Arguments::Borrowed(map) => {
                let empty = Map::new();
                let map = map.unwrap_or(&empty);
                // `identify` and a span that reads the arguments see them as a JSON value: built
                // only for them.
                let copy = || Value::Object(map.clone());
                let seen = (pipeline.is_none() || identifies).then(copy);
                if identifies {
                    call.identify(tracker, origin, seen.as_ref());
                }
                match pipeline {
                    Some(p) => call.flat = FlatArguments::of(&call, p, map, true),
                    None => call.arguments = seen.unwrap_or_default(),
                }
            }
        }
        call
    }

    /// A call recorded by hand ([`Tracker::record`]): its end and duration are the record's.
    fn of_record(record: CallRecord) -> (TrackedCall, CallOutcome) {
        let CallRecord {
            tool_name,
            arguments,
            outcome,
            intent,
            client,
            session_id,
            model,
            timestamp_ms,
            duration,
            invocation,
        } = record;
        let call = TrackedCall {
            tool_name,
            arguments,
            intent,
            client,
            session_id,
            model,
            invocation,
            timing: Timing::Given { timestamp_ms: Some(timestamp_ms), duration },
            span: None,
            identified: None,
            flat: None,
        };
        (call, outcome)
    }

    /// Runs `identify` for the call as it begins, on its arguments (`seen`, else the call's own).
    fn identify(&mut self, tracker: &Tracker, origin: &Origin, seen: Option<&Value>) {
        let arguments = seen.unwrap_or(&self.arguments);
        self.identified = tracker.identify_now(RequestInfo::of_origin(&self.tool_name, arguments, origin));
    }

    /// A later round of a call that asked the client: timed from the first round's start (as this
    /// machine's clock places it), with the first round's intent.
    #[cold]
    fn continue_from(&mut self, asking: &crate::model::ask::Asking) {
        if asking.round > 1 {
            self.started_earlier(Duration::from_millis(now_epoch_ms().saturating_sub(asking.started_ms)));
            if asking.intent.is_some() {
                self.intent = asking.intent.clone();
            }
        }
    }

    /// Moves the call's start `earlier` back (a later round of a call, timed from its first).
    pub(crate) fn started_earlier(&mut self, earlier: Duration) {
        if let Timing::Clock(started) = &mut self.timing {
            *started = started.checked_sub(earlier).unwrap_or(*started);
        }
    }

    /// Records the call with `duration` 0 (the reserved tool).
    pub(crate) fn untimed(mut self) -> Self {
        self.timing = Timing::Given { timestamp_ms: None, duration: Duration::ZERO };
        self
    }

    /// Whether ending the call's span reads its arguments and result as JSON values: a span is
    /// open and `tracker` puts them on spans ([`Config::span_content`](crate::Config::span_content)).
    fn span_reads_values(&self, tracker: &Tracker) -> bool {
        self.span.is_some() && tracker.span_content().is_some()
    }

    /// Whether the record flattened the arguments as the call began: the handler may then take
    /// them ([`parse_args`](crate::tool::def::parse_args)), and they nest less than
    /// [`MAX_VALUE_DEPTH`](crate::contract::MAX_VALUE_DEPTH) deep.
    pub(crate) fn has_flat_arguments(&self) -> bool {
        matches!(&self.flat, Some(FlatArguments { arguments: Field::Flat(_), .. }))
    }

    /// The arguments as they were when the call began, rebuilt from the record's copy (to
    /// describe arguments the handler could not read, after it took them).
    pub(crate) fn recorded_arguments(&self) -> Value {
        match &self.flat {
            Some(f) => f.value(),
            None => self.arguments.clone(),
        }
    }

    /// Ends the call with `outcome` (answered with the JSON-RPC error `rpc_code`, if any): its
    /// span ends, and its record goes to `tracker` (nothing when there is none).
    pub(crate) fn end(mut self, tracker: Option<&Tracker>, outcome: CallOutcome, rpc_code: Option<i64>) {
        let (timestamp_ms, duration) = self.timing.ended();
        if let Some(span) = self.span.take() {
            self.end_span(span, tracker, &outcome, rpc_code, duration);
        }
        let Some(tracker) = tracker else { return };
        match &*tracker.inner {
            RecordSink::Pipeline(p) => {
                if p.admit() {
                    let queued = self.queued(|| p.pool.take(), timestamp_ms, duration, |bytes| ended(outcome, bytes));
                    p.enqueue(queued);
                }
            }
            RecordSink::Callback(f) => f.hand(self.into_record(outcome, timestamp_ms, duration)),
        }
    }

    /// Ends a call that succeeded with `result`, whose record is `to_json(result)`: a pipeline's
    /// record flattens it straight from `result` with `flatten` (which appends its node within a
    /// budget, or gives up leaving the buffer as it was), building that JSON only if it gives up.
    pub(crate) fn end_with<T: ?Sized>(
        mut self,
        tracker: Option<&Tracker>,
        result: &T,
        flatten: impl FnOnce(&T, &mut Vec<u8>, usize) -> bool,
        to_json: impl FnOnce(&T) -> Value,
    ) {
        let pipeline = match tracker {
            Some(t) if !self.span_reads_values(t) => match &*t.inner {
                RecordSink::Pipeline(p) => Some(p),
                RecordSink::Callback(_) => None,
            },
            _ => None,
        };
        let Some(pipeline) = pipeline else {
            return self.end(tracker, CallOutcome::Success { result: to_json(result) }, None);
        };
        let (timestamp_ms, duration) = self.timing.ended();
        if let Some(span) = self.span.take() {
            // The span reads no result (checked above).
            self.end_span(span, tracker, &CallOutcome::Success { result: Value::Null }, None, duration);
        }
        if pipeline.admit() {
            let queued = self.queued(
                || pipeline.pool.take(),
                timestamp_ms,
                duration,
                |bytes| {
                    let start = bytes.len();
                    match flatten(result, bytes, FLAT_VALUE_BUDGET) {
                        true => Outcome::Success(Field::Flat(start)),
                        false => Outcome::Success(Field::Value(Box::new(to_json(result)))),
                    }
                },
            );
            pipeline.enqueue(queued);
        }
    }

    /// Ends the call's span with this outcome (and the JSON-RPC error code the request was
    /// answered with).
    fn end_span(
        &self,
        span: CallSpan,
        tracker: Option<&Tracker>,
        outcome: &CallOutcome,
        rpc_code: Option<i64>,
        duration: Duration,
    ) {
        let request = (&self.arguments, self.invocation.as_deref());
        span.end(request, outcome, rpc_code, duration, tracker.and_then(Tracker::span_content));
    }

    /// The queued record: the arguments flattened when the call began (else now), the intent,
    /// then the outcome `ended` writes into the buffer.
    fn queued(
        self,
        buffer: impl FnOnce() -> Vec<u8>,
        timestamp_ms: u64,
        duration: Duration,
        ended: impl FnOnce(&mut Vec<u8>) -> Outcome,
    ) -> Queued {
        let (mut bytes, arguments, prefix) = match self.flat {
            Some(FlatArguments { bytes, arguments, model_len, invocation_len }) => {
                (bytes, Some(arguments), (model_len, invocation_len))
            }
            None => {
                let mut bytes = buffer();
                let prefix = put_prefix(self.model.as_deref(), self.invocation.as_deref(), &mut bytes);
                let arguments = flat_arguments(self.arguments, &mut bytes);
                (bytes, arguments, prefix)
            }
        };
        let (intent, intent_source) = match self.intent {
            Some((t, source)) => (Some(text(t, &mut bytes)), source),
            None => (None, IntentSource::Mcpeye),
        };
        let outcome = ended(&mut bytes);
        let (user_id, user_email) = match self.identified.as_deref() {
            Some(id) => (id.user_id.clone(), id.user_email.clone()),
            None => (None, None),
        };
        let (model_len, invocation_len) = prefix;
        Queued {
            tool_name: self.tool_name,
            client: self.client,
            session_id: self.session_id,
            timestamp_ms,
            duration_secs: duration.as_secs(),
            duration_nanos: duration.subsec_nanos(),
            user_id,
            user_email,
            bytes,
            arguments,
            outcome,
            intent,
            intent_source,
            model_len,
            invocation_len,
        }
    }

    /// The record a callback tracker gets.
    fn into_record(self, outcome: CallOutcome, timestamp_ms: u64, duration: Duration) -> CallRecord {
        let arguments = match &self.flat {
            Some(f) => f.value(),
            None => self.arguments,
        };
        CallRecord {
            tool_name: self.tool_name,
            arguments,
            outcome,
            intent: self.intent,
            client: self.client,
            session_id: self.session_id,
            model: self.model,
            timestamp_ms,
            duration,
            invocation: self.invocation,
        }
    }
}

/// How a call ended, its result (if any) flattened into `bytes`.
fn ended(outcome: CallOutcome, bytes: &mut Vec<u8>) -> Outcome {
    match outcome {
        CallOutcome::Success { result } => Outcome::Success(field(result, bytes)),
        failed => Outcome::Failed(failed),
    }
}

impl FlatArguments {
    /// The record's buffer for `call`, from `pipeline`'s pool: its model and `aiInvocation`, then
    /// `map` flattened within the budget; over it, `map` copied when `copy` (the tool takes its
    /// arguments), else `None` (the record takes the call's arguments at the end).
    fn of(call: &TrackedCall, pipeline: &Pipeline, map: &Map<String, Value>, copy: bool) -> Option<FlatArguments> {
        let mut bytes = pipeline.pool.take();
        let (model_len, invocation_len) = put_prefix(call.model.as_deref(), call.invocation.as_deref(), &mut bytes);
        let start = bytes.len();
        let arguments = if flatten_map(map, &mut bytes, FLAT_VALUE_BUDGET) {
            Field::Flat(start)
        } else if copy {
            Field::Value(Box::new(Value::Object(map.clone())))
        } else {
            bytes.clear();
            pipeline.pool.give(bytes);
            return None;
        };
        Some(FlatArguments { bytes, arguments, model_len, invocation_len })
    }

    /// The arguments as a JSON value again.
    fn value(&self) -> Value {
        match &self.arguments {
            Field::Flat(start) => flat_text(&self.bytes[*start..]).map_or(Value::Null, |f| to_value(Flat::new(f))),
            Field::Value(v) => (**v).clone(),
        }
    }
}

impl Timing {
    /// The call's end (epoch milliseconds) and duration.
    fn ended(&self) -> (u64, Duration) {
        match *self {
            Timing::Clock(started) => (now_epoch_ms(), started.elapsed()),
            Timing::Given { timestamp_ms, duration } => (timestamp_ms.unwrap_or_else(now_epoch_ms), duration),
        }
    }
}

impl Tracker {
    /// Records one call. Never blocks, never panics, never does I/O: the record is handed to
    /// the flusher, or dropped and counted if the channel is full or the tracker shut down.
    ///
    /// ```
    /// use mcpeye::{CallOutcome, CallRecord};
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// let mut record = CallRecord::new("lookup", serde_json::json!({"id": 7}), CallOutcome::error("not found"));
    /// record.duration = Duration::from_millis(12);
    /// tracker.record(record);
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(sink.events()[0]["durationMs"], 12);
    /// ```
    // Here rather than in `tracker.rs`: a record made by hand is a call like any other.
    pub fn record(&self, record: CallRecord) {
        let (mut call, outcome) = TrackedCall::of_record(record);
        if self.identifies() {
            let request = RequestInfo::new(&call.tool_name, &call.arguments)
                .with_client(call.client.as_deref())
                .with_session_id(call.session_id.as_deref());
            call.identified = self.identify_now(request);
        }
        call.end(Some(self), outcome, None);
    }
}

/// The queued record of a call recorded by hand, for the flusher's tests.
#[cfg(test)]
impl Queued {
    pub(crate) fn new(
        record: CallRecord,
        user_id: Option<String>,
        user_email: Option<String>,
        bytes: Vec<u8>,
    ) -> Queued {
        let (mut call, outcome) = TrackedCall::of_record(record);
        call.identified = Some(Arc::new(CallIdentity { user_id, user_email }));
        let (timestamp_ms, duration) = call.timing.ended();
        call.queued(|| bytes, timestamp_ms, duration, |b| ended(outcome, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_invocation_crosses_after_the_model_and_reads_back() {
        let invocation = AiInvocation {
            turn: Some(Arc::from("t-1")),
            reason: Some("élan: the user's request, in their words".into()),
            // Longer than 127 bytes: its length needs more than one byte of seven bits.
            user_intent: Some(format!("{}é", "a gift mug for my sister, ".repeat(5))),
            user_intent_redacted: Some(false),
        };
        let (tracker, sink) = crate::testing::MemorySink::new();
        let origin = Origin {
            model: Some(Arc::from("gpt-5")),
            invocation: Some(Arc::new(invocation.clone())),
            ..Default::default()
        };
        let call = TrackedCall::begin(
            Some(&tracker),
            "search".into(),
            true,
            Arguments::Owned(serde_json::json!({"q": "mug"})),
            None,
            &origin,
        );
        assert!(call.has_flat_arguments());
        assert_eq!(call.recorded_arguments(), serde_json::json!({"q": "mug"}));
        let queued = call.queued(Vec::new, 1, Duration::ZERO, |_| Outcome::Failed(CallOutcome::error("x")));
        // The flusher checks a record's buffer once, as a whole (`flat_text`).
        assert!(std::str::from_utf8(&queued.bytes).is_ok());
        assert_eq!(queued.model(), Some("gpt-5"));
        assert_eq!(queued.invocation().map(super::super::queued::InvocationRef::to_owned), Some(invocation.clone()));
        // Through `before_send`'s record and back.
        let (record, _, _) = queued.into_record();
        assert_eq!(record.invocation.as_deref(), Some(&invocation));
        assert_eq!(record.arguments, serde_json::json!({"q": "mug"}));
        drop(sink);
    }
}
