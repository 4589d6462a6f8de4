//! [`ReportInput`]: the calls, requests and tool lists read from event logs
//! (`docs/event-log.md`) and ingest payload files, one call per `callId`.

use mcpeye_runtime::contract::RESERVED_TOOL_NAME;
use mcpeye_runtime::report::{FORMAT_VERSION, KIND_CALL, KIND_LOG, KIND_METHOD, KIND_TOOLS};
use serde_json::Value;
use std::collections::HashSet;

/// One tool call, from a log's `call` line or a payload's event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Call {
    pub call_id: Option<String>,
    pub tool: String,
    pub ts: u64,
    pub duration_ms: u64,
    pub is_error: bool,
    pub error: Option<String>,
    pub intent: Option<String>,
    /// Bytes of the `result`'s compact JSON, when it has one.
    pub result_bytes: Option<u64>,
    /// A capability request's `capability` and `context`.
    pub capability: Option<String>,
    pub context: Option<String>,
    pub session: Option<String>,
    pub conversation: Option<String>,
    pub turn: Option<String>,
    pub model: Option<String>,
    pub client: Option<String>,
    pub user: Option<String>,
    pub server_version: Option<String>,
    pub tool_hash: Option<String>,
}

impl Call {
    /// The conversation the call belongs to, for paths: the conversation handle, else the
    /// session, else the turn.
    pub fn thread(&self) -> Option<&str> {
        self.conversation.as_deref().or(self.session.as_deref()).or(self.turn.as_deref())
    }

    /// A call of a tool the server does not have (docs/wire-format.md#errors).
    pub fn is_unknown_tool(&self) -> bool {
        self.is_error && self.error.as_deref().is_some_and(|e| e.starts_with("unknown tool `"))
    }
}

/// A request of another method, from a log's `method` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LoggedMethod {
    pub method: String,
    pub target: Option<String>,
    pub is_error: bool,
}

/// One tool in a tool list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub name: String,
    pub hash: String,
    pub description: Option<String>,
}

/// A tool list, from a log's `tools` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolList {
    pub ts: u64,
    pub server_version: Option<String>,
    pub tools: Vec<Listed>,
}

/// What a report is made of, read from any number of event logs and payload files. Feed it
/// text with [`read_str`](Self::read_str) (or values with [`add_value`](Self::add_value)),
/// then make the [`Report`](crate::Report).
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// // A payload as any mcpeye SDK POSTs it…
/// input.read_str(r#"{"projectId":"p","identity":{"serverVersion":"1.0"},"events":[
///     {"callId":"a","toolName":"search","arguments":{},"isError":false,"timestamp":1,"durationMs":5}]}"#);
/// // …and event log lines, which know the session and the model.
/// input.read_str(r#"{"v":1,"kind":"call","ts":2,"callId":"b","tool":"order","session":"s1","model":"gpt-5",
///     "event":{"callId":"b","toolName":"order","arguments":{},"isError":true,"errorMessage":"out of stock","timestamp":2,"durationMs":9}}"#);
/// let report = input.report();
/// assert_eq!((report.overview.calls, report.overview.errors), (2, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    pub(crate) calls: Vec<Call>,
    pub(crate) methods: Vec<LoggedMethod>,
    pub(crate) tool_lists: Vec<ToolList>,
    seen: HashSet<String>,
    pub(crate) duplicates: usize,
    pub(crate) skipped: usize,
    pub(crate) log_lines: usize,
    pub(crate) payload_events: usize,
}

impl ReportInput {
    /// An empty input.
    ///
    /// ```
    /// let input = mcpeye_report::ReportInput::new();
    /// assert_eq!(input.calls(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a file's text: JSON Lines (event log lines, payloads, bare events), or JSON
    /// values one after the other (a JSON array of payloads, pretty-printed or not). Lines that
    /// are none of these are counted as skipped.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"[{"projectId":"p","identity":{},"events":[{"callId":"a","toolName":"search","isError":false}]}]"#);
    /// input.read_str("{\"callId\":\"b\",\"toolName\":\"order\",\"isError\":false}\nnot json");
    /// assert_eq!(input.calls(), 2);
    /// ```
    pub fn read_str(&mut self, text: &str) {
        // A stream of whole values first (a JSON array spread over lines); line by line when
        // that fails, so that one bad line costs only itself.
        let mut values = Vec::new();
        let whole = serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .try_for_each(|v| v.map(|v| values.push(v)))
            .is_ok();
        if whole {
            for v in &values {
                self.add_value(v);
            }
            return;
        }
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Value>(line) {
                Ok(v) => self.add_value(&v),
                Err(_) => self.skipped += 1,
            }
        }
    }

    /// Adds one value: a payload, an array of payloads or events, an event log line, or a
    /// bare event. Anything else is counted as skipped.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.add_value(&serde_json::json!({"callId": "a", "toolName": "search", "isError": false}));
    /// assert_eq!(input.calls(), 1);
    /// ```
    pub fn add_value(&mut self, value: &Value) {
        match value {
            Value::Array(items) => items.iter().for_each(|v| self.add_value(v)),
            Value::Object(o) if o.get("events").is_some_and(Value::is_array) => {
                let identity = o.get("identity");
                for event in value["events"].as_array().into_iter().flatten() {
                    self.payload_events += 1;
                    self.add_event(event, identity, None);
                }
            }
            Value::Object(o) if o.contains_key("kind") => self.add_log_line(value),
            Value::Object(o) if o.contains_key("toolName") => self.add_event(value, None, None),
            _ => self.skipped += 1,
        }
    }

    fn add_log_line(&mut self, line: &Value) {
        if line.get("v").and_then(Value::as_u64) != Some(u64::from(FORMAT_VERSION)) {
            self.skipped += 1;
            return;
        }
        self.log_lines += 1;
        match line["kind"].as_str() {
            Some(KIND_CALL) => {
                let event = line.get("event").cloned().unwrap_or_else(
                    || serde_json::json!({"callId": line["callId"], "toolName": line["tool"], "timestamp": line["ts"]}),
                );
                self.add_event(&event, None, Some(line));
            }
            Some(KIND_METHOD) => self.methods.push(LoggedMethod {
                method: text(line, "method").unwrap_or_default(),
                target: text(line, "target"),
                is_error: line["isError"].as_bool().unwrap_or(false),
            }),
            Some(KIND_TOOLS) => {
                let tools = line["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| {
                        Some(Listed {
                            name: text(t, "name")?,
                            hash: text(t, "hash")?,
                            description: text(t, "description"),
                        })
                    })
                    .collect();
                self.tool_lists.push(ToolList {
                    ts: line["ts"].as_u64().unwrap_or(0),
                    server_version: text(line, "serverVersion"),
                    tools,
                });
            }
            Some(KIND_LOG) => {}
            _ => {
                self.log_lines -= 1;
                self.skipped += 1;
            }
        }
    }

    /// A wire event, with the payload's identity or the log line it came in.
    fn add_event(&mut self, event: &Value, identity: Option<&Value>, line: Option<&Value>) {
        let Some(tool) = text(event, "toolName").or_else(|| line.and_then(|l| text(l, "tool"))) else {
            self.skipped += 1;
            return;
        };
        let call_id = text(event, "callId").or_else(|| line.and_then(|l| text(l, "callId")));
        if let Some(id) = &call_id {
            if !self.seen.insert(id.clone()) {
                self.duplicates += 1;
                // A log line knows more than a payload's copy of the same event.
                if let Some(line) = line {
                    if let Some(call) = self.calls.iter_mut().find(|c| c.call_id.as_ref() == Some(id)) {
                        fill_from_line(call, line);
                    }
                }
                return;
            }
        }
        let is_error = event["isError"].as_bool().unwrap_or(false);
        let arguments = &event["arguments"];
        let reserved = tool == RESERVED_TOOL_NAME && !is_error;
        let from_identity = |key: &str| identity.and_then(|i| text(i, key));
        let mut call = Call {
            call_id,
            ts: event["timestamp"].as_u64().or_else(|| line.and_then(|l| l["ts"].as_u64())).unwrap_or(0),
            duration_ms: event["durationMs"].as_u64().unwrap_or(0),
            is_error,
            error: text(event, "errorMessage"),
            intent: text(event, "intent").filter(|i| !i.trim().is_empty()),
            result_bytes: event.get("result").map(|r| r.to_string().len() as u64),
            capability: reserved.then(|| text(arguments, "capability")).flatten().filter(|c| !c.trim().is_empty()),
            context: reserved.then(|| text(arguments, "context")).flatten().filter(|c| !c.trim().is_empty()),
            user: text(event, "userId").or_else(|| text(event, "userEmail")).or_else(|| from_identity("userId")),
            client: from_identity("client"),
            server_version: from_identity("serverVersion"),
            tool,
            ..Call::default()
        };
        if let Some(line) = line {
            fill_from_line(&mut call, line);
        }
        self.calls.push(call);
    }

    /// How many distinct calls were read.
    ///
    /// ```
    /// // A payload sent twice (delivery is at least once) counts its call once.
    /// let payload = r#"{"projectId":"p","identity":{},"events":[{"callId":"a","toolName":"search","isError":false}]}"#;
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(payload);
    /// input.read_str(payload);
    /// assert_eq!(input.calls(), 1);
    /// ```
    pub fn calls(&self) -> usize {
        self.calls.len()
    }
}

/// What only a log line knows.
fn fill_from_line(call: &mut Call, line: &Value) {
    let fields: [(&str, &mut Option<String>); 7] = [
        ("session", &mut call.session),
        ("conversation", &mut call.conversation),
        ("turn", &mut call.turn),
        ("model", &mut call.model),
        ("client", &mut call.client),
        ("serverVersion", &mut call.server_version),
        ("toolHash", &mut call.tool_hash),
    ];
    for (key, slot) in fields {
        if let Some(v) = text(line, key) {
            *slot = Some(v);
        }
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_arrays_log_lines_and_events_are_read_once_per_call_id() {
        let mut input = ReportInput::new();
        let payload = r#"{"projectId":"p","identity":{"client":"cli/1","serverVersion":"2.0","userId":"u1"},"events":[{"callId":"a","toolName":"search","arguments":{},"isError":false,"timestamp":5,"durationMs":3,"result":{"n":1}}]}"#;
        input.read_str(&format!("{payload}\n{payload}\nnot json\n"));
        assert_eq!((input.calls(), input.duplicates, input.skipped), (1, 1, 1));
        let call = &input.calls[0];
        assert_eq!((call.client.as_deref(), call.server_version.as_deref()), (Some("cli/1"), Some("2.0")));
        assert_eq!((call.user.as_deref(), call.result_bytes), (Some("u1"), Some(7)));
        // The log's copy of the same call adds its session and model.
        input.read_str(r#"{"v":1,"kind":"call","ts":5,"callId":"a","tool":"search","session":"s","model":"m","event":{"callId":"a","toolName":"search","isError":false}}"#);
        assert_eq!((input.calls(), input.duplicates), (1, 2));
        assert_eq!((input.calls[0].session.as_deref(), input.calls[0].model.as_deref()), (Some("s"), Some("m")));
        // A pretty-printed JSON array of payloads.
        let array = r#"[
          {"projectId": "p", "identity": {}, "events": [
            {"callId": "b", "toolName": "mcpeye_request_capability", "arguments": {"capability": "CSV", "context": "tax"}, "isError": false}
          ]}
        ]"#;
        input.read_str(array);
        assert_eq!(input.calls[1].capability.as_deref(), Some("CSV"));
        assert_eq!(input.calls[1].context.as_deref(), Some("tax"));
        // Lines of an unknown version or kind are skipped; tool lists and methods are kept.
        input.read_str(
            "{\"v\":2,\"kind\":\"call\"}\n{\"v\":1,\"kind\":\"weather\"}\n\
             {\"v\":1,\"kind\":\"tools\",\"ts\":1,\"serverVersion\":\"2.0\",\"tools\":[{\"name\":\"search\",\"hash\":\"abc\",\"description\":\"Find.\"}]}\n\
             {\"v\":1,\"kind\":\"method\",\"ts\":1,\"method\":\"resources/read\",\"target\":\"docs://x\",\"isError\":false}\n",
        );
        assert_eq!(input.skipped, 3);
        assert_eq!(input.tool_lists[0].tools[0].hash, "abc");
        assert_eq!(input.methods[0].target.as_deref(), Some("docs://x"));
    }
}
