// How far one call goes: N calls of the bench tool through one way in, for
// `scripts/call_path.sh`, which runs this in a debug build under callgrind and counts the
// functions of mcpeye's crates that run at least once per call.
//
// `call_path WAY N`, WAY one of
// - `call`: `Manifest::call`;
// - `manifest_server`: a manifest served by `ManifestServer`, through rmcp's client;
// - `instrument`: an rmcp `#[tool_router]` instrumented with `mcpeye::rmcp::Instrument` and the bench's tracker,
//   through rmcp's client.
// Each records into a tracker delivering to a loopback ingest in this process
// (`common::FastIngest`: the bench's code, not mcpeye's), flushed before the end, so that the
// flusher's work per event is counted too. Without arguments (`cargo test --benches`) each way
// makes two calls.

mod common;

use common::{arguments_with_intent, manifest, FastIngest, InvoiceQuery};
use mcpeye::rmcp::ManifestServer;
use mcpeye::{Config, Tracker};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The bench tool as an rmcp author writes it.
#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Plain {
    /// Search invoices (a handler that does next to nothing).
    #[tool(description = "Search invoices.")]
    fn search_invoices(&self, Parameters(q): Parameters<InvoiceQuery>) -> String {
        std::hint::black_box(&q);
        "3 invoices found".to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

/// `n` calls through `way`, recorded by `tracker`.
fn calls(way: &str, n: usize, tracker: &Tracker) {
    if way == "call" {
        let m = manifest(Some(tracker.clone()));
        for _ in 0..n {
            std::hint::black_box(m.call("search_invoices", arguments_with_intent()));
        }
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        match way {
            "manifest_server" => serve(ManifestServer::new(Arc::new(manifest(Some(tracker.clone())))), server_io),
            "instrument" => serve(
                Plain {
                    tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Plain::tool_router()),
                },
                server_io,
            ),
            other => panic!("unknown way in {other:?}: call, manifest_server or instrument"),
        }
        let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("call-path", "1.0.0"));
        let client = config.serve(client_io).await.expect("the client connects");
        let Value::Object(arguments) = arguments_with_intent() else { unreachable!() };
        let request = CallToolRequestParams::new("search_invoices").with_arguments(arguments);
        for _ in 0..n {
            let out = client.call_tool(request.clone()).await.expect("the call is answered");
            assert_ne!(out.is_error, Some(true));
        }
        let _ = client.cancel().await;
    });
}

fn serve<S: ServerHandler>(server: S, io: tokio::io::DuplexStream) {
    tokio::spawn(async move {
        if let Ok(running) = server.serve(io).await {
            let _ = running.waiting().await;
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let runs: Vec<(String, usize)> = match &args[..] {
        [way, n] => vec![(way.clone(), n.parse().expect("N, a number of calls"))],
        _ => ["call", "manifest_server", "instrument"].iter().map(|w| (w.to_string(), 2)).collect(),
    };
    let ingest = FastIngest::start();
    for (way, n) in runs {
        let config = Config::new("call-path").ingest_url(ingest.url()).max_buffer(n + 1_000).on_error(|_| {});
        let tracker = Tracker::new(config).expect("a tracker");
        calls(&way, n, &tracker);
        let stats = tracker.shutdown(Duration::from_secs(30)).stats;
        assert_eq!((stats.captured, stats.sent), (n as u64, n as u64), "{way}: every call recorded and delivered");
    }
}
