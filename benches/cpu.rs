// The whole CPU cost of a call: process CPU time (every thread: the calling one and the flusher)
// divided by the calls, with every event delivered to an ingest in another process, next to the
// same calls without a tracker. Back to back, and paced at a steady rate (10 000 calls/s by
// default, in bursts of 10 every millisecond) with the thread asleep in between, as in a server.
//
// `cargo bench --bench cpu [-- N_BACK_TO_BACK N_PACED RATE_PER_S ROUNDS]`
// (`cargo bench --bench cpu_mimalloc` runs the same with mimalloc as the global allocator.)
//
// Each round runs the calls without a tracker, then the same calls with one (a fresh tracker
// whose `max_buffer` holds the whole run, so that nothing is dropped when the calls outpace the
// flusher), ending with `Tracker::flush`: the CPU spent until every event was accepted by the
// receiver is counted. The receiver is this binary started again (`common::ChildIngest`), so its
// CPU is not. Reported: the median over the rounds of the added CPU per call, and its range.
//
// `CPU_ONLY=none` or `CPU_ONLY=tracker` in the environment runs only that half of each round (for
// instruction counts under callgrind: the difference of two runs is what the tracker adds).
//
// Then paced again, interleaved (`paced_interleaved`): a manifest with a tracker and the same
// manifest without one called in alternate bursts, each burst timed on the calling thread's CPU
// clock, so that the calling thread's added CPU is a paired difference (the sleeps between bursts,
// whose cost varies by several us from run to run, are in neither); plus the flusher thread's
// CPU per event. `CPU_INTERLEAVED_ONLY=1` runs only these rounds (a quick A/B). Each such round
// is followed by two measured the same way against `baseline_call`, with none of mcpeye's code
// (`common::floor`): `paced_naive.*`, a straightforward pipeline (serde encoding, no redaction),
// and `paced_floor.*`, events encoded before the run (the channel, the thread's wake-ups, the
// copy, HTTP and loopback TCP): what this host charges for the architecture itself.
//
// Kept free of inner attributes: `cpu_mimalloc.rs` includes this file.

mod common;

use common::floor::{encoded_event, floor_call, naive_call, Floor};
use common::{
    arguments_with_intent, assert_sent, baseline_call, call_bench_tool, flusher_cpu_ns, manifest, median,
    process_cpu_ns, range, result, thread_cpu_ns, ChildIngest, PACE_BURST,
};
use mcpeye::Tracker;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// CPU spent by one run of calls.
#[derive(Clone, Copy)]
struct Run {
    /// All threads of the process, per call.
    process_ns: f64,
    /// The calling thread alone, per call.
    calling_ns: f64,
}

/// `n` calls of the bench tool (back to back, or one every `gap`), recorded into `tracker` if
/// any; with a tracker, the run ends when every event has been delivered.
fn run(n: usize, gap: Option<Duration>, tracker: Option<&Tracker>) -> Run {
    let m = manifest(tracker.cloned());
    let (p0, t0) = (process_cpu_ns(), thread_cpu_ns());
    call_bench_tool(&m, n, gap);
    let t1 = thread_cpu_ns();
    if let Some(t) = tracker {
        let report = t.flush(Duration::from_secs(120));
        assert!(report.completed, "the final flush did not complete: {report:?}");
    }
    let p1 = process_cpu_ns();
    Run { process_ns: (p1 - p0) as f64 / n as f64, calling_ns: (t1 - t0) as f64 / n as f64 }
}

/// `rounds` pairs of runs (without, then with a tracker); prints and returns the figures.
fn mode(prefix: &str, label: &str, ingest: &mut ChildIngest, n: usize, gap: Option<Duration>, rounds: usize) {
    let (mut none, mut with, mut added, mut calling_added) = (vec![], vec![], vec![], vec![]);
    let only = std::env::var("CPU_ONLY").unwrap_or_default();
    if !only.is_empty() {
        let tracker = (only == "tracker").then(|| ingest.tracker(n));
        let r = run(n, gap, tracker.as_ref());
        eprintln!("{prefix} {label} {only} only: {:.0} ns/call", r.process_ns);
        return;
    }
    for _ in 0..rounds {
        let bare = run(n, gap, None);
        // A fresh tracker per round, created before the clock starts; its channel holds the run.
        let tracker = ingest.tracker(n);
        let before = ingest.events();
        let tracked = run(n, gap, Some(&tracker));
        let delivered = ingest.events() - before;
        assert_sent(tracker, n, label);
        assert_eq!(delivered, n as u64, "events that reached the receiver");
        none.push(bare.process_ns);
        with.push(tracked.process_ns);
        added.push(tracked.process_ns - bare.process_ns);
        calling_added.push(tracked.calling_ns - bare.calling_ns);
        eprintln!(
            "{prefix} {label:<13} no tracker {:>7.0} ns/call | tracker {:>7.0} ns/call (calling thread {:>6.0}, other \
             threads {:>6.0}) | added {:>6.0} ns/call",
            bare.process_ns,
            tracked.process_ns,
            tracked.calling_ns,
            tracked.process_ns - tracked.calling_ns,
            tracked.process_ns - bare.process_ns
        );
    }
    let (lo, hi) = range(&added);
    let key = |k: &str| format!("{prefix}.{label}.{k}");
    result(&key("no_tracker_ns"), format!("{:.0}", median(&mut none)));
    result(&key("tracker_ns"), format!("{:.0}", median(&mut with)));
    result(&key("added_ns"), format!("{:.0}", median(&mut added)));
    result(&key("added_min_ns"), format!("{lo:.0}"));
    result(&key("added_max_ns"), format!("{hi:.0}"));
    result(&key("calling_thread_added_ns"), format!("{:.0}", median(&mut calling_added)));
}

fn main() {
    common::serve_if_receiver();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let smoke = !common::full_run();
    let n_back = args.first().copied().unwrap_or(if smoke { 2_000 } else { 300_000 });
    let n_paced = args.get(1).copied().unwrap_or(if smoke { 200 } else { 30_000 });
    let rate = args.get(2).copied().unwrap_or(10_000);
    let rounds = args.get(3).copied().unwrap_or(if smoke { 1 } else { 3 });
    // `cpu` or `cpu_mimalloc`.
    let prefix = common::bench_name();
    eprintln!("{prefix}: {n_back} calls back to back, {n_paced} calls at {rate}/s, {rounds} rounds");
    result(&format!("{prefix}.rate_per_s"), rate);
    let mut ingest = ChildIngest::start();
    // Warm-up: code, allocator, the receiver's connection.
    run(n_back / 10, None, None);
    let gap = Duration::from_nanos(1_000_000_000 / rate as u64);
    if std::env::var_os("CPU_INTERLEAVED_ONLY").is_none() {
        mode(&prefix, "back_to_back", &mut ingest, n_back, None, rounds);
        mode(&prefix, "paced", &mut ingest, n_paced, Some(gap), rounds);
    }
    paced_interleaved(&prefix, &mut ingest, n_paced, gap, rounds);
}

/// One round of [`paced_interleaved`]: per call, the calling thread's added CPU (paired) and
/// the flusher's CPU.
struct Paired {
    calling_ns: f64,
    flusher_ns: f64,
    /// Of `flusher_ns`, the kernel's, where it is known (the floor's and naive pipelines).
    flusher_kernel_ns: Option<f64>,
}

/// `n` calls into a tracked manifest at one per `gap`, in bursts of `PACE_BURST`, each burst
/// paired with a burst of the same calls into a manifest without a tracker made half a burst's
/// gap before or after it (which goes first alternates). Ends when every event is delivered.
fn paired_round(ingest: &mut ChildIngest, n: usize, gap: Duration) -> Paired {
    let tracker = ingest.tracker(n);
    let (bare, tracked) = (manifest(None), manifest(Some(tracker.clone())));
    let before = ingest.events();
    let f0 = flusher_cpu_ns();
    let (calls, calling_ns) = alternate_bursts(
        n,
        gap,
        |a| black_box(tracked.call("search_invoices", a)),
        |a| black_box(bare.call("search_invoices", a)),
    );
    let report = tracker.flush(Duration::from_secs(120));
    assert!(report.completed, "the final flush did not complete: {report:?}");
    let flusher_ns = flusher_cpu_ns() - f0;
    assert_sent(tracker, calls, "paced interleaved");
    assert_eq!(ingest.events() - before, calls as u64, "events that reached the receiver");
    Paired { calling_ns, flusher_ns: flusher_ns as f64 / calls as f64, flusher_kernel_ns: None }
}

/// [`paired_round`] for the naive pipeline (`common::floor`): its calls paired with
/// `baseline_call`s.
fn naive_round(ingest: &mut ChildIngest, n: usize, gap: Duration) -> Paired {
    let floor = Floor::start(ingest.url(), n + 1_000);
    pipeline_round(ingest, n, gap, floor, naive_call)
}

/// [`paired_round`] for the floor (`common::floor`): its calls paired with `baseline_call`s.
fn floor_round(ingest: &mut ChildIngest, n: usize, gap: Duration) -> Paired {
    let floor = Floor::start(ingest.url(), n + 1_000);
    let event = encoded_event(arguments_with_intent());
    pipeline_round(ingest, n, gap, floor, move |f, a| floor_call(f, &event, a))
}

/// `n` paced calls through one of `common::floor`'s pipelines (`call`), paired with
/// `baseline_call`s as in [`paired_round`]; ends `floor` once every event is delivered.
fn pipeline_round(
    ingest: &mut ChildIngest,
    n: usize,
    gap: Duration,
    floor: Floor,
    call: impl Fn(&Floor, serde_json::Value) -> serde_json::Value,
) -> Paired {
    let before = ingest.events();
    let (calls, calling_ns) = alternate_bursts(n, gap, |a| black_box(call(&floor, a)), |a| black_box(baseline_call(a)));
    // A thread started for this round: its whole CPU time is the round's.
    let end = floor.finish();
    assert_eq!((end.sent, ingest.events() - before), (calls as u64, calls as u64), "the floor's events delivered");
    Paired {
        calling_ns,
        flusher_ns: end.cpu_ns as f64 / calls as f64,
        flusher_kernel_ns: Some(end.kernel_ns as f64 / calls as f64),
    }
}

/// `n` calls at one per `gap`, in bursts of `PACE_BURST` that alternate between `measured` and
/// `base` half a burst's gap apart (which goes first alternates), each timed on the calling
/// thread's CPU clock. Returns the calls made by each side and the added CPU per call
/// (`measured` − `base`).
fn alternate_bursts(
    n: usize,
    gap: Duration,
    mut measured: impl FnMut(serde_json::Value) -> serde_json::Value,
    mut base: impl FnMut(serde_json::Value) -> serde_json::Value,
) -> (usize, f64) {
    let args = arguments_with_intent();
    let (mut base_ns, mut measured_ns) = (0u64, 0u64);
    let start = Instant::now();
    let period = gap * PACE_BURST as u32;
    for k in 0..n / PACE_BURST {
        for half in 0..2u32 {
            let due = start + period * k as u32 + period / 2 * half;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            let t0 = thread_cpu_ns();
            if (k + half as usize).is_multiple_of(2) {
                for _ in 0..PACE_BURST {
                    black_box(measured(black_box(args.clone())));
                }
                measured_ns += thread_cpu_ns() - t0;
            } else {
                for _ in 0..PACE_BURST {
                    black_box(base(black_box(args.clone())));
                }
                base_ns += thread_cpu_ns() - t0;
            }
        }
    }
    let calls = n / PACE_BURST * PACE_BURST;
    (calls, (measured_ns as f64 - base_ns as f64) / calls as f64)
}

/// Paced calls, interleaved: what a tracker adds per call, resolved to ~0.1 us from one round to
/// the next (the paced rounds above vary by several us); each round followed by the same for the
/// naive and floor pipelines (`common::floor`). Reported for each: the median over the rounds of
/// the added CPU (calling thread, paired, plus the flusher's per event), and its parts.
fn paced_interleaved(prefix: &str, ingest: &mut ChildIngest, n: usize, gap: Duration, rounds: usize) {
    let (mut ours, mut naive, mut floor) = (vec![], vec![], vec![]);
    for round in 0..rounds {
        for (label, rounds, run) in [
            ("paced interleaved", &mut ours, paired_round as fn(&mut ChildIngest, usize, Duration) -> Paired),
            ("paced naive", &mut naive, naive_round),
            ("paced floor", &mut floor, floor_round),
        ] {
            let r = run(ingest, n, gap);
            let kernel = r.flusher_kernel_ns.map(|k| format!(", {k:.0} of it in the kernel")).unwrap_or_default();
            eprintln!(
                "round {round} {label}: added {:.0} ns/call (calling thread +{:.0} ns, flusher {:.0} ns/event{kernel})",
                r.calling_ns + r.flusher_ns,
                r.calling_ns,
                r.flusher_ns
            );
            rounds.push(r);
        }
    }
    for (label, rounds) in [("paced_interleaved", ours), ("paced_naive", naive), ("paced_floor", floor)] {
        let mut total: Vec<f64> = rounds.iter().map(|r| r.calling_ns + r.flusher_ns).collect();
        let (lo, hi) = range(&total);
        let key = |k: &str| format!("{prefix}.{label}.{k}");
        result(&key("added_ns"), format!("{:.0}", median(&mut total)));
        result(&key("added_min_ns"), format!("{lo:.0}"));
        result(&key("added_max_ns"), format!("{hi:.0}"));
        result(
            &key("calling_thread_added_ns"),
            format!("{:.0}", median(&mut rounds.iter().map(|r| r.calling_ns).collect::<Vec<_>>())),
        );
        result(
            &key("flusher_ns"),
            format!("{:.0}", median(&mut rounds.iter().map(|r| r.flusher_ns).collect::<Vec<_>>())),
        );
    }
}
