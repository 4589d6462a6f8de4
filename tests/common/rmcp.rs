//! Shared by the rmcp integration tests: a server and rmcp's own client over an in-process
//! duplex transport, and the small helpers every such test needs.
#![allow(dead_code)] // each test crate uses part of it

use mcpeye::{CallRecord, Tracker};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// Records a `Tracker::from_fn` collected.
pub type Records = Arc<Mutex<Vec<CallRecord>>>;

/// A tracker that keeps every record in memory, with the records it fills.
pub fn recording_tracker() -> (Tracker, Records) {
    let records = Records::default();
    let sink = records.clone();
    (Tracker::from_fn(move |r| sink.lock().unwrap().push(r)), records)
}

/// Serves `server` on one end of a duplex pipe and connects rmcp's client, introducing itself
/// as `client_name`/`client_version`, to the other.
pub async fn serve_and_connect<S: ServerHandler>(
    server: S,
    client_name: &str,
    client_version: &str,
) -> RunningService<RoleClient, ClientConfig> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new(client_name, client_version));
    config.serve(client_io).await.expect("the client connects")
}

/// Like [`serve_and_connect`], with `client` as rmcp's client: a `ClientConfig` (its protocol
/// version, say) or a handler of the server's requests and notifications.
pub async fn serve_and_connect_with<S: ServerHandler, C: ClientHandler>(
    server: S,
    client: C,
) -> RunningService<RoleClient, C> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("the client connects")
}

/// A `tools/call` request for `name` with an object of arguments.
pub fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    CallToolRequestParams::new(name).with_arguments(args)
}

/// The records so far, leaving the list empty.
pub fn take(records: &Records) -> Vec<CallRecord> {
    std::mem::take(&mut *records.lock().unwrap())
}
