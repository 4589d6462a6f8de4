//! The record that crosses from the calling thread to the flusher ([`Queued`]), not yet
//! capped, redacted or serialised: its values and intent flattened into one buffer from the
//! [`BufferPool`] when they are small enough, moved otherwise; [`FlatStart`], such a record
//! started before the call's outcome; and the parts of its event as the encoder reads them.

use super::flat_result::flatten_result;
use crate::json::flat::Flat;
use crate::json::flat_ser::{flatten, flatten_map};
use crate::json::node::Str;
use crate::model::record::{now_epoch_ms, CallOutcome, CallRecord, ClientInfo, IntentSource};
use crate::model::result::CallToolResult;
use crate::record::InFlight;
use crate::redact::drop_flat;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

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
    /// The call's duration as its seconds and nanoseconds: a `Duration`'s padding would take the
    /// record past 256 bytes, the size memcpy moves without its long path (a record is moved
    /// several times on each thread).
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
    /// The model that made the call is the first `model_len` bytes of `bytes` (see
    /// [`put_model`]): a field of its own would make the record longer than 256 bytes.
    model_len: u8,
    /// What `aiInvocation` said beyond the intent, for the event log, is the `invocation_len`
    /// bytes after the model (see [`put_invocation`]).
    invocation_len: u16,
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
        let prefix = put_prefix(model.as_deref(), invocation.as_deref(), &mut bytes);
        let arguments = flat_arguments(arguments, &mut bytes);
        let start =
            FlatStart::of(tool_name, client, (session_id, prefix), (user_id, user_email), bytes, arguments, intent);
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
        let InFlight { tool_name, arguments, intent, client, session_id, model, invocation, .. } = call;
        let prefix = put_prefix(model.as_deref(), invocation.as_deref(), &mut bytes);
        let arguments = flat_arguments(arguments, &mut bytes);
        FlatStart::of(tool_name, client, (session_id, prefix), (user_id, user_email), bytes, arguments, intent)
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
        let model = self.model().map(Arc::from);
        let invocation = self.invocation().map(|i| Arc::new(i.to_owned()));
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
        let record = CallRecord {
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
        };
        (record, user_id, user_email)
    }

    /// The model that made the call (`Stats::calls_by_model`, `before_send`'s event).
    pub(crate) fn model(&self) -> Option<&str> {
        let b = self.bytes.get(..usize::from(self.model_len)).filter(|b| !b.is_empty())?;
        // Checked on the flusher: the bytes were copied from a `str`, cut at a char boundary.
        std::str::from_utf8(b).ok()
    }

    /// What `aiInvocation` said beyond the intent (the event log's `turn` and texts), read back
    /// from the record's buffer.
    pub(crate) fn invocation(&self) -> Option<InvocationRef<'_>> {
        let start = usize::from(self.model_len);
        let b = self.bytes.get(start..start + usize::from(self.invocation_len)).filter(|b| !b.is_empty())?;
        InvocationRef::read(b)
    }

    /// The intent's source, when the call has an intent (read before it is encoded: encoding
    /// takes the intent).
    pub(crate) fn intent_source(&self) -> Option<IntentSource> {
        self.intent.as_ref().map(|_| self.intent_source)
    }

    /// How long the call took.
    pub(crate) fn duration(&self) -> Duration {
        Duration::new(self.duration_secs, self.duration_nanos)
    }

    /// The record's buffer, as the encoder's tests shape it.
    #[cfg(test)]
    pub(crate) fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
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
            // Checked on the flusher: the range was cut from a `String`, so it never fails.
            std::str::from_utf8(b).unwrap_or_default()
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
    /// See [`Queued`]'s fields of the same names.
    model_len: u8,
    invocation_len: u16,
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
        (session_id, (model_len, invocation_len)): (Option<Arc<str>>, (u8, u16)),
        (user_id, user_email): (Option<String>, Option<String>),
        mut bytes: Vec<u8>,
        arguments: Option<Field>,
        intent: Option<(String, IntentSource)>,
    ) -> FlatStart {
        let intent = intent.map(|(t, source)| (text(t, &mut bytes), source));
        FlatStart {
            tool_name,
            client,
            session_id,
            model_len,
            invocation_len,
            user_id,
            user_email,
            bytes,
            arguments,
            intent,
        }
    }

    /// The same for a call still in flight: its intent is taken, the rest copied.
    fn of_call(
        call: &mut InFlight,
        user: (Option<String>, Option<String>),
        bytes: Vec<u8>,
        arguments: Field,
        prefix: (u8, u16),
    ) -> Self {
        let (tool_name, client, session_id) = (call.tool_name.clone(), call.client.clone(), call.session_id.clone());
        let session = (session_id, prefix);
        FlatStart::of(tool_name, client, session, user, bytes, Some(arguments), call.intent.take())
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
        let prefix = put_prefix(call.model.as_deref(), call.invocation.as_deref(), &mut bytes);
        let start = bytes.len();
        let arguments = if flatten_map(map, &mut bytes, FLAT_VALUE_BUDGET) {
            Field::Flat(start)
        } else {
            Field::Value(Box::new(Value::Object(map.clone())))
        };
        let (tool_name, client, session_id) =
            (std::mem::take(&mut call.tool_name), call.client.take(), call.session_id.take());
        let session = (session_id, prefix);
        FlatStart::of(tool_name, client, session, user, bytes, Some(arguments), call.intent.take())
    }

    /// Like [`taken`](Self::taken) for a call whose arguments fit the budget; `Err` gives `bytes`
    /// back when they do not (the call then keeps its arguments for the record).
    pub(crate) fn flattened(
        call: &mut InFlight,
        arguments: &serde_json::Map<String, Value>,
        mut bytes: Vec<u8>,
    ) -> Result<FlatStart, Vec<u8>> {
        let prefix = put_prefix(call.model.as_deref(), call.invocation.as_deref(), &mut bytes);
        let start = bytes.len();
        if !flatten_map(arguments, &mut bytes, FLAT_VALUE_BUDGET) {
            bytes.clear();
            return Err(bytes);
        }
        Ok(FlatStart::of_call(call, (None, None), bytes, Field::Flat(start), prefix))
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
        let FlatStart {
            tool_name,
            client,
            session_id,
            model_len,
            invocation_len,
            user_id,
            user_email,
            bytes,
            arguments,
            intent,
        } = self;
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
            model_len,
            invocation_len,
        }
    }
}

/// Copies the call's model to the start of an empty record buffer and gives its length (0:
/// no model, or a buffer that is not empty). Model names are cut to 128 bytes when read.
fn put_model(model: Option<&str>, bytes: &mut Vec<u8>) -> u8 {
    match model {
        Some(m) if bytes.is_empty() && !m.is_empty() => {
            let m = &m[..crate::model::meta::floor_char_boundary(m, u8::MAX as usize)];
            bytes.extend_from_slice(m.as_bytes());
            m.len() as u8
        }
        _ => 0,
    }
}

/// Copies the call's model, then what its `aiInvocation` said beyond the intent, to the start
/// of an empty record buffer; gives their lengths.
fn put_prefix(
    model: Option<&str>,
    invocation: Option<&crate::model::meta::AiInvocation>,
    bytes: &mut Vec<u8>,
) -> (u8, u16) {
    let model_len = put_model(model, bytes);
    let invocation_len = match invocation {
        Some(i) if bytes.len() == usize::from(model_len) => put_invocation(i, bytes),
        _ => 0,
    };
    (model_len, invocation_len)
}

/// Appends `invocation` as a flags byte (bit 0: `userIntent.redacted` given, bit 1: its value)
/// and three strings (turn, reason, user intent), each a little-endian `u16` length and its
/// bytes; gives the length written (0 if it would not fit a `u16`, which the caps on the texts
/// rule out).
fn put_invocation(invocation: &crate::model::meta::AiInvocation, bytes: &mut Vec<u8>) -> u16 {
    let start = bytes.len();
    let flags = match invocation.user_intent_redacted {
        None => 0u8,
        Some(false) => 1,
        Some(true) => 3,
    };
    bytes.push(flags);
    for text in [invocation.turn.as_deref(), invocation.reason.as_deref(), invocation.user_intent.as_deref()] {
        let text = text.unwrap_or("");
        let len = u16::try_from(text.len()).unwrap_or(u16::MAX);
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(&text.as_bytes()[..usize::from(len)]);
    }
    match u16::try_from(bytes.len() - start) {
        Ok(len) => len,
        Err(_) => {
            bytes.truncate(start);
            0
        }
    }
}

/// What `aiInvocation` said beyond the intent, as a queued record holds it ([`Queued::invocation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvocationRef<'a> {
    pub turn: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub user_intent: Option<&'a str>,
    pub user_intent_redacted: Option<bool>,
}

impl<'a> InvocationRef<'a> {
    /// Reads what [`put_invocation`] wrote (checked: it runs on the flusher, rarely).
    fn read(mut b: &'a [u8]) -> Option<Self> {
        let flags = *b.first()?;
        b = &b[1..];
        let mut texts = [None; 3];
        for slot in &mut texts {
            let len = usize::from(u16::from_le_bytes([*b.first()?, *b.get(1)?]));
            let text = std::str::from_utf8(b.get(2..2 + len)?).ok()?;
            *slot = (!text.is_empty()).then_some(text);
            b = &b[2 + len..];
        }
        let [turn, reason, user_intent] = texts;
        let user_intent_redacted = (flags & 1 == 1).then_some(flags & 2 == 2);
        Some(InvocationRef { turn, reason, user_intent, user_intent_redacted })
    }

    pub(crate) fn to_owned(self) -> crate::model::meta::AiInvocation {
        crate::model::meta::AiInvocation {
            turn: self.turn.map(Arc::from),
            reason: self.reason.map(str::to_owned),
            user_intent: self.user_intent.map(str::to_owned),
            user_intent_redacted: self.user_intent_redacted,
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
/// with fewer, the surplus is freed on the flusher and allocated again on the calling thread,
/// through the allocator's slow path. At most 2.5 MiB stays allocated.
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

/// A value of an event: flattened, a JSON value, or none (arguments that were not an object).
pub(crate) enum Body<'a> {
    Flat(Flat<'a>),
    Value(Value),
    Empty,
}

/// How an event's call ended: a success's result, or the failure as recorded.
pub(crate) enum Ended<'a> {
    Success(Body<'a>),
    Failed(CallOutcome),
}

/// What one event on the wire is made of.
pub(crate) struct EventParts<'a> {
    pub(crate) tool_name: &'a str,
    pub(crate) arguments: Body<'a>,
    pub(crate) outcome: Ended<'a>,
    pub(crate) timestamp_ms: u64,
    pub(crate) duration_ms: u64,
    pub(crate) intent: Option<(Str<'a>, IntentSource)>,
    pub(crate) user_id: Option<&'a str>,
    pub(crate) user_email: Option<&'a str>,
}

impl Queued {
    /// Runs `f` with the record as the parts of its event (the encoder's view), reading its
    /// values where they are. The values are taken: a record is encoded once.
    pub(crate) fn with_parts<R>(&mut self, f: impl FnOnce(EventParts<'_>) -> R) -> R {
        let queued = self;
        let mut bytes = std::mem::take(&mut queued.bytes);
        // Bytes readable past the record's last value let its last keys and strings be read a block
        // at a time, as the others are (else each event takes a slow path). Within the
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
        let parts = EventParts {
            tool_name: &queued.tool_name,
            arguments: queued.arguments.take().map_or(Body::Empty, body),
            outcome,
            timestamp_ms: queued.timestamp_ms,
            duration_ms: u64::try_from(queued.duration().as_millis()).unwrap_or(u64::MAX),
            intent: intent.as_ref().map(|t| (str_of(&bytes, t), queued.intent_source)),
            user_id: queued.user_id.as_deref(),
            user_email: queued.user_email.as_deref(),
        };
        let out = f(parts);
        bytes.truncate(content);
        queued.bytes = bytes;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::meta::AiInvocation;

    #[test]
    fn the_invocation_crosses_after_the_model_and_reads_back() {
        let invocation = AiInvocation {
            turn: Some(Arc::from("t-1")),
            reason: None,
            user_intent: Some("a gift mug for my sister".into()),
            user_intent_redacted: Some(false),
        };
        let mut record = CallRecord::new("search", serde_json::json!({"q": "mug"}), CallOutcome::error("x"));
        record.model = Some(Arc::from("gpt-5"));
        record.invocation = Some(Arc::new(invocation.clone()));
        let queued = Queued::new(record, None, None, Vec::new());
        assert_eq!(queued.model(), Some("gpt-5"));
        assert_eq!(queued.invocation().map(InvocationRef::to_owned), Some(invocation.clone()));
        // Through `before_send`'s record and back.
        let (record, _, _) = queued.into_record();
        assert_eq!(record.invocation.as_deref(), Some(&invocation));
        assert_eq!(record.arguments, serde_json::json!({"q": "mug"}));
        let plain =
            Queued::new(CallRecord::new("search", Value::Null, CallOutcome::error("x")), None, None, Vec::new());
        assert_eq!(plain.invocation(), None);
    }
}
