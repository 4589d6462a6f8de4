//! What [`Config::infer_intent`](crate::Config::infer_intent) sees of a call that carries no
//! intent: a borrowed view of the event as it was encoded for the wire, after the caps,
//! redaction and `before_send`.

use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

/// The callback of [`Config::infer_intent`](crate::Config::infer_intent).
///
/// ```
/// use mcpeye::{InferCall, InferIntentFn};
///
/// fn by_tool(call: &InferCall<'_>) -> Option<String> {
///     (call.tool() == "search").then(|| format!("searched for {}", call.arguments()["query"]))
/// }
/// let callback: &InferIntentFn = &by_tool;
/// # let _ = callback;
/// let config = mcpeye::Config::new("proj").event_log("logs").infer_intent(by_tool);
/// # drop(config);
/// ```
pub type InferIntentFn = dyn Fn(&InferCall<'_>) -> Option<String> + Send + Sync;

/// One call without an intent, as [`Config::infer_intent`](crate::Config::infer_intent) sees it
/// on the flusher thread: the event as it was sent, after the size caps, redaction and
/// `before_send`. Everything is borrowed from the encoded event; the arguments are parsed into
/// a [`Value`] only when [`arguments`](Self::arguments) is first asked.
///
/// ```
/// use mcpeye::testing::MemorySink;
/// use mcpeye::{Config, InferCall, Manifest};
/// use std::sync::{Arc, Mutex};
///
/// let seen: Arc<Mutex<Vec<String>>> = Arc::default();
/// let sink = seen.clone();
/// let dir = std::env::temp_dir().join(format!("mcpeye-doc-infer-call-{}", std::process::id()));
/// let config = Config::new("proj").event_log(&dir).infer_intent(move |call: &InferCall<'_>| {
///     let line = format!("{} error={} {}", call.tool(), call.is_error(), call.arguments_json());
///     sink.lock().unwrap().push(line);
///     None
/// });
/// let (tracker, _sink) = MemorySink::with_config(config).unwrap();
/// let manifest = Manifest::builder().tracker(tracker.clone()).build();
/// let capability = serde_json::json!({"capability": "mail ada@example.com the CSV"});
/// manifest.call("mcpeye_request_capability", capability);
/// tracker.shutdown(std::time::Duration::from_secs(5));
/// // The hook saw the arguments as they were sent: redacted.
/// let line = r#"mcpeye_request_capability error=false {"capability":"mail [REDACTED_EMAIL] the CSV"}"#;
/// assert_eq!(*seen.lock().unwrap(), [line]);
/// # let _ = std::fs::remove_dir_all(dir);
/// ```
pub struct InferCall<'a> {
    tool: Cow<'a, str>,
    arguments: &'a RawValue,
    parsed: OnceCell<Value>,
    result: Option<&'a RawValue>,
    error: Option<Cow<'a, str>>,
    is_error: bool,
}

impl<'a> InferCall<'a> {
    /// A view of an encoded event's parts (see `flush::infer`).
    pub(crate) fn new(
        tool: Cow<'a, str>,
        arguments: &'a RawValue,
        result: Option<&'a RawValue>,
        error: Option<Cow<'a, str>>,
        is_error: bool,
    ) -> Self {
        InferCall { tool, arguments, parsed: OnceCell::new(), result, error, is_error }
    }

    /// The tool's name (`toolName`): for a tool the server does not have, the agent's name,
    /// cleaned and redacted.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     call.tool().starts_with("export_").then(|| "wanted an export".to_string())
    /// });
    /// # drop(config);
    /// ```
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The arguments as they were sent (`arguments`: without `mcpeyeIntent`, capped, then
    /// redacted; an object), parsed on the first call.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     let query = call.arguments().get("query")?.as_str()?;
    ///     Some(format!("looked up {query}"))
    /// });
    /// # drop(config);
    /// ```
    pub fn arguments(&self) -> &Value {
        // The text is valid JSON: the flusher wrote it. `Null` stands in should it not parse.
        self.parsed.get_or_init(|| serde_json::from_str(self.arguments.get()).unwrap_or(Value::Null))
    }

    /// The arguments as the compact JSON text that was sent, without parsing them.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     (call.arguments_json() == "{}").then(|| "called without arguments".to_string())
    /// });
    /// # drop(config);
    /// ```
    pub fn arguments_json(&self) -> &str {
        self.arguments.get()
    }

    /// Whether the call failed (`isError`).
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     call.is_error().then(|| format!("tried {} and failed", call.tool()))
    /// });
    /// # drop(config);
    /// ```
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The error's message as it was sent (`errorMessage`, redacted), when the call failed with
    /// one.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     call.error().filter(|e| e.contains("not found")).map(|_| "looked for something missing".to_string())
    /// });
    /// # drop(config);
    /// ```
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The size of the result the call succeeded with, in bytes of its compact JSON as sent (a
    /// result over the 32 KiB cap is sent as a marker: its size before the cap); `None` when the
    /// call failed.
    ///
    /// ```
    /// let config = mcpeye::Config::new("proj").infer_intent(|call| {
    ///     (call.result_bytes()? < 20).then(|| format!("{}: found nothing", call.tool()))
    /// });
    /// # drop(config);
    /// ```
    pub fn result_bytes(&self) -> Option<usize> {
        let text = self.result?.get();
        let capped = text.strip_prefix(TRUNCATED_PREFIX).and_then(|rest| rest.strip_suffix('}'));
        Some(capped.and_then(|n| n.parse().ok()).unwrap_or(text.len()))
    }
}

/// How a result over the cap begins on the wire (`{"[truncated]":true,"bytes":N}`,
/// docs/wire-format.md): its size follows.
const TRUNCATED_PREFIX: &str = "{\"[truncated]\":true,\"bytes\":";

impl fmt::Debug for InferCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InferCall")
            .field("tool", &self.tool)
            .field("arguments", &self.arguments.get())
            .field("is_error", &self.is_error)
            .field("error", &self.error)
            .field("result_bytes", &self.result_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::truncated_marker;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn the_result_size_is_its_length_or_the_size_before_the_cap() {
        let small = raw(r#"{"content":[]}"#);
        let call = InferCall::new("t".into(), &small, Some(&small), None, false);
        assert_eq!(call.result_bytes(), Some(14));
        let marker = raw(&serde_json::to_string(&truncated_marker(40_000)).unwrap());
        let call = InferCall::new("t".into(), &small, Some(&marker), None, false);
        assert_eq!(call.result_bytes(), Some(40_000));
        let call = InferCall::new("t".into(), &small, None, Some("boom".into()), true);
        assert_eq!((call.result_bytes(), call.error(), call.is_error()), (None, Some("boom"), true));
    }

    #[test]
    fn the_arguments_are_parsed_once_when_asked() {
        let args = raw(r#"{"q":"mugs","n":[1,2]}"#);
        let call = InferCall::new("t".into(), &args, None, None, false);
        assert!(call.parsed.get().is_none());
        assert_eq!(call.arguments()["q"], "mugs");
        assert!(std::ptr::eq(call.arguments(), call.parsed.get().unwrap()));
        assert_eq!(call.arguments_json(), r#"{"q":"mugs","n":[1,2]}"#);
    }
}
