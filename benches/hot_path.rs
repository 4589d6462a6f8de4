//! The cost `Tracker::record` adds to a tool call, on the calling thread: against building the
//! same record without recording it, with a healthy ingest and with the ingest down.

use criterion::{criterion_group, criterion_main, Criterion};
use mcpeye::testing::IngestReceiver;
use mcpeye::{CallOutcome, CallRecord, Config, Tracker};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Duration;

/// About 200 bytes of arguments once serialised.
fn arguments() -> Value {
    json!({
        "query": "orders shipped to the Lyon warehouse last week",
        "customer": {"id": 48213, "tier": "gold", "region": "eu-west"},
        "filters": ["shipped", "delayed", "partial"],
        "limit": 25,
        "include_archived": false
    })
}

fn record(template: &Value) -> CallRecord {
    // An error without a message: like the record this benchmark always measured, it carries no result.
    let mut record =
        CallRecord::new("search_orders", template.clone(), CallOutcome::Error { message: None, reason: None });
    record.intent =
        Some(("Finding the delayed orders the user asked about.".to_string(), mcpeye::IntentSource::Mcpeye));
    record.duration = Duration::from_micros(850);
    record
}

fn report(label: &str, tracker: &Tracker) {
    let s = tracker.shutdown(Duration::from_secs(2)).stats;
    eprintln!("{label}: captured {} sent {} dropped {:?} pending {}", s.captured, s.sent, s.dropped, s.pending);
}

fn hot_path(c: &mut Criterion) {
    let template = arguments();
    assert!((150..=260).contains(&serde_json::to_vec(&template).unwrap().len()));
    let mut group = c.benchmark_group("record");

    group.bench_function("baseline_build_only", |b| b.iter(|| black_box(record(&template))));

    let ingest = IngestReceiver::start();
    let healthy = Tracker::new(Config::new("bench").ingest_url(ingest.url())).unwrap();
    group.bench_function("healthy_ingest", |b| b.iter(|| healthy.record(black_box(record(&template)))));
    report("healthy_ingest", &healthy);

    // A port that was just free: connections are refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = Tracker::new(Config::new("bench").ingest_url(format!("http://127.0.0.1:{port}"))).unwrap();
    group.bench_function("ingest_down", |b| b.iter(|| down.record(black_box(record(&template)))));
    report("ingest_down", &down);

    group.finish();
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
