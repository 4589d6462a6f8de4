//! Nothing leaks: the ingest secret and secrets seeded in tool arguments (an e-mail, an `sk-…`
//! key, a `password` field) appear in none of the library's output — diagnostics (callback and
//! default stderr), `Debug`/`Display` of its types, recorded panic messages, request bodies —
//! and bodies carry redaction markers instead. HTTPS goes out as TLS; the stdio example writes
//! nothing but JSON-RPC on stdout, whatever the ingest configuration.

mod common;

use common::interop::example;
use mcpeye::contract::markers;
use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{CallIdentity, Config, Diagnostic, DiagnosticKind, Manifest, Tracker};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(60);

const INGEST_SECRET: &str = "ingest-secret-Xy9Kq3";
const EMAIL: &str = "alice.secret@example.com";
const KEY: &str = "sk-live0123456789abcdefXYZ";
const PASSWORD: &str = "hunter2-P4ssw0rd";
const SECRETS: [&str; 4] = [INGEST_SECRET, EMAIL, KEY, PASSWORD];

/// Fails if any seeded secret appears in `text`.
fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} leaks {s:?}: {text}");
    }
}

/// Log a user in.
#[mcpeye::tool]
fn login(
    /// The user's e-mail.
    email: String,
    /// The user's API key.
    key: String,
    /// The user's password.
    password: String,
    /// How the call ends: "ok", "err" or "panic".
    mode: String,
) -> Result<String, String> {
    match mode.as_str() {
        // The password stays in its field: free text is redacted by pattern, not by name.
        "ok" => Ok(format!("welcome {email}, key {key} ({} chars)", password.len())),
        "err" => Err(format!("login failed for {email} with {key}")),
        _ => panic!("crashed on {email} {key}"),
    }
}

fn manifest(tracker: &Tracker) -> Manifest {
    Manifest::builder().tools(mcpeye::tool_defs![login]).tracker(tracker.clone()).build()
}

fn seeded_args(mode: &str) -> Value {
    json!({
        "email": EMAIL,
        "key": KEY,
        "password": PASSWORD,
        "mode": mode,
        "mcpeyeIntent": format!("Logging {EMAIL} in with {KEY}"),
    })
}

/// One call of each outcome; the panic is caught here (the dispatcher resumes it).
fn call_every_outcome(m: &Manifest) {
    for mode in ["ok", "err"] {
        let _ = m.call("login", seeded_args(mode));
    }
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.call("login", seeded_args("panic"))));
    assert!(panicked.is_err());
}

type Seen = Arc<Mutex<Vec<Diagnostic>>>;

fn collecting(config: Config) -> (Config, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    (config.on_error(move |d| s.lock().unwrap().push(d.clone())), seen)
}

/// Silences the default panic hook around `f`, so that stderr holds what the library wrote.
fn quiet_panics<T>(f: impl FnOnce() -> T) -> T {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = f();
    std::panic::set_hook(hook);
    out
}

#[test]
fn request_bodies_carry_markers_not_secrets() {
    let ingest = IngestReceiver::start();
    let config = Config::new("proj_sec").ingest_url(ingest.url()).ingest_secret(INGEST_SECRET).flush_threshold(1000);
    let tracker = Tracker::new(config).unwrap();
    quiet_panics(|| call_every_outcome(&manifest(&tracker)));
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    assert_eq!(requests.len(), 1);
    let body = String::from_utf8(requests[0].body.clone()).unwrap();
    assert_clean("the request body", &body);
    assert_eq!(requests[0].header("x-mcpeye-secret"), Some(INGEST_SECRET), "the secret travels in its header only");
    for marker in [markers::EMAIL, markers::KEY, markers::FIELD] {
        assert!(body.contains(marker), "no {marker} in {body}");
    }
    let events = requests[0].events();
    assert_eq!(events.len(), 3);
    // The password field is replaced whole; the e-mail and key are redacted inside every text.
    assert!(events.iter().all(|e| e["arguments"]["password"] == markers::FIELD));
    assert_eq!(events[0]["result"]["content"][0]["text"], "welcome [REDACTED_EMAIL], key [REDACTED_KEY] (16 chars)");
    assert_eq!(events[1]["errorMessage"], "login failed for [REDACTED_EMAIL] with [REDACTED_KEY]");
    assert!(events[2]["errorMessage"].as_str().unwrap().starts_with("the tool panicked: crashed on [REDACTED_EMAIL]"));
    assert!(events.iter().all(|e| e["intent"].as_str().unwrap().contains(markers::EMAIL)));
}

#[test]
fn diagnostics_and_debug_output_never_show_a_secret() {
    let stalled = IngestReceiver::start();
    stalled.respond_with(|_| Reply::stall());
    let refusing = IngestReceiver::start();
    refusing.script([Reply::status(503)]);
    refusing.respond_with(|_| Reply::status(401));
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut all: Vec<String> = Vec::new();
    for url in [refusing.url(), format!("http://{dead}"), stalled.url()] {
        let config = Config::new("proj_sec")
            .ingest_url(&url)
            .ingest_secret(INGEST_SECRET)
            .flush_threshold(1)
            .request_timeout(Duration::from_secs(2))
            .retry_backoff(Duration::from_millis(10), Duration::from_millis(20))
            .denylist_fields(["ssn"])
            .identify(|r| {
                let args = r.arguments();
                // A buggy identify callback whose panic message holds the user's data.
                panic!("no user for {}", args["email"]);
            });
        all.push(format!("{config:?}"));
        let (config, seen) = collecting(config);
        let tracker = Tracker::new(config).unwrap();
        all.push(format!("{tracker:?}"));
        let m = manifest(&tracker);
        quiet_panics(|| call_every_outcome(&m));
        let mut record =
            mcpeye::CallRecord::new("", json!({"email": EMAIL}), mcpeye::CallOutcome::error(format!("bad {KEY}")));
        record.timestamp_ms = 0;
        tracker.record(record);
        let report = tracker.flush(Duration::from_secs(3));
        all.push(format!("{report:?}"));
        let report = tracker.shutdown(Duration::from_millis(100));
        all.push(format!("{report:?} {:?}", report.stats));
        quiet_panics(|| call_every_outcome(&m));
        // A request abandoned by the shutdown reports its events when it ends (request timeout).
        let end = Instant::now() + PATIENCE;
        while tracker.stats().pending > 0 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        for d in seen.lock().unwrap().iter() {
            all.push(format!("{d} {d:?}"));
        }
    }
    let guard = mcpeye::init(Config::new("proj_sec").ingest_url(refusing.url()).ingest_secret(INGEST_SECRET)).unwrap();
    all.push(format!("{guard:?} {:?}", guard.tracker()));
    drop(guard);
    for err in [
        Config::new("p").ingest_secret(format!("{INGEST_SECRET}\n")),
        Config::new("p").ingest_url(format!("http://{EMAIL}:{PASSWORD}@[::1")),
        Config::new(" "),
    ]
    .map(|c| Tracker::new(c).unwrap_err())
    {
        all.push(format!("{err} {err:?}"));
    }
    let text = all.join("\n");
    assert_clean("diagnostics and debug output", &text);
    // The scenario did reach the problems whose messages are checked.
    for kind in
        ["Unauthorized", "Retrying", "Network", "Invalid", "IdentifyPanicked", "AfterShutdown", "ShutdownTimeout"]
    {
        assert!(text.contains(kind), "no {kind} diagnostic in:\n{text}");
    }
}

/// Child half of [`default_stderr_diagnostics_never_show_a_secret`]: the scenario with the
/// default diagnostics writer, run in its own process so its stderr can be read.
#[test]
#[ignore = "run as a child process by default_stderr_diagnostics_never_show_a_secret"]
fn child_writes_default_diagnostics() {
    let refusing = IngestReceiver::start();
    refusing.respond_with(|_| Reply::status(401));
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for url in [refusing.url(), format!("http://{dead}")] {
        let config = Config::new("proj_sec")
            .ingest_url(url)
            .ingest_secret(INGEST_SECRET)
            .flush_threshold(1)
            .retry_backoff(Duration::from_millis(10), Duration::from_millis(20))
            .identify(|r| -> Option<CallIdentity> { panic!("no user for {}", r.arguments()["email"]) });
        let tracker = Tracker::new(config).unwrap();
        quiet_panics(|| call_every_outcome(&manifest(&tracker)));
        tracker.flush(Duration::from_secs(2));
        tracker.shutdown(Duration::from_millis(100));
        quiet_panics(|| call_every_outcome(&manifest(&tracker)));
    }
    // The default URL and plain http:// off this machine (nothing is sent: no call is made).
    Tracker::new(Config::new("p").ingest_secret(INGEST_SECRET)).unwrap().shutdown(Duration::ZERO);
    Tracker::new(Config::new("p").ingest_url("http://192.0.2.1:9").ingest_secret(INGEST_SECRET))
        .unwrap()
        .shutdown(Duration::ZERO);
}

#[test]
fn default_stderr_diagnostics_never_show_a_secret() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_writes_default_diagnostics", "--test-threads=1", "--nocapture"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stderr}");
    assert_clean("stderr", &stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("[mcpeye] ")).collect();
    for needle in [
        "secret is likely wrong",
        "could not reach the ingest",
        "identify callback panicked",
        "after mcpeye shut down",
        "no ingest URL configured",
        "plain http://",
    ] {
        assert!(lines.iter().any(|l| l.contains(needle)), "no {needle:?} line in:\n{stderr}");
    }
}

#[test]
fn https_urls_speak_tls() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = Config::new("p")
        .ingest_url(format!("https://127.0.0.1:{port}"))
        .ingest_secret(INGEST_SECRET)
        .flush_threshold(1)
        .request_timeout(Duration::from_secs(5));
    let tracker = Tracker::new(config).unwrap();
    quiet_panics(|| call_every_outcome(&manifest(&tracker)));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut head = [0u8; 512];
        let n = stream.read(&mut head).unwrap_or(0);
        let _ = tx.send(head[..n].to_vec());
    });
    let hello = rx.recv_timeout(PATIENCE).expect("the tracker connected");
    // A TLS record of type handshake (0x16), version 3.x, holding a ClientHello (1).
    assert!(hello.len() > 5, "{hello:?}");
    assert_eq!((hello[0], hello[1], hello[5]), (0x16, 0x03, 0x01), "not a TLS ClientHello: {hello:?}");
    assert_clean("the ClientHello", &String::from_utf8_lossy(&hello));
    tracker.shutdown(Duration::ZERO);
}

#[test]
fn plain_http_off_this_machine_gives_one_warning_and_nothing_is_sent() {
    let (config, seen) = collecting(
        Config::new("p")
            // A documentation address (TEST-NET-1): nothing is recorded, so nothing is sent.
            .ingest_url("http://192.0.2.1:9")
            .ingest_secret(INGEST_SECRET)
            .flush_interval(Duration::from_secs(3600)),
    );
    let tracker = Tracker::new(config).unwrap();
    let report = tracker.shutdown(Duration::ZERO);
    assert_eq!(report.stats.captured, 0);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.iter().map(|d| d.kind).collect::<Vec<_>>(), [DiagnosticKind::InsecureIngestUrl]);
    assert!(seen[0].message.contains("https://"));
    assert_clean("the warning", &seen[0].message);
}

fn rpc(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn call_line(id: u64, name: &str, arguments: Value) -> String {
    rpc(id, "tools/call", json!({"name": name, "arguments": arguments}))
}

#[test]
fn the_stdio_example_writes_only_json_rpc_to_stdout() {
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let input = [
        rpc(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        rpc(2, "tools/list", json!({})),
        call_line(3, "get_forecast", json!({"city": "Lisbon", "mcpeyeIntent": format!("for {EMAIL}")})),
        call_line(4, "get_forecast", json!({"city": "Lisbon", "days": 9})),
        call_line(5, "get_forecast", json!({"city": KEY, "days": "x"})),
        call_line(6, "convert_temperature", json!({"value": 20.0, "unit": "C"})),
        call_line(7, "mcpeye_request_capability", json!({"capability": "export as CSV"})),
        call_line(8, "mcpeye_request_capability", json!({})),
        call_line(9, "no_such_tool", json!({"password": PASSWORD})),
        "{garbage".to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
        r#"{"jsonrpc":"2.0","id":10,"method":"nope"}"#.to_owned(),
        "\u{1b}[31mnot json\u{7}".to_owned(),
        rpc(11, "ping", json!({})),
    ];
    // Every request (1 to 11), and rmcp's "Invalid request" for the JSON lines that are not a
    // message (`[]`, `null`); lines that are not JSON at all get no answer.
    let expected_replies = 13;
    for url in [format!("http://{dead}"), "not a url".to_owned()] {
        let mut child = Command::new(example("stdio_server"))
            .env("MCPEYE_INGEST_URL", &url)
            .env("MCPEYE_INGEST_SECRET", INGEST_SECRET)
            .env("MCPEYE_PROJECT_ID", "proj_stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            for line in &input {
                writeln!(stdin, "{line}").unwrap();
            }
        } // closing stdin ends the server
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || BufReader::new(stdout).lines().map(Result::unwrap).collect::<Vec<_>>());
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let end = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > end {
                let _ = child.kill();
                panic!("the stdio server did not exit after stdin closed ({url})");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{url}: {status}");
        let lines = reader.join().unwrap();
        let stderr = err_reader.join().unwrap();
        assert_eq!(lines.len(), expected_replies, "{url}: {lines:#?}\nstderr: {stderr}");
        for line in &lines {
            let msg: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{url}: not JSON on stdout: {line:?}: {e}"));
            assert_eq!(msg["jsonrpc"], "2.0", "{line}");
            // rmcp leaves the id out of the error for a line that is not a message.
            assert!(msg.get("id").is_some() || msg.get("error").is_some(), "{line}");
            assert!(msg.get("result").is_some() != msg.get("error").is_some(), "{line}");
        }
        let by_id =
            |id: u64| lines.iter().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|m| m["id"] == id).unwrap();
        assert_eq!(by_id(3)["result"]["isError"], Value::Null);
        assert_eq!(by_id(4)["result"]["isError"], true);
        assert!(!by_id(5).to_string().contains(KEY));
        assert_eq!(by_id(9)["error"]["code"], -32602);
        assert_eq!(by_id(11)["result"], json!({}));
        assert_clean("the stdio server's stderr", &stderr);
        assert_clean("the stdio server's stdout", &lines.join("\n"));
    }
}
