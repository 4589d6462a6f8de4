// The whole process's CPU per call delivered, at a real backlog: `Manifest::call` back to back
// with a `max_buffer` that holds the whole burst (so every event is delivered), and the same
// paced, each next to the same loop without a tracker. The process ends its tracked run as a
// server does on exit, with `Tracker::shutdown`, which delivers what still waits: the CPU counted
// runs from the first call until every event was accepted by an ingest in another process (this
// binary started again, `common::ChildIngest`, so that its CPU is not counted) that answers each
// POST 2 ms after it arrived, as an ingest across a network does: an instant one on loopback
// keeps up with the calls, and no backlog forms.
//
// `cargo bench --bench backlog [-- N_SATURATED N_PACED RATE_PER_S ROUNDS]`
// (defaults 300 000, 30 000, 10 000/s, 3; `BACKLOG_INGEST_LATENCY_US` sets the ingest's answer
// latency, 2000 by default; `AB_BENCHES=backlog scripts/ab_bench.sh 86836a0` runs it against the
// build before the sender threads)
//
// Measured with `getrusage(RUSAGE_SELF)`: user plus system time of every thread (the calling
// one, the flusher, the sender threads), and the involuntary context switches, which grow when
// the flusher competes with the calling thread for the cores.

mod common;

use common::{call_bench_tool, manifest, median, range, result, ChildIngest};
use mcpeye::{Config, Tracker};
use std::time::Duration;

/// What `getrusage` says of this process: CPU in nanoseconds and involuntary context switches.
#[derive(Clone, Copy)]
struct Usage {
    cpu_ns: u64,
    switches: u64,
}

fn usage() -> Usage {
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; RUSAGE_SELF is a constant Linux knows.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage");
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    Usage { cpu_ns: ns(ru.ru_utime) + ns(ru.ru_stime), switches: ru.ru_nivcsw as u64 }
}

/// `n` calls back to back (`gap` none) or one every `gap` in bursts; with a tracker, the run ends
/// when its shutdown has delivered every event. Returns the CPU per call and the switches.
fn run(n: usize, gap: Option<Duration>, tracker: Option<Tracker>) -> (f64, u64) {
    let m = manifest(tracker.clone());
    let u0 = usage();
    call_bench_tool(&m, n, gap);
    if let Some(t) = tracker {
        let report = t.shutdown(Duration::from_secs(300));
        let s = report.stats;
        assert!(report.completed, "the shutdown did not deliver everything: {s:?}");
        assert_eq!((s.captured, s.sent, s.dropped.total()), (n as u64, n as u64, 0), "{s:?}");
    }
    let u1 = usage();
    ((u1.cpu_ns - u0.cpu_ns) as f64 / n as f64, u1.switches - u0.switches)
}

/// `rounds` pairs of runs (without, then with a tracker); prints the added CPU per call.
fn mode(label: &str, ingest: &mut ChildIngest, n: usize, gap: Option<Duration>, rounds: usize) {
    let (mut added, mut switches) = (vec![], vec![]);
    for _ in 0..rounds {
        let (bare, bare_switches) = run(n, gap, None);
        // What a user raising `max_buffer` for a burst writes; diagnostics silenced.
        let config = Config::new("bench").ingest_url(ingest.url()).max_buffer(n + 10).on_error(|_| {});
        let tracker = Tracker::new(config).unwrap();
        let before = ingest.events();
        let (tracked, tracked_switches) = run(n, gap, Some(tracker));
        assert_eq!(ingest.events() - before, n as u64, "events that reached the receiver");
        added.push((tracked - bare) / 1_000.0);
        switches.push(tracked_switches as f64 - bare_switches as f64);
        eprintln!(
            "backlog {label:<9} no tracker {:>6.2} us/call | tracker {:>6.2} us/call | added {:>6.2} us/call | \
             involuntary switches added {}",
            bare / 1_000.0,
            tracked / 1_000.0,
            (tracked - bare) / 1_000.0,
            tracked_switches as i64 - bare_switches as i64,
        );
    }
    let (lo, hi) = range(&added);
    result(&format!("backlog.{label}.added_us"), format!("{:.2}", median(&mut added)));
    result(&format!("backlog.{label}.added_min_us"), format!("{lo:.2}"));
    result(&format!("backlog.{label}.added_max_us"), format!("{hi:.2}"));
    result(&format!("backlog.{label}.switches_added"), format!("{:.0}", median(&mut switches)));
}

fn main() {
    common::serve_if_receiver();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let smoke = !common::full_run();
    let n_saturated = args.first().copied().unwrap_or(if smoke { 2_000 } else { 300_000 });
    let n_paced = args.get(1).copied().unwrap_or(if smoke { 200 } else { 30_000 });
    let rate = args.get(2).copied().unwrap_or(10_000);
    let rounds = args.get(3).copied().unwrap_or(if smoke { 1 } else { 3 });
    eprintln!("backlog: {n_saturated} calls back to back, {n_paced} at {rate}/s, {rounds} rounds, ended by shutdown");
    let latency = std::env::var("BACKLOG_INGEST_LATENCY_US").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    eprintln!("backlog: the ingest answers each POST after {latency} us");
    let mut ingest = ChildIngest::start_with_latency(Duration::from_micros(latency));
    // Warm-up: code, allocator.
    run(n_saturated / 10, None, None);
    mode("saturated", &mut ingest, n_saturated, None, rounds);
    let gap = Duration::from_nanos(1_000_000_000 / rate as u64);
    mode("paced", &mut ingest, n_paced, Some(gap), rounds);
}
