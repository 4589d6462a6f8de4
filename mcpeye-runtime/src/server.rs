//! A minimal MCP server core over JSON-RPC 2.0, without I/O: feed it one message, get the
//! response to write back. `examples/stdio_server.rs` wraps it in a stdin/stdout loop; servers
//! built on rmcp use the `rmcp` feature instead.
//!
//! It answers `initialize` (with protocol version negotiation), `ping`, `tools/list` and
//! `tools/call`, ignores notifications, and fills the tracker's `client` identity from the
//! client's `clientInfo`.

use crate::capture::manifest::Manifest;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Protocol versions this server speaks, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes used by the session.
pub mod codes {
    /// The message is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is not a valid JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (including an unknown tool name).
    pub const INVALID_PARAMS: i64 = -32602;
}

/// The name and version a server reports in `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Optional `instructions` for the client.
    pub instructions: Option<String>,
}

/// One client connection's MCP session over a [`Manifest`].
///
/// ```
/// use mcpeye_runtime::{server::{McpSession, ServerInfo}, Manifest};
/// use std::sync::Arc;
/// let manifest = Arc::new(Manifest::builder().build());
/// let session = McpSession::new(manifest, ServerInfo { name: "demo".into(), version: "1.0.0".into(), instructions: None });
/// let reply = session.handle_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
/// assert_eq!(reply, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
/// assert!(session.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
/// ```
#[derive(Debug)]
pub struct McpSession {
    manifest: Arc<Manifest>,
    info: ServerInfo,
    client: Mutex<Option<(String, String)>>,
}

/// What to do with one incoming message.
enum Parsed {
    Request { id: Value, method: String, params: Value },
    Notification,
    Invalid { id: Value, code: i64, message: &'static str },
}

fn parse(msg: Value) -> Parsed {
    let Value::Object(mut m) = msg else {
        return Parsed::Invalid {
            id: Value::Null,
            code: codes::INVALID_REQUEST,
            message: "expected a JSON-RPC object",
        };
    };
    let id = m.remove("id");
    let method = match m.remove("method") {
        Some(Value::String(s)) => s,
        _ => {
            return match id {
                // A response from the client (we send no requests) or junk without an id: nothing to answer.
                None => Parsed::Notification,
                Some(_) if m.contains_key("result") || m.contains_key("error") => Parsed::Notification,
                Some(id) => Parsed::Invalid { id, code: codes::INVALID_REQUEST, message: "missing `method`" },
            };
        }
    };
    match id {
        None => Parsed::Notification,
        Some(id @ (Value::String(_) | Value::Number(_))) => {
            Parsed::Request { id, method, params: m.remove("params").unwrap_or(Value::Null) }
        }
        Some(_) => Parsed::Invalid {
            id: Value::Null,
            code: codes::INVALID_REQUEST,
            message: "`id` must be a string or a number",
        },
    }
}

fn response(id: Value, result: Result<Value, (i64, String)>) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id);
    match result {
        Ok(r) => m.insert("result".into(), r),
        Err((code, message)) => m.insert("error".into(), json!({"code": code, "message": message})),
    };
    Value::Object(m)
}

impl McpSession {
    /// A session serving `manifest`.
    pub fn new(manifest: Arc<Manifest>, info: ServerInfo) -> Self {
        McpSession { manifest, info, client: Mutex::new(None) }
    }

    /// The client's `clientInfo` (`name`, `version`) once `initialize` has been received.
    pub fn client_info(&self) -> Option<(String, String)> {
        self.client.lock().ok().and_then(|c| c.clone())
    }

    /// Handles one line of input (one JSON-RPC message) and returns the line to write back,
    /// if any. Async tools are refused here; use [`handle_line_async`](Self::handle_line_async).
    pub fn handle_line(&self, line: &str) -> Option<String> {
        let (id, method, params) = match self.prepare(line) {
            Ok(Some(req)) => req,
            Ok(None) => return None,
            Err(reply) => return Some(reply),
        };
        let result = match method.as_str() {
            "tools/call" => self
                .tools_call(&params)
                .and_then(|(name, args)| self.manifest.try_call(&name, args).map_err(|e| (e.code(), e.to_string()))),
            _ => self.answer(&method, params),
        };
        Some(response(id, result).to_string())
    }

    /// Like [`handle_line`](Self::handle_line), calling sync and async tools alike.
    pub async fn handle_line_async(&self, line: &str) -> Option<String> {
        let (id, method, params) = match self.prepare(line) {
            Ok(Some(req)) => req,
            Ok(None) => return None,
            Err(reply) => return Some(reply),
        };
        let result = match method.as_str() {
            "tools/call" => match self.tools_call(&params) {
                Ok((name, args)) => {
                    let client = self.client_info().map(|(n, v)| std::sync::Arc::new(crate::ClientInfo::new(n, v)));
                    let origin = crate::Origin { client, ..Default::default() };
                    self.manifest.try_call_async_from(&origin, &name, args).await.map_err(|e| (e.code(), e.to_string()))
                }
                Err(e) => Err(e),
            },
            _ => self.answer(&method, params),
        };
        Some(response(id, result).to_string())
    }

    /// Parses a line: `Ok(None)` for notifications, `Err(reply)` for malformed input.
    #[allow(clippy::type_complexity)]
    fn prepare(&self, line: &str) -> Result<Option<(Value, String, Value)>, String> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => return Err(response(Value::Null, Err((codes::PARSE_ERROR, "parse error".into()))).to_string()),
        };
        match parse(msg) {
            Parsed::Request { id, method, params } => Ok(Some((id, method, params))),
            Parsed::Notification => Ok(None),
            Parsed::Invalid { id, code, message } => Err(response(id, Err((code, message.into()))).to_string()),
        }
    }

    fn tools_call(&self, params: &Value) -> Result<(String, Value), (i64, String)> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((codes::INVALID_PARAMS, "`tools/call` needs `params.name`, the tool's name".to_owned()))?;
        let args = params.get("arguments").cloned().unwrap_or(Value::Null);
        Ok((name.to_owned(), args))
    }

    fn answer(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": self.manifest.tools_list() })),
            other => Err((codes::METHOD_NOT_FOUND, format!("method not found: {other}"))),
        }
    }

    fn initialize(&self, params: &Value) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version =
            asked.filter(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(v)).unwrap_or(SUPPORTED_PROTOCOL_VERSIONS[0]);
        let client = params.get("clientInfo");
        let field = |k: &str| client.and_then(|c| c.get(k)).and_then(Value::as_str).unwrap_or("").to_owned();
        let (name, cversion) = (field("name"), field("version"));
        if !name.is_empty() {
            if let Ok(mut c) = self.client.lock() {
                *c = Some((name, cversion));
            }
        }
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": self.info.name, "version": self.info.version},
        });
        if let Some(i) = &self.info.instructions {
            result["instructions"] = Value::String(i.clone());
        }
        result
    }
}

/// Runs a future to completion on the current thread, parking it while the future waits.
///
/// For servers and tests without an async runtime: `call_async` and
/// [`McpSession::handle_line_async`] only wait on what the tools themselves wait on.
///
/// ```
/// assert_eq!(mcpeye_runtime::server::block_on(async { 1 + 1 }), 2);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> McpSession {
        let info = ServerInfo { name: "t".into(), version: "0.0.1".into(), instructions: Some("hi".into()) };
        McpSession::new(Arc::new(Manifest::builder().build()), info)
    }

    fn reply(s: &McpSession, line: &str) -> Value {
        serde_json::from_str(&s.handle_line(line).expect("a reply")).unwrap()
    }

    #[test]
    fn initialize_negotiates_the_version() {
        let s = session();
        let r = reply(
            &s,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","clientInfo":{"name":"inspector","version":"0.9"}}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(r["result"]["serverInfo"]["name"], "t");
        assert_eq!(r["result"]["instructions"], "hi");
        assert_eq!(s.client_info(), Some(("inspector".into(), "0.9".into())));
        let r =
            reply(&s, r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#);
        assert_eq!(r["result"]["protocolVersion"], SUPPORTED_PROTOCOL_VERSIONS[0]);
        assert_eq!(r["id"], "a");
    }

    #[test]
    fn errors_and_notifications() {
        let s = session();
        assert_eq!(reply(&s, "{not json")["error"]["code"], codes::PARSE_ERROR);
        assert_eq!(reply(&s, "[1]")["error"]["code"], codes::INVALID_REQUEST);
        assert_eq!(reply(&s, r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)["error"]["code"], codes::METHOD_NOT_FOUND);
        let r = reply(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"missing"}}"#);
        assert_eq!(r["error"]["code"], codes::INVALID_PARAMS);
        assert_eq!(reply(&s, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#)["error"]["code"], -32602);
        assert!(s.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#).is_none());
        assert!(s.handle_line(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).is_none());
    }

    #[test]
    fn lists_and_calls_the_reserved_tool() {
        let s = session();
        let r = reply(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(r["result"]["tools"][0]["name"], crate::contract::RESERVED_TOOL_NAME);
        let r = reply(
            &s,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcpeye_request_capability","arguments":{"capability":"CSV export"}}}"#,
        );
        assert_eq!(r["result"]["content"][0]["text"], crate::contract::RESERVED_TOOL_ACK);
    }
}
