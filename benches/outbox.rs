//! The outbox (`Config::outbox_dir`) next to the in-memory path, in the same run:
//!
//! 1. `outbox/flush_per_event` (criterion): the flusher's work per event — encode, (append to
//!    the log, settle, cut it back), hand the payload over — timed as `Tracker::flush` of a
//!    backlog of 4 000 recorded events, into a `MemorySink` so that no HTTP is measured.
//! 2. Sustained delivery to a minimal loopback ingest (`FastIngest`) from one thread, at
//!    saturation and offered 100 000 events/s: events delivered per second, with and without.
//! 3. The window of loss: how long after `Tracker::record` an event is in the log on disk
//!    (the ingest down, so that nothing is delivered and cut from the log), at random moments.
//!
//! `cargo bench --bench outbox [-- SECONDS SAMPLES]` (defaults 3 s and 200 samples; a short
//! smoke run under `cargo test --benches`).

mod common;

use common::{arguments, result, Ingest, INTENT};
use criterion::Criterion;
use mcpeye::testing::MemorySink;
use mcpeye::{CallOutcome, CallRecord, Config, IntentSource, Tracker};
use std::borrow::Cow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Events recorded before each timed flush.
const BACKLOG: u64 = 4_000;

fn record() -> CallRecord {
    let result = serde_json::json!({"content": [{"type": "text", "text": "3 invoices found"}]});
    let mut record = CallRecord::new(Cow::Borrowed("search_invoices"), arguments(), CallOutcome::Success { result });
    record.intent = Some((INTENT.to_string(), IntentSource::Mcpeye));
    record.duration = Duration::from_micros(1200);
    record
}

/// A fresh directory for one variant's outbox.
fn outbox_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpeye-bench-outbox-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn with_outbox(config: Config, dir: Option<&PathBuf>) -> Config {
    match dir {
        Some(d) => config.outbox_dir(d),
        None => config,
    }
}

fn flush_per_event(c: &mut Criterion) {
    let mut group = c.benchmark_group("outbox");
    group.throughput(criterion::Throughput::Elements(BACKLOG));
    for (label, dir) in [("memory", None), ("outbox", Some(outbox_dir("criterion")))] {
        // Nothing is sent before the flush (no threshold, no interval), and the hand-off channel
        // holds the whole backlog (a quarter of it nudges the flusher).
        let config = with_outbox(
            Config::new("bench")
                .flush_threshold(usize::MAX)
                .flush_interval(Duration::from_secs(3600))
                .max_buffer(20_000),
            dir.as_ref(),
        );
        let (tracker, sink) = MemorySink::with_config(config).unwrap();
        group.bench_function(format!("flush_per_event/{label}"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    for _ in 0..BACKLOG {
                        tracker.record(record());
                    }
                    let t = Instant::now();
                    let report = tracker.flush(Duration::from_secs(30));
                    spent += t.elapsed();
                    assert!(report.completed && report.stats.dropped.total() == 0, "{report:?}");
                    sink.clear();
                }
                spent
            })
        });
        tracker.shutdown(Duration::from_secs(5));
        if let Some(d) = dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    group.finish();
}

/// Records from one thread for `secs`, as fast as it can or at `rate` per second, to the
/// minimal ingest; prints events delivered per second (until the final flush completes).
fn sustained(secs: f64, rate: Option<u64>, outbox: bool) {
    let ingest = Ingest::start("fast");
    let dir = outbox.then(|| outbox_dir("sustained"));
    let tracker: Tracker = ingest.tracker_with(|c| with_outbox(c, dir.as_ref()));
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut n: u64 = 0;
    while Instant::now() < end {
        if let Some(r) = rate {
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
    let report = tracker.flush(Duration::from_secs(60));
    let elapsed = start.elapsed().as_secs_f64();
    let s = report.stats;
    let path = if outbox { "outbox" } else { "memory" };
    let label = match rate {
        Some(r) => format!("{path}.offered_{}k", r / 1000),
        None => format!("{path}.saturation"),
    };
    let delivered = s.sent as f64 / elapsed;
    eprintln!(
        "sustained {label:<20} recorded {} ({:.0}/s) delivered {} ({delivered:.0}/s) dropped {} {:?}",
        s.captured,
        s.captured as f64 / secs,
        s.sent,
        s.dropped.total(),
        s.dropped
    );
    result(&format!("outbox.sustained.{label}.recorded_per_s"), format!("{:.0}", s.captured as f64 / secs));
    result(&format!("outbox.sustained.{label}.delivered_per_s"), format!("{delivered:.0}"));
    result(&format!("outbox.sustained.{label}.dropped"), s.dropped.total());
    tracker.shutdown(Duration::from_secs(5));
    if let Some(d) = dir {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Time from `record` to the event being in the log on disk, at `samples` moments spread over
/// the flusher's tick, with the ingest down (events stay in the log).
fn window(samples: usize) {
    let ingest = Ingest::start("down");
    let dir = outbox_dir("window");
    let tracker =
        ingest.tracker_with(|c| c.outbox_dir(&dir).retry_backoff(Duration::from_secs(60), Duration::from_secs(60)));
    let log = dir.join("outbox-0.log");
    let len = || std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let mut waits = Vec::with_capacity(samples);
    for k in 0..samples {
        // Spread the calls over the 100 ms tick (a fixed stride through it, not in step with it).
        std::thread::sleep(Duration::from_micros(((k * 37_003) % 100_000) as u64));
        let before = len();
        let t = Instant::now();
        tracker.record(record());
        while len() <= before {
            if t.elapsed() > Duration::from_secs(10) {
                panic!("the event never reached the outbox");
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        waits.push(t.elapsed().as_micros() as u64);
    }
    waits.sort_unstable();
    let q = |p: f64| waits[((waits.len() as f64 * p) as usize).min(waits.len() - 1)] as f64 / 1000.0;
    eprintln!(
        "window of loss over {samples} calls (record → in the log): median {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        q(0.5),
        q(0.9),
        q(0.99),
        q(1.0)
    );
    for (name, p) in [("median", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)] {
        result(&format!("outbox.window.{name}_ms"), format!("{:.1}", q(p)));
    }
    tracker.shutdown(Duration::from_millis(100));
    let _ = std::fs::remove_dir_all(dir);
}

fn main() {
    let full = common::full_run();
    let numbers: Vec<f64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let secs = numbers.first().copied().unwrap_or(if full { 3.0 } else { 0.2 });
    let samples = numbers.get(1).copied().unwrap_or(if full { 200.0 } else { 5.0 }) as usize;
    if full {
        let mut c = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
        flush_per_event(&mut c);
        c.final_summary();
    }
    for outbox in [false, true] {
        sustained(secs, None, outbox);
        sustained(secs, Some(100_000), outbox);
    }
    window(samples);
}
