//! Many threads calling one `#[mcpeye::tool]` through `Manifest::call` into one tracker: every
//! event is accounted for, delivered once, and each thread's events keep their order.
//!
//! The default is 4 × 10 000 calls so a debug `cargo test` stays quick; set
//! `MCPEYE_STRESS_CALLS_PER_THREAD=100000` (ideally with `--release`) for the full 4 × 100 000.

use mcpeye::testing::IngestReceiver;
use mcpeye::{Config, Manifest, Tracker};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const THREADS: u64 = 4;
const DEFAULT_CALLS_PER_THREAD: u64 = 10_000;

/// Generous bound for the final flush; it only guards against a hang.
const PATIENCE: Duration = Duration::from_secs(600);

/// Count one unit of work.
#[mcpeye::tool]
fn work(
    /// The caller's sequence number.
    n: u64,
) -> u64 {
    n
}

#[test]
fn every_call_from_every_thread_is_delivered_once_in_order() {
    let per_thread: u64 = std::env::var("MCPEYE_STRESS_CALLS_PER_THREAD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CALLS_PER_THREAD);
    let total = THREADS * per_thread;
    let ingest = IngestReceiver::start();
    // `max_buffer` ≥ the number of calls: neither the hand-off channel (as large) nor the
    // buffer can fill, so no drop is allowed at all.
    let config = Config::new("proj_stress").ingest_url(ingest.url()).max_buffer(total as usize);
    let tracker = Tracker::new(config).unwrap();
    let manifest = Arc::new(Manifest::builder().tools(mcpeye::tool_defs![work]).tracker(tracker.clone()).build());

    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let m = manifest.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let n = t * per_thread + i;
                    let out = m.call("work", json!({ "n": n }));
                    assert_eq!(out["content"][0]["text"], n.to_string(), "{out}");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a calling thread panicked");
    }
    let calling = started.elapsed();
    let report = tracker.flush(PATIENCE);
    eprintln!("{total} calls in {calling:?}, delivered after {:?}: {report:?}", started.elapsed());
    assert!(report.completed, "{report:?}");
    let s = report.stats;
    assert_eq!(s.captured, total);
    assert_eq!(s.captured, s.sent + s.dropped.total() + s.sampled_out + s.pending, "{s:?}");
    assert_eq!((s.sent, s.dropped.total(), s.pending), (total, 0, 0), "{s:?}");

    // Read the bodies one at a time: parsing every event at once would take gigabytes.
    let mut ids = HashSet::with_capacity(total as usize);
    let mut last = vec![None::<u64>; THREADS as usize];
    let mut seen = 0u64;
    for request in ingest.requests().iter().filter(|r| r.accepted()) {
        let payload: Value = serde_json::from_slice(&request.body).unwrap();
        for event in payload["events"].as_array().unwrap() {
            assert!(ids.insert(event["callId"].as_str().unwrap().to_owned()), "duplicate callId");
            let n = event["arguments"]["n"].as_u64().unwrap();
            let thread = (n / per_thread) as usize;
            assert!(last[thread].is_none_or(|prev| prev < n), "thread {thread}: {n} after {:?}", last[thread]);
            last[thread] = Some(n);
            seen += 1;
        }
    }
    assert_eq!(seen, total);
    assert_eq!(last, (0..THREADS).map(|t| Some((t + 1) * per_thread - 1)).collect::<Vec<_>>());
}
