//! The wire format (docs/wire-format.md#payload, #event): events and payloads serialised with their keys in the
//! contract's order, optional keys omitted, compact, non-ASCII as UTF-8.

use super::flat_result::flatten_result;
use crate::config::Identity;
use crate::json::flat::{flatten, flatten_map, Flat};
use crate::json::node::Str;
use crate::json::{hyphenated_lower, needs_escape, write_escaped, write_number, write_parts, write_str};
use crate::model::event::Event;
use crate::model::record::{is_blank, now_epoch_ms, CallOutcome, CallRecord, ClientInfo, IntentSource};
use crate::model::result::CallToolResult;
use crate::record::InFlight;
use crate::redact::{drop_flat, Redactor};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// Largest value (arguments or result) flattened on the calling thread, in bytes of its flat
/// form; a larger one crosses as the `Value` it is (copying it would lengthen the call).
const FLAT_VALUE_BUDGET: usize = 4096;

/// Longest intent copied on the calling thread; a longer one is moved.
const FLAT_TEXT_BUDGET: usize = 4096;

/// A record as it leaves the calling thread, not yet capped, redacted or serialised: its values
/// and intent [flattened](flat) into one buffer when they are small enough, moved otherwise.
#[derive(Debug)]
pub(crate) struct Queued {
    pub tool_name: Cow<'static, str>,
    /// The client that made the call: the flusher batches by it.
    pub client: Option<Arc<ClientInfo>>,
    /// The MCP session of the call: sampling keeps or drops it whole.
    pub session_id: Option<Arc<str>>,
    pub timestamp_ms: u64,
    /// The call's duration as its seconds and nanoseconds (a `Duration`'s padding, and the
    /// intent's source apart from its text, would make the record 8 bytes longer than the 256
    /// that are moved without memcpy's long path; it is moved 4 times on each thread).
    duration_secs: u64,
    duration_nanos: u32,
    pub user_id: Option<String>,
    pub user_email: Option<String>,
    /// The flattened values and texts the fields below point into.
    bytes: Vec<u8>,
    /// `None`: the arguments were not an object (sent as `{}`).
    arguments: Option<Field>,
    outcome: Outcome,
    intent: Option<Text>,
    /// The intent's source (meaningless without an intent).
    intent_source: IntentSource,
}

/// A value of a queued record.
#[derive(Debug)]
enum Field {
    /// Flattened, from this offset of the record's bytes.
    Flat(usize),
    /// Boxed: rare (a value over the budget), and a record is moved several times on its way.
    Value(Box<Value>),
}

/// A text of a queued record.
#[derive(Debug)]
enum Text {
    /// Copied, at this range of the record's bytes.
    Flat(usize, usize),
    Moved(String),
}

/// How the call ended: a failure is moved as recorded (its message and reason code).
#[derive(Debug)]
enum Outcome {
    Success(Field),
    Failed(CallOutcome),
}

impl Queued {
    /// The record made ready to cross to the flusher. Runs on the calling thread: what is
    /// flattened is dropped here, where it was allocated. `bytes` is an empty buffer to flatten
    /// into (from the flusher's [`BufferPool`]).
    pub(crate) fn new(
        record: CallRecord,
        user_id: Option<String>,
        user_email: Option<String>,
        mut bytes: Vec<u8>,
    ) -> Queued {
        let CallRecord { tool_name, arguments, outcome, intent, client, session_id, timestamp_ms, duration } = record;
        let arguments = flat_arguments(arguments, &mut bytes);
        let start = FlatStart::of(tool_name, client, session_id, (user_id, user_email), bytes, arguments, intent);
        start.ended(outcome, timestamp_ms, duration)
    }

    /// A successful call that ends now, its result flattened straight from the handler's
    /// [`CallToolResult`] of text items: no JSON is built for the record (the dispatcher's path).
    pub(crate) fn of_result(
        call: InFlight,
        result: &CallToolResult,
        duration: Duration,
        user_id: Option<String>,
        user_email: Option<String>,
        mut bytes: Vec<u8>,
    ) -> Queued {
        let InFlight { tool_name, arguments, intent, client, session_id, .. } = call;
        let arguments = flat_arguments(arguments, &mut bytes);
        FlatStart::of(tool_name, client, session_id, (user_id, user_email), bytes, arguments, intent)
            .finish_result(result, duration)
    }

    /// The reason code of a failure (see [`CallOutcome::error_type`]).
    pub(crate) fn error_type(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Failed(o) => o.error_type(),
            Outcome::Success(_) => None,
        }
    }

    /// The record again, its values rebuilt as JSON (for `before_send`), with its user.
    pub(crate) fn into_record(self) -> (CallRecord, Option<String>, Option<String>) {
        let value = |f: Field, bytes: &[u8]| match f {
            Field::Flat(start) => crate::json::flat::to_value(Flat::new(&bytes[start..])),
            Field::Value(v) => *v,
        };
        let duration = self.duration();
        let Queued { tool_name, client, session_id, timestamp_ms, user_id, user_email, bytes, .. } = self;
        let arguments = match self.arguments {
            Some(f) => value(f, &bytes),
            None => Value::Object(serde_json::Map::new()),
        };
        let outcome = match self.outcome {
            Outcome::Success(f) => CallOutcome::Success { result: value(f, &bytes) },
            Outcome::Failed(o) => o,
        };
        let intent = self.intent.map(|t| (text_of(&bytes, &t).to_owned(), self.intent_source));
        let record = CallRecord { tool_name, arguments, outcome, intent, client, session_id, timestamp_ms, duration };
        (record, user_id, user_email)
    }

    /// Asks the CPU to start loading the first cache lines of the record's buffer (a hint: on
    /// other targets, nothing).
    #[inline]
    pub(crate) fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            /// Lines asked for: a typical record (a few hundred bytes) whole.
            const LINES: usize = 8;
            for line in 0..self.bytes.len().div_ceil(64).min(LINES) {
                // SAFETY: a prefetch reads nothing and cannot fault; `line * 64` is below the
                // buffer's length, so the address is within it.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(self.bytes.as_ptr().add(line * 64).cast()) }
            }
        }
    }

    /// How long the call took.
    pub(crate) fn duration(&self) -> Duration {
        Duration::new(self.duration_secs, self.duration_nanos)
    }

    /// The record's buffer, emptied, for the next record once this one is encoded.
    pub(crate) fn take_buffer(&mut self) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        bytes
    }
}

/// [`text_of`] with the bytes readable after it (the rest of the record's buffer).
fn str_of<'s>(bytes: &'s [u8], t: &'s Text) -> Str<'s> {
    match t {
        Text::Flat(start, _) => Str { text: text_of(bytes, t), readable: &bytes[*start..] },
        Text::Moved(s) => Str::of(s),
    }
}

fn text_of<'s>(bytes: &'s [u8], t: &'s Text) -> &'s str {
    match t {
        Text::Flat(start, end) => {
            let b = &bytes[*start..*end];
            debug_assert!(std::str::from_utf8(b).is_ok());
            // SAFETY: a `Text::Flat` range is only made by `text`, over the bytes of a `String` it
            // has just appended; the record's bytes are private to `Queued`/`FlatStart`, only
            // appended to (or cut back to a point after the range) later. Validating again cost
            // ~150 instructions per event on the flusher.
            unsafe { std::str::from_utf8_unchecked(b) }
        }
        Text::Moved(s) => s,
    }
}

/// A call whose arguments were flattened when it started, because the tool then takes them
/// (rmcp's instrumented routes: the arguments are rmcp's, and cloning them for the record cost
/// more than the call itself; a manifest's handler deserialises its parameters from them,
/// moving their strings instead of copying them).
#[derive(Debug)]
pub(crate) struct FlatStart {
    tool_name: Cow<'static, str>,
    client: Option<Arc<ClientInfo>>,
    session_id: Option<Arc<str>>,
    user_id: Option<String>,
    user_email: Option<String>,
    bytes: Vec<u8>,
    /// `None`: the arguments were not an object (sent as `{}`).
    arguments: Option<Field>,
    intent: Option<(Text, IntentSource)>,
}

impl FlatStart {
    /// The one place a record's parts are gathered before its outcome: `arguments` already in
    /// `bytes`, the intent copied after them.
    fn of(
        tool_name: Cow<'static, str>,
        client: Option<Arc<ClientInfo>>,
        session_id: Option<Arc<str>>,
        (user_id, user_email): (Option<String>, Option<String>),
        mut bytes: Vec<u8>,
        arguments: Option<Field>,
        intent: Option<(String, IntentSource)>,
    ) -> FlatStart {
        let intent = intent.map(|(t, source)| (text(t, &mut bytes), source));
        FlatStart { tool_name, client, session_id, user_id, user_email, bytes, arguments, intent }
    }

    /// The same for a call still in flight: its intent is taken, the rest copied.
    fn of_call(call: &mut InFlight, user: (Option<String>, Option<String>), bytes: Vec<u8>, arguments: Field) -> Self {
        let (tool_name, client, session_id) = (call.tool_name.clone(), call.client.clone(), call.session_id.clone());
        FlatStart::of(tool_name, client, session_id, user, bytes, Some(arguments), call.intent.take())
    }

    /// The record of a call whose tool takes its arguments (rmcp's routes): `arguments` (the
    /// call's object; `None`, as MCP allows, is `{}`) flattened now, and the call's parts moved
    /// in (the call keeps its start and its span).
    #[cfg(feature = "rmcp")]
    pub(crate) fn taken(
        call: &mut InFlight,
        arguments: Option<&serde_json::Map<String, Value>>,
        user: (Option<String>, Option<String>),
        mut bytes: Vec<u8>,
    ) -> FlatStart {
        let empty = serde_json::Map::new();
        let map = arguments.unwrap_or(&empty);
        let start = bytes.len();
        let arguments = if flatten_map(map, &mut bytes, FLAT_VALUE_BUDGET) {
            Field::Flat(start)
        } else {
            Field::Value(Box::new(Value::Object(map.clone())))
        };
        let (tool_name, client, session_id) =
            (std::mem::take(&mut call.tool_name), call.client.take(), call.session_id.take());
        FlatStart::of(tool_name, client, session_id, user, bytes, Some(arguments), call.intent.take())
    }

    /// Like [`taken`](Self::taken) for a call whose arguments fit the budget; `Err` gives `bytes`
    /// back when they do not (the call then keeps its arguments for the record).
    pub(crate) fn flattened(
        call: &mut InFlight,
        arguments: &serde_json::Map<String, Value>,
        mut bytes: Vec<u8>,
    ) -> Result<FlatStart, Vec<u8>> {
        let start = bytes.len();
        if !flatten_map(arguments, &mut bytes, FLAT_VALUE_BUDGET) {
            return Err(bytes);
        }
        Ok(FlatStart::of_call(call, (None, None), bytes, Field::Flat(start)))
    }

    /// The arguments as they were when the call started, rebuilt from their flat copy (to
    /// describe arguments the handler could not read, after it took them).
    pub(crate) fn arguments(&self) -> Value {
        match &self.arguments {
            Some(Field::Flat(start)) => crate::json::flat::to_value(Flat::new(&self.bytes[*start..])),
            Some(Field::Value(v)) => (**v).clone(),
            None => Value::Object(serde_json::Map::new()),
        }
    }

    /// The queued record of a call that succeeded with `result`, a manifest handler's result of
    /// text items: flattened straight from it, like [`Queued::of_result`].
    pub(crate) fn finish_result(mut self, result: &CallToolResult, duration: Duration) -> Queued {
        let start = self.bytes.len();
        let field = if flatten_result(result, &mut self.bytes, FLAT_VALUE_BUDGET) {
            Field::Flat(start)
        } else {
            Field::Value(Box::new(result.to_json()))
        };
        self.queued(Outcome::Success(field), now_epoch_ms(), duration)
    }

    /// The queued record of a call that succeeded with `result`: flattened straight from it by
    /// `flatten` (which appends its node within a budget, or gives up leaving the buffer as it
    /// was), `to_json` only if that gives up.
    #[cfg(feature = "rmcp")]
    pub(crate) fn finish_serialized<T: ?Sized>(
        mut self,
        result: &T,
        flatten: impl FnOnce(&T, &mut Vec<u8>, usize) -> bool,
        to_json: impl FnOnce(&T) -> Value,
        duration: Duration,
    ) -> Queued {
        let start = self.bytes.len();
        let field = if flatten(result, &mut self.bytes, FLAT_VALUE_BUDGET) {
            Field::Flat(start)
        } else {
            Field::Value(Box::new(to_json(result)))
        };
        self.queued(Outcome::Success(field), now_epoch_ms(), duration)
    }

    /// The queued record of the call, ended now after `duration`.
    pub(crate) fn finish(self, outcome: CallOutcome, duration: Duration) -> Queued {
        self.ended(outcome, now_epoch_ms(), duration)
    }

    /// The queued record with `outcome` (a success's result flattened into the bytes).
    fn ended(mut self, outcome: CallOutcome, timestamp_ms: u64, duration: Duration) -> Queued {
        let outcome = match outcome {
            CallOutcome::Success { result } => Outcome::Success(field(result, &mut self.bytes)),
            failed => Outcome::Failed(failed),
        };
        self.queued(outcome, timestamp_ms, duration)
    }

    /// The one place a [`Queued`] is made.
    fn queued(self, outcome: Outcome, timestamp_ms: u64, duration: Duration) -> Queued {
        let FlatStart { tool_name, client, session_id, user_id, user_email, bytes, arguments, intent } = self;
        let (intent, intent_source) = match intent {
            Some((text, source)) => (Some(text), source),
            None => (None, IntentSource::Mcpeye),
        };
        Queued {
            tool_name,
            client,
            session_id,
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
        }
    }
}

/// `None` when the arguments are not an object (they are sent as `{}`).
fn flat_arguments(arguments: Value, bytes: &mut Vec<u8>) -> Option<Field> {
    match arguments {
        Value::Object(_) => Some(field(arguments, bytes)),
        // Built in code, it may nest without limit: no recursive drop.
        other => {
            drop_flat(other);
            None
        }
    }
}

fn field(v: Value, bytes: &mut Vec<u8>) -> Field {
    let start = bytes.len();
    if flatten(&v, bytes, FLAT_VALUE_BUDGET) {
        Field::Flat(start)
    } else {
        Field::Value(Box::new(v))
    }
}

fn text(t: String, bytes: &mut Vec<u8>) -> Text {
    if t.len() > FLAT_TEXT_BUDGET {
        return Text::Moved(t);
    }
    let start = bytes.len();
    bytes.extend_from_slice(t.as_bytes());
    Text::Flat(start, bytes.len())
}

/// Buffers of encoded records, handed back by the flusher to the calling threads so that a
/// record's buffer is reused rather than allocated on one thread and freed on the other.
#[derive(Clone)]
pub(crate) struct BufferPool {
    tx: crossbeam_channel::Sender<Vec<u8>>,
    rx: crossbeam_channel::Receiver<Vec<u8>>,
}

/// Buffers kept for reuse: more than the records a burst queues before the flusher is nudged
/// (2 000, `tracker::NUDGE_MAX`), so that at a steady rate every record's buffer comes back;
/// with fewer, the surplus was freed on the flusher into the calling thread's arena and
/// allocated there again (1 KiB, glibc's slow path). At most 2.5 MiB stays allocated.
const POOL_BUFFERS: usize = 2560;
/// A buffer that grew past this is freed rather than kept.
const POOL_MAX_CAPACITY: usize = 16 * 1024;
/// Capacity of a new buffer: a record of a few hundred bytes fits without growing it.
const NEW_BUFFER_CAPACITY: usize = 1024;

impl BufferPool {
    pub(crate) fn new() -> Self {
        let (tx, rx) = crossbeam_channel::bounded(POOL_BUFFERS);
        BufferPool { tx, rx }
    }

    /// An empty buffer: a recycled one, or a new one.
    pub(crate) fn take(&self) -> Vec<u8> {
        self.rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(NEW_BUFFER_CAPACITY))
    }

    /// Keeps `buffer` (emptied) for a later record, unless the pool is full or it grew large.
    pub(crate) fn give(&self, buffer: Vec<u8>) {
        if buffer.capacity() <= POOL_MAX_CAPACITY {
            let _ = self.tx.try_send(buffer);
        }
    }
}

/// Why an event cannot be sent (docs/wire-format.md#payload).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    EmptyToolName,
}

/// Caps, redacts and serialises a record as one compact event object, appended to `out`.
///
/// Written by hand rather than through a `Serialize` struct: the values are measured, redacted
/// and written in one walk ([`Redactor::write_value`]), and strings without escapes are copied
/// whole. Keys follow the contract's order; optional keys are omitted.
///
/// The call id is drawn here, on the flusher, rather than on the calling thread: it only has to
/// be unique, and an event is encoded once (a retry resends the same bytes).
pub(crate) fn encode_event(
    queued: &mut Queued,
    call_id: uuid::Uuid,
    redactor: &Redactor,
    out: &mut Vec<u8>,
) -> Result<(), Invalid> {
    let mut bytes = std::mem::take(&mut queued.bytes);
    // Bytes readable past the record's last value let its last keys and strings be read a block
    // at a time, as the others are (else a slow path, ~100 instructions per event). Within the
    // capacity the buffer has: never a reallocation. The flat form is read by its headers, so the
    // padding is never read as a value; the reads past a key or string ignore what they find.
    let content = bytes.len();
    if bytes.capacity() - content >= crate::json::BLOCK {
        bytes.resize(content + crate::json::BLOCK, b' ');
    }
    let body = |f: Field| match f {
        Field::Flat(start) => Body::Flat(Flat::new(&bytes[start..])),
        Field::Value(v) => Body::Value(*v),
    };
    let outcome = match std::mem::replace(
        &mut queued.outcome,
        Outcome::Failed(CallOutcome::Error { message: None, reason: None }),
    ) {
        Outcome::Success(f) => Ended::Success(body(f)),
        Outcome::Failed(o) => Ended::Failed(o),
    };
    let intent = queued.intent.take();
    let parts = Parts {
        tool_name: &queued.tool_name,
        arguments: queued.arguments.take().map_or(Body::Empty, body),
        outcome,
        timestamp_ms: queued.timestamp_ms,
        duration_ms: u64::try_from(queued.duration().as_millis()).unwrap_or(u64::MAX),
        intent: intent.as_ref().map(|t| (str_of(&bytes, t), queued.intent_source)),
        user_id: queued.user_id.as_deref(),
        user_email: queued.user_email.as_deref(),
    };
    let encoded = encode(parts, call_id, redactor, out);
    bytes.truncate(content);
    queued.bytes = bytes;
    encoded
}

/// Serialises an event that [`Config::before_send`](crate::Config::before_send) returned: it
/// is already redacted, so only the caps are applied (again). The same bytes as
/// [`encode_event`] for an event returned unchanged.
pub(crate) fn encode_edited(event: Event, call_id: uuid::Uuid, out: &mut Vec<u8>) -> Result<(), Invalid> {
    static CAPS_ONLY: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
    let caps = CAPS_ONLY.get_or_init(|| Redactor::new(false, &[]));
    let outcome = match event.outcome {
        CallOutcome::Success { result } => Ended::Success(Body::Value(result)),
        failed => Ended::Failed(failed),
    };
    let parts = Parts {
        tool_name: &event.tool_name,
        arguments: Body::Value(event.arguments),
        outcome,
        timestamp_ms: event.timestamp_ms,
        duration_ms: event.duration_ms,
        intent: event.intent.as_ref().map(|(t, source)| (Str::of(t), *source)),
        user_id: event.user_id.as_deref(),
        user_email: event.user_email.as_deref(),
    };
    encode(parts, call_id, caps, out)
}

/// A value of an event: flattened, a JSON value, or none (arguments that were not an object).
enum Body<'a> {
    Flat(Flat<'a>),
    Value(Value),
    Empty,
}

enum Ended<'a> {
    Success(Body<'a>),
    Failed(CallOutcome),
}

/// What one event on the wire is made of.
struct Parts<'a> {
    tool_name: &'a str,
    arguments: Body<'a>,
    outcome: Ended<'a>,
    timestamp_ms: u64,
    duration_ms: u64,
    intent: Option<(Str<'a>, IntentSource)>,
    user_id: Option<&'a str>,
    user_email: Option<&'a str>,
}

fn write_body(body: Body<'_>, object_only: bool, redactor: &Redactor, out: &mut Vec<u8>) {
    match body {
        Body::Flat(f) => redactor.write_flat(f, out),
        Body::Value(v @ Value::Object(_)) => redactor.write_value(v, out),
        Body::Value(v) if !object_only => redactor.write_value(v, out),
        Body::Value(_) | Body::Empty => out.extend_from_slice(b"{}"),
    }
}

fn encode(parts: Parts<'_>, call_id: uuid::Uuid, redactor: &Redactor, out: &mut Vec<u8>) -> Result<(), Invalid> {
    let Parts { tool_name, arguments, outcome, timestamp_ms, duration_ms, intent, user_id, user_email } = parts;
    // Settled by its first byte unless that is whitespace or not ASCII (`is_blank`).
    if is_blank(tool_name) {
        return Err(Invalid::EmptyToolName);
    }
    // Hex digits and hyphens: nothing to escape.
    let id = &hyphenated_lower(&call_id);
    if needs_escape(tool_name) {
        write_parts(out, [b"{\"callId\":\"", id, b"\",\"toolName\":"]);
        write_escaped(out, tool_name);
        out.extend_from_slice(b",\"arguments\":");
    } else {
        write_parts(out, [b"{\"callId\":\"", id, b"\",\"toolName\":\"", tool_name.as_bytes(), b"\",\"arguments\":"]);
    }
    write_body(arguments, true, redactor, out);
    let is_error = matches!(&outcome, Ended::Failed(o) if o.is_error());
    out.extend_from_slice(if is_error {
        b",\"isError\":true,\"timestamp\":"
    } else {
        b",\"isError\":false,\"timestamp\":"
    });
    write_number(out, timestamp_ms);
    out.extend_from_slice(b",\"durationMs\":");
    write_number(out, duration_ms);
    // `intentSource` only travels with an intent; an error's reason never travels.
    match outcome {
        Ended::Success(result) => {
            out.extend_from_slice(b",\"result\":");
            write_body(result, false, redactor, out);
        }
        Ended::Failed(CallOutcome::Success { .. }) | Ended::Failed(CallOutcome::Error { message: None, .. }) => {}
        Ended::Failed(CallOutcome::Error { message: Some(message), .. }) => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
        // A cancelled or timed-out call is an error event whose message says so
        // (docs/wire-format.md#errors).
        Ended::Failed(CallOutcome::Cancelled { message } | CallOutcome::TimedOut { message, .. }) => {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, &redactor.text(message));
        }
    }
    if let Some((text, source)) = intent {
        out.extend_from_slice(b",\"intent\":");
        redactor.write_text(text, out);
        // A fixed word: nothing to escape.
        write_parts(out, [b",\"intentSource\":\"", source.as_str().as_bytes(), b"\""]);
    }
    if let Some(user_id) = user_id {
        out.extend_from_slice(b",\"userId\":");
        write_str(out, user_id);
    }
    if let Some(user_email) = user_email {
        out.extend_from_slice(b",\"userEmail\":");
        write_str(out, user_email);
    }
    out.push(b'}');
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireIdentity<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<&'a str>,
}

/// `{"projectId":…,"identity":{…},"events":[` — the part of a payload before its events. The
/// events' own `client` (the label of their [`ClientInfo`]) replaces the configured one.
pub(crate) fn payload_head(project_id: &str, identity: &Identity, client: Option<&ClientInfo>) -> Vec<u8> {
    let mut head = b"{\"projectId\":".to_vec();
    // Serialising a &str or this struct into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut head, project_id);
    head.extend_from_slice(b",\"identity\":");
    let wire = WireIdentity {
        user_id: identity.user_id.as_deref(),
        user_email: identity.user_email.as_deref(),
        client: client.and_then(ClientInfo::label).or(identity.client.as_deref()),
        server_version: identity.server_version.as_deref(),
    };
    let _ = serde_json::to_writer(&mut head, &wire);
    head.extend_from_slice(b",\"events\":[");
    head
}

/// Bytes that close a payload after its events.
pub(crate) const PAYLOAD_TAIL: &[u8] = b"]}";

/// A payload as its parts (head, events, commas, tail), read in order rather than joined first:
/// the transport copies it once, into its send buffer, instead of twice plus a payload-sized
/// allocation.
pub(crate) struct Payload<'a> {
    parts: Vec<&'a [u8]>,
    len: usize,
    /// Read position: the part, and the offset in it.
    next: usize,
    offset: usize,
}

impl<'a> Payload<'a> {
    pub(crate) fn new(head: &'a [u8], events: impl ExactSizeIterator<Item = &'a [u8]>) -> Self {
        let mut parts = Vec::with_capacity(2 * events.len() + 1);
        parts.push(head);
        for (i, e) in events.enumerate() {
            if i > 0 {
                parts.push(&b","[..]);
            }
            parts.push(e);
        }
        parts.push(PAYLOAD_TAIL);
        let len = parts.iter().map(|p| p.len()).sum();
        Payload { parts, len, next: 0, offset: 0 }
    }

    /// The whole payload's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole payload, joined.
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.len);
        for p in &self.parts {
            body.extend_from_slice(p);
        }
        body
    }
}

impl std::io::Read for Payload<'_> {
    /// Fills `buf` as far as the payload goes: the transport writes to the socket once per fill.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while let Some(part) = self.parts.get(self.next) {
            let rest = &part[self.offset..];
            let k = rest.len().min(buf.len() - n);
            if k == 1 {
                // Mostly a comma: not worth a call to memcpy.
                buf[n] = rest[0];
            } else {
                buf[n..n + k].copy_from_slice(&rest[..k]);
            }
            n += k;
            if k < rest.len() {
                self.offset += k;
                break;
            }
            self.next += 1;
            self.offset = 0;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::markers;
    use crate::contract::MAX_VALUE_DEPTH;
    use serde_json::{json, Map};
    use std::time::Duration;

    fn record() -> CallRecord {
        let mut r = CallRecord::new(
            "search",
            json!({"q": "café"}),
            CallOutcome::Success { result: json!({"content": [{"type": "text", "text": "ok"}]}) },
        );
        r.intent = Some(("Planning a trip.".into(), IntentSource::Mcpeye));
        r.timestamp_ms = 1_796_032_847_292;
        r.duration = Duration::from_micros(2_900);
        r
    }

    fn encode(record: CallRecord) -> Result<String, Invalid> {
        let call_id = uuid::Uuid::from_u128(0xABCD_EF00_0000_4000_8000_0000_0000_0001);
        let mut p = Queued::new(record, None, Some("c@x.io".into()), Vec::new());
        let mut out = Vec::new();
        encode_event(&mut p, call_id, &Redactor::new(false, &[]), &mut out).map(|()| String::from_utf8(out).unwrap())
    }

    /// The padding read past a record's last value changes nothing: each record encodes the same
    /// with its buffer cut to its length (no padding) and with room to spare (padded).
    #[test]
    fn records_encode_the_same_padded_or_not() {
        let ends = [
            json!({"q": "x", "password": "hunter2"}),
            json!({"note": "mail a@b.co"}),
            json!({"card": "4111 1111 1111 1111"}),
            json!({"k": "line\nbreak \"quoted\""}),
            json!({"clé": "café", "TOKEN": 1}),
            json!({"a_key_longer_than_one_block_of_32_bytes": "v", "sk": "sk-abcdefghijklmnopqrstu"}),
            json!({"x": [1, 2.5, null, true, {"apiKey": ["s"]}], "bearer": "Bearer abcdefghijklmnop"}),
            json!({"s": "eyJhbGciOiJIUzI1NiJ9.e30.x", "g": "ghp_abcdefghijklmnop", "id": "AKIAABCDEFGHIJKLMNOP"}),
        ];
        let call_id = uuid::Uuid::from_u128(7);
        for redact in [false, true] {
            let redactor = Redactor::new(redact, &["note".to_owned()]);
            for end in &ends {
                let encoded = |spare: usize| {
                    let mut r = record();
                    r.arguments = end.clone();
                    r.outcome = CallOutcome::Success { result: end.clone() };
                    r.intent = None;
                    let mut q = Queued::new(r, None, None, Vec::new());
                    q.bytes.shrink_to_fit();
                    q.bytes.reserve_exact(spare);
                    let mut out = Vec::new();
                    encode_event(&mut q, call_id, &redactor, &mut out).unwrap();
                    assert!(q.bytes.capacity() - q.bytes.len() >= spare, "the record's bytes are kept as they were");
                    String::from_utf8(out).unwrap()
                };
                let (bare, padded) = (encoded(0), encoded(64));
                assert_eq!(padded, bare, "redact {redact}");
            }
        }
    }

    #[test]
    fn event_keys_follow_the_contract() {
        assert_eq!(
            encode(record()).unwrap(),
            "{\"callId\":\"abcdef00-0000-4000-8000-000000000001\",\"toolName\":\"search\",\
             \"arguments\":{\"q\":\"café\"},\"isError\":false,\"timestamp\":1796032847292,\"durationMs\":2,\
             \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]},\"intent\":\"Planning a trip.\",\
             \"intentSource\":\"mcpeye\",\"userEmail\":\"c@x.io\"}"
        );
    }

    #[test]
    fn errors_carry_no_result_and_non_objects_become_empty() {
        let mut r = record();
        r.outcome = CallOutcome::error("boom");
        r.intent = None;
        r.arguments = json!([1, 2]);
        let s = encode(r).unwrap();
        assert!(s.contains("\"arguments\":{},\"isError\":true"), "{s}");
        assert!(s.contains("\"errorMessage\":\"boom\""));
        assert!(!s.contains("result") && !s.contains("intent") && !s.contains("null"), "{s}");
    }

    #[test]
    fn cancelled_and_timed_out_calls_are_error_events_that_say_so() {
        for (outcome, text) in [
            (CallOutcome::cancelled(Some("user pressed stop")), "the client cancelled the call: user pressed stop"),
            (CallOutcome::cancelled(None), "the client cancelled the call"),
            (CallOutcome::timed_out(Duration::from_millis(250)), "the call timed out after 250 ms and was cancelled"),
        ] {
            let mut r = record();
            r.outcome = outcome;
            let s = encode(r).unwrap();
            assert!(s.contains("\"isError\":true,"), "{s}");
            assert!(s.contains(&format!("\"errorMessage\":\"{text}\"")), "{s}");
            assert!(!s.contains("\"result\""), "{s}");
        }
    }

    #[test]
    fn deep_values_are_capped_even_without_redaction() {
        let deep = (0..10_000).fold(json!("leaf"), |v, _| Value::Array(vec![v]));
        let mut r = record();
        // Not `json!`: it would serialise `deep`, recursively.
        r.arguments = Value::Object(Map::from_iter([("a".to_owned(), deep)]));
        let s = encode(r).unwrap();
        let event: Value = serde_json::from_str(&s).unwrap();
        let mut v = &event["arguments"]["a"];
        for _ in 1..MAX_VALUE_DEPTH {
            v = &v[0];
        }
        assert_eq!(v, &json!(markers::TOO_DEEP));
        let mut r = record();
        r.arguments = json!({"a": [[{"b": [1]}]]});
        assert!(encode(r).unwrap().contains("\"arguments\":{\"a\":[[{\"b\":[1]}]]}"));
    }

    /// A record crosses to the flusher by value (moved about 4 times on each thread): at most 256
    /// bytes are copied without memcpy's loop (callgrind: ~40 instructions less per move).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn records_are_moved_in_256_bytes() {
        assert!(std::mem::size_of::<Queued>() <= 256, "{}", std::mem::size_of::<Queued>());
        assert!(std::mem::size_of::<Result<Queued, crossbeam_channel::TryRecvError>>() <= 256);
    }

    #[test]
    fn empty_tool_name_is_invalid() {
        for blank in ["", " ", "\t\n", "\u{3000}\u{a0}"] {
            let mut r = record();
            r.tool_name = blank.into();
            assert_eq!(encode(r), Err(Invalid::EmptyToolName), "{blank:?}");
        }
        for name in [" search", "\u{3000}search", "é"] {
            let mut r = record();
            r.tool_name = name.into();
            assert!(encode(r).is_ok(), "{name:?}");
        }
    }

    #[test]
    fn payload_wraps_events() {
        let head = payload_head("proj", &Identity::new().client("c/1").server_version(3), None);
        let body = Payload::new(&head, [&b"{}"[..], &b"{\"a\":1}"[..]].into_iter()).to_vec();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"projectId\":\"proj\",\"identity\":{\"client\":\"c/1\",\"serverVersion\":\"3\"},\"events\":[{},{\"a\":1}]}"
        );
        let empty = payload_head("p", &Identity::new(), None);
        assert_eq!(String::from_utf8(empty).unwrap(), "{\"projectId\":\"p\",\"identity\":{},\"events\":[");
    }

    #[test]
    fn payload_reads_as_joined_whatever_the_buffer_size() {
        use std::io::Read;
        let head = payload_head("proj", &Identity::new().client("c/1"), None);
        let events: Vec<Vec<u8>> = (0..40).map(|i| format!("{{\"n\":{}}}", "7".repeat(i * 13)).into_bytes()).collect();
        for n in [0, 1, 2, 40] {
            // The body as it was built before it was streamed: head, events joined by commas, tail.
            let mut joined = head.clone();
            joined.extend_from_slice(&events[..n].join(&b","[..]));
            joined.extend_from_slice(PAYLOAD_TAIL);
            let whole = Payload::new(&head, events[..n].iter().map(Vec::as_slice));
            assert_eq!(whole.len(), joined.len());
            assert_eq!(whole.to_vec(), joined);
            for size in [1, 2, 3, 7, 64, 1000, 1 << 17] {
                let mut payload = Payload::new(&head, events[..n].iter().map(Vec::as_slice));
                let (mut read, mut buf) = (Vec::new(), vec![0; size]);
                loop {
                    let k = payload.read(&mut buf).unwrap();
                    if k == 0 {
                        break;
                    }
                    assert!(k == size || read.len() + k == joined.len(), "a read fills the buffer unless at the end");
                    read.extend_from_slice(&buf[..k]);
                }
                assert_eq!(read, joined, "{n} events, reads of {size}");
            }
        }
    }

    #[test]
    fn the_events_client_replaces_the_configured_one() {
        let identity = Identity::new().user_id(7).client("configured/1");
        let cursor = ClientInfo::new(" cursor ", "");
        let head = String::from_utf8(payload_head("p", &identity, Some(&cursor))).unwrap();
        assert_eq!(head, "{\"projectId\":\"p\",\"identity\":{\"userId\":\"7\",\"client\":\"cursor\"},\"events\":[");
        let blank = ClientInfo::new("  ", "2.0");
        let head = String::from_utf8(payload_head("p", &identity, Some(&blank))).unwrap();
        assert!(head.contains("\"client\":\"configured/1\""), "{head}");
    }
}
