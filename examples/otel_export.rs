//! The stdio example's tools and environment, with OpenTelemetry: every `tools/call` is a SERVER
//! span (a child of the `traceparent` the client put in the request's `_meta`) and a point of the
//! `mcp.server.operation.duration` histogram, exported as OTLP/HTTP protobuf to the Collector at
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`; traces to `/v1/traces`,
//! metrics to `/v1/metrics`).
//!
//! ```text
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 MCPEYE_PROJECT_ID=demo \
//!     MCPEYE_INGEST_URL=http://127.0.0.1:3001 cargo run -p mcpeye-servers --example otel_export
//! ```
//!
//! mcpeye needs no code for this: the `opentelemetry` feature makes the spans through the
//! global providers that `main` installs. When stdin closes (or on SIGTERM/SIGINT) the server
//! stops, then the providers are shut down, which exports every span and the last metrics, and
//! the `mcpeye::Guard` delivers the analytics events. Stdout carries only JSON-RPC.

#[path = "common/demo_tools.rs"]
mod demo_tools;
#[path = "common/signal.rs"]
mod signal;

use mcpeye::rmcp::ManifestServer;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use rmcp::ServiceExt;
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    // The providers first: mcpeye takes its tracer and histogram at the first call.
    let (tracer_provider, meter_provider) = match otel_providers() {
        Ok(providers) => providers,
        Err(e) => {
            eprintln!("[otel_export] OpenTelemetry could not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let guard = demo_tools::init_analytics("otel_export", "otel-demo");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let served = runtime.block_on(serve());
    runtime.shutdown_background();
    // Export what is left: every span, then the metrics' last collection.
    if let Err(e) = tracer_provider.shutdown() {
        eprintln!("[otel_export] spans: {e}");
    }
    if let Err(e) = meter_provider.shutdown() {
        eprintln!("[otel_export] metrics: {e}");
    }
    // The analytics events, and what became of them (stderr).
    demo_tools::shut_down("otel_export", guard);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[otel_export] {e}");
            ExitCode::FAILURE
        }
    }
}

/// OTLP/HTTP protobuf exporters for spans and metrics, installed as the global providers, with
/// the W3C Trace Context and Baggage propagators (mcpeye reads them from the request's `_meta`).
fn otel_providers() -> Result<(SdkTracerProvider, SdkMeterProvider), Box<dyn std::error::Error>> {
    let resource = Resource::builder().with_service_name("mcpeye-otel-demo").build();
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(ureq_client::UreqClient::new())
        .build()?;
    let tracer_provider =
        SdkTracerProvider::builder().with_resource(resource.clone()).with_batch_exporter(spans).build();
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(ureq_client::UreqClient::new())
        .build()?;
    let meter_provider = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(metrics).build())
        .build();
    opentelemetry::global::set_tracer_provider(tracer_provider.clone());
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));
    Ok((tracer_provider, meter_provider))
}

/// Serves until the client closes stdin or a SIGTERM/SIGINT arrives.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let server = ManifestServer::new(Arc::new(demo_tools::manifest()))
        .with_server_info("mcpeye-otel-demo", env!("CARGO_PKG_VERSION"));
    let running = server.serve(rmcp::transport::stdio()).await?;
    let stop = running.cancellation_token();
    let terminated = signal::termination();
    tokio::spawn(async move {
        terminated.await;
        stop.cancel();
    });
    running.waiting().await?;
    Ok(())
}

/// The OTLP exporter's HTTP client: blocking ureq (already mcpeye's HTTP client), which is fine
/// on the SDK's own export threads. opentelemetry-otlp's default client is reqwest.
mod ureq_client {
    use bytes::Bytes;
    use opentelemetry_http::{HttpClient, HttpError, Request, Response};
    use std::future::Future;
    use std::pin::Pin;
    use std::time::Duration;

    #[derive(Debug)]
    pub struct UreqClient(ureq::Agent);

    impl UreqClient {
        pub fn new() -> Self {
            let config = ureq::Agent::config_builder()
                .timeout_connect(Some(Duration::from_secs(5)))
                .timeout_global(Some(Duration::from_secs(10)))
                .http_status_as_error(false)
                .build();
            UreqClient(config.into())
        }

        fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
            let (parts, body) = request.into_parts();
            let response = self.0.run(http::Request::from_parts(parts, body.to_vec()))?;
            let (parts, mut body) = response.into_parts();
            let bytes = body.read_to_vec()?;
            Ok(Response::from_parts(parts, Bytes::from(bytes)))
        }
    }

    // `HttpClient` is an `async_trait`; this is its expansion, for one blocking call.
    impl HttpClient for UreqClient {
        fn send_bytes<'a, 'b>(
            &'a self,
            request: Request<Bytes>,
        ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
        where
            'a: 'b,
            Self: 'b,
        {
            Box::pin(std::future::ready(self.send(request)))
        }
    }
}
