//! What the proxy does to each JSON-RPC message between the client and the server: almost
//! always nothing (the line is forwarded as it came, byte for byte); `tools/list` results gain
//! `mcpeyeIntent` and the reserved tool (and the feedback tool, with `--feedback`), `tools/call`
//! requests lose `mcpeyeIntent` and are recorded from request to answer through the runtime's
//! capture path (`mcpeye_runtime::forwarded`), mcpeye's own tools are answered here, and the
//! other methods the runtime records are noted.

use mcpeye_runtime::contract::{FEEDBACK_TOOL_NAME, INTENT_PARAM_NAME, RESERVED_TOOL_NAME};
use mcpeye_runtime::forwarded::{
    self, answer_feedback_tool, answer_reserved_tool, feedback_descriptor, new_session_id, note_tool_list,
    record_unknown_tool, reserved_descriptor, ForwardedCall, ForwardedMethod,
};
use mcpeye_runtime::{CallOutcome, ClientInfo, Origin, RequestId, TraceContext, Tracker, Transport};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// `_meta` keys of MCP 2026-07-28 naming a request's client and protocol version.
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The first protocol version without the `initialize` handshake (and its session).
const STATELESS_ERA: &str = "2026-07-28";

/// The JSON-RPC error a request still pending gets when the server goes away.
pub const SERVER_GONE_CODE: i64 = -32603;

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Forward the line as it came.
    Forward,
    /// Forward this instead (the line, changed).
    Replace(Vec<u8>),
    /// Send this back where the line came from, and forward nothing (mcpeye's own tools).
    Answer(Vec<u8>),
    /// Forward nothing (a line from the server that is not JSON).
    Drop,
}

/// The state both directions share: the client's handshake, the requests waiting for their
/// answer, the tool list as the client was given it.
pub struct Relay {
    tracker: Tracker,
    /// How the client reaches the proxy (the calls' `Origin::transport`).
    transport: Transport,
    /// Whether the feedback tool is listed and answered (`--feedback`).
    feedback: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The client of the `initialize` handshake (before MCP 2026-07-28).
    client: Option<Arc<ClientInfo>>,
    /// One id per handshake, as rmcp's stdio sessions get.
    session: Option<Arc<str>>,
    /// The client's requests waiting for the server's answer, by id (its JSON text).
    pending: HashMap<String, Pending>,
    /// The tool names of the last complete `tools/list`; empty before one.
    listed: HashSet<String>,
    /// Of those, the tools that declare `mcpeyeIntent` themselves (they own it).
    declares_intent: HashSet<String>,
    /// Whether the server has a tool named like the reserved one (then it is the server's).
    server_has_reserved: bool,
    /// Whether the server has a tool named like the feedback tool (then it is the server's).
    server_has_feedback: bool,
    /// The pages of a paginated `tools/list` so far, as the client got them.
    pages: Vec<Value>,
}

enum Pending {
    ToolsList {
        first_page: bool,
        watch: Option<ForwardedMethod>,
    },
    Call(Box<PendingCall>),
    Method(ForwardedMethod),
    /// Not recorded, but answered by the proxy if the server goes away.
    Other,
}

struct PendingCall {
    call: ForwardedCall,
    name: String,
    origin: Origin,
    /// The `mcpeyeIntent` taken out, for the record of a tool the server does not have.
    intent: Option<Value>,
    /// Whether the tool was in the last tool list (or no list was seen).
    known: bool,
}

impl Relay {
    pub fn new(tracker: Tracker, transport: Transport) -> Relay {
        Relay { tracker, transport, feedback: false, state: Mutex::new(State::default()) }
    }

    /// The relay with the feedback tool listed and answered (`--feedback`), or not.
    pub fn with_feedback(mut self, on: bool) -> Relay {
        self.feedback = on;
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A line from the client, on its way to the server.
    pub fn client_line(&self, line: &[u8]) -> Action {
        // Anything that is not a JSON object goes on as it is: the server answers it.
        let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) else { return Action::Forward };
        let Some(method) = message.get("method").and_then(Value::as_str).map(str::to_owned) else {
            return Action::Forward; // the client's answer to a server's request
        };
        let Some(id) = message.get("id").cloned() else {
            if method == "notifications/cancelled" {
                self.cancelled(message.get("params"));
            }
            return Action::Forward;
        };
        let key = id.to_string();
        match method.as_str() {
            "initialize" => {
                let params = message.get("params");
                let info = params.and_then(|p| p.get("clientInfo"));
                let text =
                    |v: Option<&Value>, k: &str| v.and_then(|v| v.get(k)).and_then(Value::as_str).map(str::to_owned);
                let mut state = self.state();
                state.client = text(info, "name").map(|name| {
                    let client = ClientInfo::new(name, text(info, "version").unwrap_or_default());
                    Arc::new(match text(params, "protocolVersion") {
                        Some(v) => client.with_protocol_version(v),
                        None => client,
                    })
                });
                state.session = Some(new_session_id());
                state.pending.insert(key, Pending::Other);
                Action::Forward
            }
            "tools/list" => {
                let params = message.get("params");
                let first_page = params.and_then(|p| p.get("cursor")).is_none_or(Value::is_null);
                let origin = self.origin(params, &id);
                let watch = ForwardedMethod::start(&self.tracker, &method, params, &origin);
                self.state().pending.insert(key, Pending::ToolsList { first_page, watch });
                Action::Forward
            }
            "tools/call" => self.call(&mut message, id, key),
            _ => {
                let origin = self.origin(message.get("params"), &id);
                let pending = match ForwardedMethod::start(&self.tracker, &method, message.get("params"), &origin) {
                    Some(watch) => Pending::Method(watch),
                    None => Pending::Other,
                };
                self.state().pending.insert(key, pending);
                Action::Forward
            }
        }
    }

    /// A `tools/call` request: mcpeye's own tools answered here, any other call begun and its
    /// `mcpeyeIntent` taken out.
    fn call(&self, message: &mut Map<String, Value>, id: Value, key: String) -> Action {
        let Some(name) = message.get("params").and_then(|p| p.get("name")).and_then(Value::as_str).map(str::to_owned)
        else {
            self.state().pending.insert(key, Pending::Other);
            return Action::Forward; // the server answers a call without a name
        };
        let origin = self.origin(message.get("params"), &id);
        let (answer_here, strips, known) = {
            let state = self.state();
            let answer_here: Option<fn(&Tracker, &Origin, Value) -> Value> = match name.as_str() {
                RESERVED_TOOL_NAME if !state.server_has_reserved && self.tracker.capture_missing_capabilities() => {
                    Some(answer_reserved_tool)
                }
                FEEDBACK_TOOL_NAME if !state.server_has_feedback && self.feedback => Some(answer_feedback_tool),
                _ => None,
            };
            let known = state.listed.is_empty() || state.listed.contains(&name);
            (answer_here, !state.declares_intent.contains(&name), known)
        };
        let params = message.get_mut("params").and_then(Value::as_object_mut);
        let arguments = params.and_then(|p| p.get_mut("arguments")).and_then(Value::as_object_mut);
        if let Some(answer) = answer_here {
            let arguments = arguments.map(|a| Value::Object(std::mem::take(a))).unwrap_or(Value::Null);
            let mut result = answer(&self.tracker, &origin, arguments);
            if stateless(message.get("params")) {
                result["resultType"] = json!("complete");
            }
            return Action::Answer(to_line(&json!({"jsonrpc": "2.0", "id": id, "result": result})));
        }
        let had_intent = strips && arguments.as_ref().is_some_and(|a| a.contains_key(INTENT_PARAM_NAME));
        let intent = match (had_intent, &arguments) {
            (true, Some(a)) => a.get(INTENT_PARAM_NAME).cloned(),
            _ => None,
        };
        let call = ForwardedCall::begin(&self.tracker, &name, arguments, strips, &origin);
        let pending = PendingCall { call, name, origin, intent, known };
        self.state().pending.insert(key, Pending::Call(Box::new(pending)));
        // Only a call that had the intent changes: any other goes on as it came.
        match had_intent {
            true => Action::Replace(to_line(&Value::Object(std::mem::take(message)))),
            false => Action::Forward,
        }
    }

    /// `notifications/cancelled`: the server will not answer the call; it is recorded as cancelled.
    fn cancelled(&self, params: Option<&Value>) {
        let Some(id) = params.and_then(|p| p.get("requestId")) else { return };
        let pending = self.state().pending.remove(&id.to_string());
        let reason = params.and_then(|p| p.get("reason")).and_then(Value::as_str);
        match pending {
            Some(Pending::Call(p)) => p.call.end_without_answer(CallOutcome::cancelled(reason), None),
            Some(Pending::Method(w)) => w.end(&self.tracker, true),
            _ => {}
        }
    }

    /// A line from the server, on its way to the client. Only what routes and records it is read
    /// (its [`head`](forwarded::head): method, id, result, error; never a map of the message);
    /// a `tools/list` result is parsed whole (it is changed), and so is a line the quick read is
    /// not sure of.
    pub fn server_line(&self, line: &[u8]) -> Action {
        let Some(head) = forwarded::head(line) else { return self.server_message(line) };
        if head.has_method {
            return Action::Forward; // a notification or a request of the server's
        }
        let Some(key) = head.id.as_ref().map(Value::to_string) else { return Action::Forward };
        let pending = {
            let mut state = self.state();
            match state.pending.get(&key) {
                None => return Action::Forward,
                Some(Pending::ToolsList { .. }) => None,
                Some(_) => state.pending.remove(&key),
            }
        };
        match pending {
            None => return self.server_message(line), // a tool list: changed
            Some(Pending::Method(watch)) => watch.end(&self.tracker, head.error.is_some()),
            Some(Pending::Call(p)) => self.answered(*p, head.result.as_ref(), head.error.as_ref()),
            Some(Pending::Other | Pending::ToolsList { .. }) => {}
        }
        Action::Forward
    }

    /// A line from the server, parsed whole.
    fn server_message(&self, line: &[u8]) -> Action {
        let Ok(value) = serde_json::from_slice::<Value>(line) else { return Action::Drop };
        let Value::Object(mut message) = value else { return Action::Forward };
        if message.contains_key("method") {
            return Action::Forward; // a notification or a request of the server's
        }
        let Some(key) = message.get("id").map(Value::to_string) else { return Action::Forward };
        let Some(pending) = self.state().pending.remove(&key) else { return Action::Forward };
        let error = message.get("error");
        match pending {
            Pending::Other => Action::Forward,
            Pending::Method(watch) => {
                watch.end(&self.tracker, error.is_some());
                Action::Forward
            }
            Pending::Call(p) => {
                self.answered(*p, message.get("result"), error);
                Action::Forward
            }
            Pending::ToolsList { first_page, watch } => {
                if let Some(watch) = watch {
                    watch.end(&self.tracker, error.is_some());
                }
                match message.get_mut("result").and_then(Value::as_object_mut) {
                    Some(result) => {
                        self.listed(result, first_page);
                        Action::Replace(to_line(&Value::Object(message)))
                    }
                    None => Action::Forward,
                }
            }
        }
    }

    /// A call answered by the server: recorded with its result or error; a JSON-RPC error about
    /// a tool that was not listed is the server saying it has no such tool.
    fn answered(&self, p: PendingCall, result: Option<&Value>, error: Option<&Value>) {
        match (result, error) {
            (_, Some(e)) => {
                let code = e.get("code").and_then(Value::as_i64).unwrap_or(SERVER_GONE_CODE);
                let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
                if p.known {
                    return p.call.end_rpc_error(code, message);
                }
                // The call's record is the unknown tool's: begun like any call, then replaced.
                drop(p.call);
                let mut arguments = Map::new();
                if let Some(intent) = p.intent {
                    arguments.insert(INTENT_PARAM_NAME.to_owned(), intent);
                }
                record_unknown_tool(
                    &self.tracker,
                    &p.origin,
                    &p.name,
                    Some(&mut arguments),
                    message.to_owned(),
                    Some(code),
                );
            }
            (Some(r), None) => p.call.end_result(r),
            (None, None) => p.call.end_result(&Value::Null),
        }
    }

    /// A `tools/list` result as the client gets it: `mcpeyeIntent` on every object schema that
    /// does not declare it, and mcpeye's own tools after the last page; the complete list noted
    /// for the event log.
    fn listed(&self, result: &mut Map<String, Value>, first_page: bool) {
        let last_page = result.get("nextCursor").is_none_or(Value::is_null);
        let mut state = self.state();
        if first_page {
            state.pages.clear();
        }
        let Some(Value::Array(tools)) = result.get_mut("tools") else { return };
        for tool in tools.iter_mut() {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            if let Some(schema) = tool.get_mut("inputSchema") {
                match inject(schema) {
                    true => state.declares_intent.remove(&name),
                    false => state.declares_intent.insert(name),
                };
            }
            state.pages.push(tool.clone());
        }
        if !last_page {
            return;
        }
        let names: HashSet<String> =
            state.pages.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).map(str::to_owned).collect();
        state.server_has_reserved = names.contains(RESERVED_TOOL_NAME);
        state.server_has_feedback = names.contains(FEEDBACK_TOOL_NAME);
        let own = [
            (
                !state.server_has_reserved && self.tracker.capture_missing_capabilities(),
                reserved_descriptor as fn() -> Value,
            ),
            (!state.server_has_feedback && self.feedback, feedback_descriptor),
        ];
        for (_, descriptor) in own.into_iter().filter(|(on, _)| *on) {
            let descriptor = descriptor();
            tools.push(descriptor.clone());
            state.pages.push(descriptor);
        }
        state.listed = names;
        let list = Value::Array(std::mem::take(&mut state.pages));
        drop(state);
        note_tool_list(&self.tracker, list);
    }

    /// The request's origin: its client (from its `_meta` in MCP 2026-07-28, else the
    /// handshake's), session, id, transport, trace context and what its `_meta` says of the call.
    fn origin(&self, params: Option<&Value>, id: &Value) -> Origin {
        let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
        let state = self.state();
        let from_meta = meta.and_then(|m| m.get(META_CLIENT_INFO)).and_then(|info| {
            let name = info.get("name").and_then(Value::as_str)?;
            let client = ClientInfo::new(name, info.get("version").and_then(Value::as_str).unwrap_or_default());
            Some(Arc::new(match meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str) {
                Some(v) => client.with_protocol_version(v),
                None => client,
            }))
        });
        let stateless = stateless(params);
        let client = match from_meta {
            Some(c) => Some(c),
            // A 2026-07-28 request that does not name its client has none (no handshake).
            None if stateless => None,
            None => state.client.clone(),
        };
        let mut origin = match client {
            Some(c) => Origin::from_client(c),
            None => Origin::default(),
        };
        if let Some(session) = state.session.clone().filter(|_| !stateless) {
            origin = origin.with_session_id(session);
        }
        drop(state);
        if let Some(meta) = meta {
            if let Some(cx) = TraceContext::from_meta(meta) {
                origin = origin.with_trace_context(cx);
            }
            origin = origin.with_meta(meta.clone());
        }
        let request_id = match id {
            Value::String(s) => Some(RequestId::from(s.as_str())),
            Value::Number(n) => n.as_i64().map(RequestId::from),
            _ => None,
        };
        if let Some(request_id) = request_id {
            origin = origin.with_request_id(request_id);
        }
        origin.with_transport(self.transport)
    }

    /// The server is gone: every request still waiting is answered with an error (the lines to
    /// send the client), and every call is recorded with it.
    pub fn server_gone(&self, why: &str) -> Vec<Vec<u8>> {
        let keys: Vec<String> = self.state().pending.keys().cloned().collect();
        let message = format!("the MCP server {why} before answering (mcpeye proxy)");
        keys.iter().filter_map(|key| self.fail(key, &message)).collect()
    }

    /// The request `id` (its JSON text) will get no answer from the server: it is answered with
    /// JSON-RPC error [`SERVER_GONE_CODE`] and `message` (the line to send the client), and a
    /// call among them recorded with it; `None` when it is not waiting (answered already).
    pub fn fail(&self, id: &str, message: &str) -> Option<Vec<u8>> {
        let pending = self.state().pending.remove(id)?;
        match pending {
            Pending::Call(p) => {
                let outcome = CallOutcome::error_with_reason(message, SERVER_GONE_CODE.to_string());
                p.call.end_without_answer(outcome, Some(SERVER_GONE_CODE));
            }
            Pending::Method(w) => w.end(&self.tracker, true),
            Pending::ToolsList { watch: Some(w), .. } => w.end(&self.tracker, true),
            _ => {}
        }
        let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
        let error = json!({"code": SERVER_GONE_CODE, "message": message});
        Some(to_line(&json!({"jsonrpc": "2.0", "id": id, "error": error})))
    }

    /// How many requests wait for the server's answer.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.state().pending.len()
    }
}

/// Whether the request is of MCP 2026-07-28 or later (its `_meta` names the version): no
/// handshake, no session, `resultType` on every result.
fn stateless(params: Option<&Value>) -> bool {
    let version = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_PROTOCOL_VERSION));
    version.and_then(Value::as_str).is_some_and(|v| v >= STATELESS_ERA)
}

/// Adds `mcpeyeIntent` to an object schema that does not declare it (the rule of `instrument`);
/// false when the tool owns it, or its schema is not an object.
fn inject(schema: &mut Value) -> bool {
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    let props = schema.get("properties");
    if !is_object || props.is_some_and(|p| !p.is_object() || p.get(INTENT_PARAM_NAME).is_some()) {
        return false;
    }
    mcpeye_runtime::schema::inject_intent(schema);
    true
}

/// A message as one line of the stdio transport.
fn to_line(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpeye_runtime::testing::MemorySink;
    use std::time::Duration;

    fn line(v: Value) -> Vec<u8> {
        to_line(&v)
    }

    fn changed(action: Action) -> Value {
        match action {
            Action::Replace(bytes) | Action::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("the line was not changed: {other:?}"),
        }
    }

    /// The relay's cost per call by stage, with a tracker as `mcpeye proxy` has (event log on,
    /// an ingest that refuses): `cargo test --release -p mcpeye-cli stages -- --ignored --nocapture`.
    #[test]
    #[ignore = "a timing, run by hand in a release build"]
    fn stages() {
        use std::time::Instant;
        let request = br#"{"jsonrpc": "2.0", "id": 12345, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hello", "mcpeyeIntent": "the user measures the proxy"}}}
"#;
        let answer = br#"{"jsonrpc": "2.0", "id": 12345, "result": {"content": [{"type": "text", "text": "{\"text\": \"hello\"}"}]}}
"#;
        let n = 200_000;
        let time = |what: &str, f: &mut dyn FnMut()| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            println!("{what}: {:.2} µs", start.elapsed().as_secs_f64() * 1e6 / n as f64);
        };
        let v: Value = serde_json::from_slice(request).unwrap();
        time("parse the request into a Value", &mut || {
            drop(std::hint::black_box(serde_json::from_slice::<Value>(request)))
        });
        time("write it back", &mut || drop(std::hint::black_box(to_line(&v))));
        time("parse the answer into a Value (before)", &mut || {
            drop(std::hint::black_box(serde_json::from_slice::<Value>(answer)))
        });
        time("its head: method, id, result, error (after)", &mut || {
            drop(std::hint::black_box(forwarded::head(answer)))
        });
        let dir = std::env::temp_dir().join(format!("relay-stages-{}", std::process::id()));
        let config = mcpeye_runtime::Config::new("stages").ingest_url("http://127.0.0.1:9").event_log(&dir);
        let tracker = Tracker::new(config).unwrap();
        let relay = Relay::new(tracker.clone(), Transport::Stdio);
        relay.client_line(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}"#,
        );
        relay.server_line(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        time("client_line + server_line (the whole relay, recording included)", &mut || {
            std::hint::black_box(relay.client_line(request));
            std::hint::black_box(relay.server_line(answer));
        });
        tracker.shutdown(Duration::ZERO);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_paginated_tool_list_gains_the_intent_and_the_reserved_tool_once() {
        let (tracker, _sink) = MemorySink::new();
        let relay = Relay::new(tracker, Transport::Stdio);
        assert_eq!(
            relay.client_line(&line(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))),
            Action::Forward
        );
        let page1 = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "c"}});
        let got = changed(relay.server_line(&line(page1)));
        assert!(got["result"]["tools"][0]["inputSchema"]["properties"]["mcpeyeIntent"].is_object());
        assert_eq!(got["result"]["tools"].as_array().unwrap().len(), 1, "the reserved tool comes after the last page");
        let next = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "c"}});
        assert_eq!(relay.client_line(&line(next)), Action::Forward);
        let page2 = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "b", "inputSchema": {"type": "object", "properties": {"mcpeyeIntent": {"type": "string"}}}}]}});
        let got = changed(relay.server_line(&line(page2)));
        let tools = got["result"]["tools"].as_array().unwrap();
        assert_eq!(tools[0]["inputSchema"]["properties"]["mcpeyeIntent"], json!({"type": "string"}), "b owns it");
        assert_eq!(tools[1]["name"], RESERVED_TOOL_NAME);
        assert_eq!(relay.pending(), 0);
    }

    #[test]
    fn a_call_loses_its_intent_and_is_recorded_when_answered() {
        let (tracker, sink) = MemorySink::new();
        let relay = Relay::new(tracker.clone(), Transport::Stdio);
        let call = json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
            "params": {"name": "a", "arguments": {"q": 1, "mcpeyeIntent": "why"}}});
        let sent = changed(relay.client_line(&line(call)));
        assert_eq!(sent["params"]["arguments"], json!({"q": 1}));
        assert_eq!(relay.pending(), 1);
        let answer = json!({"jsonrpc": "2.0", "id": "c1", "result": {"content": [{"type": "text", "text": "ok"}]}});
        assert_eq!(relay.server_line(&line(answer)), Action::Forward, "an answer goes on as it came");
        tracker.flush(Duration::from_secs(5));
        let events = sink.events();
        assert_eq!((events.len(), events[0]["intent"].clone()), (1, json!("why")));
    }

    #[test]
    fn the_reserved_tool_is_answered_here_and_pending_calls_when_the_server_goes() {
        let (tracker, sink) = MemorySink::new();
        let relay = Relay::new(tracker.clone(), Transport::Stdio);
        let reserved = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": RESERVED_TOOL_NAME, "arguments": {"capability": "CSV export"}}});
        let answer = changed(relay.client_line(&line(reserved)));
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["result"]["isError"], Value::Null);
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "a"}});
        assert_eq!(relay.client_line(&line(call)), Action::Forward);
        let answers = relay.server_gone("exited");
        let answer: Value = serde_json::from_slice(&answers[0]).unwrap();
        assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(2), json!(SERVER_GONE_CODE)));
        tracker.flush(Duration::from_secs(5));
        assert_eq!(sink.events().len(), 2);
        assert_eq!(relay.server_line(b"not json\n"), Action::Drop);
    }

    #[test]
    fn the_feedback_tool_is_listed_and_answered_only_with_the_flag() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let tools =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}});
        let call = |text: &str| {
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": FEEDBACK_TOOL_NAME,
                "arguments": {"category": "issue", "text": text, "mcpeyeIntent": "why"}}})
        };
        let (tracker, sink) = MemorySink::new();
        let off = Relay::new(tracker.clone(), Transport::Stdio);
        off.client_line(&line(list.clone()));
        let names = |v: &Value| -> Vec<Value> {
            v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect()
        };
        assert_eq!(names(&changed(off.server_line(&line(tools.clone())))), [json!("a"), json!(RESERVED_TOOL_NAME)]);
        assert_eq!(
            off.client_line(&line(call("forwarded"))),
            Action::Replace(line(json!({"jsonrpc": "2.0", "id": 2,
            "method": "tools/call", "params": {"name": FEEDBACK_TOOL_NAME, "arguments": {"category": "issue", "text": "forwarded"}}})))
        );

        let on = Relay::new(tracker.clone(), Transport::Stdio).with_feedback(true);
        on.client_line(&line(list));
        let listed = changed(on.server_line(&line(tools)));
        assert_eq!(names(&listed), [json!("a"), json!(RESERVED_TOOL_NAME), json!(FEEDBACK_TOOL_NAME)]);
        assert_eq!(listed["result"]["tools"][2], feedback_descriptor());
        let answer = changed(on.client_line(&line(call("the search ignores dates"))));
        assert_eq!(answer["result"]["content"][0]["text"], mcpeye_runtime::contract::FEEDBACK_TOOL_ACK);
        let bad = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": FEEDBACK_TOOL_NAME, "arguments": {"category": "bug", "text": "x"}}});
        assert_eq!(changed(on.client_line(&line(bad)))["result"]["isError"], true);
        assert_eq!(on.pending(), 0, "answered here, never forwarded");
        tracker.flush(Duration::from_secs(5));
        let events = sink.events();
        let feedback: Vec<&Value> = events.iter().filter(|e| e["toolName"] == FEEDBACK_TOOL_NAME).collect();
        assert_eq!(feedback.len(), 2, "{events:#?}");
        assert_eq!(feedback[0]["arguments"], json!({"category": "issue", "text": "the search ignores dates"}));
        assert_eq!((feedback[0]["durationMs"].clone(), feedback[0].get("intent")), (json!(0), None));
        assert_eq!(feedback[1]["isError"], true);
    }
}
