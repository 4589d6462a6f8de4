//! Tool results: the MCP `CallToolResult` and the conversion of handler return values into it.

use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::{self, Display};

/// One item of a tool result's `content` array (and of a sampling message).
///
/// ```
/// use mcpeye::{CallToolResult, Content, ResourceLink};
///
/// let png: &[u8] = &[0x89, b'P', b'N', b'G'];
/// let result = CallToolResult::new(vec![
///     Content::text("Here is the chart and the data behind it:"),
///     Content::image(png, "image/png"),
///     Content::resource_text("file:///reports/q3.csv", "text/csv", "month,total\nJuly,12\n"),
///     Content::resource_link(ResourceLink::new("file:///reports/q3.pdf", "q3.pdf").mime_type("application/pdf")),
/// ]);
/// let json = result.to_json();
/// assert_eq!(json["content"][1], serde_json::json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"}));
/// assert_eq!(json["content"][2]["resource"]["uri"], "file:///reports/q3.csv");
/// assert_eq!(json["content"][3]["type"], "resource_link");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// A `{"type":"text","text":…}` item.
    Text(String),
    /// A `{"type":"image","data":…,"mimeType":…}` item; `data` is base64.
    Image {
        /// The image, base64-encoded.
        data: String,
        /// Its MIME type (`image/png`…).
        mime_type: String,
    },
    /// A `{"type":"audio","data":…,"mimeType":…}` item; `data` is base64.
    Audio {
        /// The audio, base64-encoded.
        data: String,
        /// Its MIME type (`audio/wav`…).
        mime_type: String,
    },
    /// A `{"type":"resource","resource":{…}}` item: a resource's contents, embedded.
    Resource(EmbeddedResource),
    /// A `{"type":"resource_link",…}` item: a resource the client may read.
    ResourceLink(ResourceLink),
    /// Any other content item, kept as the JSON object it is.
    Other(Value),
}

/// The contents of an embedded resource ([`Content::Resource`]): text or a base64 blob.
///
/// ```
/// use mcpeye::{Content, ResourceBody};
///
/// let Content::Resource(resource) = Content::resource_text("file:///notes.md", "text/markdown", "# Notes") else {
///     unreachable!()
/// };
/// assert_eq!(resource.uri, "file:///notes.md");
/// assert_eq!(resource.body, ResourceBody::Text("# Notes".into()));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its text (`Ok`) or its bytes, base64-encoded (`Err`: a `blob`).
    pub body: ResourceBody,
}

/// What an [`EmbeddedResource`] holds.
///
/// ```
/// use mcpeye::{Content, ResourceBody};
///
/// let Content::Resource(resource) = Content::resource_blob("file:///logo.png", "image/png", [0x89, b'P']) else {
///     unreachable!()
/// };
/// assert_eq!(resource.body, ResourceBody::Blob("iVA=".into())); // base64
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceBody {
    /// `text`.
    Text(String),
    /// `blob`: the bytes, base64-encoded.
    Blob(String),
}

/// A link to a resource ([`Content::ResourceLink`]).
///
/// ```
/// use mcpeye::{CallToolResult, Content, ResourceLink};
///
/// let link = ResourceLink::new("file:///reports/q3.pdf", "q3.pdf").title("Third quarter").mime_type("application/pdf");
/// let result = CallToolResult::new(vec![Content::resource_link(link)]);
/// assert_eq!(result.to_json()["content"][0]["type"], "resource_link");
/// assert_eq!(result.to_json()["content"][0]["title"], "Third quarter");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its size in bytes.
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri`, named `name`.
    ///
    /// ```
    /// let link = mcpeye::ResourceLink::new("file:///q3.pdf", "q3.pdf");
    /// assert_eq!((link.uri.as_str(), link.name.as_str()), ("file:///q3.pdf", "q3.pdf"));
    /// ```
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink { uri: uri.into(), name: name.into(), title: None, description: None, mime_type: None, size: None }
    }

    /// With a title.
    ///
    /// ```
    /// assert_eq!(mcpeye::ResourceLink::new("file:///q3.pdf", "q3.pdf").title("Q3").title.as_deref(), Some("Q3"));
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With a description.
    ///
    /// ```
    /// let link = mcpeye::ResourceLink::new("file:///q3.pdf", "q3.pdf").description("Third-quarter figures");
    /// assert_eq!(mcpeye::Content::resource_link(link).to_json()["description"], "Third-quarter figures");
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a MIME type.
    ///
    /// ```
    /// let link = mcpeye::ResourceLink::new("file:///q3.pdf", "q3.pdf").mime_type("application/pdf");
    /// assert_eq!(mcpeye::Content::resource_link(link).to_json()["mimeType"], "application/pdf");
    /// ```
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With a size in bytes.
    ///
    /// ```
    /// let link = mcpeye::ResourceLink::new("file:///q3.pdf", "q3.pdf").size(48_213);
    /// assert_eq!(mcpeye::Content::resource_link(link).to_json()["size"], 48_213);
    /// ```
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }
}

impl Content {
    /// A text content item.
    ///
    /// ```
    /// assert_eq!(mcpeye::Content::text("hi").to_json(), serde_json::json!({"type": "text", "text": "hi"}));
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// An image from its bytes (base64-encoded here).
    ///
    /// ```
    /// let image = mcpeye::Content::image([0xff, 0xd8], "image/jpeg");
    /// assert_eq!(image.to_json()["data"], "/9g=");
    /// ```
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image { data: base64(bytes.as_ref()), mime_type: mime_type.into() }
    }

    /// An image already base64-encoded.
    ///
    /// ```
    /// let image = mcpeye::Content::image_base64("/9g=", "image/jpeg");
    /// assert_eq!(image, mcpeye::Content::image([0xff, 0xd8], "image/jpeg"));
    /// ```
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image { data: data.into(), mime_type: mime_type.into() }
    }

    /// Audio from its bytes (base64-encoded here).
    ///
    /// ```
    /// let audio = mcpeye::Content::audio(b"RIFF", "audio/wav");
    /// assert_eq!(audio.to_json()["type"], "audio");
    /// ```
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio { data: base64(bytes.as_ref()), mime_type: mime_type.into() }
    }

    /// Audio already base64-encoded.
    ///
    /// ```
    /// let audio = mcpeye::Content::audio_base64("UklGRg==", "audio/wav");
    /// assert_eq!(audio.to_json()["mimeType"], "audio/wav");
    /// ```
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio { data: data.into(), mime_type: mime_type.into() }
    }

    /// An embedded text resource.
    ///
    /// ```
    /// let item = mcpeye::Content::resource_text("file:///notes.md", "text/markdown", "# Notes");
    /// assert_eq!(item.to_json()["resource"]["text"], "# Notes");
    /// ```
    pub fn resource_text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        Content::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Text(text.into()),
        })
    }

    /// An embedded binary resource, from its bytes (base64-encoded here).
    ///
    /// ```
    /// let item = mcpeye::Content::resource_blob("file:///a.bin", "application/octet-stream", [1, 2, 3]);
    /// assert_eq!(item.to_json()["resource"]["blob"], "AQID");
    /// ```
    pub fn resource_blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Content::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(base64(bytes.as_ref())),
        })
    }

    /// A link to a resource.
    ///
    /// ```
    /// use mcpeye::{Content, ResourceLink};
    ///
    /// let item = Content::resource_link(ResourceLink::new("file:///q3.pdf", "q3.pdf"));
    /// assert_eq!(item.to_json()["uri"], "file:///q3.pdf");
    /// ```
    pub fn resource_link(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }

    /// The text of a text item.
    ///
    /// ```
    /// assert_eq!(mcpeye::Content::text("hi").as_text(), Some("hi"));
    /// assert_eq!(mcpeye::Content::image([0], "image/png").as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The item as MCP JSON.
    ///
    /// ```
    /// let json = mcpeye::Content::text("hi").to_json();
    /// assert_eq!(json["type"], "text");
    /// ```
    pub fn to_json(&self) -> Value {
        self.clone().into_json()
    }

    /// Like [`to_json`](Self::to_json), moving the strings instead of copying them.
    ///
    /// ```
    /// let json = mcpeye::Content::text("hi").into_json();
    /// assert_eq!(json["text"], "hi");
    /// ```
    pub fn into_json(self) -> Value {
        self.into_json_with(Value::String)
    }

    /// The item as recorded: base64 payloads (`data`, `blob`) become the truncation marker of
    /// their size, without being copied (docs/wire-format.md#caps).
    pub(crate) fn into_record_json(self) -> Value {
        match self {
            Content::Other(v) => record_other(v),
            typed => typed.into_json_with(|data| binary_marker(&data)),
        }
    }

    fn into_json_with(self, binary: impl Fn(String) -> Value) -> Value {
        let mut m = Map::with_capacity(3);
        match self {
            Content::Text(t) => {
                m.insert("type".into(), Value::String("text".into()));
                m.insert("text".into(), Value::String(t));
            }
            Content::Image { data, mime_type } => binary_item(&mut m, "image", data, mime_type, binary),
            Content::Audio { data, mime_type } => binary_item(&mut m, "audio", data, mime_type, binary),
            Content::Resource(r) => {
                m.insert("type".into(), Value::String("resource".into()));
                let mut inner = Map::with_capacity(3);
                inner.insert("uri".into(), Value::String(r.uri));
                if let Some(mime) = r.mime_type {
                    inner.insert("mimeType".into(), Value::String(mime));
                }
                match r.body {
                    ResourceBody::Text(t) => inner.insert("text".into(), Value::String(t)),
                    ResourceBody::Blob(b) => inner.insert("blob".into(), binary(b)),
                };
                m.insert("resource".into(), Value::Object(inner));
            }
            Content::ResourceLink(l) => {
                m.insert("type".into(), Value::String("resource_link".into()));
                m.insert("uri".into(), Value::String(l.uri));
                m.insert("name".into(), Value::String(l.name));
                for (key, v) in [("title", l.title), ("description", l.description), ("mimeType", l.mime_type)] {
                    if let Some(v) = v {
                        m.insert(key.into(), Value::String(v));
                    }
                }
                if let Some(size) = l.size {
                    m.insert("size".into(), Value::from(size));
                }
            }
            Content::Other(v) => return v,
        }
        Value::Object(m)
    }

    /// Reads a content item; typed when it has exactly the keys of its type, else [`Content::Other`].
    ///
    /// ```
    /// use mcpeye::Content;
    ///
    /// assert_eq!(Content::from_json(&serde_json::json!({"type": "text", "text": "hi"})), Some(Content::text("hi")));
    /// assert!(matches!(Content::from_json(&serde_json::json!({"type": "map", "svg": "…"})), Some(Content::Other(_))));
    /// ```
    pub fn from_json(v: &Value) -> Option<Content> {
        let obj = v.as_object()?;
        let str_of = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
        let typed = match obj.get("type").and_then(Value::as_str)? {
            "text" if obj.len() == 2 => str_of(obj, "text").map(Content::Text),
            kind @ ("image" | "audio") if obj.len() == 3 => match (str_of(obj, "data"), str_of(obj, "mimeType")) {
                (Some(data), Some(mime_type)) if kind == "image" => Some(Content::Image { data, mime_type }),
                (Some(data), Some(mime_type)) => Some(Content::Audio { data, mime_type }),
                _ => None,
            },
            "resource" if obj.len() == 2 => obj.get("resource").and_then(Value::as_object).and_then(|r| {
                let body = match (str_of(r, "text"), str_of(r, "blob")) {
                    (Some(t), None) => ResourceBody::Text(t),
                    (None, Some(b)) => ResourceBody::Blob(b),
                    _ => return None,
                };
                let known = 2 + usize::from(r.contains_key("mimeType"));
                let uri = str_of(r, "uri")?;
                (r.len() == known && r.get("mimeType").is_none_or(Value::is_string))
                    .then(|| Content::Resource(EmbeddedResource { uri, mime_type: str_of(r, "mimeType"), body }))
            }),
            "resource_link" => resource_link(obj),
            _ => None,
        };
        Some(typed.unwrap_or_else(|| Content::Other(v.clone())))
    }
}

/// A `resource_link` item with only the keys [`ResourceLink`] has, of the right types.
fn resource_link(obj: &Map<String, Value>) -> Option<Content> {
    let mut link = ResourceLink::new(obj.get("uri")?.as_str()?, obj.get("name")?.as_str()?);
    for (key, v) in obj {
        match (key.as_str(), v) {
            ("type" | "uri" | "name", _) => {}
            ("title", Value::String(s)) => link.title = Some(s.clone()),
            ("description", Value::String(s)) => link.description = Some(s.clone()),
            ("mimeType", Value::String(s)) => link.mime_type = Some(s.clone()),
            ("size", Value::Number(n)) => link.size = Some(n.as_u64()?),
            _ => return None,
        }
    }
    Some(Content::ResourceLink(link))
}

fn binary_item(
    m: &mut Map<String, Value>,
    kind: &str,
    data: String,
    mime_type: String,
    binary: impl Fn(String) -> Value,
) {
    m.insert("type".into(), Value::String(kind.into()));
    m.insert("data".into(), binary(data));
    m.insert("mimeType".into(), Value::String(mime_type));
}

/// The truncation marker of a base64 string: `{"[truncated]":true,"bytes":N}` with `N` the
/// length of its JSON (the string and its quotes; base64 needs no escapes).
fn binary_marker(data: &str) -> Value {
    crate::redact::truncated_marker(crate::json::string_len(data))
}

/// A content item's JSON as recorded (whoever made it: rmcp's results too): the base64
/// payloads of image, audio and embedded resource items become their truncation marker.
pub(crate) fn record_content_item(v: Value) -> Value {
    record_other(v)
}

/// An untyped content item as recorded: the base64 payloads of image, audio and embedded
/// resource items become their truncation marker, the rest is kept.
fn record_other(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        match m.get("type").and_then(Value::as_str) {
            Some("image" | "audio") => {
                if let Some(Value::String(data)) = m.get("data") {
                    let marker = binary_marker(data);
                    m.insert("data".into(), marker);
                }
            }
            Some("resource") => {
                if let Some(Value::Object(r)) = m.get_mut("resource") {
                    if let Some(Value::String(blob)) = r.get("blob") {
                        let marker = binary_marker(blob);
                        r.insert("blob".into(), marker);
                    }
                }
            }
            _ => {}
        }
    }
    v
}

/// Standard base64 with padding (RFC 4648 §4), as MCP's `data` and `blob` fields use.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The result of a tool call as MCP defines it (`tools/call` result).
///
/// A handler may return this type to control the result exactly; it reaches the client
/// unchanged, and `is_error: true` is honoured (the call is recorded as an error whose message
/// is the text of its text items).
///
/// ```
/// use mcpeye::CallToolResult;
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
    /// A successful result with these content items (text, images, audio, resources…).
    ///
    /// ```
    /// use mcpeye::{CallToolResult, Content};
    ///
    /// /// Draw a chart.
    /// #[mcpeye::tool]
    /// fn chart(
    ///     /// The chart's title.
    ///     title: String,
    /// ) -> CallToolResult {
    ///     let png = [0x89, b'P', b'N', b'G']; // the image's bytes, in a real tool
    ///     CallToolResult::new(vec![Content::text(title), Content::image(png, "image/png")])
    /// }
    /// # fn main() {
    /// let out = mcpeye::tools![chart].call("chart", serde_json::json!({"title": "Sales"}));
    /// assert_eq!(out["content"][1]["type"], "image");
    /// # }
    /// ```
    pub fn new(content: Vec<Content>) -> Self {
        CallToolResult { content, structured_content: None, is_error: false, error_reason: None }
    }

    /// A failed result (`isError: true`) with these content items.
    ///
    /// ```
    /// use mcpeye::{CallToolResult, Content};
    ///
    /// let r = CallToolResult::error(vec![Content::text("quota exceeded"), Content::text("retry after 60 s")]);
    /// assert_eq!(r.joined_text().as_deref(), Some("quota exceeded\nretry after 60 s"));
    /// assert!(r.is_error);
    /// ```
    pub fn error(content: Vec<Content>) -> Self {
        CallToolResult { content, structured_content: None, is_error: true, error_reason: None }
    }

    /// With `structuredContent` (give the tool an output schema it conforms to: a handler that
    /// returns a `Serialize + JsonSchema` struct gets both without this).
    ///
    /// ```
    /// use mcpeye::CallToolResult;
    ///
    /// let data = serde_json::json!({"celsius": 21.5});
    /// let r = CallToolResult::text("21.5 °C").with_structured_content(data.as_object().unwrap().clone());
    /// assert_eq!(r.to_json()["structuredContent"]["celsius"], 21.5);
    /// ```
    pub fn with_structured_content(mut self, structured: Map<String, Value>) -> Self {
        self.structured_content = Some(structured);
        self
    }

    /// A successful result with one text item.
    ///
    /// ```
    /// let r = mcpeye::CallToolResult::text("done");
    /// assert_eq!(r.to_json(), serde_json::json!({"content": [{"type": "text", "text": "done"}]}));
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        // Every field written: no empty result is built to be overwritten.
        CallToolResult {
            content: vec![Content::Text(text.into())],
            structured_content: None,
            is_error: false,
            error_reason: None,
        }
    }

    /// A failed result (`isError: true`) with one text item.
    ///
    /// ```
    /// let r = mcpeye::CallToolResult::error_text("the warehouse is closed");
    /// assert_eq!(r.to_json()["isError"], true);
    /// ```
    pub fn error_text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::Text(text.into())],
            structured_content: None,
            is_error: true,
            error_reason: None,
        }
    }

    /// The same result with a reason code for its failure (see [`ToolError`]).
    ///
    /// ```
    /// let r = mcpeye::CallToolResult::error_text("no such product").with_reason("unknown_product");
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
    ///
    /// ```
    /// let r = mcpeye::CallToolResult::json(serde_json::json!({"total": 3}));
    /// assert_eq!(r.to_json()["structuredContent"]["total"], 3);
    /// assert_eq!(r.to_json()["content"][0]["text"], r#"{"total":3}"#);
    /// ```
    pub fn json(value: Value) -> Self {
        match value {
            Value::Null => CallToolResult::default(),
            Value::String(s) => CallToolResult::text(s),
            Value::Object(m) => {
                // Serialising a map of `Value`s cannot fail.
                let text = serde_json::to_string(&m).unwrap_or_default();
                CallToolResult {
                    content: vec![Content::Text(text)],
                    structured_content: Some(m),
                    is_error: false,
                    error_reason: None,
                }
            }
            other => CallToolResult::text(other.to_string()),
        }
    }

    /// The `text` of the text items joined with `"\n"`, or `None` when there are none.
    ///
    /// ```
    /// assert_eq!(mcpeye::CallToolResult::text("a").joined_text().as_deref(), Some("a"));
    /// assert_eq!(mcpeye::CallToolResult::new(vec![]).joined_text(), None);
    /// ```
    pub fn joined_text(&self) -> Option<String> {
        let mut texts = self.content.iter().filter_map(Content::as_text);
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
    ///
    /// ```
    /// let r = mcpeye::CallToolResult::text("ok");
    /// assert_eq!(r.to_json().to_string(), r#"{"content":[{"type":"text","text":"ok"}]}"#);
    /// ```
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
    ///
    /// ```
    /// let answer = mcpeye::CallToolResult::error_text("nope").into_json();
    /// assert_eq!(answer["isError"], true);
    /// ```
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

    /// The JSON recorded for this result: [`into_json`](Self::into_json), with the base64
    /// payloads of images, audio and embedded blobs replaced by the truncation marker.
    pub(crate) fn into_record_json(self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("content".into(), Value::Array(self.content.into_iter().map(Content::into_record_json).collect()));
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
    ///
    /// ```
    /// use mcpeye::CallToolResult;
    ///
    /// let r = CallToolResult::from_json(&serde_json::json!({"content": [{"type": "text", "text": "hi"}]})).unwrap();
    /// assert_eq!(r, CallToolResult::text("hi"));
    /// ```
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
/// use mcpeye::ToolError;
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
    ///
    /// ```
    /// /// Refund an order.
    /// #[mcpeye::tool]
    /// fn refund(
    ///     /// Order number.
    ///     order: u64,
    /// ) -> Result<String, mcpeye::ToolError> {
    ///     if order == 0 {
    ///         return Err(mcpeye::ToolError::new("unknown_order", "no order 0"));
    ///     }
    ///     Ok(format!("refunded {order}"))
    /// }
    /// # fn main() {
    /// assert_eq!(mcpeye::tools![refund].call("refund", serde_json::json!({"order": 0}))["content"][0]["text"], "no order 0");
    /// # }
    /// ```
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        ToolError { reason, message: message.into() }
    }

    /// The reason code.
    ///
    /// ```
    /// assert_eq!(mcpeye::ToolError::new("quota", "over the daily quota").reason(), "quota");
    /// ```
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The message sent to the client.
    ///
    /// ```
    /// assert_eq!(mcpeye::ToolError::new("quota", "over the daily quota").message(), "over the daily quota");
    /// ```
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
/// impl mcpeye::ErrorReason for ShopError {
///     fn reason(&self) -> &'static str {
///         match self {
///             ShopError::OutOfStock(_) => "out_of_stock",
///             ShopError::NeedsPermission => "needs_user_permission",
///         }
///     }
/// }
/// # use mcpeye::ErrorReason as _;
/// assert_eq!(ShopError::NeedsPermission.reason(), "needs_user_permission");
/// ```
pub trait ErrorReason: Display {
    /// The reason code of this error.
    ///
    /// ```
    /// fn code(error: &impl mcpeye::ErrorReason) -> &'static str {
    ///     error.reason()
    /// }
    /// assert_eq!(code(&mcpeye::ToolError::new("quota", "over the daily quota")), "quota");
    /// ```
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
///
/// ```
/// use mcpeye::ToolValue;
///
/// #[derive(serde::Serialize)]
/// struct Weather {
///     celsius: f64,
/// }
///
/// let result = Weather { celsius: 21.5 }.into_call_result().to_json();
/// assert_eq!(result["structuredContent"]["celsius"], 21.5);
/// assert_eq!("sunny".to_owned().into_call_result().to_json()["content"][0]["text"], "sunny");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool: it does not implement `serde::Serialize`",
    label = "this return type cannot become a tool result",
    note = "return `String`, `()`, a type that implements `serde::Serialize` (`#[derive(serde::Serialize)]`), `mcpeye::CallToolResult`, or `Result<T, E>` of those with `E: Display`"
)]
pub trait ToolValue {
    /// Converts the value into the result sent to the client.
    ///
    /// ```
    /// use mcpeye::ToolValue;
    /// assert_eq!(().into_call_result().to_json()["content"], serde_json::json!([]));
    /// ```
    fn into_call_result(self) -> CallToolResult;
}

// Not recommended either: the note names it, without pointing into mcpeye's source.
#[diagnostic::do_not_recommend]
impl ToolValue for CallToolResult {
    fn into_call_result(self) -> CallToolResult {
        self
    }
}

// Not recommended: a type that is neither gets `ToolValue`'s message, not serde's list of every
// `Serialize` type.
#[diagnostic::do_not_recommend]
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

    #[derive(Clone, Copy)]
    pub struct ResultTag;
    #[derive(Clone, Copy)]
    pub struct ValueTag;
    #[derive(Clone, Copy)]
    pub struct ReasonTag;

    /// The error side of a plain return, which has none. Not visibly empty outside this crate
    /// (a private field), so generated code's `Err` arm is not linted as unreachable.
    pub struct NoError(std::convert::Infallible);

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

    // The tags only split a return into its value and its error; the checks on the user's types
    // are made by the generated code itself (`ToolValue::into_call_result(v)`, `&e as &dyn
    // Display`), so that a failing check is an obligation of a public trait on the return type's
    // token, with no note naming these hidden items.
    impl ResultTag {
        pub fn split<T, E>(self, r: Result<T, E>) -> Result<T, E> {
            r
        }
        pub fn error<E>(self, text: &dyn Display, _: &E) -> CallToolResult {
            CallToolResult::error_text(text.to_string())
        }
    }

    impl ReasonTag {
        pub fn split<T, E>(self, r: Result<T, E>) -> Result<T, E> {
            r
        }
        // `E: ErrorReason` holds whenever this tag is chosen (it is what chooses it).
        pub fn error<E: ErrorReason>(self, text: &dyn Display, e: &E) -> CallToolResult {
            CallToolResult::error_text(text.to_string()).with_reason(e.reason())
        }
    }

    impl ValueTag {
        pub fn split<T>(self, v: T) -> Result<T, NoError> {
            Ok(v)
        }
        pub fn error(self, _: &dyn Display, e: &NoError) -> CallToolResult {
            match e.0 {}
        }
    }

    impl Display for NoError {
        fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self.0 {}
        }
    }
}

/// Autoref dispatch that finds the output schema of a handler's return type, used by generated
/// code: the schema of `T` for `Result<T, E>` or `T` when `T: Serialize + JsonSchema`, else none.
/// Probed on the concrete return type as `(&&&&Returns::<R>::new())`, most specific impl first
/// (`&&&Returns<Result<T, E>>`).
#[doc(hidden)]
pub mod output {
    use schemars::{JsonSchema, Schema};
    use serde::Serialize;
    use std::marker::PhantomData;

    pub struct Returns<T>(PhantomData<T>);

    impl<T> Returns<T> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Returns(PhantomData)
        }
    }

    fn schema_of<T: JsonSchema>() -> Option<Schema> {
        Some(crate::schema::generate::<T>())
    }

    pub trait OutputSchema {
        fn __mcpeye_output_schema(&self) -> Option<Schema>;
    }
    impl<T: Serialize + JsonSchema, E> OutputSchema for &&&Returns<Result<T, E>> {
        fn __mcpeye_output_schema(&self) -> Option<Schema> {
            schema_of::<T>()
        }
    }

    pub trait OutputNone {
        fn __mcpeye_output_schema(&self) -> Option<Schema> {
            None
        }
    }
    impl<T, E> OutputNone for &&Returns<Result<T, E>> {}

    pub trait OutputValueSchema {
        fn __mcpeye_output_schema(&self) -> Option<Schema>;
    }
    impl<T: Serialize + JsonSchema> OutputValueSchema for &Returns<T> {
        fn __mcpeye_output_schema(&self) -> Option<Schema> {
            schema_of::<T>()
        }
    }

    pub trait OutputValueNone {
        fn __mcpeye_output_schema(&self) -> Option<Schema> {
            None
        }
    }
    impl<T> OutputValueNone for Returns<T> {}
}

#[cfg(test)]
mod tests {
    use super::kind::{ResultKind as _, ValueKind as _};
    use super::*;

    fn finish_any<R: ToolValue>(r: R) -> CallToolResult {
        r.into_call_result()
    }

    /// What generated code does with a handler's return value.
    macro_rules! finish {
        ($r:expr) => {{
            let r = $r;
            let tag = (&&kind::probe(&r)).__mcpeye_kind();
            match tag.split(r) {
                Ok(v) => ToolValue::into_call_result(v),
                Err(e) => tag.error(&e as &dyn Display, &e),
            }
        }};
    }

    #[test]
    fn kinds_dispatch() {
        let r: Result<String, String> = Err("boom".into());
        let out = finish!(r);
        assert_eq!(out, CallToolResult::error_text("boom"));
        let r: Result<String, ToolError> = Err(ToolError::new("out_of_stock", "no mugs left"));
        let out = finish!(r);
        assert_eq!(out, CallToolResult::error_text("no mugs left").with_reason("out_of_stock"));
        let r: Result<String, ToolError> = Ok("fine".into());
        assert_eq!(finish!(r), CallToolResult::text("fine"));
        assert_eq!(finish!(7u32), CallToolResult::json(serde_json::json!(7)));
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
    #[allow(clippy::needless_borrow)] // autoref dispatch: the borrows choose the impl
    fn output_schemas_come_from_serializable_schema_types() {
        use super::output::*;
        #[derive(Serialize, schemars::JsonSchema)]
        struct Forecast {
            /// Degrees.
            temp: f64,
        }
        #[derive(Serialize)]
        struct Plain {}
        let of_result = (&&&&Returns::<Result<Forecast, String>>::new()).__mcpeye_output_schema();
        assert_eq!(of_result.unwrap().get("type").unwrap(), "object");
        assert!((&&&&Returns::<Forecast>::new()).__mcpeye_output_schema().is_some());
        assert!((&&&&Returns::<Result<Plain, String>>::new()).__mcpeye_output_schema().is_none());
        assert!((&&&&Returns::<Plain>::new()).__mcpeye_output_schema().is_none());
        assert!((&&&&Returns::<CallToolResult>::new()).__mcpeye_output_schema().is_none());
        let string = (&&&&Returns::<String>::new()).__mcpeye_output_schema().unwrap();
        assert_eq!(crate::schema::output_schema(Some(string)), None, "only objects get an outputSchema");
        let unit = (&&&&Returns::<()>::new()).__mcpeye_output_schema();
        assert_eq!(crate::schema::output_schema(unit), None);
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (raw, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), b64);
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn typed_content_round_trips_and_binary_is_recorded_as_a_marker() {
        let r = CallToolResult::new(vec![
            Content::text("t"),
            Content::image(b"abc", "image/png"),
            Content::audio_base64("UklGRg==", "audio/wav"),
            Content::resource_text("test://a", "text/plain", "hello"),
            Content::resource_blob("test://b", "image/png", [1u8, 2, 3]),
            Content::resource_link(ResourceLink::new("test://c", "c").title("C").size(3)),
            Content::Other(
                serde_json::json!({"type": "image", "data": "QUJD", "mimeType": "image/gif", "annotations": {"priority": 1}}),
            ),
        ]);
        let json = r.to_json();
        assert_eq!(CallToolResult::from_json(&json), Some(r.clone()));
        assert_eq!(
            json["content"][4]["resource"],
            serde_json::json!({"uri": "test://b", "mimeType": "image/png", "blob": "AQID"})
        );
        assert_eq!(
            json["content"][5],
            serde_json::json!({"type": "resource_link", "uri": "test://c", "name": "c", "title": "C", "size": 3})
        );
        let recorded = r.into_record_json();
        let marker = |n: u64| serde_json::json!({"[truncated]": true, "bytes": n});
        assert_eq!(recorded["content"][1]["data"], marker(6));
        assert_eq!(recorded["content"][2]["data"], marker(10));
        assert_eq!(recorded["content"][3]["resource"]["text"], "hello");
        assert_eq!(recorded["content"][4]["resource"]["blob"], marker(6));
        assert_eq!(recorded["content"][6]["data"], marker(6));
        assert_eq!(recorded["content"][6]["annotations"]["priority"], 1);
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
