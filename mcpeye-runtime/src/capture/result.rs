//! Tool results: the MCP `CallToolResult` and the conversion of handler return values into it.

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Display;

/// One item of a tool result's `content` array.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A `{"type":"text","text":…}` item.
    Text(String),
    /// Any other content item (image, audio, resource…), kept as the JSON object it is.
    Other(Value),
}

impl Content {
    /// A text content item.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    fn to_json(&self) -> Value {
        match self {
            Content::Text(t) => {
                let mut m = Map::with_capacity(2);
                m.insert("type".into(), Value::String("text".into()));
                m.insert("text".into(), Value::String(t.clone()));
                Value::Object(m)
            }
            Content::Other(v) => v.clone(),
        }
    }

    fn into_json(self) -> Value {
        match self {
            Content::Text(t) => {
                let mut m = Map::with_capacity(2);
                m.insert("type".into(), Value::String("text".into()));
                m.insert("text".into(), Value::String(t));
                Value::Object(m)
            }
            Content::Other(v) => v,
        }
    }

    fn from_json(v: &Value) -> Option<Content> {
        let obj = v.as_object()?;
        match (obj.get("type").and_then(Value::as_str), obj.get("text")) {
            (Some("text"), Some(Value::String(t))) if obj.len() == 2 => Some(Content::Text(t.clone())),
            (Some(_), _) => Some(Content::Other(v.clone())),
            _ => None,
        }
    }
}

/// The result of a tool call as MCP defines it (`tools/call` result).
///
/// A handler may return this type to control the result exactly; it reaches the client
/// unchanged, and `is_error: true` is honoured (the call is recorded as an error whose message
/// is the text of its text items).
///
/// ```
/// use mcpeye_runtime::CallToolResult;
/// let r = CallToolResult::error_text("the warehouse is closed");
/// assert_eq!(
///     r.to_json().to_string(),
///     r#"{"content":[{"type":"text","text":"the warehouse is closed"}],"isError":true}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallToolResult {
    /// The `content` array.
    pub content: Vec<Content>,
    /// `structuredContent`, a JSON object, when there is one.
    pub structured_content: Option<Map<String, Value>>,
    /// `isError`: the tool ran but failed.
    pub is_error: bool,
}

impl CallToolResult {
    /// A successful result with one text item.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::Text(text.into())], structured_content: None, is_error: false }
    }

    /// A failed result (`isError: true`) with one text item.
    pub fn error_text(text: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::Text(text.into())], structured_content: None, is_error: true }
    }

    /// A successful result carrying `value`: objects become `structuredContent`, and every value
    /// is also given as compact JSON text (clients that ignore structured content still see it).
    /// Strings become a plain text item and `null` (a `()` return) an empty `content`.
    pub fn json(value: Value) -> Self {
        match value {
            Value::Null => CallToolResult::default(),
            Value::String(s) => CallToolResult::text(s),
            Value::Object(m) => {
                // Serialising a map of `Value`s cannot fail.
                let text = serde_json::to_string(&m).unwrap_or_default();
                CallToolResult { content: vec![Content::Text(text)], structured_content: Some(m), is_error: false }
            }
            other => CallToolResult::text(other.to_string()),
        }
    }

    /// The `text` of the text items joined with `"\n"`, or `None` when there are none.
    pub fn joined_text(&self) -> Option<String> {
        let mut texts = self.content.iter().filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            Content::Other(_) => None,
        });
        let first = texts.next()?;
        let mut out = first.to_owned();
        for t in texts {
            out.push('\n');
            out.push_str(t);
        }
        Some(out)
    }

    /// The JSON object sent to the client: `content`, then `structuredContent` when present,
    /// then `isError` only when true.
    pub fn to_json(&self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("content".into(), Value::Array(self.content.iter().map(Content::to_json).collect()));
        if let Some(s) = &self.structured_content {
            m.insert("structuredContent".into(), Value::Object(s.clone()));
        }
        if self.is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(m)
    }

    /// Like [`to_json`](Self::to_json), moving the strings instead of copying them.
    pub fn into_json(self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("content".into(), Value::Array(self.content.into_iter().map(Content::into_json).collect()));
        if let Some(s) = self.structured_content {
            m.insert("structuredContent".into(), Value::Object(s));
        }
        if self.is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(m)
    }

    /// Reads a `CallToolResult` JSON object (as produced by [`CallToolResult::to_json`] or by
    /// another MCP implementation). Returns `None` when `value` is not one.
    pub fn from_json(value: &Value) -> Option<Self> {
        let obj = value.as_object()?;
        let content = obj.get("content")?.as_array()?.iter().map(Content::from_json).collect::<Option<Vec<_>>>()?;
        let structured_content = match obj.get("structuredContent") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return None,
        };
        let is_error = obj.get("isError").and_then(Value::as_bool).unwrap_or(false);
        Some(CallToolResult { content, structured_content, is_error })
    }
}

/// A value a tool handler may return (inside `Result<_, E: Display>` or on its own).
///
/// Implemented for [`CallToolResult`] (passed through unchanged) and for every
/// `T: Serialize` (see [`CallToolResult::json`]): `String` gives a text item, `()` an empty
/// result, an object `structuredContent` plus the same JSON as text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type cannot become a tool result",
    note = "return `String`, `()`, a type that implements `serde::Serialize`, `mcpeye::CallToolResult`, or `Result<T, E>` of those with `E: Display`"
)]
pub trait ToolValue {
    /// Converts the value into the result sent to the client.
    fn into_call_result(self) -> CallToolResult;
}

impl ToolValue for CallToolResult {
    fn into_call_result(self) -> CallToolResult {
        self
    }
}

impl<T: Serialize> ToolValue for T {
    fn into_call_result(self) -> CallToolResult {
        match serde_json::to_value(&self) {
            Ok(v) => CallToolResult::json(v),
            Err(e) => CallToolResult::error_text(format!("the tool's result could not be serialised to JSON: {e}")),
        }
    }
}

/// Autoref dispatch between `Result<T, E>` returns and plain returns, used by generated code.
/// The probe is built on a concrete type, so the `Result` impl (one reference deeper) wins
/// whenever it applies, whatever the alias the user wrote (`anyhow::Result`, `io::Result`…).
#[doc(hidden)]
pub mod kind {
    use super::*;
    use std::marker::PhantomData;

    pub struct Probe<T>(PhantomData<T>);

    pub fn probe<T>(_: &T) -> Probe<T> {
        Probe(PhantomData)
    }

    pub struct ResultTag;
    pub struct ValueTag;

    pub trait ResultKind {
        fn __mcpeye_kind(&self) -> ResultTag {
            ResultTag
        }
    }
    impl<T, E> ResultKind for &Probe<Result<T, E>> {}

    pub trait ValueKind {
        fn __mcpeye_kind(&self) -> ValueTag {
            ValueTag
        }
    }
    impl<T> ValueKind for Probe<T> {}

    impl ResultTag {
        pub fn finish<T: ToolValue, E: Display>(self, r: Result<T, E>) -> CallToolResult {
            match r {
                Ok(v) => v.into_call_result(),
                Err(e) => CallToolResult::error_text(e.to_string()),
            }
        }
    }

    impl ValueTag {
        pub fn finish<T: ToolValue>(self, v: T) -> CallToolResult {
            v.into_call_result()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kind::ResultKind as _;
    use super::*;

    fn finish_any<R: ToolValue>(r: R) -> CallToolResult {
        kind::ValueTag.finish(r)
    }

    #[test]
    fn kinds_dispatch() {
        let r: Result<String, String> = Err("boom".into());
        let out = (&&kind::probe(&r)).__mcpeye_kind().finish(r);
        assert_eq!(out, CallToolResult::error_text("boom"));
        let v = vec![1, 2];
        assert_eq!(finish_any(v).to_json().to_string(), r#"{"content":[{"type":"text","text":"[1,2]"}]}"#);
        assert_eq!(finish_any(()).to_json().to_string(), r#"{"content":[]}"#);
        let obj = serde_json::json!({"b": 1, "a": 2});
        assert_eq!(
            finish_any(obj).to_json().to_string(),
            r#"{"content":[{"type":"text","text":"{\"b\":1,\"a\":2}"}],"structuredContent":{"b":1,"a":2}}"#
        );
    }

    #[test]
    fn joined_text() {
        let r = CallToolResult {
            content: vec![Content::text("a"), Content::Other(serde_json::json!({"type":"image"})), Content::text("b")],
            structured_content: None,
            is_error: true,
        };
        assert_eq!(r.joined_text().as_deref(), Some("a\nb"));
        assert_eq!(CallToolResult::default().joined_text(), None);
        assert_eq!(CallToolResult::from_json(&r.to_json()), Some(r.clone()));
        assert_eq!(r.to_json(), r.into_json());
    }
}
