//! The local event log (`Config::event_log`) against the same tracker without it, in one run:
//! `Manifest::call` of the bench tool into a `MemorySink` (no HTTP), a backlog of 4 000 calls
//! then `Tracker::flush`, the two variants alternating round by round. Per call: the calling
//! thread's CPU time (what the call pays) and the flusher threads' CPU time over the round (its
//! work per event: encoding, and with the log, its line and its share of the write; the idle
//! tracker's flusher ticks are in both variants' figures alike).
//!
//! `cargo bench --bench event_log [-- ROUNDS]` (default 15; a smoke run of 1 under
//! `cargo test --benches`).
//!
//! For callgrind, one variant alone: `EVENT_LOG_ONLY=off|on` with `-- N`, N calls then a flush;
//! run it with N and 2N under `valgrind --tool=callgrind --separate-threads=yes`, and the
//! difference over N is the instructions per call of the calling thread and per event of the
//! flusher (setup, the tool list and the files' opening cancel out).

mod common;

use common::{arguments_with_intent, flusher_cpu_ns, manifest, result, thread_cpu_ns};
use mcpeye::testing::MemorySink;
use mcpeye::{Config, Manifest, Tracker};
use std::path::PathBuf;
use std::time::Duration;

/// Calls recorded before each timed flush.
const BACKLOG: usize = 4_000;

/// A tracker that sends nothing before a flush, with the event log in `dir` when given.
fn tracker(dir: Option<&PathBuf>) -> (Tracker, MemorySink) {
    let config =
        Config::new("bench").flush_threshold(usize::MAX).flush_interval(Duration::from_secs(3600)).max_buffer(20_000);
    let config = match dir {
        Some(d) => config.event_log(d),
        None => config,
    };
    MemorySink::with_config(common::with_bench_redaction(config)).expect("a tracker")
}

fn log_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpeye-bench-event-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `n` calls, then a flush: the calling thread's CPU time per call and the flusher threads'
/// per event, in nanoseconds.
fn round(manifest: &Manifest, tracker: &Tracker, sink: &MemorySink, n: usize) -> (f64, f64) {
    let (cpu, flusher) = (thread_cpu_ns(), flusher_cpu_ns());
    for _ in 0..n {
        std::hint::black_box(manifest.call("search_invoices", arguments_with_intent()));
    }
    let calling = (thread_cpu_ns() - cpu) as f64 / n as f64;
    let report = tracker.flush(Duration::from_secs(60));
    let flush = flusher_cpu_ns().saturating_sub(flusher) as f64 / n as f64;
    assert!(report.completed && report.stats.dropped.total() == 0, "{report:?}");
    sink.clear();
    (calling, flush)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One variant alone, for callgrind.
fn only(variant: &str, n: usize) {
    let dir = (variant == "on").then(log_dir);
    let (tracker, sink) = tracker(dir.as_ref());
    let m = manifest(Some(tracker.clone()));
    round(&m, &tracker, &sink, n);
    let stats = tracker.shutdown(Duration::from_secs(30)).stats;
    assert_eq!(stats.captured, n as u64, "{stats:?}");
    if let Some(d) = dir {
        // The calls and the tool list.
        assert_eq!(stats.event_log.written, n as u64 + 1, "{stats:?}");
        let _ = std::fs::remove_dir_all(d);
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if let Ok(variant) = std::env::var("EVENT_LOG_ONLY") {
        only(&variant, args.first().copied().unwrap_or(BACKLOG));
        return;
    }
    let rounds = args.first().copied().unwrap_or(if common::full_run() { 15 } else { 1 });
    let dir = log_dir();
    let (off, off_sink) = tracker(None);
    let (on, on_sink) = tracker(Some(&dir));
    let (m_off, m_on) = (manifest(Some(off.clone())), manifest(Some(on.clone())));
    // Warm-up: the allocator, the pool of record buffers, the log's first file.
    round(&m_off, &off, &off_sink, BACKLOG);
    round(&m_on, &on, &on_sink, BACKLOG);
    let (mut calling, mut flush) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for r in 0..rounds {
        // Alternating which goes first, so that neither always follows the other.
        let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (c, f) = match i {
                0 => round(&m_off, &off, &off_sink, BACKLOG),
                _ => round(&m_on, &on, &on_sink, BACKLOG),
            };
            calling[i].push(c);
            flush[i].push(f);
        }
    }
    for (i, label) in ["off", "on"].into_iter().enumerate() {
        let (c, f) = (median(calling[i].clone()), median(flush[i].clone()));
        let (c_lo, c_hi) =
            (calling[i].iter().copied().fold(f64::MAX, f64::min), calling[i].iter().copied().fold(0.0, f64::max));
        let (f_lo, f_hi) =
            (flush[i].iter().copied().fold(f64::MAX, f64::min), flush[i].iter().copied().fold(0.0, f64::max));
        eprintln!(
            "event log {label:<3}: calling thread {c:.0} ns per call ({c_lo:.0}–{c_hi:.0}); flusher {f:.0} ns per event ({f_lo:.0}–{f_hi:.0}); {rounds} rounds of {BACKLOG}"
        );
        result(&format!("event_log.{label}.calling_thread_ns"), format!("{c:.0}"));
        result(&format!("event_log.{label}.flusher_per_event_ns"), format!("{f:.0}"));
    }
    let stats = on.shutdown(Duration::from_secs(30)).stats;
    assert_eq!(stats.event_log.lost, 0, "{stats:?}");
    off.shutdown(Duration::from_secs(30));
    let _ = std::fs::remove_dir_all(dir);
}
