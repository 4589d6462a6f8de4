//! A server killed with SIGKILL mid-stream loses only its last moments: the stdio example, run
//! with `MCPEYE_OUTBOX_DIR` against an ingest that answers 503 (so nothing is delivered and
//! events pile up), or one that accepts but takes 90 ms per POST, answers a stream of
//! `tools/call`s and is killed between two of them. Started again on the same directory, with the
//! ingest back, it delivers every call answered more than the window of loss before the kill (the
//! flusher drains to disk every 100 ms whatever the ingest does; this test allows 1 s, so that a
//! loaded machine does not fail it), each with one `callId`, and only the batch in flight at the
//! kill may arrive twice.

mod common;

use common::interop::example;
use mcpeye::testing::{IngestReceiver, Reply};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The window of loss this test allows: calls answered less than this before the kill may be lost.
const WINDOW: Duration = Duration::from_secs(1);
/// How long the calls stream before the kill.
const STREAM: Duration = Duration::from_millis(2500);
/// Generous bound for waits that only guard against a hang.
const PATIENCE: Duration = Duration::from_secs(60);

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One run of the server, speaking JSON-RPC over its stdin and stdout.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(exe: &PathBuf, ingest: &IngestReceiver, outbox: &PathBuf) -> Server {
        let mut child = Command::new(exe)
            .env("MCPEYE_PROJECT_ID", "kill-test")
            .env("MCPEYE_INGEST_URL", ingest.url())
            .env("MCPEYE_OUTBOX_DIR", outbox)
            .env_remove("MCPEYE_INGEST_SECRET")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, stdout, next_id: 0 };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "kill-test", "version": "1.0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").and_then(|_| stdin.flush()).unwrap();
    }

    /// Sends a request and reads lines until its answer.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    fn forecast(&mut self, city: &str) {
        let reply = self.request("tools/call", json!({"name": "get_forecast", "arguments": {"city": city, "days": 1}}));
        assert!(reply["result"]["content"].is_array(), "{reply}");
    }
}

#[test]
fn a_server_killed_mid_stream_delivers_at_restart_what_it_captured_before_the_window() {
    killed_mid_stream("down", Reply::status(503));
}

#[test]
fn a_server_killed_behind_a_slow_ingest_loses_only_the_window_and_repeats_only_the_batch_in_flight() {
    killed_mid_stream("slow", Reply::ok().delay(Duration::from_millis(90)));
}

/// Most events in one batch (`Config::max_batch_events`' default): one identity has at most one
/// batch in flight, so at most this many are sent again after the kill.
const BATCH: usize = 500;

fn killed_mid_stream(name: &str, first_run: Reply) {
    let exe = example("stdio_server");
    let outbox = TempDir(std::env::temp_dir().join(format!("mcpeye-outbox-kill-{name}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&outbox.0);
    let ingest = IngestReceiver::start();
    let accepts = first_run.clone() != Reply::status(503);
    ingest.respond_with(move |_| first_run.clone());

    // Run 1: a stream of calls, none of them delivered, then SIGKILL between two calls.
    let mut server = Server::start(&exe, &ingest, &outbox.0);
    let mut answered: Vec<(String, Instant)> = Vec::new();
    let start = Instant::now();
    while start.elapsed() < STREAM {
        let city = format!("city-{}", answered.len());
        server.forecast(&city);
        answered.push((city, Instant::now()));
        std::thread::sleep(Duration::from_millis(1));
    }
    let killed_at = Instant::now();
    server.child.kill().unwrap(); // SIGKILL on Unix: no handler, no flush, no destructor runs.
    server.child.wait().unwrap();
    assert_eq!(ingest.events().is_empty(), !accepts, "only the slow ingest accepts in the first run");
    // Whatever the first run's last request was doing, it has ended before the restart.
    let end = Instant::now() + PATIENCE;
    while ingest.requests().iter().any(|r| r.answered_at.is_none() && r.status / 100 == 2) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }

    // Run 2, on the same outbox, with the ingest back: the recovered events are sent first.
    ingest.respond_with(|_| Reply::ok());
    let must: Vec<&str> =
        answered.iter().filter(|(_, at)| killed_at.duration_since(*at) > WINDOW).map(|(c, _)| c.as_str()).collect();
    assert!(must.len() > 100, "the stream was too short to test anything: {} calls", must.len());
    let mut server = Server::start(&exe, &ingest, &outbox.0);
    let end = Instant::now() + PATIENCE;
    while Instant::now() < end {
        let delivered: std::collections::HashSet<String> =
            ingest.events().iter().filter_map(|e| e["arguments"]["city"].as_str().map(str::to_owned)).collect();
        if must.iter().all(|c| delivered.contains(*c)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    server.forecast("after-restart");
    drop(server.stdin.take()); // the client leaves: the server exits, delivering what is left
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");

    let events = ingest.events();
    let mut call_ids: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in &events {
        if e["toolName"] == "get_forecast" {
            let city = e["arguments"]["city"].as_str().unwrap();
            call_ids.entry(city).or_default().push(e["callId"].as_str().unwrap());
        }
    }
    let lost: Vec<&&str> = must.iter().filter(|c| !call_ids.contains_key(**c)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} calls answered more than {WINDOW:?} before the kill were lost: {lost:?}",
        lost.len(),
        must.len()
    );
    assert!(call_ids.contains_key("after-restart"));
    // Nothing invented, and a copy (at least once) carries the callId of its original.
    for (city, ids) in &call_ids {
        assert!(*city == "after-restart" || answered.iter().any(|(c, _)| c == city), "{city} was never called");
        assert!(ids.iter().all(|id| *id == ids[0]), "{city} was delivered under several callIds: {ids:?}");
    }

    let copies = events.iter().filter(|e| e["toolName"] == "get_forecast").count() - call_ids.len();
    assert!(copies <= BATCH, "{copies} events delivered twice: more than the batch in flight at the kill");

    // What this run measured, for the record (`cargo test --test outbox_kill -- --nocapture`).
    let kept: Vec<Duration> = answered
        .iter()
        .filter(|(c, _)| call_ids.contains_key(c.as_str()))
        .map(|(_, at)| killed_at.duration_since(*at))
        .collect();
    let youngest_kept = kept.iter().min().copied().unwrap_or_default();
    let oldest_lost = answered
        .iter()
        .filter(|(c, _)| !call_ids.contains_key(c.as_str()))
        .map(|(_, at)| killed_at.duration_since(*at))
        .max();
    eprintln!(
        "{name}: {} calls answered, {} delivered, {copies} twice; youngest delivered answered {youngest_kept:?} before the kill, \
         oldest lost {oldest_lost:?} before it",
        answered.len(),
        kept.len()
    );
}
