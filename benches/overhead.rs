//! Added latency of an instrumented call: `Manifest::call` of a tool with ~200 bytes of
//! arguments and an intent, against deserialising the same arguments, calling the same handler
//! and building the same result directly. The ingest is healthy, down, or stalled.

mod common;

use common::{arguments, arguments_with_intent, baseline_call, instrumented_call, manifest, Ingest};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::time::Duration;

fn overhead(c: &mut Criterion) {
    let plain = arguments();
    let with_intent = arguments_with_intent();
    assert!((150..=260).contains(&serde_json::to_vec(&plain).unwrap().len()));
    let mut group = c.benchmark_group("call");

    // Argument clones are made in the setup, outside the timed region, for every variant.
    group.bench_function("baseline_direct", |b| b.iter_batched(|| plain.clone(), baseline_call, BatchSize::SmallInput));

    let untracked = manifest(None);
    group.bench_function("manifest_no_tracker", |b| {
        b.iter_batched(|| with_intent.clone(), |a| instrumented_call(&untracked, a), BatchSize::SmallInput)
    });

    for kind in ["healthy", "down", "stalled"] {
        let ingest = Ingest::start(kind);
        let tracker = ingest.tracker();
        let m = manifest(Some(tracker.clone()));
        group.bench_function(format!("manifest_{kind}"), |b| {
            b.iter_batched(|| with_intent.clone(), |a| instrumented_call(&m, a), BatchSize::SmallInput)
        });
        let s = tracker.shutdown(Duration::from_millis(500)).stats;
        eprintln!(
            "{kind}: captured {} sent {} dropped {} pending {}",
            s.captured,
            s.sent,
            s.dropped.total(),
            s.pending
        );
    }
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
