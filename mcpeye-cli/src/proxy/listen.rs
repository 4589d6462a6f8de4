//! `--listen ADDR`: the proxy serves Streamable HTTP to its clients (`POST`, `GET` and `DELETE`
//! on `/mcp`), each session with a server of its own: a stdio server serves one session, so
//! every `initialize` starts the command anew (requests without a session, MCP 2026-07-28's,
//! share one). A request's answer, and what the server sends while it is open, go back on the
//! request's event stream; what the server sends outside any request goes on the session's GET
//! stream. With `--upstream URL` each session is a session of that Streamable HTTP server
//! instead (a remote server put behind the proxy). HTTP/1.1 over std, one thread per
//! connection, as `mcpeye receive`.

use super::child::Server;
use super::relay::{Action, Relay};
use super::upstream::Upstream;
use mcpeye_runtime::forwarded::new_session_id;
use mcpeye_runtime::{Tracker, Transport};
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ChildStdin;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest request head, and body, accepted.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;
/// The session that requests without `Mcp-Session-Id` share (MCP 2026-07-28 has no handshake).
const SESSIONLESS: &str = "";

/// What each session talks to.
pub enum Serves {
    /// The command, started once per session.
    Command(Vec<OsString>),
    /// A Streamable HTTP server and the headers of every request to it, a session of it per session.
    Upstream(String, Vec<(String, String)>),
}

/// What every connection shares.
pub struct Listener {
    serves: Serves,
    grace: Duration,
    tracker: Tracker,
    /// Whether each session's relay lists and answers the feedback tool (`--feedback`).
    feedback: bool,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// One client session and its server.
struct Session {
    id: String,
    relay: Relay,
    backend: Backend,
    /// The event stream of each request waiting for its answer, by the request's id: each
    /// message with the HTTP status it is to be answered with (an upstream's error status).
    waiting: Mutex<HashMap<String, ToStream>>,
    /// The session's GET stream, when the client opened one.
    listening: Mutex<Option<ToStream>>,
}

/// The way to one open event stream of a client: a message, and the HTTP status to answer with.
type ToStream = Sender<(Vec<u8>, u16)>;

enum Backend {
    Child { stdin: Mutex<Option<ChildStdin>>, server: Mutex<Server> },
    Upstream(Arc<Upstream>),
}

/// `ADDR` as given: `HOST:PORT`, or a port alone (on 127.0.0.1).
pub fn address(addr: &str) -> String {
    match addr.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.to_owned(),
    }
}

impl Listener {
    pub fn new(serves: Serves, grace: Duration, tracker: Tracker, feedback: bool) -> Arc<Listener> {
        Arc::new(Listener { serves, grace, tracker, feedback, sessions: Mutex::new(HashMap::new()) })
    }

    /// Serves on `listener` until the process is stopped.
    pub fn serve(self: &Arc<Self>, listener: TcpListener) {
        for stream in listener.incoming().flatten() {
            let this = self.clone();
            std::thread::spawn(move || this.connection(stream));
        }
    }

    /// Stops every session's server (the proxy is stopping); their waiting requests are answered.
    pub fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> =
            self.sessions.lock().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.stop(self.grace);
        }
    }

    fn connection(&self, mut stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
        let Ok(reader) = stream.try_clone() else { return };
        let mut reader = BufReader::new(reader);
        // One request per connection: every answer says `connection: close`.
        let Some(request) = read_request(&mut reader) else { return };
        let _ = stream.set_read_timeout(None);
        if request.path.split('?').next() != Some("/mcp") {
            return reply(&mut stream, "404 Not Found", "text/plain", &[], b"not found: the MCP endpoint is /mcp");
        }
        if let Some(origin) = request.header("origin") {
            // DNS rebinding: a page of another site must not reach a server on this machine.
            let host = origin.split("://").nth(1).unwrap_or_default().split([':', '/']).next().unwrap_or_default();
            if !matches!(host, "localhost" | "127.0.0.1" | "[::1]") {
                return reply(&mut stream, "403 Forbidden", "text/plain", &[], b"origin not allowed");
            }
        }
        match request.method.as_str() {
            "POST" => self.post(&mut stream, &request),
            "GET" => self.get(&mut stream, &request),
            "DELETE" => {
                let removed = request
                    .header("mcp-session-id")
                    .and_then(|id| self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(id));
                match removed {
                    Some(session) => {
                        reply(&mut stream, "200 OK", "text/plain", &[], b"");
                        session.stop(self.grace);
                    }
                    None => reply(&mut stream, "404 Not Found", "text/plain", &[], b"no such session"),
                }
            }
            _ => reply(&mut stream, "405 Method Not Allowed", "text/plain", &[("allow", "GET, POST, DELETE")], b""),
        }
    }

    fn post(&self, stream: &mut TcpStream, request: &Request) {
        let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
            let error = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
            return reply(stream, "400 Bad Request", "application/json", &[], error);
        };
        let method = message.get("method").and_then(Value::as_str);
        let session = match (method, request.header("mcp-session-id")) {
            (Some("initialize"), _) => self.start_session(new_session_id().to_string()),
            (_, Some(id)) => self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned().ok_or(()),
            (_, None) => {
                let shared = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(SESSIONLESS).cloned();
                shared.map_or_else(|| self.start_session(SESSIONLESS.to_owned()), Ok)
            }
        };
        let session = match session {
            Ok(session) => session,
            Err(()) if request.header("mcp-session-id").is_some() => {
                let error = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
                return reply(stream, "404 Not Found", "application/json", &[], error);
            }
            Err(()) => {
                let error = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the MCP server did not start (mcpeye proxy)"}}"#;
                return reply(stream, "500 Internal Server Error", "application/json", &[], error);
            }
        };
        let session_header: Vec<(&str, &str)> = match session.id.as_str() {
            SESSIONLESS => vec![],
            id => vec![("mcp-session-id", id)],
        };
        let mut line = request.body.clone();
        line.push(b'\n');
        // What the server is to judge of the client's request, as the client sent it: its MCP
        // headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), all but the
        // session, which is the proxy's own.
        let passed: Vec<(String, String)> = request
            .headers
            .iter()
            .filter(|(name, _)| {
                let name = name.to_ascii_lowercase();
                name.starts_with("mcp-") && name != "mcp-session-id"
            })
            .cloned()
            .collect();
        let to_server = match session.relay.client_line(&line) {
            Action::Answer(answer) => return reply(stream, "200 OK", "application/json", &session_header, &answer),
            Action::Drop => return reply(stream, "202 Accepted", "text/plain", &session_header, b""),
            Action::Forward => line,
            Action::Replace(changed) => changed,
        };
        let id = message.get("id").filter(|_| method.is_some()).map(Value::to_string);
        let Some(id) = id else {
            // A notification, or the client's answer to the server's request.
            session.write(&to_server, &passed);
            return reply(stream, "202 Accepted", "text/plain", &session_header, b"");
        };
        let (tx, rx) = channel();
        session.waiting.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx);
        if !session.write(&to_server, &passed) {
            session.answer_all_waiting();
        }
        stream_events(stream, &session_header, &rx, Some(&id));
        session.waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }

    fn get(&self, stream: &mut TcpStream, request: &Request) {
        let session = request
            .header("mcp-session-id")
            .and_then(|id| self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned());
        let Some(session) = session else {
            return reply(stream, "404 Not Found", "text/plain", &[], b"no such session");
        };
        let (tx, rx) = channel();
        *session.listening.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        stream_events(stream, &[("mcp-session-id", &session.id)], &rx, None);
    }

    /// Starts the server of a new session; `Err` when its command does not start.
    fn start_session(&self, id: String) -> Result<Arc<Session>, ()> {
        let relay = Relay::new(self.tracker.clone(), Transport::Http { version: None }).with_feedback(self.feedback);
        let new = |backend| {
            let (waiting, listening) = (Mutex::new(HashMap::new()), Mutex::new(None));
            Arc::new(Session { id: id.clone(), relay, backend, waiting, listening })
        };
        let session = match &self.serves {
            Serves::Upstream(url, headers) => {
                let upstream = Upstream::new(url, headers.clone()).map_err(|e| eprintln!("mcpeye proxy: {e}"))?;
                new(Backend::Upstream(Arc::new(upstream)))
            }
            Serves::Command(command) => {
                let (program, args) = command.split_first().ok_or(())?;
                let mut server = Server::spawn(program, args).map_err(|e| {
                    eprintln!("mcpeye proxy: cannot start the server `{}`: {e}", program.to_string_lossy());
                })?;
                let (stdin, stdout) = server.pipes();
                let session = new(Backend::Child { stdin: Mutex::new(Some(stdin)), server: Mutex::new(server) });
                let reading = session.clone();
                std::thread::spawn(move || {
                    let mut lines = BufReader::with_capacity(64 * 1024, stdout);
                    let mut line = Vec::new();
                    loop {
                        line.clear();
                        match lines.read_until(b'\n', &mut line) {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                        if !line.iter().all(u8::is_ascii_whitespace) {
                            reading.server_said(&line);
                        }
                    }
                    reading.answer_all_waiting();
                });
                session
            }
        };
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(id, session.clone());
        Ok(session)
    }
}

impl Session {
    /// Sends one message to the server; false when it is gone. Upstream, a request is POSTed on
    /// a thread of its own and its answer comes back through [`server_said`](Self::server_said).
    fn write(self: &Arc<Self>, line: &[u8], passed: &[(String, String)]) -> bool {
        let upstream = match &self.backend {
            Backend::Child { stdin, .. } => {
                let mut stdin = stdin.lock().unwrap_or_else(|e| e.into_inner());
                let Some(pipe) = stdin.as_mut() else { return false };
                return pipe.write_all(line).and_then(|()| pipe.flush()).is_ok();
            }
            Backend::Upstream(upstream) => upstream.clone(),
        };
        let id = super::request_id(line);
        let is_request = id.is_some();
        let (session, line, passed) = (self.clone(), line.to_vec(), passed.to_vec());
        let post = move || {
            // What comes back on a request's own answer belongs to its stream (its progress, the
            // notifications of a `subscriptions/listen`), whatever else is open.
            let stream = id.clone();
            let deliver = |m: &[u8]| session.server_said_on(m, stream.as_deref(), 200);
            let refused = |status: u16, m: &[u8]| session.server_said_on(m, stream.as_deref(), status);
            if let Err(e) = upstream.post(&line, Some(&passed), &deliver, &refused) {
                eprintln!("mcpeye proxy: {e}");
                let failed = format!("the upstream MCP server did not answer: {e}");
                if let Some(answer) = id.and_then(|id| session.relay.fail(&id, &failed)) {
                    session.route(&answer);
                }
            }
            if upstream.should_listen() {
                let (session, upstream) = (session.clone(), upstream.clone());
                std::thread::spawn(move || upstream.listen(&|m: &[u8]| session.server_said(m)));
            }
        };
        // As with `--upstream` over stdio: requests concurrently, the rest in the client's order.
        match is_request {
            true => drop(std::thread::spawn(post)),
            false => post(),
        }
        true
    }

    /// A message of the server, through the relay, to the client.
    fn server_said(&self, line: &[u8]) {
        self.server_said_on(line, None, 200);
    }

    /// A message of the server, through the relay, to the client: on the stream of the request
    /// `on` while it is open (answered with `status`), else where [`route`](Self::route) says.
    fn server_said_on(&self, line: &[u8], on: Option<&str>, status: u16) {
        let out = match self.relay.server_line(line) {
            Action::Forward => line.to_vec(),
            Action::Replace(changed) | Action::Answer(changed) => changed,
            Action::Drop => {
                let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).trim_end().to_owned();
                eprintln!("mcpeye proxy: the server wrote a line to stdout that is not JSON-RPC; dropped: {shown}");
                return;
            }
        };
        if let Some(tx) = on.and_then(|id| self.waiting.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()) {
            if tx.send((out.clone(), status)).is_ok() {
                return;
            }
        }
        self.route(&out);
    }

    /// A message of the server: an answer to the request waiting for it, anything else on the
    /// GET stream, else on a request's stream still open (progress, sampling while a call runs).
    fn route(&self, line: &[u8]) {
        let message: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if message.get("method").is_none() {
            if let Some(tx) = message.get("id").and_then(|id| waiting.get(&id.to_string())) {
                let _ = tx.send((line.to_vec(), 200));
                return;
            }
        }
        if let Some(tx) = self.listening.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if tx.send((line.to_vec(), 200)).is_ok() {
                return;
            }
        }
        if let Some(tx) = waiting.values().next() {
            let _ = tx.send((line.to_vec(), 200));
        }
    }

    /// The server is gone: each request still waiting is answered with an error, and recorded.
    fn answer_all_waiting(&self) {
        for line in self.relay.server_gone("exited") {
            self.route(&line);
        }
    }

    fn stop(&self, grace: Duration) {
        match &self.backend {
            Backend::Child { stdin, server } => {
                drop(stdin.lock().unwrap_or_else(|e| e.into_inner()).take());
                server.lock().unwrap_or_else(|e| e.into_inner()).stop(grace);
            }
            Backend::Upstream(upstream) => upstream.close(),
        }
        self.answer_all_waiting();
    }
}

/// Answers with an event stream: each message from `rx` as an event, until the answer to `id`
/// (or, for a GET stream, until the session ends or the client goes away).
fn stream_events(stream: &mut TcpStream, headers: &[(&str, &str)], rx: &Receiver<(Vec<u8>, u16)>, id: Option<&str>) {
    // A request's first message decides its answer: an error status of the upstream is the
    // client's too (the message then as a JSON body), else an event stream. A GET stream's
    // head goes at once.
    let first = match id {
        Some(_) => match rx.recv() {
            Ok(first) => Some(first),
            Err(_) => return,
        },
        None => None,
    };
    if let Some(first) = first.as_ref().filter(|f| f.1 >= 300) {
        let status = match first.1 {
            400 => "400 Bad Request".to_owned(),
            401 => "401 Unauthorized".to_owned(),
            403 => "403 Forbidden".to_owned(),
            404 => "404 Not Found".to_owned(),
            405 => "405 Method Not Allowed".to_owned(),
            406 => "406 Not Acceptable".to_owned(),
            415 => "415 Unsupported Media Type".to_owned(),
            code => format!("{code} Error"),
        };
        let body = first.0.strip_suffix(b"\n").unwrap_or(&first.0);
        return reply(stream, &status, "application/json", headers, body);
    }
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n",
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    for (message, _) in first.into_iter().chain(std::iter::from_fn(|| rx.recv().ok())) {
        let data = message.strip_suffix(b"\n").unwrap_or(&message);
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(data);
        event.extend_from_slice(b"\n\n");
        if stream.write_all(&event).and_then(|()| stream.flush()).is_err() {
            return;
        }
        let answered = id.is_some_and(|id| {
            serde_json::from_slice::<Value>(data)
                .is_ok_and(|m| m.get("method").is_none() && m.get("id").map(Value::to_string).as_deref() == Some(id))
        });
        if answered {
            return;
        }
    }
}

fn reply(stream: &mut TcpStream, status: &str, content_type: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body)).and_then(|()| stream.flush());
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A request line, its headers and its `content-length` body; `None` for anything else.
fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut head_len = 0;
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = Vec::new();
    loop {
        line.clear();
        head_len += reader.read_line(&mut line).ok()?;
        if head_len > MAX_HEAD {
            return None;
        }
        let text = line.trim_end();
        if text.is_empty() {
            break;
        }
        let (name, value) = text.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let request = Request { method, path, headers, body: Vec::new() };
    let length: usize = request.header("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { body, ..request })
}
