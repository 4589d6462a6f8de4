//! `mcpeye proxy -- COMMAND` in front of a server written against raw JSON-RPC lines
//! (`tests/interop/raw_echo_server.py`, Python's standard library only), driven line by line:
//! what the server receives (it logs every line), what the client receives, byte for byte, and
//! what reaches the ingest and the event log; then the faults: a crash mid-call, a line that is
//! not JSON, a cancelled call, a command that does not start, a server that ignores the end of
//! its stdin.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for a line before it fails (a hang guard, not a measurement).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The proxy running a server, its stdin and stdout held by the test.
struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    dir: PathBuf,
}

impl Proxy {
    /// `mcpeye proxy ARGS -- SERVER...`, reporting to `ingest`, its event log and the server's
    /// line log in a fresh directory.
    fn start(test: &str, ingest: &IngestReceiver, args: &[&str], server: &[&std::ffi::OsStr]) -> Proxy {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("proxy-{test}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(mcpeye_cli())
            .arg("proxy")
            .arg("--event-log")
            .arg(dir.join("events"))
            .args(args)
            .arg("--")
            .args(server)
            .envs(server_env(ingest))
            .env("RAW_ECHO_LOG", dir.join("server-saw.jsonl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpeye proxy");
        let (tx, lines) = mpsc::channel();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Proxy { stdin: child.stdin.take(), child, lines, stderr, dir }
    }

    fn raw_echo(test: &str, ingest: &IngestReceiver) -> Option<Proxy> {
        let python = python3(test)?;
        let script = script("raw_echo_server.py");
        Some(Proxy::start(test, ingest, &[], &[python.as_os_str(), script.as_os_str()]))
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{message}").expect("write to the proxy");
    }

    /// The next line the client gets, as it came.
    fn recv_line(&self) -> String {
        self.lines.recv_timeout(HANG_GUARD).expect("a line from the proxy within the hang guard")
    }

    fn recv(&self) -> Value {
        let line = self.recv_line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the proxy wrote a line that is not JSON ({e}): {line}"))
    }

    /// Sends a request and returns its answer (the lines before it, such as notifications, skipped).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.recv();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn initialize(&mut self) {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw-client", "version": "2.0"}});
        let answer = self.request(0, "initialize", params);
        assert_eq!(answer["result"]["serverInfo"]["name"], "raw-echo", "{answer}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Closes the proxy's stdin (the client leaves) and waits for it to exit.
    fn close(mut self) -> (ExitStatus, String, PathBuf) {
        drop(self.stdin.take());
        let status = wait_for_exit(&mut self.child, HANG_GUARD).expect("the proxy exits once its client leaves");
        (status, self.stderr.join().unwrap(), self.dir)
    }

    /// Every line the server received.
    fn server_saw(&self) -> Vec<Value> {
        server_saw(&self.dir)
    }
}

fn server_saw(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("server-saw.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

fn events(ingest: &IngestReceiver) -> Vec<Value> {
    posts(ingest).into_iter().flat_map(|p| p.events).collect()
}

#[test]
fn the_client_sees_mcpeye_intent_and_the_server_never_does() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("intent", &ingest));
    proxy.initialize();
    let page1 = proxy.request(1, "tools/list", json!({}));
    let echo = &page1["result"]["tools"][0];
    assert_eq!(echo["inputSchema"]["properties"]["mcpeyeIntent"]["type"], "string", "{page1}");
    assert_eq!(page1["result"]["nextCursor"], "page-2", "pagination passes: {page1}");
    let page2 = proxy.request(2, "tools/list", json!({"cursor": "page-2"}));
    let tools = page2["result"]["tools"].as_array().unwrap();
    let owns = tools.iter().find(|t| t["name"] == "owns_intent").unwrap();
    assert_eq!(owns["inputSchema"]["properties"]["mcpeyeIntent"]["description"], "mine", "the server's own is kept");
    assert_eq!(tools.last().unwrap()["name"], "mcpeye_request_capability", "{page2}");

    let echoed =
        proxy.request(3, "tools/call", call("echo", json!({"text": "hi", "mcpeyeIntent": "checking the proxy"})));
    assert_eq!(text(&echoed), r#"{"text": "hi"}"#, "the server got the arguments without the intent");
    let owned = proxy.request(4, "tools/call", call("owns_intent", json!({"mcpeyeIntent": "its own"})));
    assert_eq!(text(&owned), r#"{"mcpeyeIntent": "its own"}"#, "a tool that declares it gets it");
    let reserved =
        proxy.request(5, "tools/call", call("mcpeye_request_capability", json!({"capability": "CSV export"})));
    assert!(text(&reserved).starts_with("Thanks. This capability request has been recorded"), "{reserved}");

    let saw = proxy.server_saw();
    let calls: Vec<&Value> = saw.iter().filter(|m| m["method"] == "tools/call").collect();
    assert_eq!(calls.len(), 2, "the reserved tool never reaches the server: {saw:#?}");
    assert_eq!(calls[0]["params"]["arguments"], json!({"text": "hi"}));
    let (status, stderr, _) = proxy.close();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("mcpeye proxy: analytics at exit: delivered everything"), "{stderr}");

    let events = events(&ingest);
    let of =
        |tool: &str| events.iter().find(|e| e["toolName"] == tool).unwrap_or_else(|| panic!("{tool}: {events:#?}"));
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(
        (of("echo")["intent"].clone(), of("echo")["arguments"].clone()),
        (json!("checking the proxy"), json!({"text": "hi"}))
    );
    assert_eq!(
        of("owns_intent")["arguments"],
        json!({"mcpeyeIntent": "its own"}),
        "not an intent: the tool's own argument"
    );
    assert_eq!(of("owns_intent").get("intent"), None);
    assert_eq!(of("mcpeye_request_capability")["arguments"]["capability"], "CSV export");
    let client = posts(&ingest).into_iter().map(|p| p.client).collect::<Vec<_>>();
    assert!(client.iter().all(|c| c.as_deref() == Some("raw-client/2.0")), "{client:?}");
}

/// `--feedback`: the feedback tool is listed after the reserved tool, answered by the proxy
/// (never forwarded), and recorded with its arguments redacted, at the ingest and in the event
/// log; invalid arguments are an error result, recorded as such.
#[test]
fn with_feedback_the_proxy_lists_answers_and_records_the_feedback_tool() {
    let ingest = IngestReceiver::start();
    let python = or_skip!(python3("feedback"));
    let script = script("raw_echo_server.py");
    let mut proxy = Proxy::start("feedback", &ingest, &["--feedback"], &[python.as_os_str(), script.as_os_str()]);
    proxy.initialize();
    proxy.request(1, "tools/list", json!({}));
    let page2 = proxy.request(2, "tools/list", json!({"cursor": "page-2"}));
    let names: Vec<&str> =
        page2["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names[names.len() - 2..], ["mcpeye_request_capability", "mcpeye_send_feedback"], "{page2}");
    let feedback = json!({"category": "issue", "text": "echo drops accents; write to ada@example.com",
        "task_completed": false, "mcpeyeIntent": "not for this tool"});
    let answered = proxy.request(3, "tools/call", call("mcpeye_send_feedback", feedback));
    assert_eq!(text(&answered), mcpeye::contract::FEEDBACK_TOOL_ACK, "{answered}");
    let invalid = proxy.request(4, "tools/call", call("mcpeye_send_feedback", json!({"category": "issue"})));
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert!(text(&invalid).contains("`text`"), "{invalid}");
    let saw = proxy.server_saw();
    assert!(!saw.iter().any(|m| m["method"] == "tools/call"), "the feedback tool never reaches the server: {saw:#?}");
    let (status, stderr, dir) = proxy.close();
    assert!(status.success(), "{status}: {stderr}");

    let events = events(&ingest);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|e| e["toolName"] == "mcpeye_send_feedback"), "{events:#?}");
    let sent = events.iter().find(|e| e["isError"] == false).unwrap();
    let redacted = "echo drops accents; write to [REDACTED_EMAIL]";
    assert_eq!(sent["arguments"], json!({"category": "issue", "text": redacted, "task_completed": false}), "{sent:#}");
    assert_eq!((sent["durationMs"].clone(), sent.get("intent")), (json!(0), None), "{sent:#}");
    let log = std::fs::read_dir(dir.join("events")).unwrap().flat_map(|f| {
        std::fs::read_to_string(f.unwrap().path()).unwrap().lines().map(str::to_owned).collect::<Vec<_>>()
    });
    let calls: Vec<Value> =
        log.map(|l| serde_json::from_str::<Value>(&l).unwrap()).filter(|l| l["kind"] == "call").collect();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let logged = calls.iter().find(|l| l["event"]["isError"] == false).unwrap();
    assert_eq!(
        (logged["tool"].clone(), logged["event"]["arguments"]["text"].clone()),
        (json!("mcpeye_send_feedback"), json!(redacted))
    );
}

#[test]
fn every_other_message_passes_byte_for_byte_in_both_directions() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("bytes", &ingest));
    proxy.initialize();
    // The server writes `json.dumps`'s spaced JSON: a re-serialised message would lose them.
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "demo://a"}}));
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"uri": "demo://a", "text": "resource text"}]}}"#
    );
    let prompt = proxy.request(2, "prompts/get", json!({"name": "p"}));
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "prompt text");
    let missing = proxy.request(3, "no/such/method", json!({}));
    assert_eq!(missing["error"]["code"], -32601, "{missing}");
    let pong = proxy.request(4, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));

    // Progress for the request's token, then its answer.
    proxy.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "tok-1"}}}));
    let progress = proxy.recv();
    assert_eq!(
        (progress["method"].clone(), progress["params"]["progressToken"].clone()),
        (json!("notifications/progress"), json!("tok-1"))
    );
    assert_eq!(text(&proxy.recv()), "done");

    // A request of the server's (sampling), answered by the client through the proxy.
    proxy.send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}));
    let asked = proxy.recv();
    assert_eq!(
        (asked["method"].clone(), asked["id"].clone()),
        (json!("sampling/createMessage"), json!("ask-1")),
        "{asked}"
    );
    let reply = json!({"jsonrpc": "2.0", "id": "ask-1", "result": {"role": "assistant",
        "content": {"type": "text", "text": "hi there"}, "model": "m", "stopReason": "endTurn"}});
    proxy.send(reply.clone());
    assert_eq!(text(&proxy.recv()), "the client said: hi there");
    let (status, stderr, dir) = proxy.close();
    assert!(status.success(), "{status}: {stderr}");
    let saw = server_saw(&dir);
    assert!(saw.contains(&reply), "the client's answer reached the server as sent: {saw:#?}");
    assert!(saw.iter().any(|m| m["method"] == "notifications/initialized"));
}

#[test]
fn calls_reach_the_ingest_and_the_event_log_that_mcpeye_report_reads() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("log", &ingest));
    proxy.initialize();
    proxy.request(1, "tools/list", json!({}));
    proxy.request(2, "tools/list", json!({"cursor": "page-2"}));
    proxy.request(3, "tools/call", call("echo", json!({"text": "a", "mcpeyeIntent": "the user wants a"})));
    let failed = proxy.request(4, "tools/call", call("fail", json!({"mcpeyeIntent": "the user wants b"})));
    assert_eq!(failed["result"]["isError"], true);
    let unknown = proxy.request(5, "tools/call", call("export_pdf", json!({"mcpeyeIntent": "the user wants a PDF"})));
    assert_eq!(unknown["error"]["code"], -32602);
    proxy.request(6, "resources/read", json!({"uri": "demo://a"}));
    let (status, stderr, dir) = proxy.close();
    assert!(status.success(), "{status}: {stderr}");

    let events = events(&ingest);
    assert_eq!(events.len(), 3, "{events:#?}");
    let of = |tool: &str| events.iter().find(|e| e["toolName"] == tool).unwrap();
    assert_eq!(of("fail")["errorMessage"], "it failed");
    assert_eq!(of("export_pdf")["intent"], "the user wants a PDF", "an unknown tool is recorded with its intent");
    assert_eq!(of("export_pdf")["isError"], true);

    let log: Vec<Value> = std::fs::read_dir(dir.join("events"))
        .unwrap()
        .flat_map(|f| {
            std::fs::read_to_string(f.unwrap().path()).unwrap().lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    let tools = log.iter().find(|l| l["kind"] == "tools").expect("a tools line");
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.first(), Some(&"echo"), "both pages, in order: {names:?}");
    assert_eq!(names.last(), Some(&"mcpeye_request_capability"), "{names:?}");
    let echo = log.iter().find(|l| l["kind"] == "call" && l["tool"] == "echo").unwrap();
    assert_eq!(echo["toolHash"], tools["tools"][0]["hash"], "{echo}");
    assert_eq!(echo["client"], "raw-client/2.0");
    let read = log.iter().find(|l| l["kind"] == "method" && l["method"] == "resources/read").unwrap();
    assert_eq!(read["target"], "demo://a");

    let report = run(
        Command::new(mcpeye_cli()).args(["report", "--json"]).arg(dir.join("events")),
        None,
        Duration::from_secs(60),
    );
    assert!(report.status.success(), "{}", report.stderr);
    assert!(report.stdout.contains("the user wants a PDF"), "the report reads the proxy's log: {}", report.stdout);
}

#[test]
fn a_server_that_crashes_mid_call_leaves_no_call_unanswered() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("crash", &ingest));
    proxy.initialize();
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("crash", json!({"mcpeyeIntent": "crash it"}))}));
    let answer = proxy.recv();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(1), json!(-32603)), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("exited before answering"), "{answer}");
    let (status, stderr, _) = proxy.close();
    assert_eq!(status.code(), Some(3), "the proxy exits with the server's status: {stderr}");
    let events = events(&ingest);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!((events[0]["toolName"].clone(), events[0]["isError"].clone()), (json!("crash"), json!(true)));
    assert_eq!(events[0]["intent"], "crash it");
}

#[test]
fn a_line_that_is_not_json_is_dropped_with_a_note_and_the_call_still_answered() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("garbage", &ingest));
    proxy.initialize();
    let answer = proxy.request(1, "tools/call", call("garbage", json!({})));
    assert_eq!(text(&answer), "after garbage");
    let (status, stderr, _) = proxy.close();
    assert!(status.success());
    assert!(stderr.contains("not JSON-RPC; dropped: this is not JSON"), "{stderr}");
}

#[test]
fn a_cancelled_call_is_recorded_as_cancelled() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("cancel", &ingest));
    proxy.initialize();
    proxy.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("slow", json!({}))}));
    proxy.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "took too long"}}));
    // The server answers the next request after it read the cancellation.
    proxy.request(2, "ping", json!({}));
    let (_, stderr, dir) = proxy.close();
    let events = events(&ingest);
    assert_eq!(events.len(), 1, "{events:#?} {stderr}");
    assert_eq!(events[0]["toolName"], "slow");
    assert!(events[0]["errorMessage"].as_str().unwrap_or_default().contains("took too long"), "{:#}", events[0]);
    assert!(server_saw(&dir).iter().any(|m| m["method"] == "notifications/cancelled"), "the cancellation is forwarded");
}

#[test]
fn a_command_that_does_not_start_is_a_clear_error() {
    let ingest = IngestReceiver::start();
    let out = run(
        Command::new(mcpeye_cli())
            .args(["proxy", "--no-event-log", "--", "/no/such/mcp-server"])
            .envs(server_env(&ingest)),
        None,
        HANG_GUARD,
    );
    assert!(!out.status.success());
    assert!(out.stderr.contains("cannot start the server `/no/such/mcp-server`"), "{}", out.stderr);
    assert_eq!(out.stdout, "", "nothing but protocol on stdout");
}

#[test]
fn a_server_that_ignores_the_end_of_its_stdin_is_stopped() {
    let ingest = IngestReceiver::start();
    let python = or_skip!(python3("stubborn"));
    // It says it is ready once SIGTERM is ignored: stopped earlier, it would not be stubborn.
    let stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n\
                    print('{\"jsonrpc\": \"2.0\", \"method\": \"ready\"}', flush=True)\nwhile True: time.sleep(1)";
    let proxy =
        Proxy::start("stubborn", &ingest, &["--grace", "0"], &[python.as_os_str(), "-c".as_ref(), stubborn.as_ref()]);
    assert_eq!(proxy.recv()["method"], "ready");
    let (status, stderr, _) = proxy.close();
    assert_eq!(status.code(), Some(128 + 9), "SIGKILL after SIGTERM was ignored: {stderr}");
}

#[test]
fn a_10_mb_result_passes_whole_and_is_recorded_capped() {
    let ingest = IngestReceiver::start();
    let python = or_skip!(python3("large"));
    let echo = script("raw_echo_server.py");
    let server = [python.as_os_str(), echo.as_os_str()];
    // 20 MB to cap and redact at exit (the arguments and their echo): time enough, even in a debug build.
    let mut proxy = Proxy::start("large", &ingest, &["--flush-timeout", "120"], &server);
    proxy.initialize();
    let big = "x".repeat(10 * 1024 * 1024);
    let answer = proxy.request(1, "tools/call", call("echo", json!({"text": big, "mcpeyeIntent": "a big one"})));
    assert_eq!(text(&answer).len(), big.len() + r#"{"text": ""}"#.len(), "the client gets the whole result");
    let (status, stderr, _) = proxy.close();
    assert!(status.success(), "{stderr}");
    let events = events(&ingest);
    assert_eq!(events.len(), 1, "{stderr}");
    assert_eq!(events[0]["intent"], "a big one");
    assert!(events[0].to_string().len() < 1024 * 1024, "the event is capped, not 10 MB");
}

#[test]
fn sigterm_to_the_proxy_stops_the_server_and_delivers_the_events() {
    let ingest = IngestReceiver::start();
    let mut proxy = or_skip!(Proxy::raw_echo("sigterm", &ingest));
    proxy.initialize();
    proxy.request(1, "tools/call", call("echo", json!({"mcpeyeIntent": "before the signal"})));
    sigterm(&proxy.child);
    let status = wait_for_exit(&mut proxy.child, HANG_GUARD).expect("the proxy exits on SIGTERM");
    let stderr = std::mem::replace(&mut proxy.stderr, std::thread::spawn(String::new)).join().unwrap();
    assert!(stderr.contains("analytics at exit: delivered everything"), "{status}: {stderr}");
    let events = events(&ingest);
    assert_eq!((events.len(), events[0]["intent"].clone()), (1, json!("before the signal")), "{stderr}");
}
