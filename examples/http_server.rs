//! The demo tools of `stdio_server`, served by rmcp's Streamable HTTP server at
//! `http://127.0.0.1:PORT/mcp`.
//!
//! ```text
//! MCPEYE_PROJECT_ID=demo MCPEYE_INGEST_URL=http://127.0.0.1:3001 cargo run -p mcpeye-servers --example http_server -- --port 8080
//! ```
//!
//! - `--port N`: the port to listen on, 8080 by default; `--port 0` picks a free one. The
//!   address is printed on stderr as `listening on http://127.0.0.1:PORT/mcp`.
//! - Stateful by default: a client in the handshake era (protocol versions before 2026-07-28)
//!   opens a session with `initialize`; its requests carry the `Mcp-Session-Id` it was given,
//!   the session lives in this process's memory, and it can open a GET stream for the server's
//!   notifications. MCP 2026-07-28 has no sessions: its requests, which each carry the protocol
//!   version and `clientInfo` in `_meta`, are always served statelessly.
//! - `--stateless`: no sessions for any client. Every POST is answered on its own, as plain JSON
//!   (no SSE stream, no `Mcp-Session-Id`, no server-initiated messages), by a fresh handler:
//!   any number of instances can serve the same clients behind a load balancer.
//! - `--user-header NAME`: each call's `userId` is the value of HTTP header `NAME` of its own
//!   request (through `Config::identify` and `RequestInfo::header`). This is a stand-in for a
//!   real auth layer, for demos and tests only: anyone can send any header, so a real server
//!   must not trust it as is; it would have its auth middleware put the verified user into the
//!   request's extensions and read that (`RequestInfo::http`) instead.
//!
//! Same environment as `stdio_server` (`MCPEYE_PROJECT_ID`, `MCPEYE_INGEST_URL`,
//! `MCPEYE_INGEST_SECRET`, `MCPEYE_OUTBOX_DIR`). On SIGTERM or SIGINT the server stops accepting connections, ends
//! the sessions, gives requests in flight a moment to answer, and the `mcpeye::Guard` delivers
//! what was captured, within `Config::shutdown_timeout`.

#[path = "common/demo_tools.rs"]
mod demo_tools;
#[path = "common/signal.rs"]
mod signal;

use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use mcpeye::rmcp::ManifestServer;
use mcpeye::CallIdentity;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long requests in flight get to answer after a signal.
const GRACE: Duration = Duration::from_secs(2);

type Mcp = TowerToHyperService<StreamableHttpService<ManifestServer, LocalSessionManager>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { port, stateless, user_header } = parse_args()?;
    // Shut down as `main` ends: delivers what was captured, within `Config::shutdown_timeout`.
    let guard = demo_tools::init_analytics_with("http_server", "http-demo", |config| match user_header {
        // Unverified: see `--user-header` above.
        Some(header) => config.identify(move |request| Some(CallIdentity::new().user_id(request.header(&header)?))),
        None => config,
    });
    let mut stop = Box::pin(signal::termination());

    let server = ManifestServer::new(Arc::new(demo_tools::manifest()))
        .with_server_info("mcpeye-http-demo", env!("CARGO_PKG_VERSION"));
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless) // sessions for handshake-era clients
        .with_json_response(stateless); // stateless answers are plain JSON, not an SSE stream
    let sessions_end = config.cancellation_token.clone();
    let mcp: Mcp = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));

    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let mode = if stateless { "stateless" } else { "stateful sessions" };
    eprintln!("[http_server] {mode}, Ctrl-C or SIGTERM to stop");
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);

    let connections = GracefulShutdown::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("[http_server] accept failed: {e}");
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let mcp = mcp.clone();
        let service = hyper::service::service_fn(move |request| route(mcp.clone(), request));
        let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
    // SIGTERM or SIGINT: end the sessions (their open streams close), let requests in flight
    // answer, then deliver the events and say on stderr what became of them.
    sessions_end.cancel();
    let _ = tokio::time::timeout(GRACE, connections.shutdown()).await;
    demo_tools::shut_down("http_server", guard);
    Ok(())
}

/// `/mcp` is rmcp's; anything else is 404.
async fn route(mcp: Mcp, request: Request<Incoming>) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    if request.uri().path() == "/mcp" {
        return hyper::service::Service::call(&mcp, request).await;
    }
    let mut not_found = Response::new(Full::new(Bytes::from_static(b"not found: MCP is served at /mcp\n")).boxed());
    *not_found.status_mut() = StatusCode::NOT_FOUND;
    Ok(not_found)
}

/// What the command line asks for.
struct Args {
    port: u16,
    stateless: bool,
    user_header: Option<String>,
}

/// `--port N` (default 8080, 0 for any free port), `--stateless` and `--user-header NAME`.
fn parse_args() -> Result<Args, String> {
    const USAGE: &str = "usage: http_server [--port N] [--stateless] [--user-header NAME]";
    let mut parsed = Args { port: 8080, stateless: false, user_header: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, v)) => (flag.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = |inline: Option<String>| inline.or_else(|| args.next()).ok_or(USAGE);
        match flag.as_str() {
            "--port" => {
                let v = value(inline)?;
                parsed.port = v.parse().map_err(|_| format!("--port: not a port number: {v:?}\n{USAGE}"))?;
            }
            "--user-header" => parsed.user_header = Some(value(inline)?),
            "--stateless" if inline.is_none() => parsed.stateless = true,
            "-h" | "--help" if inline.is_none() => {
                eprintln!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {arg:?}\n{USAGE}")),
        }
    }
    Ok(parsed)
}
