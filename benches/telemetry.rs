//! The added cost per call of the `opentelemetry` and `tracing` features, in one run: the same
//! `Manifest::call` of a tool without parameters (so that the call itself costs little and the
//! hooks' cost shows; recorded into a tracker that discards records) with
//!
//! - `hooks_off`: the telemetry hooks compiled in but switched off (the baseline);
//! - `otel_noop`: the `opentelemetry` feature with the API's default no-op providers and no
//!   `tracing` subscriber (a host that enables the feature and installs nothing);
//! - `otel_noop_traceparent`: the same, the request carrying a `traceparent` in `_meta`;
//! - `tracing_registry`: a `tracing-subscriber` registry installed (spans are made);
//! - `otel_sdk`: the OpenTelemetry SDK installed: a batch span processor with an exporter that
//!   discards, and a meter provider with a periodic reader (60 s) into memory (spans and histogram points recorded).
//!
//! `cargo bench --bench telemetry` (add `-- --quick` on a loaded machine).

/// Tell the time.
#[mcpeye::tool]
fn ping() -> &'static str {
    "pong"
}

use criterion::{criterion_group, criterion_main, Criterion};
use mcpeye::{Manifest, Origin, TraceContext, Tracker};
use serde_json::Value;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
        Ok(())
    }
}

fn telemetry(c: &mut Criterion) {
    let m = Manifest::builder().tools(mcpeye::tool_defs![ping]).tracker(Tracker::from_fn(drop)).build();
    let call = |origin: &Origin| m.call_from(origin, "ping", Value::Null);
    let plain = Origin::default();
    let mut traced = Origin::default();
    traced.trace_context = Some(TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    let mut group = c.benchmark_group("telemetry");

    mcpeye::__private_0_1_0::set_telemetry_enabled(false);
    group.bench_function("hooks_off", |b| {
        b.iter(|| call(&plain))
    });
    mcpeye::__private_0_1_0::set_telemetry_enabled(true);
    mcpeye::__private_0_1_0::reset_telemetry();
    group.bench_function("otel_noop", |b| {
        b.iter(|| call(&plain))
    });
    group.bench_function("otel_noop_traceparent", |b| {
        b.iter(|| call(&traced))
    });
    let subscriber = tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
    tracing::subscriber::with_default(subscriber, || {
        group.bench_function("tracing_registry", |b| {
            b.iter(|| call(&plain))
        });
    });

    let tracer_provider = SdkTracerProvider::builder().with_batch_exporter(Discard).build();
    let meter_provider = SdkMeterProvider::builder().with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build()).build();
    opentelemetry::global::set_tracer_provider(tracer_provider.clone());
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    mcpeye::__private_0_1_0::reset_telemetry();
    group.bench_function("otel_sdk", |b| {
        b.iter(|| call(&plain))
    });
    group.finish();
    let _ = tracer_provider.shutdown();
    let _ = meter_provider.shutdown();
}

criterion_group!(benches, telemetry);
criterion_main!(benches);
