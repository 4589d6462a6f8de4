//! `examples/otel_export` exports OTLP/HTTP protobuf to the Collector at
//! `OTEL_EXPORTER_OTLP_ENDPOINT`: here a loopback receiver, whose requests are decoded with the
//! official OTLP protobuf definitions (`opentelemetry-proto`). A client calls a tool with a
//! `traceparent` in `_meta`, then closes stdin; by the time the server has exited, the receiver
//! holds the SERVER span (in the client's trace, with the conventions' attributes) and the
//! `mcp.server.operation.duration` histogram.

mod common;

use common::interop::example;
use mcpeye::testing::IngestReceiver;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";

fn string_attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        _ => None,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_example_exports_the_span_and_the_histogram_as_otlp() {
    let collector = IngestReceiver::start();
    let ingest = IngestReceiver::start();
    let mut child = Command::new(example("otel_export"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url())
        .env("MCPEYE_PROJECT_ID", "otel-test")
        .env("MCPEYE_INGEST_URL", ingest.url())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line:?}"))
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "otel-test", "version": "1.0"}}}));
    assert_eq!(read()["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get_forecast", "arguments": {"city": "Lisbon", "days": 2},
        "_meta": {"traceparent": format!("00-{TRACE_ID}-{PARENT_SPAN_ID}-01")}}}));
    let answer = read();
    assert_eq!(answer["id"], 2);
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().starts_with("Forecast for Lisbon"));
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_forecast", "arguments": {"city": "Lisbon", "days": 9}}}));
    assert_eq!(read()["result"]["isError"], true);
    drop(stdin); // the client leaves

    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the example did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");

    let requests = collector.requests();
    let traces: Vec<ExportTraceServiceRequest> = requests
        .iter()
        .filter(|r| r.path == "/v1/traces")
        .map(|r| {
            assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
            ExportTraceServiceRequest::decode(r.body.as_slice()).expect("an OTLP trace request")
        })
        .collect();
    let spans: Vec<_> = traces
        .iter()
        .flat_map(|t| &t.resource_spans)
        .flat_map(|rs| &rs.scope_spans)
        .filter(|ss| ss.scope.as_ref().is_some_and(|s| s.name == "mcpeye"))
        .flat_map(|ss| &ss.spans)
        .collect();
    assert_eq!(spans.len(), 2, "{stderr}");
    let span = spans.iter().find(|s| hex(&s.trace_id) == TRACE_ID).expect("the span in the client's trace");
    assert_eq!(span.name, "tools/call get_forecast");
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(hex(&span.parent_span_id), PARENT_SPAN_ID);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "get_forecast"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "2"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
    ] {
        assert_eq!(string_attr(&span.attributes, key).as_deref(), Some(value), "{key}");
    }
    assert!(string_attr(&span.attributes, "mcp.session.id").is_some());
    let failed = spans.iter().find(|s| hex(&s.trace_id) != TRACE_ID).unwrap();
    assert_eq!(string_attr(&failed.attributes, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(failed.status.as_ref().map(|s| s.code), Some(StatusCode::Error as i32));

    let metrics: Vec<ExportMetricsServiceRequest> = requests
        .iter()
        .filter(|r| r.path == "/v1/metrics")
        .map(|r| ExportMetricsServiceRequest::decode(r.body.as_slice()).expect("an OTLP metrics request"))
        .collect();
    let histogram = metrics
        .iter()
        .flat_map(|m| &m.resource_metrics)
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|sm| &sm.metrics)
        .find(|m| m.name == "mcp.server.operation.duration")
        .expect("the duration histogram");
    assert_eq!(histogram.unit, "s");
    let Some(metric::Data::Histogram(h)) = &histogram.data else { panic!("a histogram") };
    let count: u64 = h.data_points.iter().map(|p| p.count).sum();
    assert_eq!(count, 2);
    assert!(h.data_points.iter().all(|p| p.explicit_bounds.len() == 14 && p.explicit_bounds[13] == 300.0));
    let errors: Vec<String> = h.data_points.iter().filter_map(|p| string_attr(&p.attributes, "error.type")).collect();
    assert_eq!(errors, ["tool_error"]);

    // The analytics events were delivered too.
    assert_eq!(ingest.wait_for_events(2, Duration::from_secs(10)).len(), 2);
}
