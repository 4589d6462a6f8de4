//! Redaction throughput in MB/s of *CPU time* of the measuring thread, comparable with the
//! `*_cpu_median` figures of the Python peer's `bench_redact.py` (wall time is unreliable on a
//! shared machine). Linux only: the thread's CPU time comes from `/proc/thread-self/schedstat`.
//!
//! ```text
//! cargo bench --bench redact_cpu
//! MCPEYE_FP_DIR=some/clean/texts cargo bench --bench redact_cpu   # the layer's false positives
//! MCPEYE_BENCH_ONLY="clean: Redactor" cargo bench --bench redact_cpu   # the lines containing it
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
    if std::env::var("MCPEYE_BENCH_ONLY").is_ok_and(|only| !name.contains(&only)) {
        return;
    }
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

/// The credential layer's false positives on the text files under `dir` (each cut into pieces of
/// up to 30 KiB at line ends, as tool results): the pieces where the layer replaced something the
/// siblings' rules leave, by marker, with a few examples on stderr.
fn false_positives(dir: &str) {
    fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(&path, files),
                Ok(t) if t.is_file() => files.push(path),
                _ => {}
            }
        }
    }
    let mut files = Vec::new();
    walk(std::path::Path::new(dir), &mut files);
    files.sort();
    let layered = Redactor::default().credentials(true);
    let (mut pieces, mut bytes, mut changed) = (0usize, 0usize, 0usize);
    let mut by_marker = std::collections::BTreeMap::<String, usize>::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut cut = rest.len().min(30 * 1024);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            if cut < rest.len() {
                cut = rest[..cut].rfind('\n').map_or(cut, |i| i + 1);
            }
            let (piece, next) = rest.split_at(cut);
            rest = next;
            pieces += 1;
            bytes += piece.len();
            let (with, without) = (layered.text(piece.to_owned()), redact_string(piece));
            if with != without {
                changed += 1;
                let count = |s: &str, m: &str| s.matches(m).count();
                for m in [
                    "[REDACTED_FIELD]",
                    "[REDACTED_URL_CREDENTIAL]",
                    "[REDACTED_KEY]",
                    "[REDACTED_TOKEN]",
                    "[REDACTED_BINARY]",
                    "[REDACTED_PRIVATE_KEY]",
                ] {
                    let n = count(&with, m).saturating_sub(count(&without, m));
                    if n > 0 {
                        *by_marker.entry(m.to_owned()).or_default() += n;
                        if by_marker[m] <= 5 {
                            let at = with.find(m).unwrap_or(0);
                            let from = with[..at].char_indices().rev().nth(60).map_or(0, |(i, _)| i);
                            let to = (at + m.len() + 40).min(with.len());
                            let to = (to..=with.len()).find(|&i| with.is_char_boundary(i)).unwrap_or(with.len());
                            eprintln!("{}: …{}…", path.display(), with[from..to].replace('\n', "⏎"));
                        }
                    }
                }
            }
        }
    }
    println!("false positives under {dir}: {changed} of {pieces} pieces ({bytes} bytes) changed by the layer; added markers {by_marker:?}");
}

fn main() {
    if let Ok(dir) = std::env::var("MCPEYE_FP_DIR") {
        false_positives(&dir);
        return;
    }
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
