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
//! The variants run in two phases (see [`PHASES`]): the no-op ones first, in a process that has
//! never seen a `tracing` subscriber or the SDK, then `otel_noop` again next to the two that
//! install something. Within a phase the variants are measured interleaved, in rounds of 20 000 calls each, as time on the CPU of
//! the calling thread (`CLOCK_THREAD_CPUTIME_ID`; schedstat, read before, only moves at the
//! scheduler's ticks and rounded each round to 200 ns per call), and the table gives, per variant,
//! the median and the best round (ns per call): on a shared machine, other processes still
//! disturb caches, and interleaving spreads that over every variant alike.
//! `cargo bench --bench telemetry` (`MCPEYE_BENCH_ROUNDS`, default 40;
//! `MCPEYE_BENCH_VARIANTS=hooks_off,otel_noop` runs only those, e.g. under callgrind).

mod common;

use mcpeye::__private_0_1_0::{reset_telemetry, set_telemetry_enabled};
use mcpeye::{Manifest, Origin, TraceContext, Tracker};
use opentelemetry::global;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::Value;
use std::hint::black_box;
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

/// Two phases, each interleaved and each with its own baseline. The first is a host that has
/// never installed anything: once a `tracing` subscriber has been used in a process, every
/// `tracing` span site in it (mcpeye's included) checks for a scoped dispatcher at each call,
/// which would be charged to the no-op variants if they ran after it.
const PHASES: [&[(Variant, &str)]; 2] = [
    &[
        (Variant::HooksOff, "hooks_off"),
        (Variant::OtelNoop, "otel_noop"),
        (Variant::OtelNoopTraceparent, "otel_noop_traceparent"),
    ],
    &[
        (Variant::HooksOff, "hooks_off"),
        (Variant::OtelNoop, "otel_noop"),
        (Variant::TracingRegistry, "tracing_registry"),
        (Variant::OtelSdk, "otel_sdk"),
    ],
];

fn main() {
    let rounds: usize = std::env::var("MCPEYE_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(40);
    // A subset of the variants, for profiling one at a time (e.g. under callgrind).
    let only = std::env::var("MCPEYE_BENCH_VARIANTS").ok();
    let wanted = |name: &str| only.as_ref().is_none_or(|only| only.split(',').any(|o| o == name));
    let m = Manifest::builder().tools(mcpeye::tool_defs![ping]).tracker(Tracker::from_fn(drop)).build();
    let plain = Origin::default();
    let traced = Origin::default()
        .with_trace_context(TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    // Made when the second phase starts, so that their threads do not exist during the first.
    let mut sdk: Option<(SdkTracerProvider, SdkMeterProvider)> = None;

    let run = |origin: &Origin| {
        let on_cpu = common::thread_cpu_ns();
        for _ in 0..CALLS_PER_ROUND {
            black_box(m.call_from(origin, "ping", Value::Null));
        }
        // Time on the CPU: other processes' slices are not counted.
        (common::thread_cpu_ns() - on_cpu) as f64 / f64::from(CALLS_PER_ROUND)
    };
    println!("{rounds} rounds of {CALLS_PER_ROUND} calls per variant, interleaved; ns per call");
    for (phase, variants) in PHASES.iter().enumerate() {
        let variants: Vec<_> = variants.iter().filter(|(_, name)| wanted(name)).collect();
        if variants.is_empty() {
            continue;
        }
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for round in 0..=rounds {
            for (i, (variant, _)) in variants.iter().enumerate() {
                set_telemetry_enabled(*variant != Variant::HooksOff);
                if *variant == Variant::OtelSdk {
                    let (tracer, meter) = sdk.get_or_insert_with(|| {
                        let meter = SdkMeterProvider::builder()
                            .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
                            .build();
                        (SdkTracerProvider::builder().with_batch_exporter(Discard).build(), meter)
                    });
                    global::set_tracer_provider(tracer.clone());
                    global::set_meter_provider(meter.clone());
                } else {
                    global::set_tracer_provider(opentelemetry::trace::noop::NoopTracerProvider::new());
                    global::set_meter_provider(opentelemetry::metrics::noop::NoopMeterProvider::new());
                }
                reset_telemetry();
                let ns = match variant {
                    Variant::OtelNoopTraceparent => run(&traced),
                    Variant::TracingRegistry => {
                        let subscriber =
                            tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
                        tracing::subscriber::with_default(subscriber, || run(&plain))
                    }
                    _ => run(&plain),
                };
                if round > 0 {
                    samples[i].push(ns); // round 0 warms up
                }
            }
        }
        let stats = |s: &[f64]| {
            let mut s = s.to_vec();
            s.sort_by(f64::total_cmp);
            (s[s.len() / 2], s[0])
        };
        let base = variants.iter().position(|(v, _)| *v == Variant::HooksOff).map(|i| stats(&samples[i]));
        let (base_median, base_best) = base.unwrap_or((0.0, 0.0));
        println!("phase {}", phase + 1);
        println!("{:<24} {:>8} {:>8} {:>14} {:>12}", "variant", "median", "best", "added(median)", "added(best)");
        for (i, (_, name)) in variants.iter().enumerate() {
            let (median, best) = stats(&samples[i]);
            println!("{name:<24} {median:>8.0} {best:>8.0} {:>14.0} {:>12.0}", median - base_median, best - base_best);
        }
    }
    if let Some((tracer, meter)) = sdk {
        let _ = tracer.shutdown();
        let _ = meter.shutdown();
    }
}
