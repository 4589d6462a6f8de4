//! A real MCP server over stdio: the demo tools of a `mcpeye::Manifest`, served by rmcp.
//!
//! ```text
//! MCPEYE_PROJECT_ID=demo MCPEYE_INGEST_URL=http://127.0.0.1:3001 cargo run -p mcpeye-servers --example stdio_server
//! ```
//!
//! One JSON-RPC 2.0 message per line on stdin and stdout, in both protocol eras (the
//! `initialize` handshake, and MCP 2026-07-28 where each request carries its `_meta`). Stdout
//! carries nothing but JSON-RPC messages, also when the ingest is down or misconfigured:
//! mcpeye's diagnostics go to stderr.
//!
//! The client leaving loses no events: when stdin closes, and on SIGTERM or SIGINT, the server
//! stops serving and the `mcpeye::Guard` delivers what was captured before the process exits,
//! within `Config::shutdown_timeout`. With `MCPEYE_OUTBOX_DIR=/some/dir`, events not yet
//! delivered are kept on disk there and sent at the next start, also after a SIGKILL
//! (`Config::outbox_dir`). With `MCPEYE_EVENT_LOG_DIR=/some/dir`, the local event log is
//! written there (`mcpeye report /some/dir`); `MCPEYE_DEMO_VERSION=2` serves the next version
//! of the server (version 2.0.0, one tool described anew, one tool more);
//! `MCPEYE_DEMO_FEEDBACK=1` lists the opt-in feedback tool `mcpeye_send_feedback`.

#[path = "common/demo_tools.rs"]
mod demo_tools;
#[path = "common/signal.rs"]
mod signal;

use mcpeye::rmcp::ManifestServer;
use rmcp::ServiceExt;
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    let guard = demo_tools::init_analytics("stdio_server", "stdio-demo");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let served = runtime.block_on(serve());
    // tokio reads stdin on a thread that stays blocked in read(2) after a signal: do not wait
    // for it (`#[tokio::main]` would, until the client closes stdin).
    runtime.shutdown_background();
    // Delivers what was captured, within `Config::shutdown_timeout` (2 s by default), and says
    // on stderr what became of the events.
    demo_tools::shut_down("stdio_server", guard);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[stdio_server] {e}");
            ExitCode::FAILURE
        }
    }
}

/// Serves until the client closes stdin or a SIGTERM/SIGINT arrives.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let server = ManifestServer::new(Arc::new(demo_tools::manifest()))
        .with_server_info("mcpeye-stdio-demo", demo_tools::server_version());
    let running = server.serve(rmcp::transport::stdio()).await?;
    // SIGTERM or SIGINT stops the service the way a closed stdin does: calls in flight get to
    // answer (rmcp waits up to 2 s for them), then `waiting` returns. (Before this point no call
    // has been captured: the default action, exiting at once, loses nothing.)
    let stop = running.cancellation_token();
    let terminated = signal::termination();
    tokio::spawn(async move {
        terminated.await;
        stop.cancel();
    });
    running.waiting().await?;
    Ok(())
}
