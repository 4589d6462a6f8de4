//! `mcpeye proxy --upstream URL`: the client on stdio, the server a Streamable HTTP endpoint.
//! A loopback endpoint written here shows what each request carries (the `--header`s, the
//! session and protocol version the server gave, `Mcp-Method`/`Mcp-Name`, the arguments without
//! `mcpeyeIntent`) and answers in JSON or as an event stream; an endpoint that refuses
//! connections gets every request answered with an error, and recorded.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How long a test waits for a line before it fails (a hang guard, not a measurement).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// One request the endpoint received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: HashMap<String, String>,
    body: Value,
}

/// A Streamable HTTP endpoint on a free loopback port: `initialize` answered in JSON with a
/// session id, notifications with 202, any other request as an event stream echoing the
/// request's arguments; GET is refused (405), DELETE accepted.
fn endpoint() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            reader.read_line(&mut head).unwrap();
            let method = head.split(' ').next().unwrap_or_default().to_owned();
            let mut headers = HashMap::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                }
            }
            let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            log.lock().unwrap().push(Seen { method: method.clone(), headers, body: body.clone() });
            let reply = match (method.as_str(), body["method"].as_str(), body.get("id")) {
                ("GET", _, _) => "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n".to_owned(),
                ("DELETE", _, _) | (_, _, None) => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n".to_owned(),
                (_, Some("initialize"), Some(id)) => {
                    let result = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "http-echo", "version": "1"}}})
                    .to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s-1\r\ncontent-length: {}\r\n\r\n{result}",
                        result.len()
                    )
                }
                (_, _, Some(id)) => {
                    let text = body["params"]["arguments"].to_string();
                    let result =
                        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
                    let events = format!("id: 1\ndata: \n\nevent: message\ndata: {result}\n\n");
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{events}",
                        events.len()
                    )
                }
            };
            // It closes after each answer, so it says so: without `connection: close` ureq may
            // send the next request on the pooled connection before it sees the close.
            let reply = reply.replacen("\r\n", "\r\nconnection: close\r\n", 1);
            let reply = if reply.contains("\r\n\r\n") { reply } else { format!("{reply}\r\n") };
            let _ = stream.write_all(reply.as_bytes());
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    (url, seen)
}

struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Proxy {
    fn start(ingest: &IngestReceiver, args: &[&str]) -> Proxy {
        let mut child = Command::new(mcpeye_cli())
            .args(["proxy", "--no-event-log"])
            .args(args)
            .envs(server_env(ingest))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcpeye proxy");
        let (tx, lines) = mpsc::channel();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Proxy { stdin: child.stdin.take(), child, lines }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    fn recv(&self) -> Value {
        let line = self.lines.recv_timeout(HANG_GUARD).expect("a line within the hang guard");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait_for_exit(&mut self.child, HANG_GUARD).expect("the proxy exits once its client leaves")
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "http-client", "version": "1.0"}}})
}

#[test]
fn each_request_carries_the_headers_the_session_and_the_method() {
    let (url, seen) = endpoint();
    let ingest = IngestReceiver::start();
    let mut proxy = Proxy::start(&ingest, &["--upstream", &url, "--header", "X-Api-Key: k1"]);
    proxy.send(initialize());
    assert_eq!(proxy.recv()["result"]["serverInfo"]["name"], "http-echo");
    proxy.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"q": "x", "mcpeyeIntent": "over http"}}}));
    let answer = proxy.recv();
    assert_eq!(answer["result"]["content"][0]["text"], r#"{"q":"x"}"#, "{answer}");
    assert!(proxy.close().success());

    let seen = seen.lock().unwrap().clone();
    let call = seen.iter().find(|s| s.body["method"] == "tools/call").expect("the call reached the endpoint");
    for (name, value) in [
        ("x-api-key", "k1"),
        ("mcp-session-id", "s-1"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ] {
        assert_eq!(call.headers.get(name).map(String::as_str), Some(value), "{name} of {call:?}");
    }
    assert_eq!(call.body["params"]["arguments"], json!({"q": "x"}));
    assert!(seen.iter().any(|s| s.method == "DELETE"), "the session is ended when the client leaves: {seen:?}");
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["intent"], "over http");
}

#[test]
fn an_upstream_that_refuses_gets_every_request_answered_with_an_error() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let ingest = IngestReceiver::start();
    let mut proxy = Proxy::start(&ingest, &["--upstream", &url]);
    proxy.send(initialize());
    let answer = proxy.recv();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(0), json!(-32603)), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("did not answer"), "{answer}");
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"mcpeyeIntent": "still recorded"}}}));
    assert_eq!(proxy.recv()["error"]["code"], -32603);
    assert!(proxy.close().success());
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!((events[0]["isError"].clone(), events[0]["intent"].clone()), (json!(true), json!("still recorded")));
}

#[test]
fn sigterm_ends_the_session_and_delivers_the_events() {
    let (url, seen) = endpoint();
    let ingest = IngestReceiver::start();
    let mut proxy = Proxy::start(&ingest, &["--upstream", &url]);
    proxy.send(initialize());
    proxy.recv();
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"mcpeyeIntent": "before the signal"}}}));
    proxy.recv();
    sigterm(&proxy.child);
    let status = wait_for_exit(&mut proxy.child, HANG_GUARD).expect("the proxy exits on SIGTERM");
    assert!(status.success(), "{status}");
    assert!(seen.lock().unwrap().iter().any(|s| s.method == "DELETE"), "the session is ended");
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!((events.len(), events[0]["intent"].clone()), (1, json!("before the signal")));
}
