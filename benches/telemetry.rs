//! The added cost per call of the `opentelemetry` and `tracing` features, in one run: the same
//! `Manifest::call` of a tool without parameters (so that the call itself costs little and the
//! hooks' cost shows), recorded into a tracker that discards records, with
//!
//! - `hooks_off`: the telemetry hooks compiled in but switched off (the baseline);
//! - `otel_noop`: the `opentelemetry` feature with the API's no-op providers and no `tracing`
//!   subscriber (a host that enables the feature and installs nothing);
//! - `otel_noop_traceparent`: the same, the request carrying a `traceparent` in `_meta`;
//! - `tracing_registry`: a `tracing-subscriber` registry installed (spans are made);
//! - `otel_sdk`: the OpenTelemetry SDK installed: a batch span processor with an exporter that
//!   discards, and a meter provider with a periodic reader (60 s) into memory.
//!
//! The variants are measured interleaved, in rounds of 20 000 calls each, as time on the CPU of
//! the calling thread (Linux schedstat; wall time elsewhere), and the table gives, per variant,
//! the median and the best round (ns per call): on a shared machine, other processes still
//! disturb caches, and interleaving spreads that over every variant alike.
//! `cargo bench --bench telemetry` (`MCPEYE_BENCH_ROUNDS`, default 40).

use mcpeye::__private_0_1_0::{reset_telemetry, set_telemetry_enabled};
use mcpeye::{Manifest, Origin, TraceContext, Tracker};
use opentelemetry::global;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::Value;
use std::hint::black_box;
use std::time::Instant;
use tracing_subscriber::layer::SubscriberExt;

/// Tell the time.
#[mcpeye::tool]
fn ping() -> &'static str {
    "pong"
}

#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
        Ok(())
    }
}

const CALLS_PER_ROUND: u32 = 20_000;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    HooksOff,
    OtelNoop,
    OtelNoopTraceparent,
    TracingRegistry,
    OtelSdk,
}

const VARIANTS: [(Variant, &str); 5] = [
    (Variant::HooksOff, "hooks_off"),
    (Variant::OtelNoop, "otel_noop"),
    (Variant::OtelNoopTraceparent, "otel_noop_traceparent"),
    (Variant::TracingRegistry, "tracing_registry"),
    (Variant::OtelSdk, "otel_sdk"),
];

/// Nanoseconds this thread has spent on a CPU (Linux `/proc/thread-self/schedstat`).
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn main() {
    let rounds: usize = std::env::var("MCPEYE_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(40);
    let m = Manifest::builder().tools(mcpeye::tool_defs![ping]).tracker(Tracker::from_fn(drop)).build();
    let plain = Origin::default();
    let mut traced = Origin::default();
    traced.trace_context =
        Some(TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    let sdk_tracer = SdkTracerProvider::builder().with_batch_exporter(Discard).build();
    let sdk_meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();

    let run = |origin: &Origin| {
        let (started, on_cpu) = (Instant::now(), cpu_ns());
        for _ in 0..CALLS_PER_ROUND {
            black_box(m.call_from(origin, "ping", Value::Null));
        }
        // Time on the CPU when the kernel reports it: other processes' slices are not counted.
        let ns = match (on_cpu, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64,
            _ => started.elapsed().as_nanos() as f64,
        };
        ns / f64::from(CALLS_PER_ROUND)
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    for round in 0..=rounds {
        for (i, (variant, _)) in VARIANTS.iter().enumerate() {
            set_telemetry_enabled(*variant != Variant::HooksOff);
            if *variant == Variant::OtelSdk {
                global::set_tracer_provider(sdk_tracer.clone());
                global::set_meter_provider(sdk_meter.clone());
            } else {
                global::set_tracer_provider(opentelemetry::trace::noop::NoopTracerProvider::new());
                global::set_meter_provider(opentelemetry::metrics::noop::NoopMeterProvider::new());
            }
            reset_telemetry();
            let ns = match variant {
                Variant::OtelNoopTraceparent => run(&traced),
                Variant::TracingRegistry => {
                    let subscriber = tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
                    tracing::subscriber::with_default(subscriber, || run(&plain))
                }
                _ => run(&plain),
            };
            if round > 0 {
                samples[i].push(ns); // round 0 warms up
            }
        }
    }
    let _ = sdk_tracer.shutdown();
    let _ = sdk_meter.shutdown();

    let stats = |s: &mut Vec<f64>| {
        s.sort_by(f64::total_cmp);
        (s[s.len() / 2], s[0])
    };
    let (base_median, base_best) = stats(&mut samples[0].clone());
    println!("{rounds} rounds of {CALLS_PER_ROUND} calls per variant, interleaved; ns per call");
    println!("{:<24} {:>8} {:>8} {:>14} {:>12}", "variant", "median", "best", "added(median)", "added(best)");
    for (i, (_, name)) in VARIANTS.iter().enumerate() {
        let (median, best) = stats(&mut samples[i]);
        println!("{name:<24} {median:>8.0} {best:>8.0} {:>14.0} {:>12.0}", median - base_median, best - base_best);
    }
}
