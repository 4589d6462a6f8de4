//! Tool results: the MCP `CallToolResult` and the conversion of handler return values into it.

use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::{self, Display};

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
    /// Why a failed call failed, as a short low-cardinality code (see [`ToolError`]). Never
    /// sent to the client nor to the ingest: it is the span's `error.type`, is seen by
    /// [`Config::before_send`](crate::Config::before_send) and is counted per tool in
    /// [`Stats::error_reasons`](crate::Stats::error_reasons). Ignored when `is_error` is false.
    pub error_reason: Option<Cow<'static, str>>,
}

impl CallToolResult {
    /// A successful result with one text item.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::Text(text.into())], is_error: false, ..Default::default() }
    }

    /// A failed result (`isError: true`) with one text item.
    pub fn error_text(text: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::Text(text.into())], is_error: true, ..Default::default() }
    }

    /// The same result with a reason code for its failure (see [`ToolError`]).
    ///
    /// ```
    /// let r = mcpeye_runtime::CallToolResult::error_text("no such product").with_reason("unknown_product");
    /// assert_eq!(r.error_reason.as_deref(), Some("unknown_product"));
    /// assert!(!r.to_json().to_string().contains("unknown_product")); // not sent to the client
    /// ```
    pub fn with_reason(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.error_reason = Some(reason.into());
        self
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
                CallToolResult { content: vec![Content::Text(text)], structured_content: Some(m), ..Default::default() }
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
        Some(CallToolResult { content, structured_content, is_error, error_reason: None })
    }
}

/// A handler's failure with a short, low-cardinality reason code besides its message, the way
/// mature MCP servers record why they refused a call.
///
/// Return `Result<T, ToolError>` (or your own error type implementing [`ErrorReason`]): the
/// client gets a tool error (`isError: true`) with the message, exactly as for any
/// `Result<T, E: Display>`; the reason becomes the span's `error.type` (instead of the generic
/// `tool_error`), is seen by [`Config::before_send`](crate::Config::before_send), and is counted
/// per tool in [`Stats::error_reasons`](crate::Stats::error_reasons). The ingest payload is
/// unchanged: the message is its `errorMessage`.
///
/// The reason is a `&'static str` on purpose: a code such as `unknown_product` or
/// `needs_user_permission`, never a value built from the input.
///
/// ```
/// use mcpeye_runtime::ToolError;
///
/// fn refund(order: &str) -> Result<String, ToolError> {
///     if order.is_empty() {
///         return Err(ToolError::new("unknown_order", format!("no order {order:?}")));
///     }
///     Ok("refunded".into())
/// }
/// let e = refund("").unwrap_err();
/// assert_eq!((e.reason(), e.to_string().as_str()), ("unknown_order", "no order \"\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    reason: &'static str,
    message: String,
}

impl ToolError {
    /// A failure with this reason code and this message (what the client reads).
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        ToolError { reason, message: message.into() }
    }

    /// The reason code.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The message sent to the client.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// An error type that names why a call failed with a short reason code: implement it on your
/// own error enum to return `Result<T, YourError>` from a tool and have each variant's code
/// recorded (see [`ToolError`]). Its `Display` is the message the client reads.
///
/// ```
/// use std::fmt;
///
/// #[derive(Debug)]
/// enum ShopError { OutOfStock(String), NeedsPermission }
///
/// impl fmt::Display for ShopError {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         match self {
///             ShopError::OutOfStock(item) => write!(f, "{item} is out of stock"),
///             ShopError::NeedsPermission => f.write_str("ask the user for permission first"),
///         }
///     }
/// }
///
/// impl mcpeye_runtime::ErrorReason for ShopError {
///     fn reason(&self) -> &'static str {
///         match self {
///             ShopError::OutOfStock(_) => "out_of_stock",
///             ShopError::NeedsPermission => "needs_user_permission",
///         }
///     }
/// }
/// # use mcpeye_runtime::ErrorReason as _;
/// assert_eq!(ShopError::NeedsPermission.reason(), "needs_user_permission");
/// ```
pub trait ErrorReason: Display {
    /// The reason code of this error.
    fn reason(&self) -> &'static str;
}

impl ErrorReason for ToolError {
    fn reason(&self) -> &'static str {
        self.reason
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

/// Autoref dispatch between `Result<T, E: ErrorReason>`, `Result<T, E: Display>` and plain
/// returns, used by generated code. The probe is built on a concrete type, so the deepest impl
/// that applies wins: a reasoned error over any `Result` (whatever the alias the user wrote:
/// `anyhow::Result`, `io::Result`…), any `Result` over a plain value.
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

    pub struct ReasonTag;

    // One trait for both `Result` levels, so that generated code imports the same names.
    pub trait ResultKind {
        type Tag: Default;
        fn __mcpeye_kind(&self) -> Self::Tag {
            Self::Tag::default()
        }
    }
    // Generated code calls `(&&probe(&r)).__mcpeye_kind()`: method lookup tries `Self = &Probe`
    // first, then `Self = &&Probe` (autoref), then `Self = Probe` (`ValueKind`).
    impl<T, E: ErrorReason> ResultKind for &Probe<Result<T, E>> {
        type Tag = ReasonTag;
    }
    impl<T, E> ResultKind for &&Probe<Result<T, E>> {
        type Tag = ResultTag;
    }
    impl Default for ResultTag {
        fn default() -> Self {
            ResultTag
        }
    }
    impl Default for ReasonTag {
        fn default() -> Self {
            ReasonTag
        }
    }

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

    impl ReasonTag {
        pub fn finish<T: ToolValue, E: ErrorReason>(self, r: Result<T, E>) -> CallToolResult {
            match r {
                Ok(v) => v.into_call_result(),
                Err(e) => CallToolResult::error_text(e.to_string()).with_reason(e.reason()),
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
        let r: Result<String, ToolError> = Err(ToolError::new("out_of_stock", "no mugs left"));
        let out = (&&kind::probe(&r)).__mcpeye_kind().finish(r);
        assert_eq!(out, CallToolResult::error_text("no mugs left").with_reason("out_of_stock"));
        let r: Result<String, ToolError> = Ok("fine".into());
        assert_eq!((&&kind::probe(&r)).__mcpeye_kind().finish(r), CallToolResult::text("fine"));
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
            is_error: true,
            ..Default::default()
        };
        assert_eq!(r.joined_text().as_deref(), Some("a\nb"));
        assert_eq!(CallToolResult::default().joined_text(), None);
        assert_eq!(CallToolResult::from_json(&r.to_json()), Some(r.clone()));
        assert_eq!(r.to_json(), r.into_json());
    }
}
