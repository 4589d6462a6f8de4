//! Peak memory while calls are made with the ingest down: the process's peak RSS (`VmHWM`) after
//! 100 000 and after 1 000 000 instrumented calls, for two `max_buffer` settings. Bounded memory
//! means the peak stops growing with the number of calls and scales with `max_buffer`.
//!
//! `cargo bench --bench memory [-- CALLS]` (Linux: reads /proc/self/status).

mod common;

use common::{arguments_with_intent, instrumented_call, manifest, result, Ingest};
use std::time::Duration;

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let calls: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(if common::full_run() {
        1_000_000
    } else {
        10_000
    });
    let args = arguments_with_intent();
    let start_kib = status_kib("VmHWM:");
    eprintln!("peak RSS at start {:.1} MiB", mib(start_kib));
    result("memory.start_mib", format!("{:.1}", mib(start_kib)));
    // The smaller buffer first: VmHWM only ever grows.
    for max_buffer in [1_000usize, 10_000] {
        let ingest = Ingest::start("down");
        let tracker = ingest.tracker_with(|c| c.max_buffer(max_buffer));
        let m = manifest(Some(tracker.clone()));
        let mut marks = Vec::new();
        for i in 1..=calls {
            std::hint::black_box(instrumented_call(&m, args.clone()));
            if i == calls / 10 || i == calls {
                // Let the flusher drain what the channel holds before reading the peak.
                std::thread::sleep(Duration::from_millis(300));
                marks.push((i, status_kib("VmHWM:")));
            }
        }
        let s = tracker.shutdown(Duration::from_millis(200)).stats;
        for (i, hwm) in &marks {
            eprintln!(
                "max_buffer {max_buffer:>6}: peak RSS after {i:>8} calls {:.1} MiB (+{:.1} MiB over the start)",
                mib(*hwm),
                mib(hwm - start_kib)
            );
            result(&format!("memory.max_buffer_{max_buffer}.after_{i}.peak_mib"), format!("{:.1}", mib(*hwm)));
        }
        eprintln!("  captured {} dropped {:?}", s.captured, s.dropped);
    }
}
