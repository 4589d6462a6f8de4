//! The client leaving must not lose events: `examples/stdio_server`, after answering N calls of
//! a client that is still connected, is either sent SIGTERM or sees its stdin close. By the time
//! the process has exited, the ingest holds every captured event, each once, under the client's
//! name, and the exit came within the shutdown bound.
//!
//! The client here is a plain JSON-RPC writer (the `initialize` handshake, then `tools/call`s,
//! one at a time): it keeps the session open for exactly as long as the test wants.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CLIENT: &str = "stdio-exit-test/1.0.0";
/// The default `shutdown_timeout` (2 s) and room for a loaded machine.
const EXIT_BOUND: Duration = Duration::from_secs(6);

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
}

impl Session {
    fn start(ingest: &IngestReceiver) -> Session {
        let mut child = Command::new(example("stdio_server"))
            .envs(server_env(ingest))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the stdio example");
        let (tx, stdout) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (err, log) = (BufReader::new(child.stderr.take().unwrap()), stderr.clone());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let stdin = child.stdin.take();
        let mut s = Session { child, stdin, stdout, stderr, next_id: 0 };
        let (name, version) = CLIENT.split_once('/').unwrap();
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": version}}),
        );
        assert!(init["result"]["protocolVersion"].is_string(), "initialize answered {init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").and_then(|_| stdin.flush()).expect("write to the server");
    }

    /// Sends a request and waits (up to 10 s) for its answer; every stdout line must be JSON-RPC.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.stdout.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to {method} #{id} within 10 s; server stderr:\n{}", self.stderr())
            });
            let msg: Value =
                serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line:?}"));
            assert_eq!(msg["jsonrpc"], "2.0", "stdout carried a non-JSON-RPC message: {line}");
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// Answered `tools/call`s number `range`, each with an intent marked `[exit #i]`.
    fn calls(&mut self, range: std::ops::Range<usize>) {
        for i in range {
            let args = json!({"city": "Lisbon", "days": 1, "mcpeyeIntent": format!("[exit #{i}] The user checks tomorrow's weather.")});
            let answer = self.request("tools/call", json!({"name": "get_forecast", "arguments": args}));
            let ok = answer["result"].is_object() && answer["result"]["isError"].as_bool() != Some(true);
            assert!(ok, "call {i} answered {answer}");
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the server to exit on its own; fails (and kills it) past `EXIT_BOUND`.
    fn wait_exit(&mut self, after: &str) -> Duration {
        let start = Instant::now();
        if wait_for_exit(&mut self.child, EXIT_BOUND).is_none() {
            panic!("the server did not exit within {EXIT_BOUND:?} of {after}; stderr:\n{}", self.stderr());
        }
        // What it printed after the last answer must be JSON-RPC too.
        for line in self.stdout.try_iter() {
            let msg: Value =
                serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line:?}"));
            assert_eq!(msg["jsonrpc"], "2.0", "stdout carried a non-JSON-RPC message: {line}");
        }
        start.elapsed()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What the ingest holds right now (no waiting: the process has exited) is exactly the `n`
/// calls, each once, under the client's name; and the server said so on stderr as it exited.
fn assert_delivered(ingest: &IngestReceiver, n: usize, how: &str, session: &Session) {
    // The line is written before the exit; the thread reading stderr may be a moment behind.
    let end = Instant::now() + EXIT_BOUND;
    while !session.stderr().contains("analytics at exit") && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let server_stderr = &session.stderr();
    let report = format!("[stdio_server] analytics at exit: delivered everything: captured {n}, sent {n}, dropped 0");
    assert!(server_stderr.contains(&report), "no {report:?} in the server's stderr:\n{server_stderr}");
    let posts = posts(ingest);
    let events: Vec<&Value> = posts.iter().flat_map(|p| &p.events).collect();
    assert_eq!(
        events.len(),
        n,
        "events at the ingest when the server had exited after {how}, of {n} captured; server stderr:\n{server_stderr}"
    );
    for i in 0..n {
        let m = format!("[exit #{i}]");
        let count = events.iter().filter(|e| e["intent"].as_str().is_some_and(|t| t.starts_with(&m))).count();
        assert_eq!(count, 1, "events of call {m}");
    }
    for p in &posts {
        assert_eq!(p.client.as_deref(), Some(CLIENT), "identity.client");
    }
}

#[test]
fn sigterm_mid_session_delivers_every_event() {
    let ingest = IngestReceiver::start();
    let mut session = Session::start(&ingest);
    session.calls(0..7);
    // The client is still connected: stdin stays open.
    sigterm(&session.child);
    session.wait_exit("SIGTERM");
    assert_delivered(&ingest, 7, "SIGTERM after 7 answered calls", &session);
}

/// Past the flush threshold (20 events): part is shipped during the session, the rest at
/// SIGTERM; nothing twice.
#[test]
fn sigterm_after_a_threshold_flush_delivers_the_rest_once() {
    let ingest = IngestReceiver::start();
    let mut session = Session::start(&ingest);
    session.calls(0..25);
    let shipped = ingest.wait_for_events(20, Duration::from_secs(10)).len();
    assert!(shipped >= 20, "the threshold flush shipped {shipped} events; server stderr:\n{}", session.stderr());
    session.calls(25..47);
    // The client is still connected: stdin stays open.
    sigterm(&session.child);
    session.wait_exit("SIGTERM");
    assert_delivered(&ingest, 47, &format!("SIGTERM after 47 answered calls ({shipped} shipped before)"), &session);
}

#[test]
fn stdin_close_delivers_every_event() {
    let ingest = IngestReceiver::start();
    let mut session = Session::start(&ingest);
    session.calls(0..7);
    drop(session.stdin.take());
    session.wait_exit("stdin closing");
    assert_delivered(&ingest, 7, "its stdin closed after 7 answered calls", &session);
}
