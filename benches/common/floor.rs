//! Two pipelines of mcpeye's shape written with none of mcpeye's code, to read mcpeye's figures
//! against: calling thread → bounded crossbeam channel → a thread of its own (`floor-flusher`)
//! that drains it every 100 ms, as mcpeye's flusher does, and POSTs batches of at most 500
//! events with ureq to the bench's ingest.
//!
//! - **Naive** ([`naive_call`]): the straightforward version. The calling thread takes
//!   `mcpeyeIntent` out of the arguments, reads them from a borrowed `Value` (so that the record
//!   keeps them), reads the clocks and sends the record; the thread encodes each record with
//!   serde. No redaction or caps, no client attribution, no statistics: less than mcpeye does.
//! - **Floor** ([`floor_call`]): what no encoding or redaction work can remove. The event is
//!   encoded once, before the run; per call the calling thread reads the clocks and sends a
//!   reference to those bytes, and the thread copies them into the batch. What is left is the
//!   channel, the thread's wake-ups, the copy, HTTP and the kernel's loopback TCP: the host's
//!   price for the architecture itself.

use super::{search_invoices, InvoiceQuery};
use crossbeam_channel::{bounded, Receiver, Sender};
use mcpeye::{Args, CallToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One call, as the calling thread hands it over.
enum FloorRecord {
    /// What the naive pipeline records.
    Call {
        tool: &'static str,
        arguments: Value,
        intent: Option<Value>,
        text: String,
        timestamp_ms: u64,
        duration: Duration,
    },
    /// The floor's: an event encoded already, and the call's duration (which it leaves out).
    Encoded(Arc<[u8]>, Duration),
}

/// One event on the wire.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    call_id: u64,
    tool_name: &'a str,
    arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent: Option<&'a Value>,
    result: ResultJson<'a>,
    is_error: bool,
    duration_ms: f64,
    timestamp: u64,
}

#[derive(Serialize)]
struct ResultJson<'a> {
    content: [Text<'a>; 1],
}

#[derive(Serialize)]
struct Text<'a> {
    r#type: &'static str,
    text: &'a str,
}

/// The floor pipeline: a channel and the thread that drains, encodes and sends it. Clones share
/// the pipeline (each call site keeps one); [`finish`](Self::finish) ends it.
#[derive(Clone)]
pub struct Floor {
    tx: Sender<FloorRecord>,
    closing: Arc<AtomicBool>,
    thread: Arc<Mutex<Option<FloorThread>>>,
}

/// The thread; it ends with what [`Floor::finish`] returns.
type FloorThread = JoinHandle<FloorEnd>;

/// What the floor's thread did, read on it as it ends.
pub struct FloorEnd {
    /// Events sent (and accepted).
    pub sent: u64,
    /// Its whole CPU time, in nanoseconds.
    pub cpu_ns: u64,
    /// Of that, the time spent in the kernel (`getrusage`, microsecond resolution).
    pub kernel_ns: u64,
}

/// Events per POST, as mcpeye's `max_batch_events`.
const BATCH: usize = 500;
/// The flusher's tick, as mcpeye's.
const TICK: Duration = Duration::from_millis(100);

impl Floor {
    /// Starts its thread, sending to `url` (the bench's ingest); the channel holds `capacity`.
    pub fn start(url: String, capacity: usize) -> Floor {
        let (tx, rx) = bounded(capacity);
        let closing = Arc::new(AtomicBool::new(false));
        let c = closing.clone();
        let thread = std::thread::Builder::new()
            .name("floor-flusher".into())
            .spawn(move || flush_loop(&rx, &format!("{url}/v1/events"), &c))
            .unwrap();
        Floor { tx, closing, thread: Arc::new(Mutex::new(Some(thread))) }
    }

    /// Hands an encoded event over (the floor's record).
    pub fn record(&self, event: &Arc<[u8]>, duration: Duration) {
        let record = FloorRecord::Encoded(event.clone(), duration);
        assert!(self.tx.try_send(record).is_ok(), "the floor's channel holds the run");
    }

    /// Ends the thread once everything recorded before is sent (read on it as it ends).
    pub fn finish(&self) -> FloorEnd {
        self.closing.store(true, Ordering::SeqCst);
        let thread = self.thread.lock().unwrap().take().expect("finished once");
        thread.join().unwrap()
    }
}

/// The bench tool called through the naive pipeline: what [`super::baseline_call`] does, plus
/// the record.
#[inline(never)]
pub fn naive_call(floor: &Floor, mut arguments: Value) -> Value {
    let intent = arguments.as_object_mut().and_then(|m| m.remove("mcpeyeIntent"));
    let timestamp_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let started = Instant::now();
    let q = InvoiceQuery::deserialize(&arguments).expect("valid arguments");
    let text = search_invoices(Args(q));
    let record_text = text.clone();
    let out = CallToolResult::text(text).into_json();
    let duration = started.elapsed();
    let record =
        FloorRecord::Call { tool: "search_invoices", arguments, intent, text: record_text, timestamp_ms, duration };
    assert!(floor.tx.try_send(record).is_ok(), "the floor's channel holds the run");
    out
}

/// The bench tool called through the floor: [`super::baseline_call`], timed, and `event` (made
/// by [`encoded_event`]) sent as its record.
#[inline(never)]
pub fn floor_call(floor: &Floor, event: &Arc<[u8]>, arguments: Value) -> Value {
    let started = Instant::now();
    let out = super::baseline_call(arguments);
    floor.record(event, started.elapsed());
    out
}

/// The naive pipeline's event for one call of the bench tool with `arguments` (and their
/// intent), as [`floor_call`] sends it.
pub fn encoded_event(mut arguments: Value) -> Arc<[u8]> {
    let intent = arguments.as_object_mut().and_then(|m| m.remove("mcpeyeIntent"));
    let event = Event {
        call_id: 1,
        tool_name: "search_invoices",
        arguments: &arguments,
        intent: intent.as_ref(),
        result: ResultJson { content: [Text { r#type: "text", text: "3 invoices found" }] },
        is_error: false,
        duration_ms: 0.0123,
        timestamp: 1_764_547_200_000,
    };
    serde_json::to_vec(&event).unwrap().into()
}

fn flush_loop(rx: &Receiver<FloorRecord>, url: &str, closing: &AtomicBool) -> FloorEnd {
    let agent = ureq::Agent::new_with_defaults();
    let (mut body, mut batch, mut sent, mut next_id) = (Vec::with_capacity(1 << 20), 0usize, 0u64, 0u64);
    let mut post = |body: &mut Vec<u8>, batch: &mut usize| {
        if *batch == 0 {
            return;
        }
        body.extend_from_slice(b"]}");
        let response = agent.post(url).header("content-type", "application/json").send(&body[..]);
        assert!(response.is_ok_and(|r| r.status() == 200), "the ingest accepts the floor's batch");
        sent += *batch as u64;
        body.clear();
        *batch = 0;
    };
    loop {
        std::thread::sleep(TICK);
        // Read before draining: everything recorded before `finish` is in the channel by then.
        let last = closing.load(Ordering::SeqCst);
        while let Ok(r) = rx.try_recv() {
            if batch == 0 {
                body.extend_from_slice(br#"{"projectId":"bench","events":["#);
            } else {
                body.push(b',');
            }
            next_id += 1;
            match r {
                FloorRecord::Call { tool, arguments, intent, text, timestamp_ms, duration } => {
                    let event = Event {
                        call_id: next_id,
                        tool_name: tool,
                        arguments: &arguments,
                        intent: intent.as_ref(),
                        result: ResultJson { content: [Text { r#type: "text", text: &text }] },
                        is_error: false,
                        duration_ms: duration.as_secs_f64() * 1e3,
                        timestamp: timestamp_ms,
                    };
                    serde_json::to_writer(&mut body, &event).unwrap();
                }
                FloorRecord::Encoded(event, _) => body.extend_from_slice(&event),
            }
            batch += 1;
            if batch == BATCH {
                post(&mut body, &mut batch);
            }
        }
        post(&mut body, &mut batch);
        if last {
            // SAFETY: `rusage` is plain integers, for which all zeroes is a valid value.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `usage` is a valid, writable rusage; RUSAGE_THREAD is this thread's.
            let kernel_ns = match unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } {
                0 => (usage.ru_stime.tv_sec as u64 * 1_000_000 + usage.ru_stime.tv_usec as u64) * 1_000,
                _ => 0,
            };
            return FloorEnd { sent, cpu_ns: super::thread_cpu_ns(), kernel_ns };
        }
    }
}
