//! `mcpeye receive` over real sockets: nothing acknowledged is lost through a full disk, a flood
//! of connections or running out of file descriptors; only `POST /ingest` with events is taken;
//! what it prints cannot drive the terminal.

mod common;

use common::until;
use mcpeye_runtime::{Config, Manifest, Tracker};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcpeye");

fn temp(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("mcpeye-receive-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Lines of a child's output on a channel.
fn lines_of(read: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(read).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// A `mcpeye receive` child, killed when dropped.
struct Receiver {
    child: Child,
    out: PathBuf,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    addr: String,
}

impl Receiver {
    fn start(name: &str, args: &[&str], env: &[(&str, &str)]) -> Receiver {
        Receiver::start_with(name, Command::new(BIN), args, env)
    }

    fn start_with(name: &str, mut command: Command, args: &[&str], env: &[(&str, &str)]) -> Receiver {
        let out = temp(name);
        let mut child = command
            .args(["receive", "--port", "0", "--out", out.to_str().unwrap()])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcpeye receive starts");
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        let first = stdout.recv_timeout(Duration::from_secs(30)).expect("a listening line");
        let addr = first.split("http://").nth(1).and_then(|r| r.split_whitespace().next()).unwrap().to_owned();
        Receiver { child, out, stdout, stderr, addr }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream
    }

    /// Sends `raw` on a new connection and reads one answer.
    fn exchange(&self, raw: &[u8]) -> Answer {
        let mut stream = self.connect();
        stream.write_all(raw).unwrap();
        read_answer(&mut stream)
    }

    fn post(&self, path: &str, body: &str) -> Answer {
        self.exchange(request("POST", path, body).as_bytes())
    }

    /// The payloads in the output file, one per line, each a whole payload.
    fn lines(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "{text}");
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.out);
    }
}

fn request(method: &str, path: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    }
}

/// Reads one answer: its head, then as many bytes as its content-length says.
fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stream.read(&mut byte).unwrap(),
            1,
            "the answer ended in its head: {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let status = head[9..12].parse().unwrap();
    let mut answer = Answer { status, head, body: String::new() };
    let length: usize = answer.header("content-length").map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    answer.body = String::from_utf8(body).unwrap();
    answer
}

fn event(call_id: &str, tool: &str, intent: &str) -> Value {
    json!({"callId": call_id, "toolName": tool, "arguments": {}, "isError": false, "timestamp": 1_764_662_577_000u64,
           "durationMs": 3, "intent": intent})
}

fn payload(events: Vec<Value>) -> String {
    json!({"projectId": "p", "identity": {}, "events": events}).to_string()
}

fn call_ids(payloads: &[Value]) -> Vec<String> {
    payloads
        .iter()
        .flat_map(|p| p["events"].as_array().unwrap().iter().map(|e| e["callId"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn a_full_disk_loses_no_acknowledged_event_and_the_next_payload_is_a_whole_line() {
    let first = payload(vec![event("a1", "search", "find mugs"), event("a2", "order", "buy one")]);
    let large = payload((0..10).map(|i| event(&format!("b{i}"), "search", "a payload too large to fit")).collect());
    let last = payload(vec![event("c1", "order", "")]);
    assert!(large.len() > last.len());
    // Room for the first and the last payload, as lines, and not one byte more.
    let limit = (first.len() + 1 + last.len() + 1).to_string();
    let receiver = Receiver::start("disk", &[], &[("MCPEYE_RECEIVE_TEST_FILE_LIMIT", &limit)]);

    assert_eq!(receiver.post("/ingest", &first).status, 200);
    for _ in 0..2 {
        let full = receiver.post("/ingest", &large);
        assert_eq!(full.status, 503, "{full:?}");
        assert!(full.header("retry-after").is_some_and(|s| s.parse::<u32>().is_ok()), "{full:?}");
        assert_eq!(std::fs::read_to_string(&receiver.out).unwrap(), format!("{first}\n"), "truncated back");
    }
    assert!(until(&receiver.stderr, "cannot append").iter().any(|l| l.contains("no space left")));
    assert_eq!(receiver.post("/ingest", &last).status, 200);
    assert_eq!(call_ids(&receiver.lines()), ["a1", "a2", "c1"]);
}

#[test]
fn beyond_the_connection_cap_503_and_retry_after_and_the_sdk_delivers_once_there_is_room() {
    let receiver = Receiver::start("cap", &["--max-connections", "2"], &[]);
    let held = [receiver.connect(), receiver.connect()];

    let tracker = Tracker::new(Config::new("cap-test").ingest_url(format!("http://{}", receiver.addr))).unwrap();
    let manifest = Manifest::builder().tracker(tracker.clone()).build();
    manifest.call("no_such_tool", json!({}));
    let flushing = std::thread::spawn(move || tracker.flush(Duration::from_secs(60)));
    let busy = until(&receiver.stderr, "answering 503");
    assert!(busy.iter().any(|l| l.contains("2 connections open")), "{busy:?}");

    let refused = receiver.post("/ingest", &payload(vec![event("x", "t", "")]));
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("connection"), Some("close"));

    drop(held);
    let report = flushing.join().unwrap();
    assert!(report.completed && report.sent() == 1, "{report:?}");
    assert!(until(&receiver.stdout, "no_such_tool ERROR").iter().any(|l| l.contains("no_such_tool ERROR")));
    assert_eq!(receiver.lines().len(), 1);
}

#[test]
fn expect_100_continue_gets_100_then_200() {
    let receiver = Receiver::start("expect", &[], &[]);
    let body = payload(vec![event("e1", "search", "")]);
    let mut stream = receiver.connect();
    write!(
        stream,
        "POST /ingest HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nexpect: 100-continue\r\n\r\n",
        body.len()
    )
    .unwrap();
    let interim = read_answer(&mut stream);
    assert_eq!((interim.status, interim.body.as_str()), (100, ""));
    stream.write_all(body.as_bytes()).unwrap();
    let answer = read_answer(&mut stream);
    assert_eq!((answer.status, answer.body.as_str()), (200, r#"{"accepted":1}"#));

    // Refused at its head, a request waiting for 100 gets its final answer instead.
    write!(stream, "POST /nope HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\nexpect: 100-continue\r\n\r\n").unwrap();
    assert_eq!(read_answer(&mut stream).status, 404);
    assert_eq!(call_ids(&receiver.lines()), ["e1"]);
}

#[test]
fn only_post_ingest_takes_payloads_and_only_of_events() {
    let receiver = Receiver::start("routes", &[], &[]);
    let good = payload(vec![event("g1", "search", "")]);
    // One kept-alive connection through refusals: each body is read past.
    let mut stream = receiver.connect();
    for (method, path, status) in [
        ("POST", "/v1/ingest", 404),
        ("POST", "/ingest/x", 404),
        ("POST", "/ingestion", 404),
        ("GET", "/ingest", 405),
        ("PUT", "/ingest", 405),
        ("POST", "/ingest?source=test", 200),
    ] {
        stream.write_all(request(method, path, &good).as_bytes()).unwrap();
        let answer = read_answer(&mut stream);
        assert_eq!(answer.status, status, "{method} {path}: {answer:?}");
        if status == 405 {
            assert_eq!(answer.header("allow"), Some("POST"));
        }
    }

    for (body, reason) in [
        (payload(vec![json!(1)]), "events[0]: an event is an object"),
        (payload(vec![json!({})]), "events[0]: callId must be a non-empty string"),
        (payload(vec![event("n1", "t", ""), event("n2", "", "")]), "events[1]: toolName must be a non-empty string"),
        (
            payload(vec![{
                let mut e = event("n3", "t", "");
                e["durationMs"] = json!("12");
                e
            }]),
            "events[0]: durationMs must be a non-negative integer",
        ),
        (
            r#"{"projectId":"p","identity":{},"events":{"toolName":"t"}}"#.to_owned(),
            "events must be an array of events",
        ),
        ("[1,2]".to_owned(), "a payload is an object"),
        ("{\"projectId\":".to_owned(), "the body is not JSON"),
    ] {
        let answer = receiver.post("/ingest", &body);
        assert_eq!(answer.status, 400, "{body}: {answer:?}");
        let error: Value = serde_json::from_str(&answer.body).unwrap();
        assert!(error["error"].as_str().unwrap().starts_with(reason), "{body}: {answer:?}");
    }
    let too_large = receiver.exchange(b"POST /ingest HTTP/1.1\r\nhost: x\r\ncontent-length: 40000000\r\n\r\n");
    assert_eq!(too_large.status, 413, "{too_large:?}");
    assert_eq!(call_ids(&receiver.lines()), ["g1"]);
}

#[test]
fn the_console_shows_control_and_bidi_characters_escaped() {
    let receiver = Receiver::start("escape", &[], &[]);
    let body = payload(vec![event("s1", "retitle\u{1b}]0;pwned\u{7}", "left \u{202e}thgir\u{2069} \u{9b}31m red")]);
    assert_eq!(receiver.post("/ingest", &body).status, 200);
    let lines = until(&receiver.stdout, "retitle");
    let line = lines.last().unwrap();
    assert!(line.contains(r"retitle\u{1b}]0;pwned\u{7} ok 3 ms left \u{202e}thgir\u{2069} \u{9b}31m red"), "{line:?}");
    assert!(!line.chars().any(|c| c.is_control() || ('\u{2066}'..='\u{2069}').contains(&c) || c == '\u{202e}'));
    // The file keeps the bytes as sent.
    assert_eq!(std::fs::read_to_string(&receiver.out).unwrap(), format!("{body}\n"));
}

#[test]
fn two_hundred_concurrent_posts_and_a_10_mb_line_are_each_written_once() {
    let receiver = Receiver::start("flood", &[], &[]);
    // Slow clients, stalled in a head and in a body, hold only their own connections.
    let mut slow = [receiver.connect(), receiver.connect()];
    slow[0].write_all(b"POST /ingest HTTP/1.1\r\nhost: x\r\ncontent-le").unwrap();
    slow[1].write_all(b"POST /ingest HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n{\"projectId\"").unwrap();
    let addr = receiver.addr.clone();
    let senders: Vec<_> = (0..200)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&addr).unwrap();
                let body = payload(vec![event(&format!("f{i}"), "search", "flood")]);
                stream.write_all(request("POST", "/ingest", &body).as_bytes()).unwrap();
                read_answer(&mut stream).status
            })
        })
        .collect();
    for sender in senders {
        assert_eq!(sender.join().unwrap(), 200);
    }
    let big = payload(vec![event("big", "search", &"x".repeat(10 * 1024 * 1024))]);
    assert_eq!(receiver.post("/ingest", &big).status, 200);
    let ids = call_ids(&receiver.lines());
    assert_eq!(ids.len(), 201);
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 201);
    drop(slow);
}

#[test]
fn out_of_file_descriptors_it_backs_off_then_serves_again() {
    if !Path::new("/bin/sh").exists() {
        return;
    }
    // 24 descriptors: a few connections, then accept fails with EMFILE.
    let mut shell = Command::new("/bin/sh");
    shell.args(["-c", "ulimit -n 24 && exec \"$0\" \"$@\"", BIN]);
    let receiver = Receiver::start_with("emfile", shell, &[], &[]);
    let held: Vec<TcpStream> = (0..40).map(|_| receiver.connect()).collect();
    let told = until(&receiver.stderr, "backing off");
    assert!(told.iter().any(|l| l.contains("backing off")), "{told:?}");
    drop(held);
    let answer = receiver.post("/ingest", &payload(vec![event("m1", "search", "")]));
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(until(&receiver.stderr, "accepting connections again").iter().any(|l| l.contains("again")));
    assert_eq!(call_ids(&receiver.lines()), ["m1"]);
}
