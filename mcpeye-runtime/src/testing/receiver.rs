//! [`IngestReceiver`]: a scriptable loopback ingest for tests (std only, no async runtime).

use super::memory::events_of;
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often blocked threads of the receiver look at the stop flag.
const POLL: Duration = Duration::from_millis(10);
/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// How the receiver answers one request. Build it with [`Reply::ok`] or [`Reply::status`],
/// then adjust it.
///
/// ```
/// use mcpeye::testing::Reply;
/// let busy = Reply::status(429).retry_after(2);
/// let silent = Reply::stall();
/// # drop((busy, silent));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
    behaviour: Behaviour,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    Answer,
    Stall,
    Drip,
    CloseMidResponse,
}

impl Reply {
    /// `200` with a small JSON body.
    ///
    /// ```
    /// let ingest = mcpeye::testing::IngestReceiver::start();
    /// ingest.script([mcpeye::testing::Reply::ok()]);
    /// ```
    pub fn ok() -> Self {
        Reply::status(200)
    }

    /// This status code, with a small JSON body.
    ///
    /// ```
    /// use mcpeye::testing::{IngestReceiver, Reply};
    ///
    /// let ingest = IngestReceiver::start();
    /// ingest.script([Reply::status(503), Reply::status(401)]); // a retried failure, then a refusal
    /// ```
    pub fn status(code: u16) -> Self {
        Reply {
            status: code,
            headers: Vec::new(),
            body: format!("{{\"status\":{code}}}"),
            delay: Duration::ZERO,
            behaviour: Behaviour::Answer,
        }
    }

    /// Accepts the request and never answers, holding the connection open until the receiver
    /// is dropped.
    ///
    /// ```
    /// use mcpeye::testing::{IngestReceiver, Reply};
    ///
    /// let ingest = IngestReceiver::start();
    /// ingest.script([Reply::stall()]); // tests a tracker's request timeout
    /// ```
    pub fn stall() -> Self {
        Reply { behaviour: Behaviour::Stall, ..Reply::ok() }
    }

    /// Adds a `Retry-After: {seconds}` header.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::status(429).retry_after(2);
    /// # drop(reply);
    /// ```
    pub fn retry_after(self, seconds: u64) -> Self {
        self.header("retry-after", &seconds.to_string())
    }

    /// Adds a response header.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::ok().header("x-request-id", "r-1");
    /// # drop(reply);
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Replaces the response body.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::status(400).body(r#"{"error":"bad payload"}"#);
    /// # drop(reply);
    /// ```
    pub fn body(mut self, body: &str) -> Self {
        self.body = body.to_string();
        self
    }

    /// Waits this long before answering.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::ok().delay(std::time::Duration::from_millis(300));
    /// # drop(reply);
    /// ```
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sends the response one byte per second.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::ok().drip(); // a slow ingest
    /// # drop(reply);
    /// ```
    pub fn drip(mut self) -> Self {
        self.behaviour = Behaviour::Drip;
        self
    }

    /// Sends the first bytes of the response, then closes the connection.
    ///
    /// ```
    /// let reply = mcpeye::testing::Reply::ok().close_mid_response(); // a connection lost mid-answer
    /// # drop(reply);
    /// ```
    pub fn close_mid_response(mut self) -> Self {
        self.behaviour = Behaviour::CloseMidResponse;
        self
    }

    fn response_bytes(&self) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        head.push_str("content-type: application/json\r\n");
        head.push_str(&format!("content-length: {}\r\n", self.body.len()));
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// One request the receiver got, with how it was answered.
///
/// ```
/// use mcpeye::testing::IngestReceiver;
/// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
/// use std::time::Duration;
///
/// let ingest = IngestReceiver::start();
/// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url()).ingest_secret("s3cr3t")).unwrap();
/// tracker.record(CallRecord::new("search", serde_json::json!({"q": "mugs"}), CallOutcome::error("index offline")));
/// tracker.flush(Duration::from_secs(5));
///
/// let request = &ingest.requests()[0];
/// assert_eq!(request.method, "POST");
/// assert_eq!(request.header(mcpeye::contract::SECRET_HEADER), Some("s3cr3t"));
/// assert!(request.accepted());
/// assert_eq!(request.events()[0]["toolName"], "search");
/// ```
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The request target, e.g. `/ingest`.
    pub path: String,
    /// The headers in the order received, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the request was fully read.
    pub received_at: Instant,
    /// The status the receiver chose for it.
    pub status: u16,
    /// When the answer was complete (`None` while stalled, dripping, or cut short).
    pub answered_at: Option<Instant>,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert!(ingest.requests()[0].header("Content-Type").is_some_and(|v| v.starts_with("application/json")));
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(ingest.requests()[0].json().unwrap()["projectId"], "proj");
    /// ```
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The events of the payload (empty when the body is not a payload).
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(ingest.requests()[0].events()[0]["errorMessage"], "offline");
    /// ```
    pub fn events(&self) -> Vec<Value> {
        events_of(self.json())
    }

    /// Answered with a 2xx, in full.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert!(ingest.requests().iter().all(|r| r.accepted()));
    /// ```
    pub fn accepted(&self) -> bool {
        (200..300).contains(&self.status) && self.answered_at.is_some()
    }
}

type ReplyHandler = Box<dyn Fn(&RecordedRequest) -> Reply + Send>;

struct ReceiverState {
    requests: Mutex<Vec<RecordedRequest>>,
    changed: Condvar,
    script: Mutex<VecDeque<Reply>>,
    handler: Mutex<Option<ReplyHandler>>,
    stop: AtomicBool,
}

impl ReceiverState {
    fn requests(&self) -> MutexGuard<'_, Vec<RecordedRequest>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A loopback HTTP/1.1 server on `127.0.0.1` standing in for the ingest API in tests.
///
/// Each request is recorded and answered by, in order of precedence: the next scripted
/// [`Reply`] ([`script`](Self::script)), the handler ([`respond_with`](Self::respond_with)),
/// or `200`. Bodies must come with a `content-length` (as ureq sends them). Dropping the
/// receiver stops it and closes held connections.
///
/// ```
/// use mcpeye::testing::{IngestReceiver, Reply};
/// let ingest = IngestReceiver::start();
/// ingest.script([Reply::status(503), Reply::ok()]);
/// assert!(ingest.url().starts_with("http://127.0.0.1:"));
/// ```
pub struct IngestReceiver {
    state: Arc<ReceiverState>,
    addr: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for IngestReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestReceiver").field("addr", &self.addr).finish()
    }
}

impl IngestReceiver {
    /// Starts a receiver on a free loopback port. Panics if no socket can be bound (tests only).
    ///
    /// ```
    /// let ingest = mcpeye::testing::IngestReceiver::start();
    /// let config = mcpeye::Config::new("proj").ingest_url(ingest.url());
    /// # drop(config);
    /// ```
    pub fn start() -> Self {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Starts a receiver on `addr`, e.g. a loopback port a tracker already points at (to test a
    /// recovery after refused connections). Panics if it cannot be bound (tests only).
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    /// let ingest = IngestReceiver::start_on(port);
    /// assert_eq!(ingest.addr(), port);
    /// ```
    pub fn start_on(addr: SocketAddr) -> Self {
        let listener = TcpListener::bind(addr).expect("bind a loopback port for IngestReceiver");
        let addr = listener.local_addr().expect("local address of the IngestReceiver socket");
        listener.set_nonblocking(true).expect("non-blocking IngestReceiver socket");
        let state = Arc::new(ReceiverState {
            requests: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            script: Mutex::new(VecDeque::new()),
            handler: Mutex::new(None),
            stop: AtomicBool::new(false),
        });
        let s = state.clone();
        let acceptor = std::thread::Builder::new()
            .name("mcpeye-test-ingest".into())
            .spawn(move || accept_loop(listener, s))
            .expect("start the IngestReceiver thread");
        IngestReceiver { state, addr, acceptor: Some(acceptor) }
    }

    /// The base URL to give to `Config::ingest_url`, e.g. `http://127.0.0.1:41234`.
    ///
    /// ```
    /// let ingest = mcpeye::testing::IngestReceiver::start();
    /// assert_eq!(ingest.url(), format!("http://{}", ingest.addr()));
    /// ```
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket address.
    ///
    /// ```
    /// let ingest = mcpeye::testing::IngestReceiver::start();
    /// assert!(ingest.addr().ip().is_loopback());
    /// ```
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues replies for the next requests, one each, before the handler or the default.
    ///
    /// ```
    /// use mcpeye::testing::{IngestReceiver, Reply};
    ///
    /// let ingest = IngestReceiver::start();
    /// ingest.script([Reply::status(500), Reply::ok()]); // the first request fails, the retry succeeds
    /// ```
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.script.lock().unwrap_or_else(|e| e.into_inner()).extend(replies);
    }

    /// Answers requests (once the script is used up) with `f`'s reply; `f` sees the request
    /// (its `status` and `answered_at` not yet set).
    ///
    /// ```
    /// use mcpeye::testing::{IngestReceiver, Reply};
    ///
    /// let ingest = IngestReceiver::start();
    /// // Refuse payloads without the secret, as the real ingest does.
    /// ingest.respond_with(|request| match request.header(mcpeye::contract::SECRET_HEADER) {
    ///     Some("s3cr3t") => Reply::ok(),
    ///     _ => Reply::status(401),
    /// });
    /// ```
    pub fn respond_with(&self, f: impl Fn(&RecordedRequest) -> Reply + Send + 'static) {
        *self.state.handler.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(f));
    }

    /// Every request so far.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(ingest.requests().len(), 1);
    /// ```
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests().clone()
    }

    /// The events of every request answered with a 2xx, in order.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url())).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(ingest.events()[0]["toolName"], "search");
    /// ```
    pub fn events(&self) -> Vec<Value> {
        self.state.requests().iter().filter(|r| r.accepted()).flat_map(RecordedRequest::events).collect()
    }

    /// Waits until at least `n` events were accepted or `timeout` passed; returns the accepted
    /// events either way.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url()).flush_threshold(1)).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// // No flush: the tracker sends on its own.
    /// assert_eq!(ingest.wait_for_events(1, Duration::from_secs(10)).len(), 1);
    /// ```
    pub fn wait_for_events(&self, n: usize, timeout: Duration) -> Vec<Value> {
        self.wait_until(timeout, |reqs| {
            reqs.iter().filter(|r| r.accepted()).map(|r| r.events().len()).sum::<usize>() >= n
        });
        self.events()
    }

    /// Waits until at least `n` requests arrived or `timeout` passed; returns them either way.
    ///
    /// ```
    /// use mcpeye::testing::IngestReceiver;
    /// use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
    /// use std::time::Duration;
    ///
    /// let ingest = IngestReceiver::start();
    /// let tracker = Tracker::new(Config::new("proj").ingest_url(ingest.url()).flush_threshold(1)).unwrap();
    /// tracker.record(CallRecord::new("search", serde_json::json!({}), CallOutcome::error("offline")));
    /// assert_eq!(ingest.wait_for_requests(1, Duration::from_secs(10))[0].method, "POST");
    /// ```
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_until(timeout, |reqs| reqs.len() >= n);
        self.requests()
    }

    fn wait_until(&self, timeout: Duration, done: impl Fn(&[RecordedRequest]) -> bool) {
        let deadline = Instant::now() + timeout;
        let mut reqs = self.state.requests();
        while !done(&reqs) {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            reqs = self.state.changed.wait_timeout(reqs, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

impl Drop for IngestReceiver {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept_loop(listener: TcpListener, state: Arc<ReceiverState>) {
    while !state.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let s = state.clone();
                let _ = std::thread::Builder::new().name("mcpeye-test-conn".into()).spawn(move || serve(stream, s));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Serves the requests of one keep-alive connection.
fn serve(mut stream: TcpStream, state: Arc<ReceiverState>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(POLL));
    let mut buf = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buf, &state) else { return };
        let reply = choose_reply(&state, &request);
        let index = {
            let mut reqs = state.requests();
            reqs.push(RecordedRequest { status: reply.status, ..request });
            state.changed.notify_all();
            reqs.len() - 1
        };
        if !pause(reply.delay, &state) {
            return;
        }
        let bytes = reply.response_bytes();
        match reply.behaviour {
            Behaviour::Answer => {
                // Marked answered before writing, so a client that has read the answer never
                // sees the request as unanswered.
                mark_answered(&state, index);
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Behaviour::Stall => {
                while pause(POLL, &state) {}
                return;
            }
            Behaviour::Drip => {
                for (i, b) in bytes.iter().enumerate() {
                    if i == bytes.len() - 1 {
                        mark_answered(&state, index);
                    }
                    if stream.write_all(&[*b]).is_err() || !pause(Duration::from_secs(1), &state) {
                        return;
                    }
                }
            }
            Behaviour::CloseMidResponse => {
                let _ = stream.write_all(&bytes[..bytes.len().min(20)]);
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

fn mark_answered(state: &ReceiverState, index: usize) {
    let mut reqs = state.requests();
    reqs[index].answered_at = Some(Instant::now());
    state.changed.notify_all();
}

/// Sleeps `d` in small steps; false once the receiver is stopping.
fn pause(d: Duration, state: &ReceiverState) -> bool {
    let end = Instant::now() + d;
    loop {
        if state.stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep(POLL.min(end - now));
    }
}

fn choose_reply(state: &ReceiverState, request: &RecordedRequest) -> Reply {
    if let Some(r) = state.script.lock().unwrap_or_else(|e| e.into_inner()).pop_front() {
        return r;
    }
    let handler = state.handler.lock().unwrap_or_else(|e| e.into_inner());
    match handler.as_ref() {
        Some(f) => f(request),
        None => Reply::ok(),
    }
}

/// Reads one request (head and `content-length` body); `None` at end of stream or on stop.
fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>, state: &ReceiverState) -> Option<RecordedRequest> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD || !fill(stream, buf, state) {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if !fill(stream, buf, state) {
            return None;
        }
    }
    let body = buf[body_start..body_start + length].to_vec();
    buf.drain(..body_start + length);
    Some(RecordedRequest { method, path, headers, body, received_at: Instant::now(), status: 0, answered_at: None })
}

/// Reads more bytes into `buf`; false at end of stream, on error, or on stop.
fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, state: &ReceiverState) -> bool {
    let mut chunk = [0u8; 8192];
    loop {
        if state.stop.load(Ordering::SeqCst) {
            return false;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return false,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
