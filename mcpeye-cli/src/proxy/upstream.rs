//! `--upstream URL`: the server is a Streamable HTTP endpoint rather than a child. Each message
//! of the client is POSTed as it came (one request per message, on its own thread, so that a
//! slow call holds up nothing else); the answer, JSON or an event stream, is handed back message
//! by message. The session id and protocol version the server gives are sent with every later
//! request, and a GET stream carries what the server sends outside any request.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use ureq::Agent;

/// How long connecting to the server may take. Nothing else is bounded here: a call may
/// legitimately take minutes, and the client's cancellation is what ends a slow one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read (a body bigger than ureq's 10 MB default is a legitimate result).
const MAX_ANSWER: u64 = 1 << 30;

pub struct Upstream {
    agent: Agent,
    url: String,
    headers: Vec<(String, String)>,
    /// `Mcp-Session-Id`, once the server gave one.
    session: Mutex<Option<String>>,
    /// The protocol version the handshake settled on, sent as `MCP-Protocol-Version`.
    version: Mutex<Option<String>>,
    /// Whether the GET stream was opened (once per session).
    listening: AtomicBool,
}

/// A header given as `Name: value`.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once(':').ok_or_else(|| format!("--header `{text}`: expected `Name: value`"))?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b)) {
        return Err(format!("--header `{text}`: `{name}` is not a header name"));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

impl Upstream {
    pub fn new(url: &str, headers: Vec<(String, String)>) -> Result<Upstream, String> {
        let lower = url.to_ascii_lowercase();
        if !lower.starts_with("http://") && !lower.starts_with("https://") {
            return Err(format!("--upstream `{url}`: an http:// or https:// URL is needed"));
        }
        let agent: Agent =
            Agent::config_builder().http_status_as_error(false).timeout_connect(Some(CONNECT_TIMEOUT)).build().into();
        Ok(Upstream {
            agent,
            url: url.to_owned(),
            headers,
            session: Mutex::new(None),
            version: Mutex::new(None),
            listening: AtomicBool::new(false),
        })
    }

    /// POSTs one message of the client; each message of the answer goes to `deliver`. An error
    /// says why the server did not answer (unreachable, an HTTP error, not JSON). `passed`: for
    /// a client that spoke HTTP itself (`--listen`), the MCP headers it sent, sent as they came
    /// and nothing worked out in their place (a header it left out stays out: the server judges
    /// the client's own); `None` for a stdio client, whose headers are worked out here. A
    /// JSON-RPC error the server answers with an HTTP error status goes to `refused`, with that
    /// status.
    pub fn post(
        &self,
        line: &[u8],
        passed: Option<&[(String, String)]>,
        deliver: &dyn Fn(&[u8]),
        refused: &dyn Fn(u16, &[u8]),
    ) -> Result<(), String> {
        let message: Option<Value> = serde_json::from_slice(line).ok();
        let method = message.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let mut headers = self.common_headers(message.as_ref());
        if let Some(passed) = passed {
            headers.retain(|(name, _)| name == "mcp-session-id" || !name.starts_with("mcp-"));
            headers.extend(passed.iter().cloned());
        }
        // SEP-2243 (MCP 2026-07-28): the method, and what it names, in headers too.
        if let (Some(method), Some(m), None) = (method, &message, passed) {
            headers.push(("mcp-method".into(), method.into()));
            let params = m.get("params");
            let name = match method {
                "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
                "resources/read" => params.and_then(|p| p.get("uri")),
                _ => None,
            };
            if let Some(name) = name.and_then(Value::as_str) {
                headers.push(("mcp-name".into(), name.into()));
            }
        }
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let response = request.send(body).map_err(|e| format!("cannot reach {}: {e}", self.url))?;
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(session.to_owned());
        }
        let content_type =
            response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let reader = response.into_body().into_with_config().limit(MAX_ANSWER).reader();
        if !status.is_success() {
            let mut text = String::new();
            let _ = reader.take(2048).read_to_string(&mut text);
            // An error the server wrote as JSON-RPC is its answer to this request: the client
            // gets it, under the request's id when the server left it `null`.
            if let (Ok(mut error), Some(id)) =
                (serde_json::from_str::<Value>(&text), message.as_ref().and_then(|m| m.get("id")))
            {
                if error.get("error").is_some() && method.is_some() {
                    if error.get("id").is_none_or(Value::is_null) {
                        error["id"] = id.clone();
                    }
                    refused(status.as_u16(), &serde_json::to_vec(&error).unwrap_or_default());
                    return Ok(());
                }
            }
            return Err(format!("{} answered HTTP {status}: {}", self.url, text.trim()));
        }
        if method == Some("initialize") || self.version_unknown() {
            // The negotiated version is read from the answer as it passes.
            let note = |message: &[u8]| {
                self.learn_version(message);
                deliver(message);
            };
            return read_messages(reader, &content_type, &note);
        }
        read_messages(reader, &content_type, deliver)
    }

    fn version_unknown(&self) -> bool {
        self.version.lock().unwrap_or_else(|e| e.into_inner()).is_none()
    }

    fn learn_version(&self, message: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(message) else { return };
        if let Some(version) = v.get("result").and_then(|r| r.get("protocolVersion")).and_then(Value::as_str) {
            *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(version.to_owned());
        }
    }

    /// The headers of every request: the user's, the session, the protocol version (the
    /// request's own `_meta` one in MCP 2026-07-28, else the handshake's).
    fn common_headers(&self, message: Option<&Value>) -> Vec<(String, String)> {
        let mut headers = self.headers.clone();
        if let Some(session) = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            headers.push(("mcp-session-id".into(), session));
        }
        let meta_version = message
            .and_then(|m| m.get("params"))
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(version) = meta_version.or_else(|| self.version.lock().unwrap_or_else(|e| e.into_inner()).clone()) {
            headers.push(("mcp-protocol-version".into(), version));
        }
        headers
    }

    /// Whether a session began and its GET stream is not open yet (then it is marked open).
    pub fn should_listen(&self) -> bool {
        self.session.lock().unwrap_or_else(|e| e.into_inner()).is_some() && !self.listening.swap(true, Ordering::SeqCst)
    }

    /// The GET stream of the session: what the server sends outside any request, until it ends.
    /// A server that does not offer one (405) is fine.
    pub fn listen(&self, deliver: &dyn Fn(&[u8])) {
        let mut request = self.agent.get(&self.url).header("accept", "text/event-stream");
        for (name, value) in self.common_headers(None) {
            request = request.header(name, value);
        }
        let Ok(response) = request.call() else { return };
        if !response.status().is_success() {
            return;
        }
        let reader = response.into_body().into_with_config().limit(MAX_ANSWER).reader();
        let _ = read_messages(reader, "text/event-stream", deliver);
    }

    /// Ends the session (DELETE), as a client that leaves should.
    pub fn close(&self) {
        let Some(session) = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone() else { return };
        let mut request = self.agent.delete(&self.url).header("mcp-session-id", &session);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let _ = request.call();
    }
}

/// Each message of an answer: the body of a JSON answer, or each event's data of an event stream.
fn read_messages(reader: impl Read, content_type: &str, deliver: &dyn Fn(&[u8])) -> Result<(), String> {
    let mut reader = BufReader::new(reader);
    if !content_type.starts_with("text/event-stream") {
        let mut body = Vec::new();
        reader.read_to_end(&mut body).map_err(|e| format!("reading the answer: {e}"))?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(()); // 202 Accepted: a notification or an answer of the client's
        }
        if serde_json::from_slice::<Value>(&body).is_err() {
            let shown = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Err(format!("the server's answer is not JSON: {shown}"));
        }
        deliver(&body);
        return Ok(());
    }
    let mut data = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| format!("reading the event stream: {e}"))?;
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.is_empty() {
            // The end of an event (or of the stream): its data is one message.
            if !data.is_empty() {
                deliver(&data);
                data.clear();
            }
            if n == 0 {
                return Ok(());
            }
            continue;
        }
        if let Some(value) = text.strip_prefix(b"data:") {
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn an_event_stream_is_read_event_by_event() {
        let stream = "event: message\ndata: {\"a\":1}\n\n: a comment\nid: 2\ndata: {\"b\":\ndata: 2}\r\n\r\n";
        let got = RefCell::new(Vec::new());
        read_messages(stream.as_bytes(), "text/event-stream", &|m| got.borrow_mut().push(m.to_vec())).unwrap();
        assert_eq!(got.into_inner(), vec![b"{\"a\":1}".to_vec(), b"{\"b\":\n2}".to_vec()]);
    }

    #[test]
    fn headers_are_name_colon_value() {
        assert_eq!(parse_header("Authorization: Bearer x:y").unwrap(), ("Authorization".into(), "Bearer x:y".into()));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header("bad name: v").is_err());
    }
}
