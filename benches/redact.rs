//! Redaction throughput (MB/s of input) on the peer-bench corpus and on adversarial inputs.
//!
//! Baselines in the same run: `copy` (`str::to_owned` / `Value::clone` of the same input, the
//! floor any redaction that returns an owned value pays) and `unfiltered` (all nine patterns
//! always, i.e. no prefilter).
//!
//! ```text
//! cargo bench --bench redact -- --warm-up-time 1 --measurement-time 3
//! ```

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use mcpeye::redact::{redact_string, redact_value, Redactor};
use mcpeye::testing::redact::redact_string_unfiltered;
use serde_json::Value;
use std::hint::black_box;

#[path = "common/corpus.rs"]
mod corpus;

fn corpora() -> [(&'static str, Value); 2] {
    [
        ("clean", corpus::build_corpus(corpus::TARGET_BYTES, 0.0)),
        ("mixed_1pct", corpus::build_corpus(corpus::TARGET_BYTES, 0.01)),
    ]
}

/// `redact_string` over bench_redact.py's ~950 KB text (all titles and bodies joined).
fn string_corpus(c: &mut Criterion) {
    let mut g = c.benchmark_group("redact_string_corpus");
    for (name, value) in corpora() {
        let text = corpus::corpus_text(&value);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("copy", name), &text, |b, t| b.iter(|| black_box(t.as_str()).to_owned()));
        g.bench_with_input(BenchmarkId::new("redact_string", name), &text, |b, t| {
            b.iter(|| redact_string(black_box(t)).len())
        });
        g.bench_with_input(BenchmarkId::new("unfiltered", name), &text, |b, t| {
            b.iter(|| redact_string_unfiltered(black_box(t)).len())
        });
    }
    g.finish();
}

/// `redact_value` over the ~1 MB corpus value (MB/s of its compact JSON, as bench_redact.py
/// counts), and the flusher's path: `Redactor::value` (cap + in-place redaction) over ~30 KB
/// fields.
fn value_corpus(c: &mut Criterion) {
    let mut g = c.benchmark_group("redact_value_corpus");
    g.sample_size(20);
    for (name, value) in corpora() {
        g.throughput(Throughput::Bytes(corpus::compact_len(&value) as u64));
        g.bench_with_input(BenchmarkId::new("copy", name), &value, |b, v| b.iter(|| black_box(v).clone()));
        g.bench_with_input(BenchmarkId::new("redact_value", name), &value, |b, v| {
            b.iter(|| redact_value(black_box(v), &[]))
        });

        let fields = corpus::corpus_fields(&value);
        let bytes: usize = fields.iter().map(corpus::compact_len).sum();
        g.throughput(Throughput::Bytes(bytes as u64));
        let redactor = Redactor::default();
        g.bench_with_input(BenchmarkId::new("redactor_value_30KB_fields", name), &fields, |b, f| {
            b.iter_batched(
                || f.clone(),
                |f| f.into_iter().map(|v| redactor.value(v)).collect::<Vec<_>>(),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// About 64 KiB made of `unit` repeated.
fn repeat_to(unit: &str) -> String {
    unit.repeat((64 * 1024) / unit.len() + 1)
}

/// Input shapes that defeat the prefilter or stress a pattern.
fn adversarial_inputs() -> Vec<(&'static str, String)> {
    let prose = "Привет мир, это отчёт о погоде. 用户想导出报告但没有导出工具。 naïve café 🔑 résumé ";
    let mut with_secrets = String::new();
    while with_secrets.len() < 64 * 1024 {
        with_secrets.push_str(&prose.repeat(10));
        with_secrets.push_str("контакт: ivan@mail.ru ");
    }
    vec![
        ("non_ascii_clean", repeat_to(prose)),
        ("non_ascii_1_email_per_KB", with_secrets),
        ("digit_run", repeat_to("1234567890")),
        ("card_like_chain", repeat_to("4111 ")),
        ("phone_like_list", repeat_to("415-555-0123, ")),
        ("ipv4_list", repeat_to("10.0.0.1 ")),
        ("many_at", repeat_to("a@")),
        ("at_without_tld", repeat_to("x@y.")),
        ("dash_underscore", repeat_to("a-b_c-")),
        ("sk_dash_chain", repeat_to("sk-_-")),
        ("bearer_spam", repeat_to("bearer ")),
        ("eyJ_spam", repeat_to("eyJ.")),
    ]
}

fn adversarial(c: &mut Criterion) {
    let mut g = c.benchmark_group("redact_string_adversarial");
    for (name, input) in adversarial_inputs() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::new("redact_string", name), &input, |b, t| {
            b.iter(|| redact_string(black_box(t)).len())
        });
        g.bench_with_input(BenchmarkId::new("unfiltered", name), &input, |b, t| {
            b.iter(|| redact_string_unfiltered(black_box(t)).len())
        });
    }
    g.finish();
}

criterion_group!(benches, string_corpus, value_corpus, adversarial);
criterion_main!(benches);
