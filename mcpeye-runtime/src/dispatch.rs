//! `tools/call` of a manifest: route (the reserved tool, unknown tools), strip the intent, begin
//! the [`TrackedCall`], deserialise, run the handler, build the result and end the call, whatever the
//! outcome; and the steps every way in shares: attribution, unknown tools, a panicking future.

use crate::contract::{FEEDBACK_CATEGORIES, FEEDBACK_TOOL_ACK, INTENT_PARAM_NAME, RESERVED_TOOL_ACK};
use crate::model::cancel::{Cancellation, Sleep};
use crate::model::meta::{
    handle_text, take_conversation, take_model, Handle, HandleKey, CONVERSATION_PARAM_NAME, MODEL_PARAM_NAME,
};
use crate::model::record::{is_blank, CallOutcome, IntentSource, Origin};
use crate::model::result::{CallToolResult, Content};
use crate::record::{flatten_result, Arguments, TrackedCall};
use crate::telemetry::CallSpan;
use crate::tool::def::{ArgsError, AsyncHandler, Handler, Invocation, SyncHandler};
use crate::tool::manifest::{Manifest, OwnTool, ToolEntry};
use crate::tracker::active_tracker;
use crate::tracker::Tracker;
use serde_json::{Map, Value};
use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

pub mod forwarded;

/// Longest tool name kept in the record of a call to an unknown tool (the name is the agent's):
/// the longest valid tool name.
const MAX_UNKNOWN_NAME_CHARS: usize = mcpeye_contract::MAX_TOOL_NAME_CHARS;

/// Nesting level (root = 0) at which arguments are refused before reaching a handler: 127, the
/// deepest container serde_json's parser accepts from text, so nothing read off the wire is
/// refused. Deeper values can only be built in code, and deserialising them (into a `Value`
/// parameter, say) recurses once per level and can overflow the calling thread's stack.
const MAX_ARGUMENT_DEPTH: usize = 127;
// Arguments that flattening accepted are never too deep (see `Manifest::flatten_arguments`).
const _: () = assert!(crate::contract::MAX_VALUE_DEPTH <= MAX_ARGUMENT_DEPTH);

/// The reason of a call whose arguments mcpeye refused before the handler ran.
pub(crate) const INVALID_ARGUMENTS: &str = "invalid_arguments";
pub(crate) use crate::model::record::UNKNOWN_TOOL;
/// The reason of a call whose handler panicked.
pub(crate) const PANIC: &str = "panic";
/// The message of the internal error a client served through rmcp gets when the tool panicked
/// (the panic's message may hold argument values, so it is recorded, not sent back).
#[cfg(feature = "rmcp")]
pub(crate) const PANIC_ANSWER: &str = "the tool failed unexpectedly (it panicked)";

/// A call that a server should answer with a JSON-RPC error rather than a tool result.
///
/// ```
/// use mcpeye::{CallError, Manifest};
///
/// let manifest = Manifest::builder().build();
/// let err = manifest.try_call("no_such_tool", serde_json::json!({})).unwrap_err();
/// assert_eq!(err, CallError::UnknownTool("no_such_tool".into()));
/// assert_eq!(err.code(), -32602);
/// assert_eq!(err.to_string(), "unknown tool `no_such_tool`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The manifest has no tool of that name.
    UnknownTool(String),
}

impl CallError {
    /// The JSON-RPC error code: `-32602` (invalid params), as MCP specifies for unknown tools.
    ///
    /// ```
    /// let err = mcpeye::CallError::UnknownTool("no_such_tool".into());
    /// assert_eq!(err.code(), -32602);
    /// ```
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
/// removed and ignored (docs/wire-format.md#intent).
pub(crate) fn take_intent(arguments: &mut Map<String, Value>) -> Option<(String, IntentSource)> {
    match arguments.shift_remove(INTENT_PARAM_NAME)? {
        Value::String(s) if !is_blank(&s) => Some((s, IntentSource::Mcpeye)),
        _ => None,
    }
}

/// The call's intent: `mcpeyeIntent` when the tool has it and the client filled it in, else the
/// native intent of the request's `_meta`. `mcpeyeIntent` wins: the client wrote it for this
/// server's analytics, under the description the server gave, while `userIntent` is the
/// client's generic summary of the turn.
pub(crate) fn call_intent(explicit: Option<(String, IntentSource)>, origin: &Origin) -> Option<(String, IntentSource)> {
    explicit.or_else(|| origin.native_intent.clone().map(|s| (s, IntentSource::Native)))
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

/// What running the handler gave, before it becomes the client's answer and the record.
enum HandlerOutcome {
    Done(CallToolResult),
    Invalid(ArgsError),
    Panicked(Box<dyn Any + Send>),
    /// The client cancelled the call, with this reason.
    Cancelled(Option<String>),
    /// The tool's timeout ran out.
    TimedOut(Duration),
}

impl HandlerOutcome {
    /// A call that ended (well or not) after the client cancelled it is recorded as cancelled:
    /// the client no longer waits for its answer. A panic stays a panic.
    fn unless_cancelled(self, origin: &Origin) -> HandlerOutcome {
        match &self {
            HandlerOutcome::Done(_) | HandlerOutcome::Invalid(_) => match origin.cancelled() {
                Some(reason) => HandlerOutcome::Cancelled(reason),
                None => self,
            },
            _ => self,
        }
    }
}

/// How an async handler's future ended.
enum FutureEnd {
    Done(Result<CallToolResult, Box<dyn Any + Send>>),
    Cancelled,
    TimedOut,
}

/// Runs an async handler's future until it ends, the call is cancelled, or its timeout runs out;
/// in the last two cases the future is dropped (cancelled) before this returns.
async fn drive<F: Future<Output = CallToolResult> + Unpin>(
    fut: F,
    cancel: Option<&Cancellation>,
    timeout: Option<Duration>,
) -> HandlerOutcome {
    let mut fut = CatchUnwind(fut);
    let mut cancelled = cancel.map(Cancellation::cancelled);
    let mut sleep = timeout.map(Sleep::new);
    let end = std::future::poll_fn(|cx| {
        if let Poll::Ready(r) = Pin::new(&mut fut).poll(cx) {
            return Poll::Ready(FutureEnd::Done(r));
        }
        if cancelled.as_mut().is_some_and(|c| Pin::new(c).poll(cx).is_ready()) {
            return Poll::Ready(FutureEnd::Cancelled);
        }
        if sleep.as_mut().is_some_and(|s| Pin::new(s).poll(cx).is_ready()) {
            return Poll::Ready(FutureEnd::TimedOut);
        }
        Poll::Pending
    })
    .await;
    drop(fut);
    match end {
        FutureEnd::Done(Ok(r)) => HandlerOutcome::Done(r),
        FutureEnd::Done(Err(p)) => HandlerOutcome::Panicked(p),
        FutureEnd::Cancelled => HandlerOutcome::Cancelled(cancel.and_then(Cancellation::reason)),
        FutureEnd::TimedOut => {
            let after = timeout.unwrap_or_default();
            // Work the handler spawned with its `Context` sees the call end too.
            if let Some(c) = cancel {
                c.cancel_with_reason(format!("timed out after {} ms", after.as_millis()));
            }
            HandlerOutcome::TimedOut(after)
        }
    }
}

/// A call of a tool the manifest does not have, with its arguments (the intent is in them).
struct UnknownCall {
    error: CallError,
    arguments: Value,
}

/// Where routing sent a call of `try_call_async_result`.
// Built and matched at once in `route`'s inlined caller, never stored: boxing the call would
// cost an allocation per call for nothing.
#[allow(clippy::large_enum_variant)]
enum Routed<'m> {
    /// Answered without a handler (the reserved tool, or arguments refused), already recorded.
    Answered(CallToolResult),
    /// Ready for the tool's handler.
    Ready(TrackedCall, &'m ToolEntry),
}

impl Manifest {
    /// Calls a tool and returns the `CallToolResult` JSON (`content`, `structuredContent` when
    /// there is one, `isError` when true). Every call, whatever its outcome, is recorded once.
    ///
    /// An unknown name, invalid arguments, an `Err` from the handler, or an async tool (use
    /// [`call_async`](Self::call_async)) give a tool error (`isError: true`) whose text says
    /// why, never echoing argument values. A panic in the handler is recorded, then resumed.
    ///
    /// ```
    /// /// Divide two numbers.
    /// #[mcpeye::tool]
    /// fn divide(
    ///     /// The dividend.
    ///     a: f64,
    ///     /// The divisor, not zero.
    ///     b: f64,
    /// ) -> Result<f64, String> {
    ///     if b == 0.0 {
    ///         return Err("cannot divide by zero".into());
    ///     }
    ///     Ok(a / b)
    /// }
    ///
    /// # fn main() {
    /// let manifest = mcpeye::tools![divide];
    /// assert_eq!(manifest.call("divide", serde_json::json!({"a": 1, "b": 4}))["content"][0]["text"], "0.25");
    /// let failed = manifest.call("divide", serde_json::json!({"a": 1, "b": 0}));
    /// assert_eq!((failed["isError"].clone(), failed["content"][0]["text"].clone()), (true.into(), "cannot divide by zero".into()));
    /// assert_eq!(manifest.call("multiply", serde_json::json!({}))["isError"], true);
    /// # }
    /// ```
    pub fn call(&self, name: &str, arguments: Value) -> Value {
        self.call_from(&Origin::NONE, name, arguments)
    }

    /// Like [`call`](Self::call), for a request from `origin` (its client is recorded with the call).
    ///
    /// ```
    /// use mcpeye::{ClientInfo, Origin};
    /// use std::sync::Arc;
    ///
    /// let manifest = mcpeye::Manifest::builder().build();
    /// let origin = Origin::from_client(Arc::new(ClientInfo::new("claude-desktop", "1.4.2"))).with_session_id("s-1");
    /// manifest.call_from(&origin, "mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
    /// ```
    pub fn call_from(&self, origin: &Origin, name: &str, arguments: Value) -> Value {
        let tracker = self.active_tracker();
        let tracker = tracker.as_deref();
        match self.call_result(tracker, origin, name, arguments) {
            Ok(r) => r.into_json(),
            Err(unknown) => unknown_tool(tracker, origin, unknown, None).into_json(),
        }
    }

    /// Like [`call`](Self::call), but an unknown tool is an `Err`: answer it with JSON-RPC error
    /// [`CallError::code`], as MCP specifies. It is recorded all the same (once, with its intent,
    /// as a failure of reason `unknown_tool`): a name the agent made up is worth knowing.
    ///
    /// ```
    /// use mcpeye::Manifest;
    /// use serde_json::{json, Value};
    ///
    /// /// A `tools/call` request answered as a JSON-RPC response.
    /// fn answer(manifest: &Manifest, id: Value, params: &Value) -> Value {
    ///     let name = params["name"].as_str().unwrap_or_default();
    ///     match manifest.try_call(name, params["arguments"].clone()) {
    ///         Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
    ///         Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code(), "message": e.to_string()}}),
    ///     }
    /// }
    ///
    /// let manifest = Manifest::builder().build();
    /// let response = answer(&manifest, json!(1), &json!({"name": "export_csv", "arguments": {}}));
    /// assert_eq!(response["error"]["code"], -32602);
    /// ```
    pub fn try_call(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.try_call_from(&Origin::NONE, name, arguments)
    }

    /// Like [`try_call`](Self::try_call), for a request from `origin`.
    ///
    /// ```
    /// use mcpeye::{CallError, Origin, Transport};
    ///
    /// let manifest = mcpeye::Manifest::builder().build();
    /// let origin = Origin::default().with_transport(Transport::Stdio);
    /// let err = manifest.try_call_from(&origin, "export_csv", serde_json::json!({})).unwrap_err();
    /// assert!(matches!(err, CallError::UnknownTool(name) if name == "export_csv"));
    /// ```
    pub fn try_call_from(&self, origin: &Origin, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.try_call_result(self.active_tracker().as_deref(), origin, name, arguments).map(CallToolResult::into_json)
    }

    /// Like [`try_call_from`](Self::try_call_from), into `tracker` (the manifest's
    /// [`active_tracker`](Self::active_tracker), which the serving layer resolved once for the
    /// request), the client's result not yet made JSON (the rmcp integration converts it into
    /// rmcp's type directly).
    pub(crate) fn try_call_result(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, CallError> {
        self.call_result(tracker, origin, name, arguments)
            .map_err(|unknown| unknown_tool_answered(tracker, origin, unknown))
    }

    /// A sync call; an unknown tool is handed back, not yet recorded (its answer decides how).
    fn call_result(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        mut arguments: Value,
    ) -> Result<CallToolResult, UnknownCall> {
        let (attributed, minted) = self.attribute(tracker, origin, name, &mut arguments);
        let origin = attributed.as_ref().unwrap_or(origin);
        let ready = |call: TrackedCall, entry: &ToolEntry| match entry.def.handler {
            Handler::Sync(run) => self.run_sync(tracker, origin, call, entry, run),
            Handler::Async(_) => refuse_async(tracker, call, name),
        };
        let mut result = self.route(tracker, origin, name, arguments, ready, |answered| answered)?;
        if let Some(handle) = minted {
            hand_out(&mut result, &handle);
        }
        Ok(result)
    }

    /// Calls a tool, sync or async, and returns the `CallToolResult` JSON; see
    /// [`call`](Self::call). The future is `Send`.
    ///
    /// ```
    /// /// Fetch a page's title.
    /// #[mcpeye::tool(open_world, timeout_ms = 10_000)]
    /// async fn title(
    ///     /// The page's URL.
    ///     url: String,
    /// ) -> String {
    ///     format!("title of {url}") // an HTTP request, in a real tool
    /// }
    ///
    /// # fn main() { mcpeye::testing::block_on(async {
    /// let manifest = mcpeye::tools![title];
    /// let answer = manifest.call_async("title", serde_json::json!({"url": "https://example.com"})).await;
    /// assert_eq!(answer["content"][0]["text"], "title of https://example.com");
    /// # }) }
    /// ```
    pub async fn call_async(&self, name: &str, arguments: Value) -> Value {
        self.call_async_from(&Origin::NONE, name, arguments).await
    }

    /// Like [`call_async`](Self::call_async), for a request from `origin`.
    ///
    /// ```
    /// use mcpeye::{ClientInfo, Origin};
    /// use std::sync::Arc;
    ///
    /// # mcpeye::testing::block_on(async {
    /// let manifest = mcpeye::Manifest::builder().build();
    /// let origin = Origin::from_client(Arc::new(ClientInfo::new("cursor", "1.2.0")));
    /// let answer = manifest.call_async_from(&origin, "mcpeye_request_capability", serde_json::json!({"capability": "PDF"})).await;
    /// assert_eq!(answer["isError"], serde_json::Value::Null);
    /// # })
    /// ```
    pub async fn call_async_from(&self, origin: &Origin, name: &str, arguments: Value) -> Value {
        let tracker = self.active_tracker();
        let tracker = tracker.as_deref();
        match self.call_async_result(tracker, origin, name, arguments).await {
            Ok(r) => r.into_json(),
            Err(unknown) => unknown_tool(tracker, origin, unknown, None).into_json(),
        }
    }

    /// Like [`call_async`](Self::call_async), but an unknown tool is an `Err`, recorded as by
    /// [`try_call`](Self::try_call).
    ///
    /// ```
    /// # mcpeye::testing::block_on(async {
    /// let manifest = mcpeye::Manifest::builder().build();
    /// let err = manifest.try_call_async("export_csv", serde_json::json!({})).await.unwrap_err();
    /// assert_eq!(err.code(), -32602);
    /// # })
    /// ```
    pub async fn try_call_async(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.try_call_async_from(&Origin::NONE, name, arguments).await
    }

    /// Like [`try_call_async`](Self::try_call_async), for a request from `origin`: what a server
    /// serving this manifest calls for each `tools/call`.
    ///
    /// ```
    /// use mcpeye::{CallError, Manifest, Origin};
    /// use serde_json::Value;
    ///
    /// /// The heart of a transport of your own: each `tools/call` with what the request said.
    /// async fn tools_call(manifest: &Manifest, origin: &Origin, name: &str, args: Value) -> Result<Value, CallError> {
    ///     manifest.try_call_async_from(origin, name, args).await
    /// }
    /// # mcpeye::testing::block_on(async {
    /// # let manifest = Manifest::builder().build();
    /// # assert!(tools_call(&manifest, &Origin::default(), "nope", Value::Null).await.is_err());
    /// # })
    /// ```
    pub async fn try_call_async_from(&self, origin: &Origin, name: &str, arguments: Value) -> Result<Value, CallError> {
        let tracker = self.active_tracker();
        self.try_call_async_result(tracker.as_deref(), origin, name, arguments).await.map(CallToolResult::into_json)
    }

    /// Like [`try_call_async_from`](Self::try_call_async_from), into `tracker` (as
    /// [`try_call_result`](Self::try_call_result)), the client's result not yet made JSON (the
    /// rmcp integration converts it into rmcp's type directly).
    pub(crate) async fn try_call_async_result(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, CallError> {
        match self.call_async_result(tracker, origin, name, arguments).await {
            Ok(r) => Ok(r),
            Err(unknown) => Err(unknown_tool_answered(tracker, origin, unknown)),
        }
    }

    /// A call, sync or async; an unknown tool is handed back, not yet recorded.
    async fn call_async_result(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        mut arguments: Value,
    ) -> Result<CallToolResult, UnknownCall> {
        let (attributed, minted) = self.attribute(tracker, origin, name, &mut arguments);
        let origin = attributed.as_ref().unwrap_or(origin);
        let mut result = match self.route(tracker, origin, name, arguments, Routed::Ready, Routed::Answered)? {
            Routed::Answered(v) => v,
            Routed::Ready(call, entry) => match entry.def.handler {
                Handler::Sync(run) => self.run_sync(tracker, origin, call, entry, run),
                Handler::Async(run) => self.run_async(tracker, origin, call, entry, run).await,
            },
        };
        if let Some(handle) = minted {
            hand_out(&mut result, &handle);
        }
        Ok(result)
    }

    async fn run_async(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        mut call: TrackedCall,
        entry: &ToolEntry,
        run: AsyncHandler,
    ) -> CallToolResult {
        let flat = call.has_flat_arguments();
        if !flat && nests_too_deep(&call.arguments) {
            return conclude(tracker, call, HandlerOutcome::Invalid(too_deep()));
        }
        let timeout = entry.def.timeout;
        // The call's own signal: the client's, or a child of it that the timeout
        // cancels (so that the client's signal stays the client's).
        let own = match (&origin.cancellation, timeout) {
            (None, None) => None,
            (Some(c), None) => Some(c.clone()),
            (Some(c), Some(_)) => Some(c.child()),
            (None, Some(_)) => Some(Cancellation::new()),
        };
        // Parsing and state lookup happen here, before the future exists: the future owns its
        // inputs, so nothing borrowed from the arguments is held across an await.
        let mut arguments = std::mem::take(&mut call.arguments);
        let made = {
            let recorded = flat.then_some(&call);
            let inv = Invocation { recorded, ..self.invocation(origin, entry, own.as_ref()) };
            let _entered = call.span.as_ref().map(CallSpan::enter);
            catch_unwind(AssertUnwindSafe(|| run(&inv, &mut arguments)))
        };
        call.arguments = arguments;
        let ran = match made {
            Ok(Ok(fut)) => drive(CallSpan::instrument(call.span.as_ref(), fut), own.as_ref(), timeout).await,
            Ok(Err(e)) => HandlerOutcome::Invalid(e),
            Err(p) => HandlerOutcome::Panicked(p),
        };
        conclude(tracker, call, ran.unless_cancelled(origin))
    }

    fn invocation<'a>(
        &'a self,
        origin: &'a Origin,
        entry: &'a ToolEntry,
        own: Option<&'a Cancellation>,
    ) -> Invocation<'a> {
        Invocation {
            states: &self.states,
            schema: &entry.schema,
            tool: entry.def.name,
            origin,
            cancellation: own,
            recorded: None,
        }
    }

    fn run_sync(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        mut call: TrackedCall,
        entry: &ToolEntry,
        run: SyncHandler,
    ) -> CallToolResult {
        let flat = call.has_flat_arguments();
        if !flat && nests_too_deep(&call.arguments) {
            return conclude(tracker, call, HandlerOutcome::Invalid(too_deep()));
        }
        let mut arguments = std::mem::take(&mut call.arguments);
        let ran = {
            let recorded = flat.then_some(&call);
            let inv = Invocation { recorded, ..self.invocation(origin, entry, None) };
            // The span is current while the handler runs: its own spans are the call's children.
            let _entered = call.span.as_ref().map(CallSpan::enter);
            catch_unwind(AssertUnwindSafe(|| run(&inv, &mut arguments)))
        };
        call.arguments = arguments;
        let ran = match ran {
            Ok(Ok(r)) => HandlerOutcome::Done(r),
            Ok(Err(e)) => HandlerOutcome::Invalid(e),
            Err(p) => HandlerOutcome::Panicked(p),
        };
        conclude(tracker, call, ran.unless_cancelled(origin))
    }

    /// The one guard chain of `try_call` and `try_call_async`: the reserved tool, unknown
    /// names, the intent taken out, and arguments that are not an object refused (arguments
    /// nested too deep are refused before the handler runs, once flattening them failed: see
    /// [`TrackedCall::has_flat_arguments`]). A call ready for its handler goes to `ready`, an answered
    /// one to `answered`.
    // Inlined, with the call handed to a closure: the call (a few hundred bytes) is then built
    // where it is used rather than moved through a return value.
    #[inline(always)]
    fn route<'m, R>(
        &'m self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        arguments: Value,
        ready: impl FnOnce(TrackedCall, &'m ToolEntry) -> R,
        answered: impl FnOnce(CallToolResult) -> R,
    ) -> Result<R, UnknownCall> {
        if let Some(own) = self.own_tool(name) {
            return Ok(answered(answer_own(tracker, origin, own, arguments)));
        }
        let Some(entry) = self.lookup(name) else {
            return Err(UnknownCall { error: CallError::UnknownTool(name.to_owned()), arguments });
        };
        let (mut map, is_object) = split_arguments(arguments);
        let intent = call_intent(if entry.def.intent { take_intent(&mut map) } else { None }, origin);
        let name = Cow::Borrowed(entry.def.name);
        let call = TrackedCall::begin(tracker, name, true, Arguments::Owned(Value::Object(map)), intent, origin);
        if !is_object {
            return Ok(answered(conclude(tracker, call, HandlerOutcome::Invalid(not_an_object()))));
        }
        Ok(ready(call, entry))
    }

    /// The opt-in attribution arguments taken out of a call of `name` ([`attribute`]); a tool
    /// whose own schema declares one of them keeps it.
    fn attribute(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        arguments: &mut Value,
    ) -> (Option<Origin>, Option<Arc<str>>) {
        if !self.attribution.any() {
            return (None, None);
        }
        self.attribute_on(tracker, origin, name, arguments)
    }

    #[cold]
    #[inline(never)]
    fn attribute_on(
        &self,
        tracker: Option<&Tracker>,
        origin: &Origin,
        name: &str,
        arguments: &mut Value,
    ) -> (Option<Origin>, Option<Arc<str>>) {
        // mcpeye's own tools take the attribution arguments alike.
        let reserved = self.own_tool(name).is_some();
        let entry = if reserved { None } else { self.lookup(name) };
        let (Value::Object(map), true) = (arguments, reserved || entry.is_some()) else {
            return (None, None);
        };
        // Where mcpeye advertises its arguments: where the intent goes, and the reserved tool.
        let advertised = reserved || entry.is_some_and(|e| e.def.intent);
        let owns = |key: &str| entry.is_some_and(|e| e.declares(key));
        let conversation = self.attribution.conversations && !owns(CONVERSATION_PARAM_NAME);
        let takes = AttributionArgs {
            model: advertised && self.attribution.model_argument.on(reserved) && !owns(MODEL_PARAM_NAME),
            conversation,
            // A capability request is not a step of a conversation: no handle is minted for it.
            mints: conversation && advertised && !reserved,
        };
        attribute(takes, name, map, origin, tracker)
    }

    /// The tracker calls are recorded into (see [`active_tracker`]).
    pub(crate) fn active_tracker(&self) -> Option<Cow<'_, Tracker>> {
        let tracker = active_tracker(self.tracker.as_ref());
        // The event log learns the tool list from the manifest that serves it.
        if let Some(t) = &tracker {
            t.note_tools(&self.tools_list);
        }
        tracker
    }
}

/// Records a call of a tool the manifest does not have, answered with a tool error (the result
/// returned) or, with `rpc_code`, with that JSON-RPC error.
#[cold]
#[inline(never)]
fn unknown_tool(
    tracker: Option<&Tracker>,
    origin: &Origin,
    unknown: UnknownCall,
    rpc_code: Option<i64>,
) -> CallToolResult {
    let UnknownCall { error, arguments } = unknown;
    let CallError::UnknownTool(name) = &error;
    // The record says what the client was told.
    let message = match rpc_code {
        None => format!("{error}; call `tools/list` for the tools this server offers"),
        Some(_) => error.to_string(),
    };
    let (mut map, _) = split_arguments(arguments);
    record_unknown(tracker, origin, name, Some(&mut map), message.clone(), rpc_code);
    match rpc_code {
        None => CallToolResult::error_text(message),
        Some(_) => CallToolResult::default(),
    }
}

/// [`unknown_tool`] for a server that answers with [`CallError::code`].
fn unknown_tool_answered(tracker: Option<&Tracker>, origin: &Origin, unknown: UnknownCall) -> CallError {
    let error = unknown.error.clone();
    unknown_tool(tracker, origin, unknown, Some(error.code()));
    error
}

/// An async tool called through [`Manifest::try_call`], which cannot await it.
#[cold]
#[inline(never)]
fn refuse_async(tracker: Option<&Tracker>, call: TrackedCall, name: &str) -> CallToolResult {
    if nests_too_deep(&call.arguments) {
        return conclude(tracker, call, HandlerOutcome::Invalid(too_deep()));
    }
    let e = ArgsError {
        problems: vec![format!(
            "the tool `{name}` is async and `Manifest::call` cannot run it (the arguments are not the problem): \
             call it with `Manifest::call_async`"
        )],
    };
    conclude(tracker, call, HandlerOutcome::Invalid(e))
}

/// Answers one of mcpeye's own tools locally and records it as a call of that name with
/// `durationMs: 0` and no intent (docs/wire-format.md#reserved-tool, #feedback-tool): the
/// acknowledgement, or an invalid-arguments error when its required arguments are not there.
fn answer_own(tracker: Option<&Tracker>, origin: &Origin, own: OwnTool, arguments: Value) -> CallToolResult {
    let (mut map, is_object) = split_arguments(arguments);
    take_intent(&mut map);
    let name = Cow::Borrowed(own.name());
    let call = TrackedCall::begin(tracker, name, true, Arguments::Owned(Value::Object(map)), None, origin).untimed();
    let problems = match own {
        OwnTool::Capability => capability_problems(&call.arguments),
        OwnTool::Feedback => feedback_problems(&call.arguments),
    };
    let ran = if !is_object {
        HandlerOutcome::Invalid(not_an_object())
    } else if !problems.is_empty() {
        HandlerOutcome::Invalid(ArgsError { problems })
    } else {
        HandlerOutcome::Done(CallToolResult::text(match own {
            OwnTool::Capability => RESERVED_TOOL_ACK,
            OwnTool::Feedback => FEEDBACK_TOOL_ACK,
        }))
    };
    conclude(tracker, call, ran)
}

/// What is wrong with the arguments of a capability request: a missing or blank `capability`.
fn capability_problems(arguments: &Value) -> Vec<String> {
    let has_capability = arguments.get("capability").and_then(Value::as_str).is_some_and(|c| !c.trim().is_empty());
    match has_capability {
        true => Vec::new(),
        false => vec!["`capability`: required, a non-empty string naming the capability the user needs".to_owned()],
    }
}

/// What is wrong with the arguments of a feedback call: a `category` that is not one of
/// [`FEEDBACK_CATEGORIES`], a missing or blank `text`, a `task_completed` that is not a boolean
/// (`null` counts as absent). The problems name the argument, never its value (which is the
/// agent's, and recorded redacted).
fn feedback_problems(arguments: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let category = arguments.get("category").and_then(Value::as_str);
    if category.is_none_or(|c| !FEEDBACK_CATEGORIES.contains(&c)) {
        problems.push(format!("`category`: required, one of {}", quoted_list(FEEDBACK_CATEGORIES)));
    }
    if arguments.get("text").and_then(Value::as_str).is_none_or(|t| t.trim().is_empty()) {
        problems.push("`text`: required, a non-empty string with the feedback".to_owned());
    }
    if !matches!(arguments.get("task_completed"), None | Some(Value::Null | Value::Bool(_))) {
        problems.push("`task_completed`: a boolean when given".to_owned());
    }
    problems
}

/// `"a"`, `"b"` or `"c"`.
fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Turns what ran into the client's result and ends the call with it; a panic is resumed after.
fn conclude(tracker: Option<&Tracker>, call: TrackedCall, ran: HandlerOutcome) -> CallToolResult {
    match ran {
        // The record is flattened from the result the client gets (a copy only for a callback
        // tracker, or a result of other items than text): its JSON is built once.
        HandlerOutcome::Done(r) if !r.is_error => {
            call.end_with(tracker, &r, flatten_result, |r| r.clone().into_record_json());
            r
        }
        ran => conclude_rest(tracker, call, ran),
    }
}

/// Every end of a call but a success ([`conclude`]): the client's result and the record made
/// apart, a panic resumed.
#[cold]
#[inline(never)]
fn conclude_rest(tracker: Option<&Tracker>, call: TrackedCall, ran: HandlerOutcome) -> CallToolResult {
    let (client_result, outcome, panic) = match ran {
        HandlerOutcome::Done(r) if !r.is_error => {
            (r.clone(), CallOutcome::Success { result: r.into_record_json() }, None)
        }
        HandlerOutcome::Done(mut r) => {
            let (message, reason) = (r.joined_text(), r.error_reason.take());
            (r, CallOutcome::Error { message, reason }, None)
        }
        HandlerOutcome::Invalid(e) => {
            let msg = e.to_string();
            let outcome = CallOutcome::error_with_reason(msg.clone(), INVALID_ARGUMENTS);
            (CallToolResult::error_text(msg), outcome, None)
        }
        HandlerOutcome::Panicked(p) => {
            (CallToolResult::default(), CallOutcome::error_with_reason(panic_message(&*p), PANIC), Some(p))
        }
        HandlerOutcome::Cancelled(reason) => {
            let outcome = CallOutcome::cancelled(reason.as_deref());
            (CallToolResult::error_text(outcome.error_message().unwrap_or_default()), outcome, None)
        }
        HandlerOutcome::TimedOut(after) => {
            let outcome = CallOutcome::timed_out(after);
            (CallToolResult::error_text(outcome.error_message().unwrap_or_default()), outcome, None)
        }
    };
    call.end(tracker, outcome, None);
    if let Some(p) = panic {
        resume_unwind(p);
    }
    client_result
}

/// The opt-in attribution arguments a call's tool takes (docs/attribution.md).
#[derive(Clone, Copy, Default)]
pub(crate) struct AttributionArgs {
    /// `llm_model`.
    pub(crate) model: bool,
    /// The conversation handle: from every tool that does not declare it itself.
    pub(crate) conversation: bool,
    /// Whether the tool advertises the conversation argument: only then is a handle minted.
    pub(crate) mints: bool,
}

/// Takes the attribution arguments `takes` names out of a call's arguments, for every way in:
/// the origin they make, when they change it (the model; the conversation of a call without a
/// transport session, which wins), and the handle minted for the call, for its result to hand
/// out.
#[cold]
#[inline(never)]
pub(crate) fn attribute(
    takes: AttributionArgs,
    name: &str,
    arguments: &mut Map<String, Value>,
    origin: &Origin,
    tracker: Option<&Tracker>,
) -> (Option<Origin>, Option<Arc<str>>) {
    let mut attributed: Option<Origin> = None;
    if takes.model {
        // `_meta` wins: the client states it, the agent only reports it.
        if let Some(model) = take_model(arguments).filter(|_| origin.model.is_none()) {
            attributed.get_or_insert_with(|| origin.clone()).model = Some(model);
        }
    }
    if !takes.conversation {
        return (attributed, None);
    }
    let handle = take_conversation(arguments);
    if origin.session_id.is_some() {
        return (attributed, None);
    }
    let mut joined = attributed.unwrap_or_else(|| origin.clone());
    if tracker.is_some_and(Tracker::identifies) {
        // `identify` sees the arguments as the handler will: without the intent, which goes
        // back where it was for the call to take it out.
        let at = arguments.keys().position(|k| k == INTENT_PARAM_NAME);
        let intent = at.and_then(|_| arguments.shift_remove(INTENT_PARAM_NAME));
        let seen = Value::Object(std::mem::take(arguments));
        identify_now(tracker, &mut joined, name, &seen);
        if let Value::Object(map) = seen {
            *arguments = map;
        }
        if let (Some(at), Some(intent)) = (at, intent) {
            arguments.shift_insert(at, INTENT_PARAM_NAME.to_owned(), intent);
        }
    }
    let minted = join_conversation(handle, &mut joined, tracker, takes.mints);
    (Some(joined), minted)
}

/// Records a call of a tool the server does not have, for every way in: once, with its intent,
/// in the conversation its valid handle names, as a failure of reason `unknown_tool` with
/// `message` (what the client was told); with `rpc_code`, answered with that JSON-RPC error
/// rather than a tool result. Its arguments are not kept: the server has no schema to describe
/// them.
#[cold]
#[inline(never)]
pub(crate) fn record_unknown(
    tracker: Option<&Tracker>,
    origin: &Origin,
    name: &str,
    arguments: Option<&mut Map<String, Value>>,
    message: String,
    rpc_code: Option<i64>,
) {
    // The name is the agent's: an unbounded one is not kept in full.
    let kept: String = name.chars().take(MAX_UNKNOWN_NAME_CHARS).collect();
    let (intent, resumed) = match arguments {
        Some(map) => {
            let intent = take_intent(map);
            let resumed = match origin.session_id {
                None => resume_conversation(map, origin, &kept, tracker),
                Some(_) => None,
            };
            (intent, resumed)
        }
        None => (None, None),
    };
    let origin = resumed.as_ref().unwrap_or(origin);
    // Its span names no tool: the name is the agent's, unbounded in cardinality.
    let call = TrackedCall::begin(
        tracker,
        Cow::Owned(kept),
        false,
        Arguments::Owned(Value::Object(Map::new())),
        intent,
        origin,
    );
    call.end(tracker, CallOutcome::error_with_reason(message, UNKNOWN_TOOL), rpc_code);
}

/// Runs `identify` as the call begins, when the tracker has it, so that the call's conversation
/// handle is checked against the user it names; the record then reuses the answer.
fn identify_now(tracker: Option<&Tracker>, origin: &mut Origin, name: &str, arguments: &Value) {
    if let Some(t) = tracker.filter(|t| t.identifies()) {
        origin.identified = t.identify_now(crate::model::request::RequestInfo::of_origin(name, arguments, origin));
    }
}

/// Gives a call without a transport session its conversation (docs/attribution.md#conversation):
/// the one its handle names, when the handle was minted under the tracker's key for the call's
/// user ([`identify_now`]); else, when `mint`, a new one, counted, which is returned for the
/// result to hand out.
fn join_conversation(
    argument: Option<Value>,
    origin: &mut Origin,
    tracker: Option<&Tracker>,
    mint: bool,
) -> Option<Arc<str>> {
    let identified = origin.identified.as_deref();
    let user = identified.and_then(|id| id.user_id.as_deref().or(id.user_email.as_deref()));
    let key = tracker.map_or_else(HandleKey::process, Tracker::handle_key);
    let handle = key.read(argument, user);
    let (session, minted) = match handle {
        Handle::Valid(h) => (h, None),
        Handle::Absent | Handle::Invalid if !mint => return None,
        Handle::Absent | Handle::Invalid => {
            let h = key.mint(user);
            if let Some(t) = tracker {
                t.count_conversation(handle == Handle::Invalid);
            }
            (h.clone(), Some(h))
        }
    };
    origin.session_id = Some(session);
    minted
}

/// The origin of a call of a tool the server does not have, in the conversation its valid
/// handle names (taken out of `arguments`); no handle is minted for it (it has no result to
/// hand one out in).
fn resume_conversation(
    arguments: &mut Map<String, Value>,
    origin: &Origin,
    name: &str,
    tracker: Option<&Tracker>,
) -> Option<Origin> {
    let handle = take_conversation(arguments)?;
    let mut resumed = origin.clone();
    // `identify` sees what the record has: no arguments (they are not the server's to describe).
    identify_now(tracker, &mut resumed, name, &Value::Object(Map::new()));
    join_conversation(Some(handle), &mut resumed, tracker, false);
    resumed.session_id.is_some().then_some(resumed)
}

/// Hands out the conversation handle minted for a call in its result, as one more text item
/// (the one change to a handler's result, opt-in: docs/attribution.md#conversation).
fn hand_out(result: &mut CallToolResult, handle: &str) {
    result.content.push(Content::Text(handle_text(handle)));
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
    use crate::contract::RESERVED_TOOL_NAME;
    use crate::model::record::CallRecord;
    use crate::tool::def::{parse_args, Annotations, BoxFuture, StateDecl, ToolDef};
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    /// The intent is taken out at any position, the other keys kept in order.
    #[test]
    fn the_intent_is_taken_at_any_position() {
        for len in [1, 2, 3, 16, 17, 40] {
            for at in 0..len {
                let mut map = Map::new();
                for i in 0..len {
                    match i == at {
                        true => map.insert(INTENT_PARAM_NAME.to_owned(), json!("why")),
                        false => map.insert(format!("k{i}"), json!(i)),
                    };
                }
                let others: Vec<String> = map.keys().filter(|k| *k != INTENT_PARAM_NAME).cloned().collect();
                assert_eq!(take_intent(&mut map), Some(("why".to_owned(), IntentSource::Mcpeye)), "{len} {at}");
                assert_eq!(map.keys().cloned().collect::<Vec<_>>(), others, "{len} {at}");
                for k in &others {
                    assert!(map.get(k).is_some(), "{k} still found after the removal");
                }
                assert_eq!(take_intent(&mut map), None);
            }
        }
        let mut blank = Map::new();
        blank.insert("a".into(), json!(1));
        blank.insert(INTENT_PARAM_NAME.into(), json!("  "));
        assert_eq!(take_intent(&mut blank), None);
        assert!(!blank.contains_key(INTENT_PARAM_NAME) && blank.contains_key("a"));
        let mut empty = Map::new();
        assert_eq!(take_intent(&mut empty), None);
    }

    #[test]
    fn blank_means_what_trim_says() {
        let cases = [
            "",
            " ",
            "\t\n\r",
            "\u{0B}",
            "\u{0C}",
            "\u{3000}",
            "\u{A0} \u{2029}",
            "x",
            " x",
            "\u{0B}x",
            "\u{1F}",
            "\u{85}",
            "\u{85}é",
            "é",
            "\u{3000}why",
            "0",
            "\u{0}",
        ];
        for s in cases {
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
        for b in 0u8..128 {
            let s = (b as char).to_string();
            assert_eq!(is_blank(&s), s.trim().is_empty(), "byte {b}");
        }
    }

    // What `#[mcpeye::tool]` generates, written by hand so the dispatcher is tested on its own.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct EchoArgs {
        /// Text to echo.
        text: String,
        /// Times to repeat it.
        times: Option<u32>,
    }

    fn echo_handler(inv: &Invocation<'_>, args: &mut Value) -> Result<CallToolResult, ArgsError> {
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

    fn async_handler(inv: &Invocation<'_>, args: &mut Value) -> Result<BoxFuture, ArgsError> {
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
        normalize_schema: true,
        output_schema: no_output,
        timeout: None,
        icons: &[],
        states: &[],
        handler: Handler::Sync(echo_handler),
    };

    fn no_output() -> Option<schemars::Schema> {
        None
    }

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
        normalize_schema: true,
        output_schema: no_output,
        timeout: None,
        icons: &[],
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

    /// Through a pipeline the handler takes the arguments (its record flattened them first): the
    /// answers and the recorded arguments are those of a tracker that keeps them, invalid
    /// arguments included (described from the record's copy).
    #[cfg(feature = "testing")]
    #[test]
    fn a_pipeline_handler_takes_the_arguments_with_the_same_answers() {
        let (tracker, sink) = crate::testing::MemorySink::new();
        let piped =
            Manifest::builder().tools([&ECHO, &ASYNC_ECHO]).state(String::from(">")).tracker(tracker.clone()).build();
        let (kept, records) = manifest();
        let calls = [
            ("echo", json!({"text": "ab", "times": 2, "mcpeyeIntent": "why"})),
            ("echo", json!({"text": 5, "extra": [1, {"a": "b"}]})),
            ("echo", json!({})),
            ("async_echo", json!({"text": "x"})),
            ("async_echo", json!({"text": ["x"]})),
        ];
        for (name, args) in &calls {
            let expected = block_on(kept.call_async(name, args.clone()));
            assert_eq!(block_on(piped.call_async(name, args.clone())), expected, "{name} {args}");
        }
        assert!(tracker.flush(Duration::from_secs(5)).completed);
        let events = sink.events();
        let recorded = records.lock().unwrap();
        assert_eq!(events.len(), calls.len());
        for (event, record) in events.iter().zip(recorded.iter()) {
            assert_eq!(event["arguments"], record.arguments);
            assert_eq!(event["isError"].as_bool().unwrap_or(false), record.is_error());
        }
        assert_eq!(events[0]["intent"], "why");
        assert!(recorded[1].error_message().unwrap().starts_with("invalid arguments: "), "{:?}", recorded[1]);
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
        assert!(!r.is_error());
        assert_eq!(r.result(), Some(&out));
        assert_eq!(r.error_message(), None);
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
            assert!(!r.is_error(), "the intent is removed before deserialising");
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
        assert!(recs.iter().all(|r| r.is_error() && r.result().is_none()));
        assert_eq!(recs[0].error_message(), Some("it failed"));
        assert_eq!(recs[1].error_message(), Some("soft failure"));
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
        assert!(recs.iter().all(|r| r.is_error() && !r.error_message().unwrap().contains("hunter2")));
    }

    #[test]
    fn panic_is_recorded_then_resumed() {
        let (m, records) = manifest();
        let caught = catch_unwind(AssertUnwindSafe(|| m.call("echo", json!({"text": "panic"}))));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        let r = records.lock().unwrap().pop().unwrap();
        assert!(r.is_error());
        assert_eq!(r.error_message(), Some("the tool panicked: boom"));
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
        assert_eq!(r.result(), Some(&out));
        let out = m.call(RESERVED_TOOL_NAME, json!({"context": "no capability"}));
        assert_eq!(out["isError"], true);
        assert!(records.lock().unwrap().pop().unwrap().is_error());
    }

    #[test]
    fn the_feedback_tool_is_answered_locally_when_on() {
        use crate::contract::FEEDBACK_TOOL_NAME;
        let (m, records) = manifest();
        assert!(m.try_call(FEEDBACK_TOOL_NAME, json!({"category": "issue", "text": "x"})).is_err(), "off by default");
        records.lock().unwrap().clear();
        let sink = records.clone();
        let m = Manifest::builder()
            .tools([&ECHO])
            .state(String::from(">"))
            .feedback(true)
            .tracker(Tracker::from_fn(move |r| sink.lock().unwrap().push(r)))
            .build();
        let args =
            json!({"category": "issue", "text": "echo drops accents", "task_completed": false, "mcpeyeIntent": "x"});
        let out = m.call(FEEDBACK_TOOL_NAME, args);
        assert_eq!(out, json!({"content": [{"type": "text", "text": FEEDBACK_TOOL_ACK}]}));
        let r = records.lock().unwrap().pop().unwrap();
        assert_eq!((r.tool_name.as_ref(), r.duration, r.intent.clone()), (FEEDBACK_TOOL_NAME, Duration::ZERO, None));
        assert_eq!(r.arguments, json!({"category": "issue", "text": "echo drops accents", "task_completed": false}));
        assert_eq!(r.result(), Some(&out));
        assert_eq!(block_on(m.call_async(FEEDBACK_TOOL_NAME, json!({"category": "praise", "text": "ok"}))), out);
        records.lock().unwrap().clear();
        for (bad, named) in [
            (json!({"text": "no category"}), vec!["`category`"]),
            (json!({"category": "bug", "text": "unknown category"}), vec!["`category`"]),
            (json!({"category": "issue", "text": "  "}), vec!["`text`"]),
            (json!({"category": "issue"}), vec!["`text`"]),
            (json!({"category": "issue", "text": 3}), vec!["`text`"]),
            (json!({"category": "other", "text": "x", "task_completed": "yes"}), vec!["`task_completed`"]),
            (
                json!({"category": 1, "text": null, "task_completed": 0}),
                vec!["`category`", "`text`", "`task_completed`"],
            ),
            (json!(["issue", "x"]), vec!["object"]),
        ] {
            let out = m.call(FEEDBACK_TOOL_NAME, bad.clone());
            assert_eq!(out["isError"], true, "{bad}");
            let text = out["content"][0]["text"].as_str().unwrap();
            assert!(named.iter().all(|n| text.contains(n)), "{bad}: {text}");
            let r = records.lock().unwrap().pop().unwrap();
            assert_eq!((r.tool_name.as_ref(), r.error_message()), (FEEDBACK_TOOL_NAME, Some(text)), "{bad}");
            assert_eq!(r.outcome.error_type(), Some(INVALID_ARGUMENTS), "{bad}");
        }
        let ok = m.call(FEEDBACK_TOOL_NAME, json!({"category": "other", "text": "x", "task_completed": null}));
        assert_eq!(ok["content"][0]["text"], FEEDBACK_TOOL_ACK, "null counts as absent");
    }

    #[test]
    fn unknown_tool() {
        let (m, records) = manifest();
        let args = json!({"q": "x", "mcpeyeIntent": "refund it"});
        assert_eq!(m.try_call("nope", args.clone()), Err(CallError::UnknownTool("nope".into())));
        let out = m.call("nope", args.clone());
        assert_eq!(out["isError"], true);
        assert!(out["content"][0]["text"].as_str().unwrap().contains("unknown tool `nope`"));
        assert_eq!(block_on(m.try_call_async("nope", args.clone())), Err(CallError::UnknownTool("nope".into())));
        assert_eq!(block_on(m.call_async("nope", args)), out);
        // Each path records the call once, with its intent and without the arguments.
        let recs = std::mem::take(&mut *records.lock().unwrap());
        assert_eq!(recs.len(), 4);
        for r in &recs {
            assert_eq!((r.tool_name.as_ref(), r.error_type()), ("nope", Some(UNKNOWN_TOOL)));
            assert_eq!(r.intent, Some(("refund it".to_owned(), IntentSource::Mcpeye)));
            assert_eq!(r.arguments, json!({}));
        }
        assert_eq!(recs[0].error_message(), Some("unknown tool `nope`"), "what the JSON-RPC error says");
        assert!(recs[1].error_message().unwrap().ends_with("for the tools this server offers"));
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
        assert_eq!(recs[3].error_message(), Some("the tool panicked: async boom"));
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
            normalize_schema: true,
            output_schema: no_output,
            timeout: None,
            icons: &[],
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
