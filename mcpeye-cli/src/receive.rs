//! `mcpeye receive`: a local ingest over HTTP/1.1 that loses nothing it acknowledged.
//!
//! - `POST /ingest` (docs/wire-format.md#transport) is the only path payloads are taken on; the
//!   body must be a payload whose `events` are events (docs/wire-format.md#event), else 400.
//! - An accepted payload is appended to the output file as one whole line and synced before it
//!   is answered 200. A write that fails (a full disk) is truncated back to the last whole line
//!   and answered 503 with `Retry-After`: the SDKs send the batch again
//!   (docs/wire-format.md#delivery-and-retry).
//! - One thread per connection, at most `max_connections` of them; beyond, a connection is
//!   answered 503 with `Retry-After` by one of a few short-lived threads (or closed when those
//!   are busy too). Bodies held in memory at once are bounded by [`BODIES_IN_FLIGHT`] (503 beyond)
//!   and one body by [`MAX_BODY`] (413). A slow client holds only its own thread, and only until
//!   its request's deadline.
//! - `Expect: 100-continue` is answered once the head is accepted. When `accept` fails (out of
//!   file descriptors), the loop sleeps before trying again instead of spinning.
//!
//! The request head is parsed by `httparse` (the parser hyper uses, already in the tree through
//! ureq). tiny_http was considered: its accept thread stops for good on the first `accept` error
//! (EMFILE), and it starts a thread for every connection with no cap.

use mcpeye_report::terminal_safe;
use serde_json::Value;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The path SDKs POST to: `{base}/ingest`, the base being this receiver's URL.
const INGEST_PATH: &str = "/ingest";
/// Longest request head, and most headers, accepted (431 beyond).
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;
/// Longest body accepted (413 beyond): an SDK's batch is about 1 MiB, a single large event more.
pub const MAX_BODY: usize = 32 * 1024 * 1024;
/// Most bytes of bodies held at once, over all connections (503 beyond).
pub const BODIES_IN_FLIGHT: usize = 64 * 1024 * 1024;
/// Default cap on connections served at once (`--max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Threads that answer 503 to connections beyond the cap; beyond them a connection is closed.
const MAX_REFUSING: usize = 16;
/// An idle keep-alive connection is closed after this long; a write waits at most this long.
const IDLE: Duration = Duration::from_secs(60);
/// A request, head and body, must arrive within this long of its first byte.
const REQUEST_TIME: Duration = Duration::from_secs(120);
/// How long, and how many bytes, a refused request is read and discarded before closing, so
/// that the client reads the answer instead of a reset.
const LINGER: Duration = Duration::from_secs(5);
const LINGER_BYTES: usize = MAX_BODY + MAX_HEAD;
/// `Retry-After` (seconds) when busy, and when the file cannot be written.
const RETRY_BUSY: u32 = 1;
const RETRY_WRITE: u32 = 10;
/// Testing only: caps the output file at this many bytes, as if the disk were full beyond (a
/// write that crosses it writes what fits, then fails like ENOSPC).
pub const FILE_LIMIT_ENV: &str = "MCPEYE_RECEIVE_TEST_FILE_LIMIT";

/// What `mcpeye receive` was asked for.
pub struct Options {
    pub bind: String,
    pub port: u16,
    pub out: PathBuf,
    pub secret: Option<String>,
    pub max_connections: usize,
}

struct Shared {
    sink: Mutex<Sink>,
    secret: Option<String>,
    /// Bytes of bodies reserved by requests being read or handled.
    bodies: AtomicUsize,
    /// A write failed and stderr said so; cleared by the next write that succeeds.
    failing: AtomicBool,
}

/// Listens until the process is stopped.
pub fn run(options: Options) -> Result<(), String> {
    let limit = match std::env::var(FILE_LIMIT_ENV) {
        Ok(v) => Some(v.parse::<u64>().map_err(|_| format!("{FILE_LIMIT_ENV} must be a number of bytes"))?),
        Err(_) => None,
    };
    let listener = TcpListener::bind((options.bind.as_str(), options.port)).map_err(|e| {
        format!("cannot listen on {}:{}: {e} (is another ingest running? try --port)", options.bind, options.port)
    })?;
    let sink = Sink::open(&options.out, limit)
        .map_err(|e| format!("cannot open {} for appending: {e} (choose another --out)", options.out.display()))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    say(&format!(
        "mcpeye receive: listening on http://{addr} (POST {INGEST_PATH}), appending payloads to {}{}",
        options.out.display(),
        if options.secret.is_some() { ", x-mcpeye-secret required" } else { "" }
    ));
    let shared = Arc::new(Shared {
        sink: Mutex::new(sink),
        secret: options.secret,
        bodies: AtomicUsize::new(0),
        failing: AtomicBool::new(false),
    });
    let serving = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let mut backoff = Backoff::new();
    let mut busy = false;
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => {
                backoff.reset();
                stream
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted) => continue,
            Err(e) => {
                backoff.wait(&e);
                continue;
            }
        };
        // Only this loop adds to the counts, so the caps cannot be overshot.
        if serving.load(Ordering::Acquire) < options.max_connections {
            busy = false;
            let shared = shared.clone();
            spawn_counted(&serving, move || serve(stream, &shared));
        } else {
            if !busy {
                eprintln!(
                    "mcpeye receive: {} connections open (--max-connections); answering 503 to more",
                    options.max_connections
                );
                busy = true;
            }
            if refusing.load(Ordering::Acquire) < MAX_REFUSING {
                spawn_counted(&refusing, move || refuse_busy(stream));
            }
            // Else the connection is closed: the SDKs retry a network error too.
        }
    }
}

/// Runs `work` on a thread of its own, counted in `count` while it runs.
fn spawn_counted(count: &Arc<AtomicUsize>, work: impl FnOnce() + Send + 'static) {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    count.fetch_add(1, Ordering::AcqRel);
    let counted = Counted(count.clone());
    // A thread that cannot be started drops the closure, the connection and the count with it.
    let _ = std::thread::Builder::new().name("mcpeye-receive".into()).spawn(move || {
        let _counted = counted;
        work();
    });
}

/// Sleeps between failed `accept`s (EMFILE: the connections waiting stay in the backlog until
/// a descriptor is free), 10 ms doubling to 1 s, and says so once per streak.
struct Backoff {
    delay: Duration,
    told: bool,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const LONGEST: Duration = Duration::from_secs(1);

    fn new() -> Self {
        Backoff { delay: Self::FIRST, told: false }
    }

    fn wait(&mut self, e: &io::Error) {
        if !self.told {
            eprintln!(
                "mcpeye receive: cannot accept connections: {e} (out of file descriptors? see ulimit -n); backing off"
            );
            self.told = true;
        }
        std::thread::sleep(self.delay);
        self.delay = (self.delay * 2).min(Self::LONGEST);
    }

    fn reset(&mut self) {
        if self.told {
            eprintln!("mcpeye receive: accepting connections again");
        }
        *self = Self::new();
    }
}

/// The output file: whole lines only.
struct Sink {
    file: File,
    /// Testing only: the size the file may not exceed ([`FILE_LIMIT_ENV`]).
    limit: Option<u64>,
    /// A failed write could not be truncated back: the length to truncate to before the next.
    torn: Option<u64>,
}

impl Sink {
    /// Opens `path` for appending. A file whose last line is cut (a crash) gets a newline, so
    /// that the next payload starts on a line of its own; the cut line stays, for the report
    /// to skip and count.
    fn open(path: &Path, limit: Option<u64>) -> io::Result<Sink> {
        let mut file = OpenOptions::new().create(true).append(true).read(true).open(path)?;
        let mut last = [b'\n'];
        if file.metadata()?.len() > 0 {
            file.seek(SeekFrom::End(-1))?;
            file.read_exact(&mut last)?;
        }
        if last[0] != b'\n' {
            eprintln!("mcpeye receive: {} ended inside a line; the next payload starts on a new line", path.display());
            file.write_all(b"\n")?;
        }
        Ok(Sink { file, limit, torn: None })
    }

    /// Appends `line` (ending in a newline) whole and synced, or leaves the file as it was.
    fn append(&mut self, line: &[u8]) -> io::Result<()> {
        if let Some(whole) = self.torn {
            self.file.set_len(whole)?;
            self.torn = None;
        }
        let start = self.file.metadata()?.len();
        let written = self.write(start, line).and_then(|()| self.file.sync_data());
        if written.is_err() && self.file.set_len(start).is_err() {
            self.torn = Some(start);
        }
        written
    }

    fn write(&mut self, start: u64, line: &[u8]) -> io::Result<()> {
        if let Some(limit) = self.limit {
            let room = usize::try_from(limit.saturating_sub(start)).unwrap_or(usize::MAX);
            if line.len() > room {
                self.file.write_all(&line[..room])?;
                return Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!("no space left ({FILE_LIMIT_ENV}={limit}, testing only)"),
                ));
            }
        }
        self.file.write_all(line)
    }
}

/// An answer.
struct Reply {
    status: u16,
    body: String,
    retry_after: Option<u32>,
    allow: Option<&'static str>,
    /// Close the connection after it.
    close: bool,
    /// Printed once the answer is sent, so that a stalled console delays no acknowledgement.
    console: String,
}

impl Reply {
    fn new(status: u16, body: String) -> Reply {
        Reply { status, body, retry_after: None, allow: None, close: false, console: String::new() }
    }

    fn error(status: u16, text: &str) -> Reply {
        Reply::new(status, serde_json::json!({ "error": text }).to_string())
    }

    fn retry(mut self, seconds: u32) -> Reply {
        self.retry_after = Some(seconds);
        self
    }

    fn closing(mut self) -> Reply {
        self.close = true;
        self
    }

    fn to_bytes(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            405 => "Method Not Allowed",
            411 => "Length Required",
            413 => "Content Too Large",
            431 => "Request Header Fields Too Large",
            _ => "Service Unavailable",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            self.status,
            self.body.len()
        );
        if let Some(seconds) = self.retry_after {
            let _ = write!(head, "retry-after: {seconds}\r\n");
        }
        if let Some(allow) = self.allow {
            let _ = write!(head, "allow: {allow}\r\n");
        }
        let _ = write!(head, "connection: {}\r\n\r\n", if self.close { "close" } else { "keep-alive" });
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }
}

/// A request head.
#[derive(Debug)]
struct Head {
    method: String,
    path: String,
    length: usize,
    keep_alive: bool,
    expect_continue: bool,
    chunked: bool,
    secret: Option<Vec<u8>>,
}

/// Parses a request head at the start of `buf`: the head and its length, `None` when more
/// bytes are needed, or the answer to a malformed one.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Reply> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let used = match request.parse(buf) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(Reply::error(431, "request head too large").closing())
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Reply::error(431, "too many headers").closing()),
        Err(e) => return Err(Reply::error(400, &format!("malformed request: {e}")).closing()),
    };
    if used > MAX_HEAD {
        return Err(Reply::error(431, "request head too large").closing());
    }
    let mut head = Head {
        method: request.method.unwrap_or("").to_owned(),
        path: request.path.unwrap_or("").to_owned(),
        length: 0,
        keep_alive: request.version == Some(1),
        expect_continue: false,
        chunked: false,
        secret: None,
    };
    let mut length = None;
    for header in request.headers.iter() {
        let value = header.value;
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<usize>().ok());
            match (parsed, length) {
                (Some(n), None) => length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => return Err(Reply::error(400, "bad content-length").closing()),
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    head.keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && request.version == Some(0) {
                    head.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("expect") {
            head.expect_continue = value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        } else if name.eq_ignore_ascii_case("x-mcpeye-secret") {
            head.secret = Some(value.trim_ascii().to_vec());
        }
    }
    head.length = length.unwrap_or(0);
    Ok(Some((head, used)))
}

/// One connection: its stream and the bytes read past the last request.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Reads more into `buf`, waiting at most until `deadline` (and `IDLE`).
    fn fill(&mut self, deadline: Instant) -> io::Result<usize> {
        let left = deadline.saturating_duration_since(Instant::now()).min(IDLE);
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut chunk = [0; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// The next request head: `Ok(None)` when the client closed or went idle.
    fn read_head(&mut self) -> Result<Option<(Head, Instant)>, Reply> {
        let mut deadline = Instant::now() + IDLE;
        let mut started = None;
        loop {
            // Empty lines between requests are not a request's start.
            let skip = self.buf.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            self.buf.drain(..skip);
            if !self.buf.is_empty() && started.is_none() {
                let now = Instant::now();
                started = Some(now);
                deadline = now + REQUEST_TIME;
            }
            if let Some((head, used)) = parse_head(&self.buf)? {
                self.buf.drain(..used);
                return Ok(Some((head, deadline)));
            }
            match self.fill(deadline) {
                Ok(0) | Err(_) => return Ok(None),
                Ok(_) => {}
            }
        }
    }

    /// Reads a body of `length` bytes, with room for a newline after it.
    fn read_body(&mut self, length: usize, deadline: Instant) -> io::Result<Vec<u8>> {
        let mut body = Vec::with_capacity(length + 1);
        let first = self.buf.len().min(length);
        body.extend(self.buf.drain(..first));
        while body.len() < length {
            let left = deadline.saturating_duration_since(Instant::now()).min(IDLE);
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            self.stream.set_read_timeout(Some(left))?;
            let filled = body.len();
            let want = (length - filled).min(256 * 1024);
            body.resize(filled + want, 0);
            let n = self.stream.read(&mut body[filled..])?;
            body.truncate(filled + n);
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(body)
    }

    /// Reads and drops a body of `length` bytes.
    fn discard(&mut self, length: usize, deadline: Instant) -> io::Result<()> {
        let mut left = length;
        loop {
            let here = self.buf.len().min(left);
            self.buf.drain(..here);
            left -= here;
            if left == 0 {
                return Ok(());
            }
            if self.fill(deadline)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    fn send(&mut self, reply: &Reply) -> bool {
        self.send_raw(&reply.to_bytes())
    }

    fn send_raw(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).and_then(|()| self.stream.flush()).is_ok()
    }

    /// Closes after an answer the client may not have read yet: stops writing, then reads and
    /// drops what it still sends for a while, so that the answer is not lost to a reset.
    fn linger(mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        let deadline = Instant::now() + LINGER;
        let mut dropped = 0;
        let mut chunk = [0; 16 * 1024];
        while dropped < LINGER_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stream.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => dropped += n,
            }
        }
    }
}

/// Answers a connection beyond the cap.
fn refuse_busy(stream: TcpStream) {
    let mut conn = Conn { stream, buf: Vec::new() };
    let _ = conn.stream.set_write_timeout(Some(LINGER));
    let reply = Reply::error(503, "busy: too many connections; retry later").retry(RETRY_BUSY).closing();
    if conn.send(&reply) {
        conn.linger();
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_write_timeout(Some(IDLE));
    let mut conn = Conn { stream, buf: Vec::new() };
    loop {
        let (head, deadline) = match conn.read_head() {
            Ok(Some(next)) => next,
            Ok(None) => return,
            Err(reply) => {
                if conn.send(&reply) {
                    conn.linger();
                }
                return;
            }
        };
        let mut reply = handle(&mut conn, &head, deadline, shared);
        if !head.keep_alive {
            reply.close = true;
        }
        let sent = conn.send(&reply);
        say(&reply.console);
        if !sent {
            return;
        }
        if reply.close {
            conn.linger();
            return;
        }
    }
}

/// A reservation of bytes in [`BODIES_IN_FLIGHT`], released when dropped.
struct Reserved<'a>(&'a AtomicUsize, usize);

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::AcqRel);
    }
}

fn reserve(bodies: &AtomicUsize, length: usize) -> Option<Reserved<'_>> {
    bodies
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            held.checked_add(length).filter(|&total| total <= BODIES_IN_FLIGHT)
        })
        .ok()
        .map(|_| Reserved(bodies, length))
}

fn handle(conn: &mut Conn, head: &Head, deadline: Instant, shared: &Shared) -> Reply {
    let path = head.path.split('?').next().unwrap_or("");
    let answered = match (path, head.method.as_str()) {
        (INGEST_PATH, "POST") => None,
        (INGEST_PATH, _) => Some(Reply { allow: Some("POST"), ..Reply::error(405, "use POST") }),
        ("/", "GET") => Some(Reply::new(200, format!("{{\"service\":\"mcpeye receive\",\"post\":\"{INGEST_PATH}\"}}"))),
        ("/", _) => Some(Reply { allow: Some("GET"), ..Reply::error(405, "use GET") }),
        _ => Some(Reply::error(404, &format!("not found: POST payloads to {INGEST_PATH}"))),
    };
    if head.chunked {
        return Reply::error(411, "send the body with a content-length, not chunked").closing();
    }
    if head.length > MAX_BODY {
        return Reply::error(413, &format!("payload too large: at most {MAX_BODY} bytes")).closing();
    }
    let answered = answered.or_else(|| match &shared.secret {
        Some(secret) if head.secret.as_deref() != Some(secret.as_bytes()) => {
            say("refused a payload (401): missing or wrong x-mcpeye-secret");
            Some(Reply::error(401, "missing or wrong x-mcpeye-secret"))
        }
        _ => None,
    });
    if let Some(reply) = answered {
        // A client waiting for 100 Continue sends no body: the connection cannot be reused.
        if head.expect_continue || conn.discard(head.length, deadline).is_err() {
            return reply.closing();
        }
        return reply;
    }
    let Some(_reserved) = reserve(&shared.bodies, head.length) else {
        return Reply::error(503, "busy: too many bodies in flight; retry later").retry(RETRY_BUSY).closing();
    };
    if head.expect_continue && !conn.send_raw(b"HTTP/1.1 100 Continue\r\n\r\n") {
        return Reply::error(400, "cannot answer 100 Continue").closing();
    }
    match conn.read_body(head.length, deadline) {
        Ok(body) => ingest(body, shared),
        Err(_) => Reply::error(400, "the body ended early").closing(),
    }
}

fn ingest(mut body: Vec<u8>, shared: &Shared) -> Reply {
    let payload: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return refuse(format!("the body is not JSON: {e}")),
    };
    let events = match check_payload(&payload) {
        Ok(events) => events,
        Err(reason) => return refuse(reason),
    };
    if events.is_empty() {
        return Reply::new(200, "{\"accepted\":0}".into());
    }
    // One payload per line, as `mcpeye report` reads it: the bytes as sent, unless they span lines.
    let mut line = if body.iter().any(|&b| b == b'\n' || b == b'\r') {
        serde_json::to_vec(&payload).unwrap_or_default()
    } else {
        std::mem::take(&mut body)
    };
    line.push(b'\n');
    let written = shared.sink.lock().unwrap_or_else(|e| e.into_inner()).append(&line);
    drop(line);
    if let Err(e) = written {
        if !shared.failing.swap(true, Ordering::AcqRel) {
            eprintln!("mcpeye receive: cannot append to the output file: {e}; answering 503 until a write succeeds");
        }
        return Reply::error(503, "the receiver cannot write its file; retry later").retry(RETRY_WRITE);
    }
    if shared.failing.swap(false, Ordering::AcqRel) {
        eprintln!("mcpeye receive: appending again");
    }
    let lines: Vec<String> = events.iter().map(call_line).collect();
    Reply { console: lines.join("\n"), ..Reply::new(200, serde_json::json!({ "accepted": events.len() }).to_string()) }
}

/// A 400 whose reason is also printed.
fn refuse(reason: String) -> Reply {
    say(&format!("refused a payload (400): {}", terminal_safe(&reason)));
    Reply::error(400, &reason)
}

/// The events of a payload, or why it is not one (docs/wire-format.md#payload, #event).
fn check_payload(payload: &Value) -> Result<&[Value], String> {
    let Some(payload) = payload.as_object() else {
        return Err("a payload is an object {\"projectId\",\"identity\",\"events\":[…]}".into());
    };
    if payload.get("projectId").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err("projectId must be a non-empty string".into());
    }
    if payload.get("identity").is_some_and(|i| !i.is_object()) {
        return Err("identity must be an object".into());
    }
    let Some(events) = payload.get("events").and_then(Value::as_array) else {
        return Err("events must be an array of events".into());
    };
    for (i, event) in events.iter().enumerate() {
        check_event(event).map_err(|why| format!("events[{i}]: {why}"))?;
    }
    Ok(events)
}

/// Why `event` is not an event: the keys every SDK always sends, with their types, and the
/// types of the optional keys the report reads.
fn check_event(event: &Value) -> Result<(), String> {
    let Some(event) = event.as_object() else {
        return Err("an event is an object".into());
    };
    for key in ["callId", "toolName"] {
        if event.get(key).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!("{key} must be a non-empty string"));
        }
    }
    if !event.get("isError").is_some_and(Value::is_boolean) {
        return Err("isError must be true or false".into());
    }
    for key in ["timestamp", "durationMs"] {
        if !event.get(key).is_some_and(Value::is_u64) {
            return Err(format!("{key} must be a non-negative integer"));
        }
    }
    if event.get("arguments").is_some_and(|a| !a.is_object()) {
        return Err("arguments must be an object".into());
    }
    for key in ["errorMessage", "intent", "intentSource"] {
        if event.get(key).is_some_and(|v| !v.is_string()) {
            return Err(format!("{key} must be a string"));
        }
    }
    Ok(())
}

/// Prints lines on stdout, at once; a closed stdout (`| head`) is not the receiver's concern.
fn say(lines: &str) {
    if lines.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{lines}").and_then(|()| out.flush());
}

/// One call as a line: time, tool, outcome, duration, and the intent or the error.
fn call_line(event: &Value) -> String {
    let tool = event["toolName"].as_str().unwrap_or("?");
    let ms = event["timestamp"].as_u64().unwrap_or(0);
    let secs = (ms / 1000) % 86_400;
    let time = format!("{:02}:{:02}:{:02}", secs / 3600, (secs / 60) % 60, secs % 60);
    let error = event["isError"].as_bool().unwrap_or(false);
    let duration = event["durationMs"].as_u64().unwrap_or(0);
    let detail = if error {
        event["errorMessage"].as_str().unwrap_or("")
    } else if let Some(c) = event["arguments"]["capability"].as_str() {
        c
    } else {
        event["intent"].as_str().unwrap_or("")
    };
    let (tool, detail) = (shorten(tool), shorten(detail));
    let line = format!("{time} {tool} {} {duration} ms {detail}", if error { "ERROR" } else { "ok" });
    terminal_safe(line.trim_end()).into_owned()
}

/// `text` on one line (runs of whitespace as one space), cut after 100 characters.
fn shorten(text: &str) -> String {
    let words = text.split_whitespace();
    let mut out = String::new();
    let mut chars = 0;
    for word in words {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars == 100 {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(raw: &[u8]) -> Head {
        match parse_head(raw) {
            Ok(Some((head, used))) => {
                assert_eq!(used, raw.len());
                head
            }
            Ok(None) => panic!("partial"),
            Err(reply) => panic!("refused {}", reply.status),
        }
    }

    #[test]
    fn heads_are_parsed() {
        let h = head(b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Mcpeye-Secret: s\r\nExpect: 100-Continue\r\n\r\n");
        assert_eq!((h.method.as_str(), h.path.as_str(), h.length), ("POST", "/ingest", 2));
        assert_eq!(h.secret.as_deref(), Some(&b"s"[..]));
        assert!(h.keep_alive && h.expect_continue && !h.chunked);
        assert!(!head(b"GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
        assert!(!head(b"GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(head(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
        assert!(head(b"POST /ingest HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").chunked);
        assert!(matches!(parse_head(b"POST /ingest HTTP/1.1\r\nHost: x\r\n"), Ok(None)));
        for bad in [
            &b"POST /ingest HTTP/1.1\r\nContent-Length: -1\r\n\r\n"[..],
            b"POST /ingest HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"\x01\x02 / HTTP/1.1\r\n\r\n",
        ] {
            assert!(matches!(parse_head(bad), Err(Reply { status: 400, .. })), "{bad:?}");
        }
        let mut long = b"GET / HTTP/1.1\r\nx: ".to_vec();
        long.resize(MAX_HEAD + 10, b'a');
        assert!(matches!(parse_head(&long), Err(Reply { status: 431, .. })));
    }

    #[test]
    fn the_contracts_payloads_are_events_and_others_are_not() {
        let vectors =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/payload_examples.json"))
                .unwrap();
        let vectors: Value = serde_json::from_str(&vectors).unwrap();
        let bodies: Vec<&str> = vectors.as_array().unwrap().iter().filter_map(|v| v["body_text"].as_str()).collect();
        assert!(bodies.len() >= 2);
        for body in bodies {
            let payload: Value = serde_json::from_str(body).unwrap();
            assert!(check_payload(&payload).is_ok_and(|e| !e.is_empty()), "{body}");
        }
        let event = serde_json::json!({"callId": "c", "toolName": "t", "arguments": {}, "isError": false,
                                       "timestamp": 1, "durationMs": 0});
        assert!(check_event(&event).is_ok());
        for (key, value, why) in [
            ("toolName", serde_json::json!(""), "toolName must be a non-empty string"),
            ("callId", serde_json::json!(7), "callId must be a non-empty string"),
            ("isError", serde_json::json!("true"), "isError must be true or false"),
            ("durationMs", serde_json::json!(-1), "durationMs must be a non-negative integer"),
            ("timestamp", serde_json::json!(1.5), "timestamp must be a non-negative integer"),
            ("arguments", serde_json::json!([]), "arguments must be an object"),
            ("intent", serde_json::json!({}), "intent must be a string"),
        ] {
            let mut bad = event.clone();
            bad[key] = value;
            assert_eq!(check_event(&bad), Err(why.to_owned()));
        }
        let payload = serde_json::json!({"projectId": "p", "identity": {}, "events": [event, 1]});
        assert_eq!(check_payload(&payload), Err("events[1]: an event is an object".to_owned()));
        assert!(check_payload(&serde_json::json!({"projectId": "p", "events": {}})).is_err());
        assert!(check_payload(&serde_json::json!({"projectId": "", "events": []})).is_err());
    }

    #[test]
    fn calls_are_printed_in_a_line_with_what_acts_escaped() {
        let event = serde_json::json!({"toolName": "order", "isError": true, "timestamp": 3_723_000, "durationMs": 9,
                                       "errorMessage": "out\nof stock"});
        assert_eq!(call_line(&event), "01:02:03 order ERROR 9 ms out of stock");
        let event = serde_json::json!({"toolName": "a\u{1b}]0;x\u{7}b", "isError": false, "timestamp": 0, "durationMs": 1,
                                       "intent": "left \u{202e}right\u{9b}31m \u{2066}x"});
        assert_eq!(call_line(&event), "00:00:00 a\\u{1b}]0;x\\u{7}b ok 1 ms left \\u{202e}right\\u{9b}31m \\u{2066}x");
        assert!(matches!(terminal_safe("plain é ✓"), std::borrow::Cow::Borrowed(_)));
        let long = serde_json::json!({"toolName": "t".repeat(150), "isError": false, "timestamp": 0, "durationMs": 1,
                                      "intent": "é ".repeat(5_000_000)});
        let line = call_line(&long);
        assert!(line.starts_with(&format!("00:00:00 {}… ok 1 ms é é", "t".repeat(100))), "{line}");
        assert_eq!(line.chars().count(), "00:00:00 ".len() + 101 + " ok 1 ms ".len() + 101);
    }

    #[test]
    fn a_failed_write_is_truncated_back_and_the_next_starts_on_a_clean_line() {
        let path = std::env::temp_dir().join(format!("mcpeye-receive-sink-{}", std::process::id()));
        std::fs::write(&path, "torn").unwrap();
        let mut sink = Sink::open(&path, Some(21)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"torn\n");
        sink.append(b"0123456789\n").unwrap();
        assert_eq!(sink.append(b"too long to fit\n").unwrap_err().kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read(&path).unwrap(), b"torn\n0123456789\n");
        sink.append(b"fits\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"torn\n0123456789\nfits\n");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn bodies_in_flight_are_bounded() {
        let bodies = AtomicUsize::new(0);
        let a = reserve(&bodies, MAX_BODY).unwrap();
        let b = reserve(&bodies, BODIES_IN_FLIGHT - MAX_BODY).unwrap();
        assert!(reserve(&bodies, 1).is_none());
        drop(a);
        assert!(reserve(&bodies, 1).is_some());
        drop(b);
        assert_eq!(bodies.load(Ordering::Acquire), 0);
    }
}
