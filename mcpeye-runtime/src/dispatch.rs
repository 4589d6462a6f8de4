//! `tools/call`: strip the intent, deserialise, call, build the result, and hand exactly one
//! [`CallRecord`] per call to the tracker, whatever the outcome.

use crate::capture::{now_epoch_ms, CallRecord, IntentSource};
use crate::contract::{INTENT_PARAM_NAME, RESERVED_TOOL_ACK, RESERVED_TOOL_NAME};
use crate::manifest::{Entry, Manifest};
use crate::result::CallToolResult;
use crate::tool::{ArgsError, Handler, Invocation};
use crate::tracker::Tracker;
use serde_json::{Map, Value};
use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Longest tool name kept in the record of a call to an unknown tool (the name is the agent's).
const MAX_UNKNOWN_NAME_CHARS: usize = 128;

/// Nesting level (root = 0) at which arguments are refused before reaching a handler: 127, the
/// deepest container serde_json's parser accepts from text, so nothing read off the wire is
/// refused. Deeper values can only be built in code, and deserialising them (into a `Value`
/// parameter, say) recurses once per level and can overflow the calling thread's stack.
const MAX_ARGUMENT_DEPTH: usize = 127;

/// A call that a server should answer with a JSON-RPC error rather than a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The manifest has no tool of that name.
    UnknownTool(String),
}

impl CallError {
    /// The JSON-RPC error code: `-32602` (invalid params), as MCP specifies for unknown tools.
    pub fn code(&self) -> i64 {
        -32602
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool(name) => match name.char_indices().nth(MAX_UNKNOWN_NAME_CHARS) {
                // The name is the agent's: an unbounded one is not repeated in full.
                Some((cut, _)) => write!(f, "unknown tool `{}…`", &name[..cut]),
                None => write!(f, "unknown tool `{name}`"),
            },
        }
    }
}

impl std::error::Error for CallError {}

/// Removes `mcpeyeIntent` from a call's arguments and returns it when it counts as an intent
/// (a string that is not blank; kept untrimmed). Blank, `null` and non-string values are
/// removed and ignored (CONTRACT.md §3.1).
pub fn take_intent(arguments: &mut Map<String, Value>) -> Option<(String, IntentSource)> {
    match arguments.shift_remove(INTENT_PARAM_NAME)? {
        Value::String(s) if !s.trim().is_empty() => Some((s, IntentSource::Mcpeye)),
        _ => None,
    }
}

/// The arguments as the handler will see them. MCP lets a client omit `arguments`: `null`
/// counts as `{}`; any other non-object is invalid and recorded as `{}`.
fn split_arguments(arguments: Value) -> (Map<String, Value>, bool) {
    match arguments {
        Value::Object(m) => (m, true),
        Value::Null => (Map::new(), true),
        _ => (Map::new(), false),
    }
}

fn not_an_object() -> ArgsError {
    ArgsError { problems: vec!["the arguments must be a JSON object".to_owned()] }
}

/// Whether a container sits at [`MAX_ARGUMENT_DEPTH`] or deeper. Free of allocation (it runs
/// on every call); its recursion stops at that depth, so its stack use is bounded.
fn nests_too_deep(arguments: &Value) -> bool {
    /// `v` is a container at nesting level `depth`; scalars are never visited.
    fn reaches_limit(v: &Value, depth: usize) -> bool {
        if depth >= MAX_ARGUMENT_DEPTH {
            return true;
        }
        let deeper = |c: &Value| matches!(c, Value::Array(_) | Value::Object(_)) && reaches_limit(c, depth + 1);
        match v {
            Value::Array(a) => a.iter().any(deeper),
            Value::Object(m) => m.values().any(deeper),
            _ => false,
        }
    }
    matches!(arguments, Value::Object(_)) && reaches_limit(arguments, 0)
}

fn too_deep() -> ArgsError {
    ArgsError {
        problems: vec![format!(
            "the arguments are nested too deep (at most {MAX_ARGUMENT_DEPTH} levels of arrays and objects)"
        )],
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    let what = payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    match what {
        Some(msg) => format!("the tool panicked: {msg}"),
        None => "the tool panicked".to_owned(),
    }
}

/// What happened to a call, before it becomes a record.
enum Outcome {
    Done(CallToolResult),
    Invalid(ArgsError),
    Panicked(Box<dyn Any + Send>),
}

/// One call in flight: everything the record needs besides the outcome.
struct Pending<'m> {
    manifest: &'m Manifest,
    tool_name: Cow<'static, str>,
    /// Always an object: the handler borrows it, then it moves into the record.
    arguments: Value,
    intent: Option<(String, IntentSource)>,
    started: Instant,
}

impl<'m> Pending<'m> {
    fn start(manifest: &'m Manifest, tool_name: &'static str, strip: bool, arguments: Value) -> (Self, bool) {
        let started = Instant::now();
        let (mut map, is_object) = split_arguments(arguments);
        let intent = if strip { take_intent(&mut map) } else { None };
        let pending =
            Pending { manifest, tool_name: Cow::Borrowed(tool_name), arguments: Value::Object(map), intent, started };
        (pending, is_object)
    }

    /// Turns the outcome into the client's result, records it, and resumes a panic.
    fn finish(self, outcome: Outcome, duration: Duration) -> Value {
        let tracker = self.manifest.active_tracker();
        let (client_result, record_result, error_message, panic) = match outcome {
            // The client gets a copy and the record the original: one copy of the strings, not two.
            Outcome::Done(r) if !r.is_error => match tracker {
                Some(_) => (r.to_json(), Some(r.into_json()), None, None),
                None => (r.into_json(), None, None, None),
            },
            Outcome::Done(r) => {
                let message = r.joined_text();
                (r.into_json(), None, message, None)
            }
            Outcome::Invalid(e) => {
                let msg = e.to_string();
                (CallToolResult::error_text(msg.clone()).into_json(), None, Some(msg), None)
            }
            Outcome::Panicked(p) => (Value::Null, None, Some(panic_message(&*p)), Some(p)),
        };
        if let Some(tracker) = tracker {
            tracker.record(CallRecord {
                tool_name: self.tool_name,
                arguments: self.arguments,
                is_error: record_result.is_none(),
                result: record_result,
                error_message,
                intent: self.intent,
                timestamp_ms: now_epoch_ms(),
                duration,
            });
        }
        if let Some(p) = panic {
            resume_unwind(p);
        }
        client_result
    }
}

impl Manifest {
    /// Calls a tool and returns the `CallToolResult` JSON (`content`, `structuredContent` when
    /// there is one, `isError` when true). Every call, whatever its outcome, is recorded once.
    ///
    /// An unknown name, invalid arguments, an `Err` from the handler, or an async tool (use
    /// [`call_async`](Self::call_async)) give a tool error (`isError: true`) whose text says
    /// why, never echoing argument values. A panic in the handler is recorded, then resumed.
    pub fn call(&self, name: &str, arguments: Value) -> Value {
        self.try_call(name, arguments).unwrap_or_else(|e| self.unknown_tool(e))
    }

    /// Like [`call`](Self::call), but an unknown tool is an `Err` (answer it with JSON-RPC
    /// error [`CallError::code`]) and is not recorded.
    pub fn try_call(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        let (entry, arguments) = match self.route(name, arguments)? {
            Route::Answered(v) => return Ok(v),
            Route::Tool(entry, arguments) => (entry, arguments),
        };
        let (pending, is_object) = Pending::start(self, entry.def.name, entry.def.intent, arguments);
        let outcome = match entry.def.handler {
            _ if !is_object => Outcome::Invalid(not_an_object()),
            _ if nests_too_deep(&pending.arguments) => Outcome::Invalid(too_deep()),
            Handler::Async(_) => Outcome::Invalid(ArgsError {
                problems: vec![format!(
                    "the tool `{name}` is async: the server must call it with `Manifest::call_async`"
                )],
            }),
            Handler::Sync(run) => {
                let inv = Invocation { states: &self.states, schema: &entry.schema };
                match catch_unwind(AssertUnwindSafe(|| run(&inv, &pending.arguments))) {
                    Ok(Ok(r)) => Outcome::Done(r),
                    Ok(Err(e)) => Outcome::Invalid(e),
                    Err(p) => Outcome::Panicked(p),
                }
            }
        };
        let duration = pending.started.elapsed();
        Ok(pending.finish(outcome, duration))
    }

    /// Calls a tool, sync or async, and returns the `CallToolResult` JSON; see
    /// [`call`](Self::call). The future is `Send`.
    pub async fn call_async(&self, name: &str, arguments: Value) -> Value {
        match self.try_call_async(name, arguments).await {
            Ok(v) => v,
            Err(e) => self.unknown_tool(e),
        }
    }

    /// Like [`call_async`](Self::call_async), but an unknown tool is an `Err` and is not recorded.
    pub async fn try_call_async(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        let (entry, arguments) = match self.route(name, arguments)? {
            Route::Answered(v) => return Ok(v),
            Route::Tool(entry, arguments) => (entry, arguments),
        };
        let run = match entry.def.handler {
            Handler::Sync(_) => return self.try_call(name, arguments),
            Handler::Async(run) => run,
        };
        let (pending, is_object) = Pending::start(self, entry.def.name, entry.def.intent, arguments);
        let outcome = if !is_object {
            Outcome::Invalid(not_an_object())
        } else if nests_too_deep(&pending.arguments) {
            Outcome::Invalid(too_deep())
        } else {
            let inv = Invocation { states: &self.states, schema: &entry.schema };
            // Parsing and state lookup happen here, before the future exists: the future owns
            // its inputs, so nothing borrowed from the arguments is held across an await.
            match catch_unwind(AssertUnwindSafe(|| run(&inv, &pending.arguments))) {
                Ok(Ok(fut)) => match CatchUnwind(fut).await {
                    Ok(r) => Outcome::Done(r),
                    Err(p) => Outcome::Panicked(p),
                },
                Ok(Err(e)) => Outcome::Invalid(e),
                Err(p) => Outcome::Panicked(p),
            }
        };
        let duration = pending.started.elapsed();
        Ok(pending.finish(outcome, duration))
    }

    /// The tracker calls are recorded into: the manifest's own (borrowed: no reference count
    /// touched on the call path), else the process-wide one.
    pub(crate) fn active_tracker(&self) -> Option<Cow<'_, Tracker>> {
        match &self.tracker {
            Some(t) => Some(Cow::Borrowed(t)),
            None => crate::tracker::global().map(Cow::Owned),
        }
    }

    fn route(&self, name: &str, arguments: Value) -> Result<Route<'_>, CallError> {
        if self.reserved && name == RESERVED_TOOL_NAME {
            return Ok(Route::Answered(self.answer_reserved(arguments)));
        }
        match self.lookup(name) {
            Some(entry) => Ok(Route::Tool(entry, arguments)),
            None => Err(CallError::UnknownTool(name.to_owned())),
        }
    }

    fn unknown_tool(&self, err: CallError) -> Value {
        let started = Instant::now();
        let CallError::UnknownTool(name) = &err;
        let msg = format!("{err}; call `tools/list` for the tools this server offers");
        if let Some(tracker) = self.active_tracker() {
            let kept: String = name.chars().take(MAX_UNKNOWN_NAME_CHARS).collect();
            tracker.record(CallRecord {
                tool_name: Cow::Owned(kept),
                arguments: Value::Object(Map::new()),
                is_error: true,
                result: None,
                error_message: Some(msg.clone()),
                intent: None,
                timestamp_ms: now_epoch_ms(),
                duration: started.elapsed(),
            });
        }
        CallToolResult::error_text(msg).into_json()
    }

    /// Answers the reserved tool locally and records it with `durationMs: 0` and no intent
    /// (CONTRACT.md §3.5, §6).
    fn answer_reserved(&self, arguments: Value) -> Value {
        let (mut pending, is_object) = Pending::start(self, RESERVED_TOOL_NAME, true, arguments);
        pending.intent = None;
        let has_capability =
            pending.arguments.get("capability").and_then(Value::as_str).is_some_and(|c| !c.trim().is_empty());
        let outcome = if !is_object {
            Outcome::Invalid(not_an_object())
        } else if !has_capability {
            Outcome::Invalid(ArgsError {
                problems: vec![
                    "`capability`: required, a non-empty string naming the capability the user needs".to_owned()
                ],
            })
        } else {
            Outcome::Done(CallToolResult::text(RESERVED_TOOL_ACK))
        };
        pending.finish(outcome, Duration::ZERO)
    }
}

enum Route<'m> {
    Answered(Value),
    Tool(&'m Entry, Value),
}

/// Catches a panic raised while polling a tool's future (used by the rmcp integration too).
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = Pin::new(&mut self.0);
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(p) => Poll::Ready(Err(p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{parse_args, Annotations, BoxFuture, StateDecl, ToolDef};
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    // What `#[mcpeye::tool]` generates, written by hand so the dispatcher is tested on its own.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct EchoArgs {
        /// Text to echo.
        text: String,
        /// Times to repeat it.
        times: Option<u32>,
    }

    fn echo_handler(inv: &Invocation<'_>, args: &Value) -> Result<CallToolResult, ArgsError> {
        let a: EchoArgs = parse_args(inv, args)?;
        let out: Result<String, String> = match a.text.as_str() {
            "fail" => Err("it failed".to_owned()),
            "panic" => panic!("boom"),
            "soft" => return Ok(CallToolResult::error_text("soft failure")),
            t => Ok(t.repeat(a.times.unwrap_or(1) as usize)),
        };
        Ok(match out {
            Ok(v) => v.into(),
            Err(e) => CallToolResult::error_text(e),
        })
    }

    impl From<String> for CallToolResult {
        fn from(s: String) -> Self {
            CallToolResult::text(s)
        }
    }

    fn async_handler(inv: &Invocation<'_>, args: &Value) -> Result<BoxFuture, ArgsError> {
        let a: EchoArgs = parse_args(inv, args)?;
        let prefix = inv.state::<String>()?;
        Ok(Box::pin(async move {
            if a.text == "panic" {
                panic!("async boom");
            }
            CallToolResult::text(format!("{}{}", *prefix, a.text))
        }))
    }

    static ECHO: ToolDef = ToolDef {
        name: "echo",
        rust_path: "tests::echo",
        file: file!(),
        line: line!(),
        title: None,
        description: "Echo text.",
        annotations: Annotations { read_only: Some(true), ..Annotations::NONE },
        intent: true,
        input_schema: crate::schema::generate::<EchoArgs>,
        states: &[],
        handler: Handler::Sync(echo_handler),
    };

    static STATES: &[StateDecl] =
        &[StateDecl { type_id: std::any::TypeId::of::<String>, type_name: std::any::type_name::<String> }];

    static ASYNC_ECHO: ToolDef = ToolDef {
        name: "async_echo",
        rust_path: "tests::async_echo",
        file: file!(),
        line: line!(),
        title: Some("Async echo"),
        description: "Echo text, later.",
        annotations: Annotations::NONE,
        intent: true,
        input_schema: crate::schema::generate::<EchoArgs>,
        states: STATES,
        handler: Handler::Async(async_handler),
    };

    fn manifest() -> (Manifest, Arc<Mutex<Vec<CallRecord>>>) {
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = records.clone();
        let m = Manifest::builder()
            .tools([&ECHO, &ASYNC_ECHO])
            .state(String::from(">"))
            .tracker(Tracker::from_fn(move |r| sink.lock().unwrap().push(r)))
            .build();
        (m, records)
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn ok_call_strips_and_records_intent() {
        let (m, records) = manifest();
        let out = m.call("echo", json!({"text": "ab", "times": 2, "mcpeyeIntent": " find it "}));
        assert_eq!(out, json!({"content": [{"type": "text", "text": "abab"}]}));
        let r = records.lock().unwrap().pop().unwrap();
        assert_eq!(r.tool_name, "echo");
        assert_eq!(r.arguments, json!({"text": "ab", "times": 2}));
        assert_eq!(r.intent, Some((" find it ".to_owned(), IntentSource::Mcpeye)));
        assert!(!r.is_error);
        assert_eq!(r.result, Some(out));
        assert_eq!(r.error_message, None);
    }

    #[test]
    fn stripping_the_intent_keeps_the_order_of_the_other_arguments() {
        let (m, records) = manifest();
        m.call("echo", json!({"mcpeyeIntent": "why", "text": "a", "times": 1}));
        let r = records.lock().unwrap().pop().unwrap();
        let keys: Vec<&str> = r.arguments.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["text", "times"]);
    }

    #[test]
    fn blank_or_non_string_intent_is_dropped() {
        let (m, records) = manifest();
        for intent in [json!("   "), json!(null), json!(42)] {
            m.call("echo", json!({"text": "a", "mcpeyeIntent": intent}));
            let r = records.lock().unwrap().pop().unwrap();
            assert_eq!(r.intent, None);
            assert!(!r.is_error, "the intent is removed before deserialising");
            assert_eq!(r.arguments, json!({"text": "a"}));
        }
    }

    #[test]
    fn errors_are_recorded_once() {
        let (m, records) = manifest();
        let out = m.call("echo", json!({"text": "fail"}));
        assert_eq!(out, json!({"content": [{"type": "text", "text": "it failed"}], "isError": true}));
        let out = m.call("echo", json!({"text": "soft"}));
        assert_eq!(out["isError"], true);
        let recs = std::mem::take(&mut *records.lock().unwrap());
        assert_eq!(recs.len(), 2);
        assert!(recs.iter().all(|r| r.is_error && r.result.is_none()));
        assert_eq!(recs[0].error_message.as_deref(), Some("it failed"));
        assert_eq!(recs[1].error_message.as_deref(), Some("soft failure"));
    }

    #[test]
    fn invalid_arguments_never_echo_values() {
        let (m, records) = manifest();
        let out = m.call("echo", json!({"text": 5, "password": "hunter2-secret"}));
        assert_eq!(out["isError"], true);
        assert!(!out.to_string().contains("hunter2-secret"));
        let out = m.call("echo", json!(["not", "an", "object"]));
        assert_eq!(out["isError"], true);
        let recs = std::mem::take(&mut *records.lock().unwrap());
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].arguments, json!({}));
        assert!(recs.iter().all(|r| r.is_error && !r.error_message.as_ref().unwrap().contains("hunter2")));
    }

    #[test]
    fn panic_is_recorded_then_resumed() {
        let (m, records) = manifest();
        let caught = catch_unwind(AssertUnwindSafe(|| m.call("echo", json!({"text": "panic"}))));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        let r = records.lock().unwrap().pop().unwrap();
        assert!(r.is_error);
        assert_eq!(r.error_message.as_deref(), Some("the tool panicked: boom"));
    }

    #[test]
    fn reserved_tool_is_answered_locally() {
        let (m, records) = manifest();
        let out = m.call(RESERVED_TOOL_NAME, json!({"capability": "export as CSV", "mcpeyeIntent": "x"}));
        assert_eq!(out, json!({"content": [{"type": "text", "text": RESERVED_TOOL_ACK}]}));
        let r = records.lock().unwrap().pop().unwrap();
        assert_eq!(r.duration, Duration::ZERO);
        assert_eq!(r.intent, None);
        assert_eq!(r.arguments, json!({"capability": "export as CSV"}));
        assert_eq!(r.result, Some(out));
        let out = m.call(RESERVED_TOOL_NAME, json!({"context": "no capability"}));
        assert_eq!(out["isError"], true);
        assert!(records.lock().unwrap().pop().unwrap().is_error);
    }

    #[test]
    fn unknown_tool() {
        let (m, records) = manifest();
        assert_eq!(m.try_call("nope", json!({})), Err(CallError::UnknownTool("nope".into())));
        assert!(records.lock().unwrap().is_empty(), "try_call leaves unknown tools to the server");
        let out = m.call("nope", json!({}));
        assert_eq!(out["isError"], true);
        assert!(out["content"][0]["text"].as_str().unwrap().contains("unknown tool `nope`"));
        assert_eq!(records.lock().unwrap().pop().unwrap().tool_name, "nope");
    }

    #[test]
    fn async_tools() {
        let (m, records) = manifest();
        let out = m.call("async_echo", json!({"text": "x"}));
        assert_eq!(out["isError"], true, "a sync call of an async tool is a clear error");
        assert!(out["content"][0]["text"].as_str().unwrap().contains("call_async"));
        let out = block_on(m.call_async("async_echo", json!({"text": "x", "mcpeyeIntent": "why"})));
        assert_eq!(out, json!({"content": [{"type": "text", "text": ">x"}]}));
        let out = block_on(m.call_async("echo", json!({"text": "y"})));
        assert_eq!(out["content"][0]["text"], "y");
        let caught = catch_unwind(AssertUnwindSafe(|| block_on(m.call_async("async_echo", json!({"text": "panic"})))));
        assert!(caught.is_err());
        let recs = std::mem::take(&mut *records.lock().unwrap());
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[1].intent, Some(("why".to_owned(), IntentSource::Mcpeye)));
        assert_eq!(recs[3].error_message.as_deref(), Some("the tool panicked: async boom"));
    }

    #[test]
    fn missing_state_is_a_build_error() {
        let err = Manifest::builder().tools([&ASYNC_ECHO]).try_build().unwrap_err();
        assert_eq!(err.problems.len(), 1);
        assert_eq!(err.problems[0].rule, "missing-state");
        assert!(err.to_string().contains(".state(value)"));
    }

    #[test]
    fn duplicate_names_are_refused_with_both_locations() {
        static OTHER: ToolDef = ToolDef { rust_path: "tests::other", ..ECHO_FIELDS };
        const ECHO_FIELDS: ToolDef = ToolDef {
            name: "echo",
            rust_path: "tests::echo",
            file: "x.rs",
            line: 1,
            title: None,
            description: "Echo text.",
            annotations: Annotations::NONE,
            intent: true,
            input_schema: crate::schema::generate::<EchoArgs>,
            states: &[],
            handler: Handler::Sync(echo_handler),
        };
        let err = Manifest::builder().tools([&ECHO, &OTHER]).try_build().unwrap_err();
        let dup: Vec<_> = err.problems.iter().filter(|p| p.rule == "duplicate-name").collect();
        assert_eq!(dup.len(), 1);
        let text = err.to_string();
        assert!(text.contains("tests::echo") && text.contains("tests::other"), "{text}");
    }

    #[test]
    fn tools_list_is_sorted_with_the_reserved_tool_last() {
        let (m, _) = manifest();
        let list = m.tools_list();
        let names: Vec<_> = list.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["async_echo", "echo", RESERVED_TOOL_NAME]);
        assert_eq!(list[1]["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(list[0]["title"], "Async echo");
        assert!(list[1]["inputSchema"]["properties"]["mcpeyeIntent"].is_object());
        assert_eq!(serde_json::to_string(&list).unwrap(), serde_json::to_string(&manifest().0.tools_list()).unwrap());
        let off = Manifest::builder().tools([&ECHO]).capture_missing_capabilities(false).build();
        assert_eq!(off.tools_list().as_array().unwrap().len(), 1);
        assert!(off.try_call(RESERVED_TOOL_NAME, json!({"capability": "x"})).is_err());
    }

    #[test]
    fn manifest_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Manifest>();
    }
}
