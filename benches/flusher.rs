//! The flusher: time to ship a backlog of 10 000 events (`Tracker::flush` right after
//! recording them, as the Python peer's `bench_flush.py` times its `flush()`), and sustained
//! events per second delivered to a loopback ingest, with the test `IngestReceiver` and with a
//! minimal receiver (`FastIngest`) to tell the flusher's limit from the receiver's.
//!
//! `cargo bench --bench flusher [-- REPS SECONDS]`

mod common;

use common::{arguments, result, Ingest, INTENT};
use mcpeye::{CallOutcome, CallRecord, IntentSource, Tracker};
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// A record like the peer's: its arguments, intent and `{"content": …}` result.
fn record() -> CallRecord {
    let result = serde_json::json!({"content": [{"type": "text", "text": "3 invoices found"}]});
    let mut record = CallRecord::new(Cow::Borrowed("search_invoices"), arguments(), CallOutcome::Success { result });
    record.intent = Some((INTENT.to_string(), IntentSource::Mcpeye));
    record.duration = Duration::from_micros(1200);
    record
}

/// Median wall time of `flush()` of a 10 000-event backlog, over `reps` runs. `encoded`: the
/// flusher had the time to encode the backlog before the flush (as after an ingest outage);
/// otherwise the flush starts right after the last record and includes redaction and encoding.
fn backlog(kind: &str, reps: usize, encoded: bool) -> f64 {
    const EVENTS: usize = 10_000;
    let ingest = Ingest::start(kind);
    // Nothing is sent until the flush: no threshold, no interval.
    let tracker = ingest.tracker_with(|c| {
        c.flush_threshold(usize::MAX).flush_interval(Duration::from_secs(3600)).max_buffer(2 * EVENTS)
    });
    for _ in 0..10 {
        tracker.record(record());
    }
    assert!(tracker.flush(Duration::from_secs(10)).completed, "warm-up flush");
    let mut walls = Vec::new();
    for _ in 0..reps {
        for _ in 0..EVENTS {
            tracker.record(record());
        }
        if encoded {
            // Two ticks of the flusher: it drains and encodes, but sends nothing before the flush.
            std::thread::sleep(Duration::from_millis(250));
        }
        let t = Instant::now();
        let report = tracker.flush(Duration::from_secs(30));
        walls.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(report.completed && report.stats.dropped.total() == 0, "{report:?}");
    }
    let sent = tracker.shutdown(Duration::from_secs(2)).stats.sent;
    assert_eq!(sent as usize, 10 + reps * EVENTS);
    walls.sort_by(f64::total_cmp);
    let median = walls[walls.len() / 2];
    let label = format!("{kind}.{}", if encoded { "encoded" } else { "raw" });
    eprintln!("backlog {label:<16} flush of {EVENTS} events: median {median:.1} ms, best {:.1} ms", walls[0]);
    result(&format!("flusher.backlog_10k.{label}.median_ms"), format!("{median:.1}"));
    result(&format!("flusher.backlog_10k.{label}.best_ms"), format!("{:.1}", walls[0]));
    median
}

/// Records from one thread, as fast as it can or at `rate` per second, for `secs`; returns
/// events delivered per second (until the final flush completes) and the stats.
fn sustained(kind: &str, secs: f64, rate: Option<u64>) {
    let ingest = Ingest::start(kind);
    let tracker: Tracker = ingest.tracker();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut n: u64 = 0;
    while Instant::now() < end {
        if let Some(r) = rate {
            // Batches of 100 on schedule; sleep when ahead.
            let due = start + Duration::from_nanos(n * 1_000_000_000 / r);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            for _ in 0..100 {
                tracker.record(record());
            }
            n += 100;
        } else {
            tracker.record(record());
            n += 1;
        }
    }
    let report = tracker.flush(Duration::from_secs(30));
    let elapsed = start.elapsed().as_secs_f64();
    let s = report.stats;
    let label = match rate {
        Some(r) => format!("{kind}.offered_{}k", r / 1000),
        None => format!("{kind}.saturation"),
    };
    let delivered = s.sent as f64 / elapsed;
    eprintln!(
        "sustained {label:<22} recorded {} ({:.0}/s) delivered {} ({delivered:.0}/s) dropped {} {:?}",
        s.captured,
        s.captured as f64 / secs,
        s.sent,
        s.dropped.total(),
        s.dropped
    );
    result(&format!("flusher.sustained.{label}.recorded_per_s"), format!("{:.0}", s.captured as f64 / secs));
    result(&format!("flusher.sustained.{label}.delivered_per_s"), format!("{delivered:.0}"));
    result(&format!("flusher.sustained.{label}.dropped"), s.dropped.total());
    tracker.shutdown(Duration::from_secs(2));
}

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let smoke = !common::full_run();
    let reps = args.first().copied().unwrap_or(if smoke { 1.0 } else { 5.0 }) as usize;
    let secs = args.get(1).copied().unwrap_or(if smoke { 0.2 } else { 3.0 });
    for kind in ["fast", "healthy"] {
        backlog(kind, reps, false);
        backlog(kind, reps, true);
    }
    for kind in ["fast", "healthy"] {
        sustained(kind, secs, None);
        sustained(kind, secs, Some(100_000));
    }
}
