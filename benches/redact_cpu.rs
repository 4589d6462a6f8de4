//! Redaction throughput in MB/s of *CPU time* of the measuring thread, comparable with the
//! `*_cpu_median` figures of the Python peer's `bench_redact.py` (wall time is unreliable on a
//! shared machine). Linux only: the thread's CPU time comes from `/proc/thread-self/schedstat`.
//!
//! ```text
//! cargo bench --bench redact_cpu
//! ```

use mcpeye::redact::{redact_string, redact_value, Redactor};
use mcpeye::testing::redact::redact_string_with_credentials;
use std::hint::black_box;

#[path = "common/corpus.rs"]
mod corpus;

/// Nanoseconds this thread has spent on a CPU.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Median over 7 rounds of ~0.3 s of CPU time each, in MB/s (1e6 bytes/s). Without `--bench`
/// (`cargo test --benches`), one short round only, as a smoke test.
fn measure(name: &str, bytes: usize, mut f: impl FnMut() -> usize) {
    black_box(f()); // warm-up
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, round_ns) = if full { (7, 300_000_000) } else { (1, 0) };
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let (Some(t0), mut n, mut sink) = (cpu_ns(), 0u64, 0usize) else { return };
        let mut spent = 0;
        while n == 0 || spent < round_ns {
            sink = sink.wrapping_add(f());
            n += 1;
            spent = cpu_ns().unwrap_or(u64::MAX) - t0;
        }
        black_box(sink);
        rates.push(bytes as f64 * n as f64 / (spent as f64 / 1e9) / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    println!("{name:60} {:9.1} MB/s", rates[rates.len() / 2]);
}

fn main() {
    if cpu_ns().is_none() {
        eprintln!("redact_cpu: /proc/thread-self/schedstat is not readable here; skipped");
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; nothing to list here
    }
    if std::env::args().any(|a| a == "--bench") {
        println!("MB/s of CPU time (median of 7 rounds)");
    } else {
        println!("smoke run (one call each, unoptimised build likely): figures are not measurements");
    }
    for (name, rate) in [("mixed_1pct", 0.01), ("clean", 0.0)] {
        let value = corpus::build_corpus(corpus::TARGET_BYTES, rate);
        let text = corpus::corpus_text(&value);
        let fields = corpus::corpus_fields(&value);
        let field_bytes = fields.iter().map(corpus::compact_len).sum();
        measure(&format!("{name}: redact_value, 1 MB value"), corpus::compact_len(&value), || {
            usize::from(redact_value(&value, &[]).is_object())
        });
        measure(&format!("{name}: redact_string, 1 MB text"), text.len(), || redact_string(&text).len());
        measure(&format!("{name}: redact_string + credential layer, 1 MB text"), text.len(), || {
            redact_string_with_credentials(&text).len()
        });
        // The pipeline's redactor with the credential layer off (the siblings' rules) and on (the default).
        for (layer, redactor) in [("off", Redactor::default()), ("on", Redactor::default().credentials(true))] {
            measure(
                &format!("{name}: Redactor::value, 30 KB fields, layer {layer} (clone included)"),
                field_bytes,
                || fields.iter().map(|f| usize::from(redactor.value(f.clone()).is_array())).sum(),
            );
        }
    }
    let prose = "Привет мир, это отчёт о погоде. 用户想导出报告但没有导出工具。 naïve café 🔑 résumé ";
    for (name, unit) in [
        ("non_ascii_clean", prose),
        ("digit_run", "1234567890"),
        ("card_like_chain", "4111 "),
        ("phone_like_list", "415-555-0123, "),
        ("ipv4_list", "10.0.0.1 "),
        ("many_at", "a@"),
        ("at_without_tld", "x@y."),
        ("dash_underscore", "a-b_c-"),
        ("sk_dash_chain", "sk-_-"),
        ("bearer_spam", "bearer "),
        ("eyJ_spam", "eyJ."),
    ] {
        let input = unit.repeat((64 * 1024) / unit.len() + 1);
        measure(&format!("adversarial {name}: redact_string, 64 KiB"), input.len(), || redact_string(&input).len());
    }
    // Inputs that trip the credential layer's prescan on every block.
    for (name, unit) in [
        ("underscores", "user_id order_id "),
        ("query_strings", "https://x.io/p?a=1&b=2 "),
        ("dashes", "well-known -- "),
        ("long_identifiers", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij "),
    ] {
        let input = unit.repeat((64 * 1024) / unit.len() + 1);
        measure(&format!("adversarial {name}: + credential layer, 64 KiB"), input.len(), || {
            redact_string_with_credentials(&input).len()
        });
    }
}
