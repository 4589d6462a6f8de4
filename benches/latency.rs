//! Percentiles of the latency of a call, instrumented (`Manifest::call`) and baseline (the same
//! deserialisation, handler and result built directly), timed one by one with `Instant` and
//! interleaved (alternating which goes first), for each ingest condition, back to back
//! ("saturation") and at a steady realistic rate ("paced").
//!
//! `cargo bench --bench latency [-- N_SATURATION N_PACED RATE_PER_S]`

mod common;

use common::{arguments, arguments_with_intent, baseline_call, instrumented_call, manifest, quantile, result, Ingest};
use std::hint::black_box;
use std::time::{Duration, Instant};

struct Samples {
    baseline: Vec<u64>,
    instrumented: Vec<u64>,
}

fn run(manifest: &mcpeye::Manifest, n: usize, pace: Option<Duration>) -> Samples {
    let (plain, with_intent) = (arguments(), arguments_with_intent());
    let mut s = Samples { baseline: Vec::with_capacity(n), instrumented: Vec::with_capacity(n) };
    let start = Instant::now();
    for i in 0..n {
        if let Some(gap) = pace {
            // Sleep to the next slot: the flusher gets the CPU between calls, as in a real server.
            let due = start + gap * i as u32;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let (a, b) = (plain.clone(), with_intent.clone());
        let time_baseline = || {
            let t = Instant::now();
            black_box(baseline_call(a));
            t.elapsed().as_nanos() as u64
        };
        let time_instrumented = || {
            let t = Instant::now();
            black_box(instrumented_call(manifest, b));
            t.elapsed().as_nanos() as u64
        };
        let (x, y) = if i % 2 == 0 {
            let x = time_baseline();
            (x, time_instrumented())
        } else {
            let y = time_instrumented();
            (time_baseline(), y)
        };
        s.baseline.push(x);
        s.instrumented.push(y);
    }
    s.baseline.sort_unstable();
    s.instrumented.sort_unstable();
    s
}

fn report(label: &str, s: &Samples) {
    let q = |v: &[u64], p| quantile(v, p);
    eprintln!(
        "{label:<22} baseline p50 {:>6} p99 {:>7} p99.9 {:>8} | instrumented p50 {:>6} p99 {:>7} p99.9 {:>8} max {:>9} (ns)",
        q(&s.baseline, 0.5),
        q(&s.baseline, 0.99),
        q(&s.baseline, 0.999),
        q(&s.instrumented, 0.5),
        q(&s.instrumented, 0.99),
        q(&s.instrumented, 0.999),
        s.instrumented.last().copied().unwrap_or(0),
    );
    for (name, p) in [("p50", 0.5), ("p99", 0.99), ("p999", 0.999)] {
        result(&format!("latency.{label}.baseline.{name}_ns"), q(&s.baseline, p));
        result(&format!("latency.{label}.instrumented.{name}_ns"), q(&s.instrumented, p));
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let smoke = !common::full_run();
    let n_saturation = args.first().copied().unwrap_or(if smoke { 2_000 } else { 200_000 });
    let n_paced = args.get(1).copied().unwrap_or(if smoke { 200 } else { 20_000 });
    let rate = args.get(2).copied().unwrap_or(5_000);
    let gap = Duration::from_nanos(1_000_000_000 / rate as u64);
    eprintln!("{n_saturation} calls back to back, {n_paced} calls at {rate}/s, per condition");
    result("latency.rate_per_s", rate);

    // Warm-up: allocator, code, branch predictors.
    run(&manifest(None), n_saturation / 10, None);

    for kind in ["healthy", "down", "stalled"] {
        let ingest = Ingest::start(kind);
        let tracker = ingest.tracker();
        let m = manifest(Some(tracker.clone()));
        report(&format!("{kind}.saturation"), &run(&m, n_saturation, None));
        report(&format!("{kind}.paced"), &run(&m, n_paced, Some(gap)));
        let s = tracker.shutdown(Duration::from_millis(500)).stats;
        eprintln!("{kind}: captured {} sent {} dropped {:?} pending {}", s.captured, s.sent, s.dropped, s.pending);
        result(&format!("latency.{kind}.sent"), s.sent);
        result(&format!("latency.{kind}.captured"), s.captured);
    }
}
