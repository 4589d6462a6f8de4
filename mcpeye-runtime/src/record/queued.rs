//! The record that crosses from the calling thread to the flusher ([`Queued`]), not yet
//! capped, redacted or serialised: its values and intent flattened into one buffer from the
//! [`BufferPool`] when they are small enough, moved otherwise (made by [`TrackedCall`](super::TrackedCall)
//! alone); and the parts of its event as the encoder reads them.

use crate::json::flat::flatten;
use crate::json::flat::{to_value, Flat};
use crate::json::node::Str;
use crate::model::record::{CallOutcome, CallRecord, ClientInfo, IntentSource};
use crate::redact::drop_flat;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

/// Largest value (arguments or result) flattened on the calling thread, in bytes of its flat
/// form; a larger one crosses as the `Value` it is (copying it would lengthen the call).
pub(super) const FLAT_VALUE_BUDGET: usize = 4096;

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
    pub(super) duration_secs: u64,
    pub(super) duration_nanos: u32,
    pub user_id: Option<String>,
    pub user_email: Option<String>,
    /// The flattened values and texts the fields below point into.
    pub(super) bytes: Vec<u8>,
    /// `None`: the arguments were not an object (sent as `{}`).
    pub(super) arguments: Option<Field>,
    pub(super) outcome: Outcome,
    pub(super) intent: Option<Text>,
    /// The intent's source (meaningless without an intent).
    pub(super) intent_source: IntentSource,
    /// The model that made the call is the first `model_len` bytes of `bytes` (see
    /// [`put_prefix`]): a field of its own would make the record longer than 256 bytes.
    pub(super) model_len: u8,
    /// What `aiInvocation` said beyond the intent, for the event log, is the `invocation_len`
    /// bytes after the model (see [`put_invocation`]).
    pub(super) invocation_len: u16,
}

/// A value of a queued record.
#[derive(Debug)]
pub(super) enum Field {
    /// Flattened, from this offset of the record's bytes.
    Flat(usize),
    /// Boxed: rare (a value over the budget), and a record is moved several times on its way.
    Value(Box<Value>),
}

/// A text of a queued record.
#[derive(Debug)]
pub(super) enum Text {
    /// Copied, at this range of the record's bytes.
    Flat(usize, usize),
    Moved(String),
}

/// How the call ended: a failure is moved as recorded (its message and reason code).
#[derive(Debug)]
pub(super) enum Outcome {
    Success(Field),
    Failed(CallOutcome),
}

impl Queued {
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
            Field::Flat(start) => flat_text(&bytes[start..]).map_or(Value::Null, |f| to_value(Flat::new(f))),
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
        let intent =
            self.intent.map(|t| (t.str_in(flat_text(&bytes).unwrap_or_default()).text.to_owned(), self.intent_source));
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
        if self.model_len == 0 {
            return None;
        }
        // Checked on the flusher: the bytes were copied from a `str`, cut at a char boundary.
        std::str::from_utf8(self.bytes.get(..usize::from(self.model_len))?).ok()
    }

    /// What `aiInvocation` said beyond the intent (the event log's `turn` and texts), read back
    /// from the record's buffer.
    pub(crate) fn invocation(&self) -> Option<InvocationRef<'_>> {
        let start = usize::from(self.model_len);
        let b = self.bytes.get(start..start + usize::from(self.invocation_len)).filter(|b| !b.is_empty())?;
        InvocationRef::read(b)
    }

    /// The intent's source, when the call has an intent.
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

impl Text {
    /// The text, with the bytes readable after it (the rest of the record's buffer, `flat`).
    fn str_in<'s>(&'s self, flat: &'s str) -> Str<'s> {
        match *self {
            Text::Flat(start, end) => match flat.get(start..end) {
                Some(text) => Str { text, readable: &flat.as_bytes()[start..] },
                None => Str::of(""),
            },
            Text::Moved(ref s) => Str::of(s),
        }
    }
}

/// A record's buffer (or its part from a node's start) as the text it is: every byte in it is a
/// text's or ASCII (see [`crate::json::flat`]), so one check per record stands for one per
/// string; `None` cannot happen.
pub(crate) fn flat_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok();
    debug_assert!(text.is_some(), "a record's buffer is valid UTF-8");
    text
}

/// Copies the call's model, then what its `aiInvocation` said beyond the intent, to the start
/// of an empty record buffer; gives their lengths (0: none, or a buffer that is not empty).
/// Model names are cut to 255 bytes here, and to 128 when read.
pub(super) fn put_prefix(
    model: Option<&str>,
    invocation: Option<&crate::model::meta::AiInvocation>,
    bytes: &mut Vec<u8>,
) -> (u8, u16) {
    let model_len = match model {
        Some(m) if bytes.is_empty() && !m.is_empty() => {
            let m = crate::redact::cut_at_char_boundary(m, u8::MAX as usize);
            bytes.extend_from_slice(m.as_bytes());
            m.len() as u8
        }
        _ => 0,
    };
    let invocation_len = match invocation {
        Some(i) if bytes.len() == usize::from(model_len) => put_invocation(i, bytes),
        _ => 0,
    };
    (model_len, invocation_len)
}

/// Appends `invocation` as a flags byte (bit 0: `userIntent.redacted` given, bit 1: its value)
/// and three strings (turn, reason, user intent), each a length in three bytes of seven bits
/// (ASCII, as every byte of a record's buffer but its texts) and its bytes; gives the length
/// written (0 if it would not fit a `u16`, which the caps on the texts rule out).
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
        let text = crate::redact::cut_at_char_boundary(text, usize::from(u16::MAX));
        let [a, b, c, _] = crate::json::flat::len_bytes(text.len());
        bytes.extend_from_slice(&[a, b, c]);
        bytes.extend_from_slice(text.as_bytes());
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
            let len = crate::json::flat::len_from([*b.first()?, *b.get(1)?, *b.get(2)?, 0]);
            let text = std::str::from_utf8(b.get(3..3 + len)?).ok()?;
            *slot = (!text.is_empty()).then_some(text);
            b = &b[3 + len..];
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
pub(super) fn flat_arguments(arguments: Value, bytes: &mut Vec<u8>) -> Option<Field> {
    match arguments {
        Value::Object(_) => Some(field(arguments, bytes)),
        // Built in code, it may nest without limit: no recursive drop.
        other => {
            drop_flat(other);
            None
        }
    }
}

pub(super) fn field(v: Value, bytes: &mut Vec<u8>) -> Field {
    let start = bytes.len();
    if flatten(&v, bytes, FLAT_VALUE_BUDGET) {
        Field::Flat(start)
    } else {
        Field::Value(Box::new(v))
    }
}

pub(super) fn text(t: String, bytes: &mut Vec<u8>) -> Text {
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
    /// The record as the parts of its event (the encoder's view), read where they are. Its values
    /// are taken: a record is encoded once, and its buffer then goes back to the pool.
    pub(crate) fn parts(&mut self) -> EventParts<'_> {
        let duration_ms = u64::try_from(self.duration().as_millis()).unwrap_or(u64::MAX);
        let Queued {
            tool_name,
            timestamp_ms,
            user_id,
            user_email,
            bytes,
            arguments,
            outcome,
            intent,
            intent_source,
            ..
        } = self;
        // Bytes readable past the record's last value let its last keys and strings be read a
        // block at a time, as the others are (else each event takes a slow path). Within the
        // capacity the buffer has: never a reallocation. The flat form is read by its headers, so
        // the padding is never read as a value; the reads past a key or string ignore what they find.
        let content = bytes.len();
        if bytes.capacity() - content >= crate::json::BLOCK {
            bytes.resize(content + crate::json::BLOCK, b' ');
        }
        // Not valid UTF-8 cannot happen (`flat_text`): its values would be left out.
        let flat = flat_text(bytes).unwrap_or_default();
        let body = |f: Field| match f {
            Field::Flat(start) => {
                flat.get(start..).filter(|f| !f.is_empty()).map_or(Body::Empty, |f| Body::Flat(Flat::new(f)))
            }
            Field::Value(v) => Body::Value(*v),
        };
        let outcome =
            match std::mem::replace(outcome, Outcome::Failed(CallOutcome::Error { message: None, reason: None })) {
                Outcome::Success(f) => Ended::Success(body(f)),
                Outcome::Failed(o) => Ended::Failed(o),
            };
        EventParts {
            tool_name,
            arguments: arguments.take().map_or(Body::Empty, body),
            outcome,
            timestamp_ms: *timestamp_ms,
            duration_ms,
            intent: intent.as_ref().map(|t| (t.str_in(flat), *intent_source)),
            user_id: user_id.as_deref(),
            user_email: user_email.as_deref(),
        }
    }
}
