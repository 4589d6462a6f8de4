//! What the benches share: the benchmarked tool and its arguments (the same work as the Python
//! SDK's `peer-bench/common.py`), the three ingest conditions, a minimal fast ingest, and
//! percentile helpers. Each bench uses part of it.
#![allow(dead_code)]

pub mod floor;

use mcpeye::testing::{IngestReceiver, Reply};
use mcpeye::{Args, Config, Manifest, Tracker};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The filters of an invoice search.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Filters {
    /// Invoice status.
    pub status: String,
    /// Cloud region.
    pub region: String,
    /// ISO currency.
    pub currency: String,
}

/// The arguments of `search_invoices`, as in the Python peer's `common.ARGS`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct InvoiceQuery {
    /// Free text.
    pub query: String,
    /// Page size.
    pub limit: u32,
    /// Page offset.
    pub offset: u32,
    /// Filters.
    pub filters: Filters,
    /// Sort key.
    pub sort: String,
    /// Relations to include.
    pub include: Vec<String>,
}

/// Search invoices (a handler that does next to nothing, so that only the wrapping is measured).
#[mcpeye::tool(read_only)]
pub fn search_invoices(Args(q): Args<InvoiceQuery>) -> String {
    std::hint::black_box(&q);
    "3 invoices found".to_string()
}

/// The peer's `common.ARGS`: about 200 bytes of compact JSON.
pub fn arguments() -> Value {
    json!({
        "query": "open invoices for the EU region with overdue payments",
        "limit": 25,
        "offset": 0,
        "filters": {"status": "open", "region": "eu-west-1", "currency": "EUR"},
        "sort": "-due_date",
        "include": ["customer", "lines"]
    })
}

/// The peer's `common.INTENT` (a 25–35 word intent).
pub const INTENT: &str = "The user is reconciling overdue EU invoices before month-end close and wants the open \
                          ones sorted by due date; they also wanted a CSV export but no export tool exists.";

/// The arguments an agent sends to the instrumented tool: the same, plus `mcpeyeIntent`.
pub fn arguments_with_intent() -> Value {
    let mut v = arguments();
    v.as_object_mut().unwrap().insert("mcpeyeIntent".into(), Value::String(INTENT.into()));
    v
}

/// What an uninstrumented server does with the same call: deserialise the arguments, call the
/// handler, and build the `CallToolResult` JSON.
#[inline(never)]
pub fn baseline_call(arguments: Value) -> Value {
    let q: InvoiceQuery = serde_json::from_value(arguments).expect("valid arguments");
    let text = search_invoices(Args(q));
    mcpeye::CallToolResult::text(text).to_json()
}

/// The instrumented call.
#[inline(never)]
pub fn instrumented_call(manifest: &Manifest, arguments: Value) -> Value {
    manifest.call("search_invoices", arguments)
}

/// Paced calls come in bursts of this many, one burst per `PACE_BURST` gaps: a sleep per call
/// costs ~20 us of CPU on this VM (timer, two context switches) with a spread of several us from
/// run to run, which would bury the few us a tracker adds; per 10 calls it costs ~2 us each.
pub const PACE_BURST: usize = 10;

/// `n` calls of the bench tool into `m`, back to back, or (`gap`) one every `gap` in bursts of
/// [`PACE_BURST`] with the thread asleep in between, as in a server.
pub fn call_bench_tool(m: &Manifest, n: usize, gap: Option<Duration>) {
    let args = arguments_with_intent();
    let start = Instant::now();
    for i in 0..n {
        if let Some(gap) = gap.filter(|_| i % PACE_BURST == 0) {
            let due = start + gap * i as u32;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        std::hint::black_box(m.call("search_invoices", std::hint::black_box(args.clone())));
    }
}

/// A manifest with `search_invoices`, recording into `tracker` (none: dispatch only).
pub fn manifest(tracker: Option<Tracker>) -> Manifest {
    let b = Manifest::builder().tools(mcpeye::tool_defs![search_invoices]);
    match tracker {
        Some(t) => b.tracker(t).build(),
        None => b.build(),
    }
}

/// An ingest condition for the tracker under test. Keep it alive while the tracker runs.
pub enum Ingest {
    /// `IngestReceiver` answering 200.
    Healthy(IngestReceiver),
    /// A port nobody listens on: connections are refused.
    Down(u16),
    /// `IngestReceiver` that accepts and never answers.
    Stalled(IngestReceiver),
    /// The minimal receiver below.
    Fast(FastIngest),
}

impl Ingest {
    /// Starts the named condition: `healthy`, `down`, `stalled` or `fast`.
    pub fn start(kind: &str) -> Ingest {
        match kind {
            "healthy" => Ingest::Healthy(IngestReceiver::start()),
            "down" => {
                let l = TcpListener::bind("127.0.0.1:0").unwrap();
                let port = l.local_addr().unwrap().port();
                drop(l);
                Ingest::Down(port)
            }
            "stalled" => {
                let r = IngestReceiver::start();
                r.respond_with(|_| Reply::stall());
                Ingest::Stalled(r)
            }
            "fast" => Ingest::Fast(FastIngest::start()),
            other => panic!("unknown ingest condition {other}"),
        }
    }

    /// The URL to configure.
    pub fn url(&self) -> String {
        match self {
            Ingest::Healthy(r) | Ingest::Stalled(r) => r.url(),
            Ingest::Down(port) => format!("http://127.0.0.1:{port}"),
            Ingest::Fast(f) => f.url(),
        }
    }

    /// A tracker with the default options, sending to this ingest; diagnostics are silenced.
    pub fn tracker(&self) -> Tracker {
        self.tracker_with(|c| c)
    }

    /// A tracker with adjusted options.
    pub fn tracker_with(&self, f: impl FnOnce(Config) -> Config) -> Tracker {
        Tracker::new(with_bench_redaction(f(Config::new("bench").ingest_url(self.url()).on_error(|_| {})))).unwrap()
    }
}

/// A minimal loopback ingest: one thread per keep-alive connection, reads each request, parses
/// its JSON body (as the Python peer's receiver does) and answers 200. Keeps nothing.
pub struct FastIngest {
    port: u16,
    stop: Arc<AtomicBool>,
    /// Events in the payloads received.
    pub events: Arc<AtomicU64>,
}

impl FastIngest {
    /// Starts it on a free loopback port.
    pub fn start() -> FastIngest {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(AtomicU64::new(0));
        let (s, e) = (stop.clone(), events.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok(stream) = stream {
                    let e = e.clone();
                    std::thread::spawn(move || serve_fast(stream, &e, Duration::ZERO));
                }
            }
        });
        FastIngest { port, stop, events }
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for FastIngest {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

#[derive(serde::Deserialize)]
struct Payload {
    events: Vec<serde::de::IgnoredAny>,
}

/// Serves one connection: each POST's events counted, answered 200 `latency` after its body
/// arrived.
fn serve_fast(mut stream: TcpStream, events: &AtomicU64, latency: Duration) {
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        // Head.
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let n = serde_json::from_slice::<Payload>(&buf[head_end..head_end + len]).map(|p| p.events.len()).unwrap_or(0);
        events.fetch_add(n as u64, Ordering::Relaxed);
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        buf.drain(..head_end + len);
        let body = format!("{{\"accepted\":{n}}}");
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// Set in the environment of a bench binary started as the receiver of [`ChildIngest`].
const RECEIVER_ENV: &str = "MCPEYE_BENCH_RECEIVER";
/// The receiver's answer latency in microseconds ([`ChildIngest::start_with_latency`]).
const LATENCY_ENV: &str = "MCPEYE_BENCH_RECEIVER_LATENCY_US";

/// The ingest in another process: this bench binary started again as a receiver (the loop of
/// [`FastIngest`]: keep-alive, parses each body as JSON, answers 200), so that its CPU is not
/// counted in this process's. Every bench that uses it calls [`serve_if_receiver`] first in `main`.
pub struct ChildIngest {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

impl ChildIngest {
    /// Starts the receiver process and waits for its port.
    pub fn start() -> ChildIngest {
        ChildIngest::start_with_latency(Duration::ZERO)
    }

    /// Like [`start`](Self::start), with a receiver that answers each POST `latency` after its
    /// body arrived, as an ingest across a network does.
    pub fn start_with_latency(latency: Duration) -> ChildIngest {
        let exe = std::env::current_exe().expect("the bench's own path");
        let mut child = Command::new(exe)
            .env(RECEIVER_ENV, "1")
            .env(LATENCY_ENV, latency.as_micros().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the receiver process starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the receiver's port");
        let port = line.trim().parse().expect("a port number");
        ChildIngest { child, stdin, stdout, port }
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A tracker sending here whose buffer holds `calls` records and more, so that calls faster
    /// than the flusher are not dropped; diagnostics are silenced.
    pub fn tracker(&self, calls: usize) -> Tracker {
        let config = Config::new("bench").ingest_url(self.url()).max_buffer(calls + 1_000).on_error(|_| {});
        Tracker::new(with_bench_redaction(config)).unwrap()
    }

    /// Events received so far (in the payloads it answered 200 to).
    pub fn events(&mut self) -> u64 {
        self.stdin.write_all(b"count\n").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().parse().unwrap()
    }
}

/// Shuts `tracker` down and asserts that it captured and sent `expected` events, none dropped.
pub fn assert_sent(tracker: Tracker, expected: usize, what: &str) {
    let s = tracker.shutdown(std::time::Duration::from_secs(5)).stats;
    let expected = expected as u64;
    assert_eq!((s.captured, s.sent, s.dropped.total()), (expected, expected, 0), "{what}: {s:?}");
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The smallest and the largest of `v`.
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

impl Drop for ChildIngest {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// When this process is a [`ChildIngest`]: serves until its parent closes stdin, then exits.
/// Each `count` line on stdin is answered with the number of events received.
pub fn serve_if_receiver() {
    if std::env::var_os(RECEIVER_ENV).is_none() {
        return;
    }
    let latency = Duration::from_micros(std::env::var(LATENCY_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let events = Arc::new(AtomicU64::new(0));
    let e = events.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let e = e.clone();
            std::thread::spawn(move || serve_fast(stream, &e, latency));
        }
    });
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{port}");
    let _ = out.flush();
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "count" {
            let _ = writeln!(out, "{}", events.load(Ordering::SeqCst));
            let _ = out.flush();
        }
    }
    std::process::exit(0);
}

/// CPU time of this process, all its threads (those that exited included), in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of this process's flusher threads (`mcpeye-flusher`), in nanoseconds: the part of a
/// call's cost that is spent off the calling thread.
pub fn flusher_cpu_ns() -> u64 {
    threads_cpu_ns("mcpeye-flusher")
}

/// CPU time of this process's threads named `name`, in nanoseconds.
pub fn threads_cpu_ns(name: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0 };
    tasks
        .filter_map(|t| t.ok())
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name))
        .filter_map(|t| t.file_name().to_str()?.parse::<libc::pid_t>().ok())
        // Linux's CPU clock of a thread of this process, by its id (MAKE_THREAD_CPUCLOCK).
        .map(|tid| clock_ns_or_zero(((!tid) << 3) | 6))
        .sum()
}

fn clock_ns_or_zero(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; a clock that is gone is an error, not UB.
    match unsafe { libc::clock_gettime(clock, &mut ts) } {
        0 => ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        _ => 0,
    }
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids are constants Linux knows.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The `p` quantile (0..=1) of sorted nanosecond samples.
pub fn quantile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Whether this is a real run (`cargo bench` passes `--bench`); `cargo test --benches` does not,
/// and then the harnesses only make a short smoke run.
pub fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The bench's own name, from its executable (`cpu-<hash>`): `cpu`, `cpu_mimalloc`, `rmcp`…, so
/// that a bench included by another (`cpu_mimalloc` includes `cpu`) reports under its own name.
pub fn bench_name() -> String {
    let exe = std::env::current_exe().unwrap();
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    name.rsplit_once('-').map_or(name.clone(), |(n, _)| n.to_owned())
}

/// A line the bench script collects: `RESULT key value`.
pub fn result(key: &str, value: impl std::fmt::Display) {
    println!("RESULT {key} {value}");
}

/// Waits until `f` is true or `timeout` passes.
pub fn wait_until(timeout: Duration, f: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    f()
}

/// `MCPEYE_BENCH_CREDENTIALS=off` runs a bench with the siblings' redaction only
/// (`Config::redact_credentials(false)`), to tell the credential layer's cost from the rest.
pub fn with_bench_redaction(config: Config) -> Config {
    match std::env::var("MCPEYE_BENCH_CREDENTIALS").as_deref() {
        Ok("off") => config.redact_credentials(false),
        _ => config,
    }
}
