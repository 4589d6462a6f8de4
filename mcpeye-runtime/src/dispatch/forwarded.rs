//! The calls of a server in another process, seen by a proxy (`mcpeye proxy`): the fourth way
//! in. A proxy adapts each raw JSON-RPC message to the steps the other ways in share (the
//! intent taken out, a `TrackedCall` begun and ended, an unknown tool recorded, the reserved
//! tool answered, the other methods and the tool list noted for the event log); it adds none of
//! its own.

use super::{answer_own, call_intent, record_unknown, take_intent};
use crate::flush::event_log::Note;
use crate::json::flat::flatten;
use crate::model::record::{now_epoch_ms, CallOutcome, ClientInfo, Origin};
use crate::model::result::record_content_item;
use crate::model::stats::{Method, Target};
use crate::record::{Arguments, TrackedCall};
use crate::tool::manifest::OwnTool;
use crate::tracker::Tracker;
use serde::de::{Deserialize, Deserializer, IgnoredAny};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The reserved tool's `tools/list` descriptor, which a proxy appends to the server's tools.
pub use crate::tool::manifest::reserved_descriptor;

/// The opt-in feedback tool's `tools/list` descriptor, which a proxy appends after the reserved
/// tool when asked to (`mcpeye proxy --feedback`).
pub use crate::tool::manifest::feedback_descriptor;

/// A `tools/call` forwarded to the server that has the tool: begun as the request goes out,
/// ended when its answer comes back (or never comes), recorded once either way.
pub struct ForwardedCall {
    call: TrackedCall,
    tracker: Tracker,
}

impl ForwardedCall {
    /// Takes `mcpeyeIntent` out of `arguments` (unless the tool declares it: `strips_intent`
    /// false) and begins the call of `name` from `origin`, recorded into `tracker`. The intent is
    /// the one taken out, else the native intent of the request's `_meta`.
    pub fn begin(
        tracker: &Tracker,
        name: &str,
        mut arguments: Option<&mut Map<String, Value>>,
        strips_intent: bool,
        origin: &Origin,
    ) -> ForwardedCall {
        let taken = match (strips_intent, arguments.as_deref_mut()) {
            (true, Some(map)) => take_intent(map),
            _ => None,
        };
        let intent = call_intent(taken, origin);
        let name = Cow::Owned(name.to_owned());
        let call =
            TrackedCall::begin(Some(tracker), name, true, Arguments::Borrowed(arguments.as_deref()), intent, origin);
        ForwardedCall { call, tracker: tracker.clone() }
    }

    /// Ends the call with the server's `CallToolResult` (the JSON-RPC `result`): a tool error
    /// (`isError`) is recorded with its text, a success with the result as the client gets it
    /// (binary items as their size marker, as every result is recorded). An `input_required`
    /// round (MCP 2026-07-28) is not the end of the call: nothing is recorded, the round that
    /// completes it is.
    pub fn end_result(self, result: &Value) {
        let ForwardedCall { call, tracker } = self;
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return;
        }
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let outcome = CallOutcome::Error { message: joined_text(result), reason: None };
            return call.end(Some(&tracker), outcome, None);
        }
        let recorded = recorded_result(result);
        call.end_with(Some(&tracker), &*recorded, flatten, Value::clone);
    }

    /// Ends the call answered with the JSON-RPC error `code`: recorded as a failure whose
    /// reason is the code, as an instrumented route's.
    pub fn end_rpc_error(self, code: i64, message: &str) {
        let outcome = CallOutcome::error_with_reason(message, code.to_string());
        self.call.end(Some(&self.tracker), outcome, Some(code));
    }

    /// Ends the call with `outcome`, when no answer will come: the client cancelled it, or the
    /// server went away (the proxy answers the client itself, with `rpc_code` when that answer
    /// is a JSON-RPC error).
    pub fn end_without_answer(self, outcome: CallOutcome, rpc_code: Option<i64>) {
        self.call.end(Some(&self.tracker), outcome, rpc_code);
    }
}

/// Records a call of a tool the server does not have (the server said so): once, with its
/// intent, as a failure of reason `unknown_tool` with `message`, as every way in records one.
pub fn record_unknown_tool(
    tracker: &Tracker,
    origin: &Origin,
    name: &str,
    arguments: Option<&mut Map<String, Value>>,
    message: String,
    rpc_code: Option<i64>,
) {
    record_unknown(Some(tracker), origin, name, arguments, message, rpc_code);
}

/// Answers the reserved tool `mcpeye_request_capability` locally and records it: the
/// `CallToolResult` JSON a manifest-served server answers.
pub fn answer_reserved_tool(tracker: &Tracker, origin: &Origin, arguments: Value) -> Value {
    answer_own(Some(tracker), origin, OwnTool::Capability, arguments).into_json()
}

/// Answers the opt-in feedback tool `mcpeye_send_feedback` locally and records it, as a
/// manifest that has it turned on does: the acknowledgement, or an invalid-arguments tool error
/// for a call without a valid `category` and `text`.
///
/// ```
/// use mcpeye_runtime::forwarded::answer_feedback_tool;
///
/// let (tracker, sink) = mcpeye::testing::MemorySink::new();
/// let args = serde_json::json!({"category": "praise", "text": "the forecast tool is clear"});
/// let result = answer_feedback_tool(&tracker, &mcpeye::Origin::default(), args);
/// assert_eq!(result["content"][0]["text"], mcpeye::contract::FEEDBACK_TOOL_ACK);
/// tracker.flush(std::time::Duration::from_secs(5));
/// assert_eq!(sink.events()[0]["toolName"], "mcpeye_send_feedback");
/// ```
pub fn answer_feedback_tool(tracker: &Tracker, origin: &Origin, arguments: Value) -> Value {
    answer_own(Some(tracker), origin, OwnTool::Feedback, arguments).into_json()
}

/// A new session id, as each stdio connection of an rmcp server gets (docs/event-log.md).
pub fn new_session_id() -> Arc<str> {
    Arc::from(uuid::Uuid::new_v4().simple().to_string())
}

/// Notes the tool list the client was given (`tools/list`'s `tools`, the reserved tool
/// included) for the event log, whose `tools` lines and the calls' `toolHash` come from it. The
/// log writes a list only when it differs from the last one written.
pub fn note_tool_list(tracker: &Tracker, tools: Value) {
    if tracker.logs() {
        tracker.note(Note::Tools { timestamp_ms: now_epoch_ms(), tools });
    }
}

/// A request of a method other than `tools/call` the runtime records (`resources/read`,
/// `prompts/get`, `completion/complete` and the lists), watched from the request to its answer:
/// counted in `Stats` and noted in the event log like those of `ManifestServer`.
pub struct ForwardedMethod {
    method: Method,
    target: Option<String>,
    session: Option<Arc<str>>,
    model: Option<Arc<str>>,
    client: Option<String>,
    started: Instant,
}

impl ForwardedMethod {
    /// Starts watching a request of `method` with `params` from `origin`; `None` for a method
    /// the runtime does not record.
    pub fn start(tracker: &Tracker, method: &str, params: Option<&Value>, origin: &Origin) -> Option<ForwardedMethod> {
        let method = method_of(method)?;
        let text = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
        let target = match method {
            Method::ResourcesRead => text("uri").map(Target::Resource),
            Method::PromptsGet => text("name").map(Target::Prompt),
            Method::CompletionComplete => {
                let reference = params.and_then(|p| p.get("ref"));
                let field = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
                match field("type") {
                    Some("ref/prompt") => field("name").map(Target::Prompt),
                    Some("ref/resource") => field("uri").map(Target::Resource),
                    _ => None,
                }
            }
            _ => None,
        }
        .unwrap_or(Target::None);
        tracker.count_method(method, target);
        let target = match target {
            Target::Resource(t) | Target::Prompt(t) => Some(t.to_owned()),
            Target::None => None,
        };
        Some(ForwardedMethod {
            method,
            target,
            session: origin.session_id.clone(),
            model: origin.model.clone(),
            client: origin.client.as_deref().and_then(ClientInfo::label).map(str::to_owned),
            started: Instant::now(),
        })
    }

    /// Ends it with its answer (`is_error`: a JSON-RPC error).
    pub fn end(self, tracker: &Tracker, is_error: bool) {
        if is_error {
            tracker.count_method_error(self.method);
        }
        if tracker.logs() {
            let duration = self.started.elapsed();
            let duration_ms = Some(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
            tracker.note(Note::Method {
                method: self.method.as_str(),
                timestamp_ms: now_epoch_ms(),
                target: self.target,
                is_error,
                duration_ms,
                session: self.session,
                model: self.model,
                client: self.client,
            });
        }
    }

    /// How long it has waited for its answer.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// The method of this name that the runtime records.
fn method_of(name: &str) -> Option<Method> {
    Some(match name {
        "tools/list" => Method::ToolsList,
        "resources/list" => Method::ResourcesList,
        "resources/templates/list" => Method::ResourceTemplatesList,
        "resources/read" => Method::ResourcesRead,
        "prompts/list" => Method::PromptsList,
        "prompts/get" => Method::PromptsGet,
        "completion/complete" => Method::CompletionComplete,
        _ => return None,
    })
}

/// The result as recorded: without the `resultType` discriminator (not part of what the tool
/// produced) and with binary payloads as their size marker, as an instrumented route records it;
/// the result itself (not a copy) when that changes nothing.
fn recorded_result(result: &Value) -> Cow<'_, Value> {
    let binary =
        |item: &Value| matches!(item.get("type").and_then(Value::as_str), Some("image" | "audio" | "resource"));
    let changes = match result {
        Value::Object(m) => {
            m.contains_key("resultType")
                || m.get("content").and_then(Value::as_array).is_some_and(|items| items.iter().any(binary))
        }
        _ => false,
    };
    if !changes {
        return Cow::Borrowed(result);
    }
    let mut v = result.clone();
    if let Value::Object(m) = &mut v {
        m.shift_remove("resultType");
        if let Some(Value::Array(items)) = m.get_mut("content") {
            for item in items.iter_mut() {
                *item = record_content_item(std::mem::take(item));
            }
        }
    }
    Cow::Owned(v)
}

/// What a proxy needs of a JSON-RPC message to route it and record an answer, read from its
/// line without building the message (no map of its fields, its `params` skipped). A field
/// counts when present, even `null`, as in the message parsed whole.
#[derive(Debug, Default, PartialEq)]
pub struct Head {
    /// Whether it has a `method` (a request or a notification).
    pub has_method: bool,
    /// Its `id`.
    pub id: Option<Value>,
    /// Its `result` (an answer).
    pub result: Option<Value>,
    /// Its `error` (an answer that is a JSON-RPC error).
    pub error: Option<Value>,
}

/// A field present (even `null`), its value skipped.
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// A field's value, `null` included (an `Option` field would take `null` for absent).
struct NullableMember<T>(Option<T>);

impl<T> Default for NullableMember<T> {
    fn default() -> Self {
        NullableMember(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NullableMember<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|v| NullableMember(Some(v)))
    }
}

#[derive(serde::Deserialize)]
struct RawHead {
    #[serde(default)]
    method: Present,
    #[serde(default)]
    id: NullableMember<Value>,
    #[serde(default)]
    result: NullableMember<Value>,
    #[serde(default)]
    error: NullableMember<Value>,
}

/// The [`Head`] of a line that is surely a JSON object `serde_json` parses (into a `Value`) as
/// such; `None` when that is not sure, and the caller parses the line whole: not an object, a
/// key repeated, or what only a whole parse checks (nesting deeper than its limit, a number out
/// of range, a `\u` escape that may be a lone surrogate, bytes that are not UTF-8).
pub fn head(line: &[u8]) -> Option<Head> {
    if !plainly_parsed(line) {
        return None;
    }
    let raw: RawHead = serde_json::from_slice(line).ok()?;
    Some(Head { has_method: raw.method.0, id: raw.id.0, result: raw.result.0, error: raw.error.0 })
}

/// Whether a line that parses with its values skipped also parses into a `Value` object: it
/// starts with `{`, is UTF-8, nests at most 100 deep (every bracket counted, in strings too), has
/// no exponent after a digit, no run of 300 digits (a float out of range) and no `\u` escape.
fn plainly_parsed(line: &[u8]) -> bool {
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') || std::str::from_utf8(line).is_err() {
        return false;
    }
    let (mut brackets, mut digits, mut previous) = (0usize, 0usize, 0u8);
    for &b in line {
        match b {
            b'{' | b'[' => brackets += 1,
            b'e' | b'E' if previous.is_ascii_digit() || previous == b'.' => return false,
            b'u' if previous == b'\\' => return false,
            _ => {}
        }
        digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
        if brackets > 100 || digits >= 300 {
            return false;
        }
        previous = b;
    }
    true
}

/// The `text` of the result's text items joined with `"\n"`, or `None` when there are none.
fn joined_text(result: &Value) -> Option<String> {
    let items = result.get("content").and_then(Value::as_array)?;
    let texts: Vec<&str> = items
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_forwarded_call_is_recorded_without_its_intent() {
        let (tracker, sink) = crate::testing::MemorySink::new();
        let mut args = json!({"q": "mug", "mcpeyeIntent": "a gift"});
        let call = ForwardedCall::begin(&tracker, "search", args.as_object_mut(), true, &Origin::default());
        assert_eq!(args, json!({"q": "mug"}), "the server never sees the intent");
        call.end_result(&json!({"content": [{"type": "text", "text": "found"}], "resultType": "complete"}));
        let error = ForwardedCall::begin(&tracker, "search", None, true, &Origin::default());
        error.end_result(&json!({"content": [{"type": "text", "text": "no such mug"}], "isError": true}));
        let asks = ForwardedCall::begin(&tracker, "search", None, true, &Origin::default());
        asks.end_result(&json!({"resultType": "input_required", "inputRequests": {}}));
        tracker.flush(Duration::from_secs(5));
        let events = sink.events();
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(
            (events[0]["intent"].clone(), events[0]["arguments"].clone()),
            (json!("a gift"), json!({"q": "mug"}))
        );
        assert_eq!(events[0]["result"], json!({"content": [{"type": "text", "text": "found"}]}));
        assert_eq!(
            (events[1]["isError"].clone(), events[1]["errorMessage"].clone()),
            (json!(true), json!("no such mug"))
        );
    }

    #[test]
    fn the_head_of_a_line_says_what_the_whole_parse_says_or_nothing() {
        let head = |line: &str| super::head(line.as_bytes());
        let got = head(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]},"error":{"code":-1}}"#).unwrap();
        let (result, error) = (Some(json!({"content": []})), Some(json!({"code": -1})));
        assert_eq!(got, Head { has_method: false, id: Some(json!(7)), result, error });
        let got = head(r#" {"method":null,"id":null,"error":null}"#).unwrap();
        let expected = Head { has_method: true, id: Some(Value::Null), result: None, error: Some(Value::Null) };
        assert_eq!(got, expected, "null is present");
        assert_eq!(head(r#"{"jsonrpc":"2.0"}"#).unwrap(), Head::default());
        for unsure in [
            "not json",
            "[1, 2]",
            r#"{"id":1,"id":2}"#,
            r#"{"id":"\u0041"}"#,
            r#"{"id":1e400}"#,
            &format!(r#"{{"id":1,"x":{}{}}}"#, "[".repeat(200), "]".repeat(200)),
        ] {
            assert_eq!(head(unsure), None, "{unsure}");
        }
    }

    #[test]
    fn only_the_recorded_methods_are_watched() {
        let (tracker, _sink) = crate::testing::MemorySink::new();
        let params = json!({"uri": "demo://a"});
        let watched = ForwardedMethod::start(&tracker, "resources/read", Some(&params), &Origin::default()).unwrap();
        assert_eq!(watched.target.as_deref(), Some("demo://a"));
        watched.end(&tracker, false);
        assert!(ForwardedMethod::start(&tracker, "ping", None, &Origin::default()).is_none());
        assert_eq!(tracker.stats().methods["resources/read"].requests, 1);
    }
}
