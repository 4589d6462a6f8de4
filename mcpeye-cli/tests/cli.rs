//! `mcpeye report` on the fixtures (a scripted shop session as an event log, and the ingest's
//! copy of part of it as a payload file), and `mcpeye receive` fed by a real tracker.

mod common;

use mcpeye_runtime::{Config, Identity, Manifest, Tracker};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcpeye");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mcpeye-cli-{name}-{}", std::process::id()))
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN).args(args).output().expect("the mcpeye binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn report_prints_text_json_and_a_page() {
    let log = fixture("events.jsonl");
    let payloads = fixture("payloads.jsonl");
    let html = temp("report.html");
    let (ok, text, err) =
        run(&["report", log.to_str().unwrap(), payloads.to_str().unwrap(), "--html", html.to_str().unwrap()]);
    assert!(ok, "{err}");
    for needle in [
        "23 calls, 5 errors",
        "3 re-sent counted once",
        "export my orders as CSV",
        "never called: track_parcel",
        "search_products → place_order",
        "conv-02 (5 calls): place_order",
        "place_order      1.1.0 · e27b64d09c5f",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>") && page.contains("Place an order for a product by its SKU"));
    std::fs::remove_file(&html).unwrap();

    // stderr is not a terminal here: no progress bar, nothing but the page's path.
    assert_eq!(err, format!("mcpeye: wrote {}\n", html.display()));

    let (ok, json, err) = run(&["report", "--json", log.to_str().unwrap()]);
    assert!(ok && err.is_empty(), "{err}");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["overview"]["calls"], 22);
    assert_eq!(report["intentGap"]["asks"][0]["count"], 3);
    assert_eq!(report["tools"]["neverCalled"], serde_json::json!(["track_parcel"]));
    assert_eq!(report["paths"]["endedOnErrorCount"], 1);

    // A directory means its .jsonl files; the same report.
    let (ok, from_dir, _) = run(&["report", "--json", fixture("").to_str().unwrap()]);
    assert!(ok);
    let from_dir: Value = serde_json::from_str(&from_dir).unwrap();
    assert_eq!(from_dir["overview"]["calls"], 23);

    // A payload file alone says what the sections it cannot fill need.
    let (ok, text, _) = run(&["report", payloads.to_str().unwrap()]);
    assert!(ok);
    assert!(text.contains("needs conversations") && text.contains("needs tools never called"), "{text}");
}

#[test]
fn errors_say_what_is_wrong_and_every_command_has_help() {
    let (ok, _, err) = run(&["report", "/nonexistent/events.jsonl"]);
    assert!(!ok);
    assert!(err.contains("skipped /nonexistent/events.jsonl: cannot read"), "{err}");
    assert!(err.contains("no call in the input"), "{err}");
    for args in [&["--help"][..], &["report", "--help"], &["receive", "--help"]] {
        let (ok, text, _) = run(args);
        assert!(ok && text.contains("Usage: mcpeye"), "{args:?}: {text}");
    }
    let (ok, _, err) = run(&["report"]);
    assert!(!ok && err.contains("<FILE>"), "{err}");
}

/// A `mcpeye receive` child, killed when dropped, its stdout lines on a channel.
struct Receiver {
    child: Child,
    lines: mpsc::Receiver<String>,
    addr: String,
}

impl Receiver {
    fn start(out: &Path, secret: &str) -> Receiver {
        let mut child = Command::new(BIN)
            .args(["receive", "--port", "0", "--out", out.to_str().unwrap(), "--secret", secret])
            .stdout(Stdio::piped())
            .spawn()
            .expect("mcpeye receive starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(30)).expect("a listening line");
        let addr = first.split("http://").nth(1).and_then(|r| r.split_whitespace().next()).unwrap().to_owned();
        Receiver { child, lines, addr }
    }

    /// Lines printed until one contains `needle` (or 30 s pass).
    fn until(&self, needle: &str) -> Vec<String> {
        common::until(&self.lines, needle)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn receive_takes_what_a_tracker_sends_and_refuses_a_wrong_secret() {
    let out = temp("received.jsonl");
    let _ = std::fs::remove_file(&out);
    let receiver = Receiver::start(&out, "dev-secret");

    let tracker = Tracker::new(
        Config::new("cli-test")
            .ingest_url(format!("http://{}", receiver.addr))
            .ingest_secret("dev-secret")
            .identity(Identity::new().server_version("9.9.9")),
    )
    .unwrap();
    let manifest = Manifest::builder().tracker(tracker.clone()).build();
    manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "export my orders as CSV"}));
    manifest.call("no_such_tool", serde_json::json!({}));
    let report = tracker.shutdown(Duration::from_secs(10));
    assert_eq!((report.sent(), report.pending()), (2, 0), "{report:?}");

    let lines = receiver.until("no_such_tool");
    assert!(lines.iter().any(|l| l.contains("mcpeye_request_capability ok 0 ms export my orders as CSV")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("no_such_tool ERROR") && l.contains("unknown tool")), "{lines:?}");

    // What it appended is the input of `mcpeye report`.
    let (ok, json, err) = run(&["report", "--json", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["overview"]["calls"], 2);
    assert_eq!(report["overview"]["serverVersions"], serde_json::json!(["9.9.9"]));
    assert_eq!(report["intentGap"]["unknownTools"][0]["name"], "no_such_tool");

    // A payload without the secret is refused, and not appended.
    let before = std::fs::read(&out).unwrap().len();
    let body = r#"{"projectId":"p","identity":{},"events":[]}"#;
    let mut stream = TcpStream::connect(&receiver.addr).unwrap();
    write!(
        stream,
        "POST /ingest HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert_eq!(std::fs::read(&out).unwrap().len(), before);
    drop(receiver);
    std::fs::remove_file(&out).unwrap();
}

#[test]
fn bad_input_costs_only_itself_and_is_named() {
    let dir = temp("bad-input");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub.jsonl")).unwrap();
    // The fixtures, one behind a byte order mark, with a torn line, a line cut inside `é`, and
    // a duration of the wrong type appended.
    let mut events = std::fs::read(fixture("events.jsonl")).unwrap();
    events.extend_from_slice(b"{\"v\":1,\"kind\":\"call\",\"ts\":1764576000000,\"callId\":\"torn\n");
    events.extend_from_slice(b"{\"callId\":\"cut\",\"toolName\":\"caf\xC3\n");
    events.extend_from_slice(
        b"{\"callId\":\"d\",\"toolName\":\"search_products\",\"isError\":false,\"durationMs\":\"12\"}\n",
    );
    std::fs::write(dir.join("events.jsonl"), events).unwrap();
    let mut payloads = b"\xEF\xBB\xBF".to_vec();
    payloads.extend(std::fs::read(fixture("payloads.jsonl")).unwrap());
    std::fs::write(dir.join("payloads.jsonl"), payloads).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("gone.jsonl")).unwrap();
    let fifo = Command::new("mkfifo").arg(dir.join("fifo.jsonl")).status().is_ok_and(|s| s.success());

    let (ok, json, err) = run(&["report", "--json", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["overview"]["calls"], 23, "every good call is read: {}", report["input"]);
    assert_eq!(
        report["input"]["skipped"],
        serde_json::json!({"not JSON": 1, "not UTF-8": 1, "durationMs not a non-negative integer": 1})
    );
    let unread = report["input"]["unreadFiles"].to_string();
    assert!(unread.contains("gone.jsonl: cannot read") && unread.contains("sub.jsonl: a directory"), "{unread}");
    if fifo {
        assert!(unread.contains("fifo.jsonl: not a regular file"), "{unread}");
    }
    assert!(err.contains("skipped 3 lines") && err.contains("events.jsonl:"), "{err}");
    assert!(err.contains("gone.jsonl"), "{err}");
    // The text report says it too.
    let (_, text, _) = run(&["report", dir.to_str().unwrap()]);
    assert!(text.contains("skipped lines: ") && text.contains("not read: "), "{text}");

    // No call at all: said, and not a success; a device is not read.
    let (ok, _, err) = run(&["report", "/dev/zero"]);
    assert!(!ok && err.contains("/dev/zero: not a regular file") && err.contains("no call in the input"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
